/*
 * def.c - the definition decoder: JSON text to a pctl_def, with every
 * structural error collected under its Kubernetes-style path.
 *
 * The walk visits the document in a fixed order - top-level fields name,
 * version, description, parameters, tasks, plans, and a fixed field order
 * inside every object - so the same document always yields the same list.
 * Inside each object the unknown fields are reported first, in document
 * order: a typo ("nmae") is usually what explains the "Required value" that
 * follows it.
 *
 * The pctl_def is built during the same walk, because most checks need the
 * value they produce anyway; when any error was found it is thrown away.
 * Task and plan names are read from the document before the walk, so a
 * reference (a step's task, a parameter's trigger) can be resolved wherever
 * it appears.  References are resolved against names as written, so a task
 * with a bad name is reported once, at its name, and not again at every
 * step that uses it.
 *
 * Every helper returns 0 or PLANCTL_ENOMEM; errors in the document are not
 * failures of the helper, they are entries in the list (counted in nerrs).
 */
#include "def.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "planctl.h"

/* Passes allocation failure up unchanged (libgit2's GIT_ERROR_CHECK). */
#define CHECK(expr)                                                            \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ < 0)                                                           \
            return rc_;                                                        \
    } while (0)

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

#ifdef __GNUC__
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* Values echoed into messages are cut to this many bytes so one hostile
 * 64 KiB string cannot make every message 64 KiB. */
#define ECHO_MAX 64

/* References that are not found get a "did you mean" only for the first
 * this many (see resolve()). */
#define MAX_HINTS 100

/* A quoted value: two quotes, every byte escaped as \u00XX at worst, and
 * a trailing "..." when cut. */
typedef struct qbuf {
    char s[2 + ECHO_MAX * 6 + 3 + 1];
} qbuf;

/* A "did you mean" hint around one quoted name. */
typedef struct hbuf {
    char s[sizeof(qbuf) + 16];
} hbuf;

typedef struct names {
    const char **v; /* borrowed from the document; NULL where unnamed */
    size_t n;
    int known; /* 0: the list is unreadable, so references go unchecked */
} names;

typedef struct ctx {
    pctl_ferr_list *errs;
    size_t nerrs;  /* every error found, including those not recorded */
    size_t nhints; /* suggestions searched for among tasks or plans */
    char *path;    /* the path of the value being decoded, NUL-terminated */
    size_t plen, pcap;
    names tasks, plans;
    pctl_def *def;
} ctx;

static const char NAME_RULE[] =
    "must be 1-63 characters of letters, digits, '_', '.', '-', starting "
    "with a letter or digit";
static const char VERSION_RULE[] =
    "must be 1-64 characters of letters, digits, '.', '+', '_', '-'";
static const char DURATION_RULE[] =
    "must be a duration such as \"500ms\", \"30s\", \"5m\" or \"1h\"";

static const char *const top_fields[] = {"name",       "version", "description",
                                         "parameters", "tasks",   "plans"};
static const char *const param_fields[] = {
    "name", "default", "required", "trigger", "description", "displayName"};
static const char *const task_fields[] = {"name", "kind", "spec"};
static const char *const plan_fields[] = {"strategy", "preflight", "phases",
                                          "deadline"};
static const char *const check_fields[] = {"name", "task"};
static const char *const phase_fields[] = {"name", "strategy", "steps"};
static const char *const step_fields[] = {"name", "tasks", "retry", "timeout"};
static const char *const retry_fields[] = {"attempts", "backoff", "multiplier",
                                           "max_backoff"};
static const char *const strategies[] = {"parallel", "serial"};

/* ---- messages ------------------------------------------------------------ */

/* s as a JSON string literal, cut at ECHO_MAX bytes (on a UTF-8 boundary)
 * with "..." after the closing quote when it was cut. */
static const char *quote(qbuf *q, const char *s)
{
    size_t n = strlen(s), cut = n, i, w = 0;

    if (n > ECHO_MAX) {
        cut = ECHO_MAX;
        while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
            cut--;
    }
    q->s[w++] = '"';
    for (i = 0; i < cut; i++) {
        unsigned char ch = (unsigned char)s[i];

        if (ch == '"' || ch == '\\') {
            q->s[w++] = '\\';
            q->s[w++] = (char)ch;
        } else if (ch < 0x20 || ch == 0x7f) {
            snprintf(q->s + w, sizeof(q->s) - w, "\\u%04x", ch);
            w += 6;
        } else {
            q->s[w++] = (char)ch;
        }
    }
    q->s[w++] = '"';
    if (cut < n) {
        memcpy(q->s + w, "...", 3);
        w += 3;
    }
    q->s[w] = '\0';
    return q->s;
}

static const char *did_you_mean(hbuf *h, const char *candidate)
{
    qbuf q;

    if (!candidate)
        return NULL;
    snprintf(h->s, sizeof(h->s), "did you mean %s?", quote(&q, candidate));
    return h->s;
}

/* ---- the path ------------------------------------------------------------ */

static int path_append(ctx *c, const char *s, size_t n)
{
    if (c->plen + n + 1 > c->pcap) {
        size_t cap = c->pcap;
        char *p;

        while (cap < c->plen + n + 1)
            cap *= 2;
        p = pctl_realloc(c->path, cap);
        if (!p)
            return PLANCTL_ENOMEM;
        c->path = p;
        c->pcap = cap;
    }
    memcpy(c->path + c->plen, s, n);
    c->plen += n;
    c->path[c->plen] = '\0';
    return 0;
}

/* Appends ".key", or ["key"] (JSON-quoted) when key is not a plain name,
 * so a path with a strange plan name in it still reads unambiguously. */
static int path_key(ctx *c, const char *key)
{
    qbuf q;

    if (pctl_name_valid(key)) {
        if (c->plen)
            CHECK(path_append(c, ".", 1));
        return path_append(c, key, strlen(key));
    }
    quote(&q, key);
    CHECK(path_append(c, "[", 1));
    CHECK(path_append(c, q.s, strlen(q.s)));
    return path_append(c, "]", 1);
}

static int path_index(ctx *c, size_t i)
{
    char b[32];
    int n = snprintf(b, sizeof(b), "[%zu]", i);

    return path_append(c, b, (size_t)n);
}

static void path_truncate(ctx *c, size_t mark)
{
    c->plen = mark;
    c->path[mark] = '\0';
}

/* ---- errors -------------------------------------------------------------- */

/* Records an error at the current path, or at its field when field is not
 * NULL.  Past PCTL_DEF_MAX_ERRORS errors are only counted. */
static int report(ctx *c, const char *field, pctl_ferr_type type,
                  const char *hint, const char *msg)
{
    size_t mark = c->plen;
    int rc;

    if (++c->nerrs > PCTL_DEF_MAX_ERRORS)
        return 0;
    if (field)
        CHECK(path_key(c, field));
    rc = pctl_ferr_add(c->errs, c->path, type, hint, "%s", msg);
    path_truncate(c, mark);
    return rc;
}

static int fail(ctx *c, const char *field, pctl_ferr_type type,
                const char *hint, const char *fmt, ...) PRINTF_LIKE(5, 6);

/* Every piece of a message is bounded (echoed values by ECHO_MAX), so a
 * fixed buffer holds any of them. */
static int fail(ctx *c, const char *field, pctl_ferr_type type,
                const char *hint, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (c->nerrs >= PCTL_DEF_MAX_ERRORS) {
        c->nerrs++;
        return 0;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return report(c, field, type, hint, msg);
}

static int type_error(ctx *c, const char *field, const char *what)
{
    return fail(c, field, PCTL_FERR_TYPE, NULL, "must be %s", what);
}

/* ---- typed getters ------------------------------------------------------- */

/* v (at field, or at the current path) as a string: *out is NULL unless v
 * is a string of at most PCTL_DEF_MAX_STRING bytes. */
static int string_value(ctx *c, const char *field, json_t *v, const char **out)
{
    *out = NULL;
    if (!json_is_string(v))
        return type_error(c, field, "a string");
    if (json_string_length(v) > PCTL_DEF_MAX_STRING)
        return fail(c, field, PCTL_FERR_TOO_LONG, NULL,
                    "%zu bytes; the limit is %d", json_string_length(v),
                    PCTL_DEF_MAX_STRING);
    *out = json_string_value(v);
    return 0;
}

/* obj.field as a string; *out is NULL when absent or invalid. */
static int get_string(ctx *c, json_t *obj, const char *field, int required,
                      const char **out)
{
    json_t *v = json_object_get(obj, field);

    *out = NULL;
    if (!v)
        return required ? report(c, field, PCTL_FERR_REQUIRED, NULL, "") : 0;
    return string_value(c, field, v, out);
}

/* obj.field as an array of at most max elements (what names them in the
 * message); *out is NULL when absent or invalid. */
static int get_array(ctx *c, json_t *obj, const char *field, int required,
                     size_t max, const char *what, json_t **out)
{
    json_t *v = json_object_get(obj, field);

    *out = NULL;
    if (!v)
        return required ? report(c, field, PCTL_FERR_REQUIRED, NULL, "") : 0;
    if (!json_is_array(v))
        return type_error(c, field, "an array");
    if (json_array_size(v) > max)
        return fail(c, field, PCTL_FERR_TOO_MANY, NULL,
                    "%zu %s; the limit is %zu", json_array_size(v), what, max);
    *out = v;
    return 0;
}

/* obj.field as a required name: *out is set only when the name is valid. */
static int get_name(ctx *c, json_t *obj, const char **out)
{
    const char *s;
    qbuf q;

    *out = NULL;
    CHECK(get_string(c, obj, "name", 1, &s));
    if (!s)
        return 0;
    if (!pctl_name_valid(s))
        return fail(c, "name", PCTL_FERR_INVALID, NULL, "%s: %s", quote(&q, s),
                    NAME_RULE);
    *out = s;
    return 0;
}

/* Whether an element of arr before i has the same name. */
static int seen_before(json_t *arr, size_t i, const char *name)
{
    size_t j;

    for (j = 0; j < i; j++) {
        json_t *o = json_array_get(arr, j);
        const char *s = json_string_value(json_object_get(o, "name"));

        if (s && strcmp(s, name) == 0)
            return 1;
    }
    return 0;
}

/* The name of arr[i] (a valid one, or NULL), checked for uniqueness among
 * its siblings. */
static int get_unique_name(ctx *c, json_t *arr, size_t i, const char **out)
{
    qbuf q;

    CHECK(get_name(c, json_array_get(arr, i), out));
    if (*out && seen_before(arr, i, *out))
        return fail(c, "name", PCTL_FERR_DUPLICATE, NULL, "%s",
                    quote(&q, *out));
    return 0;
}

static int get_strategy(ctx *c, json_t *obj, pctl_strategy *out)
{
    const char *s;
    hbuf h;
    qbuf q;

    *out = PCTL_STRATEGY_SERIAL;
    CHECK(get_string(c, obj, "strategy", 0, &s));
    if (!s || strcmp(s, "serial") == 0)
        return 0;
    if (strcmp(s, "parallel") == 0) {
        *out = PCTL_STRATEGY_PARALLEL;
        return 0;
    }
    return fail(
        c, "strategy", PCTL_FERR_UNSUPPORTED,
        did_you_mean(&h, pctl_closest(s, strategies, COUNT(strategies))),
        "%s: supported values: \"parallel\", \"serial\"", quote(&q, s));
}

/*
 * obj.field as a duration.  *state is 0 when absent, 1 when valid (and *out
 * set), -1 when invalid.  *text, if not NULL, receives the string.
 */
static int get_duration(ctx *c, json_t *obj, const char *field, int64_t *out,
                        int *state, const char **text)
{
    const char *s;
    int64_t ms;
    qbuf q;

    *state = json_object_get(obj, field) ? -1 : 0;
    if (text)
        *text = NULL;
    CHECK(get_string(c, obj, field, 0, &s));
    if (!s)
        return 0;
    if (pctl_duration_parse(&ms, s) < 0)
        return fail(c, field, PCTL_FERR_INVALID, NULL, "%s: %s", quote(&q, s),
                    DURATION_RULE);
    *out = ms;
    *state = 1;
    if (text)
        *text = s;
    return 0;
}

/* Reports every field of obj that is not in known, with the closest known
 * field as a hint. */
static int check_known(ctx *c, json_t *obj, const char *const *known, size_t n)
{
    void *it;

    for (it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
        const char *key = json_object_iter_key(it);
        size_t i;
        hbuf h;
        qbuf q;

        for (i = 0; i < n && strcmp(key, known[i]) != 0; i++)
            ;
        if (i == n)
            CHECK(fail(c, key, PCTL_FERR_FORBIDDEN,
                       did_you_mean(&h, pctl_closest(key, known, n)),
                       "unknown field %s", quote(&q, key)));
    }
    return 0;
}

/* Resolves name in set (first match); reports Not found, with the closest
 * name as a hint, when it is not there.  *at receives the index. */
static int resolve(ctx *c, const char *field, const char *name,
                   const names *set, size_t *at)
{
    size_t i;
    hbuf h;
    qbuf q;

    if (!set->known)
        return 0;
    for (i = 0; i < set->n; i++) {
        if (set->v[i] && strcmp(set->v[i], name) == 0) {
            if (at)
                *at = i;
            return 0;
        }
    }
    /* A suggestion compares the name with every candidate; bounding how
     * many are made bounds the work a hostile document can cause (1000
     * references against 1000 long task names took seconds). */
    if (c->nhints >= MAX_HINTS)
        return fail(c, field, PCTL_FERR_NOT_FOUND, NULL, "%s", quote(&q, name));
    c->nhints++;
    return fail(c, field, PCTL_FERR_NOT_FOUND,
                did_you_mean(&h, pctl_closest(name, (const char *const *)set->v,
                                              set->n)),
                "%s", quote(&q, name));
}

static int copy(char **dst, const char *s)
{
    if (!s)
        return 0;
    *dst = pctl_strdup(s);
    return *dst ? 0 : PLANCTL_ENOMEM;
}

/* ---- arrays -------------------------------------------------------------- */

typedef int (*elem_fn)(ctx *c, json_t *arr, size_t i, void *item);

/* Calls fn on every element of arr, at the path "field[i]", with item the
 * ith of items (each size bytes). */
static int walk(ctx *c, const char *field, json_t *arr, void *items,
                size_t size, elem_fn fn)
{
    size_t mark = c->plen, i;

    CHECK(path_key(c, field));
    for (i = 0; i < json_array_size(arr); i++) {
        size_t m = c->plen;

        CHECK(path_index(c, i));
        CHECK(fn(c, arr, i, (char *)items + i * size));
        path_truncate(c, m);
    }
    path_truncate(c, mark);
    return 0;
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

/* ---- encoding ------------------------------------------------------------ */

typedef struct dumpbuf {
    char *s;
    size_t len, cap;
    int oom;
} dumpbuf;

static int dump_cb(const char *buf, size_t size, void *data)
{
    dumpbuf *b = data;

    if (b->len + size + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        char *s;

        while (cap < b->len + size + 1)
            cap *= 2;
        s = pctl_realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return -1;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, buf, size);
    b->len += size;
    b->s[b->len] = '\0';
    return 0;
}

/*
 * v encoded as JSON text.  Not json_dumps(): jansson (2.14) ignores a
 * failed write of an object key, so under memory pressure json_dumps can
 * return a corrupt document as if all were well.  Our callback remembers
 * the failure whatever jansson does with it.
 */
static int encode(char **out, json_t *v, size_t flags)
{
    dumpbuf b = {NULL, 0, 0, 0};

    *out = NULL;
    if (json_dump_callback(v, dump_cb, &b, flags) != 0 || b.oom || !b.s) {
        pctl_free(b.s);
        return PLANCTL_ENOMEM;
    }
    *out = b.s;
    return 0;
}

/* ---- the parts ----------------------------------------------------------- */

/* A default may be written as a number or a boolean for convenience; it is
 * kept as the text a user would have quoted. */
static int get_default(ctx *c, json_t *v, char **out)
{
    const char *s;

    if (json_is_string(v)) {
        CHECK(string_value(c, "default", v, &s));
        return copy(out, s);
    }
    if (json_is_number(v) || json_is_boolean(v)) {
        return encode(out, v,
                      JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
    }
    return type_error(c, "default", "a string, a number or a boolean");
}

static int decode_param(ctx *c, json_t *arr, size_t i, void *item)
{
    pctl_param_def *p = item;
    json_t *o = json_array_get(arr, i), *v;
    const char *s;

    if (!json_is_object(o))
        return type_error(c, NULL, "an object");
    CHECK(check_known(c, o, param_fields, COUNT(param_fields)));
    CHECK(get_unique_name(c, arr, i, &s));
    CHECK(copy(&p->name, s));
    v = json_object_get(o, "default");
    if (v)
        CHECK(get_default(c, v, &p->default_value));
    v = json_object_get(o, "required");
    if (!v)
        p->required = json_object_get(o, "default") == NULL;
    else if (json_is_boolean(v))
        p->required = json_is_true(v);
    else
        CHECK(type_error(c, "required", "a boolean"));
    CHECK(get_string(c, o, "trigger", 0, &s));
    if (s) {
        CHECK(copy(&p->trigger, s));
        CHECK(resolve(c, "trigger", s, &c->plans, NULL));
    }
    CHECK(get_string(c, o, "description", 0, &s));
    CHECK(copy(&p->description, s));
    /* displayName is KUDO's; accepted for compatibility, not kept. */
    return get_string(c, o, "displayName", 0, &s);
}

static int decode_task(ctx *c, json_t *arr, size_t i, void *item)
{
    pctl_task_def *t = item;
    json_t *o = json_array_get(arr, i), *v;
    const char *s;

    if (!json_is_object(o))
        return type_error(c, NULL, "an object");
    CHECK(check_known(c, o, task_fields, COUNT(task_fields)));
    CHECK(get_unique_name(c, arr, i, &s));
    CHECK(copy(&t->name, s));
    /* Any kind is accepted here; whether it is known, and whether its spec
     * fits it, are the validators' business. */
    CHECK(get_string(c, o, "kind", 1, &s));
    if (s && !*s)
        CHECK(fail(c, "kind", PCTL_FERR_INVALID, NULL,
                   "\"\": must not be empty"));
    CHECK(copy(&t->kind, s));
    v = json_object_get(o, "spec");
    if (!v) {
        t->spec = pctl_strdup("{}");
        return t->spec ? 0 : PLANCTL_ENOMEM;
    }
    if (!json_is_object(v))
        return type_error(c, "spec", "an object");
    /* Sorted keys make equal specs equal text, which the store relies on
     * to tell a re-apply from a change. */
    return encode(&t->spec, v, JSON_COMPACT | JSON_SORT_KEYS);
}

static int decode_check(ctx *c, json_t *arr, size_t i, void *item)
{
    pctl_check_def *k = item;
    json_t *o = json_array_get(arr, i);
    const char *s;

    if (!json_is_object(o))
        return type_error(c, NULL, "an object");
    CHECK(check_known(c, o, check_fields, COUNT(check_fields)));
    CHECK(get_unique_name(c, arr, i, &s));
    CHECK(copy(&k->name, s));
    CHECK(get_string(c, o, "task", 1, &s));
    if (s)
        CHECK(resolve(c, "task", s, &c->tasks, &k->task));
    return 0;
}

static int decode_retry(ctx *c, json_t *o, pctl_retry *r)
{
    json_t *v;
    int bstate, mstate;
    int64_t max_ms = 0;
    const char *text;

    if (!json_is_object(o))
        return type_error(c, NULL, "an object");
    CHECK(check_known(c, o, retry_fields, COUNT(retry_fields)));
    v = json_object_get(o, "attempts");
    if (v && !json_is_integer(v)) {
        CHECK(type_error(c, "attempts", "an integer"));
    } else if (v) {
        json_int_t a = json_integer_value(v);

        if (a < 1 || a > 100)
            CHECK(fail(c, "attempts", PCTL_FERR_INVALID, NULL,
                       "%" JSON_INTEGER_FORMAT ": must be between 1 and 100",
                       a));
        else
            r->attempts = (int)a;
    }
    CHECK(get_duration(c, o, "backoff", &r->backoff_ms, &bstate, NULL));
    v = json_object_get(o, "multiplier");
    if (v && !json_is_number(v)) {
        CHECK(type_error(c, "multiplier", "a number"));
    } else if (v) {
        double m = json_number_value(v);

        if (!(m >= 1 && m <= 100))
            CHECK(fail(c, "multiplier", PCTL_FERR_INVALID, NULL,
                       "%g: must be between 1 and 100", m));
        else
            r->multiplier = m;
    }
    CHECK(get_duration(c, o, "max_backoff", &max_ms, &mstate, &text));
    if (mstate == 1 && bstate >= 0 && max_ms < r->backoff_ms) {
        qbuf q;

        return fail(c, "max_backoff", PCTL_FERR_INVALID, NULL,
                    "%s: must not be less than backoff", quote(&q, text));
    }
    if (mstate == 1)
        r->max_backoff_ms = max_ms;
    else if (mstate == 0 && r->backoff_ms > r->max_backoff_ms)
        /* The default cap must not contradict a backoff the user chose:
         * "backoff": "2m" alone means waits of 2m, not an error. */
        r->max_backoff_ms = r->backoff_ms;
    return 0;
}

static int decode_step_task(ctx *c, json_t *arr, size_t i, void *item)
{
    const char *s;

    CHECK(string_value(c, NULL, json_array_get(arr, i), &s));
    if (s)
        CHECK(resolve(c, NULL, s, &c->tasks, item));
    return 0;
}

static int decode_step(ctx *c, json_t *arr, size_t i, void *item)
{
    pctl_step_def *st = item;
    json_t *o = json_array_get(arr, i), *v;
    const char *s;
    int state;

    st->retry.attempts = 3;
    st->retry.backoff_ms = 1000;
    st->retry.multiplier = 2;
    st->retry.max_backoff_ms = 60000;
    if (!json_is_object(o))
        return type_error(c, NULL, "an object");
    CHECK(check_known(c, o, step_fields, COUNT(step_fields)));
    CHECK(get_unique_name(c, arr, i, &s));
    CHECK(copy(&st->name, s));
    CHECK(get_array(c, o, "tasks", 1, PCTL_DEF_MAX_STEP_TASKS, "tasks", &v));
    if (v && json_array_size(v) == 0) {
        CHECK(report(c, "tasks", PCTL_FERR_REQUIRED, NULL,
                     "must list at least one task"));
    } else if (v) {
        void *p;

        CHECK(alloc_items(&p, json_array_size(v), sizeof(size_t)));
        st->tasks = p;
        st->ntasks = json_array_size(v);
        CHECK(walk(c, "tasks", v, st->tasks, sizeof(size_t), decode_step_task));
    }
    v = json_object_get(o, "retry");
    if (v) {
        size_t mark = c->plen;

        CHECK(path_key(c, "retry"));
        CHECK(decode_retry(c, v, &st->retry));
        path_truncate(c, mark);
    }
    CHECK(get_duration(c, o, "timeout", &st->timeout_ms, &state, &s));
    if (state == 1 && st->timeout_ms == 0) {
        qbuf q;

        CHECK(fail(c, "timeout", PCTL_FERR_INVALID, NULL,
                   "%s: must be greater than zero", quote(&q, s)));
    }
    return 0;
}

static int decode_phase(ctx *c, json_t *arr, size_t i, void *item)
{
    pctl_phase_def *ph = item;
    json_t *o = json_array_get(arr, i), *v;
    const char *s;

    if (!json_is_object(o))
        return type_error(c, NULL, "an object");
    CHECK(check_known(c, o, phase_fields, COUNT(phase_fields)));
    CHECK(get_unique_name(c, arr, i, &s));
    CHECK(copy(&ph->name, s));
    CHECK(get_strategy(c, o, &ph->strategy));
    CHECK(get_array(c, o, "steps", 1, PCTL_DEF_MAX_STEPS, "steps", &v));
    if (v && json_array_size(v) == 0)
        return report(c, "steps", PCTL_FERR_REQUIRED, NULL,
                      "must have at least one step");
    if (v) {
        void *p;

        CHECK(alloc_items(&p, json_array_size(v), sizeof(*ph->steps)));
        ph->steps = p;
        ph->nsteps = json_array_size(v);
        CHECK(walk(c, "steps", v, ph->steps, sizeof(*ph->steps), decode_step));
    }
    return 0;
}

static int decode_plan(ctx *c, json_t *o, pctl_plan_def *pl)
{
    json_t *v;
    void *p;

    if (!json_is_object(o))
        return type_error(c, NULL, "an object");
    CHECK(check_known(c, o, plan_fields, COUNT(plan_fields)));
    CHECK(get_strategy(c, o, &pl->strategy));
    {
        int state;
        const char *s;

        CHECK(get_duration(c, o, "deadline", &pl->deadline_ms, &state, &s));
        if (state == 1 && pl->deadline_ms == 0) {
            qbuf q;

            CHECK(fail(c, "deadline", PCTL_FERR_INVALID, NULL,
                       "%s: must be greater than zero", quote(&q, s)));
        }
    }
    CHECK(get_array(c, o, "preflight", 0, PCTL_DEF_MAX_CHECKS,
                    "preflight checks", &v));
    if (v) {
        CHECK(alloc_items(&p, json_array_size(v), sizeof(*pl->preflight)));
        pl->preflight = p;
        pl->nchecks = json_array_size(v);
        CHECK(walk(c, "preflight", v, pl->preflight, sizeof(*pl->preflight),
                   decode_check));
    }
    CHECK(get_array(c, o, "phases", 1, PCTL_DEF_MAX_PHASES, "phases", &v));
    if (v && json_array_size(v) == 0)
        return report(c, "phases", PCTL_FERR_REQUIRED, NULL,
                      "must have at least one phase");
    if (v) {
        CHECK(alloc_items(&p, json_array_size(v), sizeof(*pl->phases)));
        pl->phases = p;
        pl->nphases = json_array_size(v);
        CHECK(walk(c, "phases", v, pl->phases, sizeof(*pl->phases),
                   decode_phase));
    }
    return 0;
}

/* The plans object, with the path at "plans". */
static int decode_plans(ctx *c, json_t *plans)
{
    pctl_def *d = c->def;
    size_t n = json_object_size(plans), i = 0;
    void *it, *p;

    if (n > PCTL_DEF_MAX_PLANS) {
        CHECK(fail(c, NULL, PCTL_FERR_TOO_MANY, NULL,
                   "%zu plans; the limit is %d", n, PCTL_DEF_MAX_PLANS));
    } else {
        CHECK(alloc_items(&p, n, sizeof(*d->plans)));
        d->plans = p;
        d->nplans = n;
        for (it = json_object_iter(plans); it;
             it = json_object_iter_next(plans, it), i++) {
            const char *key = json_object_iter_key(it);
            size_t mark = c->plen;
            qbuf q;

            CHECK(path_key(c, key));
            if (!pctl_name_valid(key))
                CHECK(fail(c, NULL, PCTL_FERR_INVALID, NULL, "%s: %s",
                           quote(&q, key), NAME_RULE));
            CHECK(copy(&d->plans[i].name, key));
            CHECK(decode_plan(c, json_object_iter_value(it), &d->plans[i]));
            path_truncate(c, mark);
        }
    }
    if (!json_object_get(plans, "deploy"))
        CHECK(report(c, "deploy", PCTL_FERR_REQUIRED, NULL,
                     "a definition must have a deploy plan"));
    return 0;
}

static int decode_top(ctx *c, json_t *root)
{
    pctl_def *d = c->def;
    const char *s;
    json_t *v;
    void *p;
    size_t i;
    qbuf q;

    if (!json_is_object(root))
        return type_error(c, NULL, "an object");
    CHECK(check_known(c, root, top_fields, COUNT(top_fields)));

    CHECK(get_name(c, root, &s));
    CHECK(copy(&d->name, s));

    CHECK(get_string(c, root, "version", 1, &s));
    if (s) {
        size_t n = strlen(s);

        for (i = 0;
             i < n &&
             (strchr(".+_-", s[i]) || (s[i] >= '0' && s[i] <= '9') ||
              (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'));
             i++)
            ;
        if (n == 0 || n > PCTL_VERSION_MAX || i < n)
            CHECK(fail(c, "version", PCTL_FERR_INVALID, NULL, "%s: %s",
                       quote(&q, s), VERSION_RULE));
        CHECK(copy(&d->version, s));
    }

    CHECK(get_string(c, root, "description", 0, &s));

    CHECK(get_array(c, root, "parameters", 0, PCTL_DEF_MAX_PARAMS, "parameters",
                    &v));
    if (v) {
        CHECK(alloc_items(&p, json_array_size(v), sizeof(*d->params)));
        d->params = p;
        d->nparams = json_array_size(v);
        CHECK(walk(c, "parameters", v, d->params, sizeof(*d->params),
                   decode_param));
    }

    CHECK(get_array(c, root, "tasks", 0, PCTL_DEF_MAX_TASKS, "tasks", &v));
    if (v) {
        CHECK(alloc_items(&p, json_array_size(v), sizeof(*d->tasks)));
        d->tasks = p;
        d->ntasks = json_array_size(v);
        CHECK(walk(c, "tasks", v, d->tasks, sizeof(*d->tasks), decode_task));
    }

    v = json_object_get(root, "plans");
    if (!v)
        return report(c, "plans", PCTL_FERR_REQUIRED, NULL, "");
    if (!json_is_object(v))
        return type_error(c, "plans", "an object");
    CHECK(path_key(c, "plans"));
    CHECK(decode_plans(c, v));
    path_truncate(c, 0);
    return 0;
}

/* Reads task and plan names ahead of the walk.  An absent list is known
 * and empty (every reference to it is Not found); an unreadable one is
 * unknown, and its own error is the only one reported. */
static int collect_names(ctx *c, json_t *root)
{
    json_t *tasks = json_object_get(root, "tasks");
    json_t *plans = json_object_get(root, "plans");
    void *p;
    size_t i;

    if (!tasks) {
        c->tasks.known = 1;
    } else if (json_is_array(tasks) &&
               json_array_size(tasks) <= PCTL_DEF_MAX_TASKS) {
        c->tasks.known = 1;
        c->tasks.n = json_array_size(tasks);
        CHECK(alloc_items(&p, c->tasks.n, sizeof(*c->tasks.v)));
        c->tasks.v = p;
        for (i = 0; i < c->tasks.n; i++) {
            json_t *t = json_array_get(tasks, i);

            c->tasks.v[i] = json_string_value(json_object_get(t, "name"));
        }
    }

    if (!plans) {
        c->plans.known = 1;
    } else if (json_is_object(plans) &&
               json_object_size(plans) <= PCTL_DEF_MAX_PLANS) {
        void *it;

        c->plans.known = 1;
        c->plans.n = json_object_size(plans);
        CHECK(alloc_items(&p, c->plans.n, sizeof(*c->plans.v)));
        c->plans.v = p;
        i = 0;
        for (it = json_object_iter(plans); it;
             it = json_object_iter_next(plans, it))
            c->plans.v[i++] = json_object_iter_key(it);
    }
    return 0;
}

static int plan_cmp(const void *a, const void *b)
{
    const pctl_plan_def *x = a, *y = b;

    return strcmp(x->name, y->name);
}

int pctl_def_decode(pctl_def **out, const char *text, size_t len,
                    const char *origin, pctl_ferr_list *errs)
{
    json_error_t jerr;
    json_t *root = NULL;
    ctx c;
    int rc;

    *out = NULL;
    memset(&c, 0, sizeof(c));
    if (len > PCTL_DEF_MAX_BYTES) {
        rc = pctl_ferr_add(errs, "", PCTL_FERR_TOO_LONG, NULL,
                           "definition is %zu bytes; the limit is %d", len,
                           PCTL_DEF_MAX_BYTES);
        return rc < 0 ? rc : PLANCTL_EDEFINITION;
    }

    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        /* jansson leaves the error text empty when an allocation failed
         * while building a value, and only sometimes sets the code. */
        if (json_error_code(&jerr) == json_error_out_of_memory ||
            jerr.text[0] == '\0')
            return PLANCTL_ENOMEM;
        rc = pctl_ferr_add(errs, "", PCTL_FERR_SYNTAX, NULL, "%s:%d:%d: %s",
                           origin ? origin : "<definition>", jerr.line,
                           jerr.column, jerr.text);
        return rc < 0 ? rc : PLANCTL_EDEFINITION;
    }

    c.errs = errs;
    c.pcap = 128;
    c.path = pctl_malloc(c.pcap);
    c.def = pctl_calloc(1, sizeof(*c.def));
    if (!c.path || !c.def) {
        rc = PLANCTL_ENOMEM;
        goto done;
    }
    c.path[0] = '\0';

    if (json_is_object(root)) {
        rc = collect_names(&c, root);
        if (rc < 0)
            goto done;
    }
    rc = decode_top(&c, root);
    if (rc < 0)
        goto done;
    if (c.nerrs > PCTL_DEF_MAX_ERRORS) {
        rc = pctl_ferr_add(errs, "", PCTL_FERR_TOO_MANY, NULL,
                           "%zu more errors; only the first %d are shown",
                           c.nerrs - PCTL_DEF_MAX_ERRORS, PCTL_DEF_MAX_ERRORS);
        if (rc < 0)
            goto done;
    }
    if (c.nerrs) {
        rc = PLANCTL_EDEFINITION;
        goto done;
    }

    if (c.def->nplans > 1)
        qsort(c.def->plans, c.def->nplans, sizeof(*c.def->plans), plan_cmp);
    *out = c.def;
    c.def = NULL;
    rc = 0;

done:
    pctl_def_free(c.def);
    pctl_free(c.path);
    pctl_free(c.tasks.v);
    pctl_free(c.plans.v);
    json_decref(root);
    return rc;
}

/* ---- the model ----------------------------------------------------------- */

static void plan_free(pctl_plan_def *pl)
{
    size_t i, j;

    for (i = 0; i < pl->nphases; i++) {
        pctl_phase_def *ph = &pl->phases[i];

        for (j = 0; j < ph->nsteps; j++) {
            pctl_free(ph->steps[j].name);
            pctl_free(ph->steps[j].tasks);
        }
        pctl_free(ph->steps);
        pctl_free(ph->name);
    }
    pctl_free(pl->phases);
    for (i = 0; i < pl->nchecks; i++)
        pctl_free(pl->preflight[i].name);
    pctl_free(pl->preflight);
    pctl_free(pl->name);
}

void pctl_def_free(pctl_def *d)
{
    size_t i;

    if (!d)
        return;
    for (i = 0; i < d->nparams; i++) {
        pctl_free(d->params[i].name);
        pctl_free(d->params[i].default_value);
        pctl_free(d->params[i].trigger);
        pctl_free(d->params[i].description);
    }
    pctl_free(d->params);
    for (i = 0; i < d->ntasks; i++) {
        pctl_free(d->tasks[i].name);
        pctl_free(d->tasks[i].kind);
        pctl_free(d->tasks[i].spec);
    }
    pctl_free(d->tasks);
    for (i = 0; i < d->nplans; i++)
        plan_free(&d->plans[i]);
    pctl_free(d->plans);
    pctl_free(d->name);
    pctl_free(d->version);
    pctl_free(d);
}

/* Linear searches: the limits keep every list short, and a linear search
 * does not depend on how a hand-built pctl_def was ordered. */
const pctl_plan_def *pctl_def_plan(const pctl_def *d, const char *name)
{
    size_t i;

    for (i = 0; d && i < d->nplans; i++)
        if (strcmp(d->plans[i].name, name) == 0)
            return &d->plans[i];
    return NULL;
}

const pctl_param_def *pctl_def_param(const pctl_def *d, const char *name)
{
    size_t i;

    for (i = 0; d && i < d->nparams; i++)
        if (strcmp(d->params[i].name, name) == 0)
            return &d->params[i];
    return NULL;
}

const pctl_task_def *pctl_def_task(const pctl_def *d, const char *name)
{
    size_t i;

    for (i = 0; d && i < d->ntasks; i++)
        if (strcmp(d->tasks[i].name, name) == 0)
            return &d->tasks[i];
    return NULL;
}

const char *pctl_strategy_name(pctl_strategy s)
{
    return s == PCTL_STRATEGY_PARALLEL ? "parallel" : "serial";
}
