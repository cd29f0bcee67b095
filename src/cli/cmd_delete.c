/* cmd_delete.c - `planctl delete NAME [--force]`: run cleanup, or remove
 * the instance at once. */
#include "cli.h"

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"force", 0, CLI_FLAG_BOOL, 0, NULL,
     "remove at once, without cleanup (not while a run is active)"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl delete zk",
                                       "planctl delete zk --force", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    int64_t id = 0;

    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_instance_delete(&id, ctx->db, name,
                                 cli_arg_count(a, "force") > 0);
    if (rc < 0)
        return cli_fail(ctx, rc);
    if (ctx->json)
        return cli_print_run_json(id);

    cli_buf msg = CLI_BUF_INIT;
    cli_buf_add(&msg, "instance \"");
    cli_buf_add_clean(&msg, name);
    if (id > 0) {
        cli_buf_add(&msg, "\" is being deleted; ");
        cli_admitted_phrase(&msg, ctx, name, id);
        cli_buf_add(&msg, "; it is removed when that run completes");
    } else {
        cli_buf_add(&msg, "\" deleted");
    }
    printf("%s\n", cli_buf_str(&msg));
    cli_buf_free(&msg);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_delete = {
    "delete",
    "Delete an instance, running its cleanup plan",
    "NAME [--force]",
    "Admits the instance's cleanup plan if its definition has one; the\n"
    "instance is removed when that run completes (after FATAL_ERROR it\n"
    "stays, marked deleting, until 'delete --force').  Without a cleanup\n"
    "plan it is removed at once.",
    pos,
    flags,
    examples,
    run};
