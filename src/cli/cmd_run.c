/* cmd_run.c - `planctl run`: the standalone engine on its own libuv loop,
 * stopped gracefully by the first SIGINT/SIGTERM and at once by the second.
 */
#include "cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "core/def.h"

extern const cli_command cli_cmd_run;

static const cli_flag flags[] = {
    {"until-idle", 0, CLI_FLAG_BOOL, 0, NULL,
     "exit once no run is active or queued and nothing is waiting"},
    {"concurrency", 0, CLI_FLAG_VALUE, 0, "N",
     "steps running at once (default 64)"},
    {"grace", 0, CLI_FLAG_VALUE, 0, "D",
     "on SIGINT/SIGTERM, how long running steps may finish (default 10s)"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl run", "planctl run --until-idle",
    "planctl run --concurrency 8 --grace 30s", NULL};

typedef struct runner {
    uv_loop_t loop;
    uv_signal_t sigint, sigterm;
    planctl_engine *engine;
    int64_t grace_ms;
    int signals; /* how many stop signals so far */
} runner;

static void on_signal(uv_signal_t *h, int signum)
{
    runner *r = h->data;

    if (r->signals++ == 0) {
        char d[32];

        cli_duration_format(d, sizeof d, r->grace_ms);
        fprintf(stderr,
                "planctl: %s: stopping; running steps have %s to finish "
                "(again to stop now)\n",
                signum == SIGINT ? "interrupt" : "terminated", d);
        planctl_engine_stop(r->engine, r->grace_ms);
    } else {
        fprintf(stderr, "planctl: stopping now\n");
        planctl_engine_stop(r->engine, 0);
    }
}

static void on_stopped(planctl_engine *e, void *data)
{
    runner *r = data;

    (void)e;
    /* The engine closed its handles; ours go too, and the loop ends. */
    uv_close((uv_handle_t *)&r->sigint, NULL);
    uv_close((uv_handle_t *)&r->sigterm, NULL);
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    const char *conc = cli_arg(a, "concurrency"), *grace = cli_arg(a, "grace");
    runner r;
    int rc, status;

    memset(&r, 0, sizeof r);
    r.grace_ms = 10000;
    o.until_idle = cli_arg_count(a, "until-idle") > 0;
    if (conc) {
        char *end;
        long v = strtol(conc, &end, 10);

        if (*end || v < 1 || v > 100000)
            return cli_usage_error(&cli_cmd_run,
                                   "--concurrency must be a whole number "
                                   "from 1 to 100000, not \"%s\"",
                                   conc);
        o.concurrency = (int)v;
    }
    if (grace && pctl_duration_parse(&r.grace_ms, grace) < 0)
        return cli_usage_error(&cli_cmd_run,
                               "--grace must be a duration such as \"30s\", "
                               "not \"%s\"",
                               grace);
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0)
        return rc;
    /* The engine's timers follow the real clock, whatever PLANCTL_NOW says
     * for the views. */
    planctl_set_clock(ctx->db, NULL, NULL);
    if (uv_loop_init(&r.loop) != 0) {
        cli_errorf("cannot create an event loop");
        return CLI_EXIT_ERROR;
    }
    rc = planctl_engine_new(&r.engine, ctx->db, &r.loop, &o);
    if (rc == 0)
        rc = planctl_engine_start(r.engine, on_stopped, &r);
    if (rc < 0) {
        int code = cli_fail(ctx, rc);

        planctl_engine_free(r.engine);
        uv_loop_close(&r.loop);
        return code;
    }
    uv_signal_init(&r.loop, &r.sigint);
    uv_signal_init(&r.loop, &r.sigterm);
    r.sigint.data = r.sigterm.data = &r;
    uv_signal_start(&r.sigint, on_signal, SIGINT);
    uv_signal_start(&r.sigterm, on_signal, SIGTERM);
    if (!o.until_idle)
        fprintf(stderr, "planctl: engine running on %s; Ctrl-C to stop\n",
                ctx->db_path);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    status = planctl_engine_status(r.engine);
    planctl_engine_free(r.engine);
    if (uv_loop_close(&r.loop) != 0)
        cli_errorf("internal error: the event loop still had open handles");
    if (status < 0)
        return cli_fail(ctx, status);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_run = {
    "run",
    "Run the engine that advances the active plans",
    "[--until-idle] [--concurrency N] [--grace D]",
    "Runs the engine in the foreground: it takes the database's engine lease\n"
    "(one engine per database; a second is refused, exit 3), retries the\n"
    "steps a stopped engine interrupted, and advances every active run,\n"
    "noticing commits of other planctl processes within 100ms.  The first\n"
    "SIGINT or SIGTERM stops it gracefully, the second at once.",
    NULL,
    flags,
    examples,
    run};
