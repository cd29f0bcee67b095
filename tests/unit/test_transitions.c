/*
 * test_transitions.c - every (entity, from, to) of the state machine, legal
 * and illegal, checked three ways: the pure table, the library's gate, and
 * a raw SQL UPDATE against a database the library created.
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

#include "core/status.h"
#include "planctl.h"
#include "testutil.h"

static const char *const tables[] = {"runs", "phases", "steps"};

typedef struct fixture {
    char *dir, *path;
    planctl *p;
    sqlite3 *db;
    int next; /* unique suffix for instance names */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    assert_non_null(f);
    f->dir = tu_mkdtemp();
    assert_non_null(f->dir);
    f->path = tu_fmt("%s/t.db", f->dir);
    assert_int_equal(planctl_open(&f->p, f->path, NULL), 0);
    assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
    sqlite3_busy_timeout(f->db, 5000);
    assert_int_equal(sqlite3_exec(f->db,
                                  "INSERT INTO definitions (id, name, "
                                  "version, body, created_at) VALUES "
                                  "(1, 'd', '1', '{}', 0)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    sqlite3_close(f->db);
    planctl_close(f->p);
    tu_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

static void exec_ok(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);

    if (rc != SQLITE_OK)
        fail_msg("%s: %s", sql, err ? err : "?");
    sqlite3_free(err);
}

/*
 * Finds a path of legal edges from (new) to target for entity, by breadth
 * first search over the table: path[0] is the status a row is created in.
 * Returns its length, or 0 when target is unreachable.
 */
static int path_to(planctl_entity e, planctl_status target,
                   planctl_status *path)
{
    int prev[PLANCTL_STATUS__COUNT + 1], seen[PLANCTL_STATUS__COUNT + 1] = {0};
    int queue[PLANCTL_STATUS__COUNT + 1], head = 0, tail = 0, i, n, s;
    planctl_status rev[PLANCTL_STATUS__COUNT + 1];

    queue[tail++] = PCTL_NEW;
    seen[PCTL_NEW] = 1;
    while (head < tail) {
        s = queue[head++];
        for (i = 0; i < pctl_edges_count; i++) {
            const pctl_edge *g = &pctl_edges[i];

            if (g->entity == e && (int)g->from == s && !seen[g->to]) {
                seen[g->to] = 1;
                prev[g->to] = s;
                queue[tail++] = g->to;
            }
        }
    }
    if (!seen[target] || target == PCTL_NEW)
        return 0;
    for (n = 0, s = target; s != PCTL_NEW; s = prev[s])
        rev[n++] = (planctl_status)s;
    for (i = 0; i < n; i++)
        path[i] = rev[n - 1 - i];
    return n;
}

/* Creates a run, a phase and a step in their own new instance by raw SQL,
 * the row of entity e walked to `status` by legal UPDATEs.  Returns its id,
 * or 0 if the status is unreachable for e. */
static int64_t make_row(fixture *f, planctl_entity e, planctl_status status)
{
    planctl_status path[PLANCTL_STATUS__COUNT + 1];
    int n = path_to(e, status, path), i;
    const char *first = n ? planctl_status_name(path[0]) : NULL;
    int64_t inst, run, phase, step, id;
    char *sql;

    if (!n)
        return 0;
    sql = tu_fmt("INSERT INTO instances (name, definition_id, params, "
                 "created_at, updated_at) VALUES ('i%d', 1, '{}', 0, 0)",
                 f->next++);
    exec_ok(f->db, sql);
    free(sql);
    inst = sqlite3_last_insert_rowid(f->db);
    sql = tu_fmt("INSERT INTO runs (uid, instance_id, definition_id, plan, "
                 "status, trigger, params, created_at) VALUES ('u%lld', "
                 "%lld, 1, 'deploy', '%s', 'create', '{}', 0)",
                 (long long)inst, (long long)inst,
                 e == PLANCTL_ENTITY_RUN ? first : "PENDING");
    exec_ok(f->db, sql);
    free(sql);
    run = sqlite3_last_insert_rowid(f->db);
    sql = tu_fmt("INSERT INTO phases (run_id, idx, name, strategy, status) "
                 "VALUES (%lld, 0, 'p', 'serial', '%s')",
                 (long long)run, e == PLANCTL_ENTITY_PHASE ? first : "PENDING");
    exec_ok(f->db, sql);
    free(sql);
    phase = sqlite3_last_insert_rowid(f->db);
    sql = tu_fmt("INSERT INTO steps (run_id, phase_id, idx, name, status, "
                 "max_attempts) VALUES (%lld, %lld, 0, 's', '%s', 3)",
                 (long long)run, (long long)phase,
                 e == PLANCTL_ENTITY_STEP ? first : "PENDING");
    exec_ok(f->db, sql);
    free(sql);
    step = sqlite3_last_insert_rowid(f->db);
    id = e == PLANCTL_ENTITY_RUN     ? run
         : e == PLANCTL_ENTITY_PHASE ? phase
                                     : step;
    for (i = 1; i < n; i++) {
        sql = tu_fmt("UPDATE %s SET status = '%s' WHERE id = %lld", tables[e],
                     planctl_status_name(path[i]), (long long)id);
        exec_ok(f->db, sql);
        free(sql);
    }
    return id;
}

static char *row_status(fixture *f, planctl_entity e, int64_t id)
{
    char *sql = tu_fmt("SELECT status FROM %s WHERE id = %lld", tables[e],
                       (long long)id);
    sqlite3_stmt *st;
    char *out = NULL;

    assert_int_equal(sqlite3_prepare_v2(f->db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        out = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    free(sql);
    return out;
}

static int64_t count_events(fixture *f)
{
    sqlite3_stmt *st;
    int64_t n;

    assert_int_equal(
        sqlite3_prepare_v2(f->db, "SELECT count(*) FROM events", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* The table matches DESIGN §3 exactly: spot checks both ways, and the
 * count of edges. */
static void test_table_shape(void **state)
{
    (void)state;
    assert_int_equal(pctl_edges_count, 30);
    assert_true(planctl_transition_legal(PLANCTL_ENTITY_RUN, PCTL_NEW,
                                         PLANCTL_STATUS_QUEUED));
    assert_false(planctl_transition_legal(PLANCTL_ENTITY_PHASE, PCTL_NEW,
                                          PLANCTL_STATUS_QUEUED));
    assert_true(planctl_transition_legal(
        PLANCTL_ENTITY_STEP, PLANCTL_STATUS_ERROR, PLANCTL_STATUS_IN_PROGRESS));
    assert_false(planctl_transition_legal(
        PLANCTL_ENTITY_RUN, PLANCTL_STATUS_IN_PROGRESS, PLANCTL_STATUS_ERROR));
    assert_false(planctl_transition_legal(PLANCTL_ENTITY_RUN,
                                          PLANCTL_STATUS_COMPLETE,
                                          PLANCTL_STATUS_IN_PROGRESS));
}

/* No edge leaves a terminal status, for any entity. */
static void test_terminal_is_final(void **state)
{
    int e, from, to;

    (void)state;
    for (e = 0; e < PLANCTL_ENTITY__COUNT; e++)
        for (from = 0; from < PLANCTL_STATUS__COUNT; from++)
            for (to = 0; to <= PLANCTL_STATUS__COUNT; to++)
                if (pctl_status_terminal((planctl_status)from))
                    assert_false(planctl_transition_legal((planctl_entity)e,
                                                          (planctl_status)from,
                                                          (planctl_status)to));
}

static void test_status_names(void **state)
{
    planctl_status s;
    int i;

    (void)state;
    for (i = 0; i < PLANCTL_STATUS__COUNT; i++) {
        assert_int_equal(
            planctl_status_parse(&s, planctl_status_name((planctl_status)i)),
            0);
        assert_int_equal(s, i);
    }
    assert_string_equal(planctl_status_name(PLANCTL_STATUS_FATAL_ERROR),
                        "FATAL_ERROR");
    assert_int_equal(planctl_status_parse(&s, "complete"), PLANCTL_EINVAL);
    assert_int_equal(planctl_status_parse(&s, ""), PLANCTL_EINVAL);
    assert_null(planctl_status_name(PLANCTL_STATUS__COUNT));
}

/* The SQL transitions table holds exactly the C table. */
static void test_sql_table_matches(void **state)
{
    fixture *f = *state;
    sqlite3_stmt *st;
    int n = 0, i, found;

    assert_int_equal(sqlite3_prepare_v2(f->db,
                                        "SELECT entity, from_status, "
                                        "to_status FROM transitions",
                                        -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *ent = (const char *)sqlite3_column_text(st, 0);
        const char *from = (const char *)sqlite3_column_text(st, 1);
        const char *to = (const char *)sqlite3_column_text(st, 2);

        found = 0;
        for (i = 0; i < pctl_edges_count; i++) {
            const pctl_edge *g = &pctl_edges[i];

            if (strcmp(pctl_entity_name(g->entity), ent) == 0 &&
                strcmp(planctl_status_name(g->to), to) == 0 &&
                (from ? g->from != PCTL_NEW &&
                            strcmp(planctl_status_name(g->from), from) == 0
                      : g->from == PCTL_NEW))
                found = 1;
        }
        if (!found)
            fail_msg("SQL edge %s %s -> %s is not in the C table", ent,
                     from ? from : "(new)", to);
        n++;
    }
    sqlite3_finalize(st);
    assert_int_equal(n, pctl_edges_count);
    /* And the table itself cannot be edited to let anything through. */
    assert_int_not_equal(sqlite3_exec(f->db,
                                      "INSERT INTO transitions VALUES "
                                      "('run', 'COMPLETE', 'PENDING')",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_not_equal(
        sqlite3_exec(f->db, "DELETE FROM transitions", NULL, NULL, NULL),
        SQLITE_OK);
}

/* Creation: only the statuses reachable from (new) are accepted by the
 * database's INSERT triggers. */
static void test_sql_insert_every_status(void **state)
{
    fixture *f = *state;
    int e, s, rc;

    for (e = 0; e < PLANCTL_ENTITY__COUNT; e++) {
        for (s = 0; s < PLANCTL_STATUS__COUNT; s++) {
            int legal = planctl_transition_legal((planctl_entity)e, PCTL_NEW,
                                                 (planctl_status)s);
            int64_t run =
                make_row(f, PLANCTL_ENTITY_RUN, PLANCTL_STATUS_PENDING);
            char *sql;

            if (e == PLANCTL_ENTITY_RUN)
                sql = tu_fmt("INSERT INTO runs (uid, instance_id, "
                             "definition_id, plan, status, trigger, params, "
                             "created_at) SELECT 'x%d%d', instance_id, 1, "
                             "'other', '%s', 'manual', '{}', 0 FROM runs "
                             "WHERE id = %lld",
                             e, s, planctl_status_name((planctl_status)s),
                             (long long)run);
            else if (e == PLANCTL_ENTITY_PHASE)
                sql = tu_fmt("INSERT INTO phases (run_id, idx, name, "
                             "strategy, status) VALUES (%lld, 1, 'q', "
                             "'serial', '%s')",
                             (long long)run,
                             planctl_status_name((planctl_status)s));
            else
                sql = tu_fmt("INSERT INTO steps (run_id, phase_id, idx, "
                             "name, status, max_attempts) SELECT %lld, id, 1, "
                             "'t', '%s', 3 FROM phases WHERE run_id = %lld",
                             (long long)run,
                             planctl_status_name((planctl_status)s),
                             (long long)run);
            rc = sqlite3_exec(f->db, sql, NULL, NULL, NULL);
            /* A second PENDING run of one instance is refused by the
             * one-active index rather than the trigger; both refuse. */
            if (e == PLANCTL_ENTITY_RUN && s == PLANCTL_STATUS_PENDING)
                assert_int_not_equal(rc, SQLITE_OK);
            else if (legal)
                assert_int_equal(rc, SQLITE_OK);
            else
                assert_int_not_equal(rc, SQLITE_OK);
            free(sql);
        }
    }
}

/* Every (from, to) pair, for every entity, through a raw UPDATE. */
static void test_sql_update_every_pair(void **state)
{
    fixture *f = *state;
    int e, from, to, checked = 0;

    for (e = 0; e < PLANCTL_ENTITY__COUNT; e++) {
        for (from = 0; from < PLANCTL_STATUS__COUNT; from++) {
            for (to = 0; to < PLANCTL_STATUS__COUNT; to++) {
                int64_t id =
                    make_row(f, (planctl_entity)e, (planctl_status)from);
                int legal = planctl_transition_legal((planctl_entity)e,
                                                     (planctl_status)from,
                                                     (planctl_status)to);
                char *sql, *now;
                int rc;

                if (!id)
                    continue; /* from is not a status this entity has */
                sql = tu_fmt("UPDATE %s SET status = '%s' WHERE id = %lld",
                             tables[e], planctl_status_name((planctl_status)to),
                             (long long)id);
                rc = sqlite3_exec(f->db, sql, NULL, NULL, NULL);
                now = row_status(f, (planctl_entity)e, id);
                if (legal) {
                    if (rc != SQLITE_OK)
                        fail_msg("%s", sql);
                    assert_string_equal(
                        now, planctl_status_name((planctl_status)to));
                } else {
                    if (rc != SQLITE_CONSTRAINT)
                        fail_msg("not refused: %s", sql);
                    assert_string_equal(
                        now, planctl_status_name((planctl_status)from));
                }
                free(now);
                free(sql);
                checked++;
            }
        }
    }
    /* Reachable: run 7 statuses (all but NEVER_RUN, ERROR), phase 5,
     * step 6; each against all 9 targets. */
    assert_int_equal(checked, (7 + 5 + 6) * PLANCTL_STATUS__COUNT);
}

/* Every (from, to) pair through the library's gate: legal ones change the
 * row and append exactly one event (plus the queue's consequences), illegal
 * ones are ETRANSITION and change nothing. */
static void test_gate_every_pair(void **state)
{
    fixture *f = *state;
    int e, from, to;

    for (e = 0; e < PLANCTL_ENTITY__COUNT; e++) {
        for (from = 0; from < PLANCTL_STATUS__COUNT; from++) {
            for (to = 0; to < PLANCTL_STATUS__COUNT; to++) {
                int64_t id =
                    make_row(f, (planctl_entity)e, (planctl_status)from);
                int legal = planctl_transition_legal((planctl_entity)e,
                                                     (planctl_status)from,
                                                     (planctl_status)to);
                int64_t before, after;
                char *now;
                int rc;

                if (!id)
                    continue;
                before = count_events(f);
                rc = planctl_transition(f->p, (planctl_entity)e, id,
                                        (planctl_status)from,
                                        (planctl_status)to, "m", "test");
                after = count_events(f);
                now = row_status(f, (planctl_entity)e, id);
                if (legal) {
                    if (rc != 0)
                        fail_msg("%s %s -> %s: %s", tables[e],
                                 planctl_status_name((planctl_status)from),
                                 planctl_status_name((planctl_status)to),
                                 planctl_errmsg(f->p));
                    assert_string_equal(
                        now, planctl_status_name((planctl_status)to));
                    assert_int_equal(after, before + 1);
                } else {
                    assert_int_equal(rc, PLANCTL_ETRANSITION);
                    assert_string_equal(
                        now, planctl_status_name((planctl_status)from));
                    assert_int_equal(after, before);
                }
                free(now);
            }
        }
    }
}

/* The compare-and-set: a stale `from` and a missing row are told apart. */
static void test_gate_cas(void **state)
{
    fixture *f = *state;
    int64_t id = make_row(f, PLANCTL_ENTITY_STEP, PLANCTL_STATUS_IN_PROGRESS);

    assert_int_equal(planctl_transition(f->p, PLANCTL_ENTITY_STEP, id,
                                        PLANCTL_STATUS_PENDING,
                                        PLANCTL_STATUS_IN_PROGRESS, NULL, NULL),
                     PLANCTL_ESTALE);
    assert_non_null(
        strstr(planctl_errmsg(f->p), "is IN_PROGRESS, not PENDING"));
    assert_int_equal(planctl_transition(f->p, PLANCTL_ENTITY_STEP, 999999,
                                        PLANCTL_STATUS_PENDING,
                                        PLANCTL_STATUS_IN_PROGRESS, NULL, NULL),
                     PLANCTL_ENOTFOUND);
    /* A step that enters IN_PROGRESS twice through the gate gets attempt
     * rows 1 and 2, never two open at once. */
    assert_int_equal(planctl_transition(f->p, PLANCTL_ENTITY_STEP, id,
                                        PLANCTL_STATUS_IN_PROGRESS,
                                        PLANCTL_STATUS_ERROR, "boom", NULL),
                     0);
    assert_int_equal(planctl_transition(f->p, PLANCTL_ENTITY_STEP, id,
                                        PLANCTL_STATUS_ERROR,
                                        PLANCTL_STATUS_IN_PROGRESS, NULL, NULL),
                     0);
    assert_int_equal(planctl_transition(f->p, PLANCTL_ENTITY_STEP, id,
                                        PLANCTL_STATUS_IN_PROGRESS,
                                        PLANCTL_STATUS_COMPLETE, NULL, NULL),
                     0);
    {
        sqlite3_stmt *st;
        char *sql = tu_fmt("SELECT count(*), sum(finished_at IS NULL), "
                           "max(number), (SELECT attempt FROM steps WHERE "
                           "id = %lld) FROM attempts WHERE step_id = %lld",
                           (long long)id, (long long)id);

        assert_int_equal(sqlite3_prepare_v2(f->db, sql, -1, &st, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(st, 0), 1); /* the gate's one */
        assert_int_equal(sqlite3_column_int(st, 1), 0);
        assert_int_equal(sqlite3_column_int(st, 2), 1);
        assert_int_equal(sqlite3_column_int(st, 3), 1);
        sqlite3_finalize(st);
        free(sql);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_shape),
        cmocka_unit_test(test_terminal_is_final),
        cmocka_unit_test(test_status_names),
        cmocka_unit_test_setup_teardown(test_sql_table_matches, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sql_insert_every_status, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sql_update_every_pair, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gate_every_pair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gate_cas, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
