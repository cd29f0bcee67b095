/*
 * db.c - opening a planctl database: recognising it, migrating it, and the
 * connection-level plumbing (errors, clock, statements, transactions).
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
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "store/embed.h"
#include "store/store.h"

#define PLANCTL_APPLICATION_ID 1347175252 /* 'PLCT' */

int pctl_err(planctl *p, int rc, const char *fmt, ...)
{
    va_list ap;
    char *msg;
    int n;

    if (!p)
        return rc;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    msg = n >= 0 ? pctl_malloc((size_t)n + 1) : NULL;
    if (msg) {
        char *r, *w;

        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
        /* One line, whatever went in: SQLite quotes a failed CHECK with
         * its schema text, line breaks and indentation included, and
         * names from outside may hold control characters.  Each run of
         * them (and the spaces after) becomes one space. */
        for (r = w = msg; *r;) {
            if ((unsigned char)*r < 0x20 || *r == 0x7f) {
                while (*r &&
                       ((unsigned char)*r < 0x20 || *r == 0x7f || *r == ' '))
                    r++;
                *w++ = ' ';
            } else {
                *w++ = *r++;
            }
        }
        *w = '\0';
    }
    pctl_free(p->errmsg);
    p->errmsg = msg; /* NULL reads as "out of memory" */
    return rc;
}

static int map_sqlite(int sqlrc)
{
    switch (sqlrc & 0xff) {
    case SQLITE_OK:
    case SQLITE_DONE:
    case SQLITE_ROW:
        return 0;
    case SQLITE_NOMEM:
        return PLANCTL_ENOMEM;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return PLANCTL_EBUSY;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return PLANCTL_EREADONLY;
    case SQLITE_NOTADB:
        return PLANCTL_ENOTDB;
    case SQLITE_CONSTRAINT:
        if (sqlrc == SQLITE_CONSTRAINT_TRIGGER)
            return PLANCTL_ETRANSITION;
        return PLANCTL_ECONFLICT;
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CORRUPT:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
        return PLANCTL_EIO;
    default:
        return PLANCTL_ERROR;
    }
}

int pctl_sqlerr(planctl *p, int sqlrc, const char *what)
{
    int rc = map_sqlite(sqlrc);
    const char *detail =
        p && p->db ? sqlite3_errmsg(p->db) : sqlite3_errstr(sqlrc);

    if (rc == 0)
        rc = PLANCTL_ERROR;
    if (rc == PLANCTL_ENOMEM)
        return pctl_err(p, rc, "out of memory");
    if (rc == PLANCTL_EBUSY)
        return pctl_err(p, rc,
                        "database %s is locked by another process; "
                        "try again",
                        p && p->path ? p->path : "");
    if (rc == PLANCTL_EREADONLY && p && p->path && p->ro_fs)
        return pctl_err(p, rc,
                        "database %s is on a read-only file system: it can "
                        "be read (status, history, events, replay, verify, "
                        "export) but not changed; copy it somewhere "
                        "writable to change it",
                        p->path);
    /* SQLite's words for a file it may not write ("attempt to write a
     * readonly database") name neither the file nor the remedy; in WAL
     * mode even a read needs to create the -shm file. */
    if (rc == PLANCTL_EREADONLY && p && p->path)
        return pctl_err(p, rc,
                        "cannot write database %s (%s%s%s); planctl needs "
                        "write access to it and to its directory, for the "
                        "-wal and -shm files",
                        p->path, what ? what : "", what ? ": " : "", detail);
    if (what)
        return pctl_err(p, rc, "%s: %s", what, detail);
    return pctl_err(p, rc, "%s", detail);
}

static int64_t system_now(void *data)
{
    struct timespec ts;

    (void)data;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t pctl_now(const planctl *p)
{
    return p->frozen_now ? p->frozen_now : p->now_fn(p->now_data);
}

void pctl_clock_freeze(planctl *p, int64_t at)
{
    p->frozen_now = at;
}

int pctl_clock_is_system(pctl_clock c)
{
    return c.now_ms == system_now;
}

int64_t pctl_clock_system_now(void)
{
    return system_now(NULL);
}

pctl_clock pctl_clock_get(const planctl *p)
{
    pctl_clock c;

    c.now_ms = p->now_fn;
    c.data = p->now_data;
    return c;
}

int planctl_process_init(void)
{
    struct rlimit rl;

    /* Every shell task holds descriptors (its output pipes): as many as
     * the process may have, rather than the shell's default soft limit. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    /* SQLITE_MISUSE: sqlite3_initialize() has run (or is running). */
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK
               ? 0
               : PLANCTL_EBUSY;
}

void planctl_set_clock(planctl *p, int64_t (*now_ms)(void *data), void *data)
{
    if (!p)
        return;
    p->now_fn = now_ms ? now_ms : system_now;
    p->now_data = now_ms ? data : NULL;
}

int planctl_set_event_limits(planctl *p, int64_t warn_at, int64_t max)
{
    if (!p)
        return PLANCTL_EINVAL;
    if (warn_at < 0 || max < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "event limits must not be negative (0 keeps the "
                        "default)");
    p->run_events_warn = warn_at ? warn_at : PLANCTL_RUN_EVENTS_WARN;
    p->run_events_max = max ? max : PLANCTL_RUN_EVENTS_MAX;
    return 0;
}

const char *planctl_errmsg(const planctl *p)
{
    if (!p)
        return "out of memory";
    if (!p->errmsg)
        return "";
    return p->errmsg;
}

int planctl_schema_version(const planctl *p)
{
    return p ? p->schema_version : 0;
}

int planctl_schema_version_supported(void)
{
    return pctl_migrations_count;
}

/* ---- statements ---- */

static const char *const query_names[] = {
#define X(name) #name,
    PCTL_QUERIES(X)
#undef X
};

/* Finds "-- name: NAME\n" in the embedded queries.sql; the statement runs
 * to the next "-- name:" line or the end. */
static const char *query_text(pctl_query q, int *len)
{
    const char *name = query_names[q];
    size_t nlen = strlen(name);
    const char *s = pctl_queries_sql;

    while ((s = strstr(s, "-- name: ")) != NULL) {
        s += 9;
        if (strncmp(s, name, nlen) == 0 &&
            (s[nlen] == '\n' || s[nlen] == '\r')) {
            const char *start = s + nlen;
            const char *end = strstr(start, "-- name: ");

            if (!end)
                end = start + strlen(start);
            *len = (int)(end - start);
            return start;
        }
    }
    return NULL;
}

sqlite3_stmt *pctl_stmt(planctl *p, pctl_query q)
{
    sqlite3_stmt *st = p->stmts[q];
    const char *sql;
    int len, rc;

    if (st) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return st;
    }
    sql = query_text(q, &len);
    if (!sql) {
        pctl_err(p, PLANCTL_ERROR, "query %s is missing from queries.sql",
                 query_names[q]);
        return NULL;
    }
    rc = sqlite3_prepare_v3(p->db, sql, len, SQLITE_PREPARE_PERSISTENT, &st,
                            NULL);
    if (rc != SQLITE_OK) {
        pctl_sqlerr(p, rc, query_names[q]);
        return NULL;
    }
    p->stmts[q] = st;
    return st;
}

/*
 * Text is bound without a copy (SQLITE_STATIC).  A copy (SQLITE_TRANSIENT)
 * allocates, and when that allocation fails SQLite binds NULL and carries
 * on: an event would be written with a missing field, as the
 * fail-the-Nth-allocation test showed.  Every caller steps and resets the
 * statement before its string goes away, and pctl_stmt() clears the
 * bindings before the next use, so SQLite never reads a stale pointer.
 */
int pctl_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (!s)
        return sqlite3_bind_null(st, i);
    return sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

int pctl_bind_id(sqlite3_stmt *st, int i, int64_t id)
{
    if (id <= 0)
        return sqlite3_bind_null(st, i);
    return sqlite3_bind_int64(st, i, id);
}

int pctl_exec_stmt(planctl *p, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);

    if (rc == SQLITE_DONE || rc == SQLITE_ROW) {
        sqlite3_reset(st);
        return 0;
    }
    sqlite3_reset(st);
    return pctl_sqlerr(p, rc, what);
}

int pctl_exec(planctl *p, const char *sql)
{
    int rc = sqlite3_exec(p->db, sql, NULL, NULL, NULL);

    return rc == SQLITE_OK ? 0 : pctl_sqlerr(p, rc, NULL);
}

/* ---- transactions ---- */

static void thaw(planctl *p);

int pctl_tx_begin(planctl *p)
{
    int rc;

    if (p->readonly)
        return p->ro_fs ? pctl_sqlerr(p, SQLITE_READONLY, NULL)
                        : pctl_err(p, PLANCTL_EREADONLY,
                                   "database %s was opened read-only", p->path);
    if (p->rx_began)
        return pctl_err(p, PLANCTL_ERROR,
                        "a write transaction inside a read one");
    if (p->tx_depth++ > 0)
        return 0;
    p->tx_serial++;
    rc = pctl_exec(p, "BEGIN IMMEDIATE");
    if (rc < 0) {
        p->tx_depth = 0;
        return rc;
    }
    /* A transaction is one moment: a row and its event get the same time
     * (replay and verify compare them).  An engine pass may have frozen
     * the clock already for its own transaction. */
    if (!p->frozen_now) {
        p->frozen_now = p->now_fn(p->now_data);
        p->tx_froze = 1;
    }
    return 0;
}

/* Ends the moment pctl_tx_begin started. */
static void thaw(planctl *p)
{
    if (p->tx_froze) {
        p->frozen_now = 0;
        p->tx_froze = 0;
    }
}

void pctl_tx_rollback(planctl *p)
{
    if (p->tx_depth == 0)
        return;
    if (--p->tx_depth > 0)
        return;
    thaw(p);
    if (!sqlite3_get_autocommit(p->db))
        sqlite3_exec(p->db, "ROLLBACK", NULL, NULL, NULL);
    p->tx_serial++; /* over: nothing synced in it holds any more */
}

int pctl_tx_commit(planctl *p)
{
    int rc;

    if (p->tx_depth == 0)
        return pctl_err(p, PLANCTL_ERROR, "commit without a transaction");
    if (--p->tx_depth > 0)
        return 0;
    thaw(p);
    /* Deferred events are their owner's to flush before this (journal.c):
     * the commit writes nothing of its own. */
    if ((rc = sqlite3_exec(p->db, "COMMIT", NULL, NULL, NULL)) != SQLITE_OK)
        rc = pctl_sqlerr(p, rc, "commit");
    if (rc < 0 && !sqlite3_get_autocommit(p->db))
        sqlite3_exec(p->db, "ROLLBACK", NULL, NULL, NULL);
    p->tx_serial++; /* over: nothing synced in it holds any more */
    return rc;
}

int pctl_tx_read(planctl *p)
{
    int rc = 0;

    if (p->rx_depth++ == 0 && p->tx_depth == 0) {
        if ((rc = pctl_exec(p, "BEGIN")) < 0)
            p->rx_depth = 0;
        else
            p->rx_began = 1;
    }
    return rc;
}

void pctl_tx_read_end(planctl *p)
{
    if (p->rx_depth == 0 || --p->rx_depth > 0 || !p->rx_began)
        return;
    p->rx_began = 0;
    sqlite3_exec(p->db, "COMMIT", NULL, NULL, NULL);
}

int pctl_tx_end(planctl *p, int rc)
{
    if (rc < 0) {
        pctl_tx_rollback(p);
        return rc;
    }
    return pctl_tx_commit(p);
}

/* ---- opening ---- */

static int pragma_int(planctl *p, const char *sql, int *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(p->db, sql, -1, &st, NULL);

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
        int mapped = pctl_sqlerr(p, rc, NULL);

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
static int identify(planctl *p, int *fresh)
{
    int app_id = 0, version = 0, tables = 0, rc;

    rc = pragma_int(p, "SELECT count(*) FROM sqlite_master", &tables);
    /* SQLite tells a file that is no database (its header is not
     * SQLite's) from a database that is damaged (truncated, bits
     * flipped): the second needs a backup, not another --db. */
    if ((rc == PLANCTL_ENOTDB || rc == PLANCTL_EIO) &&
        (sqlite3_errcode(p->db) & 0xff) == SQLITE_CORRUPT)
        return pctl_err(p, PLANCTL_EIO,
                        "database %s is damaged (SQLite: %s); restore it "
                        "from a backup, or run 'planctl verify' on a copy "
                        "to see what can still be read",
                        p->path, sqlite3_errstr(SQLITE_CORRUPT));
    if (rc == PLANCTL_ENOTDB || rc == PLANCTL_EIO)
        return pctl_err(p, PLANCTL_ENOTDB,
                        "%s is not a planctl database (not an SQLite file, or "
                        "its header is damaged); check --db or PLANCTL_DB",
                        p->path);
    if (rc < 0)
        return rc;
    if ((rc = pragma_int(p, "PRAGMA application_id", &app_id)) < 0 ||
        (rc = pragma_int(p, "PRAGMA user_version", &version)) < 0)
        return rc;
    *fresh = tables == 0 && app_id == 0 && version == 0;
    if (*fresh)
        return 0;
    if (app_id != PLANCTL_APPLICATION_ID)
        return pctl_err(p, PLANCTL_ENOTDB,
                        "%s is an SQLite database but not a planctl one; "
                        "check --db or PLANCTL_DB",
                        p->path);
    if (version > pctl_migrations_count)
        return pctl_err(p, PLANCTL_ETOONEW,
                        "%s has schema version %d but this planctl "
                        "supports up to %d; upgrade planctl",
                        p->path, version, pctl_migrations_count);
    p->schema_version = version;
    return 0;
}

static int migrate(planctl *p)
{
    int i, rc, version;
    char sql[64];

    for (i = p->schema_version; i < pctl_migrations_count; i++) {
        const pctl_embedded_sql *m = &pctl_migrations[i];

        if ((rc = pctl_tx_begin(p)) < 0)
            return rc;
        /* Another process may have migrated while we waited for the lock. */
        rc = pragma_int(p, "PRAGMA user_version", &version);
        if (rc == 0 && version >= m->version) {
            rc = pctl_tx_commit(p);
            p->schema_version = version;
            if (rc < 0)
                return rc;
            continue;
        }
        if (rc == 0) {
            rc = sqlite3_exec(p->db, m->sql, NULL, NULL, NULL);
            rc = rc == SQLITE_OK ? 0 : pctl_sqlerr(p, rc, m->name);
        }
        if (rc == 0) {
            snprintf(sql, sizeof sql, "PRAGMA user_version = %d", m->version);
            rc = pctl_exec(p, sql);
        }
        if ((rc = pctl_tx_end(p, rc)) < 0)
            return rc;
        p->schema_version = m->version;
    }
    return 0;
}

static int configure(planctl *p, const planctl_open_options *o)
{
    char sql[64];
    int rc;

    sqlite3_extended_result_codes(p->db, 1);
    sqlite3_busy_timeout(p->db, o->busy_timeout_ms);
    if ((rc = pctl_exec(p, "PRAGMA foreign_keys = ON")) < 0)
        return rc;
    if (p->readonly)
        return 0;
    if ((rc = pctl_exec(p, "PRAGMA journal_mode = WAL")) < 0)
        return rc;
    snprintf(sql, sizeof sql, "PRAGMA synchronous = %s",
             o->durability == PLANCTL_DURABILITY_FULL ? "FULL" : "NORMAL");
    return pctl_exec(p, sql);
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
    if (err)
        return pctl_err(
            p, err == EACCES || err == EROFS ? PLANCTL_EREADONLY : PLANCTL_EIO,
            "cannot create database %s: %s", p->path, strerror(err));
    return rc;
}

int planctl_open(planctl **out, const char *path,
                 const planctl_open_options *opts)
{
    planctl_open_options defaults = PLANCTL_OPEN_OPTIONS_INIT;
    const planctl_open_options *o = opts ? opts : &defaults;
    planctl *p;
    int rc, flags, fresh = 0, created = 0;
    struct stat sb;

    if (!out)
        return PLANCTL_EINVAL;
    *out = NULL;
    p = pctl_calloc(1, sizeof *p);
    if (!p)
        return PLANCTL_ENOMEM;
    *out = p;
    p->now_fn = system_now;
    p->lock_fd = -1;
    p->check_cache = getenv("PLANCTL_CHECK_CACHE") &&
                     strcmp(getenv("PLANCTL_CHECK_CACHE"), "1") == 0;
    p->run_events_warn = PLANCTL_RUN_EVENTS_WARN;
    p->run_events_max = PLANCTL_RUN_EVENTS_MAX;
    if (!path || !*path)
        return pctl_err(p, PLANCTL_EINVAL, "database path is empty");
    if (o->version != PLANCTL_OPEN_OPTIONS_VERSION)
        return pctl_err(p, PLANCTL_EINVAL,
                        "planctl_open_options version %u is not supported",
                        o->version);
    p->path = pctl_strdup(path);
    if (!p->path) {
        planctl_close(p);
        *out = NULL;
        return PLANCTL_ENOMEM;
    }
    p->readonly = (o->flags & PLANCTL_OPEN_READONLY) != 0;

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
            return pctl_err(p, PLANCTL_ENOTFOUND,
                            "database %s does not exist; create it with "
                            "'planctl apply' or check --db",
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
        rc = sqlite3_open_v2(uri, &p->db, flags | SQLITE_OPEN_URI, NULL);
        pctl_free(uri);
    } else {
        rc = sqlite3_open_v2(path, &p->db, flags, NULL);
    }
    if (rc != SQLITE_OK) {
        if (!p->db)
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        return pctl_sqlerr(p, rc, path);
    }
    sqlite3_extended_result_codes(p->db, 1);
    sqlite3_busy_timeout(p->db, o->busy_timeout_ms);
    if ((rc = identify(p, &fresh)) < 0)
        return rc;
    /* An empty file is not initialised by a caller that would not have
     * created it: it is left as it is. */
    if (fresh && !created &&
        (p->readonly || (o->flags & PLANCTL_OPEN_NOCREATE)))
        return pctl_err(p, PLANCTL_ENOTFOUND,
                        "database %s is empty; create it with 'planctl "
                        "apply' or check --db",
                        path);
    if ((rc = configure(p, o)) < 0)
        return rc;
    if (p->readonly) {
        if (p->schema_version < pctl_migrations_count)
            return pctl_err(p, PLANCTL_EREADONLY,
                            "database %s needs a schema upgrade; open it "
                            "once read-write",
                            path);
        return 0;
    }
    if ((rc = migrate(p)) < 0) {
        /* A database we created and could not even initialise is left
         * behind empty; remove it so a retry starts clean. */
        if (created && p->schema_version == 0)
            unlink(path);
        return rc;
    }
    return 0;
}

void planctl_close(planctl *p)
{
    int i;

    if (!p)
        return;
    for (i = 0; i < PCTL_Q__COUNT; i++)
        sqlite3_finalize(p->stmts[i]);
    if (p->db)
        sqlite3_close_v2(p->db);
    if (p->lock_fd >= 0)
        close(p->lock_fd);
    pctl_free(p->preflight_skip);
    pctl_free(p->preflight_report);
    pctl_kinds_free(p->kinds);
    pctl_free(p->path);
    pctl_free(p->errmsg);
    pctl_free(p);
}

/* ---- changes by other connections ---- */

int pctl_data_version(int64_t *out, planctl *p)
{
    sqlite3_stmt *st = pctl_stmt(p, PCTL_Q_data_version);
    int rc;

    if (!st)
        return PLANCTL_ERROR;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : pctl_sqlerr(p, rc, "data_version");
}

int planctl_data_version(int64_t *out, planctl *p)
{
    if (!out || !p)
        return p ? pctl_err(p, PLANCTL_EINVAL, "missing argument")
                 : PLANCTL_EINVAL;
    return pctl_data_version(out, p);
}
