/*
 * ident.c - whether the database path still names the file a handle
 * opened.  An engine runs for days; meanwhile someone may delete the
 * database, its -wal and -shm, or move another file into its place (a
 * restore).  SQLite goes on writing through the descriptors it holds,
 * into files nobody will read again: commits reported as done are lost,
 * or a replaced file is corrupted by pages meant for another.  The engine
 * notes the files' device and inode when it starts and compares at every
 * poll (engine.c), and stops writing at the first difference.
 *
 * A -wal deleted under a live connection is the one case where something
 * can still be saved: the database file is in place and the connection's
 * descriptor still reaches the deleted WAL, so a checkpoint copies what
 * was committed into the database file before the engine stops.  When a
 * new -wal has appeared instead (another process opened the database
 * meanwhile), writing the old one back would mix two histories, so
 * nothing is written.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "store/sqlite/sqlite.h"

static int same(const struct stat *st, const pctl_file_id *id)
{
    return st->st_dev == id->dev && st->st_ino == id->ino;
}

static void note(pctl_file_id *id, const struct stat *st)
{
    id->dev = st->st_dev;
    id->ino = st->st_ino;
    id->known = 1;
}

void pctl_sqlite_ident_note(pctl_conn *c)
{
    pctl_sqlite_conn *sc = (pctl_sqlite_conn *)c;
    const planctl *p = c->p;
    char wal[4096];
    struct stat st;

    memset(&sc->ident_db, 0, sizeof sc->ident_db);
    memset(&sc->ident_wal, 0, sizeof sc->ident_wal);
    if (stat(p->path, &st) == 0)
        note(&sc->ident_db, &st);
    snprintf(wal, sizeof wal, "%s-wal", p->path);
    if (stat(wal, &st) == 0)
        note(&sc->ident_wal, &st);
}

int pctl_sqlite_ident_check(pctl_conn *c)
{
    pctl_sqlite_conn *sc = (pctl_sqlite_conn *)c;
    planctl *p = c->p;
    char wal[4096];
    struct stat st;
    int rc;

    if (!sc->ident_db.known)
        return 0;
    if (stat(p->path, &st) != 0)
        return pctl_err(p, PLANCTL_EIO,
                        "the database %s was removed while this process had "
                        "it open (%s); stopped without writing more",
                        p->path, strerror(errno));
    if (!same(&st, &sc->ident_db))
        return pctl_err(p, PLANCTL_EIO,
                        "the database %s was replaced by another file while "
                        "this process had it open; stopped without writing "
                        "to either",
                        p->path);
    snprintf(wal, sizeof wal, "%s-wal", p->path);
    if (stat(wal, &st) == 0) {
        if (!sc->ident_wal.known) {
            note(&sc->ident_wal, &st); /* made since: ours */
            return 0;
        }
        if (same(&st, &sc->ident_wal))
            return 0;
        return pctl_err(p, PLANCTL_EIO,
                        "the database's -wal file %s was removed and another "
                        "made while this process had it open; stopped "
                        "without writing more",
                        wal);
    }
    if (!sc->ident_wal.known)
        return 0;
    /* Deleted under us: what it holds reaches the database file. */
    rc = sqlite3_wal_checkpoint_v2(sc->db, NULL, SQLITE_CHECKPOINT_FULL, NULL,
                                   NULL);
    return pctl_err(p, PLANCTL_EIO,
                    "the database's -wal file %s was removed while this "
                    "process had it open; %s, then stopped",
                    wal,
                    rc == SQLITE_OK ? "what it held was written back into the "
                                      "database"
                                    : "what it held could not be saved");
}
