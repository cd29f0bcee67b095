/* cmd_import.c - `planctl import FILE [--as NAME]`: load a bundle written
 * by `planctl export`, in one transaction. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern const cli_command cli_cmd_import;

static const char *const pos[] = {"FILE", NULL};

static const cli_flag flags[] = {
    {"as", 0, CLI_FLAG_VALUE, 0, "NAME", "import under another instance name"},
    {"keep-active", 0, CLI_FLAG_BOOL, 0, NULL,
     "leave an active run active (by default it is paused, so that the next "
     "engine here does not run the bundle's tasks)"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl --db debug.db import zk-bundle.json",
    "planctl import zk-bundle.json --as zk-copy",
    "planctl --db old.db import old-runs.jsonl", NULL};

/* Closes and removes the database file (and its -wal, -shm) at
 * ctx->db_path. */
static void remove_database(cli_ctx *ctx)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char path[4096];
    size_t i;

    planctl_close(ctx->db);
    ctx->db = NULL;
    for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(path, sizeof path, "%s%s", ctx->db_path, suffixes[i]);
        unlink(path);
    }
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    planctl_import_options opts = PLANCTL_IMPORT_OPTIONS_INIT;
    char *bundle = NULL, *out = NULL;
    size_t len = 0;
    int rc, fresh;

    if ((rc = cli_read_input(&bundle, &len, a->pos[0])) != 0)
        return rc;
    /* A database this import creates is removed again if the import is
     * refused: a refusal leaves nothing behind. */
    fresh = access(ctx->db_path, F_OK) != 0 && errno == ENOENT;
    if ((rc = cli_open_db(ctx, CLI_DB_CREATE)) != 0) {
        free(bundle);
        return rc;
    }
    opts.as_name = cli_arg(a, "as");
    opts.keep_active = cli_arg_count(a, "keep-active") > 0;
    rc = planctl_import(&out, ctx->db, bundle, len, &opts);
    free(bundle);
    if (rc < 0) {
        rc = cli_fail(ctx, rc);
        if (fresh)
            remove_database(ctx);
        return rc;
    }
    if (ctx->json) {
        rc = cli_json_print(out);
        planctl_free(out);
        return rc;
    }
    {
        json_t *doc = cli_json_parse(out), *r;
        size_t i;

        json_array_foreach(json_object_get(doc, "instances"), i, r)
        {
            const char *name =
                json_string_value(json_object_get(r, "instance"));
            json_t *paused = json_object_get(r, "paused");

            printf("instance \"%s\" imported: %lld runs, %lld events\n", name,
                   (long long)json_integer_value(json_object_get(r, "runs")),
                   (long long)json_integer_value(json_object_get(r, "events")));
            if (json_is_integer(paused))
                printf("run %lld of \"%s\" paused, so that nothing of the "
                       "bundle runs here; 'planctl resume %s' runs it\n",
                       (long long)json_integer_value(paused), name, name);
        }
        json_decref(doc);
    }
    planctl_free(out);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_import = {
    "import",
    "Load a bundle written by export",
    "FILE [--as NAME] [--keep-active]",
    "Loads a bundle written by 'planctl export' (FILE, or - for standard\n"
    "input) in one transaction: ids are renumbered, the order of events is\n"
    "kept, and a name that is taken, a bundle from a newer planctl or a\n"
    "corrupt one is refused with nothing imported.  FILE may hold several\n"
    "bundles, one per line, as 'planctl gc --archive' writes them: those of\n"
    "one instance are merged and imported as that instance.  An active run\n"
    "is imported paused (the event log says so), so that an engine on this\n"
    "database does not run a bundle's tasks: 'planctl resume NAME' runs it;\n"
    "--keep-active imports it as it was.",
    pos,
    flags,
    examples,
    run};
