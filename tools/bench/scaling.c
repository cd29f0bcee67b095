/*
 * scaling.c - what one engine pass costs, and the engine's memory, as the
 * number of active runs grows (100, 1,000, 10,000) and as the history
 * grows (no terminal run against a million).
 *
 * N instances hold a run each whose step sleeps for an hour (all started:
 * the concurrency is N plus some), so N runs and N steps stay active.  One
 * more instance, created first, runs a plan of serial steps whose task
 * kind, Tick, is the benchmark's own executor: it notes the time it is
 * started and reports DONE at once.  Each tick is one pass (the previous
 * step's completion and the next one's start, committed together), so the
 * time between two ticks is the cost of a pass with N active runs beside
 * it, loop turn included.  Each measurement runs in a child process of
 * its own, set up by another, so its peak RSS is the engine's.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "bench.h"

#define HOLD_DEF                                                               \
    "{\"name\":\"hold\",\"version\":\"1\",\"tasks\":[{\"name\":\"hold\","      \
    "\"kind\":\"Dummy\",\"spec\":{\"sleep\":\"1h\"}}],\"plans\":{\"deploy\":{" \
    "\"phases\":[{\"name\":\"main\",\"steps\":[{\"name\":\"hold\",\"tasks\":[" \
    "\"hold\"]}]}]}}}"

typedef struct measure {
    double pass_us, pass_p90_us, rss_mb, hwm_mb, first_pass_ms, stop_ms;
} measure;

static char *tick_def(int ticks)
{
    size_t size = 256 + (size_t)ticks * 64, len;
    char *buf = malloc(size);
    int i;

    if (!buf)
        bench_die("out of memory");
    len = (size_t)snprintf(buf, size,
                           "{\"name\":\"tick\",\"version\":\"1\",\"tasks\":[{"
                           "\"name\":\"tick\",\"kind\":\"Tick\"}],\"plans\":{"
                           "\"deploy\":{\"phases\":[{\"name\":\"ticks\","
                           "\"steps\":[");
    for (i = 0; i < ticks; i++)
        len += (size_t)snprintf(buf + len, size - len,
                                "%s{\"name\":\"t%d\",\"tasks\":[\"tick\"]}",
                                i ? "," : "", i);
    snprintf(buf + len, size - len, "]}]}}}");
    return buf;
}

/* Adds the ticker and n holding runs to the database at path, with names
 * of their own for this round. */
static void setup(const char *path, int n, int ticks, int round)
{
    pid_t pid = fork();
    int st;

    if (pid < 0)
        bench_die("fork failed");
    if (pid == 0) {
        planctl *p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
        char *def = tick_def(ticks), name[64];
        int64_t run;

        if (planctl_kind_register(p, "Tick", NULL, NULL) < 0)
            bench_die("scaling: %s", planctl_errmsg(p));
        bench_apply(p, def);
        bench_apply(p, HOLD_DEF);
        snprintf(name, sizeof name, "ticker%d", round);
        if (planctl_instance_create(&run, p, name, "tick", NULL, NULL, 0) < 0)
            bench_die("scaling: %s", planctl_errmsg(p));
        snprintf(name, sizeof name, "hold%d", round);
        fx_clone_runs(p, "hold", name, n);
        fx_exec(fx_db(p), "PRAGMA wal_checkpoint(TRUNCATE)");
        planctl_close(p);
        free(def);
        _exit(0);
    }
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        bench_die("scaling: setup failed");
}

/* ---- the measuring child ---- */

typedef struct ticker {
    planctl_engine *e;
    int64_t *at;
    int n, want;
} ticker;

static ticker tk;

static int tick_start(planctl_job *job, const planctl_task_info *info,
                      void *data)
{
    (void)info;
    (void)data;
    if (tk.n < tk.want)
        tk.at[tk.n++] = bench_ns();
    planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL);
    if (tk.n == tk.want)
        planctl_engine_stop(tk.e, 0);
    return 0;
}

static void tick_cancel(planctl_job *job, void *data)
{
    (void)job;
    (void)data; /* it has reported already */
}

static void on_stopped(planctl_engine *e, void *data)
{
    (void)e;
    *(int64_t *)data = bench_ns();
}

static measure run_child(const char *path, int n, int ticks)
{
    static const planctl_executor tick = {PLANCTL_EXECUTOR_VERSION, tick_start,
                                          tick_cancel, NULL, NULL};
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    measure m;
    planctl *p;
    uv_loop_t loop;
    int64_t stopped = 0, stop_from;
    double *d;
    int i, k = 0, skip;

    memset(&m, 0, sizeof m);
    p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
    o.concurrency = n + 16;
    tk.want = ticks;
    tk.at = calloc((size_t)ticks, sizeof *tk.at);
    d = calloc((size_t)ticks, sizeof *d);
    if (!tk.at || !d || uv_loop_init(&loop) != 0 ||
        planctl_engine_new(&tk.e, p, &loop, &o) < 0 ||
        planctl_engine_register(tk.e, "Tick", &tick) < 0)
        bench_die("scaling: cannot create the engine");
    {
        int64_t t0 = bench_ns(), started = -1, now;
        int before;

        if (planctl_engine_start(tk.e, on_stopped, &stopped) < 0)
            bench_die("scaling: %s", planctl_errmsg(p));

        /* The first passes, bounded, one a turn of the loop, until the
         * holds are started: every pass starts the next tick too, so a
         * turn whose tick moved on had a pass, and one of those that
         * started no hold ends the count (holds beyond the descriptors'
         * budget, ulimit -n, wait for a slot).  The count of running
         * steps after each is the benchmark's own, a few ms in all. */
        for (;;) {
            before = tk.n;
            if (!uv_run(&loop, UV_RUN_ONCE))
                break;
            if (tk.n == before)
                continue;
            now = fx_steps_in(fx_db(p), "IN_PROGRESS");
            if (now == started)
                break;
            started = now;
        }
        m.first_pass_ms = (double)(bench_ns() - t0) / 1e6;
    }
    /* Until the last tick has started; then stop, which cancels the
     * holds. */
    while (tk.n < tk.want && uv_run(&loop, UV_RUN_ONCE))
        ;
    m.rss_mb = (double)bench_proc_kb("VmRSS") / 1024.0;
    m.hwm_mb = (double)bench_proc_kb("VmHWM") / 1024.0;
    stop_from = bench_ns();
    uv_run(&loop, UV_RUN_DEFAULT);
    m.stop_ms = (double)(stopped - stop_from) / 1e6;
    if (tk.n < tk.want || !stopped || planctl_engine_status(tk.e) != 0)
        bench_die("scaling: the engine stopped early: %s", planctl_errmsg(p));
    planctl_engine_free(tk.e);
    if (uv_loop_close(&loop) != 0)
        bench_die("scaling: handles left open");
    if (fx_steps_in(fx_db(p), "IN_PROGRESS") != 0)
        bench_die("scaling: steps left IN_PROGRESS after the stop");
    planctl_close(p);
    /* The first ticks share passes with the holds starting; skip a tenth. */
    skip = ticks / 10 + 1;
    for (i = skip; i < ticks; i++)
        d[k++] = (double)(tk.at[i] - tk.at[i - 1]) / 1e3;
    m.pass_us = bench_quantile(d, (size_t)k, 0.5);
    m.pass_p90_us = bench_quantile(d, (size_t)k, 0.9);
    free(d);
    free(tk.at);
    return m;
}

static measure measure_in_child(const char *path, int n, int ticks)
{
    int fd[2], st;
    measure m;
    pid_t pid;

    if (pipe(fd) != 0)
        bench_die("pipe failed");
    pid = fork();
    if (pid < 0)
        bench_die("fork failed");
    if (pid == 0) {
        close(fd[0]);
        m = run_child(path, n, ticks);
        if (write(fd[1], &m, sizeof m) != (ssize_t)sizeof m)
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    if (read(fd[0], &m, sizeof m) != (ssize_t)sizeof m)
        bench_die("scaling: the measuring child failed");
    close(fd[0]);
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        bench_die("scaling: the measuring child failed");
    return m;
}

static void remove_db(const char *path)
{
    char side[4200];
    static const char *const ext[] = {"", "-wal", "-shm", "-engine"};
    size_t i;

    for (i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        snprintf(side, sizeof side, "%s%s", path, ext[i]);
        unlink(side);
    }
}

/* Cancels what a round left active in a database kept for the next. */
static void cleanup(const char *path, int n, int round)
{
    pid_t pid = fork();
    int st, k;

    if (pid < 0)
        bench_die("fork failed");
    if (pid == 0) {
        planctl *p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
        char name[64];

        for (k = -1; k < n; k++) {
            if (k < 0)
                snprintf(name, sizeof name, "ticker%d", round);
            else
                snprintf(name, sizeof name, "hold%d-%d", round, k);
            if (planctl_run_cancel(NULL, p, name, "benchmark round over") < 0)
                bench_die("scaling: cancel %s: %s", name, planctl_errmsg(p));
        }
        planctl_close(p);
        _exit(0);
    }
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        bench_die("scaling: cleanup failed");
}

static measure one(const char *dir, const char *existing, int n, int ticks,
                   const char *label, int round)
{
    char path[4096];
    measure m;

    if (existing) {
        snprintf(path, sizeof path, "%s", existing);
    } else {
        snprintf(path, sizeof path, "%s/scaling-%d.db", dir, n);
        remove_db(path);
    }
    setup(path, n, ticks, round);
    m = measure_in_child(path, n, ticks);
    if (existing)
        cleanup(path, n, round);
    else
        remove_db(path);
    bench_detail(
        label,
        "pass %.0f us (p90 %.0f us), holds started in %.0f ms, RSS %.1f "
        "MB (peak %.1f MB), stop %.0f ms",
        m.pass_us, m.pass_p90_us, m.first_pass_ms, m.rss_mb, m.hwm_mb,
        m.stop_ms);
    return m;
}

/* planctl-bench scaling --dir D [--active 100,1000,10000] [--big DB]
 *                       [--history-active N] [--ticks T] [--rounds R] */
int bench_scaling_main(int argc, char **argv)
{
    const char *dir = bench_opt(argc, argv, "--dir", NULL);
    const char *list = bench_opt(argc, argv, "--active", "100,1000,10000");
    const char *big = bench_opt(argc, argv, "--big", NULL);
    int hn = atoi(bench_opt(argc, argv, "--history-active", "1000"));
    int ticks = atoi(bench_opt(argc, argv, "--ticks", "300"));
    int rounds = atoi(bench_opt(argc, argv, "--rounds", "3"));
    measure ms[8];
    int ns[8], count = 0, i;
    char label[64];
    const char *s;

    if (!dir)
        bench_die("scaling: --dir is required");
    for (s = list; *s && count < 8;
         s = strchr(s, ',') ? strchr(s, ',') + 1 : "")
        ns[count++] = atoi(s);
    for (i = 0; i < count; i++) {
        snprintf(label, sizeof label, "%d active runs", ns[i]);
        ms[i] = one(dir, NULL, ns[i], ticks, label, 0);
    }
    for (i = 1; i < count; i++) {
        char name[64];

        snprintf(name, sizeof name, "pass_cost_%d_vs_%d", ns[i], ns[i - 1]);
        /* Linear or better: the ratio of pass costs at most the ratio of
         * active runs. */
        bench_summary(name, ms[i].pass_us, ms[i - 1].pass_us, "us", '<',
                      (double)ns[i] / ns[i - 1]);
    }
    if (count > 0)
        bench_summary("rss_max_active", ms[count - 1].hwm_mb, 100.0, "MB", '<',
                      1.0);
    if (big) {
        double p0[16], p1[16], r0[16], r1[16];
        int k;

        /* In turn, a few rounds, the medians compared: one measurement
         * is one process on a shared machine. */
        if (rounds > 16)
            rounds = 16;
        for (k = 0; k < rounds; k++) {
            measure m0, m1;

            snprintf(label, sizeof label, "%d active runs, no history", hn);
            m0 = one(dir, NULL, hn, ticks, label, k);
            snprintf(label, sizeof label, "%d active runs, large history", hn);
            m1 = one(dir, big, hn, ticks, label, k);
            p0[k] = m0.pass_us;
            p1[k] = m1.pass_us;
            r0[k] = m0.hwm_mb;
            r1[k] = m1.hwm_mb;
        }
        bench_summary("pass_cost_history",
                      bench_quantile(p1, (size_t)rounds, 0.5),
                      bench_quantile(p0, (size_t)rounds, 0.5), "us", '<', 1.2);
        bench_summary("rss_history", bench_quantile(r1, (size_t)rounds, 0.5),
                      bench_quantile(r0, (size_t)rounds, 0.5), "MB", '<', 1.2);
    }
    return 0;
}
