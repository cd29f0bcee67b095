/* feed.c - the event log read as a change feed (see feed.h). */
#include "store/feed.h"

#include <string.h>

#include "core/alloc.h"
#include "store/store.h"

int pctl_feed_last(int64_t *out, planctl *p)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_feed_last);
    int rc;

    *out = 0;
    if (!st)
        return PLANCTL_ERROR;
    rc = pctl_step(st);
    if (rc == PCTL_ROW)
        *out = pctl_col_i64(st, 0);
    pctl_reset(st);
    return rc == PCTL_ROW ? 0 : pctl_q_fail(st, rc);
}

/* Reads the groups of events in (after, f->last]; *count receives how
 * many events they hold. */
static int read_groups(pctl_feed *f, planctl *p, int64_t after, int64_t *count)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_feed_since);
    size_t caprun = 0, capinst = 0;
    int rc = 0, step;

    *count = 0;
    if (!st)
        return PLANCTL_ERROR;
    pctl_bind_i64(st, 1, after);
    pctl_bind_i64(st, 2, f->last);
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        *count += pctl_col_i64(st, 2);
        if (!pctl_col_null(st, 0))
            rc =
                pctl_push_id(&f->runs, &f->nruns, &caprun, pctl_col_i64(st, 0));
        else if (!pctl_col_null(st, 1))
            rc = pctl_push_id(&f->instances, &f->ninstances, &capinst,
                              pctl_col_i64(st, 1));
    }
    pctl_reset(st);
    if (rc < 0)
        return pctl_err(p, rc, "out of memory");
    return step == PCTL_DONE ? 0 : pctl_q_fail(st, step);
}

int pctl_feed_read(pctl_feed *out, planctl *p, int64_t after)
{
    int64_t count = 0;
    int rc, began;

    memset(out, 0, sizeof *out);
    rc = pctl_tx_read(p);
    began = rc == 0;
    if (rc == 0)
        rc = pctl_feed_last(&out->last, p);
    if (rc == 0 && out->last > after)
        rc = read_groups(out, p, after, &count);
    if (began)
        pctl_tx_read_end(p);
    if (rc < 0) {
        pctl_feed_clear(out);
        return rc;
    }
    /* Numbers never go back and leave no hole: fewer events than numbers,
     * or a newest older than the reader's, means some were removed. */
    if (out->last < after || count != out->last - after) {
        int64_t last = out->last;

        pctl_feed_clear(out);
        out->last = last;
        out->gap = 1;
    }
    return 0;
}

void pctl_feed_clear(pctl_feed *f)
{
    pctl_free(f->runs);
    pctl_free(f->instances);
    memset(f, 0, sizeof *f);
}
