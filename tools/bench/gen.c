/*
 * gen.c - a database with a long history, made quickly but through the
 * real schema: the migrations, their triggers, indexes and constraints.
 *
 * The focus instance's first run and its last `tail` runs are real: they
 * are admitted through the API and run by the engine.  In between, every
 * instance gets its history in waves, one run per instance per wave, each
 * wave a handful of set-based statements: its runs go PENDING, IN_PROGRESS
 * and COMPLETE through the transition guards (one active run per instance
 * holds at every moment), and its phases, steps, attempts and events are
 * inserted with them, ten events per run on average (half the runs had a
 * step retried once).  A small database is the same focus instance with
 * the same real runs and no bulk history, so that `status` and `history`
 * print the same amount on both.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "bench.h"

#define DEF                                                                    \
    "{\"name\":\"svc\",\"version\":\"1\",\"parameters\":[{\"name\":"           \
    "\"NODE_COUNT\",\"default\":\"3\"}],\"tasks\":[{\"name\":\"work\","        \
    "\"kind\":\"Dummy\"}],\"plans\":{"                                         \
    "\"deploy\":{\"phases\":[{\"name\":\"main\",\"steps\":[{\"name\":"         \
    "\"work\",\"tasks\":[\"work\"]}]}]},"                                      \
    "\"update\":{\"phases\":[{\"name\":\"main\",\"steps\":[{\"name\":"         \
    "\"work\",\"tasks\":[\"work\"]}]}]},"                                      \
    "\"backup\":{\"phases\":[{\"name\":\"main\",\"steps\":[{\"name\":"         \
    "\"work\",\"tasks\":[\"work\"]}]}]}}}"

static void on_stopped(planctl_engine *e, void *data)
{
    (void)e;
    *(int *)data = 1;
}

/* Runs the engine on p until nothing is left to do. */
static void run_until_idle(planctl *p)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_engine *e;
    uv_loop_t loop;
    int stopped = 0;

    o.until_idle = 1;
    if (uv_loop_init(&loop) != 0 || planctl_engine_new(&e, p, &loop, &o) < 0 ||
        planctl_engine_start(e, on_stopped, &stopped) < 0)
        bench_die("gen: engine: %s", planctl_errmsg(p));
    uv_run(&loop, UV_RUN_DEFAULT);
    if (!stopped || planctl_engine_status(e) != 0)
        bench_die("gen: engine: %s", planctl_errmsg(p));
    planctl_engine_free(e);
    if (uv_loop_close(&loop) != 0)
        bench_die("gen: handles left open");
}

/* Queues n runs of the focus instance (update and backup in turn) and
 * runs them. */
static void tail(planctl *p, const char *focus, int n)
{
    planctl_trigger_options to = PLANCTL_TRIGGER_OPTIONS_INIT;
    int64_t run;
    int i;

    to.queue = 1;
    for (i = 0; i < n; i++)
        if (planctl_plan_trigger(&run, p, focus, i % 2 ? "backup" : "update",
                                 &to) < 0)
            bench_die("gen: trigger: %s", planctl_errmsg(p));
    run_until_idle(p);
}

static void exec_fmt(sqlite3 *db, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void exec_fmt(sqlite3 *db, const char *fmt, ...)
{
    char *sql;
    va_list ap;

    va_start(ap, fmt);
    sql = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    if (!sql)
        bench_die("out of memory");
    bench_exec(db, sql);
    sqlite3_free(sql);
}

/*
 * One wave: a run for every instance, from PENDING to COMPLETE, with its
 * phase, step, attempts and events.  Runs of even id had their step fail
 * once and retried (11 events), the others not (9 events).
 */
static void wave(sqlite3 *db, int64_t w, int64_t t0, int counted)
{
    static const char *const plans[] = {"deploy", "update", "backup"};
    int64_t first, last, t = t0 + w * 60000;

    first = bench_scalar(db, "SELECT coalesce(max(id), 0) FROM runs") + 1;
    exec_fmt(db,
             "INSERT INTO runs (uid, instance_id, definition_id, plan, status, "
             "trigger, reason, params, created_at) "
             "SELECT lower(hex(randomblob(16))), i.id, i.definition_id, '%s', "
             "'PENDING', 'manual', NULL, '{\"NODE_COUNT\":\"3\"}', %lld + i.id "
             "FROM instances AS i ORDER BY i.id",
             plans[w % 3], (long long)t);
    last = bench_scalar(db, "SELECT max(id) FROM runs");
    exec_fmt(db,
             "INSERT INTO phases (run_id, idx, name, strategy, status, "
             "started_at, finished_at) SELECT id, 0, 'main', 'serial', "
             "'COMPLETE', created_at + 10, created_at + 900 FROM runs "
             "WHERE id BETWEEN %lld AND %lld",
             (long long)first, (long long)last);
    exec_fmt(db,
             "INSERT INTO steps (run_id, phase_id, idx, name, status, attempt, "
             "max_attempts, started_at, finished_at) SELECT r.id, ph.id, 0, "
             "'work', 'COMPLETE', 1 + (r.id %% 2 = 0), 3, r.created_at + 10, "
             "r.created_at + 900 FROM runs AS r JOIN phases AS ph "
             "ON ph.run_id = r.id WHERE r.id BETWEEN %lld AND %lld",
             (long long)first, (long long)last);
    exec_fmt(
        db,
        "INSERT INTO attempts (step_id, number, status, started_at, "
        "finished_at, message) SELECT s.id, k.n, CASE WHEN k.n < s.attempt "
        "THEN 'ERROR' ELSE 'COMPLETE' END, s.started_at + 400 * (k.n - 1), "
        "s.started_at + 300 + 400 * (k.n - 1), CASE WHEN k.n < s.attempt "
        "THEN 'exit status 1: connection refused' END FROM steps AS s, "
        "(SELECT 1 AS n UNION ALL SELECT 2) AS k WHERE s.run_id BETWEEN "
        "%lld AND %lld AND k.n <= s.attempt ORDER BY s.id, k.n",
        (long long)first, (long long)last);
    /* The events, in the order the engine writes them. */
    exec_fmt(
        db,
        "WITH k(n, dt, entity, f, t, attempt, message, actor, retry) AS ("
        "VALUES (0, 0, 'run', NULL, 'PENDING', NULL, NULL, 'user', 0),"
        "(1, 0, 'phase', NULL, 'PENDING', NULL, NULL, 'planctl', 0),"
        "(2, 0, 'step', NULL, 'PENDING', NULL, NULL, 'planctl', 0),"
        "(3, 10, 'run', 'PENDING', 'IN_PROGRESS', NULL, NULL, 'engine', 0),"
        "(4, 10, 'phase', 'PENDING', 'IN_PROGRESS', NULL, NULL, 'engine', 0),"
        "(5, 10, 'step', 'PENDING', 'IN_PROGRESS', 1, NULL, 'engine', 0),"
        "(7, 310, 'step', 'IN_PROGRESS', 'ERROR', 1, "
        "'exit status 1: connection refused', 'engine', 1),"
        "(8, 410, 'step', 'ERROR', 'IN_PROGRESS', 2, NULL, 'engine', 1),"
        "(9, 900, 'step', 'IN_PROGRESS', 'COMPLETE', 0, NULL, 'engine', 0),"
        "(10, 900, 'phase', 'IN_PROGRESS', 'COMPLETE', NULL, NULL, "
        "'engine', 0),"
        "(11, 900, 'run', 'IN_PROGRESS', 'COMPLETE', NULL, NULL, "
        "'engine', 0)) "
        "INSERT INTO events (at, instance_id, run_id, phase_id, step_id, "
        "entity, from_status, to_status, attempt, message, actor, data) "
        "SELECT r.created_at + k.dt, r.instance_id, r.id, "
        "CASE WHEN k.entity <> 'run' THEN ph.id END, "
        "CASE WHEN k.entity = 'step' THEN s.id END, k.entity, k.f, k.t, "
        "CASE k.attempt WHEN 0 THEN s.attempt ELSE k.attempt END, "
        "k.message, k.actor, CASE k.n "
        "WHEN 0 THEN json_object('uid', r.uid, 'definition', "
        "json_object('name', 'svc', 'version', '1'), 'plan', r.plan, "
        "'trigger', r.trigger, 'params', json(r.params)) "
        "WHEN 1 THEN json_object('name', 'main', 'index', 0, 'strategy', "
        "'serial') WHEN 2 THEN json_object('name', 'work', 'index', 0, "
        "'max_attempts', 3) WHEN 7 THEN json_object('next_attempt_at', "
        "r.created_at + 410, 'exit_code', 1) END "
        "FROM runs AS r JOIN phases AS ph ON ph.run_id = r.id "
        "JOIN steps AS s ON s.phase_id = ph.id, k "
        "WHERE r.id BETWEEN %lld AND %lld "
        "AND (k.retry = 0 OR r.id %% 2 = 0) ORDER BY r.id, k.n",
        (long long)first, (long long)last);
    /* The runs' own path, through the guards: PENDING -> IN_PROGRESS ->
     * COMPLETE.  The last step's attempt is the step's attempt count. */
    exec_fmt(db,
             "UPDATE runs SET status = 'IN_PROGRESS', started_at = created_at "
             "+ 10 WHERE id BETWEEN %lld AND %lld",
             (long long)first, (long long)last);
    exec_fmt(db,
             "UPDATE runs SET status = 'COMPLETE', finished_at = created_at + "
             "900%s WHERE id BETWEEN %lld AND %lld",
             counted ? ", event_count = 9 + 2 * (id % 2 = 0)" : "",
             (long long)first, (long long)last);
}

/* planctl-bench gen --db PATH [--runs N] [--instances K] [--tail T]
 *                   [--focus NAME] */
int bench_gen_main(int argc, char **argv)
{
    const char *path = bench_opt(argc, argv, "--db", NULL);
    const char *focus = bench_opt(argc, argv, "--focus", "zk");
    int64_t runs = atoll(bench_opt(argc, argv, "--runs", "0"));
    int instances = atoi(bench_opt(argc, argv, "--instances", "1000"));
    int ntail = atoi(bench_opt(argc, argv, "--tail", "60"));
    int64_t run, waves, w, t_start, t0;
    int counted;
    planctl *p;
    sqlite3 *db;

    if (!path)
        bench_die("gen: --db is required");
    t_start = bench_ns();
    p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
    db = bench_db(p);
    bench_apply(p, DEF);
    if (planctl_instance_create(&run, p, focus, "svc", NULL, NULL, 0) < 0)
        bench_die("gen: create: %s", planctl_errmsg(p));
    run_until_idle(p);
    bench_profile_start(db);
    if (runs > 0) {
        /* No journal while generating: a crash here only loses a
         * benchmark's scratch file, and every page is written once. */
        bench_exec(db, "PRAGMA journal_mode = OFF");
        bench_exec(db, "PRAGMA synchronous = OFF");
        /* The rows refer to each other by construction; the triggers,
         * CHECKs and unique indexes still apply. */
        bench_exec(db, "PRAGMA foreign_keys = OFF");
        bench_exec(db, "PRAGMA cache_size = -262144");
        counted = bench_scalar(db, "SELECT count(*) FROM pragma_table_info("
                                   "'runs') WHERE name = 'event_count'") > 0;
        bench_exec(db, "BEGIN IMMEDIATE");
        exec_fmt(db,
                 "WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 "
                 "FROM k WHERE n < %d) INSERT INTO instances (name, "
                 "definition_id, params, last_applied, created_at, "
                 "updated_at) SELECT printf('svc-%%05d', n), definition_id, "
                 "params, last_applied, created_at, updated_at FROM k, "
                 "instances WHERE name = '%s'",
                 instances - 1, focus);
        bench_exec(db, "COMMIT");
        waves = (runs + instances - 1) / instances;
        t0 = bench_scalar(db, "SELECT max(created_at) FROM runs") -
             waves * 60000 - 3600000;
        for (w = 0; w < waves; w++) {
            if (w % 10 == 0)
                bench_exec(db, "BEGIN IMMEDIATE");
            wave(db, w, t0, counted);
            if (w % 10 == 9 || w == waves - 1)
                bench_exec(db, "COMMIT");
        }
        bench_exec(db, "PRAGMA foreign_keys = ON");
        bench_exec(db, "PRAGMA synchronous = NORMAL");
        bench_exec(db, "PRAGMA journal_mode = WAL");
    }
    bench_profile_report(db);
    tail(p, focus, ntail - 1);
    bench_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    bench_detail("gen", "%s: %lld runs, %lld events, %lld instances in %.1fs",
                 path, (long long)bench_scalar(db, "SELECT count(*) FROM runs"),
                 (long long)bench_scalar(db, "SELECT count(*) FROM events"),
                 (long long)bench_scalar(db, "SELECT count(*) FROM instances"),
                 (double)(bench_ns() - t_start) / 1e9);
    planctl_close(p);
    return 0;
}
