/* cmd_verify.c - `planctl verify`: replay every event and compare with the
 * tables, plus SQLite's integrity and foreign key checks. */
#include "cli/cli.h"

extern const cli_command cli_cmd_verify;

static const cli_flag flags[] = {{NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl verify",
                                       "planctl --db copy.db verify", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    char *out = NULL;
    int rc;

    (void)a;
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0)
        return rc;
    rc = planctl_verify(&out, ctx->db);
    if (rc < 0)
        return cli_fail(ctx, rc);
    if (ctx->json) {
        json_t *doc =
            json_pack("{s:i, s:b, s:s}", "schema", 1, "ok", 1, "summary", out);

        planctl_free(out);
        return cli_json_print_obj(doc);
    }
    printf("%s\n", out);
    planctl_free(out);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_verify = {
    "verify",
    "Check that the tables agree with the event log",
    "",
    "Rebuilds every run, phase, step and attempt from the event log alone\n"
    "and compares them with the tables, field by field, then runs SQLite's\n"
    "integrity and foreign key checks (on PostgreSQL the server enforces\n"
    "foreign keys itself but the events', which planctl checks, and planctl\n"
    "does not check its pages: the summary says so).  Prints a one-line\n"
    "summary (exit 0),\n"
    "or the first difference (exit 1), e.g. 'run 12 step node-1: tables say\n"
    "COMPLETE, events say IN_PROGRESS (last event 5521)'.",
    NULL,
    flags,
    examples,
    run};
