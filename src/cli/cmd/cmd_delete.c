/* cmd_delete.c - `planctl delete NAME [--force] [--dry-run] [--archive
 * FILE]`: run cleanup, or remove the instance at once. */
#include "cli/cli.h"

#include <string.h>
#include <unistd.h>

extern const cli_command cli_cmd_delete;

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"force", 0, CLI_FLAG_BOOL, 0, NULL,
     "remove at once, without cleanup (not while a run is active)"},
    {"dry-run", 0, CLI_FLAG_BOOL, 0, NULL,
     "only say what would happen (writes no archive)"},
    {"archive", 0, CLI_FLAG_VALUE, 0, "FILE",
     "first append the instance's whole history to FILE, as gc --archive "
     "does"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl delete zk", "planctl delete zk --dry-run",
    "planctl delete zk --force --archive zk-history.jsonl", NULL};

static int say(cli_ctx *ctx, const char *name, int64_t id, int dry_run,
               const cli_archive *ar)
{
    cli_buf msg = CLI_BUF_INIT;

    if (ctx->json)
        return cli_json_print_obj(json_pack(
            "{s:i, s:o, s:b}", "schema", 1, "run",
            id > 0 ? json_integer(id) : json_null(), "dry_run", dry_run));
    cli_buf_add(&msg, dry_run ? "would delete instance \"" : "instance \"");
    cli_buf_add_clean(&msg, name);
    if (dry_run && id > 0)
        cli_buf_addf(&msg,
                     "\": its plan \"cleanup\" would run (as run %lld), and "
                     "the instance be removed when that run completes",
                     (long long)id);
    else if (dry_run)
        cli_buf_add(&msg, "\" at once, with every run and event of it");
    if (!dry_run && id > 0) {
        cli_buf_add(&msg, "\" is being deleted; ");
        cli_admitted_phrase(&msg, ctx, name, id);
        cli_buf_add(&msg, "; it is removed when that run completes");
    } else if (!dry_run) {
        cli_buf_add(&msg, "\" deleted");
        if (ar->path)
            cli_buf_addf(&msg, ", its history archived to %s", ar->path);
    }
    printf("%s\n", cli_buf_str(&msg));
    cli_buf_free(&msg);
    return CLI_EXIT_OK;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0];
    const char *archive_path = cli_arg(a, "archive");
    planctl_delete_options o = PLANCTL_DELETE_OPTIONS_INIT;
    cli_archive ar;
    int64_t id = 0;
    int rc;

    o.force = cli_arg_count(a, "force") > 0;
    o.dry_run = cli_arg_count(a, "dry-run") > 0;
    if ((rc = cli_archive_begin(&ar, ctx, o.dry_run ? NULL : archive_path)))
        return rc;
    if (ar.fd >= 0) {
        o.archive = cli_archive_write;
        o.archive_data = &ar;
    }
    rc = planctl_instance_delete_opts(&id, ctx->db, name, &o);
    if (ar.fd >= 0)
        close(ar.fd);
    if (rc < 0 && ar.err) {
        cli_errorf("cannot write the archive %s: %s; instance \"%s\" was not "
                   "deleted",
                   ar.path, strerror(ar.err), name);
        return CLI_EXIT_ERROR;
    }
    if (rc < 0)
        return cli_fail(ctx, rc);
    return say(ctx, name, id, o.dry_run, &ar);
}

const cli_command cli_cmd_delete = {
    "delete",
    "Delete an instance, running its cleanup plan",
    "NAME [--force] [--dry-run] [--archive FILE]",
    "Admits the instance's cleanup plan if its definition has one; the\n"
    "instance is removed when that run completes (after FATAL_ERROR it\n"
    "stays, marked deleting, until 'delete --force').  Without a cleanup\n"
    "plan, or with --force, it is removed at once with every run and event\n"
    "of it.\n"
    "\n"
    "--dry-run makes every check and says what the delete would do,\n"
    "changing nothing.  --archive FILE first appends the instance's whole\n"
    "history to FILE as one bundle line (the format of 'planctl export'\n"
    "and of gc --archive), synced before the removal commits; 'planctl\n"
    "import FILE' brings it back.  It needs the instance removed at once:\n"
    "with a cleanup plan, add --force (or export it before).",
    pos,
    flags,
    examples,
    run};
