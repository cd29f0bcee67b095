/*
 * fuzz_duration.c - the libFuzzer target for the small parsers of
 * src/core: durations ("1h30m", "1.5s"), RFC 3339 times and names.
 *
 * Each parser is checked against a reference written here from the
 * grammar alone, with 128-bit arithmetic where the library uses 64 bits,
 * so an overflow or an off-by-one in either shows up as a disagreement.
 * Round trips close the loop: what pctl_duration_format() and
 * pctl_time_rfc3339() write parses back to the value (durations up to the
 * precision the format keeps).  A broken property aborts, which the
 * fuzzer keeps as a crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/def.h"
#include "core/timefmt.h"
#include "planctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 128 bits: no term of a duration the reference meets can overflow it. */
__extension__ typedef __int128 wide;

static void require(int ok)
{
    if (!ok)
        abort();
}

static int digit(char c)
{
    return c >= '0' && c <= '9';
}

static int alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * The duration grammar, restated: one or more <digits>[.<digits>]<unit>
 * with units ms, s, m, h; the whole at most PCTL_DURATION_MAX_MS.  Each
 * term is truncated to the millisecond on its own.  Returns 0 and *out,
 * or -1.
 */
static int ref_duration(int64_t *out, const char *s)
{
    const wide max = PCTL_DURATION_MAX_MS;
    wide total = 0;

    if (!*s)
        return -1;
    while (*s) {
        wide whole = 0, frac = 0, scale = 1, unit;
        int nfrac = 0;
        const char *u;

        if (!digit(*s))
            return -1;
        for (; digit(*s); s++)
            if (whole <= max) /* past max it only has to stay past it */
                whole = whole * 10 + (*s - '0');
        if (*s == '.') {
            s++;
            if (!digit(*s))
                return -1;
            for (; digit(*s); s++, nfrac++)
                if (nfrac < 9) { /* later digits are below a nanosecond */
                    frac = frac * 10 + (*s - '0');
                    scale *= 10;
                }
        }
        for (u = s; alpha(*s); s++)
            ;
        if (s - u == 2 && u[0] == 'm' && u[1] == 's')
            unit = 1;
        else if (s - u == 1 && u[0] == 's')
            unit = 1000;
        else if (s - u == 1 && u[0] == 'm')
            unit = 60000;
        else if (s - u == 1 && u[0] == 'h')
            unit = 3600000;
        else if (s - u == 1 && u[0] == 'd')
            unit = 86400000;
        else
            return -1;
        if (whole * unit > max)
            return -1;
        total += whole * unit + frac * unit / scale;
        if (total > max)
            return -1;
    }
    *out = (int64_t)total;
    return 0;
}

static void check_duration(const char *text)
{
    int64_t got = -1, want = -1, back = -1;
    char buf[64];
    int rc = pctl_duration_parse(&got, text);
    int ref = ref_duration(&want, text);

    require(rc == 0 || rc == PLANCTL_EINVAL);
    require((rc == 0) == (ref == 0));
    if (rc != 0)
        return;
    require(got == want && got >= 0 && got <= PCTL_DURATION_MAX_MS);

    /* The format keeps milliseconds below a minute, seconds below an
     * hour and minutes above; what it writes parses back to the value
     * with only the dropped part missing. */
    memset(buf, 'x', sizeof buf);
    pctl_duration_format(buf, 32, got);
    require(memchr(buf, '\0', 32) != NULL);
    require(pctl_duration_parse(&back, buf) == 0);
    require(back <= got);
    if (got < 60000)
        require(back == got);
    else if (got < 3600000)
        require(got - back < 1000);
    else
        require(got - back < 60000);
}

/* Any int64, also negative: pctl_duration_format writes a bounded,
 * terminated string whatever the value. */
static void check_format(const uint8_t *data, size_t size)
{
    char buf[40];
    int64_t v = 0;
    size_t i;

    for (i = 0; i < 8 && i < size; i++)
        v = (int64_t)((uint64_t)v << 8 | data[i]);
    memset(buf, 'x', sizeof buf);
    pctl_duration_format(buf, 32, v);
    require(memchr(buf, '\0', 32) != NULL);
    require(buf[32] == 'x'); /* nothing past the size given */
}

/* Days in month m of year y, proleptic Gregorian. */
static int month_days(int64_t y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return m == 2 && leap ? 29 : days[m - 1];
}

static void check_time(const char *text)
{
    int64_t ms = 0, back = 0;
    char buf[PCTL_TIME_BUF + 8];
    int rc = pctl_time_parse(&ms, text);

    require(rc == 0 || rc == PLANCTL_EINVAL);
    if (rc != 0)
        return;
    /* Whatever was accepted has the fixed prefix of RFC 3339. */
    require(strlen(text) >= 20 && text[4] == '-' && text[7] == '-' &&
            text[13] == ':' && text[16] == ':');
    /* Years 0000-9999 with a +-23:59 offset: within these bounds the
     * formatted value must parse back to the same millisecond. */
    if (ms < -62167219200000LL + 86400000LL ||
        ms > 253402300799999LL - 86400000LL)
        return;
    memset(buf, 'x', sizeof buf);
    pctl_time_rfc3339(buf, ms);
    require(memchr(buf, '\0', PCTL_TIME_BUF) != NULL);
    require(strlen(buf) == 24 && buf[23] == 'Z');
    require(pctl_time_parse(&back, buf) == 0);
    require(back == ms);
    {
        /* The formatted date is a real one. */
        int64_t y = atoi(buf);
        int m = atoi(buf + 5), d = atoi(buf + 8);

        require(m >= 1 && m <= 12 && d >= 1 && d <= month_days(y, m));
    }
}

static void check_name(const char *text, size_t len)
{
    int want =
        len >= 1 && len <= PCTL_NAME_MAX && (alpha(text[0]) || digit(text[0]));
    size_t i;

    for (i = 0; want && i < len; i++)
        want = alpha(text[i]) || digit(text[i]) || text[i] == '_' ||
               text[i] == '.' || text[i] == '-';
    require(pctl_name_valid(text) == want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    size_t len;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    len = strlen(text); /* a NUL inside ends the string, as in C */
    check_duration(text);
    check_time(text);
    {
        /* The reader of times people give never fails otherwise, and reads
         * whatever RFC 3339 reads as the same instant. */
        int64_t now = 1795269785000, a = 0, b = 0;
        int rc = pctl_time_read(&a, text, &now);
        require(rc == 0 || rc == PLANCTL_EINVAL);
        if (pctl_time_parse(&b, text) == 0)
            require(pctl_time_read(&a, text, &now) == 0 && a == b);
    }
    check_name(text, len);
    check_format(data, size);
    free(text);
    return 0;
}
