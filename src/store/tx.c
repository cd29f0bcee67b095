/*
 * tx.c - the store's transactions, over the backend's begin, commit and
 * rollback (sql.h).  What planctl adds is here, the same for every
 * backend: nesting (only the outermost call reaches the database), the
 * serial number the engine's cache checks its copies against, and the
 * frozen clock that makes a transaction one moment.
 */
#include "store/sql.h"
#include "store/store.h"

static void thaw(planctl *p);

static int begin(planctl *p, int64_t at, pctl_tx_kind kind)
{
    int rc;

    if (p->readonly)
        return p->ro_fs ? pctl_db_err(p, PLANCTL_EREADONLY, NULL, "")
                        : pctl_err(p, PLANCTL_EREADONLY,
                                   "database %s was opened read-only", p->path);
    if (!p->conn)
        return pctl_db_unopened(p);
    if (p->rx_began)
        return pctl_err(p, PLANCTL_ERROR,
                        "a write transaction inside a read one");
    /* A rows-only transaction took no write lock (on PostgreSQL): what a
     * write inside it would do is not fenced by it. */
    if (p->tx_depth > 0 && p->tx_rows && kind != PCTL_TX_ROWS)
        return pctl_err(p, PLANCTL_ERROR,
                        "a write transaction inside a rows-only one");
    if (p->tx_depth++ > 0)
        return 0;
    p->tx_rows = kind == PCTL_TX_ROWS;
    p->tx_later = 0;
    p->nended_runs = 0;
    p->tx_serial++;
    p->conn->deadlocked = 0;
    pctl_intr_enter(p);
    rc = p->conn->m->begin(p->conn, kind);
    if (rc < 0) {
        p->tx_depth = 0;
        pctl_intr_leave(p);
        return rc;
    }
    /* A transaction is one moment: a row and its event get the same time
     * (replay and verify compare them); an engine's pass gives the moment
     * it decided at. */
    p->frozen_now = at > 0 ? at : p->now_fn(p->now_data);
    return 0;
}

int pctl_tx_begin(planctl *p)
{
    return begin(p, 0, PCTL_TX_WRITE);
}

int pctl_tx_begin_at(planctl *p, int64_t at)
{
    return begin(p, at, PCTL_TX_WRITE);
}

int pctl_tx_begin_rows(planctl *p)
{
    return begin(p, 0, PCTL_TX_ROWS);
}

int pctl_tx_begin_engine(planctl *p, int64_t at)
{
    return begin(p, at, PCTL_TX_ENGINE);
}

int pctl_tx_begin_admit(planctl *p)
{
    return begin(p, 0, PCTL_TX_ADMIT);
}

int pctl_tx_begin_run(planctl *p)
{
    return begin(p, 0, PCTL_TX_RUN);
}

/* How many times a transaction is made when the server keeps breaking
 * its deadlocks. */
#define TX_TRIES 5

int pctl_tx_again(planctl *p, int rc, int *tries)
{
    return rc == PLANCTL_EBUSY && p->conn && p->conn->deadlocked &&
           ++*tries < TX_TRIES;
}

/* Ends the moment pctl_tx_begin started. */
static void thaw(planctl *p)
{
    p->frozen_now = 0;
}

void pctl_tx_rollback(planctl *p)
{
    if (p->tx_depth == 0)
        return;
    if (--p->tx_depth > 0)
        return;
    thaw(p);
    p->tx_later = 0;
    p->nended_runs = 0;
    p->conn->m->rollback(p->conn);
    p->tx_serial++; /* over: nothing synced in it holds any more */
    pctl_intr_leave(p);
}

int pctl_tx_commit(planctl *p)
{
    int rc;

    if (p->tx_depth == 0)
        return pctl_err(p, PLANCTL_ERROR, "commit without a transaction");
    if (--p->tx_depth > 0)
        return 0;
    thaw(p);
    p->tx_later = 0;
    p->nended_runs = 0;
    /* Deferred events are their owner's to flush before this (journal.c):
     * the commit writes nothing of its own. */
    rc = p->conn->m->commit(p->conn);
    p->tx_serial++; /* over: nothing synced in it holds any more */
    pctl_intr_leave(p);
    return rc;
}

int pctl_tx_read(planctl *p)
{
    int rc = 0;

    if (!p->conn)
        return pctl_db_unopened(p);
    if (p->rx_depth++ == 0 && p->tx_depth == 0) {
        pctl_intr_enter(p);
        if ((rc = p->conn->m->begin(p->conn, PCTL_TX_READ)) < 0) {
            p->rx_depth = 0;
            pctl_intr_leave(p);
        } else {
            p->rx_began = 1;
        }
    }
    return rc;
}

void pctl_tx_read_end(planctl *p)
{
    if (p->rx_depth == 0 || --p->rx_depth > 0 || !p->rx_began)
        return;
    p->rx_began = 0;
    /* Nothing was written: ending it either way is the same. */
    p->conn->m->rollback(p->conn);
    pctl_intr_leave(p);
}

int pctl_tx_end(planctl *p, int rc)
{
    if (rc < 0) {
        pctl_tx_rollback(p);
        return rc;
    }
    return pctl_tx_commit(p);
}
