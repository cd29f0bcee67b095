/*
 * engine_note.c - what the CLI says of the engine that holds the database:
 * the line under `status`, and the warning a `--wait` or `status --watch`
 * gives when no engine moves the run it follows.
 *
 * A waiting command cannot tell an engine that is slow from none at all by
 * the run alone (it stays PENDING either way), but the lease can: after a
 * few seconds without a live holder (PLANCTL_ENGINE_WARN_AFTER, 5s) it
 * says so once on stderr, and says so again only after an engine came and
 * went.  The wait itself goes on: an engine may yet start.
 */
#include "cli.h"

#include <stdlib.h>
#include <time.h>

#include "core/def.h"
#include "core/enginfo.h"

#define WARN_AFTER_DEFAULT_MS 5000

void cli_engine_line(cli_buf *b, const cli_ctx *ctx, const json_t *engine)
{
    pctl_engine_seen e = {0};
    char line[1024];

    if (json_is_object(engine)) {
        cli_jint(&e.pid, engine, "pid");
        e.host = cli_jstr(engine, "host");
        cli_jtime(&e.since_ms, engine, "since");
        cli_jtime(&e.last_seen_ms, engine, "last_seen");
        e.alive = json_is_true(json_object_get(engine, "alive"));
        e.name = cli_jstr(engine, "name");
        e.holds = json_is_true(json_object_get(engine, "holds"));
        /* Several engines on PostgreSQL: the heartbeat's age is the
         * database's to say (its clock, not this host's). */
        if (json_is_integer(json_object_get(engine, "age_ms")))
            e.last_seen_ms =
                ctx->now_ms -
                json_integer_value(json_object_get(engine, "age_ms"));
    }
    pctl_engine_line(line, sizeof line, ctx->db_path,
                     json_is_object(engine) ? &e : NULL, ctx->now_ms);
    cli_buf_add_clean(b, line);
    /* No engine runs, or the one that ran is gone: the library says so,
     * the CLI says how to start one. */
    if (!json_is_object(engine) || (!e.name && !e.alive))
        cli_buf_add(b, "; start one with 'planctl run'");
}

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cli_engine_watch_init(cli_engine_watch *w)
{
    const char *env = getenv("PLANCTL_ENGINE_WARN_AFTER");
    int64_t ms;

    w->down_since = -1;
    w->warned = 0;
    w->after_ms = WARN_AFTER_DEFAULT_MS;
    /* "0" is a duration too: warn at the first look. */
    if (env && env[0] &&
        (env[0] == '0' && !env[1] ? (ms = 0, 1)
                                  : pctl_duration_parse(&ms, env) == 0))
        w->after_ms = ms;
}

int cli_engine_watch_check(cli_engine_watch *w, cli_buf *b, const cli_ctx *ctx,
                           const json_t *doc, int64_t run)
{
    const json_t *engine = json_object_get(doc, "engine");
    int64_t now = mono_ms();

    if (json_is_true(json_object_get(engine, "alive"))) {
        w->down_since = -1;
        if (!w->warned)
            return 0;
        w->warned = 0;
        cli_buf_addf(
            b, "an engine is running now (pid %lld on ",
            (long long)json_integer_value(json_object_get(engine, "pid")));
        cli_buf_add_clean(b, cli_jstr(engine, "host") ? cli_jstr(engine, "host")
                                                      : "?");
        cli_buf_add(b, ")");
    } else {
        if (w->down_since < 0)
            w->down_since = now;
        if (w->warned || now - w->down_since < w->after_ms)
            return 0;
        w->warned = 1;
        cli_buf_addf(
            b, "warning: run %lld is waiting for an engine: ", (long long)run);
        cli_engine_line(b, ctx, engine);
    }
    return 1;
}
