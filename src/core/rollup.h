/*
 * rollup.h - the aggregation rules of the statuses (planctl-json(7)) as pure
 * functions: which children may start, what a parent's status follows from its
 * children's, and how open children end when their run ends.  The engine's
 * decision function is built from these; the store uses the closing rule for
 * cancel.
 */
#ifndef PCTL_CORE_ROLLUP_H
#define PCTL_CORE_ROLLUP_H

#include <stddef.h>

#include "def.h"
#include "planctl.h"

/*
 * Children are read as n statuses `stride` bytes apart starting at kids, so
 * they can be a plain array (stride sizeof(planctl_status)) or the status
 * member of an array of structs.
 */
#define PCTL_KID(kids, stride, i)                                              \
    (*(const planctl_status *)(const void *)((const char *)(kids) +            \
                                             (i) * (stride)))

/*
 * The children (phases of a run, or steps of a phase) that may start now,
 * written to out (room for n) in order; returns how many.
 *   serial:   the first child that is not COMPLETE, if it is PENDING (each
 *             child starts when the previous one is COMPLETE);
 *   parallel: every PENDING child.
 * Nothing starts once a child is FATAL_ERROR or CANCELLED: the parent is
 * ending.  Can't fail.
 */
size_t pctl_startable(pctl_strategy strategy, const planctl_status *kids,
                      size_t stride, size_t n, size_t *out);

/*
 * The status a phase or run should have given its children's:
 *   FATAL_ERROR if any child is FATAL_ERROR;
 *   CANCELLED   if any child is CANCELLED (and none FATAL_ERROR);
 *   COMPLETE    if every child is COMPLETE (an empty list is COMPLETE);
 *   IN_PROGRESS if any child has started (IN_PROGRESS, ERROR, COMPLETE);
 *   PENDING     otherwise.
 * Can't fail.
 */
planctl_status pctl_rollup(const planctl_status *kids, size_t stride, size_t n);

/*
 * How an open child ends when its run ends with run_end (FATAL_ERROR or
 * CANCELLED): returns 1 and sets *to (CANCELLED) and *message, or 0 for a
 * child that is already terminal and stays as it is.  A child that had
 * started is told it was cancelled; one that never started says so:
 * "not started: run ended FATAL_ERROR", "not started: run cancelled".
 * Can't fail.
 */
int pctl_close_child(planctl_status child, planctl_status run_end,
                     planctl_status *to, const char **message);

#endif
