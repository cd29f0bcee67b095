/*
 * stmt.c - pctl_db_sqlite's statements: a pctl_stmt over an sqlite3_stmt.
 *
 * Statements are prepared once per handle (SQLITE_PREPARE_PERSISTENT) and
 * reused; the handle's cache (sql.c) resets them between uses.
 *
 * Text is bound without a copy (SQLITE_STATIC).  A copy (SQLITE_TRANSIENT)
 * allocates, and when that allocation fails SQLite binds NULL and carries
 * on: an event would be written with a missing field, as the
 * fail-the-Nth-allocation test showed.  Every caller steps and resets the
 * statement before its string goes away, and the cache clears the
 * bindings before the next use (or, for pctl_q_rebind, the caller binds
 * every parameter again), so SQLite never reads a stale pointer.
 */
#include "core/alloc.h"
#include "store/sqlite/sqlite.h"

#define SQ(s) ((pctl_sqlite_stmt *)(s))

int pctl_sqlite_prepare(pctl_stmt **out, pctl_conn *c, pctl_query q,
                        const char *sql, size_t len)
{
    pctl_sqlite_conn *sc = (pctl_sqlite_conn *)c;
    pctl_sqlite_stmt *s;
    int rc;

    *out = NULL;
    if (!(s = pctl_calloc(1, sizeof *s)))
        return pctl_err(c->p, PLANCTL_ENOMEM, "out of memory");
    rc = sqlite3_prepare_v3(sc->db, sql, (int)len, SQLITE_PREPARE_PERSISTENT,
                            &s->st, NULL);
    if (rc != SQLITE_OK) {
        pctl_free(s);
        return pctl_sqlite_err(c->p, sc->db, rc, pctl_query_name(q));
    }
    s->base.m = c->m;
    s->base.c = c;
    s->base.q = q;
    *out = &s->base;
    return 0;
}

void pctl_sqlite_finalize(pctl_stmt *s)
{
    if (!s)
        return;
    sqlite3_finalize(SQ(s)->st);
    pctl_free(s);
}

void pctl_sqlite_reset(pctl_stmt *s, int unbind)
{
    sqlite3_reset(SQ(s)->st);
    if (unbind)
        sqlite3_clear_bindings(SQ(s)->st);
    SQ(s)->bind_rc = 0;
}

void pctl_sqlite_bind_i64(pctl_stmt *s, int i, int64_t v)
{
    int rc = sqlite3_bind_int64(SQ(s)->st, i, v);

    if (rc != SQLITE_OK && rc != SQLITE_RANGE && !SQ(s)->bind_rc)
        SQ(s)->bind_rc = rc;
}

int pctl_sqlite_bind_text_static(sqlite3_stmt *st, int i, const char *v)
{
    return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC)
             : sqlite3_bind_null(st, i);
}

void pctl_sqlite_bind_text(pctl_stmt *s, int i, const char *v)
{
    int rc = pctl_sqlite_bind_text_static(SQ(s)->st, i, v);

    if (rc != SQLITE_OK && rc != SQLITE_RANGE && !SQ(s)->bind_rc)
        SQ(s)->bind_rc = rc;
}

int pctl_sqlite_step(pctl_stmt *s)
{
    pctl_sqlite_conn *sc = (pctl_sqlite_conn *)s->c;
    int rc;

    if (SQ(s)->bind_rc)
        return pctl_sqlite_err(s->c->p, NULL, SQ(s)->bind_rc,
                               pctl_query_name(s->q));
    rc = sqlite3_step(SQ(s)->st);
    if (rc == SQLITE_ROW)
        return PCTL_ROW;
    if (rc == SQLITE_DONE)
        return PCTL_DONE;
    return pctl_sqlite_err(s->c->p, sc->db, rc, pctl_query_name(s->q));
}

pctl_col_kind pctl_sqlite_col_type(pctl_stmt *s, int col)
{
    switch (sqlite3_column_type(SQ(s)->st, col)) {
    case SQLITE_NULL:
        return PCTL_COL_NULL;
    case SQLITE_INTEGER:
        return PCTL_COL_INT;
    case SQLITE_FLOAT:
        return PCTL_COL_REAL;
    default:
        return PCTL_COL_TEXT; /* blobs are read as text: planctl has none */
    }
}

int64_t pctl_sqlite_col_i64(pctl_stmt *s, int col)
{
    return sqlite3_column_int64(SQ(s)->st, col);
}

double pctl_sqlite_col_real(pctl_stmt *s, int col)
{
    return sqlite3_column_double(SQ(s)->st, col);
}

const char *pctl_sqlite_col_text(pctl_stmt *s, int col)
{
    return (const char *)sqlite3_column_text(SQ(s)->st, col);
}

size_t pctl_sqlite_col_bytes(pctl_stmt *s, int col)
{
    return (size_t)sqlite3_column_bytes(SQ(s)->st, col);
}

int pctl_sqlite_ncols(pctl_stmt *s)
{
    return sqlite3_column_count(SQ(s)->st);
}

const char *pctl_sqlite_col_name(pctl_stmt *s, int col)
{
    return sqlite3_column_name(SQ(s)->st, col);
}

int64_t pctl_sqlite_changes(pctl_stmt *s)
{
    return sqlite3_changes64(((pctl_sqlite_conn *)s->c)->db);
}
