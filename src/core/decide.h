/*
 * decide.h - the engine's decision: a pure function of (run tree, now).
 *
 * Each pass the engine reads every active run from the database into a
 * view, asks pctl_decide() what to do, commits the resulting transitions
 * in one transaction, and only then starts the tasks of the steps that
 * went IN_PROGRESS.  The function does no I/O and keeps no state, so a
 * missed wake-up costs latency, never correctness, and every rule is
 * tested without a loop or a database (tests/unit/test_decide.c).
 *
 * What it decides, in this order, for a run that is not terminal:
 *   1. PENDING: the run starts (IN_PROGRESS).
 *   2. Past the run's deadline, or at the limit of events per run: the run
 *      ends FATAL_ERROR, children close.
 *   3. In every IN_PROGRESS phase: steps past their deadline time out
 *      (ERROR, or FATAL_ERROR on the last attempt); steps in ERROR with no
 *      attempt left give up (FATAL_ERROR); steps in ERROR whose next try is
 *      due start again; PENDING steps start by the phase's strategy; the
 *      phase ends COMPLETE or FATAL_ERROR when its steps say so.
 *   4. Phases start by the run's strategy (and their steps at once).
 *   5. The run ends COMPLETE or FATAL_ERROR when its phases say so; on
 *      FATAL_ERROR its open children close (running siblings cancelled,
 *      unstarted ones "not started: run ended FATAL_ERROR").
 * A PAUSED run starts nothing and does not end (PAUSED -> COMPLETE is not
 * a legal edge); running steps still finish and time out, and a step's
 * failure fails its phase and the run only once the run is resumed.  Starting a
 * step takes one of the `slots` (the engine's concurrency limit); without a
 * slot a due step simply waits for the next pass.
 */
#ifndef PCTL_CORE_DECIDE_H
#define PCTL_CORE_DECIDE_H

#include <stddef.h>
#include <stdint.h>

#include "def.h"
#include "planctl.h"

/* status comes first in each view so that pctl_rollup() and
 * pctl_startable() can read it in place (see PCTL_KID). */
typedef struct pctl_step_view {
    planctl_status status;
    int attempt; /* tries started so far */
    int max_attempts;
    int64_t next_attempt_at; /* ERROR: when the next try is due */
    int64_t deadline_at;     /* IN_PROGRESS: when the try times out, or 0 */
    int busy; /* ERROR or PENDING: a try of it still runs that is not its
               * current one (cancelled, or its start was lost), so no
               * other may start (never two tries of one step at once);
               * its report has the run decided again */
} pctl_step_view;

typedef struct pctl_phase_view {
    planctl_status status;
    pctl_strategy strategy;
    size_t nsteps;
    pctl_step_view *steps;
} pctl_phase_view;

typedef struct pctl_run_view {
    planctl_status status;
    pctl_strategy strategy;
    int64_t deadline_at; /* 0: none */
    int event_limit;     /* its events reached the limit per run */
    int starved;         /* set by pctl_decide(): a step was due to start (or to
                          * try again) and no slot was free */
    size_t nphases;
    pctl_phase_view *phases;
} pctl_run_view;

/* Why an action was decided; the engine turns it into the message. */
typedef enum pctl_why {
    PCTL_WHY_START,     /* a run, phase or step starts */
    PCTL_WHY_RETRY,     /* a step in ERROR starts its next attempt */
    PCTL_WHY_TIMEOUT,   /* a step's attempt passed its deadline */
    PCTL_WHY_EXHAUSTED, /* a step in ERROR has no attempt left */
    PCTL_WHY_DEADLINE,  /* the run passed its deadline */
    PCTL_WHY_EVENTS,    /* the run reached the limit of events per run */
    PCTL_WHY_COMPLETE,  /* every child is COMPLETE */
    PCTL_WHY_FAILED     /* a child is FATAL_ERROR */
} pctl_why;

typedef enum pctl_target {
    PCTL_TARGET_RUN,
    PCTL_TARGET_PHASE,
    PCTL_TARGET_STEP,
    PCTL_TARGET_CLOSE /* close every open child of the run (it ended) */
} pctl_target;

typedef struct pctl_action {
    pctl_target target;
    size_t phase, step; /* indices, where the target has them */
    planctl_status from, to;
    pctl_why why;
} pctl_action;

/* Room enough for every action one call can produce for a run. */
size_t pctl_decide_capacity(const pctl_run_view *run);

/*
 * Decides what to do with run at time now.  Writes the actions to out (at
 * least pctl_decide_capacity(run) entries) in the order they must be
 * applied, and updates run in place to the state after them (statuses; a
 * step's attempt count when it starts).  *slots is decreased for every step
 * started, and run->starved set when a due step found none left.
 * *wake_at receives the earliest future time at which deciding
 * again could do something (a retry due, a deadline), or 0 for none.
 * scratch must have room for max(nphases, nsteps of any phase) indices.
 * Returns the number of actions.  Can't fail.
 */
size_t pctl_decide(pctl_run_view *run, int64_t now, int *slots,
                   pctl_action *out, int64_t *wake_at, size_t *scratch);

/* The wait before attempt `next` (2, 3, ...) of a step: backoff *
 * multiplier^(next - 2), capped at max_backoff.  Can't fail. */
int64_t pctl_backoff(const pctl_retry *retry, int next);

#endif
