/* cmd_status.c - `planctl status NAME`: every plan of an instance with its
 * latest run, phases and steps, as a tree or as the status document. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"plan", 0, CLI_FLAG_VALUE, 0, "P", "only this plan"},
    {"run", 0, CLI_FLAG_VALUE, 0, "ID",
     "show this run instead of its plan's latest"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl status zk", "planctl status zk --plan deploy",
    "planctl status zk --run 12 -o json", NULL};

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

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    const char *run_arg = cli_arg(a, "run");
    planctl_status_options opts = PLANCTL_STATUS_OPTIONS_INIT;
    char *out = NULL;

    opts.plan = cli_arg(a, "plan");
    if (run_arg && cli_parse_id(&opts.run, "--run", run_arg))
        return CLI_EXIT_USAGE;
    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_status_json(&out, ctx->db, name, &opts);
    if (rc < 0)
        return cli_fail(ctx, rc);
    if (ctx->json) {
        rc = cli_json_print(out);
        planctl_free(out);
        return rc;
    }

    json_t *doc = cli_json_parse(out);
    planctl_free(out);
    if (!doc)
        return CLI_EXIT_ERROR;
    names nm;
    cli_status_extra extra;
    names_fill(&nm, &extra, ctx, name, doc);
    cli_render_status(stdout, doc, &ctx->term, ctx->now_ms, &extra);
    names_free(&nm);
    json_decref(doc);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_status = {
    "status",
    "Show the plans of an instance as a tree",
    "NAME [--plan P] [--run ID]",
    "Shows every plan of the instance with its latest run (or NEVER_RUN):\n"
    "the run's id, times and duration, then its phases and steps with\n"
    "attempts, the next retry and messages, and the queued runs.  With\n"
    "-o json it prints the status document the tree is drawn from.",
    pos,
    flags,
    examples,
    run};
