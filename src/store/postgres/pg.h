/*
 * pg.h - the PostgreSQL backend's own declarations (src/store/postgres/).
 * Only this folder, and tests that look under the seam, include it; the
 * rest of the store reaches PostgreSQL through sql.h's table.
 */
#ifndef PCTL_STORE_PG_H
#define PCTL_STORE_PG_H

#include <libpq-fe.h>

#include "core/buf.h"
#include "store/sql.h"
#include "store/store.h"

/* The advisory lock of one planctl schema: (class, hashtext(schema)).
 * 'PLCW': every planctl write transaction but a heartbeat, from its BEGIN
 * to its end: an engine's shared, any other alone (conn.c). */
#define PCTL_PG_LOCK_WRITE 1347175255 /* 'PLCW' */

/* The schema when the URI names none. */
#define PCTL_PG_DEFAULT_SCHEMA "planctl"

/* A database URI taken apart (uri.c). */
typedef struct pctl_pg_uri {
    char *conninfo; /* what libpq gets: the URI without planctl's own
                       parameters */
    char *shown;    /* for messages: without any password */
    char *schema;   /* the schema holding the tables */
} pctl_pg_uri;

/* Parses uri; on failure sets p's message (naming the URI without its
 * password) and returns PLANCTL_EINVAL or PLANCTL_ENOMEM. */
int pctl_pg_uri_parse(pctl_pg_uri *out, planctl *p, const char *uri);
void pctl_pg_uri_free(pctl_pg_uri *u);

/* uri with its password removed (from the user part and from a password
 * parameter), or NULL when out of memory; any string that is not a
 * PostgreSQL URI comes back as it is. */
char *pctl_pg_uri_redact(const char *uri);

typedef struct pctl_pg_conn {
    pctl_conn base;
    PGconn *pg;
    pctl_pg_uri uri;
    int lock_key;        /* hashtext(schema): the second half of the locks */
    char *channel_lit;   /* the NOTIFY channel as a quoted literal */
    char *channel_ident; /* and as a quoted identifier, for LISTEN */
    unsigned gen;        /* moves at every new session (a reconnection):
                            statements prepared before are prepared again */
    int in_tx;           /* 0, or the kind + 1 of the open transaction */
    int listening;       /* LISTEN sent in this session */
    int64_t seen;        /* the highest commit counter known, + shift */
    int64_t shift;       /* added to the counter as the server tells it */
    int rebase;          /* a new session: the counter may have gone back */
    int64_t mine;        /* this connection's commits that changed rows */
    int64_t heard;       /* notifications from other sessions, and one
                            for each new session (pctl_db_token) */
    int64_t own;         /* rows this connection's statements changed */
    int64_t own_at_begin;
    int counted;       /* a statement of the transaction moved its counter */
    int64_t before;    /* the counter when the open write began */
    int admit_counter; /* N of meta 'commits.-N', its admissions' */
    int readonly;
    int busy_ms;        /* the handle's busy timeout */
    int lock_ms;        /* the session's lock_timeout: busy_ms, or an
                           engine's shorter one */
    int quiet;          /* an engine's: its passes' commits
                           (PCTL_TX_ENGINE) notify only when woken */
    int wake;           /* the open transaction's commit notifies */
    int64_t idle_tx_ms; /* idle_in_transaction_session_timeout; 0: the
                           server's */
    /* The session's cancel request (planctl_interrupt()), made at each
     * connection; swapped and used under the handle's intr_lock. */
    PGcancel *cancel;
    /* Statements sent in pipeline mode and not answered yet, in order
     * (pctl_pg_step_later): each one's rows to write (-1: any; -2: the
     * statement waited for, whose answer is kept) and the statement. */
    struct pctl_pg_sent {
        struct pctl_pg_stmt *s;
        int64_t expect;
    } * sent;
    size_t nsent, sent_cap;
    int failed; /* a statement sent without waiting failed in the open
                   transaction: its commit fails */
    /* Rows gathered for statements' set forms (pctl_pg_gather), not sent
     * yet: the statements in the order of their first row, and each
     * row's key (its table and leading values), which no other gathered
     * row may share. */
    struct pctl_pg_many **gathered;
    size_t ngathered, gathered_cap;
    struct pctl_pg_key {
        const char *table;
        char *key;
    } * keys;
    size_t nkeys, keys_cap;
    int flushing;         /* pctl_pg_flush is sending the set forms */
    uint64_t round_trips; /* waits for the server's answers (tests) */
} pctl_pg_conn;

typedef struct pctl_pg_stmt {
    pctl_stmt base;
    char name[24];     /* the prepared statement's name in the session */
    const char *sql;   /* its text (embedded: lives as long as the process) */
    int nparams;       /* the highest $n in the text */
    const char **vals; /* bound values, NULL for NULL */
    char (*num)[24];   /* room for the bound integers */
    unsigned gen;      /* the session it was prepared in */
    PGresult *res;     /* the result of its execution, or NULL */
    PGresult *desc;    /* its description, when asked before it ran */
    int row, nrows;    /* the current row */
    int64_t changed;   /* rows its execution wrote */
    int bind_rc;
    int pending; /* sent in the pipeline, its answer not read yet */
    int fresh;   /* its answer read into res, not taken yet (took()) */
    struct pctl_pg_many *many; /* its set form, or NULL */
    /* The statement that also checks how many rows it wrote: the text
     * wrapped so that the server fails it (and so the transaction) when
     * they are not $nparams+1, bound to want (pctl_pg_send).  NULL for a
     * statement that cannot be wrapped (not one INSERT, UPDATE or
     * DELETE, or one with its own RETURNING): the client checks. */
    char *chk_sql;
    unsigned chk_gen; /* 1 + the session it was prepared in; 0: none */
    char want[24];
} pctl_pg_stmt;

/* A statement's set form: the same change for many rows, each parameter
 * $n bound to an array of the one-row statement's $n values
 * (sql/postgres.sql: the text after "-- many: TABLE KEYS").  Rows an
 * engine's pass changes are gathered into the arrays and sent as one
 * statement (pctl_pg_flush).  Sent apart, they could run in another
 * order: so no two gathered rows share a key (the table and the first
 * KEYS values: one row of that table), and any other statement sends the
 * gathered ones before itself. */
typedef struct pctl_pg_many {
    pctl_pg_stmt st; /* the set form, prepared; its vals point at arr */
    char table[32];
    int nkeys;
    pctl_buf *arr;  /* one array literal per parameter, being written */
    int rows;       /* rows gathered */
    int64_t expect; /* the rows they must write in all, or -1: any */
} pctl_pg_many;

/* Maps a failed result (or a lost connection when res is NULL) to a
 * PLANCTL_E* code and sets the message for what (a statement's name, or
 * NULL).  Returns the code. */
int pctl_pg_err(pctl_pg_conn *pc, const PGresult *res, const char *what);

/* What pctl_pg_send's expect may be besides a count of rows (>= 0) or
 * -1 (any): the statement waited for, whose answer is kept in its res;
 * the COMMIT, whose answer must be COMMIT (not ROLLBACK); a statement of
 * a BEGIN sent ahead (any answer); the change token read at that BEGIN,
 * whose value is the counter before the transaction (pc->before).  Only
 * in the list of what was sent: a count the server checks (chk_sql), and
 * the preparation of such a statement, sent ahead of it. */
enum {
    PCTL_PG_WAITED = -2,
    PCTL_PG_COMMIT = -3,
    PCTL_PG_BEGIN = -4,
    PCTL_PG_BEFORE = -5,
    PCTL_PG_CHECKED = -6,
    PCTL_PG_PREPARED = -7
};

/* Sends statement s (bound), or the text sql when s is NULL, in pipeline
 * mode (entered if it is not), without waiting for its answer, which
 * pctl_pg_drain reads and checks against expect.  0 or the error. */
int pctl_pg_send(pctl_pg_conn *pc, pctl_pg_stmt *s, const char *sql,
                 int64_t expect);
/* Reads the answers of the statements sent (nsent), in order, and leaves
 * pipeline mode: the first failure, or count of rows other than
 * expected, is returned (message set), the transaction then failed.
 * 0 when nothing was sent. */
int pctl_pg_drain(pctl_pg_conn *pc);

/* Adds the row bound to s (which has a set form, prepared in this
 * session) to what its set form sends, first sending what was gathered
 * when the row's key is among it or the expectations differ (expect: as
 * pctl_pg_send's, >= 0 or -1).  0 or the error. */
int pctl_pg_gather(pctl_pg_conn *pc, pctl_pg_stmt *s, int64_t expect);
/* Sends each set form with rows gathered, in the order of their first
 * rows, without waiting (pctl_pg_send).  0 or the error. */
int pctl_pg_flush(pctl_pg_conn *pc);

/* Makes sure the session is alive, reconnecting once if it was lost (only
 * between transactions).  0 or PLANCTL_EIO with the message set. */
int pctl_pg_alive(pctl_pg_conn *pc);

/* The connection's entries of the backend's table (conn.c), which
 * backend.c assembles with the statements' (stmt.c).  pctl_pg_open is the
 * table's open with the table itself given, for the connection to carry. */
int pctl_pg_open(pctl_conn **out, planctl *p, const planctl_open_options *o,
                 const pctl_db_methods *m);
void pctl_pg_close(pctl_conn *c);
/* Cancels the statement running on c (planctl_interrupt(), any thread,
 * under the handle's intr_lock). */
void pctl_pg_interrupt(pctl_conn *c);
int pctl_pg_begin(pctl_conn *c, pctl_tx_kind k);
int pctl_pg_commit(pctl_conn *c);
void pctl_pg_rollback(pctl_conn *c);
int pctl_pg_token(pctl_db_token *out, pctl_conn *c, unsigned which);
void pctl_pg_quiet(pctl_conn *c, int on);
void pctl_pg_counted(pctl_conn *c);
void pctl_pg_wake(pctl_conn *c);
int pctl_pg_engine_session(pctl_conn *c, int64_t idle_ms, int64_t lock_ms);

/* stmt.c: the statement methods of pctl_db_postgres. */
int pctl_pg_prepare(pctl_stmt **out, pctl_conn *c, pctl_query q,
                    const char *sql, size_t len);
void pctl_pg_finalize(pctl_stmt *s);
void pctl_pg_reset(pctl_stmt *s, int unbind);
void pctl_pg_bind_i64(pctl_stmt *s, int i, int64_t v);
void pctl_pg_bind_text(pctl_stmt *s, int i, const char *v);
int pctl_pg_step(pctl_stmt *s);
int pctl_pg_step_later(pctl_stmt *s, int64_t expect);
int pctl_pg_send_read(pctl_stmt *s);
pctl_col_kind pctl_pg_col_type(pctl_stmt *s, int col);
int64_t pctl_pg_col_i64(pctl_stmt *s, int col);
double pctl_pg_col_real(pctl_stmt *s, int col);
const char *pctl_pg_col_text(pctl_stmt *s, int col);
size_t pctl_pg_col_bytes(pctl_stmt *s, int col);
int pctl_pg_ncols(pctl_stmt *s);
const char *pctl_pg_col_name(pctl_stmt *s, int col);
int64_t pctl_pg_changes(pctl_stmt *s);

#endif
