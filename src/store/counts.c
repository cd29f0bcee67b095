/* counts.c - cheap counts of open runs, for the engine's gauges and its
 * idle check. */
#include "store/counts.h"

#include "store/store.h"

int pctl_runs_open_counts(planctl *p, int64_t *queued, int64_t *active)
{
    sqlite3_stmt *st = pctl_legacy_stmt(p, PCTL_Q_runs_open_counts);
    int rc;

    *queued = *active = 0;
    if (!st)
        return PLANCTL_ERROR;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *queued = sqlite3_column_int64(st, 0);
        *active = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : pctl_sqlerr(p, rc, "counting open runs");
}

int pctl_runs_open_any(int *out, planctl *p)
{
    sqlite3_stmt *st = pctl_legacy_stmt(p, PCTL_Q_runs_open_any);
    int rc;

    *out = 0;
    if (!st)
        return PLANCTL_ERROR;
    rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : pctl_sqlerr(p, rc, "reading the queue");
}
