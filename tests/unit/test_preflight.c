/*
 * test_preflight.c - preflight checks before admission (DESIGN §9) with
 * real shell checks: declaration order whatever finishes first, one
 * deadline with the late check killed and the others still reported,
 * failures versus internal errors, skip lists, events, and every
 * admitting call going through it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "engine/preflight.h"
#include "planctl.h"
#include "testutil.h"

typedef struct fixture {
    char *dir, *path;
    planctl *p;
    sqlite3 *db;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    f->dir = tu_mkdtemp();
    f->path = tu_fmt("%s/pf.db", f->dir);
    assert_int_equal(planctl_open(&f->p, f->path, NULL), 0);
    assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    sqlite3_close(f->db);
    planctl_close(f->p);
    tu_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

/* A definition whose deploy and backup plans have the given checks; each
 * check is "Name:command" run by sh. */
static void apply_checks(fixture *f, const char *deploy_checks,
                         const char *backup_checks)
{
    char *json = tu_fmt(
        "{\"name\":\"pf\",\"version\":\"1\",\"parameters\":[{\"name\":"
        "\"FREE\",\"default\":\"10\"}],\"tasks\":["
        "{\"name\":\"noop\",\"kind\":\"Dummy\"},"
        "{\"name\":\"ok\",\"kind\":\"shell\",\"spec\":{\"command\":\"exit "
        "0\"}},"
        "{\"name\":\"disk\",\"kind\":\"shell\",\"spec\":{\"command\":"
        "\"[ $PLANCTL_PARAM_FREE -ge 5 ] || { echo only $PLANCTL_PARAM_FREE "
        "GB free; exit 1; }\"}},"
        "{\"name\":\"slowfail\",\"kind\":\"shell\",\"spec\":{\"command\":"
        "\"sleep 0.3; echo slow cause; exit 1\"}},"
        "{\"name\":\"fastfail\",\"kind\":\"shell\",\"spec\":{\"command\":"
        "\"echo fast cause; exit 1\"}},"
        "{\"name\":\"broken\",\"kind\":\"shell\",\"spec\":{\"command\":"
        "\"echo cannot reach the API; exit 7\"}},"
        "{\"name\":\"lowdisk\",\"kind\":\"shell\",\"spec\":{\"command\":"
        "\"echo only 1 GiB free; exit 1\"}},"
        "{\"name\":\"sleeper\",\"kind\":\"shell\",\"spec\":{\"command\":"
        "\"echo $$ > %s/sleeper.pid; exec sleep 300\"}},"
        "{\"name\":\"fatal\",\"kind\":\"Dummy\",\"spec\":{\"wantErr\":true,"
        "\"fatal\":true}}],"
        "\"plans\":{"
        "\"deploy\":{\"preflight\":[%s],\"phases\":[{\"name\":\"p\","
        "\"steps\":[{\"name\":\"s\",\"tasks\":[\"noop\"]}]}]},"
        "\"backup\":{\"preflight\":[%s],\"phases\":[{\"name\":\"p\","
        "\"steps\":[{\"name\":\"s\",\"tasks\":[\"noop\"]}]}]}}}",
        f->dir, deploy_checks, backup_checks);

    if (planctl_definition_apply(NULL, f->p, json, strlen(json), "pf.json"))
        fail_msg("apply: %s", planctl_errmsg(f->p));
    free(json);
}

static void test_skip_lists(void **state)
{
    (void)state;
    assert_true(pctl_preflight_skip_all("all"));
    assert_true(pctl_preflight_skip_all(" aLL "));
    assert_true(pctl_preflight_skip_all(",all,,"));
    assert_false(pctl_preflight_skip_all("all,DiskSpace"));
    assert_false(pctl_preflight_skip_all(""));
    assert_false(pctl_preflight_skip_all(NULL));
    assert_true(pctl_preflight_skips("Quorum, diskspace ,", "DiskSpace"));
    assert_true(pctl_preflight_skips(" DISKSPACE", "DiskSpace"));
    assert_false(pctl_preflight_skips("Disk", "DiskSpace"));
    assert_false(pctl_preflight_skips(",,", "DiskSpace"));
    assert_false(pctl_preflight_skips(NULL, "DiskSpace"));
}

/* All pass: admitted, and the report says so. */
static void test_all_pass(void **state)
{
    fixture *f = *state;
    planctl_admitted ad;

    apply_checks(f,
                 "{\"name\":\"DiskSpace\",\"task\":\"disk\"},"
                 "{\"name\":\"Ok\",\"task\":\"ok\"}",
                 "{\"name\":\"Ok\",\"task\":\"ok\"}");
    assert_int_equal(
        planctl_admit_create(&ad, f->p, "i", "pf", NULL, NULL, 0, NULL), 0);
    assert_true(ad.run > 0);
    assert_non_null(ad.preflight_report);
    assert_non_null(strstr(ad.preflight_report, "\"outcome\":\"passed\""));
    planctl_admitted_clear(&ad);
    assert_null(ad.preflight_report);
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM events WHERE "
                                      "entity = 'instance' AND message = "
                                      "'preflight of plan \"deploy\" "
                                      "passed'"),
                     1);
}

/* A failure refuses the run, naming every cause; nothing is admitted,
 * and the failure is in the log. */
static void test_failure_refuses(void **state)
{
    fixture *f = *state;
    planctl_admitted ad;
    int64_t run = 0;
    planctl_param low = {"FREE", "2"};

    apply_checks(f, "{\"name\":\"Ok\",\"task\":\"ok\"}",
                 "{\"name\":\"DiskSpace\",\"task\":\"disk\"},"
                 "{\"name\":\"Ok\",\"task\":\"ok\"}");
    assert_int_equal(
        planctl_instance_create(&run, f->p, "i", "pf", NULL, &low, 1), 0);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "i", NULL), 0);
    assert_int_equal(planctl_admit_trigger(&ad, f->p, "i", "backup", NULL),
                     PLANCTL_EPREFLIGHT);
    assert_string_equal(planctl_errmsg(f->p),
                        "preflight checks failed: DiskSpace: only 2 GB free");
    assert_int_equal(ad.run, 0);
    assert_int_equal(
        tu_scalar(f->db, "SELECT count(*) FROM runs WHERE plan = 'backup'"), 0);
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM events WHERE entity = "
                               "'instance' AND message = 'preflight checks "
                               "failed: DiskSpace: only 2 GB free'"),
                     1);
    /* The refusal hands back the report, with every check, in order. */
    assert_non_null(ad.preflight_report);
    assert_non_null(strstr(ad.preflight_report,
                           "\"checks\":[{\"name\":\"DiskSpace\",\"status\":"
                           "\"failed\",\"message\":\"only 2 GB free\"},"
                           "{\"name\":\"Ok\",\"status\":\"passed\",\"message\":"
                           "null}]"));
    planctl_admitted_clear(&ad);
    /* The id-only form refuses the same way. */
    assert_int_equal(planctl_plan_trigger(&run, f->p, "i", "backup", NULL),
                     PLANCTL_EPREFLIGHT);
    assert_int_equal(run, 0);
}

/* Results in declaration order, whatever finished first. */
static void test_declaration_order(void **state)
{
    fixture *f = *state;
    int64_t run = 0;

    apply_checks(f,
                 "{\"name\":\"Slow\",\"task\":\"slowfail\"},"
                 "{\"name\":\"Fast\",\"task\":\"fastfail\"},"
                 "{\"name\":\"Fatal\",\"task\":\"fatal\"}",
                 "");
    assert_int_equal(
        planctl_instance_create(&run, f->p, "i", "pf", NULL, NULL, 0),
        PLANCTL_EPREFLIGHT);
    assert_string_equal(planctl_errmsg(f->p),
                        "preflight checks failed: Slow: slow cause; Fast: "
                        "fast cause; Fatal: fatal: true");
    /* A refused create leaves no instance behind. */
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM instances"), 0);
}

/* Internal errors take precedence over failures for the code; the
 * failures are still listed, in declaration order. */
static void test_internal_error_precedence(void **state)
{
    fixture *f = *state;
    planctl_admitted ad;

    apply_checks(f,
                 "{\"name\":\"Fails\",\"task\":\"fastfail\"},"
                 "{\"name\":\"Broken\",\"task\":\"broken\"}",
                 "");
    assert_int_equal(
        planctl_admit_create(&ad, f->p, "i", "pf", NULL, NULL, 0, NULL),
        PLANCTL_ERROR);
    assert_string_equal(planctl_errmsg(f->p),
                        "preflight checks failed: Fails: fast cause; Broken: "
                        "internal error: exit status 7: cannot reach the API");
    assert_non_null(ad.preflight_report);
    assert_non_null(strstr(ad.preflight_report, "\"outcome\":\"error\""));
    planctl_admitted_clear(&ad);
}

/* The process of the check that missed its deadline was killed: it wrote
 * its pid to sleeper.pid in the fixture's directory. */
static void expect_sleeper_gone(fixture *f)
{
    char *pidpath = tu_fmt("%s/sleeper.pid", f->dir);
    char *pid = tu_read_file(pidpath, NULL);

    assert_non_null(pid);
    tu_expect_gone(atoi(pid), "the timed-out check");
    free(pid);
    free(pidpath);
}

/* One deadline: the sleeper is stopped and reported, the others' results
 * still come back, and the summary comes on time. */
static void test_deadline(void **state)
{
    fixture *f = *state;
    planctl_admit_options o = PLANCTL_ADMIT_OPTIONS_INIT;
    planctl_admitted ad;
    struct timespec a, b;
    int64_t ms;

    apply_checks(f,
                 "{\"name\":\"Sleeper\",\"task\":\"sleeper\"},"
                 "{\"name\":\"Fast\",\"task\":\"fastfail\"},"
                 "{\"name\":\"Ok\",\"task\":\"ok\"}",
                 "");
    o.preflight_deadline_ms = 400;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(
        planctl_admit_create(&ad, f->p, "i", "pf", NULL, NULL, 0, &o),
        PLANCTL_ERROR);
    clock_gettime(CLOCK_MONOTONIC, &b);
    ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
    assert_string_equal(planctl_errmsg(f->p),
                        "preflight checks failed: Sleeper: internal error: "
                        "timed out after 400ms; Fast: fast cause");
    assert_non_null(ad.preflight_report);
    assert_non_null(strstr(ad.preflight_report,
                           "{\"name\":\"Fast\",\"status\":\"failed\","
                           "\"message\":\"fast cause\"},{\"name\":\"Ok\","
                           "\"status\":\"passed\",\"message\":null}"));
    planctl_admitted_clear(&ad);
    /* Not a timing test: a bound far above the deadline, to catch a
     * summary that waited for the sleeper (300 s). */
    assert_true(ms < 400 + 5000);
    expect_sleeper_gone(f);
}

/* A check that misses the deadline hides nothing (issue 14): every
 * cause comes back in declaration order, though the timed-out check,
 * first declared, finishes last; the internal one is marked as such and
 * decides the code. */
static void test_every_cause_despite_timeout(void **state)
{
    fixture *f = *state;
    planctl_admit_options o = PLANCTL_ADMIT_OPTIONS_INIT;
    planctl_admitted ad;
    const char *why = "preflight checks failed: Sleepy: internal error: "
                      "timed out after 2s; DiskSpace: only 1 GiB free";
    int64_t run = 0;

    apply_checks(f, "",
                 "{\"name\":\"Sleepy\",\"task\":\"sleeper\"},"
                 "{\"name\":\"DiskSpace\",\"task\":\"lowdisk\"},"
                 "{\"name\":\"Fine\",\"task\":\"ok\"}");
    assert_int_equal(
        planctl_instance_create(&run, f->p, "i", "pf", NULL, NULL, 0), 0);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "i", NULL), 0);
    /* Far above what the other two checks take, far below the sleeper's
     * 300 s: the outcome does not depend on timing. */
    o.preflight_deadline_ms = 2000;
    assert_int_equal(planctl_admit_trigger(&ad, f->p, "i", "backup", &o),
                     PLANCTL_ERROR);
    assert_int_equal(ad.run, 0);
    assert_string_equal(planctl_errmsg(f->p), why);
    assert_non_null(ad.preflight_report);
    assert_string_equal(
        ad.preflight_report,
        "{\"schema\":1,\"plan\":\"backup\",\"outcome\":\"error\","
        "\"checks\":[{\"name\":\"Sleepy\",\"status\":\"error\","
        "\"message\":\"timed out after 2s\"},{\"name\":\"DiskSpace\","
        "\"status\":\"failed\",\"message\":\"only 1 GiB free\"},"
        "{\"name\":\"Fine\",\"status\":\"passed\",\"message\":null}],"
        "\"warnings\":[]}");
    planctl_admitted_clear(&ad);
    /* The log keeps the same message. */
    assert_int_equal(tu_scalar(f->db,
                               "SELECT count(*) FROM events WHERE entity = "
                               "'instance' AND message = '%s'",
                               why),
                     1);
    assert_int_equal(
        tu_scalar(f->db, "SELECT count(*) FROM runs WHERE plan = 'backup'"), 0);
    expect_sleeper_gone(f);
}

/* Skips: named ones with a warning each, "all" alone for every one. */
static void test_skips(void **state)
{
    fixture *f = *state;
    planctl_admit_options o = PLANCTL_ADMIT_OPTIONS_INIT;
    planctl_admitted ad;

    apply_checks(f,
                 "{\"name\":\"DiskSpace\",\"task\":\"fastfail\"},"
                 "{\"name\":\"Quorum\",\"task\":\"broken\"}",
                 "{\"name\":\"Ok\",\"task\":\"ok\"}");
    o.preflight_skip = " diskspace, QUORUM ";
    assert_int_equal(
        planctl_admit_create(&ad, f->p, "i", "pf", NULL, NULL, 0, &o), 0);
    assert_non_null(ad.preflight_report);
    assert_non_null(strstr(ad.preflight_report,
                           "\"warnings\":[\"preflight check DiskSpace "
                           "skipped\",\"preflight check Quorum skipped\"]"));
    planctl_admitted_clear(&ad);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "i", NULL), 0);
    /* "all,DiskSpace" is not "all": Quorum runs (and breaks). */
    o.preflight_skip = "all,DiskSpace";
    assert_int_equal(planctl_admit_trigger(&ad, f->p, "i", "deploy", &o),
                     PLANCTL_ERROR);
    planctl_admitted_clear(&ad);
    o.preflight_skip = ",ALL,,";
    assert_int_equal(planctl_admit_trigger(&ad, f->p, "i", "deploy", &o), 0);
    planctl_admitted_clear(&ad);
    /* Nothing stays on the handle: without the options Quorum runs
     * again. */
    assert_int_equal(planctl_run_cancel(NULL, f->p, "i", NULL), 0);
    assert_int_equal(planctl_admit_trigger(&ad, f->p, "i", "deploy", NULL),
                     PLANCTL_ERROR);
    planctl_admitted_clear(&ad);
    /* The skips are in the log, with the report. */
    assert_true(tu_scalar(f->db, "SELECT count(*) FROM events WHERE data "
                                 "LIKE '%%\"status\":\"skipped\"%%'") >= 2);
}

/* Every admitting call goes through preflight; a refusal the store would
 * give anyway comes first, without running any check. */
static void test_every_admission(void **state)
{
    fixture *f = *state;
    planctl_admit_options o = PLANCTL_ADMIT_OPTIONS_INIT;
    planctl_admitted ad;
    int64_t run = 0;
    planctl_param low = {"FREE", "1"};
    char *pidpath;

    apply_checks(f,
                 "{\"name\":\"DiskSpace\",\"task\":\"disk\"},"
                 "{\"name\":\"Sleeper\",\"task\":\"sleeper\"}",
                 "");
    pidpath = tu_fmt("%s/sleeper.pid", f->dir);
    /* An unknown instance: refused before any check runs. */
    assert_int_equal(planctl_plan_trigger(&run, f->p, "nope", "deploy", NULL),
                     PLANCTL_ENOTFOUND);
    assert_int_not_equal(access(pidpath, F_OK), 0);
    o.preflight_skip = "sleeper";
    assert_int_equal(
        planctl_admit_create(&ad, f->p, "i", "pf", NULL, NULL, 0, &o), 0);
    planctl_admitted_clear(&ad);
    assert_int_equal(planctl_run_cancel(NULL, f->p, "i", NULL), 0);
    /* set (runs deploy: no update plan) */
    assert_int_equal(planctl_admit_set(&ad, f->p, "i", &low, 1, &o),
                     PLANCTL_EPREFLIGHT);
    planctl_admitted_clear(&ad);
    /* the change was not saved either */
    assert_int_equal(tu_scalar(f->db, "SELECT count(*) FROM instances WHERE "
                                      "params LIKE '%%FREE%%'"),
                     0);
    /* retry of the cancelled deploy: passes (FREE is 10 in its snapshot) */
    assert_int_equal(planctl_admit_retry(&ad, f->p, "i", 0, &o), 0);
    assert_true(ad.run > 0);
    planctl_admitted_clear(&ad);
    free(pidpath);
}

/* An instance that changes under its checks every time is never admitted
 * on checks of what it was: each run of the check upgrades the instance
 * to the next definition version (through the real CLI, another process)
 * and cancels that run, so every round the store finds another
 * definition than the checks passed for.  After three rounds the call
 * gives up with EBUSY, saying so, and admits nothing. */
static void test_gives_up_when_it_keeps_changing(void **state)
{
    fixture *f = *state;
    const char *bin = getenv("PLANCTL_BIN");
    int64_t run = 0;
    int v;

    if (!bin)
        fail_msg("PLANCTL_BIN is not set (ctest sets it to the planctl "
                 "binary)");
    for (v = 1; v <= 6; v++) {
        char *json =
            tu_fmt("{\"name\":\"pf\",\"version\":\"%d\",\"tasks\":["
                   "{\"name\":\"noop\",\"kind\":\"Dummy\"},"
                   "{\"name\":\"churn\",\"kind\":\"shell\",\"spec\":{"
                   "\"command\":\"n=$(cat %s/n 2>/dev/null || echo 1); "
                   "n=$((n + 1)); echo $n > %s/n; '%s' --db '%s' upgrade i "
                   "--version $n >/dev/null && '%s' --db '%s' cancel i "
                   ">/dev/null\"}}],"
                   "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\","
                   "\"steps\":[{\"name\":\"s\",\"tasks\":[\"noop\"]}]}]},"
                   "\"backup\":{\"preflight\":[{\"name\":\"Churn\","
                   "\"task\":\"churn\"}],\"phases\":[{\"name\":\"p\","
                   "\"steps\":[{\"name\":\"s\",\"tasks\":[\"noop\"]}]}]}}}",
                   v, f->dir, f->dir, bin, f->path, bin, f->path);

        if (planctl_definition_apply(NULL, f->p, json, strlen(json), "pf.json"))
            fail_msg("apply: %s", planctl_errmsg(f->p));
        free(json);
    }
    assert_int_equal(
        planctl_instance_create(&run, f->p, "i", "pf", "1", NULL, 0), 0);
    assert_int_equal(planctl_run_cancel(&run, f->p, "i", NULL), 0);

    assert_int_equal(planctl_plan_trigger(&run, f->p, "i", "backup", NULL),
                     PLANCTL_EBUSY);
    assert_non_null(strstr(planctl_errmsg(f->p),
                           "changed while its preflight checks ran, 3 times"));
    /* Three rounds of checks, each moving the instance on a version. */
    assert_int_equal(tu_scalar(f->db, "SELECT d.version FROM instances i "
                                      "JOIN definitions d ON d.id = "
                                      "i.definition_id WHERE i.name = 'i'"),
                     4);
    assert_int_equal(
        tu_scalar(f->db, "SELECT count(*) FROM runs WHERE plan = 'backup'"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skip_lists),
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_all_pass),
        T(test_failure_refuses),
        T(test_declaration_order),
        T(test_internal_error_precedence),
        T(test_deadline),
        T(test_every_cause_despite_timeout),
        T(test_skips),
        T(test_every_admission),
        T(test_gives_up_when_it_keeps_changing),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
