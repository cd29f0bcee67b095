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

/* A parameter is required only when it says "required": true, as in
 * KUDO: one without a default and not required simply has no value. */
static int param_required(pctl_sink *s, const pctl_visit *v, void *data)
{
    json_t *o = writable(v);

    (void)s;
    (void)data;
    if (v->node != PCTL_NODE_PARAM || !json_is_object(o))
        return 0;
    return pctl_default_set(o, "required", json_false());
}

static int task_spec(pctl_sink *s, const pctl_visit *v, void *data)
{
    (void)s;
    (void)data;
    if (v->node != PCTL_NODE_TASK)
        return 0;
    return pctl_default_set(writable(v), "spec", json_object());
}

/*
 * Values the defaults write, made once per run and shared by every node
 * they fill (jansson counts references): a definition with a thousand
 * steps gets one default retry object, not a thousand.  Nothing changes a
 * document once it is defaulted, so sharing is safe.
 */
typedef struct shared {
    json_t *serial;     /* "serial" */
    json_t *retry;      /* the whole default retry object */
    json_t *attempts;   /* 3 */
    json_t *backoff;    /* "1s" */
    json_t *multiplier; /* 2 */
    json_t *cap;        /* "1m" */
} shared;

static void shared_free(shared *sh)
{
    json_decref(sh->serial);
    json_decref(sh->retry);
    json_decref(sh->attempts);
    json_decref(sh->backoff);
    json_decref(sh->multiplier);
    json_decref(sh->cap);
}

/* Sets o.key to a new reference to *v, made by make() on first use. */
static int set_shared(json_t *o, const char *key, json_t **v,
                      json_t *(*make)(void))
{
    if (!json_is_object(o) || json_object_get(o, key))
        return 0;
    if (!*v && !(*v = make()))
        return PLANCTL_ENOMEM;
    return pctl_default_set(o, key, json_incref(*v));
}

static json_t *make_serial(void)
{
    return json_string("serial");
}

static json_t *make_attempts(void)
{
    return json_integer(3);
}

static json_t *make_backoff(void)
{
    return json_string("1s");
}

static json_t *make_multiplier(void)
{
    return json_real(2);
}

static json_t *make_cap(void)
{
    return json_string("1m");
}

static json_t *make_retry(void)
{
    json_t *o = json_object();

    if (!o || json_object_set_new(o, "attempts", make_attempts()) ||
        json_object_set_new(o, "backoff", make_backoff()) ||
        json_object_set_new(o, "multiplier", make_multiplier()) ||
        json_object_set_new(o, "max_backoff", make_cap())) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Serial, not KUDO's parallel, which surprised users (kudo#1766). */
static int strategy(pctl_sink *s, const pctl_visit *v, void *data)
{
    shared *sh = data;

    (void)s;
    if (v->node != PCTL_NODE_PLAN && v->node != PCTL_NODE_PHASE)
        return 0;
    return set_shared(writable(v), "strategy", &sh->serial, make_serial);
}

/* A step without retry gets the default object whole; the walk then
 * visits it like one the user wrote, and finds nothing to fill. */
static int retry(pctl_sink *s, const pctl_visit *v, void *data)
{
    json_t *o = writable(v);
    shared *sh = data;
    const char *backoff;
    int64_t ms;

    (void)s;
    if (v->node == PCTL_NODE_STEP)
        return set_shared(o, "retry", &sh->retry, make_retry);
    if (v->node != PCTL_NODE_RETRY || !json_is_object(o))
        return 0;
    PCTL_CHECK(set_shared(o, "attempts", &sh->attempts, make_attempts));
    PCTL_CHECK(set_shared(o, "backoff", &sh->backoff, make_backoff));
    PCTL_CHECK(set_shared(o, "multiplier", &sh->multiplier, make_multiplier));
    /* The default cap must not contradict a backoff the user chose:
     * "backoff": "2m" alone means waits of 2m, not an error.  A backoff
     * that is not a duration leaves the cap absent: the validators report
     * the backoff, and nothing is built from the document. */
    if (pctl_get_duration(o, "backoff", &ms, &backoff) < 1)
        return 0;
    if (ms > DEFAULT_MAX_BACKOFF_MS)
        return pctl_default_set(o, "max_backoff", json_string(backoff));
    return set_shared(o, "max_backoff", &sh->cap, make_cap);
}

/* Each built-in default is one visitor over the walk. */
static int walk_with(json_t *doc, pctl_sink *s,
                     int (*fn)(pctl_sink *, const pctl_visit *, void *))
{
    pctl_visitor vis;
    shared sh;
    int rc;

    memset(&sh, 0, sizeof(sh));
    vis.node = fn;
    vis.list = NULL;
    rc = pctl_walk(doc, s, &vis, &sh);
    shared_free(&sh);
    return rc;
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
