/*
 * gate.c - the one gate every status change goes through (curl's single
 * mstate()): legality from the transition table, a compare-and-set on the
 * row, the attempt bookkeeping of steps, and the event, all inside the
 * caller's transaction, so no second write can leave a run half-updated.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/logtail.h"
#include "core/marks.h"
#include "core/rollup.h"
#include "store/store.h"

static const pctl_query set_query[PLANCTL_ENTITY__COUNT] = {
    PCTL_Q_run_set_status, PCTL_Q_phase_set_status, PCTL_Q_step_set_status};
static const pctl_query get_query[PLANCTL_ENTITY__COUNT] = {
    PCTL_Q_run_get_status, PCTL_Q_phase_get_status, PCTL_Q_step_get_status};
static const pctl_query result_query[PLANCTL_ENTITY__COUNT] = {
    PCTL_Q_run_set_result, PCTL_Q_phase_set_result, PCTL_Q_step_set_result};

/* Explains a failed compare-and-set: the row is missing, or it moved on. */
static int explain_cas(planctl *p, const pctl_change *c)
{
    pctl_stmt *st = pctl_q(p, get_query[c->entity]);
    const char *ent = pctl_entity_name(c->entity);
    int rc;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, c->id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        char now[32];

        snprintf(now, sizeof now, "%s", pctl_col_text(st, 0));
        pctl_reset(st);
        return pctl_err(p, PLANCTL_ESTALE, "%s %lld is %s, not %s", ent,
                        (long long)c->id, now, planctl_status_name(c->from));
    }
    pctl_reset(st);
    if (rc != PCTL_DONE)
        return pctl_q_fail(st, rc);
    return pctl_err(p, PLANCTL_ENOTFOUND, "%s %lld does not exist", ent,
                    (long long)c->id);
}

/* The attempts row of a step: opened when it enters IN_PROGRESS, closed
 * when it leaves.  The partial unique index attempts_one_open guarantees
 * there is never more than one open. */
static int step_attempt(planctl *p, const pctl_change *c, int64_t now,
                        int attempt)
{
    pctl_stmt *st;
    int rc;

    if (c->from == PLANCTL_STATUS_IN_PROGRESS) {
        /* Outputs are written by statements of their own, only when there
         * are some: a try without outputs (every Dummy step) runs the same
         * statements as before outputs existed (tools/bench/limit.c). */
        if (c->outputs &&
            (rc = pctl_outputs_record(p, c->id, attempt, c->outputs)) < 0)
            return rc;
        st = pctl_q(p, PCTL_Q_attempt_close);
        if (!st)
            return pctl_q_err(p);
        pctl_bind_i64(st, 1, c->id);
        pctl_bind_text(st, 2, planctl_status_name(c->to));
        pctl_bind_i64(st, 3, now);
        if (c->exit_code >= 0)
            pctl_bind_i64(st, 4, c->exit_code);
        pctl_bind_text(st, 5, c->message);
        pctl_bind_text(st, 6, c->output);
        if ((rc = pctl_q_exec_later(st, -1)) < 0)
            return rc;
        /* Like outputs, only for a try that wrote some. */
        if (c->output && *c->output && c->output_bytes >= 0 &&
            (rc = pctl_output_bytes_record(p, c->id, attempt,
                                           c->output_bytes)) < 0)
            return rc;
        if (!c->outputs || c->to != PLANCTL_STATUS_COMPLETE)
            return rc;
        /* What the later tasks of the run see. */
        return pctl_outputs_record(p, c->id, 0, c->outputs);
    }
    if (c->to == PLANCTL_STATUS_IN_PROGRESS) {
        st = pctl_q(p, PCTL_Q_attempt_open);
        if (!st)
            return pctl_q_err(p);
        pctl_bind_i64(st, 1, c->id);
        pctl_bind_i64(st, 2, attempt);
        pctl_bind_i64(st, 3, now);
        return pctl_q_exec_later(st, -1);
    }
    return 0;
}

/* A completed cleanup of an instance being deleted removes it, with its
 * runs and events (ON DELETE CASCADE); its events still queued go with
 * it.  A run the engine knows is of another plan removes nothing: no
 * statement (on a server, a round trip). */
static int cleanup_removes(planctl *p, int64_t run_id, int64_t instance_id)
{
    pctl_stmt *st;
    pctl_known_row k;
    int rc;

    if (!p->check_cache &&
        pctl_observed_known(p, PLANCTL_ENTITY_RUN, run_id, &k) && k.plan &&
        strcmp(k.plan, "cleanup") != 0)
        return 0;
    st = pctl_q(p, PCTL_Q_instance_remove_after_cleanup);
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    if ((rc = pctl_q_exec(st)) < 0)
        return rc;
    if (pctl_changes(st) > 0)
        pctl_events_forget_instance(p, instance_id);
    return 0;
}

/* Promotes queued run next, behind run_id that ended. */
static int promote(planctl *p, int64_t run_id, int64_t next)
{
    pctl_change c = PCTL_CHANGE_INIT;
    char msg[64];
    int rc;

    snprintf(msg, sizeof msg, "promoted from the queue after run %lld",
             (long long)run_id);
    c.entity = PLANCTL_ENTITY_RUN;
    c.id = next;
    c.from = PLANCTL_STATUS_QUEUED;
    c.to = PLANCTL_STATUS_PENDING;
    c.message = msg;
    c.actor = "planctl";
    /* The instance stays with the engine that ended its run. */
    if ((rc = pctl_gate(p, &c)) == 0)
        rc = pctl_fleet_hold(p, next);
    return rc;
}

/* What a run's end means for its instance (planctl-engine(7), "Plan for a
 * parameter change"), then the queue. */
static int run_ended(planctl *p, int64_t run_id, int64_t instance_id,
                     planctl_status to)
{
    pctl_stmt *st;
    int64_t next = 0;
    int rc;

    if (to == PLANCTL_STATUS_COMPLETE) {
        st = pctl_q(p, PCTL_Q_instance_mark_applied);
        if (!st)
            return pctl_q_err(p);
        pctl_bind_i64(st, 1, run_id);
        pctl_bind_i64(st, 2, pctl_now(p));
        if ((rc = pctl_q_exec_later(st, -1)) < 0 ||
            (rc = cleanup_removes(p, run_id, instance_id)) < 0)
            return rc;
    }

    /* The queue behind it: at the pass's end, for every run that ended
     * in it, where writes are gathered (a read here would send them). */
    if (pctl_q_later_on(p) && p->conn->m->gathers)
        return pctl_push_id(&p->ended_runs, &p->nended_runs, &p->ended_runs_cap,
                            run_id) < 0
                   ? pctl_err(p, PLANCTL_ENOMEM, "out of memory")
                   : 0;
    /* The instance's row first: an admission beside (a trigger --queue)
     * holds it while it queues, so the queue read below sees its run. */
    if ((rc = pctl_instance_lock(p, instance_id)) < 0)
        return rc;
    st = pctl_q(p, PCTL_Q_run_next_queued);
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW)
        next = pctl_col_i64(st, 0);
    pctl_reset(st);
    if (rc != PCTL_ROW && rc != PCTL_DONE)
        return pctl_q_fail(st, rc);
    return next > 0 ? promote(p, run_id, next) : 0;
}

int pctl_queues_promote(planctl *p)
{
    pctl_buf ids = PCTL_BUF_INIT;
    int64_t *next = NULL;
    pctl_stmt *st;
    size_t i, n = p->nended_runs;
    int rc = 0;

    if (n == 0)
        return 0;
    p->nended_runs = 0;
    if (!(next = pctl_calloc(n, sizeof *next)) ||
        pctl_buf_ids_json(&ids, p->ended_runs, n) < 0)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* Their instances' rows first, in id order (sent ahead of the read,
     * which starts once they are held and so sees every run an admission
     * beside queued while holding one: pctl_instance_find_locked). */
    if (rc == 0 && !(st = pctl_q(p, PCTL_Q_instances_lock_of_runs)))
        rc = pctl_q_err(p);
    if (rc == 0) {
        pctl_bind_text(st, 1, ids.s);
        rc = pctl_q_exec_later(st, -1);
    }
    if (rc == 0 && !(st = pctl_q(p, PCTL_Q_runs_next_queued)))
        rc = pctl_q_err(p);
    if (rc == 0) {
        pctl_bind_text(st, 1, ids.s);
        while ((rc = pctl_step(st)) == PCTL_ROW)
            for (i = 0; i < n; i++)
                if (p->ended_runs[i] == pctl_col_i64(st, 0))
                    next[i] = pctl_col_i64(st, 1);
        pctl_reset(st);
        rc = rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
    }
    /* In the order the runs ended, as each would have at its end; a
     * queued run once (two runs of one instance never end in one pass:
     * the second is promoted only here). */
    for (i = 0; rc == 0 && i < n; i++) {
        size_t j;

        for (j = 0; j < i && next[j] != next[i]; j++)
            ;
        if (next[i] > 0 && j == i)
            rc = promote(p, p->ended_runs[i], next[i]);
    }
    pctl_free(next);
    pctl_buf_free(&ids);
    return rc;
}

/*
 * What an event must carry beyond from/to/message for the rows to be
 * rebuilt from the events alone (replay.c): deadlines and the next try's
 * time as they are set, a try's exit code, output and outputs as it
 * ends.  NULL when there is nothing more.
 */
/* Whether c grants its step another try (only an interrupted try that
 * ends ERROR can). */
static int grants(const pctl_change *c)
{
    return c->grant_attempt && c->entity == PLANCTL_ENTITY_STEP &&
           c->from == PLANCTL_STATUS_IN_PROGRESS &&
           c->to == PLANCTL_STATUS_ERROR;
}

static int change_data(char **out, const pctl_change *c)
{
    int step = c->entity == PLANCTL_ENTITY_STEP,
        ended = step && c->from == PLANCTL_STATUS_IN_PROGRESS;
    int deadline = c->to == PLANCTL_STATUS_IN_PROGRESS && c->deadline_at > 0,
        next = step && c->to == PLANCTL_STATUS_ERROR && c->next_attempt_at > 0,
        exit_code = ended && c->exit_code >= 0, output = ended && c->output,
        outputs = ended && c->outputs;
    json_t *o;
    int rc = 0;

    *out = NULL;
    /* Most changes carry nothing more (a step that starts with no
     * timeout, one that completes with no output): no JSON object is
     * made for them. */
    if (!deadline && !next && !exit_code && !output && !outputs && !grants(c))
        return 0;
    if (!(o = json_object()))
        return PLANCTL_ENOMEM;
    if (deadline)
        rc |=
            json_object_set_new(o, "deadline_at", json_integer(c->deadline_at));
    if (next)
        rc |= json_object_set_new(o, "next_attempt_at",
                                  json_integer(c->next_attempt_at));
    if (exit_code)
        rc |= json_object_set_new(o, "exit_code", json_integer(c->exit_code));
    if (output)
        rc |= json_object_set_new(o, "output", json_string(c->output));
    if (grants(c))
        rc |= json_object_set_new(o, "grant_attempt", json_integer(1));
    /* As an object, not text in a string: replay and export read it as
     * the attempt's (and a completed step's) outputs. */
    if (outputs) {
        json_t *v = json_loads(c->outputs, 0, NULL);

        rc |= v ? json_object_set_new(o, "outputs", v) : -1;
    }
    if (rc == 0 && !(*out = json_dumps(o, JSON_COMPACT)))
        rc = -1;
    json_decref(o);
    return rc ? PLANCTL_ENOMEM : 0;
}

/* A row as the gate's UPDATE left it. */
typedef struct written {
    int64_t run_id, phase_id, instance_id, next_attempt_at, deadline_at;
    int attempt;
} written;

/* Reads it back (result_query). */
static int read_row(planctl *p, const pctl_change *c, written *w)
{
    pctl_stmt *st = pctl_q(p, result_query[c->entity]);
    int rc;

    memset(w, 0, sizeof *w);
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, c->id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        w->run_id = pctl_col_i64(st, 0);
        w->phase_id = pctl_col_i64(st, 1);
        w->attempt = pctl_col_int(st, 2);
        w->next_attempt_at = pctl_col_i64(st, 3);
        w->deadline_at = pctl_col_i64(st, 4);
        w->instance_id = pctl_col_i64(st, 5);
    }
    pctl_reset(st);
    return rc == PCTL_ROW ? 0 : pctl_q_fail(st, rc);
}

/* The same, from what the row held before (the cache) and the marks the
 * change bound into its UPDATE. */
static written written_row(const pctl_change *c, const pctl_marks *m,
                           const pctl_known_row *k)
{
    pctl_marked after =
        pctl_marks_apply(c->entity, m, k->attempt, k->deadline_at);
    written w;

    memset(&w, 0, sizeof w);
    w.run_id = k->run_id;
    w.instance_id = k->instance_id;
    if (c->entity != PLANCTL_ENTITY_RUN)
        w.phase_id = k->phase_id;
    w.attempt = after.attempt;
    w.next_attempt_at = after.next_attempt_at;
    w.deadline_at = after.deadline_at;
    return w;
}

/* PLANCTL_CHECK_CACHE: the row read back against what the cache made of
 * it. */
static int check_cached(planctl *p, const pctl_change *c, const pctl_marks *m,
                        const pctl_known_row *k, const written *w)
{
    written x = written_row(c, m, k);

    if (x.run_id == w->run_id && x.phase_id == w->phase_id &&
        x.instance_id == w->instance_id && x.attempt == w->attempt &&
        x.next_attempt_at == w->next_attempt_at &&
        x.deadline_at == w->deadline_at)
        return 0;
    return pctl_err(
        p, PLANCTL_EIO,
        "engine cache disagrees with %s %lld as written: run "
        "%lld/%lld phase %lld/%lld instance %lld/%lld attempt "
        "%d/%d next %lld/%lld deadline %lld/%lld (cache/row)",
        pctl_entity_name(c->entity), (long long)c->id, (long long)x.run_id,
        (long long)w->run_id, (long long)x.phase_id, (long long)w->phase_id,
        (long long)x.instance_id, (long long)w->instance_id, x.attempt,
        w->attempt, (long long)x.next_attempt_at, (long long)w->next_attempt_at,
        (long long)x.deadline_at, (long long)w->deadline_at);
}

static int changed(planctl *p, const pctl_change *c, int64_t now,
                   const written *wp);

/* A try ended by one who does not have its output (the engine's recovery
 * after a crash and its timeouts; cancel, a deadline, a failed sibling,
 * planctl_transition) keeps what it stored while it ran (the engine
 * writes it at most once a second, and once more as it ends a try
 * itself), and its message quotes the last line of it, as a task's own
 * failure does ("timed out after 10s: LINE").  *k is c with the output
 * and message set; *own_output and *own_msg are what it points at
 * (pctl_free).  A try ended with its job's outcome in hand
 * (outputs_known, or an output) reads nothing here. */
static int keep_output(planctl *p, const pctl_change *c, pctl_change *k,
                       char **own_output, char **own_msg)
{
    const char *line;
    size_t len;
    int64_t bytes;
    int rc;

    *k = *c;
    *own_output = *own_msg = NULL;
    if (c->entity != PLANCTL_ENTITY_STEP ||
        c->from != PLANCTL_STATUS_IN_PROGRESS || c->output ||
        c->outputs_known || p->tx_depth == 0)
        return 0; /* the gate's own checks come after */
    if ((rc = pctl_attempt_kept_output(own_output, &bytes, p, c->id)) < 0 ||
        !*own_output || !**own_output)
        return rc;
    k->output = *own_output;
    k->output_bytes = bytes;
    line = pctl_logtail_last_line(*own_output, &len);
    if (!len || !c->message || !*c->message)
        return 0;
    if (!(*own_msg = pctl_asprintf("%s: %.*s", c->message, (int)len, line)))
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    k->message = *own_msg;
    return 0;
}

static int gate_kept(planctl *p, const pctl_change *c);

int pctl_gate(planctl *p, const pctl_change *c)
{
    pctl_change k;
    char *output, *msg;
    int rc = keep_output(p, c, &k, &output, &msg);

    if (rc == 0)
        rc = gate_kept(p, &k);
    pctl_free(output);
    pctl_free(msg);
    return rc;
}

static int gate_kept(planctl *p, const pctl_change *c)
{
    pctl_stmt *st;
    int64_t now = pctl_now(p);
    int rc, cached;
    pctl_known_row known;
    pctl_marks marks;
    written w;
    const char *ent;

    if ((unsigned)c->entity >= PLANCTL_ENTITY__COUNT)
        return pctl_err(p, PLANCTL_EINVAL, "unknown entity %d", c->entity);
    ent = pctl_entity_name(c->entity);
    if (!planctl_transition_legal(c->entity, c->from, c->to))
        return pctl_err(
            p, PLANCTL_ETRANSITION, "%s %lld cannot go from %s to %s", ent,
            (long long)c->id,
            c->from == PCTL_NEW ? "(new)" : planctl_status_name(c->from),
            planctl_status_name(c->to) ? planctl_status_name(c->to) : "?");
    if (c->from == PCTL_NEW)
        return pctl_err(p, PLANCTL_EINVAL,
                        "%s rows are created by admission, not the gate", ent);
    if (p->tx_depth == 0)
        return pctl_err(p, PLANCTL_ERROR,
                        "status change outside a transaction");

    st = pctl_q(p, set_query[c->entity]);
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, c->id);
    pctl_bind_text(st, 2, planctl_status_name(c->from));
    pctl_bind_text(st, 3, planctl_status_name(c->to));
    pctl_bind_i64(st, 4, now);
    pctl_bind_text(st, 5, c->message);
    pctl_bind_i64(st, 6, pctl_status_terminal(c->to));
    /* The try count and times the change sets: one rule (core/marks.c);
     * the statements store what they are given. */
    marks = pctl_marks_of(c->entity, c->to, c->next_attempt_at, c->deadline_at);
    if (c->entity == PLANCTL_ENTITY_STEP) {
        pctl_bind_id(st, 7, marks.next_attempt_at);
        pctl_bind_i64(st, 9, grants(c));
        pctl_bind_i64(st, 10, marks.attempt_inc);
    }
    if (c->entity != PLANCTL_ENTITY_PHASE)
        pctl_bind_id(st, 8, marks.deadline_at);
    cached = pctl_observed_known(p, c->entity, c->id, &known);
    if (pctl_q_later_on(p) && cached &&
        (known.status == c->from || known.status == c->to)) {
        /* An engine's pass, changing a row its cache knows in the status
         * the change is from, or already in the one it goes to (the
         * engine's decisions move its cache's view before they reach
         * the gate): the write is checked with the pass's next read or
         * its commit, and one that missed rolls the whole pass back (its
         * cache with it, read again by the next pass, which then decides
         * from the row as it is).  Under the pass's lock only a writer
         * outside planctl changes a run the engine holds.  A change of a
         * row the cache knows in a third status (a run cancelled before
         * the pass, a job's report landing after) runs at once and fails
         * alone (ESTALE), as elsewhere. */
        if ((rc = pctl_q_exec_later(st, 1)) < 0)
            return rc;
    } else {
        rc = pctl_step(st);
        pctl_reset(st);
        if (rc != PCTL_DONE)
            return pctl_q_fail(st, rc);
        if (pctl_changes(st) == 0) {
            pctl_observed_missed(p); /* what it knew is wrong */
            return explain_cas(p, c);
        }
    }
    /* The row as written: its run and phase, the step's attempt count
     * and times.  The observer (an engine's cache) knows them during a
     * pass (the UPDATE above did to the row what written_row() does to
     * the known one), which spares a read per change. */
    if (cached && !p->check_cache) {
        w = written_row(c, &marks, &known);
    } else {
        if ((rc = read_row(p, c, &w)) < 0)
            return rc;
        if (cached && (rc = check_cached(p, c, &marks, &known, &w)) < 0)
            return rc;
    }
    /* Likewise, such a try keeps the outputs its earlier tasks recorded
     * as it moved on (pctl_step_set_task), and its event carries them for
     * replay.  A try ended with its job's outcome in hand (outputs_known)
     * reads nothing here: a step without outputs costs what it did. */
    if (c->entity == PLANCTL_ENTITY_STEP &&
        c->from == PLANCTL_STATUS_IN_PROGRESS && !c->outputs &&
        !c->outputs_known) {
        pctl_change kept = *c;
        char *text = NULL;

        if ((rc = pctl_attempt_outputs_text(&text, p, c->id, w.attempt)) < 0)
            return rc;
        if (text) {
            kept.outputs = text;
            rc = changed(p, &kept, now, &w);
            pctl_free(text);
            return rc;
        }
    }
    return changed(p, c, now, &w);
}

/* The rest of pctl_gate() once the row is changed (w as written): the
 * attempt, the event, the observer, a run's end. */
static int changed(planctl *p, const pctl_change *c, int64_t now,
                   const written *wp)
{
    written w = *wp;
    int64_t run_id, phase_id, next_at, deadline, instance_id;
    int rc, attempt;
    pctl_written wr;
    pctl_event ev = {0};
    char *data = NULL;

    run_id = w.run_id;
    phase_id = w.phase_id;
    attempt = w.attempt;
    next_at = w.next_attempt_at;
    deadline = w.deadline_at;
    instance_id = w.instance_id;

    if (c->entity == PLANCTL_ENTITY_STEP &&
        (rc = step_attempt(p, c, now, attempt)) < 0)
        return rc;
    ev.entity = c->entity;
    ev.run_id = run_id;
    ev.phase_id = phase_id;
    ev.step_id = c->id;
    ev.from = c->from;
    ev.to = c->to;
    ev.attempt = c->entity == PLANCTL_ENTITY_STEP ? attempt : 0;
    ev.message = c->message;
    ev.actor = c->actor;
    if ((rc = change_data(&data, c)) < 0)
        return pctl_err(p, rc, "out of memory");
    ev.instance_id = instance_id;
    rc = pctl_event_status(p, &ev, data); /* takes data */
    if (rc < 0)
        return rc;
    /* The observer (an engine's cache, its metrics) follows the row as
     * written. */
    wr.change = c;
    wr.run_id = run_id;
    wr.phase_id = phase_id;
    wr.instance_id = instance_id;
    wr.attempt = attempt;
    wr.next_attempt_at = next_at;
    wr.deadline_at = deadline;
    wr.granted = grants(c);
    pctl_observed_written(p, &wr);
    if (c->entity == PLANCTL_ENTITY_RUN && pctl_status_terminal(c->to))
        return run_ended(p, c->id, instance_id, c->to);
    return 0;
}

/* Collects (id, status, started) of the open children of a run first, then
 * changes them: stepping a SELECT while updating the same table is legal in
 * SQLite but easy to get wrong, and runs are small. */
typedef struct child {
    int64_t id;
    planctl_status status;
    int started;
} child;

static int open_children(planctl *p, pctl_query q, int64_t run_id, child **out,
                         size_t *n)
{
    pctl_stmt *st = pctl_q(p, q);
    child *v = NULL, *nv;
    size_t len = 0, cap = 0;
    int rc;

    *out = NULL;
    *n = 0;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    while ((rc = pctl_step(st)) == PCTL_ROW) {
        if (len == cap) {
            cap = cap ? cap * 2 : 16;
            nv = pctl_realloc(v, cap * sizeof *v);
            if (!nv) {
                pctl_reset(st);
                pctl_free(v);
                return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            }
            v = nv;
        }
        v[len].id = pctl_col_i64(st, 0);
        if (planctl_status_parse(&v[len].status, pctl_col_text(st, 1)) < 0) {
            pctl_reset(st);
            pctl_free(v);
            return pctl_err(p, PLANCTL_EIO, "unknown status in the database");
        }
        v[len].started = !pctl_col_null(st, 2);
        len++;
    }
    pctl_reset(st);
    if (rc != PCTL_DONE) {
        pctl_free(v);
        return pctl_q_fail(st, rc);
    }
    *out = v;
    *n = len;
    return 0;
}

static int close_level(planctl *p, planctl_entity entity, pctl_query q,
                       int64_t run_id, planctl_status run_end,
                       const char *msg_started, const char *actor)
{
    child *v;
    size_t n, i;
    int rc = open_children(p, q, run_id, &v, &n);

    for (i = 0; rc == 0 && i < n; i++) {
        pctl_change c = PCTL_CHANGE_INIT;
        const char *msg;

        if (!pctl_close_child(v[i].status, run_end, &c.to, &msg))
            continue;
        c.entity = entity;
        c.id = v[i].id;
        c.from = v[i].status;
        c.message = v[i].started && msg_started ? msg_started : msg;
        c.actor = actor;
        rc = pctl_gate(p, &c);
    }
    pctl_free(v);
    return rc;
}

int pctl_close_children(planctl *p, int64_t run_id, planctl_status run_end,
                        const char *msg_started, const char *actor)
{
    int rc = close_level(p, PLANCTL_ENTITY_STEP, PCTL_Q_steps_open, run_id,
                         run_end, msg_started, actor);

    if (rc == 0)
        rc = close_level(p, PLANCTL_ENTITY_PHASE, PCTL_Q_phases_open, run_id,
                         run_end, msg_started, actor);
    return rc;
}

int pctl_gate_run_of(int64_t *run, planctl *p, planctl_entity entity,
                     int64_t id)
{
    pctl_stmt *st = pctl_q(p, result_query[entity]);
    int rc;

    *run = 0;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW)
        *run = pctl_col_i64(st, 0);
    pctl_reset(st);
    return rc == PCTL_ROW || rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}
