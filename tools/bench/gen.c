/*
 * gen.c - a database with a long history, made quickly but through the
 * real schema: the migrations, their triggers, indexes and constraints.
 *
 * The focus instance's first run and its last `tail` runs are real: they
 * are admitted through the API and run by the engine.  In between, every
 * instance gets its history from the fixture (fx_fill_history,
 * tests/fixture/fill.h), ten events per run on average.  A small database
 * is the same focus instance with the same real runs and no bulk history,
 * so that `status` and `history` print the same amount on both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "bench.h"
#include "fill.h"

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

/* planctl-bench gen --db PATH [--runs N] [--instances K] [--tail T]
 *                   [--focus NAME] */
int bench_gen_main(int argc, char **argv)
{
    const char *path = bench_opt(argc, argv, "--db", NULL);
    const char *focus = bench_opt(argc, argv, "--focus", "zk");
    int64_t runs = atoll(bench_opt(argc, argv, "--runs", "0"));
    int instances = atoi(bench_opt(argc, argv, "--instances", "1000"));
    int ntail = atoi(bench_opt(argc, argv, "--tail", "60"));
    int64_t run, t_start;
    planctl *p;
    sqlite3 *db;

    if (!path)
        bench_die("gen: --db is required");
    t_start = bench_ns();
    p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
    db = fx_db(p);
    bench_apply(p, FX_SVC_DEF);
    if (planctl_instance_create(&run, p, focus, "svc", NULL, NULL, 0) < 0)
        bench_die("gen: create: %s", planctl_errmsg(p));
    run_until_idle(p);
    bench_profile_start(db);
    fx_fill_history(p, focus, instances, runs);
    bench_profile_report(db);
    tail(p, focus, ntail - 1);
    fx_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    bench_detail("gen", "%s: %lld runs, %lld events, %lld instances in %.1fs",
                 path, (long long)fx_scalar(db, "SELECT count(*) FROM runs"),
                 (long long)fx_scalar(db, "SELECT count(*) FROM events"),
                 (long long)fx_scalar(db, "SELECT count(*) FROM instances"),
                 (double)(bench_ns() - t_start) / 1e9);
    planctl_close(p);
    return 0;
}
