/* test_ptype.c - parameter types: names, what each accepts from a
 * command line (strictly), the equality of values, defaults, and the text
 * a task receives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/ptype.h"
#include "planctl.h"

static void test_names(void **state)
{
    static const char *const want[] = {"string",  "integer", "number",
                                       "boolean", "array",   "map"};
    pctl_ptype t;
    int i;

    (void)state;
    for (i = 0; i < PCTL_PTYPE_COUNT; i++) {
        assert_string_equal(pctl_ptype_name((pctl_ptype)i), want[i]);
        assert_string_equal(pctl_ptype_names()[i], want[i]);
        assert_int_equal(pctl_ptype_find(&t, want[i]), 1);
        assert_int_equal(t, i);
        assert_non_null(strstr(pctl_ptype_expect((pctl_ptype)i),
                               i == PCTL_PTYPE_MAP ? "map" : want[i]));
    }
    assert_int_equal(pctl_ptype_find(&t, "int"), 0);
    assert_int_equal(pctl_ptype_find(&t, "String"), 0);
    assert_int_equal(pctl_ptype_find(&t, ""), 0);
    assert_int_equal(pctl_ptype_find(&t, NULL), 0);
    assert_string_equal(pctl_ptype_name((pctl_ptype)99), "?");
}

/* text parsed as type t: 0 and its compact JSON, or refused (want
 * NULL). */
static void parse(pctl_ptype t, const char *text, const char *want)
{
    json_t *v = (json_t *)1;
    int rc = pctl_ptype_parse(&v, t, text);

    if (!want) {
        if (rc != PLANCTL_EINVAL || v)
            fail_msg("%s \"%s\": accepted", pctl_ptype_name(t), text);
        return;
    }
    if (rc != 0)
        fail_msg("%s \"%s\": refused", pctl_ptype_name(t), text);
    {
        char *got = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

        if (strcmp(got, want))
            fail_msg("%s \"%s\": got %s, want %s", pctl_ptype_name(t), text,
                     got, want);
        free(got);
    }
    assert_true(pctl_ptype_is(t, v));
    json_decref(v);
}

static void test_parse(void **state)
{
    (void)state;
    /* Strings: anything, as it is. */
    parse(PCTL_PTYPE_STRING, "", "\"\"");
    parse(PCTL_PTYPE_STRING, "3", "\"3\"");
    parse(PCTL_PTYPE_STRING, "@daily", "\"@daily\"");
    parse(PCTL_PTYPE_STRING, " [1] ", "\" [1] \"");
    /* Integers: a JSON integer literal exactly, within 64 bits. */
    parse(PCTL_PTYPE_INTEGER, "0", "0");
    parse(PCTL_PTYPE_INTEGER, "3", "3");
    parse(PCTL_PTYPE_INTEGER, "-42", "-42");
    parse(PCTL_PTYPE_INTEGER, "-0", "0");
    parse(PCTL_PTYPE_INTEGER, "9223372036854775807", "9223372036854775807");
    parse(PCTL_PTYPE_INTEGER, "9223372036854775808", NULL);
    parse(PCTL_PTYPE_INTEGER, "", NULL);
    parse(PCTL_PTYPE_INTEGER, "-", NULL);
    parse(PCTL_PTYPE_INTEGER, "+3", NULL);
    parse(PCTL_PTYPE_INTEGER, "03", NULL);
    parse(PCTL_PTYPE_INTEGER, " 3", NULL);
    parse(PCTL_PTYPE_INTEGER, "3 ", NULL);
    parse(PCTL_PTYPE_INTEGER, "3.0", NULL);
    parse(PCTL_PTYPE_INTEGER, "1e3", NULL);
    parse(PCTL_PTYPE_INTEGER, "0x10", NULL);
    parse(PCTL_PTYPE_INTEGER, "three", NULL);
    parse(PCTL_PTYPE_INTEGER, "\"3\"", NULL);
    /* Numbers: any JSON number literal, finite. */
    parse(PCTL_PTYPE_NUMBER, "3", "3");
    parse(PCTL_PTYPE_NUMBER, "2.5", "2.5");
    parse(PCTL_PTYPE_NUMBER, "-0.5", "-0.5");
    parse(PCTL_PTYPE_NUMBER, "1e3", "1000.0");
    parse(PCTL_PTYPE_NUMBER, "1E-2", "0.01");
    parse(PCTL_PTYPE_NUMBER, "1e400", NULL);
    parse(PCTL_PTYPE_NUMBER, ".5", NULL);
    parse(PCTL_PTYPE_NUMBER, "5.", NULL);
    parse(PCTL_PTYPE_NUMBER, "1e", NULL);
    parse(PCTL_PTYPE_NUMBER, "1e+", NULL);
    parse(PCTL_PTYPE_NUMBER, "NaN", NULL);
    parse(PCTL_PTYPE_NUMBER, "inf", NULL);
    parse(PCTL_PTYPE_NUMBER, "1,5", NULL);
    parse(PCTL_PTYPE_NUMBER, "--1", NULL);
    /* Booleans: true or false only. */
    parse(PCTL_PTYPE_BOOLEAN, "true", "true");
    parse(PCTL_PTYPE_BOOLEAN, "false", "false");
    parse(PCTL_PTYPE_BOOLEAN, "True", NULL);
    parse(PCTL_PTYPE_BOOLEAN, "yes", NULL);
    parse(PCTL_PTYPE_BOOLEAN, "1", NULL);
    parse(PCTL_PTYPE_BOOLEAN, "", NULL);
    /* Arrays and maps: JSON text of one. */
    parse(PCTL_PTYPE_ARRAY, "[]", "[]");
    parse(PCTL_PTYPE_ARRAY, " [\"a\", 2, {\"k\": null}] ",
          "[\"a\",2,{\"k\":null}]");
    parse(PCTL_PTYPE_ARRAY, "a,b", NULL);
    parse(PCTL_PTYPE_ARRAY, "{}", NULL);
    parse(PCTL_PTYPE_ARRAY, "[1", NULL);
    parse(PCTL_PTYPE_ARRAY, "[1] [2]", NULL);
    parse(PCTL_PTYPE_MAP, "{}", "{}");
    parse(PCTL_PTYPE_MAP, "{\"k\":[1,2],\"j\":\"v\"}",
          "{\"k\":[1,2],\"j\":\"v\"}");
    parse(PCTL_PTYPE_MAP, "{\"k\":1,\"k\":2}", NULL);
    parse(PCTL_PTYPE_MAP, "[]", NULL);
    parse(PCTL_PTYPE_MAP, "k=v", NULL);
    parse(PCTL_PTYPE_MAP, "", NULL);
}

static void test_is(void **state)
{
    json_t *vals[] = {json_string("x"), json_integer(1), json_real(1.5),
                      json_true(),      json_array(),    json_object(),
                      json_null()};
    /* want[type][value] */
    static const int want[PCTL_PTYPE_COUNT][7] = {
        {1, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0}, {0, 1, 1, 0, 0, 0, 0},
        {0, 0, 0, 1, 0, 0, 0}, {0, 0, 0, 0, 1, 0, 0}, {0, 0, 0, 0, 0, 1, 0}};
    int t, i;

    (void)state;
    for (t = 0; t < PCTL_PTYPE_COUNT; t++)
        for (i = 0; i < 7; i++)
            if (pctl_ptype_is((pctl_ptype)t, vals[i]) != want[t][i])
                fail_msg("type %d value %d", t, i);
    for (i = 0; i < 7; i++)
        json_decref(vals[i]);
}

static void test_equal(void **state)
{
    json_t *i3 = json_integer(3), *r3 = json_real(3.0), *r35 = json_real(3.5);
    json_t *s3 = json_string("3"), *i4 = json_integer(4);

    (void)state;
    assert_true(pctl_pvalue_equal(i3, r3));
    assert_true(pctl_pvalue_equal(r3, i3));
    assert_true(pctl_pvalue_equal(i3, i3));
    assert_false(pctl_pvalue_equal(i3, r35));
    assert_false(pctl_pvalue_equal(i3, i4));
    assert_false(pctl_pvalue_equal(i3, s3));
    json_decref(i3);
    json_decref(r3);
    json_decref(r35);
    json_decref(s3);
    json_decref(i4);
}

/* An enum's values compare as parameter values do; no enum admits any
 * value, an enum that does not read admits none. */
static void test_enum_has(void **state)
{
    json_t *r3 = json_real(3.0), *s3 = json_string("3"), *i5 = json_integer(5);
    json_t *list = json_loads("[1, 3, \"a\"]", 0, NULL);

    (void)state;
    assert_true(pctl_pvalue_in(list, r3));
    assert_false(pctl_pvalue_in(list, s3));
    assert_false(pctl_pvalue_in(NULL, r3));
    assert_true(pctl_enum_has("[1, 3, \"a\"]", r3));
    assert_false(pctl_enum_has("[1, 3, \"a\"]", i5));
    assert_true(pctl_enum_has(NULL, i5));
    assert_false(pctl_enum_has("[1, 3", r3));
    json_decref(list);
    json_decref(r3);
    json_decref(s3);
    json_decref(i5);
}

/* The text of JSON literal json as a task receives it. */
static void text(const char *json, const char *want)
{
    json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
    char *got;

    assert_non_null(v);
    got = pctl_ptype_text(v);
    if (!got || strcmp(got, want))
        fail_msg("%s: got %s, want %s", json, got ? got : "NULL", want);
    pctl_free(got);
    json_decref(v);
}

static void test_text(void **state)
{
    json_t *null = json_null();

    (void)state;
    text("\"a b\"", "a b");
    text("\"\"", "");
    text("3", "3");
    text("-9223372036854775808", "-9223372036854775808");
    text("0.1", "0.1");
    text("2.5", "2.5");
    text("3.0", "3");
    text("1e21", "1e+21");
    text("-1.5e-7", "-1.5e-07");
    text("0.30000000000000004", "0.30000000000000004");
    text("true", "true");
    text("false", "false");
    text("[\"a\", 1, [true]]", "[\"a\",1,[true]]");
    text("{\"b\": 1, \"a\": {\"d\": 2, \"c\": 3}}",
         "{\"a\":{\"c\":3,\"d\":2},\"b\":1}");
    assert_null(pctl_ptype_text(null));
    json_decref(null);
}

static void test_default(void **state)
{
    json_t *n = json_real(0.1), *b = json_true(), *a = json_array(), *v;

    (void)state;
    /* A string parameter's number or boolean default is its text. */
    v = pctl_ptype_default(PCTL_PTYPE_STRING, n);
    assert_string_equal(json_string_value(v), "0.1");
    json_decref(v);
    v = pctl_ptype_default(PCTL_PTYPE_STRING, b);
    assert_string_equal(json_string_value(v), "true");
    json_decref(v);
    /* Anything else is itself (and judged by the rules). */
    v = pctl_ptype_default(PCTL_PTYPE_STRING, a);
    assert_ptr_equal(v, a);
    json_decref(v);
    v = pctl_ptype_default(PCTL_PTYPE_NUMBER, n);
    assert_ptr_equal(v, n);
    json_decref(v);
    json_decref(n);
    json_decref(b);
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),    cmocka_unit_test(test_parse),
        cmocka_unit_test(test_is),       cmocka_unit_test(test_equal),
        cmocka_unit_test(test_enum_has), cmocka_unit_test(test_text),
        cmocka_unit_test(test_default),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
