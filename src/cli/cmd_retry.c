/* cmd_retry.c - `planctl retry NAME [--run ID]`: a new run of a failed or
 * cancelled run's plan that keeps the steps it completed. */
#include "cli.h"

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"run", 0, CLI_FLAG_VALUE, 0, "ID",
     "the run to retry (default: the instance's latest run)"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl retry zk",
                                       "planctl retry zk --run 12", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    const char *run_arg = cli_arg(a, "run");
    int64_t from = 0, id = 0;

    if (run_arg && cli_parse_id(&from, "--run", run_arg))
        return CLI_EXIT_USAGE;
    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_run_retry(&id, ctx->db, name, from);
    if (rc < 0)
        return cli_fail(ctx, rc);
    if (ctx->json)
        return cli_print_run_json(id);

    cli_buf msg = CLI_BUF_INIT;
    cli_run_info ri;
    cli_run_phrase(&msg, &ri, ctx, name, id);
    cli_buf_add(&msg, " admitted");
    if (ri.retry_of > 0)
        cli_buf_addf(&msg, " as a retry of run %lld", (long long)ri.retry_of);
    printf("%s\n", cli_buf_str(&msg));
    cli_buf_free(&msg);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_retry = {
    "retry",
    "Retry a failed or cancelled run",
    "NAME [--run ID]",
    "Admits a new run of the same plan with the same parameter snapshot;\n"
    "phases and steps that were COMPLETE in the retried run start COMPLETE.\n"
    "Only a FATAL_ERROR or CANCELLED run can be retried.  'planctl trigger'\n"
    "starts a plan from scratch instead.",
    pos,
    flags,
    examples,
    run};
