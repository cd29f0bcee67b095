/*
 * cache.h - the engine's cache of active runs: every PENDING, IN_PROGRESS
 * and PAUSED run with its phases and steps (store/active.h), kept between
 * passes.
 *
 * Reading every active run each pass costs as much as the pass's own
 * writes many times over (it was three quarters of the engine's time with
 * 1,000 active runs), so the engine keeps the tree between passes and
 * follows what the store reports of its writes (pctl_active_observer,
 * registered on the handle through the engine's observer):
 *   - every status change the gate makes, and every task index the
 *     engine records, updates the cached rows from the row as written, in
 *     the same transaction;
 *   - a run promoted from the queue is read at the next sync, and a run
 *     that ended is dropped there;
 *   - a commit by another connection (the database's change token
 *     moved), or a write on the engine's own connection outside a pass
 *     (its own count moved), is followed at the next sync from the event
 *     log (store/feed.h): the runs with events after the newest the cache
 *     has followed are read again, so a foreign commit costs in
 *     proportion to what it changed, not to the active runs;
 *   - what the log cannot tell makes the next sync read everything again:
 *     events removed (gc, an instance deleted with its events), a
 *     compare-and-set that missed, or a pass that rolled back
 *     (pctl_active_drop).
 * Each run also carries `dirty`: set when anything of it changed since
 * the engine last decided it, so a pass decides only the runs that may
 * have something to do.
 */
#ifndef PCTL_ENGINE_CACHE_H
#define PCTL_ENGINE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "store/active.h"
#include "store/store.h"

typedef struct pctl_active {
    size_t nruns;
    pctl_run_row **runs; /* in id order */
    size_t max_children; /* the most phases or steps under one parent */
    /* Set by pctl_active_sync, for the engine to clear: everything was
     * read anew (fresh), or runs were dropped or added (members). */
    int fresh, members;
    /* Jobs of steps whose run the sync dropped because another writer
     * ended it (their job pointers, as the rows held them), for the
     * engine to stop; cleared at the next sync. */
    void **orphaned;
    size_t norphaned, caporphaned;
    struct pctl_active_cache *cache; /* cache.c's bookkeeping */
} pctl_active;

/* What a sync read (for the engine's metrics). */
typedef struct pctl_sync_info {
    int full;      /* every active run, anew */
    size_t reread; /* runs read again after another writer changed them */
} pctl_sync_info;

/*
 * Brings the cache up to date inside the pass's write transaction:
 * *cache (NULL at first) is read anew when it cannot be trusted (see
 * above), else what others changed is read again, runs that ended are
 * dropped and promoted runs read.  *info (may be NULL) receives what it
 * read.  Errors: EIO, ENOMEM, EBUSY (the cache is dropped).
 */
int pctl_active_sync(pctl_active **cache, planctl *p, pctl_sync_info *info);

/* Before the pass commits (its events written): the newest event is the
 * cache's own, so the next sync follows only what comes after it.
 * Errors: EIO, EBUSY. */
int pctl_active_mark(pctl_active *a, planctl *p);

/* After the pass committed: what the cache holds is the database's. */
void pctl_active_committed(pctl_active *a, planctl *p);

/* Frees the cache (after a rollback, or when the engine stops); the next
 * sync reads everything.  Can't fail. */
void pctl_active_drop(pctl_active **cache);

/* The cached step with this id: 1 with *run, *pi, *si set, or 0. */
int pctl_active_find_step(const pctl_active *a, int64_t step_id,
                          pctl_run_row **run, size_t *pi, size_t *si);

/* Marks run_id (if cached) to be decided at the next pass.  Can't fail. */
void pctl_active_touch(pctl_active *a, int64_t run_id);

/* What keeps a cache true from the store's reports (its data: the
 * pctl_active ** the cache lives in).  It knows a row only inside the
 * write transaction the cache was synced in, and only while it has
 * followed every change. */
extern const pctl_observer pctl_active_observer;

#endif
