/*
 * strbuf.c - the growable string the renderers build lines in, and the
 * allocation helpers that end the process when memory runs out.
 */
#include "cli.h"
#include "core/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_oom(void)
{
    fputs("planctl: out of memory\n", stderr);
    exit(CLI_EXIT_ERROR);
}

void *cli_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        cli_oom();
    return p;
}

char *cli_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(cli_xmalloc(n), s, n);
}

static void grow(cli_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s)
        cli_oom();
    b->s = s;
    b->cap = cap;
}

void cli_buf_addn(cli_buf *b, const char *s, size_t n)
{
    grow(b, n);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void cli_buf_add(cli_buf *b, const char *s)
{
    cli_buf_addn(b, s, strlen(s));
}

void cli_buf_addf(cli_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    grow(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void cli_buf_add_clean(cli_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t run = 0, bad;
        while (p[run] && !pctl_unsafe_len(p + run))
            run++;
        cli_buf_addn(b, (const char *)p, run);
        p += run;
        if (!*p)
            break;
        bad = pctl_unsafe_len(p);
        cli_buf_add(b, " ");
        p += bad;
    }
}

void cli_buf_free(cli_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

const char *cli_buf_str(const cli_buf *b)
{
    return b->s ? b->s : "";
}

size_t cli_text_width(const char *s, size_t len)
{
    size_t w = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            w++;
    return w;
}
