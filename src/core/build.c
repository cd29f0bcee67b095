/*
 * build.c - the model (pctl_def) from a document that is defaulted and
 * passed every rule.
 *
 * Nothing here judges the document: the rules did.  What the builder
 * still checks is that the defaults ran (a field they always fill is
 * present), since building from an undefaulted document would silently
 * give zero retries; that is a bug, reported as PLANCTL_ERROR.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "pipeline.h"
#include "planctl.h"

static int copy(char **dst, const char *s)
{
    if (!s)
        return 0;
    *dst = pctl_strdup(s);
    return *dst ? 0 : PLANCTL_ENOMEM;
}

/* Allocates n zeroed items of size bytes; NULL for none. */
static int alloc_items(void **out, size_t n, size_t size)
{
    *out = NULL;
    if (n == 0)
        return 0;
    *out = pctl_calloc(n, size);
    return *out ? 0 : PLANCTL_ENOMEM;
}

static int strategy(pctl_strategy *out, const json_t *o)
{
    const char *s = json_string_value(json_object_get(o, "strategy"));

    if (!s)
        return PLANCTL_ERROR;
    *out = strcmp(s, "parallel") == 0 ? PCTL_STRATEGY_PARALLEL
                                      : PCTL_STRATEGY_SERIAL;
    return 0;
}

/* o.field as milliseconds; absent is 0 (no timeout, no deadline). */
static int64_t duration_ms(const json_t *o, const char *field)
{
    int64_t ms = 0;

    pctl_get_duration(o, field, &ms, NULL);
    return ms;
}

/* The default is kept as JSON of the parameter's type (a string
 * parameter's default written as a number or a boolean as its text, see
 * pctl_ptype_default); a null default is none. */
static int build_param(pctl_param_def *p, const json_t *o)
{
    const json_t *def = json_object_get(o, "default");
    const json_t *req = json_object_get(o, "required");
    const json_t *en = json_object_get(o, "enum");
    const char *type = pctl_get_string(o, "type");
    json_t *v;
    int rc;

    if (!json_is_boolean(req) || (type && !pctl_ptype_find(&p->type, type)))
        return PLANCTL_ERROR;
    p->required = json_is_true(req);
    p->immutable = json_is_true(json_object_get(o, "immutable"));
    p->secret = json_is_true(json_object_get(o, "secret"));
    PCTL_CHECK(copy(&p->name, pctl_get_string(o, "name")));
    if (def && !json_is_null(def)) {
        if (!(v = pctl_ptype_default(p->type, def)))
            return PLANCTL_ENOMEM;
        rc = pctl_json_encode(&p->default_json, v,
                              JSON_ENCODE_ANY | JSON_COMPACT);
        json_decref(v);
        PCTL_CHECK(rc);
    }
    if (en)
        PCTL_CHECK(pctl_json_encode(&p->enum_json, en, JSON_COMPACT));
    PCTL_CHECK(copy(&p->trigger, pctl_get_string(o, "trigger")));
    return copy(&p->description, pctl_get_string(o, "description"));
}

/* The definition's metadata: all optional. */
static int build_meta(pctl_def *d, const json_t *doc)
{
    const json_t *m = json_object_get(doc, "maintainers");
    const json_t *u = json_object_get(doc, "upgradableFrom");
    size_t i;
    void *p;

    PCTL_CHECK(copy(&d->description, pctl_get_string(doc, "description")));
    PCTL_CHECK(copy(&d->url, pctl_get_string(doc, "url")));
    PCTL_CHECK(copy(&d->app_version, pctl_get_string(doc, "appVersion")));
    PCTL_CHECK(alloc_items(&p, json_array_size(m), sizeof(*d->maintainers)));
    d->maintainers = p;
    d->nmaintainers = json_array_size(m);
    for (i = 0; i < d->nmaintainers; i++) {
        const json_t *e = json_array_get(m, i);

        PCTL_CHECK(copy(&d->maintainers[i].name, pctl_get_string(e, "name")));
        PCTL_CHECK(copy(&d->maintainers[i].email, pctl_get_string(e, "email")));
    }
    d->has_upgradable_from = u != NULL;
    PCTL_CHECK(alloc_items(&p, json_array_size(u), sizeof(char *)));
    d->upgradable_from = p;
    d->nupgradable_from = json_array_size(u);
    for (i = 0; i < d->nupgradable_from; i++)
        PCTL_CHECK(
            copy(&d->upgradable_from[i], pctl_string(json_array_get(u, i))));
    return 0;
}

static int build_task(pctl_task_def *t, const json_t *o)
{
    const json_t *spec = json_object_get(o, "spec");

    if (!spec)
        return PLANCTL_ERROR;
    PCTL_CHECK(copy(&t->name, pctl_get_string(o, "name")));
    PCTL_CHECK(copy(&t->kind, pctl_get_string(o, "kind")));
    /* Sorted keys make equal specs equal text, which the store relies on
     * to tell a re-apply from a change. */
    return pctl_json_encode(&t->spec, spec, JSON_COMPACT | JSON_SORT_KEYS);
}

static int build_retry(pctl_retry *r, const json_t *o)
{
    const json_t *a = json_object_get(o, "attempts");
    const json_t *m = json_object_get(o, "multiplier");

    if (!json_is_integer(a) || !json_is_number(m) ||
        pctl_get_duration(o, "backoff", &r->backoff_ms, NULL) != 1 ||
        pctl_get_duration(o, "max_backoff", &r->max_backoff_ms, NULL) != 1)
        return PLANCTL_ERROR;
    r->attempts = (int)json_integer_value(a);
    r->multiplier = json_number_value(m);
    return 0;
}

static int build_step(pctl_step_def *st, const json_t *o,
                      const pctl_names *tasks)
{
    const json_t *list = json_object_get(o, "tasks");
    size_t i;
    void *p;

    PCTL_CHECK(copy(&st->name, pctl_get_string(o, "name")));
    PCTL_CHECK(build_retry(&st->retry, json_object_get(o, "retry")));
    st->timeout_ms = duration_ms(o, "timeout");
    PCTL_CHECK(alloc_items(&p, json_array_size(list), sizeof(size_t)));
    st->tasks = p;
    st->ntasks = json_array_size(list);
    for (i = 0; i < st->ntasks; i++)
        if (!pctl_names_find(tasks, json_string_value(json_array_get(list, i)),
                             &st->tasks[i]))
            return PLANCTL_ERROR;
    return 0;
}

static int build_phase(pctl_phase_def *ph, const json_t *o,
                       const pctl_names *tasks)
{
    const json_t *steps = json_object_get(o, "steps");
    size_t i;
    void *p;

    PCTL_CHECK(copy(&ph->name, pctl_get_string(o, "name")));
    PCTL_CHECK(strategy(&ph->strategy, o));
    PCTL_CHECK(alloc_items(&p, json_array_size(steps), sizeof(*ph->steps)));
    ph->steps = p;
    ph->nsteps = json_array_size(steps);
    for (i = 0; i < ph->nsteps; i++)
        PCTL_CHECK(build_step(&ph->steps[i], json_array_get(steps, i), tasks));
    return 0;
}

static int build_plan(pctl_plan_def *pl, const char *name, const json_t *o,
                      const pctl_names *tasks)
{
    const json_t *phases = json_object_get(o, "phases");
    const json_t *checks = json_object_get(o, "preflight");
    size_t i;
    void *p;

    PCTL_CHECK(copy(&pl->name, name));
    PCTL_CHECK(strategy(&pl->strategy, o));
    pl->deadline_ms = duration_ms(o, "deadline");
    PCTL_CHECK(
        alloc_items(&p, json_array_size(checks), sizeof(*pl->preflight)));
    pl->preflight = p;
    pl->nchecks = json_array_size(checks);
    for (i = 0; i < pl->nchecks; i++) {
        const json_t *c = json_array_get(checks, i);

        PCTL_CHECK(copy(&pl->preflight[i].name, pctl_get_string(c, "name")));
        if (!pctl_names_find(tasks, pctl_get_string(c, "task"),
                             &pl->preflight[i].task))
            return PLANCTL_ERROR;
    }
    PCTL_CHECK(alloc_items(&p, json_array_size(phases), sizeof(*pl->phases)));
    pl->phases = p;
    pl->nphases = json_array_size(phases);
    for (i = 0; i < pl->nphases; i++)
        PCTL_CHECK(
            build_phase(&pl->phases[i], json_array_get(phases, i), tasks));
    return 0;
}

static int plan_cmp(const void *a, const void *b)
{
    const pctl_plan_def *x = a, *y = b;

    return strcmp(x->name, y->name);
}

static int build(pctl_def *d, const json_t *doc, const pctl_names *tasks)
{
    const json_t *params = json_object_get(doc, "parameters");
    const json_t *tlist = json_object_get(doc, "tasks");
    const json_t *plans = json_object_get(doc, "plans");
    size_t i;
    void *p, *it;

    PCTL_CHECK(copy(&d->name, pctl_get_string(doc, "name")));
    PCTL_CHECK(copy(&d->version, pctl_get_string(doc, "version")));
    PCTL_CHECK(build_meta(d, doc));
    PCTL_CHECK(alloc_items(&p, json_array_size(params), sizeof(*d->params)));
    d->params = p;
    d->nparams = json_array_size(params);
    for (i = 0; i < d->nparams; i++)
        PCTL_CHECK(build_param(&d->params[i], json_array_get(params, i)));
    PCTL_CHECK(alloc_items(&p, json_array_size(tlist), sizeof(*d->tasks)));
    d->tasks = p;
    d->ntasks = json_array_size(tlist);
    for (i = 0; i < d->ntasks; i++)
        PCTL_CHECK(build_task(&d->tasks[i], json_array_get(tlist, i)));
    PCTL_CHECK(alloc_items(&p, json_object_size(plans), sizeof(*d->plans)));
    d->plans = p;
    d->nplans = json_object_size(plans);
    i = 0;
    for (it = pctl_iter(plans); it; it = pctl_iter_next(plans, it), i++)
        PCTL_CHECK(build_plan(&d->plans[i], json_object_iter_key(it),
                              json_object_iter_value(it), tasks));
    if (d->nplans > 1)
        qsort(d->plans, d->nplans, sizeof(*d->plans), plan_cmp);
    return 0;
}

int pctl_def_build(pctl_def **out, const json_t *doc, const pctl_names *tasks)
{
    pctl_def *d = pctl_calloc(1, sizeof(*d));
    int rc;

    *out = NULL;
    if (!d)
        return PLANCTL_ENOMEM;
    rc = build(d, doc, tasks);
    if (rc < 0) {
        pctl_def_free(d);
        return rc;
    }
    *out = d;
    return 0;
}
