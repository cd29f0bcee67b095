/*
 * limit.c - the limit program of instructions_per_step: the rows the
 * engine wrote, written again with raw SQLite calls and nothing else, into
 * a copy of the database the engine started from.
 *
 * Its input is what ips-engine recorded (the rows of each commit, wlog.c)
 * and the engine's database after the run (the events themselves).  Each
 * engine commit that wrote step work becomes one transaction here (the
 * same batching: as many step completions per commit), doing for each of
 * the commit's status events, in order, what the store's gate does:
 *   - the status UPDATE of the run, phase or step, with its compare-and-set
 *     guard (WHERE id = ? AND status = ?), which fires the schema's guard
 *     trigger (run_set_status, phase_set_status, step_set_status);
 *   - for a step, the attempts row opened (INSERT) or closed (UPDATE);
 *   - for a run that completed a deploy, update or upgrade, the instance's
 *     last_applied (instance_mark_applied);
 * then the commit's event rows, sixteen per INSERT as the engine's journal
 * does, then each run's event counter once.  Every statement is the
 * store's own, taken by its name from the SQL built into libplanctl.a
 * (src/store/sql/sqlite.sql), so this program and the engine cannot run
 * different texts.  The lease row is written as
 * the engine wrote it (taken at the start, dropped at the stop, each with
 * the engine's own event), and so are the rows of run_waits (why a run
 * waits for a slot: put when it starts waiting, deleted when it stops),
 * with the run and the change the engine's, their values a slot's wait
 * (the rows are gone by the time this program reads the engine's
 * database).  Only writes: the reads the engine needs for
 * its guarantees (the lease token before each pass, the queue after a run
 * ends) are the engine's cost, as are the commits that wrote nothing (not
 * replayed).  Every value is worked out
 * before the counted region (bench_counted_limit), which holds only the
 * statements' preparation and the transactions; ips-check then checks
 * that both wrote the same rows in each commit and ended with the same
 * tables.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "store/embed.h"
#include "store/sql.h"

/* One event to write, and the status change it records (change < 0:
 * none, the event is only copied). */
typedef struct lev {
    int64_t at, instance_id, run_id, phase_id, step_id; /* 0: NULL */
    char *entity, *from, *to, *message, *actor, *data;  /* NULL: NULL */
    int attempt;                                        /* 0: NULL */
    int change;   /* PLANCTL_ENTITY_*, or -1 */
    int terminal; /* to is COMPLETE, FATAL_ERROR or CANCELLED */
    int64_t deadline_at, next_attempt_at; /* 0: NULL */
    int64_t exit_code;                    /* -1: NULL */
    char *output;
    int grant, attempt_inc, mark_applied;
} lev;

typedef struct lcount {
    int64_t run_id, count;
} lcount;

/* One transaction: the lease row's writes (the engine's start and stop,
 * a heartbeat), events ev[ev0 .. ev0 + nev), counters cnt[cnt0 .. cnt0 +
 * ncnt). */
/* A write of run_waits: op 'I', 'U' or 'D' of the run's row. */
typedef struct lwait {
    int64_t run_id;
    char op;
} lwait;

typedef struct lcommit {
    size_t ev0, nev, cnt0, ncnt, w0, nw;
    char lease[4]; /* 'I', 'U', 'D' in order; 0 after the last */
    int64_t at;    /* for the lease row's times */
} lcommit;

typedef struct lprog {
    lev *ev;
    size_t nev, capev;
    lcount *cnt;
    size_t ncnt, capcnt;
    lwait *w;
    size_t nw, capw;
    lcommit *c;
    size_t nc;
    int64_t empty;
} lprog;

static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    char *s;

    if (!t)
        return NULL;
    if (!(s = strdup((const char *)t)))
        bench_die("out of memory");
    return s;
}

/* The details the gate put in an event's data (gate.c, change_data()). */
static void parse_data(lev *v)
{
    json_t *o, *x;

    v->exit_code = -1;
    if (!v->data)
        return;
    if (!(o = json_loads(v->data, 0, NULL)) || !json_is_object(o))
        bench_die("ips-limit: event data is not a JSON object: %s", v->data);
    if ((x = json_object_get(o, "deadline_at")))
        v->deadline_at = json_integer_value(x);
    if ((x = json_object_get(o, "next_attempt_at")))
        v->next_attempt_at = json_integer_value(x);
    if ((x = json_object_get(o, "exit_code")))
        v->exit_code = json_integer_value(x);
    if ((x = json_object_get(o, "output")) && json_is_string(x) &&
        !(v->output = strdup(json_string_value(x))))
        bench_die("out of memory");
    if ((x = json_object_get(o, "grant_attempt")))
        v->grant = json_integer_value(x) != 0;
    json_decref(o);
}

static int entity_of(const char *s)
{
    if (!s)
        return -1;
    if (strcmp(s, "run") == 0)
        return PLANCTL_ENTITY_RUN;
    if (strcmp(s, "phase") == 0)
        return PLANCTL_ENTITY_PHASE;
    if (strcmp(s, "step") == 0)
        return PLANCTL_ENTITY_STEP;
    return -1;
}

static int terminal(const char *to)
{
    return strcmp(to, "COMPLETE") == 0 || strcmp(to, "FATAL_ERROR") == 0 ||
           strcmp(to, "CANCELLED") == 0;
}

static lev *add_event(lprog *pg)
{
    bench_grow((void **)&pg->ev, pg->nev, &pg->capev, sizeof *pg->ev, 1024);
    memset(&pg->ev[pg->nev], 0, sizeof pg->ev[0]);
    return &pg->ev[pg->nev++];
}

/* Event seq of the engine's database, read into *v. */
static void load_event(lev *v, sqlite3_stmt *ev, sqlite3_stmt *plan,
                       int64_t seq)
{
    sqlite3_bind_int64(ev, 1, seq);
    if (sqlite3_step(ev) != SQLITE_ROW)
        bench_die("ips-limit: event %lld of the engine's log is not in its "
                  "database",
                  (long long)seq);
    v->at = sqlite3_column_int64(ev, 0);
    v->instance_id = sqlite3_column_int64(ev, 1);
    v->run_id = sqlite3_column_int64(ev, 2);
    v->phase_id = sqlite3_column_int64(ev, 3);
    v->step_id = sqlite3_column_int64(ev, 4);
    v->entity = dup_col(ev, 5);
    v->from = dup_col(ev, 6);
    v->to = dup_col(ev, 7);
    v->attempt = sqlite3_column_int(ev, 8);
    v->message = dup_col(ev, 9);
    v->actor = dup_col(ev, 10);
    v->data = dup_col(ev, 11);
    sqlite3_reset(ev);
    parse_data(v);
    v->change = -1;
    if (entity_of(v->entity) < 0 || !v->to)
        return; /* a note or an admin event: only copied */
    if (!v->from)
        bench_die("ips-limit: event %lld creates a %s; the limit program "
                  "writes status changes only",
                  (long long)seq, v->entity);
    v->change = entity_of(v->entity);
    v->terminal = terminal(v->to);
    v->attempt_inc =
        v->change == PLANCTL_ENTITY_STEP && strcmp(v->to, "IN_PROGRESS") == 0;
    if (v->change == PLANCTL_ENTITY_RUN && strcmp(v->to, "COMPLETE") == 0) {
        const char *p;

        sqlite3_bind_int64(plan, 1, v->run_id);
        if (sqlite3_step(plan) != SQLITE_ROW)
            bench_die("ips-limit: run %lld is gone", (long long)v->run_id);
        p = (const char *)sqlite3_column_text(plan, 0);
        if (strcmp(p, "cleanup") == 0)
            bench_die("ips-limit: run %lld is a cleanup; the limit program "
                      "does not remove instances",
                      (long long)v->run_id);
        v->mark_applied = strcmp(p, "deploy") == 0 ||
                          strcmp(p, "update") == 0 || strcmp(p, "upgrade") == 0;
        sqlite3_reset(plan);
    }
}

/* The event counters the limit's database starts with, by run id. */
typedef struct counts {
    lcount *v;
    size_t n;
} counts;

static int cmp_count(const void *a, const void *b)
{
    const lcount *x = a, *y = b;

    return (x->run_id > y->run_id) - (x->run_id < y->run_id);
}

static lcount *count_of(counts *c, int64_t run_id)
{
    lcount key = {run_id, 0};
    lcount *k = bsearch(&key, c->v, c->n, sizeof *c->v, cmp_count);

    if (!k)
        bench_die("ips-limit: run %lld is not in the limit's database",
                  (long long)run_id);
    return k;
}

static void load_counts(counts *c, sqlite3 *db)
{
    sqlite3_stmt *st;
    size_t cap = 0;

    memset(c, 0, sizeof *c);
    if (sqlite3_prepare_v2(db, "SELECT id, event_count FROM runs ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK)
        bench_die("%s", sqlite3_errmsg(db));
    while (sqlite3_step(st) == SQLITE_ROW) {
        bench_grow((void **)&c->v, c->n, &cap, sizeof *c->v, 1024);
        c->v[c->n].run_id = sqlite3_column_int64(st, 0);
        c->v[c->n].count = sqlite3_column_int64(st, 1);
        c->n++;
    }
    sqlite3_finalize(st);
}

static void add_count(lprog *pg, int64_t run_id, int64_t count)
{
    bench_grow((void **)&pg->cnt, pg->ncnt, &pg->capcnt, sizeof *pg->cnt, 1024);
    pg->cnt[pg->ncnt].run_id = run_id;
    pg->cnt[pg->ncnt].count = count;
    pg->ncnt++;
}

/* What to write, commit by commit, from the engine's record and database
 * (edb) and the limit database's counters (ldb). */
static void load_program(lprog *pg, const bench_wlog *w, sqlite3 *edb,
                         sqlite3 *ldb)
{
    sqlite3_stmt *ev, *plan;
    counts cs;
    size_t k, i, n;

    memset(pg, 0, sizeof *pg);
    load_counts(&cs, ldb);
    if (sqlite3_prepare_v2(edb,
                           "SELECT at, instance_id, run_id, phase_id, "
                           "step_id, entity, from_status, to_status, attempt, "
                           "message, actor, data FROM events WHERE seq = ?1",
                           -1, &ev, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(edb, "SELECT plan FROM runs WHERE id = ?1", -1,
                           &plan, NULL) != SQLITE_OK)
        bench_die("%s", sqlite3_errmsg(edb));
    pg->c = calloc(w->ncommits ? w->ncommits : 1, sizeof *pg->c);
    if (!pg->c)
        bench_die("out of memory");
    for (k = 0; k < w->ncommits; k++) {
        const bench_wop *ops = bench_wlog_commit(w, k, &n);
        lcommit *c;
        size_t nlease = 0;

        if (!n) {
            pg->empty++; /* an empty pass: the engine's cost alone */
            continue;
        }
        c = &pg->c[pg->nc++];
        c->ev0 = pg->nev;
        c->cnt0 = pg->ncnt;
        c->w0 = pg->nw;
        for (i = 0; i < n; i++) {
            if (ops[i].table == BENCH_W_OTHER)
                bench_die("ips-limit: engine commit %zu writes a table the "
                          "limit program does not know",
                          k);
            if (ops[i].table == BENCH_W_LEASE) {
                if (nlease == sizeof c->lease - 1)
                    bench_die("ips-limit: engine commit %zu writes the lease "
                              "over and over",
                              k);
                c->lease[nlease++] = ops[i].op;
            }
            if (ops[i].table == BENCH_W_WAITS) {
                bench_grow((void **)&pg->w, pg->nw, &pg->capw, sizeof *pg->w,
                           256);
                pg->w[pg->nw].run_id = ops[i].rowid; /* the row's key */
                pg->w[pg->nw++].op = ops[i].op;
            }
            if (ops[i].table == BENCH_W_EVENTS && ops[i].op == 'I')
                load_event(add_event(pg), ev, plan, ops[i].rowid);
        }
        c->nev = pg->nev - c->ev0;
        c->nw = pg->nw - c->w0;
        c->at = c->nev ? pg->ev[c->ev0].at : 0;
        if (!c->nev && !nlease && !c->nw)
            bench_die("ips-limit: engine commit %zu writes rows but no event; "
                      "the limit program does not know how",
                      k);
        /* Each run's counter once, in the order its first event comes. */
        for (i = c->ev0; i < pg->nev; i++) {
            size_t j;
            int seen = 0;

            if (!pg->ev[i].run_id)
                continue;
            for (j = c->cnt0; j < pg->ncnt && !seen; j++)
                seen = pg->cnt[j].run_id == pg->ev[i].run_id;
            if (!seen)
                add_count(pg, pg->ev[i].run_id, 0);
        }
        for (i = c->cnt0; i < pg->ncnt; i++) {
            lcount *have = count_of(&cs, pg->cnt[i].run_id);
            size_t j;

            for (j = c->ev0; j < pg->nev; j++)
                have->count += pg->ev[j].run_id == pg->cnt[i].run_id;
            pg->cnt[i].count = have->count;
        }
        c->ncnt = pg->ncnt - c->cnt0;
    }
    sqlite3_finalize(ev);
    sqlite3_finalize(plan);
    free(cs.v);
}

/* ---- the counted region ---- */

/* The statements, by the store's names, in the order of the enum below:
 * their text is the SQLite backend's own (src/store/sql/sqlite.sql, the
 * copy embedded in libplanctl.a), found as the store finds it
 * (pctl_query_text()), so that this program cannot drift from what the
 * engine runs.  Two are not named statements: BEGIN IMMEDIATE and COMMIT
 * are run by the backend's connection (store/sqlite/conn.c), and the
 * same words are written here. */
enum {
    S_RUN,
    S_PHASE,
    S_STEP,
    S_ATTEMPT_OPEN,
    S_ATTEMPT_CLOSE,
    S_APPLIED,
    S_EVENT,
    S_EVENTS16,
    S_COUNT,
    S_LEASE_PUT,
    S_LEASE_BEAT,
    S_LEASE_DROP,
    S_WAIT_PUT,
    S_WAIT_DELETE,
    S_BEGIN,
    S_COMMIT,
    S__COUNT
};

static const pctl_query store_query[S_BEGIN] = {
    [S_RUN] = PCTL_Q_run_set_status,
    [S_PHASE] = PCTL_Q_phase_set_status,
    [S_STEP] = PCTL_Q_step_set_status,
    [S_ATTEMPT_OPEN] = PCTL_Q_attempt_open,
    [S_ATTEMPT_CLOSE] = PCTL_Q_attempt_close,
    [S_APPLIED] = PCTL_Q_instance_mark_applied,
    [S_EVENT] = PCTL_Q_event_insert_values,
    [S_EVENTS16] = PCTL_Q_event_insert_batch, /* BATCH rows */
    [S_COUNT] = PCTL_Q_run_set_event_count,
    [S_LEASE_PUT] = PCTL_Q_lease_put,
    [S_LEASE_BEAT] = PCTL_Q_lease_beat,
    [S_LEASE_DROP] = PCTL_Q_lease_drop,
    [S_WAIT_PUT] = PCTL_Q_wait_put,
    [S_WAIT_DELETE] = PCTL_Q_wait_delete,
};

/* The token of the lease this program takes (lease_put: its owner and
 * host "limit", its pid 0), which lease_beat and lease_drop name. */
#define LEASE_TOKEN 1

#define BATCH 16
#define COLS 12

static void bind_id(sqlite3_stmt *st, int i, int64_t v)
{
    if (v)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

/* Runs st once (it writes), or dies; returns the rows it changed. */
static int run(sqlite3 *db, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        bench_die("ips-limit: %s\n  in: %s", sqlite3_errmsg(db),
                  sqlite3_sql(st));
    return sqlite3_changes(db);
}

static void bind_event(sqlite3_stmt *st, int base, const lev *v)
{
    sqlite3_bind_int64(st, base + 1, v->at);
    bind_id(st, base + 2, v->instance_id);
    bind_id(st, base + 3, v->run_id);
    bind_id(st, base + 4, v->phase_id);
    bind_id(st, base + 5, v->step_id);
    bind_text(st, base + 6, v->entity);
    bind_text(st, base + 7, v->from);
    bind_text(st, base + 8, v->to);
    bind_id(st, base + 9, v->attempt);
    bind_text(st, base + 10, v->message);
    bind_text(st, base + 11, v->actor);
    bind_text(st, base + 12, v->data);
}

/* What the gate writes for one status change (gate.c, pctl_gate()). */
static void status_change(sqlite3 *db, sqlite3_stmt **s, const lev *v)
{
    sqlite3_stmt *st = s[v->change == PLANCTL_ENTITY_RUN     ? S_RUN
                         : v->change == PLANCTL_ENTITY_PHASE ? S_PHASE
                                                             : S_STEP];
    int64_t id = v->change == PLANCTL_ENTITY_RUN     ? v->run_id
                 : v->change == PLANCTL_ENTITY_PHASE ? v->phase_id
                                                     : v->step_id;
    int starting = strcmp(v->to, "IN_PROGRESS") == 0;

    sqlite3_bind_int64(st, 1, id);
    bind_text(st, 2, v->from);
    bind_text(st, 3, v->to);
    sqlite3_bind_int64(st, 4, v->at);
    bind_text(st, 5, v->message);
    sqlite3_bind_int64(st, 6, v->terminal);
    if (v->change == PLANCTL_ENTITY_STEP) {
        bind_id(st, 7, strcmp(v->to, "ERROR") == 0 ? v->next_attempt_at : 0);
        sqlite3_bind_int64(st, 9, v->grant);
        sqlite3_bind_int64(st, 10, v->attempt_inc);
    }
    if (v->change != PLANCTL_ENTITY_PHASE)
        bind_id(st, 8, starting ? v->deadline_at : 0);
    if (run(db, st) != 1)
        bench_die("ips-limit: %s %lld is not %s", v->entity, (long long)id,
                  v->from);
    if (v->change == PLANCTL_ENTITY_STEP &&
        strcmp(v->from, "IN_PROGRESS") == 0) {
        st = s[S_ATTEMPT_CLOSE];
        sqlite3_bind_int64(st, 1, id);
        bind_text(st, 2, v->to);
        sqlite3_bind_int64(st, 3, v->at);
        if (v->exit_code >= 0)
            sqlite3_bind_int64(st, 4, v->exit_code);
        else
            sqlite3_bind_null(st, 4);
        bind_text(st, 5, v->message);
        bind_text(st, 6, v->output);
        run(db, st);
    } else if (v->change == PLANCTL_ENTITY_STEP && starting) {
        st = s[S_ATTEMPT_OPEN];
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, v->attempt);
        sqlite3_bind_int64(st, 3, v->at);
        run(db, st);
    }
    if (v->mark_applied) {
        st = s[S_APPLIED];
        sqlite3_bind_int64(st, 1, v->run_id);
        sqlite3_bind_int64(st, 2, v->at);
        if (run(db, st) != 1)
            bench_die("ips-limit: run %lld marked no instance applied",
                      (long long)v->run_id);
    }
}

/* A statement's text and its length (the store's text runs on to the
 * next statement's comments, which preparing it stops before). */
typedef struct ltext {
    const char *sql;
    size_t len;
} ltext;

BENCH_NOINLINE void bench_counted_limit(sqlite3 *db, const lprog *pg,
                                        bench_wlog *w, const ltext *text);

/* The counted region: the statements prepared, then every transaction. */
BENCH_NOINLINE void bench_counted_limit(sqlite3 *db, const lprog *pg,
                                        bench_wlog *w, const ltext *text)
{
    sqlite3_stmt *s[S__COUNT];
    size_t k, i, b;

    for (i = 0; i < S__COUNT; i++)
        if (sqlite3_prepare_v3(db, text[i].sql, (int)text[i].len,
                               SQLITE_PREPARE_PERSISTENT, &s[i],
                               NULL) != SQLITE_OK)
            bench_die("ips-limit: %s", sqlite3_errmsg(db));
    if (sqlite3_bind_parameter_count(s[S_EVENTS16]) != BATCH * COLS)
        bench_die("ips-limit: event_insert_batch is not %d rows", BATCH);
    bench_wlog_hook(w, db);
    for (k = 0; k < pg->nc; k++) {
        const lcommit *c = &pg->c[k];
        const lev *ev = pg->ev + c->ev0;

        run(db, s[S_BEGIN]);
        for (i = 0; c->lease[i]; i++) {
            sqlite3_stmt *st = s[c->lease[i] == 'I'   ? S_LEASE_PUT
                                 : c->lease[i] == 'U' ? S_LEASE_BEAT
                                                      : S_LEASE_DROP];

            if (c->lease[i] == 'I') {
                sqlite3_bind_text(st, 1, "limit", -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 2, "limit", -1, SQLITE_STATIC);
                sqlite3_bind_int64(st, 3, 0);
                sqlite3_bind_int64(st, 4, LEASE_TOKEN);
                sqlite3_bind_int64(st, 5, c->at);
            } else {
                sqlite3_bind_int64(st, 1, LEASE_TOKEN);
                if (c->lease[i] == 'U')
                    sqlite3_bind_int64(st, 2, c->at);
            }
            run(db, st);
        }
        for (i = 0; i < c->nw; i++) {
            const lwait *wt = &pg->w[c->w0 + i];
            sqlite3_stmt *st = s[wt->op == 'D' ? S_WAIT_DELETE : S_WAIT_PUT];

            sqlite3_bind_int64(st, 1, wt->run_id);
            if (wt->op != 'D') { /* a slot's wait: cause, kind, limit, since */
                sqlite3_bind_text(st, 2, "slot", -1, SQLITE_STATIC);
                sqlite3_bind_null(st, 3);
                sqlite3_bind_int64(st, 4, 1);
                sqlite3_bind_int64(st, 5, c->at);
            }
            run(db, st);
        }
        for (i = 0; i < c->nev; i++)
            if (ev[i].change >= 0)
                status_change(db, s, &ev[i]);
        for (i = 0; i + BATCH <= c->nev; i += BATCH) {
            for (b = 0; b < BATCH; b++)
                bind_event(s[S_EVENTS16], (int)b * COLS, &ev[i + b]);
            run(db, s[S_EVENTS16]);
        }
        for (; i < c->nev; i++) {
            bind_event(s[S_EVENT], 0, &ev[i]);
            run(db, s[S_EVENT]);
        }
        for (i = 0; i < c->ncnt; i++) {
            sqlite3_bind_int64(s[S_COUNT], 1, pg->cnt[c->cnt0 + i].run_id);
            sqlite3_bind_int64(s[S_COUNT], 2, pg->cnt[c->cnt0 + i].count);
            run(db, s[S_COUNT]);
        }
        run(db, s[S_COMMIT]);
    }
    bench_wlog_unhook(db);
    for (i = 0; i < S__COUNT; i++)
        sqlite3_finalize(s[i]);
}

static void free_program(lprog *pg)
{
    size_t i;

    for (i = 0; i < pg->nev; i++) {
        lev *v = &pg->ev[i];

        free(v->entity);
        free(v->from);
        free(v->to);
        free(v->message);
        free(v->actor);
        free(v->data);
        free(v->output);
    }
    free(pg->ev);
    free(pg->cnt);
    free(pg->c);
    free(pg->w);
}

/* planctl-bench ips-limit --db PATH --engine-db E --engine-log F --log G
 * PATH: a copy of the database the engine started from; E: the engine's
 * database after its run; F: what ips-engine recorded; G: where this
 * program's own record goes (for ips-check). */
int bench_ips_limit_main(int argc, char **argv)
{
    const char *path = bench_opt(argc, argv, "--db", NULL);
    const char *epath = bench_opt(argc, argv, "--engine-db", NULL);
    const char *elog = bench_opt(argc, argv, "--engine-log", NULL);
    const char *log = bench_opt(argc, argv, "--log", NULL);
    ltext text[S__COUNT];
    size_t i;
    bench_wlog we, w;
    sqlite3 *db, *edb;
    lprog pg;

    if (!path || !epath || !elog || !log)
        bench_die("ips-limit: --db, --engine-db, --engine-log and --log are "
                  "required");
    for (i = 0; i < S_BEGIN; i++)
        if (!(text[i].sql = pctl_query_text(pctl_queries_sqlite, store_query[i],
                                            &text[i].len)))
            bench_die("ips-limit: statement %s is not in sqlite.sql",
                      pctl_query_name(store_query[i]));
    text[S_BEGIN].sql = "BEGIN IMMEDIATE";
    text[S_COMMIT].sql = "COMMIT";
    text[S_BEGIN].len = strlen(text[S_BEGIN].sql);
    text[S_COMMIT].len = strlen(text[S_COMMIT].sql);
    /* Opened as the library opens a database it writes
     * (store/sqlite/conn.c). */
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK)
        bench_die("ips-limit: cannot open %s", path);
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, 30000);
    fx_exec(db, "PRAGMA foreign_keys = ON");
    fx_exec(db, "PRAGMA journal_mode = WAL");
    fx_exec(db, "PRAGMA synchronous = NORMAL");
    if (sqlite3_open_v2(epath, &edb, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        bench_die("ips-limit: cannot open %s", epath);
    bench_wlog_load(&we, elog);
    load_program(&pg, &we, edb, db);
    sqlite3_close(edb);
    memset(&w, 0, sizeof w);
    bench_counted_limit(db, &pg, &w, text);
    if (sqlite3_close(db) != SQLITE_OK)
        bench_die("ips-limit: cannot close %s", path);
    bench_wlog_save(&w, log);
    printf("ips-limit: %zu transactions, %zu events (%lld empty engine "
           "commits not replayed)\n",
           pg.nc, pg.nev, (long long)pg.empty);
    bench_wlog_free(&w);
    bench_wlog_free(&we);
    free_program(&pg);
    return 0;
}
