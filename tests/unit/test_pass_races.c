/*
 * test_pass_races.c - a task's report and the end of its step in the same
 * engine pass.  A step B is running; in one loop callback B's task
 * reports an outcome (DONE, NOT_DONE, ERROR, FATAL) and something else
 * happens to its run: another handle cancels or pauses it, a sibling
 * fails fatally, or the run's deadline passes.  Both land in the engine's
 * next pass.  Whatever the mix, once the run is terminal no job of it is
 * alive, no task of it starts, and no attempt is open; a paused run goes
 * on once resumed.  Every case runs with B of one task and of two, and
 * with A and B as siblings in a parallel phase or in parallel phases.
 *
 * The executor is the test's own ("Manual"): it holds every job until the
 * test reports for it.  For the deadline, the test's callback sleeps past
 * it before B reports (the engine measures on the monotonic clock, so the
 * deadline has passed for it too when its next pass runs).  A watchdog
 * stops an engine that would otherwise never go idle, and the test then
 * fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <unistd.h>
#include <uv.h>

#include "planctl.h"
#include "testutil.h"

typedef enum event { EV_CANCEL, EV_FATAL_SIBLING, EV_DEADLINE, EV_PAUSE } event;

static const char *const event_names[] = {"cancel", "fatal sibling", "deadline",
                                          "pause"};

#define MAX_JOBS 16

typedef struct job_rec {
    planctl_job *job;
    char step[16];
    int task;
} job_rec;

typedef struct race {
    char *dir, *path;
    planctl *p, *p2;
    uv_loop_t loop;
    planctl_engine *e;
    uv_timer_t tick, watchdog;
    int stopped, fired, watchdog_fired, ticks;
    event ev;
    planctl_outcome outcome;
    job_rec live[MAX_JOBS];
    int nlive;
    int starts_after; /* tasks started after the event */
    int cancels;
} race;

static int task_index(const char *task)
{
    return strcmp(task, "m2") == 0 ? 1 : 0;
}

static int manual_start(planctl_job *job, const planctl_task_info *info,
                        void *data)
{
    race *r = data;
    job_rec *j;

    assert_true(r->nlive < MAX_JOBS);
    j = &r->live[r->nlive++];
    j->job = job;
    snprintf(j->step, sizeof j->step, "%s", info->step);
    j->task = task_index(info->task);
    if (r->fired)
        r->starts_after++;
    return 0;
}

static void forget(race *r, int i)
{
    r->live[i] = r->live[--r->nlive];
}

static void manual_cancel(planctl_job *job, void *data)
{
    race *r = data;
    int i;

    for (i = 0; i < r->nlive; i++)
        if (r->live[i].job == job) {
            forget(r, i);
            r->cancels++;
            planctl_step_finish(job, PLANCTL_OUTCOME_ERROR, "stopped");
            return;
        }
}

/* Reports for the live job of step (task 0 or 1); 0 when there is none. */
static int report(race *r, const char *step, planctl_outcome o, const char *msg)
{
    int i;

    for (i = 0; i < r->nlive; i++)
        if (strcmp(r->live[i].step, step) == 0) {
            planctl_job *job = r->live[i].job;

            forget(r, i);
            assert_int_equal(planctl_step_finish(job, o, msg), 0);
            return 1;
        }
    return 0;
}

static int has_job(const race *r, const char *step)
{
    int i;

    for (i = 0; i < r->nlive; i++)
        if (strcmp(r->live[i].step, step) == 0)
            return 1;
    return 0;
}

static void fire(race *r)
{
    switch (r->ev) {
    case EV_CANCEL:
        assert_int_equal(planctl_run_cancel(NULL, r->p2, "i", "race"), 0);
        break;
    case EV_PAUSE:
        assert_int_equal(planctl_run_pause(NULL, r->p2, "i"), 0);
        break;
    case EV_FATAL_SIBLING:
        assert_true(report(r, "a", PLANCTL_OUTCOME_FATAL, "sibling failed"));
        break;
    case EV_DEADLINE:
        usleep(1100 * 1000); /* the plan's deadline is 1s */
        break;
    }
    /* B's report lands in the same pass as the event. */
    assert_true(report(r, "b", r->outcome, "b reported"));
    r->fired = 1;
}

static void on_tick(uv_timer_t *t)
{
    race *r = t->data;

    r->ticks++;
    if (!r->fired) {
        if (has_job(r, "a") && has_job(r, "b"))
            fire(r);
        return;
    }
    /* After the event: a paused run is resumed, and every job that
     * is (still or again) running completes, so a run that goes on can
     * finish. */
    if (r->ev == EV_PAUSE && r->ticks % 5 == 0) {
        int64_t out = 0;

        planctl_run_resume(&out, r->p2, "i");
    }
    while (r->nlive > 0)
        report(r, r->live[0].step, PLANCTL_OUTCOME_DONE, NULL);
}

static void on_watchdog(uv_timer_t *t)
{
    race *r = t->data;

    r->watchdog_fired = 1;
    planctl_engine_stop(r->e, 0);
}

static void on_stopped(planctl_engine *e, void *data)
{
    race *r = data;

    (void)e;
    r->stopped = 1;
    uv_close((uv_handle_t *)&r->tick, NULL);
    uv_close((uv_handle_t *)&r->watchdog, NULL);
}

static const char *const step_b[] = {"[\"m1\"]", "[\"m1\",\"m2\"]"};

static void apply_def(race *r, int two_tasks, int phases, const char *deadline)
{
    char *json;
    const char *b = step_b[two_tasks];

    if (phases)
        json = tu_fmt(
            "{\"name\":\"r\",\"version\":\"1\",\"tasks\":["
            "{\"name\":\"m1\",\"kind\":\"Manual\"},"
            "{\"name\":\"m2\",\"kind\":\"Manual\"}],\"plans\":{\"deploy\":{"
            "\"strategy\":\"parallel\",\"deadline\":\"%s\",\"phases\":["
            "{\"name\":\"pa\",\"steps\":[{\"name\":\"a\",\"tasks\":[\"m1\"]}]},"
            "{\"name\":\"pb\",\"steps\":[{\"name\":\"b\",\"tasks\":%s,"
            "\"retry\":{\"backoff\":\"10ms\"}}]}]}}}",
            deadline, b);
    else
        json = tu_fmt(
            "{\"name\":\"r\",\"version\":\"1\",\"tasks\":["
            "{\"name\":\"m1\",\"kind\":\"Manual\"},"
            "{\"name\":\"m2\",\"kind\":\"Manual\"}],\"plans\":{\"deploy\":{"
            "\"deadline\":\"%s\",\"phases\":[{\"name\":\"p\",\"strategy\":"
            "\"parallel\",\"steps\":[{\"name\":\"a\",\"tasks\":[\"m1\"]},"
            "{\"name\":\"b\",\"tasks\":%s,\"retry\":{\"backoff\":"
            "\"10ms\"}}]}]}}}",
            deadline, b);
    if (planctl_definition_apply(NULL, r->p, json, strlen(json), "r.json"))
        fail_msg("apply: %s", planctl_errmsg(r->p));
    free(json);
}

static void one_case(event ev, planctl_outcome o, int two_tasks, int phases)
{
    race r;
    planctl_engine_options opts = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, manual_start,
                           manual_cancel, NULL, NULL};
    tu_raw *db;
    char *file;
    int64_t run = 0;
    char *status;
    const char *want;

    memset(&r, 0, sizeof r);
    r.ev = ev;
    r.outcome = o;
    r.dir = tu_mkdtemp();
    file = tu_fmt("%s/race.db", r.dir);
    r.path = tu_db_target(file);
    free(file);
    if (planctl_open(&r.p, r.path, NULL) != 0 ||
        planctl_open(&r.p2, r.path, NULL) != 0)
        fail_msg("open %s: %s", r.path, planctl_errmsg(r.p2 ? r.p2 : r.p));
    assert_int_equal(planctl_kind_register(r.p, "Manual", NULL, NULL), 0);
    apply_def(&r, two_tasks, phases, ev == EV_DEADLINE ? "1s" : "1h");
    if (planctl_instance_create(&run, r.p, "i", "r", NULL, NULL, 0))
        fail_msg("create: %s", planctl_errmsg(r.p));

    ex.data = &r;
    opts.until_idle = 1;
    opts.change_poll_ms = 5;
    opts.task_poll_ms = 20;
    assert_int_equal(uv_loop_init(&r.loop), 0);
    assert_int_equal(planctl_engine_new(&r.e, r.p, &r.loop, &opts), 0);
    assert_int_equal(planctl_engine_register(r.e, "Manual", &ex), 0);
    assert_int_equal(planctl_engine_start(r.e, on_stopped, &r), 0);
    uv_timer_init(&r.loop, &r.tick);
    uv_timer_init(&r.loop, &r.watchdog);
    r.tick.data = r.watchdog.data = &r;
    uv_timer_start(&r.tick, on_tick, 10, 10);
    uv_timer_start(&r.watchdog, on_watchdog, 20000, 0);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    assert_true(r.stopped);
    planctl_engine_free(r.e);
    assert_int_equal(uv_loop_close(&r.loop), 0);

    db = tu_raw_open(r.path);
    status = tu_raw_text(db, "SELECT status FROM runs WHERE id = %lld",
                         (long long)run);
    if (ev == EV_PAUSE)
        /* Resumed, and everything then completes; B's fatal failure
         * fails the run once it is resumed. */
        want = o == PLANCTL_OUTCOME_FATAL ? "FATAL_ERROR" : "COMPLETE";
    else if (ev == EV_CANCEL)
        want = "CANCELLED";
    else
        want = "FATAL_ERROR";
    if (r.watchdog_fired || strcmp(status, want) != 0 ||
        (ev != EV_PAUSE && (r.starts_after != 0 || r.nlive != 0)))
        fail_msg("%s with b reporting %d (%s, %s): run %s (want %s), %d "
                 "task(s) started after the event, %d job(s) alive, %s",
                 event_names[ev], (int)o, two_tasks ? "two tasks" : "one task",
                 phases ? "parallel phases" : "parallel steps", status, want,
                 r.starts_after, r.nlive,
                 r.watchdog_fired ? "the engine never went idle"
                                  : "the engine went idle");
    /* Nothing left open: every child terminal, every attempt closed. */
    assert_int_equal(tu_raw_scalar(db,
                                   "SELECT count(*) FROM steps WHERE status "
                                   "NOT IN ('COMPLETE','FATAL_ERROR',"
                                   "'CANCELLED')"),
                     0);
    assert_int_equal(tu_raw_scalar(db,
                                   "SELECT count(*) FROM phases WHERE status "
                                   "NOT IN ('COMPLETE','FATAL_ERROR',"
                                   "'CANCELLED')"),
                     0);
    assert_int_equal(
        tu_raw_scalar(
            db, "SELECT count(*) FROM attempts WHERE finished_at IS NULL"),
        0);
    free(status);
    tu_raw_close(db);
    planctl_close(r.p2);
    planctl_close(r.p);
    tu_rmtree(r.dir);
    free(r.path);
    free(r.dir);
}

static const planctl_outcome outcomes[] = {
    PLANCTL_OUTCOME_DONE, PLANCTL_OUTCOME_NOT_DONE, PLANCTL_OUTCOME_ERROR,
    PLANCTL_OUTCOME_FATAL};

static void every_mix(event ev)
{
    size_t o;
    int two, phases;

    for (o = 0; o < sizeof outcomes / sizeof outcomes[0]; o++)
        for (two = 0; two < 2; two++)
            for (phases = 0; phases < 2; phases++)
                one_case(ev, outcomes[o], two, phases);
}

static void test_cancel(void **state)
{
    (void)state;
    every_mix(EV_CANCEL);
}

static void test_fatal_sibling(void **state)
{
    (void)state;
    every_mix(EV_FATAL_SIBLING);
}

static void test_deadline(void **state)
{
    (void)state;
    every_mix(EV_DEADLINE);
}

static void test_pause(void **state)
{
    (void)state;
    every_mix(EV_PAUSE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_fatal_sibling),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_pause),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
