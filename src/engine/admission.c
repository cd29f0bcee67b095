/*
 * admission.c - the public calls that admit a run (create, set, upgrade,
 * trigger, retry): preflight first, then the store's admission.
 *
 * Which plan runs, with which parameters, is decided by the store (plan
 * selection, DESIGN §4).  So each call runs the store's admission twice:
 * first dry (everything happens inside a transaction that is rolled back,
 * and the store notes what it would admit), then, once the plan's
 * preflight checks passed, for real.  Checks run outside any transaction,
 * so they never hold the database's write lock.  A refusal the store
 * would give anyway (a conflict, a bad parameter) comes from the dry run,
 * before any check runs.
 */
#include <string.h>

#include "core/alloc.h"
#include "engine/preflight.h"
#include "store/store.h"

typedef struct call {
    enum { CREATE, SET, UPGRADE, TRIGGER, RETRY } what;
    const char *name, *definition, *version, *plan;
    const planctl_param *params;
    size_t nparams;
    const planctl_trigger_options *topts;
    int64_t run_id;
} call;

static int store_call(int64_t *out, planctl *p, const call *c)
{
    switch (c->what) {
    case CREATE:
        return pctl_store_create(out, p, c->name, c->definition, c->version,
                                 c->params, c->nparams);
    case SET:
        return pctl_store_set(out, p, c->name, c->params, c->nparams);
    case UPGRADE:
        return pctl_store_upgrade(out, p, c->name, c->version, c->params,
                                  c->nparams);
    case TRIGGER:
        return pctl_store_trigger(out, p, c->name, c->plan, c->topts);
    case RETRY:
    default:
        return pctl_store_retry(out, p, c->name, c->run_id);
    }
}

/* Records what preflight did as an admin event of the instance. */
static void record(planctl *p, int64_t instance_id, const char *message)
{
    if (!message || pctl_tx_begin(p) < 0)
        return;
    pctl_tx_end(p, pctl_event_admin(p, instance_id, "instance", message, "user",
                                    p->preflight_report));
}

static int admit(int64_t *out, planctl *p, const call *c)
{
    pctl_def *def = NULL;
    const pctl_plan_def *plan;
    int64_t dry_out = 0, instance_id;
    char *msg = NULL;
    int rc;

    if (!out || !p)
        return p ? pctl_err(p, PLANCTL_EINVAL, "missing argument")
                 : PLANCTL_EINVAL;
    *out = 0;
    pctl_free(p->preflight_report);
    p->preflight_report = NULL;
    p->dry_run = 1;
    pctl_preview_clear(p);
    rc = store_call(&dry_out, p, c);
    p->dry_run = 0;
    if (rc < 0 || !p->preview.valid) {
        /* Refused, or nothing to admit (a set that changes nothing). */
        pctl_preview_clear(p);
        return rc < 0 ? rc : store_call(out, p, c);
    }
    instance_id = p->preview.instance_id;
    if ((rc = pctl_def_load(&def, p, p->preview.definition_id)) < 0) {
        pctl_preview_clear(p);
        return rc;
    }
    plan = pctl_def_plan(def, p->preview.plan);
    if (plan && plan->nchecks > 0) {
        rc = pctl_preflight_run(p, def, plan, p->preview.instance,
                                p->preview.params);
        /* What the checks said goes in the log, passed or not; the
         * refusal's message is the handle's, kept around the record. */
        msg = rc < 0 ? pctl_strdup(planctl_errmsg(p))
                     : pctl_asprintf("preflight of plan \"%s\" passed",
                                     plan->name);
        /* A new instance exists only after the real admission (the dry
         * run's row was rolled back): its record waits until then, and a
         * refused create leaves no instance to record on. */
        if (c->what != CREATE)
            record(p, instance_id, msg);
        if (rc < 0 && msg)
            pctl_err(p, rc, "%s", msg);
    }
    pctl_preview_clear(p);
    pctl_def_free(def);
    if (rc == 0)
        rc = store_call(out, p, c);
    if (rc == 0 && c->what == CREATE && msg) {
        pctl_instance_row row;

        if (pctl_instance_find(&row, p, c->name) == 0)
            record(p, row.id, msg);
        pctl_instance_row_clear(&row);
    }
    pctl_free(msg);
    return rc;
}

int planctl_instance_create(int64_t *out, planctl *p, const char *name,
                            const char *definition, const char *version,
                            const planctl_param *params, size_t nparams)
{
    call c = {CREATE, name,    definition, version, NULL,
              params, nparams, NULL,       0};

    return admit(out, p, &c);
}

int planctl_instance_set(int64_t *out, planctl *p, const char *name,
                         const planctl_param *params, size_t nparams)
{
    call c = {SET, name, NULL, NULL, NULL, params, nparams, NULL, 0};

    return admit(out, p, &c);
}

int planctl_instance_upgrade(int64_t *out, planctl *p, const char *name,
                             const char *version, const planctl_param *params,
                             size_t nparams)
{
    call c = {UPGRADE, name, NULL, version, NULL, params, nparams, NULL, 0};

    return admit(out, p, &c);
}

int planctl_plan_trigger(int64_t *out, planctl *p, const char *instance,
                         const char *plan, const planctl_trigger_options *opts)
{
    call c = {TRIGGER, instance, NULL, NULL, plan, NULL, 0, opts, 0};

    return admit(out, p, &c);
}

int planctl_run_retry(int64_t *out, planctl *p, const char *instance,
                      int64_t run_id)
{
    call c = {RETRY, instance, NULL, NULL, NULL, NULL, 0, NULL, run_id};

    return admit(out, p, &c);
}
