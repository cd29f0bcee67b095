/* errmap.c - SQLite's result codes as planctl's, with the message on the
 * handle: what the connection (conn.c) and the statements (stmt.c) both
 * report through, kept below them both. */
#include "store/sqlite/sqlite.h"

int pctl_sqlite_map(int sqlrc)
{
    switch (sqlrc & 0xff) {
    case SQLITE_OK:
    case SQLITE_DONE:
    case SQLITE_ROW:
        return 0;
    case SQLITE_NOMEM:
        return PLANCTL_ENOMEM;
    case SQLITE_INTERRUPT: /* planctl_interrupt() */
        return PLANCTL_EINTR;
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

int pctl_sqlite_err(planctl *p, sqlite3 *db, int sqlrc, const char *what)
{
    int rc = pctl_sqlite_map(sqlrc);

    if (rc == 0)
        rc = PLANCTL_ERROR;
    return pctl_db_err(p, rc, what,
                       db ? sqlite3_errmsg(db) : sqlite3_errstr(sqlrc));
}
