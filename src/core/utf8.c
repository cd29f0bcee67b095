/* utf8.c - UTF-8 validation and repair for text that reaches JSON. */
#include "utf8.h"

#include <string.h>

#include "alloc.h"

/* The length of the valid sequence at s (at most n bytes), or 0. */
static size_t valid_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len, i;
    unsigned cp;

    if (c >= 0x01 && c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, cp = c & 0x07;
    else
        return 0; /* NUL, continuation byte, overlong lead, > U+10FFFF */
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}

int pctl_utf8_valid(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, k;

    while (i < len) {
        if (!(k = valid_seq(u + i, len - i)))
            return 0;
        i += k;
    }
    return 1;
}

char *pctl_utf8_clean(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    char *out = pctl_malloc(len * 3 + 1), *o = out;
    size_t i = 0, k;

    if (!out)
        return NULL;
    while (i < len) {
        k = valid_seq(u + i, len - i);
        if (k) {
            memcpy(o, u + i, k);
            o += k;
            i += k;
        } else {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    *o = '\0';
    return out;
}

/* The length of the character at p that must not reach a terminal as
 * it is, or 0.  C0 controls, DEL and the C1 controls (UTF-8 C2 80..C2 9F)
 * could move the cursor or start an escape sequence; the bidirectional
 * controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) could
 * make text read in another order than it is (a name that looks like
 * another). */
size_t pctl_unsafe_len(const unsigned char *p)
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
