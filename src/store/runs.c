/*
 * runs.c - operator actions on runs: trigger, retry, cancel, pause and
 * resume, each one transaction through admission or the gate.
 *
 * Cancel is done in the database directly (children CANCELLED, then the
 * run), so it works whether or not an engine is running, and reaches a
 * QUEUED run as well as the active one; an engine notices
 * on its next pass that the steps it runs are no longer IN_PROGRESS and
 * stops their tasks.  Its own writes for them then fail the
 * compare-and-set and are dropped.
 *
 * Cancel, pause and resume change one run, trigger and retry admit a run
 * of an existing instance (PCTL_TX_RUN): on PostgreSQL they commit beside
 * the engines' passes, under the run's row lock (lock_target) or the
 * instance's (pctl_instance_find_locked: the engines lock it too before
 * they promote a queued run), taken before any write; a deadlock with a
 * pass is broken by the server, and the change is made again from the
 * start (pctl_tx_again: a few times at most).
 */
#include <string.h>

#include "core/alloc.h"
#include "store/store.h"

int pctl_store_trigger(planctl_admitted *out, planctl *p, const char *instance,
                       const char *plan, const planctl_trigger_options *opts,
                       pctl_preflight_gate *pf)
{
    planctl_trigger_options defaults = PLANCTL_TRIGGER_OPTIONS_INIT;
    pctl_instance_row row = {0};
    pctl_def *def = NULL;
    char *snap = NULL;
    pctl_admission a = {0};
    int rc, tries = 0;

    if (!out || !p || !instance || !plan)
        return pctl_err_arg(p, !p          ? "p"
                               : !out      ? "out"
                               : !instance ? "instance"
                                           : "plan");
    memset(out, 0, sizeof *out);
    if (!opts)
        opts = &defaults;
    if (strcmp(plan, "cleanup") == 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "plan \"cleanup\" runs only when instance \"%s\" is "
                        "deleted",
                        instance);
again:
    if ((rc = pctl_tx_begin_run(p)) < 0)
        return rc;
    rc = pctl_instance_find_locked(&row, p, instance);
    if (rc == 0 && row.deleting)
        rc = pctl_err(p, PLANCTL_ECONFLICT, "instance \"%s\" is being deleted",
                      instance);
    if (rc == 0)
        rc = pctl_def_load(&def, p, row.definition_id);
    if (rc == 0 && !pctl_def_plan(def, plan))
        rc = pctl_err_no_plan(p, def, plan);
    if (rc == 0)
        rc = pctl_params_resolve(&snap, p, def, row.params);
    if (rc == 0) {
        a.instance_id = row.id;
        a.instance_name = instance;
        a.definition_id = row.definition_id;
        a.def = def;
        a.plan = plan;
        a.trigger = "manual";
        a.reason = opts->reason;
        a.params_json = snap;
        a.queue = opts->queue;
        a.busy_hint = "cancel it first, or queue the run";
        a.pf = pf;
        rc = pctl_admit(out, p, &a);
    }
    rc = pctl_tx_end(p, rc);
    if (rc < 0)
        memset(out, 0, sizeof *out);
    pctl_free(snap);
    pctl_def_free(def);
    pctl_instance_row_clear(&row);
    if (pctl_tx_again(p, rc, &tries)) {
        snap = NULL;
        def = NULL;
        goto again;
    }
    return rc;
}

/* Reads what a retry needs of the run being retried. */
typedef struct old_run {
    int64_t id, definition_id;
    char *plan, *params;
    planctl_status status;
} old_run;

static int load_old_run(old_run *out, planctl *p, int64_t instance_id,
                        const char *instance, int64_t run_id)
{
    pctl_stmt *st = pctl_q(p, run_id > 0 ? PCTL_Q_run_for_retry
                                         : PCTL_Q_run_latest_for_retry);
    int rc;

    memset(out, 0, sizeof *out);
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, instance_id);
    if (run_id > 0)
        pctl_bind_i64(st, 2, run_id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        out->id = pctl_col_i64(st, 0);
        out->definition_id = pctl_col_i64(st, 1);
        out->plan = pctl_strdup(pctl_col_text(st, 2));
        out->params = pctl_strdup(pctl_col_text(st, 3));
        rc = planctl_status_parse(&out->status, pctl_col_text(st, 4));
        pctl_reset(st);
        if (!out->plan || !out->params)
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        return rc < 0 ? pctl_err(p, PLANCTL_EIO, "unknown run status") : 0;
    }
    pctl_reset(st);
    if (rc != PCTL_DONE)
        return pctl_q_fail(st, rc);
    if (run_id > 0)
        return pctl_err(p, PLANCTL_ENOTFOUND,
                        "run %lld not found for instance \"%s\"",
                        (long long)run_id, instance);
    return pctl_err(p, PLANCTL_ENOTFOUND, "instance \"%s\" has no run yet",
                    instance);
}

int pctl_store_retry(planctl_admitted *out, planctl *p, const char *instance,
                     int64_t run_id, pctl_preflight_gate *pf)
{
    pctl_instance_row row = {0};
    old_run old = {0};
    pctl_def *def = NULL;
    char *reason = NULL;
    pctl_admission a = {0};
    int rc, tries = 0;

    if (!out || !p || !instance)
        return pctl_err_arg(p, !p ? "p" : !out ? "out" : "instance");
    if (run_id < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "run_id %lld is negative: give a run's id, or 0 for "
                        "the instance's latest run",
                        (long long)run_id);
    memset(out, 0, sizeof *out);
again:
    if ((rc = pctl_tx_begin_run(p)) < 0)
        return rc;
    rc = pctl_instance_find_locked(&row, p, instance);
    if (rc == 0)
        rc = load_old_run(&old, p, row.id, instance, run_id);
    if (rc == 0 && old.status != PLANCTL_STATUS_FATAL_ERROR &&
        old.status != PLANCTL_STATUS_CANCELLED)
        rc = pctl_err(p, PLANCTL_ECONFLICT,
                      "run %lld is %s; only a FATAL_ERROR or CANCELLED run "
                      "can be retried",
                      (long long)old.id, planctl_status_name(old.status));
    if (rc == 0)
        rc = pctl_def_load(&def, p, old.definition_id);
    if (rc == 0 &&
        !(reason = pctl_asprintf("retry of run %lld", (long long)old.id)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0) {
        a.instance_id = row.id;
        a.instance_name = instance;
        a.definition_id = old.definition_id;
        a.def = def;
        a.plan = old.plan;
        a.trigger = "retry";
        a.reason = reason;
        a.params_json = old.params;
        a.retry_of = old.id;
        a.pf = pf;
        rc = pctl_admit(out, p, &a);
    }
    rc = pctl_tx_end(p, rc);
    if (rc < 0)
        memset(out, 0, sizeof *out);
    pctl_free(reason);
    pctl_free(old.plan);
    pctl_free(old.params);
    pctl_def_free(def);
    pctl_instance_row_clear(&row);
    if (pctl_tx_again(p, rc, &tries)) {
        memset(&old, 0, sizeof old);
        def = NULL;
        reason = NULL;
        goto again;
    }
    return rc;
}

/* The run status in column col of st's row into *out; EIO (a message
 * set) when it is none planctl knows. */
static int col_status(planctl_status *out, planctl *p, pctl_stmt *st, int col)
{
    return planctl_status_parse(out, pctl_col_text(st, col)) < 0
               ? pctl_err(p, PLANCTL_EIO, "unknown run status")
               : 0;
}

/* Finds the instance's active run: its id and status. */
static int active_run(int64_t *id, planctl_status *status, planctl *p,
                      const char *instance, const char *verb)
{
    pctl_instance_row row = {0};
    pctl_stmt *st;
    int rc = pctl_instance_find(&row, p, instance);

    *id = 0;
    if (rc < 0)
        return rc;
    st = pctl_q(p, PCTL_Q_run_active);
    if (!st) {
        pctl_instance_row_clear(&row);
        return pctl_q_err(p);
    }
    pctl_bind_i64(st, 1, row.id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        *id = pctl_col_i64(st, 0);
        rc = col_status(status, p, st, 2);
    } else if (rc == PCTL_DONE) {
        rc =
            pctl_err(p, PLANCTL_ENOTFOUND,
                     "instance \"%s\" has no active run to %s", instance, verb);
    } else {
        rc = pctl_q_fail(st, rc);
    }
    pctl_reset(st);
    pctl_instance_row_clear(&row);
    return rc;
}

/* Finds run_id of the instance for a cancel: its status, refused when it
 * has ended. */
static int run_to_cancel(planctl_status *status, planctl *p,
                         const char *instance, int64_t run_id)
{
    pctl_instance_row row = {0};
    pctl_stmt *st;
    int rc = pctl_instance_find(&row, p, instance);

    if (rc < 0)
        return rc;
    st = pctl_q(p, PCTL_Q_run_status_of_instance);
    if (!st) {
        pctl_instance_row_clear(&row);
        return pctl_q_err(p);
    }
    pctl_bind_i64(st, 1, row.id);
    pctl_bind_i64(st, 2, run_id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        rc = col_status(status, p, st, 0);
    } else if (rc == PCTL_DONE) {
        rc = pctl_err(p, PLANCTL_ENOTFOUND,
                      "run %lld not found for instance \"%s\"",
                      (long long)run_id, instance);
    } else {
        rc = pctl_q_fail(st, rc);
    }
    pctl_reset(st);
    pctl_instance_row_clear(&row);
    if (rc == 0 && pctl_status_terminal(*status))
        rc =
            pctl_err(p, PLANCTL_ECONFLICT,
                     "run %lld of instance \"%s\" is %s; only an active "
                     "or QUEUED run can be cancelled",
                     (long long)run_id, instance, planctl_status_name(*status));
    return rc;
}

int pctl_run_lock(planctl_status *status, planctl *p, int64_t run_id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_run_lock);
    int rc;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        rc = col_status(status, p, st, 0);
    } else if (rc == PCTL_DONE) {
        rc = pctl_err(p, PLANCTL_ENOTFOUND, "run %lld does not exist",
                      (long long)run_id);
    } else if (rc == PLANCTL_EBUSY && !p->conn->deadlocked) {
        rc = pctl_err(p, rc,
                      "run %lld is being changed by another writer (its row "
                      "is locked) for longer than the busy timeout; try "
                      "again",
                      (long long)run_id);
    } else {
        rc = pctl_q_fail(st, rc);
    }
    pctl_reset(st);
    return rc;
}

/* The run an operator's change is for (the instance's active run, or its
 * run `run` when > 0: a cancel's), locked (pctl_run_lock), with *status
 * as it is under the lock.  An engine beside may have moved it between
 * the read and the lock (ended it, promoted the next): then it is read
 * again, now that every commit before the lock shows. */
static int lock_target(int64_t *id, planctl_status *status, planctl *p,
                       const char *instance, int64_t run, const char *verb)
{
    planctl_status now;
    int tries, rc;

    for (tries = 0; tries < 3; tries++) {
        if (run > 0) {
            *id = run;
            rc = run_to_cancel(status, p, instance, run);
        } else {
            rc = active_run(id, status, p, instance, verb);
        }
        if (rc < 0 || (rc = pctl_run_lock(&now, p, *id)) < 0)
            return rc;
        if (now == *status)
            return 0;
    }
    return pctl_err(p, PLANCTL_ESTALE,
                    "run %lld of instance \"%s\" kept changing while it was "
                    "being locked to %s it; try again",
                    (long long)*id, instance, verb);
}

int pctl_run_change(planctl *p, int (*change)(planctl *p, void *arg), void *arg)
{
    int tries = 0, rc;

    do {
        if ((rc = pctl_tx_begin_run(p)) < 0)
            return rc;
        rc = pctl_tx_end(p, change(p, arg));
    } while (pctl_tx_again(p, rc, &tries));
    return rc;
}

typedef struct cancel_args {
    const char *instance;
    const char *msg;
    int64_t run, id;
} cancel_args;

static int cancel_in_tx(planctl *p, void *arg)
{
    cancel_args *a = arg;
    pctl_change c = PCTL_CHANGE_INIT;
    int rc = lock_target(&a->id, &c.from, p, a->instance, a->run, "cancel");

    if (rc == 0)
        rc = pctl_close_children(p, a->id, PLANCTL_STATUS_CANCELLED, a->msg,
                                 pctl_user(p));
    if (rc == 0) {
        c.entity = PLANCTL_ENTITY_RUN;
        c.id = a->id;
        c.to = PLANCTL_STATUS_CANCELLED;
        c.message = a->msg;
        c.actor = pctl_user(p);
        rc = pctl_gate(p, &c);
    }
    return rc;
}

int planctl_run_cancel_opts(int64_t *out, planctl *p, const char *instance,
                            const planctl_cancel_options *opts)
{
    planctl_cancel_options defaults = PLANCTL_CANCEL_OPTIONS_INIT;
    cancel_args a = {0};
    const char *reason;
    char *msg = NULL;
    int rc;

    if (out)
        *out = 0;
    if (!p || !instance)
        return pctl_err_arg(p, !p ? "p" : "instance");
    if (!opts)
        opts = &defaults;
    if (opts->version < 1 || opts->version > PLANCTL_CANCEL_OPTIONS_VERSION)
        return pctl_err(p, PLANCTL_EINVAL,
                        "unknown cancel options version %u (this library "
                        "knows 1 to %d)",
                        opts->version, PLANCTL_CANCEL_OPTIONS_VERSION);
    if (opts->run < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "run id %lld: give a positive run id, or 0 for the "
                        "active run",
                        (long long)opts->run);
    reason = opts->reason;
    if ((rc = pctl_reason_check(p, reason)) < 0)
        return rc;
    msg = reason && *reason ? pctl_asprintf("cancelled: %s", reason)
                            : pctl_strdup("cancelled by user");
    if (!msg)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    a.instance = instance;
    a.msg = msg;
    a.run = opts->run;
    rc = pctl_run_change(p, cancel_in_tx, &a);
    pctl_free(msg);
    if (rc == 0 && out)
        *out = a.id;
    return rc;
}

int planctl_run_cancel(int64_t *out, planctl *p, const char *instance,
                       const char *reason)
{
    planctl_cancel_options o = PLANCTL_CANCEL_OPTIONS_INIT;

    o.reason = reason;
    return planctl_run_cancel_opts(out, p, instance, &o);
}

typedef struct pause_args {
    const char *instance;
    int pause;
    int64_t id;
} pause_args;

static int pause_in_tx(planctl *p, void *arg)
{
    pause_args *a = arg;
    pctl_change c = PCTL_CHANGE_INIT;
    planctl_status need =
        a->pause ? PLANCTL_STATUS_IN_PROGRESS : PLANCTL_STATUS_PAUSED;
    int pause = a->pause;
    const char *instance = a->instance;
    int64_t id = 0;
    int rc =
        lock_target(&id, &c.from, p, instance, 0, pause ? "pause" : "resume");

    a->id = id;
    if (rc == 0 && c.from != need)
        rc = pctl_err(p, PLANCTL_ECONFLICT,
                      "run %lld of instance \"%s\" is %s; only %s run can "
                      "be %s",
                      (long long)id, instance, planctl_status_name(c.from),
                      pause ? "an IN_PROGRESS" : "a PAUSED",
                      pause ? "paused" : "resumed");
    if (rc == 0) {
        c.entity = PLANCTL_ENTITY_RUN;
        c.id = id;
        c.to = pause ? PLANCTL_STATUS_PAUSED : PLANCTL_STATUS_IN_PROGRESS;
        c.message = pause ? "paused by user" : NULL;
        c.actor = pctl_user(p);
        rc = pctl_gate(p, &c);
    }
    return rc;
}

static int pause_resume(int64_t *out, planctl *p, const char *instance,
                        int pause)
{
    pause_args a = {0};
    int rc;

    if (out)
        *out = 0;
    if (!p || !instance)
        return pctl_err_arg(p, !p ? "p" : "instance");
    a.instance = instance;
    a.pause = pause;
    rc = pctl_run_change(p, pause_in_tx, &a);
    if (rc == 0 && out)
        *out = a.id;
    return rc;
}

int planctl_run_pause(int64_t *out, planctl *p, const char *instance)
{
    return pause_resume(out, p, instance, 1);
}

int planctl_run_resume(int64_t *out, planctl *p, const char *instance)
{
    return pause_resume(out, p, instance, 0);
}

/* An embedder's change of one row, under its run's row lock (as every
 * change to one run: store/README, "Lock order"): beside the engines'
 * passes that do not hold the run.  A row that is not there is the
 * gate's to say. */
static int transition_in_tx(planctl *p, void *arg)
{
    pctl_change *c = arg;
    planctl_status now;
    int64_t run;
    int rc = pctl_gate_run_of(&run, p, c->entity, c->id);

    if (rc == 0 && run > 0)
        rc = pctl_run_lock(&now, p, run);
    return rc < 0 ? rc : pctl_gate(p, c);
}

int planctl_transition(planctl *p, planctl_entity entity, int64_t id,
                       planctl_status from, planctl_status to,
                       const char *message, const char *actor)
{
    pctl_change c = PCTL_CHANGE_INIT;

    if (!p)
        return pctl_err_arg(p, "p");
    if ((unsigned)entity > PLANCTL_ENTITY_STEP)
        return pctl_err(p, PLANCTL_EINVAL, "entity %d is not an entity",
                        (int)entity);
    if ((unsigned)to >= PLANCTL_STATUS__COUNT ||
        (unsigned)from > PLANCTL_STATUS__COUNT)
        return pctl_err(p, PLANCTL_EINVAL, "%s %d is not a status",
                        (unsigned)to >= PLANCTL_STATUS__COUNT ? "to" : "from",
                        (unsigned)to >= PLANCTL_STATUS__COUNT ? (int)to
                                                              : (int)from);
    c.entity = entity;
    c.id = id;
    c.from = from;
    c.to = to;
    c.message = message;
    c.actor = actor;
    return pctl_run_change(p, transition_in_tx, &c);
}
