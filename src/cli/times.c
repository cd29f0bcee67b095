/*
 * times.c - the times and durations the CLI reads and shows: RFC 3339
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

/* Offsets of zone abbreviations that name one offset only, to write the
 * refused time back with its offset.  CST, IST, BST and the like name
 * several zones: those are left out and get the general form. */
static const struct {
    const char *abbr, *offset;
} abbrs[] = {
    {"EST", "-05:00"},  {"EDT", "-04:00"},  {"PST", "-08:00"},
    {"PDT", "-07:00"},  {"MST", "-07:00"},  {"MDT", "-06:00"},
    {"AKST", "-09:00"}, {"AKDT", "-08:00"}, {"HST", "-10:00"},
    {"WET", "+00:00"},  {"WEST", "+01:00"}, {"CET", "+01:00"},
    {"CEST", "+02:00"}, {"EET", "+02:00"},  {"EEST", "+03:00"},
    {"MSK", "+03:00"},  {"JST", "+09:00"},  {"KST", "+09:00"},
    {"AEST", "+10:00"}, {"AEDT", "+11:00"}, {"NZST", "+12:00"},
    {"NZDT", "+13:00"},
};

int cli_time_zone_refusal(const char *flag, const char *text)
{
    const char *sp = strrchr(text, ' ');
    size_t n = sp ? strlen(sp + 1) : 0;

    if (n < 2 || n > 5)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (sp[1 + i] < 'A' || sp[1 + i] > 'Z')
            return 0;
    /* Only a time the rest of which reads: with UTC in its place. */
    char probe[128];
    int64_t ms, zero = 0;
    snprintf(probe, sizeof(probe), "%.*s UTC", (int)(sp - text), text);
    if (strlen(text) >= sizeof(probe) - 8 || pctl_time_read(&ms, probe, &zero))
        return 0;
    tzset();
    const char *offset = NULL;
    for (size_t i = 0; i < sizeof(abbrs) / sizeof(abbrs[0]); i++)
        if (!strcmp(abbrs[i].abbr, sp + 1))
            offset = abbrs[i].offset;
    char local[32];
    if (!strcmp(tzname[0], tzname[1]))
        snprintf(local, sizeof(local), "%s", tzname[0]);
    else
        snprintf(local, sizeof(local), "%s or %s", tzname[0], tzname[1]);
    cli_buf b = CLI_BUF_INIT;
    cli_buf_addf(&b,
                 "%s \"%s\": %s is not the local zone (%s); an abbreviation "
                 "may name several zones (CST is US Central and China), so "
                 "only the local one's is read: write the offset instead, ",
                 flag, text, sp + 1, local);
    if (offset)
        cli_buf_addf(&b, "\"%.*s %s\"", (int)(sp - text), text, offset);
    else
        cli_buf_addf(&b, "\"%.*s +HH:MM\"", (int)(sp - text), text);
    cli_buf_add(&b, ", or UTC");
    cli_errorf("%s", cli_buf_str(&b));
    cli_buf_free(&b);
    return 1;
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
