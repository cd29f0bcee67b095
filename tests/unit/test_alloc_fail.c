/*
 * test_alloc_fail.c - fails the Nth allocation (ours, jansson's and
 * SQLite's) across a sequence of store calls, for every N until the
 * sequence runs clean: every call must return 0 or an error code, never
 * crash or leak (run it under ASan), and the database must stay
 * consistent: integrity and foreign keys hold, and every call either
 * happened whole or not at all.
 *
 * PLANCTL_ALLOC_STRIDE=K tries every Kth N only (for slow machines);
 * the default is every N.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "core/alloc.h"
#include "planctl.h"
#include "store_fixture.h"
#include "testutil.h"

static long countdown = -1; /* fail when it reaches 0; -1: never */
static long failures;
static sqlite3_mem_methods sqlite_default;

static int should_fail(void)
{
    if (countdown < 0)
        return 0;
    if (countdown-- == 0) {
        failures++;
        return 1;
    }
    return 0;
}

static void *t_malloc(size_t n)
{
    return should_fail() ? NULL : malloc(n);
}

static void *t_realloc(void *p, size_t n)
{
    return should_fail() ? NULL : realloc(p, n);
}

static void *s_malloc(int n)
{
    return should_fail() ? NULL : sqlite_default.xMalloc(n);
}

static void *s_realloc(void *p, int n)
{
    return should_fail() ? NULL : sqlite_default.xRealloc(p, n);
}

static char *dir, *tmpl;

static void copy_file(const char *from, const char *to)
{
    size_t n;
    char *data = tu_read_file(from, &n);

    assert_non_null(data);
    assert_int_equal(tu_write_file(to, data, n), 0);
    free(data);
}

static int64_t scalar(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;

    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The template: a definition and an idle instance "zk" (deploy cancelled). */
static void make_template(void)
{
    planctl *p;

    tmpl = tu_fmt("%s/template.db", dir);
    assert_int_equal(planctl_open(&p, tmpl, NULL), 0);
    assert_int_equal(
        planctl_definition_apply(NULL, p, ZK_V2, strlen(ZK_V2), "zk.json"), 0);
    {
        int64_t r;

        assert_int_equal(
            planctl_instance_create(&r, p, "zk", "zookeeper", NULL, NULL, 0),
            0);
    }
    assert_int_equal(planctl_run_cancel(NULL, p, "zk", NULL), 0);
    planctl_close(p); /* the last close checkpoints and removes the WAL */
}

typedef struct outcome {
    int create, trigger, set, cancel, retry;
    int64_t trigger_run;
} outcome;

/* The sequence of calls under test; every result is recorded. */
static void workload(planctl *p, outcome *o)
{
    planctl_param count = {"NODE_COUNT", "5"};
    planctl_trigger_options to = PLANCTL_TRIGGER_OPTIONS_INIT;
    int64_t r = 0;
    char *doc = NULL;

    o->create =
        planctl_instance_create(&r, p, "zk2", "zookeeper", NULL, &count, 1);
    to.queue = 1;
    o->trigger = planctl_plan_trigger(&o->trigger_run, p, "zk", "backup", &to);
    if (planctl_status_json(&doc, p, "zk", NULL) == 0)
        assert_non_null(doc);
    planctl_free(doc);
    doc = NULL;
    if (planctl_history_json(&doc, p, "zk", NULL) == 0)
        assert_non_null(doc);
    planctl_free(doc);
    doc = NULL;
    if (planctl_instances_json(&doc, p) == 0)
        assert_non_null(doc);
    planctl_free(doc);
    o->cancel = planctl_run_cancel(NULL, p, "zk", "oom test");
    o->retry = planctl_run_retry(&r, p, "zk", 0);
    o->set = planctl_instance_set(&r, p, "zk2", &count, 1);
}

/* Checks the database after a faulty run, with allocation working. */
static void check_consistent(const char *path, const outcome *o)
{
    sqlite3 *db;
    sqlite3_stmt *st;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    assert_int_equal(
        scalar(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    /* All or nothing: a created instance has its deploy run with every
     * phase, step and creation event; a refused one left no trace. */
    assert_int_equal(scalar(db, "SELECT count(*) FROM instances WHERE name = "
                                "'zk2'"),
                     o->create == 0);
    assert_int_equal(scalar(db, "SELECT count(*) FROM runs r WHERE (SELECT "
                                "count(*) FROM phases WHERE run_id = r.id) "
                                "= 0 OR (SELECT count(*) FROM steps WHERE "
                                "run_id = r.id) = 0"),
                     0);
    assert_int_equal(scalar(db, "SELECT count(*) FROM runs r WHERE (SELECT "
                                "count(*) FROM events WHERE run_id = r.id "
                                "AND entity = 'run' AND from_status IS "
                                "NULL) <> 1"),
                     0);
    /* A terminal run has no open child: cancel happened whole. */
    assert_int_equal(scalar(db, "SELECT count(*) FROM runs r JOIN steps s ON "
                                "s.run_id = r.id WHERE r.status IN "
                                "('COMPLETE', 'FATAL_ERROR', 'CANCELLED') "
                                "AND s.status NOT IN ('COMPLETE', "
                                "'FATAL_ERROR', 'CANCELLED')"),
                     0);
    /* Every status in the tables matches the last event for its row. */
    assert_int_equal(scalar(db, "SELECT count(*) FROM runs r WHERE status <> "
                                "(SELECT to_status FROM events WHERE run_id "
                                "= r.id AND entity = 'run' ORDER BY seq DESC "
                                "LIMIT 1)"),
                     0);
    assert_int_equal(scalar(db, "SELECT count(*) FROM steps s WHERE status <> "
                                "(SELECT to_status FROM events WHERE step_id "
                                "= s.id ORDER BY seq DESC LIMIT 1)"),
                     0);
    assert_int_equal(scalar(db, "SELECT count(*) FROM runs WHERE plan = "
                                "'backup' AND trigger = 'manual'"),
                     o->trigger == 0);
    sqlite3_close(db);
}

static void test_fail_every_allocation(void **state)
{
    const char *stride_env = getenv("PLANCTL_ALLOC_STRIDE");
    long stride = stride_env ? atol(stride_env) : 1, n, tried = 0;
    char *path = tu_fmt("%s/work.db", dir);
    char *wal = tu_fmt("%s-wal", path), *shm = tu_fmt("%s-shm", path);
    pctl_alloc_hooks hooks = {t_malloc, t_realloc, free};

    (void)state;
    if (stride < 1)
        stride = 1;
    make_template();
    pctl_alloc_set_hooks(&hooks);
    n = getenv("PLANCTL_ALLOC_START") ? atol(getenv("PLANCTL_ALLOC_START")) : 0;
    for (;; n += stride) {
        planctl *p = NULL;
        outcome o;

        memset(&o, 0, sizeof o);
        remove(wal);
        remove(shm);
        copy_file(tmpl, path);
        assert_int_equal(planctl_open(&p, path, NULL), 0);
        failures = 0;
        countdown = n;
        workload(p, &o);
        countdown = -1;
        planctl_close(p);
        if (getenv("PLANCTL_ALLOC_VERBOSE"))
            print_message("n=%ld\n", n);
        check_consistent(path, &o);
        tried++;
        if (failures == 0)
            break; /* the whole workload ran without reaching N */
        /* Under failure every call still returned a code; spot check the
         * codes are ours. */
        assert_true(o.create <= 0 && o.create >= PLANCTL_EREADONLY);
        assert_true(o.trigger <= 0 && o.trigger >= PLANCTL_EREADONLY);
    }
    pctl_alloc_set_hooks(NULL);
    print_message("failed allocation %ld ways (stride %ld) before the "
                  "workload ran clean\n",
                  tried - 1, stride);
    assert_true(tried > 50); /* the workload allocates; the loop ran */
    free(path);
    free(wal);
    free(shm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fail_every_allocation),
    };
    sqlite3_mem_methods m;
    int rc;

    /* SQLite's allocator must be replaced before it initialises. */
    sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sqlite_default);
    m = sqlite_default;
    m.xMalloc = s_malloc;
    m.xRealloc = s_realloc;
    sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
    /* Thousands of small databases: keep them in memory when we can, the
     * test is about allocation, not the disk. */
    if (!getenv("TMPDIR") && access("/dev/shm", W_OK) == 0)
        setenv("TMPDIR", "/dev/shm", 1);
    dir = tu_mkdtemp();
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (!getenv("PLANCTL_ALLOC_KEEP"))
        tu_rmtree(dir);
    free(dir);
    free(tmpl);
    return rc;
}
