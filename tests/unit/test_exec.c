/* test_exec.c - the built-in executors, Dummy and shell, on a real libuv
 * loop with real child processes. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/utf8.h"
#include "engine/executors.h"
#include "engine/job.h"
#include "engine/keeper.h"
#include "testutil.h"

/* ---- the bench: a loop, a hub, jobs and what they reported --------------- */

typedef struct result {
    struct bench *b;
    planctl_job *job;
    int finished;
    planctl_outcome outcome;
    char *message, *output;
    int exit_code;
    int64_t output_bytes; /* the job's count of all its output */
    uint64_t elapsed;     /* ms from start to the delivered finish */
} result;

typedef struct bench {
    uv_loop_t loop;
    pctl_hub hub;
    const planctl_executor *ex;
    result *r;
    int n, pending;
    uint64_t t0;
    uv_timer_t cancel; /* cancels every job at cancel_ms... */
    uint64_t cancel_ms;
    const char *cancel_file; /* ...once this file holds a whole line */
} bench;

static void on_finish(planctl_job *job, void *owner)
{
    result *r = owner;
    bench *b = r->b;

    r->finished++;
    r->outcome = job->outcome;
    r->message = job->message ? strdup(job->message) : NULL;
    r->output = job->output ? strdup(job->output) : NULL;
    r->exit_code = job->exit_code;
    r->output_bytes = job->output_bytes;
    uv_update_time(&b->loop);
    r->elapsed = uv_now(&b->loop) - b->t0;
    pctl_job_free(job);
    r->job = NULL;
    if (--b->pending == 0) { /* the loop can end */
        uv_close((uv_handle_t *)&b->cancel, NULL);
        pctl_hub_close(&b->hub, NULL, NULL);
    }
}

static int has_line(const char *path)
{
    size_t n;
    char *text = tu_read_file(path, &n);
    int ok = text && n > 0 && text[n - 1] == '\n';

    free(text);
    return ok;
}

static void on_cancel(uv_timer_t *t)
{
    bench *b = t->data;
    int i;

    if (b->cancel_file && !has_line(b->cancel_file))
        return; /* the repeat comes back in 10 ms */
    uv_timer_stop(t);
    for (i = 0; i < b->n; i++)
        if (b->r[i].job)
            b->ex->cancel(b->r[i].job, b->ex->data);
}

/* The output jobs keep (planctl_job.output_max); 0: the default. */
static size_t output_max;

/* Opens the bench for n jobs of ex (r[i] gets job i's report); set
 * cancel_ms and cancel_file before. */
static void bench_open(bench *b, const planctl_executor *ex, result *r, int n)
{
    int i;

    b->ex = ex;
    b->r = r;
    b->n = b->pending = n;
    assert_int_equal(uv_loop_init(&b->loop), 0);
    assert_int_equal(pctl_hub_init(&b->hub, &b->loop), 0);
    assert_int_equal(uv_timer_init(&b->loop, &b->cancel), 0);
    b->cancel.data = b;
    if (b->cancel_ms)
        uv_timer_start(&b->cancel, on_cancel, b->cancel_ms, 10);
    uv_update_time(&b->loop);
    b->t0 = uv_now(&b->loop);
    for (i = 0; i < n; i++) {
        memset(&r[i], 0, sizeof r[i]);
        r[i].b = b;
        r[i].job = pctl_job_new(&b->hub, on_finish, &r[i]);
        assert_non_null(r[i].job);
        if (output_max)
            r[i].job->output_max = output_max;
    }
}

/* Runs the loop until every job is reported; no handle may be left. */
static void bench_run(bench *b)
{
    uv_run(&b->loop, UV_RUN_DEFAULT);
    assert_int_equal(b->pending, 0);
    assert_int_equal(uv_loop_close(&b->loop), 0);
}

/* Runs n jobs at once to their end; each must start and report once. */
static void run_many(bench *b, const planctl_executor *ex,
                     const planctl_task_info *infos, result *r, int n)
{
    int i;

    bench_open(b, ex, r, n);
    for (i = 0; i < n; i++)
        assert_int_equal(ex->start(r[i].job, &infos[i], ex->data), 0);
    bench_run(b);
    for (i = 0; i < n; i++)
        assert_int_equal(r[i].finished, 1);
}

static planctl_task_info info_for(const char *kind, const char *spec)
{
    planctl_task_info i = {
        "zk",     "deploy", "nodes", "node-0",
        "render", kind,     spec,    "{\"NODE_COUNT\":\"3\"}",
        7,        1,        0,       "0123456789abcdef0123456789abcdef",
        NULL};

    return i;
}

static void result_free(result *r)
{
    free(r->message);
    free(r->output);
}

/* Runs one job; cancel_ms 0: no cancel. */
static void run1(result *r, const planctl_executor *ex,
                 const planctl_task_info *info, uint64_t cancel_ms,
                 const char *cancel_file)
{
    bench b;

    memset(&b, 0, sizeof b);
    b.cancel_ms = cancel_ms;
    b.cancel_file = cancel_file;
    run_many(&b, ex, info, r, 1);
}

/* expect()'s message when any will do. */
static const char any[] = "(any)";

static void expect(const result *r, planctl_outcome outcome,
                   const char *message)
{
    if ((int)r->outcome != (int)outcome)
        fail_msg("outcome %d, want %d (message \"%s\")", (int)r->outcome,
                 (int)outcome, r->message ? r->message : "(null)");
    if (message == any)
        assert_non_null(r->message);
    else if (!message)
        assert_null(r->message);
    else if (!r->message || strcmp(r->message, message))
        fail_msg("message \"%s\", want \"%s\"",
                 r->message ? r->message : "(null)", message);
}

static void dummy_case(const char *spec, int attempt, planctl_outcome outcome,
                       const char *message)
{
    planctl_task_info info = info_for("Dummy", spec);
    result r;

    info.attempt = attempt;
    run1(&r, pctl_executor_dummy(), &info, 0, NULL);
    expect(&r, outcome, message);
    result_free(&r);
}

/* ---- Dummy -------------------------------------------------------------- */

static void test_dummy_outcomes(void **state)
{
    (void)state;
    dummy_case("{}", 1, PLANCTL_OUTCOME_DONE, NULL);
    dummy_case(NULL, 1, PLANCTL_OUTCOME_DONE, NULL);
    dummy_case("{\"done\": true, \"wantErr\": false, \"fatal\": false}", 1,
               PLANCTL_OUTCOME_DONE, NULL);
    /* As in KUDO, fatal only qualifies wantErr: alone it is no error. */
    dummy_case("{\"fatal\": true}", 1, PLANCTL_OUTCOME_DONE, NULL);
    dummy_case("{\"done\": true, \"fatal\": true}", 1, PLANCTL_OUTCOME_DONE,
               NULL);
    dummy_case("{\"done\": false, \"fatal\": true}", 1,
               PLANCTL_OUTCOME_NOT_DONE, "done: false");
    dummy_case("{\"fatal\": true, \"wantErr\": true}", 1, PLANCTL_OUTCOME_FATAL,
               "fatal: true");
    dummy_case("{\"fatal\": false, \"wantErr\": true}", 1,
               PLANCTL_OUTCOME_ERROR, "wantErr: true");
    dummy_case("{\"wantErr\": true}", 1, PLANCTL_OUTCOME_ERROR,
               "wantErr: true");
    dummy_case("{\"done\": false}", 1, PLANCTL_OUTCOME_NOT_DONE, "done: false");
}

static void test_dummy_fail_times(void **state)
{
    (void)state;
    dummy_case("{\"failTimes\": 2}", 1, PLANCTL_OUTCOME_ERROR,
               "failTimes: attempt 1 of the first 2 fails");
    dummy_case("{\"failTimes\": 2}", 2, PLANCTL_OUTCOME_ERROR,
               "failTimes: attempt 2 of the first 2 fails");
    dummy_case("{\"failTimes\": 2}", 3, PLANCTL_OUTCOME_DONE, NULL);
    dummy_case("{\"failTimes\": 2, \"wantErr\": true, \"fatal\": true}", 3,
               PLANCTL_OUTCOME_FATAL, "fatal: true");
    dummy_case("{\"failTimes\": 2, \"fatal\": true}", 3, PLANCTL_OUTCOME_DONE,
               NULL);
    dummy_case("{\"failTimes\": 0}", 1, PLANCTL_OUTCOME_DONE, NULL);
}

static void test_dummy_bad_spec(void **state)
{
    static const char *const cases[][2] = {
        {"{\"sleep\": \"x\"}", "Dummy spec: \"sleep\": invalid duration \"x\""},
        {"{\"sleep\": 5}", "Dummy spec: \"sleep\": expected a duration string"},
        {"{\"failTimes\": -1}",
         "Dummy spec: \"failTimes\": expected an integer >= 0"},
        {"{\"failTimes\": 1.5}",
         "Dummy spec: \"failTimes\": expected an integer >= 0"},
        {"{\"done\": \"yes\"}", "Dummy spec: \"done\": expected a boolean"},
        {"{\"wantErr\": 1}", "Dummy spec: \"wantErr\": expected a boolean"},
        {"{\"bogus\": 1}", "Dummy spec: unknown field \"bogus\""},
        {"[1]", "Dummy spec: expected a JSON object"},
        {"{\"done\": true, \"done\": false}", NULL},
        {"{", NULL},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        planctl_task_info info = info_for("Dummy", cases[i][0]);
        result r;

        run1(&r, pctl_executor_dummy(), &info, 0, NULL);
        if (cases[i][1]) {
            expect(&r, PLANCTL_OUTCOME_FATAL, cases[i][1]);
        } else {
            assert_int_equal(r.outcome, PLANCTL_OUTCOME_FATAL);
            assert_non_null(r.message);
            assert_memory_equal(r.message, "Dummy spec: invalid JSON: ", 26);
        }
        result_free(&r);
    }
}

static void test_dummy_sleep(void **state)
{
    planctl_task_info info =
        info_for("Dummy", "{\"sleep\": \"300ms\", \"wantErr\": true}");
    result r;

    (void)state;
    run1(&r, pctl_executor_dummy(), &info, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_ERROR, "wantErr: true");
    if (r.elapsed < 300 || r.elapsed > 1500)
        fail_msg("slept %llu ms, want 300", (unsigned long long)r.elapsed);
    result_free(&r);
}

static void test_dummy_cancel(void **state)
{
    planctl_task_info info = info_for("Dummy", "{\"sleep\": \"1h\"}");
    result r;

    (void)state;
    run1(&r, pctl_executor_dummy(), &info, 50, NULL);
    expect(&r, PLANCTL_OUTCOME_ERROR, "cancelled");
    assert_true(r.elapsed < 2000);
    result_free(&r);
}

/* A cancel for a job whose finish is queued but not yet delivered does
 * nothing; so does one for a job that is winding up. */
static void test_dummy_cancel_after_finish(void **state)
{
    const planctl_executor *ex = pctl_executor_dummy();
    planctl_task_info info = info_for("Dummy", "{\"wantErr\": true}");
    result r;
    bench b;

    (void)state;
    memset(&b, 0, sizeof b);
    bench_open(&b, ex, &r, 1);
    assert_int_equal(ex->start(r.job, &info, ex->data), 0);
    ex->cancel(r.job, ex->data);
    ex->cancel(r.job, ex->data);
    bench_run(&b);
    expect(&r, PLANCTL_OUTCOME_ERROR, "wantErr: true");
    result_free(&r);
}

/* Many at once on one loop: they overlap. */
static void test_dummy_concurrent(void **state)
{
    planctl_task_info infos[8];
    result r[8];
    bench b;
    int i;

    (void)state;
    for (i = 0; i < 8; i++)
        infos[i] = info_for("Dummy", "{\"sleep\": \"200ms\"}");
    memset(&b, 0, sizeof b);
    run_many(&b, pctl_executor_dummy(), infos, r, 8);
    for (i = 0; i < 8; i++) {
        expect(&r[i], PLANCTL_OUTCOME_DONE, NULL);
        assert_true(r[i].elapsed < 1000);
        result_free(&r[i]);
    }
}

/* ---- shell -------------------------------------------------------------- */

static char *dir; /* a fresh temp dir per shell test */

static int setup_dir(void **state)
{
    (void)state;
    dir = tu_mkdtemp();
    return dir ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    tu_rmtree(dir);
    free(dir);
    dir = NULL;
    return 0;
}

static void shell_run(result *r, const char *spec, const char *params,
                      uint64_t cancel_ms, const char *cancel_file)
{
    planctl_task_info info = info_for("shell", spec);

    if (params)
        info.params = params;
    run1(r, pctl_executor_shell(), &info, cancel_ms, cancel_file);
}

/* A JSON string literal of s (no escapes needed in these tests but '"'
 * and '\\'). */
static char *jstr(const char *s)
{
    size_t n = strlen(s), i, k = 0;
    char *out = malloc(2 * n + 3);

    out[k++] = '"';
    for (i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            out[k++] = '\\';
        out[k++] = s[i];
    }
    out[k++] = '"';
    out[k] = '\0';
    return out;
}

/* Runs {"command": cmd, <extra>} and checks outcome and message. */
static void sh_case(const char *cmd, const char *extra, planctl_outcome outcome,
                    const char *message, result *out)
{
    char *q = jstr(cmd);
    char *spec = tu_fmt("{\"command\": %s%s%s}", q, extra ? ", " : "",
                        extra ? extra : "");
    result r;

    shell_run(&r, spec, NULL, 0, NULL);
    expect(&r, outcome, message);
    if (out)
        *out = r;
    else
        result_free(&r);
    free(q);
    free(spec);
}

/* Descriptors open in this process now. */
/* What test_shell_out_of_descriptors takes away, given back by its
 * teardown even when an assertion stopped the test half-way. */
static struct rlimit fd_saved;
static int fd_fill[256], fd_nfill = -1;

static void fds_give_back(void)
{
    while (fd_nfill > 0)
        close(fd_fill[--fd_nfill]);
    if (fd_nfill == 0)
        setrlimit(RLIMIT_NOFILE, &fd_saved);
    fd_nfill = -1;
}

/* Takes every free descriptor slot: the soft limit comes down to the
 * table's size (descriptors above it stay usable) and /dev/null fills
 * each slot left below it. No count of what is open is needed, so gaps
 * and inherited descriptors change nothing. */
static void fds_take_all(void)
{
    struct rlimit low;
    int fd;

    assert_int_equal(getrlimit(RLIMIT_NOFILE, &fd_saved), 0);
    low = fd_saved;
    if (low.rlim_cur > 256)
        low.rlim_cur = 256;
    fd_nfill = 0;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
        assert_true(fd_nfill < 256);
        fd_fill[fd_nfill++] = fd;
    }
    assert_int_equal(errno, EMFILE);
}

static int teardown_fds(void **state)
{
    fds_give_back();
    return teardown_dir(state);
}

/* Out of descriptors when a shell task starts: "not done yet" (the engine
 * starts it again later, using no attempt), never ERROR or FATAL. */
static void test_shell_out_of_descriptors(void **state)
{
    planctl_task_info info = info_for("shell", "{\"command\": \"true\"}");
    const planctl_executor *ex = pctl_executor_shell();
    bench b;
    result r;

    (void)state;
    memset(&b, 0, sizeof b);
    bench_open(&b, ex, &r, 1); /* the loop's own descriptors first */
    fds_take_all();
    assert_int_equal(ex->start(r.job, &info, ex->data), 0);
    bench_run(&b);
    fds_give_back();
    assert_int_equal(r.finished, 1);
    expect(&r, PLANCTL_OUTCOME_NOT_DONE, any);
    assert_non_null(strstr(r.message, "waiting for resources to start"));
    result_free(&r);
    /* With descriptors back, the same task runs. */
    sh_case("true", NULL, PLANCTL_OUTCOME_DONE, NULL, NULL);
}

/* Starts "touch <dir>/started" on an engine whose keeper is k; with
 * refused, expects "not done yet" with a message holding refused and no
 * file made, else DONE and the file made (then removed). */
static void keeper_case(pctl_keeper *k, const char *refused)
{
    char *mark = tu_fmt("%s/started", dir);
    char *spec = tu_fmt("{\"command\": \"touch %s\"}", mark);
    planctl_task_info info = info_for("shell", spec);
    const planctl_executor *ex = pctl_executor_shell();
    struct stat st;
    bench b;
    result r;

    memset(&b, 0, sizeof b);
    bench_open(&b, ex, &r, 1);
    r.job->keeper = k;
    assert_int_equal(ex->start(r.job, &info, ex->data), 0);
    bench_run(&b);
    assert_int_equal(r.finished, 1);
    if (refused) {
        expect(&r, PLANCTL_OUTCOME_NOT_DONE, any);
        assert_non_null(strstr(r.message, refused));
        assert_int_equal(stat(mark, &st), -1);
    } else {
        expect(&r, PLANCTL_OUTCOME_DONE, NULL);
        assert_int_equal(stat(mark, &st), 0);
        assert_int_equal(unlink(mark), 0);
    }
    result_free(&r);
    free(mark);
    free(spec);
}

/* An engine past the time it may run tasks (its heartbeat late: it was
 * stopped between a pass's commit and its starts) starts none: its keeper
 * would kill it at once, beside a retry another engine may have started.
 * "Not done yet", so the task starts once the engine is in time again. */
static void test_shell_engine_past_its_time(void **state)
{
    pctl_keeper *k = NULL;

    (void)state;
    assert_int_equal(pctl_keeper_start(&k), 0);
    pctl_keeper_until(k, 1); /* long past */
    keeper_case(k, "past the time it may run");
    pctl_keeper_until(k, 0); /* in time again (no limit): it runs */
    keeper_case(k, NULL);
    pctl_keeper_stop(k);
}

/* The start gate (exec_shell.c): a child whose group the keeper cannot
 * list (its 8192 slots taken here) would run where the keeper could not
 * kill it, so it never runs its task: it waits at the gate, gets end of
 * file and exits, and the try is "not done yet", using no attempt. */
static void test_shell_keeper_full(void **state)
{
    pctl_keeper *k = NULL;
    int i;

    (void)state;
    assert_int_equal(pctl_keeper_start(&k), 0);
    /* No limit set: the keeper kills nothing, whatever it lists. */
    for (i = 0; pctl_keeper_add(k, 1000000 + i) == 0; i++)
        ;
    assert_int_equal(i, 8192);
    keeper_case(k, "waiting for resources to start");
    pctl_keeper_remove(k, 1000000); /* a slot free again: it runs */
    keeper_case(k, NULL);
    pctl_keeper_stop(k);
}

static void test_shell_exit(void **state)
{
    result r;

    (void)state;
    shell_run(&r, "{\"argv\": [\"true\"]}", NULL, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_DONE, NULL);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.output, "");
    result_free(&r);
    sh_case("exit 3", NULL, PLANCTL_OUTCOME_ERROR, "exit status 3", &r);
    assert_int_equal(r.exit_code, 3);
    result_free(&r);
    sh_case("exit 4", "\"fatal_exit_codes\": [4, 5]", PLANCTL_OUTCOME_FATAL,
            "exit status 4", NULL);
    sh_case("exit 3", "\"fatal_exit_codes\": [4, 5]", PLANCTL_OUTCOME_ERROR,
            "exit status 3", NULL);
    sh_case("echo hello; exit 0", "\"fatal_exit_codes\": [4]",
            PLANCTL_OUTCOME_DONE, NULL, NULL);
    sh_case("echo starting; echo 'connection refused ' >&2; echo; exit 1", NULL,
            PLANCTL_OUTCOME_ERROR, "exit status 1: connection refused", NULL);
    sh_case("echo bye; kill -KILL $$", NULL, PLANCTL_OUTCOME_ERROR,
            "killed by signal 9 (SIGKILL): bye", &r);
    assert_int_equal(r.exit_code, 128 + 9);
    result_free(&r);
}

static void test_shell_output_tail(void **state)
{
    char want[4097];
    result r;
    int i;

    (void)state;
    /* 10240 bytes, half on stdout and half on stderr, no newline, of which
     * the job keeps 4 KiB. */
    output_max = 4096;
    sh_case("awk 'BEGIN { for (i = 0; i < 5120; i++) printf \"%c\", "
            "97 + i % 26 }'; awk 'BEGIN { for (i = 5120; i < 10240; i++) "
            "printf \"%c\", 65 + i % 26 }' >&2; exit 5",
            NULL, PLANCTL_OUTCOME_ERROR, any, &r);
    output_max = 0;
    for (i = 0; i < 4096; i++)
        want[i] = (char)(65 + (10240 - 4096 + i) % 26);
    want[4096] = '\0';
    assert_int_equal(r.exit_code, 5);
    assert_non_null(r.output);
    assert_int_equal(strlen(r.output), 4096);
    assert_string_equal(r.output, want);
    assert_int_equal(r.output_bytes, 10240);
    /* The last line, cut to 200 bytes, follows the status. */
    assert_non_null(r.message);
    assert_int_equal(strlen(r.message), strlen("exit status 5: ") + 200);
    assert_memory_equal(r.message, "exit status 5: ", 15);
    assert_memory_equal(r.message + 15, want, 200);
    result_free(&r);
}

/* The message takes the last line of the output however little of it the
 * attempt keeps, and however much came before it. */
static void test_shell_output_last_line(void **state)
{
    result r;

    (void)state;
    output_max = 10;
    sh_case("seq 1 100000; echo 'the real cause'; exit 3", NULL,
            PLANCTL_OUTCOME_ERROR, "exit status 3: the real cause", &r);
    output_max = 0;
    assert_string_equal(r.output, "eal cause\n");
    assert_int_equal(r.output_bytes, 588895 + 15);
    result_free(&r);
    /* The default keeps 64 KiB: all of a small output, the last 64 KiB of
     * a large one. */
    sh_case("seq 1 100000; echo 'the real cause' >&2; exit 3", NULL,
            PLANCTL_OUTCOME_ERROR, "exit status 3: the real cause", &r);
    assert_int_equal(strlen(r.output), PCTL_OUTPUT_SIZE_DEFAULT);
    assert_string_equal(r.output + PCTL_OUTPUT_SIZE_DEFAULT - 28,
                        "99999\n100000\nthe real cause\n");
    result_free(&r);
}

static int valid_utf8(const char *s)
{
    char *clean = pctl_utf8_clean(s, strlen(s));
    int ok = clean && !strcmp(clean, s);

    pctl_free(clean);
    return ok;
}

static void test_shell_output_utf8(void **state)
{
    result r;

    (void)state;
    sh_case("printf 'ok \\377\\376 end\\n'; printf 'a\\000b\\n'; "
            "printf 'caf\\303\\251\\n' >&2; exit 2",
            NULL, PLANCTL_OUTCOME_ERROR, any, &r);
    assert_true(valid_utf8(r.output));
    assert_true(valid_utf8(r.message));
    assert_non_null(strstr(r.output, "ok \xef\xbf\xbd"));
    assert_non_null(strstr(r.output, "a\xef\xbf\xbd"
                                     "b\n"));
    assert_string_equal(r.message, "exit status 2: caf\xc3\xa9");
    result_free(&r);
    /* A tail that starts inside a character starts after it instead. */
    output_max = 4096;
    sh_case("awk 'BEGIN { for (i = 0; i < 3000; i++) printf \"\\303\\251\" "
            "}'; echo",
            NULL, PLANCTL_OUTCOME_DONE, NULL, &r);
    output_max = 0;
    assert_true(valid_utf8(r.output));
    assert_int_equal(strlen(r.output), 4095);
    assert_memory_equal(r.output, "\xc3\xa9", 2);
    result_free(&r);
}

/* The engine's environment, spec.env, then the engine's own variables:
 * spec.env adds to what the engine runs with, and nothing can override a
 * PLANCTL_* variable the engine sets, not even a definition stored before
 * validation refused such names (spec.env's PLANCTL_* are dropped, so a
 * parameter without a value stays unset too). */
static void test_shell_env(void **state)
{
    const char *params = "{\"NODE_COUNT\": \"3\", \"my-param.x\": \"v w\", "
                         "\"num\": 5, \"flag\": true, \"gone\": null}";
    result r;

    (void)state;
    setenv("PLANCTL_TEST_INHERITED", "yes", 1);
    setenv("PLANCTL_RUN", "stale", 1);
    setenv("SHADOWED", "inherited", 1);
    shell_run(&r,
              "{\"command\": \"printf '%s|' \\\"$PLANCTL_PARAM_NODE_COUNT\\\" "
              "\\\"$PLANCTL_RUN\\\" \\\"$PLANCTL_ATTEMPT\\\" "
              "\\\"$PLANCTL_INSTANCE\\\" \\\"$PLANCTL_PLAN\\\" "
              "\\\"$PLANCTL_PHASE\\\" \\\"$PLANCTL_STEP\\\" "
              "\\\"$PLANCTL_TASK\\\" \\\"$PLANCTL_PARAM_MY_PARAM_X\\\" "
              "\\\"$PLANCTL_PARAM_NUM\\\" \\\"$PLANCTL_PARAM_FLAG\\\" "
              "\\\"${PLANCTL_PARAM_GONE-unset}\\\" "
              "\\\"$PLANCTL_TEST_INHERITED\\\" \\\"$EXTRA\\\" "
              "\\\"$PLANCTL_RUN_UID\\\" \\\"${PLANCTL_EXTRA-unset}\\\" "
              "\\\"$SHADOWED\\\"\", "
              "\"env\": {\"EXTRA\": \"e\", \"PLANCTL_PARAM_NUM\": \"six\", "
              "\"PLANCTL_RUN_UID\": \"spec\", \"PLANCTL_ATTEMPT\": \"99\", "
              "\"PLANCTL_STEP\": \"spec\", \"PLANCTL_PARAM_GONE\": \"spec\", "
              "\"PLANCTL_EXTRA\": \"spec\", \"SHADOWED\": \"spec\"}}",
              params, 0, NULL);
    unsetenv("PLANCTL_TEST_INHERITED");
    unsetenv("PLANCTL_RUN");
    unsetenv("SHADOWED");
    expect(&r, PLANCTL_OUTCOME_DONE, NULL);
    assert_string_equal(r.output,
                        "3|7|1|zk|deploy|nodes|node-0|render|v w|5|true|"
                        "unset|yes|e|0123456789abcdef0123456789abcdef|unset|"
                        "spec|");
    result_free(&r);
}

/* A parameter's value is data, never shell text. */
static void test_shell_hostile_param(void **state)
{
    char *pwned = tu_fmt("%s/pwned", dir);
    char *value = tu_fmt("$(touch %s)`touch %s`;touch %s", pwned, pwned, pwned);
    char *qv = jstr(value);
    char *params = tu_fmt("{\"X\": %s}", qv);
    char *want = tu_fmt("%s\n%s\n", value, value);
    result r;

    (void)state;
    shell_run(&r,
              "{\"command\": \"printf '%s\\\\n' \\\"$PLANCTL_PARAM_X\\\"; "
              "echo $PLANCTL_PARAM_X\"}",
              params, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_DONE, NULL);
    assert_string_equal(r.output, want);
    result_free(&r);
    shell_run(&r,
              "{\"argv\": [\"sh\", \"-c\", \"printf %s \\\"$PLANCTL_PARAM_X\\\""
              "\"]}",
              params, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_DONE, NULL);
    assert_string_equal(r.output, value);
    result_free(&r);
    assert_int_equal(access(pwned, F_OK), -1);
    free(pwned);
    free(value);
    free(qv);
    free(params);
    free(want);
}

static void test_shell_argv_and_command(void **state)
{
    static const char *const bad[][2] = {
        {"{\"argv\": [\"true\"], \"command\": \"true\"}",
         "shell spec: exactly one of \"argv\" and \"command\" is required"},
        {"{}", "shell spec: exactly one of \"argv\" and \"command\" is "
               "required"},
        {"{\"argv\": []}",
         "shell spec: \"argv\": expected a non-empty array of strings"},
        {"{\"argv\": [\"a\", 1]}",
         "shell spec: \"argv\": expected a non-empty array of strings"},
        {"{\"command\": \"\"}",
         "shell spec: \"command\": expected a non-empty string"},
        {"{\"command\": \"true\", \"timeout\": \"soon\"}",
         "shell spec: \"timeout\": invalid duration \"soon\""},
        {"{\"command\": \"true\", \"timeout\": \"0s\"}",
         "shell spec: \"timeout\": must be more than 0s"},
        {"{\"command\": \"true\", \"fatal_exit_codes\": [0]}",
         "shell spec: \"fatal_exit_codes\": expected an array of integers "
         "from 1 to 255"},
        {"{\"command\": \"true\", \"env\": {\"A=B\": \"x\"}}",
         "shell spec: \"env\": invalid variable name \"A=B\""},
        {"{\"command\": \"true\", \"env\": {\"A\": 1}}",
         "shell spec: \"env\": expected an object of strings"},
        {"{\"command\": \"true\", \"cwd\": 3}",
         "shell spec: \"cwd\": expected a non-empty string"},
        {"{\"command\": \"true\", \"shell\": \"bash\"}",
         "shell spec: unknown field \"shell\""},
        {"[\"true\"]", "shell spec: expected a JSON object"},
    };
    result r;
    size_t i;

    (void)state;
    shell_run(&r, "{\"argv\": [\"printf\", \"%s|%s\", \"a b\", \"$HOME\"]}",
              NULL, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_DONE, NULL);
    assert_string_equal(r.output, "a b|$HOME");
    result_free(&r);
    sh_case("echo $((1 + 2))", NULL, PLANCTL_OUTCOME_DONE, NULL, &r);
    assert_string_equal(r.output, "3\n");
    result_free(&r);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        shell_run(&r, bad[i][0], NULL, 0, NULL);
        expect(&r, PLANCTL_OUTCOME_FATAL, bad[i][1]);
        assert_int_equal(r.exit_code, -1);
        result_free(&r);
    }
    shell_run(&r, "{\"command\": \"true\"}", "[]", 0, NULL);
    expect(&r, PLANCTL_OUTCOME_FATAL,
           "shell: the parameters are not a JSON object");
    result_free(&r);
}

static void test_shell_cannot_run(void **state)
{
    char *spec, *msg, *script;
    result r;

    (void)state;
    /* Not found and not executable are what the shell's 127 and 126 are:
     * fatal, unless retry_exit_codes lists the code. */
    shell_run(&r, "{\"argv\": [\"planctl-no-such-program\", \"x\"]}", NULL, 0,
              NULL);
    expect(&r, PLANCTL_OUTCOME_FATAL,
           "cannot run \"planctl-no-such-program\": no such file or "
           "directory");
    assert_int_equal(r.exit_code, -1);
    result_free(&r);
    shell_run(&r,
              "{\"argv\": [\"/nonexistent/prog\"], \"retry_exit_codes\": "
              "[127]}",
              NULL, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_ERROR,
           "cannot run \"/nonexistent/prog\": no such file or directory");
    result_free(&r);
    /* A directory, and a file without x, cannot run either. */
    spec = tu_fmt("{\"argv\": [\"%s\"]}", dir);
    msg = tu_fmt("cannot run \"%s\": permission denied", dir);
    shell_run(&r, spec, NULL, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_FATAL, msg);
    result_free(&r);
    free(spec);
    spec = tu_fmt("{\"argv\": [\"%s\"], \"retry_exit_codes\": [126]}", dir);
    shell_run(&r, spec, NULL, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_ERROR, msg);
    result_free(&r);
    free(spec);
    free(msg);
    /* A relative path is found from cwd. */
    script = tu_fmt("%s/run.sh", dir);
    assert_int_equal(tu_write_file(script, "#!/bin/sh\necho ran\n", 19), 0);
    spec = tu_fmt("{\"argv\": [\"./run.sh\"], \"cwd\": \"%s\"}", dir);
    shell_run(&r, spec, NULL, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_FATAL,
           "cannot run \"./run.sh\": permission denied");
    result_free(&r);
    assert_int_equal(chmod(script, 0755), 0);
    shell_run(&r, spec, NULL, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_DONE, NULL);
    assert_string_equal(r.output, "ran\n");
    result_free(&r);
    free(spec);
    free(script);
    sh_case("planctl-no-such-program", NULL, PLANCTL_OUTCOME_FATAL, any, &r);
    assert_int_equal(r.exit_code, 127);
    assert_non_null(strstr(r.message, "exit status 127: "));
    result_free(&r);
    sh_case("planctl-no-such-program", "\"retry_exit_codes\": [127]",
            PLANCTL_OUTCOME_ERROR, any, &r);
    result_free(&r);
    sh_case("exit 126", NULL, PLANCTL_OUTCOME_FATAL, "exit status 126", NULL);
    sh_case("exit 126", "\"retry_exit_codes\": [126, 127]",
            PLANCTL_OUTCOME_ERROR, "exit status 126", NULL);
    /* A code in both lists is fatal: fatal_exit_codes is what the
     * definition says outright. */
    sh_case("exit 127",
            "\"retry_exit_codes\": [127], \"fatal_exit_codes\": "
            "[127]",
            PLANCTL_OUTCOME_FATAL, "exit status 127", NULL);
}

static void test_shell_cwd(void **state)
{
    char *real = realpath(dir, NULL), *spec, *want, *msg;
    result r;

    (void)state;
    assert_non_null(real);
    spec = tu_fmt("{\"command\": \"pwd -P\", \"cwd\": \"%s\"}", dir);
    want = tu_fmt("%s\n", real);
    shell_run(&r, spec, NULL, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_DONE, NULL);
    assert_string_equal(r.output, want);
    result_free(&r);
    free(spec);
    spec = tu_fmt("{\"command\": \"pwd\", \"cwd\": \"%s/missing\"}", dir);
    msg = tu_fmt("cwd \"%s/missing\": no such file or directory", dir);
    shell_run(&r, spec, NULL, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_ERROR, msg);
    result_free(&r);
    free(real);
    free(spec);
    free(want);
    free(msg);
}

/* Waits up to 3 s for pid to be gone, or a zombie (its new parent may
 * reap it late). */
static int gone(pid_t pid)
{
    int i;

    for (i = 0; i < 300; i++) {
        char path[64], line[512] = "";
        const char *p;
        FILE *f;

        if (kill(pid, 0) != 0 && errno == ESRCH)
            return 1;
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        f = fopen(path, "r"); /* size 0: tu_read_file cannot read it */
        if (f) {
            if (!fgets(line, sizeof line, f))
                line[0] = '\0';
            fclose(f);
        }
        p = strrchr(line, ')');
        if (p && p[1] == ' ' && p[2] == 'Z')
            return 1;
        usleep(10000);
    }
    return 0;
}

static pid_t pid_in(const char *name)
{
    char *path = tu_fmt("%s/%s", dir, name), *text = tu_read_file(path, NULL);
    pid_t pid;

    assert_non_null(text);
    pid = (pid_t)atoi(text);
    assert_true(pid > 1);
    free(path);
    free(text);
    return pid;
}

/* script writes its pid to "pid" and its background child's to "gc". */
static void group_case(const char *script, const char *extra,
                       uint64_t cancel_ms, const char *message, uint64_t min_ms,
                       uint64_t max_ms, int exit_code)
{
    char *cmd = tu_fmt(script, dir, dir), *q = jstr(cmd);
    char *spec = tu_fmt("{\"command\": %s%s}", q, extra);
    char *pidfile = tu_fmt("%s/pid", dir);
    result r;

    shell_run(&r, spec, NULL, cancel_ms, cancel_ms ? pidfile : NULL);
    expect(&r, PLANCTL_OUTCOME_ERROR, message);
    assert_int_equal(r.exit_code, exit_code);
    if (r.elapsed < min_ms || r.elapsed > max_ms)
        fail_msg("took %llu ms, want %llu to %llu",
                 (unsigned long long)r.elapsed, (unsigned long long)min_ms,
                 (unsigned long long)max_ms);
    assert_true(gone(pid_in("pid")));
    assert_true(gone(pid_in("gc")));
    result_free(&r);
    free(cmd);
    free(q);
    free(spec);
    free(pidfile);
}

static void test_shell_timeout(void **state)
{
    (void)state;
    group_case("sleep 300 & echo $! > %s/gc; echo $$ > %s/pid; sleep 300",
               ", \"timeout\": \"300ms\"", 0, "timed out after 300ms", 300,
               3000, 128 + SIGTERM);
}

static void test_shell_cancel(void **state)
{
    (void)state;
    group_case("sleep 300 & echo $! > %s/gc; echo $$ > %s/pid; wait", "", 20,
               "cancelled", 0, 3000, 128 + SIGTERM);
}

/* SIGTERM ignored by all: SIGKILL after the 5 s grace. */
static void test_shell_sigkill(void **state)
{
    (void)state;
    group_case("trap '' TERM; sleep 300 & echo $! > %s/gc; "
               "echo $$ > %s/pid; wait",
               "", 20, "cancelled", 5000, 9000, 128 + SIGKILL);
}

/* A background process that keeps the output open does not hold the job
 * past the drain. */
static void test_shell_drain(void **state)
{
    result r;
    pid_t gc;
    char *spec = tu_fmt(
        "{\"command\": \"sleep 300 & echo $! > %s/gc; echo done\"}", dir);

    (void)state;
    shell_run(&r, spec, NULL, 0, NULL);
    expect(&r, PLANCTL_OUTCOME_DONE, NULL);
    assert_string_equal(r.output, "done\n");
    assert_true(r.elapsed >= 1500 && r.elapsed < 5000);
    gc = pid_in("gc");
    assert_int_equal(kill(gc, 0), 0); /* left alone */
    kill(gc, SIGKILL);
    result_free(&r);
    free(spec);
}

static void test_shell_concurrent(void **state)
{
    planctl_task_info infos[4];
    result r[4];
    bench b;
    int i;

    (void)state;
    for (i = 0; i < 4; i++)
        infos[i] = info_for("shell", "{\"command\": \"sleep 0.3; echo "
                                     "$PLANCTL_ATTEMPT\"}");
    for (i = 0; i < 4; i++)
        infos[i].attempt = i + 1;
    memset(&b, 0, sizeof b);
    run_many(&b, pctl_executor_shell(), infos, r, 4);
    for (i = 0; i < 4; i++) {
        char want[8];

        snprintf(want, sizeof want, "%d\n", i + 1);
        expect(&r[i], PLANCTL_OUTCOME_DONE, NULL);
        assert_string_equal(r[i].output, want);
        assert_true(r[i].elapsed < 1200);
        result_free(&r[i]);
    }
}

/* ---- allocation failures ------------------------------------------------ */

static long countdown = -1; /* fail when it reaches 0; -1: never */
static long failures;

static int should_fail(void)
{
    if (countdown < 0 || countdown-- > 0)
        return 0;
    failures++;
    return 1;
}

static void *t_malloc(size_t n)
{
    return should_fail() ? NULL : malloc(n);
}

static void *t_realloc(void *p, size_t n)
{
    return should_fail() ? NULL : realloc(p, n);
}

/* Fails the Nth allocation for every N: start() either fails cleanly
 * (nothing to finish, nothing left on the loop) or the job finishes. */
static void alloc_case(const planctl_executor *ex, const char *spec)
{
    static const pctl_alloc_hooks hooks = {t_malloc, t_realloc, free};
    planctl_task_info info = info_for("x", spec);
    long n;

    pctl_alloc_set_hooks(&hooks);
    for (n = 0;; n++) {
        result r;
        bench b;
        int rc;

        memset(&b, 0, sizeof b);
        bench_open(&b, ex, &r, 1);
        failures = 0;
        countdown = n;
        rc = ex->start(r.job, &info, ex->data);
        if (rc < 0) { /* as the engine would: nothing more to wait for */
            assert_int_equal(rc, PLANCTL_ENOMEM);
            pctl_job_free(r.job);
            b.pending = 0;
            uv_close((uv_handle_t *)&b.cancel, NULL);
            pctl_hub_close(&b.hub, NULL, NULL);
        }
        bench_run(&b);
        countdown = -1;
        assert_int_equal(r.finished, rc == 0);
        result_free(&r);
        if (!failures)
            break;
    }
    pctl_alloc_set_hooks(NULL);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    alloc_case(pctl_executor_dummy(), "{\"sleep\": \"1ms\", \"failTimes\": 3}");
    alloc_case(pctl_executor_dummy(), "{\"sleep\": \"x\"}");
    alloc_case(pctl_executor_shell(),
               "{\"command\": \"echo $PLANCTL_PARAM_NODE_COUNT; exit 1\", "
               "\"env\": {\"A\": \"b\"}, \"timeout\": \"1m\"}");
    alloc_case(pctl_executor_shell(), "{\"argv\": [\"planctl-no-such\"]}");
    alloc_case(pctl_executor_shell(), "{\"argv\": 1}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dummy_outcomes),
        cmocka_unit_test(test_dummy_fail_times),
        cmocka_unit_test(test_dummy_bad_spec),
        cmocka_unit_test(test_dummy_sleep),
        cmocka_unit_test(test_dummy_cancel),
        cmocka_unit_test(test_dummy_cancel_after_finish),
        cmocka_unit_test(test_dummy_concurrent),
        cmocka_unit_test(test_shell_exit),
        cmocka_unit_test_setup_teardown(test_shell_engine_past_its_time,
                                        setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_shell_keeper_full, setup_dir,
                                        teardown_dir),
        cmocka_unit_test(test_shell_output_tail),
        cmocka_unit_test(test_shell_output_utf8),
        cmocka_unit_test(test_shell_env),
        cmocka_unit_test_setup_teardown(test_shell_hostile_param, setup_dir,
                                        teardown_dir),
        cmocka_unit_test(test_shell_argv_and_command),
        cmocka_unit_test(test_shell_output_last_line),
        cmocka_unit_test_setup_teardown(test_shell_cannot_run, setup_dir,
                                        teardown_dir),
        cmocka_unit_test_setup_teardown(test_shell_cwd, setup_dir,
                                        teardown_dir),
        cmocka_unit_test_setup_teardown(test_shell_timeout, setup_dir,
                                        teardown_dir),
        cmocka_unit_test_setup_teardown(test_shell_cancel, setup_dir,
                                        teardown_dir),
        cmocka_unit_test_setup_teardown(test_shell_sigkill, setup_dir,
                                        teardown_dir),
        cmocka_unit_test_setup_teardown(test_shell_drain, setup_dir,
                                        teardown_dir),
        cmocka_unit_test(test_shell_concurrent),
        cmocka_unit_test_setup_teardown(test_shell_out_of_descriptors,
                                        setup_dir, teardown_fds),
        cmocka_unit_test(test_alloc_failures),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
