/*
 * log.c - the structured log of `planctl run`: one line per engine event
 * on stderr, either text
 *
 *   2026-11-21T14:03:05.123Z warn step failed, retrying instance=zk run=3
 *   plan=deploy step=node-0 attempt=1 status=ERROR detail="exit status 1"
 *
 * (one line) or JSON with the same fields, absent ones left out:
 *
 *   {"ts":"2026-11-21T14:03:05.123Z","level":"warn","msg":"step failed,
 *   retrying","instance":"zk","run":3,...}
 *
 * The library hands over records and never prints (planctl.h); this is
 * where they become lines.  Times are UTC with milliseconds.
 */
#include "log.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "cli.h"

int cli_log_init(cli_log *l, FILE *f, const char *format, const char *level,
                 const char **bad)
{
    static const char *const levels[] = {"debug", "info", "warn", "error"};
    size_t i;

    l->f = f;
    l->json = 0;
    l->min = PLANCTL_LOG_INFO;
    if (format && strcmp(format, "json") == 0)
        l->json = 1;
    else if (format && strcmp(format, "text") != 0) {
        *bad = "log-format";
        return -1;
    }
    if (level) {
        for (i = 0; i < sizeof levels / sizeof levels[0]; i++)
            if (strcmp(level, levels[i]) == 0)
                break;
        if (i == sizeof levels / sizeof levels[0]) {
            *bad = "log-level";
            return -1;
        }
        l->min = (planctl_log_level)i;
    }
    return 0;
}

static void format_ts(char *buf, size_t n, int64_t ms)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    size_t len;

    gmtime_r(&secs, &tm);
    len = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + len, n - len, ".%03dZ", (int)(ms % 1000));
}

/* A value of a text line: bare when it is a plain word, else quoted with
 * backslash escapes, control characters as spaces (one line, always). */
static void text_value(cli_buf *b, const char *key, const char *v)
{
    const char *c;
    int plain = *v != '\0';

    for (c = v; *c; c++)
        if (*c == ' ' || *c == '"' || *c == '\\' || *c == '=' ||
            (unsigned char)*c < 0x20 || *c == 0x7f)
            plain = 0;
    cli_buf_addf(b, " %s=", key);
    if (plain) {
        cli_buf_add(b, v);
        return;
    }
    cli_buf_add(b, "\"");
    for (c = v; *c; c++) {
        if (*c == '"' || *c == '\\') {
            char esc[3] = {'\\', *c, 0};

            cli_buf_add(b, esc);
        } else if ((unsigned char)*c < 0x20 || *c == 0x7f) {
            cli_buf_add(b, " ");
        } else {
            cli_buf_addn(b, c, 1);
        }
    }
    cli_buf_add(b, "\"");
}

/* A string that is not UTF-8 (json_string refuses it) is left out rather
 * than breaking the line. */
static void set_str(json_t *o, const char *key, const char *v)
{
    json_t *s;

    if (!v || !(s = json_string(v)))
        return;
    if (json_object_set_new(o, key, s) < 0)
        cli_oom();
}

static void write_json(const cli_log *l, const planctl_log_record *r,
                       const char *ts)
{
    json_t *o = json_object();
    char *text;

    if (!o)
        cli_oom();
    set_str(o, "ts", ts);
    set_str(o, "level", planctl_log_level_name(r->level));
    set_str(o, "msg", r->msg);
    set_str(o, "instance", r->instance);
    if (r->run > 0 && json_object_set_new(o, "run", json_integer(r->run)) < 0)
        cli_oom();
    set_str(o, "plan", r->plan);
    set_str(o, "phase", r->phase);
    set_str(o, "step", r->step);
    if (r->attempt > 0 &&
        json_object_set_new(o, "attempt", json_integer(r->attempt)) < 0)
        cli_oom();
    set_str(o, "status", r->status);
    set_str(o, "actor", r->actor);
    set_str(o, "detail", r->detail);
    text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!text)
        cli_oom();
    fprintf(l->f, "%s\n", text);
    free(text);
}

static void write_text(const cli_log *l, const planctl_log_record *r,
                       const char *ts)
{
    cli_buf b = CLI_BUF_INIT;

    cli_buf_addf(&b, "%s %s ", ts, planctl_log_level_name(r->level));
    cli_buf_add_clean(&b, r->msg ? r->msg : "");
    if (r->instance)
        text_value(&b, "instance", r->instance);
    if (r->run > 0)
        cli_buf_addf(&b, " run=%lld", (long long)r->run);
    if (r->plan)
        text_value(&b, "plan", r->plan);
    if (r->phase)
        text_value(&b, "phase", r->phase);
    if (r->step)
        text_value(&b, "step", r->step);
    if (r->attempt > 0)
        cli_buf_addf(&b, " attempt=%d", r->attempt);
    if (r->status)
        text_value(&b, "status", r->status);
    if (r->actor)
        text_value(&b, "actor", r->actor);
    if (r->detail)
        text_value(&b, "detail", r->detail);
    fprintf(l->f, "%s\n", cli_buf_str(&b));
    cli_buf_free(&b);
}

void cli_log_record(const planctl_log_record *rec, void *data)
{
    const cli_log *l = data;
    char ts[40];

    if (rec->level < l->min)
        return;
    format_ts(ts, sizeof ts, rec->ts_ms);
    if (l->json)
        write_json(l, rec, ts);
    else
        write_text(l, rec, ts);
    fflush(l->f);
}

void cli_log_event(cli_log *l, planctl_log_level level, const char *msg,
                   const char *detail)
{
    planctl_log_record rec;
    struct timeval tv;

    memset(&rec, 0, sizeof rec);
    gettimeofday(&tv, NULL);
    rec.level = level;
    rec.ts_ms = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
    rec.msg = msg;
    rec.detail = detail;
    cli_log_record(&rec, l);
}
