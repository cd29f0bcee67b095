/*
 * timefmt.c - the times and durations the CLI reads and shows: RFC 3339
 * from the JSON documents, local "2026-11-21 14:03:05" and short durations
 * ("1m12s") for people, and what people give back (core/timefmt.c reads
 * every form).
 */
#include "cli.h"
#include "core/def.h"

#include <string.h>
#include <time.h>

#include "core/timefmt.h"

int cli_time_parse(int64_t *out_ms, const char *text)
{
    return pctl_time_parse(out_ms, text) == 0 ? 0 : -1;
}

int cli_time_read(int64_t *out_ms, const cli_ctx *ctx, const char *text)
{
    return pctl_time_read(out_ms, text, &ctx->now_ms) == 0 ? 0 : -1;
}

static void local_format(char *buf, size_t size, int64_t ms, int zone)
{
    /* Floor division, so times before 1970 still land on their second. */
    int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    time_t t = (time_t)secs;
    struct tm tm;
    if (!localtime_r(&t, &tm) ||
        (zone ? strftime(buf, size, "%Y-%m-%d %H:%M:%S %Z", &tm)
              : strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm)) == 0)
        snprintf(buf, size, "@%lld", (long long)ms);
}

void cli_time_format(char *buf, size_t size, int64_t ms)
{
    local_format(buf, size, ms, 0);
}

void cli_time_format_zone(char *buf, size_t size, int64_t ms)
{
    local_format(buf, size, ms, 1);
}

void cli_duration_format(char *buf, size_t size, int64_t ms)
{
    pctl_duration_coarse(buf, size, ms);
}
