/* cmd_history.c - `planctl history NAME`: the runs of an instance, newest
 * first, a page at a time. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"plan", 0, CLI_FLAG_VALUE, 0, "P", "only runs of this plan"},
    {"limit", 0, CLI_FLAG_VALUE, 0, "N", "at most N runs (default 20)"},
    {"before", 0, CLI_FLAG_VALUE, 0, "ID",
     "only runs older than run ID, for the next page"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl history zk",
                                       "planctl history zk --plan deploy "
                                       "--limit 5",
                                       "planctl history zk --before 40", NULL};

static int parse_limit(int *out, const char *text)
{
    char *end;
    errno = 0;
    long v = text[0] >= '0' && text[0] <= '9' ? strtol(text, &end, 10) : -1;
    if (v <= 0 || v > 1000000 || errno || *end) {
        cli_errorf("invalid --limit \"%s\"; expected a number of runs from "
                   "1 to 1000000",
                   text);
        return CLI_EXIT_USAGE;
    }
    *out = (int)v;
    return 0;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    const char *limit = cli_arg(a, "limit"), *before = cli_arg(a, "before");
    planctl_history_options opts = PLANCTL_HISTORY_OPTIONS_INIT;
    char *out = NULL;

    opts.plan = cli_arg(a, "plan");
    if (limit && parse_limit(&opts.limit, limit))
        return CLI_EXIT_USAGE;
    if (before && cli_parse_id(&opts.before, "--before", before))
        return CLI_EXIT_USAGE;
    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_history_json(&out, ctx->db, name, &opts);
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
    cli_render_history(stdout, doc, &ctx->term, ctx->now_ms, opts.limit);
    json_decref(doc);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_history = {
    "history",
    "List the runs of an instance, newest first",
    "NAME [--plan P] [--limit N] [--before ID]",
    "Lists the runs of the instance, newest first, one line each with its\n"
    "plan, status, trigger, start, duration and message.  When the page is\n"
    "full, the last line says how to get the next one.",
    pos,
    flags,
    examples,
    run};
