/* test_secrets.c - the values of secret parameters: masked as "***",
 * withheld as null (with the names withheld), and put back (secrets.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/outputs.h"
#include "core/secrets.h"

/* A definition of PASS (secret), PLAIN and PORT (secret). */
static void three(pctl_def *def, pctl_param_def *params)
{
    memset(def, 0, sizeof *def);
    memset(params, 0, 3 * sizeof *params);
    params[0].name = "PASS";
    params[0].secret = 1;
    params[1].name = "PLAIN";
    params[2].name = "PORT";
    params[2].secret = 1;
    def->params = params;
    def->nparams = 3;
}

static void assert_json(json_t *v, const char *want)
{
    char *got = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

    if (strcmp(got, want))
        fail_msg("got %s, want %s", got, want);
    free(got);
}

static void test_mask(void **state)
{
    pctl_param_def params[3];
    pctl_def def;
    json_t *o = json_loads("{\"PASS\":\"hunter2\",\"PLAIN\":\"x\"}", 0, NULL);
    json_t *s = json_string("hunter2");

    (void)state;
    three(&def, params);
    /* PORT has no value: it stays absent, never becomes "***". */
    assert_int_equal(pctl_secrets_mask(o, &def), 1);
    assert_json(o, "{\"PASS\":\"***\",\"PLAIN\":\"x\"}");
    /* Anything but an object, and no definition, are left alone. */
    assert_int_equal(pctl_secrets_mask(s, &def), 0);
    assert_int_equal(pctl_secrets_mask(NULL, &def), 0);
    assert_int_equal(pctl_secrets_mask(o, NULL), 0);
    params[0].secret = 0;
    json_object_set_new(o, "PASS", json_string("hunter2"));
    assert_int_equal(pctl_secrets_mask(o, &def), 0);
    assert_json(o, "{\"PASS\":\"hunter2\",\"PLAIN\":\"x\"}");
    json_decref(s);
    json_decref(o);
}

/* A set of task outputs as planctl shows it: a secret's value, stored
 * as {"secret": V} (or {"secret": null} from an export), is "***"; plain
 * values and anything that is not a set stay as they are. */
static void test_outputs_mask(void **state)
{
    json_t *o = json_loads("{\"CERT\":\"abc\",\"PASS\":{\"secret\":"
                           "\"hunter2\"},\"GONE\":{\"secret\":null}}",
                           0, NULL);
    json_t *s = json_string("x");

    (void)state;
    assert_int_equal(pctl_outputs_mask(o), 0);
    assert_json(o, "{\"CERT\":\"abc\",\"GONE\":\"***\",\"PASS\":\"***\"}");
    assert_int_equal(pctl_outputs_mask(s), 0);
    assert_json(s, "\"x\"");
    assert_int_equal(pctl_outputs_mask(NULL), 0);
    json_decref(s);
    json_decref(o);
}

static void test_names(void **state)
{
    json_t *names = json_array();

    (void)state;
    assert_int_equal(pctl_secrets_add_name(names, "PORT"), 0);
    assert_int_equal(pctl_secrets_add_name(names, "A"), 0);
    assert_int_equal(pctl_secrets_add_name(names, "PASS"), 0);
    assert_int_equal(pctl_secrets_add_name(names, "PORT"), 0);
    assert_json(names, "[\"A\",\"PASS\",\"PORT\"]");
    json_decref(names);
}

static void test_withhold_restore(void **state)
{
    json_t *o =
        json_loads("{\"PASS\":\"hunter2\",\"PLAIN\":\"x\",\"N\":3}", 0, NULL);
    json_t *names = json_loads("[\"PASS\",\"PORT\",\"N\"]", 0, NULL);
    json_t *found = json_array();
    json_t *values =
        json_loads("{\"PASS\":\"new\",\"N\":4,\"PORT\":1}", 0, NULL);

    (void)state;
    /* PORT has no value here: not withheld, not found. */
    assert_int_equal(pctl_secrets_withhold(o, names, found), 2);
    assert_json(o, "{\"N\":null,\"PASS\":null,\"PLAIN\":\"x\"}");
    assert_json(found, "[\"N\",\"PASS\"]");
    assert_int_equal(pctl_secrets_withhold(o, names, NULL), 2);
    assert_int_equal(
        pctl_secrets_withhold(values, json_array_get(names, 0), NULL),
        0); /* names not an array: nothing */
    /* Only the nulls come back; PORT, absent, stays absent. */
    assert_int_equal(pctl_secrets_restore(o, values), 2);
    assert_json(o, "{\"N\":4,\"PASS\":\"new\",\"PLAIN\":\"x\"}");
    assert_int_equal(pctl_secrets_restore(o, values), 0);
    assert_int_equal(pctl_secrets_restore(NULL, values), 0);
    json_decref(values);
    json_decref(found);
    json_decref(names);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mask),
        cmocka_unit_test(test_outputs_mask),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_withhold_restore),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
