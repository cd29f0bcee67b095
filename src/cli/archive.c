/* archive.c - the archive file of `gc --archive` and `delete --archive`:
 * bundles appended one per line, synced before the library commits. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_archive_begin(cli_archive *ar, cli_ctx *ctx, const char *path)
{
    int rc;

    memset(ar, 0, sizeof *ar);
    ar->fd = -1;
    if (path && (rc = cli_outfile_check(ctx, "--archive", path)) != 0)
        return rc;
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0)
        return rc;
    return path ? cli_archive_open(ar, path) : 0;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

int cli_archive_write(void *data, const char *bundle, size_t len)
{
    cli_archive *ar = data;
    int ok;

    if (bundle) {
        ok = write_all(ar->fd, bundle, len) == 0 &&
             write_all(ar->fd, "\n", 1) == 0;
        ar->runs += ok;
    } else {
        struct stat sb;

        ok = fsync(ar->fd) == 0 && fstat(ar->fd, &sb) == 0;
        if (ok)
            ar->good = sb.st_size;
    }
    if (!ok) {
        ar->err = errno ? errno : EIO;
        /* Best effort: the runs stay in the database either way. */
        if (ftruncate(ar->fd, ar->good) != 0)
            ar->err = errno;
        return -1;
    }
    return 0;
}

int cli_archive_open(cli_archive *ar, const char *path)
{
    struct stat sb;

    memset(ar, 0, sizeof *ar);
    ar->path = path;
    ar->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (ar->fd < 0 || fstat(ar->fd, &sb) != 0) {
        cli_errorf("cannot open the archive %s: %s; give a writable file "
                   "with --archive",
                   path, strerror(errno));
        if (ar->fd >= 0)
            close(ar->fd);
        return CLI_EXIT_ERROR;
    }
    if (!S_ISREG(sb.st_mode)) {
        cli_errorf("the archive %s is not a regular file; give a file with "
                   "--archive",
                   path);
        close(ar->fd);
        return CLI_EXIT_ERROR;
    }
    ar->good = sb.st_size;
    return CLI_EXIT_OK;
}
