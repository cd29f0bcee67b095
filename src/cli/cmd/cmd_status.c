/* cmd_status.c - `planctl status NAME`: every plan of an instance with its
 * latest run, phases and steps, as a tree or as the status document, once
 * or (--watch) redrawn as a run advances. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

#include "cli/wait.h"

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"plan", 0, CLI_FLAG_VALUE, 0, "P", "only this plan"},
    {"run", 0, CLI_FLAG_VALUE, 0, "ID",
     "show this run instead of its plan's latest"},
    {"watch", 'w', CLI_FLAG_BOOL, 0, NULL,
     "redraw as the run advances, until it ends"},
    {"all", 0, CLI_FLAG_BOOL, 0, NULL,
     "every step of a phase of more than 20 steps, not a summary"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl status zk", "planctl status zk --plan deploy",
    "planctl status zk --run 12 -o json", "planctl status zk --watch", NULL};

/* Runs the document names by id only and shows nowhere (queued runs
 * that are not their plan's latest, the active run when --plan or --run
 * hides it), with the plan of each looked up for the text.  Queues are
 * short, and each lookup is one index read. */
typedef struct names {
    char active[128];
    size_t n;
    char (*queued)[128];
    const char **queued_ptrs;
} names;

static void lookup(char out[128], cli_ctx *ctx, const char *instance,
                   int64_t id)
{
    cli_run_info ri;
    out[0] = '\0';
    if (cli_run_lookup(&ri, ctx, instance, id) == 0)
        snprintf(out, 128, "%s", ri.plan);
}

/* Whether one of the document's plans shows run id. */
static int shown(const json_t *doc, int64_t id)
{
    size_t i;
    const json_t *plan;
    json_array_foreach(json_object_get(doc, "plans"), i, plan)
    {
        int64_t rid;
        if (cli_jint(&rid, json_object_get(plan, "run"), "id") && rid == id)
            return 1;
    }
    return 0;
}

static void names_fill(names *nm, cli_status_extra *extra, cli_ctx *ctx,
                       const char *instance, const json_t *doc)
{
    const json_t *queued = json_object_get(doc, "queued");
    size_t i;
    const json_t *v;
    int64_t active;

    memset(nm, 0, sizeof(*nm));
    if (cli_jint(&active, doc, "active_run") && !shown(doc, active))
        lookup(nm->active, ctx, instance, active);
    nm->n = json_array_size(queued);
    if (nm->n) {
        nm->queued = cli_xmalloc(nm->n * sizeof(*nm->queued));
        nm->queued_ptrs = cli_xmalloc(nm->n * sizeof(*nm->queued_ptrs));
    }
    json_array_foreach(queued, i, v)
    {
        nm->queued[i][0] = '\0';
        if (json_is_integer(v) && !shown(doc, json_integer_value(v)))
            lookup(nm->queued[i], ctx, instance, json_integer_value(v));
        nm->queued_ptrs[i] = nm->queued[i][0] ? nm->queued[i] : NULL;
    }
    extra->active_plan = nm->active[0] ? nm->active : NULL;
    extra->queued_plans = nm->queued_ptrs;
}

static void names_free(names *nm)
{
    free(nm->queued);
    free((void *)nm->queued_ptrs);
}

/* Longest value shown in text; -o json has the whole value. */
#define PARAM_TEXT_MAX 60

/* Appends a value as a task gets it: a string as it is, anything else as
 * compact JSON; cut to PARAM_TEXT_MAX characters with an ellipsis. */
static void add_value(cli_buf *b, const json_t *v, const cli_term *t)
{
    /* An empty string would read as nothing at all: "" says it is one. */
    char *text =
        json_is_string(v) && json_string_length(v) == 0 ? cli_xstrdup("\"\"")
        : json_is_string(v)
            ? cli_xstrdup(json_string_value(v))
            : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
    size_t len, cut = 0, chars = 0;

    if (!text)
        cli_oom();
    len = strlen(text);
    /* Cut at a character boundary, never inside a UTF-8 sequence. */
    for (cut = 0; cut < len; cut++)
        if (((unsigned char)text[cut] & 0xc0) != 0x80 &&
            chars++ == PARAM_TEXT_MAX)
            break;
    text[cut] = '\0';
    cli_buf_add_clean(b, text);
    if (cut < len)
        cli_buf_add(b, t->unicode ? "\xe2\x80\xa6" : "...");
    free(text);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "Parameters:" and one line each: "  NAME = VALUE (default)", or
 * "  NAME (no value)". */
static void render_parameters(cli_ctx *ctx, const json_t *doc, int64_t run)
{
    const json_t *list = json_object_get(doc, "parameters"), *param;
    const json_t *found = run > 0 ? cli_doc_find_run(doc, run) : NULL;
    size_t i;

    if (found) {
        /* The snapshot the run used, in name order. */
        const json_t *snap = json_object_get(found, "params");
        const char **keys = NULL;
        const char *key;
        json_t *v;
        size_t n = 0;

        if (json_object_size(snap) == 0)
            return;
        keys = cli_xmalloc(json_object_size(snap) * sizeof *keys);
        json_object_foreach((json_t *)snap, key, v) keys[n++] = key;
        qsort(keys, n, sizeof *keys, cmp_str);
        printf("Parameters of run %lld:\n", (long long)run);
        for (i = 0; i < n; i++) {
            cli_line line = CLI_LINE_INIT;
            cli_buf_add(&line.text, "  ");
            cli_buf_add_clean(&line.text, keys[i]);
            cli_buf_add(&line.text, " = ");
            add_value(&line.text, json_object_get(snap, keys[i]), &ctx->term);
            cli_line_emit(&line, stdout, &ctx->term);
            cli_line_free(&line);
        }
        free(keys);
        return;
    }
    if (json_array_size(list) == 0)
        return;
    puts("Parameters:");
    json_array_foreach(list, i, param)
    {
        cli_line line = CLI_LINE_INIT;
        const json_t *v = json_object_get(param, "value");

        cli_buf_add(&line.text, "  ");
        cli_buf_add_clean(&line.text, cli_jstr(param, "name")
                                          ? cli_jstr(param, "name")
                                          : "?");
        if (json_is_null(v) || !v) {
            cli_buf_add(&line.text, " (no value)");
        } else {
            cli_buf_add(&line.text, " = ");
            add_value(&line.text, v, &ctx->term);
            if (json_is_true(json_object_get(param, "default")))
                cli_buf_add(&line.text, " (default)");
        }
        cli_line_emit(&line, stdout, &ctx->term);
        cli_line_free(&line);
    }
}

/* Draws the tree of a status document, the parameters (those of run, when
 * one was asked for), and under it, when a run waits
 * for an engine (active or queued), which engine holds the database. */
static void render(cli_ctx *ctx, const char *instance, const json_t *doc,
                   int64_t run)
{
    names nm;
    cli_status_extra extra;
    names_fill(&nm, &extra, ctx, instance, doc);
    extra.all_steps = ctx->all_steps;
    cli_render_status(stdout, doc, &ctx->term, ctx->now_ms, &extra);
    names_free(&nm);
    render_parameters(ctx, doc, run);
    if (json_is_integer(json_object_get(doc, "active_run")) ||
        json_array_size(json_object_get(doc, "queued"))) {
        cli_line line = CLI_LINE_INIT;
        cli_engine_line(&line.text, ctx, json_object_get(doc, "engine"));
        cli_line_emit(&line, stdout, &ctx->term);
        cli_line_free(&line);
    }
}

/* Reads the status document.  Returns 0, or the exit code after printing
 * the library's message. */
static int fetch(json_t **out, cli_ctx *ctx, const char *instance,
                 const planctl_status_options *opts, int *busy)
{
    char *text = NULL;
    int rc = planctl_status_json(&text, ctx->db, instance, opts);

    *out = NULL;
    if (busy)
        *busy = rc == PLANCTL_EBUSY;
    if (busy && *busy)
        return 0;
    if (rc < 0)
        return cli_fail(ctx, rc);
    *out = cli_json_parse(text);
    planctl_free(text);
    return *out ? 0 : CLI_EXIT_ERROR;
}

/* ---- --watch -------------------------------------------------------- */

typedef struct watcher {
    cli_ctx *ctx;
    const char *instance;
    planctl_status_options opts;
    int64_t target; /* the run whose end ends the watch */
    int redraw;     /* the tree on a terminal: redrawn in place */
    int shown;      /* documents printed so far */
    char *last;     /* the last one printed, without what only time moves */
    cli_engine_watch engine;
} watcher;

/* The document as text without the durations of unfinished runs, which
 * the library measures to now: what changed is what the engine did, not
 * the clock. */
static char *comparable(const json_t *doc)
{
    json_t *copy = json_deep_copy(doc);
    size_t i;
    json_t *plan;

    if (!copy)
        cli_oom();
    json_array_foreach(json_object_get(copy, "plans"), i, plan)
    {
        json_t *run = json_object_get(plan, "run");
        if (json_is_object(run) && !cli_jstr(run, "finished_at"))
            json_object_set_new(run, "duration_ms", json_null());
    }
    /* An engine's heartbeat is no change either. */
    json_t *engine = json_object_get(copy, "engine");
    if (json_is_object(engine))
        json_object_set_new(engine, "last_seen", json_null());
    char *text = json_dumps(copy, JSON_COMPACT);
    json_decref(copy);
    if (!text)
        cli_oom();
    return text;
}

static int watch_check(void *data, int changed)
{
    watcher *w = data;
    json_t *doc;
    int busy, rc;

    (void)changed; /* a redraw moves durations; otherwise compared below */
    rc = fetch(&doc, w->ctx, w->instance, &w->opts, &busy);
    if (busy)
        return CLI_POLL_AGAIN;
    if (rc)
        return rc;
    cli_now_refresh(w->ctx);
    if (w->redraw) {
        fputs("\033[H\033[J", stdout);
        render(w->ctx, w->instance, doc, w->opts.run);
        w->shown++;
    } else {
        char *now = comparable(doc);
        if (!w->last || strcmp(now, w->last) != 0) {
            if (w->shown++)
                putchar('\n');
            if (w->ctx->json)
                cli_json_print_obj(json_incref(doc));
            else
                render(w->ctx, w->instance, doc, w->opts.run);
            free(w->last);
            w->last = now;
        } else {
            free(now);
        }
    }
    fflush(stdout);
    const json_t *run = cli_doc_find_run(doc, w->target);
    int code = run ? cli_run_exit_code(cli_jstr(run, "status")) : -1;
    cli_buf msg = CLI_BUF_INIT;
    if (code < 0 &&
        cli_engine_watch_check(&w->engine, &msg, w->ctx, doc, w->target))
        cli_errorf("%s", cli_buf_str(&msg));
    cli_buf_free(&msg);
    json_decref(doc);
    if (!run) {
        cli_errorf("run %lld is not in the status of \"%s\" any more",
                   (long long)w->target, w->instance);
        return CLI_EXIT_ERROR;
    }
    return code >= 0 ? code : CLI_POLL_AGAIN;
}

/* The run --watch follows: --run, else --plan's latest run, else the
 * active run; 0 when there is none. */
static int64_t watch_target(const planctl_status_options *opts,
                            const json_t *doc)
{
    int64_t id = 0;

    if (opts->run > 0)
        return opts->run;
    if (opts->plan) {
        const json_t *plan = json_array_get(json_object_get(doc, "plans"), 0);
        cli_jint(&id, json_object_get(plan, "run"), "id");
        return id;
    }
    cli_jint(&id, doc, "active_run");
    return id;
}

static int watch(cli_ctx *ctx, const char *instance,
                 planctl_status_options *opts)
{
    watcher w;
    json_t *doc;
    int rc = fetch(&doc, ctx, instance, opts, NULL);

    if (rc)
        return rc;
    memset(&w, 0, sizeof(w));
    w.target = watch_target(opts, doc);
    if (w.target == 0) {
        if (ctx->json)
            rc = cli_json_print_obj(json_incref(doc));
        else
            render(ctx, instance, doc, opts->run);
        json_decref(doc);
        if (opts->plan)
            cli_errorf("plan \"%s\" of \"%s\" has never run: nothing to "
                       "watch",
                       opts->plan, instance);
        else
            cli_errorf("instance \"%s\" has no active run: nothing to watch",
                       instance);
        return rc;
    }
    if (!cli_doc_find_run(doc, w.target)) {
        /* Only --plan P with --run ID of another plan gets here. */
        json_decref(doc);
        cli_errorf("run %lld of \"%s\" is not a run of plan \"%s\"",
                   (long long)w.target, instance,
                   opts->plan ? opts->plan : "?");
        return CLI_EXIT_NOTFOUND;
    }
    json_decref(doc);
    w.ctx = ctx;
    w.instance = instance;
    w.opts = *opts;
    /* Show the watched run in its plan's place even when a queued run of
     * the same plan is newer. */
    w.opts.run = w.target;
    w.redraw = ctx->term.tty && !ctx->json;
    cli_engine_watch_init(&w.engine);
    rc = cli_poll_run(ctx, 0, watch_check, &w);
    free(w.last);
    /* Interrupting a watch is how it ends: no message, and the exit
     * code a shell expects of an interrupted command. */
    if (rc == CLI_POLL_SIGNAL)
        return cli_interrupted_exit(ctx);
    return rc < 0 ? CLI_EXIT_ERROR : rc;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    const char *run_arg = cli_arg(a, "run");
    planctl_status_options opts = PLANCTL_STATUS_OPTIONS_INIT;

    opts.plan = cli_arg(a, "plan");
    if (run_arg && cli_parse_id(&opts.run, "--run", run_arg))
        return CLI_EXIT_USAGE;
    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    /* --run shows that run in its plan's place: with --plan naming another
     * plan the two contradict each other (a run not found is left to the
     * status document, which says so). */
    cli_run_info ri;
    if (opts.plan && opts.run &&
        cli_run_lookup(&ri, ctx, name, opts.run) == 0 &&
        strcmp(ri.plan, opts.plan) != 0) {
        cli_errorf("--run %lld is a run of plan \"%s\", not of --plan %s; "
                   "give one of them",
                   (long long)opts.run, ri.plan, opts.plan);
        return CLI_EXIT_USAGE;
    }
    ctx->all_steps = cli_arg_count(a, "all") > 0;
    if (cli_arg_count(a, "watch"))
        return watch(ctx, name, &opts);

    json_t *doc;
    rc = fetch(&doc, ctx, name, &opts, NULL);
    if (rc)
        return rc;
    if (ctx->json)
        rc = cli_json_print_obj(json_incref(doc));
    else
        render(ctx, name, doc, opts.run);
    json_decref(doc);
    return rc;
}

const cli_command cli_cmd_status = {
    "status",
    "Show the plans of an instance as a tree",
    "NAME [--plan P] [--run ID] [--watch] [--all]",
    "Shows every plan of the instance with its latest run (or NEVER_RUN):\n"
    "the run's id, times and duration, then its phases and steps with\n"
    "attempts, the next retry and messages, and the queued runs.  With\n"
    "-o json it prints the status document the tree is drawn from; with\n"
    "--run ID its steps and their attempts also carry \"outputs\", the task\n"
    "outputs they recorded (null when none), secret values as \"***\".\n"
    "\n"
    "Under the tree, the instance's parameters: 'NAME = VALUE (default)',\n"
    "'NAME (no value)', values cut to 60 characters, a secret one as ***;\n"
    "with --run ID the snapshot that run used.  The document has them as\n"
    "\"parameters\": [{\"name\", \"value\", \"default\", \"secret\"}].\n"
    "\n"
    "When a run waits (one is active or queued), a last line says which\n"
    "engine moves it, one of:\n"
    "  engine pid 1887 on vm since 14:03:05, last seen 2s ago\n"
    "  no engine is running on ./planctl.db; start one with 'planctl run'\n"
    "  engine pid 1887 on vm stopped renewing 3m ago; start one with ...\n"
    "the last for an engine whose process is gone (on this host) or whose\n"
    "heartbeat is older than 15s.  The document's \"engine\" is {\"pid\",\n"
    "\"host\", \"since\", \"last_seen\", \"alive\"}, or null when no engine\n"
    "holds the database (see 'planctl engines').\n"
    "\n"
    "--watch follows one run as the engine advances it: the active run, or\n"
    "--run ID, or with --plan P that plan's latest run.  On a terminal the\n"
    "tree is redrawn in place; otherwise each changed tree (or document,\n"
    "with -o json) is printed after a blank line.  It ends when the run\n"
    "does: exit 0 when COMPLETE, 5 when FATAL_ERROR or CANCELLED, 130 when\n"
    "interrupted by SIGINT (143: SIGTERM).  With no run to follow it shows\n"
    "the status once, says so on stderr and exits 0.  Once no engine has run\n"
    "for 5s (PLANCTL_ENGINE_WARN_AFTER) it warns once on stderr, as\n"
    "'planctl trigger --wait' does, and goes on watching.\n"
    "\n"
    "A phase of more than 20 steps is summarised: one line of counts by\n"
    "status (\"398/400 steps COMPLETE, 2 ERROR\"), then its steps that are\n"
    "not COMPLETE (the first 10, and how many more); --all shows every\n"
    "step.  -o json always has every step.",
    pos,
    flags,
    examples,
    run};
