/* test_duration.c - duration parsing and formatting, and name syntax. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/def.h"
#include "core/schema.h"
#include "core/timefmt.h"
#include "engine/job.h"
#include "planctl.h"

static void test_parse_valid(void **state)
{
    static const struct {
        const char *text;
        int64_t ms;
    } cases[] = {
        {"0s", 0},
        {"0ms", 0},
        {"0h", 0},
        {"500ms", 500},
        {"30s", 30000},
        {"5m", 300000},
        {"1h", 3600000},
        {"1h30m", 5400000},
        {"1m30s500ms", 90500},
        {"1.5s", 1500},
        {"1.5h", 5400000},
        {"0.5ms", 0},
        {"2.0001s", 2000},
        {"1.123456789999s", 1123},
        {"007s", 7000},
        {"1s1s", 2000},
        {"30m1h", 5400000},
        {"876000h", PCTL_DURATION_MAX_MS},
        {"875999h60m", PCTL_DURATION_MAX_MS},
        {"1d", 86400000},
        {"3d15h", 313200000},
        {"1.5d", 129600000},
        {"36500d", PCTL_DURATION_MAX_MS},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ms = -1;

        if (pctl_duration_parse(&ms, cases[i].text) != 0)
            fail_msg("\"%s\" should parse", cases[i].text);
        if (ms != cases[i].ms)
            fail_msg("\"%s\": got %lld, want %lld", cases[i].text,
                     (long long)ms, (long long)cases[i].ms);
    }
}

static void test_parse_invalid(void **state)
{
    static const char *const cases[] = {
        "",
        "0",
        "10",
        "s",
        "ms",
        "-1s",
        "+1s",
        " 1s",
        "1s ",
        "1 s",
        "10 min",
        "1min",
        "1D",
        "1dd",
        "36501d",
        "1us",
        "1ns",
        "1S",
        "1H",
        "1.s",
        ".5s",
        "1..5s",
        "1.5",
        "1s.5",
        "1sm",
        "1hm",
        "1h-1m",
        "876000h1ms",
        "876001h",
        "52560001m",
        "99999999999999999999999s",
        "9223372036854775807ms",
        "1e3s",
        "0x10s",
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ms = 42;

        if (pctl_duration_parse(&ms, cases[i]) != PLANCTL_EINVAL)
            fail_msg("\"%s\" should be rejected", cases[i]);
        assert_int_equal(ms, 42);
    }
    assert_int_equal(pctl_duration_parse(&(int64_t){0}, NULL), PLANCTL_EINVAL);
}

static void test_format(void **state)
{
    static const struct {
        int64_t ms;
        const char *text;
    } cases[] = {
        {0, "0s"},
        {1, "1ms"},
        {450, "450ms"},
        {999, "999ms"},
        {1000, "1s"},
        {1500, "1.5s"},
        {1250, "1.25s"},
        {1001, "1.001s"},
        {30000, "30s"},
        {59999, "59.999s"},
        {60000, "1m"},
        {60999, "1m"},
        {72000, "1m12s"},
        {72500, "1m12s"},
        {3599999, "59m59s"},
        {3600000, "1h"},
        {3659000, "1h"},
        {7380000, "2h3m"},
        {PCTL_DURATION_MAX_MS, "876000h"},
        {-1500, "-1.5s"},
        {INT64_MIN, "-2562047788015h12m"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[32];

        memset(buf, 'x', sizeof(buf));
        pctl_duration_format(buf, sizeof(buf), cases[i].ms);
        assert_string_equal(buf, cases[i].text);
    }
}

/* Whatever format writes, parse reads back (up to the precision format
 * keeps). */
static void test_round_trip(void **state)
{
    static const int64_t cases[] = {
        0,     1,     999,     1000,    1500,     59999,
        60000, 72000, 3600000, 7380000, 86400000, PCTL_DURATION_MAX_MS};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[32];
        int64_t ms;

        pctl_duration_format(buf, sizeof(buf), cases[i]);
        assert_int_equal(pctl_duration_parse(&ms, buf), 0);
        assert_int_equal(ms, cases[i]);
    }
}

static void test_format_small_buffer(void **state)
{
    char buf[4];

    (void)state;
    pctl_duration_format(buf, sizeof(buf), 7380000);
    assert_string_equal(buf, "2h3");
    pctl_duration_format(NULL, 0, 1);
}

/* pctl_time_read() takes every form the CLI prints a time in, and the
 * relative forms, against a fixed now; TZ decides what a zone-less time
 * means. */
static void test_time_read(void **state)
{
    static const struct {
        const char *text;
        int64_t ms;
    } utc[] = {
        {"2026-11-21T14:03:05Z", 1795269785000},
        {"2026-11-21T14:03:05.123Z", 1795269785123},
        {"2026-11-21t14:03:05z", 1795269785000},
        {"2026-11-21T15:03:05+01:00", 1795269785000},
        {"2026-11-21 14:03:05", 1795269785000},
        {"2026-11-21 14:03:05 UTC", 1795269785000},
        {"2026-11-21 14:03:05 GMT", 1795269785000},
        {"2026-11-21 15:03:05 +0100", 1795269785000},
        {"2026-11-21 14:03", 1795269780000},
        {"2026-11-21", 1795219200000},
        {"14:03:05", 1795269785000},
        {"00:00", 1795219200000},
        {"now", 1795269785000},
        {"2h", 1795269785000 - 7200000},
        {"2h ago", 1795269785000 - 7200000},
        {"1d ago", 1795269785000 - 86400000},
        {"3d15h ago", 1795269785000 - 313200000},
    };
    static const char *const invalid[] = {
        "",
        "ago",
        " ago",
        "2h  ago",
        "2 ago",
        "yesterday",
        "2026-11-31",
        "2026-02-29",
        "2026-11-21 25:00",
        "2026-11-21 14:03:05 XYZ",
        "2026-11-21 14:03:05  UTC",
        "2026-11-21T14:03:05+1:00",
        "14:03:05 UTC",
        "1795269785000",
        "2026-11-21 14:03:05Zjunk",
    };
    const int64_t now = 1795269785000; /* 2026-11-21T14:03:05Z */
    int64_t ms;
    size_t i;

    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    for (i = 0; i < sizeof(utc) / sizeof(utc[0]); i++) {
        ms = -1;
        if (pctl_time_read(&ms, utc[i].text, &now) != 0)
            fail_msg("\"%s\" should be read", utc[i].text);
        if (ms != utc[i].ms)
            fail_msg("\"%s\": got %lld, want %lld", utc[i].text, (long long)ms,
                     (long long)utc[i].ms);
    }
    for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
        ms = 42;
        if (pctl_time_read(&ms, invalid[i], &now) != PLANCTL_EINVAL)
            fail_msg("\"%s\" should be refused", invalid[i]);
        assert_int_equal(ms, 42);
    }
    /* Without a now, only absolute times. */
    assert_int_equal(pctl_time_read(&ms, "2h ago", NULL), PLANCTL_EINVAL);
    assert_int_equal(pctl_time_read(&ms, "now", NULL), PLANCTL_EINVAL);
    assert_int_equal(pctl_time_read(&ms, "14:03:05", NULL), PLANCTL_EINVAL);
    assert_int_equal(pctl_time_read(&ms, "2026-11-21 14:03:05", NULL), 0);
    assert_int_equal(ms, now);

    /* In another zone, a zone-less time and the zone's own abbreviation
     * are local; UTC and offsets are what they say. */
    setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
    tzset();
    assert_int_equal(pctl_time_read(&ms, "2026-11-21 15:03:05", &now), 0);
    assert_int_equal(ms, now);
    assert_int_equal(pctl_time_read(&ms, "2026-11-21 15:03:05 CET", &now), 0);
    assert_int_equal(ms, now);
    assert_int_equal(pctl_time_read(&ms, "2026-07-01 02:00:00 CEST", &now), 0);
    assert_int_equal(ms, 1782864000000);
    assert_int_equal(pctl_time_read(&ms, "2026-11-21 14:03:05 UTC", &now), 0);
    assert_int_equal(ms, now);
    assert_int_equal(pctl_time_read(&ms, "15:03:05", &now), 0);
    assert_int_equal(ms, now);
    /* RFC 3339 alone is the JSON reader: no zone-less or text forms. */
    assert_int_equal(pctl_time_parse(&ms, "2026-11-21 14:03:05"),
                     PLANCTL_EINVAL);
    assert_int_equal(pctl_time_parse(&ms, "2026-11-21 14:03:05 UTC"),
                     PLANCTL_EINVAL);
    assert_int_equal(pctl_time_parse(&ms, "2026-11-21T14:03Z"), PLANCTL_EINVAL);
    assert_int_equal(pctl_time_parse(&ms, "2026-11-21 14:03:05Z"), 0);
    assert_int_equal(ms, now);
    setenv("TZ", "UTC", 1);
    tzset();
}

static void test_names(void **state)
{
    static const char *const valid[] = {
        "a",
        "Z",
        "0",
        "deploy",
        "node-0",
        "NODE_COUNT",
        "v1.2",
        "a_b.c-d",
        "9lives",
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk",
    };
    static const char *const invalid[] = {
        "",
        "-a",
        "_a",
        ".a",
        "a b",
        "a/b",
        "a:b",
        "caf\xc3\xa9",
        "a\n",
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl",
    };
    size_t i;

    (void)state;
    assert_int_equal(strlen(valid[9]), PCTL_NAME_MAX);
    for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
        if (!pctl_name_valid(valid[i]))
            fail_msg("\"%s\" should be valid", valid[i]);
    for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
        if (pctl_name_valid(invalid[i]))
            fail_msg("\"%s\" should be invalid", invalid[i]);
    assert_false(pctl_name_valid(NULL));
}

/* The reference says what the code does (issue 33): every unit the
 * parser takes is listed in the duration text, and the shell task's text
 * says the output the engine keeps by default. */
static void test_reference_agrees(void **state)
{
    static const char *const candidates[] = {
        "ms", "us", "ns", "s", "m", "h", "d", "w", "y", "M", "D", "H", "S"};
    const pctl_schema_node *shell = pctl_def_schema_node("tasks.spec.shell");
    char text[64], word[8], flat[1024];
    size_t i;
    int64_t ms;

    (void)state;
    for (i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        snprintf(text, sizeof text, "1%s", candidates[i]);
        snprintf(word, sizeof word, " %s,", candidates[i]);
        if (pctl_duration_parse(&ms, text) != 0)
            continue;
        /* Listed as "ms, s, m, h or d": each as a word of the list. */
        if (!strstr(pctl_def_schema_duration_text, word)) {
            snprintf(word, sizeof word, " %s (", candidates[i]);
            if (!strstr(pctl_def_schema_duration_text, word)) {
                snprintf(word, sizeof word, " %s or", candidates[i]);
                if (!strstr(pctl_def_schema_duration_text, word))
                    fail_msg("unit %s is taken but not in \"%s\"",
                             candidates[i], pctl_def_schema_duration_text);
            }
        }
    }
    assert_non_null(shell);
    snprintf(text, sizeof text, "last %d KiB", PCTL_OUTPUT_SIZE_DEFAULT / 1024);
    /* The text's line breaks read as spaces. */
    snprintf(flat, sizeof flat, "%s", shell->description);
    for (i = 0; flat[i]; i++)
        if (flat[i] == '\n')
            flat[i] = ' ';
    if (!strstr(flat, text))
        fail_msg("the shell task's reference does not say \"%s\": %s", text,
                 shell->description);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_valid),
        cmocka_unit_test(test_parse_invalid),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_format_small_buffer),
        cmocka_unit_test(test_time_read),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_reference_agrees),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
