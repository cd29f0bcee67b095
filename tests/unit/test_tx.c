/*
 * test_tx.c - transactions through one API (src/store/tx.c): a read
 * transaction is one snapshot whatever other handles commit meanwhile,
 * nests inside a read or a write without beginning anything, and refuses
 * a write begun inside it; the write transaction's depth is unchanged.
 * A rows-only transaction (PCTL_TX_ROWS) refuses a write inside it too,
 * and an engine's session settings are given back when it leaves.
 *
 * Rows are counted through each handle's own connection, inside its
 * transaction, by a statement of the test's own given to the backend
 * (sql.h), so the same checks run on PostgreSQL (unit.pg.test_tx).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#ifdef PLANCTL_WITH_POSTGRES
#include "store/postgres/pg.h"
#endif
#include "core/alloc.h"
#include "planctl.h"
#include "store/sql.h"
#include "store/sqlite/sqlite.h"
#include "store/store.h"
#include "store_fixture.h"
#include "testutil.h"

typedef struct fixture {
    char *dir, *path;
    planctl *p, *other; /* two handles on one file */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    f->dir = tu_mkdtemp();
    {
        char *file = tu_fmt("%s/tx.db", f->dir);

        f->path = tu_db_target(file);
        free(file);
    }
    assert_int_equal(planctl_open(&f->p, f->path, NULL), 0);
    assert_int_equal(planctl_open(&f->other, f->path, NULL), 0);
    assert_int_equal(
        planctl_definition_apply(NULL, f->p, ZK_V2, strlen(ZK_V2), "zk.json"),
        0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    planctl_close(f->p);
    planctl_close(f->other);
    tu_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

/* The first column of sql's one row, read on p's own connection.  The
 * statement's number is past the named ones, so it is never one the
 * handle has cached, and new at each call: PostgreSQL's backend leaves a
 * statement finalized inside a transaction prepared in the session (its
 * name is the number's), which planctl itself never does. */
static int64_t count_on(planctl *p, const char *sql)
{
    static int next = PCTL_Q__COUNT;
    pctl_query q = (pctl_query)++next;
    pctl_stmt *s;
    int64_t n;

    if (p->conn->m->prepare(&s, p->conn, q, sql, strlen(sql)) != 0)
        fail_msg("%s: %s", sql, planctl_errmsg(p));
    if (p->conn->m->step(s) != PCTL_ROW)
        fail_msg("%s: %s", sql, planctl_errmsg(p));
    n = p->conn->m->col_i64(s, 0);
    p->conn->m->finalize(s);
    return n;
}

static int64_t instances(planctl *p)
{
    return count_on(p, "SELECT count(*) FROM instances");
}

static int64_t definitions(planctl *p)
{
    return count_on(p, "SELECT count(*) FROM definitions");
}

/* Whether p's connection is inside a transaction, as its driver says. */
static int in_tx(planctl *p)
{
#ifdef PLANCTL_WITH_POSTGRES
    if (tu_on_pg())
        return PQtransactionStatus(((pctl_pg_conn *)p->conn)->pg) !=
               PQTRANS_IDLE;
#endif
    return !sqlite3_get_autocommit(pctl_sqlite_db(p));
}

static void create(planctl *p, const char *name)
{
    int64_t run;

    assert_int_equal(
        planctl_instance_create(&run, p, name, "zookeeper", "0.2.0", NULL, 0),
        0);
}

/* What another handle commits during a read transaction is not seen in
 * it, and is seen after. */
static void test_read_is_one_snapshot(void **state)
{
    fixture *f = *state;

    assert_int_equal(pctl_tx_read(f->p), 0);
    assert_int_equal(instances(f->p), 0);
    create(f->other, "zk");
    assert_int_equal(instances(f->p), 0);
    assert_true(in_tx(f->p));
    pctl_tx_read_end(f->p);
    assert_false(in_tx(f->p));
    assert_int_equal(instances(f->p), 1);
}

/* Reads nest: only the outermost ends the transaction. */
static void test_reads_nest(void **state)
{
    fixture *f = *state;

    assert_int_equal(pctl_tx_read(f->p), 0);
    assert_int_equal(pctl_tx_read(f->p), 0);
    pctl_tx_read_end(f->p);
    assert_true(in_tx(f->p));
    pctl_tx_read_end(f->p);
    assert_false(in_tx(f->p));
    /* An end too many changes nothing. */
    pctl_tx_read_end(f->p);
    assert_int_equal(f->p->rx_depth, 0);
}

/* Inside a write transaction a read begins and ends nothing: the write's
 * own snapshot serves, and its commit keeps what it wrote. */
static void test_read_inside_write(void **state)
{
    fixture *f = *state;

    assert_int_equal(pctl_tx_begin(f->p), 0);
    assert_int_equal(
        planctl_definition_apply(NULL, f->p, ZK_V3, strlen(ZK_V3), "zk3.json"),
        0);
    assert_int_equal(pctl_tx_read(f->p), 0);
    assert_int_equal(definitions(f->p), 2);
    pctl_tx_read_end(f->p);
    assert_true(in_tx(f->p));
    assert_int_equal(f->p->tx_depth, 1);
    assert_int_equal(definitions(f->other), 1);
    assert_int_equal(pctl_tx_end(f->p, 0), 0);
    assert_int_equal(definitions(f->other), 2);
}

/* A write cannot begin inside a read: the read's snapshot may be stale,
 * and SQLite could not take the lock without a deadlock risk. */
static void test_no_write_inside_read(void **state)
{
    fixture *f = *state;

    assert_int_equal(pctl_tx_read(f->p), 0);
    assert_int_equal(pctl_tx_begin(f->p), PLANCTL_ERROR);
    assert_string_equal(planctl_errmsg(f->p),
                        "a write transaction inside a read one");
    assert_int_equal(f->p->tx_depth, 0);
    pctl_tx_read_end(f->p);
    /* Afterwards writes go on as ever. */
    create(f->p, "zk");
    assert_int_equal(instances(f->other), 1);
}

/* A write cannot begin inside a rows-only transaction (an engine's
 * heartbeat), which took no write lock on PostgreSQL; the other way
 * round nests as any write does. */
static void test_no_write_inside_rows(void **state)
{
    fixture *f = *state;

    assert_int_equal(pctl_tx_begin_rows(f->p), 0);
    assert_int_equal(pctl_tx_begin(f->p), PLANCTL_ERROR);
    assert_string_equal(planctl_errmsg(f->p),
                        "a write transaction inside a rows-only one");
    assert_int_equal(f->p->tx_depth, 1);
    assert_int_equal(pctl_tx_begin_rows(f->p), 0);
    assert_int_equal(pctl_tx_end(f->p, 0), 0);
    assert_int_equal(pctl_tx_end(f->p, 0), 0);
    assert_int_equal(f->p->tx_depth, 0);
    assert_int_equal(pctl_tx_begin(f->p), 0);
    assert_int_equal(pctl_tx_begin_rows(f->p), 0);
    assert_int_equal(pctl_tx_end(f->p, 0), 0);
    assert_int_equal(pctl_tx_end(f->p, 0), 0);
    /* Afterwards writes go on as ever. */
    create(f->p, "zk");
    assert_int_equal(instances(f->other), 1);
}

/* A setting of p's session, in milliseconds (PostgreSQL). */
static int64_t setting_ms(planctl *p, const char *name)
{
    char sql[160];

    snprintf(sql, sizeof sql,
             "SELECT (extract(epoch FROM current_setting('%s')::interval) "
             "* 1000)::bigint",
             name);
    return count_on(p, sql);
}

/* An engine among several bounds its session's waits by its TTL (a lock:
 * TTL/12, so that a pass waiting never makes its heartbeat late; idle in
 * a transaction: TTL/4); when it leaves, the handle's own settings come
 * back, for whatever the embedder does with the handle next.  Several
 * engines are PostgreSQL's: SQLite keeps one per database. */
static void test_engine_session_given_back(void **state)
{
    fixture *f = *state;
    int64_t busy, idle;
    char *said = NULL;

    if (!pctl_fleet_supported(f->p))
        return;
    busy = setting_ms(f->p, "lock_timeout");
    idle = setting_ms(f->p, "idle_in_transaction_session_timeout");
    assert_int_equal(busy, 5000); /* PLANCTL_OPEN_OPTIONS_INIT's */
    assert_int_equal(pctl_fleet_join(f->p, "e", 12000, 0, &said), 0);
    pctl_free(said);
    assert_int_equal(setting_ms(f->p, "lock_timeout"), 1000);
    assert_int_equal(setting_ms(f->p, "idle_in_transaction_session_timeout"),
                     3000);
    assert_int_equal(pctl_fleet_leave(f->p), 0);
    assert_int_equal(setting_ms(f->p, "lock_timeout"), busy);
    assert_int_equal(setting_ms(f->p, "idle_in_transaction_session_timeout"),
                     idle);
}

/* The claims of one engine's pass, which it holds until it commits. */
static size_t claim(planctl *p, int64_t room, int64_t **ids)
{
    size_t n = 0;

    assert_int_equal(pctl_fleet_claim(p, room, 0, ids, &n), 0);
    return n;
}

static int64_t token(planctl *p)
{
    int64_t v = 0;

    assert_int_equal(planctl_data_version(&v, p), 0);
    return v;
}

/*
 * Engines write beside each other (PCTL_TX_ENGINE takes the write lock
 * shared on PostgreSQL): a second engine's pass begins and claims while
 * the first's is open, and gets other runs (those the first is claiming
 * are skipped, not waited for); a create commits beside them (an
 * admission writes only rows it inserts), and so does a cancel of a run
 * neither pass holds (PCTL_TX_RUN, under the run's row lock) and an
 * embedder's change of one of its steps, a set, a trigger and a delete
 * (under the instance's), while a
 * cancel of a run a pass is claiming waits for that pass (the claim
 * locked the row) and is refused, naming the run; any other writer still
 * waits for both, and is refused once its busy timeout has passed.  Each commit
 * moves the change token, and an engine's counter is folded into the
 * token's main count when it leaves, so the token only grows.  Without the
 * shared lock the second pass waits for the first (EBUSY after TTL/12);
 * without SKIP LOCKED its claim does.
 */
static void test_engines_write_side_by_side(void **state)
{
    fixture *f = *state;
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    planctl *cli = NULL;
    int64_t *a = NULL, *b = NULL, *none = NULL, t0, t1, t2, t3, run;
    char *said = NULL;
    size_t na, nb, i, j;

    if (!pctl_fleet_supported(f->p))
        return;
    create(f->p, "z1");
    create(f->p, "z2");
    create(f->p, "z3");
    create(f->p, "z4");
    o.busy_timeout_ms = 200;
    assert_int_equal(planctl_open(&cli, f->path, &o), 0);
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);
    assert_int_equal(pctl_fleet_join(f->other, "e2", 12000, 0, &said), 0);
    pctl_free(said);
    t0 = token(cli);

    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    na = claim(f->p, 2, &a);
    assert_int_equal(na, 2);
    assert_int_equal(pctl_engine_pass_begin(f->other, 0, 0), 0);
    nb = claim(f->other, 4, &b);
    assert_int_equal(nb, 2);
    for (i = 0; i < na; i++)
        for (j = 0; j < nb; j++)
            assert_true(a[i] != b[j]);
    /* A create commits beside them (it writes only rows it inserts), a
     * cancel of a run nobody holds too; a cancel of a run being claimed
     * waits for its row; any other writer waits for the passes, as for
     * any writer before it. */
    assert_int_equal(
        planctl_instance_create(&run, cli, "z6", "zookeeper", "0.2.0", NULL, 0),
        0);
    assert_int_equal(
        planctl_instance_create(&run, cli, "z7", "zookeeper", "0.2.0", NULL, 0),
        0);
    assert_int_equal(planctl_run_cancel(NULL, cli, "z7", "test"), 0);
    {
        /* A set commits beside them too (under the instance's row lock),
         * admitting an update run that nobody holds yet. */
        planctl_param nodes = {"NODE_COUNT", "5"};

        assert_int_equal(planctl_instance_set(&run, cli, "z7", &nodes, 1), 0);
    }
    {
        planctl_cancel_options co = PLANCTL_CANCEL_OPTIONS_INIT;
        char held[8];

        for (i = 1; i <= 4; i++) {
            snprintf(held, sizeof held, "z%zu", i);
            char *sql = tu_fmt("SELECT count(*) FROM runs r JOIN instances "
                               "i ON i.id = r.instance_id WHERE i.name = "
                               "'%s' AND r.id = %lld",
                               held, (long long)a[0]);
            int64_t n = count_on(cli, sql);

            free(sql);
            if (n)
                break;
        }
        co.run = a[0];
        assert_int_equal(planctl_run_cancel_opts(NULL, cli, held, &co),
                         PLANCTL_EBUSY);
        assert_non_null(strstr(planctl_errmsg(cli), "is being changed by "
                                                    "another writer"));
    }
    /* A trigger commits beside them too (under the instance's row lock):
     * here it finds the run active, which the passes do not hold. */
    assert_int_equal(planctl_plan_trigger(&run, cli, "z6", "deploy", NULL),
                     PLANCTL_ECONFLICT);
    /* So does a delete of an instance with no active run (under the
     * instance's row lock). */
    assert_int_equal(
        planctl_instance_create(&run, cli, "z8", "zookeeper", "0.2.0", NULL, 0),
        0);
    assert_int_equal(planctl_run_cancel(NULL, cli, "z8", "test"), 0);
    assert_int_equal(planctl_instance_delete(&run, cli, "z8", 1), 0);
    assert_int_equal(count_on(cli, "SELECT count(*) FROM instances "
                                   "WHERE name = 'z8'"),
                     0);
    {
        /* An embedder's change of one step (planctl_transition), under
         * its run's row lock: beside the passes for a run neither holds
         * (z6's), refused for one being claimed (its row locked). */
        int64_t free_step = count_on(
            cli, "SELECT min(s.id) FROM steps s JOIN runs r ON r.id = "
                 "s.run_id JOIN instances i ON i.id = r.instance_id WHERE "
                 "i.name = 'z6'");
        char *sql = tu_fmt("SELECT min(id) FROM steps WHERE run_id = %lld",
                           (long long)a[0]);
        int64_t held_step = count_on(cli, sql);

        free(sql);
        assert_int_equal(planctl_transition(cli, PLANCTL_ENTITY_STEP, free_step,
                                            PLANCTL_STATUS_PENDING,
                                            PLANCTL_STATUS_IN_PROGRESS,
                                            "by hand", "test"),
                         0);
        assert_int_equal(planctl_transition(cli, PLANCTL_ENTITY_STEP, held_step,
                                            PLANCTL_STATUS_PENDING,
                                            PLANCTL_STATUS_IN_PROGRESS,
                                            "by hand", "test"),
                         PLANCTL_EBUSY);
        assert_non_null(strstr(planctl_errmsg(cli), "is being changed by "
                                                    "another writer"));
    }
    assert_int_equal(
        planctl_definition_apply(NULL, cli, ZK_V2, strlen(ZK_V2), "zk.json"),
        PLANCTL_EBUSY);
    assert_int_equal(pctl_engine_pass_end(f->other, 0), 0);
    /* The other's are held now; z6's and z7's runs, committed beside, are
     * not. */
    assert_int_equal(claim(f->p, 4, &none), 2);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    assert_int_equal(count_on(cli, "SELECT count(DISTINCT run_id) FROM claims "
                                   "WHERE engine_id IS NOT NULL"),
                     6);
    t1 = token(cli);
    assert_true(t1 >= t0 + 2);

    create(f->p, "z5"); /* a writer alone: exactly one more */
    t2 = token(cli);
    assert_int_equal(t2, t1 + 1);
    assert_int_equal(pctl_fleet_leave(f->p), 0);
    t3 = token(cli);
    assert_true(t3 > t2);
    assert_int_equal(count_on(cli, "SELECT count(*) FROM meta "
                                   "WHERE key LIKE 'commits.%'"),
                     1); /* e2's; e1's was folded in when it left */
    assert_int_equal(pctl_fleet_leave(f->other), 0);
    assert_true(token(cli) > t3);
    pctl_free(a);
    pctl_free(b);
    pctl_free(none);
    planctl_close(cli);
}

/* A statement of the test's own on p's connection, prepared (see
 * count_on for its number). */
static pctl_stmt *own_stmt(planctl *p, const char *sql)
{
    static int next = PCTL_Q__COUNT + 1000;
    pctl_stmt *s;

    if (p->conn->m->prepare(&s, p->conn, (pctl_query)++next, sql,
                            strlen(sql)) != 0)
        fail_msg("%s: %s", sql, planctl_errmsg(p));
    return s;
}

/* An engine's pass sends its writes without waiting for them (pipeline
 * mode, on PostgreSQL): a read after them sees them, a write that
 * changed other than the rows it should fails the commit, not ESTALE
 * (an engine would take it for its fence lost), and nothing of the pass
 * is written; a write that fails fails the next statement waited for. */
static void test_pass_writes_sent_later(void **state)
{
    fixture *f = *state;
    pctl_stmt *one, *none, *bad, *read;
    char *said = NULL;

    if (!pctl_fleet_supported(f->p))
        return;
    create(f->p, "z1");
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);

    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    assert_true(pctl_q_later_on(f->p));
    one = own_stmt(f->p, "UPDATE steps SET message = 'later' "
                         "WHERE id = (SELECT min(id) FROM steps)");
    none = own_stmt(f->p, "UPDATE steps SET message = 'later' WHERE id = -1");
    assert_int_equal(pctl_q_exec_later(one, 1), 0);
    assert_int_equal(
        count_on(f->p, "SELECT count(*) FROM steps WHERE message = 'later'"),
        1);
    assert_int_equal(pctl_q_exec_later(one, 1), 0);
    assert_int_equal(pctl_q_exec_later(none, 1), 0); /* not checked yet */
    assert_int_equal(pctl_engine_pass_end(f->p, 0), PLANCTL_ECONFLICT);
    assert_non_null(strstr(planctl_errmsg(f->p), "wrote 0 rows, not 1"));
    assert_false(in_tx(f->p));
    assert_int_equal(
        count_on(f->other,
                 "SELECT count(*) FROM steps WHERE message = 'later'"),
        0);

    /* A write that fails: the next read says so, the pass rolls back. */
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    bad = own_stmt(f->p, "UPDATE steps SET max_attempts = 0");
    read = own_stmt(f->p, "SELECT count(*) FROM steps");
    assert_int_equal(pctl_q_exec_later(one, 1), 0);
    assert_int_equal(pctl_q_exec_later(bad, -1), 0);
    assert_true(f->p->conn->m->step(read) < 0);
    assert_non_null(strstr(planctl_errmsg(f->p), "max_attempts"));
    assert_true(pctl_engine_pass_end(f->p, PLANCTL_ERROR) < 0);
    assert_false(in_tx(f->p));
    assert_int_equal(
        count_on(f->p, "SELECT count(*) FROM steps WHERE message = 'later'"),
        0);
    f->p->conn->m->finalize(one);
    f->p->conn->m->finalize(none);
    f->p->conn->m->finalize(bad);
    f->p->conn->m->finalize(read);
    assert_int_equal(pctl_fleet_leave(f->p), 0);
}

#ifdef PLANCTL_WITH_POSTGRES
#define NSENT(p) ((int)((pctl_pg_conn *)(p)->conn)->nsent)
#else
#define NSENT(p) 0
#endif

/* Reads sent ahead (pctl_q_send) are answered together at the first
 * one's step, each with its own rows, after the writes sent before
 * them; one whose failure nobody stepped into still fails the commit. */
static void test_reads_sent_ahead(void **state)
{
    fixture *f = *state;
    pctl_stmt *w, *w8, *missed, *a, *b, *bad;
    char *said = NULL;

    if (!pctl_fleet_supported(f->p))
        return;
    create(f->p, "z1");
    create(f->p, "z2");
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);

    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    w = own_stmt(f->p, "UPDATE instances SET updated_at = 7 "
                       "WHERE name = 'z2'");
    a = own_stmt(f->p, "SELECT count(*) FROM instances");
    b = own_stmt(f->p, "SELECT updated_at FROM instances WHERE name = 'z2'");
    bad = own_stmt(f->p, "SELECT 1 / (count(*) - count(*)) FROM instances");
    w8 = own_stmt(f->p, "UPDATE instances SET updated_at = 8 "
                        "WHERE name = 'z1'");
    missed = own_stmt(f->p, "UPDATE instances SET updated_at = 9 "
                            "WHERE name = 'nobody'");
    assert_int_equal(pctl_q_exec_later(w, 1), 0);
    assert_int_equal(pctl_q_send(a), 0);
    assert_int_equal(pctl_q_send(b), 0);
    /* w's form that checks its count, prepared ahead of it (the first
     * time in the session), w, a and b. */
    assert_int_equal(NSENT(f->p), 4);
    /* b first: every answer is read, each into its own statement. */
    assert_int_equal(f->p->conn->m->step(b), PCTL_ROW);
    assert_int_equal(f->p->conn->m->col_i64(b, 0), 7);
    assert_int_equal(NSENT(f->p), 0);
    assert_int_equal(f->p->conn->m->step(a), PCTL_ROW);
    assert_int_equal(f->p->conn->m->col_i64(a, 0), 2);
    assert_int_equal(f->p->conn->m->step(a), PCTL_DONE);
    f->p->conn->m->reset(a, 1);
    f->p->conn->m->reset(b, 1);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    assert_int_equal(
        count_on(f->other,
                 "SELECT count(*) FROM instances WHERE updated_at = 7"),
        1);

    /* A read sent ahead and taken again (reset) before its step: the
     * answers are read then, and a count that missed among them (the
     * server failed it, and what came after it) still fails the
     * commit. */
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    assert_int_equal(pctl_q_exec_later(w8, 1), 0);
    assert_int_equal(pctl_q_exec_later(missed, 1), 0);
    assert_int_equal(pctl_q_send(a), 0);
    f->p->conn->m->reset(a, 1);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), PLANCTL_ERROR);
    assert_non_null(strstr(planctl_errmsg(f->p), "had failed"));
    assert_false(in_tx(f->p));
    assert_int_equal(
        count_on(f->other,
                 "SELECT count(*) FROM instances WHERE updated_at = 8"),
        0);

    /* One that failed on the server, likewise. */
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    assert_int_equal(pctl_q_exec_later(w, 1), 0);
    assert_int_equal(pctl_q_send(bad), 0);
    f->p->conn->m->reset(bad, 1);
    assert_true(pctl_engine_pass_end(f->p, 0) < 0);
    assert_false(in_tx(f->p));
    f->p->conn->m->finalize(w);
    f->p->conn->m->finalize(a);
    f->p->conn->m->finalize(b);
    f->p->conn->m->finalize(bad);
    f->p->conn->m->finalize(w8);
    f->p->conn->m->finalize(missed);
    assert_int_equal(pctl_fleet_leave(f->p), 0);
}

/* Round trips of the rest of an open pass that writes one row with s
 * (sent later, its count checked) and commits. */
static uint64_t write_trips(planctl *p, pctl_stmt *s)
{
    pctl_pg_conn *pc = (pctl_pg_conn *)p->conn;
    uint64_t rt = pc->round_trips;

    assert_int_equal(pctl_q_exec_later(s, 1), 0);
    assert_int_equal(pctl_engine_pass_end(p, 0), 0);
    return pc->round_trips - rt;
}

/* The server checks the counts of rows of a pass's writes, so its COMMIT
 * follows them in one round trip, the check's form prepared in that same
 * one the first time; a write that cannot be wrapped so (a RETURNING of
 * its own) is checked by the client, before COMMIT is sent, in the same
 * words. */
static void test_counts_checked_by_server(void **state)
{
    fixture *f = *state;
    pctl_pg_conn *pc;
    pctl_stmt *one, *ret, *none;
    uint64_t rt;
    char *said = NULL;

    if (!pctl_fleet_supported(f->p))
        return;
    pc = (pctl_pg_conn *)f->p->conn;
    create(f->p, "z1");
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);
    one = own_stmt(f->p, "UPDATE steps SET message = 'checked' "
                         "WHERE id = (SELECT min(id) FROM steps);");
    ret = own_stmt(f->p, "UPDATE steps SET message = 'client' "
                         "WHERE id = (SELECT max(id) FROM steps) RETURNING id");
    none = own_stmt(f->p, "UPDATE steps SET message = 'client' WHERE id = -1 "
                          "RETURNING id");

    /* The first time prepares the pass's statements (its fence's read
     * among them), and in the last round trip the check's form. */
    for (int i = 0; i < 2; i++) {
        rt = pc->round_trips;
        assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
        if (i == 1)
            assert_int_equal(pc->round_trips - rt, 1); /* BEGIN, fence */
        assert_int_equal(write_trips(f->p, one), 1);
    }
    assert_int_equal(
        count_on(f->other,
                 "SELECT count(*) FROM steps WHERE message = 'checked'"),
        1);

    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    assert_int_equal(write_trips(f->p, ret), 2);
    assert_int_equal(
        count_on(f->other,
                 "SELECT count(*) FROM steps WHERE message = 'client'"),
        1);

    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    assert_int_equal(pctl_q_exec_later(one, 1), 0);
    assert_int_equal(pctl_q_exec_later(none, 1), 0);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), PLANCTL_ECONFLICT);
    assert_non_null(strstr(planctl_errmsg(f->p), "wrote 0 rows, not 1"));
    assert_false(in_tx(f->p));

    f->p->conn->m->finalize(one);
    f->p->conn->m->finalize(ret);
    f->p->conn->m->finalize(none);
    assert_int_equal(pctl_fleet_leave(f->p), 0);
}

/* One row of step_set_status, sent later: step id from -> to. */
static void step_row(planctl *p, int64_t id, const char *from, const char *to,
                     const char *message)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_step_set_status);

    assert_non_null(st);
    pctl_bind_i64(st, 1, id);
    pctl_bind_text(st, 2, from);
    pctl_bind_text(st, 3, to);
    pctl_bind_i64(st, 4, 1000);
    pctl_bind_text(st, 5, message);
    pctl_bind_i64(st, 6, 0);
    pctl_bind_i64(st, 9, 0);
    pctl_bind_i64(st, 10, 0);
    assert_int_equal(pctl_q_exec_later(st, 1), 0);
}

static void event_row(planctl *p, const char *message)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_event_insert_values);

    assert_non_null(st);
    pctl_bind_i64(st, 1, 1000);
    pctl_bind_text(st, 6, "engine");
    pctl_bind_text(st, 10, message);
    pctl_bind_text(st, 11, "engine");
    assert_int_equal(pctl_q_exec_later(st, -1), 0);
}

/* On PostgreSQL an engine's pass gathers the rows of a statement that has
 * a set form and sends them as one: two rows of one step are not
 * gathered together (the first are sent before the second row), text
 * with quotes, backslashes, braces and commas and NULL arrive as they
 * were, events keep their order, a missed compare-and-set among gathered
 * rows fails the commit and writes nothing, and a rolled back pass
 * sends nothing it gathered. */
static void test_rows_gathered(void **state)
{
    fixture *f = *state;
    pctl_pg_conn *pc;
    int64_t s1, s2, s3;
    char *said = NULL;
    const char *odd = "say \"hi\" \\ {a,b} NULL, 'q'";

    if (!pctl_fleet_supported(f->p))
        return;
    pc = (pctl_pg_conn *)f->p->conn;
    create(f->p, "z1");
    s1 = count_on(f->p, "SELECT min(id) FROM steps");
    s2 = count_on(f->p, "SELECT min(id) FROM steps WHERE id > "
                        "(SELECT min(id) FROM steps)");
    s3 = count_on(f->p, "SELECT max(id) FROM steps");
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);
    /* The statements prepared first (a statement prepared in a pass
     * sends what was gathered before it: a round trip). */
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    event_row(f->p, "prepared");
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);

    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    step_row(f->p, s1, "PENDING", "IN_PROGRESS", odd);
    step_row(f->p, s2, "PENDING", "IN_PROGRESS", NULL);
    step_row(f->p, s3, "PENDING", "IN_PROGRESS", "three");
    assert_int_equal(pc->nsent, 0);
    assert_int_equal(pc->ngathered, 1);
    assert_int_equal(pc->nkeys, 3);
    step_row(f->p, s1, "IN_PROGRESS", "COMPLETE", odd);
    /* The three, as one statement, after its form that checks the count
     * (prepared ahead of it the first time in the session). */
    assert_int_equal(pc->nsent, 2);
    assert_int_equal(pc->nkeys, 1);
    event_row(f->p, "gathered 1");
    event_row(f->p, "gathered 2");
    event_row(f->p, "gathered 3");
    assert_int_equal(pc->ngathered, 2);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    assert_int_equal(pc->ngathered, 0);
    assert_int_equal(
        count_on(f->other,
                 "SELECT count(*) FROM steps WHERE status = 'COMPLETE' AND "
                 "message = 'say \"hi\" \\ {a,b} NULL, ''q'''"),
        1);
    assert_int_equal(count_on(f->other,
                              "SELECT count(*) FROM steps WHERE status = "
                              "'IN_PROGRESS' AND message IS NULL"),
                     1);
    assert_int_equal(count_on(f->other,
                              "SELECT count(*) FROM steps WHERE status = "
                              "'IN_PROGRESS' AND message = 'three'"),
                     1);
    assert_int_equal(count_on(f->other,
                              "SELECT count(*) FROM events WHERE message LIKE "
                              "'gathered %'"),
                     3);
    assert_int_equal(
        count_on(f->other,
                 "SELECT count(*) FROM (SELECT message, lag(message) OVER "
                 "(ORDER BY seq) AS prev FROM events WHERE message LIKE "
                 "'gathered %') AS x WHERE prev > message"),
        0);

    /* A row whose compare-and-set misses, among others: nothing. */
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    step_row(f->p, s3, "IN_PROGRESS", "COMPLETE", "not");
    step_row(f->p, s2, "PENDING", "COMPLETE", "not");
    assert_int_equal(pctl_engine_pass_end(f->p, 0), PLANCTL_ECONFLICT);
    assert_non_null(strstr(planctl_errmsg(f->p), "wrote 1 rows, not 2"));
    assert_false(in_tx(f->p));
    assert_int_equal(
        count_on(f->other, "SELECT count(*) FROM steps WHERE message = 'not'"),
        0);

    /* A pass rolled back sends nothing it gathered, then or later. */
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    step_row(f->p, s3, "IN_PROGRESS", "COMPLETE", "rolled back");
    assert_true(pctl_engine_pass_end(f->p, PLANCTL_ERROR) < 0);
    assert_int_equal(pc->ngathered, 0);
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    assert_int_equal(count_on(f->p,
                              "SELECT count(*) FROM steps WHERE message = "
                              "'rolled back'"),
                     0);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    assert_int_equal(pctl_fleet_leave(f->p), 0);
}

/*
 * On PostgreSQL an engine's BEGIN (and an admission's) is sent ahead: its
 * two statements (BEGIN; the change token and the shared lock) wait for
 * the transaction's first read, which reads their answers with its own,
 * one round trip for all.  A write lock another writer holds fails that
 * read (EBUSY, naming the lock) and the transaction, which rolls back;
 * the next one, once the lock is free, goes on.  Without the BEGIN sent
 * ahead nothing is waiting after it.
 */
static void test_begin_sent_ahead(void **state)
{
    fixture *f = *state;
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    planctl *cli = NULL;
    tu_raw *holder;
    char *said = NULL;
    int64_t run;

    if (!tu_on_pg())
        return; /* SQLite's BEGIN is no round trip */
    create(f->p, "z1");
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);
    assert_int_equal(pctl_tx_begin_engine(f->p, 0), 0);
    assert_int_equal(NSENT(f->p), 2);
    assert_int_equal(instances(f->p), 1);
    assert_int_equal(NSENT(f->p), 0);
    assert_int_equal(pctl_tx_end(f->p, 0), 0);

    o.busy_timeout_ms = 200;
    assert_int_equal(planctl_open(&cli, f->path, &o), 0);
    holder = tu_raw_open(f->path);
    tu_raw_exec(holder, "BEGIN");
    tu_raw_exec(holder, "DO $$BEGIN PERFORM pg_advisory_xact_lock("
                        "1347175255, hashtext(current_schema())); END$$");
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), PLANCTL_EBUSY);
    assert_non_null(
        strstr(planctl_errmsg(f->p), "locked by another planctl writer"));
    assert_false(in_tx(f->p));
    assert_int_equal(
        planctl_instance_create(&run, cli, "z2", "zookeeper", "0.2.0", NULL, 0),
        PLANCTL_EBUSY);
    assert_non_null(
        strstr(planctl_errmsg(cli), "locked by another planctl writer"));
    tu_raw_exec(holder, "ROLLBACK");
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    create(cli, "z2");
    assert_int_equal(count_on(f->other, "SELECT count(*) FROM instances"), 2);
    tu_raw_close(holder);
    planctl_close(cli);
    assert_int_equal(pctl_fleet_leave(f->p), 0);
}

typedef struct cancel_thread {
    pthread_t thread;
    planctl *p;
    int rc;
    char msg[256];
} cancel_thread;

static void *cancel_main(void *arg)
{
    cancel_thread *t = arg;

    t->rc = planctl_run_cancel(NULL, t->p, "z1", "deadlock");
    snprintf(t->msg, sizeof t->msg, "%s", planctl_errmsg(t->p));
    return NULL;
}

/* Fails unless run id is in status, as raw reads it. */
static void expect_run_status(tu_raw *raw, int64_t id, const char *status)
{
    char *now = tu_raw_text(raw, "SELECT status FROM runs WHERE id = %lld",
                            (long long)id);

    if (!now || strcmp(now, status) != 0)
        fail_msg("run %lld is %s, not %s", (long long)id, now ? now : "gone",
                 status);
    free(now);
}

/* Whether n sessions of the test's schema wait on a lock, waited for
 * 30 s at most. */
static int lock_waiters(tu_raw *raw, int n)
{
    int i;

    for (i = 0; i < 3000; i++) {
        if (tu_raw_scalar(raw, "SELECT count(*) FROM pg_stat_activity WHERE "
                               "wait_event_type = 'Lock' AND datname = "
                               "current_database() AND application_name = "
                               "current_schema()") == n)
            return 1;
        usleep(10000);
    }
    return 0;
}

/*
 * A cancel commits beside the engines' passes, under its run's row lock
 * (PCTL_TX_RUN).  A pass that wrote a step of that run, then writes the
 * run while the cancel, holding the run, waits for the step, is a
 * deadlock the server breaks by ending one of them: the pass only if its
 * own wait is checked first, which its longer deadlock_timeout here
 * rules out, so the cancel is the one ended.  It is made again, waits for
 * the pass to commit, and succeeds: the caller never sees the deadlock.
 * Without run_change's retry (src/store/runs.c) it fails with EBUSY.
 */
static void test_cancel_deadlock_made_again(void **state)
{
    fixture *f = *state;
    planctl *cli = NULL;
    pctl_stmt *slow, *step, *run;
    cancel_thread t;
    tu_raw *raw;
    int64_t r, s;
    char *sql;

    if (!tu_on_pg())
        return; /* SQLite's writers take turns: no deadlock */
    create(f->p, "z1");
    raw = tu_raw_open(f->path);
    r = tu_raw_scalar(raw, "SELECT max(id) FROM runs");
    s = tu_raw_scalar(raw, "SELECT min(id) FROM steps WHERE run_id = %lld",
                      (long long)r);
    assert_int_equal(planctl_open(&cli, f->path, NULL), 0);

    assert_int_equal(pctl_tx_begin_engine(f->p, 0), 0);
    slow = own_stmt(f->p, "SET LOCAL deadlock_timeout TO '60s'");
    assert_int_equal(f->p->conn->m->step(slow), PCTL_DONE);
    sql = tu_fmt("UPDATE steps SET message = 'pass' WHERE id = %lld",
                 (long long)s);
    step = own_stmt(f->p, sql);
    free(sql);
    assert_int_equal(f->p->conn->m->step(step), PCTL_DONE);

    memset(&t, 0, sizeof t);
    t.p = cli;
    assert_int_equal(pthread_create(&t.thread, NULL, cancel_main, &t), 0);
    /* The cancel, holding the run, waits for the step. */
    if (!lock_waiters(raw, 1))
        fail_msg("the cancel did not wait for the step");
    sql = tu_fmt("UPDATE runs SET message = 'pass' WHERE id = %lld",
                 (long long)r);
    run = own_stmt(f->p, sql);
    free(sql);
    /* Waits for the cancel's row until the server ends the cancel. */
    assert_int_equal(f->p->conn->m->step(run), PCTL_DONE);
    assert_int_equal(pctl_tx_end(f->p, 0), 0);
    assert_int_equal(pthread_join(t.thread, NULL), 0);
    if (t.rc != 0)
        fail_msg("cancel: %s: %s", planctl_errname(t.rc), t.msg);
    expect_run_status(raw, r, "CANCELLED");
    f->p->conn->m->finalize(slow);
    f->p->conn->m->finalize(step);
    f->p->conn->m->finalize(run);
    planctl_close(cli);
    tu_raw_close(raw);
}

typedef struct pass_thread {
    pthread_t thread;
    planctl *p;
    int64_t run;
    int rc;
    char msg[256];
} pass_thread;

/* An engine's pass that ends run t->run (PENDING, through IN_PROGRESS to
 * FATAL_ERROR: a run that completes also writes its instance's row) and
 * promotes the run queued behind it, as a pass does at its end
 * (pctl_queues_promote). */
static void *end_run_pass(void *arg)
{
    pass_thread *t = arg;
    static const planctl_status path[] = {PLANCTL_STATUS_PENDING,
                                          PLANCTL_STATUS_IN_PROGRESS,
                                          PLANCTL_STATUS_FATAL_ERROR};
    int i, rc = pctl_engine_pass_begin(t->p, 0, 0);

    for (i = 0; rc == 0 && i < 2; i++) {
        pctl_change c = PCTL_CHANGE_INIT;

        c.entity = PLANCTL_ENTITY_RUN;
        c.id = t->run;
        c.from = path[i];
        c.to = path[i + 1];
        c.actor = PCTL_ACTOR_ENGINE;
        rc = pctl_gate(t->p, &c);
    }
    if (rc == 0)
        rc = pctl_queues_promote(t->p);
    t->rc = pctl_engine_pass_end(t->p, rc);
    snprintf(t->msg, sizeof t->msg, "%s", planctl_errmsg(t->p));
    return NULL;
}

/*
 * A trigger beside the engines (PCTL_TX_RUN) holds its instance's row
 * while it looks for an active run and queues behind it; an engine that
 * ends that run locks the row before it reads the queue to promote.  So a
 * run queued while the active one ends is always promoted: either the
 * trigger saw the run ended and admitted its own at once, or the engine
 * read the queue after the trigger committed.  Here a session holding
 * the row stands for the trigger: a trigger behind it waits and is
 * refused after its busy timeout; an engine's pass ending the run waits
 * for it (without the lock in gate.c it would not), then promotes the
 * queued run.
 */
static void test_promotion_waits_for_admission(void **state)
{
    fixture *f = *state;
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    planctl_trigger_options q = PLANCTL_TRIGGER_OPTIONS_INIT;
    planctl *cli = NULL;
    pass_thread t;
    tu_raw *raw, *holder;
    int64_t r, queued, run;
    char *said = NULL;
    int waited;

    if (!tu_on_pg())
        return; /* SQLite's writers take turns */
    create(f->p, "z1");
    raw = tu_raw_open(f->path);
    r = tu_raw_scalar(raw, "SELECT max(id) FROM runs");
    q.queue = 1;
    assert_int_equal(
        planctl_plan_trigger(&queued, f->other, "z1", "deploy", &q), 0);
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);

    holder = tu_raw_open(f->path);
    tu_raw_exec(holder, "BEGIN");
    tu_raw_exec(holder, "SELECT id FROM instances WHERE name = 'z1' "
                        "FOR NO KEY UPDATE");
    o.busy_timeout_ms = 200;
    assert_int_equal(planctl_open(&cli, f->path, &o), 0);
    assert_int_equal(planctl_plan_trigger(&run, cli, "z1", "deploy", &q),
                     PLANCTL_EBUSY);

    memset(&t, 0, sizeof t);
    t.p = f->p;
    t.run = r;
    assert_int_equal(pthread_create(&t.thread, NULL, end_run_pass, &t), 0);
    waited = lock_waiters(raw, 1); /* the pass, at the queue */
    tu_raw_exec(holder, "COMMIT");
    assert_int_equal(pthread_join(t.thread, NULL), 0);
    if (!waited)
        fail_msg("the pass did not wait for the instance's row");
    if (t.rc != 0)
        fail_msg("pass: %s: %s", planctl_errname(t.rc), t.msg);
    expect_run_status(raw, queued, "PENDING");
    assert_int_equal(pctl_fleet_leave(f->p), 0);
    planctl_close(cli);
    tu_raw_close(holder);
    tu_raw_close(raw);
}

/* The token of a handle whose session ends, read until it is read: the
 * first read after the server ended the session may be the one that
 * finds it gone (EIO); the next makes a new one. */
static int64_t token_again(planctl *p)
{
    int64_t v = 0;
    int tries;

    for (tries = 0; tries < 3; tries++)
        if (planctl_data_version(&v, p) == 0)
            return v;
    fail_msg("data_version: %s", planctl_errmsg(p));
    return 0;
}

/*
 * A server that crashed may lose commits it had acknowledged, and the
 * commit counter behind the change token goes back with them; a handle
 * that saw the lost commits connects again and must still see the next
 * commit of another (a cancel an engine must follow, a change a page must
 * show).  Made by hand: the counter's rows put back as they were before
 * five creates, and every session of the test's schema ended.  Without
 * the rebase in src/store/postgres/conn.c (counter_read) the token stays
 * where the lost commits had left it until as many commits have been made
 * again.
 */
static void test_token_after_lost_commits(void **state)
{
    fixture *f = *state;
    tu_raw *raw;
    int64_t t1, t2, t3, t4, run;
    char name[8];
    int i;

    if (!tu_on_pg())
        return; /* SQLite's data_version never loses a commit */
    raw = tu_raw_open(f->path);
    (void)token(f->p);
    tu_raw_exec(raw, "CREATE TABLE counters_copy AS SELECT * FROM meta "
                     "WHERE starts_with(key, 'commits')");
    for (i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "z%d", i);
        create(f->other, name);
    }
    t1 = token(f->p);
    /* The five commits lost, as far as the counter tells. */
    tu_raw_exec(raw, "DELETE FROM meta WHERE starts_with(key, 'commits'); "
                     "INSERT INTO meta SELECT * FROM counters_copy");
    tu_raw_exec(raw, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE pid <> pg_backend_pid() AND datname = "
                     "current_database() AND application_name = "
                     "current_schema()");
    t2 = token_again(f->p);
    assert_true(t2 != t1);
    /* The other writer's first try finds its session gone. */
    if (planctl_instance_create(&run, f->other, "after", "zookeeper", "0.2.0",
                                NULL, 0) != 0)
        create(f->other, "after");
    t3 = token(f->p);
    assert_true(t3 != t2);
    assert_true(t3 != t1);
    create(f->other, "after2");
    t4 = token(f->p);
    assert_true(t4 != t3 && t4 != t2 && t4 != t1);
    tu_raw_close(raw);
}

/*
 * A writer beside the engines (here a create) notifies the token its
 * commit makes, in its counter's statement: the RETURNING reads the
 * statement's snapshot, without the statement's own increment, and adds
 * one (src/store/postgres/conn.c, commit_parts).  A payload above the
 * token would hide the next commit from a listener; one below it wakes
 * nobody for this one.
 */
static void test_notify_names_the_token(void **state)
{
#ifdef PLANCTL_WITH_POSTGRES
    fixture *f = *state;
    pctl_pg_conn *pc;
    PGresult *r;
    PGnotify *n;
    int64_t run, token, said = -1;
    char *sql;
    int i;

    if (!tu_on_pg())
        return;
    /* The other handle's session listens, and the test reads what it
     * hears before the handle does. */
    pc = (pctl_pg_conn *)f->other->conn;
    sql = tu_fmt("LISTEN %s", pc->channel_ident);
    r = PQexec(pc->pg, sql);
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    free(sql);
    tu_ok(f->p, planctl_instance_create(&run, f->p, "heard", "zookeeper",
                                        "0.2.0", NULL, 0));
    token = count_on(f->p, "SELECT (SELECT value::bigint FROM meta WHERE "
                           "key = 'commits') + (SELECT coalesce(sum("
                           "value::bigint), 0) FROM meta WHERE "
                           "starts_with(key, 'commits.'))");
    /* 10 s at most: a bound on a hang, not a time the test measures. */
    for (i = 0; i < 1000 && said < 0; i++) {
        assert_int_equal(PQconsumeInput(pc->pg), 1);
        while ((n = PQnotifies(pc->pg)) != NULL) {
            said = strtoll(n->extra, NULL, 10);
            PQfreemem(n);
        }
        if (said < 0)
            usleep(10000);
    }
    assert_int_equal(said, token);
#else
    (void)state;
#endif
}

/* The events of instance name as text: every column but the ids, seq
 * and times, the run's uid and the name written as U and N, in seq
 * order, with the places of their phases and steps. */
#define EVENTS_OF(name)                                                        \
    "(SELECT string_agg(concat_ws('|', e.entity, coalesce(e.from_status, "     \
    "'-'), coalesce(e.to_status, '-'), replace(coalesce(e.message, '-'), "     \
    "i.name, 'N'), e.actor, replace(replace(coalesce(e.data, '-'), "           \
    "coalesce(r.uid, '-'), 'U'), i.name, 'N'), coalesce(ph.idx, -1), "         \
    "coalesce(st.idx, -1), e.run_id IS NULL, e.at = i.created_at), "           \
    "E'\\n' ORDER BY e.seq) FROM events e JOIN instances i ON i.id = "         \
    "e.instance_id LEFT JOIN runs r ON r.id = e.run_id LEFT JOIN phases ph "   \
    "ON ph.id = e.phase_id LEFT JOIN steps st ON st.id = e.step_id WHERE "     \
    "i.name = '" name "')"
/* Its rows likewise: the instance's, its run's, its phases' and steps'. */
#define ROWS_OF(name)                                                          \
    "(SELECT concat_ws('|', i.definition_id, i.params, i.deleting, "           \
    "i.created_at = i.updated_at, r.definition_id, r.plan, r.status, "         \
    "r.trigger, coalesce(r.reason, '-'), coalesce(r.retry_of, -1), "           \
    "replace(r.params, i.name, 'N'), r.event_count, length(r.uid), "           \
    "r.created_at = i.created_at, (SELECT string_agg(concat_ws(',', "          \
    "ph.idx, ph.name, ph.strategy, ph.status, (SELECT string_agg("             \
    "concat_ws(':', st.idx, st.name, st.status, st.max_attempts, "             \
    "st.attempt), ';' ORDER BY st.idx) FROM steps st WHERE st.phase_id = "     \
    "ph.id AND st.run_id = r.id)), '/' ORDER BY ph.idx) FROM phases ph "       \
    "WHERE ph.run_id = r.id)) FROM instances i JOIN runs r ON "                \
    "r.instance_id = i.id WHERE i.name = '" name "')"

/*
 * A create on PostgreSQL writes its instance, run, rows, events and
 * change counter in one statement (instance_create) after its
 * definition's read; a fleet engine's handle creates row by row (its
 * cache observes the rows).  Both write the same rows and events, in the
 * same order, with the same counts, and verify agrees; a name taken is
 * refused alike, changing nothing.
 */
static void test_create_at_once(void **state)
{
    fixture *f = *state;
    int64_t run1 = 0, run2 = 0, n;
    char *said = NULL, *summary = NULL;
    static const char same_events[] =
        "SELECT (" EVENTS_OF("atonce") " = " EVENTS_OF("rowwise") ")::int";
    static const char same_rows[] =
        "SELECT (" ROWS_OF("atonce") " = " ROWS_OF("rowwise") ")::int";
    const char *at_once = "SELECT count(*) FROM pg_prepared_statements "
                          "WHERE statement LIKE '%pg_backend_pid() % 16%' "
                          "AND statement NOT LIKE '%pg_prepared%'";

    if (!pctl_fleet_supported(f->p))
        return;
    assert_int_equal(pctl_fleet_join(f->other, "e2", 12000, 0, &said), 0);
    pctl_free(said);
    tu_ok(f->other, planctl_instance_create(&run1, f->other, "rowwise",
                                            "zookeeper", "0.2.0", NULL, 0));
    tu_ok(f->p, planctl_instance_create(&run2, f->p, "atonce", "zookeeper",
                                        "0.2.0", NULL, 0));
    assert_true(run1 > 0 && run2 > run1);
    /* Each path taken where it should be. */
    assert_int_equal(count_on(f->p, at_once), 1);
    assert_int_equal(count_on(f->other, at_once), 0);
    n = count_on(f->p, "SELECT count(*) FROM events e JOIN instances i ON "
                       "i.id = e.instance_id WHERE i.name = 'atonce'");
    assert_true(n > 3);
    assert_int_equal(
        count_on(f->p, "SELECT count(*) FROM events e JOIN instances i ON "
                       "i.id = e.instance_id WHERE i.name = 'rowwise'"),
        n);
    assert_int_equal(count_on(f->p, same_events), 1);
    assert_int_equal(count_on(f->p, same_rows), 1);
    /* The run's count is its events'. */
    assert_int_equal(
        count_on(f->p, "SELECT count(*) FROM runs r WHERE r.event_count = "
                       "(SELECT count(*) FROM events e WHERE e.run_id = r.id) "
                       "AND r.instance_id IN (SELECT id FROM instances WHERE "
                       "name IN ('atonce', 'rowwise'))"),
        2);
    tu_ok(f->p, planctl_verify(&summary, f->p));
    planctl_free(summary);
    /* A name taken: refused, nothing written. */
    n = count_on(f->p, "SELECT count(*) FROM events");
    assert_int_equal(planctl_instance_create(&run1, f->p, "atonce", "zookeeper",
                                             "0.2.0", NULL, 0),
                     PLANCTL_ECONFLICT);
    assert_non_null(strstr(planctl_errmsg(f->p), "already exists"));
    assert_int_equal(count_on(f->p, "SELECT count(*) FROM events"), n);
    assert_int_equal(pctl_fleet_leave(f->other), 0);
}

/* A pass closes its steps' tries in one statement that finds each try by
 * a probe of attempts_one_open by its step, whatever the planner knows of
 * the table.  Joined the plain way, the plan a prepared statement keeps
 * from an engine's first passes (attempts never analyzed, and small)
 * read the whole index and hashed it: each try closed since the last
 * vacuum leaves a dead entry there, so every close cost more than the
 * last (a backlog of 20,000 runs on three engines: 3.5 to 25 s of the
 * server's time).  The generic plan on a table never analyzed, as at an
 * engine's start.  (PostgreSQL: SQLite plans each statement anew.) */
static void test_tries_closed_by_probe(void **state)
{
#ifdef PLANCTL_WITH_POSTGRES
    fixture *f = *state;
    pctl_pg_stmt *st;
    tu_raw *raw;
    char *plan;

    if (!tu_on_pg())
        return;
    create(f->p, "z1");
    st = (pctl_pg_stmt *)pctl_q(f->p, PCTL_Q_attempt_close);
    assert_non_null(st);
    assert_non_null(st->many);
    raw = tu_raw_open(f->path);
    tu_raw_exec(raw, "INSERT INTO attempts (step_id, number, status, "
                     "started_at) SELECT id, 1, 'IN_PROGRESS', 0 FROM steps");
    tu_raw_exec(raw,
                "SET plan_cache_mode = force_generic_plan; "
                "PREPARE close_plan (bigint[], text[], bigint[], integer[], "
                "text[], text[]) AS %s",
                st->many->st.sql);
    plan = tu_raw_text(raw, "EXPLAIN (FORMAT JSON) EXECUTE close_plan "
                            "('{1,2}', '{COMPLETE,COMPLETE}', '{5,5}', "
                            "'{0,0}', '{NULL,NULL}', '{NULL,NULL}')");
    tu_raw_exec(raw, "DEALLOCATE close_plan; RESET plan_cache_mode");
    tu_raw_close(raw);
    if (!strstr(plan, "\"attempts_one_open\"") ||
        !strstr(plan, "(step_id = u.step_id)") || strstr(plan, "Hash"))
        fail_msg("attempt_close's set form does not probe attempts_one_open "
                 "by step: %s",
                 plan);
    free(plan);
#else
    (void)state;
#endif
}

/* An engine claiming a backlog slice after slice goes on after the last
 * run it took: the runs after it only, oldest first; one claim from the
 * first finds what was given back below it.  Its kept plan walks the
 * open runs in order from there, probing each one's claim: no hash of
 * every active run, no sort, even on a table with a long history. */
static void test_claims_go_on_after(void **state)
{
    fixture *f = *state;
    int64_t *a = NULL, *b = NULL, *c = NULL, last = 0;
    char *said = NULL, name[8];
    size_t i, n;

    if (!pctl_fleet_supported(f->p))
        return;
    for (i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "z%zu", i);
        create(f->p, name);
    }
    assert_int_equal(pctl_fleet_join(f->p, "e1", 12000, 0, &said), 0);
    pctl_free(said);
    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    assert_int_equal(claim(f->p, 2, &a), 2);
    last = a[0] > a[1] ? a[0] : a[1];
    assert_int_equal(pctl_fleet_claim(f->p, 2, last, &b, &n), 0);
    assert_int_equal(n, 2);
    assert_true(b[0] > last && b[1] > last);
    last = b[0] > b[1] ? b[0] : b[1];
    /* The oldest goes back. */
    assert_int_equal(pctl_fleet_release(f->p, a[0] < a[1] ? a : a + 1, 1), 0);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);

    assert_int_equal(pctl_engine_pass_begin(f->p, 0, 0), 0);
    pctl_free(b);
    assert_int_equal(pctl_fleet_claim(f->p, 4, last, &b, &n), 0);
    assert_int_equal(n, 2); /* the two runs after it, not the one below */
    for (i = 0; i < n; i++)
        assert_true(b[i] > last);
    last = b[0] > b[1] ? b[0] : b[1];
    assert_int_equal(pctl_fleet_claim(f->p, 4, last, &c, &n), 0);
    assert_int_equal(n, 0);
    pctl_free(c);
    assert_int_equal(pctl_fleet_claim(f->p, 4, 0, &c, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(c[0], a[0] < a[1] ? a[0] : a[1]);
    assert_int_equal(pctl_engine_pass_end(f->p, 0), 0);
    pctl_free(a);
    pctl_free(b);
    pctl_free(c);
#ifdef PLANCTL_WITH_POSTGRES
    {
        pctl_pg_stmt *st =
            (pctl_pg_stmt *)pctl_q(f->p, PCTL_Q_fleet_claim_after);
        tu_raw *raw = tu_raw_open(f->path);
        char *plan;

        assert_non_null(st);
        /* A history of ended runs, statistics taken: a plan over the
         * primary key turned to a bitmap and a sort of every open run. */
        tu_raw_exec(raw,
                    "SET session_replication_role = replica; "
                    "INSERT INTO runs (uid, instance_id, definition_id, plan, "
                    "status, trigger, params, created_at) SELECT 'h' || g, "
                    "(SELECT min(id) FROM instances), (SELECT min(id) FROM "
                    "definitions), 'deploy', 'COMPLETE', 'create', '{}', 0 "
                    "FROM generate_series(1, 20000) AS g; "
                    "SET session_replication_role = origin; ANALYZE");
        tu_raw_exec(raw,
                    "SET plan_cache_mode = force_generic_plan; "
                    "PREPARE claim_plan (bigint, bigint, bigint) AS %s",
                    st->sql);
        plan = tu_raw_text(raw, "EXPLAIN (FORMAT JSON) EXECUTE claim_plan "
                                "(1, 64, 3)");
        tu_raw_exec(raw, "DEALLOCATE claim_plan; RESET plan_cache_mode");
        tu_raw_close(raw);
        if (!strstr(plan, "\"runs_open_by_id\"") ||
            !strstr(plan, "claims_pkey") || strstr(plan, "Sort") ||
            strstr(plan, "Hash") || strstr(plan, "Bitmap"))
            fail_msg(
                "fleet_claim_after does not walk runs_open_by_id in order: %s",
                plan);
        free(plan);
    }
#endif
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_read_is_one_snapshot),
        T(test_reads_nest),
        T(test_read_inside_write),
        T(test_no_write_inside_read),
        T(test_no_write_inside_rows),
        T(test_engine_session_given_back),
        T(test_engines_write_side_by_side),
        T(test_pass_writes_sent_later),
        T(test_reads_sent_ahead),
        T(test_rows_gathered),
        T(test_counts_checked_by_server),
        T(test_begin_sent_ahead),
        T(test_token_after_lost_commits),
        T(test_cancel_deadlock_made_again),
        T(test_promotion_waits_for_admission),
        T(test_notify_names_the_token),
        T(test_create_at_once),
        T(test_tries_closed_by_probe),
        T(test_claims_go_on_after),
    };
#undef T

    return cmocka_run_group_tests(tests, NULL, NULL);
}
