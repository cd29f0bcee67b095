/*
 * test_kinds.c - the one registry of task kinds (src/core/kinds.c): a
 * kind's spec check and its executor are set apart and kept apart; an
 * engine's executors go with it and the kinds stay known; a built-in kind
 * given an executor keeps its own spec rules.
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
#include "core/kinds.h"
#include "core/pipeline.h"

static int check_ok(const char *spec, char *err, size_t size, void *data)
{
    (void)spec;
    (void)err;
    (void)size;
    (void)data;
    return 0;
}

static int start(planctl_job *job, const planctl_task_info *info, void *data)
{
    (void)job;
    (void)info;
    (void)data;
    return 0;
}

static void cancel(planctl_job *job, void *data)
{
    (void)job;
    (void)data;
}

static const planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, start, cancel,
                                    NULL, NULL};

static void test_check_and_executor_kept_apart(void **state)
{
    pctl_kinds k = PCTL_KINDS_INIT;
    char sentinel;

    (void)state;
    assert_int_equal(pctl_kinds_add(&k, "File", check_ok, &sentinel), 0);
    assert_null(pctl_kinds_executor(&k, "File"));
    assert_int_equal(pctl_kinds_set_executor(&k, "File", &ex), 0);
    assert_ptr_equal(pctl_kinds_find(&k, "File")->check, check_ok);
    assert_ptr_equal(pctl_kinds_find(&k, "File")->data, &sentinel);
    assert_ptr_equal(pctl_kinds_executor(&k, "File")->start, start);
    /* A check registered after keeps the executor. */
    assert_int_equal(pctl_kinds_add(&k, "File", NULL, NULL), 0);
    assert_ptr_equal(pctl_kinds_executor(&k, "File")->start, start);
    /* An executor for a new kind makes it known, without a check. */
    assert_int_equal(pctl_kinds_set_executor(&k, "Web", &ex), 0);
    assert_null(pctl_kinds_find(&k, "Web")->check);
    assert_int_equal(k.n, 2);
    /* The engine's executors go; the kinds and checks stay. */
    assert_int_equal(pctl_kinds_add(&k, "File", check_ok, NULL), 0);
    pctl_kinds_drop_executors(&k);
    assert_null(pctl_kinds_executor(&k, "File"));
    assert_null(pctl_kinds_executor(&k, "Web"));
    assert_ptr_equal(pctl_kinds_find(&k, "File")->check, check_ok);
    assert_non_null(pctl_kinds_find(&k, "Web"));
    assert_null(pctl_kinds_executor(NULL, "File"));
    assert_null(pctl_kinds_executor(&k, "Nope"));
    pctl_kinds_clear(&k);
}

static void test_bad_names(void **state)
{
    pctl_kinds k = PCTL_KINDS_INIT;
    char long_name[PCTL_KIND_MAX + 2];

    (void)state;
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    assert_int_equal(pctl_kinds_set_executor(&k, "", &ex), PLANCTL_EINVAL);
    assert_int_equal(pctl_kinds_set_executor(&k, NULL, &ex), PLANCTL_EINVAL);
    assert_int_equal(pctl_kinds_set_executor(&k, long_name, &ex),
                     PLANCTL_EINVAL);
    assert_int_equal(pctl_kinds_set_executor(&k, "File", NULL), PLANCTL_EINVAL);
    assert_int_equal(k.n, 0);
    long_name[PCTL_KIND_MAX] = '\0';
    assert_int_equal(pctl_kinds_set_executor(&k, long_name, &ex), 0);
    pctl_kinds_clear(&k);
}

/* The engine registers its built-ins' executors: "Dummy" is then in the
 * registry without a check, and a Dummy spec is still held to Dummy's own
 * rules; the list of supported kinds names it once. */
static void test_builtin_with_executor_keeps_its_rules(void **state)
{
    static const char def[] =
        "{\"name\":\"d\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","
        "\"kind\":\"Dummy\",\"spec\":{\"nope\":1}},{\"name\":\"u\","
        "\"kind\":\"Dumy\"}],\"plans\":{\"deploy\":{\"phases\":[{\"name\":"
        "\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":[\"t\",\"u\"]}]}]}}}";
    pctl_kinds k = PCTL_KINDS_INIT;
    pctl_def_opts opts = PCTL_DEF_OPTS_INIT;
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    pctl_def *d = NULL;
    char *all = NULL;
    size_t i, len = 0;

    (void)state;
    assert_int_equal(pctl_kinds_set_executor(&k, "Dummy", &ex), 0);
    assert_int_equal(pctl_kinds_set_executor(&k, "shell", &ex), 0);
    opts.kinds = &k;
    opts.workers = 1;
    assert_int_equal(
        pctl_def_parse(&d, def, strlen(def), "d.json", &opts, &errs),
        PLANCTL_EDEFINITION);
    for (i = 0; i < errs.n; i++) {
        char *line = pctl_ferr_render(&errs.items[i]);

        all = realloc(all, len + strlen(line) + 2);
        sprintf(all + len, "%s\n", line);
        len += strlen(line) + 1;
        free(line);
    }
    assert_non_null(strstr(all, "nope"));
    assert_non_null(strstr(all, "\"Dumy\""));
    assert_non_null(strstr(all, "supported values: \"Dummy\", \"shell\" "));
    free(all);
    pctl_ferr_list_clear(&errs);
    pctl_kinds_clear(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_and_executor_kept_apart),
        cmocka_unit_test(test_bad_names),
        cmocka_unit_test(test_builtin_with_executor_keeps_its_rules),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
