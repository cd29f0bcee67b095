/*
 * conn.c - pctl_db_postgres: a planctl database in a schema of a
 * PostgreSQL database, through libpq.
 *
 * Opening: connect (libpq's URI, environment and ~/.pgpass), then look at
 * the schema without writing: absent or empty is new; tables without
 * planctl's `meta`, or a meta that is not planctl's, are refused; a newer
 * schema_version is refused.  Only then is the schema created and
 * migrated, each migration in one transaction under the schema's write
 * lock, the version read again inside it, so two processes opening a new
 * schema at once create it once.
 *
 * Transactions.  A write takes the schema's write lock (a transaction
 * advisory lock, 'PLCW') at its BEGIN, as SQLite's BEGIN IMMEDIATE takes
 * the file's: planctl's writers commit one after another, so every rule
 * written for one writer at a time holds, and the events' numbers are
 * commit order (the events' statement trigger makes other writers of
 * events take the lock too).  The engines' writes (PCTL_TX_ENGINE) take
 * it shared: each writes the runs its engine holds, beside the others,
 * and never beside any other writer.  Statements run at READ COMMITTED
 * after the lock, so each sees every commit before it.  A read is REPEATABLE
 * READ READ ONLY: one snapshot for all its statements.  A write of rows only
 * their owner writes (PCTL_TX_ROWS: an engine's heartbeat) takes no
 * write lock and moves no change token, so that a writer stuck inside
 * its transaction cannot make every engine miss its heartbeat.  The
 * admission of a new instance (PCTL_TX_ADMIT: create) takes the lock
 * shared too: it writes only rows it inserts, which no engine holds
 * before it commits, so admissions commit beside the passes and beside
 * each other, sharing disk syncs.  Its BEGIN takes no lock: the read of
 * its definition, the first statement, does (def_latest_admit), and its
 * one write (instance_create) moves its counter and notifies, which it
 * says with pctl_pg_counted: four statements a create.  So do an operator's
 * change to one run (PCTL_TX_RUN: cancel, pause, resume, under that run's row
 * lock) and the admission of a run of an existing instance (trigger, retry,
 * set, upgrade, under the instance's row lock).
 *
 * The change token.  meta.commits, plus a counter per engine (meta
 * 'commits.ID') and a few for admissions ('commits.-N'), counts the write
 * transactions that changed rows: a writer reads it at BEGIN, and before
 * its COMMIT moves it by one (commit_sql) and sends it as a NOTIFY on the
 * schema's channel.  Inside a write that holds the lock alone, the value
 * read at BEGIN is exact;
 * outside, the notifications received (read without a round trip) move
 * it, as SQLite's PRAGMA data_version moves.  Others' commits are the
 * counter minus this connection's own.
 *
 * A lost session (the server restarted, the backend was terminated) is
 * made again at the next transaction, never inside one: its statements
 * are prepared again, LISTEN and an engine's session settings sent again
 * (its row in engines says whether it is still one: store/fleet.c).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/dbname.h"
#include "store/embed.h"
#include "store/postgres/pg.h"

#define PC(c) ((pctl_pg_conn *)(c))

/* ---- errors ---- */

static int map_state(const char *st)
{
    if (!st || strlen(st) != 5)
        return PLANCTL_EIO;
    if (strncmp(st, "PC", 2) == 0)
        return PLANCTL_ETRANSITION; /* the guards
                                       (migrations/postgres/0001_init.sql) */
    if (strncmp(st, "23", 2) == 0)
        return PLANCTL_ECONFLICT; /* integrity: unique, foreign key, check */
    if (strcmp(st, "40001") == 0 || strcmp(st, "40P01") == 0 ||
        strcmp(st, "55P03") == 0 || strcmp(st, "57014") == 0)
        return PLANCTL_EBUSY; /* serialization, deadlock, lock timeout */
    if (strcmp(st, "25006") == 0 || strcmp(st, "42501") == 0)
        return PLANCTL_EREADONLY;
    if (strcmp(st, "53200") == 0)
        return PLANCTL_ENOMEM;
    if (strncmp(st, "08", 2) == 0 || strncmp(st, "53", 2) == 0 ||
        strncmp(st, "57P", 3) == 0 || strncmp(st, "58", 2) == 0 ||
        strncmp(st, "XX", 2) == 0)
        return PLANCTL_EIO;
    return PLANCTL_ERROR;
}

/* Makes the session's cancel request anew (a new session has a new key):
 * under the handle's intr_lock, as planctl_interrupt() uses it from other
 * threads.  A request that cannot be made leaves none: interrupting then
 * stops waits (lock_timeout) no sooner. */
static void cancel_renew(pctl_pg_conn *pc)
{
    planctl *p = pc->base.p;

    pthread_mutex_lock(&p->intr_lock);
    if (pc->cancel)
        PQfreeCancel(pc->cancel);
    pc->cancel = pc->pg ? PQgetCancel(pc->pg) : NULL;
    pthread_mutex_unlock(&p->intr_lock);
}

void pctl_pg_interrupt(pctl_conn *c)
{
    pctl_pg_conn *pc = PC(c);
    char buf[256];

    /* Asks the server to cancel what the session runs (a new connection
     * of its own); what ran fails with 57014, reported as PLANCTL_EINTR
     * (pctl_db_err) since p->intr is set. */
    if (pc->cancel)
        (void)PQcancel(pc->cancel, buf, sizeof buf);
}

/* The first line of libpq's message for the connection. */
static const char *conn_words(pctl_pg_conn *pc, char *buf, size_t size)
{
    const char *m = pc->pg ? PQerrorMessage(pc->pg) : "";
    size_t n = strcspn(m, "\n");

    if (n == 0)
        m = "no answer from the server", n = strlen(m);
    snprintf(buf, size, "%.*s", (int)n, m);
    return buf;
}

int pctl_pg_err(pctl_pg_conn *pc, const PGresult *res, const char *what)
{
    planctl *p = pc->base.p;
    const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *msg =
        res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    char buf[512];
    int rc;

    if (!st || !pc->pg || PQstatus(pc->pg) != CONNECTION_OK) {
        if (pc->pg && PQstatus(pc->pg) != CONNECTION_OK)
            return pctl_err(p, PLANCTL_EIO,
                            "lost the connection to PostgreSQL at %s (%s); "
                            "planctl connects again at the next transaction",
                            p->path, conn_words(pc, buf, sizeof buf));
        return pctl_err(p, PLANCTL_EIO, "%s%s%s", what ? what : "",
                        what ? ": " : "",
                        msg ? msg : conn_words(pc, buf, sizeof buf));
    }
    rc = map_state(st);
    if (strcmp(st, "40P01") == 0)
        pc->base.deadlocked = 1;
    if (!msg)
        msg = conn_words(pc, buf, sizeof buf);
    if (pctl_intr_pending(p)) /* canceled (57014), or whatever it ended */
        return pctl_db_err(p, PLANCTL_EINTR, what, msg);
    if (rc == PLANCTL_EREADONLY)
        return pctl_err(p, rc,
                        "cannot write database %s (%s%s%s); the role needs "
                        "write access to schema %s, and the server must not "
                        "be a read-only standby",
                        p->path, what ? what : "", what ? ": " : "", msg,
                        pc->uri.schema);
    if (strcmp(st, "55P03") == 0)
        return pctl_err(p, rc,
                        "database %s is locked by another planctl writer "
                        "for longer than the busy timeout; try again",
                        p->path);
    return pctl_db_err(p, rc, what, msg);
}

/* Runs SQL text (one or several statements) expecting no rows, or rows
 * from the last one into *out (when out is not NULL). */
static int run(pctl_pg_conn *pc, const char *sql, const char *what,
               PGresult **out)
{
    PGresult *r;
    ExecStatusType st;
    int rc = 0;

    /* After what the transaction sent or gathered. */
    if ((pc->nsent || pc->ngathered) && (rc = pctl_pg_drain(pc)) < 0)
        return rc;
    pc->round_trips++;
    r = PQexec(pc->pg, sql);
    st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        rc = pctl_pg_err(pc, r, what);
    if (rc == 0 && out)
        *out = r;
    else
        PQclear(r);
    return rc;
}

/* One value of the last statement of sql, as an integer (0 for none). */
static int run_int(pctl_pg_conn *pc, const char *sql, const char *what,
                   int64_t *v)
{
    PGresult *r = NULL;
    int rc = run(pc, sql, what, &r);

    if (rc == 0)
        *v = PQntuples(r) > 0 && !PQgetisnull(r, 0, 0)
                 ? strtoll(PQgetvalue(r, 0, 0), NULL, 10)
                 : 0;
    PQclear(r);
    return rc;
}

/* ---- statements sent without waiting ---- */

static void counter_read(pctl_pg_conn *pc, int64_t raw);

/* Statement name wrote n rows where it had to write want: under the
 * locks its transaction holds, only a writer outside planctl changes a
 * row so.  Not ESTALE: to an engine that says its fence is gone. */
static int rows_missed(pctl_pg_conn *pc, const char *name, long long n,
                       long long want)
{
    return pctl_err(pc->base.p, PLANCTL_ECONFLICT,
                    "%s wrote %lld rows, not %lld: a row it changes was "
                    "changed by a writer outside planctl; the transaction "
                    "is rolled back",
                    name, n, want);
}

/* The failure of a statement whose count of rows the server checked
 * (chk_sql): it wrote other than it had to, in the words of the
 * client's own check; 0 for any other failure. */
static int count_missed(pctl_pg_conn *pc, const PGresult *r, const char *name)
{
    const char *code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    const char *at = msg ? strstr(msg, "planctl: wrote ") : NULL;
    long long n, want;

    if (!code || strcmp(code, "22P02") != 0 || !at ||
        sscanf(at, "planctl: wrote %lld rows, not %lld", &n, &want) != 2)
        return 0;
    return rows_missed(pc, name, n, want);
}

/* What one answer in the pipeline says of its statement e: 0, or the
 * failure (message set, unless an earlier statement failed: the first
 * failure's message is the one that stays).  A statement waited for
 * keeps its answer. */
static int answer(pctl_pg_conn *pc, struct pctl_pg_sent *e, PGresult *r,
                  int after_failure)
{
    ExecStatusType st = PQresultStatus(r);
    const char *name = e->s ? pctl_query_name(e->s->base.q)
                       : e->expect <= PCTL_PG_BEGIN ? "begin"
                                                    : "commit";
    int64_t n;

    if (e->expect == PCTL_PG_WAITED) {
        PQclear(e->s->res);
        e->s->res = r;
        e->s->fresh = 1;
        return 0;
    }
    /* Not prepared (failed, or not run after a failure): prepared again
     * when next sent. */
    if (e->expect == PCTL_PG_PREPARED && st != PGRES_COMMAND_OK)
        e->s->chk_gen = 0;
    if (after_failure) {
        PQclear(r);
        return PLANCTL_ERROR;
    }
    if (st == PGRES_PIPELINE_ABORTED) {
        PQclear(r);
        return pctl_err(pc->base.p, PLANCTL_ERROR,
                        "%s: not run, an earlier statement of the "
                        "transaction had failed",
                        name);
    }
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        int rc = e->expect == PCTL_PG_CHECKED ? count_missed(pc, r, name) : 0;

        if (rc == 0)
            rc = pctl_pg_err(pc, r, name);

        PQclear(r);
        return rc;
    }
    /* A transaction that had failed answers COMMIT with ROLLBACK. */
    if (e->expect == PCTL_PG_COMMIT && strcmp(PQcmdStatus(r), "COMMIT") != 0) {
        PQclear(r);
        return pctl_err(pc->base.p, PLANCTL_ERROR,
                        "commit: the transaction had failed and was rolled "
                        "back");
    }
    if (e->expect == PCTL_PG_BEFORE) {
        pc->before = PQntuples(r) > 0 && !PQgetisnull(r, 0, 0)
                         ? strtoll(PQgetvalue(r, 0, 0), NULL, 10)
                         : 0;
        counter_read(pc, pc->before);
    }
    n = atoll(PQcmdTuples(r));
    PQclear(r);
    if (e->expect >= 0 && n != e->expect)
        return rows_missed(pc, name, n, e->expect);
    return 0;
}

/* Notes what was sent last, its answer to come (room made before). */
static void sent_add(pctl_pg_conn *pc, pctl_pg_stmt *s, int64_t expect)
{
    pc->sent[pc->nsent].s = s;
    pc->sent[pc->nsent].expect = expect;
    pc->nsent++;
}

int pctl_pg_send(pctl_pg_conn *pc, pctl_pg_stmt *s, const char *sql,
                 int64_t expect)
{
    const char *what = s ? pctl_query_name(s->base.q) : "commit";
    int ok, rc;

    /* Rows gathered before it are written before it. */
    if (pc->ngathered && !pc->flushing && (rc = pctl_pg_flush(pc)) < 0)
        return rc;

    if (pctl_grow((void **)&pc->sent, pc->nsent, &pc->sent_cap,
                  sizeof *pc->sent) < 0)
        return pctl_err(pc->base.p, PLANCTL_ENOMEM, "out of memory");
    if (PQpipelineStatus(pc->pg) == PQ_PIPELINE_OFF &&
        !PQenterPipelineMode(pc->pg))
        return pctl_pg_err(pc, NULL, what);
    /* A count of rows the server can check: the form that does, prepared
     * ahead of it in the same pipeline the first time in the session. */
    if (s && expect >= 0 && s->chk_sql) {
        char name[sizeof s->name + 2];

        snprintf(name, sizeof name, "%s_c", s->name);
        if (s->chk_gen != pc->gen + 1) {
            if (!PQsendPrepare(pc->pg, name, s->chk_sql, 0, NULL))
                return pctl_pg_err(pc, NULL, what);
            s->chk_gen = pc->gen + 1;
            sent_add(pc, s, PCTL_PG_PREPARED);
            if (pctl_grow((void **)&pc->sent, pc->nsent, &pc->sent_cap,
                          sizeof *pc->sent) < 0)
                return pctl_err(pc->base.p, PLANCTL_ENOMEM, "out of memory");
        }
        snprintf(s->want, sizeof s->want, "%lld", (long long)expect);
        s->vals[s->nparams] = s->want;
        if (!PQsendQueryPrepared(pc->pg, name, s->nparams + 1, s->vals, NULL,
                                 NULL, 0))
            return pctl_pg_err(pc, NULL, what);
        sent_add(pc, s, PCTL_PG_CHECKED);
        return 0;
    }
    ok = s ? PQsendQueryPrepared(pc->pg, s->name, s->nparams, s->vals, NULL,
                                 NULL, 0)
           : PQsendQueryParams(pc->pg, sql, 0, NULL, NULL, NULL, NULL, 0);
    if (!ok)
        return pctl_pg_err(pc, NULL, what);
    sent_add(pc, s, expect);
    return 0;
}

int pctl_pg_drain(pctl_pg_conn *pc)
{
    size_t i = 0, n;
    int rc = 0, one;
    PGresult *r;

    if (pc->ngathered && (rc = pctl_pg_flush(pc)) < 0)
        return rc;
    n = pc->nsent;
    if (PQpipelineStatus(pc->pg) == PQ_PIPELINE_OFF)
        return 0;
    pc->nsent = 0;
    for (i = 0; i < n; i++)
        if (pc->sent[i].s)
            pc->sent[i].s->pending = 0;
    i = 0;
    pc->round_trips++;
    if (!PQpipelineSync(pc->pg))
        rc = pctl_pg_err(pc, NULL, "pipeline");
    /* Each statement's answer, then NULL; after them all the sync point.
     * A NULL more than there were statements is a session lost. */
    for (;;) {
        if (!(r = PQgetResult(pc->pg))) {
            if (++i > n) {
                if (rc == 0)
                    rc = pctl_pg_err(pc, NULL, "pipeline");
                break;
            }
            continue;
        }
        if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            break;
        }
        if (i >= n) {
            PQclear(r);
            continue;
        }
        one = answer(pc, &pc->sent[i], r, rc < 0);
        if (rc == 0)
            rc = one;
    }
    if (!PQexitPipelineMode(pc->pg) && rc == 0)
        rc = pctl_pg_err(pc, NULL, "pipeline");
    if (rc < 0 && pc->in_tx)
        pc->failed = rc;
    return rc;
}

/* ---- rows gathered for set forms ---- */

/* Appends one element to the array literal a: NULL, or v quoted (a
 * backslash before each quote and backslash). */
static int arr_elem(pctl_buf *a, const char *v)
{
    const char *s;

    if (pctl_buf_addc(a, a->len ? ',' : '{') < 0)
        return -1;
    if (!v)
        return pctl_buf_add(a, "NULL", 4);
    if (pctl_buf_addc(a, '"') < 0)
        return -1;
    for (s = v; *s; s++)
        if (*s == '"' || *s == '\\') {
            if (pctl_buf_add(a, v, (size_t)(s - v)) < 0 ||
                pctl_buf_addc(a, '\\') < 0)
                return -1;
            v = s;
        }
    return pctl_buf_add(a, v, (size_t)(s - v)) < 0 ? -1 : pctl_buf_addc(a, '"');
}

/* Forgets the rows gathered (the transaction ended, or they were sent). */
static void gathered_clear(pctl_pg_conn *pc)
{
    size_t i;
    int k;

    for (i = 0; i < pc->ngathered; i++) {
        pctl_pg_many *m = pc->gathered[i];

        for (k = 0; k < m->st.nparams; k++)
            if (m->arr[k].s)
                m->arr[k].s[m->arr[k].len = 0] = '\0';
        m->rows = 0;
        m->expect = 0;
    }
    pc->ngathered = 0;
    for (i = 0; i < pc->nkeys; i++)
        pctl_free(pc->keys[i].key);
    pc->nkeys = 0;
}

/* The key of the row bound to s: its first nkeys values, each followed by
 * a unit separator (malloc'd), or NULL when out of memory. */
static char *row_key(const pctl_pg_stmt *s, int nkeys)
{
    pctl_buf a = PCTL_BUF_INIT;
    int k;

    for (k = 0; k < nkeys && k < s->nparams; k++)
        if ((s->vals[k] &&
             pctl_buf_add(&a, s->vals[k], strlen(s->vals[k])) < 0) ||
            pctl_buf_addc(&a, '\x1f') < 0) {
            pctl_buf_free(&a);
            return NULL;
        }
    return a.s ? a.s : pctl_strdup("");
}

/* At most this many rows with a key wait to be sent: their keys are
 * looked for one by one.  Rows without one (events) are as many as the
 * pass writes. */
#define GATHER_MAX 512

int pctl_pg_gather(pctl_pg_conn *pc, pctl_pg_stmt *s, int64_t expect)
{
    pctl_pg_many *m = s->many;
    char *key = NULL;
    size_t i;
    int k, rc;

    if (m->nkeys > 0 && !(key = row_key(s, m->nkeys)))
        goto nomem;
    /* Sent first: what shares its row, what expects otherwise, too much. */
    for (i = 0; key && i < pc->nkeys; i++)
        if (strcmp(pc->keys[i].table, m->table) == 0 &&
            strcmp(pc->keys[i].key, key) == 0)
            break;
    if ((key && i < pc->nkeys) || pc->nkeys >= GATHER_MAX ||
        (m->rows && (m->expect < 0) != (expect < 0))) {
        if ((rc = pctl_pg_flush(pc)) < 0) {
            pctl_free(key);
            return rc;
        }
    }
    if (key) {
        if (pctl_grow((void **)&pc->keys, pc->nkeys, &pc->keys_cap,
                      sizeof *pc->keys) < 0)
            goto nomem;
        pc->keys[pc->nkeys].table = m->table;
        pc->keys[pc->nkeys++].key = key;
        key = NULL;
    }
    if (m->rows == 0) {
        if (pctl_grow((void **)&pc->gathered, pc->ngathered, &pc->gathered_cap,
                      sizeof *pc->gathered) < 0)
            goto nomem;
        pc->gathered[pc->ngathered++] = m;
        m->expect = expect < 0 ? -1 : 0;
    }
    for (k = 0; k < s->nparams; k++)
        if (arr_elem(&m->arr[k], s->vals[k]) < 0)
            goto nomem;
    m->rows++;
    if (expect >= 0)
        m->expect += expect;
    return 0;
nomem:
    pctl_free(key);
    /* A row half written: the transaction cannot commit. */
    pc->failed = PLANCTL_ENOMEM;
    return pctl_err(pc->base.p, PLANCTL_ENOMEM, "out of memory");
}

int pctl_pg_flush(pctl_pg_conn *pc)
{
    size_t i;
    int k, rc = 0;

    pc->flushing = 1;
    for (i = 0; rc == 0 && i < pc->ngathered; i++) {
        pctl_pg_many *m = pc->gathered[i];

        for (k = 0; k < m->st.nparams; k++) {
            if (pctl_buf_addc(&m->arr[k], '}') < 0) {
                rc = pctl_err(pc->base.p, PLANCTL_ENOMEM, "out of memory");
                break;
            }
            m->st.vals[k] = m->arr[k].s;
        }
        if (rc == 0)
            rc = pctl_pg_send(pc, &m->st, NULL, m->expect);
    }
    pc->flushing = 0;
    gathered_clear(pc);
    if (rc < 0 && pc->in_tx)
        pc->failed = rc;
    return rc;
}

/* Rolls back what is open on the session, if it is there and something
 * is: after a failed BEGIN, a failed migration, or a rollback.  Rows
 * gathered are not sent. */
static void end_open_tx(pctl_pg_conn *pc)
{
    gathered_clear(pc);
    pctl_pg_drain(pc);
    if (PQstatus(pc->pg) == CONNECTION_OK &&
        PQtransactionStatus(pc->pg) != PQTRANS_IDLE)
        PQclear(PQexec(pc->pg, "ROLLBACK"));
}

/* The commit counter (the change token): meta.commits, which the writers
 * that take the write lock alone move, plus each engine's own counter
 * (meta 'commits.ID'), which its writes beside other engines' move. */
#define COUNTERS_SQL                                                           \
    "(SELECT coalesce(sum(value::bigint), 0) FROM meta "                       \
    "WHERE starts_with(key, 'commits.'))"
#define COMMITS_SQL                                                            \
    "SELECT (SELECT value::bigint FROM meta WHERE key = 'commits') "           \
    "+ " COUNTERS_SQL

/* ---- the session ---- */

/* What every new session needs: the schema on the search path, UTF-8,
 * the lock timeout (the busy timeout, or an engine's), read-only when
 * opened so. */
static int session_setup(pctl_pg_conn *pc)
{
    int lock_ms = pc->lock_ms;
    char sql[512];

    snprintf(sql, sizeof sql,
             "SET search_path TO \"%s\"; SET client_encoding TO 'UTF8'; "
             "SET lock_timeout TO %d; SET default_transaction_read_only TO %s",
             pc->uri.schema, lock_ms > 0 ? lock_ms : 1,
             pc->readonly ? "on" : "off");
    if (pc->idle_tx_ms > 0)
        snprintf(sql + strlen(sql), sizeof sql - strlen(sql),
                 "; SET idle_in_transaction_session_timeout TO %lld",
                 (long long)pc->idle_tx_ms);
    return run(pc, sql, "session", NULL);
}

static int listen_now(pctl_pg_conn *pc)
{
    char sql[160];

    snprintf(sql, sizeof sql, "LISTEN %s", pc->channel_ident);
    return run(pc, sql, "listen", NULL);
}

int pctl_pg_alive(pctl_pg_conn *pc)
{
    char buf[512];
    int rc;

    if (PQstatus(pc->pg) == CONNECTION_OK)
        return 0;
    pc->nsent = 0; /* their answers went with the session */
    PQreset(pc->pg);
    if (PQpipelineStatus(pc->pg) != PQ_PIPELINE_OFF)
        PQexitPipelineMode(pc->pg);
    if (PQstatus(pc->pg) != CONNECTION_OK)
        return pctl_err(pc->base.p, PLANCTL_EIO,
                        "lost the connection to PostgreSQL at %s and could "
                        "not connect again (%s); is the server running?",
                        pc->base.p->path, conn_words(pc, buf, sizeof buf));
    pc->gen++;
    pc->rebase = 1;
    pc->in_tx = 0;
    cancel_renew(pc);
    if ((rc = session_setup(pc)) < 0)
        return rc;
    if (pc->listening && (rc = listen_now(pc)) < 0)
        return rc;
    return 0;
}

/* ---- transactions ---- */

/*
 * The commit counter as the server has it now (raw), into seen, the
 * token's value.  A server that crashed may have lost commits it had
 * acknowledged, and the counter with them: after a new session it can be
 * lower than what this connection saw.  The token must then still move at
 * the next commits of others, and never come back to a value it had (a
 * reader that compares it with an old one would miss them): the first
 * value read in a new session that is not above seen moves shift so that
 * the token is one more, and every value after it moves from there.
 */
static void counter_read(pctl_pg_conn *pc, int64_t raw)
{
    if (pc->rebase) {
        pc->rebase = 0;
        if (raw + pc->shift <= pc->seen)
            pc->shift = pc->seen + 1 - raw;
    }
    if (raw + pc->shift > pc->seen)
        pc->seen = raw + pc->shift;
}

int pctl_pg_begin(pctl_conn *c, pctl_tx_kind k)
{
    pctl_pg_conn *pc = PC(c);
    char sql[384];
    int64_t before = 0;
    int rc;

    pc->failed = 0;
    if ((rc = pctl_pg_alive(pc)) < 0)
        return rc;
    if (k == PCTL_TX_READ) {
        if ((rc = run(pc, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                      NULL, NULL)) < 0)
            return rc;
        pc->in_tx = 1 + PCTL_TX_READ;
        return 0;
    }
    /* Only the rows' own locks: no writer's lock, no change token (its
     * commit is a plain COMMIT: pctl_pg_commit counts writes only). */
    if (k == PCTL_TX_ROWS) {
        if ((rc = run(pc, "BEGIN", NULL, NULL)) < 0)
            return rc;
        pc->in_tx = 1 + PCTL_TX_ROWS;
        return 0;
    }
    pc->own_at_begin = pc->own;
    /* An engine's write and an admission take the lock shared: the other
     * engines' writes and admissions go on beside it, every other writer
     * waits for them all.  Their BEGIN is sent ahead, not waited for: its
     * answers come back with the transaction's first read (a pass's
     * fence), one round trip for both; a lock not taken in time fails
     * that read (EBUSY), and the transaction.  A create's BEGIN is only
     * that: its first read takes the lock (def_latest_admit). */
    pc->counted = 0;
    if (k == PCTL_TX_ADMIT) {
        if ((rc = pctl_pg_send(pc, NULL, "BEGIN", PCTL_PG_BEGIN)) < 0) {
            end_open_tx(pc);
            return rc;
        }
        pc->in_tx = 1 + k;
        return 0;
    }
    if (k == PCTL_TX_ENGINE || k == PCTL_TX_RUN) {
        /* The token and the lock in one statement: its snapshot may be
         * older than the lock, which a writer beside others does not mind
         * (it counts its commit as one more than it saw, never sets the
         * token from this value). */
        snprintf(sql, sizeof sql,
                 COMMITS_SQL ", pg_advisory_xact_lock_shared(%d, %d)",
                 PCTL_PG_LOCK_WRITE, pc->lock_key);
        if ((rc = pctl_pg_send(pc, NULL, "BEGIN", PCTL_PG_BEGIN)) < 0 ||
            (rc = pctl_pg_send(pc, NULL, sql, PCTL_PG_BEFORE)) < 0) {
            end_open_tx(pc);
            return rc;
        }
        pc->in_tx = 1 + k;
        return 0;
    }
    snprintf(sql, sizeof sql,
             "BEGIN; SELECT pg_advisory_xact_lock(%d, %d); " COMMITS_SQL,
             PCTL_PG_LOCK_WRITE, pc->lock_key);
    if ((rc = run_int(pc, sql, NULL, &before)) < 0) {
        end_open_tx(pc);
        return rc;
    }
    pc->in_tx = 1 + k;
    pc->before = before;
    counter_read(pc, before);
    return 0;
}

void pctl_pg_rollback(pctl_conn *c)
{
    pctl_pg_conn *pc = PC(c);

    pc->in_tx = 0;
    pc->wake = 0;
    end_open_tx(pc);
}

/*
 * What a commit that changed rows adds to the change token.  A writer
 * that holds the lock alone read the whole token exactly at its BEGIN
 * (no engine writes beside it): it folds the counters of engines gone
 * from `engines` into meta.commits, and sets meta.commits so that the
 * token is one more.  An engine's write moves its own counter by one
 * (no row another engine writes), and notifies, when it does, in the same
 * statement (its RETURNING) the token its snapshot saw plus its own one:
 * no more than the token once it commits.
 * An admission (and a PCTL_TX_RUN) does the same with one of
 * ADMIT_COUNTERS counters of its own (keys 'commits.-1' and below: no
 * engine's id), the one of its connection, so that admissions from
 * several connections do not wait for each other's commit on one row;
 * the fold above takes them too.  The statements go into part[0..n), n
 * returned; COMMIT is not one.
 */
#define COMMIT_PARTS 1
static int commit_parts(char (*part)[1024], const pctl_pg_conn *pc, int notify)
{
    int n = 0;

    if (pc->in_tx == 1 + PCTL_TX_ENGINE || pc->in_tx == 1 + PCTL_TX_ADMIT ||
        pc->in_tx == 1 + PCTL_TX_RUN) {
        snprintf(part[n], sizeof *part,
                 "INSERT INTO meta (key, value) VALUES ('commits.%lld', '1') "
                 "ON CONFLICT (key) DO UPDATE "
                 "SET value = (meta.value::bigint + 1)::text",
                 pc->in_tx == 1 + PCTL_TX_ENGINE
                     ? (long long)pc->base.p->fleet_id
                     : -(long long)pc->admit_counter);
        /* A RETURNING's subquery reads the statement's snapshot, without
         * the statement's own change: hence the one added. */
        if (notify) {
            size_t len = strlen(part[n]);

            snprintf(part[n] + len, sizeof *part - len,
                     " RETURNING pg_notify(%s, ((" COMMITS_SQL ") + 1)::text)",
                     pc->channel_lit);
        }
        return n + 1;
    }
    /* One statement: the fold (a CTE runs whatever the UPDATE reads; both
     * see the same snapshot, so the UPDATE sums the live engines'
     * counters itself), and the notification as its RETURNING. */
    snprintf(part[n], sizeof *part,
             "WITH gone AS (DELETE FROM meta WHERE starts_with(key, "
             "'commits.') AND NOT EXISTS (SELECT 1 FROM engines AS e WHERE "
             "e.id = substr(meta.key, 9)::bigint)) "
             "UPDATE meta SET value = (%lld - (SELECT coalesce(sum("
             "m.value::bigint), 0) FROM meta AS m WHERE starts_with(m.key, "
             "'commits.') AND EXISTS (SELECT 1 FROM engines AS e WHERE "
             "e.id = substr(m.key, 9)::bigint)))::text WHERE key = 'commits'",
             (long long)(pc->before + 1));
    if (notify) {
        size_t len = strlen(part[n]);

        snprintf(part[n] + len, sizeof *part - len,
                 " RETURNING pg_notify(%s, '%lld')", pc->channel_lit,
                 (long long)(pc->before + 1));
    }
    return n + 1;
}

int pctl_pg_commit(pctl_conn *c)
{
    pctl_pg_conn *pc = PC(c);
    int shared = pc->in_tx == 1 + PCTL_TX_ENGINE ||
                 pc->in_tx == 1 + PCTL_TX_ADMIT || pc->in_tx == 1 + PCTL_TX_RUN;
    int changed = (pc->in_tx == 1 + PCTL_TX_WRITE || shared) &&
                  pc->own != pc->own_at_begin;
    /* An engine's passes notify only when woken; what else it writes (an
     * embedder's create, cancel or delete on the engine's handle) is
     * work for the others as anybody's is. */
    int notify =
        changed && (!pc->quiet || pc->wake || pc->in_tx != 1 + PCTL_TX_ENGINE);
    char part[COMMIT_PARTS][1024];
    int rc = 0, i;
    int n = changed && !pc->counted ? commit_parts(part, pc, notify) : 0;
    size_t k;

    /* Woken with no row changed (an engine that asks the others for runs:
     * store/fleet.c): the notification alone, with the token its
     * snapshot reads (no commit of its own to count). */
    if (pc->wake && !changed && pc->in_tx == 1 + PCTL_TX_ENGINE)
        snprintf(part[n++], sizeof *part,
                 "SELECT pg_notify(%s, (" COMMITS_SQL ")::text)",
                 pc->channel_lit);

    pc->wake = 0;
    if (pc->ngathered)
        rc = pctl_pg_flush(pc);
    /* The change token's statements and COMMIT go in one pipeline, after
     * what the transaction sent without waiting: a write among those
     * that failed aborts the pipeline, COMMIT with it, and so does one
     * that wrote other than its count of rows, which the server checks
     * (chk_sql).  A count the client must check (a statement that cannot
     * be wrapped so) is answered before COMMIT is sent: one round trip
     * more. */
    for (k = 0; k < pc->nsent && rc == 0; k++)
        if (pc->sent[k].expect >= 0)
            rc = pctl_pg_drain(pc);
    /* A failure answered and not returned to anyone (a read sent ahead
     * and never stepped) still fails the transaction. */
    if (rc == 0 && pc->failed)
        rc = pctl_err(c->p, PLANCTL_ERROR,
                      "commit: a statement of the transaction had failed; "
                      "it is rolled back");
    for (i = 0; rc == 0 && i < n; i++)
        rc = pctl_pg_send(pc, NULL, part[i], -1);
    if (rc == 0)
        rc = pctl_pg_send(pc, NULL, "COMMIT", PCTL_PG_COMMIT);
    if (rc == 0)
        rc = pctl_pg_drain(pc);
    if (rc < 0) {
        pctl_pg_rollback(c);
        return rc;
    }
    pc->in_tx = 0;
    if (changed) {
        pc->mine++;
        /* An engine's BEGIN (or an admission's) read the token without
         * the commits beside it: its own is one more than what it had
         * seen, which is no more than the token now. */
        if (shared)
            pc->seen++;
        else
            counter_read(pc, pc->before + 1);
    }
    return 0;
}

/* ---- the change token ---- */

int pctl_pg_token(pctl_db_token *out, pctl_conn *c, unsigned which)
{
    pctl_pg_conn *pc = PC(c);
    PGnotify *n;
    int rc;

    if (which & PCTL_TOKEN_OWN)
        out->own = pc->own;
    if (!(which & PCTL_TOKEN_OTHERS))
        return 0;
    if (!pc->in_tx) {
        int fresh = !pc->listening || PQstatus(pc->pg) != CONNECTION_OK;

        /* A first call, or a session made again (LISTEN again by
         * pctl_pg_alive): from now on every commit is heard, and the
         * counter covers those before, or those while the session was
         * down. */
        if (fresh) {
            int64_t v = 0;

            if ((rc = pctl_pg_alive(pc)) < 0 ||
                (!pc->listening && (rc = listen_now(pc)) < 0))
                return rc;
            pc->listening = 1;
            if ((rc = run_int(pc, COMMITS_SQL, "data_version", &v)) < 0)
                return rc;
            counter_read(pc, v);
            pc->heard++; /* what was said while it was away is lost */
        }
        if (!PQconsumeInput(pc->pg)) {
            char buf[512];

            return pctl_err(c->p, PLANCTL_EIO,
                            "lost the connection to PostgreSQL at %s (%s)",
                            c->p->path, conn_words(pc, buf, sizeof buf));
        }
        /* Engines commit without a notification (they would wake each
         * other at every pass): whoever watches the database for any
         * change, not only for work to do, reads the counter. */
        if (!pc->quiet && !fresh) {
            int64_t v = 0;

            if ((rc = run_int(pc, COMMITS_SQL, "data_version", &v)) < 0)
                return rc;
            counter_read(pc, v);
        }
    }
    /* Inside a transaction nothing new arrives (libpq has buffered what
     * came); what is buffered is still counted. */
    while ((n = PQnotifies(pc->pg)) != NULL) {
        counter_read(pc, strtoll(n->extra, NULL, 10));
        if (n->be_pid != PQbackendPID(pc->pg))
            pc->heard++;
        PQfreemem(n);
    }
    out->others = pc->seen - pc->mine;
    out->heard = pc->heard;
    out->session = pc->gen;
    return 0;
}

void pctl_pg_counted(pctl_conn *c)
{
    PC(c)->counted = 1;
}

void pctl_pg_quiet(pctl_conn *c, int on)
{
    PC(c)->quiet = on;
}

void pctl_pg_wake(pctl_conn *c)
{
    PC(c)->wake = 1;
}

int pctl_pg_engine_session(pctl_conn *c, int64_t idle_ms, int64_t lock_ms)
{
    pctl_pg_conn *pc = PC(c);
    char sql[160];

    pc->idle_tx_ms = idle_ms;
    pc->lock_ms =
        lock_ms > 0 && lock_ms < pc->busy_ms ? (int)lock_ms : pc->busy_ms;
    if (idle_ms > 0)
        snprintf(sql, sizeof sql,
                 "SET idle_in_transaction_session_timeout TO %lld; ",
                 (long long)idle_ms);
    else
        snprintf(sql, sizeof sql,
                 "SET idle_in_transaction_session_timeout TO DEFAULT; ");
    snprintf(sql + strlen(sql), sizeof sql - strlen(sql),
             "SET lock_timeout TO %d", pc->lock_ms > 0 ? pc->lock_ms : 1);
    if (pc->in_tx)
        return 0;
    /* Given back to the handle (the engine stopped, maybe because the
     * session is gone): as far as it goes, keeping the handle's message;
     * a new session has them anyway. */
    if (idle_ms == 0 && lock_ms == 0) {
        if (PQstatus(pc->pg) == CONNECTION_OK)
            PQclear(PQexec(pc->pg, sql));
        return 0;
    }
    return run(pc, sql, "session", NULL);
}

/* ---- opening ---- */

/* Looks at the schema without writing: *version 0 and *fresh when it is
 * absent or has no table. */
static int identify(pctl_pg_conn *pc, int *fresh)
{
    planctl *p = pc->base.p;
    const char *vals[1] = {pc->uri.schema};
    PGresult *r;
    int rc = 0, tables, has_meta;

    *fresh = 0;
    r = PQexecParams(pc->pg,
                     "SELECT (SELECT count(*) FROM pg_class c "
                     "        JOIN pg_namespace n ON n.oid = c.relnamespace "
                     "        WHERE n.nspname = $1)::int, "
                     "       (to_regclass(quote_ident($1) || '.meta') "
                     "        IS NOT NULL)::int, hashtext($1)",
                     1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = pctl_pg_err(pc, r, NULL);
        PQclear(r);
        return rc;
    }
    tables = atoi(PQgetvalue(r, 0, 0));
    has_meta = atoi(PQgetvalue(r, 0, 1));
    pc->lock_key = atoi(PQgetvalue(r, 0, 2));
    PQclear(r);
    if (tables == 0) {
        *fresh = 1;
        return 0;
    }
    if (!has_meta)
        return pctl_err(p, PLANCTL_ENOTDB,
                        "schema %s of %s holds tables that are not "
                        "planctl's; give another schema (?schema=NAME) or "
                        "database",
                        pc->uri.schema, p->path);
    r = PQexec(pc->pg, "SELECT "
                       "(SELECT value FROM meta WHERE key = 'application'), "
                       "(SELECT value FROM meta WHERE key = 'schema_version')");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = pctl_pg_err(pc, r, NULL);
        PQclear(r);
        return rc;
    }
    if (PQgetisnull(r, 0, 0) || strcmp(PQgetvalue(r, 0, 0), "planctl") != 0)
        rc = pctl_err(p, PLANCTL_ENOTDB,
                      "schema %s of %s has a meta table that is not "
                      "planctl's; give another schema (?schema=NAME) or "
                      "database",
                      pc->uri.schema, p->path);
    else
        p->schema_version = atoi(PQgetvalue(r, 0, 1));
    PQclear(r);
    if (rc == 0 && p->schema_version > pctl_migrations_count)
        rc = pctl_err(p, PLANCTL_ETOONEW,
                      "schema %s of %s has schema version %d but this "
                      "planctl supports up to %d; upgrade planctl",
                      pc->uri.schema, p->path, p->schema_version,
                      pctl_migrations_count);
    return rc;
}

/*
 * Applies migrations/postgres/ in order: 0001 makes the whole schema of
 * its version from nothing; a later NNNN brings version NNNN - 1 to NNNN,
 * as SQLite's migration of the same number.  Each in one transaction
 * under the write lock, the version read again inside it.
 */
static int migrate(pctl_pg_conn *pc)
{
    planctl *p = pc->base.p;
    char sql[256];
    int i, rc;

    for (i = 0; i < pctl_pg_migrations_count; i++) {
        const pctl_embedded_sql *m = &pctl_pg_migrations[i];
        int64_t version = 0, exists = 0;

        if (m->version > 1 && m->version <= p->schema_version)
            continue;
        if (m->version == 1 && p->schema_version > 0)
            continue;
        snprintf(sql, sizeof sql, "BEGIN; SELECT pg_advisory_xact_lock(%d, %d)",
                 PCTL_PG_LOCK_WRITE, pc->lock_key);
        if ((rc = run(pc, sql, "migrate", NULL)) < 0)
            goto fail;
        if ((rc = run_int(pc,
                          "SELECT (to_regclass(current_schema() || '.meta') "
                          "IS NOT NULL)::int",
                          "migrate", &exists)) < 0)
            goto fail;
        if (exists && (rc = run_int(pc,
                                    "SELECT value::bigint FROM meta "
                                    "WHERE key = 'schema_version'",
                                    "migrate", &version)) < 0)
            goto fail;
        if ((m->version == 1 && exists) ||
            (m->version > 1 && version >= m->version)) {
            /* Another process did it while we waited for the lock. */
            p->schema_version = (int)version;
            if ((rc = run(pc, "COMMIT", "migrate", NULL)) < 0)
                goto fail;
            continue;
        }
        if (m->version == 1) {
            snprintf(sql, sizeof sql, "CREATE SCHEMA IF NOT EXISTS \"%s\"",
                     pc->uri.schema);
            if ((rc = run(pc, sql, m->name, NULL)) < 0)
                goto fail;
        }
        if ((rc = run(pc, m->sql, m->name, NULL)) < 0)
            goto fail;
        if (m->version > 1) {
            snprintf(sql, sizeof sql,
                     "UPDATE meta SET value = '%d' WHERE key = "
                     "'schema_version'",
                     m->version);
            if ((rc = run(pc, sql, m->name, NULL)) < 0)
                goto fail;
        }
        if ((rc = run_int(pc,
                          "SELECT value::bigint FROM meta "
                          "WHERE key = 'schema_version'; ",
                          m->name, &version)) < 0 ||
            (rc = run(pc, "COMMIT", "migrate", NULL)) < 0)
            goto fail;
        p->schema_version = (int)version;
    }
    if (p->schema_version != pctl_migrations_count)
        return pctl_err(p, PLANCTL_ERROR,
                        "schema %s of %s is at version %d after the "
                        "PostgreSQL migrations, but this planctl needs %d "
                        "(a build whose migrations disagree)",
                        pc->uri.schema, p->path, p->schema_version,
                        pctl_migrations_count);
    return 0;
fail:
    end_open_tx(pc);
    return rc;
}

/* libpq's default notice processor prints the server's notices and
 * warnings on stderr ("WARNING: terminating connection due to immediate
 * shutdown command"): a library prints nothing.  What matters of them
 * reaches planctl as the error of the statement or of the lost
 * connection. */
static void ignore_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static int connect_db(pctl_pg_conn *pc)
{
    planctl *p = pc->base.p;
    const char *keys[] = {"dbname", "fallback_application_name", NULL};
    const char *vals[] = {pc->uri.conninfo, "planctl", NULL};
    char buf[512], chan[96];
    char *lit, *ident;

    pc->pg = PQconnectdbParams(keys, vals, 1);
    if (!pc->pg)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* Kept by PQreset: set once for every session of the connection. */
    PQsetNoticeProcessor(pc->pg, ignore_notice, NULL);
    if (PQstatus(pc->pg) == CONNECTION_OK)
        cancel_renew(pc);
    if (PQstatus(pc->pg) != CONNECTION_OK)
        return pctl_err(p, PLANCTL_EIO,
                        "cannot connect to PostgreSQL at %s: %s; check the "
                        "URI, the server, and the password (in ~/.pgpass or "
                        "PGPASSWORD)",
                        p->path, conn_words(pc, buf, sizeof buf));
    snprintf(chan, sizeof chan, "planctl.%s", pc->uri.schema);
    lit = PQescapeLiteral(pc->pg, chan, strlen(chan));
    ident = PQescapeIdentifier(pc->pg, chan, strlen(chan));
    pc->channel_lit = lit ? pctl_strdup(lit) : NULL;
    pc->channel_ident = ident ? pctl_strdup(ident) : NULL;
    PQfreemem(lit);
    PQfreemem(ident);
    if (!pc->channel_lit || !pc->channel_ident)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    return 0;
}

static int pg_open_db(pctl_pg_conn *pc, const planctl_open_options *o)
{
    planctl *p = pc->base.p;
    int rc, fresh = 0;

    pc->busy_ms = pc->lock_ms = o->busy_timeout_ms;
    pc->readonly = p->readonly;
    if ((rc = connect_db(pc)) < 0 || (rc = session_setup(pc)) < 0 ||
        (rc = identify(pc, &fresh)) < 0)
        return rc;
    /* Worded as SQLite's for a missing file: the URI, schema included, is
     * the database; the same words whichever backend the user has. */
    if (fresh && (p->readonly || (o->flags & PLANCTL_OPEN_NOCREATE)))
        return pctl_err(p, PLANCTL_ENOTFOUND, "database %s does not exist",
                        p->path);
    if (p->readonly) {
        if (p->schema_version < pctl_migrations_count)
            return pctl_err(p, PLANCTL_EREADONLY,
                            "database %s needs a schema upgrade; open it "
                            "once read-write",
                            p->path);
        return 0;
    }
    return migrate(pc);
}

void pctl_pg_close(pctl_conn *c)
{
    pctl_pg_conn *pc = PC(c);

    if (!c)
        return;
    if (pc->cancel) {
        pthread_mutex_lock(&pc->base.p->intr_lock);
        PQfreeCancel(pc->cancel);
        pc->cancel = NULL;
        pthread_mutex_unlock(&pc->base.p->intr_lock);
    }
    if (pc->pg)
        PQfinish(pc->pg);
    pctl_pg_uri_free(&pc->uri);
    pctl_free(pc->channel_lit);
    pctl_free(pc->channel_ident);
    pctl_free(pc->sent);
    while (pc->nkeys)
        pctl_free(pc->keys[--pc->nkeys].key);
    pctl_free(pc->keys);
    pctl_free(pc->gathered);
    pctl_free(pc);
}

/* How many counters admissions share (commit_parts): connections of one
 * process, and processes, take them in turn. */
#define ADMIT_COUNTERS 16

int pctl_pg_open(pctl_conn **out, planctl *p, const planctl_open_options *o,
                 const pctl_db_methods *m)
{
    static atomic_uint opened;
    pctl_pg_conn *pc = pctl_calloc(1, sizeof *pc);
    int rc;

    *out = NULL;
    if (!pc)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    pc->base.m = m;
    pc->base.p = p;
    pc->admit_counter =
        1 +
        ((unsigned)getpid() + atomic_fetch_add(&opened, 1)) % ADMIT_COUNTERS;
    if ((rc = pctl_pg_uri_parse(&pc->uri, p, p->open_target)) < 0 ||
        (rc = pg_open_db(pc, o)) < 0) {
        pctl_pg_close(&pc->base);
        return rc;
    }
    *out = &pc->base;
    return 0;
}
