/*
 * test_admission.c - how many times an admission reads and writes, counted
 * through SQLite's trace hook on the handle's own connection: a trigger of
 * a plan without preflight checks resolves the instance once, loads its
 * definition once and opens one write transaction; a plan with checks
 * takes two (the checks run between them, outside any transaction) and
 * still admits once.
 *
 * On PostgreSQL (unit.pg.test_admission), which has no such hook on the
 * client, the same is counted at the seam (sql.h): the handle's backend
 * table wrapped so that the first step of each execution of a statement is
 * matched against the statement's text as SQLite has it (both backends
 * name the same statements), and a write transaction is a begin of any
 * kind but PCTL_TX_READ.
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
#include "store/sql.h"
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

/* What on_statement() counts, for a statement of the seam: its SQLite text
 * stands for it. */
static void count_query(counts *c, pctl_query q)
{
    size_t len;
    const char *text = pctl_query_text(pctl_db_sqlite.queries, q, &len);
    char *sql = text ? strndup(text, len) : NULL;

    if (!sql)
        return;
    c->instance_lookups += strstr(sql, "FROM instances WHERE name = ?1") != 0;
    c->definition_loads += strstr(sql, "SELECT body FROM definitions WHERE "
                                       "id = ?1") != 0;
    free(sql);
}

/* The seam's wrapper: the backend's own table with step, reset and begin
 * counted.  One handle at a time. */
static pctl_db_methods wrapped;
static const pctl_db_methods *inner;
static counts *seam_counts;
static unsigned char fresh[PCTL_Q__COUNT]; /* reset since its last step */

static int seam_prepare(pctl_stmt **out, pctl_conn *c, pctl_query q,
                        const char *sql, size_t len)
{
    int rc = inner->prepare(out, c, q, sql, len);

    if (rc == 0 && (unsigned)q < PCTL_Q__COUNT)
        fresh[q] = 1;
    return rc;
}

static void seam_reset(pctl_stmt *s, int unbind)
{
    if ((unsigned)s->q < PCTL_Q__COUNT)
        fresh[s->q] = 1;
    inner->reset(s, unbind);
}

static int seam_step(pctl_stmt *s)
{
    if ((unsigned)s->q < PCTL_Q__COUNT && fresh[s->q]) {
        fresh[s->q] = 0;
        count_query(seam_counts, s->q);
    }
    return inner->step(s);
}

static int seam_begin(pctl_conn *c, pctl_tx_kind k)
{
    seam_counts->write_begins += k != PCTL_TX_READ;
    return inner->begin(c, k);
}

/* Counts p's statements into c through the seam from now on, the cached
 * ones too. */
static void count_at_seam(planctl *p, counts *c)
{
    size_t i;

    inner = p->conn->m;
    wrapped = *inner;
    wrapped.prepare = seam_prepare;
    wrapped.reset = seam_reset;
    wrapped.step = seam_step;
    wrapped.begin = seam_begin;
    seam_counts = c;
    memset(fresh, 1, sizeof fresh);
    p->conn->m = &wrapped;
    for (i = 0; i < PCTL_Q__COUNT; i++)
        if (p->stmts[i])
            p->stmts[i]->m = &wrapped;
}

typedef struct fixture {
    char *dir;
    planctl *p;
    tu_raw *raw; /* on PostgreSQL, for counting runs */
    counts c;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char *path;
    int64_t run;

    f->dir = tu_mkdtemp();
    {
        char *file = tu_fmt("%s/adm.db", f->dir);

        path = tu_db_target(file);
        free(file);
    }
    assert_int_equal(planctl_open(&f->p, path, NULL), 0);
    if (tu_on_pg())
        f->raw = tu_raw_open(path);
    free(path);
    assert_int_equal(
        planctl_definition_apply(NULL, f->p, DEF, strlen(DEF), "adm.json"), 0);
    assert_int_equal(
        planctl_instance_create(&run, f->p, "zk", "adm", "1", NULL, 0), 0);
    /* The deploy run out of the way, so the next trigger is admitted. */
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    if (tu_on_pg())
        count_at_seam(f->p, &f->c);
    else
        sqlite3_trace_v2(pctl_sqlite_db(f->p), SQLITE_TRACE_STMT, on_statement,
                         &f->c);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    planctl_close(f->p);
    tu_raw_close(f->raw);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* Runs in the database: an INSERT ... RETURNING shows twice in the trace,
 * so runs are counted where they are. */
static int64_t runs(fixture *f)
{
    if (f->raw)
        return tu_raw_scalar(f->raw, "SELECT count(*) FROM runs");
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
