/*
 * wait.c - the poll loop that follows the database while the engine, in
 * another process, changes it, and `--wait` for one run built on it.
 *
 * Nothing tells this process that the engine committed, so it asks: PRAGMA
 * data_version changes whenever another connection commits, and reading it
 * is cheap, so a 100 ms timer reads it and runs the command's check when it
 * moved.  The check also runs once a second anyway, which keeps durations
 * and countdowns on a terminal moving and covers a change the version
 * might not show.
 */
#include "wait.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "core/def.h"

typedef struct poller {
    uv_loop_t loop;
    uv_timer_t tick, deadline;
    uv_signal_t sigint, sigterm;
    int has_deadline;
    cli_ctx *ctx;
    cli_poll_fn check;
    void *data;
    int64_t version;
    int have_version;
    int idle; /* ticks since the last check */
    int done;
    int result;
} poller;

/* Blocks (how: SIG_BLOCK) or unblocks SIGINT and SIGTERM. */
static void hold_signals(int how)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(how, &set, NULL);
}

static void stop(poller *p, int result)
{
    if (p->done)
        return;
    p->done = 1;
    p->result = result;
    /* Heard: SIGINT and SIGTERM are held from here until cli_poll_run
     * ignores them.  Closing the handles gives them back their default
     * action, and a second Ctrl-C before they are ignored killed the
     * command before its line (valgrind.cli.wait_trigger under load). */
    if (result == CLI_POLL_SIGNAL)
        hold_signals(SIG_BLOCK);
    /* The handles live in *p, which outlives uv_run(): no close
     * callbacks are needed to free them. */
    uv_close((uv_handle_t *)&p->tick, NULL);
    if (p->has_deadline)
        uv_close((uv_handle_t *)&p->deadline, NULL);
    uv_close((uv_handle_t *)&p->sigint, NULL);
    uv_close((uv_handle_t *)&p->sigterm, NULL);
}

static void on_tick(uv_timer_t *t)
{
    poller *p = t->data;
    int64_t v;
    int changed = 1;

    if (p->done)
        return;
    /* The version is read before the check, so a commit landing during
     * the check moves it again and the next tick looks once more. */
    if (planctl_data_version(&v, p->ctx->db) == 0) {
        changed = !p->have_version || v != p->version;
        p->version = v;
        p->have_version = 1;
    }
    if (!changed && ++p->idle < CLI_POLL_FALLBACK_MS / CLI_POLL_INTERVAL_MS)
        return;
    p->idle = 0;
    int rc = p->check(p->data, changed);
    if (rc != CLI_POLL_AGAIN)
        stop(p, rc);
}

static void on_deadline(uv_timer_t *t)
{
    stop(t->data, CLI_POLL_TIMEOUT);
}

static void on_signal(uv_signal_t *s, int signum)
{
    poller *p = s->data;

    p->ctx->signal = signum;
    stop(p, CLI_POLL_SIGNAL);
}

int cli_interrupted_exit(const cli_ctx *ctx)
{
    return 128 + (ctx->signal > 0 ? ctx->signal : SIGINT);
}

int cli_poll_run(cli_ctx *ctx, int64_t timeout_ms, cli_poll_fn check,
                 void *data)
{
    poller p;

    memset(&p, 0, sizeof(p));
    p.ctx = ctx;
    p.check = check;
    p.data = data;
    if (uv_loop_init(&p.loop) != 0) {
        cli_errorf("cannot create an event loop");
        return CLI_EXIT_ERROR;
    }
    uv_timer_init(&p.loop, &p.tick);
    uv_signal_init(&p.loop, &p.sigint);
    uv_signal_init(&p.loop, &p.sigterm);
    p.tick.data = p.sigint.data = p.sigterm.data = &p;
    uv_timer_start(&p.tick, on_tick, 0, CLI_POLL_INTERVAL_MS);
    if (timeout_ms > 0) {
        uv_timer_init(&p.loop, &p.deadline);
        p.deadline.data = &p;
        p.has_deadline = 1;
        uv_timer_start(&p.deadline, on_deadline, (uint64_t)timeout_ms, 0);
    }
    uv_signal_start(&p.sigint, on_signal, SIGINT);
    uv_signal_start(&p.sigterm, on_signal, SIGTERM);
    uv_run(&p.loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&p.loop) != 0) {
        cli_errorf("internal error: the event loop still had open handles");
        return CLI_EXIT_ERROR;
    }
    /* Heard: the command says so and exits.  libuv gave the signals back
     * their default action when it stopped watching them, so a second
     * Ctrl-C would kill it before its line (found by the wait_trigger
     * case under valgrind, which sends SIGINT until it reads that line). */
    if (p.result == CLI_POLL_SIGNAL) {
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        hold_signals(SIG_UNBLOCK); /* one that came meanwhile: ignored */
    }
    return p.result;
}

int cli_run_exit_code(const char *status)
{
    if (!status)
        return -1;
    if (strcmp(status, "COMPLETE") == 0)
        return CLI_EXIT_OK;
    if (strcmp(status, "FATAL_ERROR") == 0 || strcmp(status, "CANCELLED") == 0)
        return CLI_EXIT_RUN_FAILED;
    return -1;
}

const json_t *cli_doc_find_run(const json_t *doc, int64_t id)
{
    size_t i;
    const json_t *plan;
    json_array_foreach(json_object_get(doc, "plans"), i, plan)
    {
        const json_t *run = json_object_get(plan, "run");
        int64_t rid;
        if (cli_jint(&rid, run, "id") && rid == id)
            return run;
    }
    return NULL;
}

void cli_now_refresh(cli_ctx *ctx)
{
    struct timespec ts;

    if (ctx->fixed_now)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    ctx->now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cli_wait_flags(int *wait, int64_t *timeout_ms, const cli_command *cmd,
                   const cli_args *a)
{
    const char *timeout = cli_arg(a, "timeout");

    *wait = cli_arg_count(a, "wait") > 0;
    *timeout_ms = 0;
    if (!timeout)
        return 0;
    if (!*wait)
        return cli_usage_error(cmd, "--timeout needs --wait");
    if (pctl_duration_parse(timeout_ms, timeout) < 0 || *timeout_ms <= 0)
        return cli_usage_error(cmd,
                               "--timeout must be a duration such as \"30s\", "
                               "not \"%s\"",
                               timeout);
    return 0;
}

/* ---- waiting for one run ------------------------------------------------ */

typedef struct waiter {
    cli_ctx *ctx;
    const char *instance;
    int64_t run;
    int live;              /* stderr is a terminal: show progress there */
    int live_shown;        /* a progress line is on the screen */
    json_t *doc;           /* the last status document read */
    const json_t *run_obj; /* the run in doc */
    cli_engine_watch engine;
} waiter;

/* Columns of the terminal on stderr, 0 when unknown. */
static int stderr_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 0;
}

/* "node-1 (attempt 2/5)" or "ping (attempt 1/3 failed, next try in 4s)". */
static void add_step(cli_buf *b, const json_t *step, int64_t now)
{
    const char *status = cli_jstr(step, "status");
    int64_t attempt = 0, max = 0, next;
    char d[32];

    cli_buf_add_clean(b, cli_jstr(step, "name") ? cli_jstr(step, "name") : "?");
    cli_jint(&attempt, step, "attempt");
    cli_jint(&max, step, "max_attempts");
    if (status && strcmp(status, "ERROR") == 0) {
        cli_buf_addf(b, " (attempt %lld/%lld failed", (long long)attempt,
                     (long long)max);
        if (cli_jtime(&next, step, "next_attempt_at") && next > now) {
            cli_duration_format(d, sizeof(d), next - now);
            cli_buf_addf(b, ", next try in %s", d);
        }
        cli_buf_add(b, ")");
    } else if (attempt > 1) {
        cli_buf_addf(b, " (attempt %lld/%lld)", (long long)attempt,
                     (long long)max);
    }
}

/* 'run 12 deploy: IN_PROGRESS, 3/7 steps done, now node-1 (attempt 2/5)'
 * and the like. */
static void progress_line(cli_buf *b, const waiter *w)
{
    const json_t *run = w->run_obj;
    const char *plan = cli_jstr(run, "plan");
    const char *status = cli_jstr(run, "status");
    size_t i, j, done = 0, total = 0, running = 0;
    const json_t *phase, *step, *v;

    cli_buf_addf(b, "run %lld ", (long long)w->run);
    cli_buf_add_clean(b, plan ? plan : "?");
    cli_buf_addf(b, ": %s", status ? status : "?");
    if (status && strcmp(status, "QUEUED") == 0) {
        json_array_foreach(json_object_get(w->doc, "queued"), i, v)
        {
            if (json_is_integer(v) && json_integer_value(v) == w->run)
                cli_buf_addf(b, ", position %zu", i + 1);
        }
        return;
    }
    json_array_foreach(json_object_get(run, "phases"), i, phase)
    {
        json_array_foreach(json_object_get(phase, "steps"), j, step)
        {
            const char *s = cli_jstr(step, "status");
            total++;
            done += s && strcmp(s, "COMPLETE") == 0;
        }
    }
    cli_buf_addf(b, ", %zu/%zu steps done", done, total);
    /* The steps being tried: the first two by name, then a count. */
    json_array_foreach(json_object_get(run, "phases"), i, phase)
    {
        json_array_foreach(json_object_get(phase, "steps"), j, step)
        {
            const char *s = cli_jstr(step, "status");
            if (!s || (strcmp(s, "IN_PROGRESS") && strcmp(s, "ERROR")))
                continue;
            if (running < 2) {
                cli_buf_add(b, running ? ", " : ", now ");
                add_step(b, step, w->ctx->now_ms);
            }
            running++;
        }
    }
    if (running > 2)
        cli_buf_addf(b, " and %zu more", running - 2);
}

static void live_clear(waiter *w)
{
    if (!w->live_shown)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    w->live_shown = 0;
}

static void live_show(waiter *w)
{
    cli_buf b = CLI_BUF_INIT;
    int width = stderr_width();

    progress_line(&b, w);
    /* A line that wraps cannot be redrawn with \r: cut it to the width. */
    if (width > 1 && cli_text_width(b.s, b.len) >= (size_t)width) {
        size_t cols = 0, i;
        for (i = 0; i < b.len; i++) {
            if (((unsigned char)b.s[i] & 0xc0) != 0x80 &&
                ++cols == (size_t)width)
                break;
        }
        b.len = i;
        b.s[i] = '\0';
    }
    fprintf(stderr, "\r%s\033[K", cli_buf_str(&b));
    fflush(stderr);
    w->live_shown = 1;
    cli_buf_free(&b);
}

static int wait_check(void *data, int changed)
{
    waiter *w = data;
    planctl_status_options opts = PLANCTL_STATUS_OPTIONS_INIT;
    char *text = NULL;

    (void)changed; /* a run's document is small: always read it */
    opts.run = w->run;
    int rc = planctl_status_json(&text, w->ctx->db, w->instance, &opts);
    if (rc == PLANCTL_EBUSY)
        return CLI_POLL_AGAIN;
    if (rc < 0) {
        live_clear(w);
        return cli_fail(w->ctx, rc);
    }
    json_t *doc = cli_json_parse(text);
    planctl_free(text);
    if (!doc) {
        live_clear(w);
        return CLI_EXIT_ERROR;
    }
    const json_t *run = cli_doc_find_run(doc, w->run);
    if (!run) {
        json_decref(doc);
        live_clear(w);
        cli_errorf("run %lld of instance \"%s\" is not in its status",
                   (long long)w->run, w->instance);
        return CLI_EXIT_ERROR;
    }
    json_decref(w->doc);
    w->doc = doc;
    w->run_obj = run;
    cli_now_refresh(w->ctx);
    int code = cli_run_exit_code(cli_jstr(run, "status"));
    if (code >= 0)
        return code;
    cli_buf msg = CLI_BUF_INIT;
    if (cli_engine_watch_check(&w->engine, &msg, w->ctx, doc, w->run)) {
        live_clear(w);
        cli_errorf("%s", cli_buf_str(&msg));
    }
    cli_buf_free(&msg);
    if (w->live)
        live_show(w);
    return CLI_POLL_AGAIN;
}

/* The first FATAL_ERROR step with a message, or NULL. */
static const json_t *failed_step(const json_t *run)
{
    size_t i, j;
    const json_t *phase, *step;
    json_array_foreach(json_object_get(run, "phases"), i, phase)
    {
        json_array_foreach(json_object_get(phase, "steps"), j, step)
        {
            const char *s = cli_jstr(step, "status");
            const char *msg = cli_jstr(step, "message");
            if (s && strcmp(s, "FATAL_ERROR") == 0 && msg && msg[0] &&
                cli_jstr(step, "name"))
                return step;
        }
    }
    return NULL;
}

/* 'run 12 of plan "deploy" COMPLETE in 1m12s', with the run's message
 * and the failed step's when it failed. */
static void print_outcome(const waiter *w)
{
    const json_t *run = w->run_obj;
    const char *plan = cli_jstr(run, "plan");
    const char *status = cli_jstr(run, "status");
    const char *msg = cli_jstr(run, "message");
    cli_buf b = CLI_BUF_INIT;
    int64_t ms;
    char d[32];

    cli_buf_addf(&b, "run %lld of plan \"", (long long)w->run);
    cli_buf_add_clean(&b, plan ? plan : "?");
    cli_buf_addf(&b, "\" %s", status ? status : "?");
    if (cli_jint(&ms, run, "duration_ms")) {
        cli_duration_format(d, sizeof(d), ms);
        cli_buf_addf(&b, " in %s", d);
    }
    if (status && strcmp(status, "COMPLETE") != 0 && msg && msg[0]) {
        cli_buf_add(&b, ": ");
        cli_buf_add_clean(&b, msg);
    }
    /* A failed run's message names the phase; the cause is the step's. */
    const json_t *step = failed_step(run);
    if (step) {
        cli_buf_add(&b, "; step \"");
        cli_buf_add_clean(&b, cli_jstr(step, "name"));
        cli_buf_add(&b, "\": ");
        cli_buf_add_clean(&b, cli_jstr(step, "message"));
    }
    printf("%s\n", cli_buf_str(&b));
    cli_buf_free(&b);
}

static int print_run_doc(const waiter *w)
{
    return cli_json_print_obj(
        json_pack("{s:i, s:O}", "schema", 1, "run", (json_t *)w->run_obj));
}

int cli_wait_run(cli_ctx *ctx, const char *instance, int64_t run,
                 int64_t timeout_ms)
{
    waiter w;
    char d[32];

    memset(&w, 0, sizeof(w));
    w.ctx = ctx;
    w.instance = instance;
    w.run = run;
    w.live = isatty(STDERR_FILENO);
    cli_engine_watch_init(&w.engine);
    /* What was printed so far must not wait behind the progress line. */
    fflush(stdout);
    int rc = cli_poll_run(ctx, timeout_ms, wait_check, &w);
    live_clear(&w);

    const char *status = w.run_obj ? cli_jstr(w.run_obj, "status") : NULL;
    if (rc == CLI_POLL_TIMEOUT || rc == CLI_POLL_SIGNAL) {
        /* Scripts get the run as it is now, and the exit code says why. */
        if (ctx->json && w.run_obj)
            print_run_doc(&w);
        if (rc == CLI_POLL_TIMEOUT) {
            /* As given: "1500ms" must not read "1s". */
            if (timeout_ms % 1000 && timeout_ms > 1000)
                snprintf(d, sizeof(d), "%lldms", (long long)timeout_ms);
            else
                cli_duration_format(d, sizeof(d), timeout_ms);
            cli_errorf("timed out after %s waiting for run %lld (still %s); "
                       "it goes on",
                       d, (long long)run, status ? status : "?");
            rc = CLI_EXIT_TIMEOUT;
        } else {
            cli_errorf("interrupted; run %lld goes on (%s)", (long long)run,
                       status ? status : "?");
            rc = cli_interrupted_exit(ctx);
        }
    } else if (w.run_obj && cli_run_exit_code(status) == rc) {
        /* The run ended; anything else is a failed read, reported. */
        if (!ctx->json)
            print_outcome(&w);
        else if (print_run_doc(&w) != CLI_EXIT_OK)
            rc = CLI_EXIT_ERROR;
    }
    json_decref(w.doc);
    return rc;
}
