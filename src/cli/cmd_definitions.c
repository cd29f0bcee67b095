/* cmd_definitions.c - `planctl definitions`: the registered definition
 * versions and their plans, as a table. */
#include "cli.h"

static const cli_flag flags[] = {{NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl definitions",
                                       "planctl definitions -o json", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    char *out = NULL;
    (void)a;
    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_definitions_json(&out, ctx->db);
    if (rc < 0)
        return cli_fail(ctx, rc);
    return cli_print_doc(ctx, out, cli_render_definitions);
}

const cli_command cli_cmd_definitions = {
    "definitions",
    "List the registered definition versions",
    "",
    "Lists every registered definition version with its plans, sorted by\n"
    "name, then by registration order.",
    NULL,
    flags,
    examples,
    run};
