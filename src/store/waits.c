/* waits.c - why an active run waits (run_waits): what its engine records
 * when the run starts or stops waiting, and what status reads of it; and,
 * for a run no engine holds (PostgreSQL), what the engines' rows say. */
#include <string.h>

#include "store/store.h"

int pctl_wait_put(planctl *p, int64_t run_id, const char *cause,
                  const char *kind, int concurrency)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_wait_put);

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    pctl_bind_text(st, 2, cause);
    pctl_bind_text(st, 3, kind);
    if (concurrency > 0)
        pctl_bind_i64(st, 4, concurrency);
    pctl_bind_i64(st, 5, pctl_now(p));
    return pctl_q_exec_later(st, -1);
}

int pctl_wait_delete(planctl *p, int64_t run_id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_wait_delete);

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    return pctl_q_exec_later(st, -1);
}

int pctl_waits_delete_held(planctl *p)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_waits_delete_held);

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, p->fleet_id);
    return pctl_q_exec(st);
}

/* Why active run run_id waits when no engine holds it, from the engines'
 * rows: every one holds as many active runs as its capacity, so none
 * claims it ({"cause":"capacity"}, since not known: null).  *out is NULL
 * when that is not so (no engine, or one with room, which claims the run
 * at its next pass).  Only where engines share a database. */
static int unheld_json(json_t **out, planctl *p, int64_t run_id)
{
    pctl_stmt *st;
    int rc;

    *out = NULL;
    if (!pctl_fleet_supported(p))
        return 0;
    if (!(st = pctl_q(p, PCTL_Q_wait_unheld)))
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    rc = pctl_step(st);
    pctl_reset(st);
    if (rc != PCTL_ROW && rc != PCTL_DONE)
        return pctl_q_fail(st, rc);
    if (rc == PCTL_DONE)
        return 0;
    *out = json_pack("{s:I, s:s, s:n, s:n, s:n}", "run", (json_int_t)run_id,
                     "cause", "capacity", "kind", "concurrency", "since");
    return *out ? 0 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
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
        return pctl_q_err(p);
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
    if (rc == PCTL_DONE) {
        if ((rc = unheld_json(&o, p, run_id)) < 0)
            return rc;
        if (o) {
            *out = o;
            return 0;
        }
    }
    *out = rc == PCTL_ROW ? o : json_null();
    return *out ? 0 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
}
