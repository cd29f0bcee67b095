/*
 * foreign.c - what a commit of another process costs the engine, by the
 * number of active runs (issue 16): the engine's CPU per foreign commit
 * with many active runs against with few, measured in one run.
 *
 * The active runs stay active for the whole measurement without any of
 * them moving:
 *   - half of them hold a step whose task is the benchmark's own Hold
 *     executor, which never reports until it is cancelled: the run, its
 *     phase and its step stay IN_PROGRESS, with a live job each (the
 *     concurrency is set above their number);
 *   - the other half are PENDING runs of a task kind, Parked, that this
 *     engine has no executor for: they wait, as they are, for an engine
 *     that has (DESIGN: an embedder's controller), taking no slot.
 * (Fewer are held if the process may not open enough descriptors for the
 * engine to run that many tasks at once; the line of details says so.)
 *
 * The foreign commits are the real CLI's, each in a process of its own,
 * one after another: `planctl trigger spare-K deploy` admits a run of an
 * instance that has none active, and `planctl cancel spare-K` cancels it
 * once it runs.  Each counts once the engine has acted on it, seen from
 * inside: the Hold executor started the triggered run's step, or was
 * asked to cancel it; then the engine's thread must have gone quiet (its
 * CPU time unchanged over 20 ms while it sleeps).  The cost of one commit
 * is the engine thread's CPU time (CLOCK_THREAD_CPUTIME_ID, from the
 * other thread) from just before the CLI starts to then, less what the
 * engine spends idle in as long (its poll for other writers every 100 ms:
 * the median rate of twelve quarter-seconds before, with the same runs).
 * The figure per commit weighs triggers and cancels alike, the median of
 * each.
 *
 * The engine runs on a thread of a process made for the one size, set up
 * by another process, and runs with its defaults but the concurrency.
 */
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "bench.h"

extern char **environ;

#define DEF(name, kind)                                                        \
    "{\"name\":\"" name "\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","     \
    "\"kind\":\"" kind "\"}],\"plans\":{\"deploy\":{\"phases\":[{\"name\":"    \
    "\"main\",\"steps\":[{\"name\":\"s\",\"tasks\":[\"t\"]}]}]}}}"

#define MAX_COMMITS 100
#define QUIET_NS (20 * 1000000LL)
#define WAIT_S 300
#define IDLE_WINDOWS 12
#define IDLE_WINDOW_NS (250 * 1000000LL)

typedef struct sized {
    int active, held, parked, commits;
    double trigger_us[MAX_COMMITS], cancel_us[MAX_COMMITS];
    double idle_us_per_s, start_s;
} sized;

/* ---- setup ---- */

/* held runs of Hold, parked runs of Parked, and `spares` instances of
 * hold whose deploy run was cancelled, so none of them has a run active. */
static void setup(const char *path, int held, int parked, int spares)
{
    pid_t pid;

    bench_remove_db(path);
    if ((pid = fork()) < 0)
        bench_die("fork failed");
    if (pid == 0) {
        planctl *p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
        char name[64];
        int64_t run;
        int k;

        if (planctl_kind_register(p, "Hold", NULL, NULL) < 0 ||
            planctl_kind_register(p, "Parked", NULL, NULL) < 0)
            bench_die("foreign: %s", planctl_errmsg(p));
        bench_apply(p, DEF("hold", "Hold"));
        bench_apply(p, DEF("park", "Parked"));
        fx_clone_runs(p, "hold", "hold", held);
        if (parked > 0)
            fx_clone_runs(p, "park", "park", parked);
        for (k = 0; k < spares; k++) {
            snprintf(name, sizeof name, "spare-%d", k);
            if (planctl_instance_create(&run, p, name, "hold", NULL, NULL, 0) <
                    0 ||
                planctl_run_cancel(NULL, p, name, "a spare") < 0)
                bench_die("foreign: %s: %s", name, planctl_errmsg(p));
        }
        fx_exec(fx_db(p), "PRAGMA wal_checkpoint(TRUNCATE)");
        planctl_close(p);
        _exit(0);
    }
    bench_wait_ok(pid, "foreign: setup");
}

/* ---- the engine's thread and the Hold executor ---- */

typedef struct hold {
    int spare; /* k + 1 for spare-k, 0 for a held run */
} hold;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int started, cancelled; /* held runs' jobs */
    int spare_started[MAX_COMMITS], spare_cancelled[MAX_COMMITS];
    pid_t tid;
    planctl_engine *e;
    uv_loop_t loop;
    uv_async_t stop;
} fc = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static int hold_start(planctl_job *job, const planctl_task_info *info,
                      void *data)
{
    hold *h = calloc(1, sizeof *h);

    (void)data;
    if (!h)
        return PLANCTL_ENOMEM;
    if (strncmp(info->instance, "spare-", 6) == 0)
        h->spare = atoi(info->instance + 6) + 1;
    if (h->spare > MAX_COMMITS)
        bench_die("foreign: unexpected instance %s", info->instance);
    planctl_job_set_data(job, h);
    pthread_mutex_lock(&fc.mu);
    if (h->spare)
        fc.spare_started[h->spare - 1]++;
    else
        fc.started++;
    pthread_cond_broadcast(&fc.cv);
    pthread_mutex_unlock(&fc.mu);
    return 0; /* and never reports, until cancelled */
}

static void hold_cancel(planctl_job *job, void *data)
{
    hold *h = planctl_job_data(job);

    (void)data;
    if (!h)
        return; /* reported already */
    planctl_job_set_data(job, NULL);
    pthread_mutex_lock(&fc.mu);
    if (h->spare)
        fc.spare_cancelled[h->spare - 1]++;
    else
        fc.cancelled++;
    pthread_cond_broadcast(&fc.cv);
    pthread_mutex_unlock(&fc.mu);
    free(h);
    planctl_step_finish(job, PLANCTL_OUTCOME_ERROR, "cancelled");
}

static void on_stop(uv_async_t *a)
{
    planctl_engine_stop(fc.e, 0);
    uv_close((uv_handle_t *)a, NULL);
}

static void *engine_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&fc.mu);
    fc.tid = (pid_t)syscall(SYS_gettid);
    pthread_cond_broadcast(&fc.cv);
    pthread_mutex_unlock(&fc.mu);
    uv_run(&fc.loop, UV_RUN_DEFAULT);
    return NULL;
}

/* ---- observing the engine's thread ---- */

static int64_t cpu_ns(clockid_t cid)
{
    struct timespec ts;

    if (clock_gettime(cid, &ts) != 0)
        bench_die("foreign: cannot read the engine thread's CPU time");
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The scheduler's state of the engine's thread: 'S' while it waits in
 * the loop, 'R' while it runs or is ready to. */
static char thread_state(void)
{
    char path[64], buf[512], *p;
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)fc.tid);
    if (!(f = fopen(path, "r")))
        return '?';
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};

    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Until the engine's thread has used no CPU for QUIET_NS and sleeps. */
static void wait_quiet(clockid_t cid)
{
    int64_t until = bench_ns() + (int64_t)WAIT_S * 1000000000;
    int64_t a = cpu_ns(cid), b;

    for (;;) {
        sleep_ns(QUIET_NS);
        b = cpu_ns(cid);
        if (b == a && thread_state() == 'S')
            return;
        if (bench_ns() > until)
            bench_die("foreign: the engine does not go quiet");
        a = b;
    }
}

/* Until *count reaches want (under fc.mu). */
static void wait_count(const int *count, int want, const char *what)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_S;
    pthread_mutex_lock(&fc.mu);
    while (*count < want)
        if (pthread_cond_timedwait(&fc.cv, &fc.mu, &until) != 0)
            bench_die("foreign: the engine never %s", what);
    pthread_mutex_unlock(&fc.mu);
}

/* Runs `planctl --db DB ARGS...` (its output thrown away) to success. */
static void cli(const char *bin, const char *db, const char *a1, const char *a2,
                const char *a3)
{
    char *argv[] = {(char *)bin, "--db",     (char *)db, (char *)a1,
                    (char *)a2,  (char *)a3, NULL};
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int st;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&pid, bin, &fa, NULL, argv, environ) != 0)
        bench_die("foreign: cannot run %s", bin);
    posix_spawn_file_actions_destroy(&fa);
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        bench_die("foreign: planctl %s %s failed", a1, a2);
}

/* ---- one size, in a process of its own ---- */

static sized measure(const char *bin, const char *path, sized z)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    static const planctl_executor hold_ex = {
        PLANCTL_EXECUTOR_VERSION, hold_start, hold_cancel, NULL, NULL};
    planctl *p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
    pthread_t th;
    clockid_t cid;
    int64_t c0, w0, t0;
    double idle, rates[IDLE_WINDOWS];
    int k;

    o.concurrency = z.held + 16;
    if (uv_loop_init(&fc.loop) != 0 ||
        uv_async_init(&fc.loop, &fc.stop, on_stop) != 0 ||
        planctl_engine_new(&fc.e, p, &fc.loop, &o) < 0 ||
        planctl_engine_register(fc.e, "Hold", &hold_ex) < 0)
        bench_die("foreign: cannot create the engine");
    t0 = bench_ns();
    if (planctl_engine_start(fc.e, NULL, NULL) < 0)
        bench_die("foreign: %s", planctl_errmsg(p));
    if (pthread_create(&th, NULL, engine_thread, NULL) != 0)
        bench_die("foreign: cannot start the engine's thread");
    if (pthread_getcpuclockid(th, &cid) != 0)
        bench_die("foreign: no CPU clock for the engine's thread");
    /* Every held run running, then the engine at rest. */
    wait_count(&fc.started, z.held, "started every held run");
    wait_quiet(cid);
    z.start_s = (double)(bench_ns() - t0) / 1e9;
    /* Idle: the median of windows as long as a commit's, so that a lease
     * heartbeat (every 5 s) in one of them does not count. */
    for (k = 0; k < IDLE_WINDOWS; k++) {
        c0 = cpu_ns(cid);
        w0 = bench_ns();
        sleep_ns(IDLE_WINDOW_NS);
        rates[k] = (double)(cpu_ns(cid) - c0) / (double)(bench_ns() - w0);
    }
    idle = bench_quantile(rates, IDLE_WINDOWS, 0.5);
    z.idle_us_per_s = idle * 1e6;

    for (k = 0; k < z.commits; k++) {
        char name[32];
        int64_t c, w;

        snprintf(name, sizeof name, "spare-%d", k);
        c = cpu_ns(cid);
        w = bench_ns();
        cli(bin, path, "trigger", name, "deploy");
        wait_count(&fc.spare_started[k], 1, "started a triggered run");
        wait_quiet(cid);
        z.trigger_us[k] =
            ((double)(cpu_ns(cid) - c) - idle * (double)(bench_ns() - w)) / 1e3;

        c = cpu_ns(cid);
        w = bench_ns();
        cli(bin, path, "cancel", name, NULL);
        wait_count(&fc.spare_cancelled[k], 1, "cancelled a cancelled run");
        wait_quiet(cid);
        z.cancel_us[k] =
            ((double)(cpu_ns(cid) - c) - idle * (double)(bench_ns() - w)) / 1e3;
    }

    uv_async_send(&fc.stop);
    pthread_join(th, NULL);
    if (planctl_engine_status(fc.e) != 0)
        bench_die("foreign: the engine failed: %s", planctl_errmsg(p));
    if (fc.cancelled != z.held)
        bench_die("foreign: %d held runs cancelled at the stop, not %d",
                  fc.cancelled, z.held);
    planctl_engine_free(fc.e);
    if (uv_loop_close(&fc.loop) != 0)
        bench_die("foreign: handles left open");
    planctl_close(p);
    return z;
}

static sized measure_in_child(const char *bin, const char *path, sized z)
{
    int fd[2];
    pid_t pid;

    if (pipe(fd) != 0)
        bench_die("pipe failed");
    if ((pid = fork()) < 0)
        bench_die("fork failed");
    if (pid == 0) {
        close(fd[0]);
        z = measure(bin, path, z);
        if (write(fd[1], &z, sizeof z) != (ssize_t)sizeof z)
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    if (read(fd[0], &z, sizeof z) != (ssize_t)sizeof z)
        bench_die("foreign: the measuring child failed");
    close(fd[0]);
    bench_wait_ok(pid, "foreign: the measuring child");
    return z;
}

/* How many tasks the engine can run at once in this process: it allows
 * three descriptors a task (engine.c, task_budget()); some to spare. */
static int task_room(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 1 << 30;
    return (int)(((long)rl.rlim_cur - 256) / 3) - 64;
}

/* The cost of one commit: trigger and cancel weigh alike, each its
 * median. */
static double per_commit(sized *z, double *trig, double *canc)
{
    double t[MAX_COMMITS], c[MAX_COMMITS];

    memcpy(t, z->trigger_us, sizeof t);
    memcpy(c, z->cancel_us, sizeof c);
    *trig = bench_quantile(t, (size_t)z->commits, 0.5);
    *canc = bench_quantile(c, (size_t)z->commits, 0.5);
    return (*trig + *canc) / 2;
}

/* planctl-bench foreign --planctl PATH --dir D [--active 100,10000]
 *                       [--commits K]
 * K triggers and K cancels per size; the summary compares the largest
 * size with the smallest. */
int bench_foreign_main(int argc, char **argv)
{
    const char *bin = bench_opt(argc, argv, "--planctl", NULL);
    const char *dir = bench_opt(argc, argv, "--dir", NULL);
    const char *list = bench_opt(argc, argv, "--active", "100,10000");
    int commits = atoi(bench_opt(argc, argv, "--commits", "10"));
    double cost[8];
    int ns[8], count = 0, i;
    const char *s;
    char path[4096];

    if (!bin || !dir)
        bench_die("foreign: --planctl and --dir are required");
    if (commits < 1 || commits > MAX_COMMITS)
        bench_die("foreign: --commits must be 1 to %d", MAX_COMMITS);
    for (s = list; *s && count < 8;
         s = strchr(s, ',') ? strchr(s, ',') + 1 : "")
        ns[count++] = atoi(s);
    if (count < 2 || ns[0] < 2)
        bench_die("foreign: --active needs two sizes of 2 or more");
    snprintf(path, sizeof path, "%s/foreign.db", dir);
    for (i = 0; i < count; i++) {
        sized z;
        double trig, canc;

        memset(&z, 0, sizeof z);
        z.active = ns[i];
        z.held = (ns[i] + 1) / 2;
        if (z.held > task_room())
            z.held = task_room();
        z.parked = ns[i] - z.held;
        z.commits = commits;
        setup(path, z.held, z.parked, commits);
        z = measure_in_child(bin, path, z);
        bench_remove_db(path);
        cost[i] = per_commit(&z, &trig, &canc);
        bench_detail(
            "foreign commits",
            "%d active runs (%d running a step, %d waiting for a task "
            "kind): per commit %.0f us of engine CPU (median trigger %.0f "
            "us, cancel %.0f us; %d of each), idle %.0f us/s, start %.1f s",
            z.active, z.held, z.parked, cost[i], trig, canc, z.commits,
            z.idle_us_per_s, z.start_s);
    }
    bench_summary("foreign_commit", cost[count - 1], cost[0], "us", '<', 2.0);
    return 0;
}
