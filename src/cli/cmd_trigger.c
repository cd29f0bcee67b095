/* cmd_trigger.c - `planctl trigger NAME PLAN`: admit a run of any plan but
 * cleanup, or queue it behind the active run. */
#include "cli.h"

#include <string.h>

static const char *const pos[] = {"NAME", "PLAN", NULL};

static const cli_flag flags[] = {
    {"queue", 0, CLI_FLAG_BOOL, 0, NULL,
     "queue behind the active run instead of being refused"},
    {"reason", 0, CLI_FLAG_VALUE, 0, "TEXT", "free text recorded on the run"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl trigger zk backup",
    "planctl trigger zk update --queue --reason \"config drift\"", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0], *plan = a->pos[1];
    planctl_trigger_options opts = PLANCTL_TRIGGER_OPTIONS_INIT;
    int64_t id = 0;

    opts.queue = cli_arg_count(a, "queue") > 0;
    opts.reason = cli_arg(a, "reason");
    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_plan_trigger(&id, ctx->db, name, plan, &opts);
    if (rc < 0)
        return cli_fail(ctx, rc);
    if (ctx->json)
        return cli_print_run_json(id);

    cli_buf msg = CLI_BUF_INIT;
    cli_run_info ri;
    cli_run_phrase(&msg, &ri, ctx, name, id);
    if (strcmp(ri.status, "QUEUED") == 0 && ri.position > 0)
        cli_buf_addf(&msg, " queued (position %d)", ri.position);
    else if (strcmp(ri.status, "QUEUED") == 0)
        cli_buf_add(&msg, " queued");
    else
        cli_buf_add(&msg, " admitted");
    printf("%s\n", cli_buf_str(&msg));
    cli_buf_free(&msg);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_trigger = {
    "trigger",
    "Run a plan of an instance",
    "NAME PLAN [--queue] [--reason TEXT]",
    "Admits a new run of PLAN (any plan but cleanup), from scratch.  While\n"
    "another run of the instance is active it is refused with the active run\n"
    "named (exit 3), unless --queue: queued runs start first in, first out\n"
    "when the active one ends.",
    pos,
    flags,
    examples,
    run};
