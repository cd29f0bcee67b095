/* cmd_run.c - `planctl run`: the standalone engine on its own libuv loop,
 * stopped gracefully by the first SIGINT/SIGTERM/SIGHUP and at once by the
 * second, with its metrics served over HTTP (--metrics-addr,
 * src/serve/metrics_handler.c) and its events logged as text or JSON lines
 * (--log-format, --log-level, log.c).
 *
 * With --log-format or --log-level, or on a terminal without either,
 * every line on stderr is a log record: a person watching the engine sees
 * its runs start and end and its steps fail, as --log-level says info is
 * the default.  Otherwise (stderr a file or a pipe: scripts, supervisors)
 * the command says what it always said: a line when it starts, one per
 * signal, and a run it cannot execute.
 */
#include "cli/cli.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "cli/listen.h"
#include "cli/log.h"
#include "core/def.h"

extern const cli_command cli_cmd_run;

static const cli_flag flags[] = {
    {"until-idle", 0, CLI_FLAG_BOOL, 0, NULL,
     "exit once no run is active or queued and nothing is waiting"},
    {"concurrency", 0, CLI_FLAG_VALUE, 0, "N",
     "steps running at once (default 64)"},
    {"grace", 0, CLI_FLAG_VALUE, 0, "D",
     "on SIGINT/SIGTERM/SIGHUP, how long running steps may finish (default "
     "10s)"},
    {"ui", 0, CLI_FLAG_VALUE, 0, "ADDR",
     "serve the web page and /api/v1 from this process too, read-only, as "
     "planctl serve does (loopback only, e.g. 127.0.0.1:8080)"},
    {"metrics-addr", 0, CLI_FLAG_VALUE, 0, "ADDR",
     "serve /metrics and /healthz over HTTP ([HOST]:PORT; loopback by "
     "default)"},
    {"log-format", 0, CLI_FLAG_VALUE, 0, "FMT",
     "log engine events on stderr as text or json lines"},
    {"log-level", 0, CLI_FLAG_VALUE, 0, "LEVEL",
     "the least event logged: debug, info (default; on a terminal without "
     "this flag too), warn or error"},
    {"output-size", 0, CLI_FLAG_VALUE, 0, "SIZE",
     "output kept per attempt: bytes, or with KiB or MiB (default 64KiB, at "
     "most 1MiB)"},
    {"durability", 0, CLI_FLAG_VALUE, 0, "D",
     "normal (default; a power failure may lose the last commits) or full "
     "(every commit synced); also PLANCTL_DURABILITY"},
    {"name", 0, CLI_FLAG_VALUE, 0, "NAME",
     "this engine's name among several on a PostgreSQL database (default "
     "host:pid)"},
    {"capacity", 0, CLI_FLAG_VALUE, 0, "N",
     "active runs this engine holds at most, among several (default: no "
     "limit; its fair share keeps engines even)"},
    {"lease-ttl", 0, CLI_FLAG_VALUE, 0, "D",
     "how long after its last heartbeat this engine counts as dead and its "
     "runs are taken over (default 15s, from 1s to 1h)"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl run",
    "planctl run --until-idle",
    "planctl run --concurrency 8 --grace 30s",
    "planctl run --metrics-addr :9464 --log-format json",
    "planctl --db postgresql://db.example/ops run --name ctl-a --capacity 500",
    NULL};

typedef struct runner {
    uv_loop_t loop;
    uv_signal_t sigint, sigterm, sighup;
    planctl_engine *engine;
    int64_t grace_ms;
    int signals;        /* how many stop signals so far */
    serve_server *http; /* --metrics-addr, or NULL */
    serve_server *web;  /* --ui, or NULL */
    planctl *ui_db;     /* --ui's own handle on the database */
    cli_log log;        /* --log-format, --log-level */
    int structured;     /* either was given, or stderr is a terminal: stderr
                           carries log records only */
} runner;

static const char *signal_word(int signum)
{
    return signum == SIGINT   ? "interrupt"
           : signum == SIGHUP ? "hangup"
                              : "terminated";
}

static void on_signal(uv_signal_t *h, int signum)
{
    runner *r = h->data;

    if (r->signals++ == 0) {
        char d[32];

        cli_duration_format(d, sizeof d, r->grace_ms);
        if (r->structured) {
            char detail[96];

            snprintf(detail, sizeof detail,
                     "%s; running steps have %s to finish", signal_word(signum),
                     d);
            cli_log_event(&r->log, PLANCTL_LOG_INFO, "signal received", detail);
            planctl_engine_stop(r->engine, r->grace_ms);
            return;
        }
        fprintf(stderr,
                "planctl: %s: stopping; running steps have %s to finish "
                "(again to stop now)\n",
                signal_word(signum), d);
        planctl_engine_stop(r->engine, r->grace_ms);
    } else if (r->structured) {
        cli_log_event(&r->log, PLANCTL_LOG_WARN, "signal received",
                      "stopping now");
        planctl_engine_stop(r->engine, 0);
    } else {
        fprintf(stderr, "planctl: stopping now\n");
        planctl_engine_stop(r->engine, 0);
    }
}

/* Without --log-format or --log-level, the one engine event said on
 * stderr besides start and stop: a run this engine cannot execute (a task
 * kind it has no executor for) and leaves waiting. */
static void plain_record(const planctl_log_record *rec, void *data)
{
    (void)data;
    if (strcmp(rec->msg, "run waits for a task kind") != 0)
        return;
    cli_errorf("run %lld of instance \"%s\" (plan \"%s\") waits: %s",
               (long long)rec->run, rec->instance ? rec->instance : "?",
               rec->plan ? rec->plan : "?", rec->detail ? rec->detail : "");
}

static void on_stopped(planctl_engine *e, void *data)
{
    runner *r = data;

    (void)e;
    /* The engine closed its handles; ours go too, and the loop ends. */
    uv_close((uv_handle_t *)&r->sigint, NULL);
    uv_close((uv_handle_t *)&r->sigterm, NULL);
    uv_close((uv_handle_t *)&r->sighup, NULL);
    serve_close(r->http, NULL, NULL);
    r->http = NULL;
    serve_close(r->web, NULL, NULL);
    r->web = NULL;
}

/* Checks --metrics-addr, --ui, --log-format and --log-level into r (before
 * anything is opened).  Returns 0 or the usage error's exit code. */
static int observability_args(runner *r, const cli_args *a,
                              struct sockaddr_storage *addr,
                              struct sockaddr_storage *ui)
{
    const char *maddr = cli_arg(a, "metrics-addr"), *bad = NULL;
    const char *uaddr = cli_arg(a, "ui");
    const char *fmt = cli_arg(a, "log-format"), *lvl = cli_arg(a, "log-level");
    char why[160];

    if (cli_log_init(&r->log, stderr, fmt, lvl, &bad) < 0)
        return cli_usage_error(&cli_cmd_run, "--%s must be %s, not \"%s\"", bad,
                               strcmp(bad, "log-format") == 0
                                   ? "text or json"
                                   : "debug, info, warn or error",
                               strcmp(bad, "log-format") == 0 ? fmt : lvl);
    r->structured = fmt || lvl || isatty(STDERR_FILENO);
    if (maddr && cli_parse_addr(addr, maddr, why, sizeof why) < 0)
        return cli_usage_error(&cli_cmd_run,
                               "--metrics-addr \"%s\": %s (e.g. \":9464\" "
                               "or \"127.0.0.1:9464\")",
                               maddr, why);
    if (uaddr && cli_parse_addr(ui, uaddr, why, sizeof why) < 0)
        return cli_usage_error(&cli_cmd_run,
                               "--ui \"%s\": %s (e.g. \"127.0.0.1:8080\")",
                               uaddr, why);
    if (uaddr && !serve_is_loopback((struct sockaddr *)ui))
        return cli_usage_error(&cli_cmd_run,
                               "--ui %s is reachable from other machines: "
                               "use planctl serve --token-file for that",
                               uaddr);
    return 0;
}

/* Listens for /metrics before the engine starts, so an address in use
 * fails the command before it takes the lease.  Returns 0 or the exit
 * code (the message printed). */
static int listen_metrics(runner *r, const struct sockaddr *addr)
{
    char bound[96], err[256];

    if (cli_listen_metrics(&r->http, &r->loop, addr, r->engine, bound,
                           sizeof bound, err, sizeof err) < 0) {
        cli_errorf("%s", err);
        return CLI_EXIT_ERROR;
    }
    if (r->structured) {
        char msg[128];

        snprintf(msg, sizeof msg, "metrics listening on %s", bound);
        cli_log_event(&r->log, PLANCTL_LOG_INFO, msg, NULL);
    } else {
        fprintf(stderr, "planctl: metrics listening on %s\n", bound);
    }
    return 0;
}

/* --ui: the web page on the engine's loop, through a handle of its own
 * (read-only: the engine's is the engine's).  Returns 0 or the exit code
 * (the message printed). */
static int listen_ui(runner *r, cli_ctx *ctx, const struct sockaddr *addr)
{
    planctl_open_options oo = PLANCTL_OPEN_OPTIONS_INIT;
    serve_page_config cfg = {NULL, 0, NULL};
    char why[256], url[128];
    int rc;

    oo.flags = PLANCTL_OPEN_READONLY;
    if ((rc = planctl_open(&r->ui_db, ctx->db_target, &oo)) < 0) {
        cli_errorf("--ui: %s",
                   r->ui_db ? planctl_errmsg(r->ui_db) : planctl_strerror(rc));
        return cli_exit_code(rc);
    }
    cfg.db = r->ui_db;
    if (cli_listen_page(&r->web, &r->loop, addr, &cfg, url, sizeof url, why,
                        sizeof why) < 0) {
        cli_errorf("%s", why);
        return CLI_EXIT_ERROR;
    }
    if (r->structured) {
        char msg[160];

        snprintf(msg, sizeof msg, "web page at %s", url);
        cli_log_event(&r->log, PLANCTL_LOG_INFO, msg, NULL);
    } else {
        fprintf(stderr, "planctl: serving %s (read-only)\n", url);
    }
    return 0;
}

/* Undoes what run() set up when the engine could not start. */
static int give_up(runner *r, int code)
{
    serve_close(r->http, NULL, NULL);
    r->http = NULL;
    serve_close(r->web, NULL, NULL);
    r->web = NULL;
    uv_run(&r->loop, UV_RUN_DEFAULT); /* the server's handles close */
    planctl_close(r->ui_db);
    planctl_engine_free(r->engine);
    uv_loop_close(&r->loop);
    return code;
}

/* Parses --output-size: bytes ("65536") or a number of KiB or MiB
 * ("64KiB", "1MiB"), from 1 byte to 1 MiB.  Returns 0, or -1. */
static int parse_size(int64_t *out, const char *text)
{
    char *end;
    long long v;

    errno = 0;
    v = text[0] >= '0' && text[0] <= '9' ? strtoll(text, &end, 10) : -1;
    if (v < 0 || errno)
        return -1;
    if (!strcmp(end, "KiB"))
        v = v > (1 << 20) ? -1 : v * 1024;
    else if (!strcmp(end, "MiB"))
        v = v > 1 ? -1 : v * 1024 * 1024;
    else if (*end)
        return -1;
    if (v < 1 || v > 1024 * 1024)
        return -1;
    *out = v;
    return 0;
}

/* A whole number from 1 to max: *out, 0; or -1. */
static int whole(long *out, const char *text, long max)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < 1 || v > max)
        return -1;
    *out = v;
    return 0;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    const char *conc = cli_arg(a, "concurrency"), *grace = cli_arg(a, "grace");
    const char *durability = cli_arg(a, "durability");
    const char *size = cli_arg(a, "output-size");
    const char *capacity = cli_arg(a, "capacity"),
               *ttl = cli_arg(a, "lease-ttl");
    struct sockaddr_storage maddr, uaddr;
    runner r;
    int rc, status;

    memset(&r, 0, sizeof r);
    r.grace_ms = 10000;
    if ((rc = observability_args(&r, a, &maddr, &uaddr)) != 0)
        return rc;
    o.until_idle = cli_arg_count(a, "until-idle") > 0;
    if (conc) {
        long v;

        if (whole(&v, conc, 100000) < 0)
            return cli_usage_error(&cli_cmd_run,
                                   "--concurrency must be a whole number "
                                   "from 1 to 100000, not \"%s\"",
                                   conc);
        o.concurrency = (int)v;
    }
    if (capacity) {
        long v;

        if (whole(&v, capacity, 100000000) < 0)
            return cli_usage_error(&cli_cmd_run,
                                   "--capacity must be a whole number of runs "
                                   "from 1 to 100000000, not \"%s\"",
                                   capacity);
        o.capacity = v;
    }
    if (ttl && (pctl_duration_parse(&o.lease_ttl_ms, ttl) < 0 ||
                o.lease_ttl_ms < 1000 || o.lease_ttl_ms > 3600 * 1000))
        return cli_usage_error(&cli_cmd_run,
                               "--lease-ttl must be a duration from 1s to 1h, "
                               "such as \"15s\", not \"%s\"",
                               ttl);
    o.name = cli_arg(a, "name");
    if (o.name && (!*o.name || strlen(o.name) > 200))
        return cli_usage_error(&cli_cmd_run,
                               "--name must be 1 to 200 characters");
    if (size && parse_size(&o.output_size, size) < 0)
        return cli_usage_error(&cli_cmd_run,
                               "--output-size must be a size from 1 byte to "
                               "1MiB, such as 65536, 64KiB or 1MiB, not \"%s\"",
                               size);
    if (durability && strcmp(durability, "full") != 0 &&
        strcmp(durability, "normal") != 0)
        return cli_usage_error(&cli_cmd_run,
                               "--durability must be normal or full, not "
                               "\"%s\"",
                               durability);
    if (durability)
        ctx->durability_full = strcmp(durability, "full") == 0;
    if (grace && pctl_duration_parse(&r.grace_ms, grace) < 0)
        return cli_usage_error(&cli_cmd_run,
                               "--grace must be a duration such as \"30s\", "
                               "not \"%s\"",
                               grace);
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0)
        return rc;
    /* A client of --metrics-addr or --ui gone while an answer is written
     * is an error for that write (EPIPE), not the end of the engine.
     * Tasks still start with SIGPIPE's default (shell resets the
     * child's signals; the CLI case run_sigpipe checks it). */
    signal(SIGPIPE, SIG_IGN);
    /* Under PLANCTL_NOW the engine starts its clock at that time and
     * advances it by the monotonic clock (engine.c), so the times it
     * records stay in the frame the other commands' views measure with. */
    if (uv_loop_init(&r.loop) != 0) {
        cli_errorf("cannot create an event loop");
        return CLI_EXIT_ERROR;
    }
    rc = planctl_engine_new(&r.engine, ctx->db, &r.loop, &o);
    if (rc == 0 && r.structured)
        rc = planctl_engine_set_logger(r.engine, r.log.min, cli_log_record,
                                       &r.log);
    else if (rc == 0)
        rc = planctl_engine_set_logger(r.engine, PLANCTL_LOG_WARN, plain_record,
                                       NULL);
    if (rc == 0 && cli_arg(a, "metrics-addr") &&
        (rc = listen_metrics(&r, (struct sockaddr *)&maddr)) != 0)
        return give_up(&r, rc);
    if (rc == 0 && cli_arg(a, "ui") &&
        (rc = listen_ui(&r, ctx, (struct sockaddr *)&uaddr)) != 0)
        return give_up(&r, rc);
    if (rc == 0)
        rc = planctl_engine_start(r.engine, on_stopped, &r);
    if (rc < 0)
        return give_up(&r, cli_fail(ctx, rc));
    uv_signal_init(&r.loop, &r.sigint);
    uv_signal_init(&r.loop, &r.sigterm);
    uv_signal_init(&r.loop, &r.sighup);
    r.sigint.data = r.sigterm.data = r.sighup.data = &r;
    uv_signal_start(&r.sigint, on_signal, SIGINT);
    uv_signal_start(&r.sigterm, on_signal, SIGTERM);
    /* A closed terminal (or a supervisor's reload) stops the engine as
     * SIGTERM does, rather than killing it where it stands. */
    uv_signal_start(&r.sighup, on_signal, SIGHUP);
    if (!o.until_idle && !r.structured)
        fprintf(stderr, "planctl: engine running on %s; Ctrl-C to stop\n",
                ctx->db_path);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    status = planctl_engine_status(r.engine);
    planctl_engine_free(r.engine);
    planctl_close(r.ui_db);
    if (uv_loop_close(&r.loop) != 0)
        cli_errorf("internal error: the event loop still had open handles");
    if (status < 0)
        return cli_fail(ctx, status);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_run = {
    "run",
    "Run the engine that advances the active plans",
    "[--until-idle] [--concurrency N] [--grace D] [--metrics-addr ADDR] "
    "[--log-format text|json] [--log-level debug|info|warn|error] "
    "[--durability normal|full] [--output-size SIZE] [--name NAME] "
    "[--capacity N] [--lease-ttl D] [--ui ADDR]",
    "Runs the engine in the foreground: on a SQLite file it takes the\n"
    "database's engine lease (one engine per database; a second is refused,\n"
    "exit 3), retries the steps a stopped engine interrupted, and advances\n"
    "every active run, noticing commits of other planctl processes within\n"
    "100ms.  The first SIGINT, SIGTERM or SIGHUP stops it gracefully, the\n"
    "second at once.\n"
    "On PostgreSQL several engines, on one machine or many, share the\n"
    "database: each joins under --name, claims active runs nobody holds and\n"
    "advances only those.  Each holds its fair share: the active runs over\n"
    "the live engines, rounded up (an engine with a lower --capacity holds\n"
    "that, the others share the rest); one above its share plus one gives\n"
    "back runs down to its share between steps, never one with a try\n"
    "running, so an engine that joins gets its share as the others' runs\n"
    "reach step boundaries.  One pass claims at most --concurrency runs\n"
    "(16 to 256).  The runs of an engine whose heartbeat stopped for\n"
    "--lease-ttl (at once if it ran on this machine and its process is\n"
    "gone) are taken over by the others, their steps in flight becoming\n"
    "ERROR and retried by policy.\n"
    "An engine that cannot renew its heartbeat for half its TTL stops its\n"
    "tasks and stops (exit 3), so that no step ever runs twice at once.\n"
    "'planctl engines' lists them.\n"
    "--durability full syncs every commit to disk; with normal (the\n"
    "default) a power failure or an OS crash may lose the last commits,\n"
    "never the database's consistency; a crash of planctl alone loses\n"
    "nothing.  PLANCTL_DURABILITY sets it for every command.\n"
    "--ui serves the web page of planctl serve (read-only, loopback) from\n"
    "the engine's process.\n"
    "--metrics-addr serves GET /metrics (Prometheus text) and GET /healthz\n"
    "(200 while the engine runs with its lease, else 503); a port alone\n"
    "listens on 127.0.0.1, another host only when named.  --log-format and\n"
    "--log-level turn stderr into one log record per engine event; on a\n"
    "terminal it is so without them too (text, info: runs starting and\n"
    "ending, steps failing), while a file or pipe gets only a line when\n"
    "the engine starts and one per signal, as scripts expect.\n"
    "--output-size is how much of its output (stdout and stderr) each\n"
    "attempt keeps, its last bytes: 64KiB by default, at most 1MiB; the\n"
    "output of a running task is written at most once a second, for\n"
    "'planctl logs --follow'.  A shell task that exits 126 or 127 (its\n"
    "program not executable, not found) fails for good at once, not\n"
    "retried, unless its spec lists the code in retry_exit_codes.\n"
    "\n"
    "Task outputs: a shell task may hand values to the later tasks of its\n"
    "run by writing lines KEY=VALUE, or KEY<<DELIM, the value's lines and\n"
    "DELIM, either after ::secret:: for a secret, to the file named by\n"
    "$PLANCTL_OUTPUT.  Later tasks get them as PLANCTL_OUTPUT_<STEP>_<KEY>\n"
    "(<STEP> is the step's name upper-cased, other than letters and digits\n"
    "made _).  A malformed line fails the attempt, naming the line; the\n"
    "outputs of one attempt hold at most 64 KiB.",
    NULL,
    flags,
    examples,
    run};
