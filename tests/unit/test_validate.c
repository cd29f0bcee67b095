/* test_validate.c - the defaulting and validation runners: defaults never
 * overwrite, order and failure semantics, concurrency, flattening,
 * de-duplication, no validator mutating its input, and the public API. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/alloc.h"
#include "core/def.h"
#include "core/defaults.h"
#include "core/rules.h"
#include "core/validate.h"
#include "planctl.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */

typedef struct sb {
    char *s;
    size_t len, cap;
} sb;

static void sb_add(sb *b, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_add(sb *b, const char *fmt, ...)
{
    va_list ap, ap2;
    int n;

    va_start(ap, fmt);
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    assert_true(n >= 0);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    va_end(ap);
}

/* Every error in l rendered, one per line (malloc'd). */
static char *render_all(const pctl_ferr_list *l)
{
    sb b = {NULL, 0, 0};
    size_t i;

    sb_add(&b, "%s", "");
    for (i = 0; i < l->n; i++) {
        char *line = pctl_ferr_render(&l->items[i]);

        assert_non_null(line);
        sb_add(&b, "%s\n", line);
        pctl_free(line);
    }
    return b.s;
}

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &e);

    if (!doc)
        fail_msg("%s: %s", text, e.text);
    return doc;
}

static void assert_json(const json_t *got, const char *want)
{
    json_t *w = load(want);

    if (!json_equal(got, w)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);

        print_error("--- got:\n%s\n--- want:\n%s\n", g, want);
        free(g);
        json_decref(w);
        fail();
    }
    json_decref(w);
}

/* Whether every value in a is in b, at the same place and equal: b may
 * have more object members, nothing else. */
static int contained(const json_t *a, const json_t *b)
{
    if (json_is_object(a)) {
        const char *k;
        json_t *v;

        if (!json_is_object(b))
            return 0;
        json_object_foreach((json_t *)a, k, v)
        {
            if (!contained(v, json_object_get(b, k)))
                return 0;
        }
        return 1;
    }
    if (json_is_array(a)) {
        size_t i;

        if (!json_is_array(b) || json_array_size(a) != json_array_size(b))
            return 0;
        for (i = 0; i < json_array_size(a); i++)
            if (!contained(json_array_get(a, i), json_array_get(b, i)))
                return 0;
        return 1;
    }
    return json_equal(a, b);
}

/* ---- defaults ----------------------------------------------------------- */

static json_t *defaulted(const char *text)
{
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    json_t *doc = load(text);

    assert_int_equal(pctl_defaults_run(pctl_defaults_builtin(), doc, &errs), 0);
    assert_int_equal(errs.n, 0);
    return doc;
}

static void test_defaults_fill(void **state)
{
    json_t *doc;

    (void)state;
    doc = defaulted(
        "{\"parameters\":[{\"name\":\"A\"},{\"name\":\"B\",\"default\":1}],"
        "\"tasks\":[{\"name\":\"t\",\"kind\":\"Dummy\"}],"
        "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["
        "{\"name\":\"s\",\"tasks\":[\"t\"]},"
        "{\"name\":\"u\",\"tasks\":[\"t\"],\"retry\":{\"backoff\":\"2m\"}},"
        "{\"name\":\"v\",\"tasks\":[\"t\"],\"retry\":{\"backoff\":\"1m\"}}"
        "]}]}}}");
    assert_json(
        doc, "{\"parameters\":[{\"name\":\"A\",\"required\":false},"
             "{\"name\":\"B\",\"default\":1,\"required\":false}],"
             "\"tasks\":[{\"name\":\"t\",\"kind\":\"Dummy\",\"spec\":{}}],"
             "\"plans\":{\"deploy\":{\"strategy\":\"serial\",\"phases\":[{"
             "\"name\":\"p\",\"strategy\":\"serial\",\"steps\":["
             "{\"name\":\"s\",\"tasks\":[\"t\"],\"retry\":{\"attempts\":3,"
             "\"backoff\":\"1s\",\"multiplier\":2.0,\"max_backoff\":\"1m\"}},"
             "{\"name\":\"u\",\"tasks\":[\"t\"],\"retry\":{\"attempts\":3,"
             "\"backoff\":\"2m\",\"multiplier\":2.0,\"max_backoff\":\"2m\"}},"
             "{\"name\":\"v\",\"tasks\":[\"t\"],\"retry\":{\"attempts\":3,"
             "\"backoff\":\"1m\",\"multiplier\":2.0,\"max_backoff\":\"1m\"}}"
             "]}]}}}");
    json_decref(doc);

    /* A backoff that is no duration leaves the cap to the validators;
     * shapes the defaults cannot fill are left alone. */
    doc = defaulted("{\"parameters\":[1,[]],\"tasks\":{},\"plans\":{\"a\":"
                    "[],\"b\":{\"phases\":[{\"steps\":[{\"retry\":{"
                    "\"backoff\":\"soon\"}},{\"retry\":7}]},3]}}}");
    assert_json(doc,
                "{\"parameters\":[1,[]],\"tasks\":{},\"plans\":{\"a\":[],"
                "\"b\":{\"strategy\":\"serial\",\"phases\":[{\"strategy\":"
                "\"serial\",\"steps\":[{\"retry\":{\"backoff\":\"soon\","
                "\"attempts\":3,\"multiplier\":2.0}},{\"retry\":7}]},3]}}}");
    json_decref(doc);

    /* Not an object at all: nothing to fill. */
    doc = defaulted("[1,2]");
    assert_json(doc, "[1,2]");
    json_decref(doc);
}

/* Every field a default fills, already written (some of the wrong type,
 * some equal to the default): the document comes out unchanged. */
static void test_defaults_keep_user_values(void **state)
{
    static const char full[] =
        "{\"parameters\":[{\"name\":\"A\",\"required\":false},{\"name\":"
        "\"B\",\"default\":\"x\",\"required\":true},{\"name\":\"C\","
        "\"required\":\"yes\"}],"
        "\"tasks\":[{\"name\":\"t\",\"kind\":\"k\",\"spec\":{\"a\":1}},"
        "{\"name\":\"u\",\"kind\":\"k\",\"spec\":[]},{\"name\":\"v\","
        "\"kind\":\"k\",\"spec\":null}],"
        "\"plans\":{\"deploy\":{\"strategy\":\"parallel\",\"phases\":[{"
        "\"strategy\":\"serail\",\"steps\":[{\"retry\":{\"attempts\":1,"
        "\"backoff\":\"5m\",\"multiplier\":1,\"max_backoff\":\"1s\"}},"
        "{\"retry\":{\"attempts\":\"x\",\"backoff\":7,\"multiplier\":null,"
        "\"max_backoff\":[]}},{\"retry\":\"never\"}]}]},\"other\":{"
        "\"strategy\":3}}}";
    static const char mixed[] =
        "{\"parameters\":[{\"name\":\"A\",\"default\":\"1\"},{\"name\":\"B\","
        "\"required\":true}],\"tasks\":[{\"name\":\"t\",\"spec\":{\"x\":"
        "{\"y\":[1,2]}}},{\"name\":\"u\"}],\"plans\":{\"deploy\":{"
        "\"phases\":[{\"strategy\":\"parallel\",\"steps\":[{\"retry\":{"
        "\"attempts\":7}},{\"retry\":{\"max_backoff\":\"10ms\"}},{}]},{}]},"
        "\"update\":{\"strategy\":\"parallel\"}}}";
    json_t *doc = load(full), *copy = json_deep_copy(doc);
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;

    (void)state;
    assert_int_equal(pctl_defaults_run(pctl_defaults_builtin(), doc, &errs), 0);
    assert_true(json_equal(doc, copy));
    json_decref(doc);
    json_decref(copy);

    doc = load(mixed);
    copy = json_deep_copy(doc);
    assert_int_equal(pctl_defaults_run(pctl_defaults_builtin(), doc, &errs), 0);
    assert_false(json_equal(doc, copy)); /* something was filled */
    assert_true(contained(copy, doc));   /* nothing written was changed */
    json_decref(doc);
    json_decref(copy);
    assert_int_equal(errs.n, 0);
}

/* A test default: appends its name to the trace in data, then does what
 * its name says. */
typedef struct trace {
    char s[256];
} trace;

static int td_set(json_t *doc, pctl_sink *s, void *data)
{
    (void)s;
    strcat(((trace *)data)->s, "set ");
    return pctl_default_set(doc, "a", json_string("default"));
}

static int td_fail_reported(json_t *doc, pctl_sink *s, void *data)
{
    strcat(((trace *)data)->s, "fail ");
    /* It sees what the earlier default filled: they run in order. */
    assert_non_null(json_object_get(doc, "a"));
    PCTL_CHECK(pctl_sink_key(s, "b"));
    PCTL_CHECK(pctl_sink_fail(s, NULL, PCTL_FERR_INVALID, NULL,
                              "cannot be defaulted: %s", "no c"));
    return PLANCTL_EDEFINITION;
}

static int td_fail_silent(json_t *doc, pctl_sink *s, void *data)
{
    (void)doc;
    (void)s;
    strcat(((trace *)data)->s, "silent ");
    return PLANCTL_EINVAL;
}

static int td_keep(json_t *doc, pctl_sink *s, void *data)
{
    (void)s;
    strcat(((trace *)data)->s, "keep ");
    /* "x" is the user's: a default cannot change it. */
    return pctl_default_set(doc, "x", json_string("default"));
}

static int td_nomem(json_t *doc, pctl_sink *s, void *data)
{
    (void)doc;
    (void)s;
    strcat(((trace *)data)->s, "nomem ");
    return PLANCTL_ENOMEM;
}

static void test_defaults_runner(void **state)
{
    pctl_defaults ds = PCTL_DEFAULTS_INIT;
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    json_t *doc = load("{\"x\":\"mine\"}");
    trace t;
    char *s;

    (void)state;
    memset(&t, 0, sizeof(t));
    assert_int_equal(pctl_defaults_add(&ds, "set", td_set, &t), 0);
    assert_int_equal(pctl_defaults_add(&ds, "fail", td_fail_reported, &t), 0);
    assert_int_equal(pctl_defaults_add(&ds, "silent", td_fail_silent, &t), 0);
    assert_int_equal(pctl_defaults_add(&ds, "keep", td_keep, &t), 0);
    assert_int_equal(pctl_defaults_run(&ds, doc, &errs), PLANCTL_EDEFINITION);
    /* Every default ran, in order, after the failures too. */
    assert_string_equal(t.s, "set fail silent keep ");
    assert_json(doc, "{\"x\":\"mine\",\"a\":\"default\"}");
    s = render_all(&errs);
    assert_string_equal(
        s, "b: Invalid value: cannot be defaulted: no c\n"
           "Invalid value: default \"silent\" could not be applied: invalid "
           "argument\n");
    free(s);
    pctl_ferr_list_clear(&errs);

    /* Running out of memory stops the run at once. */
    memset(&t, 0, sizeof(t));
    pctl_defaults_clear(&ds);
    assert_int_equal(pctl_defaults_add(&ds, "nomem", td_nomem, &t), 0);
    assert_int_equal(pctl_defaults_add(&ds, "set", td_set, &t), 0);
    assert_int_equal(pctl_defaults_run(&ds, doc, &errs), PLANCTL_ENOMEM);
    assert_string_equal(t.s, "nomem ");
    pctl_defaults_clear(&ds);
    json_decref(doc);
}

/* A failing default means no model, even when every rule passes; its
 * error comes before the rules'. */
static void test_defaults_failure_no_model(void **state)
{
    static const char json[] =
        "{\"name\":\"zk\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","
        "\"kind\":\"Dummy\"}],\"plans\":{\"deploy\":{\"phases\":[{\"name\":"
        "\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":[\"t\"]}]}]}}}";
    const pctl_defaults *builtin = pctl_defaults_builtin();
    pctl_defaults ds = PCTL_DEFAULTS_INIT;
    pctl_def_opts opts = PCTL_DEF_OPTS_INIT;
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    pctl_def *d = (pctl_def *)&errs;
    trace t;
    size_t i;
    char *s;

    (void)state;
    memset(&t, 0, sizeof(t));
    for (i = 0; i < builtin->n; i++)
        assert_int_equal(pctl_defaults_add(&ds, builtin->items[i].name,
                                           builtin->items[i].fn,
                                           builtin->items[i].data),
                         0);
    assert_int_equal(pctl_defaults_add(&ds, "silent", td_fail_silent, &t), 0);
    opts.defaults = &ds;
    assert_int_equal(pctl_def_parse(&d, json, strlen(json), NULL, &opts, &errs),
                     PLANCTL_EDEFINITION);
    assert_null(d);
    s = render_all(&errs);
    assert_string_equal(s, "Invalid value: default \"silent\" could not be "
                           "applied: invalid argument\n");
    free(s);
    pctl_ferr_list_clear(&errs);

    /* Without it, the same text is a valid definition. */
    assert_int_equal(pctl_def_parse(&d, json, strlen(json), NULL, NULL, &errs),
                     0);
    assert_non_null(d);
    pctl_def_free(d);
    pctl_defaults_clear(&ds);
}

/* ---- the validation runner ---------------------------------------------- */

/* What the test validators share: the order they finished in, and the
 * threads they ran on. */
typedef struct shared {
    pthread_mutex_t lock;
    char finished[256];
    int running, max_running;
} shared;

typedef struct tv {
    const char *label;
    int sleep_ms;
    int nerrs;       /* errors to report, at paths "<label>.N" */
    const char *dup; /* a line to report as well, if not NULL */
    shared *sh;
    pthread_t thread;
} tv;

static void sleep_ms(int ms)
{
    struct timespec ts;

    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int tv_run(const pctl_vin *in, pctl_sink *s, void *data)
{
    tv *v = data;
    int i;

    (void)in;
    v->thread = pthread_self();
    pthread_mutex_lock(&v->sh->lock);
    if (++v->sh->running > v->sh->max_running)
        v->sh->max_running = v->sh->running;
    pthread_mutex_unlock(&v->sh->lock);
    if (v->sleep_ms)
        sleep_ms(v->sleep_ms);
    for (i = 0; i < v->nerrs; i++) {
        char path[64];

        snprintf(path, sizeof(path), "%s.%d", v->label, i);
        PCTL_CHECK(pctl_sink_key(s, path));
        PCTL_CHECK(
            pctl_sink_fail(s, NULL, PCTL_FERR_INVALID, NULL, "%s", v->label));
        pctl_sink_back(s, 0);
    }
    if (v->dup)
        PCTL_CHECK(
            pctl_sink_fail(s, "dup", PCTL_FERR_INVALID, NULL, "%s", v->dup));
    pthread_mutex_lock(&v->sh->lock);
    v->sh->running--;
    strcat(v->sh->finished, v->label);
    strcat(v->sh->finished, " ");
    pthread_mutex_unlock(&v->sh->lock);
    return 0;
}

static int tv_nomem(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)in;
    (void)s;
    (void)data;
    return PLANCTL_ENOMEM;
}

static void shared_init(shared *sh)
{
    memset(sh, 0, sizeof(*sh));
    assert_int_equal(pthread_mutex_init(&sh->lock, NULL), 0);
}

/* Runs vs with the given workers; returns the errors, one per line. */
static char *run(const pctl_validators *vs, unsigned workers, int want_rc)
{
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    pctl_vin in;
    char *s;

    memset(&in, 0, sizeof(in));
    in.doc = json_null();
    assert_int_equal(pctl_validators_run_all(vs, &in, workers, &errs), want_rc);
    s = render_all(&errs);
    pctl_ferr_list_clear(&errs);
    return s;
}

/* A slow validator registered first still reports first, though the
 * others, running beside it, finish before it. */
static void test_run_order_concurrent(void **state)
{
    pctl_validators vs = PCTL_VALIDATORS_INIT;
    shared sh;
    tv v[4] = {{"a", 300, 1, NULL, NULL, 0},
               {"b", 0, 2, NULL, NULL, 0},
               {"c", 50, 1, NULL, NULL, 0},
               {"d", 0, 1, NULL, NULL, 0}};
    char *s;
    int i;

    (void)state;
    shared_init(&sh);
    for (i = 0; i < 4; i++) {
        v[i].sh = &sh;
        assert_int_equal(pctl_validators_add(
                             &vs, pctl_validator_of(v[i].label, tv_run, &v[i])),
                         0);
    }
    s = run(&vs, 4, PLANCTL_EDEFINITION);
    assert_string_equal(s, "a.0: Invalid value: a\n"
                           "b.0: Invalid value: b\n"
                           "b.1: Invalid value: b\n"
                           "c.0: Invalid value: c\n"
                           "d.0: Invalid value: d\n");
    free(s);
    /* They did run at the same time, and "a" did finish last. */
    assert_true(sh.max_running >= 2);
    assert_string_equal(sh.finished + strlen(sh.finished) - 2, "a ");
    assert_false(pthread_equal(v[0].thread, v[1].thread) &&
                 pthread_equal(v[0].thread, v[2].thread) &&
                 pthread_equal(v[0].thread, v[3].thread));
    pctl_validators_clear(&vs);
    pthread_mutex_destroy(&sh.lock);
}

/* A limit of 0 or 1 runs everything, in order, on the calling thread. */
static void test_run_worker_limits(void **state)
{
    unsigned limits[] = {0, 1};
    size_t k;

    (void)state;
    for (k = 0; k < 2; k++) {
        pctl_validators vs = PCTL_VALIDATORS_INIT;
        shared sh;
        tv v[3] = {{"a", 20, 1, NULL, NULL, 0},
                   {"b", 0, 0, NULL, NULL, 0},
                   {"c", 0, 1, NULL, NULL, 0}};
        char *s;
        int i;

        shared_init(&sh);
        for (i = 0; i < 3; i++) {
            v[i].sh = &sh;
            assert_int_equal(
                pctl_validators_add(&vs, pctl_validator_of("v", tv_run, &v[i])),
                0);
        }
        s = run(&vs, limits[k], PLANCTL_EDEFINITION);
        assert_string_equal(s,
                            "a.0: Invalid value: a\nc.0: Invalid value: c\n");
        free(s);
        assert_string_equal(sh.finished, "a b c ");
        assert_int_equal(sh.max_running, 1);
        for (i = 0; i < 3; i++)
            assert_true(pthread_equal(v[i].thread, pthread_self()));
        pctl_validators_clear(&vs);
        pthread_mutex_destroy(&sh.lock);
    }
}

/* sequentially(...) runs its members in order on one worker, every one of
 * them whatever the earlier ones reported; nested groups flatten into one
 * list in registration order. */
static void test_run_sequentially(void **state)
{
    pctl_validators vs = PCTL_VALIDATORS_INIT;
    pctl_validator inner[2], outer[3];
    shared sh;
    tv v[5] = {{"a", 30, 1, NULL, NULL, 0},
               {"b", 0, 2, NULL, NULL, 0},
               {"c", 10, 1, NULL, NULL, 0},
               {"d", 0, 1, NULL, NULL, 0},
               {"e", 0, 1, NULL, NULL, 0}};
    char *s;
    int i;

    (void)state;
    shared_init(&sh);
    for (i = 0; i < 5; i++)
        v[i].sh = &sh;
    inner[0] = pctl_validator_of("b", tv_run, &v[1]);
    inner[1] = pctl_validator_of("c", tv_run, &v[2]);
    outer[0] = pctl_validator_of("a", tv_run, &v[0]);
    outer[1] = pctl_sequentially("b, c", inner, 2);
    outer[2] = pctl_validator_of("d", tv_run, &v[3]);
    assert_int_equal(
        pctl_validators_add(&vs, pctl_sequentially("seq", outer, 3)), 0);
    assert_int_equal(
        pctl_validators_add(&vs, pctl_validator_of("e", tv_run, &v[4])), 0);
    assert_int_equal(
        pctl_validators_add(&vs, pctl_sequentially("none", NULL, 0)), 0);
    s = run(&vs, 4, PLANCTL_EDEFINITION);
    assert_string_equal(s, "a.0: Invalid value: a\n"
                           "b.0: Invalid value: b\n"
                           "b.1: Invalid value: b\n"
                           "c.0: Invalid value: c\n"
                           "d.0: Invalid value: d\n"
                           "e.0: Invalid value: e\n");
    free(s);
    /* The group's members finished in their order, on one thread. */
    assert_non_null(strstr(sh.finished, "a "));
    assert_true(strstr(sh.finished, "a ") < strstr(sh.finished, "b "));
    assert_true(strstr(sh.finished, "b ") < strstr(sh.finished, "c "));
    assert_true(strstr(sh.finished, "c ") < strstr(sh.finished, "d "));
    for (i = 1; i < 4; i++)
        assert_true(pthread_equal(v[0].thread, v[i].thread));
    pctl_validators_clear(&vs);
    pthread_mutex_destroy(&sh.lock);
}

/* The same rendered line from two validators (or already in the list) is
 * kept once, where it first appeared. */
static void test_run_dedup(void **state)
{
    pctl_validators vs = PCTL_VALIDATORS_INIT;
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    pctl_validator group[2];
    shared sh;
    tv v[4] = {{"a", 0, 1, "same", NULL, 0},
               {"b", 0, 1, "same", NULL, 0},
               {"c", 0, 0, "other", NULL, 0},
               {"d", 0, 0, "old", NULL, 0}};
    pctl_vin in;
    char *s;
    int i;

    (void)state;
    shared_init(&sh);
    for (i = 0; i < 4; i++)
        v[i].sh = &sh;
    group[0] = pctl_validator_of("c", tv_run, &v[2]);
    group[1] = pctl_validator_of("a again", tv_run, &v[0]);
    assert_int_equal(
        pctl_validators_add(&vs, pctl_validator_of("a", tv_run, &v[0])), 0);
    assert_int_equal(
        pctl_validators_add(&vs, pctl_validator_of("b", tv_run, &v[1])), 0);
    assert_int_equal(pctl_validators_add(&vs, pctl_sequentially("c", group, 2)),
                     0);
    assert_int_equal(
        pctl_validators_add(&vs, pctl_validator_of("d", tv_run, &v[3])), 0);
    assert_int_equal(
        pctl_ferr_add(&errs, "dup", PCTL_FERR_INVALID, NULL, "%s", "old"), 0);
    memset(&in, 0, sizeof(in));
    assert_int_equal(pctl_validators_run_all(&vs, &in, 3, &errs),
                     PLANCTL_EDEFINITION);
    s = render_all(&errs);
    assert_string_equal(s, "dup: Invalid value: old\n"
                           "a.0: Invalid value: a\n"
                           "dup: Invalid value: same\n"
                           "b.0: Invalid value: b\n"
                           "dup: Invalid value: other\n");
    free(s);
    pctl_ferr_list_clear(&errs);
    pctl_validators_clear(&vs);
    pthread_mutex_destroy(&sh.lock);
}

/* A validator's failure is the run's; no validators is a clean run; past
 * PCTL_DEF_MAX_ERRORS lines the rest are counted in one last line. */
static void test_run_failure_and_cap(void **state)
{
    pctl_validators vs = PCTL_VALIDATORS_INIT;
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    shared sh;
    tv v[2] = {{"a", 0, 1, NULL, NULL, 0}, {"b", 0, 1200, NULL, NULL, 0}};
    pctl_vin in;
    char *s;

    (void)state;
    shared_init(&sh);
    v[0].sh = v[1].sh = &sh;
    s = run(&vs, 4, 0);
    assert_string_equal(s, "");
    free(s);

    assert_int_equal(
        pctl_validators_add(&vs, pctl_validator_of("a", tv_run, &v[0])), 0);
    assert_int_equal(
        pctl_validators_add(&vs, pctl_validator_of("n", tv_nomem, NULL)), 0);
    free(run(&vs, 2, PLANCTL_ENOMEM));
    free(run(&vs, 1, PLANCTL_ENOMEM));
    pctl_validators_clear(&vs);

    assert_int_equal(
        pctl_validators_add(&vs, pctl_validator_of("a", tv_run, &v[0])), 0);
    assert_int_equal(
        pctl_validators_add(&vs, pctl_validator_of("b", tv_run, &v[1])), 0);
    assert_int_equal(
        pctl_validators_add(&vs, pctl_validator_of("a", tv_run, &v[0])), 0);
    memset(&in, 0, sizeof(in));
    assert_int_equal(pctl_validators_run_all(&vs, &in, 2, &errs),
                     PLANCTL_EDEFINITION);
    assert_int_equal(errs.n, PCTL_DEF_MAX_ERRORS + 1);
    s = pctl_ferr_render(&errs.items[errs.n - 2]);
    assert_string_equal(s, "b.998: Invalid value: b");
    pctl_free(s);
    s = pctl_ferr_render(&errs.items[errs.n - 1]);
    /* 1200 of b and the repeated a: 1 + 999 shown, the 201 others not. */
    assert_string_equal(s, "Too many: 201 more errors; only the first 1000 "
                           "are shown");
    pctl_free(s);
    pctl_ferr_list_clear(&errs);
    pctl_validators_clear(&vs);
    pthread_mutex_destroy(&sh.lock);
}

/* ---- no validator mutates its input -------------------------------------- */

static int reject_bad(const char *spec, char *err, size_t size, void *data)
{
    int *calls = data;

    (*calls)++;
    if (!strstr(spec, "\"bad\""))
        return 0;
    snprintf(err, size, "\"bad\" is not allowed\nsecond line");
    return -1;
}

/* A large definition that breaks every rule somewhere, among thousands of
 * valid nodes. */
static char *large_definition(void)
{
    sb b = {NULL, 0, 0};
    int i, j, k;

    sb_add(&b, "{\"nmae\":1,\"version\":\"1 0\",\"maintainers\":[{\"nmae\":"
               "\"x\"}],\"upgradableFrom\":[\"0.1\",\"a b\"],"
               "\"parameters\":[{\"name\":\"T1\",\"type\":\"integer\","
               "\"default\":\"3\",\"enum\":[1,\"2\"]},");
    for (i = 0; i < 50; i++)
        sb_add(&b, "{\"name\":\"P%d\",\"default\":%d,\"trigger\":\"%s\"},", i,
               i, i % 7 ? "p1" : "p_1");
    sb_add(&b, "{\"name\":\"P1\"},{\"name\":\"bad name\",\"required\":3},"
               "{\"name\":\"p2\"}],");
    sb_add(&b, "\"tasks\":[");
    for (i = 0; i < 60; i++)
        sb_add(&b, "{\"name\":\"t%d\",\"kind\":\"%s\",\"spec\":%s},", i,
               i % 3 == 0   ? "shell"
               : i % 3 == 1 ? "Dummy"
                            : "Ext",
               i % 3 == 0   ? "{\"argv\":[\"true\"],\"timeout\":\"1s\"}"
               : i % 3 == 1 ? "{\"done\":true,\"sleep\":\"10ms\"}"
                            : "{\"ok\":1}");
    sb_add(&b, "{\"name\":\"x1\",\"kind\":\"shell\",\"spec\":{\"argv\":[],"
               "\"env\":{\"A=B\":1,\"PLANCTL_RUN_UID\":\"x\"},"
               "\"fatal_exit_codes\":[0]}},"
               "{\"name\":\"x2\",\"kind\":\"Dummy\",\"spec\":{\"dnoe\":1,"
               "\"failTimes\":-1}},{\"name\":\"x3\",\"kind\":\"Ext\","
               "\"spec\":{\"bad\":1}},{\"name\":\"x4\",\"kind\":\"Dumy\"},"
               "{\"name\":\"x5\",\"kind\":\"\"},{\"name\":\"t0\","
               "\"kind\":3}],\"plans\":{");
    for (i = 0; i < 20; i++) {
        sb_add(&b,
               "\"p%d\":{\"strategy\":\"%s\",\"deadline\":\"%s\","
               "\"preflight\":[{\"name\":\"C\",\"task\":\"t1\"},"
               "{\"name\":\"C\",\"task\":\"t%s\"}],\"phases\":[",
               i, i == 5 ? "paralel" : "parallel", i == 4 ? "0s" : "1h",
               i == 6 ? "zz" : "2");
        for (j = 0; j < 5; j++) {
            int bad = i == 3 && j == 1;

            sb_add(&b, "%s{\"name\":\"ph%d\",\"steps\":[", j ? "," : "",
                   j % 4 ? j : 0);
            /* Step names unique in their plan, but for one whose
             * outputs' variables would be another's. */
            for (k = 0; k < 20; k++)
                sb_add(&b,
                       "%s{\"name\":\"%s%d-%d\",\"tasks\":[\"t%d\",\"t%d\"],"
                       "\"timeout\":\"%s\",\"retry\":{\"attempts\":%d,"
                       "\"backoff\":\"%s\",\"max_backoff\":\"%s\","
                       "\"multiplier\":%s}}",
                       k ? "," : "", i == 7 && j == 2 && k == 3 ? "S" : "s",
                       i == 7 && j == 2 && k == 3 ? 1 : j, k, k, (k * 7) % 70,
                       bad && k == 9 ? "5 m" : "5m", bad && k == 11 ? 0 : 3,
                       bad && k == 13 ? "2s" : "1s",
                       bad && k == 13 ? "1s" : "1m",
                       bad && k == 17 ? "0.5" : "2");
            sb_add(&b, "]}");
        }
        sb_add(&b, ",{\"name\":\"empty\",\"steps\":[{\"name\":\"e\","
                   "\"tasks\":[]}],\"stpes\":1}]},");
    }
    sb_add(&b, "\"q\":{\"phases\":[]},\"r\":{\"phases\":[{\"name\":\"x\","
               "\"steps\":[{\"name\":\"y\",\"tasks\":[7]}]}],\"preflight\":[");
    for (i = 0; i < PCTL_DEF_MAX_CHECKS + 1; i++)
        sb_add(&b, "%s{}", i ? "," : "");
    sb_add(&b, "]},\"s\":[]}}");
    return b.s;
}

/* Runs v (a validator or group) and its members alone against in, each
 * on a deep copy checked afterwards; returns the errors v found. */
static size_t check_untouched(const pctl_validator *v, const pctl_vin *in)
{
    json_t *before = json_deep_copy(in->doc);
    pctl_sink s = PCTL_SINK_INIT;
    size_t i, n;

    assert_int_equal(pctl_validator_run(v, in, &s), 0);
    if (!json_equal(before, in->doc))
        fail_msg("validator \"%s\" changed its input", v->name);
    n = s.nerrs;
    if (n == 0)
        fail_msg("validator \"%s\" found nothing in the large definition",
                 v->name);
    pctl_sink_clear(&s);
    json_decref(before);
    for (i = 0; i < v->nmembers; i++)
        check_untouched(&v->members[i], in);
    return n;
}

static void test_no_mutation(void **state)
{
    char *text = large_definition();
    const pctl_validators *rules = pctl_rules();
    pctl_kinds kinds = PCTL_KINDS_INIT;
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT, errs4 = PCTL_FERR_LIST_INIT;
    pctl_names tasks, plans;
    pctl_vin in;
    json_t *doc, *before;
    size_t i;
    int calls = 0;
    char *one, *four;

    (void)state;
    assert_int_equal(pctl_kinds_add(&kinds, "Ext", reject_bad, &calls), 0);
    doc = load(text);
    assert_int_equal(pctl_defaults_run(pctl_defaults_builtin(), doc, &errs), 0);
    assert_int_equal(pctl_names_build(&tasks, doc, 0), 0);
    assert_int_equal(pctl_names_build(&plans, doc, 1), 0);
    in.doc = doc;
    in.kinds = &kinds;
    in.tasks = &tasks;
    in.plans = &plans;

    assert_true(rules->n >= 8);
    for (i = 0; i < rules->n; i++)
        check_untouched(&rules->items[i], &in);
    assert_true(calls > 0);

    /* All of them at once, and the same list whatever the workers. */
    before = json_deep_copy(doc);
    assert_int_equal(pctl_validators_run_all(rules, &in, 1, &errs),
                     PLANCTL_EDEFINITION);
    assert_int_equal(pctl_validators_run_all(rules, &in, 4, &errs4),
                     PLANCTL_EDEFINITION);
    assert_true(json_equal(before, doc));
    one = render_all(&errs);
    four = render_all(&errs4);
    assert_string_equal(one, four);
    assert_non_null(
        strstr(one, "tasks[62].spec: Invalid value: \"bad\" is not allowed\n"));
    assert_non_null(strstr(one, "plans.p7.phases[2].steps[3].name: Duplicate "
                                "value: \"S1-3\": its outputs would be "
                                "PLANCTL_OUTPUT_S1_3_<KEY>, as those of "
                                "\"s1-3\" (phases[1].steps[3]) are"));
    free(one);
    free(four);

    json_decref(before);
    json_decref(doc);
    pctl_names_free(&tasks);
    pctl_names_free(&plans);
    pctl_ferr_list_clear(&errs);
    pctl_ferr_list_clear(&errs4);
    pctl_kinds_clear(&kinds);
    free(text);
}

/* The whole pipeline gives the same answer on 1 and on 4 workers. */
static void test_pipeline_workers(void **state)
{
    char *text = large_definition();
    pctl_kinds kinds = PCTL_KINDS_INIT;
    pctl_def_opts opts = PCTL_DEF_OPTS_INIT;
    char *got[3];
    unsigned w[3] = {1, 4, 0};
    int calls = 0, i;

    (void)state;
    assert_int_equal(pctl_kinds_add(&kinds, "Ext", reject_bad, &calls), 0);
    opts.kinds = &kinds;
    for (i = 0; i < 3; i++) {
        pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
        pctl_def *d = NULL;

        opts.workers = w[i];
        assert_int_equal(
            pctl_def_parse(&d, text, strlen(text), "big.json", &opts, &errs),
            PLANCTL_EDEFINITION);
        assert_null(d);
        got[i] = render_all(&errs);
        pctl_ferr_list_clear(&errs);
    }
    assert_string_equal(got[0], got[1]);
    assert_string_equal(got[0], got[2]);
    for (i = 0; i < 3; i++)
        free(got[i]);
    pctl_kinds_clear(&kinds);
    free(text);
}

/* ---- the public API ----------------------------------------------------- */

static int reject_all(const char *spec, char *err, size_t size, void *data)
{
    (void)spec;
    (void)data;
    snprintf(err, size, "no spec is good enough");
    return -1;
}

static int reject_silently(const char *spec, char *err, size_t size, void *data)
{
    (void)spec;
    (void)err;
    (void)size;
    (void)data;
    return PLANCTL_EINVAL;
}

#define DEF(kind, spec)                                                        \
    "{\"name\":\"d\",\"version\":\"" kind "\",\"tasks\":[{\"name\":\"t\","     \
    "\"kind\":\"" kind "\",\"spec\":" spec "}],\"plans\":{\"deploy\":{"        \
    "\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":"        \
    "[\"t\"]}]}]}}}"

static int apply(planctl *p, const char *json)
{
    return planctl_definition_apply(NULL, p, json, strlen(json), "d.json");
}

static void test_api_kind_register(void **state)
{
    char *dir = tu_mkdtemp(), *path = tu_fmt("%s/k.db", dir);
    planctl *p;

    (void)state;
    assert_int_equal(planctl_open(&p, path, NULL), 0);
    assert_int_equal(apply(p, DEF("S3", "{}")), PLANCTL_EDEFINITION);
    assert_string_equal(
        planctl_errmsg(p),
        "d.json: tasks[0].kind: Unsupported value: \"S3\": supported values: "
        "\"Dummy\", \"shell\"; other kinds are known once registered in "
        "this process (planctl_kind_register, an engine's executor) or "
        "when named as extra kinds");
    assert_int_equal(planctl_kind_register(p, "S3", NULL, NULL), 0);
    assert_int_equal(apply(p, DEF("S3", "{\"anything\":[1]}")), 0);
    /* Another handle of the process knows it too (the kinds are the
     * process's; test_capi has the rest). */
    {
        planctl *other;

        assert_int_equal(planctl_open(&other, path, NULL), 0);
        assert_int_equal(apply(other, DEF("S3", "{\"anything\":[1]}")), 0);
        planctl_close(other);
    }
    assert_int_equal(apply(p, DEF("S4", "{}")), PLANCTL_EDEFINITION);
    assert_string_equal(planctl_errmsg(p),
                        "d.json: tasks[0].kind: Unsupported value: \"S4\": "
                        "supported values: \"Dummy\", \"S3\", \"shell\" (did "
                        "you mean \"S3\"?)");

    /* A check judges the spec; registering again replaces it. */
    assert_int_equal(planctl_kind_register(p, "Snap", reject_all, NULL), 0);
    assert_int_equal(apply(p, DEF("Snap", "{}")), PLANCTL_EDEFINITION);
    assert_string_equal(planctl_errmsg(p), "d.json: tasks[0].spec: Invalid "
                                           "value: no spec is good enough");
    assert_int_equal(planctl_kind_register(p, "Snap", reject_silently, NULL),
                     0);
    assert_int_equal(apply(p, DEF("Snap", "{}")), PLANCTL_EDEFINITION);
    assert_string_equal(planctl_errmsg(p),
                        "d.json: tasks[0].spec: Invalid value: rejected by "
                        "the check of kind \"Snap\"");
    assert_int_equal(planctl_kind_register(p, "Snap", NULL, NULL), 0);
    assert_int_equal(apply(p, DEF("Snap", "{}")), 0);

    /* A built-in registered without a check keeps its rules; with one,
     * the check replaces them. */
    assert_int_equal(planctl_kind_register(p, "shell", NULL, NULL), 0);
    assert_int_equal(apply(p, DEF("shell", "{}")), PLANCTL_EDEFINITION);
    assert_string_equal(planctl_errmsg(p),
                        "d.json: tasks[0].spec.argv: Required value: exactly "
                        "one of \"argv\" and \"command\"");
    assert_int_equal(planctl_kind_register(p, "shell", reject_all, NULL), 0);
    assert_int_equal(apply(p, DEF("shell", "{\"argv\":[\"true\"]}")),
                     PLANCTL_EDEFINITION);
    assert_string_equal(planctl_errmsg(p), "d.json: tasks[0].spec: Invalid "
                                           "value: no spec is good enough");

    assert_int_equal(planctl_kind_register(p, "", NULL, NULL), PLANCTL_EINVAL);
    assert_int_equal(planctl_kind_register(p, NULL, NULL, NULL),
                     PLANCTL_EINVAL);
    assert_int_equal(planctl_kind_register(NULL, "x", NULL, NULL),
                     PLANCTL_EINVAL);
    planctl_close(p);
    tu_rmtree(dir);
    free(path);
    free(dir);
}

static void test_api_check(void **state)
{
    static const char *const extra[] = {"S3", "Snap", NULL};
    static const char *const empty[] = {"", NULL};
    static const char json[] = DEF("S3", "{}");
    char *out;

    (void)state;
    assert_int_equal(
        planctl_definition_check(&out, json, strlen(json), "d.json", NULL), 0);
    assert_non_null(strstr(out, "\"valid\":false"));
    assert_non_null(strstr(out, "\"path\":\"tasks[0].kind\""));
    planctl_free(out);
    assert_int_equal(
        planctl_definition_check(&out, json, strlen(json), "d.json", extra), 0);
    assert_string_equal(out, "{\"schema\":1,\"valid\":true,\"errors\":[]}");
    planctl_free(out);
    assert_int_equal(
        planctl_definition_check(&out, json, strlen(json), "d.json", empty),
        PLANCTL_EINVAL);
    assert_int_equal(
        planctl_definition_check(NULL, json, strlen(json), "d.json", NULL),
        PLANCTL_EINVAL);
}

/* What validate and apply say about a shell task's environment: every
 * bad name with its path and a hint, and parameters that would reach a
 * task as one variable. */
static void test_api_env_names(void **state)
{
    static const char json[] =
        "{\"name\":\"d\",\"version\":\"1\",\"parameters\":["
        "{\"name\":\"A_B\",\"default\":\"1\"},{\"name\":\"a-b\","
        "\"default\":\"2\"}],\"tasks\":[{\"name\":\"t\",\"kind\":"
        "\"shell\",\"spec\":{\"command\":\"true\",\"env\":{"
        "\"PLANCTL_RUN_UID\":\"x\",\"1A\":\"y\"}}}],\"plans\":{"
        "\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":"
        "\"s\",\"tasks\":[\"t\"]}]}]}}}";
    char *dir = tu_mkdtemp(), *path = tu_fmt("%s/e.db", dir), *out;
    planctl *p;

    (void)state;
    assert_int_equal(
        planctl_definition_check(&out, json, strlen(json), "d.json", NULL), 0);
    assert_string_equal(
        out, "{\"schema\":1,\"valid\":false,\"errors\":["
             "{\"path\":\"parameters[1].name\",\"type\":\"Duplicate value\","
             "\"message\":\"\\\"a-b\\\": becomes PLANCTL_PARAM_A_B, as "
             "\\\"A_B\\\" (parameters[0]) does\",\"hint\":\"rename one of "
             "them: case and '-', '.', '_' do not tell variables apart\"},"
             "{\"path\":\"tasks[0].spec.env.PLANCTL_RUN_UID\",\"type\":"
             "\"Forbidden\",\"message\":\"\\\"PLANCTL_RUN_UID\\\": names "
             "starting with PLANCTL_ are reserved for the variables the engine "
             "sets\",\"hint\":\"rename it, e.g. \\\"RUN_UID\\\"\"},"
             "{\"path\":\"tasks[0].spec.env.1A\",\"type\":\"Invalid value\","
             "\"message\":\"\\\"1A\\\": must be an environment variable name: "
             "letters, digits and '_', not starting with a digit\",\"hint\":"
             "\"did you mean \\\"_1A\\\"?\"}]}");
    planctl_free(out);

    assert_int_equal(planctl_open(&p, path, NULL), 0);
    assert_int_equal(apply(p, json), PLANCTL_EDEFINITION);
    assert_string_equal(planctl_errmsg(p),
                        "d.json: parameters[1].name: Duplicate value: \"a-b\": "
                        "becomes PLANCTL_PARAM_A_B, as \"A_B\" (parameters[0]) "
                        "does (rename one of them: case and '-', '.', '_' do "
                        "not tell variables apart) (and 2 more)");
    planctl_close(p);
    tu_rmtree(dir);
    free(path);
    free(dir);
}

/* Steps of one plan whose different names would give their outputs one
 * PLANCTL_OUTPUT_<STEP>_ prefix are refused, each naming the first in
 * document order.  One name in two phases is allowed, steps of different
 * plans never share a run, and two of one name in one phase are only the
 * unique rule's. */
static void test_api_step_output_vars(void **state)
{
    static const char json[] =
        "{\"name\":\"d\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","
        "\"kind\":\"Dummy\"}],\"plans\":{\"deploy\":{\"phases\":["
        "{\"name\":\"p\",\"steps\":["
        "{\"name\":\"gen-cert\",\"tasks\":[\"t\"]},"
        "{\"name\":\"x\",\"tasks\":[\"t\"]},"
        "{\"name\":\"x\",\"tasks\":[\"t\"]}]},"
        "{\"name\":\"q\",\"steps\":["
        "{\"name\":\"gen_cert\",\"tasks\":[\"t\"]},"
        "{\"name\":\"X\",\"tasks\":[\"t\"]},"
        "{\"name\":\"GEN.CERT\",\"tasks\":[\"t\"]},"
        "{\"name\":\"gen-cert\",\"tasks\":[\"t\"]}]}]},"
        "\"other\":{\"phases\":[{\"name\":\"p\",\"steps\":["
        "{\"name\":\"gen_cert\",\"tasks\":[\"t\"]},"
        "{\"name\":\"s\",\"tasks\":[\"t\"]}]}]}}}";
    static const char errors[] =
        "{\"schema\":1,\"valid\":false,\"errors\":["
        "{\"path\":\"plans.deploy.phases[0].steps[2].name\",\"type\":"
        "\"Duplicate value\",\"message\":\"\\\"x\\\"\",\"hint\":null},"
        "{\"path\":\"plans.deploy.phases[1].steps[0].name\",\"type\":"
        "\"Duplicate value\",\"message\":\"\\\"gen_cert\\\": its outputs "
        "would be PLANCTL_OUTPUT_GEN_CERT_<KEY>, as those of \\\"gen-cert\\\" "
        "(phases[0].steps[0]) are\",\"hint\":\"rename one of them: case and "
        "'-', '.', '_' do not tell variables apart\"},"
        "{\"path\":\"plans.deploy.phases[1].steps[1].name\",\"type\":"
        "\"Duplicate value\",\"message\":\"\\\"X\\\": its outputs would be "
        "PLANCTL_OUTPUT_X_<KEY>, as those of \\\"x\\\" (phases[0].steps[1]) "
        "are\",\"hint\":\"rename one of them: case and '-', '.', '_' do not "
        "tell variables apart\"},"
        "{\"path\":\"plans.deploy.phases[1].steps[2].name\",\"type\":"
        "\"Duplicate value\",\"message\":\"\\\"GEN.CERT\\\": its outputs "
        "would be PLANCTL_OUTPUT_GEN_CERT_<KEY>, as those of \\\"gen-cert\\\" "
        "(phases[0].steps[0]) are\",\"hint\":\"rename one of them: case and "
        "'-', '.', '_' do not tell variables apart\"}]}";
    char *dir = tu_mkdtemp(), *path = tu_fmt("%s/e.db", dir), *out;
    planctl *p;

    (void)state;
    assert_int_equal(
        planctl_definition_check(&out, json, strlen(json), "d.json", NULL), 0);
    assert_string_equal(out, errors);
    planctl_free(out);

    /* apply refuses it the same way, naming the first and counting the
     * rest. */
    assert_int_equal(planctl_open(&p, path, NULL), 0);
    assert_int_equal(apply(p, json), PLANCTL_EDEFINITION);
    assert_string_equal(planctl_errmsg(p),
                        "d.json: plans.deploy.phases[0].steps[2].name: "
                        "Duplicate value: \"x\" (and 3 more)");
    planctl_close(p);
    tu_rmtree(dir);
    free(path);
    free(dir);
}

/* Names that only look alike ("gen-cert", "gen-certs") map apart. */
static void test_api_step_output_vars_ok(void **state)
{
    static const char json[] =
        "{\"name\":\"d\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","
        "\"kind\":\"Dummy\"}],\"plans\":{\"deploy\":{\"phases\":["
        "{\"name\":\"p\",\"steps\":["
        "{\"name\":\"gen-cert\",\"tasks\":[\"t\"]},"
        "{\"name\":\"gen-certs\",\"tasks\":[\"t\"]}]},"
        "{\"name\":\"q\",\"steps\":[{\"name\":\"use\",\"tasks\":[\"t\"]}]}]}}}";
    char *out;

    (void)state;
    assert_int_equal(
        planctl_definition_check(&out, json, strlen(json), "d.json", NULL), 0);
    assert_string_equal(out, "{\"schema\":1,\"valid\":true,\"errors\":[]}");
    planctl_free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_fill),
        cmocka_unit_test(test_defaults_keep_user_values),
        cmocka_unit_test(test_defaults_runner),
        cmocka_unit_test(test_defaults_failure_no_model),
        cmocka_unit_test(test_run_order_concurrent),
        cmocka_unit_test(test_run_worker_limits),
        cmocka_unit_test(test_run_sequentially),
        cmocka_unit_test(test_run_dedup),
        cmocka_unit_test(test_run_failure_and_cap),
        cmocka_unit_test(test_no_mutation),
        cmocka_unit_test(test_pipeline_workers),
        cmocka_unit_test(test_api_kind_register),
        cmocka_unit_test(test_api_check),
        cmocka_unit_test(test_api_env_names),
        cmocka_unit_test(test_api_step_output_vars),
        cmocka_unit_test(test_api_step_output_vars_ok),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
