/*
 * test_admission.c - how many times an admission reads and writes, counted
 * through SQLite's trace hook on the handle's own connection: a trigger of
 * a plan without preflight checks resolves the instance once, loads its
 * definition once and opens one write transaction; a plan with checks
 * takes two (the checks run between them, outside any transaction) and
 * still admits once.
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

#include "planctl.h"
#include "store/sqlite/sqlite.h"
#include "store/store.h"
#include "testutil.h"

#define DEF                                                                    \
    "{\"name\":\"adm\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","          \
    "\"kind\":\"Dummy\"},{\"name\":\"ok\",\"kind\":\"shell\",\"spec\":{"       \
    "\"command\":\"exit 0\"}}],\"plans\":{"                                    \
    "\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\","      \
    "\"tasks\":[\"t\"]}]}]},"                                                  \
    "\"backup\":{\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\","      \
    "\"tasks\":[\"t\"]}]}]},"                                                  \
    "\"checked\":{\"preflight\":[{\"name\":\"Ok\",\"task\":\"ok\"}],"          \
    "\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":"        \
    "[\"t\"]}]}]}}}"

typedef struct counts {
    int instance_lookups, definition_loads, write_begins;
} counts;

static int on_statement(unsigned type, void *data, void *stmt, void *x)
{
    counts *c = data;
    const char *sql = sqlite3_sql(stmt);

    (void)type;
    (void)x;
    if (!sql)
        return 0;
    c->instance_lookups += strstr(sql, "FROM instances WHERE name = ?1") != 0;
    c->definition_loads += strstr(sql, "SELECT body FROM definitions WHERE "
                                       "id = ?1") != 0;
    c->write_begins += strcmp(sql, "BEGIN IMMEDIATE") == 0;
    return 0;
}

typedef struct fixture {
    char *dir;
    planctl *p;
    counts c;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char *path;
    int64_t run;

    f->dir = tu_mkdtemp();
    path = tu_fmt("%s/adm.db", f->dir);
    assert_int_equal(planctl_open(&f->p, path, NULL), 0);
    free(path);
    assert_int_equal(
        planctl_definition_apply(NULL, f->p, DEF, strlen(DEF), "adm.json"), 0);
    assert_int_equal(
        planctl_instance_create(&run, f->p, "zk", "adm", "1", NULL, 0), 0);
    /* The deploy run out of the way, so the next trigger is admitted. */
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    sqlite3_trace_v2(pctl_sqlite_db(f->p), SQLITE_TRACE_STMT, on_statement,
                     &f->c);
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

/* Runs in the database: an INSERT ... RETURNING shows twice in the trace,
 * so runs are counted where they are. */
static int64_t runs(fixture *f)
{
    return tu_scalar(pctl_sqlite_db(f->p), "SELECT count(*) FROM runs");
}

static void test_trigger_without_checks(void **state)
{
    fixture *f = *state;
    int64_t run, before = runs(f);

    memset(&f->c, 0, sizeof f->c);
    assert_int_equal(planctl_plan_trigger(&run, f->p, "zk", "backup", NULL), 0);
    assert_true(run > 0);
    assert_int_equal(f->c.instance_lookups, 1);
    assert_int_equal(f->c.definition_loads, 1);
    assert_int_equal(f->c.write_begins, 1);
    assert_int_equal(runs(f), before + 1);
}

static void test_trigger_with_checks(void **state)
{
    fixture *f = *state;
    int64_t run, before = runs(f);

    memset(&f->c, 0, sizeof f->c);
    assert_int_equal(planctl_plan_trigger(&run, f->p, "zk", "checked", NULL),
                     0);
    assert_true(run > 0);
    /* Two write transactions around the checks, and the one that records
     * what the checks said. */
    assert_int_equal(f->c.instance_lookups, 2);
    assert_int_equal(f->c.write_begins, 3);
    assert_int_equal(runs(f), before + 1);
}

/* A refusal the store gives anyway comes from the first transaction,
 * before any check. */
static void test_refused_before_checks(void **state)
{
    fixture *f = *state;
    planctl_admitted a;
    int64_t run, before;

    assert_int_equal(planctl_plan_trigger(&run, f->p, "zk", "backup", NULL), 0);
    before = runs(f);
    memset(&f->c, 0, sizeof f->c);
    assert_int_equal(planctl_admit_trigger(&a, f->p, "zk", "checked", NULL),
                     PLANCTL_ECONFLICT);
    assert_int_equal(f->c.write_begins, 1);
    assert_int_equal(runs(f), before);
    assert_null(a.preflight_report);
}

/* What the calls hand back: the run, its status, its place in the queue,
 * the plan, the run a retry retries; zeroed on a refusal. */
static void test_admitted_handed_back(void **state)
{
    fixture *f = *state;
    planctl_admit_options q = PLANCTL_ADMIT_OPTIONS_INIT;
    planctl_admitted a;
    int64_t cancelled;

    assert_int_equal(planctl_admit_trigger(&a, f->p, "zk", "backup", NULL), 0);
    assert_true(a.run > 0);
    assert_int_equal(a.status, PLANCTL_STATUS_PENDING);
    assert_int_equal(a.queue_position, 0);
    assert_string_equal(a.plan, "backup");
    assert_int_equal(a.retry_of, 0);
    q.queue = 1;
    assert_int_equal(planctl_admit_trigger(&a, f->p, "zk", "deploy", &q), 0);
    assert_int_equal(a.status, PLANCTL_STATUS_QUEUED);
    assert_int_equal(a.queue_position, 1);
    assert_string_equal(a.plan, "deploy");
    assert_int_equal(planctl_admit_trigger(&a, f->p, "zk", "backup", &q), 0);
    assert_int_equal(a.queue_position, 2);
    /* Refused: nothing admitted, nothing left in the struct. */
    assert_int_equal(planctl_admit_trigger(&a, f->p, "zk", "backup", NULL),
                     PLANCTL_ECONFLICT);
    assert_int_equal(a.run, 0);
    assert_string_equal(a.plan, "");
    /* A retry names the run it retries. */
    assert_int_equal(planctl_run_cancel(&cancelled, f->p, "zk", NULL), 0);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    assert_int_equal(planctl_admit_retry(&a, f->p, "zk", cancelled, NULL), 0);
    assert_int_equal(a.retry_of, cancelled);
    assert_int_equal(a.status, PLANCTL_STATUS_PENDING);
    assert_string_equal(a.plan, "backup");
}

/* Options are checked before anything is read or written, and nothing
 * of them stays behind. */
static void test_options_refused(void **state)
{
    fixture *f = *state;
    planctl_admit_options o = PLANCTL_ADMIT_OPTIONS_INIT;
    planctl_trigger_options t = PLANCTL_TRIGGER_OPTIONS_INIT;
    planctl_admitted a;
    int64_t run = 7, before = runs(f);

    o.version = 99;
    memset(&f->c, 0, sizeof f->c);
    assert_int_equal(planctl_admit_trigger(&a, f->p, "zk", "backup", &o),
                     PLANCTL_EINVAL);
    assert_non_null(strstr(planctl_errmsg(f->p), "admission options of "
                                                 "version 99"));
    o.version = PLANCTL_ADMIT_OPTIONS_VERSION;
    o.preflight_deadline_ms = -1;
    assert_int_equal(
        planctl_admit_create(&a, f->p, "zk2", "zk", NULL, NULL, 0, &o),
        PLANCTL_EINVAL);
    assert_non_null(strstr(planctl_errmsg(f->p), "preflight deadline of -1"));
    assert_int_equal(f->c.write_begins, 0);
    assert_int_equal(a.run, 0);
    assert_null(a.preflight_report);
    t.version = 0;
    assert_int_equal(planctl_plan_trigger(&run, f->p, "zk", "backup", &t),
                     PLANCTL_EINVAL);
    assert_int_equal(run, 0);
    assert_int_equal(runs(f), before);
    planctl_admitted_clear(NULL);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_trigger_without_checks), T(test_trigger_with_checks),
        T(test_refused_before_checks),  T(test_admitted_handed_back),
        T(test_options_refused),
    };
#undef T

    return cmocka_run_group_tests(tests, NULL, NULL);
}
