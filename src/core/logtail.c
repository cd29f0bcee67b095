/* logtail.c - the new part and the last lines of an attempt's kept output
 * (logtail.h). */
#include "core/logtail.h"

#include <string.h>

pctl_logtail_new pctl_logtail_since(const char *text, size_t len, int64_t bytes,
                                    int64_t seen)
{
    pctl_logtail_new r = {0, 0};
    int64_t fresh;

    if (seen < 0) { /* all of it, and what it no longer keeps */
        r.lost = bytes > (int64_t)len ? bytes - (int64_t)len : 0;
        return r;
    }
    fresh = bytes - seen;
    if (fresh <= 0) {
        r.from = len;
        return r;
    }
    if (fresh > (int64_t)len) {
        r.lost = fresh - (int64_t)len;
        return r;
    }
    r.from = len - (size_t)fresh;
    while (r.from < len && ((unsigned char)text[r.from] & 0xc0) == 0x80)
        r.from++;
    return r;
}

size_t pctl_logtail_lines(const char *text, size_t len, size_t n)
{
    size_t end = len;

    if (n == 0)
        return len;
    if (end > 0 && text[end - 1] == '\n')
        end--;
    while (end > 0) {
        if (text[end - 1] == '\n' && --n == 0)
            return end;
        end--;
    }
    return 0;
}

const char *pctl_logtail_last_line(const char *text, size_t *len)
{
    const char *end = text + strlen(text), *start;

    while (end > text && strchr(" \t\r\n", end[-1]))
        end--;
    for (start = end; start > text && start[-1] != '\n'; start--)
        ;
    while (start < end && strchr(" \t\r", *start))
        start++;
    *len = (size_t)(end - start);
    if (*len > PCTL_LOGTAIL_LINE_MAX) {
        *len = PCTL_LOGTAIL_LINE_MAX;
        while (*len > 0 && ((unsigned char)start[*len] & 0xc0) == 0x80)
            (*len)--;
    }
    return start;
}
