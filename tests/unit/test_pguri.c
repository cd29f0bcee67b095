/* test_pguri.c - PostgreSQL URIs (src/store/postgres/uri.c): what libpq
 * gets (planctl's schema parameter removed, everything else kept), the
 * schema, and that no password survives in what messages show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "planctl.h"
#include "store/store.h"
#ifdef PLANCTL_WITH_POSTGRES
#include "store/postgres/pg.h"

static void test_redact(void **state)
{
    static const struct {
        const char *in, *shown;
    } cases[] = {
        {"postgresql://u:secret@db.example:5433/app",
         "postgresql://u@db.example:5433/app"},
        {"postgres://u@db/app?password=secret&sslmode=require",
         "postgres://u@db/app?sslmode=require"},
        {"postgresql://u:s%40cret@h/app?sslmode=require&password=x",
         "postgresql://u@h/app?sslmode=require"},
        /* An '@' in the password itself, unescaped: the last '@' of the
         * authority ends the user part. */
        {"postgresql://u:p@ss@h/app", "postgresql://u@h/app"},
        {"postgresql:///app?host=/run/pg&password=p&schema=s",
         "postgresql:///app?host=/run/pg&schema=s"},
        {"postgresql://h", "postgresql://h"},
        {"postgresql://:secret@h/", "postgresql://@h/"},
        {"/var/lib/planctl.db", "/var/lib/planctl.db"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = pctl_pg_uri_redact(cases[i].in);

        assert_non_null(s);
        assert_string_equal(s, cases[i].shown);
        assert_null(strstr(s, "secret"));
        pctl_free(s);
    }
}

static void test_parse(void **state)
{
    planctl *p = NULL;
    pctl_pg_uri u;

    (void)state;
    /* A handle for messages only: opening an empty path fails. */
    assert_int_not_equal(planctl_open(&p, "", NULL), 0);
    assert_int_equal(
        pctl_pg_uri_parse(
            &u, p, "postgresql://u:pw@h/app?schema=ops_1&sslmode=disable"),
        0);
    assert_string_equal(u.schema, "ops_1");
    assert_string_equal(u.conninfo, "postgresql://u:pw@h/app?sslmode=disable");
    assert_string_equal(u.shown,
                        "postgresql://u@h/app?schema=ops_1&sslmode=disable");
    pctl_pg_uri_free(&u);

    assert_int_equal(pctl_pg_uri_parse(&u, p, "postgres:///app"), 0);
    assert_string_equal(u.schema, "planctl");
    assert_string_equal(u.conninfo, "postgres:///app");
    pctl_pg_uri_free(&u);

    /* %-escapes in the schema are decoded, then checked. */
    assert_int_equal(pctl_pg_uri_parse(&u, p, "postgres:///app?schema=a%5Fb"),
                     0);
    assert_string_equal(u.schema, "a_b");
    pctl_pg_uri_free(&u);

    assert_int_equal(
        pctl_pg_uri_parse(&u, p, "postgres://u:pw@h/app?schema=Ops"),
        PLANCTL_EINVAL);
    assert_non_null(strstr(planctl_errmsg(p), "schema \"Ops\""));
    assert_null(strstr(planctl_errmsg(p), "pw"));
    assert_int_equal(pctl_pg_uri_parse(&u, p, "postgres:///app?schema="),
                     PLANCTL_EINVAL);
    assert_int_equal(pctl_pg_uri_parse(&u, p, "postgres:///app?schema=1a"),
                     PLANCTL_EINVAL);
    assert_int_equal(pctl_pg_uri_parse(&u, p, "postgres:///app?schema=a%2"),
                     PLANCTL_EINVAL);
    assert_int_equal(
        pctl_pg_uri_parse(&u, p, "postgres:///app?schema=a%3Bdrop"),
        PLANCTL_EINVAL);
    planctl_close(p);
}

/* The handle shows the URI without its password in every message. */
static void test_messages(void **state)
{
    planctl *p = NULL;

    (void)state;
    assert_int_equal(planctl_open(&p,
                                  "postgresql://app:hunter2@%2Fnonexistent/"
                                  "db?password=hunter3&connect_timeout=1",
                                  NULL),
                     PLANCTL_EIO);
    assert_null(strstr(planctl_errmsg(p), "hunter"));
    assert_non_null(strstr(planctl_errmsg(p), "postgresql://app@"));
    planctl_close(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redact),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_messages),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
static void test_without_postgres(void **state)
{
    planctl *p = NULL;

    (void)state;
    assert_int_equal(planctl_open(&p, "postgres://u:pw@h/db", NULL),
                     PLANCTL_EINVAL);
    assert_null(strstr(planctl_errmsg(p), "pw"));
    planctl_close(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_without_postgres),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
