/*
 * test_store.c - the store through the public API: definitions, plan
 * selection and admission (DESIGN §4), the queue, cancel, pause, retry,
 * delete, the status and history documents (DESIGN §8), and processes
 * racing to admit a run.  Real SQLite files in a temp dir.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "core/status.h"
#include "planctl.h"
#include "store_fixture.h"
#include "testutil.h"

#define T0 1795269785000LL /* 2026-11-21T14:03:05.000Z */

typedef struct fixture {
    char *dir, *path;
    planctl *p;
    sqlite3 *db; /* a second, raw connection for looking at rows */
    int64_t now;
} fixture;

static int64_t fixed_clock(void *data)
{
    return ((fixture *)data)->now;
}

static void apply(fixture *f, const char *json)
{
    if (planctl_definition_apply(NULL, f->p, json, strlen(json), "t.json"))
        fail_msg("apply: %s", planctl_errmsg(f->p));
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    setenv("TZ", "UTC", 1);
    tzset();
    f->dir = tu_mkdtemp();
    f->path = tu_fmt("%s/store.db", f->dir);
    assert_int_equal(planctl_open(&f->p, f->path, NULL), 0);
    f->now = T0;
    planctl_set_clock(f->p, fixed_clock, f);
    assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
    sqlite3_busy_timeout(f->db, 5000);
    apply(f, ZK_V2);
    *state = f;
    return 0;
}

/* The per-status invariants of core/status.h hold for every row the
 * store wrote, whatever the test did. */
static void check_invariants(fixture *f)
{
    static const char *const tables[] = {"runs", "phases", "steps"};
    size_t t;

    for (t = 0; t < 3; t++) {
        char *sql = tu_fmt("SELECT id, status, started_at IS NOT NULL, "
                           "finished_at IS NOT NULL FROM %s",
                           tables[t]);
        sqlite3_stmt *st;

        assert_int_equal(sqlite3_prepare_v2(f->db, sql, -1, &st, NULL),
                         SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
            planctl_status s;

            assert_int_equal(planctl_status_parse(
                                 &s, (const char *)sqlite3_column_text(st, 1)),
                             0);
            if (!pctl_status_invariant(s, sqlite3_column_int(st, 2),
                                       sqlite3_column_int(st, 3)))
                fail_msg("%s %lld: %s with start=%d finish=%d", tables[t],
                         (long long)sqlite3_column_int64(st, 0),
                         planctl_status_name(s), sqlite3_column_int(st, 2),
                         sqlite3_column_int(st, 3));
        }
        sqlite3_finalize(st);
        free(sql);
    }
}

static int teardown(void **state)
{
    fixture *f = *state;

    check_invariants(f);

    sqlite3_close(f->db);
    planctl_close(f->p);
    tu_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

static int64_t create(fixture *f, const char *name, const planctl_param *ps,
                      size_t n)
{
    int64_t run = 0;

    if (planctl_instance_create(&run, f->p, name, "zookeeper", "0.2.0", ps, n))
        fail_msg("create: %s", planctl_errmsg(f->p));
    return run;
}

static char *run_status(fixture *f, int64_t run)
{
    char *sql =
        tu_fmt("SELECT status FROM runs WHERE id = %lld", (long long)run);
    char *s = tu_text(f->db, "%s", sql);

    free(sql);
    return s;
}

static void expect_run_status(fixture *f, int64_t run, const char *status)
{
    char *s = run_status(f, run);

    assert_non_null(s);
    assert_string_equal(s, status);
    free(s);
}

/* Moves the named phase or step (or the run when name is NULL) of run. */
static void move(fixture *f, int64_t run, planctl_entity e, const char *name,
                 planctl_status from, planctl_status to, const char *msg)
{
    int64_t id = run;

    if (e == PLANCTL_ENTITY_PHASE)
        id = tu_scalar(f->db,
                       "SELECT id FROM phases WHERE run_id = %lld AND "
                       "name = '%s'",
                       (long long)run, name);
    else if (e == PLANCTL_ENTITY_STEP)
        id = tu_scalar(f->db,
                       "SELECT id FROM steps WHERE run_id = %lld AND "
                       "name = '%s'",
                       (long long)run, name);
    if (planctl_transition(f->p, e, id, from, to, msg, "test"))
        fail_msg("move %s: %s", name ? name : "run", planctl_errmsg(f->p));
}

#define S(x) PLANCTL_STATUS_##x
#define RUN PLANCTL_ENTITY_RUN
#define PHASE PLANCTL_ENTITY_PHASE
#define STEP PLANCTL_ENTITY_STEP

/* Drives a single-phase, single-step run of the small plans to COMPLETE. */
static void complete_simple(fixture *f, int64_t run, const char *phase,
                            const char *step)
{
    move(f, run, RUN, NULL, S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, PHASE, phase, S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, STEP, step, S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, STEP, step, S(IN_PROGRESS), S(COMPLETE), NULL);
    move(f, run, PHASE, phase, S(IN_PROGRESS), S(COMPLETE), NULL);
    move(f, run, RUN, NULL, S(IN_PROGRESS), S(COMPLETE), NULL);
}

static char *plan_of(fixture *f, int64_t run)
{
    char *sql = tu_fmt("SELECT plan FROM runs WHERE id = %lld", (long long)run);
    char *s = tu_text(f->db, "%s", sql);

    free(sql);
    return s;
}

static void expect_plan(fixture *f, int64_t run, const char *plan)
{
    char *s = plan_of(f, run);

    assert_non_null(s);
    assert_string_equal(s, plan);
    free(s);
}

/* ---- definitions ---- */

static void test_apply_idempotent_and_conflict(void **state)
{
    fixture *f = *state;
    char *out = NULL;
    const char *changed = SIMPLE;
    char *other;

    assert_int_equal(
        planctl_definition_apply(&out, f->p, ZK_V2, strlen(ZK_V2), "zk.json"),
        0);
    assert_non_null(strstr(out, "\"created\":false"));
    planctl_free(out);
    apply(f, SIMPLE);
    /* Same (name, version), different content. */
    other = tu_fmt("%.*s\"q\"%s", (int)(strstr(changed, "\"s\"") - changed),
                   changed, strstr(changed, "\"s\"") + 3);
    assert_int_equal(planctl_definition_apply(NULL, f->p, other, strlen(other),
                                              "simple.json"),
                     PLANCTL_ECONFLICT);
    assert_non_null(strstr(planctl_errmsg(f->p), "simple@1 is already "
                                                 "registered with different "
                                                 "content"));
    free(other);
    assert_int_equal(
        planctl_definition_apply(NULL, f->p, "{\"name\": 1", 10, "bad.json"),
        PLANCTL_EDEFINITION);
    assert_non_null(strstr(planctl_errmsg(f->p), "bad.json:1:"));
    assert_int_equal(planctl_definitions_json(&out, f->p), 0);
    assert_non_null(strstr(out, "\"plans\":[\"backup\",\"cleanup\","
                                "\"deploy\",\"update\"]"));
    planctl_free(out);

    /* A version's body, stored compact with sorted keys; the latest when
     * no version is given; not-found messages name the choices. */
    assert_int_equal(planctl_definition_body(&out, f->p, "simple", NULL), 0);
    assert_true(out[0] == '{' && strstr(out, "\"version\":\"1\"") != NULL);
    planctl_free(out);
    assert_int_equal(planctl_definition_body(&out, f->p, "simple", "1"), 0);
    assert_true(strstr(out, "\"name\":\"simple\"") != NULL);
    planctl_free(out);
    assert_int_equal(planctl_definition_body(&out, f->p, "simple", "9"),
                     PLANCTL_ENOTFOUND);
    assert_null(out);
    assert_string_equal(planctl_errmsg(f->p), "definition simple@9 is not "
                                              "registered; its versions: 1");
    assert_int_equal(planctl_definition_body(&out, f->p, "simpel", NULL),
                     PLANCTL_ENOTFOUND);
    assert_non_null(strstr(planctl_errmsg(f->p), "did you mean \"simple\""));
    assert_int_equal(planctl_definition_body(NULL, f->p, "simple", NULL),
                     PLANCTL_EINVAL);
}

/* ---- create and parameters ---- */

static void test_create_runs_deploy(void **state)
{
    fixture *f = *state;
    int64_t run = create(f, "zk", NULL, 0), other = 0;
    planctl_param bad[] = {{"NODE_CONT", "5"}, {"MEMROY", "2Gi"}};

    assert_true(run > 0);
    expect_plan(f, run, "deploy");
    expect_run_status(f, run, "PENDING");
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM phases WHERE run_id = "
                               "%lld",
                               (long long)run),
                     2);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM steps WHERE run_id = "
                               "%lld AND status = 'PENDING'",
                               (long long)run),
                     3);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT max_attempts FROM steps WHERE name = "
                               "'node-0'"),
                     5);
    /* Creation events: the run, 2 phases, 3 steps, plus the admin one. */
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM events WHERE run_id = "
                               "%lld",
                               (long long)run),
                     6);
    assert_int_equal(
        planctl_instance_create(&other, f->p, "zk", "zookeeper", NULL, NULL, 0),
        PLANCTL_ECONFLICT);
    assert_non_null(strstr(planctl_errmsg(f->p), "already exists"));
    assert_int_equal(
        planctl_instance_create(&other, f->p, "zk2", "zookeeper", NULL, bad, 2),
        PLANCTL_EINVAL);
    /* Every problem in one message, with the closest names. */
    assert_string_equal(planctl_errmsg(f->p),
                        "unknown parameter \"NODE_CONT\" for zookeeper@0.2.0 "
                        "(did you mean \"NODE_COUNT\"?); unknown parameter "
                        "\"MEMROY\" for zookeeper@0.2.0 (did you mean "
                        "\"MEMORY\"?)");
    assert_int_equal(planctl_instance_create(&other, f->p, "Bad Name",
                                             "zookeeper", NULL, NULL, 0),
                     PLANCTL_EINVAL);
    assert_int_equal(
        planctl_instance_create(&other, f->p, "zk3", "kafka", NULL, NULL, 0),
        PLANCTL_ENOTFOUND);
    assert_int_equal(planctl_instance_create(&other, f->p, "zk3", "zookeeper",
                                             "9.9.9", NULL, 0),
                     PLANCTL_ENOTFOUND);
    assert_int_equal(other, 0);
    /* Nothing of the refused calls was written. */
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM instances"), 1);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM runs"), 1);
}

static void test_missing_required_parameter(void **state)
{
    fixture *f = *state;
    int64_t run = 0;
    planctl_param zone = {"ZONE", "eu-1"};

    apply(f, ZK_V5);
    assert_int_equal(planctl_instance_create(&run, f->p, "z5", "zookeeper",
                                             "0.5.0", NULL, 0),
                     PLANCTL_EINVAL);
    assert_string_equal(planctl_errmsg(f->p),
                        "parameter \"ZONE\" is required by zookeeper@0.5.0; "
                        "set it with -p ZONE=VALUE");
    /* Unknown and missing parameters are reported together. */
    {
        planctl_param typo = {"ZOEN", "eu-1"};

        assert_int_equal(planctl_instance_create(&run, f->p, "z5", "zookeeper",
                                                 "0.5.0", &typo, 1),
                         PLANCTL_EINVAL);
        assert_string_equal(planctl_errmsg(f->p),
                            "unknown parameter \"ZOEN\" for zookeeper@0.5.0 "
                            "(did you mean \"ZONE\"?); parameter \"ZONE\" is "
                            "required by zookeeper@0.5.0; set it with -p "
                            "ZONE=VALUE");
    }
    /* ... with bad syntax (a NULL value, an empty name) and a repeat. */
    {
        planctl_param bad[] = {
            {"ZONE", NULL}, {"", "x"}, {"ZOEN", "a"}, {"ZOEN", "b"}};

        assert_int_equal(planctl_instance_create(&run, f->p, "z5", "zookeeper",
                                                 "0.5.0", bad, 4),
                         PLANCTL_EINVAL);
        assert_string_equal(
            planctl_errmsg(f->p),
            "invalid parameter \"ZONE\"; expected NAME=VALUE; invalid "
            "parameter \"=x\"; expected NAME=VALUE; unknown parameter "
            "\"ZOEN\" for zookeeper@0.5.0 (did you mean \"ZONE\"?); "
            "parameter \"ZOEN\" given twice; parameter \"ZONE\" is required "
            "by zookeeper@0.5.0; set it with -p ZONE=VALUE");
    }
    assert_int_equal(planctl_instance_create(&run, f->p, "z5", "zookeeper",
                                             "0.5.0", &zone, 1),
                     0);
    assert_true(run > 0);
}

static void test_set_selects_plan(void **state)
{
    fixture *f = *state;
    int64_t run = create(f, "zk", NULL, 0), next = 0;
    planctl_param count = {"NODE_COUNT", "5"};
    planctl_param backup = {"BACKUP_NAME", "nightly"};
    planctl_param both[] = {{"NODE_COUNT", "7"}, {"BACKUP_NAME", "weekly"}};
    planctl_param same = {"NODE_COUNT", "5"};
    char *params;

    /* While deploy is active, a change is refused naming the run. */
    assert_int_equal(planctl_instance_set(&next, f->p, "zk", &count, 1),
                     PLANCTL_ECONFLICT);
    assert_string_equal(planctl_errmsg(f->p),
                        "instance \"zk\" is running plan \"deploy\" (run 1, "
                        "PENDING since 14:03:05); cancel it or wait for it "
                        "to finish");
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    expect_run_status(f, run, "CANCELLED");

    /* No explicit trigger: update, since the definition has it. */
    assert_int_equal(planctl_instance_set(&next, f->p, "zk", &count, 1), 0);
    expect_plan(f, next, "update");
    params = tu_text(f->db, "SELECT params FROM runs ORDER BY id DESC LIMIT 1");
    assert_string_equal(params, "{\"NODE_COUNT\":\"5\",\"MEMORY\":\"1Gi\"}");
    free(params);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", "test"), 0);

    /* Setting the value it already has changes nothing: no run. */
    assert_int_equal(planctl_instance_set(&next, f->p, "zk", &same, 1), 0);
    assert_int_equal(next, 0);

    /* An explicit trigger. */
    assert_int_equal(planctl_instance_set(&next, f->p, "zk", &backup, 1), 0);
    expect_plan(f, next, "backup");
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);

    /* A parameter without a trigger changed together with one that has
     * a trigger runs that trigger's plan (DESIGN §4, KUDO's rule). */
    assert_int_equal(planctl_instance_set(&next, f->p, "zk", both, 2), 0);
    expect_plan(f, next, "backup");
    params = tu_text(f->db, "SELECT params FROM instances WHERE name = 'zk'");
    assert_string_equal(params,
                        "{\"BACKUP_NAME\":\"weekly\",\"NODE_COUNT\":\"7\"}");
    free(params);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    assert_int_equal(planctl_instance_set(&next, f->p, "nope", &count, 1),
                     PLANCTL_ENOTFOUND);
}

static void test_set_without_update_runs_deploy(void **state)
{
    fixture *f = *state;
    int64_t run = 0, next = 0;
    planctl_param zone = {"ZONE", "a"}, zone2 = {"ZONE", "b"};

    apply(f, ZK_V5);
    assert_int_equal(planctl_instance_create(&run, f->p, "z", "zookeeper",
                                             "0.5.0", &zone, 1),
                     0);
    complete_simple(f, run, "a", "s");
    assert_int_equal(planctl_instance_set(&next, f->p, "z", &zone2, 1), 0);
    expect_plan(f, next, "deploy");
}

static void test_upgrade_selects_plan(void **state)
{
    fixture *f = *state;
    int64_t run = create(f, "zk", NULL, 0), next = 0;
    planctl_param zone = {"ZONE", "x"};

    apply(f, ZK_V3);
    apply(f, ZK_V4);
    apply(f, ZK_V5);
    assert_int_equal(
        planctl_instance_upgrade(&next, f->p, "zk", "0.3.0", NULL, 0),
        PLANCTL_ECONFLICT);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    assert_int_equal(
        planctl_instance_upgrade(&next, f->p, "zk", "0.3.0", NULL, 0), 0);
    expect_plan(f, next, "upgrade");
    complete_simple(f, next, "a", "s");
    assert_int_equal(
        planctl_instance_upgrade(&next, f->p, "zk", "0.3.0", NULL, 0),
        PLANCTL_EINVAL);
    assert_int_equal(
        planctl_instance_upgrade(&next, f->p, "zk", "0.4.0", NULL, 0), 0);
    expect_plan(f, next, "update");
    complete_simple(f, next, "a", "s");
    /* 0.5.0 requires ZONE: refused without it, accepted with it. */
    assert_int_equal(
        planctl_instance_upgrade(&next, f->p, "zk", "0.5.0", NULL, 0),
        PLANCTL_EINVAL);
    assert_int_equal(
        planctl_instance_upgrade(&next, f->p, "zk", "0.5.0", &zone, 1), 0);
    expect_plan(f, next, "deploy");
    assert_int_equal(
        planctl_instance_upgrade(&next, f->p, "zk", "7.0", NULL, 0),
        PLANCTL_ENOTFOUND);
    (void)run;
}

static void test_last_applied(void **state)
{
    fixture *f = *state;
    int64_t run = create(f, "zk", NULL, 0);
    char *applied;

    applied = tu_text(f->db, "SELECT last_applied FROM instances");
    assert_null(applied);
    move(f, run, RUN, NULL, S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, PHASE, "nodes", S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, PHASE, "nodes", S(IN_PROGRESS), S(COMPLETE), NULL);
    move(f, run, PHASE, "check", S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, PHASE, "check", S(IN_PROGRESS), S(COMPLETE), NULL);
    move(f, run, RUN, NULL, S(IN_PROGRESS), S(COMPLETE), NULL);
    applied = tu_text(f->db, "SELECT last_applied FROM instances");
    assert_string_equal(applied, "{\"NODE_COUNT\":\"3\",\"MEMORY\":\"1Gi\"}");
    free(applied);
}

/* ---- trigger, queue, cancel, pause ---- */

static void test_trigger_conflict_and_queue(void **state)
{
    fixture *f = *state;
    int64_t run = create(f, "zk", NULL, 0), q1 = 0, q2 = 0, r = 0;
    planctl_trigger_options o = PLANCTL_TRIGGER_OPTIONS_INIT;
    char *doc;

    f->now += 60000;
    assert_int_equal(planctl_plan_trigger(&r, f->p, "zk", "backup", NULL),
                     PLANCTL_ECONFLICT);
    assert_string_equal(
        planctl_errmsg(f->p),
        "instance \"zk\" is running plan \"deploy\" (run 1, "
        "PENDING since 14:03:05); cancel it first, or queue the "
        "run");
    assert_int_equal(planctl_plan_trigger(&r, f->p, "zk", "cleanup", NULL),
                     PLANCTL_EINVAL);
    assert_int_equal(planctl_plan_trigger(&r, f->p, "zk", "bakup", NULL),
                     PLANCTL_ENOTFOUND);
    assert_non_null(strstr(planctl_errmsg(f->p), "did you mean \"backup\""));
    o.queue = 1;
    o.reason = "nightly";
    assert_int_equal(planctl_plan_trigger(&q1, f->p, "zk", "backup", &o), 0);
    assert_int_equal(planctl_plan_trigger(&q2, f->p, "zk", "update", &o), 0);
    expect_run_status(f, q1, "QUEUED");
    expect_run_status(f, q2, "QUEUED");
    assert_int_equal(planctl_status_json(&doc, f->p, "zk", NULL), 0);
    assert_non_null(strstr(doc, "\"active_run\":1,\"queued\":[2,3]"));
    planctl_free(doc);

    /* The active run ends: the oldest queued run takes the slot in the
     * same transaction, the other keeps waiting. */
    assert_int_equal(planctl_run_cancel(&r, f->p, "zk", "operator"), 0);
    assert_int_equal(r, run);
    expect_run_status(f, q1, "PENDING");
    expect_run_status(f, q2, "QUEUED");
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    expect_run_status(f, q2, "PENDING");
    /* A queued trigger with nothing active starts at once. */
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    assert_int_equal(planctl_plan_trigger(&r, f->p, "zk", "backup", &o), 0);
    expect_run_status(f, r, "PENDING");
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL),
                     PLANCTL_ENOTFOUND);
    assert_string_equal(planctl_errmsg(f->p),
                        "instance \"zk\" has no active run to cancel");
}

static void test_cancel_closes_children(void **state)
{
    fixture *f = *state;
    int64_t run = create(f, "zk", NULL, 0);

    move(f, run, RUN, NULL, S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, PHASE, "nodes", S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, STEP, "node-0", S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, STEP, "node-1", S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, STEP, "node-1", S(IN_PROGRESS), S(ERROR), "flaky");
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", "maintenance"), 0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM steps WHERE status <> "
                               "'CANCELLED'"),
                     0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM phases WHERE status <> "
                               "'CANCELLED'"),
                     0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM steps WHERE message = "
                               "'cancelled: maintenance'"),
                     2);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM steps WHERE message = "
                               "'not started: run cancelled'"),
                     1);
    /* The open attempt was closed as CANCELLED; none left in flight. */
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM attempts WHERE "
                                      "finished_at IS NULL"),
                     0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM attempts WHERE status = "
                               "'CANCELLED'"),
                     1);
    expect_run_status(f, run, "CANCELLED");
}

static void test_pause_resume(void **state)
{
    fixture *f = *state;
    int64_t run = create(f, "zk", NULL, 0), r = 0;

    assert_int_equal(planctl_run_pause(&r, f->p, "zk"), PLANCTL_ECONFLICT);
    assert_string_equal(planctl_errmsg(f->p),
                        "run 1 of instance \"zk\" is PENDING; only an "
                        "IN_PROGRESS run can be paused");
    move(f, run, RUN, NULL, S(PENDING), S(IN_PROGRESS), NULL);
    assert_int_equal(planctl_run_resume(&r, f->p, "zk"), PLANCTL_ECONFLICT);
    assert_int_equal(planctl_run_pause(&r, f->p, "zk"), 0);
    assert_int_equal(r, run);
    expect_run_status(f, run, "PAUSED");
    /* Paused still holds the slot. */
    assert_int_equal(planctl_plan_trigger(&r, f->p, "zk", "backup", NULL),
                     PLANCTL_ECONFLICT);
    assert_int_equal(planctl_run_resume(&r, f->p, "zk"), 0);
    expect_run_status(f, run, "IN_PROGRESS");
}

/* ---- retry ---- */

static void test_retry_carries_over(void **state)
{
    fixture *f = *state;
    int64_t run = create(f, "zk", NULL, 0), retry = 0, r = 0;

    assert_int_equal(planctl_run_retry(&r, f->p, "zk", 0), PLANCTL_ECONFLICT);
    assert_non_null(strstr(planctl_errmsg(f->p), "run 1 is PENDING"));
    move(f, run, RUN, NULL, S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, PHASE, "nodes", S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, STEP, "node-0", S(PENDING), S(IN_PROGRESS), NULL);
    f->now += 12000;
    move(f, run, STEP, "node-0", S(IN_PROGRESS), S(COMPLETE), NULL);
    move(f, run, STEP, "node-1", S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, STEP, "node-1", S(IN_PROGRESS), S(FATAL_ERROR), "disk full");
    move(f, run, PHASE, "nodes", S(IN_PROGRESS), S(FATAL_ERROR), NULL);
    move(f, run, PHASE, "check", S(PENDING), S(CANCELLED),
         "not started: run ended FATAL_ERROR");
    move(f, run, RUN, NULL, S(IN_PROGRESS), S(FATAL_ERROR), "node-1 failed");

    assert_int_equal(planctl_run_retry(&retry, f->p, "zk", 0), 0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT retry_of FROM runs WHERE id = %lld",
                               (long long)retry),
                     run);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM steps WHERE run_id = "
                               "%lld AND status = 'COMPLETE' AND name = "
                               "'node-0' AND message = 'carried over from "
                               "run 1' AND finished_at - started_at = 12000",
                               (long long)retry),
                     1);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM steps WHERE run_id = "
                               "%lld AND status = 'PENDING'",
                               (long long)retry),
                     2);
    /* A phase is carried over only when it was COMPLETE as a whole. */
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM phases WHERE run_id = "
                               "%lld AND status = 'PENDING'",
                               (long long)retry),
                     2);
    expect_plan(f, retry, "deploy");
    assert_int_equal(planctl_run_retry(&r, f->p, "zk", 999), PLANCTL_ENOTFOUND);
}

/* ---- delete ---- */

static void test_delete_with_cleanup(void **state)
{
    fixture *f = *state;
    int64_t run = create(f, "zk", NULL, 0), cleanup = 0, r = 0;
    planctl_param count = {"NODE_COUNT", "5"};

    assert_int_equal(planctl_instance_delete(&cleanup, f->p, "zk", 0),
                     PLANCTL_ECONFLICT);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    assert_int_equal(planctl_instance_delete(&cleanup, f->p, "zk", 0), 0);
    expect_plan(f, cleanup, "cleanup");
    assert_int_equal(tu_scalar(f->db, "SELECT deleting FROM instances"), 1);
    /* A deleting instance accepts no other change. */
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    assert_int_equal(planctl_instance_set(&r, f->p, "zk", &count, 1),
                     PLANCTL_ECONFLICT);
    assert_int_equal(planctl_plan_trigger(&r, f->p, "zk", "backup", NULL),
                     PLANCTL_ECONFLICT);
    /* Delete again after a failed/cancelled cleanup runs cleanup again;
     * its completion removes the instance with its runs and events. */
    assert_int_equal(planctl_instance_delete(&cleanup, f->p, "zk", 0), 0);
    complete_simple(f, cleanup, "remove", "rm");
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM instances"), 0);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM runs"), 0);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM events WHERE "
                                      "instance_id IS NOT NULL"),
                     0);
    (void)run;
}

static void test_delete_without_cleanup_and_force(void **state)
{
    fixture *f = *state;
    int64_t run = 0, r = 1;

    apply(f, SIMPLE);
    assert_int_equal(
        planctl_instance_create(&run, f->p, "s", "simple", NULL, NULL, 0), 0);
    assert_int_equal(planctl_instance_delete(&r, f->p, "s", 1),
                     PLANCTL_ECONFLICT); /* active run, even with force */
    assert_non_null(strstr(planctl_errmsg(f->p), "cancel it before deleting"));
    assert_int_equal(planctl_run_cancel(NULL, f->p, "s", NULL), 0);
    assert_int_equal(planctl_instance_delete(&r, f->p, "s", 0), 0);
    assert_int_equal(r, 0);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM instances"), 0);
    create(f, "zk", NULL, 0);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    assert_int_equal(planctl_instance_delete(&r, f->p, "zk", 1), 0);
    assert_int_equal(r, 0);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM instances"), 0);
    assert_int_equal(planctl_instance_delete(&r, f->p, "zk", 0),
                     PLANCTL_ENOTFOUND);
}

/* ---- the documents ---- */

static void expect_json(const char *got, const char *want)
{
    json_error_t e1, e2;
    json_t *g = json_loads(got, 0, &e1), *w = json_loads(want, 0, &e2);
    char *gs, *ws;

    if (!w)
        fail_msg("bad expected JSON: %s at %d", e2.text, e2.line);
    assert_non_null(g);
    gs = json_dumps(g, JSON_INDENT(1) | JSON_SORT_KEYS);
    ws = json_dumps(w, JSON_INDENT(1) | JSON_SORT_KEYS);
    if (!json_equal(g, w))
        fail_msg("JSON differs.\n--- got\n%s\n--- want\n%s", gs, ws);
    free(gs);
    free(ws);
    json_decref(g);
    json_decref(w);
}

/* A run with steps in every status a step can have, and plans in
 * NEVER_RUN, CANCELLED and IN_PROGRESS; checked field by field. */
/* Unsetting through the C API: planctl_admit_options.unset (version 2);
 * a version 1 struct is still taken and has no unset. */
static void test_unset_api(void **state)
{
    fixture *f = *state;
    planctl_param mem = {"MEMORY", "2Gi"};
    const char *const names[] = {"MEMORY"};
    planctl_admit_options o = PLANCTL_ADMIT_OPTIONS_INIT;
    planctl_admitted a;
    char *reason;

    create(f, "zk", &mem, 1);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    /* Version 1: the fields after preflight_skip are not read. */
    o.version = 1;
    o.unset = names;
    o.nunset = 1;
    assert_int_equal(planctl_admit_set(&a, f->p, "zk", NULL, 0, &o),
                     PLANCTL_EINVAL);
    assert_string_equal(planctl_errmsg(f->p),
                        "no parameter given: no value to set and none to "
                        "unset");
    o.version = 3;
    assert_int_equal(planctl_admit_set(&a, f->p, "zk", NULL, 0, &o),
                     PLANCTL_EINVAL);
    assert_string_equal(planctl_errmsg(f->p),
                        "admission options of version 3: this library knows "
                        "versions 1 to 2");
    o.version = PLANCTL_ADMIT_OPTIONS_VERSION;
    o.unset = NULL;
    assert_int_equal(planctl_admit_set(&a, f->p, "zk", NULL, 0, &o),
                     PLANCTL_EINVAL);
    o.unset = names;
    /* Unset: the default applies again; a change of MEMORY (no trigger:
     * update). */
    assert_int_equal(planctl_admit_set(&a, f->p, "zk", NULL, 0, &o), 0);
    assert_true(a.run > 0);
    assert_string_equal(a.plan, "update");
    reason = tu_text(f->db, "SELECT reason FROM runs WHERE id = %lld",
                     (long long)a.run);
    assert_string_equal(reason, "parameters changed: MEMORY");
    free(reason);
    planctl_admitted_clear(&a);
    assert_int_equal(tu_scalar(f->db, "SELECT params = '{}' FROM instances"),
                     1);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    /* Not set explicitly any more: nothing to do, nothing admitted. */
    assert_int_equal(planctl_admit_set(&a, f->p, "zk", NULL, 0, &o), 0);
    assert_int_equal(a.run, 0);
    planctl_admitted_clear(&a);
}

/* planctl_run_cancel_opts(): a QUEUED run by id ends CANCELLED with its
 * children, named by the actor, and leaves the active run and the rest of
 * the queue alone; the active run's id cancels it; an ended or unknown
 * run, a bad version or id are refused with a message naming them. */
static void test_cancel_queued_run(void **state)
{
    fixture *f = *state;
    planctl_trigger_options t = PLANCTL_TRIGGER_OPTIONS_INIT;
    planctl_cancel_options o = PLANCTL_CANCEL_OPTIONS_INIT;
    int64_t active, q1 = 0, q2 = 0, id = 0;
    char *s;

    active = create(f, "zk", NULL, 0);
    t.queue = 1;
    assert_int_equal(planctl_plan_trigger(&q1, f->p, "zk", "update", &t), 0);
    assert_int_equal(planctl_plan_trigger(&q2, f->p, "zk", "deploy", &t), 0);
    assert_int_equal(planctl_set_actor(f->p, "controller"), 0);
    o.run = q1;
    o.reason = "not now";
    assert_int_equal(planctl_run_cancel_opts(&id, f->p, "zk", &o), 0);
    assert_int_equal(id, q1);
    s = tu_text(f->db,
                "SELECT status || ' ' || message FROM runs WHERE id = "
                "%lld",
                (long long)q1);
    assert_string_equal(s, "CANCELLED cancelled: not now");
    free(s);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM steps WHERE run_id = "
                               "%lld AND status <> 'CANCELLED'",
                               (long long)q1),
                     0);
    s = tu_text(f->db,
                "SELECT actor FROM events WHERE run_id = %lld AND "
                "entity = 'run' ORDER BY seq DESC LIMIT 1",
                (long long)q1);
    assert_string_equal(s, "controller");
    free(s);
    assert_int_equal(planctl_set_actor(f->p, NULL), 0);
    /* The active run goes on; the other queued run keeps its place. */
    s = tu_text(f->db, "SELECT group_concat(status, ',') FROM (SELECT status "
                       "FROM runs ORDER BY id)");
    assert_string_equal(s, "PENDING,CANCELLED,QUEUED");
    free(s);
    /* Ended, unknown, bad arguments. */
    assert_int_equal(planctl_run_cancel_opts(&id, f->p, "zk", &o),
                     PLANCTL_ECONFLICT);
    assert_int_equal(id, 0);
    assert_non_null(strstr(planctl_errmsg(f->p), "is CANCELLED"));
    o.run = 999;
    assert_int_equal(planctl_run_cancel_opts(&id, f->p, "zk", &o),
                     PLANCTL_ENOTFOUND);
    assert_non_null(strstr(planctl_errmsg(f->p), "run 999"));
    o.run = -1;
    assert_int_equal(planctl_run_cancel_opts(&id, f->p, "zk", &o),
                     PLANCTL_EINVAL);
    o.run = 0;
    o.version = 2;
    assert_int_equal(planctl_run_cancel_opts(&id, f->p, "zk", &o),
                     PLANCTL_EINVAL);
    assert_non_null(strstr(planctl_errmsg(f->p), "version 2"));
    o.version = PLANCTL_CANCEL_OPTIONS_VERSION;
    assert_int_equal(planctl_run_cancel_opts(&id, f->p, NULL, &o),
                     PLANCTL_EINVAL);
    /* The active run by id: cancelled, the queued one promoted. */
    o.run = active;
    o.reason = NULL;
    assert_int_equal(planctl_run_cancel_opts(&id, f->p, "zk", &o), 0);
    assert_int_equal(id, active);
    s = tu_text(f->db, "SELECT group_concat(status, ',') FROM (SELECT status "
                       "FROM runs ORDER BY id)");
    assert_string_equal(s, "CANCELLED,CANCELLED,PENDING");
    free(s);
    /* NULL options: the active run, as planctl_run_cancel(). */
    assert_int_equal(planctl_run_cancel_opts(&id, f->p, "zk", NULL), 0);
    assert_int_equal(id, q2);
}

static void test_status_document(void **state)
{
    fixture *f = *state;
    int64_t run, r = 0, id;
    planctl_trigger_options o = PLANCTL_TRIGGER_OPTIONS_INIT;
    char *doc, *uid1, *uid3, *want, *sql;

    run = create(f, "zk", NULL, 0); /* run 1 at T0 */
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    f->now = T0 + 1000;
    assert_int_equal(planctl_plan_trigger(&r, f->p, "zk", "deploy", NULL), 0);
    run = r; /* run 2 */
    o.queue = 1;
    assert_int_equal(planctl_plan_trigger(&r, f->p, "zk", "update", &o), 0);
    f->now = T0 + 2000;
    move(f, run, RUN, NULL, S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, PHASE, "nodes", S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, STEP, "node-0", S(PENDING), S(IN_PROGRESS), NULL);
    move(f, run, STEP, "node-1", S(PENDING), S(IN_PROGRESS), NULL);
    f->now = T0 + 14000;
    move(f, run, STEP, "node-0", S(IN_PROGRESS), S(COMPLETE), NULL);
    id = tu_scalar(f->db,
                   "SELECT id FROM steps WHERE run_id = %lld AND name = "
                   "'node-1'",
                   (long long)run);
    {
        /* ERROR with the next try's time, through the store's gate as the
         * engine will use it: planctl_transition has no next_attempt_at,
         * so set it the way an engine would, by raw SQL, after. */
        assert_int_equal(planctl_transition(f->p, STEP, id, S(IN_PROGRESS),
                                            S(ERROR),
                                            "exit status 1: connection "
                                            "refused",
                                            "engine"),
                         0);
        sql = tu_fmt("UPDATE steps SET next_attempt_at = %lld WHERE id = "
                     "%lld",
                     T0 + 18000, (long long)id);
        assert_int_equal(sqlite3_exec(f->db, sql, NULL, NULL, NULL), SQLITE_OK);
        free(sql);
    }
    f->now = T0 + 16000;
    uid1 = tu_text(f->db, "SELECT uid FROM runs WHERE id = 1");
    uid3 = tu_text(f->db, "SELECT uid FROM runs WHERE id = 2");
    assert_int_equal(strlen(uid1), 32);
    want = tu_fmt(
        "{\"schema\": 1, \"instance\": \"zk\","
        " \"definition\": {\"name\": \"zookeeper\", \"version\": \"0.2.0\"},"
        " \"active_run\": 2, \"queued\": [3], \"engine\": null,"
        " \"waiting\": null,"
        " \"parameters\": ["
        "  {\"name\": \"NODE_COUNT\", \"value\": \"3\", \"default\": true,"
        "   \"secret\": false},"
        "  {\"name\": \"MEMORY\", \"value\": \"1Gi\", \"default\": true,"
        "   \"secret\": false},"
        "  {\"name\": \"BACKUP_NAME\", \"value\": null, \"default\": false,"
        "   \"secret\": false}],"
        " \"plans\": ["
        "  {\"name\": \"backup\", \"strategy\": \"serial\","
        "   \"status\": \"NEVER_RUN\", \"run\": null},"
        "  {\"name\": \"cleanup\", \"strategy\": \"serial\","
        "   \"status\": \"NEVER_RUN\", \"run\": null},"
        "  {\"name\": \"deploy\", \"strategy\": \"serial\","
        "   \"status\": \"IN_PROGRESS\", \"run\": {"
        "    \"id\": 2, \"uid\": \"%s\", \"plan\": \"deploy\","
        "    \"status\": \"IN_PROGRESS\", \"trigger\": \"manual\","
        "    \"reason\": null, \"retry_of\": null,"
        "    \"created_at\": \"2026-11-21T14:03:06.000Z\","
        "    \"started_at\": \"2026-11-21T14:03:07.000Z\","
        "    \"finished_at\": null, \"duration_ms\": 14000,"
        "    \"message\": null, \"definition_version\": \"0.2.0\","
        "    \"params\": {\"MEMORY\": \"1Gi\", \"NODE_COUNT\": \"3\"},"
        "    \"phases\": ["
        "     {\"name\": \"nodes\", \"strategy\": \"parallel\","
        "      \"status\": \"IN_PROGRESS\","
        "      \"started_at\": \"2026-11-21T14:03:07.000Z\","
        "      \"finished_at\": null, \"message\": null, \"steps\": ["
        "       {\"name\": \"node-0\", \"status\": \"COMPLETE\","
        "        \"attempt\": 1, \"max_attempts\": 5,"
        "        \"next_attempt_at\": null,"
        "        \"started_at\": \"2026-11-21T14:03:07.000Z\","
        "        \"finished_at\": \"2026-11-21T14:03:19.000Z\","
        "        \"message\": null},"
        "       {\"name\": \"node-1\", \"status\": \"ERROR\","
        "        \"attempt\": 1, \"max_attempts\": 3,"
        "        \"next_attempt_at\": \"2026-11-21T14:03:23.000Z\","
        "        \"started_at\": \"2026-11-21T14:03:07.000Z\","
        "        \"finished_at\": null,"
        "        \"message\": \"exit status 1: connection refused\"}]},"
        "     {\"name\": \"check\", \"strategy\": \"serial\","
        "      \"status\": \"PENDING\", \"started_at\": null,"
        "      \"finished_at\": null, \"message\": null, \"steps\": ["
        "       {\"name\": \"ping\", \"status\": \"PENDING\","
        "        \"attempt\": 0, \"max_attempts\": 3,"
        "        \"next_attempt_at\": null, \"started_at\": null,"
        "        \"finished_at\": null, \"message\": null}]}]}},"
        "  {\"name\": \"update\", \"strategy\": \"serial\","
        "   \"status\": \"QUEUED\", \"run\": {"
        "    \"id\": 3, \"uid\": \"%s\", \"plan\": \"update\","
        "    \"status\": \"QUEUED\", \"trigger\": \"manual\","
        "    \"reason\": null, \"retry_of\": null,"
        "    \"created_at\": \"2026-11-21T14:03:06.000Z\","
        "    \"started_at\": null, \"finished_at\": null,"
        "    \"duration_ms\": null, \"message\": null,"
        "    \"definition_version\": \"0.2.0\","
        "    \"params\": {\"MEMORY\": \"1Gi\", \"NODE_COUNT\": \"3\"},"
        "    \"phases\": ["
        "     {\"name\": \"roll\", \"strategy\": \"serial\","
        "      \"status\": \"PENDING\", \"started_at\": null,"
        "      \"finished_at\": null, \"message\": null, \"steps\": ["
        "       {\"name\": \"restart\", \"status\": \"PENDING\","
        "        \"attempt\": 0, \"max_attempts\": 3,"
        "        \"next_attempt_at\": null, \"started_at\": null,"
        "        \"finished_at\": null, \"message\": null}]}]}}]}",
        uid3, "UID3");
    free(uid3);
    uid3 = tu_text(f->db, "SELECT uid FROM runs WHERE id = 3");
    {
        char *fixed = tu_fmt("%.*s%s%s", (int)(strstr(want, "UID3") - want),
                             want, uid3, strstr(want, "UID3") + 4);

        free(want);
        want = fixed;
    }
    assert_int_equal(planctl_status_json(&doc, f->p, "zk", NULL), 0);
    expect_json(doc, want);
    planctl_free(doc);
    free(want);

    /* --plan and --run select; unknown ones are not found. */
    {
        planctl_status_options so = PLANCTL_STATUS_OPTIONS_INIT;

        so.plan = "deploy";
        so.run = 1;
        assert_int_equal(planctl_status_json(&doc, f->p, "zk", &so), 0);
        assert_non_null(strstr(doc, "\"plans\":[{\"name\":\"deploy\","
                                    "\"strategy\":\"serial\",\"status\":"
                                    "\"CANCELLED\""));
        assert_null(strstr(doc, "\"backup\""));
        planctl_free(doc);
        so.run = 42;
        assert_int_equal(planctl_status_json(&doc, f->p, "zk", &so),
                         PLANCTL_ENOTFOUND);
        so.run = 0;
        so.plan = "nope";
        assert_int_equal(planctl_status_json(&doc, f->p, "zk", &so),
                         PLANCTL_ENOTFOUND);
        assert_int_equal(planctl_status_json(&doc, f->p, "zz", NULL),
                         PLANCTL_ENOTFOUND);
        assert_string_equal(planctl_errmsg(f->p),
                            "instance \"zz\" not found (did you mean "
                            "\"zk\"?)");
        assert_int_equal(planctl_status_json(&doc, f->p, "kafka", NULL),
                         PLANCTL_ENOTFOUND);
        assert_string_equal(planctl_errmsg(f->p),
                            "instance \"kafka\" not found");
    }
    free(uid1);
    free(uid3);
}

static void test_history_document(void **state)
{
    fixture *f = *state;
    planctl_history_options ho = PLANCTL_HISTORY_OPTIONS_INIT;
    planctl_trigger_options o = PLANCTL_TRIGGER_OPTIONS_INIT;
    json_t *doc, *runs;
    char *out;
    int64_t r;
    int i;

    create(f, "zk", NULL, 0);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", "first"), 0);
    o.reason = "manual";
    for (i = 0; i < 4; i++) {
        f->now += 1000;
        assert_int_equal(planctl_plan_trigger(&r, f->p, "zk",
                                              i % 2 ? "backup" : "update", &o),
                         0);
        assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    }
    assert_int_equal(planctl_history_json(&out, f->p, "zk", NULL), 0);
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    runs = json_object_get(doc, "runs");
    assert_int_equal(json_integer_value(json_object_get(doc, "schema")), 1);
    assert_int_equal(json_array_size(runs), 5);
    for (i = 0; i < 5; i++)
        assert_int_equal(json_integer_value(json_object_get(
                             json_array_get(runs, (size_t)i), "id")),
                         5 - i);
    {
        json_t *first = json_array_get(runs, 4);
        const char *keys[] = {"id",
                              "uid",
                              "plan",
                              "status",
                              "trigger",
                              "reason",
                              "retry_of",
                              "created_at",
                              "started_at",
                              "finished_at",
                              "duration_ms",
                              "message",
                              "definition_version"};
        size_t k;

        assert_int_equal(json_object_size(first), 13);
        for (k = 0; k < sizeof keys / sizeof keys[0]; k++)
            assert_non_null(json_object_get(first, keys[k]));
        assert_string_equal(
            json_string_value(json_object_get(first, "message")),
            "cancelled: first");
        assert_string_equal(
            json_string_value(json_object_get(first, "trigger")), "create");
        assert_true(json_is_null(json_object_get(first, "started_at")));
        assert_string_equal(
            json_string_value(json_object_get(first, "finished_at")),
            "2026-11-21T14:03:05.000Z");
    }
    json_decref(doc);

    ho.limit = 2;
    ho.before = 5;
    assert_int_equal(planctl_history_json(&out, f->p, "zk", &ho), 0);
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    runs = json_object_get(doc, "runs");
    assert_int_equal(json_array_size(runs), 2);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(runs, 0), "id")), 4);
    json_decref(doc);

    ho.limit = 0;
    ho.before = 0;
    ho.plan = "backup";
    assert_int_equal(planctl_history_json(&out, f->p, "zk", &ho), 0);
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    assert_int_equal(json_array_size(json_object_get(doc, "runs")), 2);
    json_decref(doc);
    ho.limit = -1;
    assert_int_equal(planctl_history_json(&out, f->p, "zk", &ho),
                     PLANCTL_EINVAL);
}

static void test_instances_document(void **state)
{
    fixture *f = *state;
    char *out;

    create(f, "b-zk", NULL, 0);
    create(f, "a-zk", NULL, 0);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "a-zk", NULL), 0);
    assert_int_equal(planctl_instances_json(&out, f->p), 0);
    expect_json(out,
                "{\"schema\": 1, \"instances\": ["
                " {\"name\": \"a-zk\", \"definition\": {\"name\": "
                "\"zookeeper\", \"version\": \"0.2.0\"}, \"status\": "
                "\"CANCELLED\", \"active_run\": null, \"deleting\": false, "
                "\"created_at\": \"2026-11-21T14:03:05.000Z\"},"
                " {\"name\": \"b-zk\", \"definition\": {\"name\": "
                "\"zookeeper\", \"version\": \"0.2.0\"}, \"status\": "
                "\"PENDING\", \"active_run\": 1, \"deleting\": false, "
                "\"created_at\": \"2026-11-21T14:03:05.000Z\"}]}");
    planctl_free(out);
}

static void test_events_document(void **state)
{
    fixture *f = *state;
    planctl_events_options eo = PLANCTL_EVENTS_OPTIONS_INIT;
    json_t *doc, *evs, *ev;
    int64_t run, other, dv1, dv2;
    char *out, *text;
    planctl *p2;

    run = create(f, "zk", NULL, 0);
    other = create(f, "zk2", NULL, 0);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", "bye"), 0);
    eo.instance = "zk";
    assert_int_equal(planctl_events_json(&out, f->p, &eo), 0);
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    evs = json_object_get(doc, "events");
    /* instance created; run, 2 phases, 3 steps created; 3 steps, 2 phases
     * and the run cancelled. */
    assert_int_equal(json_array_size(evs), 13);
    ev = json_array_get(evs, 0);
    assert_string_equal(json_string_value(json_object_get(ev, "entity")),
                        "instance");
    assert_true(json_is_null(json_object_get(ev, "run")));
    ev = json_array_get(evs, 12);
    text = json_dumps(ev, JSON_COMPACT);
    expect_json(text,
                "{\"seq\": 20, \"at\": \"2026-11-21T14:03:05.000Z\", "
                "\"instance\": \"zk\", \"run\": 1, \"phase\": null, \"step\": "
                "null, \"entity\": \"run\", \"from\": \"PENDING\", \"to\": "
                "\"CANCELLED\", \"attempt\": null, \"message\": \"cancelled: "
                "bye\", \"actor\": \"user\", \"data\": null}");
    free(text);
    /* The run's creation carries what replay rebuilds it from. */
    ev = json_object_get(json_array_get(evs, 1), "data");
    assert_string_equal(json_string_value(json_object_get(ev, "plan")),
                        "deploy");
    assert_string_equal(json_string_value(json_object_get(ev, "trigger")),
                        "create");
    assert_true(json_is_object(json_object_get(ev, "params")));
    ev = json_array_get(evs, 3);
    assert_string_equal(json_string_value(json_object_get(ev, "phase")),
                        "nodes");
    assert_string_equal(json_string_value(json_object_get(ev, "step")),
                        "node-0");
    /* seq is global: zk2's seven creation events came in between. */
    assert_int_equal(json_integer_value(json_object_get(doc, "last_seq")), 20);
    json_decref(doc);

    /* since and limit page through; run narrows; others are refused. */
    eo.since = 10;
    eo.limit = 2;
    assert_int_equal(planctl_events_json(&out, f->p, &eo), 0);
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    assert_int_equal(json_array_size(json_object_get(doc, "events")), 2);
    assert_int_equal(json_integer_value(json_object_get(doc, "last_seq")), 16);
    json_decref(doc);
    eo.instance = NULL;
    eo.since = 0;
    eo.limit = 0;
    eo.run = other;
    assert_int_equal(planctl_events_json(&out, f->p, &eo), 0);
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    assert_int_equal(json_array_size(json_object_get(doc, "events")), 6);
    json_decref(doc);
    eo.instance = "zk";
    assert_int_equal(planctl_events_json(&out, f->p, &eo), PLANCTL_ENOTFOUND);
    eo.instance = "nope";
    eo.run = 0;
    assert_int_equal(planctl_events_json(&out, f->p, &eo), PLANCTL_ENOTFOUND);
    eo.instance = NULL;
    eo.run = 99;
    assert_int_equal(planctl_events_json(&out, f->p, &eo), PLANCTL_ENOTFOUND);

    /* tail: the last N of what instance, run and since select, oldest
     * first; more than there are is all of them.  zk's events are seqs 1-7
     * and 15-20, zk2's 8-14. */
    eo.instance = "zk";
    eo.run = 0;
    eo.since = 0;
    eo.tail = 3;
    assert_int_equal(planctl_events_json(&out, f->p, &eo), 0);
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    evs = json_object_get(doc, "events");
    assert_int_equal(json_array_size(evs), 3);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(evs, 0), "seq")), 18);
    json_decref(doc);
    eo.instance = NULL;
    eo.run = other;
    eo.since = 9;
    eo.tail = 100;
    assert_int_equal(planctl_events_json(&out, f->p, &eo), 0);
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    evs = json_object_get(doc, "events");
    assert_int_equal(json_array_size(evs), 5);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(evs, 0), "seq")), 10);
    json_decref(doc);
    eo.tail = -1;
    assert_int_equal(planctl_events_json(&out, f->p, &eo), PLANCTL_EINVAL);
    /* A caller of version 1 has no tail: whatever follows is not read. */
    eo.version = 1;
    eo.since = 0;
    assert_int_equal(planctl_events_json(&out, f->p, &eo), 0);
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    assert_int_equal(json_array_size(json_object_get(doc, "events")), 6);
    json_decref(doc);
    eo.version = 3;
    assert_int_equal(planctl_events_json(&out, f->p, &eo), PLANCTL_EINVAL);

    /* data_version moves when another connection commits. */
    assert_int_equal(planctl_data_version(&dv1, f->p), 0);
    assert_int_equal(planctl_open(&p2, f->path, NULL), 0);
    assert_int_equal(planctl_run_cancel(NULL, p2, "zk2", NULL), 0);
    planctl_close(p2);
    assert_int_equal(planctl_data_version(&dv2, f->p), 0);
    assert_true(dv2 != dv1);
    (void)run;
}

/* ---- racing processes ---- */

/* N processes, each with its own connection, trigger the same idle
 * instance at the same moment: exactly one is admitted, the others get the
 * conflict naming the winner's run. */
static void test_admission_race(void **state)
{
    fixture *f = *state;
    enum { ROUNDS = 10, PROCS = 6 };
    int round, i;

    create(f, "zk", NULL, 0);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    for (round = 0; round < ROUNDS; round++) {
        int go[2], res[2], wins = 0, conflicts = 0;
        pid_t pids[PROCS];

        assert_int_equal(pipe(go), 0);
        assert_int_equal(pipe(res), 0);
        for (i = 0; i < PROCS; i++) {
            pids[i] = fork();
            assert_true(pids[i] >= 0);
            if (pids[i] == 0) {
                planctl *p;
                int64_t r = 0;
                char c, out;
                int rc;

                close(go[1]);
                close(res[0]);
                if (planctl_open(&p, f->path, NULL) != 0)
                    _exit(10);
                /* Wait for the starting gun: all start together. */
                if (read(go[0], &c, 1) != 0)
                    _exit(11);
                rc = planctl_plan_trigger(&r, p, "zk", "backup", NULL);
                out = rc == 0 ? 'W'
                      : rc == PLANCTL_ECONFLICT &&
                              strstr(planctl_errmsg(p), "is running plan")
                          ? 'C'
                          : 'X';
                if (write(res[1], &out, 1) != 1)
                    _exit(12);
                planctl_close(p);
                _exit(0);
            }
        }
        close(go[0]);
        close(res[1]);
        close(go[1]); /* EOF on the pipe releases every child at once */
        for (i = 0; i < PROCS; i++) {
            char c;

            assert_int_equal(read(res[0], &c, 1), 1);
            wins += c == 'W';
            conflicts += c == 'C';
        }
        close(res[0]);
        for (i = 0; i < PROCS; i++) {
            int st;

            assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
            assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        assert_int_equal(wins, 1);
        assert_int_equal(conflicts, PROCS - 1);
        assert_int_equal(tu_scalar(f->db,
                                   "SELECT count(*) FROM runs WHERE status "
                                   "IN ('PENDING', 'IN_PROGRESS', "
                                   "'PAUSED')"),
                         1);
        assert_int_equal(planctl_run_cancel(NULL, f->p, "zk", NULL), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_apply_idempotent_and_conflict),
        T(test_create_runs_deploy),
        T(test_missing_required_parameter),
        T(test_set_selects_plan),
        T(test_set_without_update_runs_deploy),
        T(test_upgrade_selects_plan),
        T(test_last_applied),
        T(test_trigger_conflict_and_queue),
        T(test_cancel_closes_children),
        T(test_pause_resume),
        T(test_retry_carries_over),
        T(test_delete_with_cleanup),
        T(test_delete_without_cleanup_and_force),
        T(test_cancel_queued_run),
        T(test_status_document),
        T(test_unset_api),
        T(test_history_document),
        T(test_instances_document),
        T(test_events_document),
        T(test_admission_race),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
