/*
 * test_gate_cache.c - the gate and the engine's cache (src/store/gate.c,
 * src/engine/cache.c), the cache registered as the handle's observer as
 * an engine registers it: inside the write transaction the cache was
 * synced in, the gate takes a changed row's ids and attempt count from
 * the cache; anywhere else it reads the row; and with check_cache
 * (a handle opened with PLANCTL_OPEN_CHECK_CACHE) it does both and fails with
 * PLANCTL_EIO where they differ, for the gate's read-back and for the run's
 * event count at the commit.
 *
 * The cache is tampered with on purpose, so what the gate wrote shows
 * which source it used.  Every tampered transaction is rolled back.
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

#include "engine/cache.h"
#include "planctl.h"
#include "store/sqlite/sqlite.h"
#include "store/store.h"
#include "store_fixture.h"
#include "testutil.h"

typedef struct fixture {
    char *dir, *path;
    planctl *p;
    pctl_active *cache;
    int64_t run, phase, step;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    f->dir = tu_mkdtemp();
    f->path = tu_fmt("%s/gate.db", f->dir);
    assert_int_equal(planctl_open(&f->p, f->path, NULL), 0);
    /* Each test says whether it checks, whatever the environment says
     * (the sanitizer suite runs with PLANCTL_CHECK_CACHE=1). */
    f->p->check_cache = 0;
    pctl_observe(f->p, &pctl_active_observer, &f->cache);
    assert_int_equal(
        planctl_definition_apply(NULL, f->p, ZK_V2, strlen(ZK_V2), "zk.json"),
        0);
    assert_int_equal(planctl_instance_create(&f->run, f->p, "zk", "zookeeper",
                                             "0.2.0", NULL, 0),
                     0);
    f->phase =
        tu_scalar(pctl_sqlite_db(f->p),
                  "SELECT id FROM phases WHERE run_id = %lld AND idx = 0",
                  (long long)f->run);
    f->step =
        tu_scalar(pctl_sqlite_db(f->p),
                  "SELECT id FROM steps WHERE phase_id = %lld AND idx = 0",
                  (long long)f->phase);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    pctl_active_drop(&f->cache);
    planctl_close(f->p);
    tu_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

/* Begins a write transaction and syncs the cache in it, as a pass does. */
static void begin_pass(fixture *f)
{
    assert_int_equal(pctl_tx_begin(f->p), 0);
    assert_int_equal(pctl_active_sync(&f->cache, f->p, NULL), 0);
}

/* Rolls a pass back; the cache goes with it, as after a failed pass. */
static void roll_back(fixture *f)
{
    pctl_tx_rollback(f->p);
    pctl_active_drop(&f->cache);
}

static int change(fixture *f, planctl_entity e, int64_t id, planctl_status from,
                  planctl_status to)
{
    pctl_change c = PCTL_CHANGE_INIT;

    c.entity = e;
    c.id = id;
    c.from = from;
    c.to = to;
    c.actor = "engine";
    return pctl_gate(f->p, &c);
}

/* The run, its first phase and that phase's first step to IN_PROGRESS. */
static int start_step(fixture *f)
{
    int rc = change(f, PLANCTL_ENTITY_RUN, f->run, PLANCTL_STATUS_PENDING,
                    PLANCTL_STATUS_IN_PROGRESS);

    if (rc == 0)
        rc = change(f, PLANCTL_ENTITY_PHASE, f->phase, PLANCTL_STATUS_PENDING,
                    PLANCTL_STATUS_IN_PROGRESS);
    if (rc == 0)
        rc = change(f, PLANCTL_ENTITY_STEP, f->step, PLANCTL_STATUS_PENDING,
                    PLANCTL_STATUS_IN_PROGRESS);
    return rc;
}

/* The cached step's attempt count (the row's own, not the view's). */
static int *cached_attempt(fixture *f)
{
    pctl_run_row *r;
    size_t pi, si;

    assert_true(pctl_active_find_step(f->cache, f->step, &r, &pi, &si));
    return &r->phases[pi].steps[si].attempt;
}

/* The attempt number the open attempt row of the step got, read on the
 * handle's own connection (inside its transaction). */
static int64_t open_attempt(fixture *f)
{
    return tu_scalar(pctl_sqlite_db(f->p),
                     "SELECT number FROM attempts WHERE step_id = %lld AND "
                     "finished_at IS NULL",
                     (long long)f->step);
}

/* During a pass the gate takes the attempt count from the cache: a
 * tampered one shows in the attempt row it opens. */
static void test_pass_uses_the_cache(void **state)
{
    fixture *f = *state;

    begin_pass(f);
    *cached_attempt(f) = 41;
    assert_int_equal(start_step(f), 0);
    assert_int_equal(open_attempt(f), 42);
    roll_back(f);
}

/* The same change, untampered, checked: the cache and the row agree. */
static void test_check_agrees(void **state)
{
    fixture *f = *state;

    f->p->check_cache = 1;
    begin_pass(f);
    assert_int_equal(start_step(f), 0);
    assert_int_equal(pctl_tx_commit(f->p), 0);
    assert_int_equal(open_attempt(f), 1);
    assert_int_equal(tu_scalar(pctl_sqlite_db(f->p),
                               "SELECT attempt FROM events WHERE step_id = "
                               "%lld AND to_status = 'IN_PROGRESS'",
                               (long long)f->step),
                     1);
}

/* The handle opened again as an embedder asks for the check. */
static void reopen_checked(fixture *f)
{
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;

    planctl_close(f->p);
    o.flags = PLANCTL_OPEN_CHECK_CACHE;
    assert_int_equal(planctl_open(&f->p, f->path, &o), 0);
    pctl_observe(f->p, &pctl_active_observer, &f->cache);
}

/* Checked, a tampered cache fails the change, naming the disagreement. */
static void test_check_catches_a_wrong_attempt(void **state)
{
    fixture *f = *state;

    reopen_checked(f);
    begin_pass(f);
    *cached_attempt(f) = 41;
    assert_int_equal(start_step(f), PLANCTL_EIO);
    assert_non_null(
        strstr(planctl_errmsg(f->p), "engine cache disagrees with step"));
    assert_non_null(strstr(planctl_errmsg(f->p), "attempt 42/1"));
    roll_back(f);
    assert_int_equal(
        tu_scalar(pctl_sqlite_db(f->p), "SELECT count(*) FROM attempts"), 0);
}

/* Checked, a wrong event count in the cache fails the flush that writes
 * the pass's queued events and counts them per run before it commits. */
static void test_check_catches_a_wrong_event_count(void **state)
{
    fixture *f = *state;
    int64_t events = tu_scalar(
        pctl_sqlite_db(f->p), "SELECT count(*) FROM events WHERE run_id = %lld",
        (long long)f->run);

    f->p->check_cache = 1;
    /* As the engine does: counted when the pass flushes. */
    assert_int_equal(pctl_events_defer(f->p, 1), 0);
    begin_pass(f);
    assert_int_equal(f->cache->nruns, 1);
    f->cache->runs[0]->event_count += 7;
    assert_int_equal(start_step(f), 0);
    assert_int_equal(pctl_events_flush(f->p), PLANCTL_EIO);
    assert_non_null(strstr(planctl_errmsg(f->p), "events cached"));
    pctl_tx_rollback(f->p);
    pctl_events_defer(f->p, 0);
    pctl_active_drop(&f->cache);
    /* The pass failed whole: nothing of it is in the database. */
    assert_int_equal(
        tu_scalar(pctl_sqlite_db(f->p),
                  "SELECT count(*) FROM events WHERE run_id = %lld",
                  (long long)f->run),
        events);
    assert_int_equal(
        tu_scalar(pctl_sqlite_db(f->p), "SELECT count(*) FROM attempts"), 0);
}

/* Outside the transaction the cache was synced in, the gate reads the
 * row: a cache left over from an earlier pass is not trusted. */
static void test_other_transaction_reads_the_row(void **state)
{
    fixture *f = *state;

    begin_pass(f);
    assert_int_equal(pctl_tx_commit(f->p), 0); /* the pass ends */
    *cached_attempt(f) = 41;
    assert_int_equal(pctl_tx_begin(f->p), 0); /* no sync */
    assert_int_equal(start_step(f), 0);
    assert_int_equal(open_attempt(f), 1);
    roll_back(f);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_pass_uses_the_cache),
        T(test_check_agrees),
        T(test_check_catches_a_wrong_attempt),
        T(test_check_catches_a_wrong_event_count),
        T(test_other_transaction_reads_the_row),
    };
#undef T

    return cmocka_run_group_tests(tests, NULL, NULL);
}
