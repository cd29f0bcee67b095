/* cmd_retry.c - `planctl retry NAME [--run ID]`: a new run of a failed or
 * cancelled run's plan that keeps the steps it completed, optionally waited
 * for. */
#include "cli/cli.h"

#include "cli/wait.h"

extern const cli_command cli_cmd_retry;

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"run", 0, CLI_FLAG_VALUE, 0, "ID",
     "the run to retry (default: the instance's latest run)"},
    {"wait", 0, CLI_FLAG_BOOL, 0, NULL,
     "wait until the new run ends; exit 0 if COMPLETE, else 5"},
    {"timeout", 0, CLI_FLAG_VALUE, 0, "D",
     "with --wait: stop waiting after D (exit 6)"},
    CLI_SKIP_PREFLIGHT_FLAG,
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl retry zk", "planctl retry zk --run 12",
    "planctl retry zk --wait --timeout 10m", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    const char *run_arg = cli_arg(a, "run");
    planctl_admitted ad = {0};
    planctl_admit_options opts;
    int64_t from = 0, id = 0, timeout_ms;
    int wait;

    if (run_arg && cli_parse_id(&from, "--run", run_arg))
        return CLI_EXIT_USAGE;
    int rc = cli_wait_flags(&wait, &timeout_ms, &cli_cmd_retry, a);
    if (rc)
        return rc;
    rc = cli_open_admit(&opts, ctx, a);
    if (rc)
        return rc;
    rc = planctl_admit_retry(&ad, ctx->db, name, from, &opts);
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
    cli_buf_add(&msg, "\" admitted");
    if (ad.retry_of > 0)
        cli_buf_addf(&msg, " as a retry of run %lld", (long long)ad.retry_of);
    printf("%s\n", cli_buf_str(&msg));
    cli_buf_free(&msg);
    return wait ? cli_wait_run(ctx, name, id, timeout_ms) : CLI_EXIT_OK;
}

const cli_command cli_cmd_retry = {
    "retry",
    "Retry a failed or cancelled run",
    "NAME [--run ID] [--wait [--timeout D]]",
    "Admits a new run of the same plan with the same parameter snapshot and\n"
    "the same definition version, even after an upgrade (status shows the\n"
    "version a run executes when it is not the instance's; 'planctl\n"
    "trigger' runs the instance's version); phases and steps that were\n"
    "COMPLETE in the retried run start COMPLETE.\n"
    "Only a FATAL_ERROR or CANCELLED run can be retried.  'planctl trigger'\n"
    "starts a plan from scratch instead.\n"
    "\n" CLI_PREFLIGHT_HELP "\n"
    "\n"
    "--wait then waits until the new run ends, as 'planctl trigger --wait'\n"
    "does (warning on stderr when no engine runs): one line with the outcome "
    "(-o json: {\"schema\":1,\"run\":{...}}),\n"
    "exit 0 when COMPLETE, 5 when FATAL_ERROR or CANCELLED, 6 when --timeout\n"
    "elapsed first, 130 when interrupted by SIGINT (143: SIGTERM); the run\n"
    "goes on in the last two.",
    pos,
    flags,
    examples,
    run};
