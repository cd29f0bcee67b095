/*
 * test_jscan.c - the bounded-memory JSON scanner (src/core/jscan.c): every
 * value comes back as jansson parses it, whatever the pieces the stream
 * arrives in; every fault is told as jansson tells it, at the stream's
 * position; no value longer than the limit is held.
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

#include "core/jscan.h"

typedef struct src {
    const char *at;
    size_t left, step;
    int fail; /* every read fails */
} src;

static int rd(void *data, char *buf, size_t cap, size_t *len)
{
    src *s = data;

    if (s->fail)
        return -1;
    *len = s->left < s->step ? s->left : s->step;
    if (*len > cap)
        *len = cap;
    memcpy(buf, s->at, *len);
    s->at += *len;
    s->left -= *len;
    return 0;
}

static void open_text(pctl_jscan *js, src *s, const char *text, size_t step,
                      size_t max)
{
    *s = (src){text, strlen(text), step, 0};
    assert_int_equal(pctl_jscan_init(js, rd, s, max, "<t>"), 0);
}

/* Values that are valid JSON, whole or cut into pieces of 1, 2, 3, 7
 * bytes: each comes back equal to jansson's own parse, and its text as it
 * was. */
static void test_values(void **state)
{
    static const char *const values[] = {
        "{}",
        "[]",
        "0",
        "-12.5e3",
        "true",
        "false",
        "null",
        "\"\"",
        "\"a \\\"quoted\\\" ] } [ { string\\\\\"",
        "{\"a\": [1, 2, {\"b\": \"]\"}], \"c\": {\"d\": null}}",
        "[[[[[[[[[[1]]]]]]]]]]",
        "\"\\u00e9t\\u00e9 \xc3\xa9\"",
        "{\"k\":\"\\\\\"}"};
    static const size_t steps[] = {1, 2, 3, 7, 65536};
    size_t i, k;

    (void)state;
    for (i = 0; i < sizeof values / sizeof *values; i++)
        for (k = 0; k < sizeof steps / sizeof *steps; k++) {
            json_t *want = json_loads(values[i], JSON_DECODE_ANY, NULL), *got;
            char *text = NULL;
            pctl_jscan js;
            src s;

            assert_non_null(want);
            open_text(&js, &s, values[i], steps[k], 1024);
            if (pctl_jscan_value(&got, &text, &js, JSON_DECODE_ANY) != 0)
                fail_msg("%s in pieces of %zu: %s", values[i], steps[k],
                         js.msg);
            assert_true(json_equal(want, got));
            assert_string_equal(text, values[i]);
            assert_int_equal(pctl_jscan_peek(&js), 256);
            json_decref(want);
            json_decref(got);
            free(text);
            pctl_jscan_free(&js);
        }
}

/* The structure around values: a top-level object walked key by key, a
 * stream of several values, blank space anywhere. */
static void test_walk(void **state)
{
    const char *text = " {\"a\" : [1,\n{\"b\":2}] ,\"c\":\"x\"}\n[3] ";
    json_t *v;
    pctl_jscan js;
    src s;

    (void)state;
    open_text(&js, &s, text, 1, 64);
    assert_int_equal(pctl_jscan_take(&js, '{', "'{'"), 0);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, JSON_DECODE_ANY), 0);
    assert_string_equal(json_string_value(v), "a");
    json_decref(v);
    assert_int_equal(pctl_jscan_take(&js, ':', "':'"), 0);
    assert_int_equal(pctl_jscan_take(&js, '[', "'['"), 0);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, JSON_DECODE_ANY), 0);
    assert_int_equal(json_integer_value(v), 1);
    json_decref(v);
    assert_int_equal(pctl_jscan_peek(&js), ',');
    assert_int_equal(pctl_jscan_take(&js, ',', "','"), 0);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, 0), 0);
    assert_int_equal(json_integer_value(json_object_get(v, "b")), 2);
    json_decref(v);
    assert_int_equal(pctl_jscan_take(&js, ']', "']'"), 0);
    assert_int_equal(pctl_jscan_take(&js, ',', "','"), 0);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, JSON_DECODE_ANY), 0);
    json_decref(v);
    assert_int_equal(pctl_jscan_take(&js, ':', "':'"), 0);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, JSON_DECODE_ANY), 0);
    assert_string_equal(json_string_value(v), "x");
    json_decref(v);
    assert_int_equal(pctl_jscan_take(&js, '}', "'}'"), 0);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, 0), 0);
    assert_int_equal(json_integer_value(json_array_get(v, 0)), 3);
    json_decref(v);
    assert_int_equal(pctl_jscan_peek(&js), 256);
    /* Nothing is left to take. */
    assert_int_equal(pctl_jscan_take(&js, ',', "','"), PCTL_JSCAN_SYNTAX);
    assert_string_equal(js.msg, "<t>:3:4: ',' expected near end of file");
    pctl_jscan_free(&js);
}

/* A value that is not JSON: jansson's message, at the place in the
 * stream.  Each text starts on line 1, column 0, so the message must be
 * the one jansson gives for the whole text; the same text after three
 * newlines and two spaces moves by three lines (and, on its first line,
 * two columns). */
static void test_faults_as_jansson(void **state)
{
    static const char *const bad[] = {
        "[1, 2", "{\"a\": }",   "[1 2]",      "tru",
        "[}",    "\"abc",       "{\"a\":1,}", "[1,\n 2,\n x]",
        "",      "{\"a\"\n:\n", "\"\\x\"",    "{\"a\":1,\"a\":2}"};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_error_t jerr;
        char want[256], *shifted;
        json_t *v;
        pctl_jscan js;
        src s;

        assert_null(json_loads(bad[i], JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
                               &jerr));
        snprintf(want, sizeof want, "<t>:%d:%d: %s", jerr.line, jerr.column,
                 jerr.text);
        open_text(&js, &s, bad[i], 1, 1024);
        assert_int_equal(
            pctl_jscan_value(&v, NULL, &js,
                             JSON_DECODE_ANY | JSON_REJECT_DUPLICATES),
            PCTL_JSCAN_SYNTAX);
        assert_null(v);
        if (strcmp(js.msg, want) != 0)
            fail_msg("%s: got \"%s\", want \"%s\"", bad[i], js.msg, want);
        pctl_jscan_free(&js);

        shifted = malloc(strlen(bad[i]) + 6);
        sprintf(shifted, "\n\n\n  %s", bad[i]);
        snprintf(want, sizeof want, "<t>:%d:%d: %s", jerr.line + 3,
                 jerr.column + (jerr.line == 1 ? 2 : 0), jerr.text);
        open_text(&js, &s, shifted, 3, 1024);
        assert_int_equal(
            pctl_jscan_value(&v, NULL, &js,
                             JSON_DECODE_ANY | JSON_REJECT_DUPLICATES),
            PCTL_JSCAN_SYNTAX);
        if (strcmp(js.msg, want) != 0)
            fail_msg("shifted %s: got \"%s\", want \"%s\"", bad[i], js.msg,
                     want);
        pctl_jscan_free(&js);
        free(shifted);
    }
}

/* A value of exactly max bytes is taken; one byte more is refused before
 * it is held. */
static void test_limit(void **state)
{
    json_t *v;
    pctl_jscan js;
    src s;

    (void)state;
    open_text(&js, &s, "\"123456\"", 2, 8);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, JSON_DECODE_ANY), 0);
    json_decref(v);
    pctl_jscan_free(&js);
    open_text(&js, &s, "\"1234567\"", 2, 8);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, JSON_DECODE_ANY),
                     PCTL_JSCAN_TOOBIG);
    assert_null(v);
    assert_non_null(strstr(js.msg, "<t>:1:8: a value longer than"));
    pctl_jscan_free(&js);
    open_text(&js, &s, "123456789", 4, 8);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, JSON_DECODE_ANY),
                     PCTL_JSCAN_TOOBIG);
    pctl_jscan_free(&js);
}

/* Deeper than jansson goes: its own refusal, not a crash or a hang. */
static void test_depth(void **state)
{
    size_t n = 5000, i;
    char *text = malloc(2 * n + 1);
    json_t *v;
    pctl_jscan js;
    src s;

    (void)state;
    for (i = 0; i < n; i++) {
        text[i] = '[';
        text[n + i] = ']';
    }
    text[2 * n] = '\0';
    open_text(&js, &s, text, 4096, 1 << 20);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, 0), PCTL_JSCAN_SYNTAX);
    assert_non_null(strstr(js.msg, "maximum parsing depth reached"));
    pctl_jscan_free(&js);
    free(text);
}

/* A reader that fails: READ, from peek, take and value alike. */
static void test_read_error(void **state)
{
    json_t *v;
    pctl_jscan js;
    src s;

    (void)state;
    open_text(&js, &s, "[1]", 1, 64);
    s.fail = 1;
    assert_int_equal(pctl_jscan_peek(&js), PCTL_JSCAN_READ);
    assert_int_equal(pctl_jscan_take(&js, '[', "'['"), PCTL_JSCAN_READ);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, 0), PCTL_JSCAN_READ);
    assert_null(v);
    pctl_jscan_free(&js);
    /* Failing in the middle of a value. */
    open_text(&js, &s, "[1, 2, 3]", 1, 64);
    assert_int_equal(pctl_jscan_take(&js, '[', "'['"), 0);
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, JSON_DECODE_ANY), 0);
    json_decref(v);
    /* The ',' came with the value's end (a number ends at what follows). */
    assert_int_equal(pctl_jscan_take(&js, ',', "','"), 0);
    s.fail = 1;
    assert_int_equal(pctl_jscan_value(&v, NULL, &js, 0), PCTL_JSCAN_READ);
    assert_null(v);
    pctl_jscan_free(&js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_walk),
        cmocka_unit_test(test_faults_as_jansson),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_read_error),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
