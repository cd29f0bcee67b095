/* cmd_cancel.c - `planctl cancel NAME`: cancel the instance's active run. */
#include "cli.h"

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {{"reason", 0, CLI_FLAG_VALUE, 0, "TEXT",
                                  "why, recorded with the cancellation"},
                                 {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl cancel zk", "planctl cancel zk --reason \"wrong node count\"",
    NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    int64_t id = 0;

    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_run_cancel(&id, ctx->db, name, cli_arg(a, "reason"));
    if (rc < 0)
        return cli_fail(ctx, rc);
    return cli_report_run(ctx, name, id, "cancelled");
}

const cli_command cli_cmd_cancel = {
    "cancel",
    "Cancel the active run of an instance",
    "NAME [--reason TEXT]",
    "Cancels the instance's active run: every phase and step not finished\n"
    "becomes CANCELLED, then the run; a running engine stops the tasks.\n"
    "Queued runs stay queued and start next.",
    pos,
    flags,
    examples,
    run};
