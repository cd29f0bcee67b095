/* cmd_import.c - `planctl import FILE [--as NAME]`: load a bundle written
 * by `planctl export`, in one transaction. */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dbname.h"
#include "store/store.h"

extern const cli_command cli_cmd_import;

static const char *const pos[] = {"FILE", NULL};

static const cli_flag flags[] = {
    {"as", 0, CLI_FLAG_VALUE, 0, "NAME", "import under another instance name"},
    {"keep-active", 0, CLI_FLAG_BOOL, 0, NULL,
     "leave an active run active (by default it is paused, so that the next "
     "engine here does not run the bundle's tasks)"},
    {"param", 'p', CLI_FLAG_LIST, 0, "K=V",
     "the value of a secret parameter the bundle leaves out (exported "
     "without --include-secrets)"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl --db debug.db import zk-bundle.json",
    "planctl import zk-bundle.json --as zk-copy",
    "planctl --db old.db import old-runs.jsonl",
    "planctl import zk-bundle.json -p PASSWORD=\"$(cat pass.txt)\"", NULL};

/* Closes and removes the database file (and its -wal, -shm) at
 * ctx->db_target. */
static void remove_database(cli_ctx *ctx)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char path[4096];
    size_t i;

    planctl_close(ctx->db);
    ctx->db = NULL;
    for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(path, sizeof path, "%s%s", ctx->db_target, suffixes[i]);
        unlink(path);
    }
}

/* The bundle's file, read as the library asks: never whole in memory. */
typedef struct source {
    int fd;
    const char *name; /* in messages */
    int err;          /* errno of the read that failed */
} source;

static int take(void *data, char *buf, size_t cap, size_t *len)
{
    source *s = data;
    ssize_t n;

    do
        n = read(s->fd, buf, cap);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        s->err = errno;
        *len = 0;
        return -1;
    }
    *len = (size_t)n;
    return 0;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    planctl_import_options opts = PLANCTL_IMPORT_OPTIONS_INIT;
    const char *path = a->pos[0];
    source src = {0, "<stdin>", 0};
    int own = strcmp(path, "-") != 0;
    planctl_param *params = NULL;
    char *out = NULL, *storage = NULL;
    int rc, fresh;

    if (own) {
        src.name = path;
        if ((src.fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
            cli_errorf("cannot read \"%s\": %s", path, strerror(errno));
            return CLI_EXIT_ERROR;
        }
    }
    /* A database this import creates is removed again if the import is
     * refused: a refusal leaves nothing behind. */
    fresh = !pctl_is_server_uri(ctx->db_target) &&
            access(ctx->db_target, F_OK) != 0 && errno == ENOENT;
    if ((rc = cli_open_db(ctx, CLI_DB_CREATE)) != 0) {
        if (own)
            close(src.fd);
        return rc;
    }
    opts.as_name = cli_arg(a, "as");
    opts.keep_active = cli_arg_count(a, "keep-active") > 0;
    {
        size_t n = 0;
        const char *const *list = cli_arg_list(a, "param", &n);

        cli_parse_params(&params, &storage, list, n);
        opts.params = params;
        opts.nparams = n;
    }
    rc = planctl_import_stream(&out, ctx->db, &opts, take, &src);
    free(params);
    free(storage);
    if (own)
        close(src.fd);
    if (rc < 0) {
        if (src.err)
            cli_errorf("cannot read \"%s\": %s", src.name, strerror(src.err));
        rc = src.err ? CLI_EXIT_ERROR : cli_fail(ctx, rc);
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
    "FILE [--as NAME] [--keep-active] [-p K=V]...",
    "Loads a bundle written by 'planctl export' (FILE, or - for standard\n"
    "input) in one transaction: ids are renumbered, the order of events is\n"
    "kept, and a name that is taken, a bundle from a newer planctl or a\n"
    "corrupt one is refused with nothing imported.  FILE may hold several\n"
    "bundles, one per line, as 'planctl gc --archive' writes them: those of\n"
    "one instance are merged and imported as that instance.  An active run\n"
    "is imported paused (the event log says so), so that an engine on this\n"
    "database does not run a bundle's tasks: 'planctl resume NAME' runs it;\n"
    "--keep-active imports it as it was.  A bundle of any size is read a\n"
    "row at a time, staged in a temporary file ($TMPDIR or /tmp, about the\n"
    "bundle's size, removed after); one row over 64 MiB is refused.\n"
    "\n"
    "A bundle exported without --include-secrets leaves out the values of\n"
    "secret parameters: give each with -p NAME=VALUE (only those; change\n"
    "other values with 'planctl set' after), or the import is refused,\n"
    "naming them.  A value given is taken as the one the instance had: in\n"
    "its values and in the snapshot of every run imported, so a retry of\n"
    "one has it too.",
    pos,
    flags,
    examples,
    run};
