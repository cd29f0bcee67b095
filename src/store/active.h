/*
 * active.h - the engine's view of the database: every active run with its
 * phases and steps, read in one snapshot for one pass.
 *
 * Views (what pctl_decide() reads and updates) and rows (ids, names, what
 * the engine needs to act) are kept in parallel arrays: all step views of
 * the pass are one array in (run, phase, step) order, so each phase's
 * steps are a contiguous slice, as pctl_decide() wants them.
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
    char *message; /* the step's current message (its last error) */
} pctl_step_row;

typedef struct pctl_phase_row {
    int64_t id;
    char *name;
    pctl_step_row *steps; /* parallel to the view's steps */
} pctl_phase_row;

typedef struct pctl_run_row {
    int64_t id, instance_id, definition_id;
    char *instance, *plan, *params, *uid;
    pctl_run_view view;     /* strategy is the engine's to fill in */
    pctl_phase_row *phases; /* parallel to view.phases */
} pctl_run_row;

typedef struct pctl_active {
    size_t nruns, nphases, nsteps;
    pctl_run_row *runs;
    pctl_phase_view *phase_views;
    pctl_phase_row *phase_rows;
    pctl_step_view *step_views;
    pctl_step_row *step_rows;
    size_t max_children; /* the most phases or steps under one parent */
} pctl_active;

/* Reads every PENDING, IN_PROGRESS and PAUSED run, in id order, with its
 * phases and steps, from one snapshot.  *out is the caller's
 * (pctl_active_free).  Errors: EIO, ENOMEM, EBUSY. */
int pctl_active_load(pctl_active **out, planctl *p);

/* Frees a loaded tree.  NULL is allowed.  Can't fail. */
void pctl_active_free(pctl_active *a);

#endif
