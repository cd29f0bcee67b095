/* cmd_export.c - `planctl export NAME [--out FILE]`: one instance's whole
 * state as a bundle, to attach to a bug report. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

extern const cli_command cli_cmd_export;

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"out", 0, CLI_FLAG_VALUE, 0, "FILE",
     "write the bundle to FILE instead of standard output"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl export zk --out zk-bundle.json",
                                       "planctl export zk | gzip > zk.json.gz",
                                       NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0], *path = cli_arg(a, "out");
    char *out = NULL;
    FILE *f = stdout;
    int rc;

    if (path && (rc = cli_outfile_check(ctx, "--out", path)) != 0)
        return rc;
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0)
        return rc;
    rc = planctl_export_json(&out, ctx->db, name);
    if (rc < 0)
        return cli_fail(ctx, rc);
    /* 0600, as the database and gc archives: a bundle holds every
     * parameter value of the instance. */
    if (path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        if (fd < 0 || !(f = fdopen(fd, "w"))) {
            cli_errorf("cannot write %s: %s", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            planctl_free(out);
            return CLI_EXIT_ERROR;
        }
    }
    rc = fputs(out, f) < 0 || fputc('\n', f) == EOF;
    if (path)
        rc |= fclose(f) != 0;
    planctl_free(out);
    if (rc) {
        cli_errorf("cannot write %s", path ? path : "standard output");
        return CLI_EXIT_ERROR;
    }
    if (path)
        fprintf(stderr, "planctl: instance \"%s\" exported to %s\n", name,
                path);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_export = {
    "export",
    "Write one instance's whole state as a bundle",
    "NAME [--out FILE]",
    "Writes the instance with its definition versions, runs, phases, steps,\n"
    "attempts and events as one versioned JSON bundle.  'planctl import'\n"
    "loads it into another database, where status, history, replay and\n"
    "verify answer the same: attach it to a bug report.",
    pos,
    flags,
    examples,
    run};
