/* cmd_history.c - `planctl history NAME`: the runs of an instance, newest
 * first, a page at a time; with --svg, the timeline of one run as a
 * picture. */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/render/render_svg.h"

extern const cli_command cli_cmd_history;

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"plan", 0, CLI_FLAG_VALUE, 0, "P", "only runs of this plan"},
    {"limit", 0, CLI_FLAG_VALUE, 0, "N", "at most N runs (default 20)"},
    {"before", 0, CLI_FLAG_VALUE, 0, "ID",
     "only runs older than run ID, for the next page"},
    {"svg", 0, CLI_FLAG_VALUE, 0, "FILE",
     "draw one run's timeline as SVG into FILE (- for stdout)"},
    {"run", 0, CLI_FLAG_VALUE, 0, "ID",
     "the run --svg draws (default: the first one listed)"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl history zk",
                                       "planctl history zk --plan deploy "
                                       "--limit 5",
                                       "planctl history zk --before 40",
                                       "planctl history zk --run 12 --svg "
                                       "run12.svg",
                                       NULL};

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

/* The newest run --svg draws when no --run names one: the first run the
 * history page of opts would list.  Returns 0 with *out set, or the exit
 * code after printing why. */
static int newest_run(int64_t *out, cli_ctx *ctx, const char *name,
                      planctl_history_options opts)
{
    char *text = NULL;
    json_t *doc;
    int rc;

    opts.limit = 1;
    if ((rc = planctl_history_json(&text, ctx->db, name, &opts)) < 0)
        return cli_fail(ctx, rc);
    doc = cli_json_parse(text);
    planctl_free(text);
    if (!doc)
        return CLI_EXIT_ERROR;
    rc = cli_jint(out, json_array_get(json_object_get(doc, "runs"), 0), "id");
    json_decref(doc);
    if (rc)
        return 0;
    if (opts.plan && opts.before)
        cli_errorf("instance \"%s\" has no run of plan \"%s\" before run "
                   "%lld to draw",
                   name, opts.plan, (long long)opts.before);
    else if (opts.plan)
        cli_errorf("instance \"%s\" has no run of plan \"%s\" to draw", name,
                   opts.plan);
    else if (opts.before)
        cli_errorf("instance \"%s\" has no run before run %lld to draw", name,
                   (long long)opts.before);
    else
        cli_errorf("instance \"%s\" has no run to draw yet", name);
    return CLI_EXIT_NOTFOUND;
}

/* The run object with id in a status document, or NULL. */
static const json_t *find_run(const json_t *doc, int64_t id)
{
    size_t i;
    const json_t *plan;

    json_array_foreach(json_object_get(doc, "plans"), i, plan)
    {
        const json_t *r = json_object_get(plan, "run");
        int64_t rid;

        if (cli_jint(&rid, r, "id") && rid == id)
            return r;
    }
    return NULL;
}

/* Writes the picture to path ("-": standard output). */
static int write_svg(const char *path, const cli_buf *svg)
{
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    int bad;

    if (!f) {
        cli_errorf("cannot write %s: %s", path, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    bad = fwrite(svg->s, 1, svg->len, f) != svg->len;
    bad |= to_stdout ? fflush(f) != 0 : fclose(f) != 0;
    if (bad) {
        cli_errorf("cannot write %s: %s", to_stdout ? "standard output" : path,
                   strerror(errno));
        return CLI_EXIT_ERROR;
    }
    return 0;
}

/*
 * --svg: draws the run --run names, or the newest of the page --plan and
 * --before select.  Nothing is written until the run has been read, so
 * an unknown run leaves FILE alone.
 */
static int draw(cli_ctx *ctx, const cli_args *a,
                const planctl_history_options *hist)
{
    const char *name = a->pos[0], *path = cli_arg(a, "svg");
    const char *id_text = cli_arg(a, "run");
    planctl_status_options so = PLANCTL_STATUS_OPTIONS_INIT;
    cli_buf svg = CLI_BUF_INIT;
    const json_t *run;
    char *text = NULL;
    json_t *doc;
    int rc;

    if (!path)
        return cli_usage_error(&cli_cmd_history,
                               "--run picks the run --svg draws; to see one "
                               "run, use 'planctl status %s --run ID'",
                               name);
    if (!path[0])
        return cli_usage_error(&cli_cmd_history,
                               "empty --svg; give a file name, or - for "
                               "standard output");
    if (cli_arg(a, "limit"))
        return cli_usage_error(&cli_cmd_history,
                               "--limit does not go with --svg, which draws "
                               "one run");
    if (ctx->json)
        return cli_usage_error(&cli_cmd_history,
                               "-o json does not go with --svg, which writes "
                               "a picture");
    if (id_text && (hist->plan || hist->before))
        return cli_usage_error(&cli_cmd_history,
                               "--run names the run to draw; drop --plan and "
                               "--before");
    if (id_text && cli_parse_id(&so.run, "--run", id_text))
        return CLI_EXIT_USAGE;
    if (strcmp(path, "-") != 0 &&
        (rc = cli_outfile_check(ctx, "--svg", path)) != 0)
        return rc;
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0)
        return rc;
    if (!so.run && (rc = newest_run(&so.run, ctx, name, *hist)) != 0)
        return rc;
    if ((rc = planctl_status_json(&text, ctx->db, name, &so)) < 0)
        return cli_fail(ctx, rc);
    doc = cli_json_parse(text);
    planctl_free(text);
    if (!doc)
        return CLI_EXIT_ERROR;
    if (!(run = find_run(doc, so.run))) {
        /* The status document shows runs in their plan's place; a plan an
         * upgrade removed has none. */
        cli_errorf("run %lld of instance \"%s\" is of a plan its definition "
                   "no longer has, so it cannot be drawn",
                   (long long)so.run, name);
        json_decref(doc);
        return CLI_EXIT_ERROR;
    }
    cli_render_svg(&svg, name, run, ctx->now_ms);
    json_decref(doc);
    rc = write_svg(path, &svg);
    cli_buf_free(&svg);
    if (rc == 0 && strcmp(path, "-") != 0)
        fprintf(stderr, "planctl: run %lld of instance \"%s\" drawn to %s\n",
                (long long)so.run, name, path);
    return rc;
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
    if (cli_arg(a, "svg") || cli_arg(a, "run"))
        return draw(ctx, a, &opts);
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
    "NAME [--plan P] [--limit N] [--before ID] [--svg FILE [--run ID]]",
    "Lists the runs of the instance, newest first, one line each with its\n"
    "plan, status, trigger and its reason (\"manual (disk swap)\"), start,\n"
    "duration and message.  When the page is\n"
    "full, the last line says how to get the next one.\n"
    "\n"
    "With --svg, draws one run instead: its phases, steps and every attempt\n"
    "on a time axis (UTC), the waits between attempts included, as an SVG\n"
    "picture to open in a browser (hover for details).  The run is --run ID,\n"
    "or else the newest run the page would list first (of --plan, older\n"
    "than --before).",
    pos,
    flags,
    examples,
    run};
