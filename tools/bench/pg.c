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
 * fleet (issues 18 and 34): 1, 2 and 4 `planctl run --until-idle`
 * processes sharing one schema, each configuration on a new schema of N
 * instances of a plan of 10 sequential Dummy steps, reaching the server
 * directly (0 ms) or through the forwarder of delay.h adding a round
 * trip (1 ms: half each way), in R rounds that alternate the order of
 * the configurations.  Figures, medians over the rounds: step
 * completions per second (from the engines' start to the last one's
 * exit) and their ratio to one engine at 0 ms of the same run; the
 * engines' CPU time per step (user + system, of all of them, from
 * wait4); the client statements per completed step and per instance
 * created (pg_stat_statements, when the server loads it); and the share
 * of the engines' sessions, sampled in pg_stat_activity every few ms,
 * that wait on a lock (wait_event_type Lock; of those, advisory).  An
 * engine that exits other than 0 is reported with the end of its stderr;
 * a round that leaves steps undone is left out of the medians.  Then how
 * long runs wait after their engine dies: killed (SIGKILL, the same
 * host: another engine watching its host's engines notices) and stopped
 * (SIGSTOP: its TTL must pass), from the signal to the first of its tries
 * turned ERROR by the other engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "bench.h"
#include "delay.h"

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

/* How many steps of planctl's schema `schema` completed. */
static int64_t pg_steps_complete(PGconn *c, const char *schema)
{
    char sql[256];

    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM %s.steps WHERE status = 'COMPLETE'", schema);
    return pg_scalar(c, sql);
}

/* Whether the server's commits are durable, as a summary line prints it:
 * "synchronous_commit=1, fsync=1 (1: on)". */
static const char *pg_durability(PGconn *c)
{
    static char text[64];

    snprintf(text, sizeof text, "synchronous_commit=%lld, fsync=%lld (1: on)",
             (long long)pg_scalar(c, "SELECT (current_setting("
                                     "'synchronous_commit') = 'on')::int"),
             (long long)pg_scalar(c, "SELECT (current_setting('fsync') = "
                                     "'on')::int"));
    return text;
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

/* Instances PREFIXi of def for i = first, first + step, ... below n. */
static void create_some(planctl *p, const char *def, const char *prefix,
                        int first, int step, int n)
{
    char name[64];
    int64_t run;
    int i;

    for (i = first; i < n; i += step) {
        snprintf(name, sizeof name, "%s%d", prefix, i);
        if (planctl_instance_create(&run, p, name, def, NULL, NULL, 0) < 0)
            bench_die("pg: create %s: %s", name, planctl_errmsg(p));
    }
}

static void create_instances(planctl *p, const char *def, const char *prefix,
                             int n)
{
    create_some(p, def, prefix, 0, 1, n);
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
    printf("server: %s, %s\n", PQparameterStatus(c, "server_version"),
           pg_durability(c));
    p = bench_open(uri, PLANCTL_DURABILITY_FULL);
    bench_apply(p, bench_tp_definition());
    create_instances(p, "bench", "tp", instances);
    secs = engine_until_idle(p);
    planctl_close(p);
    steps = pg_steps_complete(c, schema);
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

/* ---- the fleet (issue 34): engines, round trips, statements, locks ---- */

#define SEQ_STEPS 10 /* seq_definition's */
#define ENGINE_COUNTS 3

static const int engine_counts[ENGINE_COUNTS] = {1, 2, 4};

/* The definition "seq": one plan of SEQ_STEPS sequential Dummy steps, the
 * workload of the figures (and of the DBOS harness). */
static const char *seq_definition(void)
{
    static char buf[2048];
    size_t n;
    int i;

    n = (size_t)snprintf(buf, sizeof buf,
                         "{\"name\":\"seq\",\"version\":\"1\",\"tasks\":[{"
                         "\"name\":\"noop\",\"kind\":\"Dummy\"}],\"plans\":{"
                         "\"deploy\":{\"strategy\":\"serial\",\"phases\":[{"
                         "\"name\":\"main\",\"strategy\":\"serial\","
                         "\"steps\":[");
    for (i = 0; i < SEQ_STEPS; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n,
                              "%s{\"name\":\"s%d\",\"tasks\":[\"noop\"]}",
                              i ? "," : "", i);
    snprintf(buf + n, sizeof buf - n, "]}]}}}");
    return buf;
}

/* Like pg_connect, named planctl-bench to the server, so the lock sampler
 * tells these sessions from the engines' (named planctl). */
static PGconn *pg_observer(const char *uri)
{
    const char *keys[] = {"dbname", "application_name", NULL};
    const char *vals[] = {uri, "planctl-bench", NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);

    if (PQstatus(c) != CONNECTION_OK)
        bench_die("pg: cannot connect: %s", PQerrorMessage(c));
    return c;
}

/* Whether pg_stat_statements can be read in c's database: it must be in
 * shared_preload_libraries (tools/bench/run loads it before the fleet);
 * the extension is created if missing. */
static int pgss_ready(PGconn *c)
{
    PGresult *r = PQexec(c, "CREATE EXTENSION IF NOT EXISTS "
                            "pg_stat_statements");
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;

    PQclear(r);
    if (ok) {
        r = PQexec(c, "SELECT count(*) FROM pg_stat_statements");
        ok = PQresultStatus(r) == PGRES_TUPLES_OK;
        PQclear(r);
    }
    return ok;
}

/* The client statements the server ran in c's database since the last
 * reset: every statement a client sent (pg_stat_statements' toplevel
 * ones, BEGIN and COMMIT included), leaving out this program's own
 * observations: each names pg_stat_ (pg_stat_activity,
 * pg_stat_statements, the sampler's probe), which planctl's never do. */
static int64_t pgss_calls(PGconn *c)
{
    return pg_scalar(c,
                     "SELECT coalesce(sum(calls), 0)::bigint FROM "
                     "pg_stat_statements WHERE toplevel AND dbid = (SELECT "
                     "oid FROM pg_database WHERE datname = "
                     "current_database()) AND query NOT LIKE '%pg\\_stat\\_%'");
}

/* Samples, every interval, the engines' sessions (application_name
 * planctl) in pg_stat_activity: how many there are and how many wait on a
 * lock (wait_event_type Lock; of those, on an advisory lock).  Each tick
 * also times one trivial statement on a session that reaches the server
 * as the engines do (through the forwarder or not): the round trip they
 * actually got, which on a loaded machine is longer than the delay asked
 * (the forwarder, the server and the engines wait for a core).  Its text
 * names pg_stat_ so that pgss_calls leaves it out. */
typedef struct sampler {
    pthread_t th;
    PGconn *c, *probe;
    atomic_int stop;
    int interval_us;
    int64_t ticks, backends, lock, advisory;
    double *rtt_us;
    size_t nrtt, caprtt;
} sampler;

static void *sampler_main(void *arg)
{
    sampler *s = arg;
    struct timespec ts = {0, (long)s->interval_us * 1000};

    while (!atomic_load(&s->stop)) {
        PGresult *r = PQexec(
            s->c, "SELECT count(*), count(*) FILTER (WHERE wait_event_type = "
                  "'Lock'), count(*) FILTER (WHERE wait_event_type = 'Lock' "
                  "AND wait_event = 'advisory') FROM pg_stat_activity WHERE "
                  "datname = current_database() AND application_name = "
                  "'planctl' AND backend_type = 'client backend'");
        int64_t t0;

        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
            s->ticks++;
            s->backends += strtoll(PQgetvalue(r, 0, 0), NULL, 10);
            s->lock += strtoll(PQgetvalue(r, 0, 1), NULL, 10);
            s->advisory += strtoll(PQgetvalue(r, 0, 2), NULL, 10);
        }
        PQclear(r);
        t0 = bench_ns();
        r = PQexec(s->probe, "SELECT 1 AS pg_stat_probe");
        if (PQresultStatus(r) == PGRES_TUPLES_OK) {
            bench_grow((void **)&s->rtt_us, s->nrtt, &s->caprtt,
                       sizeof *s->rtt_us, 256);
            s->rtt_us[s->nrtt++] = (double)(bench_ns() - t0) / 1e3;
        }
        PQclear(r);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void sampler_start(sampler *s, const char *base, const char *via,
                          int interval_us)
{
    memset(s, 0, sizeof *s);
    s->c = pg_observer(base);
    s->probe = pg_observer(via);
    s->interval_us = interval_us;
    atomic_init(&s->stop, 0);
    if (pthread_create(&s->th, NULL, sampler_main, s) != 0)
        bench_die("pg: cannot start the lock sampler");
}

static void sampler_stop(sampler *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->th, NULL);
    PQfinish(s->c);
    PQfinish(s->probe);
}

/* Starts the forwarder of delay.h in a child process, listening on a
 * loopback port and forwarding to `to` with delay_ns each way; its pid,
 * and the port in *port.  The child ends with this process. */
static pid_t start_forwarder(const char *to, int64_t delay_ns, int *port)
{
    pid_t parent = getpid(), pid;
    int lfd;

    *port = 0;
    if ((lfd = bench_delay_listen("127.0.0.1", port)) < 0)
        bench_die("pg: cannot start the forwarder");
    fflush(stdout);
    if ((pid = fork()) < 0)
        bench_die("pg: fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(0);
        _exit(bench_delay_serve(lfd, to, delay_ns));
    }
    close(lfd);
    return pid;
}

typedef struct fleet_opts {
    const char *base, *bin, *ttl, *concurrency;
    int instances, rounds, sample_us, pgss;
    int creators;     /* threads creating the instances, each its own handle */
    double rtt_ms[8]; /* round trips added: 0 first (direct) */
    char *via[8];     /* the URI to reach the server with rtt_ms[k] */
    int nrtt;
    char logdir[256]; /* the engines' stderr, one file each */
} fleet_opts;

/* What one configuration did in one round. */
typedef struct fleet_fig {
    int done;   /* every step COMPLETE */
    int failed; /* engines that exited other than 0 */
    double steps_s, cpu_us, per_step, per_create, create_s, lock, advisory;
    double rtt_p50_us, rtt_p90_us; /* the probe's round trips */
    int64_t samples;
} fleet_fig;

static pid_t spawn_fleet_engine(const fleet_opts *o, const char *uri,
                                const char *name, const char *log)
{
    const char *argv[16];
    int n = 0;
    pid_t pid;

    argv[n++] = o->bin;
    argv[n++] = "--db";
    argv[n++] = uri;
    argv[n++] = "run";
    argv[n++] = "--until-idle";
    argv[n++] = "--name";
    argv[n++] = name;
    if (strcmp(o->ttl, "default") != 0) {
        argv[n++] = "--lease-ttl";
        argv[n++] = o->ttl;
    }
    if (o->concurrency) {
        argv[n++] = "--concurrency";
        argv[n++] = o->concurrency;
    }
    argv[n] = NULL;
    fflush(stdout);
    if ((pid = fork()) < 0)
        bench_die("pg: fork: %s", strerror(errno));
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        int err = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

        dup2(null, 1);
        dup2(err >= 0 ? err : null, 2);
        execv(o->bin, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Prints the end of an engine's stderr (why it stopped). */
static void print_tail(const char *log)
{
    char buf[600];
    FILE *f = fopen(log, "r");
    long size;
    size_t n;

    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0,
          SEEK_SET);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    printf("    its stderr ends: %s%s", buf,
           n && buf[n - 1] == '\n' ? "" : "\n");
}

/* One of --creators threads: instances i = first, first + step, ... of
 * n, through a handle of its own. */
typedef struct creator {
    pthread_t t;
    const char *uri;
    int first, step, n;
} creator;

static void *creator_main(void *arg)
{
    creator *cr = arg;
    planctl *p = bench_open(cr->uri, PLANCTL_DURABILITY_FULL);

    create_some(p, "seq", "f", cr->first, cr->step, cr->n);
    planctl_close(p);
    return NULL;
}

/* The instances of the fleet's round: one at a time on p, or from
 * o->creators threads at once (as a peer starts its workflows at once). */
static void create_fleet(const fleet_opts *o, planctl *p, const char *uri)
{
    creator cr[64];
    int i, n = o->creators;

    if (n <= 1) {
        create_instances(p, "seq", "f", o->instances);
        return;
    }
    for (i = 0; i < n; i++) {
        cr[i].uri = uri;
        cr[i].first = i;
        cr[i].step = n;
        cr[i].n = o->instances;
        if (pthread_create(&cr[i].t, NULL, creator_main, &cr[i]) != 0)
            bench_die("pg: cannot start a creator thread");
    }
    for (i = 0; i < n; i++)
        pthread_join(cr[i].t, NULL);
}

/* Runs `engines` engines reaching the server with round trip k on a new
 * schema of o->instances instances; *f what they did. */
static void fleet_one(const fleet_opts *o, PGconn *c, int engines, int k,
                      int round, fleet_fig *f)
{
    char schema[64], sql[256], name[32], logs[4][300];
    char *direct, *uri;
    pid_t pids[4];
    sampler smp;
    planctl *p;
    double cpu = 0, secs;
    int64_t t0, steps, calls = 0;
    int i;

    memset(f, 0, sizeof *f);
    snprintf(schema, sizeof schema, "bench_fl%de%dus_r%d_%d", engines,
             (int)(o->rtt_ms[k] * 1000 + 0.5), round, (int)getpid());
    direct = schema_uri(o->base, schema);
    uri = schema_uri(o->via[k], schema);
    /* Made directly, whatever the round trip: the creation is measured
     * for its statements, not its time. */
    p = bench_open(direct, PLANCTL_DURABILITY_FULL);
    bench_apply(p, seq_definition());
    if (o->pgss)
        pg_exec(c, "SELECT pg_stat_statements_reset()");
    t0 = bench_ns();
    create_fleet(o, p, direct);
    f->create_s = (double)o->instances / ((double)(bench_ns() - t0) / 1e9);
    if (o->pgss)
        f->per_create = (double)pgss_calls(c) / o->instances;
    planctl_close(p);

    if (o->pgss)
        pg_exec(c, "SELECT pg_stat_statements_reset()");
    sampler_start(&smp, o->base, o->via[k], o->sample_us);
    t0 = bench_ns();
    for (i = 0; i < engines; i++) {
        snprintf(name, sizeof name, "bench-%d", i);
        snprintf(logs[i], sizeof logs[i], "%s/engine-%d.log", o->logdir, i);
        pids[i] = spawn_fleet_engine(o, uri, name, logs[i]);
    }
    for (i = 0; i < engines; i++) {
        struct rusage ru;
        int status;

        if (wait4(pids[i], &status, 0, &ru) < 0)
            bench_die("pg: wait4: %s", strerror(errno));
        cpu += (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            f->failed++;
            printf("  round %d, %d engine%s, %g ms: engine %d %s %d\n", round,
                   engines, engines == 1 ? "" : "s", o->rtt_ms[k], i,
                   WIFEXITED(status) ? "exited" : "killed by signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            print_tail(logs[i]);
        }
    }
    secs = (double)(bench_ns() - t0) / 1e9;
    sampler_stop(&smp);
    if (o->pgss)
        calls = pgss_calls(c);
    steps = pg_steps_complete(c, schema);
    f->done = steps == (int64_t)o->instances * SEQ_STEPS;
    f->steps_s = (double)steps / secs;
    f->cpu_us = steps ? cpu * 1e6 / (double)steps : 0;
    f->per_step = steps ? (double)calls / (double)steps : 0;
    f->samples = smp.backends;
    f->lock =
        smp.backends ? 100.0 * (double)smp.lock / (double)smp.backends : 0;
    f->advisory =
        smp.backends ? 100.0 * (double)smp.advisory / (double)smp.backends : 0;
    printf("round %d: %d engine%s, %g ms: %lld steps in %.2f s: %.0f "
           "steps/s%s; engines' CPU %.1f us/step",
           round, engines, engines == 1 ? "" : "s", o->rtt_ms[k],
           (long long)steps, secs, f->steps_s,
           f->done ? "" : " (NOT ALL COMPLETE: round left out)", f->cpu_us);
    if (o->pgss)
        printf("; %.2f statements/step, %.2f/instance created", f->per_step,
               f->per_create);
    f->rtt_p50_us = bench_quantile(smp.rtt_us, smp.nrtt, 0.5);
    f->rtt_p90_us = bench_quantile(smp.rtt_us, smp.nrtt, 0.9);
    free(smp.rtt_us);
    printf("; %.0f instances/s created; lock waits %.1f%% of %lld "
           "engine-session samples (advisory %.1f%%); round trip p50 %.2f "
           "ms, p90 %.2f ms\n",
           f->create_s, f->lock, (long long)smp.backends, f->advisory,
           f->rtt_p50_us / 1e3, f->rtt_p90_us / 1e3);
    for (i = 0; i < engines; i++)
        unlink(logs[i]);
    snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE", schema);
    pg_exec(c, sql);
    free(direct);
    free(uri);
}

/* The median of what field picks of the completed rounds of figs; 0 and
 * *n = 0 when none completed. */
static double fig_median(const fleet_fig *figs, int rounds, size_t off, int *n)
{
    double v[64];
    int i;

    *n = 0;
    for (i = 0; i < rounds && *n < 64; i++)
        if (figs[i].done)
            memcpy(&v[(*n)++], (const char *)&figs[i] + off, sizeof(double));
    return bench_quantile(v, (size_t)*n, 0.5);
}

/* The median, lowest and highest of the per-round ratios of a to b. */
static void ratio_spread(const fleet_fig *a, const fleet_fig *b, int rounds,
                         double *med, double *lo, double *hi)
{
    double v[64];
    size_t n = 0;
    int i;

    for (i = 0; i < rounds && n < 64; i++)
        if (a[i].done && b[i].done && b[i].steps_s > 0)
            v[n++] = a[i].steps_s / b[i].steps_s;
    *med = bench_quantile(v, n, 0.5);
    *lo = n ? v[0] : 0;
    *hi = n ? v[n - 1] : 0;
}

static void rtt_label(char *buf, size_t n, double ms)
{
    snprintf(buf, n, "%gms", ms);
    for (; *buf; buf++)
        if (*buf == '.')
            *buf = '_';
}

/* bench_summary, or when no completed round gave the figure (n == 0) or
 * its baseline (nb == 0): "none" in their place, and ok=no when there is
 * a target. */
static void fleet_summary(const char *name, double value, int n,
                          double baseline, int nb, const char *unit, char cmp,
                          double limit)
{
    char v[32] = "none", bl[32] = "none";

    if (n > 0 && nb > 0 && baseline > 0) {
        bench_summary(name, value, baseline, unit, cmp, limit);
        return;
    }
    if (n > 0)
        snprintf(v, sizeof v, "%.6g", value);
    if (nb > 0)
        snprintf(bl, sizeof bl, "%.6g", baseline);
    printf("name=%s value=%s baseline=%s ratio=none unit=%s target=", name, v,
           bl, unit);
    if (cmp)
        printf("%s%g ok=no\n", cmp == '<' ? "<=" : ">=", limit);
    else
        printf("none ok=yes\n");
    fflush(stdout);
}

static void fleet_report(const fleet_opts *o, fleet_fig *figs)
{
    /* figs[(k * ENGINE_COUNTS + e) * rounds + r] */
#define FIG(k, e)                                                              \
    (figs + ((size_t)(k)*ENGINE_COUNTS + (size_t)(e)) * (size_t)o->rounds)
#define MEDIAN(f, field, n)                                                    \
    fig_median((f), o->rounds, offsetof(fleet_fig, field), (n))
    const fleet_fig *base = FIG(0, 0);
    int n, k, e, nb;
    double b = MEDIAN(base, steps_s, &nb);

    printf("fleet, medians of %d round%s (engine-session lock waits: share "
           "of pg_stat_activity samples every %d us):\n",
           o->rounds, o->rounds == 1 ? "" : "s", o->sample_us);
    for (k = 0; k < o->nrtt; k++)
        for (e = 0; e < ENGINE_COUNTS; e++) {
            const fleet_fig *f = FIG(k, e);
            int ns;
            double s = MEDIAN(f, steps_s, &ns), med, lo, hi;
            char name[64], rl[16];

            int stopped = 0, r;

            for (r = 0; r < o->rounds; r++)
                stopped += f[r].failed;
            ratio_spread(f, base, o->rounds, &med, &lo, &hi);
            printf("  %d engine%s, %g ms: %.0f steps/s (%d of %d rounds "
                   "complete, %d engine%s stopped), %.2f x 1 engine at 0 ms "
                   "(rounds %.2f-%.2f), "
                   "CPU %.1f us/step, %.2f statements/step, lock waits "
                   "%.1f%% (advisory %.1f%%), round trip p50 %.2f ms\n",
                   engine_counts[e], engine_counts[e] == 1 ? "" : "s",
                   o->rtt_ms[k], s, ns, o->rounds, stopped,
                   stopped == 1 ? "" : "s", med, lo, hi, MEDIAN(f, cpu_us, &n),
                   MEDIAN(f, per_step, &n), MEDIAN(f, lock, &n),
                   MEDIAN(f, advisory, &n), MEDIAN(f, rtt_p50_us, &n) / 1e3);
            rtt_label(rl, sizeof rl, o->rtt_ms[k]);
            snprintf(name, sizeof name, "pg_fleet_%de_%s", engine_counts[e],
                     rl);
            if (k == 0 && e == 1)
                fleet_summary(name, s, ns, b, nb, "steps/s", '>', 1.7);
            else if (o->rtt_ms[k] == 1.0 && e == 0)
                fleet_summary(name, s, ns, b, nb, "steps/s", '>', 0.5);
            else
                fleet_summary(name, s, ns, b, nb, "steps/s", 0, 0);
        }
    for (k = 1; k < o->nrtt; k++)
        if (o->rtt_ms[k] == 1.0) {
            int n1, n4;
            double one = MEDIAN(FIG(k, 0), steps_s, &n1);
            double four = MEDIAN(FIG(k, 2), steps_s, &n4);

            fleet_summary("pg_fleet_4e_vs_1e_1ms", four, n4, one, n1, "steps/s",
                          '>', 3.0);
        }
    if (o->pgss) {
        double v[512], per_step = MEDIAN(base, per_step, &n);
        size_t nv = 0;
        int i;

        fleet_summary("pg_statements_per_step", per_step, n, 1.0, 1,
                      "statements", '<', 1.0);
        /* Every creation of every configuration does the same work. */
        for (i = 0; i < o->nrtt * ENGINE_COUNTS * o->rounds && nv < 512; i++)
            v[nv++] = figs[i].per_create;
        fleet_summary("pg_statements_per_create", bench_quantile(v, nv, 0.5),
                      (int)nv, 4.0, 1, "statements", '<', 1.0);
    } else {
        printf("statements not counted: pg_stat_statements is not loaded "
               "(shared_preload_libraries; tools/bench/run loads it)\n");
    }
    {
        double lock = MEDIAN(FIG(0, 2), lock, &n);

        fleet_summary("pg_lock_wait_share_4e", lock, n, 10.0, 1, "%_of_samples",
                      '<', 1.0);
    }
#undef MEDIAN
#undef FIG
}

/* The fleet figures: every round runs each configuration (engines 1, 2, 4
 * x each round trip) once, starting one further along the list than the
 * round before. */
static void fleet(fleet_opts *o)
{
    PGconn *c = pg_observer(o->base);
    const char *host = PQhost(c), *user = PQuser(c), *db = PQdb(c);
    char to[512], via[512];
    int nconf = o->nrtt * ENGINE_COUNTS, r, j, k;
    pid_t fwd[8] = {0};
    fleet_fig *figs = calloc((size_t)nconf * (size_t)o->rounds, sizeof *figs);
    const char *tmp = getenv("TMPDIR");

    if (!figs)
        bench_die("out of memory");
    if (host && host[0] == '/')
        snprintf(to, sizeof to, "%s/.s.PGSQL.%s", host, PQport(c));
    else
        snprintf(to, sizeof to, "%s:%s", host && *host ? host : "localhost",
                 PQport(c));
    if (strspn(user, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(user) ||
        strspn(db, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(db))
        bench_die("pg: --fleet needs a user and database named in lower-case "
                  "letters, digits and _ (for the forwarder's URI)");
    snprintf(o->logdir, sizeof o->logdir, "%s/planctl-bench-fleet.XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(o->logdir))
        bench_die("pg: cannot make %s: %s", o->logdir, strerror(errno));
    o->pgss = pgss_ready(c);
    printf("server: %s, %s, pg_stat_statements %s; %d instances of %d "
           "sequential Dummy steps; lease TTL %s\n",
           PQparameterStatus(c, "server_version"), pg_durability(c),
           o->pgss ? "loaded" : "NOT loaded", o->instances, SEQ_STEPS, o->ttl);
    for (k = 0; k < o->nrtt; k++) {
        int port;

        if (o->rtt_ms[k] == 0) {
            o->via[k] = strdup(o->base);
            continue;
        }
        fwd[k] = start_forwarder(to, (int64_t)(o->rtt_ms[k] * 1e6 / 2), &port);
        snprintf(via, sizeof via,
                 "postgresql://%s@127.0.0.1:%d/%s?sslmode=disable", user, port,
                 db);
        o->via[k] = strdup(via);
        printf("forwarder: 127.0.0.1:%d -> %s, %g ms each way\n", port, to,
               o->rtt_ms[k] / 2);
    }
    for (r = 0; r < o->rounds; r++)
        for (j = 0; j < nconf; j++) {
            int conf = (j + r) % nconf;

            k = conf / ENGINE_COUNTS;
            fleet_one(o, c, engine_counts[conf % ENGINE_COUNTS], k, r + 1,
                      &figs[(size_t)conf * (size_t)o->rounds + (size_t)r]);
        }
    fleet_report(o, figs);
    for (k = 0; k < o->nrtt; k++) {
        if (fwd[k] > 0) {
            kill(fwd[k], SIGTERM);
            waitpid(fwd[k], NULL, 0);
        }
        free(o->via[k]);
    }
    rmdir(o->logdir);
    free(figs);
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

/*
 * planctl-bench pg --uri URI [--instances N] [--seconds S]
 *                   [--planctl BIN --runs R --reps K]
 * planctl-bench pg --uri URI --fleet BIN [--instances N] [--rounds R]
 *                   [--rtt MS,...] [--lease-ttl D] [--concurrency N]
 *                   [--creators N] [--sample-ms MS] [--no-takeover]
 * URI names the database (planctl's schema parameter is added); the
 * query figures only with --planctl.  --fleet runs the fleet figures
 * instead, with the planctl binary BIN: N instances (default 200) a
 * configuration, R rounds (default 3), the round trips added through the
 * forwarder (default 0,1: none, and 1 ms), the engines' --lease-ttl
 * (default: planctl's; issue 34 asks for 3s too) and --concurrency
 * (default planctl's), how many threads create the instances, each with
 * its own handle (default 1: one after another), the lock sampler's
 * interval (default 5 ms); then the takeover times unless --no-takeover.
 */
int bench_pg_main(int argc, char **argv)
{
    const char *uri = bench_opt(argc, argv, "--uri", NULL);
    const char *bin = bench_opt(argc, argv, "--planctl", NULL);
    const char *fleet_bin = bench_opt(argc, argv, "--fleet", NULL);
    int instances =
        atoi(bench_opt(argc, argv, "--instances", fleet_bin ? "200" : "500"));
    double seconds = atof(bench_opt(argc, argv, "--seconds", "2"));
    int runs = atoi(bench_opt(argc, argv, "--runs", "20000"));
    int reps = atoi(bench_opt(argc, argv, "--reps", "20"));

    if (!uri)
        bench_die("usage: planctl-bench pg --uri URI [--instances N] "
                  "[--seconds S] [--planctl BIN --runs R --reps K] "
                  "[--fleet BIN [--rounds R] [--rtt MS,...] [--lease-ttl D] "
                  "[--concurrency N] [--creators N] [--sample-ms MS] "
                  "[--no-takeover]]");
    if (fleet_bin) {
        /* --fleet BIN: only the engines sharing a schema (issues 18, 34). */
        fleet_opts o;
        char *list = strdup(bench_opt(argc, argv, "--rtt", "0,1")), *tok,
             *save = NULL;

        memset(&o, 0, sizeof o);
        o.base = uri;
        o.bin = fleet_bin;
        o.instances = instances;
        o.rounds = atoi(bench_opt(argc, argv, "--rounds", "3"));
        o.ttl = bench_opt(argc, argv, "--lease-ttl", "default");
        o.concurrency = bench_opt(argc, argv, "--concurrency", NULL);
        o.creators = atoi(bench_opt(argc, argv, "--creators", "1"));
        o.sample_us =
            (int)(atof(bench_opt(argc, argv, "--sample-ms", "5")) * 1000);
        for (tok = strtok_r(list, ",", &save); tok && o.nrtt < 8;
             tok = strtok_r(NULL, ",", &save))
            o.rtt_ms[o.nrtt++] = atof(tok);
        free(list);
        if (o.instances < 1 || o.rounds < 1 || o.rounds > 64 ||
            o.creators < 1 || o.creators > 64 || o.sample_us < 100 ||
            o.nrtt < 1 || o.rtt_ms[0] != 0)
            bench_die("pg --fleet: --instances and --rounds (at most 64) "
                      "must be at least 1, --creators 1 to 64, "
                      "--sample-ms at least 0.1, and "
                      "--rtt a list of round trips in ms starting with 0 "
                      "(the baseline: no forwarder)");
        fleet(&o);
        if (!bench_flag(argc, argv, "--no-takeover"))
            printf("takeover: killed (SIGKILL, same host): %.0f ms; stopped "
                   "(SIGSTOP, TTL 3 s): %.0f ms\n",
                   takeover_ms(uri, fleet_bin, SIGKILL),
                   takeover_ms(uri, fleet_bin, SIGSTOP));
        return 0;
    }
    throughput(uri, instances, seconds);
    if (bin)
        query(uri, bin, runs, reps);
    return 0;
}
