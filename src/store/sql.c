/*
 * sql.c - what the store builds once above the seam (sql.h): the cache of
 * named statements, their names and text, "run expecting no row", the
 * words of a database failure, and the calls that reach the backend's
 * optional methods.
 */
#include <string.h>

#include "store/sql.h"
#include "store/store.h"

static const char *const query_names[] = {
#define X(name) #name,
    PCTL_QUERIES(X)
#undef X
};

const char *pctl_query_name(pctl_query q)
{
    return (unsigned)q < PCTL_Q__COUNT ? query_names[q] : "statement";
}

/* Finds "-- name: NAME\n"; the statement runs to the next "-- name:"
 * line or the end. */
const char *pctl_query_text(const char *queries, pctl_query q, size_t *len)
{
    const char *name = query_names[q];
    size_t nlen = strlen(name);
    const char *s = queries;

    while ((s = strstr(s, "-- name: ")) != NULL) {
        s += 9;
        if (strncmp(s, name, nlen) == 0 &&
            (s[nlen] == '\n' || s[nlen] == '\r')) {
            const char *start = s + nlen;
            const char *end = strstr(start, "-- name: ");

            if (!end)
                end = start + strlen(start);
            *len = (size_t)(end - start);
            return start;
        }
    }
    return NULL;
}

int pctl_db_unopened(planctl *p)
{
    return pctl_err(p, PLANCTL_EINVAL,
                    "this handle's database did not open (planctl_open "
                    "failed); close it with planctl_close()");
}

/* pctl_q and pctl_q_rebind: unbind says whether to clear the parameters
 * of a statement already prepared. */
static pctl_stmt *get(planctl *p, pctl_query q, int unbind)
{
    pctl_stmt *s = p->stmts[q];
    const char *sql;
    size_t len;

    if (s) {
        s->m->reset(s, unbind);
        return s;
    }
    if (!p->conn) {
        pctl_db_unopened(p);
        return NULL;
    }
    sql = pctl_query_text(p->conn->m->queries, q, &len);
    if (!sql) {
        pctl_err(p, PLANCTL_ERROR, "query %s is missing from %s.sql",
                 query_names[q], p->conn->m->name);
        return NULL;
    }
    if (p->conn->m->prepare(&s, p->conn, q, sql, len) < 0)
        return NULL;
    p->stmts[q] = s;
    return s;
}

pctl_stmt *pctl_q(planctl *p, pctl_query q)
{
    return get(p, q, 1);
}

pctl_stmt *pctl_q_rebind(planctl *p, pctl_query q)
{
    return get(p, q, 0);
}

pctl_stmt *pctl_q_sent(planctl *p, pctl_query q)
{
    return p->stmts[q];
}

int pctl_q_sends_ahead(const planctl *p)
{
    return p->tx_depth > 0 && p->conn && p->conn->m->send;
}

int pctl_q_err(const planctl *p)
{
    return p->errcode < 0 ? p->errcode : PLANCTL_ERROR;
}

int pctl_q_exec(pctl_stmt *s)
{
    int rc = s->m->step(s);

    s->m->reset(s, 0);
    return rc < 0 ? rc : 0;
}

int pctl_q_send(pctl_stmt *s)
{
    return s->m->send ? s->m->send(s) : 0;
}

int pctl_q_later_on(const planctl *p)
{
    return p->tx_later && p->tx_depth > 0 && p->conn && p->conn->m->step_later;
}

int pctl_q_exec_later(pctl_stmt *s, int64_t expect)
{
    planctl *p = s->c->p;
    int64_t n;
    int rc;

    if (pctl_q_later_on(p)) {
        rc = s->m->step_later(s, expect);
        s->m->reset(s, 0);
        return rc;
    }
    rc = s->m->step(s);
    n = s->m->changes(s);
    s->m->reset(s, 0);
    if (rc < 0)
        return rc;
    if (expect >= 0 && n != expect)
        return pctl_err(p, PLANCTL_ESTALE, "%s wrote %lld rows, not %lld",
                        pctl_query_name(s->q), (long long)n, (long long)expect);
    return 0;
}

int pctl_q_fail(pctl_stmt *s, int rc)
{
    if (rc < 0)
        return rc;
    return pctl_err(s->c->p, PLANCTL_ERROR, "%s: %s", pctl_query_name(s->q),
                    rc == PCTL_ROW ? "a row where none was expected"
                                   : "no row where one was expected");
}

const char *pctl_db_detail(pctl_stmt *s)
{
    const char *msg = planctl_errmsg(s->c->p), *name = pctl_query_name(s->q);
    size_t n = strlen(name);

    if (strncmp(msg, name, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        return msg + n + 2;
    return msg;
}

void pctl_q_finalize_all(planctl *p)
{
    int i;

    for (i = 0; i < PCTL_Q__COUNT; i++) {
        if (p->stmts[i])
            p->conn->m->finalize(p->stmts[i]);
        p->stmts[i] = NULL;
    }
}

int pctl_db_err(planctl *p, int rc, const char *what, const char *detail)
{
    /* A wait for the lock, or a statement, that planctl_interrupt()
     * stopped: whatever the driver's words, the caller's doing. */
    if (pctl_intr_pending(p) && rc != PLANCTL_ENOMEM)
        return pctl_err(p, PLANCTL_EINTR,
                        "%s%son database %s: interrupted (planctl_interrupt)",
                        what ? what : "", what ? " " : "",
                        p->path ? p->path : "");
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
    /* A driver's words for a file it may not write ("attempt to write a
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

/* ---- the backend's optional and connection-level methods ---- */

void pctl_db_ident_note(planctl *p)
{
    if (p->conn && p->conn->m->ident_note)
        p->conn->m->ident_note(p->conn);
}

int pctl_db_ident_check(planctl *p)
{
    return p->conn && p->conn->m->ident_check ? p->conn->m->ident_check(p->conn)
                                              : 0;
}

int pctl_db_changes(pctl_db_token *out, planctl *p, unsigned which)
{
    if (!p->conn)
        return pctl_db_unopened(p);
    return p->conn->m->token(out, p->conn, which);
}

int pctl_data_version(int64_t *out, planctl *p)
{
    pctl_db_token t;
    int rc = pctl_db_changes(&t, p, PCTL_TOKEN_OTHERS);

    if (rc == 0)
        *out = t.others;
    return rc;
}

int pctl_db_heard(int64_t *out, planctl *p)
{
    pctl_db_token t;
    int rc = pctl_db_changes(&t, p, PCTL_TOKEN_OTHERS);

    if (rc == 0)
        *out = t.heard;
    return rc;
}
