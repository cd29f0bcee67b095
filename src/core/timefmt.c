/* timefmt.c - RFC 3339 and local time formatting for JSON and messages,
 * and the one reader of the times people give (every flag, PLANCTL_NOW). */
#include "timefmt.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "def.h"
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

/* Reads exactly n digits at *p and moves past them.  Returns -1 when
 * they are not there. */
static int digits(const char **p, int n, int *out)
{
    int v = 0, i;

    for (i = 0; i < n; i++) {
        if ((*p)[i] < '0' || (*p)[i] > '9')
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

static int month_days(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return m == 2 && leap ? 29 : days[m - 1];
}

/* A wall-clock time of the local zone (TZ), as mktime() resolves it. */
static int local_ms(int64_t *out, int y, int mo, int d, int h, int mi, int sec,
                    int ms)
{
    struct tm tm;
    time_t t;

    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    tm.tm_isdst = -1;
    t = mktime(&tm);
    if (t == (time_t)-1 && (tm.tm_year != 69 || tm.tm_yday != 364))
        return PLANCTL_EINVAL;
    *out = (int64_t)t * 1000 + ms;
    return 0;
}

/* The zone after a time: "Z", "+01:00" (*off_s set), and unless strict
 * (RFC 3339 only) also "+0100", " UTC" or " GMT" (offset 0), the local
 * zone's own abbreviation (" CET", as text output prints it) or nothing
 * (*local set for those two).  Returns 0 when p is one of these and
 * nothing follows. */
static int zone(const char *p, int strict, int *local, int64_t *off_s)
{
    int oh, om;

    *local = 0;
    *off_s = 0;
    if (!strict && p[0] == ' ' && (p[1] == '+' || p[1] == '-'))
        p++;
    if ((p[0] == 'Z' || p[0] == 'z') && !p[1])
        return 0;
    if (*p == '+' || *p == '-') {
        int sign = *p++ == '+' ? 1 : -1;
        if (digits(&p, 2, &oh))
            return PLANCTL_EINVAL;
        if (*p == ':')
            p++;
        else if (strict)
            return PLANCTL_EINVAL;
        if (digits(&p, 2, &om) || *p || oh > 23 || om > 59)
            return PLANCTL_EINVAL;
        *off_s = sign * ((int64_t)oh * 3600 + om * 60);
        return 0;
    }
    if (strict)
        return PLANCTL_EINVAL;
    if (!*p)
        return *local = 1, 0;
    if (*p++ != ' ' || !*p)
        return PLANCTL_EINVAL;
    if (!strcmp(p, "UTC") || !strcmp(p, "GMT"))
        return 0;
    tzset();
    if (!strcmp(p, tzname[0]) || !strcmp(p, tzname[1]))
        return *local = 1, 0;
    return PLANCTL_EINVAL;
}

/* "14:03:05[.123]" (seconds optional when allowed) at *p.  Returns 0 or
 * PLANCTL_EINVAL. */
static int clock_time(const char **p, int *h, int *mi, int *sec, int *ms)
{
    int scale = 100;

    *sec = *ms = 0;
    if (digits(p, 2, h) || **p != ':' || (++*p, digits(p, 2, mi)) || *h > 23 ||
        *mi > 59)
        return PLANCTL_EINVAL;
    if (**p != ':')
        return 0;
    ++*p;
    if (digits(p, 2, sec) || *sec > 60)
        return PLANCTL_EINVAL;
    if (**p == '.') {
        ++*p;
        if (**p < '0' || **p > '9')
            return PLANCTL_EINVAL;
        /* Milliseconds are the store's resolution; finer digits are read
         * and dropped. */
        for (; **p >= '0' && **p <= '9'; ++*p) {
            *ms += (**p - '0') * scale;
            scale /= 10;
        }
    }
    return 0;
}

/* A date, a date and a time, or (relative to now_ms's local day) a time,
 * with an optional zone.  rfc3339 asks for exactly RFC 3339 (and a space
 * for its T, as SQL writes it). */
static int absolute(int64_t *out, const char *s, const int64_t *now_ms,
                    int rfc3339)
{
    const char *p = s;
    int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0, local;
    int64_t off_s, t;

    if (!rfc3339 && now_ms && s[0] && s[1] && s[2] == ':') {
        /* "14:03:05", as messages print a time of today. */
        time_t now = (time_t)floor_div(*now_ms, 1000);
        struct tm tm;
        if (clock_time(&p, &h, &mi, &sec, &ms) || zone(p, 0, &local, &off_s) ||
            !local || !localtime_r(&now, &tm))
            return PLANCTL_EINVAL;
        return local_ms(out, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, h,
                        mi, sec, ms);
    }
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
        digits(&p, 2, &d) || mo < 1 || mo > 12 || d < 1 ||
        d > month_days(y, mo))
        return PLANCTL_EINVAL;
    if (*p == 'T' || *p == 't' || (*p == ' ' && p[1] >= '0' && p[1] <= '9')) {
        p++;
        if (clock_time(&p, &h, &mi, &sec, &ms))
            return PLANCTL_EINVAL;
        if (rfc3339 && p - s < 19)
            return PLANCTL_EINVAL;
    } else if (rfc3339) {
        return PLANCTL_EINVAL;
    }
    if (zone(p, rfc3339, &local, &off_s))
        return PLANCTL_EINVAL;
    if (local)
        return local_ms(out, y, mo, d, h, mi, sec, ms);
    t = (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off_s) *
            1000 +
        ms;
    *out = t;
    return 0;
}

int pctl_time_parse(int64_t *out, const char *s)
{
    int64_t t;

    if (!s || absolute(&t, s, NULL, 1))
        return PLANCTL_EINVAL;
    *out = t;
    return 0;
}

int pctl_time_read(int64_t *out, const char *s, const int64_t *now_ms)
{
    size_t n = s ? strlen(s) : 0;
    int64_t t;

    if (!s)
        return PLANCTL_EINVAL;
    if (now_ms && !strcmp(s, "now")) {
        *out = *now_ms;
        return 0;
    }
    if (now_ms && n > 4 && !strcmp(s + n - 4, " ago")) {
        /* "2h ago": the duration alone, then back from now. */
        char buf[64];
        if (n - 4 >= sizeof(buf))
            return PLANCTL_EINVAL;
        memcpy(buf, s, n - 4);
        buf[n - 4] = '\0';
        if (pctl_duration_parse(&t, buf))
            return PLANCTL_EINVAL;
        *out = *now_ms - t;
        return 0;
    }
    if (now_ms && pctl_duration_parse(&t, s) == 0) {
        *out = *now_ms - t;
        return 0;
    }
    if (absolute(&t, s, now_ms, 0))
        return PLANCTL_EINVAL;
    *out = t;
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
