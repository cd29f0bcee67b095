/* preflight.c - the CLI side of preflight checks: --skip-preflight and the
 * warnings of a passed preflight. */
#include "cli.h"

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

void cli_preflight_warnings(cli_ctx *ctx)
{
    const char *report = ctx->db ? planctl_preflight_report(ctx->db) : NULL;
    json_t *doc = report ? json_loads(report, 0, NULL) : NULL;
    const json_t *w;
    size_t i;

    json_array_foreach(json_object_get(doc, "warnings"), i, w)
        cli_errorf("warning: %s", json_string_value(w));
    json_decref(doc);
}
