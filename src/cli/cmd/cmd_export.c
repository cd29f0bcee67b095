/* cmd_export.c - `planctl export NAME [--out FILE]`: one instance's whole
 * state as a bundle, to attach to a bug report. */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const cli_command cli_cmd_export;

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"out", 0, CLI_FLAG_VALUE, 0, "FILE",
     "write the bundle to FILE instead of standard output"},
    {"include-secrets", 0, CLI_FLAG_BOOL, 0, NULL,
     "write the values of secret task outputs and secret parameters in "
     "clear (by default they are left out: {\"secret\": null}, null)"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl export zk --out zk-bundle.json",
                                       "planctl export zk | gzip > zk.json.gz",
                                       "planctl export zk --include-secrets "
                                       "--out zk-full.json",
                                       NULL};

/* Where the bundle goes, and why it could not. */
typedef struct dest {
    int fd;
    const char *name; /* in messages */
    int err;          /* errno of the write that failed */
} dest;

static int put(void *data, const char *buf, size_t len)
{
    dest *d = data;

    while (len > 0) {
        ssize_t n = write(d->fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            d->err = n < 0 ? errno : EIO;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Opens --out FILE.  A regular file, new or not, is written as a
 * temporary file beside it (*tmp) and renamed over it at the end: FILE
 * then holds a whole bundle, or what it held before.  Anything else (a
 * pipe, a device) is written as it comes. */
static int open_out(dest *d, char **tmp, const char *path)
{
    struct stat sb;
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;

    *tmp = NULL;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        d->fd = open(path, O_WRONLY | O_CLOEXEC);
    } else {
        /* 0600 (mkstemp's mode), as the database and gc archives: a
         * bundle holds every parameter value of the instance. */
        *tmp = cli_xmalloc(strlen(path) + 16);
        sprintf(*tmp, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
        d->fd = mkstemp(*tmp);
    }
    if (d->fd < 0) {
        cli_errorf("cannot write %s: %s", path, strerror(errno));
        free(*tmp);
        *tmp = NULL;
        return CLI_EXIT_ERROR;
    }
    return 0;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->pos[0], *path = cli_arg(a, "out");
    planctl_export_options opts = PLANCTL_EXPORT_OPTIONS_INIT;
    dest d = {1, "standard output", 0};
    char *tmp = NULL;
    int rc;

    if (path && (rc = cli_outfile_check(ctx, "--out", path)) != 0)
        return rc;
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0)
        return rc;
    if (path) {
        d.name = path;
        if ((rc = open_out(&d, &tmp, path)) != 0)
            return rc;
    }
    /* Row by row as they are read: memory stays small whatever the
     * instance's size. */
    opts.include_secrets = cli_arg_count(a, "include-secrets") > 0;
    rc = planctl_export_stream_opts(ctx->db, name, &opts, put, &d);
    if (rc == 0 && put(&d, "\n", 1) < 0)
        rc = PLANCTL_EIO;
    if (rc == 0 && tmp && (fsync(d.fd) != 0 || rename(tmp, path) != 0)) {
        d.err = errno;
        rc = PLANCTL_EIO;
    }
    if (path && close(d.fd) != 0 && rc == 0) {
        d.err = errno;
        rc = PLANCTL_EIO;
    }
    if (rc < 0 && tmp)
        unlink(tmp);
    free(tmp);
    if (rc < 0 && d.err) {
        cli_errorf("cannot write %s: %s", d.name, strerror(d.err));
        return CLI_EXIT_ERROR;
    }
    if (rc < 0)
        return cli_fail(ctx, rc);
    if (path)
        fprintf(stderr, "planctl: instance \"%s\" exported to %s\n", name,
                path);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_export = {
    "export",
    "Write one instance's whole state as a bundle",
    "NAME [--out FILE] [--include-secrets]",
    "Writes the instance with its definition versions, runs, phases, steps,\n"
    "attempts and events as one versioned JSON bundle.  'planctl import'\n"
    "loads it into another database, where status, history, replay and\n"
    "verify answer the same: attach it to a bug report.  It is written row\n"
    "by row, in little memory whatever the instance's size; --out FILE is\n"
    "written beside FILE and renamed at the end, so FILE never holds half a\n"
    "bundle.  The values of secret task outputs are left out ({\"secret\":\n"
    "null}) unless --include-secrets is given; import takes either.  So are\n"
    "those of secret parameters (null, named in the instance's\n"
    "\"withheld\"): import then needs each again with -p NAME=VALUE.",
    pos,
    flags,
    examples,
    run};
