/*
 * cache.c - the engine's cache of active runs (see cache.h): read through
 * the store (store/active.c), then kept in step with the database from
 * what the store reports of its writes.
 *
 * Three id maps (runs, phases, steps; core/idmap) lead from a row id to
 * its row, and each phase or step row to its parent, for the store's
 * reports and the engine's lookups.
 */
#include "engine/cache.h"

#include <string.h>

#include "core/alloc.h"
#include "core/idmap.h"
#include "core/status.h"
#include "store/feed.h"

struct pctl_active_cache {
    int stale;
    pctl_db_token seen; /* the database's change token at our last sync
                          (others) and commit (own) */
    uint64_t synced_tx; /* the transaction it was last synced in */
    int64_t last_event; /* the newest event it has followed (feed.h) */
    int64_t events_max; /* the handle's limit of events per run */
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

/* Where run id is or would go in a->runs (sorted by id): the first
 * index whose run's id is not below it. */
static size_t run_pos(const pctl_active *a, int64_t id)
{
    size_t lo = 0, hi = a->nruns;

    /* Usually at the end: ids grow. */
    if (hi == 0 || a->runs[hi - 1]->id < id)
        return hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (a->runs[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Moves runs v[0..n) (sorted by id) into a, keeping a sorted by id; v
 * keeps nothing of them (each moved entry becomes NULL).  Each is to be
 * decided at the next pass. */
static int take_runs(pctl_active *a, pctl_run_row **v, size_t n)
{
    size_t i, k;
    pctl_run_row **nv;

    nv = pctl_realloc(a->runs, (a->nruns + n + 1) * sizeof *nv);
    if (!nv)
        return PLANCTL_ENOMEM;
    a->runs = nv;
    for (i = 0; i < n; i++) {
        pctl_run_row *r = v[i];

        if (index_run(a, r) < 0) {
            unindex_run(a, r);
            return PLANCTL_ENOMEM;
        }
        r->dirty = 1;
        k = run_pos(a, r->id);
        memmove(&a->runs[k + 1], &a->runs[k], (a->nruns - k) * sizeof *a->runs);
        a->runs[k] = r;
        a->nruns++;
        v[i] = NULL;
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

static void free_active(pctl_active *a)
{
    size_t i;

    if (!a)
        return;
    for (i = 0; i < a->nruns; i++)
        pctl_run_row_free(a->runs[i]);
    pctl_free(a->runs);
    pctl_free(a->orphaned);
    if (a->cache) {
        pctl_idmap_free(&a->cache->runs);
        pctl_idmap_free(&a->cache->phases);
        pctl_idmap_free(&a->cache->steps);
        pctl_free(a->cache->promoted);
        pctl_free(a->cache);
    }
    pctl_free(a);
}

/* Reads every active run into a new cache. */
static int load_all(pctl_active **out, planctl *p)
{
    pctl_active *a = new_active();
    pctl_run_row **v = NULL;
    size_t n = 0;
    int rc;

    *out = NULL;
    if (!a)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    rc = pctl_active_read(&v, &n, p);
    if (rc == 0 && take_runs(a, v, n) < 0)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    pctl_run_rows_free(v, n);
    if (rc < 0) {
        free_active(a);
        return rc;
    }
    *out = a;
    return 0;
}

/* Reads one run (promoted from the queue) into the cache, if it is
 * active. */
static int load_one(pctl_active *a, planctl *p, int64_t run_id)
{
    pctl_run_row *r = NULL;
    int rc = pctl_active_read_run(&r, p, run_id);

    if (rc == 0 && r && take_runs(a, &r, 1) < 0)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    pctl_run_row_free(r);
    return rc;
}

/* ---- the cache ---- */

/* Takes run r out of the cache and frees it. */
static void remove_run(pctl_active *a, pctl_run_row *r)
{
    size_t i = run_pos(a, r->id);

    if (i < a->nruns && a->runs[i] == r) {
        memmove(&a->runs[i], &a->runs[i + 1],
                (a->nruns - i - 1) * sizeof *a->runs);
        a->nruns--;
    }
    unindex_run(a, r);
    pctl_run_row_free(r);
}

/* The jobs running the steps of old go on running them in nu, the same
 * run read again (its phases and steps never change shape). */
static void carry_jobs(pctl_run_row *nu, const pctl_run_row *old)
{
    size_t pi, si;

    if (nu->view.nphases != old->view.nphases)
        return;
    for (pi = 0; pi < nu->view.nphases; pi++) {
        if (nu->view.phases[pi].nsteps != old->view.phases[pi].nsteps)
            continue;
        for (si = 0; si < nu->view.phases[pi].nsteps; si++)
            if (nu->phases[pi].steps[si].id == old->phases[pi].steps[si].id)
                nu->phases[pi].steps[si].job = old->phases[pi].steps[si].job;
    }
}

/* Keeps the jobs of old's steps on a->orphaned. */
static int orphan_jobs(pctl_active *a, const pctl_run_row *old)
{
    size_t pi, si;

    for (pi = 0; pi < old->view.nphases; pi++)
        for (si = 0; si < old->view.phases[pi].nsteps; si++) {
            void *job = old->phases[pi].steps[si].job;

            if (!job)
                continue;
            if (pctl_grow((void **)&a->orphaned, a->norphaned, &a->caporphaned,
                          sizeof *a->orphaned) < 0)
                return PLANCTL_ENOMEM;
            a->orphaned[a->norphaned++] = job;
        }
    return 0;
}

/* Reads run id again, or drops it when it is no longer active. */
static int refresh_run(pctl_active *a, planctl *p, int64_t id)
{
    pctl_run_row *old = pctl_idmap_get(&a->cache->runs, id), *nu = NULL;
    int rc = pctl_active_read_run(&nu, p, id);

    if (rc < 0)
        return rc;
    if (nu && old)
        carry_jobs(nu, old);
    else if (old && orphan_jobs(a, old) < 0)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc < 0) {
        pctl_run_row_free(nu);
        return rc;
    }
    if (old)
        remove_run(a, old);
    if (nu && take_runs(a, &nu, 1) < 0) {
        pctl_run_row_free(nu);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (!old != !nu)
        a->members = 1;
    return 0;
}

/*
 * Follows what others wrote (another connection, or this one outside a
 * pass) from the event log: reads again the runs with events after the
 * newest the cache followed, and those of instances with events of their
 * own.  *full is set when the log cannot tell (a gap), for the caller to
 * read everything.
 */
static int follow_feed(pctl_active *a, planctl *p, int *full, size_t *reread)
{
    pctl_feed f;
    size_t i, k, cap;
    int rc = pctl_feed_read(&f, p, a->cache->last_event);

    *full = rc == 0 && f.gap;
    if (rc < 0 || *full) {
        pctl_feed_clear(&f);
        return rc;
    }
    /* Instances with events of their own are rare: a scan of the cache
     * finds their runs, read again with the others. */
    cap = f.nruns;
    for (i = 0; rc == 0 && i < f.ninstances; i++)
        for (k = 0; rc == 0 && k < a->nruns; k++) {
            if (a->runs[k]->instance_id != f.instances[i])
                continue;
            if (pctl_grow((void **)&f.runs, f.nruns, &cap, sizeof *f.runs) < 0)
                rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            else
                f.runs[f.nruns++] = a->runs[k]->id;
        }
    for (i = 0; rc == 0 && i < f.nruns; i++)
        rc = refresh_run(a, p, f.runs[i]);
    *reread = i;
    /* The runs read again are dirty: their jobs are checked (engine/
     * pass.c reconcile()), and so are the orphaned ones. */
    if (rc == 0)
        a->cache->last_event = f.last;
    pctl_feed_clear(&f);
    return rc;
}

void pctl_active_drop(pctl_active **cache)
{
    free_active(*cache);
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
        pctl_run_row_free(r);
    }
    a->nruns = k;
}

int pctl_active_sync(pctl_active **cache, planctl *p, pctl_sync_info *info)
{
    pctl_active *a = *cache;
    struct pctl_active_cache *c;
    pctl_db_token now = {0, 0};
    pctl_sync_info none;
    size_t i;
    int rc;

    if (!info)
        info = &none;
    memset(info, 0, sizeof *info);
    if (a)
        a->norphaned = 0;
    rc = pctl_db_changes(&now, p, PCTL_TOKEN_OTHERS | PCTL_TOKEN_OWN);
    if (rc == 0 && a && !a->cache->stale) {
        size_t before = a->nruns;
        int full = 0;

        c = a->cache;
        /* Somebody else wrote since our last commit: what changed is
         * read again (in proportion to the change, not to the cache). */
        if (now.others != c->seen.others || now.own != c->seen.own)
            rc = follow_feed(a, p, &full, &info->reread);
        if (rc < 0 || full)
            goto reload;
        c->seen = now;
        /* Then our own changes are left to follow. */
        drop_ended(a);
        if (a->nruns != before || c->npromoted > 0)
            a->members = 1;
        for (i = 0; rc == 0 && i < c->npromoted; i++)
            if (!pctl_idmap_get(&c->runs, c->promoted[i]))
                rc = load_one(a, p, c->promoted[i]);
        c->npromoted = 0;
        if (rc == 0) {
            c->synced_tx = p->tx_depth > 0 ? p->tx_serial : 0;
            c->events_max = p->run_events_max;
            return 0;
        }
    }
reload:
    pctl_active_drop(cache);
    if (rc < 0)
        return rc;
    info->full = 1;
    if ((rc = load_all(&a, p)) < 0)
        return rc;
    /* The same snapshot as the rows: inside the pass's transaction. */
    if ((rc = pctl_feed_last(&a->cache->last_event, p)) < 0) {
        pctl_active_drop(&a);
        return rc;
    }
    a->cache->seen.others = now.others;
    a->cache->synced_tx = p->tx_depth > 0 ? p->tx_serial : 0;
    a->cache->events_max = p->run_events_max;
    a->fresh = a->members = 1;
    *cache = a;
    return 0;
}

int pctl_active_mark(pctl_active *a, planctl *p)
{
    return a ? pctl_feed_last(&a->cache->last_event, p) : 0;
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

/* ---- the observer: the store's reports ---- */

static int known(void *data, const planctl *p, planctl_entity entity,
                 int64_t id, pctl_known_row *out)
{
    const pctl_active *a = *(pctl_active **)data;
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

static void step_written(struct pctl_active_cache *ac, const pctl_written *w)
{
    const pctl_change *c = w->change;
    pctl_step_row *r = pctl_idmap_get(&ac->steps, c->id);
    pctl_run_row *run;
    pctl_step_view *v;
    char *msg = NULL;
    size_t pi, si;

    if (!r || r->phase->run->id != w->run_id ||
        (c->message && !(msg = pctl_strdup(c->message)))) {
        ac->stale = 1;
        return;
    }
    step_place(&run, &pi, &si, r);
    v = &run->view.phases[pi].steps[si];
    v->status = c->to;
    v->attempt = r->attempt = w->attempt;
    v->next_attempt_at = w->next_attempt_at;
    v->deadline_at = w->deadline_at;
    v->max_attempts += w->granted;
    pctl_free(r->message);
    r->message = msg;
    run->dirty = 1;
}

static void run_written(struct pctl_active_cache *ac, const pctl_written *w)
{
    const pctl_change *c = w->change;
    pctl_run_row *run = pctl_idmap_get(&ac->runs, c->id);

    if (run) {
        run->view.status = c->to;
        run->view.deadline_at = run->deadline_at = w->deadline_at;
        run->dirty = 1;
    } else if (c->to == PLANCTL_STATUS_PENDING) {
        /* Promoted from the queue: read at the next sync. */
        if (pctl_grow((void **)&ac->promoted, ac->npromoted, &ac->cappromoted,
                      sizeof *ac->promoted) < 0)
            ac->stale = 1;
        else
            ac->promoted[ac->npromoted++] = c->id;
    } else if (pctl_status_active(c->to)) {
        ac->stale = 1;
    }
}

static void written(void *data, const pctl_written *w)
{
    pctl_active *a = *(pctl_active **)data;
    pctl_phase_row *ph;

    if (!a)
        return;
    switch (w->change->entity) {
    case PLANCTL_ENTITY_STEP:
        step_written(a->cache, w);
        return;
    case PLANCTL_ENTITY_PHASE:
        ph = pctl_idmap_get(&a->cache->phases, w->change->id);
        if (!ph || ph->run->id != w->run_id) {
            a->cache->stale = 1;
            return;
        }
        ph->run->view.phases[ph - ph->run->phases].status = w->change->to;
        ph->run->dirty = 1;
        return;
    case PLANCTL_ENTITY_RUN:
    default:
        run_written(a->cache, w);
        return;
    }
}

static void task(void *data, int64_t step_id, int task_index)
{
    pctl_active *a = *(pctl_active **)data;
    pctl_run_row *r;
    size_t pi, si;

    if (pctl_active_find_step(a, step_id, &r, &pi, &si))
        r->phases[pi].steps[si].task_index = task_index;
}

/* Run run_id has count events now: at the limit per run, its view says
 * so (event_limit), for the engine to end it. */
static void events(void *data, int64_t run_id, int64_t count)
{
    pctl_active *a = *(pctl_active **)data;
    pctl_run_row *r;

    if (!a || !(r = pctl_idmap_get(&a->cache->runs, run_id)))
        return;
    r->event_count = count;
    if (count >= a->cache->events_max && !r->view.event_limit) {
        r->view.event_limit = 1;
        r->dirty = 1;
    }
}

/* A change the cache cannot follow: the next sync reads everything. */
static void missed(void *data)
{
    pctl_active *a = *(pctl_active **)data;

    if (a)
        a->cache->stale = 1;
}

const pctl_observer pctl_active_observer = {known, written, task, events,
                                            missed};
