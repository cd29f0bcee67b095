/*
 * buf.h - a growing byte string, always NUL-terminated: what JSON is
 * written into (decode.c), what a bundle is built in (store/bundle.c) and
 * what the stream scanner takes a value into (jscan.c).
 */
#ifndef PCTL_CORE_BUF_H
#define PCTL_CORE_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct pctl_buf {
    char *s; /* NULL until something is added */
    size_t len, cap;
} pctl_buf;

#define PCTL_BUF_INIT                                                          \
    {                                                                          \
        NULL, 0, 0                                                             \
    }

/* Appends n bytes of s: 0, or -1 when out of memory (b unchanged). */
int pctl_buf_add(pctl_buf *b, const char *s, size_t n);

/* Appends one byte: the common case without a call. */
static inline int pctl_buf_addc(pctl_buf *b, char c)
{
    if (b->len + 1 < b->cap) {
        b->s[b->len++] = c;
        b->s[b->len] = '\0';
        return 0;
    }
    return pctl_buf_add(b, &c, 1);
}

/* Appends ids[0..n) as a JSON array of numbers ("[]" for none): what a
 * statement that takes a set of rows is bound to.  0, or -1 when out of
 * memory. */
int pctl_buf_ids_json(pctl_buf *b, const int64_t *ids, size_t n);

/* Frees the bytes; b is empty again.  Can't fail. */
void pctl_buf_free(pctl_buf *b);

#endif
