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

typedef struct fixture {
    char *dir, *path;
    planctl *p;
    sqlite3 *db;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    f->dir = tu_mkdtemp();
    f->path = tu_fmt("%s/out.db", f->dir);
    assert_int_equal(planctl_open(&f->p, f->path, NULL), 0);
    assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
    sqlite3_busy_timeout(f->db, 10000);
    assert_int_equal(chdir(f->dir), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    if (chdir("/") != 0)
        return -1;
    sqlite3_close(f->db);
    planctl_close(f->p);
    tu_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

static void apply(fixture *f, const char *json)
{
    if (planctl_definition_apply(NULL, f->p, json, strlen(json), "t.json"))
        fail_msg("apply: %s", planctl_errmsg(f->p));
}

static int64_t create(fixture *f, const char *name, const char *def)
{
    int64_t run = 0;

    if (planctl_instance_create(&run, f->p, name, def, NULL, NULL, 0))
        fail_msg("create: %s", planctl_errmsg(f->p));
    return run;
}

static void expect_text(fixture *f, const char *want, const char *fmt, ...)
{
    va_list ap;
    char sql[2048];
    char *got;

    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    got = tu_text(f->db, "%s", sql);
    if (!got || strcmp(got, want) != 0)
        fail_msg("%s\n  got:  %s\n  want: %s", sql, got ? got : "(null)", want);
    free(got);
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

    apply(f, pass_def);
    run = create(f, "zk", "pipe");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    expect_text(f, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                (long long)run);
    expect_file("seen", "abc=d|line 1\n\nline 3|hunter2");
    /* Stored with the attempt and the step, and in the completion event. */
    expect_text(f,
                "{\"CERT\":\"abc=d\",\"PEM\":\"line 1\\n\\nline 3\","
                "\"PASS\":{\"secret\":\"hunter2\"}}",
                "SELECT o.outputs FROM task_outputs o JOIN steps s ON s.id = "
                "o.step_id WHERE s.name = 'gen-cert' AND o.attempt = 1");
    expect_text(f, "1",
                "SELECT count(DISTINCT outputs) FROM task_outputs WHERE "
                "step_id = (SELECT id FROM steps WHERE name = 'gen-cert')");
    expect_text(f, "hunter2",
                "SELECT json_extract(data, '$.outputs.PASS.secret') FROM "
                "events WHERE entity = 'step' AND to_status = 'COMPLETE' AND "
                "step_id = (SELECT id FROM steps WHERE name = 'gen-cert')");
    expect_text(f, "0",
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

/* The bundle leaves the secret out; imported, verify still agrees and
 * the plain outputs are there. */
static void test_export_import(void **state)
{
    fixture *f = *state;
    planctl *q;
    char *bundle = NULL, *verify = NULL, *path = tu_fmt("%s/b.db", f->dir);
    sqlite3 *db;
    char *got;

    apply(f, pass_def);
    create(f, "zk", "pipe");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    assert_int_equal(planctl_export_json(&bundle, f->p, "zk"), 0);
    /* (The definition's command names the value; the rows must not.) */
    assert_null(strstr(bundle, "secret\\\":\\\"hunter2"));
    assert_non_null(strstr(bundle, "secret\\\":null"));
    assert_non_null(strstr(bundle, "abc=d"));
    assert_int_equal(planctl_open(&q, path, NULL), 0);
    if (planctl_import_json(NULL, q, bundle, strlen(bundle), "zk2"))
        fail_msg("import: %s", planctl_errmsg(q));
    if (planctl_verify(&verify, q))
        fail_msg("verify: %s", planctl_errmsg(q));
    planctl_close(q);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    got = tu_text(db, "SELECT o.outputs FROM task_outputs o JOIN steps s ON "
                      "s.id = o.step_id WHERE s.name = 'gen-cert' AND "
                      "o.attempt = 0");
    assert_string_equal(got, "{\"CERT\":\"abc=d\",\"PEM\":\"line 1\\n\\nline "
                             "3\",\"PASS\":{\"secret\":null}}");
    free(got);
    sqlite3_close(db);
    planctl_free(bundle);
    planctl_free(verify);
    free(path);
}

/* Asked for, the bundle holds the secret in clear, in the rows and in the
 * events; imported, the value is back where it was, verify agrees and
 * status still masks it.  An unknown options version is refused. */
static void test_export_include_secrets(void **state)
{
    fixture *f = *state;
    planctl_export_options eo = PLANCTL_EXPORT_OPTIONS_INIT;
    planctl_status_options so = PLANCTL_STATUS_OPTIONS_INIT;
    planctl *q;
    char *bundle = NULL, *verify = NULL, *status = NULL,
         *path = tu_fmt("%s/b.db", f->dir);
    sqlite3 *db;
    char *got;

    apply(f, pass_def);
    create(f, "zk", "pipe");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    eo.include_secrets = 1;
    if (planctl_export(&bundle, f->p, "zk", &eo))
        fail_msg("export: %s", planctl_errmsg(f->p));
    /* The step's and the attempt's rows, and the completion event. */
    assert_int_equal(tu_count(bundle, "\\\"secret\\\":\\\"hunter2\\\""), 3);
    assert_null(strstr(bundle, "secret\\\":null"));
    assert_int_equal(planctl_open(&q, path, NULL), 0);
    if (planctl_import_json(NULL, q, bundle, strlen(bundle), "zk2"))
        fail_msg("import: %s", planctl_errmsg(q));
    if (planctl_verify(&verify, q))
        fail_msg("verify: %s", planctl_errmsg(q));
    so.run = 1;
    assert_int_equal(planctl_status_json(&status, q, "zk2", &so), 0);
    assert_non_null(strstr(status, "\"PASS\":\"***\""));
    assert_null(strstr(status, "hunter2"));
    planctl_close(q);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    got = tu_text(db, "%s", STEP_OUTPUTS "WHERE s.name = 'gen-cert'");
    assert_string_equal(got, "{\"CERT\":\"abc=d\",\"PEM\":\"line 1\\n\\nline "
                             "3\",\"PASS\":{\"secret\":\"hunter2\"}}");
    free(got);
    sqlite3_close(db);

    planctl_free(bundle);
    bundle = NULL;
    eo.version = PLANCTL_EXPORT_OPTIONS_VERSION + 1;
    assert_int_equal(planctl_export(&bundle, f->p, "zk", &eo), PLANCTL_EINVAL);
    assert_string_equal(planctl_errmsg(f->p),
                        "unknown export options version 2");
    assert_null(bundle);
    planctl_free(verify);
    planctl_free(status);
    free(path);
}

static void test_refusals(void **state)
{
    fixture *f = *state;

    apply(f, DEF("bad",
                 SH("bad", "printf 'OK=1\\\\nnot an output\\\\n' > "
                           "\\\"$PLANCTL_OUTPUT\\\""),
                 STEP("bad", 1)));
    create(f, "a", "bad");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    expect_text(f,
                "PLANCTL_OUTPUT line 2: \"not an output\" is not KEY=VALUE or "
                "KEY<<DELIMITER (a KEY is letters, digits and _, not "
                "starting with a digit)",
                "SELECT message FROM steps WHERE name = 'bad'");
    expect_text(f, "FATAL_ERROR", "SELECT status FROM steps");

    apply(f, DEF("big",
                 SH("big", "printf 'BIG=%070000d\\\\n' 0 > "
                           "\\\"$PLANCTL_OUTPUT\\\""),
                 STEP("big", 1)));
    create(f, "b", "big");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    expect_text(f,
                "PLANCTL_OUTPUT line 1: outputs of one attempt are limited "
                "to 64 KiB; these would be 70003 bytes (keys and values)",
                "SELECT message FROM steps WHERE name = 'big'");

    apply(f, DEF("open",
                 SH("open",
                    "printf 'K<<END\\\\nx\\\\n' > \\\"$PLANCTL_OUTPUT\\\""),
                 STEP("open", 1)));
    create(f, "c", "open");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    expect_text(f, "PLANCTL_OUTPUT line 1: no line \"END\" ends the value of K",
                "SELECT message FROM steps WHERE name = 'open'");
}

/* A step retried: its outputs are its last attempt's, each attempt keeps
 * its own.  A retry run carries a completed step's outputs over. */
static void test_retries(void **state)
{
    fixture *f = *state;
    int64_t run, again = 0;

    apply(f,
          DEF("retry",
              SH("gen",
                 "echo N=$PLANCTL_ATTEMPT > \\\"$PLANCTL_OUTPUT\\\"; "
                 "[ $PLANCTL_ATTEMPT -gt 1 ]") "," SH("use",
                                                      "[ -e go ] && printf %s "
                                                      "\\\"$PLANCTL_OUTPUT_GEN_"
                                                      "N\\\" "
                                                      "> seen"),
              STEP("gen", 2) "," STEP("use", 1)));
    run = create(f, "r", "retry");
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    expect_text(f, "{\"N\":\"1\"}|{\"N\":\"2\"}",
                "SELECT group_concat(outputs, '|') FROM (SELECT o.outputs "
                "FROM task_outputs o JOIN steps s ON s.id = o.step_id WHERE "
                "s.name = 'gen' AND o.attempt > 0 ORDER BY o.attempt)");
    expect_text(f, "{\"N\":\"2\"}", STEP_OUTPUTS "WHERE s.name = 'gen'");
    expect_text(f, "FATAL_ERROR", "SELECT status FROM runs WHERE id = %lld",
                (long long)run);

    assert_int_equal(tu_write_file("go", "", 0), 0);
    if (planctl_run_retry(&again, f->p, "r", run))
        fail_msg("retry: %s", planctl_errmsg(f->p));
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    expect_text(f, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                (long long)again);
    expect_file("seen", "2");
    expect_text(f, "{\"N\":\"2\"}",
                STEP_OUTPUTS "WHERE s.name = 'gen' AND s.run_id = %lld",
                (long long)again);
}

/* ---- a crash between two tasks of one step ---- */

/* gen's first task writes A=1; its second records what it sees, and in
 * the first try then waits to be killed (its pid in "started"). */
static const char crash_def[] = "{\"name\":\"crash\",\"version\":\"1\","
                                "\"tasks\":[" SH("t1", "echo A=1 > "
                                                       "\\\"$PLANCTL_"
                                                       "OUTPUT\\\"") "," SH(
                                    "t2",
                                    "printf %s "
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
    apply(f, crash_def);
    run = create(f, "c", "crash");
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
    expect_text(f, "1", "SELECT task_index FROM steps WHERE name = 'gen'");
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    expect_text(f, "IN_PROGRESS",
                "SELECT status FROM steps WHERE name = "
                "'gen'");

    /* Restarted: recovery ends the try, the retry resumes at t2. */
    assert_int_equal(tu_engine_until_idle(f->p), 0);
    expect_text(f, "COMPLETE", "SELECT status FROM runs WHERE id = %lld",
                (long long)run);
    expect_file("seen1", "1");
    expect_file("seen2", "1");
    expect_text(f, "ERROR|interrupted: engine stopped|{\"A\":\"1\"}",
                "SELECT a.status || '|' || a.message || '|' || o.outputs "
                "FROM attempts a JOIN task_outputs o ON o.step_id = "
                "a.step_id AND o.attempt = a.number WHERE a.number = 1");
    expect_text(f, "{\"A\":\"1\"}", STEP_OUTPUTS "WHERE s.name = 'gen'");
    expect_text(f, "1",
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
    planctl_executor cert = {PLANCTL_EXECUTOR_VERSION, cert_start, NULL, NULL};
    planctl_executor look = {PLANCTL_EXECUTOR_VERSION, look_start, NULL, NULL};
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
    apply(f,
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
    create(f, "e", "emb");
    assert_int_equal(planctl_engine_start(e, on_stopped, NULL), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    planctl_engine_free(e);
    assert_int_equal(uv_loop_close(&loop), 0);
    expect_text(f, "COMPLETE", "SELECT status FROM runs");
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
