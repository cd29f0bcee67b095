/* test_ferr.c - the field-error list: rendering, de-duplication, the
 * "did you mean" suggestion and allocation failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/ferr.h"
#include "planctl.h"

/* Renders item i of l and compares it with want. */
static void assert_line(const pctl_ferr_list *l, size_t i, const char *want)
{
    char *got;

    assert_true(i < l->n);
    got = pctl_ferr_render(&l->items[i]);
    assert_non_null(got);
    assert_string_equal(got, want);
    pctl_free(got);
}

static void test_type_names(void **state)
{
    static const struct {
        pctl_ferr_type t;
        const char *name;
    } cases[] = {
        {PCTL_FERR_SYNTAX, "Syntax error"},
        {PCTL_FERR_REQUIRED, "Required value"},
        {PCTL_FERR_INVALID, "Invalid value"},
        {PCTL_FERR_TYPE, "Invalid type"},
        {PCTL_FERR_UNSUPPORTED, "Unsupported value"},
        {PCTL_FERR_DUPLICATE, "Duplicate value"},
        {PCTL_FERR_NOT_FOUND, "Not found"},
        {PCTL_FERR_FORBIDDEN, "Forbidden"},
        {PCTL_FERR_TOO_LONG, "Too long"},
        {PCTL_FERR_TOO_MANY, "Too many"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_string_equal(pctl_ferr_type_name(cases[i].t), cases[i].name);
}

static void test_render(void **state)
{
    pctl_ferr_list l = PCTL_FERR_LIST_INIT;

    (void)state;
    assert_int_equal(
        pctl_ferr_add(&l, "plans.deploy.strategy", PCTL_FERR_UNSUPPORTED,
                      "did you mean \"serial\"?", "%s: supported values: %s",
                      "\"serail\"", "\"parallel\", \"serial\""),
        0);
    assert_int_equal(
        pctl_ferr_add(&l, "name", PCTL_FERR_REQUIRED, NULL, "%s", ""), 0);
    assert_int_equal(pctl_ferr_add(&l, "", PCTL_FERR_TOO_LONG, NULL,
                                   "definition is %d bytes", 5),
                     0);
    assert_int_equal(
        pctl_ferr_add(&l, NULL, PCTL_FERR_TYPE, NULL, "must be an object"), 0);
    assert_int_equal(pctl_ferr_add(&l, "", PCTL_FERR_SYNTAX, NULL,
                                   "zk.json:%d:%d: %s", 3, 14, "bad"),
                     0);
    assert_int_equal(l.n, 5);
    assert_line(&l, 0,
                "plans.deploy.strategy: Unsupported value: \"serail\": "
                "supported values: \"parallel\", \"serial\" (did you mean "
                "\"serial\"?)");
    assert_line(&l, 1, "name: Required value");
    assert_line(&l, 2, "Too long: definition is 5 bytes");
    assert_line(&l, 3, "Invalid type: must be an object");
    assert_line(&l, 4, "zk.json:3:14: bad");
    assert_string_equal(l.items[3].path, "");
    assert_null(l.items[1].hint);
    assert_int_equal(l.oom, 0);
    pctl_ferr_list_clear(&l);
    assert_int_equal(l.n, 0);
    assert_null(l.items);
}

static void test_dedup(void **state)
{
    pctl_ferr_list l = PCTL_FERR_LIST_INIT;
    int i;

    (void)state;
    for (i = 0; i < 3; i++) {
        assert_int_equal(
            pctl_ferr_add(&l, "a", PCTL_FERR_NOT_FOUND, "h1", "\"%s\"", "x"),
            0);
        assert_int_equal(
            pctl_ferr_add(&l, "b", PCTL_FERR_NOT_FOUND, NULL, "\"%s\"", "x"),
            0);
    }
    /* Differs only in the hint, the type or the path: all kept. */
    assert_int_equal(pctl_ferr_add(&l, "a", PCTL_FERR_NOT_FOUND, "h2", "\"x\""),
                     0);
    assert_int_equal(pctl_ferr_add(&l, "a", PCTL_FERR_INVALID, "h1", "\"x\""),
                     0);
    assert_int_equal(
        pctl_ferr_add(&l, "a.b", PCTL_FERR_NOT_FOUND, "h1", "\"x\""), 0);
    /* Different fields, same rendered line: one kept, the first. */
    assert_int_equal(pctl_ferr_add(&l, "", PCTL_FERR_SYNTAX, NULL, "f:1:1: x"),
                     0);
    assert_int_equal(
        pctl_ferr_add(&l, "ignored", PCTL_FERR_SYNTAX, NULL, "f:1:1: x"), 0);
    assert_int_equal(l.n, 6);
    assert_line(&l, 0, "a: Not found: \"x\" (h1)");
    assert_line(&l, 1, "b: Not found: \"x\"");
    assert_line(&l, 2, "a: Not found: \"x\" (h2)");
    assert_line(&l, 3, "a: Invalid value: \"x\" (h1)");
    assert_line(&l, 4, "a.b: Not found: \"x\" (h1)");
    assert_line(&l, 5, "f:1:1: x");
    assert_string_equal(l.items[5].path, "");
    pctl_ferr_list_clear(&l);
}

static void test_growth(void **state)
{
    pctl_ferr_list l = PCTL_FERR_LIST_INIT;
    int i;

    (void)state;
    for (i = 0; i < 100; i++)
        assert_int_equal(
            pctl_ferr_add(&l, "tasks", PCTL_FERR_INVALID, NULL, "%d", i), 0);
    assert_int_equal(l.n, 100);
    assert_line(&l, 99, "tasks: Invalid value: 99");
    pctl_ferr_list_clear(&l);
    /* Reusable after clear. */
    assert_int_equal(pctl_ferr_add(&l, "x", PCTL_FERR_INVALID, NULL, "y"), 0);
    assert_int_equal(l.n, 1);
    pctl_ferr_list_clear(&l);
}

static void test_closest(void **state)
{
    static const char *const fields[] = {"strategy", "preflight", "phases"};
    static const char *const strategies[] = {"parallel", "serial"};
    static const char *const tasks[] = {"render", NULL, "wait", "rendez"};
    static const char *const ties[] = {"ab", "ba", "aa"};

    (void)state;
    assert_string_equal(pctl_closest("strategie", fields, 3), "strategy");
    assert_string_equal(pctl_closest("phase", fields, 3), "phases");
    assert_string_equal(pctl_closest("prefligth", fields, 3), "preflight");
    assert_string_equal(pctl_closest("serail", strategies, 2), "serial");
    assert_string_equal(pctl_closest("Serial", strategies, 2), "serial");
    assert_string_equal(pctl_closest("paralel", strategies, 2), "parallel");
    /* A swap of neighbours is one edit. */
    assert_string_equal(pctl_closest("srtategy", fields, 3), "strategy");
    assert_string_equal(pctl_closest("wiat", tasks, 4), "wait");
    assert_null(pctl_closest("aiwt", tasks, 4));
    /* Too far: more than max(1, len/3) edits. */
    assert_null(pctl_closest("sequential", strategies, 2));
    assert_null(pctl_closest("xyz", fields, 3));
    /* Short words get one edit. */
    assert_string_equal(pctl_closest("wat", tasks, 4), "wait");
    assert_null(pctl_closest("w", tasks, 4));
    /* NULL candidates are skipped; the nearest wins over a later one. */
    assert_string_equal(pctl_closest("rendr", tasks, 4), "render");
    /* An exact match is no suggestion. */
    assert_null(pctl_closest("render", tasks, 4));
    /* Ties go to the first candidate. */
    assert_string_equal(pctl_closest("a", ties, 3), "ab");
    assert_null(pctl_closest("x", NULL, 0));
    assert_null(pctl_closest("", ties, 0));
}

static long fail_at, calls;

static void *failing_malloc(size_t n)
{
    return ++calls == fail_at ? NULL : malloc(n);
}

static void *failing_realloc(void *p, size_t n)
{
    return ++calls == fail_at ? NULL : realloc(p, n);
}

static void test_alloc_failure(void **state)
{
    static const pctl_alloc_hooks hooks = {failing_malloc, failing_realloc,
                                           free};
    long n;

    (void)state;
    pctl_alloc_set_hooks(&hooks);
    for (n = 1;; n++) {
        pctl_ferr_list l = PCTL_FERR_LIST_INIT;
        int i, rc = 0;

        fail_at = n;
        calls = 0;
        /* Enough adds to grow the array twice, and one duplicate. */
        for (i = 0; i < 20 && rc == 0; i++)
            rc = pctl_ferr_add(&l, "p", PCTL_FERR_INVALID,
                               i % 19 % 2 ? "hint" : NULL, "%d", i % 19);
        if (rc == 0) {
            assert_int_equal(l.n, 19);
            assert_int_equal(l.oom, 0);
            pctl_ferr_list_clear(&l);
            break;
        }
        assert_int_equal(rc, PLANCTL_ENOMEM);
        assert_int_equal(l.oom, 1);
        pctl_ferr_list_clear(&l);
    }
    pctl_alloc_set_hooks(NULL);
    assert_true(n > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_names), cmocka_unit_test(test_render),
        cmocka_unit_test(test_dedup),      cmocka_unit_test(test_growth),
        cmocka_unit_test(test_closest),    cmocka_unit_test(test_alloc_failure),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
