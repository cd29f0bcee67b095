/*
 * test_outputs.c - task outputs end to end, with real things: a real
 * SQLite file, the engine on a real loop, real shell processes writing
 * $PLANCTL_OUTPUT, and an embedder's executor reporting through the C
 * API.  Covers an output passed from one step to a later one, the
 * multi-line and secret forms, refusals (a malformed line, the size
 * limit), retries (a retried step's last attempt; a retry run carrying
 * outputs over), the event log (replay, verify, export and import), and
 * that outputs and the completion are written in one transaction.
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
#include <sqlite3.h>
#include <uv.h>

#include "planctl.h"
#include "testutil.h"

typedef tu_db fixture;

static int setup(void **state)
{
    *state = tu_db_open("out.db", 1);
    return 0;
}

static int teardown(void **state)
{
    return tu_db_close(*state);
}

static void expect_file(const char *path, const char *want)
{
    char *got = tu_read_file(path, NULL);

    if (!got || strcmp(got, want) != 0)
        fail_msg("%s\n  got:  %s\n  want: %s", path, got ? got : "(null)",
                 want);
    free(got);
}

/* The step's own outputs (task_outputs attempt 0), of steps s chosen by
 * what follows. */
#define STEP_OUTPUTS                                                           \
    "SELECT o.outputs FROM task_outputs o JOIN steps s ON s.id = o.step_id "   \
    "AND o.attempt = 0 "

/* A one-phase serial plan of the given steps, each with one task of the
 * same name; tasks is the "tasks" array's inside. */
/* The step's own outputs (task_outputs attempt 0), of steps s chosen by
 * what follows. */
#define STEP_OUTPUTS                                                           \
    "SELECT o.outputs FROM task_outputs o JOIN steps s ON s.id = o.step_id "   \
    "AND o.attempt = 0 "

#define DEF(name, tasks, steps)                                                \
    "{\"name\":\"" name "\",\"version\":\"1\",\"tasks\":[" tasks "],"          \
    "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":[" steps     \
    "]}]}}}"
#define SH(name, cmd)                                                          \
    "{\"name\":\"" name "\",\"kind\":\"shell\",\"spec\":{\"command\":\"" cmd   \
    "\"}}"
#define STEP(name, attempts)                                                   \
    "{\"name\":\"" name "\",\"tasks\":[\"" name                                \
    "\"],\"retry\":{\"attempts\":" #attempts ",\"backoff\":\"10ms\"}}"

/* gen-cert writes a plain, a multi-line and a secret output; use (a later
 * step) writes what it was given to seen. */
static const char pass_def[] = DEF(
    "pipe",
    SH("gen-cert",
       "printf 'CERT=abc=d\\\\nPEM<<EOF\\\\nline 1\\\\n\\\\nline "
       "3\\\\nEOF\\\\n::secret::PASS=hunter2\\\\n' > "
       "\\\"$PLANCTL_OUTPUT\\\"") "," SH("use",
                                         "printf '%s|%s|%s' "
                                         "\\\"$PLANCTL_OUTPUT_GEN_CERT_"
                                         "CERT\\\" "
                                         "\\\"$PLANCTL_OUTPUT_GEN_CERT_PEM\\\" "
                                         "\\\"$PLANCTL_OUTPUT_GEN_CERT_"
                                         "PASS\\\" > seen"),
    STEP("gen-cert", 1) "," STEP("use", 1));

static void test_passed_to_a_later_step(void **state)
{
    fixture *f = *state;
    planctl_status_options so = PLANCTL_STATUS_OPTIONS_INIT;
    char *status = NULL, *replay = NULL, *verify = NULL;
    int64_t run;

    tu_apply(f->p, pass_def);
    run = tu_create(f->p, "zk", "pipe");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    expect_file("seen", "abc=d|line 1\n\nline 3|hunter2");
    /* Stored with the attempt and the step, and in the completion event. */
    tu_expect_text(
        f->db,
        "{\"CERT\":\"abc=d\",\"PEM\":\"line 1\\n\\nline 3\","
        "\"PASS\":{\"secret\":\"hunter2\"}}",
        "SELECT o.outputs FROM task_outputs o JOIN steps s ON s.id = "
        "o.step_id WHERE s.name = 'gen-cert' AND o.attempt = 1");
    tu_expect_text(f->db, "1",
                   "SELECT count(DISTINCT outputs) FROM task_outputs WHERE "
                   "step_id = (SELECT id FROM steps WHERE name = 'gen-cert')");
    tu_expect_text(
        f->db, "hunter2",
        "SELECT json_extract(data, '$.outputs.PASS.secret') FROM "
        "events WHERE entity = 'step' AND to_status = 'COMPLETE' AND "
        "step_id = (SELECT id FROM steps WHERE name = 'gen-cert')");
    tu_expect_text(
        f->db, "0",
        "SELECT count(*) FROM task_outputs WHERE step_id = (SELECT id "
        "FROM steps WHERE name = 'use')");

    /* status shows them per step and attempt, the secret masked. */
    so.run = run;
    assert_int_equal(planctl_status_json(&status, f->p, "zk", &so), 0);
    assert_non_null(strstr(status, "\"PASS\":\"***\""));
    assert_non_null(strstr(status, "\"CERT\":\"abc=d\""));
    assert_null(strstr(status, "hunter2"));
    planctl_free(status);

    /* Replay at the last event says what status says; verify agrees. */
    assert_int_equal(planctl_status_json(&status, f->p, "zk", NULL), 0);
    assert_int_equal(planctl_replay_json(&replay, f->p, "zk", NULL), 0);
    assert_null(strstr(replay, "hunter2"));
    if (planctl_verify(&verify, f->p))
        fail_msg("verify: %s", planctl_errmsg(f->p));
    planctl_free(status);
    planctl_free(replay);
    planctl_free(verify);
}

/* Imports bundle into a new database beside f's as instance "zk2",
 * checks that verify agrees there, and returns gen-cert's own outputs as
 * stored (malloc'd), and in *status (if not NULL) the status document of
 * its run 1.  Fails the test on any error. */
static char *imported(fixture *f, const char *bundle, char **status)
{
    planctl_status_options so = PLANCTL_STATUS_OPTIONS_INIT;
    char *verify = NULL, *path = tu_fmt("%s/b.db", f->dir), *got;
    planctl *q;
    sqlite3 *db;

    assert_int_equal(planctl_open(&q, path, NULL), 0);
    if (planctl_import_json(NULL, q, bundle, strlen(bundle), "zk2"))
        fail_msg("import: %s", planctl_errmsg(q));
    if (planctl_verify(&verify, q))
        fail_msg("verify: %s", planctl_errmsg(q));
    so.run = 1;
    if (status)
        assert_int_equal(planctl_status_json(status, q, "zk2", &so), 0);
    planctl_close(q);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    got = tu_text(db, "%s", STEP_OUTPUTS "WHERE s.name = 'gen-cert'");
    sqlite3_close(db);
    planctl_free(verify);
    free(path);
    return got;
}

/* The bundle leaves the secret out; imported, verify still agrees and
 * the plain outputs are there. */
static void test_export_import(void **state)
{
    fixture *f = *state;
    char *bundle = NULL, *got;

    tu_apply(f->p, pass_def);
    tu_create(f->p, "zk", "pipe");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    assert_int_equal(planctl_export_json(&bundle, f->p, "zk"), 0);
    /* (The definition's command names the value; the rows must not.) */
    assert_null(strstr(bundle, "secret\\\":\\\"hunter2"));
    assert_non_null(strstr(bundle, "secret\\\":null"));
    assert_non_null(strstr(bundle, "abc=d"));
    got = imported(f, bundle, NULL);
    assert_string_equal(got, "{\"CERT\":\"abc=d\",\"PEM\":\"line 1\\n\\nline "
                             "3\",\"PASS\":{\"secret\":null}}");
    free(got);
    planctl_free(bundle);
}

/* Asked for, the bundle holds the secret in clear, in the rows and in the
 * events; imported, the value is back where it was, verify agrees and
 * status still masks it.  An unknown options version is refused. */
static void test_export_include_secrets(void **state)
{
    fixture *f = *state;
    planctl_export_options eo = PLANCTL_EXPORT_OPTIONS_INIT;
    char *bundle = NULL, *status = NULL, *got;

    tu_apply(f->p, pass_def);
    tu_create(f->p, "zk", "pipe");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    eo.include_secrets = 1;
    if (planctl_export(&bundle, f->p, "zk", &eo))
        fail_msg("export: %s", planctl_errmsg(f->p));
    /* The step's and the attempt's rows, and the completion event. */
    assert_int_equal(tu_count(bundle, "\\\"secret\\\":\\\"hunter2\\\""), 3);
    assert_null(strstr(bundle, "secret\\\":null"));
    got = imported(f, bundle, &status);
    assert_string_equal(got, "{\"CERT\":\"abc=d\",\"PEM\":\"line 1\\n\\nline "
                             "3\",\"PASS\":{\"secret\":\"hunter2\"}}");
    assert_non_null(strstr(status, "\"PASS\":\"***\""));
    assert_null(strstr(status, "hunter2"));
    free(got);
    planctl_free(status);

    planctl_free(bundle);
    bundle = NULL;
    eo.version = PLANCTL_EXPORT_OPTIONS_VERSION + 1;
    assert_int_equal(planctl_export(&bundle, f->p, "zk", &eo), PLANCTL_EINVAL);
    assert_string_equal(planctl_errmsg(f->p),
                        "unknown export options version 2");
    assert_null(bundle);
}

static void test_refusals(void **state)
{
    fixture *f = *state;

    tu_apply(f->p, DEF("bad",
                       SH("bad", "printf 'OK=1\\\\nnot an output\\\\n' > "
                                 "\\\"$PLANCTL_OUTPUT\\\""),
                       STEP("bad", 1)));
    tu_create(f->p, "a", "bad");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    tu_expect_text(
        f->db,
        "PLANCTL_OUTPUT line 2: \"not an output\" is not KEY=VALUE or "
        "KEY<<DELIMITER (a KEY is letters, digits and _, not "
        "starting with a digit)",
        "SELECT message FROM steps WHERE name = 'bad'");
    tu_expect_text(f->db, "FATAL_ERROR", "SELECT status FROM steps");

    tu_apply(f->p, DEF("big",
                       SH("big", "printf 'BIG=%070000d\\\\n' 0 > "
                                 "\\\"$PLANCTL_OUTPUT\\\""),
                       STEP("big", 1)));
    tu_create(f->p, "b", "big");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    tu_expect_text(f->db,
                   "PLANCTL_OUTPUT line 1: outputs of one attempt are limited "
                   "to 64 KiB; these would be 70003 bytes (keys and values)",
                   "SELECT message FROM steps WHERE name = 'big'");

    tu_apply(
        f->p,
        DEF("open",
            SH("open", "printf 'K<<END\\\\nx\\\\n' > \\\"$PLANCTL_OUTPUT\\\""),
            STEP("open", 1)));
    tu_create(f->p, "c", "open");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    tu_expect_text(f->db,
                   "PLANCTL_OUTPUT line 1: no line \"END\" ends the value of K",
                   "SELECT message FROM steps WHERE name = 'open'");
}

/* A step retried: its outputs are its last attempt's, each attempt keeps
 * its own.  A retry run carries a completed step's outputs over. */
static void test_retries(void **state)
{
    fixture *f = *state;
    int64_t run, again = 0;

    tu_apply(
        f->p,
        DEF("retry",
            SH("gen",
               "echo N=$PLANCTL_ATTEMPT > \\\"$PLANCTL_OUTPUT\\\"; "
               "[ $PLANCTL_ATTEMPT -gt 1 ]") "," SH("use",
                                                    "[ -e go ] && printf %s "
                                                    "\\\"$PLANCTL_OUTPUT_GEN_"
                                                    "N\\\" "
                                                    "> seen"),
            STEP("gen", 2) "," STEP("use", 1)));
    run = tu_create(f->p, "r", "retry");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    tu_expect_text(f->db, "{\"N\":\"1\"}|{\"N\":\"2\"}",
                   "SELECT group_concat(outputs, '|') FROM (SELECT o.outputs "
                   "FROM task_outputs o JOIN steps s ON s.id = o.step_id WHERE "
                   "s.name = 'gen' AND o.attempt > 0 ORDER BY o.attempt)");
    tu_expect_text(f->db, "{\"N\":\"2\"}", STEP_OUTPUTS "WHERE s.name = 'gen'");
    tu_expect_text(f->db, "FATAL_ERROR",
                   "SELECT status FROM runs WHERE id = %lld", (long long)run);

    assert_int_equal(tu_write_file("go", "", 0), 0);
    if (planctl_run_retry(&again, f->p, "r", run))
        fail_msg("retry: %s", planctl_errmsg(f->p));
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)again);
    expect_file("seen", "2");
    tu_expect_text(f->db, "{\"N\":\"2\"}",
                   STEP_OUTPUTS "WHERE s.name = 'gen' AND s.run_id = %lld",
                   (long long)again);
}

/* ---- a crash between two tasks of one step ---- */

/* gen's first task writes A=1; its second records what it sees, and in
 * the first try then waits to be killed (its pid in "started"). */
static const char crash_def[] =
    "{\"name\":\"crash\",\"version\":\"1\","
    "\"tasks\":[" SH(
        "t1",
        "echo A=1 > "
        "\\\"$PLANCTL_"
        "OUTPUT\\\"") "," SH("t2", "printf %s "
                                   "\\\"$PLANCTL_OUTPUT_"
                                   "GEN_A\\\" > "
                                   "seen$PLANCTL_"
                                   "ATTEMPT; if [ "
                                   "$PLANCTL_ATTEMPT = "
                                   "1 ]; then echo $$ > "
                                   "s.tmp && mv s.tmp "
                                   "started && exec "
                                   "sleep 30; fi") "],\"plans\":{\"deploy\":{"
                                                   "\"phases\":[{\"name\":"
                                                   "\"p\",\"steps\":["
                                                   "{\"name\":\"gen\","
                                                   "\"tasks\":[\"t1\",\"t2\"],"
                                                   "\"retry\":{\"attempts\":2,"
                                                   "\"backoff\":\"10ms\"}}]}]}"
                                                   "}}";

/* The engine (a real `planctl run` child) is killed with SIGKILL while
 * the step is between its tasks: the first done, the second running.
 * The outputs of the first were recorded with the move to the second, so
 * the retry after the restart, which resumes at the second task, sees
 * them; the interrupted try keeps them, and its event carries them. */
static void test_crash_between_tasks(void **state)
{
    fixture *f = *state;
    const char *bin = getenv("PLANCTL_BIN");
    char *verify = NULL, *pidtext = NULL;
    int64_t run;
    pid_t pid;
    int st, i;

    if (!bin)
        fail_msg("PLANCTL_BIN is not set: run this test with ctest, or set "
                 "it to the planctl binary");
    tu_apply(f->p, crash_def);
    run = tu_create(f->p, "c", "crash");
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) ||
            !freopen("engine.err", "w", stderr))
            _exit(126);
        execl(bin, bin, "--db", f->path, "run", (char *)NULL);
        _exit(127);
    }
    for (i = 0; i < 1000 && !(pidtext = tu_read_file("started", NULL)); i++)
        usleep(10000);
    if (!pidtext) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("the second task never started");
    }
    tu_expect_text(f->db, "1",
                   "SELECT task_index FROM steps WHERE name = 'gen'");
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    tu_expect_text(f->db, "IN_PROGRESS",
                   "SELECT status FROM steps WHERE name = "
                   "'gen'");

    /* Restarted: recovery ends the try, the retry resumes at t2. */
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                   (long long)run);
    expect_file("seen1", "1");
    expect_file("seen2", "1");
    tu_expect_text(f->db, "ERROR|interrupted: engine stopped|{\"A\":\"1\"}",
                   "SELECT a.status || '|' || a.message || '|' || o.outputs "
                   "FROM attempts a JOIN task_outputs o ON o.step_id = "
                   "a.step_id AND o.attempt = a.number WHERE a.number = 1");
    tu_expect_text(f->db, "{\"A\":\"1\"}", STEP_OUTPUTS "WHERE s.name = 'gen'");
    tu_expect_text(f->db, "1",
                   "SELECT json_extract(data, '$.outputs.A') FROM events WHERE "
                   "entity = 'step' AND from_status = 'IN_PROGRESS' AND "
                   "to_status = 'ERROR'");
    if (planctl_verify(&verify, f->p))
        fail_msg("verify: %s", planctl_errmsg(f->p));
    /* The killed engine's task did not outlive it. */
    tu_expect_gone(atoi(pidtext), "the interrupted task");
    planctl_free(verify);
    free(pidtext);
}

/* ---- an embedder's executor ---- */

static int cert_start(planctl_job *job, const planctl_task_info *info,
                      void *data)
{
    (void)info;
    (void)data;
    assert_int_equal(planctl_job_add_output(job, "TOKEN", "t0k", 0), 0);
    assert_int_equal(
        planctl_job_add_output(job, "KEY", "s3cret", PLANCTL_OUTPUT_SECRET), 0);
    assert_int_equal(planctl_job_add_output(job, NULL, "x", 0), PLANCTL_EINVAL);
    return planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL);
}

static char *seen_json;

static int look_start(planctl_job *job, const planctl_task_info *info,
                      void *data)
{
    (void)data;
    free(seen_json);
    seen_json = info->outputs ? strdup(info->outputs) : NULL;
    return planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL);
}

static void on_stopped(planctl_engine *e, void *data)
{
    (void)e;
    (void)data;
}

static void test_executor_outputs(void **state)
{
    fixture *f = *state;
    planctl_executor cert = {PLANCTL_EXECUTOR_VERSION, cert_start, NULL, NULL,
                             NULL};
    planctl_executor look = {PLANCTL_EXECUTOR_VERSION, look_start, NULL, NULL,
                             NULL};
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_engine *e;
    uv_loop_t loop;

    /* cancel is required; these never need it. */
    cert.cancel = look.cancel = (void (*)(planctl_job *, void *))on_stopped;
    o.until_idle = 1;
    o.change_poll_ms = 20;
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(planctl_engine_new(&e, f->p, &loop, &o), 0);
    assert_int_equal(planctl_engine_register(e, "Cert", &cert), 0);
    assert_int_equal(planctl_engine_register(e, "Look", &look), 0);
    tu_apply(
        f->p,
        "{\"name\":\"emb\",\"version\":\"1\",\"tasks\":["
        "{\"name\":\"mk\",\"kind\":\"Cert\"},"
        "{\"name\":\"see\",\"kind\":\"Look\"}," SH(
            "sh",
            "printf %s \\\"$PLANCTL_OUTPUT_MAKE_IT_TOKEN\\\" > "
            "seen") "],"
                    "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\","
                    "\"steps\":["
                    "{\"name\":\"make-it\",\"tasks\":[\"mk\",\"see\"]},"
                    "{\"name\":\"after\",\"tasks\":[\"see\",\"sh\"]}]}]}}}");
    tu_create(f->p, "e", "emb");
    assert_int_equal(planctl_engine_start(e, on_stopped, NULL), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    planctl_engine_free(e);
    assert_int_equal(uv_loop_close(&loop), 0);
    tu_expect_text(f->db, "COMPLETE", "SELECT status FROM runs");
    expect_file("seen", "t0k");
    /* The executor's task JSON, secrets as they are. */
    assert_non_null(seen_json);
    assert_string_equal(seen_json, "{\"make-it\":{\"TOKEN\":\"t0k\","
                                   "\"KEY\":{\"secret\":\"s3cret\"}}}");
    free(seen_json);
    seen_json = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_passed_to_a_later_step, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_export_import, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export_include_secrets, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_between_tasks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_executor_outputs, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
