/* preflight.c - the CLI side of preflight checks: --skip-preflight, the
 * warnings of skipped checks, and the report of a refusal with -o json. */
#include "cli.h"

#include <string.h>

int cli_open_admit(cli_ctx *ctx, const cli_args *a)
{
    planctl_preflight_options o = PLANCTL_PREFLIGHT_OPTIONS_INIT;
    int rc = cli_open_db(ctx, CLI_DB_EXISTING);

    if (rc)
        return rc;
    o.skip = cli_arg(a, "skip-preflight");
    if ((rc = planctl_preflight_configure(ctx->db, &o)) < 0)
        return cli_fail(ctx, rc);
    return 0;
}

void cli_preflight_print(cli_ctx *ctx)
{
    const char *report = ctx->db ? planctl_preflight_report(ctx->db) : NULL;
    json_t *doc = report ? cli_json_parse(report) : NULL;
    const char *outcome = cli_jstr(doc, "outcome");
    const json_t *w;
    size_t i;

    json_array_foreach(json_object_get(doc, "warnings"), i, w)
        cli_errorf("warning: %s", json_string_value(w));
    /* A refusal's causes, every check with its status, for scripts; a
     * report that passed shows nothing, whatever the admission did next
     * (a conflict found by the real admission, say). */
    if (ctx->json && outcome && strcmp(outcome, "passed") != 0)
        cli_json_print_obj(doc); /* frees doc */
    else
        json_decref(doc);
}
