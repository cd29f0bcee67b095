/* task_outputs.c - the task_outputs table (migration 0004): written by the
 * gate, admission and import, read back for the tasks that use them (see
 * core/outputs.h for their form). */
#include <jansson.h>

#include "core/alloc.h"
#include "store/store.h"

int pctl_run_outputs(json_t **out, planctl *p, int64_t run_id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_run_outputs);
    int rc = 0, step;

    *out = NULL;
    if (!st)
        return pctl_q_err(p);
    if (!(*out = json_object()))
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    pctl_bind_i64(st, 1, run_id);
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        json_t *v = json_loads(pctl_col_text(st, 1), 0, NULL);

        /* Only the gate and admission write the column, as an object. */
        if (json_is_object(v))
            rc = json_object_set_new(*out, pctl_col_text(st, 0), v) < 0
                     ? pctl_err(p, PLANCTL_ENOMEM, "out of memory")
                     : 0;
        else
            json_decref(v);
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    if (rc < 0) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

int pctl_attempt_outputs_text(char **out, planctl *p, int64_t step_id,
                              int number)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_attempt_outputs);
    int rc;

    *out = NULL;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, step_id);
    pctl_bind_i64(st, 2, number);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        const char *text = pctl_col_text(st, 0); /* NOT NULL */

        if (!text || !(*out = pctl_strdup(text)))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    pctl_reset(st);
    return rc < 0 ? rc : 0; /* the message is set */
}

int pctl_attempt_outputs(json_t **out, planctl *p, int64_t step_id, int number)
{
    char *text;
    int rc = pctl_attempt_outputs_text(&text, p, step_id, number);

    *out = text ? json_loads(text, 0, NULL) : NULL;
    pctl_free(text);
    if (*out && !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

int pctl_outputs_record(planctl *p, int64_t step_id, int attempt,
                        const char *outputs)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_outputs_put);

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, step_id);
    pctl_bind_i64(st, 2, attempt);
    pctl_bind_text(st, 3, outputs);
    return pctl_q_exec(st);
}
