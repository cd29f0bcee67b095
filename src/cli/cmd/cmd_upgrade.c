/* cmd_upgrade.c - `planctl upgrade NAME --version V`: move an instance to
 * another version of its definition. */
#include "cli/cli.h"

#include <stdlib.h>

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"version", 0, CLI_FLAG_VALUE, 1, "V",
     "the registered definition version to move to"},
    {"param", 'p', CLI_FLAG_LIST, 0, "K=V",
     "a parameter value to change too (K=@FILE for an array or a map)"},
    CLI_SKIP_PREFLIGHT_FLAG,
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl upgrade zk --version 0.3.0",
    "planctl upgrade zk --version 0.3.0 -p TLS=on", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    const char *version = cli_arg(a, "version");
    planctl_param *params = NULL;
    char *storage = NULL;
    size_t n;
    const char *const *list = cli_arg_list(a, "param", &n);
    planctl_admitted ad = {0};
    planctl_admit_options opts;
    int64_t id = 0;

    int rc = cli_parse_params(&params, &storage, list, n);
    if (rc)
        return rc;
    rc = cli_open_admit(&opts, ctx, a);
    if (rc == 0)
        rc = planctl_admit_upgrade(&ad, ctx->db, name, version, params, n,
                                   &opts);
    id = ad.run;
    cli_preflight_print(ctx, &ad);
    free(params);
    free(storage);
    if (rc > 0)
        return rc;
    if (rc < 0)
        return cli_fail(ctx, rc);
    if (ctx->json)
        return cli_print_run_json(id);

    cli_buf msg = CLI_BUF_INIT;
    cli_buf_add(&msg, "instance \"");
    cli_buf_add_clean(&msg, name);
    cli_buf_add(&msg, "\" moved to version ");
    cli_buf_add_clean(&msg, version);
    cli_buf_add(&msg, "; ");
    cli_admitted_say(&msg, &ad);
    printf("%s\n", cli_buf_str(&msg));
    cli_buf_free(&msg);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_upgrade = {
    "upgrade",
    "Move an instance to another definition version",
    "NAME --version V [-p K=V]...",
    "Moves the instance to another registered version of its definition,\n"
    "optionally changing parameter values too (a new version may require\n"
    "new ones), and admits its upgrade plan, or update, or deploy: the first\n"
    "that exists.  Values the new version does not define are dropped; an\n"
    "immutable parameter keeps the value it has, whatever the new\n"
    "version's default.  Refused while a run is active (exit 3), and from a\n"
    "version the new one's upgradableFrom does not list (exit 2).\n"
    "\n" CLI_PREFLIGHT_HELP,
    pos,
    flags,
    examples,
    run};
