/* cmd_cancel.c - `planctl cancel NAME [--run ID]`: cancel the instance's
 * active run, or one of its queued runs before it starts. */
#include <string.h>

#include "cli/cli.h"

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"reason", 0, CLI_FLAG_VALUE, 0, "TEXT",
     "why, recorded with the cancellation"},
    {"run", 0, CLI_FLAG_VALUE, 0, "ID",
     "the run to cancel: the active run or a QUEUED one (default: the active "
     "run)"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl cancel zk", "planctl cancel zk --reason \"wrong node count\"",
    "planctl cancel zk --run 14", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    planctl_cancel_options o = PLANCTL_CANCEL_OPTIONS_INIT;
    const char *name = a->pos[0], *run_arg = cli_arg(a, "run");
    int64_t id = 0;

    if (run_arg && cli_parse_id(&o.run, "--run", run_arg))
        return CLI_EXIT_USAGE;
    o.reason = cli_arg(a, "reason");
    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_run_cancel_opts(&id, ctx->db, name, &o);
    /* A run the instance does not have: where its runs are listed. */
    if (rc == PLANCTL_ENOTFOUND && o.run > 0 &&
        !strncmp(planctl_errmsg(ctx->db), "run ", 4)) {
        cli_buf msg = CLI_BUF_INIT;

        cli_buf_add_clean(&msg, planctl_errmsg(ctx->db));
        cli_buf_add(&msg, "; see 'planctl history ");
        cli_buf_add_clean(&msg, name);
        cli_buf_add(&msg, "'");
        cli_errorf("%s", cli_buf_str(&msg));
        cli_buf_free(&msg);
        return cli_exit_code(rc);
    }
    if (rc < 0)
        return cli_fail(ctx, rc);
    return cli_report_run(ctx, name, id, "cancelled");
}

const cli_command cli_cmd_cancel = {
    "cancel",
    "Cancel the active run of an instance, or a queued one",
    "NAME [--run ID] [--reason TEXT]",
    "Cancels the instance's active run: every phase and step not finished\n"
    "becomes CANCELLED, then the run; a running engine stops the tasks.\n"
    "Queued runs stay queued and start next.\n"
    "\n"
    "--run ID cancels that run instead: a QUEUED run becomes CANCELLED\n"
    "with its phases and steps and never starts, while the active run goes\n"
    "on and the other queued runs keep their order; the active run's id\n"
    "cancels it as above.  A run that has ended is refused (exit 3), a run\n"
    "the instance does not have too (exit 4).  The event names who\n"
    "cancelled ('planctl events').",
    pos,
    flags,
    examples,
    run};
