/*
 * test_tsan_finish.c - planctl_step_finish() from many threads at once,
 * for ThreadSanitizer: an engine on a real libuv loop and a real database
 * runs a plan whose tasks an embedder's executor hands to a pool of
 * worker threads, which report outcomes (DONE, NOT_DONE, ERROR, with
 * output) concurrently with each other and with the loop thread - while
 * the loop thread also cancels the run, stops the engine, or runs a
 * preflight deadline, so cancel() and the engine's reads of a job race
 * with the workers' finish.
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
#include <sqlite3.h>
#include <uv.h>

#include "planctl.h"
#include "testutil.h"

#define WORKERS 6
#define STEPS 24

/* ---- the pool: jobs queued by start(), finished by workers ---- */

typedef struct work {
    planctl_job *job;
    planctl_outcome outcome;
    int delay_us;
    struct work *next;
} work;

typedef struct pool {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    work *head, *tail;
    int quit;
    /* While gated, workers hold their jobs: opened by the first cancel()
     * (or after five seconds, for the test to fail rather than hang). */
    int gated;
    pthread_t threads[WORKERS];
    unsigned seed;
    /* Loop thread only: starts of task b per step, all starts, and a
     * hook called when starts reaches hook_at. */
    int polls[STEPS];
    int starts, hook_at;
    void (*hook)(void *data);
    void *hook_data;
    /* Counted by the workers, read after they are joined. */
    int finished, cancels;
} pool;

static void *worker(void *arg)
{
    pool *pl = arg;

    for (;;) {
        work *w;
        char out[64];

        pthread_mutex_lock(&pl->lock);
        while ((!pl->head || pl->gated) && !pl->quit) {
            struct timespec until;

            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += 5;
            if (pthread_cond_timedwait(&pl->cond, &pl->lock, &until) != 0)
                pl->gated = 0;
        }
        if (!pl->head) {
            pthread_mutex_unlock(&pl->lock);
            return NULL;
        }
        w = pl->head;
        pl->head = w->next;
        if (!pl->head)
            pl->tail = NULL;
        pl->finished++;
        pthread_mutex_unlock(&pl->lock);

        if (w->delay_us)
            usleep((useconds_t)w->delay_us);
        snprintf(out, sizeof out, "finished by a worker, outcome %d\n",
                 (int)w->outcome);
        /* cmocka's asserts belong to the test's thread. */
        if (planctl_job_set_output(w->job, 0, out) != 0 ||
            planctl_step_finish(w->job, w->outcome, "from a worker thread") !=
                0)
            abort();
        free(w);
    }
}

static void pool_start(pool *pl)
{
    int i;

    memset(pl, 0, sizeof *pl);
    pl->seed = 12345;
    assert_int_equal(pthread_mutex_init(&pl->lock, NULL), 0);
    assert_int_equal(pthread_cond_init(&pl->cond, NULL), 0);
    for (i = 0; i < WORKERS; i++)
        assert_int_equal(pthread_create(&pl->threads[i], NULL, worker, pl), 0);
}

static void pool_stop(pool *pl)
{
    int i;

    pthread_mutex_lock(&pl->lock);
    pl->quit = 1;
    pthread_cond_broadcast(&pl->cond);
    pthread_mutex_unlock(&pl->lock);
    for (i = 0; i < WORKERS; i++)
        pthread_join(pl->threads[i], NULL);
    assert_null(pl->head);
    pthread_cond_destroy(&pl->cond);
    pthread_mutex_destroy(&pl->lock);
}

/* What a task reports, from its spec: {"mode":"done"|"flaky"|"poll"|
 * "slow"}.  flaky fails its step's first attempt, poll reports NOT_DONE
 * the first time its step starts it, slow takes a while. */
static int pool_exec_start(planctl_job *job, const planctl_task_info *info,
                           void *data)
{
    pool *pl = data;
    work *w = calloc(1, sizeof *w);

    assert_non_null(w);
    if (++pl->starts == pl->hook_at && pl->hook)
        pl->hook(pl->hook_data);
    w->job = job;
    w->outcome = PLANCTL_OUTCOME_DONE;
    if (strstr(info->spec, "\"flaky\"") && info->attempt == 1)
        w->outcome = PLANCTL_OUTCOME_ERROR;
    if (strstr(info->spec, "\"poll\"")) {
        int step = atoi(info->step + 1); /* "s12" */

        assert_true(step >= 0 && step < STEPS);
        if (pl->polls[step]++ == 0)
            w->outcome = PLANCTL_OUTCOME_NOT_DONE;
    }
    pthread_mutex_lock(&pl->lock);
    w->delay_us = (int)(rand_r(&pl->seed) % 3000);
    if (strstr(info->spec, "\"slow\""))
        w->delay_us += 20000;
    if (pl->tail)
        pl->tail->next = w;
    else
        pl->head = w;
    pl->tail = w;
    pthread_cond_signal(&pl->cond);
    pthread_mutex_unlock(&pl->lock);
    return 0;
}

/* The worker finishes the job on its own soon; cancel only counts, and
 * lets held jobs go.  The engine calls this on the loop thread, going
 * through its running jobs while workers finish them: exactly the race
 * this test is for. */
static void pool_exec_cancel(planctl_job *job, void *data)
{
    pool *pl = data;

    (void)job;
    pthread_mutex_lock(&pl->lock);
    pl->cancels++;
    pl->gated = 0;
    pthread_cond_broadcast(&pl->cond);
    pthread_mutex_unlock(&pl->lock);
}

/* How many times cancel() was called (never assert holding the lock: a
 * failed assert leaves the test by longjmp). */
static int cancels(pool *pl)
{
    int n;

    pthread_mutex_lock(&pl->lock);
    n = pl->cancels;
    pthread_mutex_unlock(&pl->lock);
    return n;
}

/* ---- fixture ---- */

typedef struct fixture {
    char *dir, *path;
    planctl *p;
    sqlite3 *db;
    pool pl;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    f->dir = tu_mkdtemp();
    f->path = tu_fmt("%s/tsan.db", f->dir);
    assert_int_equal(planctl_open(&f->p, f->path, NULL), 0);
    assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
    sqlite3_busy_timeout(f->db, 10000);
    assert_int_equal(planctl_kind_register(f->p, "Pool", NULL, NULL), 0);
    pool_start(&f->pl);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    pool_stop(&f->pl);
    sqlite3_close(f->db);
    planctl_close(f->p);
    tu_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

/* A definition: one parallel phase of STEPS steps, each running two Pool
 * tasks of the given modes, three attempts, a short backoff. */
static void apply(fixture *f, const char *mode1, const char *mode2)
{
    char *json = tu_fmt(
        "{\"name\":\"pool\",\"version\":\"%s-%s\",\"tasks\":["
        "{\"name\":\"a\",\"kind\":\"Pool\",\"spec\":{\"mode\":\"%s\"}},"
        "{\"name\":\"b\",\"kind\":\"Pool\",\"spec\":{\"mode\":\"%s\"}}],"
        "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"strategy\":"
        "\"parallel\",\"steps\":[",
        mode1, mode2, mode1, mode2);
    char *steps = tu_fmt("%s", "");
    int i;

    for (i = 0; i < STEPS; i++) {
        char *next = tu_fmt(
            "%s%s{\"name\":\"s%d\",\"tasks\":[\"a\",\"b\"],\"retry\":{"
            "\"attempts\":3,\"backoff\":\"5ms\",\"max_backoff\":\"10ms\"}}",
            steps, i ? "," : "", i);
        free(steps);
        steps = next;
    }
    {
        char *all = tu_fmt("%s%s]}]}}}", json, steps);

        if (planctl_definition_apply(NULL, f->p, all, strlen(all), "t.json"))
            fail_msg("apply: %s", planctl_errmsg(f->p));
        free(all);
    }
    free(steps);
    free(json);
}

typedef struct runner {
    uv_loop_t loop;
    planctl_engine *e;
    uv_timer_t timer;
    fixture *f;
    void (*at)(struct runner *r);
    int stopped;
} runner;

static void on_stopped(planctl_engine *e, void *data)
{
    runner *r = data;

    (void)e;
    r->stopped = 1;
    if (r->at)
        uv_close((uv_handle_t *)&r->timer, NULL);
}

static void on_timer(uv_timer_t *t)
{
    runner *r = t->data;

    r->at(r);
}

/* The pool's hook: at() runs on the loop's next turn. */
static void arm(void *data)
{
    runner *r = data;

    assert_int_equal(uv_timer_start(&r->timer, on_timer, 0, 0), 0);
}

/* Runs an engine until idle (or until at() stops it); at() runs once
 * at_starts tasks have been started, while workers are finishing them.
 * Returns the engine's status. */
static int run_engine(fixture *f, void (*at)(runner *r), int at_starts)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, pool_exec_start,
                           pool_exec_cancel, NULL, NULL};
    runner r;
    int rc;

    memset(&r, 0, sizeof r);
    r.f = f;
    r.at = at;
    ex.data = &f->pl;
    o.until_idle = 1;
    o.task_poll_ms = 5;
    o.change_poll_ms = 10;
    o.concurrency = 64;
    assert_int_equal(uv_loop_init(&r.loop), 0);
    assert_int_equal(planctl_engine_new(&r.e, f->p, &r.loop, &o), 0);
    assert_int_equal(planctl_engine_register(r.e, "Pool", &ex), 0);
    if (at) {
        assert_int_equal(uv_timer_init(&r.loop, &r.timer), 0);
        r.timer.data = &r;
        pthread_mutex_lock(&f->pl.lock);
        f->pl.gated = 1; /* jobs are still running when at() comes */
        pthread_mutex_unlock(&f->pl.lock);
        f->pl.starts = 0;
        f->pl.hook_at = at_starts;
        f->pl.hook = arm;
        f->pl.hook_data = &r;
    }
    assert_int_equal(planctl_engine_start(r.e, on_stopped, &r), 0);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    f->pl.hook = NULL;
    assert_true(r.stopped);
    rc = planctl_engine_status(r.e);
    planctl_engine_free(r.e);
    assert_int_equal(uv_loop_close(&r.loop), 0);
    return rc;
}

static int64_t count(fixture *f, const char *sql)
{
    return tu_scalar(f->db, "%s", sql);
}

static void expect_verified(fixture *f)
{
    char *summary = NULL;

    if (planctl_verify(&summary, f->p) != 0)
        fail_msg("verify: %s", planctl_errmsg(f->p));
    planctl_free(summary);
    assert_int_equal(count(f, "SELECT count(*) FROM attempts WHERE "
                              "finished_at IS NULL"),
                     0);
}

/* Every task finished by a worker thread: retries (flaky), polls
 * (NOT_DONE) and plain completions, all steps in parallel. */
static void test_workers_finish_concurrently(void **state)
{
    fixture *f = *state;
    int64_t run = 0;

    apply(f, "flaky", "poll");
    assert_int_equal(
        planctl_instance_create(&run, f->p, "i", "pool", NULL, NULL, 0), 0);
    assert_int_equal(run_engine(f, NULL, 0), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM runs WHERE status = "
                              "'COMPLETE'"),
                     1);
    /* Each step: attempt 1 fails in task a, attempt 2 runs both. */
    assert_int_equal(count(f, "SELECT count(*) FROM steps WHERE status = "
                              "'COMPLETE' AND attempt = 2"),
                     STEPS);
    assert_int_equal(count(f, "SELECT count(*) FROM attempts WHERE output "
                              "LIKE 'finished by a worker%'"),
                     2 * STEPS);
    expect_verified(f);
}

/* The run is cancelled from another handle while workers are finishing:
 * the engine calls cancel() for the jobs it still sees running while
 * workers report on them. */
static void cancel_now(runner *r)
{
    planctl *other = NULL;

    assert_int_equal(planctl_open(&other, r->f->path, NULL), 0);
    assert_int_equal(planctl_run_cancel(NULL, other, "i", "from a test"), 0);
    planctl_close(other);
}

static void test_cancel_while_finishing(void **state)
{
    fixture *f = *state;
    int64_t run = 0;

    apply(f, "slow", "slow");
    assert_int_equal(
        planctl_instance_create(&run, f->p, "i", "pool", NULL, NULL, 0), 0);
    assert_int_equal(run_engine(f, cancel_now, 8), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM runs WHERE status = "
                              "'CANCELLED'"),
                     1);
    /* The workers held the first round until the engine, seeing the
     * cancel, told its running jobs. */
    assert_true(cancels(&f->pl) > 0);
    expect_verified(f);
}

/* The engine is stopped with no grace while workers are finishing: the
 * shutdown cancels every running job. */
static void stop_now(runner *r)
{
    assert_int_equal(planctl_engine_stop(r->e, 0), 0);
}

static void test_stop_while_finishing(void **state)
{
    fixture *f = *state;
    int64_t run = 0;

    apply(f, "slow", "done");
    assert_int_equal(
        planctl_instance_create(&run, f->p, "i", "pool", NULL, NULL, 0), 0);
    assert_int_equal(run_engine(f, stop_now, 8), 0);
    /* The stop came while the first round was held: jobs were
     * cancelled. */
    assert_true(cancels(&f->pl) > 0);
    /* Interrupted attempts are retried by the next engine, to the end. */
    assert_int_equal(run_engine(f, NULL, 0), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM runs WHERE status = "
                              "'COMPLETE'"),
                     1);
    expect_verified(f);
}

/* Preflight checks served by the pool: all start together on the
 * admission's private loop and finish on worker threads, some after the
 * deadline, which cancels those it sees unfinished. */
static void test_preflight_deadline(void **state)
{
    fixture *f = *state;
    planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, pool_exec_start,
                           pool_exec_cancel, NULL, NULL};
    planctl_admit_options po = PLANCTL_ADMIT_OPTIONS_INIT;
    planctl_admitted ad;
    planctl_engine *e = NULL;
    uv_loop_t loop;
    char *json, *checks = tu_fmt("%s", "");
    int i, rc, timeouts = 0;

    for (i = 0; i < 16; i++) {
        char *next = tu_fmt("%s%s{\"name\":\"c%d\",\"task\":\"%s\"}", checks,
                            i ? "," : "", i, i % 2 ? "quick" : "slowc");
        free(checks);
        checks = next;
    }
    json = tu_fmt("{\"name\":\"pf\",\"version\":\"1\",\"tasks\":["
                  "{\"name\":\"quick\",\"kind\":\"Pool\",\"spec\":{\"mode\":"
                  "\"done\"}},"
                  "{\"name\":\"slowc\",\"kind\":\"Pool\",\"spec\":{\"mode\":"
                  "\"slow\"}}],"
                  "\"plans\":{\"deploy\":{\"preflight\":[%s],\"phases\":[{"
                  "\"name\":\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":["
                  "\"quick\"]}]}]}}}",
                  checks);
    if (planctl_definition_apply(NULL, f->p, json, strlen(json), "pf.json"))
        fail_msg("apply: %s", planctl_errmsg(f->p));
    /* An engine that is never started registers the executor, which
     * then serves the handle's preflight checks too. */
    ex.data = &f->pl;
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(planctl_engine_new(&e, f->p, &loop, NULL), 0);
    assert_int_equal(planctl_engine_register(e, "Pool", &ex), 0);
    for (i = 0; i < 4; i++) {
        char name[16];

        /* A deadline around the slow checks' time: some finish in time,
         * others are cancelled at it while their worker reports. */
        po.preflight_deadline_ms = 18 + i * 2;
        snprintf(name, sizeof name, "pf%d", i);
        rc = planctl_admit_create(&ad, f->p, name, "pf", NULL, NULL, 0, &po);
        planctl_admitted_clear(&ad);
        assert_true(rc == 0 || rc == PLANCTL_ERROR);
        if (rc == PLANCTL_ERROR) {
            assert_non_null(strstr(planctl_errmsg(f->p), "timed out after"));
            timeouts++;
        }
    }
    /* Eight slow checks on six workers cannot all make a deadline of
     * 24 ms: the deadline cancelled checks while workers finished. */
    assert_true(timeouts > 0);
    assert_true(cancels(&f->pl) > 0);
    planctl_engine_free(e);
    assert_int_equal(uv_loop_close(&loop), 0);
    free(json);
    free(checks);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_workers_finish_concurrently),
        T(test_cancel_while_finishing),
        T(test_stop_while_finishing),
        T(test_preflight_deadline),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
