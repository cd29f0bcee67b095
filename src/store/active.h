/*
 * active.h - the active runs, with their phases and steps, as the engine
 * decides them: what the store reads for the engine's cache of active
 * runs (engine/cache.h), which then keeps them between passes from what
 * the store reports of its writes (pctl_observer, store.h).
 *
 * Views (what pctl_decide() reads and updates) and rows (ids, names, what
 * the engine needs to act) are kept in parallel arrays, one set per run:
 * each phase's steps are a contiguous slice, as pctl_decide() wants them.
 * A phase or step row points to its parent, so that what finds a row by
 * its id finds the run and the row's place in the views too.
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
    /* The engine's: the job running this step, or NULL (the store zeroes
     * it when it reads the row, and never looks at it). */
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
    /* The engine's (the store zeroes them when it reads the row, and
     * never looks at them): changed since last decided, and what deciding
     * it last said. */
    int dirty;
    int quiet;       /* last decided with a slot to spare, and did nothing */
    int64_t wake_at; /* when deciding it again could do something; 0: no */
    int hungry;      /* on the cache's list of runs waiting for a slot */
    int ended;       /* written terminal since read: dropped at the sync */
    uint64_t mark;   /* the pass that last took it up */
    /* Whether its steps have outputs for later tasks: 0 not known (read
     * them when a task that uses them starts), 1 none, 2 some. */
    int outputs;
} pctl_run_row;

/* Reads every PENDING, IN_PROGRESS and PAUSED run, in id order, with its
 * phases and steps, from one snapshot: *out receives *n runs, the
 * caller's (pctl_run_rows_free).  Errors: EIO, ENOMEM, EBUSY. */
int pctl_active_read(pctl_run_row ***out, size_t *n, planctl *p);

/* Reads run run_id with its phases and steps if it is active: *out
 * receives it (the caller's: pctl_run_row_free), or NULL when it is not
 * active.  Errors: EIO, ENOMEM, EBUSY. */
int pctl_active_read_run(pctl_run_row **out, planctl *p, int64_t run_id);

/* Reads those of the runs ids[0..nids) that are active (on a server:
 * and held by this engine) with their phases and steps, in id order:
 * *out receives *n runs, the caller's (pctl_run_rows_free).  One round
 * trip on PostgreSQL, inside a transaction.  Errors: EIO, ENOMEM,
 * EBUSY. */
int pctl_active_read_runs(pctl_run_row ***out, size_t *n, planctl *p,
                          const int64_t *ids, size_t nids);

/* Frees one run's rows, or n of them and the array.  NULL is allowed.
 * Can't fail. */
void pctl_run_row_free(pctl_run_row *r);
void pctl_run_rows_free(pctl_run_row **v, size_t n);

/* Records the task a step IN_PROGRESS is at (steps.task_index) and,
 * when outputs is not NULL, the outputs its try number attempt has so far
 * (task_outputs, JSON text), so that a retry after a crash between two
 * tasks resumes with them; then tells the handle's observer.  Inside the
 * caller's transaction, so both are written or neither.  Errors: EIO,
 * EBUSY. */
int pctl_step_set_task(planctl *p, int64_t step_id, int task_index, int attempt,
                       const char *outputs);

#endif
