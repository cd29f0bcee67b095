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
 * have something to do.  A pass never walks every active run: the cache
 * keeps what it needs by run (issue 16):
 *   - the runs marked dirty since the last pass, in a list;
 *   - the time each run waits for (its next try, timeout or deadline), in
 *     a heap by time, so the due ones are found without a walk;
 *   - the runs that last decided with no slot to spare, in a heap by id,
 *     so a freed slot goes to the oldest of them first;
 *   - the runs that ended, in a list, dropped at the next sync;
 *   - by instance (one active run each) and how many runs use each
 *     definition, for the feed's instance events and the engine's trim.
 * pctl_active_work() hands a pass the dirty and due runs in id order.
 */
#ifndef PCTL_ENGINE_CACHE_H
#define PCTL_ENGINE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "store/active.h"
#include "store/feed.h"
#include "store/store.h"

typedef struct pctl_active {
    size_t nruns;
    pctl_run_row **runs; /* in id order */
    size_t max_children; /* the most phases or steps under one parent */
    /* Set by pctl_active_sync and pctl_active_claimed, for the engine to
     * clear: everything was read anew (fresh), runs were dropped or added
     * (members), runs were added (entered). */
    int fresh, members, entered;
    /* Jobs of steps whose run the sync dropped because another writer
     * ended it (their job pointers, as the rows held them), for the
     * engine to stop; cleared at the next sync. */
    void **orphaned;
    size_t norphaned, caporphaned;
    /* Ids of the runs that left the active set (ended by a pass, or by
     * another writer) since the engine last emptied it (ngone = 0), for it
     * to forget what it noted of them. */
    int64_t *gone;
    size_t ngone, capgone;
    struct pctl_active_cache *cache; /* cache.c's bookkeeping */
} pctl_active;

/* What a sync read (for the engine's metrics). */
typedef struct pctl_sync_info {
    int full;         /* every active run, anew */
    size_t reread;    /* runs read again after another writer changed them */
    pctl_feed others; /* the status changes others made, for the log and
                         the counts (pctl_feed_clear after) */
} pctl_sync_info;

/*
 * Brings the cache up to date inside the pass's write transaction:
 * *cache (NULL at first) is read anew when it cannot be trusted (see
 * above), else what others changed is read again, runs that ended are
 * dropped and promoted runs read.  *info (may be NULL) receives what it
 * read.  Errors: EIO, ENOMEM, EBUSY (the cache is dropped).
 */
int pctl_active_sync(pctl_active **cache, planctl *p, pctl_sync_info *info);

/* Between the pass's BEGIN and its fence (pctl_engine_pass_open and
 * _fenced): when its last sync found others' changes to follow (engines
 * beside it), the feed's first read is sent ahead, answered with the
 * fence (pctl_feed_last_ahead).  Errors: EIO, ENOMEM. */
int pctl_active_ahead(pctl_active *a, planctl *p);

/* Before the pass commits (its events written): once it committed, the
 * cache's cursor moves past the pass's own events when no other writer's
 * are among them, else notes the pass's transaction as its own
 * (pctl_feed_mark, pctl_active_marked):
 * either way the next sync follows only what others wrote (several
 * engines on PostgreSQL commit among each other's events; reading its
 * own again cost a read of each of its runs a pass, and logged its
 * changes again as another writer's).  Errors: EIO, EBUSY, ENOMEM. */
int pctl_active_mark(pctl_active *a, planctl *p);
/* After the pass's transaction ended, committed or not: the mark taken
 * (on PostgreSQL read with the commit).  Errors: as pctl_active_mark's,
 * and then the next sync reads the pass's events as others'. */
int pctl_active_marked(pctl_active *a, planctl *p, int committed);

/* After the pass committed: what the cache holds is the database's. */
void pctl_active_committed(pctl_active *a, planctl *p);

/* Frees the cache (after a rollback, or when the engine stops); the next
 * sync reads everything.  Can't fail. */
void pctl_active_drop(pctl_active **cache);

/* The cached step with this id: 1 with *run, *pi, *si set, or 0. */
int pctl_active_find_step(const pctl_active *a, int64_t step_id,
                          pctl_run_row **run, size_t *pi, size_t *si);

/* Marks run_id (if cached) to be decided at the next pass.  Can't fail
 * (out of memory, the next sync reads everything anew). */
void pctl_active_touch(pctl_active *a, int64_t run_id);

/* The same for a cached run r; a run already marked stays as it is.  A
 * run marked during a pass is the next pass's. */
void pctl_active_dirty(pctl_active *a, pctl_run_row *r);

/* The cached run with this id, or NULL.  Can't fail. */
pctl_run_row *pctl_active_find_run(const pctl_active *a, int64_t run_id);

/* The cached run of this instance, or NULL.  Can't fail. */
pctl_run_row *pctl_active_find_instance(const pctl_active *a,
                                        int64_t instance_id);

/*
 * What a pass at time now has to look at: every run marked dirty since
 * the last call and every run whose wake_at has come, each once, in id
 * order.  *out (the caller's, pctl_free) receives *n rows, valid until
 * the next sync; the marks are taken, so a run this pass leaves dirty
 * must be given back (pctl_active_dirty after clearing its flag, or
 * pctl_active_requeue).  0, or ENOMEM (then *out is NULL).
 */
int pctl_active_work(pctl_active *a, int64_t now, pctl_run_row ***out,
                     size_t *n);

/* Puts r, still dirty, back on the list for the next pass.  Can't fail. */
void pctl_active_requeue(pctl_active *a, pctl_run_row *r);

/* The oldest run that last decided with no slot to spare and is not
 * among this pass's work, or NULL; pctl_active_hungry_pop() takes it off
 * the heap (and into this pass).  Can't fail. */
pctl_run_row *pctl_active_hungry(pctl_active *a);
void pctl_active_hungry_pop(pctl_active *a);

/* r was decided (r->quiet set): wake is when deciding it again could do
 * something (0: never), recorded in r->wake_at and where a due time finds
 * it; a run with no slot to spare waits for one from the end of the
 * pass (pctl_active_settle).  Can't fail. */
void pctl_active_decided(pctl_active *a, pctl_run_row *r, int64_t wake);

/* After a pass's decisions: the runs left with no slot to spare join
 * those waiting for one.  Can't fail. */
void pctl_active_settle(pctl_active *a);

/* The earliest time a cached run waits for, or 0.  Can't fail. */
int64_t pctl_active_next_wake(pctl_active *a);

/* The clock jumped: every run's time was moved (r->wake_at included), so
 * the times are recorded anew.  Can't fail. */
void pctl_active_timers_reset(pctl_active *a);

/* The cached runs still active (those that ended are dropped at the next
 * sync).  Can't fail. */
size_t pctl_active_count(const pctl_active *a);
/* The queued runs promoted (a run of their instance ended) by the writes
 * since the last sync: inside a pass, the pass's own; read at the next
 * sync.  Can't fail. */
size_t pctl_active_promoted(const pctl_active *a);
/* Reads runs just claimed (store/fleet.c) into the cache, each to be
 * decided at this pass.  Inside the pass's transaction, after the sync.
 * Errors: the store's. */
int pctl_active_claimed(pctl_active *a, planctl *p, const int64_t *ids,
                        size_t n);
/* Reads run_id again after this engine gave it back (store/fleet.c): it
 * leaves the cache.  Inside the pass's transaction.  Errors: the
 * store's. */
int pctl_active_forget(pctl_active *a, planctl *p, int64_t run_id);

/* How many cached runs use definition def_id.  Can't fail. */
size_t pctl_active_def_runs(const pctl_active *a, int64_t def_id);

/* What keeps a cache true from the store's reports (its data: the
 * pctl_active ** the cache lives in).  It knows a row only inside the
 * write transaction the cache was synced in, and only while it has
 * followed every change. */
extern const pctl_observer pctl_active_observer;

#endif
