/*
 * test_replay.c - the event log rebuilds what the tables say: after a
 * real engine workload (retries, failures, cancels, a queue, a retry with
 * carry-over) verify passes and replay equals status and history byte for
 * byte; replay --until shows a past moment; tampering with the tables is
 * caught and named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "planctl.h"
#include "testutil.h"

typedef struct fixture {
    char *dir, *path;
    planctl *p;
    tu_raw *db;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    f->dir = tu_mkdtemp();
    {
        char *file = tu_fmt("%s/rp.db", f->dir);

        f->path = tu_db_target(file);
        free(file);
    }
    assert_int_equal(planctl_open(&f->p, f->path, NULL), 0);
    f->db = tu_raw_open(f->path);
    tu_replay_workload(f->p);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    tu_raw_close(f->db);
    planctl_close(f->p);
    tu_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

static json_t *replayed(fixture *f, const char *instance, int64_t until)
{
    planctl_replay_options o = PLANCTL_REPLAY_OPTIONS_INIT;
    char *out;
    json_t *doc;

    o.until_seq = until;
    if (planctl_replay_json(&out, f->p, instance, &o))
        fail_msg("replay: %s", planctl_errmsg(f->p));
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    assert_non_null(doc);
    return doc;
}

/* Compares a replayed part with the live document, as compact text. */
static void expect_same(json_t *part, const char *live)
{
    char *got = json_dumps(part, JSON_COMPACT);

    if (strcmp(got, live) != 0)
        fail_msg("replay differs.\n--- replay\n%s\n--- live\n%s", got, live);
    free(got);
}

static void test_verify_passes(void **state)
{
    fixture *f = *state;
    char *out = NULL;

    if (planctl_verify(&out, f->p) != 0)
        fail_msg("verify: %s", planctl_errmsg(f->p));
    assert_non_null(strstr(out, "verified 6 runs against"));
    assert_non_null(strstr(out, "tables and events agree"));
    planctl_free(out);
}

static void test_replay_equals_status_and_history(void **state)
{
    fixture *f = *state;
    planctl_history_options ho = PLANCTL_HISTORY_OPTIONS_INIT;
    const char *names[] = {"zk", "kafka"};
    size_t i;

    ho.limit = 1000;
    for (i = 0; i < 2; i++) {
        json_t *doc = replayed(f, names[i], 0), *one;
        char *status, *history;

        one = json_array_get(json_object_get(doc, "instances"), 0);
        assert_non_null(one);
        assert_int_equal(planctl_status_json(&status, f->p, names[i], NULL), 0);
        assert_int_equal(planctl_history_json(&history, f->p, names[i], &ho),
                         0);
        char *live = tu_status_as_replayed(status);
        expect_same(json_object_get(one, "status"), live);
        free(live);
        expect_same(json_object_get(one, "history"), history);
        planctl_free(status);
        planctl_free(history);
        json_decref(doc);
    }
    /* All instances at once. */
    {
        json_t *doc = replayed(f, NULL, 0);

        assert_int_equal(json_array_size(json_object_get(doc, "instances")), 2);
        json_decref(doc);
    }
}

/* Time travel: the moment step s2 of the deploy went ERROR at attempt 2. */
static void test_replay_until(void **state)
{
    fixture *f = *state;
    int64_t seq =
        tu_raw_scalar(f->db, "SELECT e.seq FROM events e JOIN steps s ON "
                             "s.id = e.step_id WHERE s.name = 's2' AND "
                             "e.to_status = 'ERROR' AND e.attempt = 2");
    json_t *doc, *plans, *deploy, *step;
    size_t i;

    assert_true(seq > 0);
    doc = replayed(f, "zk", seq);
    assert_int_equal(json_integer_value(json_object_get(doc, "until_seq")),
                     seq);
    plans = json_object_get(
        json_object_get(json_array_get(json_object_get(doc, "instances"), 0),
                        "status"),
        "plans");
    deploy = NULL;
    for (i = 0; i < json_array_size(plans); i++)
        if (!strcmp(json_string_value(
                        json_object_get(json_array_get(plans, i), "name")),
                    "deploy"))
            deploy = json_object_get(json_array_get(plans, i), "run");
    assert_non_null(deploy);
    assert_string_equal(json_string_value(json_object_get(deploy, "status")),
                        "IN_PROGRESS");
    step = json_array_get(
        json_object_get(json_array_get(json_object_get(deploy, "phases"), 0),
                        "steps"),
        1);
    assert_string_equal(json_string_value(json_object_get(step, "name")), "s2");
    assert_string_equal(json_string_value(json_object_get(step, "status")),
                        "ERROR");
    assert_int_equal(json_integer_value(json_object_get(step, "attempt")), 2);
    assert_false(json_is_null(json_object_get(step, "next_attempt_at")));
    /* Phase b had not started yet. */
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(deploy, "phases"), 1), "status")),
        "PENDING");
    json_decref(doc);
}

/* Tampering with a row through raw SQL makes verify fail, naming it.
 * pg_sql, when not NULL, is the same in PostgreSQL's words. */
static void tamper(fixture *f, const char *sql, const char *pg_sql,
                   const char *want)
{
    char *out = NULL;

    tu_raw_exec(f->db, "%s", tu_on_pg() && pg_sql ? pg_sql : sql);
    assert_int_equal(planctl_verify(&out, f->p), PLANCTL_EMISMATCH);
    if (!strstr(planctl_errmsg(f->p), want))
        fail_msg("verify said: %s\nwanted: %s", planctl_errmsg(f->p), want);
    assert_null(out);
}

static void test_tampered_status(void **state)
{
    fixture *f = *state;

    tamper(f,
           "DROP TRIGGER steps_status_update; UPDATE steps SET status = "
           "'COMPLETE' WHERE name = 'bad'",
           "DROP TRIGGER steps_status_update ON steps; UPDATE steps SET "
           "status = 'COMPLETE' WHERE name = 'bad'",
           "step bad: tables say COMPLETE, events say FATAL_ERROR");
}

static void test_tampered_message(void **state)
{
    fixture *f = *state;

    tamper(f, "UPDATE runs SET message = 'all good' WHERE id = 2", NULL,
           "run 2: message: tables say \"all good\", events say \"phase "
           "\"a\" failed\"");
}

static void test_tampered_time(void **state)
{
    fixture *f = *state;

    tamper(f,
           "UPDATE attempts SET finished_at = finished_at + 1 WHERE number = "
           "2 AND step_id = (SELECT id FROM steps WHERE name = 's2')",
           /* kafka's deploy has an s2 too: SQLite's subquery takes the
            * first row, PostgreSQL's wants one. */
           "UPDATE attempts SET finished_at = finished_at + 1 WHERE number = "
           "2 AND step_id = (SELECT min(id) FROM steps WHERE name = 's2')",
           "step s2 attempt 2: finished_at: tables say");
}

static void test_tampered_events(void **state)
{
    fixture *f = *state;

    /* An event lost: a run the tables have but the log never created. */
    tamper(f,
           "DELETE FROM events WHERE entity = 'run' AND from_status IS NULL "
           "AND run_id = (SELECT max(id) FROM runs)",
           NULL, "the log never created");
}

/* gc removes old terminal runs with their events; verify still agrees,
 * the latest run of each plan and the open runs stay. */
static void test_gc(void **state)
{
    fixture *f = *state;
    planctl_gc_options o = PLANCTL_GC_OPTIONS_INIT;
    char *out = NULL;
    int64_t before_runs = tu_raw_scalar(f->db, "SELECT count(*) FROM runs");

    o.keep_last = 1;
    o.dry_run = 1;
    assert_int_equal(planctl_gc(&out, f->p, &o), 0);
    /* zk: update run 2 (retried by 3, which is newer) goes; kafka: its
     * cancelled deploy is the latest deploy and stays. */
    assert_non_null(strstr(out, "\"runs\":[{\"id\":2,\"instance\":\"zk\","
                                "\"plan\":\"update\""));
    assert_non_null(strstr(out, "\"removed\":0"));
    planctl_free(out);
    assert_int_equal(tu_raw_scalar(f->db, "SELECT count(*) FROM runs"),
                     before_runs);
    o.dry_run = 0;
    o.batch = 1;
    assert_int_equal(planctl_gc(&out, f->p, &o), 0);
    assert_non_null(strstr(out, "\"removed\":1"));
    planctl_free(out);
    assert_int_equal(tu_raw_scalar(f->db, "SELECT count(*) FROM runs"),
                     before_runs - 1);
    assert_int_equal(tu_raw_scalar(f->db, "SELECT count(*) FROM events WHERE "
                                          "run_id = 2"),
                     0);
    assert_int_equal(tu_raw_scalar(f->db, "SELECT retry_of IS NULL FROM runs "
                                          "WHERE id = 3"),
                     1);
    if (planctl_verify(&out, f->p) != 0)
        fail_msg("verify after gc: %s", planctl_errmsg(f->p));
    planctl_free(out);
    /* Nothing more to remove with keep_last 1. */
    assert_int_equal(planctl_gc(&out, f->p, &o), 0);
    assert_non_null(strstr(out, "\"removed\":0"));
    planctl_free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_verify_passes),    T(test_replay_equals_status_and_history),
        T(test_replay_until),     T(test_tampered_status),
        T(test_tampered_message), T(test_tampered_time),
        T(test_tampered_events),  T(test_gc),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
