/* timefmt.c - RFC 3339 and local time formatting for JSON and messages. */
#include "timefmt.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "planctl.h"

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

void pctl_time_rfc3339(char *buf, int64_t ms)
{
    time_t secs = (time_t)floor_div(ms, 1000);
    int frac = (int)(ms - (int64_t)secs * 1000);
    struct tm tm;

    if (!gmtime_r(&secs, &tm)) {
        snprintf(buf, PCTL_TIME_BUF, "1970-01-01T00:00:00.000Z");
        return;
    }
    /* Years past 9999 do not occur in practice; clamp so the field widths
     * (and the compiler's truncation analysis) stay fixed. */
    snprintf(buf, PCTL_TIME_BUF, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
             (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100,
             tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
             tm.tm_sec % 100, frac % 1000);
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (Howard Hinnant's days_from_civil), so no timegm() is needed. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = floor_div(y, 400);
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n, int *out)
{
    int v = 0, i;

    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int pctl_time_parse(int64_t *out, const char *s)
{
    int y, mo, d, h, mi, sec, ms = 0, scale = 100, oh, om, sign;
    const char *p;
    int64_t t;

    if (!s || strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' ||
        digits(s + 5, 2, &mo) || s[7] != '-' || digits(s + 8, 2, &d) ||
        (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) ||
        s[16] != ':' || digits(s + 17, 2, &sec))
        return PLANCTL_EINVAL;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return PLANCTL_EINVAL;
    p = s + 19;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return PLANCTL_EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
            ms += (*p - '0') * scale;
            scale /= 10;
        }
    }
    t = (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) * 1000 +
        ms;
    if ((*p == 'Z' || *p == 'z') && p[1] == '\0') {
        *out = t;
        return 0;
    }
    if ((*p != '+' && *p != '-') || strlen(p) != 6 || digits(p + 1, 2, &oh) ||
        p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59)
        return PLANCTL_EINVAL;
    sign = *p == '+' ? 1 : -1;
    *out = t - sign * ((int64_t)oh * 3600 + om * 60) * 1000;
    return 0;
}

void pctl_time_local_short(char *buf, int64_t ms, int64_t now_ms)
{
    time_t a = (time_t)floor_div(ms, 1000), b = (time_t)floor_div(now_ms, 1000);
    struct tm ta, tb;

    if (!localtime_r(&a, &ta) || !localtime_r(&b, &tb)) {
        snprintf(buf, PCTL_TIME_BUF, "?");
        return;
    }
    if (ta.tm_year == tb.tm_year && ta.tm_yday == tb.tm_yday)
        strftime(buf, PCTL_TIME_BUF, "%H:%M:%S", &ta);
    else
        strftime(buf, PCTL_TIME_BUF, "%Y-%m-%d %H:%M:%S", &ta);
}
