/* feed.c - the event log read as a change feed (see feed.h). */
#include "store/feed.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "store/store.h"

/* pctl_feed_cursor's marking. */
enum { MARK_SENT = 1, MARK_READ = 2 };
/* pctl_feed_cursor's last_sent: what pctl_feed_last_ahead sent. */
enum { LAST_SENT = 1, EVENTS_SENT = 2 };

/* The one value of statement st (bound, or sent ahead), stepped, into
 * *out; dflt when it is NULL. */
static int number_taken(int64_t *out, pctl_stmt *st, int64_t dflt)
{
    int rc = pctl_step(st);

    *out = dflt;
    if (rc == PCTL_ROW && !pctl_col_null(st, 0))
        *out = pctl_col_i64(st, 0);
    pctl_reset(st);
    return rc == PCTL_ROW ? 0 : pctl_q_fail(st, rc);
}

/* The one value of statement q, given the reader's cursor, into *out;
 * dflt when it is NULL. */
static int one_number(int64_t *out, planctl *p, pctl_query q, int64_t after,
                      int64_t dflt)
{
    pctl_stmt *st = pctl_q(p, q);

    *out = dflt;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, after);
    return number_taken(out, st, dflt);
}

/* A read's snapshot may be older than the horizon: events below it
 * that committed since would be missed (feed.h). */
static int horizon_allowed(planctl *p)
{
    return p->rx_began ? pctl_err(p, PLANCTL_ERROR,
                                  "the event log's horizon inside a read "
                                  "transaction")
                       : 0;
}

int pctl_events_horizon(int64_t *out, planctl *p, int64_t after)
{
    int rc = horizon_allowed(p);

    return rc ? rc : one_number(out, p, PCTL_Q_events_horizon, after, 0);
}

/* The horizon's statement: an engine of a fleet, which is sent no
 * engine's events, does not wait for engines' transactions. */
static pctl_query last_query(const planctl *p)
{
    return p->fleet_id ? PCTL_Q_feed_last_fleet : PCTL_Q_feed_last;
}

int pctl_feed_last(int64_t *out, planctl *p, int64_t after)
{
    int rc = horizon_allowed(p);

    return rc ? rc : one_number(out, p, last_query(p), after, 0);
}

/* The most of a reader's own transactions a read names to the server. */
#define OWN_SENT_MAX 256

/* Forgets c's own transactions whose events are all up to c->last. */
static void own_trim(pctl_feed_cursor *c)
{
    size_t i = 0;

    while (i < c->nown && c->own[i].upto <= c->last)
        i++;
    if (i > 0) {
        memmove(c->own, c->own + i, (c->nown - i) * sizeof *c->own);
        c->nown -= i;
    }
}

/* Whether transaction xid is one of c's own: a binary search, the ids
 * taken after the first, whose own may have wrapped around. */
static int own_has(const pctl_feed_cursor *c, uint32_t xid)
{
    size_t lo = 0, hi = c->nown;

    if (!c->nown)
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if ((uint32_t)(c->own[mid].xid - c->own[0].xid) <
            (uint32_t)(xid - c->own[0].xid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->nown && c->own[lo].xid == xid;
}

/* What the mark read says (c->mark_*), the pass committed: the cursor
 * moves past its own events, or notes its transaction. */
static int mark_apply(pctl_feed_cursor *c, planctl *p)
{
    int64_t own = c->mark_own, last = c->mark_last, xid = c->mark_xid;

    /* Every number after the cursor up to its last is its own: no other
     * writer's event, committed or open, lies between. */
    if (last > c->last && last - c->last == own) {
        c->last = last;
        own_trim(c);
    } else if (own > 0 && xid >= 0) {
        if (pctl_grow((void **)&c->own, c->nown, &c->capown, sizeof *c->own) <
            0)
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        c->own[c->nown].xid = (uint32_t)xid;
        c->own[c->nown++].upto = last;
    }
    return 0;
}

/* The mark's answer from st, stepped (sent ahead, or now), into c. */
static int mark_take(pctl_feed_cursor *c, pctl_stmt *st)
{
    int rc = pctl_step(st);

    if (rc == PCTL_ROW) {
        c->mark_own = pctl_col_i64(st, 0);
        c->mark_last = pctl_col_i64(st, 1);
        c->mark_xid = pctl_col_null(st, 2) ? -1 : pctl_col_i64(st, 2);
    }
    pctl_reset(st);
    return rc == PCTL_ROW ? 0 : pctl_q_fail(st, rc);
}

int pctl_feed_mark(pctl_feed_cursor *c, planctl *p)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_feed_mark);
    int rc;

    c->marking = 0;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, c->last);
    /* On PostgreSQL sent ahead: answered with the commit, one round trip
     * for both.  SQLite reads it now, inside the transaction, where no
     * other writer's event can come after the pass's own. */
    if (pctl_q_sends_ahead(p)) {
        if ((rc = pctl_q_send(st)) < 0)
            return rc;
        c->marking = MARK_SENT;
        return 0;
    }
    if ((rc = mark_take(c, st)) < 0)
        return rc;
    c->marking = MARK_READ;
    return 0;
}

int pctl_feed_marked(pctl_feed_cursor *c, planctl *p, int committed)
{
    int marking = c->marking, rc;
    pctl_stmt *st;

    c->marking = 0;
    if (marking == MARK_SENT && (st = pctl_q_sent(p, PCTL_Q_feed_mark))) {
        if (!committed) {
            pctl_reset(st);
            return 0;
        }
        if ((rc = mark_take(c, st)) < 0)
            return rc;
    }
    return marking && committed ? mark_apply(c, p) : 0;
}

void pctl_feed_follow(pctl_feed_cursor *c, int64_t last)
{
    c->last = last;
    own_trim(c);
}

void pctl_feed_cursor_clear(pctl_feed_cursor *c)
{
    pctl_free(c->own);
    memset(c, 0, sizeof *c);
}

/* The entity an event's text names, among those that have statuses. */
static int entity_of(const char *text, planctl_entity *out)
{
    static const char *const names[] = {"run", "phase", "step"};

    for (int i = 0; i < PLANCTL_ENTITY__COUNT; i++)
        if (text && strcmp(text, names[i]) == 0) {
            *out = (planctl_entity)i;
            return 0;
        }
    return -1;
}

static char *col_dup(pctl_stmt *st, int col)
{
    return pctl_col_null(st, col) ? NULL : pctl_strdup(pctl_col_text(st, col));
}

/* Keeps the change of the current row of st with its names; -1 when out
 * of memory. */
static int keep_change(pctl_feed *f, pctl_stmt *st, const pctl_feed_change *c)
{
    pctl_feed_change *k = &f->changes[f->nchanges++];

    *k = *c;
    k->actor = col_dup(st, 5);
    k->message = col_dup(st, 6);
    k->instance = col_dup(st, 7);
    k->plan = col_dup(st, 8);
    k->phase = col_dup(st, 9);
    k->step = col_dup(st, 10);
    if ((!k->actor && !pctl_col_null(st, 5)) ||
        (!k->message && !pctl_col_null(st, 6)) ||
        (!k->instance && !pctl_col_null(st, 7)) ||
        (!k->plan && !pctl_col_null(st, 8)) ||
        (!k->phase && !pctl_col_null(st, 9)) ||
        (!k->step && !pctl_col_null(st, 10)))
        return -1;
    return 0;
}

static int id_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* Sorts ids and drops the repeats. */
static void sort_unique(int64_t *ids, size_t *n)
{
    size_t i, w = 0;

    if (*n < 2)
        return;
    qsort(ids, *n, sizeof *ids, id_cmp);
    for (i = 0; i < *n; i++)
        if (w == 0 || ids[w - 1] != ids[i])
            ids[w++] = ids[i];
    *n = w;
}

/* Notes the current event of st: whose it is (a run, else an instance
 * with events of its own) and, for a status change, the change.  fleet:
 * st is feed_events_fleet's, whose column 13 says whether the reader
 * holds the event's run. */
static int take_event(pctl_feed *f, pctl_stmt *st, size_t *caprun,
                      size_t *capinst, const pctl_feed_cursor *cur, int fleet)
{
    pctl_feed_change c;

    if (!pctl_col_null(st, 12) && own_has(cur, (uint32_t)pctl_col_i64(st, 12)))
        return 0; /* the reader's own */
    if (!pctl_col_null(st, 3)) {
        if (pctl_push_id(&f->runs, &f->nruns, caprun, pctl_col_i64(st, 3)) < 0)
            return PLANCTL_ENOMEM;
    } else if (!pctl_col_null(st, 11) &&
               pctl_push_id(&f->instances, &f->ninstances, capinst,
                            pctl_col_i64(st, 11)) < 0) {
        return PLANCTL_ENOMEM;
    }
    /* Another engine's change (several engines share the database): its
     * log and metrics have it, not every engine's.  And to an engine of a
     * fleet, a change to a run it does not hold: the engine that holds
     * the run logs and counts it, so that a fleet's logs and metrics
     * have it once. */
    if (!pctl_col_null(st, 5) &&
        strcmp(pctl_col_text(st, 5), PCTL_ACTOR_ENGINE) == 0)
        return 0;
    if (fleet && pctl_col_int(st, 13) == 0)
        return 0;
    memset(&c, 0, sizeof c);
    c.from = PLANCTL_STATUS__COUNT;
    if (pctl_col_null(st, 2) ||
        entity_of(pctl_col_text(st, 0), &c.entity) < 0 ||
        planctl_status_parse(&c.to, pctl_col_text(st, 2)) < 0)
        return 0; /* no status change: an admin record */
    if (!pctl_col_null(st, 1) &&
        planctl_status_parse(&c.from, pctl_col_text(st, 1)) < 0)
        c.from = PLANCTL_STATUS__COUNT;
    c.run_id = pctl_col_null(st, 3) ? 0 : pctl_col_i64(st, 3);
    if (c.entity == PLANCTL_ENTITY_STEP && !pctl_col_null(st, 4))
        c.attempt = pctl_col_int(st, 4);
    f->counts[c.entity][c.to]++;
    if (f->nchanges == PCTL_FEED_MAX_CHANGES) {
        f->nmore++;
        return 0;
    }
    if (!f->changes &&
        !(f->changes = pctl_calloc(PCTL_FEED_MAX_CHANGES, sizeof *f->changes)))
        return PLANCTL_ENOMEM;
    return keep_change(f, st, &c) < 0 ? PLANCTL_ENOMEM : 0;
}

/* The events' statement: an engine of a fleet is sent no engine's
 * events (sql/postgres.sql). */
static pctl_query events_query(const planctl *p)
{
    return p->fleet_id ? PCTL_Q_feed_events_fleet : PCTL_Q_feed_events;
}

/* Sends the read of the events in (after, last], but for the names of
 * cur's own, then whether events after `after` were removed (read after
 * them: a removal that commits between shows).  last -1: up to the
 * horizon this transaction's feed_last left (an engine of a fleet's read
 * sent ahead with it).  Where the backend cannot send, both wait for
 * take_events(). */
static int send_events(planctl *p, int64_t after, int64_t last,
                       const pctl_feed_cursor *cur)
{
    pctl_stmt *st = pctl_q(p, events_query(p)), *rm = NULL;
    pctl_buf ids = PCTL_BUF_INIT;
    int rc;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, after);
    if (last >= 0)
        pctl_bind_i64(st, 2, last);
    /* The reader's own transactions, for the server to leave out (a
     * backend that has their ids: PostgreSQL); take_event() skips what
     * comes all the same, so a long list is not sent. */
    if (cur->nown > 0 && cur->nown <= OWN_SENT_MAX) {
        int64_t xids[OWN_SENT_MAX];
        size_t i;

        for (i = 0; i < cur->nown; i++)
            xids[i] = cur->own[i].xid;
        if (pctl_buf_ids_json(&ids, xids, cur->nown) < 0)
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    pctl_bind_text(st, 3, ids.s);
    if (p->fleet_id)
        pctl_bind_i64(st, 4, p->fleet_id);
    if ((rc = pctl_q_send(st)) == 0 && !(rm = pctl_q(p, PCTL_Q_feed_removed)))
        rc = pctl_q_err(p);
    if (rc == 0) {
        pctl_bind_i64(rm, 1, after);
        rc = pctl_q_send(rm);
    }
    pctl_buf_free(&ids);
    if (rc < 0)
        pctl_reset(st);
    return rc;
}

/* Takes what send_events() sent into f; *count receives how many events
 * there are, *removed whether some were removed (-1: the numbers tell).
 * ok 0: only drops the answers. */
static int take_events(pctl_feed *f, planctl *p, const pctl_feed_cursor *cur,
                       int64_t *count, int64_t *removed, int ok)
{
    pctl_stmt *st = pctl_q_sent(p, events_query(p)),
              *rm = pctl_q_sent(p, PCTL_Q_feed_removed);
    size_t caprun = 0, capinst = 0;
    int rc = 0, step = PCTL_DONE;

    *count = 0;
    while (ok && rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        ++*count;
        if ((rc = take_event(f, st, &caprun, &capinst, cur, p->fleet_id != 0)) <
            0)
            rc = pctl_err(p, rc, "out of memory");
    }
    pctl_reset(st);
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    if (ok && rc == 0)
        rc = number_taken(removed, rm, -1);
    else
        pctl_reset(rm);
    if (rc < 0)
        return rc;
    sort_unique(f->runs, &f->nruns);
    sort_unique(f->instances, &f->ninstances);
    return 0;
}

int pctl_feed_last_ahead(pctl_feed_cursor *c, planctl *p)
{
    pctl_stmt *st;
    int rc;

    c->last_sent = 0;
    if (!pctl_q_sends_ahead(p) || (rc = horizon_allowed(p)) < 0)
        return 0;
    if (!(st = pctl_q(p, last_query(p))))
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, c->last);
    if ((rc = pctl_q_send(st)) < 0)
        return rc;
    c->last_sent = LAST_SENT;
    /* An engine of a fleet sends its read of the events too, up to the
     * horizon feed_last leaves in the transaction (its snapshot comes
     * after it: a statement of its own), and whether some were removed:
     * the fence's round trip answers them all. */
    if (p->fleet_id) {
        if ((rc = send_events(p, c->last, -1, c)) < 0)
            return rc;
        c->last_sent = EVENTS_SENT;
    }
    return 0;
}

int pctl_feed_read(pctl_feed *out, planctl *p, pctl_feed_cursor *c)
{
    int64_t after = c->last;
    /* Whether events numbered after `after` were removed (1 or 0), or -1:
     * the numbers tell, having no hole but those of removed events. */
    int64_t count = 0, removed = -1;
    int ahead = c->last_sent, rc, began = 0;
    pctl_stmt *sent = ahead ? pctl_q_sent(p, last_query(p)) : NULL;

    memset(out, 0, sizeof *out);
    c->last_sent = 0;
    /* The horizon first: the read's snapshot comes after it (sent ahead
     * at the pass's start, pctl_feed_last_ahead, or read now). */
    rc = sent ? number_taken(&out->last, sent, 0)
              : pctl_feed_last(&out->last, p, after);
    if (ahead == EVENTS_SENT) {
        /* Sent with it: taken, or dropped when the horizon failed. */
        int taken = take_events(out, p, c, &count, &removed, rc == 0);

        rc = rc < 0 ? rc : taken;
    } else {
        if (rc == 0)
            rc = pctl_tx_read(p);
        began = rc == 0;
        if (rc == 0 && out->last > after &&
            (rc = send_events(p, after, out->last, c)) == 0)
            rc = take_events(out, p, c, &count, &removed, 1);
    }
    if (began)
        pctl_tx_read_end(p);
    if (rc < 0) {
        pctl_feed_clear(out);
        return rc;
    }
    /* Numbers never go back.  Fewer events than numbers, where only a
     * removal leaves a hole (SQLite), or a removal after `after`, or a
     * newest older than the reader's, means some are gone. */
    if (out->last < after ||
        (removed < 0 ? count != out->last - after : removed == 1)) {
        int64_t last = out->last;

        pctl_feed_clear(out);
        out->last = last;
        out->gap = 1;
    }
    return 0;
}

void pctl_feed_clear(pctl_feed *f)
{
    for (size_t i = 0; i < f->nchanges; i++) {
        pctl_feed_change *c = &f->changes[i];

        pctl_free(c->actor);
        pctl_free(c->message);
        pctl_free(c->instance);
        pctl_free(c->plan);
        pctl_free(c->phase);
        pctl_free(c->step);
    }
    pctl_free(f->changes);
    pctl_free(f->runs);
    pctl_free(f->instances);
    memset(f, 0, sizeof *f);
}
