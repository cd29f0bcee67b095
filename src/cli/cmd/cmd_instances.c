/* cmd_instances.c - `planctl instances`: every instance with its
 * definition version, status and active run, as a table. */
#include "cli/cli.h"

static const cli_flag flags[] = {{NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl instances",
                                       "planctl instances -o json", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    char *out = NULL;
    (void)a;
    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_instances_json(&out, ctx->db);
    if (rc < 0)
        return cli_fail(ctx, rc);
    return cli_print_doc(ctx, out, cli_render_instances);
}

const cli_command cli_cmd_instances = {
    "instances",
    "List the instances",
    "",
    "Lists every instance, sorted by name, with its definition version, the\n"
    "status of its latest run and its active run.",
    NULL,
    flags,
    examples,
    run};
