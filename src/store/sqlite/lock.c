/*
 * lock.c - the engine's lock on SQLite: an flock() on "<database>-engine",
 * beside the real file (as SQLite puts -wal and -shm), which the kernel
 * releases the moment the holder dies, however it dies.  It covers this
 * host only (flock on a shared file system is not to be trusted), so the
 * lease's heartbeat decides for an engine elsewhere (lease.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/alloc.h"
#include "store/sqlite/sqlite.h"

int pctl_sqlite_engine_lock(pctl_conn *c)
{
    pctl_sqlite_conn *sc = (pctl_sqlite_conn *)c;
    planctl *p = c->p;
    char *path, *real;

    if (sc->lock_fd >= 0)
        return 0;
    /* Two engines reaching one database by different paths (a symbolic
     * link, "..") must contend for one lock. */
    real = realpath(p->path, NULL);
    path = pctl_asprintf("%s-engine", real ? real : p->path);
    free(real);
    if (!path)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    sc->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (sc->lock_fd < 0 && p->ro_fs) {
        pctl_free(path);
        return pctl_db_err(p, PLANCTL_EREADONLY, NULL, "");
    }
    if (sc->lock_fd < 0) {
        int rc = pctl_err(p, PLANCTL_EIO, "cannot open engine lock %s: %s",
                          path, strerror(errno));

        pctl_free(path);
        return rc;
    }
    pctl_free(path);
    if (flock(sc->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        close(sc->lock_fd);
        sc->lock_fd = -1;
        return 1;
    }
    return 0;
}

void pctl_sqlite_engine_unlock(pctl_conn *c)
{
    pctl_sqlite_conn *sc = (pctl_sqlite_conn *)c;

    if (sc->lock_fd >= 0) {
        close(sc->lock_fd); /* closing releases the flock */
        sc->lock_fd = -1;
    }
}
