/*
 * test_handles.c - an embedder with two handles on one database, beside
 * other processes: the engine on handle A with a real libuv loop, a second
 * handle B opened by planctl_open() while A is open (as planctl.h
 * recommends), and the real planctl binary (PLANCTL_BIN) run as child
 * processes that read, write and close their own connections.
 *
 * POSIX advisory locks belong to the process, and closing any descriptor
 * on a file drops all of them (SQLite's "How To Corrupt An SQLite Database
 * File", 2.2).  If opening B closes a descriptor on the database, A's lock
 * is gone; the next process to close its connection thinks it is the last,
 * checkpoints and deletes the -wal and -shm under the embedder, whose
 * engine goes on committing into an unlinked file: other processes see
 * stale rows, and after a kill -9 those commits are lost.  So, checked:
 *   - the -wal file stays, with the same inode, while the embedder runs;
 *   - every commit the embedder reports (engine transitions read back
 *     through B, triggers made through B) is visible at once to a new
 *     process, and every commit of a CLI process reaches the engine;
 *   - after a kill -9 of the embedder, a fresh process finds every run it
 *     reported with the status and the events it reported, and verify
 *     passes.
 * Nothing depends on timing: each step waits for what it needs (with a
 * generous bound that only turns a hang into a failure).
 *
 * On PostgreSQL (unit.pg.test_handles) the same embedder, handles and CLI
 * share one schema; there is no -wal or -shm to watch, the rest holds as
 * it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "planctl.h"
#include "testutil.h"

#define WAIT_TICK_MS 10
#define WAIT_LIMIT_MS 30000 /* a run of Dummy steps takes milliseconds */
#define REPORT_LIMIT_MS 60000

static const char definition[] =
    "{\"name\":\"h\",\"version\":\"1\","
    "\"parameters\":[{\"name\":\"TITLE\",\"default\":\"Hello\"}],"
    "\"tasks\":[{\"name\":\"quick\",\"kind\":\"Dummy\"},"
    "{\"name\":\"nap\",\"kind\":\"Dummy\",\"spec\":{\"sleep\":\"20ms\"}}],"
    "\"plans\":{"
    "\"deploy\":{\"phases\":[{\"name\":\"p\",\"strategy\":\"parallel\","
    "\"steps\":[{\"name\":\"a\",\"tasks\":[\"quick\",\"nap\"]},"
    "{\"name\":\"b\",\"tasks\":[\"nap\"]}]},"
    "{\"name\":\"q\",\"steps\":[{\"name\":\"c\",\"tasks\":[\"quick\"]}]}]},"
    "\"update\":{\"phases\":[{\"name\":\"p\",\"steps\":["
    "{\"name\":\"a\",\"tasks\":[\"nap\"]}]}]},"
    "\"backup\":{\"phases\":[{\"name\":\"p\",\"steps\":["
    "{\"name\":\"a\",\"tasks\":[\"nap\",\"quick\"]}]}]}}}";

static int terminal(const char *status)
{
    return !strcmp(status, "COMPLETE") || !strcmp(status, "FATAL_ERROR") ||
           !strcmp(status, "CANCELLED");
}

/* The status of run `run` in a history document, copied to status ("" when
 * the run is not there); -1 if doc is not one. */
static int run_status(char *status, size_t n, const char *doc, int64_t run)
{
    json_t *root = json_loads(doc, 0, NULL), *r;
    size_t i;
    int rc = -1;

    *status = '\0';
    if (!root)
        return -1;
    json_array_foreach(json_object_get(root, "runs"), i, r)
    {
        if (json_integer_value(json_object_get(r, "id")) == run) {
            snprintf(status, n, "%s",
                     json_string_value(json_object_get(r, "status")));
            break;
        }
    }
    rc = json_is_array(json_object_get(root, "runs")) ? 0 : -1;
    json_decref(root);
    return rc;
}

/* The number of events in an events document, or -1. */
static int event_count(const char *doc)
{
    json_t *root = json_loads(doc, 0, NULL);
    int n = -1;

    if (root && json_is_array(json_object_get(root, "events")))
        n = (int)json_array_size(json_object_get(root, "events"));
    json_decref(root);
    return n;
}

/* ---- the embedder (a child process, killed at the end) ---- */

typedef struct embedder {
    const char *path;
    uv_loop_t loop;
    planctl *a; /* the engine's */
    planctl *b; /* the embedder's own calls */
    planctl *r; /* a read-only third one */
    planctl_engine *e;
    uv_pipe_t in;
    uv_timer_t tick;
    char line[256];
    size_t len;
    int64_t want; /* the run "wait" waits for, or 0 */
    int64_t waited;
    int out;
} embedder;

static void say(embedder *m, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof buf - 1)
        _exit(30);
    buf[n++] = '\n';
    if (write(m->out, buf, (size_t)n) != n)
        _exit(31);
}

/* Whether run m->want has ended, as the embedder's handles read it; says so,
 * with its status and number of events, when it has. */
static int settled(embedder *m)
{
    planctl_history_options ho = PLANCTL_HISTORY_OPTIONS_INIT;
    planctl_events_options eo = PLANCTL_EVENTS_OPTIONS_INIT;
    char *doc = NULL, status[32];
    int n;

    ho.limit = 1000;
    if (planctl_history_json(&doc, m->r, "site", &ho) < 0 ||
        run_status(status, sizeof status, doc, m->want) < 0) {
        say(m, "error history: %s", planctl_errmsg(m->r));
        _exit(32);
    }
    planctl_free(doc);
    if (!terminal(status)) {
        m->waited += WAIT_TICK_MS;
        if (m->waited < WAIT_LIMIT_MS)
            return 0;
        say(m, "timeout %lld %s", (long long)m->want,
            *status ? status : "(absent)");
        return 1;
    }
    eo.run = m->want;
    if (planctl_events_json(&doc, m->b, &eo) < 0 ||
        (n = event_count(doc)) < 0) {
        say(m, "error events: %s", planctl_errmsg(m->b));
        _exit(33);
    }
    planctl_free(doc);
    say(m, "done %lld %s %d", (long long)m->want, status, n);
    return 1;
}

static void on_tick(uv_timer_t *t)
{
    embedder *m = t->data;

    if (m->want && settled(m)) {
        m->want = 0;
        uv_timer_stop(&m->tick);
    }
}

static void command(embedder *m, const char *line)
{
    int64_t run = 0;

    if (!strncmp(line, "trigger ", 8)) {
        if (planctl_plan_trigger(&run, m->b, "site", line + 8, NULL) < 0)
            say(m, "error trigger: %s", planctl_errmsg(m->b));
        else
            say(m, "triggered %lld", (long long)run);
    } else if (!strncmp(line, "wait ", 5)) {
        m->want = strtoll(line + 5, NULL, 10);
        m->waited = 0;
        uv_timer_start(&m->tick, on_tick, 0, WAIT_TICK_MS);
    } else if (!strcmp(line, "reopen")) {
        /* Closing B and opening it again, while A stays open. */
        planctl_close(m->b);
        if (planctl_open(&m->b, m->path, NULL) < 0) {
            say(m, "error reopen: %s", planctl_errmsg(m->b));
            _exit(35);
        }
        say(m, "reopened");
    } else {
        say(m, "error unknown command %s", line);
    }
}

static void alloc_cb(uv_handle_t *h, size_t size, uv_buf_t *buf)
{
    static char chunk[256];

    (void)h;
    (void)size;
    *buf = uv_buf_init(chunk, sizeof chunk);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    embedder *m = s->data;
    ssize_t i;

    if (n < 0)
        _exit(0); /* the test went away */
    for (i = 0; i < n; i++) {
        if (buf->base[i] != '\n') {
            if (m->len + 1 >= sizeof m->line)
                _exit(34);
            m->line[m->len++] = buf->base[i];
            continue;
        }
        m->line[m->len] = '\0';
        m->len = 0;
        command(m, m->line);
    }
}

/* The embedder: an engine on handle A, then handles B and R opened beside
 * it, commands from in_fd, reports to out_fd.  Never returns. */
static void embed(const char *path, int in_fd, int out_fd)
{
    static embedder m;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_open_options ro = PLANCTL_OPEN_OPTIONS_INIT;

    m.path = path;
    m.out = out_fd;
    o.change_poll_ms = 20;
    if (planctl_open(&m.a, path, NULL) < 0 || uv_loop_init(&m.loop) != 0 ||
        planctl_engine_new(&m.e, m.a, &m.loop, &o) < 0 ||
        planctl_engine_start(m.e, NULL, NULL) < 0) {
        say(&m, "error engine: %s", planctl_errmsg(m.a));
        _exit(10);
    }
    /* The engine's handle has taken the lease, so its connection holds its
     * locks: now the embedder's own handles, as planctl.h recommends. */
    ro.flags = PLANCTL_OPEN_READONLY;
    if (planctl_open(&m.b, path, NULL) < 0) {
        say(&m, "error open B: %s", planctl_errmsg(m.b));
        _exit(11);
    }
    if (planctl_open(&m.r, path, &ro) < 0) {
        say(&m, "error open R: %s", planctl_errmsg(m.r));
        _exit(11);
    }
    if (uv_pipe_init(&m.loop, &m.in, 0) != 0 || uv_pipe_open(&m.in, in_fd) ||
        uv_timer_init(&m.loop, &m.tick) != 0)
        _exit(12);
    m.in.data = &m;
    m.tick.data = &m;
    if (uv_read_start((uv_stream_t *)&m.in, alloc_cb, on_read) != 0)
        _exit(12);
    say(&m, "ready");
    uv_run(&m.loop, UV_RUN_DEFAULT);
    _exit(13);
}

/* ---- the test's side ---- */

typedef struct report {
    int64_t run;
    char status[32]; /* "" when only its creation was reported */
    int events;      /* -1 when unknown */
} report;

typedef struct fixture {
    char *dir, *db, *wal, *shm, *err;
    const char *bin;
    pid_t pid;    /* the embedder, or 0 */
    int to, from; /* its command and report pipes */
    ino_t wal_ino, shm_ino;
    char *problems;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    f->bin = getenv("PLANCTL_BIN");
    f->dir = tu_mkdtemp();
    {
        char *file = tu_fmt("%s/handles.db", f->dir);

        f->db = tu_db_target(file);
        free(file);
    }
    f->wal = tu_fmt("%s-wal", f->db);
    f->shm = tu_fmt("%s-shm", f->db);
    f->err = tu_fmt("%s/cli.err", f->dir);
    f->to = f->from = -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    if (f->pid > 0) {
        kill(f->pid, SIGKILL);
        waitpid(f->pid, NULL, 0);
    }
    if (f->to >= 0)
        close(f->to);
    if (f->from >= 0)
        close(f->from);
    tu_rmtree(f->dir);
    free(f->problems);
    free(f->err);
    free(f->shm);
    free(f->wal);
    free(f->db);
    free(f->dir);
    free(f);
    return 0;
}

/* Notes a violation and goes on, so one run shows every symptom. */
static void problem(fixture *f, const char *fmt, ...)
{
    char line[512], *all;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    all = tu_fmt("%s  - %s\n", f->problems ? f->problems : "", line);
    free(f->problems);
    f->problems = all;
}

static void give_up(fixture *f, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (f->problems)
        fprintf(stderr, "before that:\n%s", f->problems);
    fail_msg("%s", line);
}

/* Runs `planctl --db DB args...` (NULL-terminated) to its end; its
 * standard output in *out (malloc'd).  Returns its exit code. */
static int cli(fixture *f, char **out, ...)
{
    char *argv[16], buf[4096];
    size_t len = 0;
    ssize_t got;
    va_list ap;
    int n = 0, fds[2], st;
    pid_t pid;

    argv[n++] = (char *)f->bin;
    argv[n++] = "--db";
    argv[n++] = f->db;
    va_start(ap, out);
    while (n < 15 && (argv[n] = va_arg(ap, char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int err = open(f->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

        if (err < 0 || dup2(fds[1], 1) < 0 || dup2(err, 2) < 0)
            _exit(126);
        close(fds[0]);
        close(fds[1]);
        close(err);
        setenv("NO_COLOR", "1", 1);
        execv(f->bin, argv);
        _exit(127);
    }
    close(fds[1]);
    *out = NULL;
    while ((got = read(fds[0], buf, sizeof buf)) > 0 ||
           (got < 0 && errno == EINTR)) {
        if (got < 0)
            continue;
        *out = realloc(*out, len + (size_t)got + 1);
        assert_non_null(*out);
        memcpy(*out + len, buf, (size_t)got);
        len += (size_t)got;
        (*out)[len] = '\0';
    }
    close(fds[0]);
    if (!*out)
        *out = calloc(1, 1);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st))
        give_up(f, "planctl %s died of signal %d", argv[3], WTERMSIG(st));
    if (WEXITSTATUS(st) != 0) {
        char *err = tu_read_file(f->err, NULL);

        problem(f, "planctl %s %s: exit %d: %s", argv[3],
                argv[4] ? argv[4] : "", WEXITSTATUS(st), err ? err : "");
        free(err);
    }
    return WEXITSTATUS(st);
}

static void start_embedder(fixture *f)
{
    int to[2], from[2];

    assert_int_equal(pipe(to), 0);
    assert_int_equal(pipe(from), 0);
    f->pid = fork();
    assert_true(f->pid >= 0);
    if (f->pid == 0) {
        close(to[1]);
        close(from[0]);
        embed(f->db, to[0], from[1]);
    }
    close(to[0]);
    close(from[1]);
    f->to = to[1];
    f->from = from[0];
}

static void send_cmd(fixture *f, const char *fmt, ...)
{
    char line[128];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && n < (int)sizeof line - 1);
    line[n++] = '\n';
    assert_int_equal(write(f->to, line, (size_t)n), n);
}

/* The embedder's next report line, into line. */
static void expect_report(fixture *f, char *line, size_t size)
{
    size_t len = 0;

    for (;;) {
        struct pollfd pfd = {f->from, POLLIN, 0};
        int ready = poll(&pfd, 1, REPORT_LIMIT_MS);
        ssize_t got;

        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            give_up(f, "the embedder said nothing for %d ms", REPORT_LIMIT_MS);
        got = read(f->from, line + len, 1);
        if (got <= 0)
            give_up(f, "the embedder ended without a report");
        if (line[len] == '\n') {
            line[len] = '\0';
            break;
        }
        if (++len + 1 >= size)
            give_up(f, "the embedder's report is too long");
    }
    if (!strncmp(line, "error", 5) && strncmp(line, "error trigger", 13))
        give_up(f, "the embedder: %s", line);
}

static ino_t inode_of(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 ? sb.st_ino : 0;
}

/* The -wal and -shm the embedder opened must stay while it runs: a
 * process that deletes them thinks it closed the last connection. */
static void check_files(fixture *f, const char *after)
{
    ino_t wal, shm;

    /* SQLite's files: a server's database has none beside it. */
    if (tu_on_pg())
        return;
    wal = inode_of(f->wal);
    shm = inode_of(f->shm);
    if (wal != f->wal_ino)
        problem(f, "after %s: %s %s while the embedder runs", after, f->wal,
                wal ? "was replaced" : "is gone");
    if (shm != f->shm_ino)
        problem(f, "after %s: %s %s while the embedder runs", after, f->shm,
                shm ? "was replaced" : "is gone");
}

/* Has the embedder wait for run to end; what it reports committed. */
static report await(fixture *f, int64_t run)
{
    report r = {run, "", -1};
    char line[256], status[32];
    long long id;
    int events;

    send_cmd(f, "wait %lld", (long long)run);
    expect_report(f, line, sizeof line);
    if (sscanf(line, "done %lld %31s %d", &id, status, &events) == 3 &&
        id == run) {
        snprintf(r.status, sizeof r.status, "%s", status);
        r.events = events;
    } else {
        problem(f, "run %lld did not end in the embedder: %s", (long long)run,
                line);
    }
    return r;
}

/* The status of run in `planctl history` ("" when it is not there). */
static void cli_status(fixture *f, char *status, size_t n, int64_t run)
{
    char *out;

    *status = '\0';
    if (cli(f, &out, "history", "site", "--limit", "1000", "-o", "json",
            NULL) == 0 &&
        run_status(status, n, out, run) < 0)
        problem(f, "planctl history printed no history: %s", out);
    free(out);
}

/* Another process sees what the embedder reported committed: the run (and
 * when reported, its status and its number of events). */
static void check_visible(fixture *f, const report *r, const char *when)
{
    char status[32] = "", num[32], *out;
    int n;

    cli_status(f, status, sizeof status, r->run);
    if (!*status) {
        problem(f, "%s: run %lld is not there for another process", when,
                (long long)r->run);
        return;
    }
    if (!*r->status)
        return;
    if (strcmp(status, r->status) != 0)
        problem(f,
                "%s: run %lld is %s for another process; the embedder "
                "committed it %s",
                when, (long long)r->run, status, r->status);
    snprintf(num, sizeof num, "%lld", (long long)r->run);
    if (cli(f, &out, "events", "site", "--run", num, "-o", "json", NULL) == 0 &&
        (n = event_count(out)) != r->events)
        problem(f,
                "%s: run %lld has %d events for another process; the "
                "embedder committed %d",
                when, (long long)r->run, n, r->events);
    free(out);
}

/* The newest run id in `planctl history`, or 0. */
static int64_t cli_newest_run(fixture *f)
{
    char *out;
    json_t *root;
    int64_t id = 0;

    if (cli(f, &out, "history", "site", "-o", "json", NULL) == 0 &&
        (root = json_loads(out, 0, NULL)) != NULL) {
        id = json_integer_value(json_object_get(
            json_array_get(json_object_get(root, "runs"), 0), "id"));
        json_decref(root);
    }
    free(out);
    return id;
}

static int64_t embedder_trigger(fixture *f, const char *plan)
{
    char line[256];
    long long id;

    send_cmd(f, "trigger %s", plan);
    expect_report(f, line, sizeof line);
    if (sscanf(line, "triggered %lld", &id) != 1) {
        problem(f, "the embedder could not trigger %s: %s", plan, line);
        return 0;
    }
    return id;
}

/* B triggers plan and, unless until_done is 0, waits for the run to end;
 * another process must see the run at once each time. */
static int64_t through_b(fixture *f, report *rec, size_t *nrec,
                         const char *plan, int until_done)
{
    report r = {embedder_trigger(f, plan), "", -1};

    if (!r.run)
        return 0;
    rec[(*nrec)++] = r;
    check_visible(f, &r, "once the embedder said it triggered");
    if (until_done) {
        rec[*nrec - 1] = await(f, r.run);
        check_visible(f, &rec[*nrec - 1],
                      "once the embedder said the run ended");
    }
    return r.run;
}

static void test_engine_second_handle_and_cli(void **state)
{
    fixture *f = *state;
    report rec[8];
    size_t nrec = 0, i;
    char line[256], *out;
    planctl *p;
    int64_t run;
    int st;

    /* Never a silent skip: without the binary the test cannot run. */
    if (!f->bin)
        fail_msg("PLANCTL_BIN is not set: run this test with ctest, or set "
                 "it to the planctl binary");
    assert_int_equal(planctl_open(&p, f->db, NULL), 0);
    assert_int_equal(planctl_definition_apply(NULL, p, definition,
                                              strlen(definition), "h.json"),
                     0);
    assert_int_equal(
        planctl_instance_create(&run, p, "site", "h", NULL, NULL, 0), 0);
    assert_int_equal(run, 1);
    planctl_close(p);

    start_embedder(f);
    expect_report(f, line, sizeof line);
    assert_string_equal(line, "ready");
    if (!tu_on_pg()) {
        f->wal_ino = inode_of(f->wal);
        f->shm_ino = inode_of(f->shm);
        assert_true(f->wal_ino != 0 && f->shm_ino != 0);
    }

    /* The engine runs the deploy create admitted; processes that read and
     * close their connections see it, and leave the -wal alone. */
    rec[nrec++] = await(f, 1);
    check_files(f, "the engine's first run");
    cli(f, &out, "status", "site", NULL);
    free(out);
    check_files(f, "planctl status");
    check_visible(f, &rec[0], "once the embedder said run 1 ended");
    check_files(f, "planctl history and events");

    /* B writes, the engine runs it: others see both at once. */
    through_b(f, rec, &nrec, "backup", 1);
    check_files(f, "a run triggered through B");

    /* A writer in another process: the engine picks up its run. */
    cli(f, &out, "set", "site", "-p", "TITLE=Welcome", NULL);
    free(out);
    check_files(f, "planctl set");
    run = cli_newest_run(f);
    if (run != 3)
        problem(f, "planctl set admitted run %lld, not run 3", (long long)run);
    else {
        rec[nrec++] = await(f, run);
        check_visible(f, &rec[nrec - 1], "once the embedder said run 3 ended");
    }
    check_files(f, "run 3");

    /* B closed and opened again while A stays open, then B writes. */
    send_cmd(f, "reopen");
    expect_report(f, line, sizeof line);
    assert_string_equal(line, "reopened");
    through_b(f, rec, &nrec, "backup", 1);
    check_files(f, "a run triggered through the reopened B");

    /* kill -9 while a run triggered through B is under way: nothing the
     * embedder reported committed may be lost. */
    through_b(f, rec, &nrec, "update", 0);
    kill(f->pid, SIGKILL);
    assert_int_equal(waitpid(f->pid, &st, 0), f->pid);
    f->pid = 0;
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

    cli(f, &out, "verify", NULL);
    free(out);
    for (i = 0; i < nrec; i++)
        check_visible(f, &rec[i], "after kill -9 of the embedder");
    if (f->problems) {
        /* cmocka cuts long messages: the list goes to stderr whole. */
        fprintf(stderr,
                "what the embedder committed was not what other "
                "processes saw:\n%s",
                f->problems);
        fail_msg("the embedder's commits were not safe beside its second "
                 "handle (listed above)");
    }
}

/* A run admitted through the engine's own handle while it runs, and no
 * heartbeat for an hour (its TTL): the engine starts it without waiting
 * for one.  On PostgreSQL the engine claims runs when woken, and its own
 * handle's commits wake nobody by notification (test_handles' subject on
 * SQLite: one handle serving the engine and the embedder). */
typedef struct own_admit {
    planctl *p;
    planctl_engine *e;
    uv_timer_t tick;
    int64_t run;
    int ticks, done;
    char status[32];
} own_admit;

static void own_admit_tick(uv_timer_t *t)
{
    own_admit *o = t->data;
    char *doc = NULL;

    if (o->ticks++ == 2 &&
        planctl_instance_create(&o->run, o->p, "own", "one", NULL, NULL, 0))
        fail_msg("create: %s", planctl_errmsg(o->p));
    if (o->run && planctl_history_json(&doc, o->p, "own", NULL) == 0 &&
        run_status(o->status, sizeof o->status, doc, o->run) == 0 &&
        strcmp(o->status, "COMPLETE") == 0)
        o->done = 1;
    planctl_free(doc);
    /* 60 s at most: a bound on a hang, not a time the test measures. */
    if (o->done || o->ticks > 1200) {
        uv_timer_stop(t);
        planctl_engine_stop(o->e, 0);
    }
}

static void test_admit_on_engine_handle(void **state)
{
    static const char def[] =
        "{\"name\":\"one\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","
        "\"kind\":\"Dummy\",\"spec\":{}}],\"plans\":{\"deploy\":{\"phases\":"
        "[{\"name\":\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":[\"t\"]}]}]}}}";
    planctl_engine_options opts = PLANCTL_ENGINE_OPTIONS_INIT;
    tu_db *db = tu_db_open("own.db", 0);
    uv_loop_t loop;
    own_admit o;

    (void)state;
    memset(&o, 0, sizeof o);
    o.p = db->p;
    tu_apply(db->p, def);
    opts.lease_ttl_ms = 3600 * 1000;
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(planctl_engine_new(&o.e, db->p, &loop, &opts), 0);
    assert_int_equal(planctl_engine_start(o.e, NULL, NULL), 0);
    uv_timer_init(&loop, &o.tick);
    o.tick.data = &o;
    uv_timer_start(&o.tick, own_admit_tick, 50, 50);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&o.tick, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    planctl_engine_free(o.e);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(tu_db_close(db), 0);
    if (!o.done)
        fail_msg("the run admitted on the engine's handle is %s after 60 s",
                 o.status[0] ? o.status : "unread");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_engine_second_handle_and_cli,
                                        setup, teardown),
        cmocka_unit_test(test_admit_on_engine_handle),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
