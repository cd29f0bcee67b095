/*
 * test_marks.c - what a status change writes besides the status
 * (src/core/marks.c): the rule itself for every entity, target status and
 * time given; and, for every legal edge of a step and of a run reachable
 * from a new run, the real gate on a real database leaves the row exactly
 * as the rule says (the engine's cache trusts the rule instead of reading
 * the row back).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "core/marks.h"
#include "core/status.h"
#include "planctl.h"
#include "store/sqlite/sqlite.h"
#include "store/store.h"
#include "testutil.h"

#define NS PLANCTL_STATUS__COUNT

static const planctl_entity entities[] = {
    PLANCTL_ENTITY_RUN, PLANCTL_ENTITY_PHASE, PLANCTL_ENTITY_STEP};
static const int64_t times[] = {0, -5, 111};

/* The rule, spelled out for every case. */
static void test_rule(void **state)
{
    size_t e, t, n, d;

    (void)state;
    for (e = 0; e < 3; e++)
        for (t = 0; t < NS; t++)
            for (n = 0; n < 3; n++)
                for (d = 0; d < 3; d++) {
                    planctl_entity ent = entities[e];
                    planctl_status to = (planctl_status)t;
                    int64_t next = times[n], dl = times[d] * 2;
                    pctl_marks m = pctl_marks_of(ent, to, next, dl);
                    int step = ent == PLANCTL_ENTITY_STEP;
                    int run = ent == PLANCTL_ENTITY_RUN;
                    int starting = to == PLANCTL_STATUS_IN_PROGRESS;
                    pctl_marked w;

                    assert_int_equal(m.attempt_inc, step && starting);
                    assert_int_equal(
                        m.next_attempt_at,
                        step && to == PLANCTL_STATUS_ERROR && next > 0 ? next
                                                                       : 0);
                    assert_int_equal(m.deadline_at,
                                     (step || run) && starting && dl > 0 ? dl
                                                                         : 0);
                    w = pctl_marks_apply(ent, &m, 4, 999);
                    assert_int_equal(w.attempt, step ? 4 + m.attempt_inc : 0);
                    assert_int_equal(w.next_attempt_at, m.next_attempt_at);
                    assert_int_equal(w.deadline_at,
                                     run ? (m.deadline_at ? m.deadline_at : 999)
                                     : step ? m.deadline_at
                                            : 0);
                }
}

/* ---- the rule against the gate and its statements ---- */

#define DEF                                                                    \
    "{\"name\":\"m\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","            \
    "\"kind\":\"Dummy\"}],\"plans\":{\"deploy\":{\"phases\":[{\"name\":"       \
    "\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":[\"t\"]}]}]}}}"

typedef struct fixture {
    char *dir;
    planctl *p;
    int made; /* instances created */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char *path;

    f->dir = tu_mkdtemp();
    path = tu_fmt("%s/marks.db", f->dir);
    assert_int_equal(planctl_open(&f->p, path, NULL), 0);
    free(path);
    assert_int_equal(
        planctl_definition_apply(NULL, f->p, DEF, strlen(DEF), "m.json"), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    planctl_close(f->p);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* The shortest path of legal edges from PENDING to want: *len edges in
 * path[1..len], path[0] PENDING; 0 when unreachable. */
static int path_to(planctl_entity ent, planctl_status want,
                   planctl_status *path, int *len)
{
    int prev[NS], seen[NS] = {0}, queue[NS], head = 0, tail = 0, k, n;
    planctl_status s, rev[NS];

    queue[tail++] = PLANCTL_STATUS_PENDING;
    seen[PLANCTL_STATUS_PENDING] = 1;
    prev[PLANCTL_STATUS_PENDING] = -1;
    while (head < tail) {
        int at = queue[head++];

        for (k = 0; k < NS; k++)
            if (!seen[k] && planctl_transition_legal(ent, (planctl_status)at,
                                                     (planctl_status)k)) {
                seen[k] = 1;
                prev[k] = at;
                queue[tail++] = k;
            }
    }
    if (!seen[want])
        return 0;
    for (n = 0, s = want; (int)s != PLANCTL_STATUS_PENDING;
         s = (planctl_status)prev[s])
        rev[n++] = s;
    path[0] = PLANCTL_STATUS_PENDING;
    for (k = 0; k < n; k++)
        path[k + 1] = rev[n - 1 - k];
    *len = n;
    return 1;
}

static void gate(fixture *f, planctl_entity ent, int64_t id,
                 planctl_status from, planctl_status to, int64_t next,
                 int64_t deadline)
{
    pctl_change c = PCTL_CHANGE_INIT;
    int rc;

    c.entity = ent;
    c.id = id;
    c.from = from;
    c.to = to;
    c.actor = "engine";
    c.next_attempt_at = next;
    c.deadline_at = deadline;
    assert_int_equal(pctl_tx_begin(f->p), 0);
    rc = pctl_gate(f->p, &c);
    if (rc != 0)
        fail_msg("%s %s -> %s: %s", pctl_entity_name(ent),
                 planctl_status_name(from), planctl_status_name(to),
                 planctl_errmsg(f->p));
    assert_int_equal(pctl_tx_end(f->p, 0), 0);
}

static int64_t col(fixture *f, const char *table, const char *column,
                   int64_t id)
{
    return tu_scalar(pctl_sqlite_db(f->p),
                     "SELECT coalesce(%s, 0) FROM %s WHERE id = %lld", column,
                     table, (long long)id);
}

/* Every legal edge of ent reachable from PENDING, with every time given,
 * through the real gate: the row afterwards is the rule's. */
static void edges_of(fixture *f, planctl_entity ent, const char *table)
{
    size_t from, to, n, d;
    int tested = 0;

    for (from = 0; from < NS; from++)
        for (to = 0; to < NS; to++) {
            planctl_status path[NS + 1];
            int len;

            if (!planctl_transition_legal(ent, (planctl_status)from,
                                          (planctl_status)to) ||
                !path_to(ent, (planctl_status)from, path, &len))
                continue;
            for (n = 0; n < 3; n++)
                for (d = 0; d < 3; d++) {
                    char name[32];
                    int64_t run, id, k, before_attempt, before_deadline;
                    pctl_marks m;
                    pctl_marked w;

                    snprintf(name, sizeof name, "i%d", ++f->made);
                    assert_int_equal(planctl_instance_create(&run, f->p, name,
                                                             "m", "1", NULL, 0),
                                     0);
                    id = ent == PLANCTL_ENTITY_RUN
                             ? run
                             : tu_scalar(pctl_sqlite_db(f->p),
                                         "SELECT id FROM steps WHERE run_id = "
                                         "%lld",
                                         (long long)run);
                    /* To from, with times of its own on the way. */
                    for (k = 0; k < len; k++)
                        gate(f, ent, id, path[k], path[k + 1], 7000 + k,
                             8000 + k);
                    before_attempt = ent == PLANCTL_ENTITY_STEP
                                         ? col(f, table, "attempt", id)
                                         : 0;
                    before_deadline = col(f, table, "deadline_at", id);
                    gate(f, ent, id, (planctl_status)from, (planctl_status)to,
                         times[n], times[d] * 2);
                    m = pctl_marks_of(ent, (planctl_status)to, times[n],
                                      times[d] * 2);
                    w = pctl_marks_apply(ent, &m, (int)before_attempt,
                                         before_deadline);
                    if (ent == PLANCTL_ENTITY_STEP) {
                        assert_int_equal(col(f, table, "attempt", id),
                                         w.attempt);
                        assert_int_equal(col(f, table, "next_attempt_at", id),
                                         w.next_attempt_at);
                    }
                    assert_int_equal(col(f, table, "deadline_at", id),
                                     w.deadline_at);
                    tested++;
                }
        }
    /* Not an empty loop: every entity has edges from PENDING on. */
    assert_true(tested >= 9 * 4);
}

static void test_steps_as_the_rule_says(void **state)
{
    edges_of(*state, PLANCTL_ENTITY_STEP, "steps");
}

static void test_runs_as_the_rule_says(void **state)
{
    edges_of(*state, PLANCTL_ENTITY_RUN, "runs");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule),
        cmocka_unit_test_setup_teardown(test_steps_as_the_rule_says, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_runs_as_the_rule_says, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
