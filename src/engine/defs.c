/*
 * defs.c - what the engine knows of the definitions it runs: the cache of
 * loaded definitions, the executor of each task kind, which plans use a
 * kind this engine has no executor for, which runs were noted as
 * waiting for one, and why runs wait as run_waits records it (for a kind
 * or for a slot), written only when that changes.
 *
 * These are data, not actions: the pass (pass.c) reads them, the task
 * starter (tasks.c) looks up executors, and the engine (engine.c) keeps
 * them between passes and frees them.  So they lie below all three and
 * call none of them: a file that only needs a definition need not call
 * up into the engine's lifecycle for it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/kinds.h"
#include "engine/cache.h"
#include "engine/engine.h"
#include "engine/metrics.h"
#include "store/store.h"

const planctl_executor *pctl_engine_executor(planctl_engine *e,
                                             const char *kind)
{
    return pctl_kinds_executor(e->p->kinds, kind);
}

defent *pctl_engine_defent(planctl_engine *e, int64_t def_id)
{
    size_t i;

    for (i = 0; i < e->ndefs; i++)
        if (e->defs[i].id == def_id)
            return &e->defs[i];
    return NULL;
}

const pctl_def *pctl_engine_def(planctl_engine *e, int64_t def_id)
{
    defent *nd = pctl_engine_defent(e, def_id);
    pctl_def *def;

    if (nd)
        return nd->def;
    if (pctl_def_load(&def, e->p, def_id) < 0)
        return NULL;
    nd = pctl_realloc(e->defs, (e->ndefs + 1) * sizeof *nd);
    if (!nd) {
        pctl_def_free(def);
        pctl_err(e->p, PLANCTL_ENOMEM, "out of memory");
        return NULL;
    }
    e->defs = nd;
    memset(&nd[e->ndefs], 0, sizeof nd[e->ndefs]);
    nd[e->ndefs].id = def_id;
    nd[e->ndefs].def = def;
    e->ndefs++;
    return def;
}

void pctl_engine_defent_free(defent *d)
{
    pctl_def_free(d->def);
    pctl_free(d->missing);
    pctl_free(d->checked);
}

const char *pctl_engine_missing_kind(planctl_engine *e, int64_t def_id,
                                     const pctl_plan_def *plan)
{
    defent *d = pctl_engine_defent(e, def_id);
    size_t i, pi, si, k;

    if (!d || plan < d->def->plans || plan >= d->def->plans + d->def->nplans)
        return NULL;
    i = (size_t)(plan - d->def->plans);
    if (!d->checked) {
        /* Out of memory: look each time rather than fail the pass. */
        d->checked = pctl_calloc(d->def->nplans, 1);
        d->missing = pctl_calloc(d->def->nplans, sizeof *d->missing);
        if (!d->checked || !d->missing) {
            pctl_free(d->checked);
            pctl_free(d->missing);
            d->checked = NULL;
            d->missing = NULL;
        }
    }
    if (d->checked && d->checked[i])
        return d->missing[i];
    for (pi = 0; pi < plan->nphases; pi++)
        for (si = 0; si < plan->phases[pi].nsteps; si++)
            for (k = 0; k < plan->phases[pi].steps[si].ntasks; k++) {
                const char *kind =
                    d->def->tasks[plan->phases[pi].steps[si].tasks[k]].kind;

                if (!pctl_engine_executor(e, kind)) {
                    if (d->checked) {
                        d->checked[i] = 1;
                        d->missing[i] = kind;
                    }
                    return kind;
                }
            }
    if (d->checked)
        d->checked[i] = 1;
    return NULL;
}

int pctl_engine_is_waiting(const planctl_engine *e, int64_t run_id)
{
    return pctl_idmap_get(&e->waiting, run_id) != NULL;
}

int pctl_engine_note_waiting(planctl_engine *e, int64_t run_id,
                             int64_t instance_id, const char *instance,
                             const char *plan, const char *kind)
{
    char msg[512];
    int rc;

    if (pctl_engine_is_waiting(e, run_id))
        return 0;
    snprintf(msg, sizeof msg,
             "run %lld (plan \"%s\") waits for an engine with task kind "
             "\"%s\": this engine has no executor for it",
             (long long)run_id, plan, kind);
    if ((rc = pctl_event_admin(e->p, instance_id, "instance", msg, "engine",
                               NULL)) < 0)
        return rc;
    if (pctl_idmap_put(&e->waiting, run_id, e) < 0)
        return pctl_err(e->p, PLANCTL_ENOMEM, "out of memory");
    pctl_metrics_waiting(e, instance, run_id, plan, kind);
    return 0;
}

void pctl_engine_forget_waiting(planctl_engine *e, pctl_active *a)
{
    size_t i, n = 0;
    int64_t *stale = NULL;

    if (!a)
        return;
    for (i = 0; i < a->ngone; i++)
        pctl_idmap_del(&e->waiting, a->gone[i]);
    a->ngone = 0;
    if (!a->fresh || e->waiting.n == 0)
        return;
    /* Read anew: whatever ended meanwhile is not in the cache. */
    stale = pctl_calloc(e->waiting.n, sizeof *stale);
    for (i = 0; stale && i < e->waiting.cap; i++) {
        int64_t id = e->waiting.slots[i].id;
        const pctl_run_row *r = id ? pctl_active_find_run(a, id) : NULL;

        if (id && (!r || !pctl_status_active(r->view.status)))
            stale[n++] = id;
    }
    for (i = 0; i < n; i++)
        pctl_idmap_del(&e->waiting, stale[i]);
    pctl_free(stale);
}

size_t pctl_engine_waiting_count(const planctl_engine *e)
{
    return e->waiting.n;
}

int pctl_engine_note_wait(planctl_engine *e, int64_t run_id,
                          pctl_wait_cause cause, const char *kind)
{
    pctl_wait_cause had =
        (pctl_wait_cause)(intptr_t)pctl_idmap_get(&e->waits, run_id);
    int rc;

    if (had == cause)
        return 0; /* the hot path: nothing to write */
    if (cause == PCTL_WAIT_NONE) {
        if ((rc = pctl_wait_delete(e->p, run_id)) < 0)
            return rc;
        pctl_idmap_del(&e->waits, run_id);
        return 0;
    }
    rc = pctl_wait_put(e->p, run_id,
                       cause == PCTL_WAIT_EXECUTOR ? "executor" : "slot",
                       cause == PCTL_WAIT_EXECUTOR ? kind : NULL,
                       cause == PCTL_WAIT_SLOT ? e->o.concurrency : 0);
    if (rc < 0)
        return rc;
    if (pctl_idmap_put(&e->waits, run_id, (void *)(intptr_t)cause) < 0)
        return pctl_err(e->p, PLANCTL_ENOMEM, "out of memory");
    return 0;
}

int pctl_engine_waits_fresh(planctl_engine *e, pctl_active *a)
{
    if (!a || !a->fresh)
        return 0;
    pctl_idmap_free(&e->waits);
    return pctl_waits_delete_held(e->p);
}

int pctl_engine_waits_gone(planctl_engine *e, pctl_active *a,
                           const int64_t *ids, size_t n)
{
    size_t i;
    int rc;

    for (i = 0; a && i < a->ngone; i++)
        if (pctl_idmap_get(&e->waits, a->gone[i])) {
            if ((rc = pctl_wait_delete(e->p, a->gone[i])) < 0)
                return rc;
            pctl_idmap_del(&e->waits, a->gone[i]);
        }
    for (i = 0; i < n; i++) {
        if ((rc = pctl_wait_delete(e->p, ids[i])) < 0)
            return rc;
        pctl_idmap_del(&e->waits, ids[i]);
    }
    return 0;
}

void pctl_engine_def_jobs(planctl_engine *e, int64_t def_id, int delta)
{
    defent *d = pctl_engine_defent(e, def_id);

    if (d && delta > 0)
        d->jobs++;
    else if (d && d->jobs > 0)
        d->jobs--;
}

/* Keeps the definitions some active run or job uses; drops the rest.
 * Only when the set of active runs changed (otherwise every definition
 * cached is still some run's, or a job's).  Called after a committed
 * pass, once the jobs it made exist: they hold their step's definition
 * from the cache.  The cache and the jobs count their users, so this
 * costs one look per cached definition. */
void pctl_engine_defs_trim(planctl_engine *e)
{
    pctl_active *a = e->active;
    size_t i = 0;

    if (a && !a->members)
        return;
    while (i < e->ndefs) {
        defent *d = &e->defs[i];

        if (d->jobs > 0 || pctl_active_def_runs(a, d->id) > 0) {
            i++;
            continue;
        }
        pctl_engine_defent_free(d);
        e->defs[i] = e->defs[--e->ndefs];
    }
}
