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

static int get_by(pctl_instance_row *out, planctl *p, pctl_query q,
                  const char *name)
{
    pctl_stmt *st = pctl_q(p, q);
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

int pctl_instance_get(pctl_instance_row *out, planctl *p, const char *name)
{
    return get_by(out, p, PCTL_Q_instance_by_name, name);
}

int pctl_instance_find_locked(pctl_instance_row *out, planctl *p,
                              const char *name)
{
    int rc = get_by(out, p, PCTL_Q_instance_by_name_locked, name);

    return rc == PLANCTL_ENOTFOUND ? pctl_err_no_instance(p, name) : rc;
}

int pctl_instance_lock(planctl *p, int64_t id)
{
    pctl_stmt *st;
    int rc;

    /* Only where writers commit beside each other is there a row lock to
     * take: SQLite's transaction holds the file (and an engine's pass
     * there saves the read). */
    if (!p->conn->m->fleet)
        return 0;
    if (!(st = pctl_q(p, PCTL_Q_instance_lock)))
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, id);
    rc = pctl_step(st);
    pctl_reset(st);
    return rc == PCTL_ROW || rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}

int pctl_instance_find(pctl_instance_row *out, planctl *p, const char *name)
{
    int rc = pctl_instance_get(out, p, name);

    return rc == PLANCTL_ENOTFOUND ? pctl_err_no_instance(p, name) : rc;
}
