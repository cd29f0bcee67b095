/* counts.c - cheap counts of open runs, for the engine's gauges and its
 * idle check. */
#include "store/counts.h"

#include "store/store.h"

int pctl_runs_open_counts(planctl *p, int64_t *queued, int64_t *active)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_runs_open_counts);
    int rc;

    *queued = *active = 0;
    if (!st)
        return pctl_q_err(p);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        *queued = pctl_col_i64(st, 0);
        *active = pctl_col_i64(st, 1);
    }
    pctl_reset(st);
    return rc == PCTL_ROW ? 0 : pctl_q_fail(st, rc);
}

int pctl_runs_open_any(int *out, planctl *p)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_runs_open_any);
    int rc;

    *out = 0;
    if (!st)
        return pctl_q_err(p);
    rc = pctl_step(st);
    *out = rc == PCTL_ROW && pctl_col_int(st, 0);
    pctl_reset(st);
    return rc == PCTL_ROW ? 0 : pctl_q_fail(st, rc);
}
