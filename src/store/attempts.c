/* attempts.c - what the store tells a starting engine about attempts a
 * dead one ran: whether one was stopped, so its processes must go. */
#include "store/store.h"

int pctl_attempt_stopped(int *out, planctl *p, int64_t run_id,
                         const char *run_uid, const char *step, int attempt)
{
    sqlite3_stmt *st = pctl_legacy_stmt(p, PCTL_Q_attempt_stopped);
    int rc;

    *out = 0;
    if (!st)
        return PLANCTL_ERROR;
    sqlite3_bind_int64(st, 1, run_id);
    pctl_sq_bind_text(st, 2, run_uid);
    pctl_sq_bind_text(st, 3, step);
    sqlite3_bind_int(st, 4, attempt);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int(st, 0) != 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0
               : pctl_sqlerr(p, rc, "reading an attempt");
}
