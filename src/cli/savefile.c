/*
 * savefile.c - the files commands write beside the database (export --out,
 * history --svg, gc --archive): never the database itself, nor its -wal,
 * -shm or -journal.
 *
 * Writing one of them destroys the database; merely opening one and
 * closing it again would drop every POSIX lock this process holds on the
 * database (the locks belong to the process, and any close() on the file
 * releases them all), so another process could take itself for the last
 * connection and delete the -wal and -shm under ours.  The check only
 * looks (stat), and compares files, not names: a symbolic or hard link to
 * the database is refused as well.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Whether path names the file sb describes. */
static int same_file(const struct stat *sb, const char *path)
{
    struct stat other;

    return stat(path, &other) == 0 && other.st_dev == sb->st_dev &&
           other.st_ino == sb->st_ino;
}

int cli_outfile_check(const cli_ctx *ctx, const char *flag, const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    const char *bases[2];
    struct stat sb;
    char *real, *name;
    size_t i, k;
    int rc = 0;

    /* A file that does not exist yet is none of them. */
    if (!ctx->db_path || stat(path, &sb) != 0)
        return 0;
    /* SQLite names the -wal and -shm after the file a link points to. */
    real = realpath(ctx->db_path, NULL);
    bases[0] = ctx->db_path;
    bases[1] = real;
    for (k = 0; k < 2 && rc == 0; k++) {
        for (i = 0; bases[k] && i < sizeof suffixes / sizeof *suffixes; i++) {
            size_t len = strlen(bases[k]) + strlen(suffixes[i]) + 1;

            name = cli_xmalloc(len);
            snprintf(name, len, "%s%s", bases[k], suffixes[i]);
            if (same_file(&sb, name)) {
                if (i == 0)
                    cli_errorf("%s %s is the database itself; give another "
                               "file",
                               flag, path);
                else
                    cli_errorf("%s %s is the database's %s file; give "
                               "another file",
                               flag, path, suffixes[i]);
                rc = CLI_EXIT_USAGE;
            }
            free(name);
            if (rc)
                break;
        }
    }
    free(real);
    return rc;
}
