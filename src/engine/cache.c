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

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/heap.h"
#include "core/idmap.h"
#include "core/status.h"
#include "store/feed.h"

struct pctl_active_cache {
    int stale;
    pctl_db_token seen;    /* the database's change token at our last sync
                             (others) and commit (own) */
    uint64_t synced_tx;    /* the transaction it was last synced in */
    pctl_feed_cursor feed; /* the newest event it has followed, and its
                              own after it (feed.h) */
    int followed;          /* its last sync read the feed (others wrote) */
    int64_t events_max;    /* the handle's limit of events per run */
    int64_t *promoted;     /* runs promoted from the queue: read at the sync */
    size_t npromoted, cappromoted;
    pctl_idmap runs, phases, steps; /* to pctl_run/phase/step_row */
    pctl_idmap by_instance;         /* instance id to its cached run */
    pctl_idmap def_runs; /* definition id to its count of cached runs */
    int64_t *dirty;      /* runs marked dirty since the last pass took them */
    size_t ndirty, capdirty;
    int64_t *ended; /* runs that ended while cached: dropped at the sync */
    size_t nended, capended;
    size_t inactive;  /* cached runs that are no longer active */
    pctl_heap timers; /* (wake_at, run id): what each run waits for */
    pctl_heap hungry; /* (run id, run id): runs with no slot to spare */
    int64_t *settle;  /* runs decided this pass with no slot to spare */
    size_t nsettle, capsettle;
    uint64_t pass; /* pctl_active_work()'s calls: run rows' mark */
    int64_t now;   /* the time of the pass */
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

/* Adds delta to the count of cached runs of definition def_id.  0, or
 * ENOMEM (the count is unchanged). */
static int count_def(struct pctl_active_cache *c, int64_t def_id, int delta)
{
    uintptr_t n = (uintptr_t)pctl_idmap_get(&c->def_runs, def_id);

    n = delta > 0 ? n + 1 : n > 0 ? n - 1 : 0;
    if (n == 0) {
        pctl_idmap_del(&c->def_runs, def_id);
        return 0;
    }
    return pctl_idmap_put(&c->def_runs, def_id, (void *)n) < 0 ? PLANCTL_ENOMEM
                                                               : 0;
}

static int index_run(pctl_active *a, pctl_run_row *r)
{
    struct pctl_active_cache *c = a->cache;
    size_t pi, si;

    if (pctl_idmap_put(&c->runs, r->id, r) < 0 ||
        pctl_idmap_put(&c->by_instance, r->instance_id, r) < 0 ||
        count_def(c, r->definition_id, 1) < 0)
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

    if (pctl_idmap_get(&c->runs, r->id) == r) {
        pctl_idmap_del(&c->runs, r->id);
        count_def(c, r->definition_id, -1);
    }
    /* A run promoted behind one that ended may hold the instance now. */
    if (pctl_idmap_get(&c->by_instance, r->instance_id) == r)
        pctl_idmap_del(&c->by_instance, r->instance_id);
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
        pctl_active_dirty(a, r);
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
    pctl_free(a->gone);
    if (a->cache) {
        pctl_idmap_free(&a->cache->runs);
        pctl_idmap_free(&a->cache->phases);
        pctl_idmap_free(&a->cache->steps);
        pctl_idmap_free(&a->cache->by_instance);
        pctl_idmap_free(&a->cache->def_runs);
        pctl_heap_free(&a->cache->timers);
        pctl_heap_free(&a->cache->hungry);
        pctl_free(a->cache->dirty);
        pctl_free(a->cache->settle);
        pctl_free(a->cache->ended);
        pctl_free(a->cache->promoted);
        pctl_feed_cursor_clear(&a->cache->feed);
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

/* Reads the runs of ids[0..n) (promoted from the queue, or claimed)
 * that the cache does not hold into it, those that are active, all in
 * one read. */
static int load_some(pctl_active *a, planctl *p, const int64_t *ids, size_t n)
{
    int64_t *want = NULL;
    pctl_run_row **v = NULL;
    size_t i, nwant = 0, cap = 0, nv = 0;
    int rc = 0;

    for (i = 0; rc == 0 && i < n; i++)
        if (!pctl_idmap_get(&a->cache->runs, ids[i]) &&
            pctl_push_id(&want, &nwant, &cap, ids[i]) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0 && nwant > 0)
        rc = pctl_active_read_runs(&v, &nv, p, want, nwant);
    if (rc == 0 && nv > 0 && take_runs(a, v, nv) < 0)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    pctl_run_rows_free(v, nv);
    pctl_free(want);
    return rc;
}

/* ---- the cache ---- */

/* Takes run r out of the cache and frees it. */
static void remove_run(pctl_active *a, pctl_run_row *r)
{
    size_t i = run_pos(a, r->id);

    if (r->ended && a->cache->inactive > 0)
        a->cache->inactive--;
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

/* Adds run id to a->gone.  0, or ENOMEM. */
static int add_gone(pctl_active *a, int64_t id)
{
    return pctl_push_id(&a->gone, &a->ngone, &a->capgone, id);
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
    else if (old &&
             (orphan_jobs(a, old) < 0 || (!old->ended && add_gone(a, id) < 0)))
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
    if (nu && !old)
        a->entered = 1;
    return 0;
}

/*
 * Follows what others wrote (another connection, or this one outside a
 * pass) from the event log: reads again the runs with events after the
 * newest the cache followed, and those of instances with events of their
 * own.  *full is set when the log cannot tell (a gap), for the caller to
 * read everything.
 */
static int follow_feed(pctl_active *a, planctl *p, int *full,
                       pctl_sync_info *info)
{
    pctl_feed f;
    size_t i, cap;
    int rc = pctl_feed_read(&f, p, &a->cache->feed);

    *full = rc == 0 && f.gap;
    if (rc < 0 || *full) {
        pctl_feed_clear(&f);
        return rc;
    }
    /* Instances with events of their own: their active run (one at
     * most) is read again with the others. */
    cap = f.nruns;
    for (i = 0; rc == 0 && i < f.ninstances; i++) {
        const pctl_run_row *r =
            pctl_idmap_get(&a->cache->by_instance, f.instances[i]);

        if (r && pctl_push_id(&f.runs, &f.nruns, &cap, r->id) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    /* One of several engines follows the runs it holds: the others' are
     * none of its business (and a run it is given comes by its claim). */
    for (i = 0; rc == 0 && i < f.nruns; i++)
        if (!p->fleet_id || pctl_idmap_get(&a->cache->runs, f.runs[i])) {
            rc = refresh_run(a, p, f.runs[i]);
            info->reread++;
        }
    /* The runs read again are dirty: their jobs are checked (engine/
     * pass.c reconcile()), and so are the orphaned ones. */
    if (rc == 0) {
        pctl_feed_follow(&a->cache->feed, f.last);
        /* What they changed goes to the caller, for the log. */
        memcpy(info->others.counts, f.counts, sizeof f.counts);
        info->others.changes = f.changes;
        info->others.nchanges = f.nchanges;
        info->others.nmore = f.nmore;
        f.changes = NULL;
        f.nchanges = 0;
    }
    pctl_feed_clear(&f);
    return rc;
}

int pctl_active_claimed(pctl_active *a, planctl *p, const int64_t *ids,
                        size_t n)
{
    int rc = load_some(a, p, ids, n);

    if (n > 0)
        a->members = a->entered = 1;
    return rc;
}

int pctl_active_forget(pctl_active *a, planctl *p, int64_t run_id)
{
    return refresh_run(a, p, run_id);
}

void pctl_active_drop(pctl_active **cache)
{
    free_active(*cache);
    *cache = NULL;
}

/* Drops the runs that ended since the last sync. */
static void drop_ended(pctl_active *a)
{
    struct pctl_active_cache *c = a->cache;
    size_t i;

    for (i = 0; i < c->nended; i++) {
        pctl_run_row *r = pctl_idmap_get(&c->runs, c->ended[i]);

        if (r && r->ended)
            remove_run(a, r); /* else read again meanwhile */
    }
    c->nended = 0;
}

static int sync(pctl_active **cache, planctl *p, pctl_sync_info *info)
{
    pctl_active *a = *cache;
    struct pctl_active_cache *c;
    pctl_db_token now = {0, 0, 0, 0};
    int64_t last;
    int rc;

    memset(info, 0, sizeof *info);
    if (a)
        a->norphaned = 0;
    rc = pctl_db_changes(&now, p, PCTL_TOKEN_OTHERS | PCTL_TOKEN_OWN);
    /* A session made again: the server may have lost commits it had
     * acknowledged, ours too (sql.h): everything is read anew. */
    if (rc == 0 && a && !a->cache->stale &&
        now.session == a->cache->seen.session) {
        size_t before = a->nruns;
        int full = 0;

        c = a->cache;
        /* Somebody else wrote since our last commit: what changed is
         * read again (in proportion to the change, not to the cache). */
        c->followed = now.others != c->seen.others || now.own != c->seen.own;
        if (c->followed)
            rc = follow_feed(a, p, &full, info);
        /* A horizon sent ahead and not read (nobody else wrote): dropped
         * with its statement's next use. */
        c->feed.last_sent = 0;
        if (rc < 0 || full)
            goto reload;
        c->seen = now;
        /* Then our own changes are left to follow. */
        drop_ended(a);
        if (a->nruns != before || c->npromoted > 0)
            a->members = 1;
        if (c->npromoted > 0)
            a->entered = 1;
        rc = load_some(a, p, c->promoted, c->npromoted);
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
    /* Where the feed goes on from, read before the rows: every event up
     * to it is in what they show (feed.h). */
    if ((rc = pctl_feed_last(&last, p, -1)) < 0)
        return rc;
    if ((rc = load_all(&a, p)) < 0)
        return rc;
    a->cache->feed.last = last;
    a->cache->seen.others = now.others;
    a->cache->seen.session = now.session;
    a->cache->synced_tx = p->tx_depth > 0 ? p->tx_serial : 0;
    a->cache->events_max = p->run_events_max;
    a->fresh = a->members = a->entered = 1;
    *cache = a;
    return 0;
}

int pctl_active_sync(pctl_active **cache, planctl *p, pctl_sync_info *info)
{
    pctl_sync_info none;
    int rc;

    if (info)
        return sync(cache, p, info);
    rc = sync(cache, p, &none);
    pctl_feed_clear(&none.others);
    return rc;
}

int pctl_active_ahead(pctl_active *a, planctl *p)
{
    if (!a || a->cache->stale || !a->cache->followed)
        return 0;
    return pctl_feed_last_ahead(&a->cache->feed, p);
}

int pctl_active_mark(pctl_active *a, planctl *p)
{
    return a ? pctl_feed_mark(&a->cache->feed, p) : 0;
}

int pctl_active_marked(pctl_active *a, planctl *p, int committed)
{
    return a ? pctl_feed_marked(&a->cache->feed, p, committed) : 0;
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
    pctl_run_row *r = pctl_active_find_run(a, run_id);

    if (r)
        pctl_active_dirty(a, r);
}

pctl_run_row *pctl_active_find_run(const pctl_active *a, int64_t run_id)
{
    return a ? pctl_idmap_get(&a->cache->runs, run_id) : NULL;
}

pctl_run_row *pctl_active_find_instance(const pctl_active *a,
                                        int64_t instance_id)
{
    return a ? pctl_idmap_get(&a->cache->by_instance, instance_id) : NULL;
}

/* ---- what a pass looks at ---- */

void pctl_active_requeue(pctl_active *a, pctl_run_row *r)
{
    struct pctl_active_cache *c = a->cache;

    r->dirty = 1;
    if (pctl_push_id(&c->dirty, &c->ndirty, &c->capdirty, r->id) < 0)
        c->stale = 1; /* the next sync reads (and marks) everything */
}

void pctl_active_dirty(pctl_active *a, pctl_run_row *r)
{
    if (!r->dirty)
        pctl_active_requeue(a, r);
}

/* Whether a timer entry still stands for what its run waits for. */
static pctl_run_row *timer_run(const struct pctl_active_cache *c,
                               const pctl_heap_entry *t)
{
    pctl_run_row *r = pctl_idmap_get(&c->runs, t->id);

    return r && r->wake_at == t->key && pctl_status_active(r->view.status)
               ? r
               : NULL;
}

static int by_id(const void *x, const void *y)
{
    const pctl_run_row *a = *(pctl_run_row *const *)x,
                       *b = *(pctl_run_row *const *)y;

    return a->id < b->id ? -1 : a->id > b->id;
}

/* Adds r to v unless this pass took it up already. */
static int take_up(struct pctl_active_cache *c, pctl_run_row ***v, size_t *n,
                   size_t *cap, pctl_run_row *r)
{
    if (r->mark == c->pass)
        return 0;
    if (pctl_grow((void **)v, *n, cap, sizeof **v) < 0)
        return PLANCTL_ENOMEM;
    r->mark = c->pass;
    (*v)[(*n)++] = r;
    return 0;
}

int pctl_active_work(pctl_active *a, int64_t now, pctl_run_row ***out,
                     size_t *n)
{
    struct pctl_active_cache *c = a->cache;
    pctl_run_row **v = NULL, *r;
    const pctl_heap_entry *t;
    size_t cap = 0, i;
    int rc = 0;

    *out = NULL;
    *n = 0;
    c->pass++;
    c->now = now;
    for (i = 0; rc == 0 && i < c->ndirty; i++)
        if ((r = pctl_idmap_get(&c->runs, c->dirty[i])) && r->dirty)
            rc = take_up(c, &v, n, &cap, r);
    while (rc == 0 && (t = pctl_heap_top(&c->timers)) && t->key <= now) {
        if ((r = timer_run(c, t)))
            rc = take_up(c, &v, n, &cap, r);
        if (rc == 0)
            pctl_heap_pop(&c->timers);
    }
    if (rc < 0) {
        /* Nothing taken: the list stays for a cache read anew. */
        pctl_free(v);
        *n = 0;
        c->stale = 1;
        return PLANCTL_ENOMEM;
    }
    c->ndirty = 0;
    if (*n > 1) /* v is NULL when nothing is to do: qsort() wants an array */
        qsort(v, *n, sizeof *v, by_id);
    *out = v;
    return 0;
}

/* Whether a hungry entry still stands: its run waits for a slot and is
 * not among this pass's work. */
static pctl_run_row *hungry_run(const struct pctl_active_cache *c,
                                const pctl_heap_entry *t)
{
    pctl_run_row *r = pctl_idmap_get(&c->runs, t->id);

    return r && !r->quiet && r->mark != c->pass &&
                   pctl_status_active(r->view.status)
               ? r
               : NULL;
}

pctl_run_row *pctl_active_hungry(pctl_active *a)
{
    struct pctl_active_cache *c = a->cache;
    const pctl_heap_entry *t;
    pctl_run_row *r;

    while ((t = pctl_heap_top(&c->hungry))) {
        if ((r = hungry_run(c, t)))
            return r;
        pctl_active_hungry_pop(a);
    }
    return NULL;
}

void pctl_active_hungry_pop(pctl_active *a)
{
    struct pctl_active_cache *c = a->cache;
    const pctl_heap_entry *t = pctl_heap_top(&c->hungry);
    pctl_run_row *r;

    if (!t)
        return;
    /* Its entry is gone: pctl_active_settle() makes another if it is
     * still hungry after the pass. */
    if ((r = pctl_idmap_get(&c->runs, t->id))) {
        r->hungry = 0;
        r->mark = c->pass;
    }
    pctl_heap_pop(&c->hungry);
}

/* Builds a heap again from the cached runs when entries that no longer
 * stand outnumber those that do. */
static void rebuild(pctl_active *a, pctl_heap *h, int timers)
{
    size_t i;

    pctl_heap_clear(h);
    for (i = 0; i < a->nruns; i++) {
        pctl_run_row *r = a->runs[i];

        if (!timers)
            r->hungry = 0;
        if (!pctl_status_active(r->view.status))
            continue;
        if (timers && r->wake_at > 0 &&
            pctl_heap_push(h, r->wake_at, r->id) < 0)
            a->cache->stale = 1;
        else if (!timers && !r->quiet) {
            if (pctl_heap_push(h, r->id, r->id) < 0)
                a->cache->stale = 1;
            else
                r->hungry = 1;
        }
    }
}

void pctl_active_decided(pctl_active *a, pctl_run_row *r, int64_t wake)
{
    struct pctl_active_cache *c = a->cache;

    /* A time it waited for before has its entry already, unless that
     * entry was taken as due. */
    if (wake > 0 && (wake != r->wake_at || wake <= c->now) &&
        pctl_heap_push(&c->timers, wake, r->id) < 0)
        c->stale = 1;
    r->wake_at = wake;
    if (r->quiet)
        return;
    if (pctl_push_id(&c->settle, &c->nsettle, &c->capsettle, r->id) < 0)
        c->stale = 1;
}

void pctl_active_settle(pctl_active *a)
{
    struct pctl_active_cache *c;
    size_t i, most;

    if (!a)
        return;
    c = a->cache;
    for (i = 0; i < c->nsettle; i++) {
        pctl_run_row *r = pctl_idmap_get(&c->runs, c->settle[i]);

        if (!r || r->quiet || r->hungry || !pctl_status_active(r->view.status))
            continue;
        if (pctl_heap_push(&c->hungry, r->id, r->id) < 0)
            c->stale = 1;
        else
            r->hungry = 1;
    }
    c->nsettle = 0;
    most = 2 * a->nruns + 64;
    if (c->timers.n > most)
        rebuild(a, &c->timers, 1);
    if (c->hungry.n > most)
        rebuild(a, &c->hungry, 0);
}

int64_t pctl_active_next_wake(pctl_active *a)
{
    struct pctl_active_cache *c = a ? a->cache : NULL;
    const pctl_heap_entry *t;

    while (c && (t = pctl_heap_top(&c->timers))) {
        if (timer_run(c, t))
            return t->key;
        pctl_heap_pop(&c->timers);
    }
    return 0;
}

void pctl_active_timers_reset(pctl_active *a)
{
    if (a)
        rebuild(a, &a->cache->timers, 1);
}

size_t pctl_active_count(const pctl_active *a)
{
    return a ? a->nruns - a->cache->inactive : 0;
}

size_t pctl_active_promoted(const pctl_active *a)
{
    return a ? a->cache->npromoted : 0;
}

size_t pctl_active_def_runs(const pctl_active *a, int64_t def_id)
{
    return a ? (size_t)(uintptr_t)pctl_idmap_get(&a->cache->def_runs, def_id)
             : 0;
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
        out->status = run->view.phases[st->phase - run->phases]
                          .steps[st - st->phase->steps]
                          .status;
        break;
    case PLANCTL_ENTITY_PHASE:
        if (!(ph = pctl_idmap_get(&ac->phases, id)))
            return 0;
        out->phase_id = id;
        run = ph->run;
        out->status = run->view.phases[ph - run->phases].status;
        break;
    case PLANCTL_ENTITY_RUN:
        if (!(run = pctl_idmap_get(&ac->runs, id)))
            return 0;
        out->deadline_at = run->deadline_at;
        out->event_count = run->event_count;
        out->status = run->view.status;
        break;
    default:
        return 0;
    }
    out->run_id = run->id;
    out->instance_id = run->instance_id;
    out->plan = run->plan;
    return 1;
}

static void step_written(pctl_active *a, const pctl_written *w)
{
    struct pctl_active_cache *ac = a->cache;
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
    pctl_active_dirty(a, run);
}

static void run_written(pctl_active *a, const pctl_written *w)
{
    struct pctl_active_cache *ac = a->cache;
    const pctl_change *c = w->change;
    pctl_run_row *run = pctl_idmap_get(&ac->runs, c->id);

    if (run) {
        /* Ended (the view may have said so first: pctl_decide() rolls
         * its own decisions into it): dropped at the next sync. */
        if (!run->ended && !pctl_status_active(c->to)) {
            run->ended = 1;
            if (pctl_push_id(&ac->ended, &ac->nended, &ac->capended, run->id) <
                    0 ||
                add_gone(a, run->id) < 0)
                ac->stale = 1;
            ac->inactive++;
        }
        run->view.status = c->to;
        run->view.deadline_at = run->deadline_at = w->deadline_at;
        pctl_active_dirty(a, run);
    } else if (c->to == PLANCTL_STATUS_PENDING) {
        /* Promoted from the queue: read at the next sync. */
        if (pctl_push_id(&ac->promoted, &ac->npromoted, &ac->cappromoted,
                         c->id) < 0)
            ac->stale = 1;
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
        step_written(a, w);
        return;
    case PLANCTL_ENTITY_PHASE:
        ph = pctl_idmap_get(&a->cache->phases, w->change->id);
        if (!ph || ph->run->id != w->run_id) {
            a->cache->stale = 1;
            return;
        }
        ph->run->view.phases[ph - ph->run->phases].status = w->change->to;
        pctl_active_dirty(a, ph->run);
        return;
    case PLANCTL_ENTITY_RUN:
    default:
        run_written(a, w);
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
        pctl_active_dirty(a, r);
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
