/*
 * runinfo.c - helpers shared by the commands that admit or act on a run:
 * finding out which plan a run id belongs to and where it waits in the
 * queue, and the endings shared by commands: the {"schema":1,"run":ID}
 * document they print with -o json, and JSON-or-text for the views.
 */
#include "cli.h"

#include <string.h>

/* The 1-based place of id in the instance's queue, 0 when not queued. */
static int queue_position(cli_ctx *ctx, const char *instance, int64_t id)
{
    char *text = NULL;
    int pos = 0;
    if (planctl_status_json(&text, ctx->db, instance, NULL) < 0)
        return 0;
    json_t *doc = json_loads(text, 0, NULL);
    planctl_free(text);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(doc, "queued"), i, v)
    {
        if (json_is_integer(v) && json_integer_value(v) == id)
            pos = (int)i + 1;
    }
    json_decref(doc);
    return pos;
}

int cli_run_lookup(cli_run_info *out, cli_ctx *ctx, const char *instance,
                   int64_t id)
{
    planctl_history_options opts = PLANCTL_HISTORY_OPTIONS_INIT;
    char *text = NULL;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    /* The newest run older than id + 1 is run id itself, found by the
     * same index lookup history pages with. */
    opts.limit = 1;
    opts.before = id + 1;
    if (planctl_history_json(&text, ctx->db, instance, &opts) < 0)
        return -1;
    json_t *doc = json_loads(text, 0, NULL);
    planctl_free(text);
    json_t *run = json_array_get(json_object_get(doc, "runs"), 0);
    int64_t rid = 0;
    const char *plan = cli_jstr(run, "plan");
    const char *status = cli_jstr(run, "status");
    if (cli_jint(&rid, run, "id") && rid == id && plan && status) {
        snprintf(out->plan, sizeof(out->plan), "%s", plan);
        snprintf(out->status, sizeof(out->status), "%s", status);
        cli_jint(&out->retry_of, run, "retry_of");
        rc = 0;
    }
    json_decref(doc);
    if (rc == 0 && strcmp(out->status, "QUEUED") == 0)
        out->position = queue_position(ctx, instance, id);
    return rc;
}

int cli_print_run_json(int64_t run)
{
    return cli_json_print_obj(
        json_pack("{s:i, s:o}", "schema", 1, "run",
                  run > 0 ? json_integer(run) : json_null()));
}

void cli_admitted_say(cli_buf *b, const planctl_admitted *a)
{
    cli_buf_add(b, "plan \"");
    cli_buf_add_clean(b, a->plan);
    if (a->status == PLANCTL_STATUS_QUEUED && a->queue_position > 0)
        cli_buf_addf(b, "\" queued as run %lld (position %d)",
                     (long long)a->run, a->queue_position);
    else if (a->status == PLANCTL_STATUS_QUEUED)
        cli_buf_addf(b, "\" queued as run %lld", (long long)a->run);
    else
        cli_buf_addf(b, "\" admitted as run %lld", (long long)a->run);
}

void cli_admitted_phrase(cli_buf *b, cli_ctx *ctx, const char *instance,
                         int64_t run)
{
    planctl_admitted a;
    cli_run_info ri;

    if (cli_run_lookup(&ri, ctx, instance, run) != 0) {
        cli_buf_addf(b, "run %lld admitted", (long long)run);
        return;
    }
    memset(&a, 0, sizeof a);
    a.run = run;
    a.status = strcmp(ri.status, "QUEUED") == 0 ? PLANCTL_STATUS_QUEUED
                                                : PLANCTL_STATUS_PENDING;
    a.queue_position = ri.position;
    snprintf(a.plan, sizeof a.plan, "%.63s", ri.plan);
    cli_admitted_say(b, &a);
}

void cli_run_phrase(cli_buf *b, cli_run_info *ri, cli_ctx *ctx,
                    const char *instance, int64_t run)
{
    cli_buf_addf(b, "run %lld", (long long)run);
    if (cli_run_lookup(ri, ctx, instance, run) != 0) {
        memset(ri, 0, sizeof(*ri));
        return;
    }
    cli_buf_add(b, " of plan \"");
    cli_buf_add_clean(b, ri->plan);
    cli_buf_add(b, "\"");
}

int cli_report_run(cli_ctx *ctx, const char *instance, int64_t run,
                   const char *what)
{
    cli_buf msg = CLI_BUF_INIT;
    cli_run_info ri;

    if (ctx->json)
        return cli_print_run_json(run);
    cli_run_phrase(&msg, &ri, ctx, instance, run);
    cli_buf_addf(&msg, " %s", what);
    printf("%s\n", cli_buf_str(&msg));
    cli_buf_free(&msg);
    return CLI_EXIT_OK;
}

int cli_print_doc(cli_ctx *ctx, char *text,
                  void (*render)(FILE *f, const json_t *doc, const cli_term *t))
{
    int rc;

    if (ctx->json) {
        rc = cli_json_print(text);
    } else {
        json_t *doc = cli_json_parse(text);

        rc = doc ? CLI_EXIT_OK : CLI_EXIT_ERROR;
        if (doc)
            render(stdout, doc, &ctx->term);
        json_decref(doc);
    }
    planctl_free(text);
    return rc;
}
