/* attempts.c - tries of steps beyond their status: the output of a try
 * that runs, and what the store tells a starting engine about attempts a
 * dead one ran (whether one was stopped, so its processes must go). */
#include "core/alloc.h"
#include "store/store.h"

/* Runs q, one of the statements that ask a yes or no of one try (run id,
 * run uid, step, attempt), and sets *out to its one column (0 when there
 * is no row). */
static int ask_try(int *out, planctl *p, pctl_query q, int64_t run_id,
                   const char *run_uid, const char *step, int attempt)
{
    pctl_stmt *st = pctl_q(p, q);
    int rc;

    *out = 0;
    if (!st)
        return pctl_q_err(p);
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

int pctl_attempt_stopped(int *out, planctl *p, int64_t run_id,
                         const char *run_uid, const char *step, int attempt)
{
    return ask_try(out, p, PCTL_Q_attempt_stopped, run_id, run_uid, step,
                   attempt);
}

int pctl_attempt_ended(int *out, planctl *p, int64_t run_id,
                       const char *run_uid, const char *step, int attempt)
{
    return ask_try(out, p, PCTL_Q_attempt_ended, run_id, run_uid, step,
                   attempt);
}

int pctl_output_bytes_record(planctl *p, int64_t step_id, int attempt,
                             int64_t bytes)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_output_bytes_put);

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, step_id);
    pctl_bind_i64(st, 2, attempt);
    pctl_bind_i64(st, 3, bytes);
    return pctl_q_exec(st);
}

int pctl_attempt_output_put(planctl *p, const pctl_live_output *out)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_attempt_live_output);
    int rc;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, out->step_id);
    pctl_bind_i64(st, 2, out->attempt);
    pctl_bind_text(st, 3, out->output);
    if ((rc = pctl_q_exec(st)) == 0 && pctl_changes(st) > 0)
        rc =
            pctl_output_bytes_record(p, out->step_id, out->attempt, out->bytes);
    return rc;
}

int pctl_attempt_live_output(planctl *p, int64_t token,
                             const pctl_live_output *out, size_t n)
{
    size_t i;
    int rc;

    if ((rc = pctl_engine_tx_begin(p, token)) < 0)
        return rc;
    for (i = 0; i < n && rc == 0; i++)
        rc = pctl_attempt_output_put(p, &out[i]);
    return pctl_tx_end(p, rc);
}

int pctl_attempt_kept_output(char **out, int64_t *bytes, planctl *p,
                             int64_t step_id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_attempt_kept_output);
    int rc;

    *out = NULL;
    *bytes = -1;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, step_id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW && !pctl_col_null(st, 0)) {
        if (!(*out = pctl_strdup(pctl_col_text(st, 0)))) {
            pctl_reset(st);
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        }
        if (!pctl_col_null(st, 1))
            *bytes = pctl_col_i64(st, 1);
    }
    pctl_reset(st);
    return rc == PCTL_ROW || rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}
