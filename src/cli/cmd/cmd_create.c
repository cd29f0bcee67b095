/* cmd_create.c - `planctl create NAME --definition D[@V]`: a new instance
 * and its deploy run. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"definition", 0, CLI_FLAG_VALUE, 1, "D[@V]",
     "definition and version (default: the newest version)"},
    {"param", 'p', CLI_FLAG_LIST, 0, "K=V",
     "a parameter value (K=@FILE: an array or a map from a JSON file)"},
    CLI_SKIP_PREFLIGHT_FLAG,
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl create zk --definition zookeeper",
    "planctl create zk --definition zookeeper@0.2.0 -p NODE_COUNT=5", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    const char *def = cli_arg(a, "definition");
    planctl_param *params = NULL;
    char *storage = NULL, *defname;
    const char *version = NULL;
    size_t n;
    const char *const *list = cli_arg_list(a, "param", &n);
    planctl_admitted ad = {0};
    planctl_admit_options opts;
    int64_t id = 0;

    int rc = cli_parse_params(&params, &storage, list, n);
    if (rc)
        return rc;
    /* Names cannot hold '@' (planctl-definition(5)), so the first one splits.
     */
    defname = cli_xstrdup(def);
    char *at = strchr(defname, '@');
    if (at) {
        *at = '\0';
        version = at + 1;
    }
    if (!defname[0] || (version && !version[0])) {
        cli_errorf("invalid --definition \"%s\"; expected NAME or "
                   "NAME@VERSION",
                   def);
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    rc = cli_open_admit(&opts, ctx, a);
    if (rc)
        goto done;
    rc = planctl_admit_create(&ad, ctx->db, name, defname, version, params, n,
                              &opts);
    id = ad.run;
    cli_preflight_print(ctx, &ad);
    if (rc < 0) {
        rc = cli_fail(ctx, rc);
        goto done;
    }
    if (ctx->json) {
        rc = cli_print_run_json(id);
    } else {
        cli_buf msg = CLI_BUF_INIT;
        cli_buf_add(&msg, "instance \"");
        cli_buf_add_clean(&msg, name);
        cli_buf_add(&msg, "\" created; ");
        cli_admitted_say(&msg, &ad);
        printf("%s\n", cli_buf_str(&msg));
        cli_buf_free(&msg);
        rc = CLI_EXIT_OK;
    }
done:
    free(defname);
    free(params);
    free(storage);
    return rc;
}

const cli_command cli_cmd_create = {
    "create",
    "Create an instance and run its deploy plan",
    "NAME --definition D[@V] [-p K=V]...",
    "Creates instance NAME from a registered definition, with the given\n"
    "parameter values (the others take their defaults; a parameter with\n"
    "no default and not required has no value), and admits its deploy\n"
    "plan.  A value is parsed by the parameter's type: an integer, a\n"
    "number or a boolean exactly (3, 2.5, true), an array or a map as JSON\n"
    "or from a file (K=@FILE); a value of the wrong type or outside the\n"
    "parameter's enum is refused (exit 2).\n"
    "\n" CLI_PREFLIGHT_HELP,
    pos,
    flags,
    examples,
    run};
