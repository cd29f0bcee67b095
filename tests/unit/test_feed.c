/*
 * test_feed.c - the event log as a change feed (src/store/feed.c), and
 * the engine's cache following other writers through it
 * (src/engine/cache.c): a commit by another handle costs the engine the
 * runs it changed, not every active run; what the log cannot tell (events
 * removed with their instance) makes it read everything.
 *
 * The engine test runs a real engine on a real loop beside a second
 * handle on the same file, as a controller and an operator's CLI do.  It
 * waits for what the engine did (tasks started, a task cancelled, a
 * counter moved), never for a time; a guard timer only turns a hang into
 * a failure.
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
#include <unistd.h>
#include <uv.h>

#include "core/alloc.h"
#include "planctl.h"
#ifdef PLANCTL_WITH_POSTGRES
#include "store/postgres/pg.h"
#endif
#include "store/feed.h"
#include "store/store.h"
#include "testutil.h"

#define NRUNS 20

static const char *const def_json =
    "{\"name\":\"h\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","
    "\"kind\":\"Hold\"}],\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\","
    "\"steps\":[{\"name\":\"s\",\"tasks\":[\"t\"]}]}]},"
    "\"backup\":{\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\","
    "\"tasks\":[\"t\"]}]}]}}}";

typedef struct fixture {
    tu_db *d;
    planctl *p;  /* the engine's handle (d's) */
    planctl *p2; /* another writer's */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    f->d = tu_db_open("feed.db", 0);
    f->p = f->d->p;
    assert_int_equal(planctl_open(&f->p2, f->d->path, NULL), 0);
    assert_int_equal(planctl_kind_register(f->p, "Hold", NULL, NULL), 0);
    assert_int_equal(planctl_kind_register(f->p2, "Hold", NULL, NULL), 0);
    tu_apply(f->p, def_json);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    planctl_close(f->p2);
    tu_db_close(f->d);
    free(f);
    return 0;
}

static int64_t create(planctl *p, const char *name)
{
    return tu_create(p, name, "h");
}

/* Deletes instance name at once (it has no active run). */
static void delete_now(planctl *p, const char *name)
{
    int64_t cleanup = -1;

    if (planctl_instance_delete(&cleanup, p, name, 1))
        fail_msg("delete %s: %s", name, planctl_errmsg(p));
    assert_int_equal(cleanup, 0);
}

/* The feed after event number after, for a reader with nothing of its
 * own there. */
static int read_after(pctl_feed *fd, planctl *p, int64_t after)
{
    pctl_feed_cursor c = {0};

    c.last = after;
    return pctl_feed_read(fd, p, &c);
}

static int has(const pctl_feed *fd, int64_t run)
{
    size_t i;

    for (i = 0; i < fd->nruns; i++)
        if (fd->runs[i] == run)
            return 1;
    return 0;
}

/* ---- the feed alone ---- */

static void test_feed_names_what_changed(void **state)
{
    fixture *f = *state;
    pctl_feed fd;
    int64_t a, b, last, seq;

    a = create(f->p, "a");
    b = create(f->p, "b");
    assert_int_equal(pctl_feed_last(&last, f->p, -1), 0);
    assert_true(last > 0);
    /* Nothing new: nothing named, no gap. */
    assert_int_equal(read_after(&fd, f->p, last), 0);
    assert_int_equal(fd.last, last);
    assert_int_equal(fd.gap, 0);
    assert_int_equal(fd.nruns, 0);
    pctl_feed_clear(&fd);
    /* Another handle cancels b: b only. */
    assert_int_equal(planctl_run_cancel(NULL, f->p2, "b", "stop"), 0);
    assert_int_equal(read_after(&fd, f->p, last), 0);
    assert_int_equal(fd.gap, 0);
    assert_true(has(&fd, b));
    assert_false(has(&fd, a));
    assert_true(fd.last > last);
    last = fd.last;
    pctl_feed_clear(&fd);
    /* A new instance's run comes with its events. */
    seq = last;
    a = create(f->p2, "c");
    assert_int_equal(read_after(&fd, f->p, seq), 0);
    assert_int_equal(fd.gap, 0);
    assert_true(has(&fd, a));
    last = fd.last;
    pctl_feed_clear(&fd);
    /* c's instance deleted with its events, some numbered after the
     * reader's last: a gap, the feed cannot tell what changed. */
    assert_int_equal(planctl_run_cancel(NULL, f->p2, "c", NULL), 0);
    delete_now(f->p2, "c");
    assert_int_equal(read_after(&fd, f->p, last), 0);
    assert_int_equal(fd.gap, 1);
    assert_int_equal(fd.nruns, 0);
    pctl_feed_clear(&fd);
}

/* An instance's events of its own (here a preflight's record) name the
 * instance, beside the runs its admission made. */
static void test_feed_names_instances(void **state)
{
    static const char *const checked =
        "{\"name\":\"pf\",\"version\":\"1\",\"tasks\":[{\"name\":\"ok\","
        "\"kind\":\"Dummy\"}],\"plans\":{\"deploy\":{\"preflight\":[{"
        "\"name\":\"Ok\",\"task\":\"ok\"}],\"phases\":[{\"name\":\"p\","
        "\"steps\":[{\"name\":\"s\",\"tasks\":[\"ok\"]}]}]}}}";
    fixture *f = *state;
    pctl_feed fd;
    int64_t last, run = 0, inst;

    tu_apply(f->p, checked);
    assert_int_equal(pctl_feed_last(&last, f->p, -1), 0);
    assert_int_equal(
        planctl_instance_create(&run, f->p2, "d", "pf", NULL, NULL, 0), 0);
    inst =
        tu_raw_scalar(f->d->raw, "SELECT id FROM instances WHERE name = 'd'");
    assert_int_equal(read_after(&fd, f->p, last), 0);
    assert_int_equal(fd.gap, 0);
    assert_true(has(&fd, run));
    assert_int_equal(fd.ninstances, 1);
    assert_int_equal(fd.instances[0], inst);
    pctl_feed_clear(&fd);
}

/* The events_json document's events, parsed; *last its last_seq. */
static json_t *events_after(planctl *p, int64_t since, int64_t *last)
{
    planctl_events_options o = PLANCTL_EVENTS_OPTIONS_INIT;
    char *text = NULL;
    json_t *doc, *events;

    o.since = since;
    if (planctl_events_json(&text, p, &o))
        fail_msg("events: %s", planctl_errmsg(p));
    doc = json_loads(text, 0, NULL);
    planctl_free(text);
    assert_non_null(doc);
    *last = json_integer_value(json_object_get(doc, "last_seq"));
    events = json_incref(json_object_get(doc, "events"));
    json_decref(doc);
    return events;
}

/* Begins a transaction on raw that appends an event of run (message
 * "late") and leaves it open; the event's number. */
static int64_t hold_late_event(tu_raw *raw, int64_t inst, int64_t run)
{
    tu_raw_exec(raw, "BEGIN");
    tu_raw_exec(raw,
                "INSERT INTO events (at, instance_id, run_id, entity, "
                "message, actor) VALUES (0, %lld, %lld, 'run', 'late', "
                "'test')",
                (long long)inst, (long long)run);
    return tu_raw_scalar(raw, "SELECT max(seq) FROM events");
}

/* Another client's transaction holds a lower event number open while
 * later ones commit (on PostgreSQL, where writers of events do not wait
 * for each other; SQLite has one writer at a time, so there it commits at
 * once).  No reader of the log by number goes past the open number: the
 * feed, events_json (events --follow, the Go binding) and the web pages'
 * changes.  Once it commits, each of them reads it, and what came after. */
static void test_late_commit(void **state)
{
    fixture *f = *state;
    tu_raw *raw = f->d->raw;
    int pg = tu_on_pg();
    int64_t run, b, inst, late, cursor, web, last;
    pctl_feed_cursor mark = {0};
    planctl_web_changes *ch = NULL;
    json_t *events;
    pctl_feed fd;

    run = create(f->p2, "a");
    inst = tu_raw_scalar(raw, "SELECT id FROM instances WHERE name = 'a'");
    assert_int_equal(pctl_feed_last(&cursor, f->p, -1), 0);
    web = PLANCTL_WEB_SINCE_NOW;
    assert_int_equal(planctl_web_changes_read(&ch, f->p, &web), 0);
    planctl_web_changes_free(ch);
    assert_int_equal(web, cursor);

    late = hold_late_event(raw, inst, run);
    assert_true(late > cursor);
    if (!pg)
        tu_raw_exec(raw, "COMMIT");
    /* Later numbers commit: another instance with its run. */
    b = create(f->p2, "b");
    assert_true(tu_raw_scalar(raw, "SELECT max(seq) FROM events") > late);
    if (pg) {
        /* Held back below the open number, by every reader. */
        assert_int_equal(read_after(&fd, f->p, cursor), 0);
        assert_int_equal(fd.gap, 0);
        assert_true(fd.last < late);
        assert_int_equal(fd.nruns, 0);
        pctl_feed_clear(&fd);
        events = events_after(f->p, cursor, &last);
        assert_int_equal(json_array_size(events), 0);
        assert_int_equal(last, cursor);
        json_decref(events);
        assert_int_equal(planctl_web_changes_read(&ch, f->p, &web), 0);
        assert_int_equal(web, cursor);
        planctl_web_changes_free(ch);
        /* Nor does an engine's pass move its cursor past it. */
        mark.last = cursor;
        assert_int_equal(pctl_tx_begin(f->p), 0);
        assert_int_equal(pctl_feed_mark(&mark, f->p), 0);
        assert_int_equal(pctl_tx_commit(f->p), 0);
        assert_int_equal(pctl_feed_marked(&mark, f->p, 1), 0);
        assert_true(mark.last < late);
        assert_int_equal(mark.nown, 0); /* no event of its own */
        tu_raw_exec(raw, "COMMIT");
    }
    /* A pass's cursor moves past its own events only: here b's and the
     * late one are another writer's, so it notes its transaction, once
     * it committed (a pass rolled back leaves the cursor as it was).  (On
     * SQLite nothing can come between a pass's read of the feed and its
     * mark: one writer.) */
    if (pg) {
        mark.last = cursor;
        assert_int_equal(pctl_tx_begin(f->p), 0);
        create(f->p, "gone");
        assert_int_equal(pctl_events_flush(f->p), 0);
        assert_int_equal(pctl_feed_mark(&mark, f->p), 0);
        pctl_tx_rollback(f->p);
        assert_int_equal(pctl_feed_marked(&mark, f->p, 0), 0);
        assert_int_equal(mark.last, cursor);
        assert_int_equal(mark.nown, 0);

        assert_int_equal(pctl_tx_begin(f->p), 0);
        create(f->p, "own0");
        assert_int_equal(pctl_events_flush(f->p), 0);
        assert_int_equal(pctl_feed_mark(&mark, f->p), 0);
        assert_int_equal(pctl_tx_commit(f->p), 0);
        assert_int_equal(pctl_feed_marked(&mark, f->p, 1), 0);
        assert_int_equal(mark.last, cursor);
        assert_int_equal(mark.nown, 1);
        pctl_feed_cursor_clear(&mark);
    }

    /* Every reader gets the late event first, then what came after. */
    assert_int_equal(read_after(&fd, f->p, cursor), 0);
    assert_int_equal(fd.gap, 0);
    assert_true(has(&fd, run));
    assert_true(has(&fd, b));
    assert_true(fd.last > late);
    cursor = fd.last;
    pctl_feed_clear(&fd);
    events = events_after(f->p, web, &last);
    assert_true(json_array_size(events) > 1);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(events, 0), "seq")),
        late);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(events, 0), "message")),
                        "late");
    assert_int_equal(last, tu_raw_scalar(raw, "SELECT max(seq) FROM events"));
    json_decref(events);
    assert_int_equal(planctl_web_changes_read(&ch, f->p, &web), 0);
    assert_int_equal(web, last);
    assert_true(planctl_web_changes_touch(ch, "/instances/a"));
    assert_true(planctl_web_changes_touch(ch, "/instances/b"));
    assert_false(planctl_web_changes_touch(ch, "/instances/c"));
    planctl_web_changes_free(ch);
    /* With nothing of others' after where the feed left it, it moves past
     * its own. */
    mark.last = cursor;
    assert_int_equal(pctl_tx_begin(f->p), 0);
    create(f->p, "own");
    assert_int_equal(pctl_events_flush(f->p), 0);
    assert_int_equal(pctl_feed_mark(&mark, f->p), 0);
    assert_int_equal(pctl_tx_commit(f->p), 0);
    assert_int_equal(pctl_feed_marked(&mark, f->p, 1), 0);
    assert_int_equal(mark.last,
                     tu_raw_scalar(raw, "SELECT max(seq) FROM events"));
    assert_int_equal(mark.nown, 0);
}

/* A pass that commits among another writer's events (PostgreSQL: one
 * holds a lower number open) cannot move its cursor past them: it notes
 * its transaction instead, and the next read skips its events, naming
 * the other writers' runs only (several engines read each other's
 * events, not their own again).  SQLite has one writer at a time: the
 * other's event commits first, and a pass, which reads the feed inside
 * its transaction, moves past every event after its cursor. */
static void test_own_events_skipped(void **state)
{
    fixture *f = *state;
    tu_raw *raw = f->d->raw;
    int pg = tu_on_pg();
    pctl_feed_cursor mark = {0};
    int64_t x, inst, own, other, late;
    pctl_feed fd;
    size_t i;

    x = create(f->p2, "x");
    inst = tu_raw_scalar(raw, "SELECT id FROM instances WHERE name = 'x'");
    assert_int_equal(pctl_feed_last(&mark.last, f->p, -1), 0);
    late = hold_late_event(raw, inst, x);
    if (!pg)
        tu_raw_exec(raw, "COMMIT");
    /* The pass: events of its own after the open one. */
    assert_int_equal(pctl_tx_begin(f->p), 0);
    own = create(f->p, "own");
    assert_int_equal(pctl_events_flush(f->p), 0);
    assert_int_equal(pctl_feed_mark(&mark, f->p), 0);
    assert_int_equal(pctl_tx_commit(f->p), 0);
    assert_int_equal(pctl_feed_marked(&mark, f->p, 1), 0);
    assert_true(pg ? mark.last < late : mark.last > late);
    assert_int_equal(mark.nown, pg ? 1 : 0);
    other = create(f->p2, "other");
    if (pg)
        tu_raw_exec(raw, "COMMIT");

    assert_int_equal(pctl_feed_read(&fd, f->p, &mark), 0);
    assert_int_equal(fd.gap, 0);
    assert_int_equal(has(&fd, x), pg);
    assert_true(has(&fd, other));
    assert_false(has(&fd, own));
    for (i = 0; i < fd.nchanges; i++)
        assert_true(fd.changes[i].run_id != own);
    /* Followed past its events, the pass is forgotten. */
    pctl_feed_follow(&mark, fd.last);
    assert_int_equal(mark.nown, 0);
    pctl_feed_clear(&fd);
    pctl_feed_cursor_clear(&mark);
}

/* Appends run's PENDING -> IN_PROGRESS by actor, as its writer would. */
static void run_started_by(tu_raw *raw, int64_t inst, int64_t run,
                           const char *actor)
{
    tu_raw_exec(raw,
                "INSERT INTO events (at, instance_id, run_id, entity, "
                "from_status, to_status, actor) VALUES (0, %lld, %lld, "
                "'run', 'PENDING', 'IN_PROGRESS', '%s')",
                (long long)inst, (long long)run, actor);
}

#ifdef PLANCTL_WITH_POSTGRES
/* Begins a transaction on raw fenced as engine p's are (by the store's
 * own fleet_fence), which engine_tx_end() commits. */
static void engine_tx_begin(tu_raw *raw, planctl *p)
{
    pctl_pg_stmt *fence = (pctl_pg_stmt *)pctl_q(p, PCTL_Q_fleet_fence);

    assert_non_null(fence);
    tu_raw_exec(raw, "PREPARE fence (bigint) AS %s", fence->sql);
    tu_raw_exec(raw, "BEGIN");
    assert_int_equal(
        tu_raw_scalar(raw, "EXECUTE fence (%lld)", (long long)p->fleet_id),
        p->fleet_id);
}

static void engine_tx_end(tu_raw *raw)
{
    tu_raw_exec(raw, "COMMIT; DEALLOCATE fence");
}
#endif

/* Another engine's status change (several engines on one database)
 * names its run, for a reader that holds it to read it again, but is
 * not a change to log or count: that engine logs and counts its own. */
static void test_engines_changes_not_told(void **state)
{
    fixture *f = *state;
    tu_raw *raw = f->d->raw;
    int64_t x, inst, last;
    pctl_feed fd;

    x = create(f->p2, "x");
    inst = tu_raw_scalar(raw, "SELECT id FROM instances WHERE name = 'x'");
    assert_int_equal(pctl_feed_last(&last, f->p, -1), 0);
    run_started_by(raw, inst, x, "engine");
    assert_int_equal(read_after(&fd, f->p, last), 0);
    assert_int_equal(fd.gap, 0);
    assert_true(has(&fd, x));
    assert_int_equal(fd.nchanges, 0);
    assert_int_equal(fd.counts[PLANCTL_ENTITY_RUN][PLANCTL_STATUS_IN_PROGRESS],
                     0);
    pctl_feed_clear(&fd);
    /* The same change by a user is told. */
    run_started_by(raw, inst, x, "user");
    assert_int_equal(read_after(&fd, f->p, last), 0);
    assert_int_equal(fd.nchanges, 1);
    assert_string_equal(fd.changes[0].actor, "user");
    assert_int_equal(fd.counts[PLANCTL_ENTITY_RUN][PLANCTL_STATUS_IN_PROGRESS],
                     1);
    pctl_feed_clear(&fd);
}

/* An engine of a fleet is sent the changes no engine made, not the
 * engines' (another's runs are none of its business, and one it holds
 * changed hands after that engine's last write): found through the
 * partial index events_not_engine, so that the server reads the users'
 * changes, not every event of the fleet.  It logs and counts a user's
 * change only for a run it holds: the holder's log and metrics have it,
 * not every engine's.  (PostgreSQL: SQLite has no fleet.) */
static void test_fleet_sent_no_engines_events(void **state)
{
#ifdef PLANCTL_WITH_POSTGRES
    fixture *f = *state;
    tu_raw *raw = f->d->raw;
    int64_t w, x, y, z, inst, last;
    pctl_pg_stmt *st;
    pctl_feed fd;
    char *said = NULL, *plan;

    if (!tu_on_pg())
        return;
    w = create(f->p2, "w");
    x = create(f->p2, "x");
    y = create(f->p2, "y");
    z = create(f->p2, "z");
    inst = tu_raw_scalar(raw, "SELECT id FROM instances WHERE name = 'x'");
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);
    tu_raw_exec(raw,
                "INSERT INTO claims (run_id, engine_id, token) "
                "VALUES (%lld, %lld, 1), (%lld, %lld, 1)",
                (long long)w, (long long)f->p->fleet_id, (long long)y,
                (long long)f->p->fleet_id);
    assert_int_equal(pctl_feed_last(&last, f->p, -1), 0);
    run_started_by(raw, inst, y, "engine"); /* a run it holds */
    run_started_by(raw, inst, z, "engine");
    run_started_by(raw, inst, x, "user");
    run_started_by(raw, inst, w, "user"); /* a run it holds */
    assert_int_equal(read_after(&fd, f->p, last), 0);
    assert_int_equal(fd.gap, 0);
    assert_true(has(&fd, x) && has(&fd, w));
    assert_false(has(&fd, y));
    assert_false(has(&fd, z));
    assert_int_equal(fd.nchanges, 1);
    assert_int_equal(fd.changes[0].run_id, w);
    assert_int_equal(fd.counts[PLANCTL_ENTITY_RUN][PLANCTL_STATUS_IN_PROGRESS],
                     1);
    pctl_feed_clear(&fd);
    /* A reader that is no engine of a fleet is sent them all, and
     * counts the users' changes. */
    assert_int_equal(pctl_fleet_leave(f->p), 0);
    assert_int_equal(read_after(&fd, f->p, last), 0);
    assert_true(has(&fd, x) && has(&fd, y) && has(&fd, z) && has(&fd, w));
    assert_int_equal(fd.nchanges, 2);
    pctl_feed_clear(&fd);

    /* Its statement's plan, a generic one (as a prepared statement's
     * comes to be), takes the index, on a log where engines wrote most
     * events as in a fleet's (statistics taken: the planner does not
     * choose by chance between two indexes of about the same size). */
    st = (pctl_pg_stmt *)pctl_q(f->p, PCTL_Q_feed_events_fleet);
    assert_non_null(st);
    tu_raw_exec(raw, "INSERT INTO events (at, entity, actor) SELECT 0, "
                     "'engine', 'engine' FROM generate_series(1, 5000); "
                     "ANALYZE events");
    tu_raw_exec(raw,
                "SET plan_cache_mode = force_generic_plan; "
                "SET enable_seqscan = off; "
                "PREPARE feed_plan (bigint, bigint, text, bigint) AS %s",
                st->sql);
    plan = tu_raw_text(raw, "EXPLAIN (FORMAT JSON) EXECUTE "
                            "feed_plan (0, 1000000, NULL, 7)");
    tu_raw_exec(raw, "DEALLOCATE feed_plan; RESET plan_cache_mode; "
                     "RESET enable_seqscan");
    if (!strstr(plan, "\"events_not_engine\""))
        fail_msg("feed_events_fleet does not take events_not_engine: %s", plan);
    free(plan);
#else
    (void)state;
#endif
}

/* An engine of a fleet reads no engine's events, so its horizon does
 * not wait for an engine's open transaction (fenced by its row:
 * fleet_fence, the statement engines run), and costs no look at the other
 * sessions' locks; a user's open transaction holds it back as it holds
 * back every reader.  The lock its horizon tries is let go at once. */
static void test_fleet_horizon_passes_engines(void **state)
{
#ifdef PLANCTL_WITH_POSTGRES
    fixture *f = *state;
    tu_raw *raw = f->d->raw;
    int64_t w, x, y, inst, last, late;
    pctl_feed fd;
    char *said = NULL;

    if (!tu_on_pg())
        return;
    w = create(f->p2, "w");
    inst = tu_raw_scalar(raw, "SELECT id FROM instances WHERE name = 'w'");
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);
    assert_int_equal(pctl_feed_last(&last, f->p, -1), 0);

    /* An engine's transaction, fenced as engines fence theirs, holds a
     * lower number open while a user's create commits. */
    engine_tx_begin(raw, f->p);
    run_started_by(raw, inst, w, "engine");
    late = tu_raw_scalar(raw, "SELECT max(seq) FROM events");
    x = create(f->p2, "x");
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    assert_int_equal(read_after(&fd, f->p, last), 0);
    /* The lock it tried is not held on, inside its transaction. */
    assert_int_equal(
        tu_raw_scalar(raw, "SELECT count(*) FROM pg_locks WHERE locktype = "
                           "'advisory' AND classid::bigint = "
                           "(events_writers_key()::bigint & 4294967295)"),
        0);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    assert_int_equal(fd.gap, 0);
    assert_true(fd.last > late);
    assert_true(has(&fd, x));
    last = fd.last;
    pctl_feed_clear(&fd);
    engine_tx_end(raw);

    /* A user's open transaction holds it back. */
    late = hold_late_event(raw, inst, w);
    y = create(f->p2, "y");
    assert_int_equal(read_after(&fd, f->p, last), 0);
    assert_true(fd.last < late);
    assert_false(has(&fd, y));
    pctl_feed_clear(&fd);
    tu_raw_exec(raw, "COMMIT");
    assert_int_equal(read_after(&fd, f->p, last), 0);
    assert_true(fd.last > late);
    assert_true(has(&fd, w) && has(&fd, y));
    pctl_feed_clear(&fd);
    assert_int_equal(pctl_fleet_leave(f->p), 0);
#else
    (void)state;
#endif
}

/* A run's claim goes when an engine of a fleet ends the run (0012): the
 * claims are those of the active runs, whatever the history.  A run a
 * user ends keeps its claim, and its holder still logs and counts the
 * change as its own (the feed reads whether the reader holds the run). */
static void test_fleet_claims_go_with_ended_runs(void **state)
{
#ifdef PLANCTL_WITH_POSTGRES
    fixture *f = *state;
    tu_raw *raw = f->d->raw;
    int64_t w, x, y, me, last;
    pctl_feed fd;
    char *said = NULL;

    if (!tu_on_pg())
        return;
    w = create(f->p2, "w");
    x = create(f->p2, "x");
    y = create(f->p2, "y");
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);
    me = f->p->fleet_id;
    tu_raw_exec(raw,
                "INSERT INTO claims (run_id, engine_id, token) VALUES "
                "(%lld, %lld, 1), (%lld, %lld, 1), (%lld, %lld, 1)",
                (long long)w, (long long)me, (long long)x, (long long)me,
                (long long)y, (long long)me);
    assert_int_equal(pctl_feed_last(&last, f->p, -1), 0);

    /* The engine's transaction (fenced as engines fence theirs) ends w
     * and starts y: w's claim goes, y's stays. */
    engine_tx_begin(raw, f->p);
    tu_raw_exec(raw,
                "UPDATE runs SET status = 'CANCELLED' WHERE id = %lld; "
                "UPDATE runs SET status = 'IN_PROGRESS' WHERE id = %lld",
                (long long)w, (long long)y);
    engine_tx_end(raw);
    assert_int_equal(tu_raw_scalar(raw,
                                   "SELECT count(*) FROM claims WHERE "
                                   "run_id = %lld",
                                   (long long)w),
                     0);
    assert_int_equal(tu_raw_scalar(raw,
                                   "SELECT engine_id FROM claims WHERE "
                                   "run_id = %lld",
                                   (long long)y),
                     me);

    /* A user's cancel of x keeps its claim; the holder reads it as its
     * own change. */
    assert_int_equal(planctl_run_cancel(NULL, f->p2, "x", "test"), 0);
    assert_int_equal(tu_raw_scalar(raw,
                                   "SELECT engine_id FROM claims WHERE "
                                   "run_id = %lld",
                                   (long long)x),
                     me);
    assert_int_equal(read_after(&fd, f->p, last), 0);
    assert_true(has(&fd, x));
    assert_int_equal(fd.counts[PLANCTL_ENTITY_RUN][PLANCTL_STATUS_CANCELLED],
                     1);
    pctl_feed_clear(&fd);
    assert_int_equal(pctl_fleet_leave(f->p), 0);
#else
    (void)state;
#endif
}

#ifdef PLANCTL_WITH_POSTGRES
/* heard of p once it moved from was (it comes as a notification, read
 * as it arrives): fails after 10 s. */
static int64_t heard_after(planctl *p, int64_t was)
{
    int64_t v = was;
    int i;

    for (i = 0; i < 1000 && v == was; i++) {
        assert_int_equal(pctl_db_heard(&v, p), 0);
        if (v == was)
            usleep(10000);
    }
    return v;
}
#endif

/* What an engine of a fleet watches for work (pctl_db_heard, polled by
 * the engine): another engine's pass that changed rows moves the change
 * token (its BEGIN reads it, data_version moves) but asks for nothing;
 * a give-back and an engine's ask (a pass that changed nothing) wake it,
 * so do a user's writes; its own ask does not.  Counting the others'
 * passes as wake-ups had every engine count the shares and claim from
 * the first run at every poll.  (PostgreSQL: SQLite has no fleet, and
 * there heard is data_version.) */
static void test_fleet_heard(void **state)
{
#ifdef PLANCTL_WITH_POSTGRES
    fixture *f = *state;
    int64_t h0, h, d0, d, *ids = NULL;
    size_t n = 0;
    char *said = NULL;

    if (!tu_on_pg())
        return;
    create(f->p2, "x");
    create(f->p2, "y");
    assert_int_equal(pctl_fleet_join(f->p, "e1", 600000, 0, &said), 0);
    pctl_free(said);
    said = NULL;
    assert_int_equal(pctl_fleet_join(f->p2, "e2", 600000, 0, &said), 0);
    pctl_free(said);
    /* e2's join woke e1; from here on it counts. */
    (void)heard_after(f->p, -1);
    usleep(100000);
    assert_int_equal(pctl_db_heard(&h0, f->p), 0);
    assert_int_equal(pctl_data_version(&d0, f->p), 0);

    /* e2's pass claims both runs: e1's next pass sees the token move,
     * and hears nothing. */
    assert_int_equal(pctl_engine_pass_begin(f->p2, 0, 0), 0);
    assert_int_equal(pctl_fleet_claim(f->p2, 2, 0, &ids, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(pctl_engine_pass_end(f->p2, 0), 0);
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    assert_int_equal(pctl_data_version(&d, f->p), 0);
    assert_true(d > d0);
    usleep(100000);
    assert_int_equal(pctl_db_heard(&h, f->p), 0);
    assert_int_equal(h, h0);

    /* e1 asks, e2 gives one back: e1 hears one, e2's. */
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    pctl_fleet_ask(f->p);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    assert_int_equal(pctl_engine_pass_begin(f->p2, 0, 0), 0);
    assert_int_equal(pctl_fleet_release(f->p2, ids, 1), 0);
    assert_int_equal(pctl_engine_pass_end(f->p2, 0), 0);
    h = heard_after(f->p, h0);
    assert_int_equal(h, h0 + 1);

    /* e2 asks in a pass that changes nothing: e1 hears it. */
    assert_int_equal(pctl_engine_pass_begin(f->p2, 0, 0), 0);
    pctl_fleet_ask(f->p2);
    assert_int_equal(pctl_engine_pass_end(f->p2, 0), 0);
    h0 = h;
    h = heard_after(f->p, h0);
    assert_int_equal(h, h0 + 1);

    /* A user's writes wake it too, made on an engine's handle or not:
     * an instance created, a run cancelled, an instance deleted. */
    create(f->p2, "z");
    h = heard_after(f->p, h0 = h);
    assert_int_equal(h, h0 + 1);
    assert_int_equal(planctl_run_cancel(NULL, f->p2, "z", "test"), 0);
    h = heard_after(f->p, h0 = h);
    assert_int_equal(h, h0 + 1);
    delete_now(f->p2, "z");
    h = heard_after(f->p, h0 = h);
    assert_int_equal(h, h0 + 1);
    pctl_free(ids);
    assert_int_equal(pctl_fleet_leave(f->p2), 0);
    assert_int_equal(pctl_fleet_leave(f->p), 0);
#else
    (void)state;
#endif
}

/* The horizon is refused inside a read that has begun, whose snapshot
 * may be older than it: what committed below it since would be missed. */
static void test_horizon_not_inside_a_read(void **state)
{
    fixture *f = *state;
    int64_t h = 0;

    assert_int_equal(pctl_tx_read(f->p), 0);
    assert_int_equal(pctl_events_horizon(&h, f->p, -1), PLANCTL_ERROR);
    assert_non_null(strstr(planctl_errmsg(f->p), "inside a read"));
    assert_int_equal(pctl_feed_last(&h, f->p, -1), PLANCTL_ERROR);
    pctl_tx_read_end(f->p);
    assert_int_equal(pctl_events_horizon(&h, f->p, -1), 0);
    assert_true(h > 0);
}

/* ---- an engine beside another writer ---- */

typedef struct driver {
    fixture *f;
    uv_loop_t loop;
    planctl_engine *e;
    uv_timer_t tick, guard;
    planctl_job *jobs[NRUNS + 8];
    int starts, cancels, stage, stopped;
    uint64_t full0, reread0, decided0;
} driver;

static int hold_start(planctl_job *job, const planctl_task_info *info,
                      void *data)
{
    driver *d = data;

    (void)info;
    if ((size_t)d->starts < sizeof d->jobs / sizeof d->jobs[0])
        d->jobs[d->starts] = job;
    d->starts++;
    return 0;
}

static void hold_cancel(planctl_job *job, void *data)
{
    driver *d = data;

    d->cancels++;
    planctl_step_finish(job, PLANCTL_OUTCOME_ERROR, "cancelled");
}

/* The value of counter name in the engine's metrics. */
static uint64_t counter(driver *d, const char *name)
{
    char *text = NULL, *at;
    char *key = tu_fmt("\n%s ", name);
    unsigned long long v = 0;

    assert_int_equal(planctl_engine_metrics(&text, d->e), 0);
    at = strstr(text, key);
    if (!at || sscanf(at + strlen(key), "%llu", &v) != 1)
        fail_msg("no %s in the metrics:\n%s", name, text);
    planctl_free(text);
    free(key);
    return (uint64_t)v;
}

static void on_stopped(planctl_engine *e, void *data)
{
    driver *d = data;

    (void)e;
    d->stopped = 1;
    uv_close((uv_handle_t *)&d->tick, NULL);
    uv_close((uv_handle_t *)&d->guard, NULL);
}

static void on_guard(uv_timer_t *t)
{
    driver *d = t->data;

    fail_msg("the engine never got past stage %d (starts %d, cancels %d)",
             d->stage, d->starts, d->cancels);
}

/* Each stage waits for what the engine did about the last foreign
 * commit, checks what it read for it, then makes the next commit. */
static void on_tick(uv_timer_t *t)
{
    driver *d = t->data;
    fixture *f = d->f;
    uint64_t full, reread, decided;
    int64_t run = 0;

    if (d->stopped)
        return;
    full = counter(d, "planctl_cache_full_reads_total");
    reread = counter(d, "planctl_cache_runs_reread_total");
    decided = counter(d, "planctl_runs_decided_total");
    switch (d->stage) {
    case 0: /* every run's step started */
        if (d->starts < NRUNS)
            return;
        /* Runs that acted are decided once more at the next pass, which
         * this commit makes; the counts start after it. */
        create(f->p2, "warm");
        d->stage = 5;
        return;
    case 5:
        if (d->starts < NRUNS + 1)
            return;
        d->full0 = full;
        d->reread0 = reread;
        d->decided0 = decided;
        create(f->p2, "new"); /* a trigger of another instance */
        d->stage = 1;
        return;
    case 1: /* its step started: the new run was read, nothing else */
        if (d->starts < NRUNS + 2)
            return;
        assert_int_equal(full, d->full0);
        /* On PostgreSQL an engine is one of a fleet: a new run comes by
         * its claim, not read again from the feed (it held nothing of
         * it). */
        assert_int_equal(reread - d->reread0, tu_on_pg() ? 0 : 1);
        /* Its passes decided the new run (when claimed, and once more
         * after it acted, which may come before this tick or after it)
         * and settled the one before it (which may have come before the
         * counts started or after): 3 at most, not the NRUNS others.
         * (2 at most flaked once in 20-30 runs.) */
        if (decided - d->decided0 > 3)
            fail_msg("%llu runs decided for one new run",
                     (unsigned long long)(decided - d->decided0));
        assert_int_equal(planctl_run_cancel(NULL, f->p2, "i3", "done"), 0);
        d->reread0 = reread;
        d->decided0 = decided;
        d->stage = 2;
        return;
    case 2: /* the cancelled run's task was stopped: that run read only */
        if (d->cancels < 1)
            return;
        assert_int_equal(full, d->full0);
        assert_int_equal(reread - d->reread0, 1);
        /* The new run settled; the cancelled one ended, its job was
         * stopped: nothing else to decide. */
        if (decided - d->decided0 > 1)
            fail_msg("%llu runs decided for one cancel",
                     (unsigned long long)(decided - d->decided0));
        /* Its instance deleted with its events: the log has a gap.  On
         * SQLite the newest events go, and the numbers go back.  On
         * PostgreSQL numbers never go back and a removal is told only
         * when it takes events the engine has not read, so another run's
         * cancel goes with its instance before the engine reads it. */
        delete_now(f->p2, "i3");
        if (tu_on_pg()) {
            assert_int_equal(planctl_run_cancel(NULL, f->p2, "i4", "done"), 0);
            delete_now(f->p2, "i4");
        }
        d->stage = 3;
        return;
    case 3: /* ... so the engine read everything */
        if (full == d->full0)
            return;
        assert_int_equal(full, d->full0 + 1);
        if (tu_on_pg()) {
            /* The server ends the engine's session (as a restart does):
             * a server that crashed may have lost commits it had
             * acknowledged, so the session made again reads everything,
             * though the event log names nothing (another instance's
             * new run is what asks for a pass). */
            tu_raw_exec(f->d->raw,
                        "SELECT pg_terminate_backend(pid) FROM "
                        "pg_stat_activity WHERE pid <> pg_backend_pid() "
                        "AND datname = current_database() AND "
                        "application_name = current_schema()");
            /* The other writer's session went too: its first try says
             * so, its next connects again. */
            if (planctl_instance_create(&run, f->p2, "after", "h", NULL, NULL,
                                        0) != 0)
                create(f->p2, "after");
            d->stage = 6;
            return;
        }
        d->stage = 4;
        planctl_engine_stop(d->e, 0);
        return;
    case 6:
        if (full == d->full0 + 1)
            return;
        assert_int_equal(full, d->full0 + 2);
        d->stage = 4;
        planctl_engine_stop(d->e, 0);
        return;
    default:
        return;
    }
}

static void test_engine_follows_other_writers(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, hold_start, hold_cancel,
                           NULL, NULL};
    driver d;
    int i;

    memset(&d, 0, sizeof d);
    d.f = f;
    ex.data = &d;
    for (i = 0; i < NRUNS; i++) {
        char name[16];

        snprintf(name, sizeof name, "i%d", i);
        create(f->p, name);
    }
    o.concurrency = NRUNS + 8;
    o.change_poll_ms = 10;
    assert_int_equal(uv_loop_init(&d.loop), 0);
    assert_int_equal(planctl_engine_new(&d.e, f->p, &d.loop, &o), 0);
    assert_int_equal(planctl_engine_register(d.e, "Hold", &ex), 0);
    assert_int_equal(planctl_engine_start(d.e, on_stopped, &d), 0);
    uv_timer_init(&d.loop, &d.tick);
    uv_timer_init(&d.loop, &d.guard);
    d.tick.data = d.guard.data = &d;
    uv_timer_start(&d.tick, on_tick, 5, 5);
    uv_timer_start(&d.guard, on_guard, 120000, 0);
    uv_run(&d.loop, UV_RUN_DEFAULT);
    assert_int_equal(d.stage, 4);
    assert_int_equal(planctl_engine_status(d.e), 0);
    planctl_engine_free(d.e);
    assert_int_equal(uv_loop_close(&d.loop), 0);
    /* The cancel reached the task; nothing else was stopped but by the
     * engine's own stop. */
    assert_int_equal(
        tu_raw_scalar(f->d->raw, "SELECT count(*) FROM instances WHERE name = "
                                 "'i3'"),
        0);
    /* i3 (and on PostgreSQL i4) went; new and warm came (and on
     * PostgreSQL after). */
    assert_int_equal(tu_raw_scalar(f->d->raw, "SELECT count(*) FROM instances"),
                     NRUNS + 1);
}

/* An engine's pass among others sends the feed's horizon ahead with its
 * fence, and with them its read of the events up to that horizon and
 * whether some were removed: one round trip for all, and its read of the
 * feed takes them, none more, reading what a reader without them reads.
 * A pass that does not read the feed drops them.  (PostgreSQL: SQLite
 * has no round trips.) */
static void test_horizon_sent_ahead(void **state)
{
#ifdef PLANCTL_WITH_POSTGRES
    fixture *f = *state;
    pctl_feed_cursor c = {0};
    pctl_feed fd, plain;
    pctl_pg_conn *pc;
    uint64_t rt;
    int64_t run;
    char *said = NULL;

    if (!tu_on_pg())
        return;
    pc = (pctl_pg_conn *)f->p->conn;
    assert_int_equal(pctl_feed_last(&c.last, f->p, -1), 0);
    run = create(f->p2, "other");
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);
    assert_int_equal(read_after(&plain, f->p, c.last), 0);
    assert_true(has(&plain, run));
    /* A pass first, which prepares the fence's read. */
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);

    assert_int_equal(pctl_engine_pass_open(f->p, 0), 0);
    assert_int_equal(pctl_feed_last_ahead(&c, f->p), 0);
    assert_true(c.last_sent);
    rt = pc->round_trips;
    assert_int_equal(pctl_engine_pass_fenced(f->p, 0), 0);
    assert_int_equal(pc->round_trips - rt, 1);
    rt = pc->round_trips;
    assert_int_equal(pctl_feed_read(&fd, f->p, &c), 0);
    assert_int_equal(pc->round_trips - rt, 0);
    assert_false(c.last_sent);
    assert_int_equal(fd.gap, 0);
    assert_int_equal(fd.last, plain.last);
    assert_int_equal(fd.nruns, plain.nruns);
    assert_true(has(&fd, run));
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    pctl_feed_follow(&c, fd.last);
    pctl_feed_clear(&fd);
    pctl_feed_clear(&plain);

    /* Sent and not read (nobody else wrote): the pass commits, and the
     * next read sees what came since. */
    assert_int_equal(pctl_engine_pass_open(f->p, 0), 0);
    assert_int_equal(pctl_feed_last_ahead(&c, f->p), 0);
    assert_int_equal(pctl_engine_pass_fenced(f->p, 0), 0);
    c.last_sent = 0;
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    run = create(f->p2, "later");
    assert_int_equal(pctl_engine_pass_open(f->p, 0), 0);
    assert_int_equal(pctl_feed_last_ahead(&c, f->p), 0);
    assert_int_equal(pctl_engine_pass_fenced(f->p, 0), 0);
    assert_int_equal(pctl_feed_read(&fd, f->p, &c), 0);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    assert_int_equal(fd.gap, 0);
    assert_true(has(&fd, run));
    pctl_feed_clear(&fd);
    pctl_feed_cursor_clear(&c);
    assert_int_equal(pctl_fleet_leave(f->p), 0);
#else
    (void)state;
#endif
}

/* ---- an engine going on with a backlog ---- */

#define BACKLOG 40
#define SLICE 16

typedef struct backlog {
    fixture *f;
    uv_loop_t loop;
    planctl_engine *e;
    uv_timer_t tick, guard;
    int64_t runs[BACKLOG];
    int64_t other; /* the other engine's id */
    int starts, stopped, moved, done;
} backlog;

/* The number of runs[from..to) engine `who` holds. */
static int64_t held_of(backlog *b, int64_t who, int from, int to)
{
    return tu_raw_scalar(b->f->d->raw,
                         "SELECT count(*) FROM claims WHERE engine_id = %lld "
                         "AND run_id BETWEEN %lld AND %lld",
                         (long long)who, (long long)b->runs[from],
                         (long long)b->runs[to - 1]);
}

/* The engine's first pass claimed a slice from the first run nobody held
 * and started its tasks.  Before its next pass, the other engine gives
 * back the runs it held below that slice (as a give-back whose wake-up
 * the engine missed: no notification) and takes the last runs, so that
 * fewer than a slice are left after the engine's last claim while runs
 * below it wait. */
static int backlog_start(planctl_job *job, const planctl_task_info *info,
                         void *data)
{
    backlog *b = data;
    int64_t me = b->f->p->fleet_id;

    (void)job;
    (void)info;
    if (++b->starts != SLICE || b->moved)
        return 0;
    b->moved = 1;
    assert_int_equal(held_of(b, me, 8, 8 + SLICE), SLICE);
    assert_int_equal(held_of(b, me, 0, BACKLOG), SLICE);
    tu_raw_exec(b->f->d->raw,
                "UPDATE claims SET engine_id = NULL WHERE engine_id = %lld; "
                "INSERT INTO claims (run_id, engine_id, token) SELECT id, "
                "%lld, 1 FROM runs WHERE id BETWEEN %lld AND %lld",
                (long long)b->other, (long long)b->other,
                (long long)b->runs[BACKLOG - 8],
                (long long)b->runs[BACKLOG - 1]);
    return 0;
}

static void backlog_cancel(planctl_job *job, void *data)
{
    (void)data;
    planctl_step_finish(job, PLANCTL_OUTCOME_ERROR, "cancelled");
}

static void backlog_stopped(planctl_engine *e, void *data)
{
    backlog *b = data;

    (void)e;
    b->stopped = 1;
    uv_close((uv_handle_t *)&b->tick, NULL);
    uv_close((uv_handle_t *)&b->guard, NULL);
}

/* Done once the engine holds the runs given back below its cursor. */
static void backlog_tick(uv_timer_t *t)
{
    backlog *b = t->data;

    if (b->stopped || !b->moved || held_of(b, b->f->p->fleet_id, 0, 8) < 8)
        return;
    /* It took the runs below its cursor and those after it the other
     * engine left; the other kept the last ones. */
    assert_int_equal(held_of(b, b->f->p->fleet_id, 0, BACKLOG - 8),
                     BACKLOG - 8);
    assert_int_equal(held_of(b, b->other, BACKLOG - 8, BACKLOG), 8);
    b->done = 1;
    planctl_engine_stop(b->e, 0);
}

static void backlog_guard(uv_timer_t *t)
{
    backlog *b = t->data;

    fail_msg("the engine did not claim the runs given back below its last "
             "claim before its next heartbeat (it holds %lld of them)",
             (long long)held_of(b, b->f->p->fleet_id, 0, 8));
}

/* An engine of a fleet going on with a backlog claims after the last run
 * it took (fleet_claim_after).  When fewer runs than it asked for are
 * left after it, while its count said more were unheld, it claims from
 * the first run at its next pass, and so takes runs given back below its
 * cursor without waiting for a heartbeat or a notification (pass.c
 * claim(), ran_out). */
static void test_fleet_claim_runs_out_after(void **state)
{
#ifdef PLANCTL_WITH_POSTGRES
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, backlog_start,
                           backlog_cancel, NULL, NULL};
    backlog b;
    char *said = NULL;
    int i;

    if (!tu_on_pg())
        return;
    memset(&b, 0, sizeof b);
    b.f = f;
    ex.data = &b;
    for (i = 0; i < BACKLOG; i++) {
        char name[16];

        snprintf(name, sizeof name, "b%d", i);
        create(f->p2, name);
    }
    for (i = 0; i < BACKLOG; i++)
        b.runs[i] = tu_raw_scalar(
            f->d->raw, "SELECT id FROM runs ORDER BY id OFFSET %d LIMIT 1", i);
    /* Another engine, capped at one run (the engine's share is all but
     * one), holds the first 8 runs. */
    assert_int_equal(pctl_fleet_join(f->p2, "other", 600000, 1, &said), 0);
    pctl_free(said);
    b.other = f->p2->fleet_id;
    tu_raw_exec(f->d->raw,
                "INSERT INTO claims (run_id, engine_id, token) SELECT id, "
                "%lld, 1 FROM runs WHERE id BETWEEN %lld AND %lld",
                (long long)b.other, (long long)b.runs[0], (long long)b.runs[7]);

    o.concurrency = SLICE;
    o.lease_ttl_ms = 600000; /* no heartbeat (every 200 s) in the test */
    assert_int_equal(uv_loop_init(&b.loop), 0);
    assert_int_equal(planctl_engine_new(&b.e, f->p, &b.loop, &o), 0);
    assert_int_equal(planctl_engine_register(b.e, "Hold", &ex), 0);
    assert_int_equal(planctl_engine_start(b.e, backlog_stopped, &b), 0);
    uv_timer_init(&b.loop, &b.tick);
    uv_timer_init(&b.loop, &b.guard);
    b.tick.data = b.guard.data = &b;
    uv_timer_start(&b.tick, backlog_tick, 5, 5);
    uv_timer_start(&b.guard, backlog_guard, 60000, 0);
    uv_run(&b.loop, UV_RUN_DEFAULT);
    assert_int_equal(planctl_engine_status(b.e), 0);
    planctl_engine_free(b.e);
    assert_int_equal(uv_loop_close(&b.loop), 0);
    assert_true(b.done);
    assert_int_equal(pctl_fleet_leave(f->p2), 0);
#else
    (void)state;
#endif
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_feed_names_what_changed),
        T(test_feed_names_instances),
        T(test_late_commit),
        T(test_own_events_skipped),
        T(test_engines_changes_not_told),
        T(test_fleet_sent_no_engines_events),
        T(test_fleet_horizon_passes_engines),
        T(test_fleet_claims_go_with_ended_runs),
        T(test_fleet_heard),
        T(test_horizon_not_inside_a_read),
        T(test_horizon_sent_ahead),
        T(test_engine_follows_other_writers),
        T(test_fleet_claim_runs_out_after),
    };
#undef T

    return cmocka_run_group_tests(tests, NULL, NULL);
}
