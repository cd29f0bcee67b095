/*
 * test_hostile_big.c - a 1 MB parameter value, through the library (the
 * command line cannot carry it: the kernel refuses any single argument
 * over 128 KiB before planctl runs).
 *
 * What the library does with it: the value is stored byte for byte and
 * runs of plans whose tasks do not need it complete; a shell task cannot
 * receive it either (the same kernel limit applies to one environment
 * string), so its attempts fail with a message naming the cause, the step
 * ends FATAL_ERROR after its retries, and nothing else changes: verify
 * passes and the value is still intact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "planctl.h"
#include "testutil.h"

#define BIG (1024 * 1024)

static const char definition[] =
    "{\"name\":\"big\",\"version\":\"1\",\"parameters\":[{\"name\":\"V\"}],"
    "\"tasks\":[{\"name\":\"quick\",\"kind\":\"Dummy\"},"
    "{\"name\":\"sh\",\"kind\":\"shell\",\"spec\":{\"command\":"
    "\"printf %s \\\"$PLANCTL_PARAM_V\\\" | wc -c\"}}],"
    "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":"
    "\"s\",\"tasks\":[\"quick\"]}]}]},"
    "\"use\":{\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"sh\","
    "\"tasks\":[\"sh\"],\"retry\":{\"attempts\":2,\"backoff\":\"10ms\"}}]}]}}}";

/* The value: every printable ASCII character and a newline, repeated. */
static char *big_value(void)
{
    char *v = malloc(BIG + 1);
    size_t i;

    assert_non_null(v);
    for (i = 0; i < BIG; i++)
        v[i] = i % 96 == 95 ? '\n' : (char)(' ' + i % 95);
    v[BIG] = '\0';
    return v;
}

/* The value of V in the snapshot of the instance's run number n
 * (0-based, in id order), from an export. */
static char *snapshot_value(planctl *p, size_t n)
{
    char *text = NULL, *out;
    json_t *doc, *run, *params;

    assert_int_equal(planctl_export_json(&text, p, "b"), 0);
    doc = json_loads(text, 0, NULL);
    planctl_free(text);
    assert_non_null(doc);
    run = json_array_get(json_object_get(doc, "runs"), n);
    assert_non_null(run);
    params =
        json_loads(json_string_value(json_object_get(run, "params")), 0, NULL);
    assert_non_null(params);
    out = strdup(json_string_value(json_object_get(params, "V")));
    json_decref(params);
    json_decref(doc);
    return out;
}

static void test_one_megabyte_value(void **state)
{
    char *dir = tu_mkdtemp(), *path = tu_fmt("%s/big.db", dir), *v, *got;
    planctl_param param = {"V", NULL};
    planctl *p = NULL;
    sqlite3 *db;
    int64_t run = 0;
    char *msg;

    (void)state;
    v = big_value();
    param.value = v;
    assert_int_equal(planctl_open(&p, path, NULL), 0);
    assert_int_equal(planctl_definition_apply(NULL, p, definition,
                                              strlen(definition), "big.json"),
                     0);
    assert_int_equal(
        planctl_instance_create(&run, p, "b", "big", NULL, &param, 1), 0);
    assert_int_equal(tu_engine_until_idle(p), 0);
    got = snapshot_value(p, 0);
    assert_int_equal(strlen(got), BIG);
    assert_memory_equal(got, v, BIG);
    free(got);

    /* The shell task cannot be given the value. */
    assert_int_equal(planctl_plan_trigger(&run, p, "b", "use", NULL), 0);
    assert_int_equal(tu_engine_until_idle(p), 0);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    msg =
        tu_text(db, "SELECT status FROM runs WHERE id = %lld", (long long)run);
    assert_string_equal(msg, "FATAL_ERROR");
    free(msg);
    assert_int_equal(tu_scalar(db,
                               "SELECT count(*) FROM attempts a JOIN steps s "
                               "ON s.id = a.step_id WHERE s.run_id = %lld",
                               (long long)run),
                     2);
    msg = tu_text(db,
                  "SELECT a.message FROM attempts a JOIN steps s ON s.id = "
                  "a.step_id WHERE s.run_id = %lld ORDER BY a.id DESC LIMIT 1",
                  (long long)run);
    assert_non_null(msg);
    if (!strstr(msg, "argument list too long"))
        fail_msg("the attempt's message does not name the cause: %s", msg);
    free(msg);
    sqlite3_close(db);

    /* Nothing else changed. */
    got = snapshot_value(p, 1);
    assert_memory_equal(got, v, BIG);
    free(got);
    msg = NULL;
    if (planctl_verify(&msg, p) != 0)
        fail_msg("verify: %s", planctl_errmsg(p));
    planctl_free(msg);

    planctl_close(p);
    tu_rmtree(dir);
    free(path);
    free(dir);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_megabyte_value),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
