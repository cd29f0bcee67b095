/* cmd_gc.c - `planctl gc`: remove old terminal runs with their children and
 * events, keeping the newest of every plan. */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/def.h"

extern const cli_command cli_cmd_gc;

static const cli_flag flags[] = {
    {"keep-last", 0, CLI_FLAG_VALUE, 0, "N",
     "newest runs kept per instance and plan (default 10, at least 1)"},
    {"older-than", 0, CLI_FLAG_VALUE, 0, "D",
     "only runs that finished longer ago than D (a duration, units ms, s, "
     "m, h, d), or before D (a time, as status prints one)"},
    {"dry-run", 0, CLI_FLAG_BOOL, 0, NULL,
     "only list what would be removed (writes no archive)"},
    {"archive", 0, CLI_FLAG_VALUE, 0, "FILE",
     "first append each removed run to FILE, one bundle per line"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl gc --dry-run",
                                       "planctl gc --keep-last 3",
                                       "planctl gc --older-than 30d",
                                       "planctl gc --older-than 2026-11-01",
                                       "planctl gc --archive old-runs.jsonl",
                                       NULL};

/* --older-than: a duration ("30d"), or a time runs must have finished
 * before, read as replay --at reads one ("2026-11-01", "1d ago"). */
static int parse_older(int64_t *out, cli_ctx *ctx, const char *text)
{
    int64_t at;

    if (pctl_duration_parse(out, text) == 0)
        return 0;
    if (cli_time_read(&at, ctx, text) != 0 &&
        cli_time_zone_refusal("--older-than", text))
        return CLI_EXIT_USAGE;
    if (cli_time_read(&at, ctx, text) != 0)
        return cli_usage_error(&cli_cmd_gc,
                               "--older-than must be a duration such as "
                               "\"30d\" or \"720h\", or " CLI_TIME_FORMS
                               ", not \"%s\"",
                               text);
    if (at > ctx->now_ms)
        return cli_usage_error(&cli_cmd_gc,
                               "--older-than \"%s\" is in the future; give "
                               "a time before now, or a duration",
                               text);
    *out = ctx->now_ms - at;
    return 0;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    planctl_gc_options o = PLANCTL_GC_OPTIONS_INIT;
    const char *keep = cli_arg(a, "keep-last"),
               *older = cli_arg(a, "older-than"),
               *archive_path = cli_arg(a, "archive");
    cli_archive ar;
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
    if (older && (rc = parse_older(&o.older_than_ms, ctx, older)) != 0)
        return rc;
    if ((rc = cli_archive_begin(&ar, ctx, o.dry_run ? NULL : archive_path)))
        return rc;
    if (ar.fd >= 0) {
        o.archive = cli_archive_write;
        o.archive_data = &ar;
    }
    rc = planctl_gc(&out, ctx->db, &o);
    if (ar.fd >= 0)
        close(ar.fd);
    if (rc < 0 && ar.err) {
        cli_errorf("cannot write the archive %s: %s; the runs of the failed "
                   "batch were not removed",
                   ar.path, strerror(ar.err));
        return CLI_EXIT_ERROR;
    }
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
    printf("%s %zu run%s", o.dry_run ? "would remove" : "removed",
           json_array_size(runs), json_array_size(runs) == 1 ? "" : "s");
    if (o.archive)
        printf(", archived to %s", ar.path);
    printf("\n");
    json_decref(doc);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_gc = {
    "gc",
    "Remove old finished runs and their events",
    "[--keep-last N] [--older-than D] [--dry-run] [--archive FILE]",
    "Removes terminal runs beyond the retention policy, with their phases,\n"
    "steps, attempts and events, in small transactions (a running engine is\n"
    "not held up): never an active or queued run, never the newest run of a\n"
    "plan.  'planctl verify' still agrees afterwards.  With --archive, each\n"
    "run is first appended to FILE as a bundle of its own, one per line, and\n"
    "synced before its batch commits; 'planctl import FILE' loads them back\n"
    "(the runs of one instance together).",
    NULL,
    flags,
    examples,
    run};
