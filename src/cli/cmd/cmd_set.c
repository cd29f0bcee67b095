/* cmd_set.c - `planctl set NAME [-p K=V]... [--unset K]...`: change or
 * remove parameter values and run the plan they select. */
#include "cli/cli.h"

#include <stdlib.h>

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"param", 'p', CLI_FLAG_LIST, 0, "K=V",
     "a parameter value (K=@FILE: an array or a map from a JSON file)"},
    {"unset", 0, CLI_FLAG_LIST, 0, "K",
     "remove K's explicit value: its default applies again"},
    CLI_SKIP_PREFLIGHT_FLAG,
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl set zk -p NODE_COUNT=5",
    "planctl set zk -p NODE_COUNT=5 -p BACKUP_NAME=nightly",
    "planctl set zk -p 'SERVERS=[\"a\",\"b\"]' --unset MEMORY",
    "planctl set zk -p CONFIG=@config.json", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    planctl_param *params = NULL;
    char *storage = NULL;
    size_t n;
    const char *const *list = cli_arg_list(a, "param", &n);
    size_t nunset;
    const char *const *unset = cli_arg_list(a, "unset", &nunset);
    planctl_admitted ad = {0};
    planctl_admit_options opts;
    int64_t id = 0;

    if (n == 0 && nunset == 0)
        return cli_usage_error(a->cmd, "missing -p K=V or --unset K");
    int rc = cli_parse_params(&params, &storage, list, n);
    if (rc)
        return rc;
    rc = cli_open_admit(&opts, ctx, a);
    opts.unset = unset;
    opts.nunset = nunset;
    if (rc == 0)
        rc = planctl_admit_set(&ad, ctx->db, name, params, n, &opts);
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
    if (id > 0) {
        cli_buf_add(&msg, "\" updated; ");
        cli_admitted_say(&msg, &ad);
    } else {
        cli_buf_add(&msg, "\" unchanged; no plan admitted");
    }
    printf("%s\n", cli_buf_str(&msg));
    cli_buf_free(&msg);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_set = {
    "set",
    "Change parameter values and run the plan they select",
    "NAME [-p K=V]... [--unset K]...",
    "Changes parameter values and admits the plan they select: the\n"
    "trigger of the changed parameters that have one (those without a\n"
    "trigger then add nothing); when none has one, update, else deploy.\n"
    "A value is parsed by the parameter's type: an integer, a number or a\n"
    "boolean exactly (3, 2.5, true), an array or a map as JSON or from a\n"
    "file (K=@FILE); a value of the wrong type or outside the parameter's\n"
    "enum is refused (exit 2).  --unset K removes K's explicit value, so\n"
    "its default applies again (a change of K; a K with no explicit value\n"
    "is nothing to do).  Immutable parameters keep the value they have,\n"
    "and a required parameter without a default cannot be unset (exit 2).\n"
    "Refused while a run is active (exit 3), and when the changed\n"
    "parameters' triggers name different plans (exit 2).  Values equal to\n"
    "the current ones admit nothing, while a run is active too: the\n"
    "instance is \"unchanged\" (exit 0).\n"
    "\n" CLI_PREFLIGHT_HELP,
    pos,
    flags,
    examples,
    run};
