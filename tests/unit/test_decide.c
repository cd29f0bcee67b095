/*
 * test_decide.c - the engine's decision function without I/O: each rule on
 * its own, then thousands of random plans driven to the end by simulated
 * task outcomes, checking at every step that each action is a legal
 * transition from the current status, that the strategies hold, that the
 * concurrency limit holds, and that every run ends terminal with no open
 * child.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/decide.h"
#include "core/status.h"

#define S(x) PLANCTL_STATUS_##x
#define MAXP 5
#define MAXS 5

typedef struct tree {
    pctl_run_view run;
    pctl_phase_view phases[MAXP];
    pctl_step_view steps[MAXP][MAXS];
} tree;

/* A run with np phases of ns steps each, everything PENDING. */
static void make(tree *t, pctl_strategy rs, pctl_strategy ps, size_t np,
                 size_t ns, int max_attempts)
{
    size_t i, j;

    memset(t, 0, sizeof *t);
    t->run.status = S(PENDING);
    t->run.strategy = rs;
    t->run.nphases = np;
    t->run.phases = t->phases;
    for (i = 0; i < np; i++) {
        t->phases[i].status = S(PENDING);
        t->phases[i].strategy = ps;
        t->phases[i].nsteps = ns;
        t->phases[i].steps = t->steps[i];
        for (j = 0; j < ns; j++) {
            t->steps[i][j].status = S(PENDING);
            t->steps[i][j].max_attempts = max_attempts;
        }
    }
}

static size_t run_decide(tree *t, int64_t now, int *slots, pctl_action *out,
                         int64_t *wake)
{
    size_t scratch[MAXP > MAXS ? MAXP : MAXS];

    assert_true(pctl_decide_capacity(&t->run) <= 64);
    return pctl_decide(&t->run, now, slots, out, wake, scratch);
}

static int count(const pctl_action *a, size_t n, pctl_target t,
                 planctl_status to)
{
    size_t i;
    int c = 0;

    for (i = 0; i < n; i++)
        c += a[i].target == t && a[i].to == to;
    return c;
}

static void test_serial_starts_one_at_a_time(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 100;
    size_t n;

    (void)state;
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_SERIAL, 2, 3, 3);
    n = run_decide(&t, 1000, &slots, a, &wake);
    /* run, first phase, first step start in one pass, in that order. */
    assert_int_equal(n, 3);
    assert_int_equal(a[0].target, PCTL_TARGET_RUN);
    assert_int_equal(a[1].target, PCTL_TARGET_PHASE);
    assert_int_equal(a[1].phase, 0);
    assert_int_equal(a[2].target, PCTL_TARGET_STEP);
    assert_int_equal(a[2].step, 0);
    assert_int_equal(t.steps[0][0].attempt, 1);
    assert_int_equal(slots, 99);
    assert_int_equal(wake, 0);
    /* Nothing more until that step completes. */
    assert_int_equal(run_decide(&t, 1000, &slots, a, &wake), 0);
    t.steps[0][0].status = S(COMPLETE);
    n = run_decide(&t, 1000, &slots, a, &wake);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].step, 1);
}

static void test_parallel_starts_all_within_slots(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 3;
    size_t n;

    (void)state;
    make(&t, PCTL_STRATEGY_PARALLEL, PCTL_STRATEGY_PARALLEL, 2, 2, 3);
    n = run_decide(&t, 0, &slots, a, &wake);
    assert_int_equal(count(a, n, PCTL_TARGET_PHASE, S(IN_PROGRESS)), 2);
    assert_int_equal(count(a, n, PCTL_TARGET_STEP, S(IN_PROGRESS)), 3);
    assert_int_equal(slots, 0);
    /* The fourth waits for a slot, not for time. */
    assert_int_equal(wake, 0);
    slots = 1;
    n = run_decide(&t, 0, &slots, a, &wake);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].phase, 1);
    assert_int_equal(a[0].step, 1);
}

/* starved: a due step found no slot (the run waits for one, and says so
 * in status); not when every due step started, nor for a paused run, nor
 * for a step whose next try is not due yet. */
static void test_starved_for_a_slot(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 1;

    (void)state;
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_PARALLEL, 1, 3, 3);
    run_decide(&t, 0, &slots, a, &wake);
    assert_int_equal(slots, 0);
    assert_int_equal(t.run.starved, 1); /* two steps wait for a slot */
    slots = 0;
    assert_int_equal(run_decide(&t, 0, &slots, a, &wake), 0);
    assert_int_equal(t.run.starved, 1);
    slots = 5;
    run_decide(&t, 0, &slots, a, &wake);
    assert_int_equal(slots, 3);
    assert_int_equal(t.run.starved, 0); /* every due step started */
    /* A try that failed: waiting for its backoff is no lack of slots. */
    t.steps[0][0].status = S(ERROR);
    t.steps[0][0].next_attempt_at = 5000;
    slots = 0;
    run_decide(&t, 1000, &slots, a, &wake);
    assert_int_equal(t.run.starved, 0);
    /* Due, and no slot. */
    run_decide(&t, 5000, &slots, a, &wake);
    assert_int_equal(t.run.starved, 1);
    /* Paused: nothing is due to start. */
    t.run.status = S(PAUSED);
    run_decide(&t, 5000, &slots, a, &wake);
    assert_int_equal(t.run.starved, 0);
}

static void test_completion_rolls_up(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 10;
    size_t n;

    (void)state;
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_PARALLEL, 1, 2, 3);
    run_decide(&t, 0, &slots, a, &wake);
    t.steps[0][0].status = S(COMPLETE);
    t.steps[0][1].status = S(COMPLETE);
    n = run_decide(&t, 0, &slots, a, &wake);
    assert_int_equal(n, 2);
    assert_int_equal(a[0].target, PCTL_TARGET_PHASE);
    assert_int_equal(a[0].to, S(COMPLETE));
    assert_int_equal(a[1].target, PCTL_TARGET_RUN);
    assert_int_equal(a[1].to, S(COMPLETE));
    assert_int_equal(t.run.status, S(COMPLETE));
    assert_int_equal(run_decide(&t, 0, &slots, a, &wake), 0);
}

static void test_retry_waits_for_backoff(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 10;
    size_t n;

    (void)state;
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_SERIAL, 1, 1, 3);
    run_decide(&t, 0, &slots, a, &wake);
    t.steps[0][0].status = S(ERROR);
    t.steps[0][0].next_attempt_at = 5000;
    assert_int_equal(run_decide(&t, 4999, &slots, a, &wake), 0);
    assert_int_equal(wake, 5000);
    n = run_decide(&t, 5000, &slots, a, &wake);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].from, S(ERROR));
    assert_int_equal(a[0].to, S(IN_PROGRESS));
    assert_int_equal(a[0].why, PCTL_WHY_RETRY);
    assert_int_equal(t.steps[0][0].attempt, 2);
    /* Paused: a due retry does not start. */
    t.steps[0][0].status = S(ERROR);
    t.run.status = S(PAUSED);
    assert_int_equal(run_decide(&t, 9000, &slots, a, &wake), 0);
}

/* A busy step (its cancelled try has not reported) never retries, however
 * due, and sets no wake time: the report decides it again.  Its input is
 * read, never changed.  Out of tries, it still gives up. */
static void test_busy_step_waits_for_its_report(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 10;

    (void)state;
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_SERIAL, 1, 1, 3);
    run_decide(&t, 0, &slots, a, &wake);
    t.steps[0][0].status = S(ERROR);
    t.steps[0][0].next_attempt_at = 5000;
    t.steps[0][0].busy = 1;
    slots = 10;
    assert_int_equal(run_decide(&t, 9000, &slots, a, &wake), 0);
    assert_int_equal(wake, 0); /* none */
    assert_int_equal(t.steps[0][0].next_attempt_at, 5000);
    assert_int_equal(t.steps[0][0].status, S(ERROR));
    assert_int_equal(slots, 10);
    t.steps[0][0].busy = 0;
    assert_int_equal(run_decide(&t, 9000, &slots, a, &wake), 1);
    assert_int_equal(a[0].why, PCTL_WHY_RETRY);
    t.steps[0][0].status = S(ERROR);
    t.steps[0][0].attempt = 3;
    t.steps[0][0].busy = 1;
    assert_true(run_decide(&t, 9000, &slots, a, &wake) > 0);
    assert_int_equal(a[0].to, S(FATAL_ERROR));
    assert_int_equal(a[0].why, PCTL_WHY_EXHAUSTED);
}

/* One phase of ns steps, 3 tries each, the run and the phase started and
 * every step PENDING. */
static void one_phase_started(tree *t, pctl_strategy ps, size_t ns)
{
    make(t, PCTL_STRATEGY_SERIAL, ps, 1, ns, 3);
    t->run.status = S(IN_PROGRESS);
    t->phases[0].status = S(IN_PROGRESS);
}

/* A PENDING step a try still runs (its start was lost while the engine's
 * job ran on) does not start until that try reports: it takes no slot,
 * sets no wake time and does not make the run starved; the other steps of
 * a parallel phase start beside it, and a serial phase waits. */
static void test_busy_pending_step_waits_for_its_report(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 10;
    size_t n;

    (void)state;
    one_phase_started(&t, PCTL_STRATEGY_SERIAL, 2);
    t.steps[0][0].busy = 1;
    assert_int_equal(run_decide(&t, 0, &slots, a, &wake), 0);
    assert_int_equal(wake, 0);
    assert_int_equal(slots, 10);
    assert_int_equal(t.run.starved, 0);
    assert_int_equal(t.steps[0][0].status, S(PENDING));
    assert_int_equal(t.steps[0][0].attempt, 0);
    t.steps[0][0].busy = 0;
    n = run_decide(&t, 0, &slots, a, &wake);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].step, 0);
    assert_int_equal(a[0].why, PCTL_WHY_START);
    assert_int_equal(slots, 9);

    one_phase_started(&t, PCTL_STRATEGY_PARALLEL, 3);
    t.steps[0][1].busy = 1;
    slots = 10;
    n = run_decide(&t, 0, &slots, a, &wake);
    assert_int_equal(count(a, n, PCTL_TARGET_STEP, S(IN_PROGRESS)), 2);
    assert_int_equal(t.steps[0][0].status, S(IN_PROGRESS));
    assert_int_equal(t.steps[0][1].status, S(PENDING));
    assert_int_equal(t.steps[0][2].status, S(IN_PROGRESS));
    assert_int_equal(slots, 8);
    assert_int_equal(t.run.starved, 0);
    /* One slot: the first free step takes it, the next due one starves
     * (the busy one does not count). */
    one_phase_started(&t, PCTL_STRATEGY_PARALLEL, 3);
    t.steps[0][0].busy = 1;
    slots = 1;
    n = run_decide(&t, 0, &slots, a, &wake);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].step, 1);
    assert_int_equal(t.run.starved, 1);
    /* No slot and nothing due but the busy step: not starved. */
    t.steps[0][2].status = S(COMPLETE);
    slots = 0;
    assert_int_equal(run_decide(&t, 0, &slots, a, &wake), 0);
    assert_int_equal(t.run.starved, 0);
}

static void test_exhausted_fails_run(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 10;
    size_t n;

    (void)state;
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_PARALLEL, 2, 2, 2);
    run_decide(&t, 0, &slots, a, &wake);
    t.steps[0][0].status = S(ERROR);
    t.steps[0][0].attempt = 2; /* used both */
    n = run_decide(&t, 0, &slots, a, &wake);
    /* step gives up, phase fails, children close, run fails. */
    assert_int_equal(n, 4);
    assert_int_equal(a[0].target, PCTL_TARGET_STEP);
    assert_int_equal(a[0].to, S(FATAL_ERROR));
    assert_int_equal(a[0].why, PCTL_WHY_EXHAUSTED);
    assert_int_equal(a[1].target, PCTL_TARGET_PHASE);
    assert_int_equal(a[1].to, S(FATAL_ERROR));
    assert_int_equal(a[2].target, PCTL_TARGET_CLOSE);
    assert_int_equal(a[3].target, PCTL_TARGET_RUN);
    assert_int_equal(a[3].to, S(FATAL_ERROR));
    /* The running sibling and the unstarted phase are closed. */
    assert_int_equal(t.steps[0][1].status, S(CANCELLED));
    assert_int_equal(t.phases[1].status, S(CANCELLED));
    assert_int_equal(t.steps[1][0].status, S(CANCELLED));
}

static void test_step_timeout(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 10;
    size_t n;

    (void)state;
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_SERIAL, 1, 1, 2);
    run_decide(&t, 0, &slots, a, &wake);
    t.steps[0][0].deadline_at = 3000;
    assert_int_equal(run_decide(&t, 2000, &slots, a, &wake), 0);
    assert_int_equal(wake, 3000);
    n = run_decide(&t, 3000, &slots, a, &wake);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].to, S(ERROR));
    assert_int_equal(a[0].why, PCTL_WHY_TIMEOUT);
    /* On the last attempt a timeout is fatal. */
    t.steps[0][0].status = S(IN_PROGRESS);
    t.steps[0][0].attempt = 2;
    n = run_decide(&t, 3000, &slots, a, &wake);
    assert_int_equal(a[0].to, S(FATAL_ERROR));
    assert_int_equal(t.run.status, S(FATAL_ERROR));
    /* Timeouts still fire while paused. */
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_SERIAL, 1, 1, 2);
    run_decide(&t, 0, &slots, a, &wake);
    t.run.status = S(PAUSED);
    t.steps[0][0].deadline_at = 10;
    n = run_decide(&t, 10, &slots, a, &wake);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].why, PCTL_WHY_TIMEOUT);
}

static void test_run_deadline(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 10;
    size_t n;

    (void)state;
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_SERIAL, 2, 1, 2);
    t.run.deadline_at = 60000;
    run_decide(&t, 0, &slots, a, &wake);
    assert_int_equal(wake, 60000);
    n = run_decide(&t, 60000, &slots, a, &wake);
    assert_int_equal(a[n - 1].target, PCTL_TARGET_RUN);
    assert_int_equal(a[n - 1].why, PCTL_WHY_DEADLINE);
    assert_int_equal(t.steps[0][0].status, S(CANCELLED));
}

/* At the limit of events per run the run ends as at its deadline, but not
 * while paused (a paused run cannot end); resumed, it ends at once. */
static void test_run_event_limit(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 10;
    size_t n;

    (void)state;
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_SERIAL, 2, 1, 2);
    run_decide(&t, 0, &slots, a, &wake);
    t.run.status = S(PAUSED);
    t.run.event_limit = 1;
    n = run_decide(&t, 5, &slots, a, &wake);
    assert_int_equal(t.run.status, S(PAUSED));
    for (size_t k = 0; k < n; k++)
        assert_int_not_equal(a[k].why, PCTL_WHY_EVENTS);
    t.run.status = S(IN_PROGRESS);
    n = run_decide(&t, 5, &slots, a, &wake);
    assert_int_equal(a[0].target, PCTL_TARGET_CLOSE);
    assert_int_equal(a[n - 1].target, PCTL_TARGET_RUN);
    assert_int_equal(a[n - 1].to, S(FATAL_ERROR));
    assert_int_equal(a[n - 1].why, PCTL_WHY_EVENTS);
    assert_int_equal(t.run.status, S(FATAL_ERROR));
    assert_int_equal(t.steps[0][0].status, S(CANCELLED));
    assert_int_equal(t.steps[1][0].status, S(CANCELLED));
}

static void test_paused_run_does_not_end(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 10;
    size_t n;

    (void)state;
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_SERIAL, 2, 1, 2);
    run_decide(&t, 0, &slots, a, &wake);
    t.run.status = S(PAUSED);
    t.steps[0][0].status = S(COMPLETE);
    n = run_decide(&t, 0, &slots, a, &wake);
    /* The phase may complete; the next phase does not start. */
    assert_int_equal(n, 1);
    assert_int_equal(a[0].target, PCTL_TARGET_PHASE);
    assert_int_equal(t.phases[1].status, S(PENDING));
    t.run.status = S(IN_PROGRESS); /* resumed */
    n = run_decide(&t, 0, &slots, a, &wake);
    assert_int_equal(n, 2);
    assert_int_equal(t.steps[1][0].status, S(IN_PROGRESS));
}

static void test_queued_and_terminal_untouched(void **state)
{
    tree t;
    pctl_action a[64];
    int64_t wake;
    int slots = 10;

    (void)state;
    make(&t, PCTL_STRATEGY_SERIAL, PCTL_STRATEGY_SERIAL, 1, 1, 2);
    t.run.status = S(QUEUED);
    assert_int_equal(run_decide(&t, 0, &slots, a, &wake), 0);
    t.run.status = S(CANCELLED);
    assert_int_equal(run_decide(&t, 0, &slots, a, &wake), 0);
}

static void test_backoff(void **state)
{
    pctl_retry r = {5, 1000, 2.0, 60000};

    (void)state;
    assert_int_equal(pctl_backoff(&r, 2), 1000);
    assert_int_equal(pctl_backoff(&r, 3), 2000);
    assert_int_equal(pctl_backoff(&r, 4), 4000);
    assert_int_equal(pctl_backoff(&r, 10), 60000);
    r.multiplier = 1;
    assert_int_equal(pctl_backoff(&r, 50), 1000);
}

/* ---- random simulation ---- */

static uint64_t rng, cur_seed;
static int verbose;

static void dump(const tree *t, const pctl_action *a, size_t n, int64_t now)
{
    size_t i, j;

    print_message("now=%lld run=%s:", (long long)now,
                  planctl_status_name(t->run.status));
    for (i = 0; i < t->run.nphases; i++) {
        print_message(" [%s %s:", t->phases[i].strategy ? "par" : "ser",
                      planctl_status_name(t->phases[i].status));
        for (j = 0; j < t->phases[i].nsteps; j++)
            print_message(" %s/%d", planctl_status_name(t->steps[i][j].status),
                          t->steps[i][j].attempt);
        print_message("]");
    }
    print_message("\n");
    for (i = 0; i < n; i++)
        print_message("   action target=%d %zu.%zu %s->%s why=%d\n",
                      a[i].target, a[i].phase, a[i].step,
                      planctl_status_name(a[i].from),
                      planctl_status_name(a[i].to), a[i].why);
}

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static planctl_status *status_of(tree *t, const pctl_action *a)
{
    if (a->target == PCTL_TARGET_RUN)
        return &t->run.status;
    if (a->target == PCTL_TARGET_PHASE)
        return &t->phases[a->phase].status;
    return &t->steps[a->phase][a->step].status;
}

static int running(const tree *t)
{
    size_t i, j;
    int n = 0;

    for (i = 0; i < t->run.nphases; i++)
        for (j = 0; j < t->phases[i].nsteps; j++)
            n += t->steps[i][j].status == S(IN_PROGRESS);
    return n;
}

/* Serial: at most one child away from PENDING/COMPLETE, and every child
 * before it COMPLETE. */
static void check_serial(const planctl_status *kids, size_t stride, size_t n,
                         int ended)
{
    size_t i;
    int open_seen = 0;

    if (ended)
        return;
    for (i = 0; i < n; i++) {
        planctl_status k =
            *(const planctl_status *)(const void *)((const char *)kids +
                                                    i * stride);

        if (k == S(PENDING)) {
            open_seen = 1;
        } else {
            if (open_seen) {
                size_t m;

                for (m = 0; m < n; m++)
                    print_message(
                        "%s ",
                        planctl_status_name(*(
                            const planctl_status *)(const void *)((const char *)
                                                                      kids +
                                                                  m * stride)));
                fail_msg("serial order broken (seed %llu)",
                         (unsigned long long)cur_seed);
            }
            if (k != S(COMPLETE))
                open_seen = 1;
        }
    }
}

/* What the simulations went through, so the test can tell it covered
 * the interesting paths. */
static int n_complete, n_fatal, n_deadline, n_paused, n_retried;

static void simulate(uint64_t seed)
{
    tree before, t;
    pctl_action a[64];
    int64_t now = 0, wake;
    int slots_cap = 1 + (int)rnd(4), slots, iter, ran_before;
    size_t n, i, j, k;

    rng = cur_seed = seed;
    make(&t, rnd(2) ? PCTL_STRATEGY_PARALLEL : PCTL_STRATEGY_SERIAL,
         rnd(2) ? PCTL_STRATEGY_PARALLEL : PCTL_STRATEGY_SERIAL, 1 + rnd(MAXP),
         1 + rnd(MAXS), 1 + (int)rnd(3));
    for (i = 0; i < t.run.nphases; i++) /* mixed strategies per phase */
        t.phases[i].strategy =
            rnd(2) ? PCTL_STRATEGY_PARALLEL : PCTL_STRATEGY_SERIAL;
    if (rnd(4) == 0)
        t.run.deadline_at = 50 + rnd(200);
    for (iter = 0; iter < 2000; iter++) {
        ran_before = running(&t);
        slots = slots_cap - ran_before;
        before = t;
        if (verbose)
            dump(&t, a, 0, now);
        n = run_decide(&t, now, &slots, a, &wake);
        if (verbose)
            dump(&t, a, n, now);
        assert_true(slots >= 0);
        assert_true(running(&t) <= slots_cap);
        /* Replay the actions on the old tree: each must be legal from the
         * status its target has at that point. */
        for (k = 0; k < n; k++) {
            before.run.phases = before.phases;
            if (a[k].target == PCTL_TARGET_CLOSE)
                continue;
            assert_int_equal(*status_of(&before, &a[k]), a[k].from);
            assert_true(planctl_transition_legal(
                a[k].target == PCTL_TARGET_RUN     ? PLANCTL_ENTITY_RUN
                : a[k].target == PCTL_TARGET_PHASE ? PLANCTL_ENTITY_PHASE
                                                   : PLANCTL_ENTITY_STEP,
                a[k].from, a[k].to));
            *status_of(&before, &a[k]) = a[k].to;
        }
        if (t.run.strategy == PCTL_STRATEGY_SERIAL)
            check_serial(&t.phases[0].status, sizeof t.phases[0], t.run.nphases,
                         pctl_status_terminal(t.run.status));
        for (i = 0; i < t.run.nphases; i++) {
            if (t.phases[i].strategy == PCTL_STRATEGY_SERIAL)
                check_serial(&t.steps[i][0].status, sizeof t.steps[i][0],
                             t.phases[i].nsteps,
                             pctl_status_terminal(t.phases[i].status));
            for (j = 0; j < t.phases[i].nsteps; j++) {
                /* A step runs only inside a running phase. */
                if (t.steps[i][j].status == S(IN_PROGRESS))
                    assert_int_equal(t.phases[i].status, S(IN_PROGRESS));
                if (t.steps[i][j].status == S(IN_PROGRESS) &&
                    t.steps[i][j].attempt > t.steps[i][j].max_attempts)
                    fail_msg("seed %llu: attempt %d of %d",
                             (unsigned long long)seed, t.steps[i][j].attempt,
                             t.steps[i][j].max_attempts);
            }
        }
        if (pctl_status_terminal(t.run.status)) {
            for (i = 0; i < t.run.nphases; i++) {
                assert_true(pctl_status_terminal(t.phases[i].status));
                for (j = 0; j < t.phases[i].nsteps; j++)
                    assert_true(pctl_status_terminal(t.steps[i][j].status));
            }
            n_complete += t.run.status == S(COMPLETE);
            n_fatal += t.run.status == S(FATAL_ERROR);
            for (k = 0; k < n; k++)
                n_deadline += a[k].why == PCTL_WHY_DEADLINE;
            if (t.run.status == S(COMPLETE))
                for (i = 0; i < t.run.nphases; i++)
                    for (j = 0; j < t.phases[i].nsteps; j++)
                        assert_int_equal(t.steps[i][j].status, S(COMPLETE));
            return;
        }
        /* Simulated executors: each running step may finish. */
        for (i = 0; i < t.run.nphases; i++) {
            for (j = 0; j < t.phases[i].nsteps; j++) {
                pctl_step_view *s = &t.steps[i][j];

                if (s->status != S(IN_PROGRESS) || rnd(3) == 0)
                    continue;
                switch (rnd(10)) {
                case 0:
                    s->status = S(FATAL_ERROR);
                    break;
                case 1:
                case 2:
                case 3:
                    s->status = S(ERROR);
                    s->next_attempt_at = now + rnd(20);
                    break;
                case 4:
                    s->deadline_at = now; /* times out next pass */
                    break;
                default:
                    s->status = S(COMPLETE);
                }
            }
        }
        /* Now and then the operator pauses or resumes. */
        for (k = 0; k < n; k++)
            n_retried += a[k].why == PCTL_WHY_RETRY;
        if (rnd(20) == 0 && t.run.status == S(IN_PROGRESS)) {
            t.run.status = S(PAUSED);
            n_paused++;
        } else if (t.run.status == S(PAUSED) && rnd(3) == 0)
            t.run.status = S(IN_PROGRESS);
        now += wake > now ? (rnd(2) ? wake - now : 1) : 1 + rnd(5);
    }
    fail_msg("seed %llu: run did not end in 2000 passes",
             (unsigned long long)seed);
}

static void test_random_runs_end_cleanly(void **state)
{
    uint64_t seed;

    (void)state;
    if (getenv("PLANCTL_DECIDE_SEED")) {
        verbose = 1;
        simulate(strtoull(getenv("PLANCTL_DECIDE_SEED"), NULL, 10));
        return;
    }
    for (seed = 1; seed <= 20000; seed++)
        simulate(seed * 0x9e3779b97f4a7c15ULL);
    print_message("20000 runs: %d COMPLETE, %d FATAL_ERROR (%d by deadline), "
                  "%d pauses, %d retries\n",
                  n_complete, n_fatal, n_deadline, n_paused, n_retried);
    assert_int_equal(n_complete + n_fatal, 20000);
    assert_true(n_complete > 2000 && n_fatal > 2000);
    assert_true(n_deadline > 100 && n_paused > 1000 && n_retried > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serial_starts_one_at_a_time),
        cmocka_unit_test(test_parallel_starts_all_within_slots),
        cmocka_unit_test(test_starved_for_a_slot),
        cmocka_unit_test(test_completion_rolls_up),
        cmocka_unit_test(test_busy_step_waits_for_its_report),
        cmocka_unit_test(test_busy_pending_step_waits_for_its_report),
        cmocka_unit_test(test_retry_waits_for_backoff),
        cmocka_unit_test(test_exhausted_fails_run),
        cmocka_unit_test(test_step_timeout),
        cmocka_unit_test(test_run_deadline),
        cmocka_unit_test(test_run_event_limit),
        cmocka_unit_test(test_paused_run_does_not_end),
        cmocka_unit_test(test_queued_and_terminal_untouched),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_random_runs_end_cleanly),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
