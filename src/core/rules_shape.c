/*
 * rules_shape.c - the schema of a definition's nodes and the rules that
 * follow from it alone: unknown fields, required fields, types and limits.
 *
 * One table per node lists its fields in the order they are checked, with
 * the type each must have, whether it is required, and the limit of a
 * list.  The four rules read the same tables, so a field cannot be known
 * to one rule and unknown to another.
 */
#include <stdio.h>
#include <string.h>

#include "def.h"
#include "falias.h"
#include "planctl.h"
#include "rules.h"

typedef enum ftype {
    T_STRING,
    T_ARRAY,
    T_OBJECT,
    T_BOOL,
    T_INT,
    T_NUMBER,
    T_DURATION, /* a string the durations rule reads */
    T_ANY       /* a parameter's default: judged by its type (rules_params.c) */
} ftype;

typedef struct field {
    const char *name;
    ftype type;
    int required;
    size_t max;       /* lists: the most elements; 0: none */
    const char *what; /* lists: what the elements are, for messages */
} field;

static const field root_fields[] = {
    {"name", T_STRING, 1, 0, NULL},
    {"version", T_STRING, 1, 0, NULL},
    {"description", T_STRING, 0, 0, NULL},
    {"appVersion", T_STRING, 0, 0, NULL},
    {"url", T_STRING, 0, 0, NULL},
    {"maintainers", T_ARRAY, 0, PCTL_DEF_MAX_MAINTAINERS, "maintainers"},
    {"upgradableFrom", T_ARRAY, 0, PCTL_DEF_MAX_UPGRADABLE, "versions"},
    {"parameters", T_ARRAY, 0, PCTL_DEF_MAX_PARAMS, "parameters"},
    {"tasks", T_ARRAY, 0, PCTL_DEF_MAX_TASKS, "tasks"},
    {"plans", T_OBJECT, 1, PCTL_DEF_MAX_PLANS, "plans"}};
/* displayName is KUDO's; accepted for compatibility, not kept. */
static const field param_fields[] = {
    {"name", T_STRING, 1, 0, NULL},
    {"type", T_STRING, 0, 0, NULL},
    {"default", T_ANY, 0, 0, NULL},
    {"required", T_BOOL, 0, 0, NULL},
    {"enum", T_ARRAY, 0, PCTL_DEF_MAX_ENUM, "values"},
    {"immutable", T_BOOL, 0, 0, NULL},
    {"secret", T_BOOL, 0, 0, NULL},
    {"trigger", T_STRING, 0, 0, NULL},
    {"description", T_STRING, 0, 0, NULL},
    {"displayName", T_STRING, 0, 0, NULL}};
static const field task_fields[] = {{"name", T_STRING, 1, 0, NULL},
                                    {"kind", T_STRING, 1, 0, NULL},
                                    {"spec", T_OBJECT, 0, 0, NULL}};
static const field plan_fields[] = {
    {"strategy", T_STRING, 0, 0, NULL},
    {"deadline", T_DURATION, 0, 0, NULL},
    {"preflight", T_ARRAY, 0, PCTL_DEF_MAX_CHECKS, "preflight checks"},
    {"phases", T_ARRAY, 1, PCTL_DEF_MAX_PHASES, "phases"}};
static const field check_fields[] = {{"name", T_STRING, 1, 0, NULL},
                                     {"task", T_STRING, 1, 0, NULL}};
static const field phase_fields[] = {
    {"name", T_STRING, 1, 0, NULL},
    {"strategy", T_STRING, 0, 0, NULL},
    {"steps", T_ARRAY, 1, PCTL_DEF_MAX_STEPS, "steps"}};
static const field step_fields[] = {
    {"name", T_STRING, 1, 0, NULL},
    {"tasks", T_ARRAY, 1, PCTL_DEF_MAX_STEP_TASKS, "tasks"},
    {"retry", T_OBJECT, 0, 0, NULL},
    {"timeout", T_DURATION, 0, 0, NULL}};
static const field retry_fields[] = {{"attempts", T_INT, 0, 0, NULL},
                                     {"backoff", T_DURATION, 0, 0, NULL},
                                     {"multiplier", T_NUMBER, 0, 0, NULL},
                                     {"max_backoff", T_DURATION, 0, 0, NULL}};

/* The fields of an object node; NULL for a step's task (a string). */
static const field *fields_of(pctl_node node, size_t *n)
{
#define TABLE(t)                                                               \
    do {                                                                       \
        *n = PCTL_COUNT(t);                                                    \
        return t;                                                              \
    } while (0)
    switch (node) {
    case PCTL_NODE_ROOT:
        TABLE(root_fields);
    case PCTL_NODE_PARAM:
        TABLE(param_fields);
    case PCTL_NODE_TASK:
        TABLE(task_fields);
    case PCTL_NODE_PLAN:
        TABLE(plan_fields);
    case PCTL_NODE_CHECK:
        TABLE(check_fields);
    case PCTL_NODE_PHASE:
        TABLE(phase_fields);
    case PCTL_NODE_STEP:
        TABLE(step_fields);
    case PCTL_NODE_RETRY:
        TABLE(retry_fields);
    case PCTL_NODE_STEP_TASK:
        break;
    }
#undef TABLE
    *n = 0;
    return NULL;
}

/* ---- unknown fields ------------------------------------------------------ */

static int unknown_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const char *names[16];
    const field *f;
    size_t n, i;

    (void)data;
    f = fields_of(v->node, &n);
    if (!f || !json_is_object(v->value))
        return 0;
    for (i = 0; i < n; i++)
        names[i] = f[i].name;
    return pctl_sink_unknown(s, pctl_node_path(v->node), v->value, names, n);
}

int pctl_rule_unknown_fields(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)data;
    return pctl_rule_walk(in, s, unknown_node);
}

/* ---- required fields ----------------------------------------------------- */

static int required_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const field *f;
    size_t n, i;

    (void)data;
    f = fields_of(v->node, &n);
    if (!f || !json_is_object(v->value))
        return 0;
    for (i = 0; i < n; i++)
        if (f[i].required && !json_object_get(v->value, f[i].name))
            PCTL_CHECK(pctl_sink_fail(s, f[i].name, PCTL_FERR_REQUIRED, NULL,
                                      "%s", ""));
    return 0;
}

int pctl_rule_required(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)data;
    return pctl_rule_walk(in, s, required_node);
}

/* ---- types --------------------------------------------------------------- */

static int type_ok(ftype t, const json_t *v)
{
    switch (t) {
    case T_STRING:
    case T_DURATION:
        return json_is_string(v);
    case T_ARRAY:
        return json_is_array(v);
    case T_OBJECT:
        return json_is_object(v);
    case T_BOOL:
        return json_is_boolean(v);
    case T_INT:
        return json_is_integer(v);
    case T_NUMBER:
        return json_is_number(v);
    case T_ANY:
        return 1;
    }
    return 0;
}

static const char *type_name(ftype t)
{
    switch (t) {
    case T_STRING:
    case T_DURATION: /* the reference's type; its error says more */
        return "a string";
    case T_ARRAY:
        return "an array";
    case T_OBJECT:
        return "an object";
    case T_BOOL:
        return "a boolean";
    case T_INT:
        return "an integer";
    case T_NUMBER:
        return "a number";
    case T_ANY:
        return "any JSON value";
    }
    return "something else";
}

/* The objects of a fixed shape that are a field of another (a step's
 * retry): their type error lists what they hold, since "must be an
 * object" alone does not say what to write ("retry": 3). */
static const struct {
    pctl_node parent;
    const char *name;
    pctl_node node;
} objects[] = {{PCTL_NODE_STEP, "retry", PCTL_NODE_RETRY}};

typedef struct words {
    char s[160];
} words;

/* " with attempts, backoff, multiplier, max_backoff" for the field name of
 * parent when it is such an object, else "".  Can't fail. */
static const char *with_fields(words *w, pctl_node parent, const char *name)
{
    size_t i, j, n, len = 0;

    w->s[0] = '\0';
    for (i = 0; i < PCTL_COUNT(objects); i++) {
        const field *f;

        if (objects[i].parent != parent || strcmp(objects[i].name, name) != 0)
            continue;
        f = fields_of(objects[i].node, &n);
        for (j = 0; j < n && len < sizeof(w->s); j++)
            len += (size_t)snprintf(w->s + len, sizeof(w->s) - len, "%s%s",
                                    j ? ", " : " with ", f[j].name);
    }
    return w->s;
}

static int types_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const field *f;
    size_t n, i;
    words w;

    (void)data;
    if (v->node == PCTL_NODE_STEP_TASK)
        return json_is_string(v->value)
                   ? 0
                   : pctl_sink_fail(s, NULL, PCTL_FERR_TYPE, NULL,
                                    "must be a string");
    if (!json_is_object(v->value)) {
        /* Such an object's parent has said it, with its fields. */
        for (i = 0; i < PCTL_COUNT(objects); i++)
            if (objects[i].node == v->node)
                return 0;
        return pctl_sink_fail(s, NULL, PCTL_FERR_TYPE, NULL,
                              "must be an object");
    }
    f = fields_of(v->node, &n);
    for (i = 0; i < n; i++) {
        const json_t *fv = json_object_get(v->value, f[i].name);

        if (fv && !type_ok(f[i].type, fv))
            PCTL_CHECK(pctl_sink_fail(
                s, f[i].name, PCTL_FERR_TYPE, NULL, "must be %s%s",
                f[i].type == T_DURATION ? PCTL_DURATION_TYPE
                                        : type_name(f[i].type),
                with_fields(&w, v->node, f[i].name)));
    }
    return 0;
}

int pctl_rule_types(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)data;
    return pctl_rule_walk(in, s, types_node);
}

/* ---- limits -------------------------------------------------------------- */

/* A string longer than any name or duration could be; a spec is exempt,
 * being the executor's business. */
static int too_long(pctl_sink *s, const char *name, const json_t *v)
{
    if (!json_is_string(v) || json_string_length(v) <= PCTL_DEF_MAX_STRING)
        return 0;
    return pctl_sink_fail(s, name, PCTL_FERR_TOO_LONG, NULL,
                          "%zu bytes; the limit is %d", json_string_length(v),
                          PCTL_DEF_MAX_STRING);
}

static int limits_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const field *f;
    size_t n, i;

    (void)data;
    if (v->node == PCTL_NODE_STEP_TASK)
        return too_long(s, NULL, v->value);
    f = fields_of(v->node, &n);
    if (!json_is_object(v->value))
        return 0;
    for (i = 0; i < n; i++) {
        const json_t *fv = json_object_get(v->value, f[i].name);
        size_t size = json_is_array(fv)    ? json_array_size(fv)
                      : json_is_object(fv) ? json_object_size(fv)
                                           : 0;

        PCTL_CHECK(too_long(s, f[i].name, fv));
        if (f[i].max && size > f[i].max)
            PCTL_CHECK(pctl_sink_fail(s, f[i].name, PCTL_FERR_TOO_MANY, NULL,
                                      "%zu %s; the limit is %zu", size,
                                      f[i].what, f[i].max));
    }
    return 0;
}

int pctl_rule_limits(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)data;
    return pctl_rule_walk(in, s, limits_node);
}

/* ---- the tables, for the reference --------------------------------------- */

int pctl_shape_field_at(pctl_node node, size_t i, pctl_shape_field *out)
{
    const field *f;
    size_t n;

    f = fields_of(node, &n);
    if (!f || i >= n)
        return 0;
    out->name = f[i].name;
    out->type = type_name(f[i].type);
    out->required = f[i].required;
    out->max = f[i].max;
    return 1;
}
