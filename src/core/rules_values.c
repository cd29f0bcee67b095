/*
 * rules_values.c - the rules about values: name syntax and uniqueness
 * (of parameters' variables too), the version, strategies, durations,
 * retry ranges, and lists that must not be empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "def.h"
#include "envname.h"
#include "planctl.h"
#include "rules.h"

static const char NAME_RULE[] =
    "must be 1-63 characters of letters, digits, '_', '.', '-', starting "
    "with a letter or digit";
const char pctl_version_rule[] =
    "must be 1-64 characters of letters, digits, '.', '+', '_', '-'";
static const char DURATION_RULE[] =
    "must be a duration such as \"500ms\", \"30s\", \"5m\" or \"1h\"";

static const char *const strategies[] = {"parallel", "serial"};

/* ---- names --------------------------------------------------------------- */

static int names_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const char *name;
    pctl_qbuf q;

    (void)data;
    if (v->node == PCTL_NODE_PLAN)
        return pctl_name_valid(v->key)
                   ? 0
                   : pctl_sink_fail(s, NULL, PCTL_FERR_INVALID, NULL, "%s: %s",
                                    pctl_quote(&q, v->key), NAME_RULE);
    if (v->node == PCTL_NODE_STEP_TASK || v->node == PCTL_NODE_RETRY)
        return 0;
    name = pctl_get_string(v->value, "name");
    if (name && !pctl_name_valid(name))
        PCTL_CHECK(pctl_sink_fail(s, "name", PCTL_FERR_INVALID, NULL, "%s: %s",
                                  pctl_quote(&q, name), NAME_RULE));
    if (v->node == PCTL_NODE_ROOT) {
        const char *version = pctl_get_string(v->value, "version");

        if (version && !pctl_version_valid(version))
            PCTL_CHECK(pctl_sink_fail(s, "version", PCTL_FERR_INVALID, NULL,
                                      "%s: %s", pctl_quote(&q, version),
                                      pctl_version_rule));
    }
    return 0;
}

int pctl_rule_names(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)data;
    return pctl_rule_walk(in, s, names_node);
}

/* ---- unique names -------------------------------------------------------- */

typedef struct named {
    const char *name;
    size_t index;
} named;

static int named_cmp(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Names must be unique among their siblings: parameters, tasks, a plan's
 * preflight checks and phases, a phase's steps.  Only valid names take
 * part (an invalid one is reported as such, once).  Sorting finds the
 * duplicates in n log n - a phase may have 1000 steps - and they are then
 * reported in document order, each after the first of its name.
 */
static int unique_list(pctl_sink *s, pctl_node elem, const json_t *list,
                       void *data)
{
    size_t n = json_array_size(list), m = 0, i;
    unsigned char *dup;
    named *v;
    int rc = 0;

    (void)data;
    if (elem == PCTL_NODE_STEP_TASK || n < 2)
        return 0;
    v = pctl_calloc(n, sizeof(*v));
    dup = pctl_calloc(n, 1);
    if (!v || !dup) {
        pctl_free(v);
        pctl_free(dup);
        return PLANCTL_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        const char *name = pctl_get_string(json_array_get(list, i), "name");

        if (name && pctl_name_valid(name)) {
            v[m].name = name;
            v[m++].index = i;
        }
    }
    qsort(v, m, sizeof(*v), named_cmp);
    for (i = 1; i < m; i++)
        if (strcmp(v[i].name, v[i - 1].name) == 0)
            dup[v[i].index] = 1;
    for (i = 0; i < n && rc == 0; i++) {
        size_t mark = pctl_sink_mark(s);
        pctl_qbuf q;

        if (!dup[i])
            continue;
        rc = pctl_sink_index(s, i);
        if (rc == 0)
            rc = pctl_sink_fail(
                s, "name", PCTL_FERR_DUPLICATE, NULL, "%s",
                pctl_quote(&q,
                           pctl_get_string(json_array_get(list, i), "name")));
        pctl_sink_back(s, mark);
    }
    pctl_free(v);
    pctl_free(dup);
    return rc;
}

int pctl_rule_unique(const pctl_vin *in, pctl_sink *s, void *data)
{
    pctl_visitor vis;

    (void)data;
    vis.node = NULL;
    vis.list = unique_list;
    return pctl_walk(in->doc, s, &vis, NULL);
}

/* ---- parameters' variables ---------------------------------------------- */

static const char SAME_VAR_HINT[] =
    "rename one of them: case and '-', '.', '_' do not tell variables apart";

typedef struct pvar {
    char *var; /* owned */
    size_t index;
} pvar;

static int pvar_cmp(const void *a, const void *b)
{
    const pvar *x = a, *y = b;
    int c = strcmp(x->var, y->var);

    if (c)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

static const char *param_name(const json_t *list, size_t i)
{
    return pctl_get_string(json_array_get(list, i), "name");
}

/* For the members v[start..end) of one variable, in document order: in
 * first[i], the first parameter of that variable for each member i whose
 * name is new there (a repeat of the same name is the unique rule's), or
 * SIZE_MAX. */
static void mark_group(size_t *first, const pvar *v, size_t start, size_t end,
                       const json_t *list)
{
    size_t i, k;

    for (i = start + 1; i < end; i++) {
        const char *name = param_name(list, v[i].index);

        for (k = start; k < i; k++)
            if (strcmp(name, param_name(list, v[k].index)) == 0)
                break;
        if (k == i)
            first[v[i].index] = v[start].index;
    }
}

/*
 * A parameter reaches a shell task as the variable pctl_env_param_name()
 * makes of its name, which does not tell "a-b" from "A_B": of two names
 * with one variable, a task would see one value.  Each such name is
 * reported where it first appears, naming the first parameter with that
 * variable; only valid names take part.  Sorting keeps it n log n.
 */
static int param_vars_list(pctl_sink *s, pctl_node elem, const json_t *list,
                           void *data)
{
    size_t n = json_array_size(list), m = 0, i, j;
    size_t *first = NULL;
    pvar *v = NULL;
    int rc = 0;

    (void)data;
    if (elem != PCTL_NODE_PARAM || n < 2)
        return 0;
    v = pctl_calloc(n, sizeof(*v));
    first = pctl_malloc(n * sizeof(*first));
    if (!v || !first) {
        rc = PLANCTL_ENOMEM;
        goto done;
    }
    for (i = 0; i < n; i++) {
        const char *name = param_name(list, i);

        first[i] = SIZE_MAX;
        if (!name || !pctl_name_valid(name))
            continue;
        if (!(v[m].var = pctl_env_param_name(name))) {
            rc = PLANCTL_ENOMEM;
            goto done;
        }
        v[m++].index = i;
    }
    qsort(v, m, sizeof(*v), pvar_cmp);
    for (i = 0; i < m; i = j) {
        for (j = i + 1; j < m && strcmp(v[j].var, v[i].var) == 0; j++)
            ;
        mark_group(first, v, i, j, list);
    }
    for (i = 0; i < n && rc == 0; i++) {
        size_t mark = pctl_sink_mark(s);
        pctl_qbuf q, qf;
        char *var;

        if (first[i] == SIZE_MAX)
            continue;
        var = pctl_env_param_name(param_name(list, i));
        rc = var ? pctl_sink_index(s, i) : PLANCTL_ENOMEM;
        if (rc == 0)
            rc = pctl_sink_fail(s, "name", PCTL_FERR_DUPLICATE, SAME_VAR_HINT,
                                "%s: becomes %s, as %s (parameters[%zu]) does",
                                pctl_quote(&q, param_name(list, i)), var,
                                pctl_quote(&qf, param_name(list, first[i])),
                                first[i]);
        pctl_free(var);
        pctl_sink_back(s, mark);
    }

done:
    for (i = 0; v && i < m; i++)
        pctl_free(v[i].var);
    pctl_free(v);
    pctl_free(first);
    return rc;
}

/* Only when the caller said which kinds exist, as for the specs: a
 * definition read back (pctl_def_decode) may have been stored before this
 * rule, and must still load. */
int pctl_rule_param_vars(const pctl_vin *in, pctl_sink *s, void *data)
{
    pctl_visitor vis;

    (void)data;
    if (!in->kinds)
        return 0;
    vis.node = NULL;
    vis.list = param_vars_list;
    return pctl_walk(in->doc, s, &vis, NULL);
}

/* ---- steps' output variables -------------------------------------------- */

typedef struct svar {
    char *var;           /* owned: pctl_env_step_name() of name */
    const char *name;    /* borrowed from the document */
    size_t order;        /* in document order within the plan */
    size_t phase, index; /* phases[phase].steps[index] */
} svar;

/* By variable, then by position: the steps of one phase and one name
 * (the unique rule's duplicates) next to each other. */
static int svar_cmp(const void *a, const void *b)
{
    const svar *x = a, *y = b;
    int c = strcmp(x->var, y->var);

    if (c)
        return c;
    if (x->phase != y->phase)
        return x->phase < y->phase ? -1 : 1;
    if ((c = strcmp(x->name, y->name)) != 0)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The steps of plan with a valid name, in document order, with their
 * variables, into *out (n of them).  Only the lists the walk descends
 * into are read.  Returns 0 or ENOMEM (*out then freed). */
static int plan_steps(svar **out, size_t *n, const json_t *plan)
{
    const json_t *phases = pctl_get_array(plan, "phases", PCTL_DEF_MAX_PHASES);
    size_t i, k, cap = 0;
    svar *v = NULL;

    *out = NULL;
    *n = 0;
    for (i = 0; i < json_array_size(phases); i++) {
        const json_t *steps = pctl_get_array(json_array_get(phases, i), "steps",
                                             PCTL_DEF_MAX_STEPS);

        cap += json_array_size(steps);
    }
    if (cap < 2)
        return 0;
    if (!(v = pctl_calloc(cap, sizeof(*v))))
        return PLANCTL_ENOMEM;
    for (i = 0; i < json_array_size(phases); i++) {
        const json_t *steps = pctl_get_array(json_array_get(phases, i), "steps",
                                             PCTL_DEF_MAX_STEPS);

        for (k = 0; k < json_array_size(steps); k++) {
            const char *name = param_name(steps, k);

            if (!name || !pctl_name_valid(name))
                continue;
            v[*n].name = name;
            v[*n].order = *n;
            v[*n].phase = i;
            v[*n].index = k;
            if (!(v[(*n)++].var = pctl_env_step_name(name))) {
                for (k = 0; k < *n; k++)
                    pctl_free(v[k].var);
                pctl_free(v);
                *n = 0;
                return PLANCTL_ENOMEM;
            }
        }
    }
    *out = v;
    return 0;
}

/* Reports step v (at the plan's path) as having first's variable. */
static int step_var_fail(pctl_sink *s, const svar *v, const svar *first)
{
    size_t mark = pctl_sink_mark(s);
    pctl_qbuf q, qf;
    int rc = pctl_sink_key(s, "phases");

    if (rc == 0)
        rc = pctl_sink_index(s, v->phase);
    if (rc == 0)
        rc = pctl_sink_key(s, "steps");
    if (rc == 0)
        rc = pctl_sink_index(s, v->index);
    if (rc == 0)
        rc = pctl_sink_fail(s, "name", PCTL_FERR_DUPLICATE, SAME_VAR_HINT,
                            "%s: its outputs would be %s_<KEY>, as those of %s "
                            "(phases[%zu].steps[%zu]) are",
                            pctl_quote(&q, v->name), v->var,
                            pctl_quote(&qf, first->name), first->phase,
                            first->index);
    pctl_sink_back(s, mark);
    return rc;
}

/*
 * The outputs of a step reach the later tasks of its run as
 * PLANCTL_OUTPUT_<STEP>_<KEY>, <STEP> made of its name by
 * pctl_env_step_name(), which does not tell "gen-cert" from "gen_cert": a
 * task would see one step's outputs under the other's name.  A run is one
 * plan's, so within each plan every step whose variable the plan's first
 * step of that variable has under another name is reported, in document
 * order, naming that first step.  One name in two phases is not: step
 * names are unique per phase, definitions reuse them across phases (a
 * phase per environment, each with its "deploy" step) whether or not they
 * use outputs, and the later step's outputs then win, as documented;
 * two steps of one name in one phase are the unique rule's.
 */
static int step_vars_node(pctl_sink *s, const pctl_visit *vis, void *data)
{
    svar *v = NULL;
    size_t n = 0, i, j, k, f;
    size_t *first = NULL, *at = NULL;
    int rc;

    (void)data;
    if (vis->node != PCTL_NODE_PLAN)
        return 0;
    if ((rc = plan_steps(&v, &n, vis->value)) < 0 || n < 2)
        goto done;
    first = pctl_malloc(n * sizeof(*first));
    at = pctl_malloc(n * sizeof(*at));
    if (!first || !at) {
        rc = PLANCTL_ENOMEM;
        goto done;
    }
    qsort(v, n, sizeof(*v), svar_cmp);
    for (i = 0; i < n; i = j) {
        f = i; /* the group's first step in document order */
        for (j = i + 1; j < n && strcmp(v[j].var, v[i].var) == 0; j++)
            if (v[j].order < v[f].order)
                f = j;
        for (k = i; k < j; k++) {
            at[v[k].order] = k;
            first[v[k].order] =
                strcmp(v[k].name, v[f].name) == 0 ||
                        (k > i && v[k].phase == v[k - 1].phase &&
                         strcmp(v[k].name, v[k - 1].name) == 0)
                    ? SIZE_MAX
                    : f;
        }
    }
    /* Reported in document order. */
    for (i = 0; i < n && rc == 0; i++)
        if (first[i] != SIZE_MAX)
            rc = step_var_fail(s, &v[at[i]], &v[first[i]]);

done:
    for (i = 0; v && i < n; i++)
        pctl_free(v[i].var);
    pctl_free(v);
    pctl_free(first);
    pctl_free(at);
    return rc;
}

/* Only when the caller said which kinds exist, as for parameters'
 * variables: a definition stored before this rule must still load. */
int pctl_rule_step_vars(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)data;
    if (!in->kinds)
        return 0;
    return pctl_rule_walk(in, s, step_vars_node);
}

/* ---- strategies ---------------------------------------------------------- */

static int strategies_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const char *st;
    pctl_hbuf h;
    pctl_qbuf q;

    (void)data;
    if (v->node != PCTL_NODE_PLAN && v->node != PCTL_NODE_PHASE)
        return 0;
    st = pctl_get_string(v->value, "strategy");
    if (!st || strcmp(st, "serial") == 0 || strcmp(st, "parallel") == 0)
        return 0;
    return pctl_sink_fail(
        s, "strategy", PCTL_FERR_UNSUPPORTED,
        pctl_did_you_mean(&h,
                          pctl_closest(st, strategies, PCTL_COUNT(strategies))),
        "%s: supported values: \"parallel\", \"serial\"", pctl_quote(&q, st));
}

int pctl_rule_strategies(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)data;
    return pctl_rule_walk(in, s, strategies_node);
}

/* ---- durations ----------------------------------------------------------- */

/* o.field must be a duration, and more than zero when positive is set. */
static int duration(pctl_sink *s, const json_t *o, const char *field,
                    int positive)
{
    const char *text;
    int64_t ms;
    int state = pctl_get_duration(o, field, &ms, &text);
    pctl_qbuf q;

    if (state < 0)
        return pctl_sink_fail(s, field, PCTL_FERR_INVALID, NULL, "%s: %s",
                              pctl_quote(&q, text), DURATION_RULE);
    if (state > 0 && positive && ms == 0)
        return pctl_sink_fail(s, field, PCTL_FERR_INVALID, NULL,
                              "%s: must be greater than zero",
                              pctl_quote(&q, text));
    return 0;
}

static int durations_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    (void)data;
    switch (v->node) {
    case PCTL_NODE_PLAN:
        /* A run must end this long after it starts. */
        return duration(s, v->value, "deadline", 1);
    case PCTL_NODE_STEP:
        return duration(s, v->value, "timeout", 1);
    case PCTL_NODE_RETRY:
        PCTL_CHECK(duration(s, v->value, "backoff", 0));
        return duration(s, v->value, "max_backoff", 0);
    default:
        return 0;
    }
}

int pctl_rule_durations(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)data;
    return pctl_rule_walk(in, s, durations_node);
}

/* ---- retry ranges -------------------------------------------------------- */

static int retry_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const json_t *a, *m;
    const char *text;
    int64_t backoff, max;

    (void)data;
    if (v->node != PCTL_NODE_RETRY)
        return 0;
    a = json_object_get(v->value, "attempts");
    if (json_is_integer(a) &&
        (json_integer_value(a) < 1 || json_integer_value(a) > 100))
        PCTL_CHECK(pctl_sink_fail(s, "attempts", PCTL_FERR_INVALID, NULL,
                                  "%" JSON_INTEGER_FORMAT
                                  ": must be between 1 and 100",
                                  json_integer_value(a)));
    m = json_object_get(v->value, "multiplier");
    if (json_is_number(m) &&
        !(json_number_value(m) >= 1 && json_number_value(m) <= 100))
        PCTL_CHECK(pctl_sink_fail(s, "multiplier", PCTL_FERR_INVALID, NULL,
                                  "%g: must be between 1 and 100",
                                  json_number_value(m)));
    /* Both are present once defaulted, unless backoff was not a duration
     * (reported by the durations rule). */
    if (pctl_get_duration(v->value, "backoff", &backoff, NULL) == 1 &&
        pctl_get_duration(v->value, "max_backoff", &max, &text) == 1 &&
        max < backoff) {
        pctl_qbuf q;

        return pctl_sink_fail(s, "max_backoff", PCTL_FERR_INVALID, NULL,
                              "%s: must not be less than backoff",
                              pctl_quote(&q, text));
    }
    return 0;
}

int pctl_rule_retry(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)data;
    return pctl_rule_walk(in, s, retry_node);
}

/* ---- lists that must not be empty ---------------------------------------- */

static int not_empty_list(pctl_sink *s, pctl_node elem, const json_t *list,
                          void *data)
{
    const char *msg;

    (void)data;
    if (json_array_size(list) > 0)
        return 0;
    switch (elem) {
    case PCTL_NODE_PHASE:
        msg = "must have at least one phase";
        break;
    case PCTL_NODE_STEP:
        msg = "must have at least one step";
        break;
    case PCTL_NODE_STEP_TASK:
        msg = "must list at least one task";
        break;
    default:
        return 0;
    }
    return pctl_sink_fail(s, NULL, PCTL_FERR_REQUIRED, NULL, "%s", msg);
}

/* A plan has phases, a phase steps, and every step tasks. */
int pctl_rule_not_empty(const pctl_vin *in, pctl_sink *s, void *data)
{
    pctl_visitor vis;

    (void)data;
    vis.node = NULL;
    vis.list = not_empty_list;
    return pctl_walk(in->doc, s, &vis, NULL);
}
