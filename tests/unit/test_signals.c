/*
 * test_signals.c - planctl in a process whose runtime owns signals (Go):
 * shell tasks and shell preflight checks never change SIGCHLD, not even
 * for an instant (a thread watches it through the first spawns of the
 * process), and the host's handler hears their children; where shell
 * spawns with libuv (a kernel without pidfd_open), libuv's SIGCHLD handler
 * has SA_ONSTACK and the host's own handler is back once the engine (or
 * the preflight) is done; an engine without the shell kind never touches
 * SIGCHLD, and the keeper of an engine on PostgreSQL starts with no
 * handler of the host's.  A real libuv loop, real child processes
 * (planctl.h, "Signals").
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "engine/executors.h"
#include "engine/keeper.h"
#include "planctl.h"
#include "testutil.h"

/* ---- the host's handler, and what the Probe kind saw ------------------- */

/* Atomic: the handler runs on whichever thread the signal finds. */
static atomic_int host_calls;

static void host_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    (void)ctx;
    atomic_fetch_add(&host_calls, 1);
}

/* Installs the host's SIGCHLD handler, as a runtime would (its flags and
 * mask chosen to be told apart: no SA_ONSTACK, SIGUSR1 masked). */
static void install_host(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = host_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR1);
    assert_int_equal(sigaction(SIGCHLD, &sa, NULL), 0);
}

/* SIGCHLD is the host's handler, exactly as install_host() left it. */
static void expect_host(const char *when)
{
    struct sigaction now;

    assert_int_equal(sigaction(SIGCHLD, NULL, &now), 0);
    if (now.sa_sigaction != host_handler)
        fail_msg("%s: SIGCHLD's handler is not the host's", when);
    if ((now.sa_flags & (SA_SIGINFO | SA_RESTART | SA_ONSTACK)) !=
        (SA_SIGINFO | SA_RESTART))
        fail_msg("%s: SIGCHLD's flags are %#x", when, (unsigned)now.sa_flags);
    if (!sigismember(&now.sa_mask, SIGUSR1))
        fail_msg("%s: SIGCHLD's mask lost SIGUSR1", when);
}

static void restore_default(void)
{
    struct sigaction dfl;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    assert_int_equal(sigaction(SIGCHLD, &dfl, NULL), 0);
}

/* What SIGCHLD was when a Probe task started (on the loop thread). */
static struct sigaction probed;
static int probes;

static int probe_start(planctl_job *job, const planctl_task_info *info,
                       void *data)
{
    (void)info;
    (void)data;
    if (sigaction(SIGCHLD, NULL, &probed) == 0)
        probes++;
    return planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL);
}

static void probe_cancel(planctl_job *job, void *data)
{
    (void)job;
    (void)data;
}

static const planctl_executor probe = {PLANCTL_EXECUTOR_VERSION, probe_start,
                                       probe_cancel, NULL, NULL};

/* ---- running an engine ------------------------------------------------- */

static void on_stopped(planctl_engine *e, void *data)
{
    (void)e;
    *(int *)data = 1;
}

/* Runs an engine with the Probe kind on its own loop until idle; the loop
 * must close clean. */
static void run_engine(planctl *p, int no_shell)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_engine *e;
    uv_loop_t loop;
    int stopped = 0;

    o.until_idle = 1;
    o.change_poll_ms = 20;
    o.no_shell = no_shell;
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(planctl_engine_new(&e, p, &loop, &o), 0);
    assert_int_equal(planctl_engine_register(e, "Probe", &probe), 0);
    if (planctl_engine_start(e, on_stopped, &stopped) != 0)
        fail_msg("engine start: %s", planctl_errmsg(p));
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_true(stopped);
    assert_int_equal(planctl_engine_status(e), 0);
    planctl_engine_free(e);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* A plan of shell steps (several at once, so that children exit while
 * others run) and, after them, a Probe step. */
#define SHELL_DEF                                                              \
    "{\"name\":\"sh\",\"version\":\"1\",\"tasks\":["                           \
    "{\"name\":\"t\",\"kind\":\"shell\",\"spec\":{\"command\":\"true\"}},"     \
    "{\"name\":\"probe\",\"kind\":\"Probe\"}],"                                \
    "\"plans\":{\"deploy\":{\"phases\":["                                      \
    "{\"name\":\"a\",\"strategy\":\"parallel\",\"steps\":["                    \
    "{\"name\":\"s1\",\"tasks\":[\"t\"]},{\"name\":\"s2\",\"tasks\":[\"t\"]}," \
    "{\"name\":\"s3\",\"tasks\":[\"t\"]}]},"                                   \
    "{\"name\":\"b\",\"steps\":[{\"name\":\"p\",\"tasks\":[\"probe\"]}]}]}}}"

#define PROBE_DEF                                                              \
    "{\"name\":\"pr\",\"version\":\"1\",\"tasks\":["                           \
    "{\"name\":\"probe\",\"kind\":\"Probe\"}],"                                \
    "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"a\",\"steps\":["           \
    "{\"name\":\"p\",\"tasks\":[\"probe\"]}]}]}}}"

/* Registers Probe on p (planctl_kind_register) and applies json. */
static void apply(planctl *p, const char *json)
{
    assert_int_equal(planctl_kind_register(p, "Probe", NULL, NULL), 0);
    tu_apply(p, json);
}

static char *run_status(tu_db *f, const char *instance)
{
    return tu_raw_text(f->raw,
                       "SELECT r.status FROM runs r JOIN instances i ON "
                       "i.id = r.instance_id WHERE i.name = '%s' ORDER BY "
                       "r.id DESC LIMIT 1",
                       instance);
}

/* ---- a thread watching SIGCHLD --------------------------------------- */

/* Reads SIGCHLD's disposition over and over, from before the first spawn
 * of the process until told to stop, counting every reading that is not
 * the host's handler, and those of a handler without SA_ONSTACK: the
 * instant a Go program crashed in (libuv installing its handler before
 * planctl added the flag). */
typedef struct watcher {
    pthread_t thread;
    atomic_int stop;
    atomic_long reads;
    long changed, no_onstack;
    unsigned flags; /* of the last reading without SA_ONSTACK */
} watcher;

static void *watch(void *arg)
{
    watcher *w = arg;
    struct sigaction now;

    while (!atomic_load(&w->stop)) {
        if (sigaction(SIGCHLD, NULL, &now) != 0)
            continue;
        atomic_fetch_add(&w->reads, 1);
        if (now.sa_sigaction == host_handler)
            continue;
        w->changed++;
        if (!(now.sa_flags & SA_ONSTACK)) {
            w->no_onstack++;
            w->flags = (unsigned)now.sa_flags;
        }
    }
    return NULL;
}

static void watch_start(watcher *w)
{
    memset(w, 0, sizeof *w);
    assert_int_equal(pthread_create(&w->thread, NULL, watch, w), 0);
    /* It reads before the engine spawns anything. */
    while (atomic_load(&w->reads) == 0)
        sched_yield();
}

static void watch_end(watcher *w, const char *what)
{
    atomic_store(&w->stop, 1);
    assert_int_equal(pthread_join(w->thread, NULL), 0);
    assert_true(atomic_load(&w->reads) > 0);
    if (w->no_onstack)
        fail_msg("%s: SIGCHLD was seen %ld times with a handler without "
                 "SA_ONSTACK (flags %#x)",
                 what, w->no_onstack, w->flags);
    if (w->changed)
        fail_msg("%s: SIGCHLD was seen %ld times (of %ld) not the host's "
                 "handler",
                 what, w->changed, (long)atomic_load(&w->reads));
}

/* The first shell tasks of the process, then more: SIGCHLD stays the
 * host's at every instant (the thread reads it throughout), and the
 * host's handler hears the children exit. */
static void shell_never_changes_sigchld(int way)
{
    tu_db *f = tu_db_open("t.db", 1);
    watcher w;
    char *st;
    int round, probed_other = 0;

    pctl_shell_spawn_way(way);
    apply(f->p, SHELL_DEF);
    install_host();
    atomic_store(&host_calls, 0);
    watch_start(&w);
    for (round = 0; round < 2; round++) {
        char name[16];

        snprintf(name, sizeof name, "i%d", round);
        tu_create(f->p, name, "sh");
        probes = 0;
        run_engine(f->p, 0);
        st = run_status(f, name);
        assert_string_equal(st, "COMPLETE");
        free(st);
        assert_int_equal(probes, 1);
        probed_other += probed.sa_sigaction != host_handler;
    }
    watch_end(&w, "engines running shell tasks");
    if (probed_other)
        fail_msg("while the engine ran, SIGCHLD was not the host's");
    expect_host("after the engines stopped");
    if (atomic_load(&host_calls) == 0)
        fail_msg("the host's SIGCHLD handler never heard a child exit");
    restore_default();
    assert_int_equal(tu_db_close(f), 0);
}

static void test_shell_never_changes_sigchld(void **state)
{
    (void)state;
    shell_never_changes_sigchld(PCTL_SPAWN_AUTO);
}

/* The same where the exit is learnt by a thread waiting in waitid() (no
 * pidfd_open(), as under valgrind). */
static void test_shell_thread_never_changes_sigchld(void **state)
{
    (void)state;
    shell_never_changes_sigchld(PCTL_SPAWN_THREAD);
    pctl_shell_spawn_way(PCTL_SPAWN_AUTO);
}

/* A shell preflight check (on a private loop, inside the admission) does
 * not change SIGCHLD either. */
static void test_preflight_never_changes_sigchld(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    planctl_admitted ad;
    watcher w;

    (void)state;
    apply(f->p, "{\"name\":\"pf\",\"version\":\"1\",\"tasks\":["
                "{\"name\":\"ok\",\"kind\":\"shell\",\"spec\":{\"command\":"
                "\"true\"}},{\"name\":\"noop\",\"kind\":\"Dummy\"}],"
                "\"plans\":{\"deploy\":{\"preflight\":["
                "{\"name\":\"Sh\",\"task\":\"ok\"}],"
                "\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\","
                "\"tasks\":[\"noop\"]}]}]}}}");
    install_host();
    watch_start(&w);
    if (planctl_admit_create(&ad, f->p, "i", "pf", NULL, NULL, 0, NULL) != 0)
        fail_msg("admission: %s", planctl_errmsg(f->p));
    assert_true(ad.run > 0);
    planctl_admitted_clear(&ad);
    watch_end(&w, "a shell preflight check");
    expect_host("after the preflight");
    restore_default();
    assert_int_equal(tu_db_close(f), 0);
}

/* A host that ignores SIGCHLD (the kernel then reaps every child at once)
 * still has its shell tasks' exit statuses: shell spawns the libuv way
 * there, and SIG_IGN is back after the engine. */
static void test_shell_sigchld_ignored(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    struct sigaction ign, now;
    char *st;

    (void)state;
    apply(f->p, SHELL_DEF);
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    assert_int_equal(sigaction(SIGCHLD, &ign, NULL), 0);
    tu_create(f->p, "i", "sh");
    run_engine(f->p, 0);
    st = run_status(f, "i");
    assert_string_equal(st, "COMPLETE");
    free(st);
    assert_int_equal(sigaction(SIGCHLD, NULL, &now), 0);
    assert_true(now.sa_handler == SIG_IGN);
    restore_default();
    assert_int_equal(tu_db_close(f), 0);
}

/* ---- where shell spawns with libuv (no pidfd) ------------------------- */

/* After shell tasks ran, libuv's SIGCHLD handler has SA_ONSTACK; once the
 * engine stopped the host's handler is back, flags and mask included.
 * Twice, so that the second engine finds things as the first left them. */
static void test_engine_shell_onstack_then_restored(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    char *st;
    int round;

    (void)state;
    pctl_shell_spawn_way(PCTL_SPAWN_LIBUV);
    apply(f->p, SHELL_DEF);
    install_host();
    for (round = 0; round < 2; round++) {
        char name[16];

        snprintf(name, sizeof name, "i%d", round);
        tu_create(f->p, name, "sh");
        probes = 0;
        run_engine(f->p, 0);
        st = run_status(f, name);
        assert_string_equal(st, "COMPLETE");
        free(st);
        assert_int_equal(probes, 1);
        if (probed.sa_sigaction == host_handler)
            fail_msg("while the engine ran, SIGCHLD was the host's handler");
        assert_true(probed.sa_handler != SIG_DFL);
        if (!(probed.sa_flags & SA_ONSTACK))
            fail_msg("libuv's SIGCHLD handler lacks SA_ONSTACK (flags %#x)",
                     (unsigned)probed.sa_flags);
        expect_host("after the engine stopped");
    }
    restore_default();
    assert_int_equal(tu_db_close(f), 0);
}

/* A host that left SIGCHLD at its default finds it so again. */
static void test_engine_shell_default_kept(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    struct sigaction now;
    char *st;

    (void)state;
    pctl_shell_spawn_way(PCTL_SPAWN_LIBUV);
    apply(f->p, SHELL_DEF);
    restore_default();
    tu_create(f->p, "i", "sh");
    probes = 0;
    run_engine(f->p, 0);
    st = run_status(f, "i");
    assert_string_equal(st, "COMPLETE");
    free(st);
    assert_true(probed.sa_flags & SA_ONSTACK);
    assert_int_equal(sigaction(SIGCHLD, NULL, &now), 0);
    assert_true(now.sa_handler == SIG_DFL);
    assert_int_equal(tu_db_close(f), 0);
}

/* An engine without the shell kind never touches SIGCHLD: the host's
 * handler while it runs and after; a run that uses shell waits. */
static void test_engine_no_shell_untouched(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    char *st;

    (void)state;
    apply(f->p, SHELL_DEF);
    apply(f->p, PROBE_DEF);
    install_host();
    tu_create(f->p, "uses-shell", "sh");
    tu_create(f->p, "probe-only", "pr");
    probes = 0;
    run_engine(f->p, 1);
    assert_int_equal(probes, 1);
    if (probed.sa_sigaction != host_handler)
        fail_msg("an engine without shell changed SIGCHLD");
    expect_host("after an engine without shell stopped");
    st = run_status(f, "probe-only");
    assert_string_equal(st, "COMPLETE");
    free(st);
    st = run_status(f, "uses-shell");
    assert_string_not_equal(st, "COMPLETE");
    free(st);
    restore_default();
    assert_int_equal(tu_db_close(f), 0);
}

/* A shell preflight check (run on a private loop inside the admission)
 * spawns with SA_ONSTACK too, and puts the host's handler back. */
static void test_preflight_shell_onstack_then_restored(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    planctl_engine *e;
    planctl_admitted ad;
    uv_loop_t loop;

    (void)state;
    pctl_shell_spawn_way(PCTL_SPAWN_LIBUV);
    apply(f->p, "{\"name\":\"pf\",\"version\":\"1\",\"tasks\":["
                "{\"name\":\"ok\",\"kind\":\"shell\",\"spec\":{\"command\":"
                "\"true\"}},{\"name\":\"probe\",\"kind\":\"Probe\"},"
                "{\"name\":\"noop\",\"kind\":\"Dummy\"}],"
                "\"plans\":{\"deploy\":{\"preflight\":["
                "{\"name\":\"Sh\",\"task\":\"ok\"},"
                "{\"name\":\"Probe\",\"task\":\"probe\"}],"
                "\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\","
                "\"tasks\":[\"noop\"]}]}]}}}");
    /* Probe's executor on the handle: an engine registers it there. */
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(planctl_engine_new(&e, f->p, &loop, NULL), 0);
    assert_int_equal(planctl_engine_register(e, "Probe", &probe), 0);
    install_host();
    probes = 0;
    if (planctl_admit_create(&ad, f->p, "i", "pf", NULL, NULL, 0, NULL) != 0)
        fail_msg("admission: %s", planctl_errmsg(f->p));
    assert_true(ad.run > 0);
    planctl_admitted_clear(&ad);
    assert_int_equal(probes, 1);
    if (probed.sa_sigaction == host_handler || probed.sa_handler == SIG_DFL)
        fail_msg("the shell check ran without libuv's SIGCHLD handler");
    assert_true(probed.sa_flags & SA_ONSTACK);
    expect_host("after the preflight");
    planctl_engine_free(e);
    assert_int_equal(uv_loop_close(&loop), 0);
    restore_default();
    assert_int_equal(tu_db_close(f), 0);
}

/* ---- the keeper -------------------------------------------------------- */

/* The hexadecimal mask of field ("SigCgt:") in /proc/pid/status, or
 * UINT64_MAX when it cannot be read. */
static uint64_t proc_mask(int pid, const char *field)
{
    char path[64], line[256];
    uint64_t v = UINT64_MAX;
    FILE *fp;

    snprintf(path, sizeof path, "/proc/%d/status", pid);
    if (!(fp = fopen(path, "r")))
        return v;
    while (fgets(line, sizeof line, fp))
        if (strncmp(line, field, strlen(field)) == 0) {
            v = strtoull(line + strlen(field), NULL, 16);
            break;
        }
    fclose(fp);
    return v;
}

static void noop_handler(int sig)
{
    (void)sig;
}

/* The keeper (forked by an engine on PostgreSQL) starts with every signal
 * at its default and none blocked, whatever the host had: a runtime's
 * handler has no runtime to run in there.  Its parent's mask is as it
 * was.  The keeper is forked by the test itself, so this runs on SQLite
 * too. */
static void test_keeper_signals_reset(void **state)
{
    struct sigaction sa, old;
    sigset_t block, saved, now;
    pctl_keeper *k;
    uint64_t caught = UINT64_MAX, blocked = UINT64_MAX;
    int pid, i;

    (void)state;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = noop_handler;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    sigemptyset(&block);
    sigaddset(&block, SIGUSR2);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &block, &saved), 0);

    assert_int_equal(pctl_keeper_start(&k), 0);
    pid = pctl_keeper_pid(k);
    assert_true(pid > 0);
    /* The reset is the keeper's first act; give it up to 30 s on a busy
     * machine (without it the masks never clear). */
    for (i = 0; i < 3000; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};

        /* Less glibc's own signals, 32 and 33 (below SIGRTMIN): once a
         * process has made a thread, as the tests above have, glibc's
         * handler for them is there, and no sigaction() can reset it. */
        caught = proc_mask(pid, "SigCgt:") & ~(UINT64_C(3) << 31);
        blocked = proc_mask(pid, "SigBlk:");
        if (caught == 0 && blocked == 0)
            break;
        nanosleep(&ts, NULL);
    }
    pctl_keeper_stop(k);
    if (caught != 0 || blocked != 0)
        fail_msg("the keeper kept the host's signals: SigCgt %llx SigBlk "
                 "%llx",
                 (unsigned long long)caught, (unsigned long long)blocked);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &now), 0);
    assert_true(sigismember(&now, SIGUSR2));
    assert_false(sigismember(&now, SIGUSR1));
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &saved, NULL), 0);
    assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* First: they watch the first spawns of the process. */
        cmocka_unit_test(test_shell_never_changes_sigchld),
        cmocka_unit_test(test_shell_thread_never_changes_sigchld),
        cmocka_unit_test(test_preflight_never_changes_sigchld),
        cmocka_unit_test(test_shell_sigchld_ignored),
        cmocka_unit_test(test_engine_shell_onstack_then_restored),
        cmocka_unit_test(test_engine_shell_default_kept),
        cmocka_unit_test(test_engine_no_shell_untouched),
        cmocka_unit_test(test_preflight_shell_onstack_then_restored),
        cmocka_unit_test(test_keeper_signals_reset),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
