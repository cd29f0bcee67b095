/*
 * test_tsan_engine.c - the engine calls any thread may make, for
 * ThreadSanitizer: an engine on a loop of its own (planctl_engine_run on
 * a thread of the test's) is read by several threads at once
 * (planctl_engine_healthy, planctl_engine_metrics_snapshot) while it
 * starts steps, and stopped from yet another (planctl_engine_request_stop)
 * while they still read; a stop asked for before the engine ran; an
 * engine on the embedder's loop stopped from another thread.
 *
 * Built like any test, it checks the outcomes; built in a tree configured
 * with -DPLANCTL_SANITIZE=thread (tools/dev tsan), ThreadSanitizer also
 * fails it on any data race or lock-order problem in the library.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "planctl.h"
#include "testutil.h"

#define STEPS 8
#define READERS 4
/* How long a reader waits for fresh metrics: far more than a loop turn
 * takes, so that every answer is fresh (the fallback is not what is
 * tested here). */
#define WAIT_MS 60000

/* STEPS parallel steps whose Dummy tasks sleep until cancelled. */
static void apply_sleepers(planctl *p)
{
    char steps[STEPS * 48] = "";
    char *json;
    int i;

    for (i = 0; i < STEPS; i++)
        snprintf(steps + strlen(steps), sizeof steps - strlen(steps),
                 "%s{\"name\":\"s%d\",\"tasks\":[\"nap\"]}", i ? "," : "", i);
    json = tu_fmt("{\"name\":\"naps\",\"version\":\"1\",\"tasks\":["
                  "{\"name\":\"nap\",\"kind\":\"Dummy\",\"spec\":{\"sleep\":"
                  "\"1h\"}}],\"plans\":{\"deploy\":{\"phases\":[{\"name\":"
                  "\"a\",\"strategy\":\"parallel\",\"steps\":[%s]}]}}}",
                  steps);
    tu_apply(p, json);
    free(json);
}

typedef struct shared {
    planctl_engine *e;
    pthread_mutex_t lock;
    int quit;    /* readers stop */
    int running; /* the most running steps a reader saw */
    int healthy; /* a reader saw the engine healthy */
    int snaps;   /* snapshots read */
    int bad;     /* snapshots that failed or made no sense */
    int run_rc;
} shared;

/* The value of a gauge line "name N" in a metrics text, or -1. */
static long gauge(const char *text, const char *name)
{
    const char *at = text;
    size_t n = strlen(name);

    while ((at = strstr(at, name))) {
        if ((at == text || at[-1] == '\n') && at[n] == ' ')
            return strtol(at + n + 1, NULL, 10);
        at += n;
    }
    return -1;
}

static void *reader(void *arg)
{
    shared *s = arg;

    for (;;) {
        char *text = NULL;
        long running;
        int healthy, quit;

        /* No cmocka assertion off the test's thread: a failure is kept
         * for it to report. */
        healthy = planctl_engine_healthy(s->e);
        if (planctl_engine_metrics_snapshot(&text, s->e, WAIT_MS) != 0 ||
            !strstr(text, "planctl_attempts_total"))
            running = -1;
        else
            running = gauge(text, "planctl_running_steps");
        planctl_free(text);
        pthread_mutex_lock(&s->lock);
        if (running < 0 || running > STEPS)
            s->bad++;
        if (running > s->running)
            s->running = (int)running;
        s->healthy |= healthy;
        s->snaps++;
        quit = s->quit;
        pthread_mutex_unlock(&s->lock);
        if (quit)
            return NULL;
    }
}

static void *runner(void *arg)
{
    shared *s = arg;

    s->run_rc = planctl_engine_run(s->e);
    return NULL;
}

static int stop_rc = -99;

static void *stopper(void *arg)
{
    stop_rc = planctl_engine_request_stop(arg, 0);
    return NULL;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* The engine's own loop on a thread; readers on others; a stop from yet
 * another once every step runs. */
static void test_own_loop_read_and_stopped_from_threads(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    pthread_t run_t, stop_t, readers[READERS];
    shared s;
    char *text;
    int i, seen = 0;

    (void)state;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.lock, NULL);
    apply_sleepers(f->p);
    tu_create(f->p, "i", "naps");
    o.change_poll_ms = 20;
    assert_int_equal(planctl_engine_new(&s.e, f->p, NULL, &o), 0);
    /* Before it runs: counters at 0, not healthy. */
    assert_int_equal(planctl_engine_metrics_snapshot(&text, s.e, WAIT_MS), 0);
    assert_int_equal(gauge(text, "planctl_attempts_total"), 0);
    planctl_free(text);
    assert_int_equal(planctl_engine_healthy(s.e), 0);

    for (i = 0; i < READERS; i++)
        assert_int_equal(pthread_create(&readers[i], NULL, reader, &s), 0);
    assert_int_equal(pthread_create(&run_t, NULL, runner, &s), 0);
    /* Until a reader saw every step running (ten minutes at most, for the
     * test to fail rather than hang). */
    for (i = 0; i < 60000 && !seen; i++) {
        pthread_mutex_lock(&s.lock);
        seen = s.running == STEPS && s.healthy;
        pthread_mutex_unlock(&s.lock);
        if (!seen)
            nap_ms(10);
    }
    assert_true(seen);
    assert_int_equal(pthread_create(&stop_t, NULL, stopper, s.e), 0);
    assert_int_equal(pthread_join(stop_t, NULL), 0);
    assert_int_equal(stop_rc, 0);
    assert_int_equal(pthread_join(run_t, NULL), 0);
    assert_int_equal(s.run_rc, 0);
    assert_int_equal(planctl_engine_healthy(s.e), 0);
    pthread_mutex_lock(&s.lock);
    s.quit = 1;
    pthread_mutex_unlock(&s.lock);
    for (i = 0; i < READERS; i++)
        assert_int_equal(pthread_join(readers[i], NULL), 0);
    assert_int_equal(s.bad, 0);
    assert_true(s.snaps > 0);
    /* Stopped: the text of its end, at once; the steps were cancelled. */
    assert_int_equal(planctl_engine_metrics_snapshot(&text, s.e, WAIT_MS), 0);
    assert_int_equal(gauge(text, "planctl_running_steps"), 0);
    assert_int_equal(gauge(text, "planctl_attempts_total"), STEPS);
    planctl_free(text);
    /* Another stop, and a run again, change nothing. */
    assert_int_equal(planctl_engine_request_stop(s.e, 0), 0);
    assert_int_equal(planctl_engine_run(s.e), PLANCTL_EINVAL);
    planctl_engine_free(s.e);
    pthread_mutex_destroy(&s.lock);
    assert_int_equal(tu_db_close(f), 0);
}

/* A stop asked for before the engine ran: it starts, and stops at once. */
static void test_stop_before_run(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    planctl_engine *e;
    pthread_t stop_t;

    (void)state;
    apply_sleepers(f->p);
    tu_create(f->p, "i", "naps");
    assert_int_equal(planctl_engine_new(&e, f->p, NULL, NULL), 0);
    /* Its own loop: only planctl_engine_run starts it. */
    assert_int_equal(planctl_engine_start(e, NULL, NULL), PLANCTL_EINVAL);
    assert_non_null(strstr(planctl_errmsg(f->p), "planctl_engine_run"));
    assert_int_equal(pthread_create(&stop_t, NULL, stopper, e), 0);
    assert_int_equal(pthread_join(stop_t, NULL), 0);
    assert_int_equal(stop_rc, 0);
    assert_int_equal(planctl_engine_run(e), 0);
    assert_int_equal(planctl_engine_healthy(e), 0);
    planctl_engine_free(e);
    assert_int_equal(tu_db_close(f), 0);
}

typedef struct embedded {
    uv_loop_t loop;
    planctl_engine *e;
    int stopped;
} embedded;

static void on_stopped(planctl_engine *e, void *data)
{
    (void)e;
    ((embedded *)data)->stopped = 1;
}

static void *loop_thread(void *arg)
{
    embedded *m = arg;

    uv_run(&m->loop, UV_RUN_DEFAULT);
    return NULL;
}

/* An engine on the embedder's loop, run on a thread of its own, stopped
 * from another; planctl_engine_run refuses it. */
static void test_embedder_loop_stopped_from_thread(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    embedded m;
    pthread_t loop_t;
    int i;

    (void)state;
    memset(&m, 0, sizeof m);
    apply_sleepers(f->p);
    tu_create(f->p, "i", "naps");
    assert_int_equal(uv_loop_init(&m.loop), 0);
    assert_int_equal(planctl_engine_new(&m.e, f->p, &m.loop, NULL), 0);
    assert_int_equal(planctl_engine_run(m.e), PLANCTL_EINVAL);
    assert_int_equal(planctl_engine_start(m.e, on_stopped, &m), 0);
    assert_int_equal(pthread_create(&loop_t, NULL, loop_thread, &m), 0);
    /* Until every step runs (as the loop thread tells it). */
    for (i = 0; i < 60000; i++) {
        char *text = NULL;
        long running;

        assert_int_equal(planctl_engine_metrics_snapshot(&text, m.e, WAIT_MS),
                         0);
        running = gauge(text, "planctl_running_steps");
        planctl_free(text);
        if (running == STEPS)
            break;
        nap_ms(10);
    }
    assert_int_equal(planctl_engine_healthy(m.e), 1);
    assert_int_equal(planctl_engine_request_stop(m.e, 0), 0);
    assert_int_equal(pthread_join(loop_t, NULL), 0);
    assert_true(m.stopped);
    assert_int_equal(planctl_engine_status(m.e), 0);
    planctl_engine_free(m.e);
    assert_int_equal(uv_loop_close(&m.loop), 0);
    assert_int_equal(tu_db_close(f), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_loop_read_and_stopped_from_threads),
        cmocka_unit_test(test_stop_before_run),
        cmocka_unit_test(test_embedder_loop_stopped_from_thread),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
