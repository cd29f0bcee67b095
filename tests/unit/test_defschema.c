/* test_defschema.c - the reference of the definition format (core/schema.h)
 * against the validator: every field the validator accepts is described,
 * with its type, required flag and limit; every described field is
 * reachable by `planctl explain`'s paths; the documented defaults are what
 * the defaults write; a field of the wrong type, or described as a
 * duration and given something else, is refused at its path; and the
 * example validates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/alloc.h"
#include "core/def.h"
#include "core/defaults.h"
#include "core/falias.h"
#include "core/kinds.h"
#include "core/rules.h"
#include "core/schema.h"
#include "core/shellspec.h"
#include "planctl.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A document with one object of every node, each with nothing but what
 * it requires (and a retry object, so that its fields are defaulted). */
static const char minimal[] =
    "{\"name\": \"d\", \"version\": \"1\","
    " \"maintainers\": [{\"name\": \"m\"}],"
    " \"parameters\": [{\"name\": \"P\"}],"
    " \"tasks\": [{\"name\": \"t\", \"kind\": \"Dummy\", \"spec\": {}},"
    "            {\"name\": \"s\", \"kind\": \"shell\","
    "             \"spec\": {\"command\": \"true\"}}],"
    " \"plans\": {\"deploy\": {"
    "   \"preflight\": [{\"name\": \"c\", \"task\": \"t\"}],"
    "   \"phases\": [{\"name\": \"p\", \"steps\": [{\"name\": \"s\","
    "     \"tasks\": [\"t\"], \"retry\": {}}]}]}}}";

/* Where each node's object is in minimal, as a validation error's path. */
static const struct {
    const char *node, *at;
} places[] = {
    {"", ""},
    {"maintainers", "maintainers[0]"},
    {"parameters", "parameters[0]"},
    {"tasks", "tasks[0]"},
    {"tasks.spec", "tasks[0]"}, /* its "fields" are kinds, not keys */
    {"tasks.spec.Dummy", "tasks[0].spec"},
    {"tasks.spec.shell", "tasks[1].spec"},
    {"plans", "plans.deploy"},
    {"plans.preflight", "plans.deploy.preflight[0]"},
    {"plans.phases", "plans.deploy.phases[0]"},
    {"plans.phases.steps", "plans.deploy.phases[0].steps[0]"},
    {"plans.phases.steps.retry", "plans.deploy.phases[0].steps[0].retry"},
};

static const char *place_of(const char *node)
{
    for (size_t i = 0; i < N(places); i++)
        if (strcmp(places[i].node, node) == 0)
            return places[i].at;
    fail_msg("no place in the minimal document for node \"%s\"", node);
    return NULL;
}

/* The object at an error path ("plans.deploy.phases[0]") of doc. */
static json_t *at_path(json_t *doc, const char *path)
{
    json_t *v = doc;
    const char *p = path;

    while (*p) {
        if (*p == '.')
            p++;
        if (*p == '[') {
            v = json_array_get(v, strtoul(p + 1, NULL, 10));
            p = strchr(p, ']') + 1;
        } else {
            size_t len = strcspn(p, ".[");
            char key[64];

            snprintf(key, sizeof key, "%.*s", (int)len, p);
            v = json_object_get(v, key);
            p += len;
        }
        assert_non_null(v);
    }
    return v;
}

/* The class of the validator's type ("an array") a shown type has. */
static const char *type_class(const char *t)
{
    if (strncmp(t, "[]", 2) == 0)
        return "an array";
    if (strncmp(t, "map[", 4) == 0 || strcmp(t, "object") == 0)
        return "an object";
    if (strcmp(t, "string") == 0 || strcmp(t, "duration") == 0)
        return "a string";
    if (strcmp(t, "integer") == 0)
        return "an integer";
    if (strcmp(t, "number") == 0)
        return "a number";
    if (strcmp(t, "boolean") == 0)
        return "a boolean";
    if (strcmp(t, "any") == 0)
        return "any JSON value";
    return "?";
}

/* The described field name of node, or NULL. */
static const pctl_schema_field *described(const pctl_schema_node *node,
                                          const char *name)
{
    const pctl_schema_field *f;

    for (size_t i = 0; (f = pctl_def_schema_field(node, i)); i++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

static const pctl_schema_node *node_of_shape(pctl_node shape)
{
    size_t n;
    const pctl_schema_node *nodes = pctl_def_schema_nodes(&n);

    for (size_t i = 0; i < n; i++)
        if (nodes[i].src == PCTL_SCHEMA_SRC_SHAPE &&
            nodes[i].shape == (int)shape)
            return &nodes[i];
    return NULL;
}

/* Every field of every validator table, described alike. */
static void test_every_validator_field_described(void **state)
{
    static const pctl_node shapes[] = {
        PCTL_NODE_ROOT,  PCTL_NODE_PARAM, PCTL_NODE_TASK, PCTL_NODE_PLAN,
        PCTL_NODE_CHECK, PCTL_NODE_PHASE, PCTL_NODE_STEP, PCTL_NODE_RETRY};
    pctl_shape_field sf;
    const pctl_schema_field *f;

    (void)state;
    for (size_t k = 0; k < N(shapes); k++) {
        const pctl_schema_node *node = node_of_shape(shapes[k]);
        size_t i;

        assert_non_null(node);
        for (i = 0; pctl_shape_field_at(shapes[k], i, &sf); i++) {
            f = described(node, sf.name);
            if (!f)
                fail_msg("%s.%s is accepted by the validator but not "
                         "described in src/core/schema.c",
                         node->path, sf.name);
            if (strcmp(type_class(f->type), sf.type) != 0)
                fail_msg("%s.%s: described as %s, the validator wants %s",
                         node->path, sf.name, f->type, sf.type);
            assert_int_equal(f->required, sf.required);
            assert_int_equal(f->max, sf.max);
        }
        assert_true(i > 0);
    }
    /* The other objects, whose rules are code around a list of names. */
    const pctl_schema_node *m = pctl_def_schema_node("maintainers");
    for (size_t i = 0; i < N(pctl_maintainer_fields); i++)
        if (!described(m, pctl_maintainer_fields[i]))
            fail_msg("maintainers.%s is not described",
                     pctl_maintainer_fields[i]);
    const pctl_schema_node *d = pctl_def_schema_node("tasks.spec.Dummy");
    for (size_t i = 0; i < N(pctl_dummy_spec_fields); i++)
        if (!described(d, pctl_dummy_spec_fields[i]))
            fail_msg("tasks.spec.Dummy.%s is not described",
                     pctl_dummy_spec_fields[i]);
    const pctl_schema_node *sh = pctl_def_schema_node("tasks.spec.shell");
    static const struct {
        const char *name;
        pctl_ftype type;
    } shell[] = {
#define ROW(name, type, expected) {#name, type},
        PCTL_SHELL_SPEC(ROW)
#undef ROW
    };
    static const char *const shown[] = {[PCTL_F_STRINGS] = "[]string",
                                        [PCTL_F_STRING] = "string",
                                        [PCTL_F_ENV] = "map[string]string",
                                        [PCTL_F_DURATION] = "duration",
                                        [PCTL_F_CODES] = "[]integer"};
    for (size_t i = 0; i < N(shell); i++) {
        f = described(sh, shell[i].name);
        if (!f)
            fail_msg("tasks.spec.shell.%s is not described", shell[i].name);
        assert_string_equal(f->type, shown[shell[i].type]);
    }
    const pctl_schema_node *kinds = pctl_def_schema_node("tasks.spec");
    for (size_t i = 0; i < N(pctl_builtin_kinds); i++) {
        f = described(kinds, pctl_builtin_kinds[i]);
        assert_non_null(f);
        assert_non_null(f->child);
    }
}

/* Each node and field is complete and reachable by its path. */
static void test_paths(void **state)
{
    size_t n;
    const pctl_schema_node *nodes = pctl_def_schema_nodes(&n);
    const pctl_schema_node *node;
    const pctl_schema_field *f, *got;
    size_t bad;
    char path[256];

    (void)state;
    assert_string_equal(nodes[0].path, "");
    for (size_t i = 0; i < n; i++) {
        assert_non_null(nodes[i].title);
        assert_true(nodes[i].description && nodes[i].description[0]);
        assert_int_equal(
            pctl_def_schema_resolve(nodes[i].path, &node, &got, &bad), 1);
        assert_ptr_equal(node, &nodes[i]);
        assert_null(got);
        for (size_t j = 0; (f = pctl_def_schema_field(&nodes[i], j)); j++) {
            assert_true(f->description && f->description[0]);
            assert_string_not_equal(type_class(f->type), "?");
            if (f->def)
                assert_true(f->def[0]);
            snprintf(path, sizeof path, "%s%s%s", nodes[i].path,
                     nodes[i].path[0] ? "." : "", f->name);
            assert_int_equal(pctl_def_schema_resolve(path, &node, &got, &bad),
                             1);
            if (f->child) {
                assert_non_null(pctl_def_schema_node(f->child));
                assert_string_equal(node->path, f->child);
                assert_string_equal(f->child, path);
                assert_null(got);
            } else {
                assert_ptr_equal(node, &nodes[i]);
                assert_ptr_equal(got, f);
            }
        }
    }
    /* Unknown segments, and what lies below a leaf. */
    assert_int_equal(
        pctl_def_schema_resolve("plans.phases.stpes", &node, &got, &bad), 0);
    assert_string_equal(node->path, "plans.phases");
    assert_int_equal(bad, strlen("plans.phases."));
    assert_int_equal(pctl_def_schema_resolve("name.x", &node, &got, &bad), 0);
    assert_int_equal(bad, 5);
    assert_int_equal(pctl_def_schema_resolve("plans.", &node, &got, &bad), 0);
    assert_int_equal(pctl_def_schema_resolve(".", &node, &got, &bad), 0);
    assert_int_equal(bad, 0);
}

/* Numbers equal by value (the defaults write 2.0 where the reference
 * says 2), objects by their members. */
static int same(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *v;

        if (json_object_size(a) != json_object_size(b))
            return 0;
        json_object_foreach((json_t *)a, k, v)
        {
            if (!same(v, json_object_get(b, k)))
                return 0;
        }
        return 1;
    }
    return json_equal((json_t *)a, (json_t *)b);
}

/* A default written as JSON is what the defaults write (one in words, in
 * parentheses, is the engine's or the executor's). */
static void test_defaults(void **state)
{
    size_t n, checked = 0;
    const pctl_schema_node *nodes = pctl_def_schema_nodes(&n);
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    json_t *doc = json_loads(minimal, 0, NULL);
    const pctl_schema_field *f;

    (void)state;
    assert_non_null(doc);
    assert_int_equal(pctl_defaults_run(pctl_defaults_builtin(), doc, &errs), 0);
    for (size_t i = 0; i < n; i++) {
        if (nodes[i].src != PCTL_SCHEMA_SRC_SHAPE)
            continue;
        json_t *obj = at_path(doc, place_of(nodes[i].path));
        for (size_t j = 0; (f = pctl_def_schema_field(&nodes[i], j)); j++) {
            const json_t *v = json_object_get(obj, f->name);

            if (!f->def || f->def[0] == '(')
                continue;
            json_t *want = json_loads(f->def, JSON_DECODE_ANY, NULL);
            if (!want)
                fail_msg("%s.%s: the default %s is not JSON", nodes[i].path,
                         f->name, f->def);
            if (!v || !same(v, want))
                fail_msg("%s.%s: documented default %s, the defaults write "
                         "%s",
                         nodes[i].path, f->name, f->def,
                         v ? json_dumps(v, JSON_ENCODE_ANY) : "nothing");
            json_decref(want);
            checked++;
        }
    }
    assert_true(checked >= 7);
    json_decref(doc);
    pctl_ferr_list_clear(&errs);
}

/* Validates text with the built-in kinds; returns the errors as "path\n"
 * lines, or whole ("path: Type: message (hint)\n") when full is set;
 * empty when it is valid. */
static char *errors_as(const char *text, int full)
{
    pctl_kinds kinds = PCTL_KINDS_INIT;
    pctl_def_opts opts = PCTL_DEF_OPTS_INIT;
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    pctl_def *d = NULL;
    size_t len = 1;
    char *out = NULL;

    opts.kinds = &kinds;
    pctl_def_parse(&d, text, strlen(text), NULL, &opts, &errs);
    pctl_def_free(d);
    for (size_t i = 0; i < errs.n; i++) {
        char *line = full ? pctl_ferr_render(&errs.items[i]) : NULL;

        len += strlen(line ? line : errs.items[i].path) + 1;
        out = realloc(out, len);
        assert_non_null(out);
        if (i == 0)
            out[0] = '\0';
        strcat(out, line ? line : errs.items[i].path);
        strcat(out, "\n");
        pctl_free(line);
    }
    pctl_ferr_list_clear(&errs);
    return out ? out : calloc(1, 1);
}

static char *errors_of(const char *text)
{
    return errors_as(text, 0);
}

/* minimal with field name of node's object set to value; validated, the
 * errors as errors_as() gives them. */
static char *errors_with_as(const char *node, const char *name, json_t *value,
                            int full)
{
    json_t *doc = json_loads(minimal, 0, NULL);
    char *text, *errs;

    json_object_set_new(at_path(doc, place_of(node)), name, value);
    text = json_dumps(doc, 0);
    errs = errors_as(text, full);
    free(text);
    json_decref(doc);
    return errs;
}

static char *errors_with(const char *node, const char *name, json_t *value)
{
    return errors_with_as(node, name, value, 0);
}

static int has_line(const char *lines, const char *line)
{
    size_t len = strlen(line);

    for (const char *p = lines; *p; p = strchr(p, '\n') + 1)
        if (strncmp(p, line, len) == 0 && p[len] == '\n')
            return 1;
    return 0;
}

/* A field given a value of another type is refused at its path; one
 * described as a duration is refused when it is not one, and accepted
 * when it is. */
static void test_types_and_durations(void **state)
{
    size_t n, durations = 0;
    const pctl_schema_node *nodes = pctl_def_schema_nodes(&n);
    const pctl_schema_field *f;
    char *errs;

    (void)state;
    errs = errors_of(minimal);
    assert_string_equal(errs, "");
    free(errs);
    for (size_t i = 0; i < n; i++) {
        if (nodes[i].src == PCTL_SCHEMA_SRC_KINDS)
            continue;
        const char *at = place_of(nodes[i].path);
        for (size_t j = 0; (f = pctl_def_schema_field(&nodes[i], j)); j++) {
            char path[256];
            const char *cls = type_class(f->type);

            snprintf(path, sizeof path, "%s%s%s", at, at[0] ? "." : "",
                     f->name);
            if (strcmp(cls, "any JSON value") != 0) {
                json_t *wrong = strcmp(cls, "a string") == 0 ? json_integer(12)
                                                             : json_string("x");
                errs = errors_with(nodes[i].path, f->name, wrong);
                if (!has_line(errs, path))
                    fail_msg("%s of type %s: a value of another type is not "
                             "refused there; errors:\n%s",
                             path, f->type, errs);
                free(errs);
            }
            if (strcmp(f->type, "duration") != 0)
                continue;
            errs = errors_with(nodes[i].path, f->name, json_string("5x"));
            if (!has_line(errs, path))
                fail_msg("%s is described as a duration, but \"5x\" is not "
                         "refused there; errors:\n%s",
                         path, errs);
            free(errs);
            errs = errors_with(nodes[i].path, f->name, json_string("2m30s"));
            if (errs[0])
                fail_msg("%s: \"2m30s\" is refused:\n%s", path, errs);
            free(errs);
            durations++;
        }
    }
    assert_int_equal(durations, 6);
}

/* Every alias of another tool's field name (falias.h) names a field of
 * the reference, is no field itself, and is what the validator hints when
 * the word is written where its node is. */
static void test_aliases(void **state)
{
    size_t n;
    const pctl_falias *a = pctl_faliases(&n);
    json_t *three = json_integer(3);

    (void)state;
    for (size_t i = 0; i < n; i++) {
        const pctl_schema_node *node = pctl_def_schema_node(a[i].node), *at;
        const pctl_schema_field *field;
        char path[128], line[256], *errs;
        size_t bad;
        pctl_hbuf h;

        if (!node)
            fail_msg("alias \"%s\": no node \"%s\"", a[i].word, a[i].node);
        if (described(node, a[i].word))
            fail_msg("alias \"%s\" is a field of %s", a[i].word, a[i].node);
        snprintf(path, sizeof path, "%s%s%s", a[i].node,
                 a[i].node[0] ? "." : "", a[i].target);
        /* A field that holds an object resolves to that object's node. */
        if (!pctl_def_schema_resolve(path, &at, &field, &bad) ||
            (!field && strcmp(at->path, path) != 0))
            fail_msg("alias \"%s\" of %s: %s is no field", a[i].word, a[i].node,
                     path);
        snprintf(
            line, sizeof line, "%s%s%s: Forbidden: unknown field \"%s\" (%s)",
            place_of(a[i].node), place_of(a[i].node)[0] ? "." : "", a[i].word,
            a[i].word, pctl_falias_hint(&h, a[i].node, a[i].word, three));
        errs = errors_with_as(a[i].node, a[i].word, json_incref(three), 1);
        if (!strstr(errs, "did you mean") || !has_line(errs, line))
            fail_msg("alias \"%s\" of %s is not hinted:\n%s", a[i].word,
                     a[i].node, errs);
        free(errs);
    }
    json_decref(three);
    assert_true(n >= 10);
}

/* Where the validator names a node by its path (pctl_node_path), it is
 * the reference's path of that node; an object field of a fixed shape
 * given another type lists the fields the reference gives it. */
static void test_node_paths_and_object_fields(void **state)
{
    size_t n;
    const pctl_schema_node *nodes = pctl_def_schema_nodes(&n);
    const pctl_schema_node *retry =
        pctl_def_schema_node("plans.phases.steps.retry");
    const pctl_schema_field *f;
    char want[256] = "plans.deploy.phases[0].steps[0].retry: Invalid type: "
                     "must be an object with ";
    char *errs;

    (void)state;
    for (size_t i = 0; i < n; i++)
        if (nodes[i].src == PCTL_SCHEMA_SRC_SHAPE)
            assert_string_equal(pctl_node_path((pctl_node)nodes[i].shape),
                                nodes[i].path);
    for (size_t i = 0; (f = pctl_def_schema_field(retry, i)); i++) {
        strcat(want, i ? ", " : "");
        strcat(want, f->name);
    }
    errs = errors_with_as("plans.phases.steps", "retry", json_integer(3), 1);
    if (strcmp(errs, want) != 0 &&
        !(strncmp(errs, want, strlen(want)) == 0 &&
          errs[strlen(want)] == '\n' && !errs[strlen(want) + 1]))
        fail_msg("\"retry\": 3 gives\n%swhere one line was expected:\n%s", errs,
                 want);
    free(errs);
}

static void test_example_valid(void **state)
{
    char *errs = errors_of(pctl_def_schema_example);

    (void)state;
    assert_string_equal(errs, "");
    free(errs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_validator_field_described),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_types_and_durations),
        cmocka_unit_test(test_aliases),
        cmocka_unit_test(test_node_paths_and_object_fields),
        cmocka_unit_test(test_example_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
