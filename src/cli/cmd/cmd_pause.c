/* cmd_pause.c - `planctl pause NAME`: let running steps finish and start
 * nothing new. */
#include "cli/cli.h"

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {{NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl pause zk", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    int64_t id = 0;

    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_run_pause(&id, ctx->db, name);
    if (rc < 0)
        return cli_fail(ctx, rc);
    return cli_report_run(ctx, name, id, "paused");
}

const cli_command cli_cmd_pause = {
    "pause",
    "Pause the running plan of an instance",
    "NAME",
    "Pauses the instance's IN_PROGRESS run: running steps finish, nothing\n"
    "new starts, and the run shows PAUSED until 'planctl resume'.",
    pos,
    flags,
    examples,
    run};
