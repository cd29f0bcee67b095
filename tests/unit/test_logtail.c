/* test_logtail.c - the new part of a sliding window of output, and the
 * last lines of one (core/logtail.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/logtail.h"

static void since(const char *text, int64_t bytes, int64_t seen,
                  const char *want, int64_t lost)
{
    pctl_logtail_new r = pctl_logtail_since(text, strlen(text), bytes, seen);

    assert_string_equal(text + r.from, want);
    assert_int_equal(r.lost, lost);
}

static void test_since(void **state)
{
    (void)state;
    /* First read: all of it, with what it no longer keeps. */
    since("abc\n", 4, -1, "abc\n", 0);
    since("def\n", 10, -1, "def\n", 6);
    /* The window grew: what came after. */
    since("abc\ndef\n", 8, 4, "def\n", 0);
    /* It slid by less than it keeps: only the new bytes. */
    since("cdefgh", 8, 5, "fgh", 0);
    /* It slid by more than it keeps: all of it, the rest lost. */
    since("xyz", 20, 5, "xyz", 12);
    /* Nothing new, or a count that went back. */
    since("abc", 3, 3, "", 0);
    since("abc", 2, 3, "", 0);
    /* A new part that would start inside a character starts after it. */
    since("a\xc3\xa9z", 4, 2, "z", 0);
    since("", 0, -1, "", 0);
}

static void lines(const char *text, size_t n, const char *want)
{
    assert_string_equal(text + pctl_logtail_lines(text, strlen(text), n), want);
}

static void test_lines(void **state)
{
    (void)state;
    lines("a\nb\nc\n", 2, "b\nc\n");
    lines("a\nb\nc", 2, "b\nc");
    lines("a\nb\nc\n", 3, "a\nb\nc\n");
    lines("a\nb\nc\n", 10, "a\nb\nc\n");
    lines("a\nb\nc\n", 0, "");
    lines("a\n\n\n", 1, "\n");
    lines("a\n\n\n", 2, "\n\n");
    lines("", 3, "");
    lines("one line", 1, "one line");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_since),
        cmocka_unit_test(test_lines),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
