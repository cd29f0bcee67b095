/* duration.c - duration strings ("1h30m", "1.5s") to and from
 * milliseconds, and the name syntax shared by every named thing. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "def.h"
#include "planctl.h"

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Milliseconds per unit, or 0 for an unknown unit. */
static int64_t unit_ms(const char *u, size_t n)
{
#define UNIT(name, ms, sep)                                                    \
    if (n == sizeof name - 1 && memcmp(u, name, n) == 0)                       \
        return ms;
    PCTL_DURATION_UNITS(UNIT)
#undef UNIT
    return 0;
}

/*
 * The grammar is Go's time.ParseDuration restricted to what a plan needs:
 * one or more <digits>[.<digits>]<unit>, units ms, s, m, h
 * (PCTL_DURATION_UNITS), no sign and no spaces, plus d (24h), which Go lacks
 * but the CLI prints ages in.  A bare "0" is refused: every other number needs
 * a unit, and one rule is easier to remember than an exception.  Fractions
 * below a millisecond are truncated, as Go truncates below a nanosecond.
 */
int pctl_duration_parse(int64_t *out, const char *text)
{
    const char *p = text;
    int64_t total = 0;

    if (!p || !*p)
        return PLANCTL_EINVAL;
    while (*p) {
        int64_t whole = 0, frac = 0, scale = 1, unit, v;
        const char *u;
        int ndigits = 0;

        if (!is_digit((unsigned char)*p))
            return PLANCTL_EINVAL;
        for (; is_digit((unsigned char)*p); p++) {
            /* Anything past the limit in any unit is an overflow. */
            if (whole > PCTL_DURATION_MAX_MS)
                return PLANCTL_EINVAL;
            whole = whole * 10 + (*p - '0');
        }
        if (*p == '.') {
            p++;
            if (!is_digit((unsigned char)*p))
                return PLANCTL_EINVAL;
            /* Nine digits resolve a nanosecond of an hour's fraction; the
             * rest cannot change the millisecond result. */
            for (; is_digit((unsigned char)*p); p++) {
                if (ndigits < 9) {
                    frac = frac * 10 + (*p - '0');
                    scale *= 10;
                    ndigits++;
                }
            }
        }
        for (u = p; is_alpha((unsigned char)*p); p++)
            ;
        unit = unit_ms(u, (size_t)(p - u));
        if (!unit)
            return PLANCTL_EINVAL;
        if (whole > PCTL_DURATION_MAX_MS / unit)
            return PLANCTL_EINVAL;
        v = whole * unit + frac * unit / scale;
        if (v > PCTL_DURATION_MAX_MS - total)
            return PLANCTL_EINVAL;
        total += v;
    }
    *out = total;
    return 0;
}

/*
 * Short and human: the two largest units that matter.  Below a minute the
 * milliseconds are kept as a fraction of a second; from a minute on they are
 * noise next to the minutes, and from an hour on so are the seconds.
 */
void pctl_duration_format(char *buf, size_t size, int64_t ms)
{
    const char *sign = "";
    uint64_t v;

    if (!buf || size == 0)
        return;
    if (ms < 0) {
        sign = "-";
        v = (uint64_t)0 - (uint64_t)ms;
    } else {
        v = (uint64_t)ms;
    }

    if (v == 0) {
        snprintf(buf, size, "0s");
    } else if (v < 1000) {
        snprintf(buf, size, "%s%" PRIu64 "ms", sign, v);
    } else if (v < 60000) {
        uint64_t s = v / 1000, f = v % 1000;

        if (f == 0)
            snprintf(buf, size, "%s%" PRIu64 "s", sign, s);
        else if (f % 100 == 0)
            snprintf(buf, size, "%s%" PRIu64 ".%" PRIu64 "s", sign, s, f / 100);
        else if (f % 10 == 0)
            snprintf(buf, size, "%s%" PRIu64 ".%02" PRIu64 "s", sign, s,
                     f / 10);
        else
            snprintf(buf, size, "%s%" PRIu64 ".%03" PRIu64 "s", sign, s, f);
    } else if (v < 3600000) {
        uint64_t m = v / 60000, s = v % 60000 / 1000;

        if (s == 0)
            snprintf(buf, size, "%s%" PRIu64 "m", sign, m);
        else
            snprintf(buf, size, "%s%" PRIu64 "m%" PRIu64 "s", sign, m, s);
    } else {
        uint64_t h = v / 3600000, m = v % 3600000 / 60000;

        if (m == 0)
            snprintf(buf, size, "%s%" PRIu64 "h", sign, h);
        else
            snprintf(buf, size, "%s%" PRIu64 "h%" PRIu64 "m", sign, h, m);
    }
}

int pctl_name_valid(const char *s)
{
    size_t i;

    if (!s || !(is_alpha((unsigned char)s[0]) || is_digit((unsigned char)s[0])))
        return 0;
    for (i = 0; s[i]; i++) {
        int c = (unsigned char)s[i];

        if (i >= PCTL_NAME_MAX)
            return 0;
        if (!is_alpha(c) && !is_digit(c) && c != '_' && c != '.' && c != '-')
            return 0;
    }
    return 1;
}

int pctl_version_valid(const char *s)
{
    size_t i;

    for (i = 0; s && s[i]; i++) {
        int c = (unsigned char)s[i];

        if (!is_alpha(c) && !is_digit(c) && !strchr(".+_-", c))
            return 0;
    }
    return s && i > 0 && i <= PCTL_VERSION_MAX;
}

void pctl_duration_coarse(char *buf, size_t size, int64_t ms)
{
    long long v = ms < 0 ? 0 : (long long)ms;
    long long s = v / 1000, m = s / 60, h = m / 60, d = h / 24;
    if (v < 1000)
        snprintf(buf, size, "%lldms", v);
    else if (s < 60)
        snprintf(buf, size, "%llds", s);
    else if (m < 60 && s % 60)
        snprintf(buf, size, "%lldm%llds", m, s % 60);
    else if (m < 60)
        snprintf(buf, size, "%lldm", m);
    else if (h < 24 && m % 60)
        snprintf(buf, size, "%lldh%lldm", h, m % 60);
    else if (h < 24)
        snprintf(buf, size, "%lldh", h);
    else if (h % 24)
        snprintf(buf, size, "%lldd%lldh", d, h % 24);
    else
        snprintf(buf, size, "%lldd", d);
}
