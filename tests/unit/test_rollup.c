/*
 * test_rollup.c - the aggregation rules of DESIGN §3, exhaustively: every
 * combination of child statuses for up to four children, against a
 * reference written from the design's sentences rather than the
 * implementation's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/rollup.h"
#include "core/status.h"

#define N PLANCTL_STATUS__COUNT
#define MAXK 4

/* Advances kids (each 0..N-1) like an odometer; 0 when it wraps. */
static int next_combo(planctl_status *kids, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if ((int)kids[i] + 1 < N) {
            kids[i] = (planctl_status)(kids[i] + 1);
            return 1;
        }
        kids[i] = (planctl_status)0;
    }
    return 0;
}

static int ended_badly(const planctl_status *kids, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (kids[i] == PLANCTL_STATUS_FATAL_ERROR ||
            kids[i] == PLANCTL_STATUS_CANCELLED)
            return 1;
    return 0;
}

/* "serial: a child starts when the previous one is COMPLETE";
 * "parallel: all children start together". */
static int ref_may_start(pctl_strategy s, const planctl_status *kids, size_t n,
                         size_t i)
{
    size_t j;

    if (kids[i] != PLANCTL_STATUS_PENDING || ended_badly(kids, n))
        return 0;
    if (s == PCTL_STRATEGY_PARALLEL)
        return 1;
    for (j = 0; j < i; j++)
        if (kids[j] != PLANCTL_STATUS_COMPLETE)
            return 0;
    return 1;
}

static void test_startable_exhaustive(void **state)
{
    planctl_status kids[MAXK];
    size_t n, i, out[MAXK], got, want;
    int s, combos = 0;

    (void)state;
    for (s = 0; s < 2; s++) {
        for (n = 0; n <= MAXK; n++) {
            memset(kids, 0, sizeof kids);
            do {
                got = pctl_startable((pctl_strategy)s, kids, sizeof kids[0], n,
                                     out);
                for (i = 0, want = 0; i < n; i++) {
                    if (!ref_may_start((pctl_strategy)s, kids, n, i))
                        continue;
                    assert_true(want < got);
                    assert_int_equal(out[want], i);
                    want++;
                }
                assert_int_equal(got, want);
                /* Serial never starts two at once. */
                if (s == PCTL_STRATEGY_SERIAL)
                    assert_true(got <= 1);
                combos++;
            } while (n > 0 && next_combo(kids, n));
        }
    }
    assert_int_equal(combos, 2 * (1 + 9 + 81 + 729 + 6561));
}

/* "A phase is COMPLETE when all its steps are; a run when all its phases
 * are"; "FATAL_ERROR in a step makes its phase and the run FATAL_ERROR". */
static planctl_status ref_rollup(const planctl_status *kids, size_t n)
{
    size_t i, complete = 0, fatal = 0, cancelled = 0, started = 0;

    for (i = 0; i < n; i++) {
        complete += kids[i] == PLANCTL_STATUS_COMPLETE;
        fatal += kids[i] == PLANCTL_STATUS_FATAL_ERROR;
        cancelled += kids[i] == PLANCTL_STATUS_CANCELLED;
        started += kids[i] == PLANCTL_STATUS_IN_PROGRESS ||
                   kids[i] == PLANCTL_STATUS_ERROR ||
                   kids[i] == PLANCTL_STATUS_PAUSED ||
                   kids[i] == PLANCTL_STATUS_COMPLETE;
    }
    if (fatal)
        return PLANCTL_STATUS_FATAL_ERROR;
    if (cancelled)
        return PLANCTL_STATUS_CANCELLED;
    if (complete == n)
        return PLANCTL_STATUS_COMPLETE;
    return started ? PLANCTL_STATUS_IN_PROGRESS : PLANCTL_STATUS_PENDING;
}

static void test_rollup_exhaustive(void **state)
{
    planctl_status kids[MAXK];
    size_t n;

    (void)state;
    for (n = 0; n <= MAXK; n++) {
        memset(kids, 0, sizeof kids);
        do {
            assert_int_equal(pctl_rollup(kids, sizeof kids[0], n),
                             ref_rollup(kids, n));
        } while (n > 0 && next_combo(kids, n));
    }
    /* The examples of DESIGN §3 by name. */
    {
        planctl_status a[] = {PLANCTL_STATUS_COMPLETE, PLANCTL_STATUS_COMPLETE};
        planctl_status b[] = {PLANCTL_STATUS_COMPLETE,
                              PLANCTL_STATUS_FATAL_ERROR,
                              PLANCTL_STATUS_IN_PROGRESS};
        planctl_status c[] = {PLANCTL_STATUS_COMPLETE, PLANCTL_STATUS_ERROR};

        assert_int_equal(pctl_rollup(a, sizeof a[0], 2),
                         PLANCTL_STATUS_COMPLETE);
        assert_int_equal(pctl_rollup(b, sizeof b[0], 3),
                         PLANCTL_STATUS_FATAL_ERROR);
        assert_int_equal(pctl_rollup(c, sizeof c[0], 2),
                         PLANCTL_STATUS_IN_PROGRESS);
    }
}

/* "children that never started end CANCELLED with the message not
 * started: run ended FATAL_ERROR"; running ones are cancelled; terminal
 * ones stay.  Every closing is itself a legal transition for phases and
 * steps alike. */
static void test_close_child_every_status(void **state)
{
    int s, e, ends[2] = {PLANCTL_STATUS_FATAL_ERROR, PLANCTL_STATUS_CANCELLED};

    (void)state;
    for (e = 0; e < 2; e++) {
        for (s = 0; s < N; s++) {
            planctl_status to = PLANCTL_STATUS__COUNT;
            const char *msg = NULL;
            int r = pctl_close_child((planctl_status)s, (planctl_status)ends[e],
                                     &to, &msg);

            if (pctl_status_terminal((planctl_status)s)) {
                assert_int_equal(r, 0);
                continue;
            }
            assert_int_equal(r, 1);
            assert_int_equal(to, PLANCTL_STATUS_CANCELLED);
            if (s == PLANCTL_STATUS_PENDING)
                assert_string_equal(msg, e == 0 ? "not started: run ended "
                                                  "FATAL_ERROR"
                                                : "not started: run cancelled");
            if (s == PLANCTL_STATUS_PENDING ||
                s == PLANCTL_STATUS_IN_PROGRESS || s == PLANCTL_STATUS_ERROR)
                assert_true(planctl_transition_legal(PLANCTL_ENTITY_STEP,
                                                     (planctl_status)s, to));
            if (s == PLANCTL_STATUS_PENDING || s == PLANCTL_STATUS_IN_PROGRESS)
                assert_true(planctl_transition_legal(PLANCTL_ENTITY_PHASE,
                                                     (planctl_status)s, to));
        }
    }
}

/* The per-status invariants of status.h, as a table. */
static void test_invariants_table(void **state)
{
    static const struct {
        planctl_status s;
        int ok[4]; /* (start, finish) = (0,0) (0,1) (1,0) (1,1) */
    } rows[] = {
        {PLANCTL_STATUS_NEVER_RUN, {0, 0, 0, 0}},
        {PLANCTL_STATUS_QUEUED, {1, 0, 0, 0}},
        {PLANCTL_STATUS_PENDING, {1, 0, 0, 0}},
        {PLANCTL_STATUS_IN_PROGRESS, {0, 0, 1, 0}},
        {PLANCTL_STATUS_PAUSED, {0, 0, 1, 0}},
        {PLANCTL_STATUS_ERROR, {0, 0, 1, 0}},
        {PLANCTL_STATUS_COMPLETE, {0, 1, 0, 1}},
        {PLANCTL_STATUS_FATAL_ERROR, {0, 1, 0, 1}},
        {PLANCTL_STATUS_CANCELLED, {0, 1, 0, 1}},
    };
    size_t i;
    int k;

    (void)state;
    assert_int_equal(sizeof rows / sizeof rows[0], N);
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (k = 0; k < 4; k++)
            assert_int_equal(pctl_status_invariant(rows[i].s, k >> 1, k & 1),
                             rows[i].ok[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_startable_exhaustive),
        cmocka_unit_test(test_rollup_exhaustive),
        cmocka_unit_test(test_close_child_every_status),
        cmocka_unit_test(test_invariants_table),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
