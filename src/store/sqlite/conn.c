/*
 * conn.c - pctl_db_sqlite: a planctl database in one SQLite file.
 *
 * Opening is careful not to write to a file that is not ours.  The order
 * is: create the file (0600) only if absent; open it; read application_id,
 * user_version and whether it has any table, which touches nothing; refuse
 * a file that is not SQLite, a SQLite database that is not planctl's, or
 * one newer than this program; only then switch on WAL and migrate.
 *
 * Only SQLite opens the file.  POSIX advisory locks belong to the process,
 * and closing any descriptor on a file drops every one of them (SQLite's
 * "How To Corrupt An SQLite Database File", 2.2): a probe that opened and
 * closed the database would release the locks of the process's other
 * connections to it, an engine's handle beside this one included, and the
 * next process to close its connection would take itself for the last,
 * checkpoint and delete the -wal and -shm under them.  So the file is only
 * looked at (stat, faccessat) and created under another name, then linked
 * into place; SQLite's own descriptors are safe, its unix VFS keeps a
 * closed connection's descriptor open while the process holds locks on
 * the file.
 *
 * Migration policy: migrations/NNNN_name.sql are append-only and applied in
 * order, each in its own BEGIN IMMEDIATE transaction that also sets
 * PRAGMA user_version, so a crash leaves the database at a whole version.
 * The version is re-read inside the transaction, so two processes opening
 * a new file at once migrate it once.
 *
 * Transactions: a write is BEGIN IMMEDIATE (it takes the lock up front, so
 * a reader that becomes a writer cannot deadlock), a read a deferred BEGIN
 * (no lock until it would write, which it never does).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/alloc.h"
#include "store/embed.h"
#include "store/sqlite/sqlite.h"

#define PLANCTL_APPLICATION_ID 1347175252 /* 'PLCT' */

#define SC(c) ((pctl_sqlite_conn *)(c))

sqlite3 *pctl_sqlite_db(planctl *p)
{
    return p && p->conn && p->conn->m == &pctl_db_sqlite ? SC(p->conn)->db
                                                         : NULL;
}

/* Runs SQL text without results (schema, pragmas, BEGIN). */
static int exec(pctl_sqlite_conn *sc, const char *sql, const char *what)
{
    int rc = sqlite3_exec(sc->db, sql, NULL, NULL, NULL);

    return rc == SQLITE_OK ? 0 : pctl_sqlite_err(sc->base.p, sc->db, rc, what);
}

/* ---- transactions ---- */

/* Runs one of the transaction statements, prepared on first use and kept
 * (*st): sqlite3_exec() would parse its text again each time, about
 * 15,000 instructions for a BEGIN or a COMMIT, once each per engine pass.
 * The step and its errors are exec's: SQLite's code and message. */
static int tx_stmt(pctl_sqlite_conn *sc, sqlite3_stmt **st, const char *sql,
                   const char *what)
{
    int rc;

    if (!*st) {
        rc = sqlite3_prepare_v3(sc->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st,
                                NULL);
        if (rc != SQLITE_OK)
            return pctl_sqlite_err(sc->base.p, sc->db, rc, what);
    }
    rc = sqlite3_step(*st);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(*st);
        return 0;
    }
    /* The message before the reset can replace it. */
    rc = pctl_sqlite_err(sc->base.p, sc->db, rc, what);
    sqlite3_reset(*st);
    return rc;
}

static int sq_begin(pctl_conn *c, pctl_tx_kind k)
{
    pctl_sqlite_conn *sc = SC(c);

    return k != PCTL_TX_READ
               ? tx_stmt(sc, &sc->begin_write, "BEGIN IMMEDIATE", NULL)
               : tx_stmt(sc, &sc->begin_read, "BEGIN", NULL);
}

static void sq_rollback(pctl_conn *c)
{
    if (!sqlite3_get_autocommit(SC(c)->db))
        sqlite3_exec(SC(c)->db, "ROLLBACK", NULL, NULL, NULL);
}

static int sq_commit(pctl_conn *c)
{
    pctl_sqlite_conn *sc = SC(c);
    int rc = tx_stmt(sc, &sc->commit, "COMMIT", "commit");

    if (rc < 0)
        sq_rollback(c);
    return rc;
}

/* PRAGMA data_version moves when another connection commits; the total
 * of changes when this one writes. */
static int sq_token(pctl_db_token *out, pctl_conn *c, unsigned which)
{
    pctl_sqlite_conn *sc = SC(c);
    int rc;

    if (which & PCTL_TOKEN_OWN)
        out->own = sqlite3_total_changes64(sc->db);
    if (!(which & PCTL_TOKEN_OTHERS))
        return 0;
    if (!sc->data_version) {
        rc = sqlite3_prepare_v3(sc->db, "PRAGMA data_version", -1,
                                SQLITE_PREPARE_PERSISTENT, &sc->data_version,
                                NULL);
        if (rc != SQLITE_OK)
            return pctl_sqlite_err(c->p, sc->db, rc, "data_version");
    }
    rc = sqlite3_step(sc->data_version);
    if (rc == SQLITE_ROW)
        out->heard = out->others = sqlite3_column_int64(sc->data_version, 0);
    sqlite3_reset(sc->data_version);
    return rc == SQLITE_ROW ? 0
                            : pctl_sqlite_err(c->p, sc->db, rc, "data_version");
}

static int sq_process_init(void)
{
    /* SQLITE_MISUSE: sqlite3_initialize() has run (or is running). */
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK
               ? 0
               : PLANCTL_EBUSY;
}

/* ---- opening ---- */

static int pragma_int(pctl_sqlite_conn *sc, const char *sql, int *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(sc->db, sql, -1, &st, NULL);

    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int(st, 0);
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            *out = 0;
            rc = SQLITE_OK;
        }
    }
    if (rc != SQLITE_OK) {
        /* Take the message before finalize can replace it. */
        int mapped = pctl_sqlite_err(sc->base.p, sc->db, rc, NULL);

        sqlite3_finalize(st);
        return mapped;
    }
    sqlite3_finalize(st);
    return 0;
}

/* Whether path lies on a file system mounted read-only. */
static int on_read_only_fs(const char *path)
{
    struct statvfs vfs;

    return statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
}

/* "file:PATH?immutable=1" with PATH's URI specials escaped (SQLite's URI
 * rules: %, ? and # must be; a relative path stays relative).  NULL when
 * out of memory. */
static char *immutable_uri(const char *path)
{
    size_t n = strlen(path), i, k = 0;
    char *uri = pctl_malloc(3 * n + sizeof "file:?immutable=1");

    if (!uri)
        return NULL;
    memcpy(uri, "file:", 5);
    k = 5;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];

        if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
            snprintf(uri + k, 4, "%%%02X", c);
            k += 3;
        } else {
            uri[k++] = (char)c;
        }
    }
    memcpy(uri + k, "?immutable=1", sizeof "?immutable=1");
    return uri;
}

/* What a path that is not a regular file is, for a message. */
static const char *file_kind(mode_t mode)
{
    return S_ISFIFO(mode)   ? "FIFO"
           : S_ISSOCK(mode) ? "socket"
           : S_ISCHR(mode)  ? "character device"
           : S_ISBLK(mode)  ? "block device"
                            : "special file";
}

/* Looks at the file without writing: is it a planctl database, and which
 * version?  *fresh is set for an empty database (no table at all). */
static int identify(pctl_sqlite_conn *sc, int *fresh)
{
    planctl *p = sc->base.p;
    int app_id = 0, version = 0, tables = 0, rc;

    rc = pragma_int(sc, "SELECT count(*) FROM sqlite_master", &tables);
    /* SQLite tells a file that is no database (its header is not
     * SQLite's) from a database that is damaged (truncated, bits
     * flipped): the second needs a backup, not another --db. */
    if ((rc == PLANCTL_ENOTDB || rc == PLANCTL_EIO) &&
        (sqlite3_errcode(sc->db) & 0xff) == SQLITE_CORRUPT)
        return pctl_err(p, PLANCTL_EIO, "database %s is damaged (SQLite: %s)",
                        p->path, sqlite3_errstr(SQLITE_CORRUPT));
    if (rc == PLANCTL_ENOTDB || rc == PLANCTL_EIO)
        return pctl_err(p, PLANCTL_ENOTDB,
                        "%s is not a planctl database (not an SQLite file, or "
                        "its header is damaged)",
                        p->path);
    if (rc < 0)
        return rc;
    if ((rc = pragma_int(sc, "PRAGMA application_id", &app_id)) < 0 ||
        (rc = pragma_int(sc, "PRAGMA user_version", &version)) < 0)
        return rc;
    *fresh = tables == 0 && app_id == 0 && version == 0;
    if (*fresh)
        return 0;
    if (app_id != PLANCTL_APPLICATION_ID)
        return pctl_err(p, PLANCTL_ENOTDB,
                        "%s is an SQLite database but not a planctl one",
                        p->path);
    if (version > pctl_migrations_count)
        return pctl_err(p, PLANCTL_ETOONEW,
                        "%s has schema version %d but this planctl "
                        "supports up to %d; upgrade planctl",
                        p->path, version, pctl_migrations_count);
    p->schema_version = version;
    return 0;
}

static int migrate(pctl_sqlite_conn *sc)
{
    planctl *p = sc->base.p;
    int i, rc, version;
    char sql[64];

    for (i = p->schema_version; i < pctl_migrations_count; i++) {
        const pctl_embedded_sql *m = &pctl_migrations[i];

        if ((rc = sq_begin(&sc->base, PCTL_TX_WRITE)) < 0)
            return rc;
        /* Another process may have migrated while we waited for the lock. */
        rc = pragma_int(sc, "PRAGMA user_version", &version);
        if (rc == 0 && version >= m->version) {
            rc = sq_commit(&sc->base);
            p->schema_version = version;
            if (rc < 0)
                return rc;
            continue;
        }
        if (rc == 0)
            rc = exec(sc, m->sql, m->name);
        if (rc == 0) {
            snprintf(sql, sizeof sql, "PRAGMA user_version = %d", m->version);
            rc = exec(sc, sql, NULL);
        }
        if (rc < 0) {
            sq_rollback(&sc->base);
            return rc;
        }
        if ((rc = sq_commit(&sc->base)) < 0)
            return rc;
        p->schema_version = m->version;
    }
    return 0;
}

static int configure(pctl_sqlite_conn *sc, const planctl_open_options *o)
{
    char sql[64];
    int rc;

    if ((rc = exec(sc, "PRAGMA foreign_keys = ON", NULL)) < 0)
        return rc;
    if (sc->base.p->readonly)
        return 0;
    if ((rc = exec(sc, "PRAGMA journal_mode = WAL", NULL)) < 0)
        return rc;
    snprintf(sql, sizeof sql, "PRAGMA synchronous = %s",
             o->durability == PLANCTL_DURABILITY_FULL ? "FULL" : "NORMAL");
    return exec(sc, sql, NULL);
}

/* The directory the database should go in (the part of its path before
 * the last '/') is missing: named, with the fix; planctl makes no
 * directories. */
static int missing_dir(planctl *p, size_t len)
{
    return pctl_err(p, PLANCTL_EIO,
                    "cannot create database %s: directory %.*s does not "
                    "exist; create it first (mkdir -p %.*s)",
                    p->path, (int)len, p->path, (int)len, p->path);
}

/*
 * Creates path with mode 0600 if it does not exist.  Returns 0, or 1 if it
 * already existed, or a negative code.  The empty file is made under a
 * temporary name and linked into place, so its descriptor is closed before
 * the database's name reaches it: a handle another thread opens on the new
 * database at once holds locks no close() of ours can drop.  Only where
 * the file system has no hard links is it created in place (O_EXCL, so
 * still a file nobody had open).
 */
static int create_file(planctl *p)
{
    char *tmp = pctl_asprintf("%s.new-XXXXXX", p->path);
    const char *slash;
    int fd, rc = 0, err = 0;

    if (!tmp)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if ((fd = mkstemp(tmp)) < 0) {
        err = errno;
        goto done;
    }
    close(fd);
    if (link(tmp, p->path) == 0) {
        rc = 0;
    } else if (errno == EEXIST) {
        rc = 1;
    } else if (errno == EPERM || errno == ENOSYS || errno == EOPNOTSUPP) {
        fd = open(p->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0)
            close(fd);
        else if (errno == EEXIST)
            rc = 1;
        else
            err = errno;
    } else {
        err = errno;
    }
    unlink(tmp);
done:
    pctl_free(tmp);
    slash = strrchr(p->path, '/');
    if (err == ENOENT && slash && slash > p->path)
        return missing_dir(p, (size_t)(slash - p->path));
    if (err)
        return pctl_err(
            p, err == EACCES || err == EROFS ? PLANCTL_EREADONLY : PLANCTL_EIO,
            "cannot create database %s: %s", p->path, strerror(err));
    return rc;
}

/*
 * The wait for another connection's lock, as sqlite3_busy_timeout()'s
 * (growing sleeps, busy_ms in all), but in slices of at most 10 ms that
 * look at planctl_interrupt()'s flag: an interrupted wait ends at once
 * and the statement fails SQLITE_BUSY, reported as PLANCTL_EINTR
 * (pctl_db_err).
 */
static int on_busy(void *arg, int count)
{
    static const int delays[] = {1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100};
    pctl_sqlite_conn *sc = arg;
    int d;

    if (count == 0)
        sc->busy_spent = 0;
    d = count < (int)(sizeof delays / sizeof delays[0]) ? delays[count] : 100;
    if (d > sc->busy_ms - sc->busy_spent)
        d = sc->busy_ms - sc->busy_spent;
    while (d > 0 && !pctl_intr_pending(sc->base.p)) {
        int slice = d < 10 ? d : 10;

        sqlite3_sleep(slice);
        sc->busy_spent += slice;
        d -= slice;
    }
    return !pctl_intr_pending(sc->base.p) && sc->busy_spent < sc->busy_ms;
}

static int sq_open_file(pctl_sqlite_conn *sc, const planctl_open_options *o)
{
    planctl *p = sc->base.p;
    const char *path = p->path;
    int rc, flags, fresh = 0, created = 0;
    struct stat sb;

    if (stat(path, &sb) != 0) {
        /* Only a file that is not there is "not found"; a path we may
         * not look at is an I/O error naming the cause. */
        if (errno != ENOENT)
            return pctl_err(p,
                            errno == EACCES ? PLANCTL_EREADONLY : PLANCTL_EIO,
                            "cannot read database %s: %s; check the "
                            "permissions of the file and its directories",
                            path, strerror(errno));
        /* A symbolic link to nothing: never create its target (in a
         * shared directory that is how a link planted by someone else
         * would redirect the file); say what is wrong instead. */
        if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode))
            return pctl_err(p, PLANCTL_EINVAL,
                            "database path %s is a symbolic link to a file "
                            "that does not exist; fix the link or give the "
                            "real path",
                            path);
        if (p->readonly || (o->flags & PLANCTL_OPEN_NOCREATE))
            return pctl_err(p, PLANCTL_ENOTFOUND, "database %s does not exist",
                            path);
        if ((rc = create_file(p)) < 0)
            return rc;
        created = rc == 0;
    } else if (S_ISDIR(sb.st_mode)) {
        return pctl_err(p, PLANCTL_EINVAL,
                        "database path %s is a directory; give a file", path);
    } else if (!S_ISREG(sb.st_mode)) {
        /* Opening a FIFO would wait for a writer for ever; a device or a
         * socket is no database either. */
        return pctl_err(p, PLANCTL_EINVAL,
                        "database path %s is a %s, not a regular file; give "
                        "the path of a database file",
                        path, file_kind(sb.st_mode));
    } else if (faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) != 0 &&
               errno == EACCES) {
        /* SQLite would only say "unable to open database file".  Asked,
         * not tried: no descriptor on the database (see the top). */
        return pctl_err(p, PLANCTL_EREADONLY,
                        "cannot read database %s: %s (owner uid %u, mode "
                        "%04o); check the permissions of the file and its "
                        "directories",
                        path, strerror(errno), (unsigned)sb.st_uid,
                        (unsigned)(sb.st_mode & 07777));
    }

    /* On a read-only file system nothing can write the database, not even
     * SQLite's -shm, which a WAL database needs for every read: it is
     * opened read-only and immutable, so reads work (as a copy on a DVD
     * or a read-only snapshot must), and a write is refused saying why. */
    if (!created && on_read_only_fs(path)) {
        p->ro_fs = 1;
        p->readonly = 1;
    }
    flags = (p->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
            SQLITE_OPEN_NOMUTEX;
    if (p->ro_fs) {
        char *uri = immutable_uri(path);

        if (!uri)
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        rc = sqlite3_open_v2(uri, &sc->db, flags | SQLITE_OPEN_URI, NULL);
        pctl_free(uri);
    } else {
        rc = sqlite3_open_v2(path, &sc->db, flags, NULL);
    }
    if (rc != SQLITE_OK) {
        if (!sc->db)
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        return pctl_sqlite_err(p, sc->db, rc, path);
    }
    sqlite3_extended_result_codes(sc->db, 1);
    sc->busy_ms = o->busy_timeout_ms;
    if (sc->busy_ms > 0)
        sqlite3_busy_handler(sc->db, on_busy, sc);
    if ((rc = identify(sc, &fresh)) < 0)
        return rc;
    /* An empty file is not initialised by a caller that would not have
     * created it: it is left as it is. */
    if (fresh && !created &&
        (p->readonly || (o->flags & PLANCTL_OPEN_NOCREATE)))
        return pctl_err(p, PLANCTL_ENOTFOUND, "database %s is empty", path);
    if ((rc = configure(sc, o)) < 0)
        return rc;
    if (p->readonly) {
        if (p->schema_version < pctl_migrations_count)
            return pctl_err(p, PLANCTL_EREADONLY,
                            "database %s needs a schema upgrade; open it "
                            "once read-write",
                            path);
        return 0;
    }
    if ((rc = migrate(sc)) < 0) {
        /* A database we created and could not even initialise is left
         * behind empty; remove it so a retry starts clean. */
        if (created && p->schema_version == 0)
            unlink(path);
        return rc;
    }
    return 0;
}

static void sq_close(pctl_conn *c)
{
    if (!c)
        return;
    sqlite3_finalize(SC(c)->data_version);
    sqlite3_finalize(SC(c)->begin_write);
    sqlite3_finalize(SC(c)->begin_read);
    sqlite3_finalize(SC(c)->commit);
    if (SC(c)->db)
        sqlite3_close_v2(SC(c)->db);
    pctl_sqlite_engine_unlock(c);
    pctl_free(c);
}

static int sq_open(pctl_conn **out, planctl *p, const planctl_open_options *o)
{
    pctl_sqlite_conn *sc = pctl_calloc(1, sizeof *sc);
    int rc;

    *out = NULL;
    if (!sc)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    sc->base.m = &pctl_db_sqlite;
    sc->base.p = p;
    sc->lock_fd = -1;
    if ((rc = sq_open_file(sc, o)) < 0) {
        sq_close(&sc->base);
        return rc;
    }
    *out = &sc->base;
    return 0;
}

static void sq_interrupt(pctl_conn *c)
{
    /* Safe from another thread while the connection is in use; a no-op
     * when no statement runs.  A wait for the lock sees p->intr
     * (on_busy). */
    sqlite3_interrupt(((pctl_sqlite_conn *)c)->db);
}

const pctl_db_methods pctl_db_sqlite = {
    .name = "sqlite",
    .queries = pctl_queries_sqlite,
    .verify_says = "integrity and foreign keys ok",
    .process_init = sq_process_init,
    .open = sq_open,
    .close = sq_close,
    .prepare = pctl_sqlite_prepare,
    .finalize = pctl_sqlite_finalize,
    .reset = pctl_sqlite_reset,
    .bind_i64 = pctl_sqlite_bind_i64,
    .bind_text = pctl_sqlite_bind_text,
    .step = pctl_sqlite_step,
    .col_type = pctl_sqlite_col_type,
    .col_i64 = pctl_sqlite_col_i64,
    .col_real = pctl_sqlite_col_real,
    .col_text = pctl_sqlite_col_text,
    .col_bytes = pctl_sqlite_col_bytes,
    .ncols = pctl_sqlite_ncols,
    .col_name = pctl_sqlite_col_name,
    .changes = pctl_sqlite_changes,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .token = sq_token,
    .engine_lock = pctl_sqlite_engine_lock,
    .engine_unlock = pctl_sqlite_engine_unlock,
    .interrupt = sq_interrupt,
    .ident_note = pctl_sqlite_ident_note,
    .ident_check = pctl_sqlite_ident_check,
};
