/*
 * feed.h - the event log read as a change feed: which runs and instances
 * changed after a given event.
 *
 * Every change to a run, phase or step appends an event in the same
 * transaction (the gate, admission, import), so the events after the
 * last one a reader has seen name every run that may differ from what it
 * read.  Events are numbered by a counter that never goes back.  On
 * SQLite, one writer at a time, numbers are commit order and a rollback
 * leaves no hole.  On PostgreSQL writers do not wait for each other: a
 * number may commit after a larger one, and a rollback leaves a hole.
 * So a reader reads only below the horizon (pctl_events_horizon), the
 * number below which every event has committed or never will, and a
 * hole among the events after the reader's last is events removed
 * since (gc, or with their instance) or rolled back: then the feed
 * cannot tell what changed, and says so.
 */
#ifndef PCTL_STORE_FEED_H
#define PCTL_STORE_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "planctl.h"

/* How many of the status changes a feed keeps with their names, for log
 * lines; the others are only counted. */
#define PCTL_FEED_MAX_CHANGES 64

/* A status change another writer made (an event with a to_status), not
 * an engine. The names are NULL where the rows are gone since. */
typedef struct pctl_feed_change {
    planctl_entity entity;
    planctl_status from; /* PLANCTL_STATUS__COUNT: the row was created */
    planctl_status to;
    int64_t run_id;
    int attempt; /* a step's, else 0 */
    char *actor, *message, *instance, *plan, *phase, *step;
} pctl_feed_change;

typedef struct pctl_feed {
    int64_t last;  /* the newest event's number; 0: none */
    int gap;       /* events after `after` are missing: what changed
                      cannot be told (the lists are then empty) */
    int64_t *runs; /* runs with events after `after`, by id */
    size_t nruns;
    int64_t *instances; /* instances with events of their own (a
                           preflight's record, a clock shift) */
    size_t ninstances;
    /* The status changes among those events that a writer other than
     * an engine made (another engine's own log and metrics tell its
     * own), oldest first (none when there is a gap): */
    pctl_feed_change *changes; /* the first PCTL_FEED_MAX_CHANGES */
    size_t nchanges;
    size_t nmore; /* status changes after those, counted only */
    /* every status change, by entity and status it went to */
    size_t counts[PLANCTL_ENTITY__COUNT][PLANCTL_STATUS__COUNT];
} pctl_feed;

/* The horizon: every event numbered below it has committed, or never
 * will, when the caller's next statement takes its snapshot.  So it must
 * be read before the snapshot of the read that uses it: outside a
 * transaction (each statement its own snapshot), or inside a write (one
 * snapshot a statement on PostgreSQL), never inside a read that has
 * already read.  The caller's own transaction does not hold it back.
 * after is the caller's cursor, or -1 (none): with one, the backend may
 * find the horizon without looking at the other sessions.  Errors: EIO,
 * EBUSY, EINTR. */
int pctl_events_horizon(int64_t *out, planctl *p, int64_t after);

/* The last number below the horizon (0: none), where a reader that has
 * read everything up to now stands; as pctl_events_horizon.  An engine of
 * a fleet, which reads no engine's events, gets a horizon that does not
 * wait for engines' transactions (PostgreSQL: a user's event may still be
 * held back by one that is no engine's).  Errors: EIO, EBUSY, EINTR. */
int pctl_feed_last(int64_t *out, planctl *p, int64_t after);

/* Where a reader of the feed stands: the newest event it has followed,
 * and (PostgreSQL) its own write transactions whose events lie after
 * that among another writer's, which a read skips: what it wrote is no
 * news to it.  Zeroed: before any event, nothing of its own. */
typedef struct pctl_feed_own {
    uint32_t xid; /* the transaction's id (events' xmin) */
    int64_t upto; /* the number of its newest event */
} pctl_feed_own;

typedef struct pctl_feed_cursor {
    int64_t last;
    pctl_feed_own *own; /* oldest first: ids and numbers both grow */
    size_t nown, capown;
    /* A mark between pctl_feed_mark and pctl_feed_marked: its read sent
     * ahead, or read (its answer below). */
    int marking;
    int64_t mark_own, mark_last, mark_xid;
    int last_sent; /* the horizon's read sent ahead (pctl_feed_last_ahead) */
} pctl_feed_cursor;

/* Inside a write that will read the feed after c (an engine's pass,
 * before its first read): sends the read of the horizon ahead where the
 * backend can, answered with that first read, and for an engine of a
 * fleet its read of the events up to that horizon too; the next
 * pctl_feed_read of c takes them (and drops them unread if the caller
 * does not read the feed: the statements' next use).  Errors: EIO,
 * ENOMEM. */
int pctl_feed_last_ahead(pctl_feed_cursor *c, planctl *p);

/* Inside a write that appended events of its own, the read of where c
 * goes once it commits: c->last to the last of them when every number
 * after it up to there is its own (no other writer's event, committed
 * or still open, lies between); otherwise the transaction noted as c's
 * own, for the next pctl_feed_read() to read past its events.  Sent
 * ahead where the backend can (PostgreSQL: answered with the commit, in
 * its round trip), read now elsewhere; pctl_feed_marked moves c.
 * Errors: EIO, EBUSY, EINTR, ENOMEM. */
int pctl_feed_mark(pctl_feed_cursor *c, planctl *p);

/* After the transaction of pctl_feed_mark ended (committed or not):
 * moves c as the mark read, when it committed; else forgets the mark.
 * 0 without a mark.  Errors: EIO, EBUSY, EINTR, ENOMEM (c unmoved: the
 * caller reads its own events again, as another writer's). */
int pctl_feed_marked(pctl_feed_cursor *c, planctl *p, int committed);

/* What has events after c->last, up to the last below the horizon, and
 * the status changes among them, read in one pass of one snapshot
 * (inside the caller's write, or a read of its own; not inside a read:
 * see pctl_events_horizon).  Events of c's own transactions count for
 * the gap and name nothing.  *out is the caller's (pctl_feed_clear).
 * Errors: EIO, EBUSY, ENOMEM. */
int pctl_feed_read(pctl_feed *out, planctl *p, pctl_feed_cursor *c);

/* Moves c to last (a read's out->last), forgetting its own transactions
 * that had no event after.  Can't fail. */
void pctl_feed_follow(pctl_feed_cursor *c, int64_t last);

/* Frees c's list and zeroes *c.  Can't fail. */
void pctl_feed_cursor_clear(pctl_feed_cursor *c);

/* Frees the lists and zeroes *f.  Can't fail. */
void pctl_feed_clear(pctl_feed *f);

#endif
