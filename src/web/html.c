/*
 * html.c - the page being written: a pctl_buf whose appends remember the
 * first failure, and the escaping every value from the database or the
 * request goes through before it reaches a page.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "web/web.h"

void pctl_wb_addn(wb *w, const char *s, size_t n)
{
    if (!w->oom && n && pctl_buf_add(&w->b, s, n) < 0)
        w->oom = 1;
}

void pctl_wb_add(wb *w, const char *s)
{
    if (s)
        pctl_wb_addn(w, s, strlen(s));
}

void pctl_wb_addf(wb *w, const char *fmt, ...)
{
    char small[256], *big;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        w->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        pctl_wb_addn(w, small, (size_t)n);
        return;
    }
    if (!(big = pctl_malloc((size_t)n + 1))) {
        w->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    pctl_wb_addn(w, big, (size_t)n);
    pctl_free(big);
}

/* Whether code point c reorders text around it or hides text: the bidi
 * controls, and the characters that take no room and show nothing (zero
 * width spaces and joiners, the word joiner and the invisible operators,
 * the byte order mark, the soft hyphen, the fillers and separators that
 * draw nothing, the tag characters), with which "pay<U+200B>pal" would
 * read as "paypal".  Format characters that draw a sign (the Arabic
 * number signs) and the variation selectors of emoji are left. */
static int is_format_control(uint32_t c)
{
    static const struct {
        uint32_t lo, hi;
    } ranges[] = {
        {0x00AD, 0x00AD},   /* soft hyphen */
        {0x034F, 0x034F},   /* combining grapheme joiner */
        {0x061C, 0x061C},   /* Arabic letter mark */
        {0x115F, 0x1160},   /* Hangul fillers */
        {0x17B4, 0x17B5},   /* Khmer inherent vowels */
        {0x180B, 0x180F},   /* Mongolian selectors, vowel separator */
        {0x200B, 0x200F},   /* zero width space, (non-)joiner, LRM, RLM */
        {0x2028, 0x202E},   /* line and paragraph separators, embeddings */
        {0x2060, 0x206F},   /* word joiner, invisible operators, isolates */
        {0x3164, 0x3164},   /* Hangul filler */
        {0xFEFF, 0xFEFF},   /* zero width no-break space (BOM) */
        {0xFFA0, 0xFFA0},   /* halfwidth Hangul filler */
        {0xFFF9, 0xFFFB},   /* interlinear annotation */
        {0x1BCA0, 0x1BCA3}, /* shorthand format controls */
        {0x1D173, 0x1D17A}, /* musical format controls */
        {0xE0000, 0xE007F}, /* tags */
    };
    size_t i;

    for (i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (c >= ranges[i].lo && c <= ranges[i].hi)
            return 1;
    return 0;
}

/* Decodes one UTF-8 sequence at s (n bytes left): its length, or 0 when
 * it is not valid UTF-8. */
static size_t utf8_one(uint32_t *cp, const unsigned char *s, size_t n)
{
    size_t len, i;
    uint32_t c;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        len = 2, c = s[0] & 0x1Fu;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        len = 3, c = s[0] & 0x0Fu;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        len = 4, c = s[0] & 0x07u;
    else
        return 0;
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3Fu);
    }
    /* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
    if ((len == 3 && c < 0x800) ||
        (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
        (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

void pctl_wb_text(wb *w, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n, i = 0, run = 0;

    if (!s)
        return;
    n = strlen(s);
    while (i < n) {
        const char *rep = NULL;
        char hex[16];
        uint32_t cp = 0;
        size_t len = utf8_one(&cp, u + i, n - i);

        if (len == 0) {
            rep = "\xEF\xBF\xBD"; /* U+FFFD */
            len = 1;
        } else if (cp == '&') {
            rep = "&amp;";
        } else if (cp == '<') {
            rep = "&lt;";
        } else if (cp == '>') {
            rep = "&gt;";
        } else if (cp == '"') {
            rep = "&quot;";
        } else if (cp == '\'') {
            rep = "&#39;";
        } else if ((cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7F ||
                   is_format_control(cp)) {
            snprintf(hex, sizeof hex, "&lt;U+%04X&gt;", (unsigned)cp);
            rep = hex;
        }
        if (rep) {
            pctl_wb_addn(w, s + i - run, run);
            run = 0;
            pctl_wb_add(w, rep);
        } else {
            run += len;
        }
        i += len;
    }
    pctl_wb_addn(w, s + i - run, run);
}

void pctl_wb_url(wb *w, const char *s)
{
    static const char hexd[] = "0123456789ABCDEF";
    const unsigned char *u = (const unsigned char *)s;

    for (; s && *u; u++) {
        if ((*u >= 'a' && *u <= 'z') || (*u >= 'A' && *u <= 'Z') ||
            (*u >= '0' && *u <= '9') || *u == '-' || *u == '.' || *u == '_' ||
            *u == '~') {
            pctl_wb_addn(w, (const char *)u, 1);
        } else {
            char e[3] = {'%', hexd[*u >> 4], hexd[*u & 15]};

            pctl_wb_addn(w, e, 3);
        }
    }
}

char *pctl_wb_take(wb *w, size_t *len)
{
    char *s;

    if (w->oom) {
        pctl_wb_free(w);
        *len = 0;
        return NULL;
    }
    s = w->b.s ? w->b.s : pctl_strdup("");
    *len = w->b.len;
    w->b.s = NULL;
    w->b.len = w->b.cap = 0;
    return s;
}

void pctl_wb_free(wb *w)
{
    pctl_buf_free(&w->b);
    w->oom = 0;
}
