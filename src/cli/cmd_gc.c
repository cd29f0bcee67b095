/* cmd_gc.c - `planctl gc`: remove old terminal runs with their children and
 * events, keeping the newest of every plan. */
#include "cli.h"

#include <stdlib.h>

#include "core/def.h"

extern const cli_command cli_cmd_gc;

static const cli_flag flags[] = {
    {"keep-last", 0, CLI_FLAG_VALUE, 0, "N",
     "newest runs kept per instance and plan (default 10, at least 1)"},
    {"older-than", 0, CLI_FLAG_VALUE, 0, "D",
     "only runs that finished longer ago than D (units: ms, s, m, h)"},
    {"dry-run", 0, CLI_FLAG_BOOL, 0, NULL, "only list what would be removed"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl gc --dry-run",
                                       "planctl gc --keep-last 3",
                                       "planctl gc --older-than 720h", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    planctl_gc_options o = PLANCTL_GC_OPTIONS_INIT;
    const char *keep = cli_arg(a, "keep-last"),
               *older = cli_arg(a, "older-than");
    json_t *doc, *runs, *r;
    char *out = NULL;
    size_t i;
    int rc;

    o.dry_run = cli_arg_count(a, "dry-run") > 0;
    if (keep) {
        char *end;
        long v = strtol(keep, &end, 10);

        if (*end || v < 1 || v > 1000000)
            return cli_usage_error(&cli_cmd_gc,
                                   "--keep-last must be a whole number from "
                                   "1, not \"%s\"",
                                   keep);
        o.keep_last = (int)v;
    }
    if (older && pctl_duration_parse(&o.older_than_ms, older) < 0)
        return cli_usage_error(&cli_cmd_gc,
                               "--older-than must be a duration such as "
                               "\"720h\", not \"%s\"",
                               older);
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0)
        return rc;
    rc = planctl_gc(&out, ctx->db, &o);
    if (rc < 0)
        return cli_fail(ctx, rc);
    if (ctx->json) {
        rc = cli_json_print(out);
        planctl_free(out);
        return rc;
    }
    doc = cli_json_parse(out);
    planctl_free(out);
    if (!doc)
        return CLI_EXIT_ERROR;
    runs = json_object_get(doc, "runs");
    json_array_foreach(runs, i, r)
    {
        printf("%s run %lld (%s, plan %s, %s)\n",
               o.dry_run ? "would remove" : "removed",
               (long long)json_integer_value(json_object_get(r, "id")),
               json_string_value(json_object_get(r, "instance")),
               json_string_value(json_object_get(r, "plan")),
               json_string_value(json_object_get(r, "status")));
    }
    printf("%s %zu run%s\n", o.dry_run ? "would remove" : "removed",
           json_array_size(runs), json_array_size(runs) == 1 ? "" : "s");
    json_decref(doc);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_gc = {
    "gc",
    "Remove old finished runs and their events",
    "[--keep-last N] [--older-than D] [--dry-run]",
    "Removes terminal runs beyond the retention policy, with their phases,\n"
    "steps, attempts and events, in small transactions (a running engine is\n"
    "not held up): never an active or queued run, never the newest run of a\n"
    "plan.  'planctl verify' still agrees afterwards.",
    NULL,
    flags,
    examples,
    run};
