/*
 * timefmt.c - the times and durations the CLI reads and shows: RFC 3339
 * from the JSON documents, local "2026-11-21 14:03:05" and short durations
 * ("1m12s") for people.
 */
#include "cli.h"

#include <string.h>
#include <time.h>

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil); done by hand because timegm() is not POSIX. */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Reads exactly n digits at *p.  Returns -1 when they are not there. */
static int64_t digits(const char **p, int n)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *p += n;
    return v;
}

static int expect(const char **p, const char *any)
{
    if (**p && strchr(any, **p)) {
        (*p)++;
        return 0;
    }
    return -1;
}

int cli_time_parse(int64_t *out_ms, const char *text)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const char *p = text;
    int64_t y, mo, d, h, mi, s, ms = 0, off = 0;

    if ((y = digits(&p, 4)) < 0 || expect(&p, "-") ||
        (mo = digits(&p, 2)) < 1 || mo > 12 || expect(&p, "-") ||
        (d = digits(&p, 2)) < 1 || d > mdays[mo - 1] || expect(&p, "Tt ") ||
        (h = digits(&p, 2)) < 0 || h > 23 || expect(&p, ":") ||
        (mi = digits(&p, 2)) < 0 || mi > 59 || expect(&p, ":") ||
        (s = digits(&p, 2)) < 0 || s > 60)
        return -1;
    if (*p == '.') {
        /* Milliseconds are the resolution of the store; finer digits are
         * accepted and dropped. */
        int nd = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, nd++)
            if (nd < 3)
                ms = ms * 10 + (*p - '0');
        if (nd == 0)
            return -1;
        for (; nd < 3; nd++)
            ms *= 10;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1;
        p++;
        int64_t oh, om;
        if ((oh = digits(&p, 2)) < 0 || oh > 23 || expect(&p, ":") ||
            (om = digits(&p, 2)) < 0 || om > 59)
            return -1;
        off = sign * (oh * 3600 + om * 60);
    } else {
        return -1;
    }
    if (*p)
        return -1;
    int64_t secs =
        days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - off;
    *out_ms = secs * 1000 + ms;
    return 0;
}

void cli_time_format(char *buf, size_t size, int64_t ms)
{
    /* Floor division, so times before 1970 still land on their second. */
    int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    time_t t = (time_t)secs;
    struct tm tm;
    if (!localtime_r(&t, &tm) ||
        strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(buf, size, "@%lld", (long long)ms);
}

void cli_duration_format(char *buf, size_t size, int64_t ms)
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
