/*
 * legacy.c - the statement calls of before the seam, kept while the files
 * of src/store move over to sql.h one by one.  Goes when the last one has.
 */
#include "store/sqlite/sqlite.h"

sqlite3_stmt *pctl_legacy_stmt(planctl *p, pctl_query q)
{
    pctl_stmt *s = pctl_q(p, q);

    return s ? ((pctl_sqlite_stmt *)s)->st : NULL;
}

int pctl_sq_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (!s)
        return sqlite3_bind_null(st, i);
    return sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

int pctl_sq_bind_id(sqlite3_stmt *st, int i, int64_t id)
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

int pctl_sqlerr(planctl *p, int sqlrc, const char *what)
{
    return pctl_sqlite_err(p, pctl_sqlite_db(p), sqlrc, what);
}
