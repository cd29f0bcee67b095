/*
 * test_gc.c - gc beside a running engine: another process removing old
 * runs in small batches never stops the engine from finishing its work,
 * neither call fails, and the tables still agree with the log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "planctl.h"
#include "testutil.h"

#define INSTANCES 10
#define OLD_BACKUPS 12

#define GC_DEF                                                                 \
    "{\"name\":\"g\",\"version\":\"1\",\"tasks\":["                            \
    "{\"name\":\"quick\",\"kind\":\"Dummy\"},"                                 \
    "{\"name\":\"nap\",\"kind\":\"Dummy\",\"spec\":{\"sleep\":\"40ms\"}}],"    \
    "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["           \
    "{\"name\":\"s\",\"tasks\":[\"quick\"]}]}]},"                              \
    "\"backup\":{\"phases\":[{\"name\":\"p\",\"steps\":["                      \
    "{\"name\":\"a\",\"tasks\":[\"nap\"]},{\"name\":\"b\",\"tasks\":"          \
    "[\"nap\"]},{\"name\":\"c\",\"tasks\":[\"nap\"]}]}]}}}"

/* The other process: gc, one run per transaction, until a pass removes
 * nothing; exit 0 if every call succeeded, 1 otherwise. */
static int gc_loop(const char *path)
{
    planctl_gc_options o = PLANCTL_GC_OPTIONS_INIT;
    planctl *p;
    char *out = NULL;
    int calls = 0, rc;

    if (planctl_open(&p, path, NULL) != 0)
        return 1;
    o.keep_last = 1;
    o.batch = 1;
    for (;;) {
        rc = planctl_gc(&out, p, &o);
        calls++;
        if (rc != 0) {
            fprintf(stderr, "gc: %s\n", planctl_errmsg(p));
            planctl_close(p);
            return 1;
        }
        if (strstr(out, "\"removed\":0") && calls > 1) {
            planctl_free(out);
            break;
        }
        planctl_free(out);
    }
    planctl_close(p);
    return 0;
}

static void test_gc_beside_running_engine(void **state)
{
    char *dir = tu_mkdtemp(), *file = tu_fmt("%s/gc.db", dir);
    char *path = tu_db_target(file);
    char name[16], *out = NULL;
    planctl *p;
    int64_t r;
    int i, k, status;
    pid_t pid;

    (void)state;
    assert_int_equal(planctl_open(&p, path, NULL), 0);
    assert_int_equal(
        planctl_definition_apply(NULL, p, GC_DEF, strlen(GC_DEF), "g.json"), 0);
    for (i = 0; i < INSTANCES; i++) {
        snprintf(name, sizeof name, "i%d", i);
        tu_ok(p, planctl_instance_create(&r, p, name, "g", NULL, NULL, 0));
    }
    assert_int_equal(tu_engine_until_idle(p), 0);
    /* History: old backups, terminal, most of them gc's to remove. */
    for (k = 0; k < OLD_BACKUPS; k++) {
        for (i = 0; i < INSTANCES; i++) {
            snprintf(name, sizeof name, "i%d", i);
            tu_ok(p, planctl_plan_trigger(&r, p, name, "backup", NULL));
        }
        assert_int_equal(tu_engine_until_idle(p), 0);
    }
    /* New work for the engine, while gc runs in another process. */
    for (i = 0; i < INSTANCES; i++) {
        snprintf(name, sizeof name, "i%d", i);
        tu_ok(p, planctl_plan_trigger(&r, p, name, "backup", NULL));
    }
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(gc_loop(path));
    assert_int_equal(tu_engine_until_idle(p), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    {
        tu_raw *db = tu_raw_open(path);

        /* The engine finished every new run. */
        assert_int_equal(tu_raw_scalar(db,
                                       "SELECT count(*) FROM runs WHERE id > "
                                       "%d AND status = 'COMPLETE'",
                                       INSTANCES * (1 + OLD_BACKUPS)),
                         INSTANCES);
        assert_int_equal(tu_raw_scalar(db, "SELECT count(*) FROM runs WHERE "
                                           "status <> 'COMPLETE'"),
                         0);
        /* gc left at most the newest two backups of each instance (the
         * newest when it looked may since have been overtaken). */
        assert_true(tu_raw_scalar(db, "SELECT count(*) FROM runs WHERE plan = "
                                      "'backup'") <= 2 * INSTANCES);
        tu_raw_close(db);
    }
    if (planctl_verify(&out, p) != 0)
        fail_msg("verify: %s", planctl_errmsg(p));
    planctl_free(out);
    planctl_close(p);
    tu_rmtree(dir);
    free(path);
    free(file);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gc_beside_running_engine),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
