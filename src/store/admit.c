/*
 * admit.c - admission: turning a plan of a definition into a run row with
 * its phases and steps, under the rule of one active run per instance.
 *
 * The rule is checked here to produce a message that names the active run,
 * and enforced by the partial unique index runs_one_active, so two writers
 * can never both win even if this check were skipped.  Every row created
 * gets its creation event, carrying what replay needs to rebuild it: the
 * run's definition, plan, trigger and parameter snapshot; each phase's and
 * step's name, position and limits.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "core/alloc.h"
#include "core/timefmt.h"
#include "core/utf8.h"
#include "store/store.h"

int pctl_active_run_describe(char **out, int64_t *out_id, planctl *p,
                             int64_t instance_id, const char *instance_name)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_run_active);
    char when[PCTL_TIME_BUF];
    int rc;

    *out = NULL;
    if (out_id)
        *out_id = 0;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, instance_id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        int64_t id = pctl_col_i64(st, 0);

        pctl_time_local_short(when, pctl_col_i64(st, 3), pctl_now(p));
        *out = pctl_asprintf(
            "instance \"%s\" is running plan \"%s\" (run %lld, %s since %s)",
            instance_name, pctl_col_text(st, 1), (long long)id,
            pctl_col_text(st, 2), when);
        if (out_id)
            *out_id = id;
        pctl_reset(st);
        return *out ? 0 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    pctl_reset(st);
    return rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}

static int queued_exists(planctl *p, int64_t instance_id, int *out)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_run_first_queued);
    int rc;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, instance_id);
    rc = pctl_step(st);
    *out = rc == PCTL_ROW;
    pctl_reset(st);
    return rc == PCTL_ROW || rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}

/* The 1-based place of run id among the instance's queued runs (first in,
 * first out: by id). */
static int queue_position(int *out, planctl *p, int64_t instance_id, int64_t id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_run_queued_ids);
    int rc, n = 0;

    *out = 0;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, instance_id);
    while ((rc = pctl_step(st)) == PCTL_ROW) {
        n++;
        if (pctl_col_i64(st, 0) == id)
            *out = n;
    }
    pctl_reset(st);
    return rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}

/* Encodes a JSON object we built into text for the event's data column;
 * takes ownership of obj. */
static char *take_json(json_t *obj)
{
    char *s = obj ? json_dumps(obj, JSON_COMPACT) : NULL;

    json_decref(obj);
    return s;
}

/* Was (phase idx / step sidx) COMPLETE in the run being retried?  On yes,
 * copies its start and finish so durations stay meaningful, and a step's
 * outputs (outputs, for steps only: a new string or NULL) so the later
 * tasks of the retry see them. */
static int carried(planctl *p, int64_t retry_of, size_t idx, long sidx,
                   const char *name, int64_t *started, int64_t *finished,
                   int *yes, char **outputs)
{
    pctl_stmt *st =
        pctl_q(p, sidx < 0 ? PCTL_Q_phase_carry : PCTL_Q_step_carry);
    int rc;

    *yes = 0;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, retry_of);
    pctl_bind_i64(st, 2, (int64_t)idx);
    pctl_bind_text(st, 3, name);
    if (sidx >= 0)
        pctl_bind_i64(st, 4, sidx);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        *yes = 1;
        *started = pctl_col_i64(st, 0);
        *finished = pctl_col_i64(st, 1);
        if (outputs && !pctl_col_null(st, 2) &&
            !(*outputs = pctl_strdup(pctl_col_text(st, 2)))) {
            pctl_reset(st);
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        }
    }
    pctl_reset(st);
    return rc == PCTL_ROW || rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}

/* What a row of the run being retried hands on to the new one's
 * (carried()): yes when it was COMPLETE, with its times, and a step's
 * outputs. */
typedef struct carry {
    int yes;
    int64_t started, finished;
    char *outputs; /* a step's, or NULL */
    const char *msg;
} carry;

/* The creation event of a phase (step_id 0) or step row, with its data
 * (taken), carried over as c says. */
static int created(planctl *p, const pctl_admission *a, int64_t run_id,
                   int64_t phase_id, int64_t step_id, const carry *c,
                   char *data)
{
    pctl_event ev = {0};

    if (!data)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    ev.entity = step_id ? PLANCTL_ENTITY_STEP : PLANCTL_ENTITY_PHASE;
    ev.run_id = run_id;
    ev.phase_id = phase_id;
    ev.step_id = step_id;
    ev.from = PCTL_NEW;
    ev.to = c->yes ? PLANCTL_STATUS_COMPLETE : PLANCTL_STATUS_PENDING;
    ev.message = c->yes ? c->msg : NULL;
    ev.actor = "planctl";
    ev.instance_id = a->instance_id;
    return pctl_event_status(p, &ev, data); /* takes data */
}

/* The data of a step's creation event (c: what it carried over): a new
 * string, or NULL when out of memory. */
static char *step_data(size_t sidx, const pctl_step_def *sd, const carry *c)
{
    json_t *o;

    /* A carried-over step keeps its times and outputs: replay needs
     * them. */
    o = c->yes
            ? json_pack("{s:s, s:I, s:i, s:I, s:I}", "name", sd->name, "index",
                        (json_int_t)sidx, "max_attempts", sd->retry.attempts,
                        "started_at", (json_int_t)c->started, "finished_at",
                        (json_int_t)c->finished)
            : json_pack("{s:s, s:I, s:i}", "name", sd->name, "index",
                        (json_int_t)sidx, "max_attempts", sd->retry.attempts);
    if (o && c->outputs &&
        json_object_set_new(o, "outputs", json_loads(c->outputs, 0, NULL)) <
            0) {
        json_decref(o);
        o = NULL;
    }
    return take_json(o);
}

/* The creation event of a step row id (c: what it carried over). */
static int step_event(planctl *p, const pctl_admission *a, int64_t run_id,
                      int64_t phase_id, int64_t id, size_t sidx,
                      const pctl_step_def *sd, const carry *c)
{
    return created(p, a, run_id, phase_id, id, c, step_data(sidx, sd, c));
}

/* The data of a phase's creation event, as step_data. */
static char *phase_data(size_t idx, const pctl_phase_def *pd, const carry *c)
{
    const char *strategy = pctl_strategy_name(pd->strategy);

    return take_json(
        c->yes ? json_pack("{s:s, s:I, s:s, s:I, s:I}", "name", pd->name,
                           "index", (json_int_t)idx, "strategy", strategy,
                           "started_at", (json_int_t)c->started, "finished_at",
                           (json_int_t)c->finished)
               : json_pack("{s:s, s:I, s:s}", "name", pd->name, "index",
                           (json_int_t)idx, "strategy", strategy));
}

/* The creation event of a phase row id. */
static int phase_event(planctl *p, const pctl_admission *a, int64_t run_id,
                       int64_t id, size_t idx, const pctl_phase_def *pd,
                       const carry *c)
{
    return created(p, a, run_id, id, 0, c, phase_data(idx, pd, c));
}

static int insert_step(planctl *p, const pctl_admission *a, int64_t run_id,
                       int64_t phase_id, size_t pidx, size_t sidx,
                       const pctl_step_def *sd, const char *carry_msg)
{
    carry c = {0};
    pctl_stmt *st;
    int64_t id;
    int rc;

    c.msg = carry_msg;
    if (a->retry_of > 0 &&
        (rc = carried(p, a->retry_of, pidx, (long)sidx, sd->name, &c.started,
                      &c.finished, &c.yes, &c.outputs)) < 0)
        return rc;
    st = pctl_q(p, PCTL_Q_step_insert);
    if (!st) {
        pctl_free(c.outputs);
        return pctl_q_err(p);
    }
    pctl_bind_i64(st, 1, run_id);
    pctl_bind_i64(st, 2, phase_id);
    pctl_bind_i64(st, 3, (int64_t)sidx);
    pctl_bind_text(st, 4, sd->name);
    pctl_bind_text(st, 5, c.yes ? "COMPLETE" : "PENDING");
    pctl_bind_i64(st, 6, sd->retry.attempts);
    if (c.yes) {
        pctl_bind_i64(st, 7, c.started);
        pctl_bind_i64(st, 8, c.finished);
        pctl_bind_text(st, 9, carry_msg);
    }
    rc = pctl_step(st);
    id = rc == PCTL_ROW ? pctl_col_i64(st, 0) : 0;
    pctl_reset(st);
    rc = rc == PCTL_ROW ? 0 : pctl_q_fail(st, rc);
    if (rc == 0 && c.outputs)
        rc = pctl_outputs_record(p, id, 0, c.outputs);
    if (rc == 0)
        rc = step_event(p, a, run_id, phase_id, id, sidx, sd, &c);
    pctl_free(c.outputs);
    return rc;
}

static int insert_phase(planctl *p, const pctl_admission *a, int64_t run_id,
                        size_t idx, const pctl_phase_def *pd,
                        const char *carry_msg)
{
    carry c = {0};
    pctl_stmt *st;
    int64_t id;
    int rc;
    size_t i;

    c.msg = carry_msg;
    if (a->retry_of > 0 &&
        (rc = carried(p, a->retry_of, idx, -1, pd->name, &c.started,
                      &c.finished, &c.yes, NULL)) < 0)
        return rc;
    st = pctl_q(p, PCTL_Q_phase_insert);
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    pctl_bind_i64(st, 2, (int64_t)idx);
    pctl_bind_text(st, 3, pd->name);
    pctl_bind_text(st, 4, pctl_strategy_name(pd->strategy));
    pctl_bind_text(st, 5, c.yes ? "COMPLETE" : "PENDING");
    if (c.yes) {
        pctl_bind_i64(st, 6, c.started);
        pctl_bind_i64(st, 7, c.finished);
        pctl_bind_text(st, 8, carry_msg);
    }
    rc = pctl_step(st);
    id = rc == PCTL_ROW ? pctl_col_i64(st, 0) : 0;
    pctl_reset(st);
    if (rc != PCTL_ROW)
        return pctl_q_fail(st, rc);
    rc = phase_event(p, a, run_id, id, idx, pd, &c);
    for (i = 0; rc == 0 && i < pd->nsteps; i++)
        rc = insert_step(p, a, run_id, id, idx, i, &pd->steps[i], carry_msg);
    return rc;
}

/* The plan's phases and steps as run_rows_insert takes them. */
static char *plan_rows_json(const pctl_plan_def *plan)
{
    json_t *phases = json_array(), *steps, *o;
    size_t i, k;

    for (i = 0; phases && i < plan->nphases; i++) {
        const pctl_phase_def *pd = &plan->phases[i];

        steps = json_array();
        for (k = 0; steps && k < pd->nsteps; k++)
            if (json_array_append_new(
                    steps, json_pack("{s:I, s:s, s:i}", "idx", (json_int_t)k,
                                     "name", pd->steps[k].name, "max_attempts",
                                     pd->steps[k].retry.attempts)) < 0) {
                json_decref(steps);
                steps = NULL;
            }
        o = steps ? json_pack("{s:I, s:s, s:s, s:o}", "idx", (json_int_t)i,
                              "name", pd->name, "strategy",
                              pctl_strategy_name(pd->strategy), "steps", steps)
                  : NULL;
        if (json_array_append_new(phases, o) < 0) {
            json_decref(phases);
            phases = NULL;
        }
    }
    return take_json(phases);
}

/* A new run's phases and steps, none carried over, in one statement
 * (backends with rows_at_once), then their events in the order the row
 * by row path writes them: each phase's, then its steps'. */
static int insert_rows_at_once(planctl *p, const pctl_admission *a,
                               int64_t run_id, const pctl_plan_def *plan)
{
    static const carry none = {0};
    char *json = plan_rows_json(plan);
    int64_t *ids, pi, si, id, seen = 0;
    size_t *first, i, k, total = plan->nphases;
    pctl_stmt *st;
    int rc;

    for (i = 0; i < plan->nphases; i++)
        total += plan->phases[i].nsteps;
    ids = pctl_calloc(total, sizeof *ids);
    first = pctl_calloc(plan->nphases + 1, sizeof *first);
    if (!json || !ids || !first) {
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        goto out;
    }
    /* ids: each phase's id, followed by its steps'. */
    for (i = 0; i < plan->nphases; i++)
        first[i + 1] = first[i] + 1 + plan->phases[i].nsteps;
    if (!(st = pctl_q(p, PCTL_Q_run_rows_insert))) {
        rc = pctl_q_err(p);
        goto out;
    }
    pctl_bind_i64(st, 1, run_id);
    pctl_bind_text(st, 2, json);
    while ((rc = pctl_step(st)) == PCTL_ROW) {
        pi = pctl_col_i64(st, 0);
        si = pctl_col_i64(st, 1);
        id = pctl_col_i64(st, 2);
        if (pi < 0 || (size_t)pi >= plan->nphases || si < -1 ||
            si >= (int64_t)plan->phases[pi].nsteps ||
            ids[first[pi] + (size_t)(si + 1)])
            break;
        ids[first[pi] + (size_t)(si + 1)] = id;
        seen++;
    }
    pctl_reset(st);
    if (rc != PCTL_DONE || seen != (int64_t)total) {
        rc = rc < 0 ? rc
                    : pctl_err(p, PLANCTL_ERROR,
                               "run_rows_insert: %lld rows for a plan of %zu "
                               "phases and steps",
                               (long long)seen, total);
        goto out;
    }
    rc = 0;
    for (i = 0; rc == 0 && i < plan->nphases; i++) {
        const pctl_phase_def *pd = &plan->phases[i];
        int64_t phase_id = ids[first[i]];

        rc = phase_event(p, a, run_id, phase_id, i, pd, &none);
        for (k = 0; rc == 0 && k < pd->nsteps; k++)
            rc = step_event(p, a, run_id, phase_id, ids[first[i] + 1 + k], k,
                            &pd->steps[k], &none);
    }
out:
    pctl_free(json);
    pctl_free(ids);
    pctl_free(first);
    return rc;
}

static char *run_data(const pctl_admission *a, const char *uid)
{
    json_t *params = json_loads(a->params_json, 0, NULL);
    json_t *o;

    if (!params)
        return NULL;
    o = json_pack("{s:s, s:{s:s, s:s}, s:s, s:s, s:s?, s:o, s:o}", "uid", uid,
                  "definition", "name", a->def->name, "version",
                  a->def->version, "plan", a->plan, "trigger", a->trigger,
                  "reason", a->reason, "retry_of",
                  a->retry_of > 0 ? json_integer(a->retry_of) : json_null(),
                  "params", params);
    return take_json(o);
}

void pctl_preflight_gate_clear(pctl_preflight_gate *g)
{
    pctl_free(g->instance);
    pctl_free(g->plan);
    pctl_free(g->params);
    g->instance = g->plan = g->params = NULL;
    g->instance_id = g->definition_id = 0;
}

int pctl_reason_check(planctl *p, const char *reason)
{
    /* Kept as JSON (the run's event) and as text a server checks: bytes
     * that are not UTF-8 are refused here, naming the fix, not found out
     * by the JSON encoder (which said "out of memory") or the database. */
    if (reason && !pctl_utf8_valid(reason, strlen(reason)))
        return pctl_err(p, PLANCTL_EINVAL,
                        "the reason is not valid UTF-8; give it as UTF-8 "
                        "text");
    return 0;
}

int pctl_admit(planctl_admitted *out, planctl *p, const pctl_admission *a)
{
    const pctl_plan_def *plan = pctl_def_plan(a->def, a->plan);
    char *busy = NULL, *data = NULL, *carry_msg = NULL, uid[40];
    pctl_stmt *st;
    int64_t active_id, id;
    int rc, queued = 0, own_queue;
    size_t i;
    pctl_event ev = {0};

    memset(out, 0, sizeof *out);
    if (!plan)
        return pctl_err_no_plan(p, a->def, a->plan);
    if ((rc = pctl_reason_check(p, a->reason)) < 0)
        return rc;
    active_id = 0;
    if (!a->fresh &&
        (rc = pctl_active_run_describe(&busy, &active_id, p, a->instance_id,
                                       a->instance_name)) < 0)
        return rc;
    if (busy && !a->queue) {
        rc = pctl_err(p, PLANCTL_ECONFLICT, "%s; %s", busy,
                      a->busy_hint ? a->busy_hint : "cancel it first");
        pctl_free(busy);
        return rc;
    }
    pctl_free(busy);
    /* A plan with checks that have not passed stops here: the caller
     * runs them outside the transaction, which rolls back, and comes
     * again (store.h, pctl_preflight_gate). */
    if (a->pf && plan->nchecks > 0 &&
        !(a->pf->passed_plan && a->pf->passed_definition == a->definition_id &&
          strcmp(a->pf->passed_plan, a->plan) == 0)) {
        pctl_preflight_gate_clear(a->pf);
        a->pf->instance_id = a->instance_id;
        a->pf->definition_id = a->definition_id;
        a->pf->instance = pctl_strdup(a->instance_name);
        a->pf->plan = pctl_strdup(a->plan);
        a->pf->params = pctl_strdup(a->params_json);
        if (!a->pf->instance || !a->pf->plan || !a->pf->params)
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        return PCTL_STOP_FOR_CHECKS;
    }
    if (a->queue && !active_id &&
        (rc = queued_exists(p, a->instance_id, &queued)) < 0)
        return rc;
    queued = a->queue && (active_id || queued);

    st = pctl_q(p, PCTL_Q_run_insert);
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, a->instance_id);
    pctl_bind_i64(st, 2, a->definition_id);
    pctl_bind_text(st, 3, a->plan);
    pctl_bind_text(st, 4, queued ? "QUEUED" : "PENDING");
    pctl_bind_text(st, 5, a->trigger);
    pctl_bind_text(st, 6, a->reason);
    pctl_bind_id(st, 7, a->retry_of);
    pctl_bind_text(st, 8, a->params_json);
    pctl_bind_i64(st, 9, pctl_now(p));
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        id = pctl_col_i64(st, 0);
        snprintf(uid, sizeof uid, "%s", pctl_col_text(st, 1));
        p->fresh_run = id;
        p->fresh_run_events = 0;
        p->fresh_run_tx = p->tx_serial;
    }
    pctl_reset(st);
    if (rc != PCTL_ROW) {
        /* The one constraint an insert of a run can break: one active
         * run per instance. */
        if (rc == PLANCTL_ECONFLICT)
            return pctl_err(p, PLANCTL_ECONFLICT,
                            "instance \"%s\" already has an active run; "
                            "cancel it first",
                            a->instance_name);
        return pctl_q_fail(st, rc);
    }

    data = run_data(a, uid);
    if (!data) {
        json_t *v = json_loads(a->params_json, 0, NULL);

        if (v) {
            json_decref(v);
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        }
        /* Stored by hand, or by an importer that did not check. */
        return pctl_err(p, PLANCTL_EINVAL,
                        "the parameter snapshot to run with is not JSON "
                        "(%.60s)",
                        a->params_json ? a->params_json : "");
    }
    ev.entity = PLANCTL_ENTITY_RUN;
    ev.run_id = id;
    ev.from = PCTL_NEW;
    ev.to = queued ? PLANCTL_STATUS_QUEUED : PLANCTL_STATUS_PENDING;
    ev.message = a->reason;
    ev.actor = pctl_user(p);
    ev.instance_id = a->instance_id;
    /* The run's events, one per phase and step, are written together at
     * the end (journal.c), unless the caller defers them already. */
    own_queue = !pctl_events_deferring(p);
    if (own_queue && (rc = pctl_events_defer(p, 1)) < 0) {
        pctl_free(data);
        return rc;
    }
    rc = pctl_event_status(p, &ev, data); /* takes data */

    if (rc == 0 && a->retry_of > 0) {
        carry_msg =
            pctl_asprintf("carried over from run %lld", (long long)a->retry_of);
        if (!carry_msg)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && a->retry_of <= 0 && p->conn->m->rows_at_once)
        rc = insert_rows_at_once(p, a, id, plan);
    else
        for (i = 0; rc == 0 && i < plan->nphases; i++)
            rc = insert_phase(p, a, id, i, &plan->phases[i], carry_msg);
    pctl_free(carry_msg);
    if (own_queue) {
        /* On PostgreSQL, the run's events as one statement. */
        if (rc == 0)
            rc = pctl_events_flush_later(p);
        pctl_events_defer(p, 0);
    }
    if (rc == 0 && queued)
        rc = queue_position(&out->queue_position, p, a->instance_id, id);
    if (rc == 0) {
        out->run = id;
        out->status = queued ? PLANCTL_STATUS_QUEUED : PLANCTL_STATUS_PENDING;
        out->retry_of = a->retry_of;
        snprintf(out->plan, sizeof out->plan, "%s", a->plan);
    }
    return rc;
}

/* A run's uid, as the servers make it: 32 lowercase hex digits of 16
 * random bytes.  0, or -1 when no random bytes could be had. */
static int new_uid(char out[33])
{
    unsigned char b[16];
    size_t i;

    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
        return -1;
    for (i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    return 0;
}

/* Appends the event (n, entity, ph, st, to_status, message, actor, data)
 * to events, taking data; ph, st < 0: none. */
static int add_event(json_t *events, const char *entity, long ph, long st,
                     const char *to, const char *message, const char *actor,
                     char *data)
{
    json_t *o;
    int rc;

    if (!data)
        return -1;
    o = json_pack("{s:I, s:s, s:o, s:o, s:s?, s:s?, s:s, s:s}", "n",
                  (json_int_t)json_array_size(events), "entity", entity, "ph",
                  ph < 0 ? json_null() : json_integer(ph), "st",
                  st < 0 ? json_null() : json_integer(st), "to_status", to,
                  "message", message, "actor", actor, "data", data);
    pctl_free(data);
    rc = json_array_append_new(events, o);
    return o && rc == 0 ? 0 : -1;
}

/* The events of a new instance n and its run, in the order the row by
 * row path writes them: the instance's, the run's, then each phase's
 * followed by its steps'. */
static char *new_events_json(planctl *p, const pctl_admission *a,
                             const pctl_plan_def *plan,
                             const pctl_new_instance *n, const char *uid)
{
    static const carry none = {0};
    json_t *events = json_array();
    size_t i, k;
    int bad = !events || !n->data;

    bad = bad || add_event(events, "instance", -1, -1, NULL, n->message,
                           pctl_user(p), pctl_strdup(n->data)) < 0;
    bad = bad || add_event(events, "run", -1, -1, "PENDING", a->reason,
                           pctl_user(p), run_data(a, uid)) < 0;
    for (i = 0; !bad && i < plan->nphases; i++) {
        const pctl_phase_def *pd = &plan->phases[i];

        bad = add_event(events, "phase", (long)i, -1, "PENDING", NULL,
                        "planctl", phase_data(i, pd, &none)) < 0;
        for (k = 0; !bad && k < pd->nsteps; k++)
            bad = add_event(events, "step", (long)i, (long)k, "PENDING", NULL,
                            "planctl", step_data(k, &pd->steps[k], &none)) < 0;
    }
    if (bad) {
        json_decref(events);
        return NULL;
    }
    return take_json(events);
}

int pctl_admit_new(planctl_admitted *out, int64_t *instance_id, planctl *p,
                   const pctl_admission *a, const pctl_new_instance *n)
{
    const pctl_plan_def *plan = pctl_def_plan(a->def, a->plan);
    char uid[33], *rows = NULL, *events = NULL;
    int64_t count = 1, inst = 0, run = 0;
    pctl_stmt *st;
    size_t i;
    int rc;

    memset(out, 0, sizeof *out);
    *instance_id = 0;
    /* Checks to run first, a plan whose events reach the warning
     * threshold at once (the note is the journal's), a retry: row by
     * row. */
    if (!plan || plan->nchecks > 0 || a->retry_of > 0 || a->queue)
        return PCTL_ADMIT_ROW_BY_ROW;
    for (i = 0; i < plan->nphases; i++)
        count += 1 + (int64_t)plan->phases[i].nsteps;
    if ((p->run_events_warn > 0 && count >= p->run_events_warn) ||
        new_uid(uid) < 0)
        return PCTL_ADMIT_ROW_BY_ROW;
    if ((rc = pctl_reason_check(p, a->reason)) < 0)
        return rc;
    rows = plan_rows_json(plan);
    events = rows ? new_events_json(p, a, plan, n, uid) : NULL;
    if (!events) {
        /* A snapshot that is not JSON is told by the row by row path. */
        pctl_free(rows);
        return PCTL_ADMIT_ROW_BY_ROW;
    }
    if (!(st = pctl_q(p, PCTL_Q_instance_create))) {
        rc = pctl_q_err(p);
        goto out;
    }
    pctl_bind_text(st, 1, a->instance_name);
    pctl_bind_i64(st, 2, a->definition_id);
    pctl_bind_text(st, 3, n->explicit_params);
    pctl_bind_i64(st, 4, pctl_now(p));
    pctl_bind_text(st, 5, uid);
    pctl_bind_text(st, 6, a->params_json);
    pctl_bind_i64(st, 7, count);
    pctl_bind_text(st, 8, rows);
    pctl_bind_text(st, 9, events);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        inst = pctl_col_i64(st, 0);
        run = pctl_col_i64(st, 1);
    }
    pctl_reset(st);
    if (rc == PCTL_DONE) {
        rc = PLANCTL_ECONFLICT; /* the name is taken: the caller says so */
        goto out;
    }
    if (rc != PCTL_ROW) {
        rc = pctl_q_fail(st, rc);
        goto out;
    }
    p->conn->m->counted(p->conn);
    *instance_id = inst;
    out->run = run;
    out->status = PLANCTL_STATUS_PENDING;
    snprintf(out->plan, sizeof out->plan, "%s", a->plan);
    rc = 0;
out:
    pctl_free(rows);
    pctl_free(events);
    return rc;
}
