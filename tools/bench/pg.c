/*
 * pg.c - the PostgreSQL figures of issue 17, against a server the caller
 * started (tools/bench/run starts a throwaway one with fsync and
 * synchronous_commit on, so a commit is durable when it returns, as with
 * SQLite's FULL).
 *
 * throughput: the real engine, in this process on its own loop until
 * idle, runs one plan of 16 Dummy steps (4 serial, 8 parallel, 4 serial)
 * on each of N instances in a schema of its own; against it, in the same
 * run on the same server, the raw libpq baseline: one transaction per
 * transition (BEGIN, a compare-and-set UPDATE of a step row, an INSERT of
 * its event, COMMIT), prepared statements, one connection, as fast as it
 * goes.  Figures: engine step completions and transitions per second, the
 * baseline's transitions per second.
 *
 * query: `planctl status` and `history` of one instance through the real
 * CLI, in a schema whose history holds R finished runs of other instances
 * against one that holds a few: the large-versus-small ratio of SQLite's
 * query benchmark.  The history is made by the engine itself (R runs of a
 * one-step plan), so every row is what planctl writes.
 *
 * fleet (issue 18): the same plans run by 1, 2 and 4 `planctl run
 * --until-idle` processes sharing one schema: step completions per second,
 * and the engines' CPU time per step (user + system, of all of them: the
 * portable figure, since the server shares this machine's cores); then
 * how long runs wait after their engine dies: killed (SIGKILL, the same
 * host: the next heartbeat of another engine notices) and stopped
 * (SIGSTOP: its TTL must pass), from the signal to the first of its tries
 * turned ERROR by the other engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "bench.h"

#define TP_STEPS 16 /* bench_tp_definition's */

static PGconn *pg_connect(const char *uri)
{
    const char *keys[] = {"dbname", NULL};
    const char *vals[] = {uri, NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);

    if (PQstatus(c) != CONNECTION_OK)
        bench_die("pg: cannot connect: %s", PQerrorMessage(c));
    return c;
}

static void pg_exec(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);

    if (PQresultStatus(r) != PGRES_COMMAND_OK &&
        PQresultStatus(r) != PGRES_TUPLES_OK)
        bench_die("pg: %s: %s", sql, PQerrorMessage(c));
    PQclear(r);
}

static int64_t pg_scalar(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    int64_t v;

    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        bench_die("pg: %s: %s", sql, PQerrorMessage(c));
    v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return v;
}

/* The planctl URI of schema in the database base names. */
static char *schema_uri(const char *base, const char *schema)
{
    size_t n = strlen(base) + strlen(schema) + 16;
    char *u = malloc(n);

    if (!u)
        bench_die("out of memory");
    snprintf(u, n, "%s%sschema=%s", base, strchr(base, '?') ? "&" : "?",
             schema);
    return u;
}

static void on_stopped(planctl_engine *e, void *data)
{
    (void)e;
    *(int *)data = 1;
}

/* Runs the engine on p until idle; its wall time in seconds. */
static double engine_until_idle(planctl *p)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_engine *e;
    uv_loop_t loop;
    int stopped = 0;
    int64_t t0;

    o.until_idle = 1;
    if (uv_loop_init(&loop) != 0 || planctl_engine_new(&e, p, &loop, &o) < 0)
        bench_die("pg: cannot create the engine: %s", planctl_errmsg(p));
    t0 = bench_ns();
    if (planctl_engine_start(e, on_stopped, &stopped) < 0)
        bench_die("pg: %s", planctl_errmsg(p));
    uv_run(&loop, UV_RUN_DEFAULT);
    if (!stopped || planctl_engine_status(e) != 0)
        bench_die("pg: the engine failed: %s", planctl_errmsg(p));
    planctl_engine_free(e);
    if (uv_loop_close(&loop) != 0)
        bench_die("pg: handles left open");
    return (double)(bench_ns() - t0) / 1e9;
}

static void create_instances(planctl *p, const char *def, const char *prefix,
                             int n)
{
    char name[64];
    int64_t run;
    int i;

    for (i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s%d", prefix, i);
        if (planctl_instance_create(&run, p, name, def, NULL, NULL, 0) < 0)
            bench_die("pg: create %s: %s", name, planctl_errmsg(p));
    }
}

/* Raw libpq: one transaction per transition for `seconds`; transitions
 * per second. */
static double baseline(PGconn *c, const char *schema, double seconds)
{
    static const char *const status[] = {"PENDING", "IN_PROGRESS", "COMPLETE"};
    char sql[512], idbuf[32], atbuf[32];
    const char *v[4];
    int64_t t0, deadline, n = 0;
    int i;

    snprintf(sql, sizeof sql,
             "CREATE SCHEMA %s_raw; SET search_path TO %s_raw; "
             "CREATE TABLE steps (id bigint PRIMARY KEY, status text NOT "
             "NULL); CREATE TABLE events (seq bigint GENERATED ALWAYS AS "
             "IDENTITY PRIMARY KEY, at bigint NOT NULL, step_id bigint NOT "
             "NULL, from_status text, to_status text NOT NULL); INSERT INTO "
             "steps SELECT g, 'PENDING' FROM generate_series(0, 999) g",
             schema, schema);
    pg_exec(c, sql);
    PQclear(PQprepare(c, "upd",
                      "UPDATE steps SET status = $2 WHERE id = $1 AND "
                      "status = $3",
                      0, NULL));
    PQclear(PQprepare(c, "ins",
                      "INSERT INTO events (at, step_id, from_status, "
                      "to_status) VALUES ($1, $2, $3, $4)",
                      0, NULL));
    t0 = bench_ns();
    deadline = t0 + (int64_t)(seconds * 1e9);
    while (bench_ns() < deadline) {
        for (i = 0; i < 1000; i++) {
            int k = (int)(n / 1000 % 2); /* 0: PENDING->IN_PROGRESS ... */
            const char *from = status[k], *to = status[k + 1];
            PGresult *r;

            if (k == 0 && n > 0 && n % 1000 == 0 && i == 0)
                pg_exec(c, "UPDATE steps SET status = 'PENDING'");
            snprintf(idbuf, sizeof idbuf, "%d", i);
            snprintf(atbuf, sizeof atbuf, "%lld", (long long)bench_ns());
            pg_exec(c, "BEGIN");
            v[0] = idbuf, v[1] = to, v[2] = from;
            r = PQexecPrepared(c, "upd", 3, v, NULL, NULL, 0);
            if (PQresultStatus(r) != PGRES_COMMAND_OK ||
                strcmp(PQcmdTuples(r), "1") != 0)
                bench_die("pg: baseline update: %s", PQerrorMessage(c));
            PQclear(r);
            v[0] = atbuf, v[1] = idbuf, v[2] = from, v[3] = to;
            r = PQexecPrepared(c, "ins", 4, v, NULL, NULL, 0);
            if (PQresultStatus(r) != PGRES_COMMAND_OK)
                bench_die("pg: baseline insert: %s", PQerrorMessage(c));
            PQclear(r);
            pg_exec(c, "COMMIT");
            n++;
        }
    }
    return (double)n / ((double)(bench_ns() - t0) / 1e9);
}

static void throughput(const char *base, int instances, double seconds)
{
    char schema[64], sql[256];
    char *uri;
    planctl *p;
    PGconn *c;
    double secs, raw, steps_s, trans_s;
    int64_t steps, trans;

    snprintf(schema, sizeof schema, "bench_tp_%d", (int)getpid());
    uri = schema_uri(base, schema);
    c = pg_connect(base);
    printf("server: %s", PQparameterStatus(c, "server_version"));
    printf(", synchronous_commit=%lld, fsync=%lld (1: on)\n",
           (long long)pg_scalar(c, "SELECT (current_setting("
                                   "'synchronous_commit') = 'on')::int"),
           (long long)pg_scalar(c, "SELECT (current_setting('fsync') = "
                                   "'on')::int"));
    p = bench_open(uri, PLANCTL_DURABILITY_FULL);
    bench_apply(p, bench_tp_definition());
    create_instances(p, "bench", "tp", instances);
    secs = engine_until_idle(p);
    planctl_close(p);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM %s.steps WHERE status = 'COMPLETE'", schema);
    steps = pg_scalar(c, sql);
    if (steps != (int64_t)instances * TP_STEPS)
        bench_die("pg: %lld steps completed, not %d", (long long)steps,
                  instances * TP_STEPS);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM %s.events WHERE entity IN ('run', "
             "'phase', 'step') AND to_status <> 'PENDING'",
             schema);
    trans = pg_scalar(c, sql);
    steps_s = (double)steps / secs;
    trans_s = (double)trans / secs;
    raw = baseline(c, schema, seconds);
    printf("engine: %lld steps of %d instances in %.2f s: %.0f steps/s, "
           "%.0f transitions/s (not counting creation)\n",
           (long long)steps, instances, secs, steps_s, trans_s);
    printf("raw libpq, one transaction per transition: %.0f transitions/s\n",
           raw);
    bench_summary("pg_throughput", steps_s, raw, "steps/s", '>', 1.0);
    bench_summary("pg_transitions", trans_s, raw, "transitions/s", 0, 0);
    snprintf(sql, sizeof sql,
             "DROP SCHEMA %s CASCADE; DROP SCHEMA %s_raw "
             "CASCADE",
             schema, schema);
    pg_exec(c, sql);
    PQfinish(c);
    free(uri);
}

/* The median wall time in ms of `planctl ARGS` run reps times. */
static double cli_ms(const char *bin, const char *uri, const char *args,
                     int reps)
{
    double *v = calloc((size_t)reps, sizeof *v), med;
    char cmd[2048];
    int i;

    if (!v)
        bench_die("out of memory");
    snprintf(cmd, sizeof cmd, "PLANCTL_DB='%s' '%s' %s >/dev/null", uri, bin,
             args);
    for (i = 0; i < reps; i++) {
        int64_t t0 = bench_ns();

        if (system(cmd) != 0)
            bench_die("pg: failed: %s", cmd);
        v[i] = (double)(bench_ns() - t0) / 1e6;
    }
    med = bench_quantile(v, (size_t)reps, 0.5);
    free(v);
    return med;
}

static const char one_step[] =
    "{\"name\":\"q\",\"version\":\"1\",\"tasks\":[{\"name\":\"noop\","
    "\"kind\":\"Dummy\"}],\"plans\":{\"deploy\":{\"phases\":[{\"name\":"
    "\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":[\"noop\"]}]}]},"
    "\"update\":{\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\","
    "\"tasks\":[\"noop\"]}]}]}}}";

/* A schema whose history holds about `runs` finished runs, with the
 * instance "zk" among them: its own history of `own` runs. */
static char *history_schema(const char *base, const char *tag, int runs,
                            int own)
{
    char schema[64];
    char *uri;
    planctl *p;
    int64_t r;
    int i;

    snprintf(schema, sizeof schema, "bench_q%s_%d", tag, (int)getpid());
    uri = schema_uri(base, schema);
    p = bench_open(uri, PLANCTL_DURABILITY_NORMAL);
    bench_apply(p, one_step);
    create_instances(p, "q", "other", runs > own ? runs - own : 0);
    create_instances(p, "q", "zk", 1);
    engine_until_idle(p);
    for (i = 1; i < own; i++) {
        if (planctl_plan_trigger(&r, p, "zk0", "update", NULL) < 0)
            bench_die("pg: trigger: %s", planctl_errmsg(p));
        engine_until_idle(p);
    }
    planctl_close(p);
    return uri;
}

static void query(const char *base, const char *bin, int runs, int reps)
{
    char *big = history_schema(base, "big", runs, 20);
    char *small = history_schema(base, "small", 20, 20);
    double sb = cli_ms(bin, big, "status zk0", reps);
    double ss = cli_ms(bin, small, "status zk0", reps);
    double hb = cli_ms(bin, big, "history zk0", reps);
    double hs = cli_ms(bin, small, "history zk0", reps);
    PGconn *c = pg_connect(base);
    char sql[256];

    printf("status: %.2f ms with %d runs in history, %.2f ms with 20\n", sb,
           runs, ss);
    printf("history: %.2f ms with %d runs in history, %.2f ms with 20\n", hb,
           runs, hs);
    bench_summary("pg_status_big_vs_small", sb, ss, "ms", '<', 1.2);
    bench_summary("pg_history_big_vs_small", hb, hs, "ms", '<', 1.2);
    snprintf(sql, sizeof sql,
             "DROP SCHEMA bench_qbig_%d CASCADE; DROP SCHEMA "
             "bench_qsmall_%d CASCADE",
             (int)getpid(), (int)getpid());
    pg_exec(c, sql);
    PQfinish(c);
    free(big);
    free(small);
}

/* planctl-bench pg --uri URI [--instances N] [--seconds S]
 *                   [--planctl BIN --runs R --reps K]
 * URI names the database (planctl's schema parameter is added); the
 * query figures only with --planctl. */
/* Starts `bin run --until-idle` named name on uri, with a TTL of 3 s; its
 * pid. */
static pid_t spawn_engine(const char *bin, const char *uri, const char *name)
{
    pid_t pid = fork();

    if (pid < 0)
        bench_die("pg: fork: %s", strerror(errno));
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);

        dup2(null, 1);
        dup2(null, 2);
        execl(bin, bin, "--db", uri, "run", "--until-idle", "--name", name,
              "--lease-ttl", "3s", (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void fleet_scaling(const char *base, const char *bin, int instances)
{
    static const int counts[] = {1, 2, 4};
    char schema[64], sql[256], name[32];
    double per_one = 0;
    PGconn *c = pg_connect(base);
    size_t k;

    for (k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int n = counts[k], i, status;
        pid_t pids[4];
        struct rusage ru;
        double secs, cpu = 0, steps_s;
        int64_t t0, steps;
        char *uri;
        planctl *p;

        snprintf(schema, sizeof schema, "bench_fleet%d_%d", n, (int)getpid());
        uri = schema_uri(base, schema);
        p = bench_open(uri, PLANCTL_DURABILITY_FULL);
        bench_apply(p, bench_tp_definition());
        create_instances(p, "bench", "f", instances);
        planctl_close(p);
        t0 = bench_ns();
        for (i = 0; i < n; i++) {
            snprintf(name, sizeof name, "bench-%d", i);
            pids[i] = spawn_engine(bin, uri, name);
        }
        for (i = 0; i < n; i++) {
            if (wait4(pids[i], &status, 0, &ru) < 0 || !WIFEXITED(status) ||
                WEXITSTATUS(status) != 0)
                bench_die("pg: engine %d of %d failed", i, n);
            cpu += (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                   (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
        }
        secs = (double)(bench_ns() - t0) / 1e9;
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM %s.steps WHERE status = 'COMPLETE'",
                 schema);
        steps = pg_scalar(c, sql);
        if (steps != (int64_t)instances * TP_STEPS)
            bench_die("pg: fleet of %d: %lld steps completed, not %d", n,
                      (long long)steps, instances * TP_STEPS);
        steps_s = (double)steps / secs;
        if (n == 1)
            per_one = steps_s;
        printf("fleet: %d engine%s: %lld steps in %.2f s: %.0f steps/s, "
               "engines' CPU %.1f us per step\n",
               n, n == 1 ? "" : "s", (long long)steps, secs, steps_s,
               cpu * 1e6 / (double)steps);
        if (n > 1) {
            char label[32];

            snprintf(label, sizeof label, "pg_fleet_%d", n);
            bench_summary(label, steps_s, per_one, "steps/s", 0, 0);
        }
        snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE", schema);
        pg_exec(c, sql);
        free(uri);
    }
    PQfinish(c);
}

/* Two engines, the first holding every run of a slow plan: from a signal
 * to the first engine (SIGKILL or SIGSTOP) to the first of its tries the
 * second turned ERROR; ms. */
static double takeover_ms(const char *base, const char *bin, int sig)
{
    static const char slow[] =
        "{\"name\":\"slow\",\"version\":\"1\",\"tasks\":[{\"name\":"
        "\"nap\",\"kind\":\"shell\",\"spec\":{\"command\":\"sleep 30\"}}],"
        "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["
        "{\"name\":\"s\",\"tasks\":[\"nap\"],\"retry\":{\"attempts\":3}}]}]"
        "}}}";
    char schema[64], sql[512], *uri;
    PGconn *c = pg_connect(base);
    pid_t a, b;
    planctl *p;
    int64_t t0, t;

    snprintf(schema, sizeof schema, "bench_takeover_%d", (int)getpid());
    uri = schema_uri(base, schema);
    p = bench_open(uri, PLANCTL_DURABILITY_FULL);
    bench_apply(p, slow);
    create_instances(p, "slow", "t", 8);
    planctl_close(p);
    a = spawn_engine(bin, uri, "first");
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM %s.attempts WHERE finished_at IS NULL",
             schema);
    while (pg_scalar(c, sql) < 8)
        usleep(10000);
    b = spawn_engine(bin, uri, "second");
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM %s.engines WHERE name = 'second'", schema);
    while (pg_scalar(c, sql) < 1)
        usleep(10000);
    t0 = bench_ns();
    kill(a, sig);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM %s.attempts WHERE status = 'ERROR'", schema);
    while (pg_scalar(c, sql) < 1) {
        if (bench_ns() - t0 > (int64_t)60 * 1000000000)
            bench_die("pg: no takeover within 60 s");
        usleep(5000);
    }
    t = bench_ns() - t0;
    kill(a, SIGKILL);
    kill(b, SIGKILL);
    waitpid(a, NULL, 0);
    waitpid(b, NULL, 0);
    snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE", schema);
    pg_exec(c, sql);
    PQfinish(c);
    free(uri);
    return (double)t / 1e6;
}

int bench_pg_main(int argc, char **argv)
{
    const char *uri = bench_opt(argc, argv, "--uri", NULL);
    const char *bin = bench_opt(argc, argv, "--planctl", NULL);
    int instances = atoi(bench_opt(argc, argv, "--instances", "500"));
    double seconds = atof(bench_opt(argc, argv, "--seconds", "2"));
    int runs = atoi(bench_opt(argc, argv, "--runs", "20000"));
    int reps = atoi(bench_opt(argc, argv, "--reps", "20"));
    const char *fleet = bench_opt(argc, argv, "--fleet", NULL);

    if (!uri)
        bench_die("usage: planctl-bench pg --uri URI [--instances N] "
                  "[--seconds S] [--planctl BIN --runs R --reps K] "
                  "[--fleet BIN]");
    if (fleet) {
        /* --fleet BIN: only the engines sharing a schema (issue 18). */
        fleet_scaling(uri, fleet, instances);
        printf("takeover: killed (SIGKILL, same host): %.0f ms; stopped "
               "(SIGSTOP, TTL 3 s): %.0f ms\n",
               takeover_ms(uri, fleet, SIGKILL),
               takeover_ms(uri, fleet, SIGSTOP));
        return 0;
    }
    throughput(uri, instances, seconds);
    if (bin)
        query(uri, bin, runs, reps);
    return 0;
}
