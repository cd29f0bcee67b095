/* test_enginfo.c - when a lease's holder counts as a running engine, and
 * the line that says which engine holds the database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/enginfo.h"

#define T0 1795269785000LL /* 2026-11-21T14:03:05Z */

static void test_alive(void **state)
{
    (void)state;
    /* Fresh heartbeat, process here: running. */
    assert_true(pctl_engine_alive(1, 0, T0 + 1000, T0, 15000));
    /* Killed on this host: not running, however fresh its heartbeat. */
    assert_false(pctl_engine_alive(1, 1, T0, T0, 15000));
    /* Another host's process cannot be looked at: its heartbeat decides,
     * up to (not including) the TTL. */
    assert_true(pctl_engine_alive(0, 0, T0 + 14999, T0, 15000));
    assert_false(pctl_engine_alive(0, 0, T0 + 15000, T0, 15000));
    /* A hung process here (SIGSTOP) stops renewing: stale. */
    assert_false(pctl_engine_alive(1, 0, T0 + 180000, T0, 15000));
    /* A heartbeat a little ahead of the reader's clock is fresh. */
    assert_true(pctl_engine_alive(0, 0, T0, T0 + 300, 15000));
}

static void test_ago(void **state)
{
    static const struct {
        int64_t ms;
        const char *text;
    } cases[] = {
        {-2000, "just now"},   {0, "just now"},    {499, "just now"},
        {500, "1s ago"},       {1999, "2s ago"},   {59499, "59s ago"},
        {59500, "1m ago"},     {179997, "3m ago"}, {185000, "3m5s ago"},
        {3900000, "1h5m ago"},
    };
    char buf[48];

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pctl_ago(buf, sizeof buf, cases[i].ms);
        assert_string_equal(buf, cases[i].text);
    }
}

static void test_line(void **state)
{
    pctl_engine_seen e = {1887, "vm", T0 - 60000, T0 - 2000, 1, NULL, 0};
    char buf[256];

    (void)state;
    pctl_engine_line(buf, sizeof buf, "./planctl.db", NULL, T0);
    /* The state only: how to start one is the CLI's to say. */
    assert_string_equal(buf, "no engine is running on ./planctl.db");
    pctl_engine_line(buf, sizeof buf, "./planctl.db", &e, T0);
    assert_string_equal(
        buf, "engine pid 1887 on vm since 14:02:05, last seen 2s ago");
    /* Since another day: the date too. */
    e.since_ms = T0 - 86400000;
    pctl_engine_line(buf, sizeof buf, "./planctl.db", &e, T0);
    assert_string_equal(buf, "engine pid 1887 on vm since 2026-11-20 "
                             "14:03:05, last seen 2s ago");
    e.alive = 0;
    e.last_seen_ms = T0 - 180000;
    pctl_engine_line(buf, sizeof buf, "./planctl.db", &e, T0);
    assert_string_equal(buf, "engine pid 1887 on vm stopped renewing 3m ago");
    /* Cut to the buffer, never past it. */
    pctl_engine_line(buf, 10, "./planctl.db", &e, T0);
    assert_string_equal(buf, "engine pi");
}

/* One of several engines on a PostgreSQL database: named, and whether it
 * holds the run status shows. */
static void test_line_fleet(void **state)
{
    pctl_engine_seen e = {1887, "vm", T0 - 60000, T0 - 2000, 1, "ctl-a", 1};
    char buf[256];

    (void)state;
    pctl_engine_line(buf, sizeof buf, "db", &e, T0);
    assert_string_equal(buf,
                        "engine ctl-a (pid 1887 on vm) holds the run, last "
                        "seen 2s ago");
    e.holds = 0;
    pctl_engine_line(buf, sizeof buf, "db", &e, T0);
    assert_string_equal(buf,
                        "engine ctl-a (pid 1887 on vm) is running, last seen "
                        "2s ago");
    e.holds = 1;
    e.alive = 0;
    e.last_seen_ms = T0 - 180000;
    pctl_engine_line(buf, sizeof buf, "db", &e, T0);
    assert_string_equal(buf, "engine ctl-a (pid 1887 on vm) holds the run but "
                             "stopped renewing 3m ago; another engine takes "
                             "it over once its TTL has passed");
}

/* Each engine's share of the runs wanting one: even, rounded up, capped
 * engines at most their capacity and the others sharing what they leave. */
static void test_fair_share(void **state)
{
    static const int64_t none[] = {0, 0, 0}, one_small[] = {10, 0, 0},
                         all_small[] = {10, 20}, big[] = {500, 0},
                         mixed[] = {0, 30, 5, 0};

    (void)state;
    /* 3 engines started together on 120 runs: 40 each. */
    assert_int_equal(pctl_fair_share(120, none, 3, 0), 40);
    /* Rounded up: the shares cover every run. */
    assert_int_equal(pctl_fair_share(121, none, 3, 0), 41);
    assert_int_equal(pctl_fair_share(2, none, 3, 0), 1);
    assert_int_equal(pctl_fair_share(0, none, 3, 0), 0);
    /* An engine alone holds everything; none at all, nothing. */
    assert_int_equal(pctl_fair_share(500, none, 1, 0), 500);
    assert_int_equal(pctl_fair_share(500, none, 0, 0), 0);
    /* One capped at 10: it holds 10, the two others 55 each. */
    assert_int_equal(pctl_fair_share(120, one_small, 3, 10), 10);
    assert_int_equal(pctl_fair_share(120, one_small, 3, 0), 55);
    /* Every engine capped below the even share: each its capacity. */
    assert_int_equal(pctl_fair_share(120, all_small, 2, 10), 10);
    assert_int_equal(pctl_fair_share(120, all_small, 2, 20), 20);
    /* A capacity above the even share changes nothing. */
    assert_int_equal(pctl_fair_share(120, big, 2, 500), 60);
    assert_int_equal(pctl_fair_share(120, big, 2, 0), 60);
    /* 5 fixed first, which lifts the level past 30: (100-5)/3 = 32 > 30,
     * so 30 is fixed too, and the two unlimited share 65: 33 each. */
    assert_int_equal(pctl_fair_share(100, mixed, 4, 0), 33);
    assert_int_equal(pctl_fair_share(100, mixed, 4, 30), 30);
    assert_int_equal(pctl_fair_share(100, mixed, 4, 5), 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alive),      cmocka_unit_test(test_ago),
        cmocka_unit_test(test_line),       cmocka_unit_test(test_line_fleet),
        cmocka_unit_test(test_fair_share),
    };

    setenv("TZ", "UTC", 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
