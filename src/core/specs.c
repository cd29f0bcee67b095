/*
 * specs.c - the rules about tasks' kinds and specs: a kind must be a
 * built-in or registered by the embedder, and a spec must be one its kind
 * accepts.
 *
 * The built-in kinds' rules accept what their executors accept at run
 * time (src/engine/exec_dummy.c parses the same spec text; the shell
 * executor reads its spec with the very walk used here, shellspec.c), so
 * a definition that validates never fails a task for its spec; where an
 * executor stops at the first problem, these report all of them.  The one
 * place they are stricter is spec.env's names (see shellspec.c): the
 * executor still runs definitions stored before that rule.
 * An embedder's kind is checked by its own callback, if it gave one, on the
 * spec as the executor will receive it: compact JSON with sorted keys.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "def.h"
#include "pipeline.h"
#include "planctl.h"
#include "rules.h"
#include "shellspec.h"

/* Room for an embedder's message about a spec. */
#define CHECK_MSG_MAX 512

const char *const pctl_dummy_spec_fields[5] = {"done", "wantErr", "fatal",
                                               "sleep", "failTimes"};

/* ---- kinds --------------------------------------------------------------- */

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The known kinds, sorted and without repeats, in a new array (*n of
 * them).  Returns 0 or PLANCTL_ENOMEM. */
static int supported(const char ***out, size_t *n, const pctl_kinds *kinds)
{
    size_t total = PCTL_COUNT(pctl_builtin_kinds) + kinds->n, i, w = 0;
    const char **v = pctl_calloc(total, sizeof(*v));

    *out = NULL;
    *n = 0;
    if (!v)
        return PLANCTL_ENOMEM;
    for (i = 0; i < PCTL_COUNT(pctl_builtin_kinds); i++)
        v[i] = pctl_builtin_kinds[i];
    for (i = 0; i < kinds->n; i++)
        v[PCTL_COUNT(pctl_builtin_kinds) + i] = kinds->items[i].name;
    qsort(v, total, sizeof(*v), str_cmp);
    for (i = 0; i < total; i++)
        if (w == 0 || strcmp(v[w - 1], v[i]) != 0)
            v[w++] = v[i];
    *out = v;
    *n = w;
    return 0;
}

/* "\"Dummy\", \"shell\"" for the message, in a new string. */
static char *join_quoted(const char **v, size_t n)
{
    size_t len = 1, i;
    char *s, *w;

    for (i = 0; i < n; i++)
        len += sizeof(pctl_qbuf) + 2;
    s = pctl_malloc(len);
    if (!s)
        return NULL;
    w = s;
    for (i = 0; i < n; i++) {
        pctl_qbuf q;
        size_t k;

        if (i) {
            memcpy(w, ", ", 2);
            w += 2;
        }
        pctl_quote(&q, v[i]);
        k = strlen(q.s);
        memcpy(w, q.s, k);
        w += k;
    }
    *w = '\0';
    return s;
}

static int kind_known(const pctl_kinds *kinds, const char *kind)
{
    return pctl_kind_is_builtin(kind) || pctl_kinds_find(kinds, kind);
}

static int unsupported_kind(pctl_sink *s, const pctl_kinds *kinds,
                            const char *kind)
{
    const char **v;
    char *list;
    size_t n;
    const char *close;
    pctl_hbuf h;
    pctl_qbuf q;
    int rc;

    PCTL_CHECK(supported(&v, &n, kinds));
    list = join_quoted(v, n);
    if (!list) {
        pctl_free(v);
        return PLANCTL_ENOMEM;
    }
    close = pctl_closest(kind, v, n);
    /* Kinds are known per handle (an embedder's planctl_kind_register()
     * on one handle says nothing to another): unless it is a typo, say
     * so, and how. */
    if (close)
        rc = pctl_sink_fail(
            s, "kind", PCTL_FERR_UNSUPPORTED, pctl_did_you_mean(&h, close),
            "%s: supported values: %s", pctl_quote(&q, kind), list);
    else
        rc = pctl_sink_fail(
            s, "kind", PCTL_FERR_UNSUPPORTED, NULL,
            "%s: supported values: %s; other kinds are known once "
            "registered in this process (planctl_kind_register, an "
            "engine's executor) or when named as extra kinds",
            pctl_quote(&q, kind), list);
    pctl_free(list);
    pctl_free(v);
    return rc;
}

static int kinds_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const pctl_vin *in = data;
    const char *kind;

    if (v->node != PCTL_NODE_TASK)
        return 0;
    kind = pctl_get_string(v->value, "kind");
    if (!kind)
        return 0;
    if (!*kind)
        return pctl_sink_fail(s, "kind", PCTL_FERR_INVALID, NULL,
                              "\"\": must not be empty");
    if (in->kinds && !kind_known(in->kinds, kind))
        return unsupported_kind(s, in->kinds, kind);
    return 0;
}

/* A kind is a non-empty string; whether it is known is checked only when
 * the caller said which kinds exist. */
int pctl_rule_kinds(const pctl_vin *in, pctl_sink *s, void *data)
{
    pctl_visitor vis;

    (void)data;
    vis.node = kinds_node;
    vis.list = NULL;
    return pctl_walk(in->doc, s, &vis, (void *)in);
}

/* ---- built-in specs ------------------------------------------------------ */

static int type_error(pctl_sink *s, const char *field, const char *what)
{
    return pctl_sink_fail(s, field, PCTL_FERR_TYPE, NULL, "must be %s", what);
}

/* spec.field must be a duration.  Spec strings have no length limit: the
 * executor has none. */
static int spec_duration(pctl_sink *s, const json_t *spec, const char *field)
{
    const json_t *v = json_object_get(spec, field);
    int64_t ms;
    pctl_qbuf q;

    if (!v)
        return 0;
    if (!json_is_string(v))
        return type_error(s, field, PCTL_DURATION_TYPE);
    if (pctl_duration_parse(&ms, json_string_value(v)) < 0)
        return pctl_sink_fail(s, field, PCTL_FERR_INVALID, NULL, "%s: %s",
                              pctl_quote(&q, json_string_value(v)),
                              PCTL_DURATION_RULE);
    return 0;
}

/* Dummy: {done, wantErr, fatal: booleans; sleep: a duration; failTimes:
 * an integer >= 0}. */
static int dummy_spec(pctl_sink *s, const json_t *spec)
{
    static const char *const flags[] = {"done", "wantErr", "fatal"};
    const json_t *v;
    size_t i;

    PCTL_CHECK(pctl_sink_unknown(s, "tasks.spec.Dummy", spec,
                                 pctl_dummy_spec_fields,
                                 PCTL_COUNT(pctl_dummy_spec_fields)));
    for (i = 0; i < PCTL_COUNT(flags); i++) {
        v = json_object_get(spec, flags[i]);
        if (v && !json_is_boolean(v))
            PCTL_CHECK(type_error(s, flags[i], "a boolean"));
    }
    PCTL_CHECK(spec_duration(s, spec, "sleep"));
    v = json_object_get(spec, "failTimes");
    if (v && !json_is_integer(v))
        return type_error(s, "failTimes", "an integer");
    if (v && json_integer_value(v) < 0)
        return pctl_sink_fail(s, "failTimes", PCTL_FERR_INVALID, NULL,
                              "%" JSON_INTEGER_FORMAT ": must be 0 or more",
                              json_integer_value(v));
    return 0;
}

/* shell: the table and its one rule in shellspec.c, every problem. */
static int shell_spec(pctl_sink *s, const json_t *spec)
{
    pctl_shell_spec decoded;
    int rc =
        pctl_shell_spec_decode(&decoded, NULL, 0, s, spec, PCTL_SHELL_VALIDATE);

    return rc == PLANCTL_EINVAL ? 0 : rc; /* its problems are in s */
}

/* ---- an embedder's kind -------------------------------------------------- */

static int embedder_spec(pctl_sink *s, const pctl_kind *k, const json_t *spec)
{
    char msg[CHECK_MSG_MAX];
    char *text;
    int rc;

    PCTL_CHECK(pctl_json_encode(&text, spec, JSON_COMPACT | JSON_SORT_KEYS));
    msg[0] = '\0';
    rc = k->check(text, msg, sizeof(msg), k->data);
    pctl_free(text);
    if (rc >= 0)
        return 0;
    /* One line, whatever the callback wrote. */
    msg[sizeof(msg) - 1] = '\0';
    msg[strcspn(msg, "\r\n")] = '\0';
    if (!msg[0]) {
        pctl_qbuf q;

        return pctl_sink_fail(s, NULL, PCTL_FERR_INVALID, NULL,
                              "rejected by the check of kind %s",
                              pctl_quote(&q, k->name));
    }
    return pctl_sink_fail(s, NULL, PCTL_FERR_INVALID, NULL, "%s", msg);
}

static int specs_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const pctl_vin *in = data;
    const pctl_kind *k;
    const json_t *spec;
    const char *kind;
    size_t mark;
    int rc = 0;

    if (v->node != PCTL_NODE_TASK)
        return 0;
    kind = pctl_get_string(v->value, "kind");
    spec = pctl_get_object(v->value, "spec");
    if (!kind || !spec)
        return 0;
    k = pctl_kinds_find(in->kinds, kind);
    if (!k && !pctl_kind_is_builtin(kind))
        return 0; /* the kinds rule reports it */
    mark = pctl_sink_mark(s);
    PCTL_CHECK(pctl_sink_key(s, "spec"));
    /* An embedder's check replaces a built-in's rules; registering a
     * built-in kind without one keeps them. */
    if (k && k->check)
        rc = embedder_spec(s, k, spec);
    else if (strcmp(kind, "Dummy") == 0)
        rc = dummy_spec(s, spec);
    else if (strcmp(kind, "shell") == 0)
        rc = shell_spec(s, spec);
    pctl_sink_back(s, mark);
    return rc;
}

/* Only when the caller said which kinds exist: a definition decoded for
 * reading (pctl_def_decode) may use kinds this process does not know. */
int pctl_rule_specs(const pctl_vin *in, pctl_sink *s, void *data)
{
    pctl_visitor vis;

    (void)data;
    if (!in->kinds)
        return 0;
    vis.node = specs_node;
    vis.list = NULL;
    return pctl_walk(in->doc, s, &vis, (void *)in);
}
