/*
 * journal.c - the event log's one writer: status events queued and
 * written in order with their runs' event counters and the warning note,
 * and admin events.
 *
 * An event row costs more than the status change it records: the events
 * table has two indexes, two foreign keys, AUTOINCREMENT and a CHECK on
 * entity whose list SQLite turns into an ephemeral table at every
 * statement, and each event also bumps its run's counter (runs.event_count,
 * with the warning note at the threshold).  One INSERT per event and one
 * UPDATE per event were half of what an engine pass cost.  So while the
 * engine's pass has its transaction open (pctl_events_defer), the gate
 * queues its events here, and the pass writes them before it commits
 * (pctl_events_flush), in order with multi-row INSERTs, then each run's
 * counter once.  An admission defers its events the same way.  Outside
 * both an event is queued and flushed at once: one path, one counter, one
 * note.
 * Nothing changes for readers: the rows, their order, their times and the
 * counters are what the one-by-one writes gave, in the same transaction;
 * the warning note still follows the event that reached the threshold.
 * An admin event is queued too while events are deferred (one statement
 * with the rest on PostgreSQL: a create's own event goes with its run's);
 * otherwise it flushes the queue first and is written at once.  The
 * queued events of an instance that a completed cleanup removes are
 * dropped, as its rows are.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/idmap.h"
#include "store/store.h"

#define BATCH 16 /* rows of event_insert_batch */
#define COLS 12

typedef struct qev {
    int64_t at, instance_id, run_id, phase_id, step_id; /* ids: 0 = NULL */
    const char *entity, *from, *to; /* static strings, or NULL */
    int attempt;                    /* 0: NULL */
    char *message, *data;           /* owned, or NULL */
    const char *actor;              /* one of actors[], or actor_own */
    char *actor_own;                /* owned, or NULL */
} qev;

/* The actors of nearly every event: the engine's, the store's own
 * changes, and a command's default.  Their events point at these instead
 * of a copy each. */
static const char *const actors[] = {"engine", "planctl", "user"};

/* A run's counter while the queue is written out. */
typedef struct counter {
    int64_t run_id, count;
} counter;

/* A queue keeps its room between transactions (an engine's passes, one
 * after the other) up to this many events; one a burst made larger goes
 * with its transaction. */
#define KEEP 1024

struct pctl_evq {
    int on;
    qev *v;
    size_t n, cap;
    /* The flush's room, for `room` events: each run's counter in the
     * order the runs come, the rows in order (each event may bring a
     * note), and the notes. */
    counter *counters;
    qev **rows, *notes;
    size_t room;
};

static void clear(struct pctl_evq *q)
{
    size_t i;

    for (i = 0; i < q->n; i++) {
        pctl_free(q->v[i].message);
        pctl_free(q->v[i].actor_own);
        pctl_free(q->v[i].data);
    }
    q->n = 0;
}

/* The queue, made on first use. */
static struct pctl_evq *queue_of(planctl *p)
{
    if (!p->evq)
        p->evq = pctl_calloc(1, sizeof *p->evq);
    return p->evq;
}

int pctl_events_defer(planctl *p, int on)
{
    if (!on) {
        /* Whatever was not flushed went with a rolled-back transaction;
         * the room stays for the next one, unless it grew large. */
        if (p->evq && p->evq->cap <= KEEP) {
            clear(p->evq);
            p->evq->on = 0;
        } else {
            pctl_events_free(p);
        }
        return 0;
    }
    if (!queue_of(p))
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    p->evq->on = 1;
    return 0;
}

int pctl_events_deferring(const planctl *p)
{
    return p->evq && p->evq->on;
}

void pctl_events_forget_instance(planctl *p, int64_t instance_id)
{
    struct pctl_evq *q = p->evq;
    size_t i, k = 0;

    if (!q)
        return;
    for (i = 0; i < q->n; i++) {
        if (q->v[i].instance_id != instance_id) {
            q->v[k++] = q->v[i];
            continue;
        }
        pctl_free(q->v[i].message);
        pctl_free(q->v[i].actor_own);
        pctl_free(q->v[i].data);
    }
    q->n = k;
}

void pctl_events_free(planctl *p)
{
    if (!p->evq)
        return;
    clear(p->evq);
    pctl_free(p->evq->v);
    pctl_free(p->evq->counters);
    pctl_free(p->evq->rows);
    pctl_free(p->evq->notes);
    pctl_free(p->evq);
    p->evq = NULL;
}

/* Queues e (entity name: an admin event's, with no status, or NULL: a
 * status event's). */
static int queue_row(planctl *p, const pctl_event *e, const char *name,
                     char *data)
{
    struct pctl_evq *q = queue_of(p);
    const char *actor = e->actor ? e->actor : pctl_user(p);
    qev *v;
    size_t i;

    if (!q) {
        pctl_free(data);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (q->n == q->cap) {
        size_t ncap = q->cap ? q->cap * 2 : 64;
        qev *nv = pctl_realloc(q->v, ncap * sizeof *nv);

        if (!nv) {
            pctl_free(data);
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        }
        q->v = nv;
        q->cap = ncap;
    }
    v = &q->v[q->n];
    memset(v, 0, sizeof *v);
    v->at = pctl_now(p);
    v->instance_id = e->instance_id;
    v->run_id = e->run_id;
    v->phase_id = e->entity == PLANCTL_ENTITY_RUN ? 0 : e->phase_id;
    v->step_id = e->entity == PLANCTL_ENTITY_STEP ? e->step_id : 0;
    if (name) {
        v->entity = name; /* from, to: NULL */
    } else {
        v->entity = pctl_entity_name(e->entity);
        v->from = e->from == PCTL_NEW ? NULL : planctl_status_name(e->from);
        v->to = planctl_status_name(e->to);
    }
    v->attempt = e->attempt;
    v->data = data;
    for (i = 0; i < sizeof actors / sizeof actors[0] && !v->actor; i++)
        if (!strcmp(actor, actors[i]))
            v->actor = actors[i];
    if (!v->actor)
        v->actor = v->actor_own = pctl_strdup(actor);
    if ((e->message && !(v->message = pctl_strdup(e->message))) || !v->actor) {
        pctl_free(v->message);
        pctl_free(v->actor_own);
        pctl_free(v->data);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    q->n++;
    return 0;
}

int pctl_event_status(planctl *p, const pctl_event *e, char *data)
{
    int deferred = pctl_events_deferring(p);
    int rc = queue_row(p, e, NULL, data);

    if (deferred)
        return rc;
    /* Not deferred: written at once, through the same flush; the queue
     * made for it goes, written or not. */
    if (rc == 0)
        rc = pctl_events_flush(p);
    pctl_events_free(p);
    return rc;
}

/* The static name of an admin event's entity (queued events point at
 * static strings), or NULL. */
static const char *admin_entity(const char *entity)
{
    static const char *const names[] = {"instance", "engine"};
    size_t i;

    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(entity, names[i]))
            return names[i];
    return NULL;
}

int pctl_event_admin(planctl *p, int64_t instance_id, const char *entity,
                     const char *message, const char *actor,
                     const char *data_json)
{
    const char *name = entity ? admin_entity(entity) : NULL;
    pctl_stmt *st;
    int rc;

    if (name && pctl_events_deferring(p)) {
        pctl_event e = {0};
        char *data = NULL;

        if (data_json && !(data = pctl_strdup(data_json)))
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        e.instance_id = instance_id;
        e.message = message;
        e.actor = actor;
        return queue_row(p, &e, name, data); /* takes data */
    }
    /* Events queued before this one go first. */
    if ((rc = pctl_events_flush(p)) < 0)
        return rc;
    if (!(st = pctl_q(p, PCTL_Q_event_insert_admin)))
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, pctl_now(p));
    pctl_bind_id(st, 2, instance_id);
    pctl_bind_text(st, 3, entity);
    pctl_bind_text(st, 4, message);
    pctl_bind_text(st, 5, actor ? actor : pctl_user(p));
    pctl_bind_text(st, 6, data_json);
    return pctl_q_exec(st);
}

/* The warning note of a run reaching the threshold of events (a new
 * string, or NULL when out of memory). */
static char *events_note(const planctl *p, int64_t run_id, int64_t count)
{
    return pctl_asprintf(
        "run %lld has %lld events, the warning threshold; at %lld the "
        "engine ends it (a step failing and retrying, or a run paused "
        "and resumed, over and over?)",
        (long long)run_id, (long long)count, (long long)p->run_events_max);
}

/* ---- the flush ---- */

/* Binds every parameter of the row: the statements are taken with
 * pctl_q_rebind, their last bindings not cleared. */
static void bind_row(pctl_stmt *st, int base, const qev *v)
{
    pctl_bind_i64(st, base + 1, v->at);
    pctl_bind_id(st, base + 2, v->instance_id);
    pctl_bind_id(st, base + 3, v->run_id);
    pctl_bind_id(st, base + 4, v->phase_id);
    pctl_bind_id(st, base + 5, v->step_id);
    pctl_bind_text(st, base + 6, v->entity);
    pctl_bind_text(st, base + 7, v->from);
    pctl_bind_text(st, base + 8, v->to);
    pctl_bind_id(st, base + 9, v->attempt); /* 0: NULL */
    pctl_bind_text(st, base + 10, v->message);
    pctl_bind_text(st, base + 11, v->actor);
    pctl_bind_text(st, base + 12, v->data);
}

/* Inserts rows[0..n) in order: BATCH at a time, the rest one by one
 * (all one by one where the backend gathers them). */
static int insert_rows(planctl *p, qev *const *rows, size_t n)
{
    pctl_stmt *st;
    size_t i = 0, k, whole = n - n % BATCH;
    int rc;

    /* Where the rows are gathered into one statement, one by one. */
    if (pctl_q_later_on(p) && p->conn->m->gathers)
        whole = 0;
    for (; i < whole; i += BATCH) {
        if (!(st = pctl_q_rebind(p, PCTL_Q_event_insert_batch)))
            return pctl_q_err(p);
        for (k = 0; k < BATCH; k++)
            bind_row(st, (int)k * COLS, rows[i + k]);
        if ((rc = pctl_q_exec_later(st, -1)) < 0)
            return rc;
    }
    for (; i < n; i++) {
        if (!(st = pctl_q_rebind(p, PCTL_Q_event_insert_values)))
            return pctl_q_err(p);
        bind_row(st, 0, rows[i]);
        if ((rc = pctl_q_exec_later(st, -1)) < 0)
            return rc;
    }
    return 0;
}

/* Whether run_id is the run the open transaction inserted (admit.c). */
static int fresh(const planctl *p, int64_t run_id)
{
    return run_id == p->fresh_run && p->tx_depth > 0 &&
           p->fresh_run_tx == p->tx_serial;
}

/* A run's event count so far: from the observer when it knows it (an
 * engine's cache), or the run's own when the open transaction inserted
 * it, else from the row. */
static int read_count(planctl *p, int64_t run_id, int64_t *out)
{
    pctl_stmt *st;
    pctl_known_row k;
    int rc, cached = pctl_observed_known(p, PLANCTL_ENTITY_RUN, run_id, &k);

    if (fresh(p, run_id) && !p->check_cache) {
        *out = p->fresh_run_events;
        return 0;
    }
    if (cached && !p->check_cache) {
        *out = k.event_count;
        return 0;
    }
    if (!(st = pctl_q(p, PCTL_Q_run_event_count)))
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    rc = pctl_step(st);
    *out = rc == PCTL_ROW ? pctl_col_i64(st, 0) : 0;
    pctl_reset(st);
    if (rc == PCTL_ROW && cached && k.event_count != *out)
        return pctl_err(p, PLANCTL_EIO,
                        "engine cache disagrees with run %lld: %lld events "
                        "cached, %lld counted",
                        (long long)run_id, (long long)k.event_count,
                        (long long)*out);
    if (rc == PCTL_ROW)
        return 0;
    return rc == PCTL_DONE ? pctl_err(p, PLANCTL_ERROR,
                                      "run %lld of a queued event is gone",
                                      (long long)run_id)
                           : pctl_q_fail(st, rc);
}

/* Makes the flush's room for q->n events.  0 or ENOMEM. */
static int make_room(struct pctl_evq *q)
{
    counter *c;
    qev **r, *n;

    if (q->room >= q->n)
        return 0;
    if ((c = pctl_realloc(q->counters, q->n * sizeof *c)))
        q->counters = c;
    if ((r = pctl_realloc(q->rows, q->n * 2 * sizeof *r)))
        q->rows = r;
    if ((n = pctl_realloc(q->notes, q->n * sizeof *n)))
        q->notes = n;
    if (!c || !r || !n)
        return PLANCTL_ENOMEM;
    q->room = q->n;
    return 0;
}

int pctl_events_flush_later(planctl *p)
{
    int later = p->tx_later, rc;

    p->tx_later = 1;
    rc = pctl_events_flush(p);
    p->tx_later = later;
    return rc;
}

int pctl_events_flush(planctl *p)
{
    struct pctl_evq *q = p->evq;
    pctl_idmap m = PCTL_IDMAP_INIT; /* run id to its counter */
    counter *counters;
    qev **rows, *notes;
    size_t i, ncounters = 0, nrows = 0, nnotes = 0;
    int rc = 0;

    if (!q || q->n == 0)
        return 0;
    if (make_room(q) < 0) {
        clear(q);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    counters = q->counters;
    rows = q->rows;
    notes = q->notes;
    /* The rows in order, counting each run's events as the one-by-one
     * writes did: the event that makes the count reach the warning
     * threshold is followed by the note, which counts too. */
    for (i = 0; rc == 0 && i < q->n; i++) {
        qev *v = &q->v[i];
        counter *c;

        if (!v->run_id) { /* an admin event: no run's to count */
            rows[nrows++] = v;
            continue;
        }
        if (!(c = pctl_idmap_get(&m, v->run_id))) {
            c = &counters[ncounters++];
            c->run_id = v->run_id;
            rc = read_count(p, v->run_id, &c->count);
            if (rc == 0 && pctl_idmap_put(&m, v->run_id, c) < 0)
                rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            if (rc < 0)
                break;
        }
        rows[nrows++] = v;
        if (++c->count == p->run_events_warn && p->run_events_warn > 0) {
            qev *note = &notes[nnotes++];

            memset(note, 0, sizeof *note);
            note->at = v->at;
            note->instance_id = v->instance_id;
            note->run_id = v->run_id;
            note->entity = "instance";
            note->actor = "planctl";
            note->message = events_note(p, v->run_id, c->count);
            if (!note->message) {
                nnotes--;
                rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
                break;
            }
            rows[nrows++] = note;
            c->count++;
        }
    }
    if (rc == 0)
        rc = insert_rows(p, rows, nrows);
    for (i = 0; rc == 0 && i < ncounters; i++) {
        const counter *c = &counters[i];
        pctl_stmt *st;

        if (!(st = pctl_q(p, PCTL_Q_run_set_event_count))) {
            rc = pctl_q_err(p);
            break;
        }
        pctl_bind_i64(st, 1, c->run_id);
        pctl_bind_i64(st, 2, c->count);
        rc = pctl_q_exec_later(st, -1);
        if (rc == 0 && fresh(p, c->run_id))
            p->fresh_run_events = c->count;
        if (rc == 0)
            pctl_observed_events(p, c->run_id, c->count);
    }
    for (i = 0; i < nnotes; i++)
        pctl_free(notes[i].message);
    pctl_idmap_free(&m);
    clear(q);
    return rc;
}
