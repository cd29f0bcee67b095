/*
 * defaults.c - the defaulting runner and the built-in defaults.
 *
 * Defaults run on the decoded document before any rule, so every rule and
 * the model builder see one complete document and none of them repeats a
 * default.  They change the document only through pctl_default_set(), which
 * refuses to touch a field that is present: what the user wrote - even a
 * value of the wrong type - is left for the validators to judge.  The
 * walk (walk.c) hands the defaults the same nodes it hands the validators;
 * the document is the defaults' own, so casting the walk's const away is
 * sound here and nowhere else.
 */
#include "defaults.h"

#include <string.h>

#include "alloc.h"
#include "def.h"
#include "planctl.h"

/* The cap of the default max_backoff, unless backoff is larger. */
#define DEFAULT_MAX_BACKOFF_MS 60000

int pctl_defaults_add(pctl_defaults *ds, const char *name, pctl_default_fn fn,
                      void *data)
{
    if (ds->n == ds->cap) {
        size_t cap = ds->cap ? ds->cap * 2 : 8;
        pctl_default *items = pctl_realloc(ds->items, cap * sizeof(*items));

        if (!items)
            return PLANCTL_ENOMEM;
        ds->items = items;
        ds->cap = cap;
    }
    ds->items[ds->n].name = name;
    ds->items[ds->n].fn = fn;
    ds->items[ds->n].data = data;
    ds->n++;
    return 0;
}

void pctl_defaults_clear(pctl_defaults *ds)
{
    pctl_free(ds->items);
    ds->items = NULL;
    ds->n = ds->cap = 0;
}

int pctl_defaults_run(const pctl_defaults *ds, json_t *doc,
                      pctl_ferr_list *errs)
{
    int failed = 0;
    size_t i;

    for (i = 0; i < ds->n; i++) {
        pctl_sink s = PCTL_SINK_INIT;
        int rc = ds->items[i].fn(doc, &s, ds->items[i].data);

        if (rc < 0 && rc != PLANCTL_ENOMEM) {
            failed = 1;
            if (s.nerrs == 0)
                rc = pctl_sink_fail(&s, NULL, PCTL_FERR_INVALID, NULL,
                                    "default \"%s\" could not be applied: %s",
                                    ds->items[i].name, planctl_strerror(rc));
            else
                rc = 0;
        }
        if (rc == 0)
            rc = pctl_ferr_list_merge(errs, &s.errs, (size_t)-1, NULL);
        pctl_sink_clear(&s);
        if (rc < 0)
            return rc;
    }
    return failed ? PLANCTL_EDEFINITION : 0;
}

int pctl_default_set(json_t *o, const char *key, json_t *value)
{
    if (!value)
        return PLANCTL_ENOMEM;
    if (!json_is_object(o) || json_object_get(o, key)) {
        json_decref(value);
        return 0;
    }
    return json_object_set_new(o, key, value) == 0 ? 0 : PLANCTL_ENOMEM;
}

/* ---- the built-in defaults ----------------------------------------------- */

/* The node of a visit, writable: see the note at the top. */
static json_t *writable(const pctl_visit *v)
{
    return (json_t *)v->value;
}

/* A parameter without a default is required unless it says otherwise
 * (README, "Decisions where the design is silent"). */
static int param_required(pctl_sink *s, const pctl_visit *v, void *data)
{
    json_t *o = writable(v);

    (void)s;
    (void)data;
    if (v->node != PCTL_NODE_PARAM || !json_is_object(o))
        return 0;
    return pctl_default_set(o, "required",
                            json_boolean(!json_object_get(o, "default")));
}

static int task_spec(pctl_sink *s, const pctl_visit *v, void *data)
{
    (void)s;
    (void)data;
    if (v->node != PCTL_NODE_TASK)
        return 0;
    return pctl_default_set(writable(v), "spec", json_object());
}

/* Serial, not KUDO's parallel, which surprised users (kudo#1766). */
static int strategy(pctl_sink *s, const pctl_visit *v, void *data)
{
    (void)s;
    (void)data;
    if (v->node != PCTL_NODE_PLAN && v->node != PCTL_NODE_PHASE)
        return 0;
    return pctl_default_set(writable(v), "strategy", json_string("serial"));
}

/* The retry object comes with the step, so the same walk visits it next,
 * like one the user wrote. */
static int retry(pctl_sink *s, const pctl_visit *v, void *data)
{
    json_t *o = writable(v);
    const char *backoff;
    int64_t ms;

    (void)s;
    (void)data;
    if (v->node == PCTL_NODE_STEP)
        return pctl_default_set(o, "retry", json_object());
    if (v->node != PCTL_NODE_RETRY || !json_is_object(o))
        return 0;
    PCTL_CHECK(pctl_default_set(o, "attempts", json_integer(3)));
    PCTL_CHECK(pctl_default_set(o, "backoff", json_string("1s")));
    PCTL_CHECK(pctl_default_set(o, "multiplier", json_real(2)));
    /* The default cap must not contradict a backoff the user chose:
     * "backoff": "2m" alone means waits of 2m, not an error.  A backoff
     * that is not a duration leaves the cap absent: the validators report
     * the backoff, and nothing is built from the document. */
    if (pctl_get_duration(o, "backoff", &ms, &backoff) < 1)
        return 0;
    return pctl_default_set(
        o, "max_backoff",
        json_string(ms > DEFAULT_MAX_BACKOFF_MS ? backoff : "1m"));
}

/* Each built-in default is one visitor over the walk. */
static int walk_with(json_t *doc, pctl_sink *s,
                     int (*fn)(pctl_sink *, const pctl_visit *, void *))
{
    pctl_visitor vis;

    vis.node = fn;
    vis.list = NULL;
    return pctl_walk(doc, s, &vis, NULL);
}

static int default_required(json_t *doc, pctl_sink *s, void *data)
{
    (void)data;
    return walk_with(doc, s, param_required);
}

static int default_spec(json_t *doc, pctl_sink *s, void *data)
{
    (void)data;
    return walk_with(doc, s, task_spec);
}

static int default_strategy(json_t *doc, pctl_sink *s, void *data)
{
    (void)data;
    return walk_with(doc, s, strategy);
}

static int default_retry(json_t *doc, pctl_sink *s, void *data)
{
    (void)data;
    return walk_with(doc, s, retry);
}

static pctl_default builtin_items[] = {
    {"parameter required", default_required, NULL},
    {"task spec", default_spec, NULL},
    {"strategy", default_strategy, NULL},
    {"retry", default_retry, NULL},
};

static const pctl_defaults builtin = {PCTL_COUNT(builtin_items),
                                      PCTL_COUNT(builtin_items), builtin_items};

const pctl_defaults *pctl_defaults_builtin(void)
{
    return &builtin;
}
