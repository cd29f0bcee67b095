/* attempts.c - tries of steps beyond their status: the output of a try
 * that runs, and what the store tells a starting engine about attempts a
 * dead one ran (whether one was stopped, so its processes must go). */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

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

/* The most tries one statement asks about. */
#define TRIES_MAX 512

/* tries[0..n), n <= TRIES_MAX: ended[i] set for those the statement
 * names (by their place, from 1). */
static int ended_some(unsigned char *ended, planctl *p,
                      const pctl_try_ref *tries, size_t n)
{
    json_t *arr = json_array();
    char *text = NULL;
    pctl_stmt *st;
    size_t i;
    int rc = 0;

    for (i = 0; arr && i < n; i++)
        if (json_array_append_new(
                arr, json_pack("[I, s, s, i]", (json_int_t)tries[i].run_id,
                               tries[i].run_uid, tries[i].step,
                               tries[i].attempt)) < 0)
            break;
    if (!arr || i < n || !(text = json_dumps(arr, JSON_COMPACT))) {
        json_decref(arr);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    json_decref(arr);
    if (!(st = pctl_q(p, PCTL_Q_attempts_ended))) {
        free(text);
        return pctl_q_err(p);
    }
    pctl_bind_text(st, 1, text);
    while ((rc = pctl_step(st)) == PCTL_ROW) {
        int64_t k = pctl_col_i64(st, 0);

        if (k >= 1 && (size_t)k <= n)
            ended[k - 1] = 1;
    }
    pctl_reset(st);
    free(text);
    return rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}

int pctl_attempts_ended(unsigned char *ended, planctl *p,
                        const pctl_try_ref *tries, size_t n)
{
    size_t at, k;
    int rc = 0;

    memset(ended, 0, n);
    for (at = 0; rc == 0 && at < n; at += k) {
        k = n - at < TRIES_MAX ? n - at : TRIES_MAX;
        rc = ended_some(ended + at, p, tries + at, k);
    }
    return rc;
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
