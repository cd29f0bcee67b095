/*
 * test_engine.c - the engine on a real libuv loop, a real database and
 * real child processes: strategies, retries and backoff, fatal
 * propagation, shell steps with timeouts, cancel and pause from another
 * process, the lease, SIGKILL and recovery, shutdown under load, an
 * embedder's executor finishing from another thread, and a pass whose
 * reads do not grow with history.
 *
 * Times are checked from the rows the engine wrote (attempts, events),
 * with tolerance, never by timing the test itself.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
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
#include <sqlite3.h>
#include <uv.h>

#include "engine/engine.h"
#include "expo_check.h"
#include "planctl.h"
#include "store/sqlite/sqlite.h"
#include "store/store.h"
#include "testutil.h"

typedef tu_db fixture;

static int setup(void **state)
{
    *state = tu_db_open("engine.db", 0);
    return 0;
}

static int teardown(void **state)
{
    return tu_db_close(*state);
}

/* Nothing is left open: every run terminal, no open child, no open try. */
static void expect_all_settled(fixture *f)
{
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM runs WHERE status NOT "
                               "IN ('COMPLETE','FATAL_ERROR','CANCELLED')"),
                     0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM phases WHERE status NOT "
                               "IN ('COMPLETE','FATAL_ERROR','CANCELLED')"),
                     0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM steps WHERE status NOT "
                               "IN ('COMPLETE','FATAL_ERROR','CANCELLED')"),
                     0);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM attempts WHERE "
                                      "finished_at IS NULL"),
                     0);
}

/* ---- running an engine ---- */

/* Definitions the engine still had cached when it stopped. */
static size_t last_ndefs;

typedef struct runner {
    uv_loop_t loop;
    planctl_engine *e;
    int stopped;
    uv_timer_t timer; /* optional: a test's action after some time */
    void (*at)(struct runner *r);
    void *data;
} runner;

static void on_stopped(planctl_engine *e, void *data)
{
    runner *r = data;

    (void)e;
    r->stopped = 1;
    if (r->at)
        uv_close((uv_handle_t *)&r->timer, NULL);
}

static void on_at(uv_timer_t *t)
{
    runner *r = t->data;

    r->at(r);
}

/* Runs an engine on p until it stops by itself (until_idle), or until
 * `at` (if given, called after at_ms) stops it.  Asserts the loop closes
 * with no handle left. */
static int run_engine(planctl *p, planctl_engine_options *o, int64_t at_ms,
                      void (*at)(runner *), void *data)
{
    runner r;
    int rc;

    memset(&r, 0, sizeof r);
    r.at = at;
    r.data = data;
    assert_int_equal(uv_loop_init(&r.loop), 0);
    assert_int_equal(planctl_engine_new(&r.e, p, &r.loop, o), 0);
    rc = planctl_engine_start(r.e, on_stopped, &r);
    if (rc < 0) {
        planctl_engine_free(r.e);
        assert_int_equal(uv_loop_close(&r.loop), 0);
        return rc;
    }
    if (at) {
        uv_timer_init(&r.loop, &r.timer);
        r.timer.data = &r;
        uv_timer_start(&r.timer, on_at, (uint64_t)at_ms, 0);
    }
    uv_run(&r.loop, UV_RUN_DEFAULT);
    assert_true(r.stopped);
    rc = planctl_engine_status(r.e);
    last_ndefs = r.e->ndefs;
    planctl_engine_free(r.e);
    assert_int_equal(uv_loop_close(&r.loop), 0);
    return rc;
}

/* Runs an until-idle engine with an executor of the test's for kind;
 * returns the engine's status. */
static int run_with_executor(planctl *p, planctl_engine_options *o,
                             const char *kind, const planctl_executor *ex)
{
    runner r;
    int rc;

    memset(&r, 0, sizeof r);
    assert_int_equal(uv_loop_init(&r.loop), 0);
    assert_int_equal(planctl_engine_new(&r.e, p, &r.loop, o), 0);
    assert_int_equal(planctl_engine_register(r.e, kind, ex), 0);
    assert_int_equal(planctl_engine_start(r.e, on_stopped, &r), 0);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    rc = planctl_engine_status(r.e);
    planctl_engine_free(r.e);
    assert_int_equal(uv_loop_close(&r.loop), 0);
    return rc;
}

static int run_until_idle(fixture *f)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;

    o.until_idle = 1;
    o.change_poll_ms = 20;
    return run_engine(f->p, &o, 0, NULL, NULL);
}

/* ---- strategies ---- */

#define DEF_HEAD(name)                                                         \
    "{\"name\":\"" name "\",\"version\":\"1\",\"tasks\":["                     \
    "{\"name\":\"quick\",\"kind\":\"Dummy\"},"                                 \
    "{\"name\":\"slow\",\"kind\":\"Dummy\",\"spec\":{\"sleep\":\"150ms\"}},"   \
    "{\"name\":\"slower\",\"kind\":\"Dummy\",\"spec\":{\"sleep\":\"400ms\"}}," \
    "{\"name\":\"flaky\",\"kind\":\"Dummy\",\"spec\":{\"failTimes\":2}},"      \
    "{\"name\":\"boom\",\"kind\":\"Dummy\",\"spec\":{\"wantErr\":true,"        \
    "\"fatal\":true}},"                                                        \
    "{\"name\":\"forever\",\"kind\":\"Dummy\",\"spec\":{\"sleep\":\"1h\"}},"   \
    "{\"name\":\"sh-forever\",\"kind\":\"shell\",\"spec\":{\"command\":"       \
    "\"echo $$ > pid.$PLANCTL_INSTANCE.$PLANCTL_STEP; sleep 300 & echo $! > "  \
    "child.$PLANCTL_INSTANCE.$PLANCTL_STEP; wait\"}},"                         \
    "{\"name\":\"gc\",\"kind\":\"shell\",\"spec\":{\"command\":"               \
    "\"if [ $PLANCTL_ATTEMPT = 1 ]; then sleep 300 & echo $! > gc.pid; "       \
    "wait; fi\"}}],"

/* The order steps started and completed in, from the events. */
static char *order(fixture *f, int64_t run, const char *to)
{
    return tu_text(f->db,
                   "SELECT group_concat(name, ',') FROM (SELECT s.name FROM "
                   "events e JOIN steps s ON s.id = e.step_id WHERE e.run_id = "
                   "%lld AND e.entity = 'step' AND e.to_status = '%s' ORDER BY "
                   "e.seq)",
                   (long long)run, to);
}

static void test_serial_and_parallel(void **state)
{
    fixture *f = *state;
    int64_t run;
    char *started, *done;

    tu_apply(f->p,
             DEF_HEAD("order") "\"plans\":{\"deploy\":{\"phases\":["
                               "{\"name\":\"a\",\"steps\":["
                               "{\"name\":\"a1\",\"tasks\":[\"slow\"]},"
                               "{\"name\":\"a2\",\"tasks\":[\"quick\"]}]},"
                               "{\"name\":\"b\",\"strategy\":\"parallel\","
                               "\"steps\":["
                               "{\"name\":\"b1\",\"tasks\":[\"slower\"]},"
                               "{\"name\":\"b2\",\"tasks\":[\"quick\"]},"
                               "{\"name\":\"b3\",\"tasks\":[\"slow\"]}]}]}}}");
    run = tu_create(f->p, "i", "order");
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    started = order(f, run, "IN_PROGRESS");
    done = order(f, run, "COMPLETE");
    /* Serial: a1 runs alone to completion before a2.  Parallel: b1..b3
     * start together and finish by their durations. */
    assert_string_equal(started, "a1,a2,b1,b2,b3");
    assert_string_equal(done, "a1,a2,b2,b3,b1");
    /* b's steps all started in the same pass (same millisecond). */
    assert_int_equal(tu_scalar(f->db,
                               "SELECT max(started_at) - min(started_at) "
                               "FROM steps WHERE run_id = %lld AND name "
                               "LIKE 'b%%'",
                               (long long)run),
                     0);
    /* Nothing active any more: the parsed definition was dropped. */
    assert_int_equal(last_ndefs, 0);
    /* Phase b started only after phase a was COMPLETE. */
    assert_true(tu_scalar(f->db,
                          "SELECT (SELECT started_at FROM phases WHERE name "
                          "= 'b' AND run_id = %lld) >= (SELECT finished_at "
                          "FROM phases WHERE name = 'a' AND run_id = %lld)",
                          (long long)run, (long long)run) == 1);
    expect_all_settled(f);
    free(started);
    free(done);
}

static void test_parallel_phases(void **state)
{
    fixture *f = *state;
    int64_t run;

    tu_apply(f->p, DEF_HEAD("pp") "\"plans\":{\"deploy\":{\"strategy\":"
                                  "\"parallel\",\"phases\":["
                                  "{\"name\":\"x\",\"steps\":[{\"name\":\"x1\","
                                  "\"tasks\":[\"slow\"]}]},"
                                  "{\"name\":\"y\",\"steps\":[{\"name\":\"y1\","
                                  "\"tasks\":[\"quick\"]}]}]}}}");
    run = tu_create(f->p, "i", "pp");
    assert_int_equal(run_until_idle(f), 0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT max(started_at) - min(started_at) "
                               "FROM phases WHERE run_id = %lld",
                               (long long)run),
                     0);
    expect_all_settled(f);
}

/* ---- retries ---- */

static void test_retry_backoff(void **state)
{
    fixture *f = *state;
    int64_t ok, bad;

    tu_apply(f->p,
             DEF_HEAD("retry") "\"plans\":{"
                               "\"deploy\":{\"phases\":[{\"name\":\"p\","
                               "\"steps\":[{\"name\":\"s\",\"tasks\":["
                               "\"flaky\"],\"retry\":{\"attempts\":3,"
                               "\"backoff\":\"100ms\",\"multiplier\":3}}]}]},"
                               "\"update\":{\"phases\":[{\"name\":\"p\","
                               "\"steps\":[{\"name\":\"s\",\"tasks\":["
                               "\"flaky\"],\"retry\":{\"attempts\":2,"
                               "\"backoff\":\"50ms\"}}]}]}}}");
    ok = tu_create(f->p, "ok", "retry");
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)ok);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM attempts a JOIN steps s "
                               "ON s.id = a.step_id WHERE s.run_id = %lld",
                               (long long)ok),
                     3);
    tu_expect_text(
        f->db, "ERROR,ERROR,COMPLETE",
        "SELECT group_concat(status, ',') FROM (SELECT a.status FROM "
        "attempts a JOIN steps s ON s.id = a.step_id WHERE s.run_id "
        "= %lld ORDER BY a.number)",
        (long long)ok);
    /* The waits: 100ms before try 2, 300ms before try 3 (x3), measured
     * from the rows with 50ms tolerance upward only. */
    {
        int64_t w2 = tu_scalar(f->db,
                               "SELECT b.started_at - a.finished_at FROM "
                               "attempts a, attempts b, steps s WHERE "
                               "s.run_id = %lld AND a.step_id = s.id AND "
                               "b.step_id = s.id AND a.number = 1 AND "
                               "b.number = 2",
                               (long long)ok);
        int64_t w3 = tu_scalar(f->db,
                               "SELECT b.started_at - a.finished_at FROM "
                               "attempts a, attempts b, steps s WHERE "
                               "s.run_id = %lld AND a.step_id = s.id AND "
                               "b.step_id = s.id AND a.number = 2 AND "
                               "b.number = 3",
                               (long long)ok);

        assert_true(w2 >= 100 && w2 < 100 + 500);
        assert_true(w3 >= 300 && w3 < 300 + 500);
    }
    assert_int_equal(planctl_plan_trigger(&bad, f->p, "ok", "update", NULL), 0);
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "FATAL_ERROR",
                   "SELECT status FROM runs WHERE id = %lld", (long long)bad);
    tu_expect_text(f->db, "failTimes: attempt 2 of the first 2 fails",
                   "SELECT message FROM steps WHERE run_id = %lld",
                   (long long)bad);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT attempt FROM steps WHERE run_id = "
                               "%lld",
                               (long long)bad),
                     2);
    expect_all_settled(f);
}

/* Under a fixed handle clock (PLANCTL_NOW for the CLI) an engine starts
 * at that time and advances on the monotonic clock: backoffs still pass,
 * and what it records stays seconds from the fixed time, not days. */
static int64_t fixed_2030(void *data)
{
    (void)data;
    return INT64_C(1893456000000); /* 2030-01-01T00:00:00Z */
}

static void stop_late(runner *r)
{
    planctl_engine_stop(r->e, 0);
}

static void test_clock_fixed_start(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    int64_t run, t0 = fixed_2030(NULL);

    planctl_set_clock(f->p, fixed_2030, NULL);
    tu_apply(f->p,
             DEF_HEAD("fixed") "\"plans\":{\"deploy\":{\"phases\":[{"
                               "\"name\":\"p\",\"steps\":[{\"name\":\"s\","
                               "\"tasks\":[\"flaky\"],\"retry\":{"
                               "\"backoff\":\"100ms\"}}]}]}}}");
    run = tu_create(f->p, "i", "fixed");
    o.until_idle = 1;
    o.change_poll_ms = 20;
    /* A frozen engine would wait for its backoff forever: stopped after
     * 20 s, the run is then not COMPLETE. */
    assert_int_equal(run_engine(f->p, &o, 20000, stop_late, NULL), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    assert_true(tu_scalar(f->db, "SELECT started_at FROM runs WHERE id = %lld",
                          (long long)run) >= t0);
    /* Two backoffs (100ms, 200ms) passed on the engine's clock... */
    assert_true(tu_scalar(f->db,
                          "SELECT finished_at - started_at FROM runs WHERE "
                          "id = %lld",
                          (long long)run) >= 300);
    /* ...which moved on from the fixed time, not from the real one. */
    assert_true(tu_scalar(f->db, "SELECT max(at) FROM events") < t0 + 20000);
    /* The handle has its fixed clock back once the engine stopped. */
    assert_int_equal(planctl_plan_trigger(&run, f->p, "i", "deploy", NULL), 0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT created_at FROM runs WHERE id = %lld",
                               (long long)run),
                     t0);
}

/* A retried step resumes at the task that failed, not at its first. */
static void test_retry_resumes_at_failed_task(void **state)
{
    fixture *f = *state;
    int64_t run;
    char *log, *path;

    assert_int_equal(chdir(f->dir), 0);
    tu_apply(f->p,
             "{\"name\":\"resume\",\"version\":\"1\",\"tasks\":["
             "{\"name\":\"mark\",\"kind\":\"shell\",\"spec\":{\"command\":"
             "\"echo A >> log\"}},"
             "{\"name\":\"once\",\"kind\":\"shell\",\"spec\":{\"command\":"
             "\"if [ -f marker ]; then echo B >> log; else touch marker; "
             "exit 1; fi\"}}],"
             "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["
             "{\"name\":\"s\",\"tasks\":[\"mark\",\"once\"],\"retry\":{"
             "\"attempts\":3,\"backoff\":\"10ms\"}}]}]}}}");
    run = tu_create(f->p, "i", "resume");
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    path = tu_fmt("%s/log", f->dir);
    log = tu_read_file(path, NULL);
    assert_non_null(log);
    assert_string_equal(log, "A\nB\n");
    assert_int_equal(tu_scalar(f->db, "SELECT attempt FROM steps"), 2);
    free(log);
    free(path);
}

/* A plan's deadline fails the run when it passes, cancelling the rest. */
static void test_run_deadline(void **state)
{
    fixture *f = *state;
    int64_t run;

    tu_apply(f->p,
             DEF_HEAD("dl") "\"plans\":{\"deploy\":{\"deadline\":\"300ms\","
                            "\"phases\":[{\"name\":\"p\",\"steps\":["
                            "{\"name\":\"s\",\"tasks\":[\"forever\"]}]},"
                            "{\"name\":\"q\",\"steps\":[{\"name\":\"t\","
                            "\"tasks\":[\"quick\"]}]}]}}}");
    run = tu_create(f->p, "i", "dl");
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "FATAL_ERROR",
                   "SELECT status FROM runs WHERE id = %lld", (long long)run);
    tu_expect_text(f->db, "deadline of 300ms passed",
                   "SELECT message FROM runs WHERE id = %lld", (long long)run);
    /* deadline_at was stored as an absolute time when the run started. */
    assert_int_equal(tu_scalar(f->db,
                               "SELECT deadline_at - started_at FROM runs "
                               "WHERE id = %lld",
                               (long long)run),
                     300);
    assert_true(tu_scalar(f->db,
                          "SELECT finished_at - started_at FROM runs WHERE "
                          "id = %lld",
                          (long long)run) >= 300);
    tu_expect_text(f->db, "cancelled: run ended FATAL_ERROR",
                   "SELECT message FROM steps WHERE name = 's'");
    tu_expect_text(f->db, "not started: run ended FATAL_ERROR",
                   "SELECT message FROM steps WHERE name = 't'");
    expect_all_settled(f);
}

/* The safety net on events per run: a note at the warning threshold, and
 * the engine ends a run at the hard limit; the counter agrees with the log
 * (verify checks it). */
static void test_run_event_limits(void **state)
{
    fixture *f = *state;
    char *out = NULL;
    int64_t run;

    assert_int_equal(planctl_set_event_limits(f->p, -1, 0), PLANCTL_EINVAL);
    assert_int_equal(planctl_set_event_limits(f->p, 10, 30), 0);
    tu_apply(f->p,
             "{\"name\":\"ev\",\"version\":\"1\",\"tasks\":[{\"name\":"
             "\"no\",\"kind\":\"Dummy\",\"spec\":{\"wantErr\":true}}],"
             "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\","
             "\"steps\":[{\"name\":\"s\",\"tasks\":[\"no\"],\"retry\":{"
             "\"attempts\":100,\"backoff\":\"1ms\",\"multiplier\":1}}]}]}}}");
    run = tu_create(f->p, "i", "ev");
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "FATAL_ERROR",
                   "SELECT status FROM runs WHERE id = %lld", (long long)run);
    tu_expect_text(
        f->db,
        "reached the limit of 30 events per run (run 1 of instance \"i\": "
        "its events show what repeated)",
        "SELECT message FROM runs WHERE id = %lld", (long long)run);
    /* It stopped there, far from its 100 attempts. */
    assert_true(tu_scalar(f->db, "SELECT attempt FROM steps") < 20);
    assert_int_equal(
        tu_scalar(f->db,
                  "SELECT count(*) FROM events WHERE entity = "
                  "'instance' AND run_id = %lld AND message LIKE "
                  "'run 1 has 10 events, the warning threshold;%%'",
                  (long long)run),
        1);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT event_count = (SELECT count(*) FROM "
                               "events WHERE run_id = %lld) FROM runs WHERE id "
                               "= %lld",
                               (long long)run, (long long)run),
                     1);
    if (planctl_verify(&out, f->p) != 0)
        fail_msg("verify: %s", planctl_errmsg(f->p));
    planctl_free(out);
    /* A counter that disagrees with the log is named by verify. */
    assert_int_equal(
        sqlite3_exec(f->db, "UPDATE runs SET event_count = 3 WHERE id = 1",
                     NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_equal(planctl_verify(&out, f->p), PLANCTL_EMISMATCH);
    assert_non_null(strstr(planctl_errmsg(f->p),
                           "run 1: tables say 3 events (runs.event_count)"));
}

/* No more steps run at once than the concurrency limit. */
static void test_concurrency_limit(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;

    tu_apply(f->p,
             DEF_HEAD("cc") "\"plans\":{\"deploy\":{\"phases\":[{\"name\":"
                            "\"p\",\"strategy\":\"parallel\",\"steps\":["
                            "{\"name\":\"s1\",\"tasks\":[\"slow\"]},"
                            "{\"name\":\"s2\",\"tasks\":[\"slow\"]},"
                            "{\"name\":\"s3\",\"tasks\":[\"slow\"]},"
                            "{\"name\":\"s4\",\"tasks\":[\"slow\"]},"
                            "{\"name\":\"s5\",\"tasks\":[\"slow\"]}]}]}}}");
    tu_create(f->p, "i", "cc");
    o.until_idle = 1;
    o.concurrency = 2;
    assert_int_equal(run_engine(f->p, &o, 0, NULL, NULL), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs");
    /* The most attempts overlapping any attempt's start. */
    assert_int_equal(tu_scalar(f->db,
                               "SELECT max(c) FROM (SELECT (SELECT count(*) "
                               "FROM attempts b WHERE b.started_at <= "
                               "a.started_at AND b.finished_at > "
                               "a.started_at) AS c FROM attempts a)"),
                     2);
    expect_all_settled(f);
}

/* Why a run waits for a slot is written when it starts waiting and
 * removed when it stops, never at the passes between (each of which
 * starts one more of its steps while others still wait): one run, five
 * parallel steps, two slots.  Triggers of this test's own count the
 * writes. */
static void test_waits_written_on_change(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;

    tu_apply(f->p,
             DEF_HEAD("wo") "\"plans\":{\"deploy\":{\"phases\":[{\"name\":"
                            "\"p\",\"strategy\":\"parallel\",\"steps\":["
                            "{\"name\":\"s1\",\"tasks\":[\"slow\"]},"
                            "{\"name\":\"s2\",\"tasks\":[\"slow\"]},"
                            "{\"name\":\"s3\",\"tasks\":[\"slow\"]},"
                            "{\"name\":\"s4\",\"tasks\":[\"slow\"]},"
                            "{\"name\":\"s5\",\"tasks\":[\"slow\"]}]}]}}}");
    tu_create(f->p, "i", "wo");
    assert_int_equal(
        sqlite3_exec(f->db,
                     "CREATE TABLE wlog (what TEXT, cause TEXT);"
                     "CREATE TRIGGER wlog_i AFTER INSERT ON run_waits BEGIN "
                     "INSERT INTO wlog VALUES ('put', NEW.cause); END;"
                     "CREATE TRIGGER wlog_u AFTER UPDATE ON run_waits BEGIN "
                     "INSERT INTO wlog VALUES ('put', NEW.cause); END;"
                     "CREATE TRIGGER wlog_d AFTER DELETE ON run_waits BEGIN "
                     "INSERT INTO wlog VALUES ('delete', OLD.cause); END;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    o.until_idle = 1;
    o.concurrency = 2;
    assert_int_equal(run_engine(f->p, &o, 0, NULL, NULL), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs");
    tu_expect_text(f->db, "put slot,delete slot",
                   "SELECT group_concat(what || ' ' || cause, ',') FROM "
                   "(SELECT * FROM wlog ORDER BY rowid)");
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM run_waits"), 0);
    expect_all_settled(f);
}

/* A slot that frees goes to the oldest run waiting for one: the runs
 * wait on a heap by id (engine/cache.c), and the first of them never
 * starves behind the later ones.  Two steps per run, so every run waits
 * for a slot again in the middle. */
static void test_slots_oldest_first(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    sqlite3_stmt *st;
    int64_t prev_run = 0, prev_step = 0, n = 0;
    int i;

    tu_apply(f->p,
             DEF_HEAD("one") "\"plans\":{\"deploy\":{\"phases\":[{\"name\":"
                             "\"p\",\"steps\":[{\"name\":\"a\",\"tasks\":["
                             "\"quick\"]},{\"name\":\"b\",\"tasks\":["
                             "\"quick\"]}]}]}}}");
    for (i = 0; i < 6; i++) {
        char name[8];

        snprintf(name, sizeof name, "i%d", i);
        tu_create(f->p, name, "one");
    }
    o.until_idle = 1;
    o.concurrency = 1;
    assert_int_equal(run_engine(f->p, &o, 0, NULL, NULL), 0);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM runs WHERE "
                                      "status = 'COMPLETE'"),
                     6);
    /* In the order the attempts were made: each run whole before the
     * next (its second step, once its first is done, is older than every
     * later run), in id order. */
    assert_int_equal(sqlite3_prepare_v2(f->db,
                                        "SELECT s.run_id, s.idx FROM attempts "
                                        "a JOIN steps s ON s.id = a.step_id "
                                        "ORDER BY a.id",
                                        -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t run = sqlite3_column_int64(st, 0),
                step = sqlite3_column_int64(st, 1);

        if (run < prev_run || (run == prev_run && step <= prev_step))
            fail_msg("attempt %lld: run %lld step %lld after run %lld step "
                     "%lld",
                     (long long)n, (long long)run, (long long)step,
                     (long long)prev_run, (long long)prev_step);
        prev_run = run;
        prev_step = step;
        n++;
    }
    sqlite3_finalize(st);
    assert_int_equal(n, 12);
    expect_all_settled(f);
}

/* ---- fatal propagation ---- */

static void test_fatal_propagation(void **state)
{
    fixture *f = *state;
    int64_t run;

    tu_apply(f->p,
             DEF_HEAD("fatal") "\"plans\":{\"deploy\":{\"phases\":["
                               "{\"name\":\"a\",\"strategy\":\"parallel\","
                               "\"steps\":["
                               "{\"name\":\"long\",\"tasks\":[\"forever\"]},"
                               "{\"name\":\"bad\",\"tasks\":[\"slow\","
                               "\"boom\"]},"
                               "{\"name\":\"ok\",\"tasks\":[\"quick\"]}]},"
                               "{\"name\":\"b\",\"steps\":[{\"name\":\"never"
                               "\",\"tasks\":[\"quick\"]}]}]}}}");
    run = tu_create(f->p, "i", "fatal");
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "FATAL_ERROR",
                   "SELECT status FROM runs WHERE id = %lld", (long long)run);
    tu_expect_text(f->db, "phase \"a\" failed",
                   "SELECT message FROM runs WHERE id = %lld", (long long)run);
    tu_expect_text(f->db, "FATAL_ERROR",
                   "SELECT status FROM steps WHERE name = "
                   "'bad'");
    tu_expect_text(f->db, "fatal: true",
                   "SELECT message FROM steps WHERE name = "
                   "'bad'");
    /* The running sibling was cancelled, the finished one kept. */
    tu_expect_text(f->db, "CANCELLED",
                   "SELECT status FROM steps WHERE name = "
                   "'long'");
    tu_expect_text(f->db, "cancelled: run ended FATAL_ERROR",
                   "SELECT message FROM steps WHERE name = 'long'");
    tu_expect_text(f->db, "COMPLETE",
                   "SELECT status FROM steps WHERE name = 'ok'");
    tu_expect_text(f->db, "not started: run ended FATAL_ERROR",
                   "SELECT message FROM steps WHERE name = 'never'");
    tu_expect_text(f->db, "CANCELLED",
                   "SELECT status FROM phases WHERE name = 'b'");
    expect_all_settled(f);
}

/* ---- shell through the engine ---- */

static void test_shell_steps(void **state)
{
    fixture *f = *state;
    int64_t run;
    char *def = tu_fmt(
        "{\"name\":\"sh\",\"version\":\"1\",\"parameters\":[{\"name\":"
        "\"GREETING\",\"default\":\"hello $(touch %s/pwned)\"}],"
        "\"tasks\":["
        "{\"name\":\"greet\",\"kind\":\"shell\",\"spec\":{\"command\":"
        "\"printf '%%s\\\\n' \\\"$PLANCTL_PARAM_GREETING\\\"; echo "
        "run=$PLANCTL_RUN attempt=$PLANCTL_ATTEMPT step=$PLANCTL_STEP\"}},"
        "{\"name\":\"fail3\",\"kind\":\"shell\",\"spec\":{\"argv\":[\"sh\","
        "\"-c\",\"echo nope; exit 3\"],\"fatal_exit_codes\":[3]}},"
        "{\"name\":\"hang\",\"kind\":\"shell\",\"spec\":{\"command\":"
        "\"sleep 300 & echo $! > %s/grandchild; wait\"}}],"
        "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["
        "{\"name\":\"greet\",\"tasks\":[\"greet\"]}]}]},"
        "\"update\":{\"phases\":[{\"name\":\"p\",\"steps\":["
        "{\"name\":\"fail\",\"tasks\":[\"fail3\"],\"retry\":{\"attempts\":3}"
        "}]}]},"
        "\"backup\":{\"phases\":[{\"name\":\"p\",\"steps\":["
        "{\"name\":\"hang\",\"tasks\":[\"hang\"],\"timeout\":\"700ms\","
        "\"retry\":{\"attempts\":1}}]}]}}}",
        f->dir, f->dir);
    char *pwned = tu_fmt("%s/pwned", f->dir), *gc, *path;
    int64_t r2, r3;

    tu_apply(f->p, def);
    run = tu_create(f->p, "i", "sh");
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    /* The parameter reached the process as an environment value, verbatim,
     * and did nothing else. */
    {
        char *want = tu_fmt("hello $(touch %s/pwned)\nrun=%lld attempt=1 "
                            "step=greet\n",
                            f->dir, (long long)run);

        tu_expect_text(f->db, want, "SELECT output FROM attempts");
        free(want);
    }
    assert_int_not_equal(access(pwned, F_OK), 0);
    assert_int_equal(tu_scalar(f->db, "SELECT exit_code FROM attempts"), 0);

    /* A fatal exit code: no retry. */
    assert_int_equal(planctl_plan_trigger(&r2, f->p, "i", "update", NULL), 0);
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "FATAL_ERROR",
                   "SELECT status FROM steps WHERE run_id = "
                   "%lld",
                   (long long)r2);
    tu_expect_text(f->db, "exit status 3: nope",
                   "SELECT message FROM steps WHERE run_id = %lld",
                   (long long)r2);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM attempts a JOIN steps s "
                               "ON s.id = a.step_id WHERE s.run_id = %lld",
                               (long long)r2),
                     1);

    /* A step timeout kills the process and its children. */
    assert_int_equal(planctl_plan_trigger(&r3, f->p, "i", "backup", NULL), 0);
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "timed out after 700ms",
                   "SELECT message FROM steps WHERE run_id = %lld",
                   (long long)r3);
    path = tu_fmt("%s/grandchild", f->dir);
    gc = tu_read_file(path, NULL);
    assert_non_null(gc);
    tu_expect_gone(atoi(gc), "the timed-out step's grandchild");
    expect_all_settled(f);
    free(gc);
    free(path);
    free(pwned);
    free(def);
}

/* ---- another process acts while the engine runs ---- */

/* Forks a process that opens its own handle after delay_ms and acts. */
static pid_t act_later(const char *path, const char *what, int delay_ms)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        planctl *p;
        int rc;

        usleep((useconds_t)delay_ms * 1000);
        if (planctl_open(&p, path, NULL) != 0)
            _exit(10);
        if (strcmp(what, "cancel") == 0)
            rc = planctl_run_cancel(NULL, p, "i", "from another process");
        else if (strcmp(what, "pause") == 0)
            rc = planctl_run_pause(NULL, p, "i");
        else
            rc = planctl_run_resume(NULL, p, "i");
        planctl_close(p);
        _exit(rc == 0 ? 0 : 20);
    }
    return pid;
}

static void wait_ok(pid_t pid)
{
    int st;

    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_cancel_from_another_process(void **state)
{
    fixture *f = *state;
    int64_t run;
    pid_t pid;
    char *path;
    char *pidtxt;

    tu_apply(f->p,
             DEF_HEAD("cx") "\"plans\":{\"deploy\":{\"phases\":[{\"name\":"
                            "\"p\",\"strategy\":\"parallel\",\"steps\":["
                            "{\"name\":\"dummy\",\"tasks\":[\"forever\"]},"
                            "{\"name\":\"shell\",\"tasks\":[\"sh-forever\"]}"
                            "]}]}}}");
    run = tu_create(f->p, "i", "cx");
    assert_int_equal(chdir(f->dir), 0); /* sh-forever writes pid files */
    pid = act_later(f->path, "cancel", 400);
    assert_int_equal(run_until_idle(f), 0);
    wait_ok(pid);
    tu_expect_text(f->db, "CANCELLED",
                   "SELECT status FROM runs WHERE id = %lld", (long long)run);
    tu_expect_text(f->db, "cancelled: from another process",
                   "SELECT message FROM steps WHERE name = 'shell'");
    /* The shell and its child were killed, not left behind. */
    path = tu_fmt("%s/child.i.shell", f->dir);
    pidtxt = tu_read_file(path, NULL);
    assert_non_null(pidtxt);
    tu_expect_gone(atoi(pidtxt), "the cancelled shell's child");
    expect_all_settled(f);
    free(pidtxt);
    free(path);
}

/* Forks a process that, once SQL cond on its own handle says 1, makes
 * file go (if not NULL) after acting as what says: it waits for what the
 * engine did, never for a time. */
static pid_t act_when(const char *path, const char *what, const char *cond,
                      const char *go)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        sqlite3 *db;
        sqlite3_stmt *st;
        planctl *p;
        int rc, i, met = 0;

        /* Plain SQLite here: a failed assertion must not go on in the
         * child as if it were the test. */
        if (sqlite3_open(path, &db) != SQLITE_OK ||
            sqlite3_prepare_v2(db, cond, -1, &st, NULL) != SQLITE_OK)
            _exit(11);
        sqlite3_busy_timeout(db, 5000);
        for (i = 0; !met; i++) {
            if (i == 60000)
                _exit(12); /* a minute: the test fails, it does not hang */
            if (sqlite3_step(st) == SQLITE_ROW)
                met = sqlite3_column_int(st, 0) == 1;
            sqlite3_reset(st);
            if (!met)
                usleep(1000);
        }
        sqlite3_finalize(st);
        sqlite3_close(db);
        if (planctl_open(&p, path, NULL) != 0)
            _exit(10);
        rc = strcmp(what, "pause") == 0    ? planctl_run_pause(NULL, p, "i")
             : strcmp(what, "cancel") == 0 ? planctl_run_cancel(NULL, p, "i",
                                                                "from another "
                                                                "process")
                                           : planctl_run_resume(NULL, p, "i");
        planctl_close(p);
        if (rc == 0 && go)
            tu_write_file(go, "", 0);
        _exit(rc == 0 ? 0 : 20);
    }
    return pid;
}

static void test_pause_resume_from_another_process(void **state)
{
    fixture *f = *state;
    char *go = tu_fmt("%s/go", f->dir);
    char *def = tu_fmt(
        "{\"name\":\"pz\",\"version\":\"1\",\"tasks\":[{\"name\":"
        "\"gate\",\"kind\":\"shell\",\"spec\":{\"command\":\"while [ ! -e "
        "'%s' ]; do sleep 0.01; done\"}},{\"name\":\"quick\",\"kind\":"
        "\"Dummy\"}],\"plans\":{\"deploy\":{\"phases\":["
        "{\"name\":\"a\",\"steps\":[{\"name\":\"a1\",\"tasks\":[\"gate\"]}]},"
        "{\"name\":\"b\",\"steps\":[{\"name\":\"b1\",\"tasks\":["
        "\"quick\"]}]}]}}}",
        go);
    int64_t run;
    pid_t p1, p2;

    tu_apply(f->p, def);
    run = tu_create(f->p, "i", "pz");
    /* Paused while a1 runs; a1 is let finish only then, and the run is
     * resumed once it has: b1 must not start before the resume. */
    p1 = act_when(f->path, "pause",
                  "SELECT count(*) FROM steps WHERE name = 'a1' AND status "
                  "= 'IN_PROGRESS'",
                  go);
    p2 = act_when(f->path, "resume",
                  "SELECT count(*) FROM steps WHERE name = 'a1' AND status "
                  "= 'COMPLETE'",
                  NULL);
    assert_int_equal(run_until_idle(f), 0);
    wait_ok(p1);
    wait_ok(p2);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    /* a1 finished while paused (running steps finish); b1 started after
     * the resume event. */
    assert_true(tu_scalar(f->db,
                          "SELECT (SELECT started_at FROM steps WHERE name = "
                          "'b1') >= (SELECT max(at) FROM events WHERE "
                          "entity = 'run' AND from_status = 'PAUSED')") == 1);
    assert_true(tu_scalar(f->db,
                          "SELECT (SELECT finished_at FROM steps WHERE name = "
                          "'a1') <= (SELECT max(at) FROM events WHERE entity "
                          "= 'run' AND from_status = 'PAUSED')") == 1);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM events WHERE "
                                      "entity = 'step' AND to_status = "
                                      "'IN_PROGRESS' AND step_id = (SELECT id "
                                      "FROM steps WHERE name = 'b1') AND at < "
                                      "(SELECT max(at) FROM events WHERE "
                                      "entity = 'run' AND from_status = "
                                      "'PAUSED')"),
                     0);
    expect_all_settled(f);
    free(def);
    free(go);
}

/* ---- the lease ---- */

static void second_engine(runner *r)
{
    fixture *f = r->data;
    planctl *p2;
    planctl_engine *e2;
    uv_loop_t loop2;

    assert_int_equal(planctl_open(&p2, f->path, NULL), 0);
    assert_int_equal(uv_loop_init(&loop2), 0);
    assert_int_equal(planctl_engine_new(&e2, p2, &loop2, NULL), 0);
    assert_int_equal(planctl_engine_start(e2, NULL, NULL), PLANCTL_ECONFLICT);
    if (!strstr(planctl_errmsg(p2), "an engine is already running"))
        fail_msg("message: %s", planctl_errmsg(p2));
    planctl_engine_free(e2);
    assert_int_equal(uv_loop_close(&loop2), 0);
    planctl_close(p2);
    planctl_engine_stop(r->e, 1000);
}

static void test_second_engine_refused(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;

    assert_int_equal(run_engine(f->p, &o, 100, second_engine, f), 0);
    /* Stopped cleanly: the lease is released. */
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM engine_lease"), 0);
}

static void stop_soon(runner *r)
{
    planctl_engine_stop(r->e, 1000);
}

static void test_stale_lease_taken_over(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    char sql[512];
    int64_t now = (int64_t)time(NULL) * 1000;

    /* A fresh lease held by another host: refused. */
    snprintf(sql, sizeof sql,
             "INSERT INTO engine_lease VALUES (1, 'far:1', 'far-away-host', 1, "
             "41, %lld, %lld)",
             (long long)now, (long long)now);
    assert_int_equal(sqlite3_exec(f->db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(run_engine(f->p, &o, 0, NULL, NULL), PLANCTL_ECONFLICT);
    assert_non_null(strstr(planctl_errmsg(f->p), "far-away-host"));
    /* Its heartbeat is old: taken over, with the next token. */
    snprintf(sql, sizeof sql, "UPDATE engine_lease SET heartbeat_at = %lld",
             (long long)(now - 60000));
    assert_int_equal(sqlite3_exec(f->db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(run_engine(f->p, &o, 50, stop_soon, NULL), 0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM events WHERE entity = "
                               "'engine' AND message = 'engine started, "
                               "lease taken over'"),
                     1);
}

/* An engine whose lease is taken by another stops by itself (fenced). */
static void steal_lease(runner *r)
{
    fixture *f = r->data;

    assert_int_equal(sqlite3_exec(f->db,
                                  "UPDATE engine_lease SET token = token + "
                                  "100",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
}

static void test_fenced_engine_stops(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;

    o.change_poll_ms = 20;
    o.lease_ttl_ms = 300; /* heartbeat every 100ms */
    assert_int_equal(run_engine(f->p, &o, 100, steal_lease, f), PLANCTL_ESTALE);
    assert_non_null(strstr(planctl_errmsg(f->p), "lost its lease"));
}

/* ---- crash and recovery ---- */

static void test_sigkill_and_recovery(void **state)
{
    fixture *f = *state;
    int64_t run;
    pid_t pid;
    int st;
    char *gcpath, *gc;

    assert_int_equal(chdir(f->dir), 0);
    /* Two Dummy steps, and a shell step whose first attempt leaves a
     * grandchild running (the later attempts finish at once). */
    tu_apply(f->p,
             DEF_HEAD("crash") "\"plans\":{\"deploy\":{\"phases\":["
                               "{\"name\":\"p\",\"strategy\":\"parallel\","
                               "\"steps\":["
                               "{\"name\":\"s1\",\"tasks\":[\"slower\"],"
                               "\"retry\":{\"attempts\":3,\"backoff\":"
                               "\"10ms\"}},"
                               "{\"name\":\"s2\",\"tasks\":[\"slower\"],"
                               "\"retry\":{\"attempts\":3,\"backoff\":"
                               "\"10ms\"}},"
                               "{\"name\":\"s3\",\"tasks\":[\"gc\"],"
                               "\"retry\":{\"attempts\":3,\"backoff\":"
                               "\"10ms\"}}]}]}}}");
    run = tu_create(f->p, "i", "crash");
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* The child runs an engine on its own handle until killed. */
        planctl *p;
        planctl_engine *e;
        uv_loop_t loop;

        if (planctl_open(&p, f->path, NULL) != 0 || uv_loop_init(&loop) ||
            planctl_engine_new(&e, p, &loop, NULL) ||
            planctl_engine_start(e, NULL, NULL))
            _exit(10);
        uv_run(&loop, UV_RUN_DEFAULT);
        _exit(11);
    }
    /* Wait until all three steps are IN_PROGRESS and the grandchild runs,
     * then kill -9. */
    gcpath = tu_fmt("%s/gc.pid", f->dir);
    {
        int i;

        for (i = 0; i < 500; i++) {
            if (tu_scalar(f->db,
                          "SELECT count(*) FROM steps WHERE run_id = %lld "
                          "AND status = 'IN_PROGRESS'",
                          (long long)run) == 3 &&
                access(gcpath, F_OK) == 0)
                break;
            usleep(10000);
        }
        assert_true(i < 500);
    }
    usleep(20000); /* let the shell finish writing the pid */
    gc = tu_read_file(gcpath, NULL);
    assert_non_null(gc);
    assert_int_equal(kill((pid_t)atoi(gc), 0), 0);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    /* The restart does not wait for the lease to expire: the dead
     * engine's OS lock is gone. */
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM attempts a JOIN steps s "
                               "ON s.id = a.step_id WHERE s.run_id = %lld "
                               "AND a.status = 'ERROR' AND a.message = "
                               "'interrupted: engine stopped'",
                               (long long)run),
                     3);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT max(attempt) FROM steps WHERE run_id "
                               "= %lld",
                               (long long)run),
                     2);
    /* What the interrupted shell started did not outlive its engine. */
    tu_expect_gone(atoi(gc), "the interrupted shell task's grandchild");
    expect_all_settled(f);
    free(gc);
    free(gcpath);
}

/* ---- shutdown ---- */

static void stop_now_ish(runner *r)
{
    planctl_engine_stop(r->e, 200);
}

/* The engine's own stop does not use up a step's tries: three graceful
 * stops in a row leave a two-try step that never failed with its tries,
 * and it completes.  The tries it gets back are bounded by its tries (a
 * task that stops its engine cannot loop for ever): the fifth stop
 * counts.  The event log says so: verify agrees with the tables. */
static void test_shutdown_does_not_use_tries(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    char *summary = NULL;
    int64_t run;
    int i;

    tu_apply(f->p,
             DEF_HEAD("stops") "\"plans\":{\"deploy\":{\"phases\":[{"
                               "\"name\":\"p\",\"steps\":[{\"name\":\"s\","
                               "\"tasks\":[\"slower\"],\"retry\":{"
                               "\"attempts\":2,\"backoff\":\"10ms\"}}]}]}}}");
    run = tu_create(f->p, "i", "stops");
    o.change_poll_ms = 20;
    for (i = 0; i < 3; i++) {
        /* Stopped while its 400ms task runs: interrupted, not counted. */
        assert_int_equal(run_engine(f->p, &o, 150, stop_late, NULL), 0);
        tu_expect_text(f->db, "interrupted: engine stopped",
                       "SELECT message FROM steps WHERE run_id = %lld",
                       (long long)run);
    }
    assert_int_equal(tu_scalar(f->db, "SELECT max_attempts FROM steps"), 4);
    o.until_idle = 1;
    assert_int_equal(run_engine(f->p, &o, 0, NULL, NULL), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM attempts"), 4);
    assert_int_equal(planctl_verify(&summary, f->p), 0);
    planctl_free(summary);

    /* Bounded: the grants stop at twice the step's tries. */
    assert_int_equal(planctl_plan_trigger(&run, f->p, "i", "deploy", NULL), 0);
    o.until_idle = 0;
    for (i = 0; i < 4; i++)
        assert_int_equal(run_engine(f->p, &o, 150, stop_late, NULL), 0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT max_attempts FROM steps WHERE run_id = "
                               "%lld",
                               (long long)run),
                     4);
    o.until_idle = 1;
    assert_int_equal(run_engine(f->p, &o, 0, NULL, NULL), 0);
    tu_expect_text(f->db, "FATAL_ERROR",
                   "SELECT status FROM runs WHERE id = %lld", (long long)run);
    assert_int_equal(planctl_verify(&summary, f->p), 0);
    planctl_free(summary);
}

static void test_shutdown_under_load(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    char name[32];
    int i;

    assert_int_equal(chdir(f->dir), 0);
    tu_apply(f->p,
             DEF_HEAD("load") "\"plans\":{\"deploy\":{\"phases\":[{\"name\":"
                              "\"p\",\"strategy\":\"parallel\",\"steps\":["
                              "{\"name\":\"d\",\"tasks\":[\"forever\"]},"
                              "{\"name\":\"q\",\"tasks\":[\"quick\"]},"
                              "{\"name\":\"sh\",\"tasks\":[\"sh-forever\"]}"
                              "]}]}}}");
    for (i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "i%d", i);
        tu_create(f->p, name, "load");
    }
    o.concurrency = 200;
    assert_int_equal(run_engine(f->p, &o, 500, stop_now_ish, NULL), 0);
    /* Quick steps completed; the long ones were interrupted, to be retried
     * at the next start. */
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM steps WHERE name = 'q' "
                               "AND status = 'COMPLETE'"),
                     20);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM steps WHERE name IN "
                               "('d', 'sh') AND status = 'ERROR' AND "
                               "message = 'interrupted: engine stopped'"),
                     40);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM attempts WHERE "
                                      "finished_at IS NULL"),
                     0);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM engine_lease"), 0);
    /* No shell process survived: each wrote its pid and its child's. */
    for (i = 0; i < 20; i++) {
        const char *kinds[] = {"pid", "child"};
        int k;

        for (k = 0; k < 2; k++) {
            char *path = tu_fmt("%s/%s.i%d.sh", f->dir, kinds[k], i);
            char *txt = tu_read_file(path, NULL);

            assert_non_null(txt);
            tu_expect_gone(atoi(txt), path);
            free(txt);
            free(path);
        }
    }
}

/* ---- an embedder's executor, finishing from another thread ---- */

typedef struct threaded {
    pthread_t threads[16];
    int n;
} threaded;

static void *worker(void *arg)
{
    planctl_job *job = arg;

    usleep(20000);
    planctl_job_set_output(job, 0, "done in a thread\n");
    planctl_step_finish(job, PLANCTL_OUTCOME_DONE, "worker finished");
    return NULL;
}

static int thread_start(planctl_job *job, const planctl_task_info *info,
                        void *data)
{
    threaded *t = data;

    assert_string_equal(info->kind, "Threaded");
    assert_non_null(strstr(info->spec, "\"work\""));
    if (t->n >= 16)
        return PLANCTL_ENOMEM;
    return pthread_create(&t->threads[t->n++], NULL, worker, job) == 0
               ? 0
               : PLANCTL_ERROR;
}

static void thread_cancel(planctl_job *job, void *data)
{
    (void)job;
    (void)data; /* the worker finishes on its own shortly */
}

static void test_embedder_executor_from_thread(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, thread_start,
                           thread_cancel, NULL, NULL};
    threaded t;
    int64_t run;
    int i;

    memset(&t, 0, sizeof t);
    ex.data = &t;
    /* The definition names a kind the handle must know before apply. */
    assert_int_equal(planctl_kind_register(f->p, "Threaded", NULL, NULL), 0);
    tu_apply(f->p,
             "{\"name\":\"th\",\"version\":\"1\",\"tasks\":[{\"name\":\"w\","
             "\"kind\":\"Threaded\",\"spec\":{\"work\":1}}],\"plans\":{"
             "\"deploy\":{\"phases\":[{\"name\":\"p\",\"strategy\":"
             "\"parallel\",\"steps\":[{\"name\":\"a\",\"tasks\":[\"w\"]},"
             "{\"name\":\"b\",\"tasks\":[\"w\",\"w\"]}]}]}}}");
    run = tu_create(f->p, "i", "th");
    o.until_idle = 1;
    assert_int_equal(run_with_executor(f->p, &o, "Threaded", &ex), 0);
    for (i = 0; i < t.n; i++)
        pthread_join(t.threads[i], NULL);
    assert_int_equal(t.n, 3); /* a once, b's two tasks in order */
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    /* An attempt keeps the output of all its tasks, in order. */
    tu_expect_text(f->db, "done in a thread\ndone in a thread\n",
                   "SELECT output FROM attempts a JOIN steps s ON s.id = "
                   "a.step_id WHERE s.name = 'b'");
    tu_expect_text(f->db, "34",
                   "SELECT bytes FROM attempt_output_bytes o JOIN steps s ON "
                   "s.id = o.step_id WHERE s.name = 'b'");
}

/* A task that reports DONE in the same pass in which another process
 * cancelled its step: the step's next task must not start. */
typedef struct manual {
    planctl_job *job;
    int starts;
    fixture *f;
} manual;

static int manual_start(planctl_job *job, const planctl_task_info *info,
                        void *data)
{
    manual *m = data;

    (void)info;
    m->job = job;
    m->starts++;
    return 0;
}

static void manual_cancel(planctl_job *job, void *data)
{
    manual *m = data;

    if (m->job == job) {
        m->job = NULL;
        planctl_step_finish(job, PLANCTL_OUTCOME_ERROR, "cancelled");
    }
}

static void cancel_and_finish(uv_timer_t *t)
{
    manual *m = t->data;
    planctl *p2;

    /* Both land before the engine's next pass. */
    assert_int_equal(planctl_open(&p2, m->f->path, NULL), 0);
    assert_int_equal(planctl_run_cancel(NULL, p2, "i", "mid-step"), 0);
    planctl_close(p2);
    assert_non_null(m->job);
    planctl_step_finish(m->job, PLANCTL_OUTCOME_DONE, NULL);
    m->job = NULL;
    uv_close((uv_handle_t *)t, NULL);
}

static void test_done_and_cancelled_together(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, manual_start,
                           manual_cancel, NULL, NULL};
    manual m;
    runner r;
    uv_timer_t t;

    memset(&m, 0, sizeof m);
    m.f = f;
    ex.data = &m;
    assert_int_equal(planctl_kind_register(f->p, "Manual", NULL, NULL), 0);
    tu_apply(f->p,
             "{\"name\":\"m\",\"version\":\"1\",\"tasks\":[{\"name\":\"a\","
             "\"kind\":\"Manual\"},{\"name\":\"b\",\"kind\":\"Manual\"}],"
             "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["
             "{\"name\":\"s\",\"tasks\":[\"a\",\"b\"]}]}]}}}");
    tu_create(f->p, "i", "m");
    memset(&r, 0, sizeof r);
    o.until_idle = 1;
    o.change_poll_ms = 1000; /* the task's report wakes the engine first */
    assert_int_equal(uv_loop_init(&r.loop), 0);
    assert_int_equal(planctl_engine_new(&r.e, f->p, &r.loop, &o), 0);
    assert_int_equal(planctl_engine_register(r.e, "Manual", &ex), 0);
    assert_int_equal(planctl_engine_start(r.e, on_stopped, &r), 0);
    uv_timer_init(&r.loop, &t);
    t.data = &m;
    uv_timer_start(&t, cancel_and_finish, 200, 0);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    assert_int_equal(planctl_engine_status(r.e), 0);
    planctl_engine_free(r.e);
    assert_int_equal(uv_loop_close(&r.loop), 0);
    assert_int_equal(m.starts, 1); /* task b never started */
    tu_expect_text(f->db, "CANCELLED", "SELECT status FROM steps");
    tu_expect_text(f->db, "cancelled: mid-step", "SELECT message FROM steps");
    expect_all_settled(f);
}

/* A kind the engine has no executor for: the run waits, untouched, for
 * an engine that has one (an embedder's controller while it is down), and
 * is never failed for it; the event log says why, once; an until-idle
 * engine goes idle; the engine that has the executor then runs it. */
static int instant_start(planctl_job *job, const planctl_task_info *info,
                         void *data)
{
    (void)info;
    (void)data;
    return planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL);
}

static void instant_cancel(planctl_job *job, void *data)
{
    (void)job;
    (void)data;
}

static void test_unknown_kind(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, instant_start,
                           instant_cancel, NULL, NULL};
    int64_t run, other;

    /* Known to the handle (so the definition validates), but no executor
     * is registered with the first engine. */
    assert_int_equal(planctl_kind_register(f->p, "Nope", NULL, NULL), 0);
    tu_apply(f->p,
             "{\"name\":\"uk\",\"version\":\"1\",\"tasks\":[{\"name\":\"w\","
             "\"kind\":\"Nope\"},{\"name\":\"d\",\"kind\":\"Dummy\"}],"
             "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["
             "{\"name\":\"a\",\"tasks\":[\"d\"]},{\"name\":\"s\",\"tasks\":"
             "[\"w\"]}]}]},\"other\":{\"phases\":[{\"name\":\"p\",\"steps\":"
             "[{\"name\":\"a\",\"tasks\":[\"d\"]}]}]}}}");
    run = tu_create(f->p, "i", "uk");
    tu_create(f->p, "j", "uk");
    assert_int_equal(planctl_run_cancel(NULL, f->p, "j", NULL), 0);
    assert_int_equal(planctl_plan_trigger(&other, f->p, "j", "other", NULL), 0);
    /* Twice: the second engine says it again, once. */
    assert_int_equal(run_until_idle(f), 0);
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "PENDING", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM steps WHERE run_id = %lld "
                               "AND status = 'PENDING'",
                               (long long)run),
                     2);
    /* The run that needs no such kind went on. */
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)other);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM events WHERE message = "
                               "'run %lld (plan \"deploy\") waits for an "
                               "engine with task kind \"Nope\": this engine "
                               "has no executor for it'",
                               (long long)run),
                     2);
    /* Why it waits, where status reads it: the second engine wrote it
     * again after clearing what the first left. */
    tu_expect_text(f->db, "executor Nope",
                   "SELECT cause || ' ' || kind FROM run_waits WHERE run_id = "
                   "%lld",
                   (long long)run);

    /* An engine with the executor runs it. */
    o.until_idle = 1;
    o.change_poll_ms = 20;
    assert_int_equal(run_with_executor(f->p, &o, "Nope", &ex), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    /* The engine that could run it cleared what the others recorded. */
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM run_waits"), 0);
    expect_all_settled(f);
}

static void never_idle(runner *r)
{
    (void)r;
    fail_msg("the engine did not go idle: a run noted waiting for a task "
             "kind still counts after another process cancelled it");
}

/* A run noted as waiting for a kind that another process cancels leaves
 * the engine's count of waiting runs (engine/defs.c forgets it through the
 * cache's list of runs gone): an until-idle engine then stops once the
 * other run ends, where the stale count kept it from ever being idle. */
static void test_waiting_run_cancelled_elsewhere(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    char *go = tu_fmt("%s/go", f->dir);
    char *def = tu_fmt(
        "{\"name\":\"wc\",\"version\":\"1\",\"tasks\":[{\"name\":"
        "\"gate\",\"kind\":\"shell\",\"spec\":{\"command\":\"while [ ! -e "
        "'%s' ]; do sleep 0.01; done\"}},{\"name\":\"w\",\"kind\":\"Nope\"}],"
        "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["
        "{\"name\":\"s\",\"tasks\":[\"w\"]}]}]},\"hold\":{\"phases\":[{"
        "\"name\":\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":[\"gate\"]}]"
        "}]}}}",
        go);
    int64_t waiting, held;
    pid_t pid;

    assert_int_equal(planctl_kind_register(f->p, "Nope", NULL, NULL), 0);
    tu_apply(f->p, def);
    waiting = tu_create(f->p, "i", "wc");
    tu_create(f->p, "g", "wc");
    assert_int_equal(planctl_run_cancel(NULL, f->p, "g", NULL), 0);
    assert_int_equal(planctl_plan_trigger(&held, f->p, "g", "hold", NULL), 0);
    /* Once the engine has noted i's run waiting and runs g's step: i is
     * cancelled from another process, then g's step let finish. */
    pid = act_when(f->path, "cancel",
                   "SELECT (SELECT count(*) FROM events WHERE message LIKE "
                   "'%waits for an engine with task kind \"Nope\"%') > 0 AND "
                   "(SELECT count(*) FROM steps s JOIN runs r ON r.id = "
                   "s.run_id WHERE r.plan = 'hold' AND s.status = "
                   "'IN_PROGRESS') = 1",
                   go);
    o.until_idle = 1;
    o.change_poll_ms = 20;
    assert_int_equal(run_engine(f->p, &o, 60000, never_idle, NULL), 0);
    wait_ok(pid);
    tu_expect_text(f->db, "CANCELLED",
                   "SELECT status FROM runs WHERE id = %lld",
                   (long long)waiting);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)held);
    /* What it recorded of the run that left goes with it. */
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM run_waits"), 0);
    free(def);
    free(go);
}

/* ---- a stored definition cannot override the engine's variables ---- */

/* Prints the PLANCTL_* lines of an env(1) listing, for a failure. */
static void print_planctl_vars(const char *text)
{
    const char *l = text;

    while (l && *l) {
        size_t n = strcspn(l, "\n");

        if (strncmp(l, "PLANCTL_", 8) == 0)
            print_message("  %.*s\n", (int)n, l);
        l += n + (l[n] == '\n');
    }
}

/* The env(1) listing text must hold the line kv. */
static void expect_line(const char *text, const char *kv)
{
    size_t n = strlen(kv);
    const char *l = text;

    while (l) {
        if (strncmp(l, kv, n) == 0 && (l[n] == '\n' || l[n] == '\0'))
            return;
        l = strchr(l, '\n');
        if (l)
            l++;
    }
    print_planctl_vars(text);
    fail_msg("no line \"%s\" in the environment above", kv);
}

/* ...and must not mention what. */
static void expect_none(const char *text, const char *what)
{
    if (!strstr(text, what))
        return;
    print_planctl_vars(text);
    fail_msg("\"%s\" in the environment above", what);
}

/* Reads the env(1) listing a task wrote to dir/file. */
static char *env_listing(fixture *f, const char *file)
{
    char *path = tu_fmt("%s/%s", f->dir, file);
    char *text = tu_read_file(path, NULL);

    if (!text)
        fail_msg("no %s: the task did not run", path);
    free(path);
    return text;
}

/*
 * A definition stored before validation refused PLANCTL_* names in
 * spec.env (planted here with SQL, as no apply takes it now) still runs,
 * but what it sets there never reaches the process: the engine's values
 * win, for a step and for a preflight check alike.  A PLANCTL_RUN_UID of
 * the definition's would hide the process from the recovery that kills an
 * interrupted attempt's leftovers; a PLANCTL_PARAM_A would replace the
 * value the user gave (or give one to a parameter that has none).
 */
static void test_stored_env_cannot_override(void **state)
{
    fixture *f = *state;
    static const char env[] =
        "\"env\":{\"PLANCTL_PARAM_A\":\"from-spec\",\"PLANCTL_PARAM_B\":"
        "\"from-spec\",\"PLANCTL_RUN_UID\":\"from-spec\",\"PLANCTL_STEP\":"
        "\"from-spec\",\"PLANCTL_ATTEMPT\":\"99\",\"MINE\":\"kept\"}";
    char *body = tu_fmt(
        "{\"name\":\"envdef\",\"version\":\"1\",\"parameters\":["
        "{\"name\":\"A\",\"default\":\"from-default\"},"
        "{\"name\":\"B\",\"required\":false}],\"tasks\":["
        "{\"name\":\"dump\",\"kind\":\"shell\",\"spec\":{\"command\":"
        "\"env > '%s/step.env'\",%s}},"
        "{\"name\":\"check\",\"kind\":\"shell\",\"spec\":{\"command\":"
        "\"env > '%s/check.env'\",%s}}],"
        "\"plans\":{\"deploy\":{\"preflight\":[{\"name\":\"Env\",\"task\":"
        "\"check\"}],\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\","
        "\"tasks\":[\"dump\"]}]}]}}}",
        f->dir, env, f->dir, env);
    planctl_param a = {"A", "from-user"};
    sqlite3_stmt *st;
    char *text, *uid, *want;
    int64_t run = 0;

    assert_int_equal(
        sqlite3_prepare_v2(f->db,
                           "INSERT INTO definitions (name, version, body, "
                           "created_at) VALUES ('envdef', '1', ?1, 0)",
                           -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_text(st, 1, body, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);

    if (planctl_instance_create(&run, f->p, "i", "envdef", NULL, &a, 1))
        fail_msg("create: %s", planctl_errmsg(f->p));
    assert_int_equal(run_until_idle(f), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);

    uid =
        tu_text(f->db, "SELECT uid FROM runs WHERE id = %lld", (long long)run);
    assert_non_null(uid);
    want = tu_fmt("PLANCTL_RUN_UID=%s", uid);
    text = env_listing(f, "step.env");
    expect_line(text, "PLANCTL_PARAM_A=from-user");
    expect_line(text, want);
    expect_line(text, "PLANCTL_STEP=s");
    expect_line(text, "PLANCTL_ATTEMPT=1");
    expect_line(text, "MINE=kept");
    expect_none(text, "PLANCTL_PARAM_B=");
    expect_none(text, "from-spec");
    free(text);

    /* The check ran at admission, with no run yet: no uid of its own,
     * and none of the definition's either. */
    text = env_listing(f, "check.env");
    expect_line(text, "PLANCTL_PARAM_A=from-user");
    expect_line(text, "PLANCTL_STEP=Env");
    expect_line(text, "MINE=kept");
    expect_none(text, "PLANCTL_PARAM_B=");
    expect_none(text, "from-spec");
    free(text);
    /* Validation refuses that text today. */
    assert_int_equal(
        planctl_definition_apply(NULL, f->p, body, strlen(body), "t.json"),
        PLANCTL_EDEFINITION);
    free(want);
    free(uid);
    free(body);
}

/* ---- the pass reads what is active, not history ---- */

/* SQLite's count of VM steps of a cached statement, since the last call;
 * 0 for one not prepared yet. */
static int vm_step_count(planctl *p, pctl_query q)
{
    pctl_sqlite_stmt *s = (pctl_sqlite_stmt *)p->stmts[q];

    return s ? sqlite3_stmt_status(s->st, SQLITE_STMTSTATUS_VM_STEP, 1) : 0;
}

static int vm_steps(planctl *p)
{
    return vm_step_count(p, PCTL_Q_active_runs) +
           vm_step_count(p, PCTL_Q_active_phases) +
           vm_step_count(p, PCTL_Q_active_steps);
}

static void test_pass_ignores_history(void **state)
{
    fixture *f = *state;
    int small, big, i;
    char sql[256];

    tu_apply(f->p, DEF_HEAD("h") "\"plans\":{\"deploy\":{\"phases\":[{\"name\":"
                                 "\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":["
                                 "\"quick\"]}]}]}}}");
    tu_create(f->p, "i", "h");
    assert_int_equal(run_until_idle(f), 0);
    tu_create(f->p, "j", "h");
    assert_int_equal(run_until_idle(f), 0);
    vm_steps(f->p); /* reset the counters */
    tu_create(f->p, "k", "h");
    assert_int_equal(run_until_idle(f), 0);
    small = vm_steps(f->p);

    /* 3000 more terminal runs with their phases and steps. */
    assert_int_equal(sqlite3_exec(f->db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    for (i = 0; i < 3000; i++) {
        snprintf(sql, sizeof sql,
                 "INSERT INTO runs (uid, instance_id, definition_id, plan, "
                 "status, trigger, params, created_at) VALUES ('h%d', 1, 1, "
                 "'deploy', 'PENDING', 'manual', '{}', 0)",
                 i);
        assert_int_equal(sqlite3_exec(f->db, sql, NULL, NULL, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_exec(f->db,
                                      "UPDATE runs SET status = 'CANCELLED' "
                                      "WHERE id = last_insert_rowid()",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    }
    assert_int_equal(sqlite3_exec(f->db, "COMMIT", NULL, NULL, NULL),
                     SQLITE_OK);
    tu_create(f->p, "l", "h");
    vm_steps(f->p);
    assert_int_equal(run_until_idle(f), 0);
    big = vm_steps(f->p);
    /* The same work for the same active set, whatever the history. */
    print_message("pass reads: %d VM steps with 3 runs of history, %d with "
                  "3003\n",
                  small, big);
    assert_int_equal(small, big);
}

/* A pass that ends a run asks for another only when the store promoted a
 * queued run behind it: otherwise that pass ran in the same turn of the
 * loop, before the tasks just started could report, and wrote nothing
 * (half of all passes in the throughput benchmark).  Counted by the
 * metrics' histogram of status changes per commit: the one pass with none
 * is the stopping engine's.  The queued run still runs. */
static void test_no_empty_passes(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_trigger_options topt = PLANCTL_TRIGGER_OPTIONS_INIT;
    char name[16], err[300], *text = NULL;
    int64_t queued = 0;
    runner r;
    int i;

    tu_apply(f->p, DEF_HEAD("e") "\"plans\":{\"deploy\":{\"phases\":["
                                 "{\"name\":\"a\",\"steps\":["
                                 "{\"name\":\"a1\",\"tasks\":[\"quick\"]},"
                                 "{\"name\":\"a2\",\"tasks\":[\"quick\"]}]},"
                                 "{\"name\":\"b\",\"strategy\":\"parallel\","
                                 "\"steps\":["
                                 "{\"name\":\"b1\",\"tasks\":[\"quick\"]},"
                                 "{\"name\":\"b2\",\"tasks\":[\"quick\"]}]}]},"
                                 "\"update\":{\"phases\":[{\"name\":\"u\","
                                 "\"steps\":[{\"name\":\"u1\",\"tasks\":["
                                 "\"quick\"]}]}]}}}");
    for (i = 0; i < 12; i++) {
        snprintf(name, sizeof name, "i%d", i);
        tu_create(f->p, name, "e");
    }
    topt.queue = 1;
    assert_int_equal(planctl_plan_trigger(&queued, f->p, "i3", "update", &topt),
                     0);

    memset(&r, 0, sizeof r);
    o.until_idle = 1;
    o.change_poll_ms = 1000; /* nobody else writes */
    o.concurrency = 3;       /* runs end in different passes */
    assert_int_equal(uv_loop_init(&r.loop), 0);
    assert_int_equal(planctl_engine_new(&r.e, f->p, &r.loop, &o), 0);
    assert_int_equal(planctl_engine_start(r.e, on_stopped, &r), 0);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    assert_int_equal(planctl_engine_status(r.e), 0);
    assert_int_equal(planctl_engine_metrics(&text, r.e), 0);
    assert_int_equal(expo_check(text, err, sizeof err), 0);
    print_message("passes: %.0f, of them with no status change: %.0f\n",
                  expo_value(text, "planctl_commit_batch_transitions_count"),
                  expo_value(text, "planctl_commit_batch_transitions_bucket{"
                                   "le=\"0\"}"));
    assert_true(expo_value(text, "planctl_commit_batch_transitions_bucket{"
                                 "le=\"0\"}") == 1);
    planctl_free(text);
    planctl_engine_free(r.e);
    assert_int_equal(uv_loop_close(&r.loop), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)queued);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM runs WHERE "
                                      "status = 'COMPLETE'"),
                     13);
    expect_all_settled(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_serial_and_parallel),
        T(test_parallel_phases),
        T(test_retry_backoff),
        T(test_retry_resumes_at_failed_task),
        T(test_clock_fixed_start),
        T(test_run_deadline),
        T(test_run_event_limits),
        T(test_concurrency_limit),
        T(test_waits_written_on_change),
        T(test_slots_oldest_first),
        T(test_waiting_run_cancelled_elsewhere),
        T(test_fatal_propagation),
        T(test_shell_steps),
        T(test_cancel_from_another_process),
        T(test_pause_resume_from_another_process),
        T(test_second_engine_refused),
        T(test_stale_lease_taken_over),
        T(test_fenced_engine_stops),
        T(test_sigkill_and_recovery),
        T(test_shutdown_under_load),
        T(test_shutdown_does_not_use_tries),
        T(test_embedder_executor_from_thread),
        T(test_done_and_cancelled_together),
        T(test_unknown_kind),
        T(test_stored_env_cannot_override),
        T(test_pass_ignores_history),
        T(test_no_empty_passes),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
