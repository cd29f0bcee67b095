/*
 * active.c - reading the active runs, with their phases and steps, in the
 * shape the engine decides them (store/active.h); the engine keeps them
 * between passes (engine/cache.c).
 *
 * Each run owns its arrays (phase views and rows, step views and rows), so
 * a run can be dropped or added without touching the others.
 */
#include "store/active.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/idmap.h"
#include "core/status.h"
#include "store/store.h"

static char *col_dup(pctl_stmt *st, int i)
{
    const char *s = pctl_col_text(st, i);

    return s ? pctl_strdup(s) : NULL;
}

static int parse_status(planctl *p, pctl_stmt *st, int i, planctl_status *out)
{
    if (planctl_status_parse(out, pctl_col_text(st, i)) < 0)
        return pctl_err(p, PLANCTL_EIO,
                        "unknown status \"%s\" in the "
                        "database",
                        pctl_col_text(st, i));
    return 0;
}

/* What the three reads return, before it is cut into runs. */
typedef struct tphase {
    int64_t run_id, idx;
    pctl_phase_view v;
    pctl_phase_row r;
} tphase;

typedef struct tstep {
    int64_t run_id, phase_id, phase_idx, idx;
    pctl_step_view v;
    pctl_step_row r;
} tstep;

typedef struct rows {
    pctl_run_row **runs;
    size_t nruns, capruns;
    tphase *phases;
    size_t nphases, capphases;
    tstep *steps;
    size_t nsteps, capsteps;
} rows;

void pctl_run_row_free(pctl_run_row *r)
{
    size_t pi, si;

    if (!r)
        return;
    for (pi = 0; r->phases && pi < r->view.nphases; pi++) {
        pctl_free(r->phases[pi].name);
        for (si = 0; r->phases[pi].steps && si < r->view.phases[pi].nsteps;
             si++) {
            pctl_free(r->phases[pi].steps[si].name);
            pctl_free(r->phases[pi].steps[si].message);
        }
    }
    if (r->phases) {
        pctl_free(r->phases[0].steps);
        pctl_free(r->view.phases[0].steps);
    }
    pctl_free(r->phases);
    pctl_free(r->view.phases);
    pctl_free(r->instance);
    pctl_free(r->plan);
    pctl_free(r->params);
    pctl_free(r->uid);
    pctl_free(r);
}

static void rows_free(rows *w)
{
    size_t i;

    for (i = 0; i < w->nruns; i++)
        pctl_run_row_free(w->runs[i]);
    for (i = 0; i < w->nphases; i++)
        pctl_free(w->phases[i].r.name);
    for (i = 0; i < w->nsteps; i++) {
        pctl_free(w->steps[i].r.name);
        pctl_free(w->steps[i].r.message);
    }
    pctl_free(w->runs);
    pctl_free(w->phases);
    pctl_free(w->steps);
    memset(w, 0, sizeof *w);
}

/* Steps st (bound already) and adds its rows. */
static int read_runs(rows *w, planctl *p, pctl_stmt *st)
{
    int rc = 0, step;

    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        pctl_run_row *r;

        if (pctl_grow((void **)&w->runs, w->nruns, &w->capruns,
                      sizeof *w->runs) < 0 ||
            !(r = pctl_calloc(1, sizeof *r))) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        w->runs[w->nruns++] = r;
        r->id = pctl_col_i64(st, 0);
        r->instance_id = pctl_col_i64(st, 1);
        r->instance = col_dup(st, 2);
        r->plan = col_dup(st, 3);
        rc = parse_status(p, st, 4, &r->view.status);
        r->definition_id = pctl_col_i64(st, 5);
        r->params = col_dup(st, 6);
        r->view.deadline_at = r->deadline_at = pctl_col_i64(st, 7);
        r->uid = col_dup(st, 8);
        r->event_count = pctl_col_i64(st, 9);
        r->view.event_limit = r->event_count >= p->run_events_max;
        if (rc == 0 && (!r->instance || !r->plan || !r->params || !r->uid))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    return rc;
}

static int read_phases(rows *w, planctl *p, pctl_stmt *st)
{
    int rc = 0, step;

    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        tphase *t;
        const char *strategy;

        if (pctl_grow((void **)&w->phases, w->nphases, &w->capphases,
                      sizeof *w->phases) < 0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        t = &w->phases[w->nphases++];
        memset(t, 0, sizeof *t);
        t->run_id = pctl_col_i64(st, 0);
        t->r.id = pctl_col_i64(st, 1);
        t->idx = pctl_col_i64(st, 2);
        t->r.name = col_dup(st, 3);
        strategy = pctl_col_text(st, 4);
        t->v.strategy = strategy && strcmp(strategy, "parallel") == 0
                            ? PCTL_STRATEGY_PARALLEL
                            : PCTL_STRATEGY_SERIAL;
        rc = parse_status(p, st, 5, &t->v.status);
        if (rc == 0 && !t->r.name)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    return rc;
}

static int read_steps(rows *w, planctl *p, pctl_stmt *st)
{
    int rc = 0, step;

    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        tstep *t;

        if (pctl_grow((void **)&w->steps, w->nsteps, &w->capsteps,
                      sizeof *w->steps) < 0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        t = &w->steps[w->nsteps++];
        memset(t, 0, sizeof *t);
        t->run_id = pctl_col_i64(st, 0);
        t->phase_id = pctl_col_i64(st, 1);
        t->r.id = pctl_col_i64(st, 2);
        t->idx = pctl_col_i64(st, 3);
        t->r.name = col_dup(st, 4);
        rc = parse_status(p, st, 5, &t->v.status);
        t->v.attempt = t->r.attempt = pctl_col_int(st, 6);
        t->v.max_attempts = pctl_col_int(st, 7);
        t->v.next_attempt_at = pctl_col_i64(st, 8);
        t->v.deadline_at = pctl_col_i64(st, 9);
        t->r.task_index = pctl_col_int(st, 10);
        if (!pctl_col_null(st, 11))
            t->r.message = col_dup(st, 11);
        if (rc == 0 && !t->r.name)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    return rc;
}

/* The reads come unordered: SQLite would sort them through a temporary
 * b-tree holding every column (half the time of a load of 1,000 runs);
 * sorting the structs here costs little. */
static int cmp_i64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

static int run_order(const void *x, const void *y)
{
    const pctl_run_row *a = *(pctl_run_row *const *)x;
    const pctl_run_row *b = *(pctl_run_row *const *)y;

    return cmp_i64(a->id, b->id);
}

static int phase_order(const void *x, const void *y)
{
    const tphase *a = x, *b = y;

    return a->run_id != b->run_id ? cmp_i64(a->run_id, b->run_id)
                                  : cmp_i64(a->idx, b->idx);
}

static int step_order(const void *x, const void *y)
{
    const tstep *a = x, *b = y;

    if (a->run_id != b->run_id)
        return cmp_i64(a->run_id, b->run_id);
    return a->phase_idx != b->phase_idx ? cmp_i64(a->phase_idx, b->phase_idx)
                                        : cmp_i64(a->idx, b->idx);
}

/* Each step's phase index, from the phases read (an id map from phase
 * id to index + 1); a step of a phase not read gets -1, which
 * build_run() refuses.  0, or ENOMEM. */
static int place_steps(rows *w)
{
    pctl_idmap m = PCTL_IDMAP_INIT;
    size_t i;

    for (i = 0; i < w->nphases; i++)
        if (pctl_idmap_put(&m, w->phases[i].r.id,
                           (void *)(uintptr_t)(w->phases[i].idx + 1)) < 0) {
            pctl_idmap_free(&m);
            return PLANCTL_ENOMEM;
        }
    for (i = 0; i < w->nsteps; i++)
        w->steps[i].phase_idx =
            (int64_t)(uintptr_t)pctl_idmap_get(&m, w->steps[i].phase_id) - 1;
    pctl_idmap_free(&m);
    return 0;
}

static int sort_rows(rows *w, planctl *p)
{
    if (place_steps(w) < 0)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (w->nruns > 1)
        qsort(w->runs, w->nruns, sizeof *w->runs, run_order);
    if (w->nphases > 1)
        qsort(w->phases, w->nphases, sizeof *w->phases, phase_order);
    if (w->nsteps > 1)
        qsort(w->steps, w->nsteps, sizeof *w->steps, step_order);
    return 0;
}

/* Gives run r its phases w->phases[*pi..] and steps w->steps[*si..] (in
 * (run id, phase idx, step idx) order after sort_rows(), as the runs are),
 * moving the strings over.  Advances *pi and *si. */
static int build_run(pctl_run_row *r, planctl *p, rows *w, size_t *pi,
                     size_t *si)
{
    size_t first = *pi, sfirst = *si, np, ns, k, n;
    pctl_step_view *sv;
    pctl_step_row *sr;

    while (*pi < w->nphases && w->phases[*pi].run_id == r->id)
        (*pi)++;
    np = *pi - first;
    while (*si < w->nsteps && w->steps[*si].run_id == r->id)
        (*si)++;
    ns = *si - sfirst;
    if (np == 0)
        return pctl_err(p, PLANCTL_EIO, "run %lld has no phases",
                        (long long)r->id);
    /* Phase k's steps are the slice with phase_idx == k, none empty. */
    for (k = 0, n = 0; k < np; k++) {
        size_t start = n;

        while (n < ns && w->steps[sfirst + n].phase_idx == (int64_t)k)
            n++;
        if (n == start)
            return pctl_err(p, PLANCTL_EIO, "run %lld phase %zu has no steps",
                            (long long)r->id, k);
    }
    if (n != ns)
        return pctl_err(p, PLANCTL_EIO, "run %lld has steps out of its phases",
                        (long long)r->id);
    r->view.phases = pctl_calloc(np, sizeof *r->view.phases);
    r->phases = pctl_calloc(np, sizeof *r->phases);
    sv = pctl_calloc(ns, sizeof *sv);
    sr = pctl_calloc(ns, sizeof *sr);
    if (!r->view.phases || !r->phases || !sv || !sr) {
        pctl_free(sv);
        pctl_free(sr);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    for (k = 0; k < ns; k++) {
        sv[k] = w->steps[sfirst + k].v;
        sr[k] = w->steps[sfirst + k].r;
        w->steps[sfirst + k].r.name = NULL;
        w->steps[sfirst + k].r.message = NULL;
    }
    r->view.nphases = np;
    for (k = 0, n = 0; k < np; k++) {
        size_t start = n;

        r->view.phases[k] = w->phases[first + k].v;
        r->phases[k] = w->phases[first + k].r;
        r->phases[k].run = r;
        w->phases[first + k].r.name = NULL;
        while (n < ns && w->steps[sfirst + n].phase_idx == (int64_t)k)
            sr[n++].phase = &r->phases[k];
        r->view.phases[k].steps = sv + start;
        r->phases[k].steps = sr + start;
        r->view.phases[k].nsteps = n - start;
    }
    return 0;
}

/* Cuts the reads into runs: *out receives w's runs, sorted by id, and w
 * keeps nothing of them. */
static int cut_runs(pctl_run_row ***out, size_t *n, planctl *p, rows *w)
{
    size_t i, pi = 0, si = 0;
    int rc = 0;

    for (i = 0; rc == 0 && i < w->nruns; i++)
        rc = build_run(w->runs[i], p, w, &pi, &si);
    if (rc < 0)
        return rc;
    *out = w->runs;
    *n = w->nruns;
    w->runs = NULL;
    w->nruns = w->capruns = 0;
    return 0;
}

void pctl_run_rows_free(pctl_run_row **v, size_t n)
{
    size_t i;

    for (i = 0; v && i < n; i++)
        pctl_run_row_free(v[i]);
    pctl_free(v);
}

/* q with the engine's id bound to parameter i. */
static pctl_stmt *fleet_q(planctl *p, pctl_query q, int i)
{
    pctl_stmt *st = pctl_q(p, q);

    if (st && p->fleet_id)
        pctl_bind_i64(st, i, p->fleet_id);
    return st;
}

int pctl_active_read(pctl_run_row ***out, size_t *n, planctl *p)
{
    pctl_stmt *st;
    rows w;
    int rc, began;

    *out = NULL;
    *n = 0;
    memset(&w, 0, sizeof w);
    /* One snapshot for the three reads. */
    rc = pctl_tx_read(p);
    began = rc == 0;
    /* ?1, where several engines share the database: the engine's id, for
     * the runs it holds (fleet.c); unused on SQLite. */
    if (rc == 0)
        rc = (st = fleet_q(p, PCTL_Q_active_runs, 1)) ? read_runs(&w, p, st)
                                                      : PLANCTL_ERROR;
    if (rc == 0)
        rc = (st = fleet_q(p, PCTL_Q_active_phases, 1)) ? read_phases(&w, p, st)
                                                        : PLANCTL_ERROR;
    if (rc == 0)
        rc = (st = fleet_q(p, PCTL_Q_active_steps, 1)) ? read_steps(&w, p, st)
                                                       : PLANCTL_ERROR;
    if (began)
        pctl_tx_read_end(p);
    if (rc == 0 && (rc = sort_rows(&w, p)) == 0)
        rc = cut_runs(out, n, p, &w);
    rows_free(&w);
    return rc;
}

int pctl_active_read_run(pctl_run_row **out, planctl *p, int64_t run_id)
{
    static const pctl_query q[3] = {PCTL_Q_active_run_by_id,
                                    PCTL_Q_active_phases_of_run,
                                    PCTL_Q_active_steps_of_run};
    pctl_run_row **v = NULL;
    pctl_stmt *st[3];
    size_t n = 0;
    rows w;
    int rc = 0, i;

    *out = NULL;
    memset(&w, 0, sizeof w);
    /* The three reads sent together where the backend can (one round
     * trip on PostgreSQL, inside an engine's pass), then read. */
    for (i = 0; rc == 0 && i < 3; i++) {
        if (!(st[i] = pctl_q(p, q[i]))) {
            rc = pctl_q_err(p);
            break;
        }
        pctl_bind_i64(st[i], 1, run_id);
        if (i == 0)
            pctl_bind_i64(st[i], 2, p->fleet_id);
        rc = pctl_q_send(st[i]);
    }
    for (i = 0; rc == 0 && i < 3; i++) {
        rc = i == 0   ? read_runs(&w, p, st[i])
             : i == 1 ? read_phases(&w, p, st[i])
                      : read_steps(&w, p, st[i]);
        if (i == 0 && w.nruns == 0)
            break; /* not active (any more) */
    }
    if (rc == 0 && (rc = sort_rows(&w, p)) == 0)
        rc = cut_runs(&v, &n, p, &w);
    if (rc == 0 && n == 1) {
        *out = v[0];
        v[0] = NULL;
    }
    pctl_run_rows_free(v, n);
    rows_free(&w);
    return rc;
}

int pctl_active_read_runs(pctl_run_row ***out, size_t *n, planctl *p,
                          const int64_t *ids, size_t nids)
{
    static const pctl_query q[3] = {PCTL_Q_active_runs_by_ids,
                                    PCTL_Q_active_phases_of_runs,
                                    PCTL_Q_active_steps_of_runs};
    pctl_buf json = PCTL_BUF_INIT;
    pctl_stmt *st[3];
    rows w;
    int rc = 0, i;

    *out = NULL;
    *n = 0;
    memset(&w, 0, sizeof w);
    if (pctl_buf_ids_json(&json, ids, nids) < 0)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* Sent together where the backend can, then read: one round trip for
     * the three, however many runs.  Each reads only the runs that are
     * active (and the engine's), so the three agree. */
    for (i = 0; rc == 0 && i < 3; i++) {
        if (!(st[i] = pctl_q(p, q[i]))) {
            rc = pctl_q_err(p);
            break;
        }
        pctl_bind_text(st[i], 1, json.s);
        pctl_bind_i64(st[i], 2, p->fleet_id);
        rc = pctl_q_send(st[i]);
    }
    for (i = 0; rc == 0 && i < 3; i++)
        rc = i == 0   ? read_runs(&w, p, st[i])
             : i == 1 ? read_phases(&w, p, st[i])
                      : read_steps(&w, p, st[i]);
    if (rc == 0 && (rc = sort_rows(&w, p)) == 0)
        rc = cut_runs(out, n, p, &w);
    rows_free(&w);
    pctl_buf_free(&json);
    return rc;
}

int pctl_step_set_task(planctl *p, int64_t step_id, int task_index, int attempt,
                       const char *outputs)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_step_set_task);
    int rc;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, step_id);
    pctl_bind_i64(st, 2, task_index);
    if ((rc = pctl_q_exec(st)) < 0)
        return rc;
    if (pctl_changes(st) != 1) {
        pctl_observed_missed(p);
        return 0; /* not IN_PROGRESS: not ours to record for */
    }
    if (outputs && (rc = pctl_outputs_record(p, step_id, attempt, outputs)) < 0)
        return rc;
    pctl_observed_task(p, step_id, task_index);
    return 0;
}
