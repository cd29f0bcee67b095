/* active.c - reading the active runs, phases and steps for a pass. */
#include "store/active.h"

#include <string.h>

#include "core/alloc.h"
#include "store/store.h"

/* Grows *v (of n items of size sz, capacity *cap) to hold one more. */
static int grow(void **v, size_t n, size_t *cap, size_t sz)
{
    void *nv;
    size_t ncap;

    if (n < *cap)
        return 0;
    ncap = *cap ? *cap * 2 : 16;
    nv = pctl_realloc(*v, ncap * sz);
    if (!nv)
        return PLANCTL_ENOMEM;
    *v = nv;
    *cap = ncap;
    return 0;
}

static char *col_dup(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);

    return s ? pctl_strdup(s) : NULL;
}

static int parse_status(planctl *p, sqlite3_stmt *st, int i,
                        planctl_status *out)
{
    if (planctl_status_parse(out, (const char *)sqlite3_column_text(st, i)) < 0)
        return pctl_err(p, PLANCTL_EIO,
                        "unknown status \"%s\" in the "
                        "database",
                        sqlite3_column_text(st, i));
    return 0;
}

static int load_runs(pctl_active *a, planctl *p)
{
    sqlite3_stmt *st = pctl_stmt(p, PCTL_Q_active_runs);
    size_t cap = 0;
    int rc = 0, step;

    if (!st)
        return PLANCTL_ERROR;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        pctl_run_row *r;

        if (grow((void **)&a->runs, a->nruns, &cap, sizeof *a->runs) < 0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        r = &a->runs[a->nruns++];
        memset(r, 0, sizeof *r);
        r->id = sqlite3_column_int64(st, 0);
        r->instance_id = sqlite3_column_int64(st, 1);
        r->instance = col_dup(st, 2);
        r->plan = col_dup(st, 3);
        rc = parse_status(p, st, 4, &r->view.status);
        r->definition_id = sqlite3_column_int64(st, 5);
        r->params = col_dup(st, 6);
        r->view.deadline_at = sqlite3_column_int64(st, 7);
        r->uid = col_dup(st, 8);
        if (rc == 0 && (!r->instance || !r->plan || !r->params || !r->uid))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = pctl_sqlerr(p, step, "reading active runs");
    sqlite3_reset(st);
    return rc;
}

static int load_phases(pctl_active *a, planctl *p, int64_t **phase_run)
{
    sqlite3_stmt *st = pctl_stmt(p, PCTL_Q_active_phases);
    size_t cap_v = 0, cap_r = 0, cap_a = 0;
    int rc = 0, step;

    if (!st)
        return PLANCTL_ERROR;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        pctl_phase_view *v;
        pctl_phase_row *r;
        const char *strategy;

        if (grow((void **)&a->phase_views, a->nphases, &cap_v,
                 sizeof *a->phase_views) < 0 ||
            grow((void **)&a->phase_rows, a->nphases, &cap_r,
                 sizeof *a->phase_rows) < 0 ||
            grow((void **)phase_run, a->nphases, &cap_a, sizeof **phase_run) <
                0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        v = &a->phase_views[a->nphases];
        r = &a->phase_rows[a->nphases];
        memset(v, 0, sizeof *v);
        memset(r, 0, sizeof *r);
        (*phase_run)[a->nphases++] = sqlite3_column_int64(st, 0);
        r->id = sqlite3_column_int64(st, 1);
        r->name = col_dup(st, 3);
        strategy = (const char *)sqlite3_column_text(st, 4);
        v->strategy = strategy && strcmp(strategy, "parallel") == 0
                          ? PCTL_STRATEGY_PARALLEL
                          : PCTL_STRATEGY_SERIAL;
        rc = parse_status(p, st, 5, &v->status);
        if (rc == 0 && !r->name)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = pctl_sqlerr(p, step, "reading active phases");
    sqlite3_reset(st);
    return rc;
}

static int load_steps(pctl_active *a, planctl *p, int64_t **step_run,
                      int64_t **step_phase)
{
    sqlite3_stmt *st = pctl_stmt(p, PCTL_Q_active_steps);
    size_t cap_v = 0, cap_r = 0, cap_a = 0, cap_b = 0;
    int rc = 0, step;

    if (!st)
        return PLANCTL_ERROR;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        pctl_step_view *v;
        pctl_step_row *r;
        size_t n = a->nsteps;

        if (grow((void **)&a->step_views, n, &cap_v, sizeof *a->step_views) <
                0 ||
            grow((void **)&a->step_rows, n, &cap_r, sizeof *a->step_rows) < 0 ||
            grow((void **)step_run, n, &cap_a, sizeof **step_run) < 0 ||
            grow((void **)step_phase, n, &cap_b, sizeof **step_phase) < 0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        v = &a->step_views[n];
        r = &a->step_rows[n];
        memset(v, 0, sizeof *v);
        memset(r, 0, sizeof *r);
        a->nsteps++;
        (*step_run)[n] = sqlite3_column_int64(st, 0);
        (*step_phase)[n] = sqlite3_column_int64(st, 1);
        r->id = sqlite3_column_int64(st, 2);
        r->name = col_dup(st, 4);
        rc = parse_status(p, st, 5, &v->status);
        v->attempt = sqlite3_column_int(st, 6);
        v->max_attempts = sqlite3_column_int(st, 7);
        v->next_attempt_at = sqlite3_column_int64(st, 8);
        v->deadline_at = sqlite3_column_int64(st, 9);
        r->task_index = sqlite3_column_int(st, 10);
        if (sqlite3_column_type(st, 11) != SQLITE_NULL)
            r->message = col_dup(st, 11);
        if (rc == 0 && !r->name)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = pctl_sqlerr(p, step, "reading active steps");
    sqlite3_reset(st);
    return rc;
}

/* Phases and steps come in (run id, phase idx, step idx) order, the same
 * order as the runs, so one walk assigns each run its phases and each phase
 * its steps. */
static int slice(pctl_active *a, planctl *p, const int64_t *phase_run,
                 const int64_t *step_run, const int64_t *step_phase)
{
    size_t ri, pi = 0, si = 0;

    for (ri = 0; ri < a->nruns; ri++) {
        pctl_run_row *r = &a->runs[ri];
        size_t first = pi, k;

        while (pi < a->nphases && phase_run[pi] == r->id)
            pi++;
        if (pi == first)
            return pctl_err(p, PLANCTL_EIO, "run %lld has no phases",
                            (long long)r->id);
        r->view.nphases = pi - first;
        r->view.phases = &a->phase_views[first];
        r->phases = &a->phase_rows[first];
        if (r->view.nphases > a->max_children)
            a->max_children = r->view.nphases;
        for (k = 0; k < r->view.nphases; k++) {
            size_t sfirst = si;

            while (si < a->nsteps && step_run[si] == r->id &&
                   step_phase[si] == (int64_t)k)
                si++;
            if (si == sfirst)
                return pctl_err(p, PLANCTL_EIO,
                                "run %lld phase %zu has no steps",
                                (long long)r->id, k);
            r->view.phases[k].nsteps = si - sfirst;
            r->view.phases[k].steps = &a->step_views[sfirst];
            r->phases[k].steps = &a->step_rows[sfirst];
            if (si - sfirst > a->max_children)
                a->max_children = si - sfirst;
        }
    }
    return 0;
}

int pctl_active_load(pctl_active **out, planctl *p)
{
    pctl_active *a = pctl_calloc(1, sizeof *a);
    int64_t *phase_run = NULL, *step_run = NULL, *step_phase = NULL;
    int rc, began;

    *out = NULL;
    if (!a)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* One snapshot for the three reads (unless the caller's transaction
     * already gives one). */
    began = p->tx_depth == 0;
    rc = began ? pctl_exec(p, "BEGIN") : 0;
    if (rc == 0)
        rc = load_runs(a, p);
    if (rc == 0)
        rc = load_phases(a, p, &phase_run);
    if (rc == 0)
        rc = load_steps(a, p, &step_run, &step_phase);
    if (began)
        sqlite3_exec(p->db, "COMMIT", NULL, NULL, NULL);
    if (rc == 0)
        rc = slice(a, p, phase_run, step_run, step_phase);
    pctl_free(phase_run);
    pctl_free(step_run);
    pctl_free(step_phase);
    if (rc < 0) {
        pctl_active_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

void pctl_active_free(pctl_active *a)
{
    size_t i;

    if (!a)
        return;
    for (i = 0; i < a->nruns; i++) {
        pctl_free(a->runs[i].instance);
        pctl_free(a->runs[i].plan);
        pctl_free(a->runs[i].params);
        pctl_free(a->runs[i].uid);
    }
    for (i = 0; i < a->nphases; i++)
        pctl_free(a->phase_rows[i].name);
    for (i = 0; i < a->nsteps; i++) {
        pctl_free(a->step_rows[i].name);
        pctl_free(a->step_rows[i].message);
    }
    pctl_free(a->runs);
    pctl_free(a->phase_views);
    pctl_free(a->phase_rows);
    pctl_free(a->step_views);
    pctl_free(a->step_rows);
    pctl_free(a);
}
