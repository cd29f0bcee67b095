/*
 * svg_text.c - the text of the SVG timeline (render_svg.c): what goes
 * between tags and into attributes is escaped, and characters XML 1.0
 * cannot carry are replaced; numbers are written with integer arithmetic
 * so no locale changes the decimal point.
 */
#include "web/svg_text.h"

#include "core/def.h"
#include "core/utf8.h"

#include <string.h>
#include <time.h>

/* The length of the UTF-8 sequence at s and its code point, or 0 when the
 * bytes are not one (a stray, truncated or overlong sequence, a
 * surrogate, or beyond U+10FFFF). */
static size_t utf8_next(const unsigned char *s, unsigned long *cp)
{
    size_t n, i;
    unsigned long c;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2, c = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3, c = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4, c = s[0] & 0x07;
    else
        return 0;
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
        (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

/*
 * Appends s as XML character data (also fit for a quoted attribute): the
 * five special characters as entities; control characters (C0, DEL, C1)
 * as spaces, except newlines when keep_lines (a tooltip's lines); what
 * XML 1.0 cannot hold (U+FFFE, U+FFFF) and bytes that are not UTF-8 as
 * U+FFFD.  At most max characters (0: all), then an ellipsis.
 */
void pctl_svg_esc_max(wb *b, const char *text, size_t max, int keep_lines)
{
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    size_t count = 0;

    while (*s) {
        unsigned long cp;
        size_t n = utf8_next(s, &cp);

        if (max && count++ == max) {
            pctl_wb_add(b, "\xe2\x80\xa6");
            return;
        }
        if (n == 0) {
            pctl_wb_add(b, "\xef\xbf\xbd");
            s++;
            continue;
        }
        switch (cp) {
        case '&':
            pctl_wb_add(b, "&amp;");
            break;
        case '<':
            pctl_wb_add(b, "&lt;");
            break;
        case '>':
            pctl_wb_add(b, "&gt;");
            break;
        case '"':
            pctl_wb_add(b, "&quot;");
            break;
        case '\'':
            pctl_wb_add(b, "&apos;");
            break;
        default:
            if (cp == '\n' && keep_lines)
                pctl_wb_add(b, "\n");
            else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
                pctl_wb_add(b, " ");
            else if (cp == 0xfffe || cp == 0xffff)
                pctl_wb_add(b, "\xef\xbf\xbd");
            else
                pctl_wb_addn(b, (const char *)s, n);
        }
        s += n;
    }
}

void pctl_svg_esc(wb *b, const char *text)
{
    pctl_svg_esc_max(b, text, 0, 0);
}

/* A tooltip: its lines were built by the renderer, whose text from the
 * database went through pctl_svg_add_text(), so every newline is one of ours.
 */
void pctl_svg_esc_tip(wb *b, const char *text)
{
    pctl_svg_esc_max(b, text, 0, 1);
}

/* Appends text from the database to a tooltip, on one line. */
void pctl_svg_add_text(wb *t, const char *text)
{
    const unsigned char *p = (const unsigned char *)(text ? text : "");

    while (*p) {
        size_t run = 0;

        while (p[run] && !pctl_unsafe_len(p + run))
            run++;
        pctl_wb_addn(t, (const char *)p, run);
        p += run;
        if (!*p)
            break;
        pctl_wb_add(t, " ");
        p += pctl_unsafe_len(p);
    }
}

/* Appends a length in tenths of a pixel as "12" or "12.5". */
void pctl_svg_px(wb *b, int64_t tenths)
{
    if (tenths < 0) {
        pctl_wb_add(b, "-");
        tenths = -tenths;
    }
    if (tenths % 10)
        pctl_wb_addf(b, "%lld.%lld", (long long)(tenths / 10),
                     (long long)(tenths % 10));
    else
        pctl_wb_addf(b, "%lld", (long long)(tenths / 10));
}

/* A time in UTC in the given shape, then ".123" when with_ms. */
void pctl_svg_utc_format(char *buf, size_t size, int64_t ms,
                         svg_time_shape shape, int with_ms)
{
    int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    time_t t = (time_t)secs;
    struct tm tm;
    size_t n = 0;

    if (gmtime_r(&t, &tm)) {
        switch (shape) {
        case SVG_T_FULL:
            n = strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
            break;
        case SVG_T_SECONDS:
            n = strftime(buf, size, "%H:%M:%S", &tm);
            break;
        case SVG_T_MINUTES:
            n = strftime(buf, size, "%H:%M", &tm);
            break;
        case SVG_T_DAY_TIME:
            n = strftime(buf, size, "%m-%d %H:%M", &tm);
            break;
        case SVG_T_DATE:
            n = strftime(buf, size, "%Y-%m-%d", &tm);
            break;
        }
    }
    if (n == 0) {
        snprintf(buf, size, "@%lld", (long long)ms);
        return;
    }
    if (with_ms)
        snprintf(buf + n, size - n, ".%03d", (int)(ms - secs * 1000));
}

/* "2026-11-21 14:03:05.123 UTC" */
void pctl_svg_utc_long(char *buf, size_t size, int64_t ms)
{
    pctl_svg_utc_format(buf, size, ms, SVG_T_FULL, 1);
    snprintf(buf + strlen(buf), size - strlen(buf), " UTC");
}

/* "450ms", "1.25s", then the CLI's "1m12s", "2h3m". */
void pctl_svg_duration(char *buf, size_t size, int64_t ms)
{
    if (ms < 0)
        ms = 0;
    if (ms < 1000) {
        snprintf(buf, size, "%lldms", (long long)ms);
    } else if (ms < 60000) {
        int frac = (int)(ms % 1000), digits = 3;

        while (digits > 0 && frac % 10 == 0)
            frac /= 10, digits--;
        if (digits)
            snprintf(buf, size, "%lld.%0*ds", (long long)(ms / 1000), digits,
                     frac);
        else
            snprintf(buf, size, "%llds", (long long)(ms / 1000));
    } else {
        pctl_duration_coarse(buf, size, ms);
    }
}

#define WAITING "#dee2e6"

/* The fill of a status: how an attempt, a step, a phase or the run ended
 * or stands. */
const char *pctl_svg_fill(const char *status)
{
    static const struct {
        const char *status, *fill;
    } map[] = {{"COMPLETE", "#2f9e44"},    {"ERROR", "#f08c00"},
               {"FATAL_ERROR", "#e03131"}, {"CANCELLED", "#adb5bd"},
               {"IN_PROGRESS", "#1c7ed6"}, {"PAUSED", "#7048e8"}};
    size_t i;

    for (i = 0; status && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(status, map[i].status) == 0)
            return map[i].fill;
    return WAITING; /* QUEUED, PENDING */
}

/* The colour of a status word in text: waiting's is too pale there. */
const char *pctl_svg_text_fill(const char *status)
{
    const char *f = pctl_svg_fill(status);

    return strcmp(f, WAITING) == 0 ? "#868e96" : f;
}

/* A status word safe in a class name. */
const char *pctl_svg_status_word(const char *status)
{
    const char *p;

    if (!status || !*status)
        return "UNKNOWN";
    for (p = status; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || *p == '_'))
            return "UNKNOWN";
    return status;
}
