/*
 * strbuf.c - the growable string the renderers build lines in, and the
 * allocation helpers that end the process when memory runs out.
 */
#include "cli.h"

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

/* The length of the character at p that must not reach a terminal as
 * it is, or 0.  C0 controls, DEL and the C1 controls (UTF-8 C2 80..C2 9F)
 * could move the cursor or start an escape sequence; the bidirectional
 * controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) could
 * make text read in another order than it is (a name that looks like
 * another). */
static size_t unsafe_len(const unsigned char *p)
{
    if (p[0] < 0x20 || p[0] == 0x7f)
        return 1;
    if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
        return 2;
    if (p[0] == 0xd8 && p[1] == 0x9c)
        return 2;
    if (p[0] == 0xe2 && p[1] == 0x80 &&
        (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae)))
        return 3;
    if (p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)
        return 3;
    return 0;
}

void cli_buf_add_clean(cli_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t run = 0, bad;
        while (p[run] && !unsafe_len(p + run))
            run++;
        cli_buf_addn(b, (const char *)p, run);
        p += run;
        if (!*p)
            break;
        bad = unsafe_len(p);
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
