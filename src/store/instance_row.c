/* instance_row.c - one instance's row read by name: what creating,
 * changing and deleting instances (instances.c) and bundles (bundle.c)
 * both start from, kept below them both. */
#include <string.h>

#include "core/alloc.h"
#include "store/store.h"

void pctl_instance_row_clear(pctl_instance_row *r)
{
    pctl_free(r->params);
    memset(r, 0, sizeof *r);
}

int pctl_instance_get(pctl_instance_row *out, planctl *p, const char *name)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_instance_by_name);
    int rc;

    memset(out, 0, sizeof *out);
    if (!st)
        return pctl_q_err(p);
    pctl_bind_text(st, 1, name);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        out->id = pctl_col_i64(st, 0);
        out->definition_id = pctl_col_i64(st, 1);
        out->params = pctl_strdup(pctl_col_text(st, 2));
        out->deleting = pctl_col_int(st, 3);
        pctl_reset(st);
        if (!out->params)
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        return 0;
    }
    pctl_reset(st);
    if (rc != PCTL_DONE)
        return pctl_q_fail(st, rc);
    return PLANCTL_ENOTFOUND;
}

int pctl_instance_find(pctl_instance_row *out, planctl *p, const char *name)
{
    int rc = pctl_instance_get(out, p, name);

    return rc == PLANCTL_ENOTFOUND ? pctl_err_no_instance(p, name) : rc;
}
