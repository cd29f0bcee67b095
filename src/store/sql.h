/*
 * sql.h - the store's seam to its database: named statements, one table
 * of functions per backend.
 *
 * Everything in src/store above this header speaks to the database only
 * through it; only a backend's own folder (src/store/sqlite/) names its
 * driver.  The table is chosen per handle when it is opened, so one
 * process can hold handles on different backends at once (export from
 * one, import into another).
 *
 * The table is narrow on purpose: connections, statements, transactions
 * and a change token.  Conveniences (the statement cache, "step expecting
 * no row", binding an id) live once above it, in sql.c and below, and the
 * rules of planctl (the gate, admission, replay) above those.
 *
 * Statements are named (queries.h, PCTL_QUERIES).  Each backend brings its
 * own text for every name (src/store/sql/<backend>.sql), with the same
 * parameter numbers and the same result columns in the same order; nothing
 * is rewritten at run time.
 *
 * Errors: a backend maps its own codes to PLANCTL_E* and sets the handle's
 * message itself, naming the statement (pctl_db_err), so code above never
 * sees a driver's code and writes no message of its own for a failed step.
 * Binding cannot fail where it is done: a backend keeps a failed bind and
 * its step returns it.
 */
#ifndef PCTL_STORE_SQL_H
#define PCTL_STORE_SQL_H

#include <stddef.h>
#include <stdint.h>

#include "planctl.h"
#include "store/queries.h"

/* What pctl_step returns besides a PLANCTL_E* code. */
enum { PCTL_DONE = 0, PCTL_ROW = 1 };

/* A transaction's kind.  PCTL_TX_ROWS is a write that takes only the locks
 * of the rows it changes, for rows that only their owner writes (an
 * engine's heartbeat): on PostgreSQL it does not take the schema's write
 * lock and moves no change token, so no other writer, stuck or slow,
 * holds it back; it may not append events.  PCTL_TX_ENGINE is the write
 * of one of several engines, of the runs it holds (and claims): on
 * PostgreSQL it takes the write lock shared, so that engines write beside
 * each other and every other writer (which takes it alone) waits for
 * them, and they for it; its commits are counted in the engine's own
 * counter of the change token.  PCTL_TX_ADMIT is the admission of a new
 * instance (create): it touches no row that exists but its definition's,
 * so on PostgreSQL it too takes the lock shared, beside the engines'
 * passes and other admissions, and counts its commit in one of a few
 * counters of admissions (meta 'commits.-N'), so that admissions commit
 * beside each other and share the server's disk syncs.  PCTL_TX_RUN is
 * an operator's change to one run (cancel, pause, resume: the run, its
 * phases and steps, under the run's row lock, pctl_run_lock) or the
 * admission of a run of an existing instance (trigger, retry, set,
 * upgrade: under the instance's row lock, pctl_instance_find_locked),
 * each lock taken first; beside the engines as an admission is, counted
 * as admissions are.  SQLite has one writer at a time whatever the
 * kind: there all are PCTL_TX_WRITE. */
typedef enum pctl_tx_kind {
    PCTL_TX_READ,
    PCTL_TX_WRITE,
    PCTL_TX_ROWS,
    PCTL_TX_ENGINE,
    PCTL_TX_ADMIT,
    PCTL_TX_RUN
} pctl_tx_kind;

/* A column's type in the current row (pctl_col_type). */
typedef enum pctl_col_kind {
    PCTL_COL_NULL,
    PCTL_COL_INT,
    PCTL_COL_REAL,
    PCTL_COL_TEXT
} pctl_col_kind;

/* What moves when the database changes: by another connection's commit
 * (others), and by this connection's own writes (own).  session moves
 * when the connection was made again (PostgreSQL, after the server
 * restarted or ended the session): a server that crashed may have lost
 * commits it had acknowledged (synchronous_commit = off), so nothing
 * read or written before can be trusted, not even one's own; read with
 * others.  heard, read with others too, moves with the commits of others
 * that ask for attention: on SQLite every one (it is others); on
 * PostgreSQL those that notify, which are every writer's but an engine's
 * ordinary pass (postgres/conn.c, "The change token"), and a new
 * session. */
typedef struct pctl_db_token {
    int64_t others, own;
    uint64_t session;
    int64_t heard;
} pctl_db_token;

/* Which halves of the token to read (the other is left as it was): own
 * alone is cheap, others may ask the database. */
#define PCTL_TOKEN_OTHERS 0x1
#define PCTL_TOKEN_OWN 0x2

struct pctl_db_methods;

/* The first member of a backend's connection. */
typedef struct pctl_conn {
    const struct pctl_db_methods *m;
    planctl *p; /* messages go to pctl_err(p, ...) */
    /* The transaction's last failure was a deadlock the server broke
     * (PostgreSQL's 40P01, reported as EBUSY): run again, it may well
     * succeed.  Cleared at each begin. */
    int deadlocked;
} pctl_conn;

/* The first member of a backend's statement.  m is c->m, kept here so
 * that a call through it is one load. */
typedef struct pctl_stmt {
    const struct pctl_db_methods *m;
    pctl_conn *c;
    pctl_query q; /* its name, for messages */
} pctl_stmt;

/*
 * A backend.  Every entry must be provided unless its comment says it may
 * be NULL.  Failures are PLANCTL_E* with the handle's message set.
 */
typedef struct pctl_db_methods {
    const char *name;    /* "sqlite" */
    const char *queries; /* its statements' text: "-- name: NAME" sections */
    /* What `verify` says of the database's own checks once they passed
     * (the end of its summary): what was checked, and what was not. */
    const char *verify_says;
    /* Once per process, before any handle opens (planctl_process_init).
     * May be NULL. */
    int (*process_init)(void);
    /* Whether a database name is this backend's (backends.c asks each in
     * turn; the last backend of the list is not asked).  May be NULL
     * there. */
    int (*accepts)(const char *name);
    /* The name as messages may show it, malloc'd (NULL: out of memory);
     * NULL for a name shown as given. */
    char *(*shown)(const char *name);

    /* Opens target for p (recognising, creating and migrating the
     * database as o says); *out is NULL on failure.  p->path, p->readonly
     * are set before. */
    int (*open)(pctl_conn **out, planctl *p, const planctl_open_options *o);
    /* Closes; the handle has finalized its statements first. */
    void (*close)(pctl_conn *c);

    int (*prepare)(pctl_stmt **out, pctl_conn *c, pctl_query q, const char *sql,
                   size_t len);
    void (*finalize)(pctl_stmt *s);
    /* Makes s ready to run again; unbind also clears its parameters.
     * Can't fail. */
    void (*reset)(pctl_stmt *s, int unbind);
    /* Parameters count from 1; a number the statement does not use is
     * ignored (one caller binds ?1 and ?2 for statements of either).
     * Text is not copied: it must stay valid until the statement is
     * reset (NULL binds NULL). */
    void (*bind_i64)(pctl_stmt *s, int i, int64_t v);
    void (*bind_text)(pctl_stmt *s, int i, const char *v);
    /* PCTL_ROW, PCTL_DONE, or PLANCTL_E* (message set, naming s->q). */
    int (*step)(pctl_stmt *s);
    /* Sends s, a write inside a transaction whose answer its caller does
     * not wait for: the answer is read with the next statement that is
     * waited for, or the commit, and fails that one when s failed or
     * wrote other than expect rows (-1: any number).  0 once sent.  May
     * be NULL: a backend that waits for each statement (SQLite, in the
     * process, has nothing to wait for). */
    int (*step_later)(pctl_stmt *s, int64_t expect);
    /* 1: step_later gathers the rows of a statement that has a set form
     * and sends them as one statement (the PostgreSQL backend's
     * "-- many:" forms): rows written one by one cost no more there. */
    int gathers;
    /* Sends s, a read inside a transaction, ahead of its first step,
     * which reads its answer with those of every statement sent before
     * it: several reads, one round trip.  0, or the error.  May be NULL:
     * each read runs at its first step. */
    int (*send)(pctl_stmt *s);
    /* The current row's columns, counted from 0.  Text stays valid until
     * the next step or reset; NULL for a NULL. */
    pctl_col_kind (*col_type)(pctl_stmt *s, int col);
    int64_t (*col_i64)(pctl_stmt *s, int col);
    double (*col_real)(pctl_stmt *s, int col);
    const char *(*col_text)(pctl_stmt *s, int col);
    size_t (*col_bytes)(pctl_stmt *s, int col); /* of col_text's value */
    int (*ncols)(pctl_stmt *s);
    const char *(*col_name)(pctl_stmt *s, int col);
    /* Rows written by the statement's last step. */
    int64_t (*changes)(pctl_stmt *s);

    /* One level only: nesting is counted above (tx.c).  A write begins
     * holding the database's write lock.  A failed commit has rolled
     * back.  Rollback can't fail. */
    int (*begin)(pctl_conn *c, pctl_tx_kind k);
    int (*commit)(pctl_conn *c);
    void (*rollback)(pctl_conn *c);
    int (*token)(pctl_db_token *out, pctl_conn *c, unsigned which);

    /* The lock of a backend's one engine (lease.c), on this host only:
     * held until engine_unlock, or until the process ends, however it
     * ends.  0 taken (or already held), 1 held by someone else, or
     * PLANCTL_E*.  NULL where engines share the database (fleet). */
    int (*engine_lock)(pctl_conn *c);
    void (*engine_unlock)(pctl_conn *c);

    /* Engines that share the database (fleet.c): 1 when several engines
     * may run on it at once, each holding the runs it claimed; 0 when
     * one engine runs per database, under the lease (lease.c). */
    int fleet;
    /* 1: admission inserts a new run's phases and steps in one statement
     * (run_rows_insert, with the plan bound as JSON), not one a row. */
    int rows_at_once;
    /* Where not NULL, a create writes its instance, run, rows, events
     * and the commit's change counter in one statement (instance_create),
     * after its definition's read took the write lock (def_latest_admit),
     * and then calls counted: the commit moves no counter of its own. */
    void (*counted)(pctl_conn *c);
    /* An engine's connection commits without waking anyone, except a
     * transaction that asked with wake (it released runs, or an engine
     * was declared dead): engines do not wake each other at every pass.
     * Both may be NULL (nothing to wake). */
    void (*quiet)(pctl_conn *c, int on);
    void (*wake)(pctl_conn *c);
    /* An engine among several: the server ends its session when it sits
     * idle inside a transaction for idle_ms (an engine stopped there
     * would hold every writer back), and a wait for a lock gives up after
     * lock_ms when that is shorter than the busy timeout, now and in every
     * new session.  Both 0: the handle's own settings again.  0 or
     * PLANCTL_E*.  May be NULL. */
    int (*engine_session)(pctl_conn *c, int64_t idle_ms, int64_t lock_ms);

    /* Stops the statement or the wait for a lock in progress on c, from
     * another thread (planctl_interrupt(), under p->intr_lock, with
     * p->intr set): the step or begin then fails, and its error is
     * PLANCTL_EINTR.  Does nothing when nothing runs.  May be NULL. */
    void (*interrupt)(pctl_conn *c);

    /* The files behind the database (an engine notices them replaced or
     * removed: ident.c).  May be NULL: nothing to watch. */
    void (*ident_note)(pctl_conn *c);
    int (*ident_check)(pctl_conn *c);
} pctl_db_methods;

/* The backend that serves a database's name (backends.c).  Can't fail:
 * a name no other backend accepts is a SQLite file. */
const pctl_db_methods *pctl_backend_for(const char *name);

extern const pctl_db_methods pctl_db_sqlite;
#ifdef PLANCTL_WITH_POSTGRES
extern const pctl_db_methods pctl_db_postgres;
#endif

/* ---- above the table (sql.c) ---- */

/* The cached statement for a named query, reset and with its parameters
 * cleared, or NULL (message set) if it cannot be prepared. */
pctl_stmt *pctl_q(planctl *p, pctl_query q);

/* The same, its parameters left as the last use bound them: only for a
 * caller that binds every one of them at every use.  Clearing costs a
 * write per parameter, more than binding for the events' 16-row INSERT
 * (192 parameters, journal.c).  A freshly prepared statement has them
 * NULL. */
pctl_stmt *pctl_q_rebind(planctl *p, pctl_query q);

/* The code of the failure that made pctl_q() or pctl_q_rebind() return
 * NULL: what its message says (PLANCTL_EINTR for a prepare that
 * planctl_interrupt() stopped, PLANCTL_EIO for a lost session), never a
 * plain PLANCTL_ERROR in their place. */
int pctl_q_err(const planctl *p);

/* EINVAL: the handle's planctl_open() failed, so it has no database. */
int pctl_db_unopened(planctl *p);

/* The name of q, as in queries.h. */
const char *pctl_query_name(pctl_query q);

/* The text of q in a dialect's statements (m->queries), or NULL. */
const char *pctl_query_text(const char *queries, pctl_query q, size_t *len);

/* Steps s expecting no row (a row is ignored), then resets it: 0 or the
 * error. */
int pctl_q_exec(pctl_stmt *s);

/* Steps s, a write of an engine's pass whose rows nobody reads back at
 * once, then resets it.  Inside a pass (p->tx_later) on a backend with
 * step_later, s is sent and not waited for: writing other than expect
 * rows (-1: any number), like failing, fails the next statement waited
 * for or the commit, and the pass rolls back whole.  Elsewhere it runs
 * at once, and a count other than expect fails it here (PLANCTL_ESTALE,
 * naming s).  0 or the error. */
int pctl_q_exec_later(pctl_stmt *s, int64_t expect);
/* Sends s (bound), a read, ahead of its first pctl_step where the
 * backend can (m->send): reads sent one after another are answered in
 * one round trip, at the first one's step.  Step it before taking it
 * again with pctl_q.  0 or the error. */
int pctl_q_send(pctl_stmt *s);
/* Whether pctl_q_send sends now (inside a transaction, on a backend that
 * can): a read so sent may be stepped after the commit, its answer read
 * with the commit's (and not at all when the transaction failed). */
int pctl_q_sends_ahead(const planctl *p);
/* Statement q as it is, to step a read sent ahead once its transaction
 * ended (pctl_q would take it again, its answer lost), or NULL when it
 * was never prepared. */
pctl_stmt *pctl_q_sent(planctl *p, pctl_query q);
/* Whether pctl_q_exec_later sends without waiting now. */
int pctl_q_later_on(const planctl *p);

/* What a step of s that did not give what its caller expected returns:
 * rc itself when it failed (message set), else PLANCTL_ERROR saying
 * that s gave a row too many or none. */
int pctl_q_fail(pctl_stmt *s, int rc);

/* The database's own words in the message of s's failure: the handle's
 * message without the statement's name in front. */
const char *pctl_db_detail(pctl_stmt *s);

/* Finalizes every cached statement of p.  Can't fail. */
void pctl_q_finalize_all(planctl *p);

/* Sets the message of a database failure rc of what (a statement's name,
 * or NULL) in the backend's words (detail), the same way for every
 * backend: a busy database and a read-only one are named with their
 * remedy.  Returns rc. */
int pctl_db_err(planctl *p, int rc, const char *what, const char *detail);

static inline void pctl_reset(pctl_stmt *s)
{
    s->m->reset(s, 0);
}

static inline void pctl_bind_i64(pctl_stmt *s, int i, int64_t v)
{
    s->m->bind_i64(s, i, v);
}

/* NULL binds NULL. */
static inline void pctl_bind_text(pctl_stmt *s, int i, const char *v)
{
    s->m->bind_text(s, i, v);
}

/* An id <= 0 binds NULL. */
static inline void pctl_bind_id(pctl_stmt *s, int i, int64_t id)
{
    if (id <= 0)
        s->m->bind_text(s, i, NULL);
    else
        s->m->bind_i64(s, i, id);
}

static inline int pctl_step(pctl_stmt *s)
{
    return s->m->step(s);
}

static inline int64_t pctl_col_i64(pctl_stmt *s, int col)
{
    return s->m->col_i64(s, col);
}

static inline int pctl_col_int(pctl_stmt *s, int col)
{
    return (int)s->m->col_i64(s, col);
}

static inline const char *pctl_col_text(pctl_stmt *s, int col)
{
    return s->m->col_text(s, col);
}

static inline int pctl_col_null(pctl_stmt *s, int col)
{
    return s->m->col_type(s, col) == PCTL_COL_NULL;
}

static inline pctl_col_kind pctl_col_type(pctl_stmt *s, int col)
{
    return s->m->col_type(s, col);
}

static inline double pctl_col_real(pctl_stmt *s, int col)
{
    return s->m->col_real(s, col);
}

static inline size_t pctl_col_bytes(pctl_stmt *s, int col)
{
    return s->m->col_bytes(s, col);
}

static inline int pctl_ncols(pctl_stmt *s)
{
    return s->m->ncols(s);
}

static inline const char *pctl_col_name(pctl_stmt *s, int col)
{
    return s->m->col_name(s, col);
}

static inline int64_t pctl_changes(pctl_stmt *s)
{
    return s->m->changes(s);
}

#endif
