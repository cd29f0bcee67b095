/*
 * store.h - the store's internals: the handle, named statements,
 * transactions, errors, and the one gate every status change goes through.
 *
 * Only src/store speaks SQL.  Everything above it (engine, CLI) uses these
 * functions or the public API, so another backend can be added later.
 */
#ifndef PCTL_STORE_H
#define PCTL_STORE_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/def.h"
#include "core/status.h"
#include "planctl.h"
#include "store/queries.h"
#include "store/sql.h"

struct planctl {
    pctl_conn *conn; /* the backend's connection (sql.h) */
    /* The database as messages name it: a file path, or a PostgreSQL
     * URI without its password (postgres/uri.c). */
    char *path;
    /* What planctl_open() was given, only while the backend opens it (the
     * URI with its password stays in the backend's connection). */
    const char *open_target;
    char *errmsg;
    int errcode; /* the code pctl_err() last set, with errmsg */
    int schema_version;
    int readonly;
    int ro_fs;    /* on a read-only file system: opened immutable (db.c) */
    int tx_depth; /* >0 while a transaction of ours is open */
    int tx_rows;  /* ... and the outermost is PCTL_TX_ROWS (no write lock) */
    int tx_later; /* ... and is an engine's pass: pctl_q_exec_later sends
                     its writes without waiting for their answers */
    int rx_depth; /* >0 while a read transaction is (pctl_tx_read) */
    int rx_began; /* ... and the outermost one began it */
    uint64_t tx_serial; /* moves at each outermost begin and end */
    /* The run the open transaction inserted last (admit.c), with its
     * events so far: the journal counts them without reading its row. */
    int64_t fresh_run, fresh_run_events;
    uint64_t fresh_run_tx; /* the tx_serial it was inserted in */
    /* Runs that ended in the open pass, whose queues pctl_queues_promote
     * looks at together (gate.c), in the order they ended. */
    int64_t *ended_runs;
    size_t nended_runs, ended_runs_cap;
    /* PLANCTL_OPEN_CHECK_CACHE at open: the gate reads
     * every row back even when the engine's cache knows it, and fails
     * with PLANCTL_EIO where the two differ (the test suite runs so). */
    int check_cache;
    int64_t (*now_fn)(void *data);
    int64_t frozen_now; /* the write transaction's moment; 0: none open */
    void *now_data;
    pctl_stmt *stmts[PCTL_Q__COUNT]; /* pctl_q's cache */
    struct pctl_kinds *kinds;        /* planctl_kind_register(); NULL: none */
    /* Status events queued for the journal (journal.c): an engine pass's
     * or an admission's, flushed by its owner before the commit; NULL
     * outside them. */
    struct pctl_evq *evq;
    /* The safety net on events per run (planctl_set_event_limits). */
    int64_t run_events_warn, run_events_max;
    /* The one observer of what the store writes (pctl_observe(): an
     * engine's cache and metrics); NULL: none. */
    const struct pctl_observer *observer;
    void *observer_data;
    /* The engine this handle is, among several on one database
     * (fleet.c): its row in engines, and its name; 0 and NULL otherwise. */
    int64_t fleet_id;
    char *fleet_name;
    /* The other engines of this host at its last heartbeat: pid and start
     * time, pairs (fleet.c pctl_fleet_peer_gone). */
    int64_t *fleet_peers;
    size_t nfleet_peers, capfleet_peers;
    /* Who acts through this handle (planctl_set_actor): the actor of the
     * events of its admissions and admin actions; NULL: "user". */
    char *actor;
    /* planctl_interrupt(), from any thread: the sections in progress that
     * it can stop (an outermost transaction, preflight checks), counted
     * under intr_lock, and whether it stopped them (cleared when the last
     * one ends, so a later call is not affected).  intr_lock also guards
     * what the backend's interrupt uses (PostgreSQL's cancel object). */
    pthread_mutex_t intr_lock;
    int intr_sections;
    atomic_int intr;
};

/* A section planctl_interrupt() can stop begins and ends (pctl_intr_*
 * are inline so that the backends, below tx.c, read the flag without
 * calling up). */
static inline void pctl_intr_enter(planctl *p)
{
    pthread_mutex_lock(&p->intr_lock);
    p->intr_sections++;
    pthread_mutex_unlock(&p->intr_lock);
}

static inline void pctl_intr_leave(planctl *p)
{
    pthread_mutex_lock(&p->intr_lock);
    if (--p->intr_sections == 0)
        atomic_store(&p->intr, 0);
    pthread_mutex_unlock(&p->intr_lock);
}

/* Whether planctl_interrupt() stopped the section in progress. */
static inline int pctl_intr_pending(planctl *p)
{
    return p && atomic_load(&p->intr);
}

/* The actor of the changes an engine's passes make (of every engine's:
 * which one, its own log says). */
#define PCTL_ACTOR_ENGINE "engine"

/* The actor of what a caller of this handle does: planctl_set_actor()'s,
 * or "user".  Can't fail. */
static inline const char *pctl_user(const planctl *p)
{
    return p->actor ? p->actor : "user";
}

/* Sets the executor of a task kind in the handle's one registry of kinds
 * (p->kinds, core/kinds.h), which validation, the engine and preflight
 * checks all read.  EINVAL (a bad name), ENOMEM. */
int pctl_kind_set_executor(planctl *p, const char *kind,
                           const planctl_executor *ex);

/* ---- errors ---- */

/* Sets the handle's message (printf format) and returns rc unchanged, so
 * callers write `return pctl_err(p, PLANCTL_ENOTFOUND, "...")`. */
int pctl_err(planctl *p, int rc, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* EINVAL with "missing argument: NAME is NULL", NAME as planctl.h names
 * the parameter.  With p NULL (NAME "p") the thread's message takes it, as
 * every pctl_err() on a NULL handle does. */
int pctl_err_arg(planctl *p, const char *name);

/* ---- the files under the handle (ident.c) ---- */

/* Notes the device and inode of the database file and of its -wal (when
 * there is one).  Can't fail. */
void pctl_db_ident_note(planctl *p);

/* 0 while the path names the files noted.  PLANCTL_EIO with the message
 * set when the database was removed or replaced, or its -wal removed (its
 * content is first checkpointed into the database file) or replaced. */
int pctl_db_ident_check(planctl *p);

/* Moves the deadlines and next-try times of every active run by delta ms,
 * and records it in an event per instance (clockshift.c).  Inside a
 * transaction.  Returns 0 or the error (nothing moved then, once rolled
 * back). */
int pctl_clock_shift(planctl *p, int64_t delta);

/* ---- time ---- */

/* The handle's clock: milliseconds since the epoch, UTC.  Can't fail. */
int64_t pctl_now(const planctl *p);

/* The handle's clock function and its data, as planctl_set_clock() set
 * them (the system clock by default), so that an engine can put its own
 * in place and restore them after.  Can't fail. */
typedef struct pctl_clock {
    int64_t (*now_ms)(void *data);
    void *data;
} pctl_clock;
pctl_clock pctl_clock_get(const planctl *p);

/* Whether c is the system clock (no planctl_set_clock()); and its time
 * now.  Can't fail. */
int pctl_clock_is_system(pctl_clock c);
int64_t pctl_clock_system_now(void);

/* ---- transactions ---- */

/* BEGIN IMMEDIATE (every write takes the lock up front, so a reader that
 * becomes a writer cannot deadlock).  Nested calls only count depth. */
int pctl_tx_begin(planctl *p);
/* The same, as one moment `at` (0: now): pctl_now() returns it until the
 * transaction ends, so every time it records is the same. */
int pctl_tx_begin_at(planctl *p, int64_t at);
/* A write of rows that only their owner writes (PCTL_TX_ROWS, sql.h):
 * on PostgreSQL it waits for no other writer.  Ended as any write.  No
 * events inside it. */
int pctl_tx_begin_rows(planctl *p);
/* The write of one of several engines, as one moment `at` (PCTL_TX_ENGINE,
 * sql.h): on PostgreSQL beside the other engines' writes, never beside
 * another writer's.  What it writes, and every write nested in it, are
 * the runs the engine holds (or claims), its own rows, and events: no
 * other engine writes those, and no other writer runs meanwhile but
 * admissions, which write only rows of their own (below). */
int pctl_tx_begin_engine(planctl *p, int64_t at);
/* The admission of a new instance (PCTL_TX_ADMIT, sql.h): on PostgreSQL
 * beside the engines' writes and other admissions, never beside another
 * writer's.  What it writes must be rows it inserts (the instance, its
 * run, phases, steps, events) and nothing another writer holds: no
 * engine holds a run before it is committed, and the name's unique index
 * settles two admissions of one name. */
int pctl_tx_begin_admit(planctl *p);
/* An operator's change to one run, or the admission of a run of an
 * existing instance (PCTL_TX_RUN, sql.h): on PostgreSQL beside the
 * engines' writes and admissions, never beside another writer's.  A
 * change to a run first locks it (pctl_run_lock) and writes only that
 * run, its phases and steps, the queued run it promotes (under its
 * instance's lock) and events: an engine that holds the run writes them
 * only under compare-and-set, which a change made meanwhile fails (its
 * pass rolls back and reads the run again).  An admission first locks
 * the instance (pctl_instance_find_locked) and inserts its run's rows:
 * an engine promotes a queued run of it only under that lock too. */
int pctl_tx_begin_run(planctl *p);
/* Whether a transaction that ended with rc (rolled back) is to be made
 * again from the start: the server broke a deadlock with a pass by ending
 * it (40P01), and *tries (0 at the first) is below a few.  Counts the
 * try. */
int pctl_tx_again(planctl *p, int rc, int *tries);
/* Locks run_id's row for the transaction (FOR NO KEY UPDATE on PostgreSQL;
 * SQLite's transaction holds the file) and reads its status as it is
 * now, into *status.  ENOTFOUND when there is no such run, EBUSY (saying
 * the run is being changed by another writer) when its lock was not
 * free within the busy timeout. */
int pctl_run_lock(planctl_status *status, planctl *p, int64_t run_id);

/* One operator's change to a run: what change() does in a transaction of
 * its own (PCTL_TX_RUN), change() locking the run first (pctl_run_lock),
 * made again when the server broke a deadlock by ending it (a pass
 * writing the run's steps while this waited for them, the pass then
 * waiting for the run's row): a few times, each from the start, since
 * what it read may have moved.  change()'s result, or the failure to
 * begin or commit. */
int pctl_run_change(planctl *p, int (*change)(planctl *p, void *arg),
                    void *arg);
/* COMMIT at depth 1; a failed commit rolls back.  Returns 0 or an error. */
int pctl_tx_commit(planctl *p);
/* ROLLBACK at depth 1.  Can't fail (errors are ignored: SQLite rolls back
 * on its own when a statement fails badly). */
void pctl_tx_rollback(planctl *p);
/* Ends the transaction: commit if rc == 0 (returning its result), else
 * roll back and return rc. */
int pctl_tx_end(planctl *p, int rc);

/* A read transaction: one snapshot for several reads, which never write
 * (a deferred BEGIN takes no lock until it would).  Inside another
 * transaction, read or write, the outer one's snapshot serves and nothing
 * begins.  A write transaction may not begin inside it (PLANCTL_ERROR).
 * Errors: those of BEGIN (EBUSY, EIO). */
int pctl_tx_read(planctl *p);
/* Ends what pctl_tx_read began.  Can't fail: nothing was written. */
void pctl_tx_read_end(planctl *p);

/* ---- the gate ---- */

/* One status change of one row, with what else that change records. */
typedef struct pctl_change {
    planctl_entity entity;
    int64_t id;
    planctl_status from, to;
    const char *message; /* the row's new message, or NULL to clear */
    const char *actor;   /* "user", "engine", "planctl"; NULL: "user" */
    /* Steps only: */
    int64_t next_attempt_at; /* for -> ERROR: when the next try is due */
    int64_t deadline_at;     /* for -> IN_PROGRESS: a step try's timeout or
                                a run's deadline (absolute), or 0 */
    int exit_code;           /* closing a try: its exit code, or -1 */
    const char *output;      /* closing a try: its output tail, or NULL */
    int grant_attempt;       /* IN_PROGRESS -> ERROR: the try does not count;
                                max_attempts grows by one (recorded in the
                                event as "grant_attempt") */
    const char *outputs;     /* closing a try: what its tasks output
                                (core/outputs.h, JSON text), or NULL; also
                                the step's when it completes */
    int outputs_known;       /* closing a try: outputs is all it has (the
                                engine); otherwise, with outputs NULL, the
                                gate takes what its earlier tasks recorded
                                (pctl_step_set_task) */
    int64_t output_bytes;    /* closing a try with output: the bytes it
                                wrote in all (output keeps the last), or
                                -1: not known */
} pctl_change;

#define PCTL_CHANGE_INIT                                                       \
    {                                                                          \
        PLANCTL_ENTITY_RUN, 0, 0, 0, NULL, NULL, 0, 0, -1, NULL, 0, NULL, 0,   \
            -1                                                                 \
    }

/* ---- the observer of what the store writes (observe.c) ----
 *
 * The store keeps no one's cache.  It hands back what each write did to
 * one observer the handle's owner registers (as SQLite's update hook
 * does), inside the write's transaction: an engine keeps its cache of
 * active runs and its metrics from these reports, and the gate asks it
 * what it knows of a row to spare a read.  Every status change reaches
 * it, the ones the store makes on its own too (a run's children closed
 * with it, a queued run promoted when the active one ends). */

/* A status change as the gate's UPDATE left the row. */
typedef struct pctl_written {
    const pctl_change *change;
    int64_t run_id, phase_id, instance_id;
    int attempt;             /* a step's tries so far */
    int64_t next_attempt_at; /* a step's */
    int64_t deadline_at;     /* a step try's or a run's, as written */
    int granted;             /* it gave the step another try */
} pctl_written;

/* What an observer knows of a row, as it was before the change. */
typedef struct pctl_known_row {
    int64_t run_id, phase_id, instance_id;
    int attempt;         /* a step's tries so far */
    int64_t deadline_at; /* a run's */
    int64_t event_count; /* a run's */
    const char *plan;    /* the run's plan (the observer's string) */
    planctl_status status;
} pctl_known_row;

typedef struct pctl_observer {
    /* 1 with *out filled when the observer knows the row of entity id
     * as it is in the database now (nothing can have written it behind
     * the observer's back in the transaction open), else 0: the store
     * reads the row. */
    int (*known)(void *data, const planctl *p, planctl_entity entity,
                 int64_t id, pctl_known_row *out);
    /* A status change was written, as *w says. */
    void (*written)(void *data, const pctl_written *w);
    /* Step step_id is at task task_index now. */
    void (*task)(void *data, int64_t step_id, int task_index);
    /* Run run_id has count events now. */
    void (*events)(void *data, int64_t run_id, int64_t count);
    /* The store wrote something it cannot describe, or found a row that
     * was not what the caller said (a compare-and-set that missed): what
     * the observer knows may be wrong. */
    void (*missed)(void *data);
} pctl_observer;

/* Makes o (with data) the handle's observer; NULL removes it.  o must
 * outlive its registration.  Can't fail. */
void pctl_observe(planctl *p, const pctl_observer *o, void *data);

/* The store's side: tell the observer, if any.  Can't fail. */
int pctl_observed_known(const planctl *p, planctl_entity entity, int64_t id,
                        pctl_known_row *out);
void pctl_observed_written(planctl *p, const pctl_written *w);
void pctl_observed_task(planctl *p, int64_t step_id, int task_index);
void pctl_observed_events(planctl *p, int64_t run_id, int64_t count);
void pctl_observed_missed(planctl *p);

/*
 * The one function that changes a status.  Must be called inside a
 * transaction (pctl_tx_begin).  Checks the edge against the transition
 * table (ETRANSITION), compare-and-sets the row (ESTALE if its status is
 * not c->from, ENOTFOUND if it does not exist), maintains start/finish
 * times and, for steps, the attempts rows, and appends the event.  When a
 * run ends it also applies the consequences planctl-engine(7) describes:
 * last_applied, removal of a deleted instance after cleanup, and promotion of
 * the next queued run.
 */
int pctl_gate(planctl *p, const pctl_change *c);
/* The run of row id of entity (its own id for a run), read as the gate
 * reads a row it wrote; 0 when there is no such row.  Errors: EIO,
 * EBUSY. */
int pctl_gate_run_of(int64_t *run, planctl *p, planctl_entity entity,
                     int64_t id);

/* A status event; from == PCTL_NEW for a row's creation.  phase_id and
 * step_id are ignored for entities above them. */
typedef struct pctl_event {
    planctl_entity entity;
    int64_t instance_id, run_id, phase_id, step_id;
    planctl_status from, to;
    int attempt;         /* 0: none */
    const char *message; /* or NULL */
    const char *actor;   /* NULL means "user" */
} pctl_event;

/*
 * The event log's one writer (journal.c).  A status event is queued, and
 * written with its run's event counter (and the warning note when the
 * count reaches the threshold) by pctl_events_flush: at once, unless the
 * handle defers its events (an engine pass, an admission), whose owner
 * flushes before it commits.  Inside a transaction.  Takes data (JSON
 * details, or NULL) over, freed on failure.  0, EIO, EBUSY, ENOMEM.
 */
int pctl_event_status(planctl *p, const pctl_event *e, char *data);

/* Defers status events (on) until pctl_events_flush; off drops what was
 * not flushed (it went with a rolled-back transaction); the queue keeps
 * its room for the next transaction unless it grew large.  ENOMEM (on
 * only). */
int pctl_events_defer(planctl *p, int on);
int pctl_events_deferring(const planctl *p);
/* Writes the queued events in order, then each run's counter once.  0,
 * EIO (a counter the engine's cache disagrees with, when checked), EBUSY,
 * ENOMEM. */
int pctl_events_flush(planctl *p);
/* pctl_events_flush, its statements sent without waiting where the
 * backend can (on PostgreSQL: the commit checks them). */
int pctl_events_flush_later(planctl *p);
/* Frees the queue and what it holds (planctl_close does).  Can't
 * fail. */
void pctl_events_free(planctl *p);
/* Drops the queued events of an instance just removed (they would have
 * gone with it). */
void pctl_events_forget_instance(planctl *p, int64_t instance_id);

/* Appends an admin event (entity "instance" or "engine"), after what is
 * queued: queued too while the handle defers its events, else written at
 * once.  Inside a transaction. */
int pctl_event_admin(planctl *p, int64_t instance_id, const char *entity,
                     const char *message, const char *actor,
                     const char *data_json);

/* Ends every open phase and step of run_id as its run ends with run_end
 * (FATAL_ERROR or CANCELLED), by the rule of pctl_close_child(); children
 * that had started get msg_started instead of the rule's message when it
 * is not NULL.  The run itself is left to the caller.  Inside a
 * transaction. */
int pctl_close_children(planctl *p, int64_t run_id, planctl_status run_end,
                        const char *msg_started, const char *actor);

/* ---- columns as JSON values (views.c) ---- */

/* Column col of st's row as JSON: a time as RFC 3339 text, text, an
 * integer; null for SQL NULL.  NULL when out of memory (a json_pack()
 * given it then fails). */
json_t *pctl_col_json_time(pctl_stmt *st, int col);
json_t *pctl_col_json_text(pctl_stmt *st, int col);
json_t *pctl_col_json_int(pctl_stmt *st, int col);

/* ---- output of tries (attempts.c) ---- */

/* The output so far of a try that still runs. */
typedef struct pctl_live_output {
    int64_t step_id;
    int attempt;
    const char *output; /* its last bytes, as attempts.output keeps them */
    int64_t bytes;      /* written in all */
} pctl_live_output;

/* Writes the output of each of out[0..n) that is still open, in one
 * transaction of the engine holding token.  Errors: those of
 * pctl_engine_tx_begin (ESTALE when fenced off) and of the store. */
int pctl_attempt_live_output(planctl *p, int64_t token,
                             const pctl_live_output *out, size_t n);

/* Records the bytes of output try attempt of step_id wrote in all.
 * Errors: those of the store. */
int pctl_output_bytes_record(planctl *p, int64_t step_id, int attempt,
                             int64_t bytes);

/* Writes out's output into its try if that try is still open, in the
 * caller's transaction (the engine, as it ends a try itself: a timeout,
 * a deadline), so that the gate keeps it.  Errors: those of the store. */
int pctl_attempt_output_put(planctl *p, const pctl_live_output *out);

/* What the open try of step_id stored of its output while it ran (*out:
 * NULL when nothing, else the caller's, pctl_free) and the bytes it wrote
 * in all (*bytes, -1 when not known).  Errors: those of the store,
 * ENOMEM. */
int pctl_attempt_kept_output(char **out, int64_t *bytes, planctl *p,
                             int64_t step_id);

/* ---- task outputs (task_outputs.c) ---- */

/* The outputs of the steps of run_id that have some, as one object
 * {"STEP": {outputs}} in definition order (an empty one when none).
 * *out is the caller's (json_decref).  Errors: EIO, ENOMEM. */
int pctl_run_outputs(json_t **out, planctl *p, int64_t run_id);

/* What try number of step_id recorded as its outputs: an object, or
 * NULL when none.  *out is the caller's.  Errors: EIO. */
int pctl_attempt_outputs(json_t **out, planctl *p, int64_t step_id, int number);

/* The same as text as stored (pctl_free), or NULL when none.  Errors:
 * EIO, ENOMEM. */
int pctl_attempt_outputs_text(char **out, planctl *p, int64_t step_id,
                              int number);

/* Records outputs (JSON text, not NULL) as those of try attempt of
 * step_id, or with attempt 0 as the step's own, replacing what was there
 * (gate.c).  Only the gate, admission and import call it, inside their
 * transactions.  Errors: those of the store (EIO). */
int pctl_outputs_record(planctl *p, int64_t step_id, int attempt,
                        const char *outputs);

/* ---- why an active run waits (waits.c, run_waits) ---- */

/* Records that run_id waits, from now: cause "executor" (for an engine
 * with task kind `kind`) or "slot" (for a free slot of the engine's
 * concurrency, 0: not said), replacing what was recorded.  The engine
 * calls these inside its pass, only when what it sees changes.  Errors:
 * those of the store (EIO). */
int pctl_wait_put(planctl *p, int64_t run_id, const char *cause,
                  const char *kind, int concurrency);
/* Removes what was recorded of run_id.  Errors: the store's. */
int pctl_wait_delete(planctl *p, int64_t run_id);
/* Removes what was recorded of the runs this engine holds (every run on
 * SQLite, where one engine runs): for an engine that knows nothing of
 * them yet.  Errors: the store's. */
int pctl_waits_delete_held(planctl *p);
/* {"run","cause","kind","concurrency","since"} for run_id while it is
 * active and recorded as waiting, else JSON null (also for run_id 0).
 * Inside a read.  Errors: EIO, ENOMEM. */
int pctl_wait_json(json_t **out, planctl *p, int64_t run_id);

/* ---- the engine's lease (lease.c) ---- */

/* Takes the database's engine lease: refused (ECONFLICT, naming the
 * holder) while another engine lives; taken over from a dead engine on
 * this host at once, from another host once its heartbeat is older than
 * ttl_ms.  *token receives the fencing token.  Own transaction. */
int pctl_lease_acquire(int64_t *token, planctl *p, int64_t ttl_ms);
/* Checks, inside a transaction, that the lease still has token: ESTALE
 * otherwise. */
int pctl_fence(planctl *p, int64_t token);
/* BEGIN IMMEDIATE, then pctl_fence; rolls back when fenced off. */
int pctl_engine_tx_begin(planctl *p, int64_t token);
/* An engine's pass: pctl_engine_tx_begin as the one moment `at` the pass
 * decides at, its events queued and written together by
 * pctl_events_flush() before the commit (journal.c); ended by
 * pctl_engine_pass_end(), which commits if rc == 0, else rolls back (and
 * drops what was queued), and returns the result. */
int pctl_engine_pass_begin(planctl *p, int64_t token, int64_t at);
/* The same in two: the transaction begun (on PostgreSQL its BEGIN only
 * sent), then its fence checked (its first read).  Reads sent ahead
 * between the two (pctl_q_send) are answered with the fence, in one
 * round trip.  pctl_engine_pass_open's failure leaves no transaction;
 * pctl_engine_pass_fenced's rolls it back. */
int pctl_engine_pass_open(planctl *p, int64_t at);
int pctl_engine_pass_fenced(planctl *p, int64_t token);
/* Promotes the queued run behind each run that ended in the pass, when the
 * gate left that to the pass's end (a backend that gathers writes: one
 * read for them all instead of one a run); before pctl_events_flush.  0,
 * or the error (the pass then rolls back). */
int pctl_queues_promote(planctl *p);
int pctl_engine_pass_end(planctl *p, int rc);
/* Renews / gives up the lease (own transactions; release also drops the
 * OS lock, whatever happens). */
int pctl_lease_heartbeat(planctl *p, int64_t token);
int pctl_lease_release(planctl *p, int64_t token);
/* Drops the OS lock of an engine that lost its lease (nothing written).
 * Can't fail. */
void pctl_lease_abandon(planctl *p);
/* The engine the lease names, as status and `engines` show it: {"pid",
 * "host", "since", "last_seen", "alive"} (and "token" when with_token),
 * or JSON null when no engine holds the lease.  Inside a read.  Errors:
 * ENOMEM, EIO. */
int pctl_lease_json(json_t **out, planctl *p, int with_token);
/* ---- engines sharing a database (fleet.c) ---- */

/* Whether several engines may share p's database (PostgreSQL). */
int pctl_fleet_supported(const planctl *p);
/* Joins the engines of p's database as name (NULL or "": host:pid), with
 * its TTL and capacity (0: no limit), declaring dead first any engine of
 * this host whose process is gone.  Sets p->fleet_id and makes p's
 * commits quiet (sql.h).  Own transaction. */
int pctl_fleet_join(planctl *p, const char *name, int64_t ttl_ms,
                    int64_t capacity, char **said);
/* Inside a write: ESTALE unless p's engine is still one of them. */
int pctl_fleet_fence(planctl *p);
/* Renews the heartbeat (ESTALE when declared dead), then declares dead
 * the engines whose heartbeat is older than their TTL and those of this
 * host whose process is gone (*reaped: how many; *said, pctl_free, NULL
 * when none: each one's event message, "engine a declared dead (...); 3
 * active runs released", joined by "; ").  Own transaction. */
int pctl_fleet_beat(planctl *p, int *reaped, char **said);
/* Inside a write: claims up to room active runs nobody holds, oldest
 * first, numbered above after (0: from the first); *ids (pctl_free)
 * receives them, in no order.  With after, the runs below it are not
 * looked at: a claim going on from the last run it took costs about its
 * slice, where one from the first reads every active run. */
int pctl_fleet_claim(planctl *p, int64_t room, int64_t after, int64_t **ids,
                     size_t *n);
/* Inside a write: run_id is held by p's engine (a run it promoted from
 * the queue).  Nothing when p is no fleet engine. */
int pctl_fleet_hold(planctl *p, int64_t run_id);
/* Inside a write: gives runs back to nobody, waking the others. */
int pctl_fleet_release(planctl *p, const int64_t *ids, size_t n);
/* Inside an engine's write: its commit wakes the other engines, whether
 * or not it changed a row (an engine short of its share asks them to
 * count theirs again).  Can't fail. */
void pctl_fleet_ask(planctl *p);
/* Inside a transaction: p's engine's fair share of the active runs
 * (pctl_fair_share over the live engines, p's counted, its capacity
 * capacity; 0: no limit), and how many active runs nobody holds. */
int pctl_fleet_share(planctl *p, int64_t capacity, int64_t *share,
                     int64_t *unheld);
/* Leaves: p's row goes, its runs back to nobody.  Own transaction; p is
 * no fleet engine after, whatever happens. */
int pctl_fleet_leave(planctl *p);
/* p is no fleet engine any more (nothing written).  Can't fail. */
void pctl_fleet_forget(planctl *p);
/* Whether an engine of this host, alive at p's last heartbeat, has
 * exited since (no database access: for an engine to look often, and
 * declare it dead at once with a heartbeat).  Can't fail. */
int pctl_fleet_peer_gone(const planctl *p);
/* The engines, as `planctl engines` shows them.  Inside a read. */
int pctl_fleet_json(json_t **out, planctl *p);
/* The engine status shows for run_id (0: none), as pctl_fleet_json lists
 * it with "holds": the one that holds the run, else the first alive, else
 * JSON null.  Inside a read. */
int pctl_fleet_engine_json(json_t **out, planctl *p, int64_t run_id);
/* This host's name, as the engines' rows record it (cut to size).  Can't
 * fail. */
void pctl_host_name(char *buf, size_t size);
/* Whether process pid of this host is gone: none there, one that exited
 * and waits to be reaped, or (pid_start, its start time in clock ticks
 * after boot, not 0) another process that got the pid since.  A process
 * of another user is not gone.  Can't fail. */
int pctl_process_gone(int64_t pid, int64_t pid_start);

/* The change token's "others" (sql.h): moves when another connection
 * commits. */
int pctl_data_version(int64_t *out, planctl *p);

/* The change token's "heard" (sql.h): moves when another connection
 * commits and asks for attention (on PostgreSQL, notifies).  What an
 * engine of a fleet watches: the other engines' passes move "others"
 * and concern nobody else. */
int pctl_db_heard(int64_t *out, planctl *p);
/* name as messages may show it (backends.c): a URI without its password.
 * NULL when out of memory. */
char *pctl_uri_shown(const char *name);
/* The change token, the halves which says (PCTL_TOKEN_*). */
int pctl_db_changes(pctl_db_token *out, planctl *p, unsigned which);

/* ---- a page of instances (views.c), for the web page ---- */

/* Which instances, in which order: name a substring of the name (NULL:
 * any), status the status shown (NULL: any), sort "name", "status" or
 * "age" (the shown run's creation), desc for the reverse order; limit
 * rows from offset. */
typedef struct pctl_ipage_query {
    const char *name, *status, *sort;
    int desc;
    int64_t limit, offset;
} pctl_ipage_query;

/* *out = {"total":N|null, "instances":[{"name","definition":{"name",
 * "version"},"status","run":null|{"id","plan","status","created_at",
 * "started_at","finished_at","steps_done","steps_total"},"queued",
 * "deleting","created_at"}]}: the run shown is the active one, else the
 * latest that is not queued; status NEVER_RUN or QUEUED without one.
 * "total" counts every match (null when the page is past the end of a
 * filtered list).  Only index lookups for the page's rows when sorted by
 * name without a status.  Errors: ENOMEM, EIO. */
int pctl_instances_page(json_t **out, planctl *p, const pctl_ipage_query *q);

/* ---- runs as models (views.c), for verify ---- */

struct pctl_m_run;
/* Loads run_id with its phases, steps and attempts from the tables.
 * Errors: ENOTFOUND, EIO, ENOMEM.  Clear *out with pctl_m_run_clear. */
int pctl_model_from_tables(struct pctl_m_run *out, planctl *p, int64_t run_id);

/* ---- verify (replay.c) ---- */

/* Replays instance_id's events and compares each of its runs with the
 * tables, as planctl_verify() does for the whole database: 0, or
 * EMISMATCH naming the first difference (EIO, ENOMEM). */
int pctl_verify_instance(planctl *p, int64_t instance_id);

/* ---- bundles (bundle.c) ---- */

/* The bundle of one run of instance_id (named instance), as `gc --archive`
 * writes it, or with run_id 0 of the whole instance (`delete --archive`):
 * JSON without newlines, in *out (free with pctl_free). */
int pctl_bundle_run_json(char **out, planctl *p, int64_t instance_id,
                         const char *instance, int64_t run_id);

/* ---- not-found messages with "did you mean" (closest.c) ---- */

/* ENOTFOUND naming the instance, the definition or the plan of def, with
 * the closest existing name when one is close; or the error reading the
 * names met (EIO, ENOMEM, EBUSY). */
int pctl_err_no_instance(planctl *p, const char *name);
int pctl_err_no_definition(planctl *p, const char *name);
/* ENOTFOUND for name@version, listing the registered versions of name
 * (or, when it has none, as pctl_err_no_definition()). */
int pctl_err_no_version(planctl *p, const char *name, const char *version);
int pctl_err_no_plan(planctl *p, const pctl_def *def, const char *plan);

/* ---- definitions ---- */

/* Loads and decodes definition id.  *out is the caller's (pctl_def_free).
 * Errors: ENOTFOUND, EIO, ENOMEM, EDEFINITION (a stored body that no
 * longer decodes: reported, not trusted). */
int pctl_def_load(pctl_def **out, planctl *p, int64_t id);
/* Decodes body, the stored text of definition id (as pctl_def_load does
 * after reading it). */
int pctl_def_decode_stored(pctl_def **out, planctl *p, int64_t id,
                           const char *body);

/* ---- admission ---- */

/*
 * Preflight between planning an admission and making it.  A plan's checks
 * run outside any transaction (never holding the write lock), so the
 * store's admission stops before admitting a plan that has checks which
 * have not passed: it fills the gate with what it would admit and returns
 * PCTL_STOP_FOR_CHECKS, its transaction rolled back.  The caller
 * (engine/admission.c) runs the checks, notes that they passed for that
 * (definition, plan), and calls again; the second transaction re-checks
 * everything and admits.  A plan without checks is admitted in the first
 * transaction: one lookup of the instance, one load of its definition.
 */
typedef struct pctl_preflight_gate {
    /* in: the checks that passed; plan NULL: none yet */
    int64_t passed_definition;
    const char *passed_plan;
    /* out, at PCTL_STOP_FOR_CHECKS: what would be admitted (owned) */
    int64_t instance_id, definition_id;
    char *instance, *plan, *params;
} pctl_preflight_gate;

/* Stopped for preflight (pctl_preflight_gate); never leaves the library. */
#define PCTL_STOP_FOR_CHECKS (-1000)

/* Frees the gate's out fields.  Can't fail. */
void pctl_preflight_gate_clear(pctl_preflight_gate *g);

/* The store's halves of the public admission calls (engine/admission.c
 * runs preflight between them, through pf; NULL: admit without checks).
 * Same arguments and errors as the public ones, and PCTL_STOP_FOR_CHECKS. */
/* What a create, set or upgrade does to the instance's parameter values
 * (params.c): values given (values[0..nvalues), text parsed by each
 * parameter's type), names whose explicit values are removed (unset), and
 * whether an array's or a map's value "@PATH" is read from the file PATH
 * (files; the CLI's -p K=@FILE). */
typedef struct pctl_param_change {
    const planctl_param *values;
    size_t nvalues;
    const char *const *unset;
    size_t nunset;
    int files;
} pctl_param_change;

int pctl_store_create(planctl_admitted *out, planctl *p, const char *name,
                      const char *definition, const char *version,
                      const pctl_param_change *ch, pctl_preflight_gate *pf);
int pctl_store_set(planctl_admitted *out, planctl *p, const char *name,
                   const pctl_param_change *ch, pctl_preflight_gate *pf);
int pctl_store_upgrade(planctl_admitted *out, planctl *p, const char *name,
                       const char *version, const pctl_param_change *ch,
                       pctl_preflight_gate *pf);
int pctl_store_trigger(planctl_admitted *out, planctl *p, const char *instance,
                       const char *plan, const planctl_trigger_options *opts,
                       pctl_preflight_gate *pf);
int pctl_store_retry(planctl_admitted *out, planctl *p, const char *instance,
                     int64_t run_id, pctl_preflight_gate *pf);

typedef struct pctl_admission {
    int64_t instance_id;
    const char *instance_name;
    int64_t definition_id;
    const pctl_def *def;
    const char *plan;
    const char *trigger;     /* runs.trigger: create, set, upgrade, delete,
                              manual, retry */
    const char *reason;      /* or NULL */
    const char *params_json; /* the full parameter snapshot */
    int64_t retry_of;        /* 0 or the run whose COMPLETE parts carry over */
    int queue;               /* queue behind an active run */
    int fresh;               /* the instance is this transaction's: no
                                run to look for */
    const char *busy_hint;   /* "cancel it first, or queue the run" */
    pctl_preflight_gate *pf; /* checks first (see above), or NULL */
} pctl_admission;

/* Admits a run (inside a transaction): refuses with ECONFLICT naming the
 * active run unless a->queue, creates the run with its phases and steps
 * and their events.  *out receives what was admitted (zeroed first). */
/* EINVAL (message set) when reason is not UTF-8; NULL is fine. */
int pctl_reason_check(planctl *p, const char *reason);
int pctl_admit(planctl_admitted *out, planctl *p, const pctl_admission *a);

/*
 * A create's admission in one statement (backends with counted,
 * inside the create's PCTL_TX_ADMIT transaction, whose read of the
 * definition took the write lock): the instance a->instance_name, with
 * its explicit parameters and its event (message, data), and a->plan's
 * run with its phases, steps and their events, as pctl_admit would write
 * them, and the commit's change counter.  *instance_id and *out receive
 * what was made.  PCTL_ADMIT_ROW_BY_ROW when this admission is
 * pctl_admit's to make (checks to run first, events that reach the
 * warning threshold at once, a queue or a retry), ECONFLICT without a
 * message when the name is taken; else 0 or an error.
 */
#define PCTL_ADMIT_ROW_BY_ROW 1
typedef struct pctl_new_instance {
    const char *explicit_params; /* instances.params */
    const char *message, *data;  /* the instance's event */
} pctl_new_instance;
int pctl_admit_new(planctl_admitted *out, int64_t *instance_id, planctl *p,
                   const pctl_admission *a, const pctl_new_instance *n);

/* Describes the instance's active run for a conflict message into a new
 * string ("instance \"zk\" is running plan \"deploy\" (run 12, IN_PROGRESS
 * since 14:03:05)"), or sets *out NULL when there is none.  Returns 0 or
 * an error. */
int pctl_active_run_describe(char **out, int64_t *out_id, planctl *p,
                             int64_t instance_id, const char *instance_name);

/* Instance lookup by name.  ENOTFOUND with a message naming it. */
typedef struct pctl_instance_row {
    int64_t id;
    int64_t definition_id;
    char *params; /* explicit values, JSON object text */
    int deleting;
} pctl_instance_row;
int pctl_instance_find(pctl_instance_row *out, planctl *p, const char *name);
/* pctl_instance_find(), the row locked until the transaction ends (FOR NO
 * KEY UPDATE on PostgreSQL): an admission of a run of an existing
 * instance beside the engines (PCTL_TX_RUN), which lock the row before
 * they promote a queued run of it (pctl_instance_lock), so that a run
 * queued behind an ending one is always seen by the promotion. */
int pctl_instance_find_locked(pctl_instance_row *out, planctl *p,
                              const char *name);
/* Locks instance id's row until the transaction ends, where writers
 * commit beside each other (PostgreSQL); nothing on SQLite.  0 also when
 * the instance is gone. */
int pctl_instance_lock(planctl *p, int64_t id);
/* The same, but ENOTFOUND without a message: for a caller that wants the
 * name free (a create, an import), which must not pay for the "did you
 * mean" of a missing name (it reads every name). */
int pctl_instance_get(pctl_instance_row *out, planctl *p, const char *name);
void pctl_instance_row_clear(pctl_instance_row *r);

/* Builds the full parameter snapshot (defaults overlaid with the explicit
 * values) as a JSON object text.  Unknown names and missing required
 * parameters are EINVAL, all of them listed in one message. */
int pctl_params_resolve(char **out, planctl *p, const pctl_def *def,
                        const char *explicit_json);

/*
 * Applies ch to explicit_obj (the instance's explicit values, the
 * caller's): values parsed by type and checked against enums, names
 * unset (their old values recorded in the object removed).  For an
 * upgrade, pin_from is the snapshot before it: names def does not define
 * are dropped, and an immutable parameter that had a value there keeps
 * it.  Sets *explicit_text to the new explicit object and *snap to the
 * full snapshot.  EINVAL lists every problem (syntax, repeats, unknown
 * names, types, enums, missing required values) in one message.
 */
int pctl_params_apply(char **explicit_text, char **snap, json_t *removed,
                      planctl *p, json_t *explicit_obj, const pctl_def *def,
                      const pctl_param_change *ch, const json_t *pin_from);

/* The names of def's parameters whose values differ between the
 * snapshots before and after, or that were unset (in removed), in *out
 * (pctl_free; the names are def's).  Returns 0 or PLANCTL_ENOMEM. */
int pctl_params_changed(const char ***out, size_t *n, const pctl_def *def,
                        const json_t *before, const json_t *after,
                        const json_t *removed);

/* EINVAL naming every immutable parameter of def that had a value in
 * before and is changed in after or unset (in removed); else 0. */
int pctl_params_check_immutable(planctl *p, const pctl_def *def,
                                const json_t *before, const json_t *after,
                                const json_t *removed);

/* Sets *out to 1 when attempt `attempt` of step `step` of run run_id,
 * whose uid is run_uid, is this database's and ended stopped (cancelled,
 * or cut short by an engine stopping or a timeout), else 0 (attempts.c).
 * Errors: EIO, EBUSY. */
int pctl_attempt_stopped(int *out, planctl *p, int64_t run_id,
                         const char *run_uid, const char *step, int attempt);

/* One try of a step, as its private output directory names it. */
typedef struct pctl_try_ref {
    int64_t run_id;
    const char *run_uid;
    const char *step;
    int attempt;
} pctl_try_ref;

/* Sets ended[i] to 1 when tries[i] is this database's and has ended, else
 * 0, for i in [0, n): one statement for many tries (a starting engine's
 * look at what dead engines' tasks left, attempts.c).  Errors: EIO,
 * EBUSY, ENOMEM. */
int pctl_attempts_ended(unsigned char *ended, planctl *p,
                        const pctl_try_ref *tries, size_t n);

#endif
