/* attempts.c - what the store tells a starting engine about attempts a
 * dead one ran: whether one was stopped, so its processes must go. */
#include "store/store.h"

int pctl_attempt_stopped(int *out, planctl *p, int64_t run_id,
                         const char *run_uid, const char *step, int attempt)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_attempt_stopped);
    int rc;

    *out = 0;
    if (!st)
        return PLANCTL_ERROR;
    pctl_bind_i64(st, 1, run_id);
    pctl_bind_text(st, 2, run_uid);
    pctl_bind_text(st, 3, step);
    pctl_bind_i64(st, 4, attempt);
    rc = pctl_step(st);
    if (rc == PCTL_ROW)
        *out = pctl_col_int(st, 0) != 0;
    pctl_reset(st);
    return rc == PCTL_ROW || rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}
