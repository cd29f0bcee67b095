/*
 * feed.h - the event log read as a change feed: which runs and instances
 * changed after a given event.
 *
 * Every change to a run, phase or step appends an event in the same
 * transaction (the gate, admission, import), so the events after the
 * last one a reader has seen name every run that may differ from what it
 * read.  Events are numbered by a counter that never goes back and, on
 * SQLite, leaves no hole when a transaction rolls back: a hole among the
 * events after the reader's last is events removed since (gc, or with
 * their instance), and then the feed cannot tell what changed.  (A
 * backend whose numbers can have holes, or commit out of order, needs a
 * commit-ordered cursor instead; see src/store/README.)
 */
#ifndef PCTL_STORE_FEED_H
#define PCTL_STORE_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "planctl.h"

/* How many of the status changes a feed keeps with their names, for log
 * lines; the others are only counted. */
#define PCTL_FEED_MAX_CHANGES 64

/* A status change another writer made (an event with a to_status). The
 * names are NULL where the rows are gone since. */
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
    /* The status changes among those events, oldest first (none when
     * there is a gap): */
    pctl_feed_change *changes; /* the first PCTL_FEED_MAX_CHANGES */
    size_t nchanges;
    size_t nmore; /* status changes after those, counted only */
    /* every status change, by entity and status it went to */
    size_t counts[PLANCTL_ENTITY__COUNT][PLANCTL_STATUS__COUNT];
} pctl_feed;

/* The newest event's number (0: none).  Errors: EIO, EBUSY. */
int pctl_feed_last(int64_t *out, planctl *p);

/* What has events after event number after, up to the newest, and the
 * status changes among them, read in one pass of one snapshot (inside
 * the caller's transaction, or a read of its own).  *out is the caller's
 * (pctl_feed_clear).  Errors: EIO, EBUSY, ENOMEM. */
int pctl_feed_read(pctl_feed *out, planctl *p, int64_t after);

/* Frees the lists and zeroes *f.  Can't fail. */
void pctl_feed_clear(pctl_feed *f);

#endif
