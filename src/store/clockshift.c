/*
 * clockshift.c - moving the pending times of active runs when an engine's
 * clock follows a wall clock that jumped (engine.c).
 *
 * Inside one engine every duration is measured on the monotonic clock; the
 * times it records are wall-clock times, so that they mean something to a
 * person and survive a restart.  When the wall clock is set forward or
 * back while an engine runs, the engine moves its own clock with it and,
 * in one transaction, every deadline and next-try time of the active runs
 * by the same amount: a retry due in a minute is still due in a minute,
 * and 'planctl status' under the new clock says so.  Each instance that
 * has an active run gets an event saying by how much (data
 * {"clock_shift_ms": D}), from which replay moves the same rows, so verify
 * agrees.
 */
#include <stdio.h>

#include "core/alloc.h"
#include "core/def.h"
#include "store/store.h"

static int exec_shift(planctl *p, pctl_query q, int64_t delta)
{
    pctl_stmt *st = pctl_q(p, q);

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, delta);
    return pctl_q_exec(st);
}

int pctl_clock_shift(planctl *p, int64_t delta)
{
    char msg[160], dur[32], data[64];
    int64_t *ids = NULL;
    size_t n = 0, cap = 0, i;
    pctl_stmt *st;
    int rc, step;

    if (delta == 0)
        return 0;
    if (!(st = pctl_q(p, PCTL_Q_clock_shift_instances)))
        return pctl_q_err(p);
    rc = 0;
    while ((step = pctl_step(st)) == PCTL_ROW) {
        if (n == cap) {
            int64_t *nv;

            cap = cap ? cap * 2 : 16;
            if (!(nv = pctl_realloc(ids, cap * sizeof *nv))) {
                rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
                break;
            }
            ids = nv;
        }
        ids[n++] = pctl_col_i64(st, 0);
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    if (rc == 0)
        rc = exec_shift(p, PCTL_Q_clock_shift_runs, delta);
    if (rc == 0)
        rc = exec_shift(p, PCTL_Q_clock_shift_retries, delta);
    if (rc == 0)
        rc = exec_shift(p, PCTL_Q_clock_shift_timeouts, delta);
    pctl_duration_format(dur, sizeof dur, delta < 0 ? -delta : delta);
    snprintf(msg, sizeof msg,
             "the wall clock moved %s by %s; the deadlines and next tries of "
             "active runs moved with it",
             delta < 0 ? "back" : "forward", dur);
    snprintf(data, sizeof data, "{\"clock_shift_ms\":%lld}", (long long)delta);
    for (i = 0; rc == 0 && i < n; i++)
        rc = pctl_event_admin(p, ids[i], "instance", msg, "engine", data);
    pctl_free(ids);
    return rc;
}
