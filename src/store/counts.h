/* counts.h - cheap counts of open runs, for the engine's gauges and its
 * idle check. */
#ifndef PCTL_STORE_COUNTS_H
#define PCTL_STORE_COUNTS_H

#include <stdint.h>

#include "planctl.h"

/* The number of QUEUED runs and of active (PENDING, IN_PROGRESS, PAUSED)
 * runs in the database, read through the partial indexes on runs.status
 * (no table scan, whatever the history).  Sets both to 0 on failure.
 * Errors: EIO, EBUSY, ENOMEM. */
int pctl_runs_open_counts(planctl *p, int64_t *queued, int64_t *active);

/* Whether any run is open (queued or active): *out 1 or 0 (0 on failure).
 * Errors: EIO, EBUSY, ENOMEM. */
int pctl_runs_open_any(int *out, planctl *p);

#endif
