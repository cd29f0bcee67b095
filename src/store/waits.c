/* waits.c - why an active run waits (run_waits): what its engine records
 * when the run starts or stops waiting, and what status reads of it. */
#include <string.h>

#include "store/store.h"

int pctl_wait_put(planctl *p, int64_t run_id, const char *cause,
                  const char *kind, int concurrency)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_wait_put);

    if (!st)
        return PLANCTL_ERROR;
    pctl_bind_i64(st, 1, run_id);
    pctl_bind_text(st, 2, cause);
    pctl_bind_text(st, 3, kind);
    if (concurrency > 0)
        pctl_bind_i64(st, 4, concurrency);
    pctl_bind_i64(st, 5, pctl_now(p));
    return pctl_q_exec(st);
}

int pctl_wait_delete(planctl *p, int64_t run_id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_wait_delete);

    if (!st)
        return PLANCTL_ERROR;
    pctl_bind_i64(st, 1, run_id);
    return pctl_q_exec(st);
}

int pctl_waits_delete_held(planctl *p)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_waits_delete_held);

    if (!st)
        return PLANCTL_ERROR;
    pctl_bind_i64(st, 1, p->fleet_id);
    return pctl_q_exec(st);
}

int pctl_wait_json(json_t **out, planctl *p, int64_t run_id)
{
    pctl_stmt *st;
    json_t *o = NULL;
    int rc;

    *out = NULL;
    if (run_id <= 0) {
        *out = json_null();
        return 0;
    }
    if (!(st = pctl_q(p, PCTL_Q_wait_of_run)))
        return PLANCTL_ERROR;
    pctl_bind_i64(st, 1, run_id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW)
        o = json_pack("{s:I, s:o, s:o, s:o, s:o}", "run", (json_int_t)run_id,
                      "cause", pctl_col_json_text(st, 0), "kind",
                      pctl_col_json_text(st, 1), "concurrency",
                      pctl_col_null(st, 2) ? json_null()
                                           : json_integer(pctl_col_i64(st, 2)),
                      "since", pctl_col_json_time(st, 3));
    pctl_reset(st);
    if (rc != PCTL_ROW && rc != PCTL_DONE)
        return pctl_q_fail(st, rc);
    *out = rc == PCTL_ROW ? o : json_null();
    return *out ? 0 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
}
