/* cmd_resume.c - `planctl resume NAME`: continue a paused run. */
#include "cli/cli.h"

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {{NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl resume zk", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    int64_t id = 0;

    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_run_resume(&id, ctx->db, name);
    if (rc < 0)
        return cli_fail(ctx, rc);
    return cli_report_run(ctx, name, id, "resumed");
}

const cli_command cli_cmd_resume = {
    "resume", "Resume the paused plan of an instance",
    "NAME",   "Resumes the instance's PAUSED run where it stopped.",
    pos,      flags,
    examples, run};
