/* cmd_trigger.c - `planctl trigger NAME PLAN`: admit a run of any plan but
 * cleanup, or queue it behind the active run, and optionally wait for it. */
#include "cli/cli.h"

#include <string.h>

#include "cli/wait.h"

extern const cli_command cli_cmd_trigger;

static const char *const pos[] = {"NAME", "PLAN", NULL};

static const cli_flag flags[] = {
    {"queue", 0, CLI_FLAG_BOOL, 0, NULL,
     "queue behind the active run instead of being refused"},
    {"reason", 0, CLI_FLAG_VALUE, 0, "TEXT", "free text recorded on the run"},
    {"wait", 0, CLI_FLAG_BOOL, 0, NULL,
     "wait until the run ends; exit 0 if COMPLETE, else 5"},
    {"timeout", 0, CLI_FLAG_VALUE, 0, "D",
     "with --wait: stop waiting after D (exit 6)"},
    CLI_SKIP_PREFLIGHT_FLAG,
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl trigger zk backup",
    "planctl trigger zk update --queue --reason \"config drift\"",
    "planctl trigger zk deploy --wait --timeout 10m", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0], *plan = a->pos[1];
    planctl_admit_options opts;
    planctl_admitted ad = {0};
    int64_t id = 0, timeout_ms;
    int wait;

    int rc = cli_wait_flags(&wait, &timeout_ms, &cli_cmd_trigger, a);
    if (rc)
        return rc;
    rc = cli_open_admit(&opts, ctx, a);
    if (rc)
        return rc;
    opts.queue = cli_arg_count(a, "queue") > 0;
    opts.reason = cli_arg(a, "reason");
    rc = planctl_admit_trigger(&ad, ctx->db, name, plan, &opts);
    id = ad.run;
    cli_preflight_print(ctx, &ad);
    if (rc < 0)
        return cli_fail(ctx, rc);
    if (ctx->json)
        return wait ? cli_wait_run(ctx, name, id, timeout_ms)
                    : cli_print_run_json(id);

    /* From what the call handed back: nothing is read again. */
    cli_buf msg = CLI_BUF_INIT;
    cli_buf_addf(&msg, "run %lld of plan \"", (long long)id);
    cli_buf_add_clean(&msg, ad.plan);
    cli_buf_add(&msg, "\"");
    if (ad.status == PLANCTL_STATUS_QUEUED && ad.queue_position > 0)
        cli_buf_addf(&msg, " queued (position %d)", ad.queue_position);
    else if (ad.status == PLANCTL_STATUS_QUEUED)
        cli_buf_add(&msg, " queued");
    else
        cli_buf_add(&msg, " admitted");
    printf("%s\n", cli_buf_str(&msg));
    cli_buf_free(&msg);
    return wait ? cli_wait_run(ctx, name, id, timeout_ms) : CLI_EXIT_OK;
}

const cli_command cli_cmd_trigger = {
    "trigger",
    "Run a plan of an instance",
    "NAME PLAN [--queue] [--reason TEXT] [--wait [--timeout D]]",
    "Admits a new run of PLAN (any plan but cleanup), from scratch.  While\n"
    "another run of the instance is active it is refused with the active run\n"
    "named (exit 3), unless --queue: queued runs start first in, first out\n"
    "when the active one ends.\n"
    "\n" CLI_PREFLIGHT_HELP "\n"
    "\n"
    "--wait then waits until the run ends (a queued run waits in the queue\n"
    "first) and prints one line, 'run 12 of plan \"deploy\" COMPLETE in\n"
    "1m12s', or with -o json the document {\"schema\":1,\"run\":{...}} with\n"
    "the run object of the status document.  An engine (planctl run) must be\n"
    "running for the run to make progress: once none has run for 5s\n"
    "(PLANCTL_ENGINE_WARN_AFTER), stderr says so once ('planctl: warning: run\n"
    "12 is waiting for an engine: no engine is running on ...'), then when\n"
    "one starts, and warns again if it goes; the wait goes on.  On a\n"
    "terminal, stderr shows the progress meanwhile.  Exit 0 when the run is "
    "COMPLETE, 5 when it ended\n"
    "FATAL_ERROR or CANCELLED, 6 when --timeout elapsed first and 130 when\n"
    "interrupted by SIGINT (143: SIGTERM); in the last two cases the run\n"
    "goes on.",
    pos,
    flags,
    examples,
    run};
