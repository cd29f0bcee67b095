/*
 * sqlite.h - the SQLite backend's own declarations (src/store/sqlite/).
 * Only this folder, and tests that look under the seam, include it; the
 * rest of the store reaches SQLite through sql.h's table.
 */
#ifndef PCTL_STORE_SQLITE_H
#define PCTL_STORE_SQLITE_H

#include <sqlite3.h>
#include <sys/types.h>

#include "store/sql.h"
#include "store/store.h"

/* A file's identity (ident.c). */
typedef struct pctl_file_id {
    dev_t dev;
    ino_t ino;
    int known;
} pctl_file_id;

typedef struct pctl_sqlite_conn {
    pctl_conn base;
    sqlite3 *db;
    sqlite3_stmt *data_version; /* the token's, prepared when first asked */
    /* BEGIN IMMEDIATE, BEGIN and COMMIT, prepared when first run (conn.c) */
    sqlite3_stmt *begin_write, *begin_read, *commit;
    pctl_file_id ident_db, ident_wal; /* ident.c: noted by an engine */
    int lock_fd;                      /* the engine's lock (lock.c), or -1 */
    int busy_ms;    /* how long a writer waits for the lock (on_busy) */
    int busy_spent; /* ms waited so far for the lock being waited for */
} pctl_sqlite_conn;

typedef struct pctl_sqlite_stmt {
    pctl_stmt base;
    sqlite3_stmt *st;
    int bind_rc; /* the first failed bind since the last reset */
} pctl_sqlite_stmt;

/* The connection under p, or NULL when p is not on SQLite (tests). */
sqlite3 *pctl_sqlite_db(planctl *p);

/* Maps a SQLite result code to 0 or a PLANCTL_E* code. */
int pctl_sqlite_map(int sqlrc);

/* Maps sqlrc and sets p's message from db's words (sqlite3_errstr when
 * db is NULL) for what (a statement's name, or NULL): pctl_db_err.
 * Returns the code (PLANCTL_ERROR for a code that maps to 0). */
int pctl_sqlite_err(planctl *p, sqlite3 *db, int sqlrc, const char *what);

/* Binds text without a copy (stmt.c says why); NULL binds NULL.  The
 * statements of the backend and of the import's stage use it. */
int pctl_sqlite_bind_text_static(sqlite3_stmt *st, int i, const char *v);

/* stmt.c: the statement methods of pctl_db_sqlite. */
int pctl_sqlite_prepare(pctl_stmt **out, pctl_conn *c, pctl_query q,
                        const char *sql, size_t len);
void pctl_sqlite_finalize(pctl_stmt *s);
void pctl_sqlite_reset(pctl_stmt *s, int unbind);
void pctl_sqlite_bind_i64(pctl_stmt *s, int i, int64_t v);
void pctl_sqlite_bind_text(pctl_stmt *s, int i, const char *v);
int pctl_sqlite_step(pctl_stmt *s);
pctl_col_kind pctl_sqlite_col_type(pctl_stmt *s, int col);
int64_t pctl_sqlite_col_i64(pctl_stmt *s, int col);
double pctl_sqlite_col_real(pctl_stmt *s, int col);
const char *pctl_sqlite_col_text(pctl_stmt *s, int col);
size_t pctl_sqlite_col_bytes(pctl_stmt *s, int col);
int pctl_sqlite_ncols(pctl_stmt *s);
const char *pctl_sqlite_col_name(pctl_stmt *s, int col);
int64_t pctl_sqlite_changes(pctl_stmt *s);

/* lock.c */
int pctl_sqlite_engine_lock(pctl_conn *c);
void pctl_sqlite_engine_unlock(pctl_conn *c);

/* ident.c */
void pctl_sqlite_ident_note(pctl_conn *c);
int pctl_sqlite_ident_check(pctl_conn *c);

#endif
