/* preflight_report.c - the CLI side of preflight checks: --skip-preflight, the
 * warnings of skipped checks, and the report of a refusal with -o json. */
#include "cli.h"

#include <string.h>

int cli_open_admit(planctl_admit_options *o, cli_ctx *ctx, const cli_args *a)
{
    planctl_admit_options init = PLANCTL_ADMIT_OPTIONS_INIT;

    *o = init;
    o->preflight_skip = cli_arg(a, "skip-preflight");
    o->param_files = 1; /* -p K=@FILE for arrays and maps */
    return cli_open_db(ctx, CLI_DB_EXISTING);
}

void cli_preflight_print(cli_ctx *ctx, planctl_admitted *ad)
{
    char *report = ad->preflight_report;
    json_t *doc = report ? cli_json_parse(report) : NULL;
    const char *outcome = cli_jstr(doc, "outcome");
    const json_t *w;
    size_t i;

    json_array_foreach(json_object_get(doc, "warnings"), i, w)
        cli_errorf("warning: %s", json_string_value(w));
    /* A refusal's causes, every check with its status, for scripts; a
     * report that passed (or skipped every check) shows nothing, whatever the
     * admission did next (a conflict found by the real admission, say). */
    if (ctx->json && outcome && strcmp(outcome, "passed") != 0 &&
        strcmp(outcome, "skipped") != 0)
        cli_json_print_obj(doc); /* frees doc */
    else
        json_decref(doc);
    planctl_free(report);
    ad->preflight_report = NULL;
}
