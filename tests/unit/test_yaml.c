/*
 * test_yaml.c - the CLI's YAML reader and writer (src/cli/yaml_*.c,
 * compiled into this test): the core schema's scalars, tags, anchors and
 * what is refused, with its line and column; the line of an error path;
 * the example definition in YAML equal to its JSON; strings the writer
 * must quote; and the round trip of real documents: the real planctl's
 * -o yaml of a few commands, read back, equals its -o json.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "cli/yaml/yaml.h"
#include "testutil.h"

/* The YAML text as JSON, or NULL with err filled. */
static json_t *read_yaml(const char *text, cli_yaml_error *err, json_t **lines)
{
    json_t *v = NULL;
    int rc = cli_yaml_read(&v, lines, text, strlen(text), "t.yaml", err);

    assert_true(rc == 0 || rc == CLI_YAML_INVALID);
    assert_true((rc == 0) == (v != NULL));
    return v;
}

/* text reads as the JSON want. */
static void reads_as(const char *text, const char *want)
{
    cli_yaml_error err;
    json_t *v = read_yaml(text, &err, NULL);
    json_t *w = json_loads(want, JSON_DECODE_ANY, NULL);

    if (!v)
        fail_msg("%s: refused: %s", text, err.msg);
    assert_non_null(w);
    if (!json_equal(v, w)) {
        char *got = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

        fail_msg("%s: got %s, want %s", text, got, want);
    }
    json_decref(v);
    json_decref(w);
}

/* text is refused with exactly the message want. */
static void refused_as(const char *text, const char *want)
{
    cli_yaml_error err;
    json_t *v = read_yaml(text, &err, NULL);

    if (v)
        fail_msg("%s: accepted", text);
    assert_string_equal(err.msg, want);
}

static void test_scalars_core_schema(void **state)
{
    (void)state;
    reads_as("a: 3", "{\"a\": 3}");
    reads_as("a: -3", "{\"a\": -3}");
    reads_as("a: +3", "{\"a\": 3}");
    reads_as("a: 0o17", "{\"a\": 15}");
    reads_as("a: 0x1F", "{\"a\": 31}");
    reads_as("a: 2.5", "{\"a\": 2.5}");
    reads_as("a: 1e3", "{\"a\": 1000.0}");
    reads_as("a: .5", "{\"a\": 0.5}");
    reads_as("a: true", "{\"a\": true}");
    reads_as("a: False", "{\"a\": false}");
    reads_as("a: TRUE", "{\"a\": true}");
    reads_as("a: null", "{\"a\": null}");
    reads_as("a: ~", "{\"a\": null}");
    reads_as("a:", "{\"a\": null}");
    /* YAML 1.1's booleans and numbers are text in 1.2. */
    reads_as("a: [yes, no, on, off, y, n, Yes]",
             "{\"a\": [\"yes\", \"no\", \"on\", \"off\", \"y\", \"n\", "
             "\"Yes\"]}");
    reads_as("a: [0b101, 1_000, '12:30', 12:30, 1.0.0, 0x, 0o8]",
             "{\"a\": [\"0b101\", \"1_000\", \"12:30\", \"12:30\", "
             "\"1.0.0\", \"0x\", \"0o8\"]}");
    /* Quoted is always text. */
    reads_as("a: ['3', \"true\", 'null', \"\"]",
             "{\"a\": [\"3\", \"true\", \"null\", \"\"]}");
    /* Block scalars are text. */
    reads_as("a: |\n  3\n  4\nb: >-\n  x\n  y\n",
             "{\"a\": \"3\\n4\\n\", \"b\": \"x y\"}");
    reads_as("a: \"\\u00e9\\n\"", "{\"a\": \"\\u00e9\\n\"}");
}

static void test_tags(void **state)
{
    (void)state;
    reads_as("a: !!str 3", "{\"a\": \"3\"}");
    reads_as("a: ! 3", "{\"a\": \"3\"}");
    reads_as("a: !!int '3'", "{\"a\": 3}");
    reads_as("a: !!float 3", "{\"a\": 3.0}");
    reads_as("a: !!bool 'true'", "{\"a\": true}");
    reads_as("a: !!null ''", "{\"a\": null}");
    reads_as("a: !!seq [1]", "{\"a\": [1]}");
    reads_as("!!map {a: 1}", "{\"a\": 1}");
    refused_as("a: !!int x", "t.yaml:1:4: \"x\" does not fit its tag !!int");
    refused_as("a: !!bool yes",
               "t.yaml:1:4: \"yes\" does not fit its tag !!bool");
    refused_as("a: !!map [1]", "t.yaml:1:4: tag !!map does not fit a "
                               "sequence");
    refused_as("a: !Ref x",
               "t.yaml:1:4: tag !Ref is not supported on a scalar: only "
               "the standard tags !!str, !!int, !!float, !!bool and "
               "!!null (on a scalar), !!seq and !!map are");
    refused_as("a: !!binary aGk=",
               "t.yaml:1:4: tag !!binary is not supported on a scalar: "
               "only the standard tags !!str, !!int, !!float, !!bool "
               "and !!null (on a scalar), !!seq and !!map are");
}

static void test_anchors(void **state)
{
    (void)state;
    reads_as("a: &p {x: 1}\nb: *p\nc: [*p, *p]",
             "{\"a\": {\"x\": 1}, \"b\": {\"x\": 1}, "
             "\"c\": [{\"x\": 1}, {\"x\": 1}]}");
    /* The latest anchor of a name wins. */
    reads_as("a: &p 1\nb: &p 2\nc: *p", "{\"a\": 1, \"b\": 2, \"c\": 2}");
    refused_as("a: *p", "t.yaml:1:4: alias *p names no anchor (&p) "
                        "written before it");
    refused_as("a: &p [*p]", "t.yaml:1:8: alias *p names no anchor (&p) "
                             "written before it");
    refused_as("*p : 1", "t.yaml:1:1: a key must be text, not an alias");
}

/* A "billion laughs": nine levels of ten aliases each. */
static void test_alias_bomb(void **state)
{
    char *text = tu_fmt("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    char c;
    cli_yaml_error err;
    json_t *v;

    (void)state;
    for (c = 'b'; c <= 'i'; c++) {
        char *n = tu_fmt("%s%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, "
                         "*%c, *%c, *%c]\n",
                         text, c, c, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1,
                         c - 1, c - 1, c - 1, c - 1);
        free(text);
        text = n;
    }
    v = read_yaml(text, &err, NULL);
    assert_null(v);
    assert_string_equal(err.msg,
                        "t.yaml:5:36: aliases would add more than 100000 "
                        "values to the document; write it with fewer of "
                        "them");
    assert_int_equal(err.line, 5);
    free(text);
}

static void test_refused(void **state)
{
    char *deep;
    int i;

    (void)state;
    refused_as("name: a\nversion: 1\nname: b\n",
               "t.yaml:3:1: duplicate key \"name\" (first at line 1)");
    refused_as("a:\n  b: 1\n  'b': 2\n",
               "t.yaml:3:3: duplicate key \"b\" (first at line 2)");
    refused_as("a: 1\n---\nb: 2\n",
               "t.yaml:2:1: a second document: a file holds one "
               "definition");
    refused_as("3: x", "t.yaml:1:1: key 3 is a number, not text: quote "
                       "it (\"3\") to use it as a name");
    refused_as("1.0: x", "t.yaml:1:1: key 1.0 is a number, not text: "
                         "quote it (\"1.0\") to use it as a name");
    refused_as("true: x", "t.yaml:1:1: key true is a boolean, not text: "
                          "quote it (\"true\") to use it as a name");
    refused_as("~: x", "t.yaml:1:1: key ~ is null, not text: quote it "
                       "(\"~\") to use it as a name");
    refused_as("[a]: x", "t.yaml:1:1: a key must be text, not a mapping "
                         "or a sequence");
    refused_as("<<: {a: 1}",
               "t.yaml:1:1: merge keys (<<) are not supported: write the "
               "fields out, or give the whole value an alias (*name)");
    refused_as("a: .inf", "t.yaml:1:4: .inf: JSON has no infinity or NaN");
    refused_as("a: -.NaN", "t.yaml:1:4: -.NaN: JSON has no infinity or NaN");
    refused_as("a: 9223372036854775808",
               "t.yaml:1:4: 9223372036854775808 is out of the range of "
               "an integer (-2^63 to 2^63-1)");
    refused_as("a: 1e999", "t.yaml:1:4: 1e999 is out of the range of a number");
    refused_as("", "t.yaml:1:1: no document: the file holds nothing but "
                   "blank lines and comments");
    refused_as("# nothing\n", "t.yaml:2:1: no document: the file holds "
                              "nothing but blank lines and comments");
    refused_as("a: [1\nb: 2",
               "t.yaml:2:2: did not find expected ',' or ']' (while "
               "parsing a flow sequence that starts at line 1)");
    refused_as("a: \"\\x00\"\n\"\\x00\": 1",
               "t.yaml:2:1: a key may not hold a NUL character");
    refused_as("\xff: 1", "t.yaml:1:1: invalid leading UTF-8 octet");
    /* 64 levels are allowed, as in JSON, 65 not. */
    deep = tu_fmt("%s", "");
    for (i = 0; i < 64; i++) {
        char *n = tu_fmt("[%s]", deep);
        free(deep);
        deep = n;
    }
    reads_as(deep, deep); /* as JSON, the same text */
    {
        char *n = tu_fmt("[%s]", deep);

        refused_as(n, "t.yaml:1:65: nesting deeper than 64 levels");
        free(n);
    }
    free(deep);
}

static void test_lines(void **state)
{
    cli_yaml_error err;
    json_t *lines = NULL;
    json_t *v = read_yaml("name: zk\n"
                          "plans:\n"
                          "  deploy:\n"
                          "    phases:\n"
                          "      - name: p\n"
                          "        steps:\n"
                          "\n"
                          "          - name: s\n"
                          "            retry: {backof: 1s}\n"
                          "  \"a b\":\n"
                          "    x: 1\n",
                          &err, &lines);

    (void)state;
    assert_non_null(v);
    assert_int_equal(cli_yaml_line(lines, "name"), 1);
    assert_int_equal(cli_yaml_line(lines, "plans.deploy"), 3);
    assert_int_equal(cli_yaml_line(lines, "plans.deploy.phases[0]"), 5);
    assert_int_equal(
        cli_yaml_line(lines, "plans.deploy.phases[0].steps[0].retry.backof"),
        9);
    /* A missing field: its parent's line. */
    assert_int_equal(
        cli_yaml_line(lines, "plans.deploy.phases[0].steps[0].tasks"), 8);
    assert_int_equal(cli_yaml_line(lines, "plans.deploy.strategy"), 3);
    /* A key that is not a name, as validation writes it. */
    assert_int_equal(cli_yaml_line(lines, "plans[\"a b\"].x"), 11);
    assert_int_equal(cli_yaml_line(lines, "version"), 1);
    assert_int_equal(cli_yaml_line(lines, ""), 1);
    json_decref(v);
    json_decref(lines);
}

/* The example definition in YAML is the same value as in JSON. */
static void test_example_equals_json(void **state)
{
    char *yaml =
        tu_read_file(PLANCTL_SOURCE_DIR "/tools/examples/zookeeper.yaml", NULL);
    json_t *j = json_load_file(
        PLANCTL_SOURCE_DIR "/tools/examples/zookeeper.json", 0, NULL);
    cli_yaml_error err;
    json_t *y;

    (void)state;
    assert_non_null(yaml);
    assert_non_null(j);
    y = read_yaml(yaml, &err, NULL);
    if (!y)
        fail_msg("%s", err.msg);
    assert_true(json_equal(y, j));
    json_decref(y);
    json_decref(j);
    free(yaml);
}

/* v written as YAML; the caller frees the text. */
static char *dump(const json_t *v)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    assert_int_equal(cli_yaml_dump(v, f), 0);
    fclose(f);
    return text;
}

/* v written as YAML reads back as v. */
static void expect_round_trip(const json_t *v)
{
    char *text = dump(v);
    cli_yaml_error err;
    json_t *back = read_yaml(text, &err, NULL);

    if (!back)
        fail_msg("%s\nreads back refused: %s", text, err.msg);
    if (!json_equal(v, back)) {
        char *a = json_dumps(v, JSON_ENCODE_ANY);
        char *b = json_dumps(back, JSON_ENCODE_ANY);

        fail_msg("%s\nreads back as %s, not %s", text, b, a);
    }
    json_decref(back);
    free(text);
}

static void test_writer(void **state)
{
    static const char *const strings[] = {"plain",
                                          "two words",
                                          "zookeeper@0.2.0",
                                          "/a/b",
                                          "http://x:80/",
                                          "",
                                          " lead",
                                          "trail ",
                                          "3",
                                          "-3",
                                          "0x1F",
                                          "1e3",
                                          ".5",
                                          ".inf",
                                          "true",
                                          "yes",
                                          "No",
                                          "on",
                                          "OFF",
                                          "y",
                                          "null",
                                          "~",
                                          "Null",
                                          "2026-11-21T14:03:05.000Z",
                                          "12:30",
                                          "a: b",
                                          "a #b",
                                          "#c",
                                          "- x",
                                          "-",
                                          "?",
                                          ":",
                                          "a:",
                                          "{x}",
                                          "[x]",
                                          "*a",
                                          "&a",
                                          "!t",
                                          "|",
                                          ">",
                                          "'q'",
                                          "\"q\"",
                                          "%x",
                                          "@x",
                                          "`x",
                                          "line\nbreak",
                                          "tab\there",
                                          "nul\x01",
                                          "\xc3\xa9t\xc3\xa9",
                                          "\xe2\x80\xa8",
                                          "\xc2\x85",
                                          "\xef\xbb\xbfx",
                                          "back\\slash",
                                          "<<",
                                          "=",
                                          "a,b",
                                          "---",
                                          "...",
                                          NULL};
    json_t *obj = json_object();
    json_t *arr = json_array();
    char *text;
    size_t i;

    (void)state;
    for (i = 0; strings[i]; i++) {
        json_array_append_new(arr, json_string(strings[i]));
        json_object_set_new(obj, strings[i], json_integer((json_int_t)i));
    }
    json_array_append_new(arr, json_stringn("nul\0in", 6));
    expect_round_trip(arr);
    expect_round_trip(obj);
    json_decref(arr);
    json_decref(obj);

    /* Nesting, empty containers, numbers, in block style. */
    arr = json_loads("{\"a\": [[1, [2, {}]], [], {\"b\": [{\"c\": null, "
                     "\"d\": [true]}]}], \"e\": {}, \"f\": 2.5, "
                     "\"g\": 1e300, \"h\": -0.0, \"i\": 3.0}",
                     0, NULL);
    assert_non_null(arr);
    expect_round_trip(arr);
    text = dump(arr);
    assert_string_equal(text, "a:\n"
                              "  - - 1\n"
                              "    - - 2\n"
                              "      - {}\n"
                              "  - []\n"
                              "  - b:\n"
                              "      - c: null\n"
                              "        d:\n"
                              "          - true\n"
                              "e: {}\n"
                              "f: 2.5\n"
                              "g: 1.0000000000000001e300\n"
                              "h: -0.0\n"
                              "i: 3.0\n");
    free(text);
    json_decref(arr);

    obj = json_loads("{\"name\": \"zk\", \"version\": \"0.2.0\", \"on\": "
                     "\"a: b\", \"n\": \"3\"}",
                     0, NULL);
    text = dump(obj);
    assert_string_equal(text, "name: zk\n"
                              "version: \"0.2.0\"\n"
                              "\"on\": \"a: b\"\n"
                              "\"n\": \"3\"\n");
    free(text);
    json_decref(obj);
}

/* ---- the real planctl: -o yaml reads back as -o json -------------------- */

/* What `planctl ARGS` prints on stdout, run in dir. */
static char *run_planctl(const char *dir, const char *args)
{
    const char *bin = getenv("PLANCTL_BIN");
    char *cmd, *out = NULL;
    size_t len = 0;
    char buf[4096];
    size_t n;
    FILE *p, *m;

    if (!bin)
        fail_msg("PLANCTL_BIN is not set: run this test with ctest, or set "
                 "it to the planctl binary");
    cmd = tu_fmt("cd '%s' && PLANCTL_NOW=2026-11-21T14:03:05Z "
                 "PLANCTL_DB=planctl.db '%s' %s",
                 dir, bin, args);
    p = popen(cmd, "r");
    assert_non_null(p);
    m = open_memstream(&out, &len);
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        fwrite(buf, 1, n, m);
    fclose(m);
    pclose(p);
    free(cmd);
    return out;
}

static void test_cli_round_trip(void **state)
{
    static const char *const views[] = {"status zk",
                                        "status zk --run 1",
                                        "history zk",
                                        "definitions",
                                        "instances",
                                        "events zk",
                                        "validate -f " PLANCTL_SOURCE_DIR
                                        "/tests/cli/fixtures/"
                                        "broken-rules.json",
                                        "verify",
                                        NULL};
    char *dir = tu_mkdtemp();
    size_t i;

    (void)state;
    free(run_planctl(dir, "apply -f " PLANCTL_SOURCE_DIR
                          "/tools/examples/zookeeper.yaml"));
    free(run_planctl(dir, "create zk --definition zookeeper"));
    free(run_planctl(dir, "run --until-idle 2>/dev/null"));
    free(run_planctl(dir, "trigger zk backup"));
    for (i = 0; views[i]; i++) {
        char *args = tu_fmt("%s -o json", views[i]);
        char *j = run_planctl(dir, args);
        char *y;
        json_t *jv, *yv;
        cli_yaml_error err;

        free(args);
        args = tu_fmt("%s -o yaml", views[i]);
        y = run_planctl(dir, args);
        free(args);
        jv = json_loads(j, 0, NULL);
        if (!jv)
            fail_msg("%s -o json: not JSON: %s", views[i], j);
        yv = read_yaml(y, &err, NULL);
        if (!yv)
            fail_msg("%s -o yaml: %s\n%s", views[i], err.msg, y);
        if (!json_equal(jv, yv))
            fail_msg("%s: -o yaml\n%s\nis not -o json\n%s", views[i], y, j);
        json_decref(jv);
        json_decref(yv);
        free(j);
        free(y);
    }
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars_core_schema),
        cmocka_unit_test(test_tags),
        cmocka_unit_test(test_anchors),
        cmocka_unit_test(test_alias_bomb),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_example_equals_json),
        cmocka_unit_test(test_writer),
        cmocka_unit_test(test_cli_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
