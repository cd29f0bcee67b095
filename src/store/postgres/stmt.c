/*
 * stmt.c - pctl_db_postgres's statements: a pctl_stmt over a statement
 * prepared in the session (PQprepare) and run with PQexecPrepared.
 *
 * Parameters go as text, without types: sql/postgres.sql names a type where
 * the server could not infer one.  A statement runs at its first step,
 * which fetches its whole result (planctl's reads are bounded, paged
 * where they could grow); later steps walk its rows.  Bound text is not
 * copied, as on SQLite: it must stay valid until the statement's reset.
 *
 * A session that was lost and made again (conn.c) has none of the old
 * prepared statements: a statement prepared in an older session (gen) is
 * prepared again before it runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "store/postgres/pg.h"

#define PS(s) ((pctl_pg_stmt *)(s))
#define PC(c) ((pctl_pg_conn *)(c))

/* Type oids (catalog/pg_type.h is not in libpq-dev). */
enum {
    OID_BOOL = 16,
    OID_INT8 = 20,
    OID_INT2 = 21,
    OID_INT4 = 23,
    OID_OID = 26,
    OID_FLOAT4 = 700,
    OID_FLOAT8 = 701,
    OID_NUMERIC = 1700
};

/* The highest $n in sql, outside comments and quoted strings (the
 * comments of sql/postgres.sql name parameters too). */
static int count_params(const char *sql, size_t len)
{
    int max = 0;
    size_t i;

    for (i = 0; i + 1 < len; i++) {
        if (sql[i] == '-' && sql[i + 1] == '-') {
            while (i < len && sql[i] != '\n')
                i++;
        } else if (sql[i] == '\'') {
            for (i++; i < len && sql[i] != '\''; i++)
                ;
        } else if (sql[i] == '$' && sql[i + 1] >= '0' && sql[i + 1] <= '9') {
            int n = atoi(sql + i + 1);

            if (n > max)
                max = n;
        }
    }
    return max;
}

/* The text sql[0, len) wrapped so that it fails when it wrote other than
 * $n rows, n = nparams + 1: its outcome is checked by the server, so a
 * COMMIT can follow it in one round trip.  The failure is a cast of the
 * words "planctl: wrote N rows, not M" to an integer, which conn.c's
 * answer() tells from any other (SQLSTATE 22P02).  NULL when the text is
 * not one INSERT, UPDATE or DELETE without a RETURNING of its own (or out
 * of memory): the client then checks the count. */
static char *checked_text(const char *sql, size_t len, int nparams)
{
    static const char *const verbs[] = {"INSERT", "UPDATE", "DELETE"};
    size_t i = 0, body = 0;
    pctl_buf b = PCTL_BUF_INIT;
    char tail[256];
    int ok = 0, k;

    while (i < len && (sql[i] == ' ' || sql[i] == '\n' || sql[i] == '-')) {
        if (sql[i] == '-' && i + 1 < len && sql[i + 1] == '-')
            while (i < len && sql[i] != '\n')
                i++;
        else if (sql[i] == '-')
            return NULL;
        i++;
    }
    for (k = 0; k < 3; k++)
        ok |= len - i > 6 && strncmp(sql + i, verbs[k], 6) == 0;
    if (!ok)
        return NULL;
    /* Its end: the last ';' outside comments and quoted strings. */
    for (body = len; i < len; i++) {
        if (sql[i] == '-' && i + 1 < len && sql[i + 1] == '-') {
            while (i < len && sql[i] != '\n')
                i++;
        } else if (sql[i] == '\'') {
            for (i++; i < len && sql[i] != '\''; i++)
                ;
        } else if (sql[i] == ';') {
            body = i;
        } else if (len - i >= 9 && (strncmp(sql + i, "RETURNING", 9) == 0 ||
                                    strncmp(sql + i, "returning", 9) == 0)) {
            return NULL;
        }
    }
    snprintf(tail, sizeof tail,
             "\nRETURNING 1)\nSELECT (CASE WHEN count(*) = $%d::bigint THEN "
             "'0' ELSE 'planctl: wrote ' || count(*) || ' rows, not ' || "
             "$%d::bigint END)::int FROM planctl_w",
             nparams + 1, nparams + 1);
    if (pctl_buf_add(&b, "WITH planctl_w AS (\n", 20) < 0 ||
        pctl_buf_add(&b, sql, body) < 0 ||
        pctl_buf_add(&b, tail, strlen(tail)) < 0) {
        pctl_buf_free(&b);
        return NULL;
    }
    return b.s;
}

static int prepare_one(pctl_pg_conn *pc, pctl_pg_stmt *s, const char *what)
{
    PGresult *r;
    int rc = 0;

    pc->round_trips++;
    r = PQprepare(pc->pg, s->name, s->sql, 0, NULL);

    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        rc = pctl_pg_err(pc, r, what);
    else
        s->gen = pc->gen;
    PQclear(r);
    return rc;
}

/* Prepares s, and its set form, in the session. */
static int prepare_in_session(pctl_pg_stmt *s)
{
    pctl_pg_conn *pc = PC(s->base.c);
    const char *what = pctl_query_name(s->base.q);
    int rc;

    /* Preparing waits for its answer: what was sent is answered first. */
    if ((rc = pctl_pg_drain(pc)) < 0 || (rc = prepare_one(pc, s, what)) < 0)
        return rc;
    return s->many ? prepare_one(pc, &s->many->st, what) : 0;
}

/* Where sql's set form starts ("-- many: TABLE KEYS" on a line of its
 * own), or NULL. */
static const char *many_at(const char *sql, size_t len)
{
    const char *m = strstr(sql, "\n-- many: ");

    return m && (size_t)(m - sql) < len ? m + 1 : NULL;
}

/* s's set form from its line "-- many: TABLE KEYS" on: 0, or ENOMEM or
 * ERROR (a line that names no table). */
static int many_make(pctl_pg_stmt *s, const char *text, size_t len)
{
    pctl_pg_many *m;
    if (!(m = pctl_calloc(1, sizeof *m)))
        return PLANCTL_ENOMEM;
    s->many = m;
    if (sscanf(text, "-- many: %31s %d", m->table, &m->nkeys) != 2 ||
        m->nkeys < 0)
        return PLANCTL_ERROR;
    m->st.base = s->base;
    snprintf(m->st.name, sizeof m->st.name, "planctl_%d_m", (int)s->base.q);
    m->st.nparams = count_params(text, len);
    m->st.chk_sql = checked_text(text, len, m->st.nparams);
    if (!(m->st.sql = pctl_strndup(text, len)) ||
        !(m->st.vals =
              pctl_calloc((size_t)m->st.nparams + 1, sizeof *m->st.vals)) ||
        !(m->arr = pctl_calloc((size_t)m->st.nparams + 1, sizeof *m->arr)))
        return PLANCTL_ENOMEM;
    return 0;
}

static void many_free(pctl_pg_many *m)
{
    int k;

    if (!m)
        return;
    for (k = 0; m->arr && k < m->st.nparams; k++)
        pctl_buf_free(&m->arr[k]);
    pctl_free(m->arr);
    pctl_free(m->st.chk_sql);
    pctl_free((char *)m->st.sql);
    pctl_free(m->st.vals);
    pctl_free(m);
}

int pctl_pg_prepare(pctl_stmt **out, pctl_conn *c, pctl_query q,
                    const char *sql, size_t len)
{
    pctl_pg_conn *pc = PC(c);
    pctl_pg_stmt *s;
    const char *many;
    int rc;

    *out = NULL;
    if (!(s = pctl_calloc(1, sizeof *s)))
        return pctl_err(c->p, PLANCTL_ENOMEM, "out of memory");
    s->base.m = c->m;
    s->base.c = c;
    s->base.q = q;
    snprintf(s->name, sizeof s->name, "planctl_%d", (int)q);
    if ((many = many_at(sql, len)) != NULL) {
        rc = many_make(s, many, len - (size_t)(many - sql));
        len = (size_t)(many - sql);
        if (rc < 0) {
            pctl_pg_finalize(&s->base);
            return rc == PLANCTL_ENOMEM
                       ? pctl_err(c->p, rc, "out of memory")
                       : pctl_err(c->p, rc,
                                  "query %s: its line \"-- many:\" "
                                  "names no table and key count",
                                  pctl_query_name(q));
        }
    }
    s->nparams = count_params(sql, len);
    /* Each parameter of the set form is the array of the one-row form's. */
    if (s->many && s->many->st.nparams != s->nparams) {
        pctl_pg_finalize(&s->base);
        return pctl_err(c->p, PLANCTL_ERROR,
                        "query %s: its set form has other parameters",
                        pctl_query_name(q));
    }
    /* The text is one section of the embedded statements: cut at its end
     * (PQprepare takes a C string). */
    s->sql = pctl_strndup(sql, len);
    s->chk_sql = checked_text(sql, len, s->nparams);
    s->vals = pctl_calloc((size_t)s->nparams + 1, sizeof *s->vals);
    s->num = pctl_calloc((size_t)s->nparams + 1, sizeof *s->num);
    if (!s->sql || !s->vals || !s->num) {
        pctl_pg_finalize(&s->base);
        return pctl_err(c->p, PLANCTL_ENOMEM, "out of memory");
    }
    if ((rc = pctl_pg_alive(pc)) < 0 || (rc = prepare_in_session(s)) < 0) {
        pctl_pg_finalize(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

/* Deallocates s, and the form of it that checks its count, on the server:
 * only while the session they were prepared in lives (a new session never
 * had them). */
static void deallocate(pctl_pg_conn *pc, const pctl_pg_stmt *s)
{
    char sql[64];

    if (!pc->pg || PQstatus(pc->pg) != CONNECTION_OK ||
        PQtransactionStatus(pc->pg) != PQTRANS_IDLE)
        return;
    if (s->gen == pc->gen) {
        snprintf(sql, sizeof sql, "DEALLOCATE %s", s->name);
        PQclear(PQexec(pc->pg, sql));
    }
    if (s->chk_gen == pc->gen + 1) {
        snprintf(sql, sizeof sql, "DEALLOCATE %s_c", s->name);
        PQclear(PQexec(pc->pg, sql));
    }
}

void pctl_pg_finalize(pctl_stmt *s)
{
    pctl_pg_conn *pc;

    if (!s)
        return;
    pc = PC(s->c);
    PQclear(PS(s)->res);
    PQclear(PS(s)->desc);
    deallocate(pc, PS(s));
    if (PS(s)->many)
        deallocate(pc, &PS(s)->many->st);
    many_free(PS(s)->many);
    pctl_free((char *)PS(s)->sql);
    pctl_free(PS(s)->chk_sql);
    pctl_free(PS(s)->vals);
    pctl_free(PS(s)->num);
    pctl_free(s);
}

void pctl_pg_reset(pctl_stmt *s, int unbind)
{
    pctl_pg_stmt *ps = PS(s);

    /* Its answer is still to come: read first, not into its next run's
     * place (a failure is the transaction's: pctl_pg_commit). */
    if (ps->pending)
        pctl_pg_drain(PC(s->c));
    ps->fresh = 0;
    PQclear(ps->res);
    ps->res = NULL;
    ps->row = ps->nrows = 0;
    if (unbind)
        memset(ps->vals, 0, (size_t)ps->nparams * sizeof *ps->vals);
}

void pctl_pg_bind_i64(pctl_stmt *s, int i, int64_t v)
{
    pctl_pg_stmt *ps = PS(s);

    if (i < 1 || i > ps->nparams)
        return;
    snprintf(ps->num[i - 1], sizeof ps->num[i - 1], "%lld", (long long)v);
    ps->vals[i - 1] = ps->num[i - 1];
}

void pctl_pg_bind_text(pctl_stmt *s, int i, const char *v)
{
    pctl_pg_stmt *ps = PS(s);

    if (i < 1 || i > ps->nparams)
        return;
    ps->vals[i - 1] = v;
}

/* At most this many statements wait for their answers: the server writes
 * them while the client is still sending, and must never fill the
 * socket's buffer while the client, blocked on its own full buffer, is
 * not reading (libpq's pipeline mode in blocking mode). */
#define SENT_MAX 256

int pctl_pg_step_later(pctl_stmt *s, int64_t expect)
{
    pctl_pg_stmt *ps = PS(s);
    pctl_pg_conn *pc = PC(s->c);
    int rc;

    if (!pc->in_tx)
        return pctl_err(s->c->p, PLANCTL_ERROR,
                        "%s: sent without waiting outside a transaction",
                        pctl_query_name(s->q));
    if (pc->nsent >= SENT_MAX && (rc = pctl_pg_drain(pc)) < 0)
        return rc;
    if (ps->gen != pc->gen && (rc = prepare_in_session(ps)) < 0)
        return rc;
    /* A row of a statement with a set form waits to go with others. */
    if ((rc = ps->many ? pctl_pg_gather(pc, ps, expect)
                       : pctl_pg_send(pc, ps, NULL, expect)) < 0)
        return rc;
    /* Counted as written now, for the commit's change token. */
    pc->own += expect > 0 ? expect : 1;
    return 0;
}

static int took(pctl_pg_stmt *ps);

static int execute(pctl_pg_stmt *ps)
{
    pctl_pg_conn *pc = PC(ps->base.c);
    int rc;

    /* Outside a transaction a statement runs on its own: the session may
     * be made again first.  Inside one, a lost session fails it. */
    if (!pc->in_tx && (rc = pctl_pg_alive(pc)) < 0)
        return rc;
    if (ps->gen != pc->gen && (rc = prepare_in_session(ps)) < 0)
        return rc;
    if (pc->nsent || pc->ngathered) {
        /* Statements sent (or rows gathered) before it: it goes the same way,
         * and their answers and its own come back in one round trip. */
        if ((rc = pctl_pg_send(pc, ps, NULL, PCTL_PG_WAITED)) < 0 ||
            (rc = pctl_pg_drain(pc)) < 0) {
            PQclear(ps->res);
            ps->res = NULL;
            ps->fresh = 0;
            return rc;
        }
    } else {
        pc->round_trips++;
        ps->res = PQexecPrepared(pc->pg, ps->name, ps->nparams, ps->vals, NULL,
                                 NULL, 0);
    }
    return took(ps);
}

/* The answer in res, taken: its rows to walk and the rows it wrote, or
 * its failure (message set, res cleared). */
static int took(pctl_pg_stmt *ps)
{
    pctl_pg_conn *pc = PC(ps->base.c);
    ExecStatusType st;
    int rc;

    ps->fresh = 0;
    st = PQresultStatus(ps->res);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        rc = pctl_pg_err(pc, ps->res, pctl_query_name(ps->base.q));
        PQclear(ps->res);
        ps->res = NULL;
        return rc;
    }
    ps->nrows = st == PGRES_TUPLES_OK ? PQntuples(ps->res) : 0;
    ps->changed = atoll(PQcmdTuples(ps->res));
    /* A SELECT's count is of rows read, not written. */
    if (strncmp(PQcmdStatus(ps->res), "SELECT", 6) == 0)
        ps->changed = 0;
    pc->own += ps->changed;
    ps->row = -1;
    return 0;
}

int pctl_pg_send_read(pctl_stmt *s)
{
    pctl_pg_stmt *ps = PS(s);
    pctl_pg_conn *pc = PC(s->c);
    int rc;

    /* Outside a transaction it runs at its step, as any statement.
     * Inside one it is sent (pctl_q_sends_ahead), prepared first if it
     * was not in this session. */
    if (!pc->in_tx || ps->res)
        return 0;
    if (pc->nsent >= SENT_MAX && (rc = pctl_pg_drain(pc)) < 0)
        return rc;
    if (ps->gen != pc->gen && (rc = prepare_in_session(ps)) < 0)
        return rc;
    if ((rc = pctl_pg_send(pc, ps, NULL, PCTL_PG_WAITED)) < 0)
        return rc;
    ps->pending = 1;
    return 0;
}

int pctl_pg_step(pctl_stmt *s)
{
    pctl_pg_stmt *ps = PS(s);
    int rc;

    /* Sent ahead: answered now, with everything sent before it. */
    if (ps->pending && (rc = pctl_pg_drain(PC(s->c))) < 0) {
        PQclear(ps->res);
        ps->res = NULL;
        ps->fresh = 0;
        return rc;
    }
    if (ps->fresh) {
        if ((rc = took(ps)) < 0)
            return rc;
    } else if (!ps->res && (rc = execute(ps)) < 0) {
        return rc;
    }
    if (ps->row < ps->nrows)
        ps->row++;
    return ps->row < ps->nrows ? PCTL_ROW : PCTL_DONE;
}

static int is_null(pctl_pg_stmt *ps, int col)
{
    return !ps->res || ps->row < 0 || ps->row >= ps->nrows ||
           col >= PQnfields(ps->res) || PQgetisnull(ps->res, ps->row, col);
}

pctl_col_kind pctl_pg_col_type(pctl_stmt *s, int col)
{
    pctl_pg_stmt *ps = PS(s);
    const char *v;

    if (is_null(ps, col))
        return PCTL_COL_NULL;
    switch (PQftype(ps->res, col)) {
    case OID_BOOL:
    case OID_INT2:
    case OID_INT4:
    case OID_INT8:
    case OID_OID:
        return PCTL_COL_INT;
    case OID_FLOAT4:
    case OID_FLOAT8:
        return PCTL_COL_REAL;
    case OID_NUMERIC:
        /* sum() of integers is numeric: an integer while it has no
         * fraction, as SQLite's would be. */
        v = PQgetvalue(ps->res, ps->row, col);
        return strpbrk(v, ".eEN") ? PCTL_COL_REAL : PCTL_COL_INT;
    default:
        return PCTL_COL_TEXT;
    }
}

int64_t pctl_pg_col_i64(pctl_stmt *s, int col)
{
    pctl_pg_stmt *ps = PS(s);
    const char *v;

    if (is_null(ps, col))
        return 0;
    v = PQgetvalue(ps->res, ps->row, col);
    if (PQftype(ps->res, col) == OID_BOOL)
        return v[0] == 't';
    return strtoll(v, NULL, 10);
}

double pctl_pg_col_real(pctl_stmt *s, int col)
{
    pctl_pg_stmt *ps = PS(s);

    return is_null(ps, col) ? 0.0
                            : strtod(PQgetvalue(ps->res, ps->row, col), NULL);
}

const char *pctl_pg_col_text(pctl_stmt *s, int col)
{
    pctl_pg_stmt *ps = PS(s);

    return is_null(ps, col) ? NULL : PQgetvalue(ps->res, ps->row, col);
}

size_t pctl_pg_col_bytes(pctl_stmt *s, int col)
{
    pctl_pg_stmt *ps = PS(s);

    return is_null(ps, col) ? 0 : (size_t)PQgetlength(ps->res, ps->row, col);
}

/* Before the statement has run, its description says (one round trip,
 * kept). */
static const PGresult *shape(pctl_pg_stmt *ps)
{
    pctl_pg_conn *pc = PC(ps->base.c);

    if (ps->res)
        return ps->res;
    if (ps->desc)
        return ps->desc;
    if (ps->gen != pc->gen && prepare_in_session(ps) < 0)
        return NULL;
    ps->desc = PQdescribePrepared(pc->pg, ps->name);
    if (PQresultStatus(ps->desc) != PGRES_COMMAND_OK) {
        PQclear(ps->desc);
        ps->desc = NULL;
    }
    return ps->desc;
}

int pctl_pg_ncols(pctl_stmt *s)
{
    const PGresult *r = shape(PS(s));

    return r ? PQnfields(r) : 0;
}

const char *pctl_pg_col_name(pctl_stmt *s, int col)
{
    const PGresult *r = shape(PS(s));

    return r && col < PQnfields(r) ? PQfname(r, col) : NULL;
}

int64_t pctl_pg_changes(pctl_stmt *s)
{
    return PS(s)->changed;
}
