/*
 * throughput.c - durable step completions per second through the real
 * engine, against the raw-SQLite baseline measured in the same run, on
 * the same file system, at the same durability (DESIGN §11).
 *
 * Many instances each run one plan of Dummy steps: a serial phase, a
 * parallel one, a serial one.  The engine runs in-process on its own loop
 * until idle.  Figures: step completions, transitions (status events) and
 * commits per second, from the engine's start to the last completion
 * being durable; the latency from a step becoming runnable (its
 * predecessor's completion, or the engine's start for a first step) to its
 * own completion being durable, from the commit tracker; peak RSS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "bench.h"

#define SERIAL_A 4
#define PARALLEL 8
#define SERIAL_B 4

static void add_steps(char *buf, size_t size, const char *phase,
                      const char *strategy, int n, int last)
{
    size_t len = strlen(buf);
    int i;

    len += (size_t)snprintf(buf + len, size - len,
                            "{\"name\":\"%s\",\"strategy\":\"%s\",\"steps\":[",
                            phase, strategy);
    for (i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, size - len,
                                "%s{\"name\":\"%s-%d\",\"tasks\":[\"noop\"]}",
                                i ? "," : "", phase, i);
    snprintf(buf + len, size - len, "]}%s", last ? "" : ",");
}

char *bench_tp_definition(void)
{
    static char buf[8192];

    snprintf(buf, sizeof buf,
             "{\"name\":\"bench\",\"version\":\"1\",\"tasks\":[{\"name\":"
             "\"noop\",\"kind\":\"Dummy\"}],\"plans\":{\"deploy\":{"
             "\"strategy\":\"serial\",\"phases\":[");
    add_steps(buf, sizeof buf, "prepare", "serial", SERIAL_A, 0);
    add_steps(buf, sizeof buf, "nodes", "parallel", PARALLEL, 0);
    add_steps(buf, sizeof buf, "finish", "serial", SERIAL_B, 1);
    strncat(buf, "]}}}", sizeof buf - strlen(buf) - 1);
    return buf;
}

static void unlink_db(const char *path)
{
    char side[4200];

    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-engine", path);
    unlink(side);
}

/* Makes the database in a child process, so the measured process holds
 * nothing of the setup. */
static void setup(const char *path, int instances)
{
    pid_t pid;
    int st;

    unlink_db(path);
    pid = fork();
    if (pid < 0)
        bench_die("fork failed");
    if (pid == 0) {
        planctl *p = bench_open(path, PLANCTL_DURABILITY_NORMAL);

        bench_apply(p, bench_tp_definition());
        fx_clone_runs(p, "bench", "tp", instances);
        planctl_close(p);
        _exit(0);
    }
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bench_die("throughput: setup failed");
}

typedef struct figures {
    double seconds, steps_per_s, transitions_per_s, commits_per_s;
    double p50_ms, p99_ms, rss_mb;
    double run_p50_ms, run_p99_ms; /* IN_PROGRESS durable to COMPLETE */
    double per_commit;             /* completions per commit with any */
    int64_t per_commit_max;
    int64_t steps, transitions, commits;
} figures;

static void on_stopped(planctl_engine *e, void *data)
{
    (void)e;
    *(int *)data = 1;
}

/* Latencies from runnable to durably complete, in ms, into *out. */
static size_t latencies(double **out, sqlite3 *db, const bench_tracker *t,
                        int64_t seq0, int64_t t0)
{
    sqlite3_stmt *st;
    size_t n = 0, cap = 0;
    double *v = NULL;
    int64_t run = -1, pidx = -1, prev_step = 0, prev_phase_max = 0,
            phase_max = 0;
    char sql[512];

    /* Every step completion, in (run, phase, step) order. */
    snprintf(sql, sizeof sql,
             "SELECT s.run_id, ph.idx, s.idx, ph.strategy, e.seq "
             "FROM events AS e JOIN steps AS s ON s.id = e.step_id "
             "JOIN phases AS ph ON ph.id = s.phase_id "
             "WHERE e.seq > %lld AND e.entity = 'step' "
             "AND e.to_status = 'COMPLETE' ORDER BY s.run_id, ph.idx, s.idx",
             (long long)seq0);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        bench_die("%s", sqlite3_errmsg(db));
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t r = sqlite3_column_int64(st, 0),
                pi = sqlite3_column_int64(st, 1);
        int64_t si = sqlite3_column_int64(st, 2);
        int serial =
            strcmp((const char *)sqlite3_column_text(st, 3), "serial") == 0;
        int64_t done = bench_tracker_time(t, sqlite3_column_int64(st, 4));
        int64_t ready;

        if (r != run) {
            run = r;
            pidx = -1;
            phase_max = 0;
        }
        if (pi != pidx) {
            prev_phase_max = pidx < 0 ? t0 : phase_max;
            pidx = pi;
            phase_max = 0;
        }
        ready = serial && si > 0 ? prev_step : prev_phase_max;
        if (done == 0)
            bench_die("throughput: a completion was not seen committing");
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            v = realloc(v, cap * sizeof *v);
            if (!v)
                bench_die("out of memory");
        }
        v[n++] = (double)(done - ready) / 1e6;
        prev_step = done;
        if (done > phase_max)
            phase_max = done;
    }
    sqlite3_finalize(st);
    *out = v;
    return n;
}

/* From each step's IN_PROGRESS being durable to its COMPLETE being
 * durable, in ms, into *out: the engine's own turnaround for a started
 * step (its task, the pass that records the outcome, the commit). */
static size_t turnarounds(double **out, sqlite3 *db, const bench_tracker *t,
                          int64_t seq0)
{
    sqlite3_stmt *st;
    size_t n = 0, cap = 0;
    double *v = NULL;
    int64_t step = -1, started = 0;
    char sql[256];

    snprintf(sql, sizeof sql,
             "SELECT step_id, seq, to_status FROM events WHERE seq > %lld "
             "AND entity = 'step' AND to_status IN ('IN_PROGRESS', "
             "'COMPLETE') ORDER BY step_id, seq",
             (long long)seq0);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        bench_die("%s", sqlite3_errmsg(db));
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        int64_t at = bench_tracker_time(t, sqlite3_column_int64(st, 1));

        if (strcmp((const char *)sqlite3_column_text(st, 2), "IN_PROGRESS") ==
            0) {
            step = id;
            started = at;
            continue;
        }
        if (id != step || !started || !at)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            v = realloc(v, cap * sizeof *v);
            if (!v)
                bench_die("out of memory");
        }
        v[n++] = (double)(at - started) / 1e6;
    }
    sqlite3_finalize(st);
    *out = v;
    return n;
}

static figures engine_run(const char *path, planctl_durability dur,
                          int instances, int concurrency)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    figures f;
    planctl *p;
    planctl_engine *e;
    uv_loop_t loop;
    bench_tracker t;
    int64_t seq0, t0, last_done;
    int stopped = 0;
    double *lat;
    size_t nlat;

    memset(&f, 0, sizeof f);
    setup(path, instances);
    p = bench_open(path, dur);
    seq0 = fx_last_seq(fx_db(p));
    bench_tracker_start(&t, fx_db(p), seq0);
    bench_profile_start(fx_db(p));
    o.until_idle = 1;
    o.concurrency = concurrency;
    if (uv_loop_init(&loop) != 0 || planctl_engine_new(&e, p, &loop, &o) < 0)
        bench_die("throughput: cannot create the engine");
    t0 = bench_ns();
    if (planctl_engine_start(e, on_stopped, &stopped) < 0)
        bench_die("throughput: %s", planctl_errmsg(p));
    uv_run(&loop, UV_RUN_DEFAULT);
    if (!stopped || planctl_engine_status(e) != 0)
        bench_die("throughput: the engine failed: %s", planctl_errmsg(p));
    planctl_engine_free(e);
    bench_profile_report(fx_db(p));
    if (uv_loop_close(&loop) != 0)
        bench_die("throughput: handles left open");
    f.rss_mb = (double)bench_proc_kb("VmHWM") / 1024.0;

    if (fx_runs_not_in(fx_db(p), "COMPLETE") != 0)
        bench_die("throughput: not every run completed");
    f.steps = fx_steps_in(fx_db(p), "COMPLETE");
    if (f.steps != (int64_t)instances * (SERIAL_A + PARALLEL + SERIAL_B))
        bench_die("throughput: %lld steps completed, not %d",
                  (long long)f.steps,
                  instances * (SERIAL_A + PARALLEL + SERIAL_B));
    f.transitions = fx_transitions_since(fx_db(p), seq0);
    last_done =
        bench_tracker_time(&t, fx_last_step_completion_since(fx_db(p), seq0));
    f.commits = t.ncommits;
    {
        /* How many step completions each commit carried (the commits
         * that carried any). */
        char sql[256];
        sqlite3_stmt *st;
        int64_t prev = -1, with = 0, max = 0, cur = 0;

        snprintf(sql, sizeof sql,
                 "SELECT seq FROM events WHERE seq > %lld AND entity = "
                 "'step' AND to_status = 'COMPLETE' ORDER BY seq",
                 (long long)seq0);
        if (sqlite3_prepare_v2(fx_db(p), sql, -1, &st, NULL) != SQLITE_OK)
            bench_die("%s", sqlite3_errmsg(fx_db(p)));
        while (sqlite3_step(st) == SQLITE_ROW) {
            int64_t at = bench_tracker_time(&t, sqlite3_column_int64(st, 0));

            if (at != prev) {
                with++;
                cur = 0;
                prev = at;
            }
            if (++cur > max)
                max = cur;
        }
        sqlite3_finalize(st);
        f.per_commit = with ? (double)f.steps / (double)with : 0;
        f.per_commit_max = max;
    }
    f.seconds = (double)(last_done - t0) / 1e9;
    f.steps_per_s = (double)f.steps / f.seconds;
    f.transitions_per_s = (double)f.transitions / f.seconds;
    f.commits_per_s = (double)f.commits / f.seconds;
    nlat = latencies(&lat, fx_db(p), &t, seq0, t0);
    f.p50_ms = bench_quantile(lat, nlat, 0.50);
    f.p99_ms = bench_quantile(lat, nlat, 0.99);
    free(lat);
    nlat = turnarounds(&lat, fx_db(p), &t, seq0);
    f.run_p50_ms = bench_quantile(lat, nlat, 0.50);
    f.run_p99_ms = bench_quantile(lat, nlat, 0.99);
    free(lat);
    bench_tracker_stop(&t, fx_db(p));
    planctl_close(p);
    unlink_db(path);
    return f;
}

/* planctl-bench throughput --dir D [--instances N] [--concurrency C]
 *                          [--seconds S] [--only full|normal]
 *                          [--setup-only]
 * --seconds is the baseline's time on each side of the engine (0: no
 * baseline); --setup-only leaves the database made for the engine in D
 * and stops (for experiments). */
int bench_throughput_main(int argc, char **argv)
{
    const char *dir = bench_opt(argc, argv, "--dir", NULL);
    int instances = atoi(bench_opt(argc, argv, "--instances", "1000"));
    int concurrency = atoi(bench_opt(argc, argv, "--concurrency", "0"));
    double secs = atof(bench_opt(argc, argv, "--seconds", "3"));
    const char *only = bench_opt(argc, argv, "--only", "");
    char path[4096], bpath[4096];
    int k;

    if (!dir)
        bench_die("throughput: --dir is required");
    snprintf(path, sizeof path, "%s/throughput.db", dir);
    if (bench_flag(argc, argv, "--setup-only")) {
        /* Leaves the database of the benchmark behind, for experiments. */
        setup(path, instances);
        printf("%s\n", path);
        return 0;
    }
    snprintf(bpath, sizeof bpath, "%s/baseline.db", dir);
    for (k = 0; k < 2; k++) {
        planctl_durability dur =
            k == 0 ? PLANCTL_DURABILITY_FULL : PLANCTL_DURABILITY_NORMAL;
        const char *dn = k == 0 ? "FULL" : "NORMAL";
        double base, before, after;
        figures f;
        char name[64];

        if (*only && strcasecmp(only, dn) != 0)
            continue;
        /* The baseline runs just before and just after the engine, and
         * counts as their mean: a disk whose speed drifts (it is shared)
         * weighs on both sides alike. */
        before = secs > 0 ? bench_baseline_run(bpath, dur, 1, secs) : 0;
        f = engine_run(path, dur, instances, concurrency);
        after = secs > 0 ? bench_baseline_run(bpath, dur, 1, secs) : 0;
        base = (before + after) / 2;
        if (secs > 0)
            bench_detail(dn,
                         "baseline %.0f transitions/s before the engine, "
                         "%.0f after",
                         before, after);
        bench_detail(dn,
                     "baseline %.0f transitions/s; engine %lld steps in "
                     "%.3fs: %.0f steps/s, %.0f transitions/s, %.0f "
                     "commits/s; runnable to durably complete p50 %.2f ms, "
                     "p99 %.2f ms (started to complete p50 %.2f ms, p99 "
                     "%.2f ms); %.1f completions per commit (at most "
                     "%lld); peak RSS %.1f MB",
                     base, (long long)f.steps, f.seconds, f.steps_per_s,
                     f.transitions_per_s, f.commits_per_s, f.p50_ms, f.p99_ms,
                     f.run_p50_ms, f.run_p99_ms, f.per_commit,
                     (long long)f.per_commit_max, f.rss_mb);
        snprintf(name, sizeof name, "throughput_%s",
                 k == 0 ? "full" : "normal");
        /* The target of 1.5x at NORMAL is retired (issue 16): a step
         * costs more than that in the rows the schema's guarantees make
         * it write (RESULTS.md).  The ratio is still reported. */
        bench_summary(name, f.steps_per_s, base, "steps/s", k == 0 ? '>' : 0,
                      3.0);
    }
    return 0;
}
