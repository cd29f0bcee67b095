/*
 * active.c - the active runs, phases and steps for the engine's passes:
 * read in one snapshot, then kept in step with the database between
 * passes (see active.h for when the cache is trusted and when not).
 *
 * Each run owns its arrays (phase views and rows, step views and rows), so
 * a run can be dropped or added without touching the others.  Three id
 * maps (runs, phases, steps; core/idmap) lead from a row id to its row,
 * and each phase or step row to its parent, for the gate's reports and
 * the engine's lookups.
 */
#include "store/active.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/idmap.h"
#include "core/status.h"
#include "store/store.h"

struct pctl_active_cache {
    planctl *p; /* the handle it is attached to, or NULL */
    int stale;
    pctl_db_token seen; /* the database's change token at our last sync
                          (others) and commit (own) */
    uint64_t synced_tx; /* the transaction it was last synced in */
    int64_t *promoted;  /* runs promoted from the queue: read at the sync */
    size_t npromoted, cappromoted;
    pctl_idmap runs, phases, steps; /* to pctl_run/phase/step_row */
};

/* Where step row s sits: its run, its phase's index in the run and its
 * own in the phase.  Can't fail. */
static void step_place(pctl_run_row **run, size_t *pi, size_t *si,
                       const pctl_step_row *s)
{
    *run = s->phase->run;
    *pi = (size_t)(s->phase - (*run)->phases);
    *si = (size_t)(s - s->phase->steps);
}

/* ---- reading ---- */

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
    int64_t run_id, phase_idx, idx;
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

static void free_run(pctl_run_row *r)
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
        free_run(w->runs[i]);
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

        if (grow((void **)&w->runs, w->nruns, &w->capruns, sizeof *w->runs) <
                0 ||
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
        r->dirty = 1;
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

        if (grow((void **)&w->phases, w->nphases, &w->capphases,
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

        if (grow((void **)&w->steps, w->nsteps, &w->capsteps,
                 sizeof *w->steps) < 0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        t = &w->steps[w->nsteps++];
        memset(t, 0, sizeof *t);
        t->run_id = pctl_col_i64(st, 0);
        t->phase_idx = pctl_col_i64(st, 1);
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

static void sort_rows(rows *w)
{
    if (w->nruns > 1)
        qsort(w->runs, w->nruns, sizeof *w->runs, run_order);
    if (w->nphases > 1)
        qsort(w->phases, w->nphases, sizeof *w->phases, phase_order);
    if (w->nsteps > 1)
        qsort(w->steps, w->nsteps, sizeof *w->steps, step_order);
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

static int index_run(pctl_active *a, pctl_run_row *r)
{
    struct pctl_active_cache *c = a->cache;
    size_t pi, si;

    if (pctl_idmap_put(&c->runs, r->id, r) < 0)
        return PLANCTL_ENOMEM;
    if (r->view.nphases > a->max_children)
        a->max_children = r->view.nphases;
    for (pi = 0; pi < r->view.nphases; pi++) {
        if (pctl_idmap_put(&c->phases, r->phases[pi].id, &r->phases[pi]) < 0)
            return PLANCTL_ENOMEM;
        if (r->view.phases[pi].nsteps > a->max_children)
            a->max_children = r->view.phases[pi].nsteps;
        for (si = 0; si < r->view.phases[pi].nsteps; si++)
            if (pctl_idmap_put(&c->steps, r->phases[pi].steps[si].id,
                               &r->phases[pi].steps[si]) < 0)
                return PLANCTL_ENOMEM;
    }
    return 0;
}

static void unindex_run(pctl_active *a, pctl_run_row *r)
{
    struct pctl_active_cache *c = a->cache;
    size_t pi, si;

    pctl_idmap_del(&c->runs, r->id);
    for (pi = 0; pi < r->view.nphases; pi++) {
        pctl_idmap_del(&c->phases, r->phases[pi].id);
        for (si = 0; si < r->view.phases[pi].nsteps; si++)
            pctl_idmap_del(&c->steps, r->phases[pi].steps[si].id);
    }
}

/* Cuts the reads into runs and moves the runs into a (sorted by id, like
 * the reads). */
static int take_rows(pctl_active *a, planctl *p, rows *w)
{
    size_t i, pi = 0, si = 0, k;
    pctl_run_row **nv;
    int rc = 0;

    for (i = 0; rc == 0 && i < w->nruns; i++)
        rc = build_run(w->runs[i], p, w, &pi, &si);
    if (rc < 0)
        return rc;
    nv = pctl_realloc(a->runs, (a->nruns + w->nruns + 1) * sizeof *nv);
    if (!nv)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    a->runs = nv;
    for (i = 0; i < w->nruns; i++) {
        pctl_run_row *r = w->runs[i];

        if (index_run(a, r) < 0) {
            unindex_run(a, r);
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        }
        /* Usually at the end: ids grow. */
        k = a->nruns;
        while (k > 0 && a->runs[k - 1]->id > r->id)
            k--;
        memmove(&a->runs[k + 1], &a->runs[k], (a->nruns - k) * sizeof *a->runs);
        a->runs[k] = r;
        a->nruns++;
        w->runs[i] = NULL;
    }
    return 0;
}

static pctl_active *new_active(void)
{
    pctl_active *a = pctl_calloc(1, sizeof *a);

    if (a && !(a->cache = pctl_calloc(1, sizeof *a->cache))) {
        pctl_free(a);
        a = NULL;
    }
    return a;
}

int pctl_active_load(pctl_active **out, planctl *p)
{
    pctl_active *a = new_active();
    pctl_stmt *st;
    rows w;
    int rc = 0, began;

    *out = NULL;
    memset(&w, 0, sizeof w);
    if (!a)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* One snapshot for the three reads. */
    rc = pctl_tx_read(p);
    began = rc == 0;
    if (rc == 0)
        rc = (st = pctl_q(p, PCTL_Q_active_runs)) ? read_runs(&w, p, st)
                                                  : PLANCTL_ERROR;
    if (rc == 0)
        rc = (st = pctl_q(p, PCTL_Q_active_phases)) ? read_phases(&w, p, st)
                                                    : PLANCTL_ERROR;
    if (rc == 0)
        rc = (st = pctl_q(p, PCTL_Q_active_steps)) ? read_steps(&w, p, st)
                                                   : PLANCTL_ERROR;
    if (began)
        pctl_tx_read_end(p);
    if (rc == 0) {
        sort_rows(&w);
        rc = take_rows(a, p, &w);
    }
    rows_free(&w);
    if (rc < 0) {
        pctl_active_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

/* Reads one run (promoted from the queue) into the cache, if it is
 * active. */
static int load_one(pctl_active *a, planctl *p, int64_t run_id)
{
    static const pctl_query q[3] = {PCTL_Q_active_run_by_id,
                                    PCTL_Q_active_phases_of_run,
                                    PCTL_Q_active_steps_of_run};
    pctl_stmt *st;
    rows w;
    int rc = 0, i;

    memset(&w, 0, sizeof w);
    for (i = 0; rc == 0 && i < 3; i++) {
        if (!(st = pctl_q(p, q[i]))) {
            rc = PLANCTL_ERROR;
            break;
        }
        pctl_bind_i64(st, 1, run_id);
        rc = i == 0   ? read_runs(&w, p, st)
             : i == 1 ? read_phases(&w, p, st)
                      : read_steps(&w, p, st);
        if (i == 0 && w.nruns == 0)
            break; /* not active (any more) */
    }
    if (rc == 0)
        rc = take_rows(a, p, &w);
    rows_free(&w);
    return rc;
}

void pctl_active_free(pctl_active *a)
{
    size_t i;

    if (!a)
        return;
    for (i = 0; i < a->nruns; i++)
        free_run(a->runs[i]);
    pctl_free(a->runs);
    if (a->cache) {
        if (a->cache->p && a->cache->p->active == a)
            a->cache->p->active = NULL;
        pctl_idmap_free(&a->cache->runs);
        pctl_idmap_free(&a->cache->phases);
        pctl_idmap_free(&a->cache->steps);
        pctl_free(a->cache->promoted);
        pctl_free(a->cache);
    }
    pctl_free(a);
}

/* ---- the cache ---- */

void pctl_active_drop(pctl_active **cache, planctl *p)
{
    if (p && p->active == *cache)
        p->active = NULL;
    pctl_active_free(*cache);
    *cache = NULL;
}

/* Drops the runs that are no longer active. */
static void drop_ended(pctl_active *a)
{
    size_t i, k = 0;

    for (i = 0; i < a->nruns; i++) {
        pctl_run_row *r = a->runs[i];

        if (pctl_status_active(r->view.status)) {
            a->runs[k++] = r;
            continue;
        }
        unindex_run(a, r);
        free_run(r);
    }
    a->nruns = k;
}

int pctl_active_sync(pctl_active **cache, planctl *p)
{
    pctl_active *a = *cache;
    struct pctl_active_cache *c;
    pctl_db_token now = {0, 0};
    size_t i;
    int rc;

    rc = pctl_db_changes(&now, p, PCTL_TOKEN_OTHERS | PCTL_TOKEN_OWN);
    if (rc == 0 && a && !a->cache->stale &&
        now.others == a->cache->seen.others && now.own == a->cache->seen.own) {
        /* Nobody else wrote since our last commit: only our own changes
         * are left to follow. */
        size_t before = a->nruns;

        c = a->cache;
        drop_ended(a);
        if (a->nruns != before || c->npromoted > 0)
            a->members = 1;
        for (i = 0; rc == 0 && i < c->npromoted; i++)
            if (!pctl_idmap_get(&c->runs, c->promoted[i]))
                rc = load_one(a, p, c->promoted[i]);
        c->npromoted = 0;
        if (rc == 0) {
            c->synced_tx = p->tx_depth > 0 ? p->tx_serial : 0;
            return 0;
        }
    }
    pctl_active_drop(cache, p);
    if (rc < 0)
        return rc;
    if ((rc = pctl_active_load(&a, p)) < 0)
        return rc;
    a->cache->seen.others = now.others;
    a->cache->synced_tx = p->tx_depth > 0 ? p->tx_serial : 0;
    a->cache->p = p;
    a->fresh = a->members = 1;
    p->active = a;
    *cache = a;
    return 0;
}

void pctl_active_committed(pctl_active *a, planctl *p)
{
    pctl_db_token now;

    /* Only our own count is taken: another connection's commit after ours
     * must still be seen at the next sync. */
    if (a && pctl_db_changes(&now, p, PCTL_TOKEN_OWN) == 0)
        a->cache->seen.own = now.own;
    else if (a)
        a->cache->stale = 1;
}

int pctl_active_find_step(const pctl_active *a, int64_t step_id,
                          pctl_run_row **run, size_t *pi, size_t *si)
{
    const pctl_step_row *s =
        a ? pctl_idmap_get(&a->cache->steps, step_id) : NULL;

    if (!s)
        return 0;
    step_place(run, pi, si, s);
    return 1;
}

void pctl_active_touch(pctl_active *a, int64_t run_id)
{
    pctl_run_row *r = a ? pctl_idmap_get(&a->cache->runs, run_id) : NULL;

    if (r)
        r->dirty = 1;
}

void pctl_active_event_count(planctl *p, int64_t run_id, int64_t count)
{
    pctl_run_row *r;

    if (!p->active || !(r = pctl_idmap_get(&p->active->cache->runs, run_id)))
        return;
    r->event_count = count;
    if (count >= p->run_events_max && !r->view.event_limit) {
        r->view.event_limit = 1;
        r->dirty = 1;
    }
}

void pctl_active_distrust(planctl *p)
{
    if (p->active)
        p->active->cache->stale = 1;
}

int pctl_active_cached(const planctl *p, planctl_entity entity, int64_t id,
                       pctl_cached_row *out)
{
    const pctl_active *a = p->active;
    const struct pctl_active_cache *ac;
    const pctl_run_row *run;
    const pctl_phase_row *ph;
    const pctl_step_row *st;

    if (!a)
        return 0;
    ac = a->cache;
    if (ac->stale || ac->synced_tx == 0 || ac->synced_tx != p->tx_serial)
        return 0;
    memset(out, 0, sizeof *out);
    switch (entity) {
    case PLANCTL_ENTITY_STEP:
        if (!(st = pctl_idmap_get(&ac->steps, id)))
            return 0;
        out->phase_id = st->phase->id;
        out->attempt = st->attempt;
        run = st->phase->run;
        break;
    case PLANCTL_ENTITY_PHASE:
        if (!(ph = pctl_idmap_get(&ac->phases, id)))
            return 0;
        out->phase_id = id;
        run = ph->run;
        break;
    case PLANCTL_ENTITY_RUN:
        if (!(run = pctl_idmap_get(&ac->runs, id)))
            return 0;
        out->deadline_at = run->deadline_at;
        out->event_count = run->event_count;
        break;
    default:
        return 0;
    }
    out->run_id = run->id;
    out->instance_id = run->instance_id;
    return 1;
}

void pctl_active_note(planctl *p, const pctl_change *c, int64_t run_id,
                      int attempt, int64_t next_attempt_at, int64_t deadline_at,
                      int granted)
{
    pctl_active *a = p->active;
    struct pctl_active_cache *ac;
    pctl_run_row *run;
    pctl_phase_row *ph;

    if (!a)
        return;
    ac = a->cache;
    switch (c->entity) {
    case PLANCTL_ENTITY_STEP: {
        pctl_step_view *v;
        pctl_step_row *r;
        char *msg = NULL;
        size_t pi, si;

        r = pctl_idmap_get(&ac->steps, c->id);
        if (!r || r->phase->run->id != run_id ||
            (c->message && !(msg = pctl_strdup(c->message)))) {
            ac->stale = 1;
            return;
        }
        step_place(&run, &pi, &si, r);
        v = &run->view.phases[pi].steps[si];
        v->status = c->to;
        v->attempt = r->attempt = attempt;
        v->next_attempt_at = next_attempt_at;
        v->deadline_at = deadline_at;
        v->max_attempts += granted;
        pctl_free(r->message);
        r->message = msg;
        run->dirty = 1;
        return;
    }
    case PLANCTL_ENTITY_PHASE:
        ph = pctl_idmap_get(&ac->phases, c->id);
        if (!ph || ph->run->id != run_id) {
            ac->stale = 1;
            return;
        }
        ph->run->view.phases[ph - ph->run->phases].status = c->to;
        ph->run->dirty = 1;
        return;
    case PLANCTL_ENTITY_RUN:
    default:
        run = pctl_idmap_get(&ac->runs, c->id);
        if (run) {
            run->view.status = c->to;
            run->view.deadline_at = run->deadline_at = deadline_at;
            run->dirty = 1;
        } else if (c->to == PLANCTL_STATUS_PENDING) {
            /* Promoted from the queue: read at the next sync. */
            if (grow((void **)&ac->promoted, ac->npromoted, &ac->cappromoted,
                     sizeof *ac->promoted) < 0)
                ac->stale = 1;
            else
                ac->promoted[ac->npromoted++] = c->id;
        } else if (pctl_status_active(c->to)) {
            ac->stale = 1;
        }
        return;
    }
}

int pctl_step_set_task(planctl *p, int64_t step_id, int task_index)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_step_set_task);
    pctl_run_row *r;
    size_t pi, si;
    int rc;

    if (!st)
        return PLANCTL_ERROR;
    pctl_bind_i64(st, 1, step_id);
    pctl_bind_i64(st, 2, task_index);
    if ((rc = pctl_q_exec(st)) < 0)
        return rc;
    if (pctl_changes(st) != 1)
        pctl_active_distrust(p);
    else if (pctl_active_find_step(p->active, step_id, &r, &pi, &si))
        r->phases[pi].steps[si].task_index = task_index;
    return 0;
}
