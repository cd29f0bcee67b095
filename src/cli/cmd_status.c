/* cmd_status.c - `planctl status NAME`: every plan of an instance with its
 * latest run, phases and steps, as a tree or as the status document, once
 * or (--watch) redrawn as a run advances. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "wait.h"

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

/* Draws the tree of a status document. */
static void render(cli_ctx *ctx, const char *instance, const json_t *doc)
{
    names nm;
    cli_status_extra extra;
    names_fill(&nm, &extra, ctx, instance, doc);
    extra.all_steps = ctx->all_steps;
    cli_render_status(stdout, doc, &ctx->term, ctx->now_ms, &extra);
    names_free(&nm);
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
        render(w->ctx, w->instance, doc);
        w->shown++;
    } else {
        char *now = comparable(doc);
        if (!w->last || strcmp(now, w->last) != 0) {
            if (w->shown++)
                putchar('\n');
            if (w->ctx->json)
                cli_json_print_obj(json_incref(doc));
            else
                render(w->ctx, w->instance, doc);
            free(w->last);
            w->last = now;
        } else {
            free(now);
        }
    }
    fflush(stdout);
    const json_t *run = cli_doc_find_run(doc, w->target);
    int code = run ? cli_run_exit_code(cli_jstr(run, "status")) : -1;
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
            render(ctx, instance, doc);
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
        render(ctx, name, doc);
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
    "--watch follows one run as the engine advances it: the active run, or\n"
    "--run ID, or with --plan P that plan's latest run.  On a terminal the\n"
    "tree is redrawn in place; otherwise each changed tree (or document,\n"
    "with -o json) is printed after a blank line.  It ends when the run\n"
    "does: exit 0 when COMPLETE, 5 when FATAL_ERROR or CANCELLED, 130 when\n"
    "interrupted by SIGINT (143: SIGTERM).  With no run to follow it shows\n"
    "the status once, says so on stderr and exits 0.\n"
    "\n"
    "A phase of more than 20 steps is summarised: one line of counts by\n"
    "status (\"398/400 steps COMPLETE, 2 ERROR\"), then its steps that are\n"
    "not COMPLETE (the first 10, and how many more); --all shows every\n"
    "step.  -o json always has every step.",
    pos,
    flags,
    examples,
    run};
