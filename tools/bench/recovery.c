/*
 * recovery.c - restart after `kill -9` with many active runs: how long
 * from the new process opening the database until the first new step
 * starts (DESIGN §11: well under a second).
 *
 * N instances each have a run of two parallel steps that sleep for an
 * hour.  An engine (its own process, default concurrency) starts them,
 * and once its slots are full it is killed with SIGKILL.  A new process
 * then opens the database and starts an engine: it must take the lease
 * at once (the dead engine's OS lock is gone), read the N active runs,
 * mark the interrupted attempts ERROR and start the steps that were
 * waiting for a slot.  The Dummy executor is wrapped to note the time of
 * the first start.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "bench.h"
#include "engine/executors.h"

#define DEF                                                                    \
    "{\"name\":\"rec\",\"version\":\"1\",\"tasks\":[{\"name\":\"hold\","       \
    "\"kind\":\"Dummy\",\"spec\":{\"sleep\":\"1h\"}}],\"plans\":{\"deploy\":{" \
    "\"phases\":[{\"name\":\"main\",\"strategy\":\"parallel\",\"steps\":["     \
    "{\"name\":\"a\",\"tasks\":[\"hold\"]},"                                   \
    "{\"name\":\"b\",\"tasks\":[\"hold\"]}]}]}}}"

typedef struct times {
    double open_ms, start_ms, first_task_ms;
    int64_t interrupted;
} times;

/* ---- the restarted engine ---- */

static int64_t first_task;
static uv_loop_t *the_loop;

static int wrap_start(planctl_job *job, const planctl_task_info *info,
                      void *data)
{
    if (!first_task) {
        first_task = bench_ns();
        uv_stop(the_loop);
    }
    return pctl_executor_dummy()->start(job, info, data);
}

static void wrap_cancel(planctl_job *job, void *data)
{
    pctl_executor_dummy()->cancel(job, data);
}

static times restart(const char *path)
{
    static const planctl_executor wrap = {PLANCTL_EXECUTOR_VERSION, wrap_start,
                                          wrap_cancel, NULL, NULL};
    times t;
    planctl *p;
    planctl_engine *e;
    uv_loop_t loop;
    int64_t t0 = bench_ns(), t_open, t_start;

    memset(&t, 0, sizeof t);
    p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
    t_open = bench_ns();
    if (uv_loop_init(&loop) != 0 ||
        planctl_engine_new(&e, p, &loop, NULL) < 0 ||
        planctl_engine_register(e, "Dummy", &wrap) < 0)
        bench_die("recovery: cannot create the engine");
    the_loop = &loop;
    if (planctl_engine_start(e, NULL, NULL) < 0)
        bench_die("recovery: restart refused: %s", planctl_errmsg(p));
    t_start = bench_ns();
    uv_run(&loop, UV_RUN_DEFAULT);
    if (!first_task)
        bench_die("recovery: no step started");
    t.open_ms = (double)(t_open - t0) / 1e6;
    t.start_ms = (double)(t_start - t0) / 1e6;
    t.first_task_ms = (double)(first_task - t0) / 1e6;
    t.interrupted =
        fx_scalar(fx_db(p), "SELECT count(*) FROM attempts WHERE "
                            "message = 'interrupted: engine stopped'");
    /* Like a second crash: the measurement is taken, nothing else to do. */
    return t;
}

/* planctl-bench recovery --dir D [--active N] */
int bench_recovery_main(int argc, char **argv)
{
    const char *dir = bench_opt(argc, argv, "--dir", NULL);
    int n = atoi(bench_opt(argc, argv, "--active", "10000"));
    char path[4096];
    int fd[2], i;
    pid_t pid;
    times t;
    sqlite3 *db;
    int64_t running = 0;

    if (!dir)
        bench_die("recovery: --dir is required");
    snprintf(path, sizeof path, "%s/recovery.db", dir);
    bench_remove_db(path);
    pid = fork();
    if (pid == 0) {
        planctl *p = bench_open(path, PLANCTL_DURABILITY_NORMAL);

        bench_apply(p, DEF);
        fx_clone_runs(p, "rec", "rec", n);
        planctl_close(p);
        _exit(0);
    }
    bench_wait_ok(pid, "recovery: setup");

    /* The engine to kill. */
    pid = fork();
    if (pid == 0) {
        planctl *p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
        planctl_engine *e;
        uv_loop_t loop;

        if (uv_loop_init(&loop) != 0 ||
            planctl_engine_new(&e, p, &loop, NULL) < 0 ||
            planctl_engine_start(e, NULL, NULL) < 0)
            _exit(1);
        uv_run(&loop, UV_RUN_DEFAULT);
        _exit(1);
    }
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        bench_die("recovery: cannot open %s", path);
    sqlite3_busy_timeout(db, 10000);
    /* Every run started, and every slot taken (64 by default). */
    for (i = 0; i < 3000; i++) {
        running = fx_steps_in(db, "IN_PROGRESS");
        if (running >= 64 && fx_runs_in(db, "IN_PROGRESS") == n)
            break;
        usleep(10000);
    }
    if (i == 3000)
        bench_die("recovery: the first engine did not get going");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    sqlite3_close(db);

    if (pipe(fd) != 0)
        bench_die("pipe failed");
    pid = fork();
    if (pid == 0) {
        close(fd[0]);
        t = restart(path);
        if (write(fd[1], &t, sizeof t) != (ssize_t)sizeof t)
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    if (read(fd[0], &t, sizeof t) != (ssize_t)sizeof t)
        bench_die("recovery: the restarted engine failed");
    close(fd[0]);
    bench_wait_ok(pid, "recovery: the restarted engine");
    bench_remove_db(path);
    if (t.interrupted != running)
        bench_die("recovery: %lld steps were running, %lld marked interrupted",
                  (long long)running, (long long)t.interrupted);
    bench_detail("recovery",
                 "%d active runs, %lld steps running at the kill: open %.1f "
                 "ms, engine started (lease taken) %.1f ms, first new step "
                 "started %.1f ms after the restart began",
                 n, (long long)running, t.open_ms, t.start_ms, t.first_task_ms);
    bench_summary("recovery_first_step", t.first_task_ms, 1000.0, "ms", '<',
                  1.0);
    return 0;
}
