/*
 * active.h - the engine's view of the database: every active run with its
 * phases and steps, and the cache that keeps it between passes.
 *
 * Views (what pctl_decide() reads and updates) and rows (ids, names, what
 * the engine needs to act) are kept in parallel arrays, one set per run:
 * each phase's steps are a contiguous slice, as pctl_decide() wants them.
 * A phase or step row points to its parent, so that what finds a row by
 * its id finds the run and the row's place in the views too.
 *
 * The cache.  Reading every active run each pass costs as much as the
 * pass's own writes many times over (it was three quarters of the engine's
 * time with 1,000 active runs), so the engine keeps the tree between
 * passes and the store keeps it true:
 *   - every status change through the gate, and every task index the
 *     engine records, updates the cached rows from what the UPDATE
 *     returned (pctl_active_note), in the same transaction;
 *   - a run promoted from the queue is read at the next sync, and a run
 *     that ended is dropped there;
 *   - anything else that may have written is detected at the next sync,
 *     which then reads everything again: a commit by another connection
 *     (PRAGMA data_version moved), a write on the engine's own connection
 *     outside a pass (its change counter moved: the lease heartbeat, say),
 *     a compare-and-set of ours that missed, or a pass that rolled back
 *     (pctl_active_drop).
 * Each run also carries `dirty`: set when anything of it changed since
 * the engine last decided it, so a pass decides only the runs that may
 * have something to do.
 */
#ifndef PCTL_STORE_ACTIVE_H
#define PCTL_STORE_ACTIVE_H

#include <stddef.h>
#include <stdint.h>

#include "core/decide.h"
#include "planctl.h"

typedef struct pctl_step_row {
    int64_t id;
    char *name;
    int task_index;
    int attempt;   /* steps.attempt as written (the view's may run ahead) */
    char *message; /* the step's current message (its last error) */
    /* The engine's: the job running this step, or NULL (the store only
     * zeroes it when it reads the row). */
    void *job;
    struct pctl_phase_row *phase; /* the phase it is a step of */
} pctl_step_row;

typedef struct pctl_phase_row {
    int64_t id;
    char *name;
    pctl_step_row *steps;     /* parallel to the view's steps */
    struct pctl_run_row *run; /* the run it is a phase of */
} pctl_phase_row;

typedef struct pctl_run_row {
    int64_t id, instance_id, definition_id;
    int64_t event_count; /* runs.event_count */
    int64_t deadline_at; /* runs.deadline_at as written */
    char *instance, *plan, *params, *uid;
    pctl_run_view view;     /* strategy is the engine's to fill in */
    pctl_phase_row *phases; /* parallel to view.phases */
    /* The engine's: changed since last decided (set by the store on every
     * change), and what deciding it last said. */
    int dirty;
    int quiet;       /* last decided with a slot to spare, and did nothing */
    int64_t wake_at; /* when deciding it again could do something; 0: no */
} pctl_run_row;

typedef struct pctl_active {
    size_t nruns;
    pctl_run_row **runs; /* in id order */
    size_t max_children; /* the most phases or steps under one parent */
    /* Set by pctl_active_sync, for the engine to clear: everything was
     * read anew (fresh), or runs were dropped or added (members). */
    int fresh, members;
    struct pctl_active_cache *cache; /* store/active.c's bookkeeping */
} pctl_active;

/* Reads every PENDING, IN_PROGRESS and PAUSED run, in id order, with its
 * phases and steps, from one snapshot.  *out is the caller's
 * (pctl_active_free).  Errors: EIO, ENOMEM, EBUSY. */
int pctl_active_load(pctl_active **out, planctl *p);

/* Frees a loaded tree.  NULL is allowed.  Can't fail. */
void pctl_active_free(pctl_active *a);

/*
 * Brings the engine's cache up to date inside the pass's write
 * transaction: *cache (NULL at first) is read anew when it cannot be
 * trusted (see above), else runs that ended are dropped and promoted runs
 * read.  The cache is attached to the handle, so the gate keeps it true
 * from then on.  Errors: EIO, ENOMEM, EBUSY (the cache is dropped).
 */
int pctl_active_sync(pctl_active **cache, planctl *p);

/* After the pass committed: what the cache holds is the database's. */
void pctl_active_committed(pctl_active *a, planctl *p);

/* Detaches and frees the cache (after a rollback, or when the engine
 * stops); the next sync reads everything.  Can't fail. */
void pctl_active_drop(pctl_active **cache, planctl *p);

/* The cached step with this id: 1 with *run, *pi, *si set, or 0. */
int pctl_active_find_step(const pctl_active *a, int64_t step_id,
                          pctl_run_row **run, size_t *pi, size_t *si);

/* Marks run_id (if cached) to be decided at the next pass.  Can't fail. */
void pctl_active_touch(pctl_active *a, int64_t run_id);

/* Records the task a step is at (steps.task_index), in the database and
 * in the cache.  Inside a transaction.  Errors: EIO, EBUSY. */
int pctl_step_set_task(planctl *p, int64_t step_id, int task_index);

/* Makes the next sync read everything (a change the cache cannot follow,
 * such as a compare-and-set that missed).  Can't fail. */
void pctl_active_distrust(planctl *p);

/* Run run_id has count events now: at the handle's limit per run, its
 * cached view says so (event_limit), for the engine to end it.  Can't
 * fail. */
void pctl_active_event_count(planctl *p, int64_t run_id, int64_t count);

/* What the cache holds of a run, phase or step row, for the gate. */
typedef struct pctl_cached_row {
    int64_t run_id, phase_id, instance_id;
    int attempt;         /* a step's tries so far */
    int64_t deadline_at; /* a run's */
    int64_t event_count; /* a run's */
} pctl_cached_row;
/* 1 with *out filled when the handle's cache holds the row of entity id
 * and can be trusted for it: the cache was synced inside the write
 * transaction now open (so nothing else can have written since) and has
 * followed every change of ours.  0 otherwise: read the row.  Can't
 * fail. */
int pctl_active_cached(const planctl *p, planctl_entity entity, int64_t id,
                       pctl_cached_row *out);
/* The gate's report of one status change it made (store only): the row
 * as the UPDATE returned it, and whether it granted the step another try
 * (max_attempts + 1).  Can't fail (a change it cannot follow makes the
 * next sync read everything). */
struct pctl_change;
void pctl_active_note(planctl *p, const struct pctl_change *c, int64_t run_id,
                      int attempt, int64_t next_attempt_at, int64_t deadline_at,
                      int granted);

#endif
