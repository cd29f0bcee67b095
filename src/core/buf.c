/* buf.c - a growing byte string (see buf.h). */
#include "core/buf.h"

#include <stdio.h>
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

int pctl_buf_ids_json(pctl_buf *b, const int64_t *ids, size_t n)
{
    char one[24];
    size_t i;

    for (i = 0; i < n; i++) {
        snprintf(one, sizeof one, "%c%lld", i ? ',' : '[', (long long)ids[i]);
        if (pctl_buf_add(b, one, strlen(one)) < 0)
            return -1;
    }
    return pctl_buf_add(b, n ? "]" : "[]", n ? 1 : 2);
}

void pctl_buf_free(pctl_buf *b)
{
    pctl_free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}
