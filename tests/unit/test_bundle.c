/*
 * test_bundle.c - export and import: a bundle of a real engine workload
 * loaded into a fresh database gives the same status, history, replay and
 * verify answers; bad bundles are refused whole, leaving nothing behind.
 *
 * The import replays the bundle's status events through the database's
 * transition guards (see src/store/bundle_import.c), so these tests also
 * prove that a real history passes the guards edge by edge, and that a
 * reordered or tampered one does not.
 *
 * Ids: database B is fresh and A's "zk" was created first, so B gives the
 * runs, phases, steps and attempts of "zk" the ids they had in A (status
 * and history compare byte for byte, ids included; asserted below).  Event
 * seqs differ: A's log interleaves engine events and "kafka"'s.
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
    char *dir, *path_a, *path_b;
    planctl *a, *b;
    tu_raw *dba, *dbb;
    char *bundle; /* "zk" exported from A */
    size_t len;
} fixture;

/* The same (name, version) with another body. */
#define RP_OTHER                                                               \
    "{\"name\":\"rp\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","           \
    "\"kind\":\"Dummy\"}],\"plans\":{\"deploy\":{\"phases\":[{\"name\":"       \
    "\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":[\"t\"]}]}]}}}"

static int64_t fixed_now(void *data)
{
    (void)data;
    return INT64_C(4102444800000); /* 2100-01-01: after every recorded time */
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    f->dir = tu_mkdtemp();
    {
        char *a = tu_fmt("%s/a.db", f->dir), *b = tu_fmt("%s/b.db", f->dir);

        f->path_a = tu_db_target(a);
        f->path_b = tu_db_target(b);
        free(a);
        free(b);
    }
    assert_int_equal(planctl_open(&f->a, f->path_a, NULL), 0);
    assert_int_equal(planctl_open(&f->b, f->path_b, NULL), 0);
    f->dba = tu_raw_open(f->path_a);
    f->dbb = tu_raw_open(f->path_b);
    tu_replay_workload(f->a);
    /* Documents with durations of open runs compare at one moment. */
    planctl_set_clock(f->a, fixed_now, NULL);
    planctl_set_clock(f->b, fixed_now, NULL);
    if (planctl_export_json(&f->bundle, f->a, "zk") != 0)
        fail_msg("export: %s", planctl_errmsg(f->a));
    f->len = strlen(f->bundle);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    planctl_free(f->bundle);
    tu_raw_close(f->dba);
    tu_raw_close(f->dbb);
    planctl_close(f->a);
    planctl_close(f->b);
    tu_rmtree(f->dir);
    free(f->path_a);
    free(f->path_b);
    free(f->dir);
    free(f);
    return 0;
}

/* ---- helpers ---- */

/* The uids of a subquery r (id, uid) of runs ordered by id, as one text:
 * PostgreSQL's aggregate orders only by its own ORDER BY. */
static const char *uids_in_order(void)
{
    return tu_on_pg() ? "string_agg(uid, ',' ORDER BY id)"
                      : "group_concat(uid)";
}

/* Every table's size and the counters ids come from: equal before and
 * after a refused import means nothing was written. */
static char *fingerprint(tu_raw *db)
{
    /* PostgreSQL's counters are sequences, which no rollback takes back
     * (a refused import leaves gaps in the ids, by the server's design):
     * there, nothing written is every table's size and the last event. */
    if (tu_on_pg())
        return tu_raw_text(
            db, "SELECT (SELECT count(*) FROM definitions) || '/' || "
                "(SELECT count(*) FROM instances) || '/' || "
                "(SELECT count(*) FROM runs) || '/' || "
                "(SELECT count(*) FROM phases) || '/' || "
                "(SELECT count(*) FROM steps) || '/' || "
                "(SELECT count(*) FROM attempts) || '/' || "
                "(SELECT count(*) FROM events) || '/' || "
                "(SELECT coalesce(max(seq), 0) FROM events)");
    return tu_raw_text(db,
                       "SELECT (SELECT count(*) FROM definitions) || '/' || "
                       "(SELECT count(*) FROM instances) || '/' || "
                       "(SELECT count(*) FROM runs) || '/' || "
                       "(SELECT count(*) FROM phases) || '/' || "
                       "(SELECT count(*) FROM steps) || '/' || "
                       "(SELECT count(*) FROM attempts) || '/' || "
                       "(SELECT count(*) FROM events) || '/' || "
                       "(SELECT coalesce(max(seq), 0) FROM events) || '/' || "
                       "coalesce((SELECT group_concat(name || '=' || seq) FROM "
                       "sqlite_sequence), '')");
}

static void expect_verified(planctl *p)
{
    char *out = NULL;

    if (planctl_verify(&out, p) != 0)
        fail_msg("verify: %s", planctl_errmsg(p));
    assert_non_null(strstr(out, "tables and events agree"));
    planctl_free(out);
}

static char *status_of(planctl *p, const char *name)
{
    char *out = NULL;

    if (planctl_status_json(&out, p, name, NULL) != 0)
        fail_msg("status %s: %s", name, planctl_errmsg(p));
    return out;
}

static char *history_of(planctl *p, const char *name)
{
    planctl_history_options ho = PLANCTL_HISTORY_OPTIONS_INIT;
    char *out = NULL;

    ho.limit = 1000;
    if (planctl_history_json(&out, p, name, &ho) != 0)
        fail_msg("history %s: %s", name, planctl_errmsg(p));
    return out;
}

static void expect_same_text(const char *what, const char *x, const char *y)
{
    if (strcmp(x, y) != 0)
        fail_msg("%s differs.\n--- one\n%s\n--- other\n%s", what, x, y);
}

/* Status and history of name in p equal those of the same instance in q,
 * byte for byte. */
static void expect_same_docs(planctl *p, planctl *q, const char *name)
{
    char *s1 = status_of(p, name), *s2 = status_of(q, name);
    char *h1 = history_of(p, name), *h2 = history_of(q, name);

    expect_same_text("status", s1, s2);
    expect_same_text("history", h1, h2);
    planctl_free(s1);
    planctl_free(s2);
    planctl_free(h1);
    planctl_free(h2);
}

/* replay of name equals its status and history. */
static void expect_replay_agrees(planctl *p, const char *name)
{
    char *out = NULL, *s = status_of(p, name), *h = history_of(p, name);
    char *rs, *rh;
    json_t *doc, *one;

    if (planctl_replay_json(&out, p, name, NULL) != 0)
        fail_msg("replay: %s", planctl_errmsg(p));
    doc = json_loads(out, 0, NULL);
    one = json_array_get(json_object_get(doc, "instances"), 0);
    assert_non_null(one);
    rs = json_dumps(json_object_get(one, "status"), JSON_COMPACT);
    rh = json_dumps(json_object_get(one, "history"), JSON_COMPACT);
    {
        char *live = tu_status_as_replayed(s);
        expect_same_text("replayed status", rs, live);
        free(live);
    }
    expect_same_text("replayed history", rh, h);
    free(rs);
    free(rh);
    json_decref(doc);
    planctl_free(out);
    planctl_free(s);
    planctl_free(h);
}

static int import_doc(planctl *p, json_t *doc, const char *as)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    int rc = planctl_import_json(NULL, p, text, strlen(text), as);

    free(text);
    return rc;
}

/* Removes keys from every object of a document, at any depth. */
static void strip(json_t *v, const char *const *keys)
{
    size_t i;
    const char *k;
    json_t *x;

    if (json_is_object(v)) {
        for (i = 0; keys[i]; i++)
            json_object_del(v, keys[i]);
        json_object_foreach(v, k, x) strip(x, keys);
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x) strip(x, keys);
    }
}

static char *stripped(const char *text, const char *const *keys)
{
    json_t *doc = json_loads(text, 0, NULL);
    char *out;

    assert_non_null(doc);
    strip(doc, keys);
    out = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(doc);
    return out;
}

/* The n-th event of the bundle (in seq order) with entity, run and
 * to_status as given. */
static json_t *find_event(json_t *doc, const char *entity, int64_t run,
                          const char *to)
{
    json_t *ev;
    size_t i;

    json_array_foreach(json_object_get(doc, "events"), i, ev)
    {
        if (!strcmp(json_string_value(json_object_get(ev, "entity")), entity) &&
            json_integer_value(json_object_get(ev, "run_id")) == run &&
            json_is_string(json_object_get(ev, "to_status")) &&
            !strcmp(json_string_value(json_object_get(ev, "to_status")), to))
            return ev;
    }
    fail_msg("no %s event of run %lld to %s", entity, (long long)run, to);
    return NULL;
}

/* An import of doc (as name) into B fails with rc and a message holding
 * want, and B does not change. */
static void expect_refused(fixture *f, json_t *doc, const char *text,
                           size_t len, const char *as, int rc, const char *want)
{
    char *before = fingerprint(f->dbb), *after, *out = (char *)"x";
    int got;

    if (doc)
        got = import_doc(f->b, doc, as);
    else
        got = planctl_import_json(&out, f->b, text, len, as);
    if (got != rc)
        fail_msg("import gave %s (%s), wanted %s", planctl_errname(got),
                 planctl_errmsg(f->b), planctl_errname(rc));
    if (!strstr(planctl_errmsg(f->b), want))
        fail_msg("import said: %s\nwanted: %s", planctl_errmsg(f->b), want);
    assert_null(strchr(planctl_errmsg(f->b), '\n'));
    if (!doc)
        assert_null(out);
    after = fingerprint(f->dbb);
    assert_string_equal(before, after);
    free(before);
    free(after);
}

static void expect_text_of(tu_raw *db, const char *want, const char *sql)
{
    char *got = tu_raw_text(db, "%s", sql);

    if (!got || strcmp(got, want) != 0)
        fail_msg("%s\n  got:  %s\n  want: %s", sql, got ? got : "(null)", want);
    free(got);
}

/* ---- streams ---- */

/* A reader of text in pieces of at most step bytes; fail_at: the read
 * that fails (0: none). */
typedef struct pieces {
    const char *at;
    size_t left, step;
    int reads, fail_at;
} pieces;

static int read_pieces(void *data, char *buf, size_t cap, size_t *len)
{
    pieces *pc = data;

    if (++pc->reads == pc->fail_at)
        return -1;
    *len = pc->left < pc->step ? pc->left : pc->step;
    if (*len > cap)
        *len = cap;
    memcpy(buf, pc->at, *len);
    pc->at += *len;
    pc->left -= *len;
    return 0;
}

/* A writer into a growing string; fails once it has taken limit bytes
 * (0: never). */
typedef struct taken {
    char *v;
    size_t n, limit;
    int calls;
} taken;

static int write_taken(void *data, const char *buf, size_t len)
{
    taken *t = data;

    t->calls++;
    if (t->limit && t->n + len > t->limit)
        return -1;
    t->v = realloc(t->v, t->n + len + 1);
    memcpy(t->v + t->n, buf, len);
    t->n += len;
    t->v[t->n] = '\0';
    return 0;
}

/* ---- export ---- */

static void test_export_shape(void **state)
{
    fixture *f = *state;
    json_t *doc = json_loads(f->bundle, 0, NULL), *in, *run, *ev, *defs;
    char *body = tu_raw_text(f->dba, "SELECT body FROM definitions");
    int64_t last = 0;
    size_t i;

    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "format")),
                        "planctl-bundle");
    assert_int_equal(json_integer_value(json_object_get(doc, "version")), 1);
    assert_string_equal(json_string_value(json_object_get(doc, "exported_at")),
                        "2100-01-01T00:00:00.000Z");
    in = json_object_get(doc, "instance");
    assert_string_equal(json_string_value(json_object_get(in, "name")), "zk");
    assert_true(json_is_object(json_object_get(in, "params")));
    /* deploy completed: last_applied is its snapshot. */
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(in, "last_applied"), "N")),
                        "1");
    assert_true(json_is_false(json_object_get(in, "deleting")));
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(in, "definition"), "version")),
                        "1");
    defs = json_object_get(doc, "definitions");
    assert_int_equal(json_array_size(defs), 1);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(defs, 0), "body")),
        body);
    free(body);
    /* zk's rows and events, every column, original ids. */
    assert_int_equal(json_array_size(json_object_get(doc, "runs")), 4);
    assert_int_equal(
        (int64_t)json_array_size(json_object_get(doc, "phases")),
        tu_raw_scalar(f->dba, "SELECT count(*) FROM phases WHERE run_id <= 4"));
    assert_int_equal(
        (int64_t)json_array_size(json_object_get(doc, "attempts")),
        tu_raw_scalar(f->dba, "SELECT count(*) FROM attempts JOIN steps ON "
                              "steps.id = step_id WHERE run_id <= 4"));
    assert_int_equal((int64_t)json_array_size(json_object_get(doc, "events")),
                     tu_raw_scalar(f->dba, "SELECT count(*) FROM events WHERE "
                                           "instance_id = 1"));
    run = json_array_get(json_object_get(doc, "runs"), 2);
    assert_int_equal(json_object_size(run), 15);
    assert_int_equal(json_integer_value(json_object_get(run, "id")), 3);
    assert_int_equal(json_integer_value(json_object_get(run, "retry_of")), 2);
    assert_int_equal(json_integer_value(json_object_get(run, "finished_at")),
                     tu_raw_scalar(f->dba, "SELECT finished_at FROM runs WHERE "
                                           "id = 3"));
    json_array_foreach(json_object_get(doc, "events"), i, ev)
    {
        assert_int_equal(json_object_size(ev), 13);
        assert_true(json_integer_value(json_object_get(ev, "seq")) > last);
        last = json_integer_value(json_object_get(ev, "seq"));
    }
    json_decref(doc);
}

static void test_export_errors(void **state)
{
    fixture *f = *state;
    char *out = (char *)"x";

    assert_int_equal(planctl_export_json(&out, f->a, "nope"),
                     PLANCTL_ENOTFOUND);
    assert_null(out);
    assert_non_null(strstr(planctl_errmsg(f->a), "instance \"nope\""));
    assert_int_equal(planctl_export_json(NULL, f->a, "zk"), PLANCTL_EINVAL);
    assert_int_equal(planctl_export_json(&out, f->a, NULL), PLANCTL_EINVAL);
}

/* ---- import ---- */

static void test_import_fresh(void **state)
{
    fixture *f = *state;
    char *out = NULL, *again = NULL, *x, *y, *ea = NULL, *eb = NULL;
    const char *const no_seq[] = {"seq", "last_seq", "exported_at", NULL};
    planctl_events_options eo = PLANCTL_EVENTS_OPTIONS_INIT;
    char *n_events;
    int64_t n;

    if (planctl_import_json(&out, f->b, f->bundle, f->len, NULL) != 0)
        fail_msg("import: %s", planctl_errmsg(f->b));
    n = tu_raw_scalar(f->dbb, "SELECT count(*) FROM events");
    n_events = tu_fmt("{\"schema\":1,\"instance\":\"zk\",\"runs\":4,"
                      "\"events\":%lld,\"instances\":[{\"instance\":"
                      "\"zk\",\"runs\":4,\"events\":%lld,\"paused\":null}]}",
                      (long long)n, (long long)n);
    assert_string_equal(out, n_events);
    free(n_events);
    planctl_free(out);
    expect_verified(f->b);
    /* Same ids, same uids: status and history byte for byte. */
    assert_int_equal(tu_raw_scalar(f->dbb, "SELECT max(id) FROM runs"), 4);
    x = tu_raw_text(f->dba,
                    "SELECT %s FROM (SELECT id, uid FROM runs WHERE id "
                    "<= 4 ORDER BY id) r",
                    uids_in_order());
    y = tu_raw_text(f->dbb,
                    "SELECT %s FROM (SELECT id, uid FROM runs ORDER BY "
                    "id) r",
                    uids_in_order());
    assert_string_equal(x, y);
    free(x);
    free(y);
    expect_same_docs(f->a, f->b, "zk");
    expect_replay_agrees(f->b, "zk");
    /* The event log too, but for seqs. */
    eo.instance = "zk";
    assert_int_equal(planctl_events_json(&ea, f->a, &eo), 0);
    assert_int_equal(planctl_events_json(&eb, f->b, &eo), 0);
    x = stripped(ea, no_seq);
    y = stripped(eb, no_seq);
    expect_same_text("events", x, y);
    free(x);
    free(y);
    planctl_free(ea);
    planctl_free(eb);
    /* Lossless: exporting B gives A's bundle back, but for event seqs. */
    assert_int_equal(planctl_export_json(&again, f->b, "zk"), 0);
    x = stripped(f->bundle, no_seq);
    y = stripped(again, no_seq);
    expect_same_text("bundle", x, y);
    free(x);
    free(y);
    planctl_free(again);
}

/* An instance with an active run and a cancelled one. */
static void test_import_active(void **state)
{
    fixture *f = *state;
    planctl_import_options o = PLANCTL_IMPORT_OPTIONS_INIT;
    char *bundle = NULL, *out = NULL;

    assert_int_equal(planctl_export_json(&bundle, f->a, "kafka"), 0);
    /* By default its active run comes paused: nothing of a bundle runs in
     * the database it is imported into until someone resumes it. */
    o.as_name = "kafka-paused";
    if (planctl_import(&out, f->b, bundle, strlen(bundle), &o) != 0)
        fail_msg("import: %s", planctl_errmsg(f->b));
    assert_non_null(strstr(out, "\"paused\":2"));
    planctl_free(out);
    expect_text_of(f->dbb, "PAUSED", "SELECT status FROM runs WHERE id = 2");
    expect_text_of(f->dbb,
                   "paused on import, so that nothing of the bundle runs "
                   "here until it is resumed",
                   "SELECT message FROM runs WHERE id = 2");
    assert_int_equal(
        tu_raw_scalar(f->dbb, "SELECT count(*) FROM steps WHERE run_id = 2 "
                              "AND status <> 'PENDING'"),
        0);
    expect_verified(f->b);
    /* keep_active: as it was. */
    o.as_name = NULL;
    o.keep_active = 1;
    if (planctl_import(NULL, f->b, bundle, strlen(bundle), &o) != 0)
        fail_msg("import: %s", planctl_errmsg(f->b));
    planctl_free(bundle);
    expect_verified(f->b);
    /* kafka's runs were 5 and 6 in A, 1 and 2 here: compare without ids. */
    {
        /* The second import of the bundle gave its runs new uids. */
        const char *const ids[] = {"id", "active_run", "uid", NULL};
        char *s1 = status_of(f->a, "kafka"), *s2 = status_of(f->b, "kafka");
        char *x = stripped(s1, ids), *y = stripped(s2, ids);

        expect_same_text("status", x, y);
        assert_non_null(strstr(s2, "\"active_run\":4"));
        free(x);
        free(y);
        planctl_free(s1);
        planctl_free(s2);
    }
    expect_replay_agrees(f->b, "kafka");
    assert_int_equal(tu_raw_scalar(f->dbb, "SELECT count(*) FROM runs WHERE "
                                           "status = 'PENDING'"),
                     1);
}

/* Between backends: A's bundle into a SQLite file, and that file's export
 * into a new database of the backend under test.  On PostgreSQL that is a
 * schema to a file and a file to a schema; on SQLite, file to file. */
static void test_import_across_backends(void **state)
{
    fixture *f = *state;
    const char *const no_seq[] = {"seq", "last_seq", "exported_at", NULL};
    char *file = tu_fmt("%s/c.db", f->dir), *d_file = tu_fmt("%s/d.db", f->dir);
    char *d_path = tu_db_target(d_file), *out = NULL, *from_c = NULL;
    char *x, *y;
    planctl *c, *d;

    assert_int_equal(planctl_open(&c, file, NULL), 0);
    assert_int_equal(planctl_open(&d, d_path, NULL), 0);
    planctl_set_clock(c, fixed_now, NULL);
    planctl_set_clock(d, fixed_now, NULL);
    if (planctl_import_json(&out, c, f->bundle, f->len, NULL) != 0)
        fail_msg("import into %s: %s", file, planctl_errmsg(c));
    planctl_free(out);
    expect_verified(c);
    expect_same_docs(f->a, c, "zk");
    assert_int_equal(planctl_export_json(&from_c, c, "zk"), 0);
    if (planctl_import_json(&out, d, from_c, strlen(from_c), NULL) != 0)
        fail_msg("import into %s: %s", d_path, planctl_errmsg(d));
    planctl_free(out);
    expect_verified(d);
    expect_same_docs(f->a, d, "zk");
    expect_replay_agrees(d, "zk");
    /* Lossless both ways, but for event seqs. */
    x = stripped(f->bundle, no_seq);
    y = stripped(from_c, no_seq);
    expect_same_text("bundle through SQLite", x, y);
    free(x);
    free(y);
    planctl_free(from_c);
    planctl_close(d);
    planctl_close(c);
    free(d_path);
    free(d_file);
    free(file);
}

static void test_import_twice(void **state)
{
    fixture *f = *state;
    const char *const ids[] = {"id", "uid", "retry_of", "instance", NULL};
    char *s1, *s2, *x, *y;

    assert_int_equal(planctl_import_json(NULL, f->b, f->bundle, f->len, NULL),
                     0);
    expect_refused(f, NULL, f->bundle, f->len, NULL, PLANCTL_ECONFLICT,
                   "the bundle's instance \"zk\" already exists here");
    /* Under another name it goes in; the definition is reused, the uids
     * are fresh (they are unique in a database), retry_of follows. */
    if (planctl_import_json(NULL, f->b, f->bundle, f->len, "zk2") != 0)
        fail_msg("import --as: %s", planctl_errmsg(f->b));
    expect_verified(f->b);
    expect_replay_agrees(f->b, "zk2");
    assert_int_equal(tu_raw_scalar(f->dbb, "SELECT count(*) FROM definitions"),
                     1);
    assert_int_equal(
        tu_raw_scalar(f->dbb, "SELECT count(DISTINCT uid) FROM runs"), 8);
    assert_int_equal(tu_raw_scalar(f->dbb,
                                   "SELECT retry_of FROM runs WHERE id = "
                                   "7"),
                     6);
    s1 = status_of(f->b, "zk");
    s2 = status_of(f->b, "zk2");
    x = stripped(s1, ids);
    y = stripped(s2, ids);
    expect_same_text("status of the copy", x, y);
    free(x);
    free(y);
    planctl_free(s1);
    planctl_free(s2);
    expect_refused(f, NULL, f->bundle, f->len, "zk2", PLANCTL_ECONFLICT,
                   "instance \"zk2\" already exists");
    expect_refused(f, NULL, f->bundle, f->len, "-bad", PLANCTL_EINVAL,
                   "instance name \"-bad\" is invalid");
}

/* After gc removed the run a retry retried, the retry's creation event
 * still names it; the import clears that reference in the event as in the
 * row, or replay would find another run under the old id here. */
static void test_import_after_gc(void **state)
{
    fixture *f = *state;
    planctl_gc_options o = PLANCTL_GC_OPTIONS_INIT;
    char *out = NULL, *bundle = NULL;

    o.keep_last = 1;
    assert_int_equal(planctl_gc(&out, f->a, &o), 0);
    planctl_free(out);
    assert_int_equal(tu_raw_scalar(f->dba,
                                   "SELECT count(*) FROM runs WHERE id = "
                                   "2"),
                     0);
    assert_int_equal(planctl_export_json(&bundle, f->a, "zk"), 0);
    if (planctl_import_json(NULL, f->b, bundle, strlen(bundle), NULL) != 0)
        fail_msg("import: %s", planctl_errmsg(f->b));
    planctl_free(bundle);
    /* Runs 1, 3, 4 became 1, 2, 3; the retry (now 2) retries nothing. */
    assert_int_equal(tu_raw_scalar(f->dbb, "SELECT count(*) FROM runs"), 3);
    assert_int_equal(tu_raw_scalar(f->dbb, "SELECT retry_of IS NULL FROM runs "
                                           "WHERE id = 2"),
                     1);
    expect_verified(f->b);
    expect_replay_agrees(f->b, "zk");
}

/* Importing into the database it came from, under another name. */
static void test_import_into_source(void **state)
{
    fixture *f = *state;
    char *before = status_of(f->a, "zk"), *after;

    if (planctl_import_json(NULL, f->a, f->bundle, f->len, "zk-copy") != 0)
        fail_msg("import: %s", planctl_errmsg(f->a));
    expect_verified(f->a);
    expect_replay_agrees(f->a, "zk-copy");
    after = status_of(f->a, "zk");
    assert_string_equal(before, after);
    assert_int_equal(tu_raw_scalar(f->dba, "SELECT count(*) FROM runs"), 10);
    assert_int_equal(
        tu_raw_scalar(f->dba, "SELECT count(DISTINCT uid) FROM runs"), 10);
    assert_int_equal(tu_raw_scalar(f->dba, "SELECT count(*) FROM definitions"),
                     1);
    planctl_free(before);
    planctl_free(after);
}

static void test_refused_malformed(void **state)
{
    fixture *f = *state;
    json_t *doc;

    expect_refused(f, NULL, f->bundle, f->len / 2, NULL, PLANCTL_EINVAL,
                   "bundle is not JSON: <bundle>:1:");
    expect_refused(f, NULL, "hello", 5, NULL, PLANCTL_EINVAL,
                   "bundle is not JSON");
    expect_refused(f, NULL, "{\"format\":\"other\"}", 18, NULL, PLANCTL_EINVAL,
                   "not a planctl bundle");
    doc = json_loads(f->bundle, 0, NULL);
    json_object_set_new(doc, "version", json_integer(99));
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_ETOONEW,
                   "bundle format version 99 is newer than this planctl "
                   "reads (up to 1); upgrade planctl");
    json_object_set_new(doc, "version", json_integer(1));
    json_object_del(doc, "steps");
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                   "\"steps\" is missing or not an array");
    json_decref(doc);
    /* A field of the wrong type, named. */
    doc = json_loads(f->bundle, 0, NULL);
    json_object_set_new(json_array_get(json_object_get(doc, "runs"), 1),
                        "created_at", json_string("yesterday"));
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                   "bundle run 2: \"created_at\" must be an integer");
    json_decref(doc);
    /* An event of another instance. */
    doc = json_loads(f->bundle, 0, NULL);
    json_object_set_new(json_array_get(json_object_get(doc, "events"), 3),
                        "instance_id", json_integer(2));
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                   "is not of the bundle's instance");
    json_decref(doc);
    /* An attempt in a status planctl does not know. */
    doc = json_loads(f->bundle, 0, NULL);
    json_object_set_new(json_array_get(json_object_get(doc, "attempts"), 0),
                        "status", json_string("DONE"));
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                   "bundle attempt 1: unknown status");
    json_decref(doc);
    expect_refused(f, NULL, NULL, 0, NULL, PLANCTL_EINVAL, "missing argument");
}

/* The events put out of order: run 1 completes before it started. */
static void test_refused_reordered(void **state)
{
    fixture *f = *state;
    json_t *doc = json_loads(f->bundle, 0, NULL);
    json_t *start = find_event(doc, "run", 1, "IN_PROGRESS");
    json_t *end = find_event(doc, "run", 1, "COMPLETE");
    json_t *s = json_object_get(start, "seq"), *e = json_object_get(end, "seq");
    json_int_t a = json_integer_value(s), b = json_integer_value(e);

    json_integer_set(s, b);
    json_integer_set(e, a);
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                   "moves run 1 from IN_PROGRESS, but it is PENDING at that "
                   "point; the events are out of order");
    json_decref(doc);
}

/* An edge the transitions table does not have: the triggers refuse it. */
static void test_refused_illegal_edge(void **state)
{
    fixture *f = *state;
    json_t *doc = json_loads(f->bundle, 0, NULL);
    json_t *ev = find_event(doc, "run", 1, "IN_PROGRESS");
    char *want;

    json_object_set_new(ev, "to_status", json_string("COMPLETE"));
    want = tu_fmt("bundle event %lld: run 1 cannot go from PENDING to "
                  "COMPLETE; the bundle is corrupt",
                  (long long)json_integer_value(json_object_get(ev, "seq")));
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL, want);
    free(want);
    json_decref(doc);
    /* A row created in a status that is not reachable from (new). */
    doc = json_loads(f->bundle, 0, NULL);
    ev = find_event(doc, "run", 1, "PENDING");
    json_object_set_new(ev, "to_status", json_string("COMPLETE"));
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                   "a run cannot be created COMPLETE");
    json_decref(doc);
    /* Rows whose events do not end where the rows say. */
    doc = json_loads(f->bundle, 0, NULL);
    json_object_set_new(json_array_get(json_object_get(doc, "runs"), 0),
                        "status", json_string("CANCELLED"));
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                   "bundle run 1 is CANCELLED but its events leave it "
                   "COMPLETE");
    json_decref(doc);
}

/* References that do not resolve. */
static void test_refused_dangling(void **state)
{
    fixture *f = *state;
    json_t *doc = json_loads(f->bundle, 0, NULL), *ev;
    size_t i;

    /* Run 2 left out, its phases, steps and events kept. */
    json_array_remove(json_object_get(doc, "runs"), 1);
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                   "refers to run 2, which is not in the bundle");
    json_decref(doc);
    /* An attempt of a step the bundle does not carry. */
    doc = json_loads(f->bundle, 0, NULL);
    json_object_set_new(json_array_get(json_object_get(doc, "attempts"), 0),
                        "step_id", json_integer(9999));
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                   "bundle attempt 1 refers to step 9999, which is not in "
                   "the bundle");
    json_decref(doc);
    /* A run whose creation event is gone. */
    doc = json_loads(f->bundle, 0, NULL);
    json_array_foreach(json_object_get(doc, "events"), i, ev)
    {
        if (json_is_null(json_object_get(ev, "from_status")) &&
            !strcmp(json_string_value(json_object_get(ev, "entity")), "run") &&
            json_integer_value(json_object_get(ev, "run_id")) == 4) {
            json_array_remove(json_object_get(doc, "events"), i);
            break;
        }
    }
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL, "before its run");
    json_decref(doc);
    /* A phase no event creates. */
    doc = json_loads(f->bundle, 0, NULL);
    ev = json_deep_copy(json_array_get(json_object_get(doc, "phases"), 0));
    json_object_set_new(ev, "id", json_integer(9999));
    json_object_set_new(ev, "idx", json_integer(99));
    json_array_append_new(json_object_get(doc, "phases"), ev);
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                   "bundle phase 9999 has no creation event");
    json_decref(doc);
    /* Phases created out of their order (status lists them by idx). */
    doc = json_loads(f->bundle, 0, NULL);
    json_object_set_new(json_array_get(json_object_get(doc, "phases"), 0),
                        "idx", json_integer(5));
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                   "bundle phase 1: idx 5, but 0 is next in its run");
    json_decref(doc);
}

/* A bundle's parameter snapshots and plans are checked as strictly as the
 * CLI checks its input: refused with a message naming the row. */
static void refuse_with(fixture *f, const char *table, size_t row,
                        const char *field, json_t *value, const char *want)
{
    json_t *doc = json_loads(f->bundle, 0, NULL);
    json_t *o = strcmp(table, "instance") == 0
                    ? json_object_get(doc, "instance")
                    : json_array_get(json_object_get(doc, table), row);

    json_object_set_new(o, field, value);
    expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL, want);
    json_decref(doc);
}

static void test_refused_params(void **state)
{
    fixture *f = *state;

    refuse_with(f, "runs", 0, "params", json_string("not json"),
                "bundle run 1: \"params\" is not JSON: not json");
    refuse_with(f, "runs", 0, "params", json_string("[1]"),
                "run 1: \"params\" must be a JSON object");
    refuse_with(f, "runs", 0, "params", json_string("{\"NOPE\":\"x\"}"),
                "run 1: \"params\" names parameter \"NOPE\", which "
                "definition rp@1 does not have");
    refuse_with(f, "runs", 0, "params", json_string("{\"N\":5}"),
                "run 1: \"params\": the value of \"N\" must be a string or "
                "null");
    refuse_with(f, "runs", 0, "params", json_string("{\"N\":[\"x\"]}"),
                "run 1: \"params\": the value of \"N\" must be a string or "
                "null");
    /* A plan the definition lacks, named by the row and its creation
     * event alike. */
    {
        json_t *doc = json_loads(f->bundle, 0, NULL), *ev, *data;
        size_t i;

        json_object_set_new(json_array_get(json_object_get(doc, "runs"), 1),
                            "plan", json_string("nope"));
        json_array_foreach(json_object_get(doc, "events"), i, ev)
        {
            if (json_integer_value(json_object_get(ev, "run_id")) != 2 ||
                !json_is_null(json_object_get(ev, "from_status")) ||
                strcmp(json_string_value(json_object_get(ev, "entity")),
                       "run") != 0)
                continue;
            char *text;

            data = json_loads(json_string_value(json_object_get(ev, "data")), 0,
                              NULL);
            json_object_set_new(data, "plan", json_string("nope"));
            text = json_dumps(data, 0);
            json_object_set_new(ev, "data", json_string(text));
            free(text);
            json_decref(data);
        }
        expect_refused(f, doc, NULL, 0, NULL, PLANCTL_EINVAL,
                       "run 2: plan \"nope\" is not a plan of definition "
                       "rp@1");
        json_decref(doc);
    }
    refuse_with(f, "instance", 0, "params", json_pack("{s:s}", "NOPE", "x"),
                "instance 1: \"params\" names parameter \"NOPE\"");
    refuse_with(f, "instance", 0, "last_applied", json_pack("{s:i}", "N", 1),
                "\"last_applied\": the value of \"N\" must be a string");
}

/* verify compares a run's parameter snapshot with the one its creation
 * event recorded; a retry of a run whose snapshot is not JSON says so
 * (it said "out of memory"). */
static void test_params_verified(void **state)
{
    fixture *f = *state;
    int64_t run = 0;
    char *out = NULL;

    expect_verified(f->a);
    tu_raw_exec(f->dba, "UPDATE runs SET params = '{\"N\":\"tampered\"}' "
                        "WHERE id = 1");
    assert_int_equal(planctl_verify(&out, f->a), PLANCTL_EMISMATCH);
    assert_non_null(strstr(planctl_errmsg(f->a), "params"));
    tu_raw_exec(f->dba, "UPDATE runs SET params = 'not json' WHERE status = "
                        "'FATAL_ERROR'");
    assert_int_equal(planctl_run_retry(&run, f->a, "zk", 3), PLANCTL_EINVAL);
    assert_null(strstr(planctl_errmsg(f->a), "out of memory"));
    assert_non_null(strstr(planctl_errmsg(f->a), "is not JSON"));
}

/* A (name, version) registered here with another body. */
static void test_refused_definition(void **state)
{
    fixture *f = *state;

    assert_int_equal(planctl_definition_apply(NULL, f->b, RP_OTHER,
                                              strlen(RP_OTHER), "other.json"),
                     0);
    expect_refused(f, NULL, f->bundle, f->len, NULL, PLANCTL_ECONFLICT,
                   "definition rp@1 is registered here with a different "
                   "body");
}

/* What gc hands its archive: the lines, the syncs, and when to refuse. */
typedef struct sink {
    char *text;
    size_t len;
    int bundles, syncs;
    int refuse_at; /* refuse the Nth bundle (1-based); 0: never */
} sink;

static int sink_archive(void *data, const char *bundle, size_t len)
{
    sink *k = data;

    if (!bundle) {
        k->syncs++;
        return 0;
    }
    if (++k->bundles == k->refuse_at)
        return -1;
    /* One bundle is one line: no newline inside. */
    assert_null(memchr(bundle, '\n', len));
    k->text = realloc(k->text, k->len + len + 2);
    memcpy(k->text + k->len, bundle, len);
    k->len += len;
    k->text[k->len++] = '\n';
    k->text[k->len] = '\0';
    return 0;
}

/* Two more backups of zk, so gc --keep-last 1 removes runs 2, 4 and 7. */
static void more_backups(fixture *f)
{
    int64_t r;
    int i;

    for (i = 0; i < 2; i++) {
        assert_int_equal(planctl_plan_trigger(&r, f->a, "zk", "backup", NULL),
                         0);
        assert_int_equal(tu_engine_until_idle(f->a), 0);
    }
}

/* Each removed run reaches the archive as a bundle of its own before its
 * batch commits; the lines together import as the instance's old runs. */
static void test_gc_archive(void **state)
{
    fixture *f = *state;
    planctl_gc_options o = PLANCTL_GC_OPTIONS_INIT;
    planctl_gc_options v1 = {1, 1, 0, 0, 1, NULL, NULL};
    sink k = {NULL, 0, 0, 0, 0};
    char *out = NULL;

    more_backups(f);
    o.keep_last = 1;
    o.batch = 1;
    o.archive = sink_archive;
    o.archive_data = &k;
    /* A dry run archives nothing. */
    o.dry_run = 1;
    assert_int_equal(planctl_gc(&out, f->a, &o), 0);
    planctl_free(out);
    assert_int_equal(k.bundles + k.syncs, 0);
    o.dry_run = 0;
    if (planctl_gc(&out, f->a, &o) != 0)
        fail_msg("gc: %s", planctl_errmsg(f->a));
    assert_non_null(strstr(out, "\"removed\":3"));
    planctl_free(out);
    assert_int_equal(k.bundles, 3);
    assert_int_equal(k.syncs, 3); /* one batch per run */
    assert_int_equal(tu_raw_scalar(f->dba, "SELECT count(*) FROM runs WHERE id "
                                           "IN (2, 4, 7)"),
                     0);
    expect_verified(f->a);
    /* A version 1 struct (no archive fields) is still read. */
    assert_int_equal(planctl_gc(&out, f->a, &v1), 0);
    assert_non_null(strstr(out, "\"removed\":0"));
    planctl_free(out);

    if (planctl_import_json(&out, f->b, k.text, k.len, NULL) != 0)
        fail_msg("import: %s", planctl_errmsg(f->b));
    assert_non_null(strstr(out, "\"instance\":\"zk\",\"runs\":3"));
    planctl_free(out);
    out = tu_raw_text(f->dbb, "%s",
                      tu_on_pg() ? "SELECT string_agg(plan || ':' || status, "
                                   "' ' ORDER BY id) FROM runs"
                                 : "SELECT group_concat(plan || ':' || "
                                   "status, ' ') FROM runs ORDER BY id");
    assert_string_equal(out,
                        "update:FATAL_ERROR backup:COMPLETE backup:COMPLETE");
    free(out);
    expect_verified(f->b);
    expect_replay_agrees(f->b, "zk");
    free(k.text);
}

/* An archive that refuses a run stops gc: that batch is rolled back, the
 * batches before it stay removed. */
static void test_gc_archive_refused(void **state)
{
    fixture *f = *state;
    planctl_gc_options o = PLANCTL_GC_OPTIONS_INIT;
    sink k = {NULL, 0, 0, 0, 2};
    char *out = NULL;

    more_backups(f);
    o.keep_last = 1;
    o.batch = 1;
    o.archive = sink_archive;
    o.archive_data = &k;
    assert_int_equal(planctl_gc(&out, f->a, &o), PLANCTL_EIO);
    assert_null(out);
    assert_non_null(strstr(planctl_errmsg(f->a), "writing run 4 to the "
                                                 "archive failed"));
    assert_int_equal(tu_raw_scalar(f->dba, "SELECT count(*) FROM runs WHERE id "
                                           "IN (2, 4, 7)"),
                     2);
    assert_int_equal(k.syncs, 1);
    expect_verified(f->a);
    free(k.text);
}

/* The stream writes the bytes planctl_export_json() returns; a writer
 * that stops it is EIO. */
static void test_export_stream(void **state)
{
    fixture *f = *state;
    taken t = {NULL, 0, 0, 0};

    assert_int_equal(planctl_export_stream(f->a, "zk", write_taken, &t), 0);
    assert_int_equal(t.n, f->len);
    assert_memory_equal(t.v, f->bundle, f->len);
    free(t.v);
    memset(&t, 0, sizeof t);
    t.limit = 1000;
    assert_int_equal(planctl_export_stream(f->a, "zk", write_taken, &t),
                     PLANCTL_EIO);
    assert_string_equal(planctl_errmsg(f->a), "cannot write the bundle");
    free(t.v);
    memset(&t, 0, sizeof t);
    assert_int_equal(planctl_export_stream(f->a, "nope", write_taken, &t),
                     PLANCTL_ENOTFOUND);
    assert_int_equal(t.n, 0);
    assert_int_equal(planctl_export_stream(f->a, "zk", NULL, NULL),
                     PLANCTL_EINVAL);
}

/* Read one byte at a time, or in pieces of every size up to 70, the
 * bundle imports as it does whole; a reader that fails is EIO with
 * nothing imported. */
static void test_import_stream(void **state)
{
    fixture *f = *state;
    planctl_import_options o = PLANCTL_IMPORT_OPTIONS_INIT;
    char *want = NULL, *got = NULL, *before, *after;
    size_t step;
    pieces pc;

    o.as_name = "whole";
    assert_int_equal(planctl_import(&want, f->b, f->bundle, f->len, &o), 0);
    for (step = 1; step <= 70; step += step < 8 ? 1 : 31) {
        char name[32];

        snprintf(name, sizeof name, "by%zu", step);
        o.as_name = name;
        pc = (pieces){f->bundle, f->len, step, 0, 0};
        if (planctl_import_stream(&got, f->b, &o, read_pieces, &pc) != 0)
            fail_msg("pieces of %zu: %s", step, planctl_errmsg(f->b));
        /* The answers differ only in the name. */
        assert_int_equal(strlen(got), strlen(want) + 2 * (strlen(name) - 5));
        planctl_free(got);
        expect_verified(f->b);
    }
    planctl_free(want);
    before = fingerprint(f->dbb);
    o.as_name = "broken";
    pc = (pieces){f->bundle, f->len, 100, 0, 3};
    assert_int_equal(planctl_import_stream(&got, f->b, &o, read_pieces, &pc),
                     PLANCTL_EIO);
    assert_null(got);
    assert_string_equal(planctl_errmsg(f->b), "the bundle cannot be read");
    after = fingerprint(f->dbb);
    assert_string_equal(before, after);
    free(before);
    free(after);
    assert_int_equal(planctl_import_stream(&got, f->b, &o, NULL, NULL),
                     PLANCTL_EINVAL);
}

/* The members of a bundle in another order than export writes them, the
 * header last: the same import. */
static void test_import_any_order(void **state)
{
    fixture *f = *state;
    json_t *doc = json_loads(f->bundle, 0, NULL), *copy = json_object();
    static const char *const order[] = {
        "events",      "attempts", "steps",       "phases",  "runs",
        "definitions", "instance", "exported_at", "version", "format"};
    size_t i;

    for (i = 0; i < sizeof order / sizeof *order; i++)
        json_object_set(copy, order[i], json_object_get(doc, order[i]));
    assert_int_equal(import_doc(f->b, copy, NULL), 0);
    expect_verified(f->b);
    expect_same_docs(f->a, f->b, "zk");
    json_decref(copy);
    json_decref(doc);
}

/* Bundles of several instances in one text import together, in one
 * transaction; a new name is for one instance; two instances of one name
 * are refused. */
static void test_import_several(void **state)
{
    fixture *f = *state;
    char *kafka = NULL, *both, *out = NULL, *clash;
    json_t *doc;

    assert_int_equal(planctl_export_json(&kafka, f->a, "kafka"), 0);
    both = tu_fmt("%s\n\n%s\n", f->bundle, kafka);
    expect_refused(f, NULL, both, strlen(both), "x", PLANCTL_EINVAL,
                   "the bundles hold 2 instances, but a new name is for one");
    doc = json_loads(f->bundle, 0, NULL);
    json_object_set_new(json_object_get(doc, "instance"), "id",
                        json_integer(99));
    out = json_dumps(doc, JSON_COMPACT);
    clash = tu_fmt("%s\n%s", f->bundle, out);
    free(out);
    json_decref(doc);
    expect_refused(f, NULL, clash, strlen(clash), NULL, PLANCTL_EINVAL,
                   "the bundles hold two instances named \"zk\" (ids 1 and "
                   "99 where they came from)");
    if (planctl_import_json(&out, f->b, both, strlen(both), NULL) != 0)
        fail_msg("import: %s", planctl_errmsg(f->b));
    assert_non_null(strstr(out, "{\"schema\":1,\"instance\":null,"));
    assert_non_null(strstr(out, "\"instances\":[{\"instance\":\"zk\""));
    assert_non_null(strstr(out, "{\"instance\":\"kafka\""));
    planctl_free(out);
    expect_verified(f->b);
    expect_replay_agrees(f->b, "zk");
    expect_replay_agrees(f->b, "kafka");
    planctl_free(kafka);
    free(both);
    free(clash);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_export_shape),       T(test_export_errors),
        T(test_import_fresh),       T(test_import_active),
        T(test_export_stream),      T(test_import_stream),
        T(test_import_any_order),   T(test_import_across_backends),
        T(test_import_twice),       T(test_import_after_gc),
        T(test_import_into_source), T(test_refused_malformed),
        T(test_refused_reordered),  T(test_refused_illegal_edge),
        T(test_refused_dangling),   T(test_refused_params),
        T(test_params_verified),    T(test_refused_definition),
        T(test_gc_archive),         T(test_gc_archive_refused),
        T(test_import_several),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
