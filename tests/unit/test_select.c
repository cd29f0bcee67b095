/*
 * test_select.c - which plan a change runs (DESIGN §4), as the pure
 * functions of core/select.c: the distinct explicit triggers of the
 * changed parameters; parameters without a trigger add nothing when one
 * has a trigger; none has one: update, else deploy; two or more distinct
 * triggers: refused, naming them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/def.h"
#include "core/ferr.h"
#include "core/select.h"
#include "planctl.h"
#include "testutil.h"

/* Parameters: A and B trigger backup, C triggers restart, N and M have no
 * trigger.  with_update chooses whether the definition has "update". */
#define PLAN(name)                                                             \
    "\"" name "\":{\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":"          \
    "\"s\",\"tasks\":[\"t\"]}]}]}"

static pctl_def *def(int with_update)
{
    char *json = tu_fmt(
        "{\"name\":\"s\",\"version\":\"1\",\"parameters\":["
        "{\"name\":\"A\",\"default\":\"a\",\"trigger\":\"backup\"},"
        "{\"name\":\"B\",\"default\":\"b\",\"trigger\":\"backup\"},"
        "{\"name\":\"C\",\"default\":\"c\",\"trigger\":\"restart\"},"
        "{\"name\":\"N\",\"default\":\"n\"},"
        "{\"name\":\"M\",\"default\":\"m\"}],"
        "\"tasks\":[{\"name\":\"t\",\"kind\":\"Dummy\"}],\"plans\":{" PLAN(
            "deploy") ",%s" PLAN("backup") "," PLAN("restart") "}}",
        with_update ? PLAN("update") "," : "");
    pctl_ferr_list l = PCTL_FERR_LIST_INIT;
    pctl_def *d = NULL;

    assert_int_equal(pctl_def_decode(&d, json, strlen(json), "s.json", &l), 0);
    pctl_ferr_list_clear(&l);
    free(json);
    return d;
}

/* The plan a change of the comma-separated names selects, or "!" and the
 * message when refused. */
static void expect(const pctl_def *d, const char *names, const char *want)
{
    const char *changed[8], *out = NULL;
    char buf[128], msg[256] = "";
    size_t n = 0;
    char *tok, *save = NULL;
    int rc;

    snprintf(buf, sizeof buf, "%s", names);
    for (tok = strtok_r(buf, ",", &save); tok && n < 8;
         tok = strtok_r(NULL, ",", &save))
        changed[n++] = tok;
    rc = pctl_select_for_params(&out, d, changed, n, msg, sizeof msg);
    if (rc == 0) {
        if (strcmp(out, want) != 0)
            fail_msg("%s: got plan %s, want %s", names, out, want);
    } else {
        assert_int_equal(rc, PLANCTL_EINVAL);
        assert_null(out);
        if (want[0] != '!' || strcmp(msg, want + 1) != 0)
            fail_msg("%s: refused \"%s\", want %s", names, msg, want);
    }
}

static void test_no_trigger(void **state)
{
    pctl_def *with = def(1), *without = def(0);

    (void)state;
    expect(with, "N", "update");
    expect(with, "N,M", "update");
    expect(without, "N", "deploy");
    expect(without, "M,N", "deploy");
    pctl_def_free(with);
    pctl_def_free(without);
}

static void test_one_trigger(void **state)
{
    pctl_def *d = def(1), *without = def(0);

    (void)state;
    expect(d, "A", "backup");
    expect(d, "A,B", "backup"); /* the same trigger twice: one plan */
    expect(d, "C", "restart");
    /* Parameters without a trigger add nothing beside one that has one,
     * in any order and with or without update in the definition. */
    expect(d, "N,A", "backup");
    expect(d, "A,N", "backup");
    expect(d, "N,A,M,B", "backup");
    expect(d, "M,C", "restart");
    expect(without, "N,C", "restart");
    expect(without, "A,M", "backup");
    pctl_def_free(d);
    pctl_def_free(without);
}

static void test_distinct_triggers_refused(void **state)
{
    pctl_def *d = def(1);

    (void)state;
    expect(d, "A,C",
           "!parameters A, C trigger different plans: backup, restart; "
           "change them separately");
    /* Only the parameters with a trigger are named: the others chose
     * nothing. */
    expect(d, "N,C,B",
           "!parameters C, B trigger different plans: backup, restart; "
           "change them separately");
    expect(d, "Z", "!unknown parameter \"Z\"");
    expect(d, "N,Z", "!unknown parameter \"Z\"");
    pctl_def_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_trigger),
        cmocka_unit_test(test_one_trigger),
        cmocka_unit_test(test_distinct_triggers_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
