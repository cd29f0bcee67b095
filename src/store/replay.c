/*
 * replay.c - rebuilding runs, phases, steps and attempts from the event log
 * alone, as of any event; and verify, which compares that with the tables.
 *
 * This code does not share the path that writes the tables (gate.c,
 * admit.c): it reads events in seq order and applies what each one says.
 * The rules it applies are the meaning of a status change, written down a
 * second time on purpose:
 *   - a creation event (from NULL) makes the row, its data naming it (a
 *     run's uid, plan, trigger, reason, retry_of; a phase's or step's name
 *     and position; carried-over times); a run's creation message is its
 *     reason, not its message, which starts empty;
 *   - every change sets the status and the message; the first IN_PROGRESS
 *     sets the start; a terminal status sets the finish, anything else
 *     clears it;
 *   - for steps: entering IN_PROGRESS opens an attempt (the event's attempt
 *     number) with the try's deadline; leaving it closes the attempt with
 *     the new status, the message, and the exit code and output the event
 *     carries; ERROR carries the next try's time.
 * The instance's definition over time comes from its admin events.  Names
 * of instances and the plans of a definition come from the instances and
 * definitions tables, which are reference data, not history.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/idmap.h"
#include "core/secrets.h"
#include "core/status.h"
#include "core/timefmt.h"
#include "store/model.h"
#include "store/store.h"

/* Where a phase or step is: its run's index, its phase's, its own. */
typedef struct ref {
    size_t run, phase, step;
} ref;

typedef struct rrun {
    int64_t instance_id;
    pctl_m_run m;
} rrun;

typedef struct rinst {
    int64_t id;
    char *def_name, *def_version;
} rinst;

/* Runs, phases and steps in the order the log created them, each found by
 * its id through a map to its index + 1.  Creation order is not id order
 * on PostgreSQL, where admissions commit beside each other: one may draw
 * its row ids before another and its event numbers after. */
typedef struct replay {
    rrun *runs;
    size_t nruns, cruns;
    ref *phases, *steps;
    size_t nphases, cphases, nsteps, csteps;
    pctl_idmap run_ix, phase_ix, step_ix;
    rinst *insts;
    size_t ninsts, cinsts;
    int64_t last_seq, last_at, nevents;
} replay;

static void replay_free(replay *r)
{
    size_t i;

    for (i = 0; i < r->nruns; i++)
        pctl_m_run_clear(&r->runs[i].m);
    for (i = 0; i < r->ninsts; i++) {
        pctl_free(r->insts[i].def_name);
        pctl_free(r->insts[i].def_version);
    }
    pctl_free(r->runs);
    pctl_free(r->phases);
    pctl_free(r->steps);
    pctl_free(r->insts);
    pctl_idmap_free(&r->run_ix);
    pctl_idmap_free(&r->phase_ix);
    pctl_idmap_free(&r->step_ix);
    memset(r, 0, sizeof *r);
}

/* The index in its array of the row id maps to in m, or -1. */
static ptrdiff_t index_of(const pctl_idmap *m, int64_t id)
{
    return id ? (ptrdiff_t)(uintptr_t)pctl_idmap_get(m, id) - 1 : -1;
}

/* Notes that row id is at index i of its array.  0 or PLANCTL_ENOMEM. */
static int note_index(pctl_idmap *m, int64_t id, size_t i)
{
    return id ? pctl_idmap_put(m, id, (void *)(uintptr_t)(i + 1)) : 0;
}

static rrun *find_run(replay *r, int64_t id)
{
    ptrdiff_t i = index_of(&r->run_ix, id);

    return i < 0 ? NULL : &r->runs[i];
}

static ref *find_phase(replay *r, int64_t id)
{
    ptrdiff_t i = index_of(&r->phase_ix, id);

    return i < 0 ? NULL : &r->phases[i];
}

static ref *find_step(replay *r, int64_t id)
{
    ptrdiff_t i = index_of(&r->step_ix, id);

    return i < 0 ? NULL : &r->steps[i];
}

static rinst *inst_of(replay *r, int64_t id)
{
    size_t i;

    for (i = 0; i < r->ninsts; i++)
        if (r->insts[i].id == id)
            return &r->insts[i];
    if (pctl_grow((void **)&r->insts, r->ninsts, &r->cinsts, sizeof *r->insts))
        return NULL;
    memset(&r->insts[r->ninsts], 0, sizeof *r->insts);
    r->insts[r->ninsts].id = id;
    return &r->insts[r->ninsts++];
}

static char *jstr(json_t *o, const char *key, int *oom)
{
    const char *s = json_string_value(json_object_get(o, key));
    char *d;

    if (!s)
        return NULL;
    if (!(d = pctl_strdup(s)))
        *oom = 1;
    return d;
}

static int64_t jint(json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

/* The parts of a status change common to runs, phases and steps. */
static int change(planctl_status *status, char **message, int64_t *started,
                  int64_t *finished, planctl_status to, const char *msg,
                  int64_t at)
{
    char *m = msg ? pctl_strdup(msg) : NULL;

    if (msg && !m)
        return PLANCTL_ENOMEM;
    pctl_free(*message);
    *message = m;
    *status = to;
    if (to == PLANCTL_STATUS_IN_PROGRESS && !*started)
        *started = at;
    *finished = pctl_status_terminal(to) ? at : 0;
    return 0;
}

typedef struct ev {
    int64_t seq, at, instance_id, run_id, phase_id, step_id;
    const char *entity, *from, *msg;
    planctl_status to;
    int has_from, attempt;
    json_t *data;
} ev;

static int on_run(replay *r, const ev *e)
{
    rrun *run;
    int oom = 0;

    if (!e->has_from) {
        if (pctl_grow((void **)&r->runs, r->nruns, &r->cruns,
                      sizeof *r->runs) ||
            note_index(&r->run_ix, e->run_id, r->nruns) < 0)
            return PLANCTL_ENOMEM;
        run = &r->runs[r->nruns++];
        memset(run, 0, sizeof *run);
        run->instance_id = e->instance_id;
        run->m.id = e->run_id;
        run->m.uid = jstr(e->data, "uid", &oom);
        run->m.plan = jstr(e->data, "plan", &oom);
        run->m.trigger = jstr(e->data, "trigger", &oom);
        run->m.reason = jstr(e->data, "reason", &oom);
        run->m.retry_of = jint(e->data, "retry_of");
        run->m.def_version =
            jstr(json_object_get(e->data, "definition"), "version", &oom);
        if (json_object_get(e->data, "params")) {
            char *text = json_dumps(json_object_get(e->data, "params"),
                                    JSON_COMPACT | JSON_ENCODE_ANY);

            if (!text || !(run->m.params = pctl_m_params(text)))
                oom = 1;
            pctl_free(text);
        }
        run->m.status = e->to;
        run->m.created_at = e->at;
        return oom ? PLANCTL_ENOMEM : 0;
    }
    if (!(run = find_run(r, e->run_id)))
        return 1; /* a change of a run whose creation is not in the log */
    if (json_object_get(e->data, "deadline_at"))
        run->m.deadline_at = jint(e->data, "deadline_at");
    return change(&run->m.status, &run->m.message, &run->m.started_at,
                  &run->m.finished_at, e->to, e->msg, e->at);
}

static int on_phase(replay *r, const ev *e)
{
    rrun *run = find_run(r, e->run_id);
    pctl_m_phase *ph;
    ref *f;
    int oom = 0;

    if (!run)
        return 1;
    if (!e->has_from) {
        if (!(ph = pctl_m_add_phase(&run->m)) ||
            pctl_grow((void **)&r->phases, r->nphases, &r->cphases,
                      sizeof *r->phases) ||
            note_index(&r->phase_ix, e->phase_id, r->nphases) < 0)
            return PLANCTL_ENOMEM;
        ph->id = e->phase_id;
        ph->name = jstr(e->data, "name", &oom);
        ph->strategy = jstr(e->data, "strategy", &oom);
        ph->status = e->to;
        ph->started_at = jint(e->data, "started_at");
        ph->finished_at = jint(e->data, "finished_at");
        if (e->msg && !(ph->message = pctl_strdup(e->msg)))
            oom = 1;
        f = &r->phases[r->nphases++];
        f->run = (size_t)(run - r->runs);
        f->phase = run->m.nphases - 1;
        return oom ? PLANCTL_ENOMEM : 0;
    }
    if (!(f = find_phase(r, e->phase_id)))
        return 1;
    ph = &r->runs[f->run].m.phases[f->phase];
    return change(&ph->status, &ph->message, &ph->started_at, &ph->finished_at,
                  e->to, e->msg, e->at);
}

/* The outputs an event carries (gate.c, admit.c) as the tables hold
 * them: compact JSON text, or NULL.  Sets *oom on allocation failure. */
static char *outputs_of(const ev *e, int *oom)
{
    json_t *v = json_object_get(e->data, "outputs");
    char *text;

    if (!json_is_object(v))
        return NULL;
    if (!(text = json_dumps(v, JSON_COMPACT)))
        *oom = 1;
    return text;
}

static int on_step(replay *r, const ev *e)
{
    pctl_m_step *s;
    pctl_m_attempt *a;
    ref *f, *pf;
    int oom = 0, rc;

    if (!e->has_from) {
        pf = find_phase(r, e->phase_id);
        if (!pf)
            return 1;
        if (!(s = pctl_m_add_step(&r->runs[pf->run].m.phases[pf->phase])) ||
            pctl_grow((void **)&r->steps, r->nsteps, &r->csteps,
                      sizeof *r->steps) ||
            note_index(&r->step_ix, e->step_id, r->nsteps) < 0)
            return PLANCTL_ENOMEM;
        s->id = e->step_id;
        s->name = jstr(e->data, "name", &oom);
        s->max_attempts = (int)jint(e->data, "max_attempts");
        s->status = e->to;
        s->started_at = jint(e->data, "started_at");
        s->finished_at = jint(e->data, "finished_at");
        s->outputs = outputs_of(e, &oom); /* carried over by a retry */
        if (e->msg && !(s->message = pctl_strdup(e->msg)))
            oom = 1;
        f = &r->steps[r->nsteps++];
        f->run = pf->run;
        f->phase = pf->phase;
        f->step = r->runs[pf->run].m.phases[pf->phase].nsteps - 1;
        return oom ? PLANCTL_ENOMEM : 0;
    }
    if (!(f = find_step(r, e->step_id)))
        return 1;
    s = &r->runs[f->run].m.phases[f->phase].steps[f->step];
    if (e->attempt > 0)
        s->attempt = e->attempt;
    /* A try the engine's own stop interrupted gave the step one more. */
    if (json_object_get(e->data, "grant_attempt"))
        s->max_attempts += (int)jint(e->data, "grant_attempt");
    if (!strcmp(e->from, "IN_PROGRESS") && s->nattempts > 0) {
        a = &s->attempts[s->nattempts - 1];
        a->status = e->to;
        a->finished_at = e->at;
        if (json_object_get(e->data, "exit_code"))
            a->exit_code = (int)jint(e->data, "exit_code");
        /* A bad log may close one attempt twice: keep the last word. */
        pctl_free(a->message);
        pctl_free(a->output);
        pctl_free(a->outputs);
        a->message = NULL;
        if (e->msg && !(a->message = pctl_strdup(e->msg)))
            return PLANCTL_ENOMEM;
        a->output = jstr(e->data, "output", &oom);
        a->outputs = outputs_of(e, &oom);
        /* The step keeps the outputs it completed with (gate.c). */
        if (e->to == PLANCTL_STATUS_COMPLETE && a->outputs) {
            pctl_free(s->outputs);
            if (!(s->outputs = pctl_strdup(a->outputs)))
                oom = 1;
        }
        if (oom)
            return PLANCTL_ENOMEM;
    }
    s->deadline_at =
        e->to == PLANCTL_STATUS_IN_PROGRESS ? jint(e->data, "deadline_at") : 0;
    s->next_attempt_at =
        e->to == PLANCTL_STATUS_ERROR ? jint(e->data, "next_attempt_at") : 0;
    if (e->to == PLANCTL_STATUS_IN_PROGRESS) {
        if (!(a = pctl_m_add_attempt(s)))
            return PLANCTL_ENOMEM;
        a->number = e->attempt;
        a->status = PLANCTL_STATUS_IN_PROGRESS;
        a->started_at = e->at;
    }
    rc = change(&s->status, &s->message, &s->started_at, &s->finished_at, e->to,
                e->msg, e->at);
    return rc;
}

/* An engine's clock followed a wall clock that jumped: the pending times
 * of the instance's active runs moved with it (clockshift.c moves the same
 * rows). */
static void shift_clock(replay *r, int64_t instance_id, int64_t delta)
{
    size_t i, pi, si;

    for (i = 0; i < r->nruns; i++) {
        pctl_m_run *m = &r->runs[i].m;

        if (r->runs[i].instance_id != instance_id ||
            !pctl_status_active(m->status))
            continue;
        if (m->deadline_at)
            m->deadline_at += delta;
        for (pi = 0; pi < m->nphases; pi++)
            for (si = 0; si < m->phases[pi].nsteps; si++) {
                pctl_m_step *s = &m->phases[pi].steps[si];

                if (s->status == PLANCTL_STATUS_ERROR && s->next_attempt_at)
                    s->next_attempt_at += delta;
                if (s->status == PLANCTL_STATUS_IN_PROGRESS && s->deadline_at)
                    s->deadline_at += delta;
            }
    }
}

static int on_admin(replay *r, const ev *e)
{
    json_t *def = json_object_get(e->data, "definition");
    rinst *in;
    int oom = 0;

    if (e->instance_id > 0 && json_object_get(e->data, "clock_shift_ms"))
        shift_clock(r, e->instance_id, jint(e->data, "clock_shift_ms"));
    if (!def || e->instance_id <= 0)
        return 0;
    if (!(in = inst_of(r, e->instance_id)))
        return PLANCTL_ENOMEM;
    pctl_free(in->def_name);
    pctl_free(in->def_version);
    in->def_name = jstr(def, "name", &oom);
    in->def_version = jstr(def, "version", &oom);
    return oom ? PLANCTL_ENOMEM : 0;
}

/*
 * Reads the events of instance_id (0: all) up to seq `until` and time
 * `at` (0: no bound) and applies them.  An event that refers to a row the
 * log never created is counted in *orphans (verify reports it).
 */
static int run_replay(replay *r, planctl *p, int64_t instance_id, int64_t until,
                      int64_t at, int64_t *orphans)
{
    pctl_stmt *st =
        pctl_q(p, instance_id ? PCTL_Q_replay_instance : PCTL_Q_replay_all);
    int rc = 0, step;

    if (orphans)
        *orphans = 0;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, until > 0 ? until : INT64_MAX);
    pctl_bind_i64(st, 2, at > 0 ? at : INT64_MAX);
    if (instance_id)
        pctl_bind_i64(st, 3, instance_id);
    /* Columns: 0 seq, 1 at, 2 instance_id, 3 run_id, 4 phase_id, 5 step_id,
     * 6 entity, 7 from, 8 to, 9 attempt, 10 message, 11 data. */
    while (rc >= 0 && (step = pctl_step(st)) == PCTL_ROW) {
        ev e;
        const char *to = pctl_col_text(st, 8);
        const char *data = pctl_col_text(st, 11);

        memset(&e, 0, sizeof e);
        e.seq = pctl_col_i64(st, 0);
        e.at = pctl_col_i64(st, 1);
        e.instance_id = pctl_col_i64(st, 2);
        e.run_id = pctl_col_i64(st, 3);
        e.phase_id = pctl_col_i64(st, 4);
        e.step_id = pctl_col_i64(st, 5);
        e.entity = pctl_col_text(st, 6);
        e.has_from = !pctl_col_null(st, 7);
        e.from = e.has_from ? pctl_col_text(st, 7) : "";
        e.attempt = pctl_col_int(st, 9);
        e.msg = pctl_col_text(st, 10);
        e.data = data ? json_loads(data, 0, NULL) : NULL;
        r->last_seq = e.seq;
        r->last_at = e.at;
        r->nevents++;
        if (!strcmp(e.entity, "instance") || !strcmp(e.entity, "engine")) {
            rc = on_admin(r, &e);
        } else if (!to || planctl_status_parse(&e.to, to) < 0) {
            rc = pctl_err(p, PLANCTL_EMISMATCH,
                          "event %lld: unknown status \"%s\"", (long long)e.seq,
                          to ? to : "");
        } else if (!strcmp(e.entity, "run")) {
            rc = on_run(r, &e);
        } else if (!strcmp(e.entity, "phase")) {
            rc = on_phase(r, &e);
        } else {
            rc = on_step(r, &e);
        }
        json_decref(e.data);
        if (rc == PLANCTL_ENOMEM)
            rc = pctl_err(p, rc, "out of memory");
        if (rc == 1) {
            if (orphans)
                ++*orphans;
            rc = 0;
        }
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    /* A retry of a run that is no longer in the log (removed with its
     * events by gc, which also clears runs.retry_of) reads as none. */
    for (size_t i = 0; rc == 0 && i < r->nruns; i++)
        if (r->runs[i].m.retry_of && !find_run(r, r->runs[i].m.retry_of))
            r->runs[i].m.retry_of = 0;
    return rc;
}

/* ---- replay as documents ---- */

static int instance_doc(json_t **out, planctl *p, replay *r, int64_t iid,
                        const char *name, int64_t now)
{
    rinst *in = inst_of(r, iid);
    json_t *status = NULL, *history = NULL, *queued, *plans, *runs;
    pctl_def *def = NULL;
    int64_t def_id = 0, active = 0;
    size_t i, k;
    int rc = 0;

    *out = NULL;
    if (!in)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (!in->def_name)
        return 0; /* not created yet at that point */
    {
        pctl_stmt *st = pctl_q(p, PCTL_Q_def_by_name_version);

        if (!st)
            return pctl_q_err(p);
        pctl_bind_text(st, 1, in->def_name);
        pctl_bind_text(st, 2, in->def_version);
        if (pctl_step(st) == PCTL_ROW)
            def_id = pctl_col_i64(st, 0);
        pctl_reset(st);
    }
    if ((rc = pctl_def_load(&def, p, def_id)) < 0)
        return rc;
    for (i = 0; i < r->nruns; i++)
        if (r->runs[i].instance_id == iid &&
            pctl_status_active(r->runs[i].m.status))
            active = r->runs[i].m.id;
    status = pctl_m_status_doc(name, def->name, def->version, active);
    history = pctl_m_history_doc(name);
    queued = status ? json_object_get(status, "queued") : NULL;
    plans = status ? json_object_get(status, "plans") : NULL;
    runs = history ? json_object_get(history, "runs") : NULL;
    if (!queued || !runs)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    for (i = 0; rc == 0 && i < r->nruns; i++)
        if (r->runs[i].instance_id == iid &&
            r->runs[i].m.status == PLANCTL_STATUS_QUEUED &&
            json_array_append_new(queued, json_integer(r->runs[i].m.id)) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    for (k = 0; rc == 0 && k < def->nplans; k++) {
        const rrun *latest = NULL;
        json_t *run = NULL;

        for (i = 0; i < r->nruns; i++)
            if (r->runs[i].instance_id == iid &&
                !strcmp(r->runs[i].m.plan, def->plans[k].name))
                latest = &r->runs[i];
        /* A secret parameter's value is "***" here as in status. */
        if (latest &&
            (!(run = pctl_m_run_json(&latest->m, now, 1)) ||
             pctl_secrets_mask(json_object_get(run, "params"), def) < 0))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        else if (json_array_append_new(
                     plans,
                     pctl_m_plan_json(
                         def->plans[k].name,
                         pctl_strategy_name(def->plans[k].strategy), run)) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    for (i = r->nruns; rc == 0 && i-- > 0;)
        if (r->runs[i].instance_id == iid &&
            json_array_append_new(runs,
                                  pctl_m_run_json(&r->runs[i].m, now, 0)) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0 && !(*out = json_pack("{s:s, s:o, s:o}", "instance", name,
                                      "status", status, "history", history)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc < 0) {
        json_decref(status);
        json_decref(history);
    }
    pctl_def_free(def);
    return rc;
}

int planctl_replay_json(char **out, planctl *p, const char *instance,
                        const planctl_replay_options *opts)
{
    planctl_replay_options defaults = PLANCTL_REPLAY_OPTIONS_INIT;
    pctl_instance_row row = {0};
    replay r;
    json_t *doc = NULL, *arr;
    pctl_stmt *st;
    int rc, step;
    int64_t now;

    if (!out || !p)
        return pctl_err_arg(p, !p ? "p" : "out");
    *out = NULL;
    if (!opts)
        opts = &defaults;
    if (opts->until_seq < 0 || opts->at_ms < 0)
        return pctl_err(p, PLANCTL_EINVAL, "until and at must not be negative");
    memset(&r, 0, sizeof r);
    if (instance && (rc = pctl_instance_find(&row, p, instance)) < 0)
        return rc;
    if ((rc = pctl_tx_read(p)) < 0)
        goto done;
    rc = run_replay(&r, p, row.id, opts->until_seq, opts->at_ms, NULL);
    /* Time travel shows durations as of the last event shown. */
    now = opts->until_seq || opts->at_ms ? r.last_at : pctl_now(p);
    doc = json_pack("{s:i, s:I, s:[]}", "schema", 1, "until_seq",
                    (json_int_t)r.last_seq, "instances");
    arr = doc ? json_object_get(doc, "instances") : NULL;
    if (rc == 0 && !arr)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0 && instance) {
        json_t *one;

        rc = instance_doc(&one, p, &r, row.id, instance, now);
        if (rc == 0 && one && json_array_append_new(arr, one) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    } else if (rc == 0 && (st = pctl_q(p, PCTL_Q_instance_ids))) {
        while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
            json_t *one;
            char *name = pctl_strdup(pctl_col_text(st, 1));
            int64_t iid = pctl_col_i64(st, 0);

            if (!name) {
                rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
                break;
            }
            rc = instance_doc(&one, p, &r, iid, name, now);
            pctl_free(name);
            if (rc == 0 && one && json_array_append_new(arr, one) < 0)
                rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        }
        pctl_reset(st);
    } else if (rc == 0) {
        rc = PLANCTL_ERROR;
    }
    pctl_tx_read_end(p);
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
done:
    json_decref(doc);
    replay_free(&r);
    pctl_instance_row_clear(&row);
    return rc;
}

/* ---- verify ---- */

/* The database's own check q: its first row says "ok" (verify_integrity)
 * or it has no row (verify_foreign_keys); what names it in a message. */
static int db_check(planctl *p, pctl_query q, const char *what)
{
    pctl_stmt *st = pctl_q(p, q);
    int rc = 0, step;

    if (!st)
        return pctl_q_err(p);
    step = pctl_step(st);
    if (step == PCTL_ROW && q == PCTL_Q_verify_foreign_keys) {
        const char *table = pctl_col_text(st, 0),
                   *parent = pctl_col_text(st, 2);

        rc = table && parent
                 ? pctl_err(p, PLANCTL_EMISMATCH,
                            "%s: %s row %lld refers to a %s row that is not "
                            "there",
                            what, table, (long long)pctl_col_i64(st, 1), parent)
                 : pctl_err(p, PLANCTL_EMISMATCH,
                            "%s: a row violates a foreign key", what);
    } else if (step == PCTL_ROW) {
        const char *v = pctl_col_text(st, 0);

        if (!v || strcmp(v, "ok") != 0)
            rc = pctl_err(p, PLANCTL_EMISMATCH, "%s: %s", what,
                          v ? v : "failed, saying nothing");
    } else if (step < 0) {
        rc = step;
    }
    pctl_reset(st);
    return rc;
}

/* Every run's event counter agrees with its events. */
static int check_event_counts(planctl *p)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_verify_event_count);
    int rc = 0, step;

    if (!st)
        return pctl_q_err(p);
    step = pctl_step(st);
    if (step == PCTL_ROW)
        rc = pctl_err(p, PLANCTL_EMISMATCH,
                      "run %lld: tables say %lld events (runs.event_count), "
                      "the log holds %lld",
                      (long long)pctl_col_i64(st, 0),
                      (long long)pctl_col_i64(st, 1),
                      (long long)pctl_col_i64(st, 2));
    else if (step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    return rc;
}

int pctl_verify_instance(planctl *p, int64_t instance_id)
{
    replay r;
    int64_t orphans = 0;
    char diff[512];
    size_t i;
    int rc;

    memset(&r, 0, sizeof r);
    rc = run_replay(&r, p, instance_id, 0, 0, &orphans);
    if (rc == 0 && orphans > 0)
        rc = pctl_err(p, PLANCTL_EMISMATCH,
                      "%lld events refer to runs, phases or steps the log "
                      "never created",
                      (long long)orphans);
    for (i = 0; rc == 0 && i < r.nruns; i++) {
        pctl_m_run tab;

        if ((rc = pctl_model_from_tables(&tab, p, r.runs[i].m.id)) < 0)
            break;
        if (pctl_m_run_diff(diff, sizeof diff, &tab, &r.runs[i].m))
            rc = pctl_err(p, PLANCTL_EMISMATCH, "%s (last event %lld)", diff,
                          (long long)r.last_seq);
        pctl_m_run_clear(&tab);
    }
    replay_free(&r);
    return rc;
}

int planctl_verify(char **out, planctl *p)
{
    replay r;
    pctl_stmt *st;
    int64_t orphans = 0, nruns = 0;
    size_t seen = 0;
    char diff[512];
    int rc, step;

    if (!out || !p)
        return pctl_err_arg(p, !p ? "p" : "out");
    *out = NULL;
    memset(&r, 0, sizeof r);
    if ((rc = pctl_tx_read(p)) < 0)
        return rc;
    rc = db_check(p, PCTL_Q_verify_integrity, "integrity check");
    if (rc == 0)
        rc = db_check(p, PCTL_Q_verify_foreign_keys, "foreign key check");
    if (rc == 0)
        rc = run_replay(&r, p, 0, 0, 0, &orphans);
    if (rc == 0 && orphans > 0)
        rc = pctl_err(p, PLANCTL_EMISMATCH,
                      "%lld events refer to runs, phases or steps the log "
                      "never created",
                      (long long)orphans);
    st = rc == 0 ? pctl_q(p, PCTL_Q_run_ids) : NULL;
    if (rc == 0 && !st)
        rc = pctl_q_err(p);
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        int64_t id = pctl_col_i64(st, 0);
        rrun *er = find_run(&r, id);
        pctl_m_run tab;

        nruns++;
        if (!er) {
            rc = pctl_err(p, PLANCTL_EMISMATCH,
                          "run %lld is in the tables but the events never "
                          "created it",
                          (long long)id);
            break;
        }
        seen++;
        if ((rc = pctl_model_from_tables(&tab, p, id)) < 0)
            break;
        if (pctl_m_run_diff(diff, sizeof diff, &tab, &er->m))
            rc = pctl_err(p, PLANCTL_EMISMATCH, "%s (last event %lld)", diff,
                          (long long)r.last_seq);
        pctl_m_run_clear(&tab);
    }
    if (st)
        pctl_reset(st);
    if (rc == 0 && seen != r.nruns)
        rc = pctl_err(p, PLANCTL_EMISMATCH,
                      "%zu runs are in the events but not in the tables",
                      r.nruns - seen);
    if (rc == 0)
        rc = check_event_counts(p);
    pctl_tx_read_end(p);
    if (rc == 0 &&
        !(*out = pctl_asprintf("verified %lld run%s against %lld event%s: "
                               "tables and events agree; %s",
                               (long long)nruns, nruns == 1 ? "" : "s",
                               (long long)r.nevents, r.nevents == 1 ? "" : "s",
                               p->conn->m->verify_says)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    replay_free(&r);
    return rc;
}
