/*
 * status.h - statuses and the legal transitions between them, as data.
 *
 * The state machine of planctl-json(7), TRANSITIONS (the `transitions` table of
 * the schema mirrors PCTL_TRANSITIONS; a test checks they are equal):
 *
 *   run:    (new) -> QUEUED -> PENDING -> IN_PROGRESS <-> PAUSED
 *           (new) ---------> PENDING      IN_PROGRESS -> COMPLETE
 *                                         IN_PROGRESS -> FATAL_ERROR
 *           QUEUED, PENDING, IN_PROGRESS, PAUSED -> CANCELLED
 *
 *   phase:  (new) -> PENDING -> IN_PROGRESS -> COMPLETE | FATAL_ERROR
 *           (new) -> COMPLETE (carried over by a retry)
 *           PENDING, IN_PROGRESS -> CANCELLED
 *
 *   step:   like a phase, plus IN_PROGRESS -> ERROR -> IN_PROGRESS (retry)
 *           and ERROR -> FATAL_ERROR | CANCELLED
 *
 * Invariants per status (checked by pctl_status_invariant):
 *   - terminal rows (COMPLETE, FATAL_ERROR, CANCELLED) have a finished time
 *     and never change again: no edge leaves a terminal status;
 *   - IN_PROGRESS, PAUSED and ERROR rows have a start time and no finish;
 *   - QUEUED and PENDING rows have neither.
 */
#ifndef PCTL_CORE_STATUS_H
#define PCTL_CORE_STATUS_H

#include <stdint.h>

#include "planctl.h"

#define PCTL_NEW PLANCTL_STATUS__COUNT /* "(new)": a row being created */

/* Each edge is (entity, from, to).  The one list of legal transitions. */
#define PCTL_TRANSITIONS(X)                                                    \
    X(RUN, NEW, QUEUED)                                                        \
    X(RUN, NEW, PENDING)                                                       \
    X(RUN, QUEUED, PENDING)                                                    \
    X(RUN, QUEUED, CANCELLED)                                                  \
    X(RUN, PENDING, IN_PROGRESS)                                               \
    X(RUN, PENDING, CANCELLED)                                                 \
    X(RUN, IN_PROGRESS, PAUSED)                                                \
    X(RUN, IN_PROGRESS, COMPLETE)                                              \
    X(RUN, IN_PROGRESS, FATAL_ERROR)                                           \
    X(RUN, IN_PROGRESS, CANCELLED)                                             \
    X(RUN, PAUSED, IN_PROGRESS)                                                \
    X(RUN, PAUSED, CANCELLED)                                                  \
    X(PHASE, NEW, PENDING)                                                     \
    X(PHASE, NEW, COMPLETE)                                                    \
    X(PHASE, PENDING, IN_PROGRESS)                                             \
    X(PHASE, PENDING, CANCELLED)                                               \
    X(PHASE, IN_PROGRESS, COMPLETE)                                            \
    X(PHASE, IN_PROGRESS, FATAL_ERROR)                                         \
    X(PHASE, IN_PROGRESS, CANCELLED)                                           \
    X(STEP, NEW, PENDING)                                                      \
    X(STEP, NEW, COMPLETE)                                                     \
    X(STEP, PENDING, IN_PROGRESS)                                              \
    X(STEP, PENDING, CANCELLED)                                                \
    X(STEP, IN_PROGRESS, COMPLETE)                                             \
    X(STEP, IN_PROGRESS, ERROR)                                                \
    X(STEP, IN_PROGRESS, FATAL_ERROR)                                          \
    X(STEP, IN_PROGRESS, CANCELLED)                                            \
    X(STEP, ERROR, IN_PROGRESS)                                                \
    X(STEP, ERROR, FATAL_ERROR)                                                \
    X(STEP, ERROR, CANCELLED)

typedef struct pctl_edge {
    planctl_entity entity;
    planctl_status from; /* PCTL_NEW for creation */
    planctl_status to;
} pctl_edge;

extern const pctl_edge pctl_edges[];
extern const int pctl_edges_count;

/* "run", "phase", "step"; NULL when out of range.  Can't fail. */
const char *pctl_entity_name(planctl_entity e);

/* 1 for COMPLETE, FATAL_ERROR, CANCELLED.  Can't fail. */
int pctl_status_terminal(planctl_status s);
/* 1 for a run that holds the instance's slot: PENDING, IN_PROGRESS,
 * PAUSED.  Can't fail. */
int pctl_status_active(planctl_status s);

/* Checks the per-status invariants above for one row: has_start and
 * has_finish say whether its start/finish times are set.  Returns 1 when
 * they hold.  Can't fail. */
int pctl_status_invariant(planctl_status s, int has_start, int has_finish);

#endif
