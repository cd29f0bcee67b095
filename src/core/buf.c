/* buf.c - a growing byte string (see buf.h). */
#include "core/buf.h"

#include <string.h>

#include "core/alloc.h"

int pctl_buf_add(pctl_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *v;

        while (cap < b->len + n + 1)
            cap *= 2;
        if (!(v = pctl_realloc(b->s, cap)))
            return -1;
        b->s = v;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

void pctl_buf_free(pctl_buf *b)
{
    pctl_free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}
