/*
 * admission.c - the public calls that admit a run (create, set, upgrade,
 * trigger, retry): preflight first, then the store's admission.
 *
 * Which plan runs, with which parameters, is decided by the store (plan
 * selection, planctl-engine(7) "Plan for a parameter change"), in one write
 * transaction that resolves the instance and its definition once.  A plan
 * without preflight checks is admitted there.  A plan with checks stops the
 * store just before it would admit (pctl_preflight_gate, store.h): the
 * transaction rolls back, the checks run outside any transaction (never holding
 * the database's write lock), and a second transaction re-checks everything and
 * admits. A refusal the store would give anyway (a conflict, a bad parameter)
 * comes before any check runs.
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
    int64_t run_id;
    const planctl_admit_options *opts; /* NULL: the defaults */
    /* What admit() makes of opts for the store and for preflight. */
    planctl_trigger_options topts;
    pctl_param_change change;
    pctl_preflight_settings checks;
    char *report; /* the last round's preflight report */
} call;

static int store_call(planctl_admitted *out, planctl *p, const call *c,
                      pctl_preflight_gate *g)
{
    switch (c->what) {
    case CREATE:
        return pctl_store_create(out, p, c->name, c->definition, c->version,
                                 &c->change, g);
    case SET:
        return pctl_store_set(out, p, c->name, &c->change, g);
    case UPGRADE:
        return pctl_store_upgrade(out, p, c->name, c->version, &c->change, g);
    case TRIGGER:
        return pctl_store_trigger(out, p, c->name, c->plan, &c->topts, g);
    case RETRY:
    default:
        return pctl_store_retry(out, p, c->name, c->run_id, g);
    }
}

/* Records what preflight did (message, and the report when there is
 * one) as an admin event of the instance: a row of its own, so beside
 * the engines' passes (PCTL_TX_RUN), not waiting for them. */
static void record(planctl *p, int64_t instance_id, const char *message,
                   const char *report)
{
    if (!message || pctl_tx_begin_run(p) < 0)
        return;
    pctl_tx_end(p, pctl_event_admin(p, instance_id, "instance", message,
                                    pctl_user(p), report));
}

/* The checks of the plan the store stopped at (g), outside any
 * transaction.  *msg receives what they said, for the log; on success
 * the gate is told they passed (passed: its own copy of the plan). */
static int run_checks(planctl *p, call *c, pctl_preflight_gate *g,
                      char **passed, char **msg)
{
    const pctl_plan_def *plan;
    pctl_def *def = NULL;
    int rc;

    pctl_free(*msg);
    *msg = NULL;
    if ((rc = pctl_def_load(&def, p, g->definition_id)) < 0)
        return rc;
    plan = pctl_def_plan(def, g->plan);
    pctl_free(c->report);
    rc = pctl_preflight_run(&c->report, msg, p, def, plan, g->instance,
                            g->params, &c->checks);
    /* What the checks said goes in the log, passed or not; the refusal's
     * message is the handle's, kept around the record. */
    if (rc < 0)
        *msg = pctl_strdup(planctl_errmsg(p));
    /* A new instance exists only after the real admission (the first
     * transaction's row was rolled back): its record waits until then,
     * and a refused create leaves no instance to record on. */
    if (c->what != CREATE && rc != PLANCTL_EINTR) /* interrupted: nothing */
        record(p, g->instance_id, *msg, c->report);
    if (rc < 0 && *msg)
        pctl_err(p, rc, "%s", *msg);
    if (rc == 0) {
        pctl_free(*passed);
        if (!(*passed = pctl_strdup(g->plan)))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        g->passed_plan = *passed;
        g->passed_definition = g->definition_id;
    }
    pctl_def_free(def);
    return rc;
}

/* At most this many times may the plan the store selects change while
 * its checks run (another writer between the two transactions). */
#define MAX_ROUNDS 3

/* Takes the call's options apart for the store and for preflight. */
static int read_options(planctl *p, call *c)
{
    const planctl_admit_options *o = c->opts;
    planctl_trigger_options t = PLANCTL_TRIGGER_OPTIONS_INIT;

    c->topts = t;
    memset(&c->checks, 0, sizeof c->checks);
    memset(&c->change, 0, sizeof c->change);
    c->change.values = c->params;
    c->change.nvalues = c->nparams;
    if (!o)
        return 0;
    /* Version 1 is the struct up to preflight_skip. */
    if (o->version < 1 || o->version > PLANCTL_ADMIT_OPTIONS_VERSION)
        return pctl_err(p, PLANCTL_EINVAL,
                        "admission options of version %u: this library "
                        "knows versions 1 to %d",
                        o->version, PLANCTL_ADMIT_OPTIONS_VERSION);
    if (o->version >= 2) {
        if (o->nunset && !o->unset)
            return pctl_err(p, PLANCTL_EINVAL,
                            "admission options: nunset is %zu but unset is "
                            "NULL",
                            o->nunset);
        if (c->what == SET || c->what == UPGRADE) {
            c->change.unset = o->unset;
            c->change.nunset = o->nunset;
        }
        c->change.files = o->param_files;
    }
    if (o->preflight_deadline_ms < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "preflight deadline of %lld ms: give 0 (the "
                        "default, 10 s) or more",
                        (long long)o->preflight_deadline_ms);
    c->topts.queue = o->queue;
    c->topts.reason = o->reason;
    c->checks.deadline_ms = o->preflight_deadline_ms;
    c->checks.skip = o->preflight_skip;
    return 0;
}

static int admit(planctl_admitted *out, planctl *p, call *c)
{
    pctl_preflight_gate g;
    char *msg = NULL, *passed = NULL;
    int rc, round = 0;

    if (out)
        memset(out, 0, sizeof *out);
    if (!out || !p)
        return pctl_err_arg(p, !p ? "p" : "out");
    if ((rc = read_options(p, c)) < 0)
        return rc;
    memset(&g, 0, sizeof g);
    c->report = NULL;
    /* One write transaction when the plan has no checks; with checks, a
     * first one that stops before admitting, the checks outside it, and a
     * second that admits. */
    while ((rc = store_call(out, p, c, &g)) == PCTL_STOP_FOR_CHECKS) {
        if (++round > MAX_ROUNDS) {
            rc = pctl_err(p, PLANCTL_EBUSY,
                          "instance \"%s\" changed while its preflight "
                          "checks ran, %d times; try again",
                          c->name, MAX_ROUNDS);
            break;
        }
        if ((rc = run_checks(p, c, &g, &passed, &msg)) < 0)
            break;
    }
    if (rc == 0 && c->what == CREATE && msg) {
        pctl_instance_row row;

        if (pctl_instance_find(&row, p, c->name) == 0)
            record(p, row.id, msg, c->report);
        pctl_instance_row_clear(&row);
    }
    pctl_preflight_gate_clear(&g);
    pctl_free(passed);
    pctl_free(msg);
    /* The report goes back whether the checks admitted or refused. */
    out->preflight_report = c->report;
    return rc;
}

void planctl_admitted_clear(planctl_admitted *a)
{
    if (!a)
        return;
    pctl_free(a->preflight_report);
    memset(a, 0, sizeof *a);
}

int planctl_admit_create(planctl_admitted *out, planctl *p, const char *name,
                         const char *definition, const char *version,
                         const planctl_param *params, size_t nparams,
                         const planctl_admit_options *opts)
{
    call c = {.what = CREATE,
              .name = name,
              .definition = definition,
              .version = version,
              .params = params,
              .nparams = nparams,
              .opts = opts};

    return admit(out, p, &c);
}

int planctl_admit_set(planctl_admitted *out, planctl *p, const char *name,
                      const planctl_param *params, size_t nparams,
                      const planctl_admit_options *opts)
{
    call c = {.what = SET,
              .name = name,
              .params = params,
              .nparams = nparams,
              .opts = opts};

    return admit(out, p, &c);
}

int planctl_admit_upgrade(planctl_admitted *out, planctl *p, const char *name,
                          const char *version, const planctl_param *params,
                          size_t nparams, const planctl_admit_options *opts)
{
    call c = {.what = UPGRADE,
              .name = name,
              .version = version,
              .params = params,
              .nparams = nparams,
              .opts = opts};

    return admit(out, p, &c);
}

int planctl_admit_trigger(planctl_admitted *out, planctl *p,
                          const char *instance, const char *plan,
                          const planctl_admit_options *opts)
{
    call c = {.what = TRIGGER, .name = instance, .plan = plan, .opts = opts};

    return admit(out, p, &c);
}

int planctl_admit_retry(planctl_admitted *out, planctl *p, const char *instance,
                        int64_t run_id, const planctl_admit_options *opts)
{
    call c = {.what = RETRY, .name = instance, .run_id = run_id, .opts = opts};

    return admit(out, p, &c);
}

/* The id-only forms: the planctl_admit_* call with the default options,
 * the run id kept (a NULL out is refused by admit() with nothing done). */

static int run_of(int64_t *out, planctl_admitted *a, int rc)
{
    if (out)
        *out = a->run;
    planctl_admitted_clear(a);
    return rc;
}

int planctl_instance_create(int64_t *out, planctl *p, const char *name,
                            const char *definition, const char *version,
                            const planctl_param *params, size_t nparams)
{
    planctl_admitted a = {0};

    return run_of(out, &a,
                  planctl_admit_create(out ? &a : NULL, p, name, definition,
                                       version, params, nparams, NULL));
}

int planctl_instance_set(int64_t *out, planctl *p, const char *name,
                         const planctl_param *params, size_t nparams)
{
    planctl_admitted a = {0};

    return run_of(
        out, &a,
        planctl_admit_set(out ? &a : NULL, p, name, params, nparams, NULL));
}

int planctl_instance_upgrade(int64_t *out, planctl *p, const char *name,
                             const char *version, const planctl_param *params,
                             size_t nparams)
{
    planctl_admitted a = {0};

    return run_of(out, &a,
                  planctl_admit_upgrade(out ? &a : NULL, p, name, version,
                                        params, nparams, NULL));
}

int planctl_plan_trigger(int64_t *out, planctl *p, const char *instance,
                         const char *plan, const planctl_trigger_options *opts)
{
    planctl_admit_options o = PLANCTL_ADMIT_OPTIONS_INIT;
    planctl_admitted a = {0};

    if (opts && opts->version != PLANCTL_TRIGGER_OPTIONS_VERSION) {
        if (out)
            *out = 0;
        return pctl_err(p, PLANCTL_EINVAL,
                        "trigger options of version %u: this library "
                        "knows version %d",
                        opts->version, PLANCTL_TRIGGER_OPTIONS_VERSION);
    }
    if (opts) {
        o.queue = opts->queue;
        o.reason = opts->reason;
    }
    return run_of(
        out, &a, planctl_admit_trigger(out ? &a : NULL, p, instance, plan, &o));
}

int planctl_run_retry(int64_t *out, planctl *p, const char *instance,
                      int64_t run_id)
{
    planctl_admitted a = {0};

    return run_of(
        out, &a,
        planctl_admit_retry(out ? &a : NULL, p, instance, run_id, NULL));
}
