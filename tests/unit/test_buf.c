/*
 * test_buf.c - core/buf.c: the growing string, and ids as a JSON array
 * (what the statements that take a set of runs are bound to).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/buf.h"

static void test_add_grows_and_terminates(void **state)
{
    pctl_buf b = PCTL_BUF_INIT;
    int i;

    (void)state;
    for (i = 0; i < 1000; i++)
        assert_int_equal(pctl_buf_add(&b, "abc", 3), 0);
    assert_int_equal(b.len, 3000);
    assert_int_equal(strlen(b.s), 3000);
    assert_int_equal(pctl_buf_addc(&b, 'z'), 0);
    assert_int_equal(b.s[3000], 'z');
    assert_int_equal(b.s[3001], '\0');
    pctl_buf_free(&b);
    assert_null(b.s);
    assert_int_equal(b.len, 0);
}

static void test_ids_json(void **state)
{
    static const int64_t ids[] = {1, -2, 0, INT64_MAX, INT64_MIN};
    pctl_buf b = PCTL_BUF_INIT;

    (void)state;
    assert_int_equal(pctl_buf_ids_json(&b, ids, 0), 0);
    assert_string_equal(b.s, "[]");
    pctl_buf_free(&b);
    assert_int_equal(pctl_buf_ids_json(&b, ids, 1), 0);
    assert_string_equal(b.s, "[1]");
    pctl_buf_free(&b);
    assert_int_equal(pctl_buf_ids_json(&b, ids, 5), 0);
    assert_string_equal(b.s,
                        "[1,-2,0,9223372036854775807,-9223372036854775808]");
    /* Appended after what the buffer holds. */
    assert_int_equal(pctl_buf_ids_json(&b, ids, 2), 0);
    assert_string_equal(
        b.s, "[1,-2,0,9223372036854775807,-9223372036854775808][1,-2]");
    pctl_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_grows_and_terminates),
        cmocka_unit_test(test_ids_json),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
