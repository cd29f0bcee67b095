/*
 * pct.c - the one percent-decoder of the program (RFC 3986 %XX, and '+'
 * as a space in a query or form): used for a request's path, query and
 * form (route.c), the page a stream asks for and the instance a page
 * shows (live.c), and by the program's server through them.  An encoded
 * NUL is refused everywhere, so no decoded name can end early.
 */
#include <string.h>

#include "core/alloc.h"
#include "web/web.h"

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *pctl_web_decode(const char *s, size_t n, int plus)
{
    char *out = pctl_malloc(n + 1), *o = out;
    size_t i;

    if (!out)
        return NULL;
    for (i = 0; i < n; i++) {
        int hi, lo;

        if (s[i] == '%' && i + 2 < n &&
            (hi = hexval((unsigned char)s[i + 1])) >= 0 &&
            (lo = hexval((unsigned char)s[i + 2])) >= 0) {
            *o++ = (char)(hi * 16 + lo);
            i += 2;
        } else if (s[i] == '+' && plus) {
            *o++ = ' ';
        } else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    if ((size_t)(o - out) != strlen(out)) {
        pctl_free(out);
        return NULL;
    }
    return out;
}
