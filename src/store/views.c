/*
 * views.c - the status, history and instances documents of planctl-json(7).
 *
 * Every lookup here is an index seek: the newest run of each plan
 * (runs_by_plan), the active run (runs_one_active), the queue
 * (runs_queued) and a history page (runs_by_instance), so the views cost
 * the same on a database with a million runs as on an empty one.
 * Field names, `"schema": 1`, RFC 3339 times and explicit nulls are a
 * contract with users' scripts.
 */
#include <jansson.h>
#include <string.h>

#include "core/alloc.h"
#include "core/secrets.h"
#include "core/timefmt.h"
#include "store/model.h"
#include "store/store.h"

/* Copies a text column (NULL for SQL NULL); *oom set on failure. */
static char *dup_col(pctl_stmt *st, int col, int *oom)
{
    char *s;

    if (pctl_col_null(st, col))
        return NULL;
    s = pctl_strdup(pctl_col_text(st, col));
    if (!s)
        *oom = 1;
    return s;
}

static int status_col(planctl *p, pctl_stmt *st, int col, planctl_status *out)
{
    if (planctl_status_parse(out, pctl_col_text(st, col)) < 0)
        return pctl_err(p, PLANCTL_EIO,
                        "unknown status \"%s\" in the "
                        "database",
                        pctl_col_text(st, col));
    return 0;
}

/* Columns of the queries that select a run: 0 id, 1 uid, 2 plan,
 * 3 status, 4 trigger, 5 reason, 6 retry_of, 7 created_at, 8 started_at,
 * 9 finished_at, 10 message, 11 deadline_at, 12 its definition's
 * version. */
static int run_row(pctl_m_run *r, planctl *p, pctl_stmt *st)
{
    int oom = 0, rc;

    memset(r, 0, sizeof *r);
    r->id = pctl_col_i64(st, 0);
    r->uid = dup_col(st, 1, &oom);
    r->plan = dup_col(st, 2, &oom);
    rc = status_col(p, st, 3, &r->status);
    r->trigger = dup_col(st, 4, &oom);
    r->reason = dup_col(st, 5, &oom);
    r->retry_of = pctl_col_i64(st, 6);
    r->created_at = pctl_col_i64(st, 7);
    r->started_at = pctl_col_i64(st, 8);
    r->finished_at = pctl_col_i64(st, 9);
    r->message = dup_col(st, 10, &oom);
    r->deadline_at = pctl_col_i64(st, 11);
    r->def_version = dup_col(st, 12, &oom);
    if (oom)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    return rc;
}

static int load_attempts(pctl_m_step *s, planctl *p)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_view_attempts);
    int rc = 0, step, oom = 0;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, s->id);
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        pctl_m_attempt *a = pctl_m_add_attempt(s);

        if (!a) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        a->number = pctl_col_int(st, 0);
        rc = status_col(p, st, 1, &a->status);
        a->started_at = pctl_col_i64(st, 2);
        a->finished_at = pctl_col_i64(st, 3);
        if (!pctl_col_null(st, 4))
            a->exit_code = pctl_col_int(st, 4);
        a->message = dup_col(st, 5, &oom);
        a->output = dup_col(st, 6, &oom);
        a->outputs = dup_col(st, 7, &oom);
        if (oom)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    return rc;
}

/* The phases and steps (and, for verify, attempts) of r from the tables. */
static int load_children(pctl_m_run *r, planctl *p, int with_attempts)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_view_phases);
    int rc = 0, step, oom = 0;
    size_t i, j;

    if (!st)
        return pctl_q_err(p);
    /* Columns: 0 id, 1 name, 2 strategy, 3 status, 4 started, 5 finished,
     * 6 message. */
    pctl_bind_i64(st, 1, r->id);
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        pctl_m_phase *ph = pctl_m_add_phase(r);

        if (!ph) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        ph->id = pctl_col_i64(st, 0);
        ph->name = dup_col(st, 1, &oom);
        ph->strategy = dup_col(st, 2, &oom);
        rc = status_col(p, st, 3, &ph->status);
        ph->started_at = pctl_col_i64(st, 4);
        ph->finished_at = pctl_col_i64(st, 5);
        ph->message = dup_col(st, 6, &oom);
        if (oom)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    if (rc < 0)
        return rc;

    /* Steps of the whole run in (phase idx, step idx) order; one query per
     * run rather than one per phase.  Columns: 0 phase idx, 1 name,
     * 2 status, 3 attempt, 4 max_attempts, 5 next_attempt_at, 6 started,
     * 7 finished, 8 message, 9 id, 10 deadline_at, 11 outputs. */
    st = pctl_q(p, PCTL_Q_view_steps);
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, r->id);
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        size_t pidx = (size_t)pctl_col_i64(st, 0);
        pctl_m_step *s;

        if (pidx >= r->nphases) {
            rc = pctl_err(p, PLANCTL_EIO, "step without its phase in run %lld",
                          (long long)r->id);
            break;
        }
        if (!(s = pctl_m_add_step(&r->phases[pidx]))) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        s->name = dup_col(st, 1, &oom);
        rc = status_col(p, st, 2, &s->status);
        s->attempt = pctl_col_int(st, 3);
        s->max_attempts = pctl_col_int(st, 4);
        s->next_attempt_at = pctl_col_i64(st, 5);
        s->started_at = pctl_col_i64(st, 6);
        s->finished_at = pctl_col_i64(st, 7);
        s->message = dup_col(st, 8, &oom);
        s->id = pctl_col_i64(st, 9);
        s->deadline_at = pctl_col_i64(st, 10);
        s->outputs = dup_col(st, 11, &oom);
        if (oom)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    for (i = 0; rc == 0 && with_attempts && i < r->nphases; i++)
        for (j = 0; rc == 0 && j < r->phases[i].nsteps; j++)
            rc = load_attempts(&r->phases[i].steps[j], p);
    return rc;
}

/* The run's parameter snapshot, canonical, for verify and status. */
static int load_params(pctl_m_run *r, planctl *p, int64_t run_id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_run_params);
    int step;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    step = pctl_step(st);
    if (step == PCTL_ROW && !(r->params = pctl_m_params(pctl_col_text(st, 0))))
        step = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    pctl_reset(st);
    return step == PCTL_ROW ? 0 : pctl_q_fail(st, step);
}

int pctl_model_from_tables(pctl_m_run *out, planctl *p, int64_t run_id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_run_by_id);
    int rc;

    memset(out, 0, sizeof *out);
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    rc = pctl_step(st);
    if (rc != PCTL_ROW) {
        pctl_reset(st);
        return rc == PCTL_DONE
                   ? pctl_err(p, PLANCTL_ENOTFOUND, "run %lld not found",
                              (long long)run_id)
                   : pctl_q_fail(st, rc);
    }
    rc = run_row(out, p, st);
    pctl_reset(st);
    if (rc == 0)
        rc = load_params(out, p, run_id);
    if (rc == 0)
        rc = load_children(out, p, 1);
    if (rc < 0)
        pctl_m_run_clear(out);
    return rc;
}

/* The full run object (with phases, and with each step's attempts when
 * with_attempts) for a prepared statement positioned on a run row. */
static int full_run(json_t **out, planctl *p, pctl_stmt *st, int with_attempts)
{
    pctl_m_run r;
    int rc = run_row(&r, p, st);

    *out = NULL;
    pctl_reset(st); /* load_children uses other statements */
    if (rc == 0)
        rc = load_params(&r, p, r.id);
    if (rc == 0)
        rc = load_children(&r, p, with_attempts);
    if (rc == 0 &&
        !(*out = pctl_m_run_json(&r, pctl_now(p), with_attempts ? 2 : 1)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    pctl_m_run_clear(&r);
    return rc;
}

/* A run by query: 1 row expected or none (*out = NULL). */
static int run_by(json_t **out, planctl *p, pctl_query q, int64_t a,
                  const char *b)
{
    pctl_stmt *st = pctl_q(p, q);
    int rc;

    *out = NULL;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, a);
    if (b)
        pctl_bind_text(st, 2, b);
    rc = pctl_step(st);
    if (rc == PCTL_ROW)
        return full_run(out, p, st, 0);
    pctl_reset(st);
    return rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}

/* The same with two ids (instance, run). */
static int run_by2(json_t **out, planctl *p, pctl_query q, int64_t a, int64_t b)
{
    pctl_stmt *st = pctl_q(p, q);
    int rc;

    *out = NULL;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, a);
    pctl_bind_i64(st, 2, b);
    rc = pctl_step(st);
    if (rc == PCTL_ROW)
        return full_run(out, p, st, 0);
    pctl_reset(st);
    return rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}

static int ids_into(planctl *p, pctl_query q, int64_t id, json_t *arr)
{
    pctl_stmt *st = pctl_q(p, q);
    int rc;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, id);
    while ((rc = pctl_step(st)) == PCTL_ROW)
        if (json_array_append_new(arr, json_integer(pctl_col_i64(st, 0))) < 0) {
            pctl_reset(st);
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        }
    pctl_reset(st);
    return rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
}

/* Adds one plan entry {name, strategy, status, run}. */
static int add_plan(planctl *p, json_t *plans, const pctl_plan_def *pd,
                    int64_t instance_id, json_t *pinned)
{
    json_t *run = pinned, *o;
    int rc = 0;

    if (!run && (rc = run_by(&run, p, PCTL_Q_run_latest_of_plan, instance_id,
                             pd->name)) < 0)
        return rc;
    if (pinned)
        json_incref(pinned);
    o = pctl_m_plan_json(pd->name, pctl_strategy_name(pd->strategy), run);
    if (!o || json_array_append_new(plans, o) < 0)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    return 0;
}

/* The instance's parameters, in definition order: [{"name", "value",
 * "default", "secret"}], value the explicit one, else the default (then
 * "default" is true), else null; a secret's value is "***".  Explicit
 * values of names the definition does not define are not shown. */
static json_t *parameters_json(const pctl_def *def, const char *explicit_json)
{
    json_t *explicit_obj =
        json_loads(explicit_json ? explicit_json : "{}", 0, NULL);
    json_t *list = json_array();
    size_t i;

    if (!list)
        goto fail;
    for (i = 0; i < def->nparams; i++) {
        const pctl_param_def *pd = &def->params[i];
        json_t *v = json_object_get(explicit_obj, pd->name), *o;
        int from_default = !v;

        if (v)
            json_incref(v);
        else if (pd->default_json &&
                 !(v = json_loads(pd->default_json, JSON_DECODE_ANY, NULL)))
            goto fail;
        if (v && pd->secret) {
            json_decref(v);
            v = json_string(PCTL_SECRET_MASK);
        }
        o = json_pack("{s:s, s:o, s:b, s:b}", "name", pd->name, "value",
                      v ? v : json_null(), "default", from_default && v,
                      "secret", pd->secret);
        if (!o || json_array_append_new(list, o) < 0)
            goto fail;
    }
    json_decref(explicit_obj);
    return list;
fail:
    json_decref(explicit_obj);
    json_decref(list);
    return NULL;
}

/* Shows the values of def's secret parameters in a run object's "params"
 * snapshot as "***".  Returns 0 or PLANCTL_ENOMEM. */
static int mask_run_params(json_t *run, const pctl_def *def)
{
    return pctl_secrets_mask(json_object_get(run, "params"), def) < 0
               ? PLANCTL_ENOMEM
               : 0;
}

int planctl_status_json(char **out, planctl *p, const char *instance,
                        const planctl_status_options *opts)
{
    planctl_status_options defaults = PLANCTL_STATUS_OPTIONS_INIT;
    pctl_instance_row row = {0};
    pctl_def *def = NULL;
    json_t *doc = NULL, *pinned = NULL, *active = NULL, *plans, *queued;
    const char *pinned_plan = NULL, *active_plan = NULL;
    int64_t active_id = 0;
    char *busy = NULL;
    size_t i;
    int rc;

    if (!out || !p || !instance)
        return pctl_err_arg(p, !p ? "p" : !out ? "out" : "instance");
    *out = NULL;
    if (!opts)
        opts = &defaults;
    /* A read transaction: every row comes from one snapshot. */
    if ((rc = pctl_tx_read(p)) < 0)
        return rc;
    rc = pctl_instance_find(&row, p, instance);
    if (rc == 0)
        rc = pctl_def_load(&def, p, row.definition_id);
    if (rc == 0 && opts->plan && !pctl_def_plan(def, opts->plan))
        rc = pctl_err_no_plan(p, def, opts->plan);
    if (rc == 0 && opts->run > 0) {
        if (rc == 0) {
            pctl_stmt *st = pctl_q(p, PCTL_Q_run_of_instance);

            if (!st) {
                rc = pctl_q_err(p);
            } else {
                pctl_bind_i64(st, 1, row.id);
                pctl_bind_i64(st, 2, opts->run);
                rc = pctl_step(st);
                if (rc == PCTL_ROW) {
                    /* A run asked for by id is looked at closely: it
                     * comes with every attempt of its steps. */
                    rc = full_run(&pinned, p, st, 1);
                } else {
                    pctl_reset(st);
                    rc = rc == PCTL_DONE
                             ? pctl_err(p, PLANCTL_ENOTFOUND,
                                        "run %lld not found for instance "
                                        "\"%s\"",
                                        (long long)opts->run, instance)
                             : pctl_q_fail(st, rc);
                }
            }
        }
        if (rc == 0)
            pinned_plan = json_string_value(json_object_get(pinned, "plan"));
    }
    if (rc == 0)
        rc = pctl_active_run_describe(&busy, &active_id, p, row.id, instance);
    /* A plan shows its active run when it has one, else its latest: a
     * run of the same plan queued behind the active one does not take
     * its place (it is in "queued"). */
    if (rc == 0 && active_id > 0) {
        rc = run_by2(&active, p, PCTL_Q_run_of_instance, row.id, active_id);
        if (rc == 0 && active)
            active_plan = json_string_value(json_object_get(active, "plan"));
    }
    if (rc == 0) {
        doc = pctl_m_status_doc(instance, def->name, def->version, active_id);
        if (!doc)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        queued = json_object_get(doc, "queued");
        rc = ids_into(p, PCTL_Q_run_queued_ids, row.id, queued);
    }
    if (rc == 0) {
        json_t *engine;

        if ((rc = pctl_fleet_supported(p)
                      ? pctl_fleet_engine_json(&engine, p, active_id)
                      : pctl_lease_json(&engine, p, 0)) == 0 &&
            json_object_set_new(doc, "engine", engine) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        const json_t *engine = json_object_get(doc, "engine");
        json_t *waiting;

        /* What an engine recorded, while a live one holds the database:
         * one that stopped or died says nothing of now. */
        if ((rc = pctl_wait_json(
                 &waiting, p,
                 json_is_object(engine) &&
                         !json_is_false(json_object_get(engine, "alive"))
                     ? active_id
                     : 0)) == 0 &&
            json_object_set_new(doc, "waiting", waiting) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        json_t *params = parameters_json(def, row.params);

        if (!params || json_object_set_new(doc, "parameters", params) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    plans = doc ? json_object_get(doc, "plans") : NULL;
    for (i = 0; rc == 0 && i < def->nplans; i++) {
        const pctl_plan_def *pd = &def->plans[i];

        if (opts->plan && strcmp(opts->plan, pd->name) != 0)
            continue;
        rc = add_plan(p, plans, pd, row.id,
                      pinned_plan && strcmp(pinned_plan, pd->name) == 0 ? pinned
                      : active_plan && strcmp(active_plan, pd->name) == 0
                          ? active
                          : NULL);
    }
    pctl_tx_read_end(p);
    for (i = 0; rc == 0 && plans && i < json_array_size(plans); i++)
        if (mask_run_params(json_object_get(json_array_get(plans, i), "run"),
                            def) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(doc);
    json_decref(pinned);
    json_decref(active);
    pctl_free(busy);
    pctl_def_free(def);
    pctl_instance_row_clear(&row);
    return rc;
}

/* A plan to filter history by is one of the definition's, or one some
 * run of the instance ran (an older version may have had it): anything
 * else is a typo, not an empty history. */
static int check_history_plan(planctl *p, const pctl_instance_row *row,
                              const char *plan)
{
    pctl_stmt *st;
    pctl_def *def = NULL;
    int rc, step;

    if ((rc = pctl_def_load(&def, p, row->definition_id)) < 0)
        return rc;
    if (pctl_def_plan(def, plan)) {
        pctl_def_free(def);
        return 0;
    }
    if (!(st = pctl_q(p, PCTL_Q_hint_plan_has_runs))) {
        pctl_def_free(def);
        return pctl_q_err(p);
    }
    pctl_bind_i64(st, 1, row->id);
    pctl_bind_text(st, 2, plan);
    step = pctl_step(st);
    pctl_reset(st);
    if (step == PCTL_DONE)
        rc = pctl_err_no_plan(p, def, plan);
    else if (step != PCTL_ROW)
        rc = pctl_q_fail(st, step);
    pctl_def_free(def);
    return rc;
}

int planctl_history_json(char **out, planctl *p, const char *instance,
                         const planctl_history_options *opts)
{
    planctl_history_options defaults = PLANCTL_HISTORY_OPTIONS_INIT;
    pctl_instance_row row = {0};
    pctl_stmt *st = NULL;
    json_t *doc = NULL, *runs;
    int64_t now;
    int rc, step = PCTL_DONE;

    if (!out || !p || !instance)
        return pctl_err_arg(p, !p ? "p" : !out ? "out" : "instance");
    *out = NULL;
    if (!opts)
        opts = &defaults;
    if (opts->limit < 0 || opts->before < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "limit and before must not be negative");
    now = pctl_now(p);
    rc = pctl_instance_find(&row, p, instance);
    if (rc == 0 && opts->plan)
        rc = check_history_plan(p, &row, opts->plan);
    if (rc == 0) {
        doc = pctl_m_history_doc(instance);
        st = pctl_q(p, opts->plan ? PCTL_Q_history_plan : PCTL_Q_history);
        if (!doc)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        else if (!st)
            rc = pctl_q_err(p);
    }
    if (rc == 0) {
        runs = json_object_get(doc, "runs");
        pctl_bind_i64(st, 1, row.id);
        pctl_bind_i64(st, 2, opts->before > 0 ? opts->before : INT64_MAX);
        pctl_bind_i64(st, 3, opts->limit > 0 ? opts->limit : 20);
        if (opts->plan)
            pctl_bind_text(st, 4, opts->plan);
        while ((step = pctl_step(st)) == PCTL_ROW) {
            pctl_m_run m;
            json_t *r;

            if ((rc = run_row(&m, p, st)) == 0 &&
                (!(r = pctl_m_run_json(&m, now, 0)) ||
                 json_array_append_new(runs, r) < 0))
                rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            pctl_m_run_clear(&m);
            if (rc < 0)
                break;
        }
        pctl_reset(st);
        if (rc == 0 && step != PCTL_DONE)
            rc = pctl_q_fail(st, step);
    }
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(doc);
    pctl_instance_row_clear(&row);
    return rc;
}

int planctl_instances_json(char **out, planctl *p)
{
    pctl_stmt *st;
    json_t *doc, *arr;
    int rc;

    if (!out || !p)
        return pctl_err_arg(p, !p ? "p" : "out");
    *out = NULL;
    st = pctl_q(p, PCTL_Q_instance_list);
    if (!st)
        return pctl_q_err(p);
    doc = json_pack("{s:i, s:[]}", "schema", 1, "instances");
    arr = doc ? json_object_get(doc, "instances") : NULL;
    if (!arr) {
        json_decref(doc);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    /* Columns: 0 name, 1 def name, 2 def version, 3 latest status,
     * 4 active run, 5 deleting, 6 created_at. */
    while ((rc = pctl_step(st)) == PCTL_ROW) {
        json_t *o = json_pack("{s:o, s:{s:o, s:o}, s:o, s:o, s:b, s:o}", "name",
                              pctl_col_json_text(st, 0), "definition", "name",
                              pctl_col_json_text(st, 1), "version",
                              pctl_col_json_text(st, 2), "status",
                              pctl_col_null(st, 3) ? json_string("NEVER_RUN")
                                                   : pctl_col_json_text(st, 3),
                              "active_run", pctl_col_json_int(st, 4),
                              "deleting", pctl_col_int(st, 5), "created_at",
                              pctl_col_json_time(st, 6));

        if (!o || json_array_append_new(arr, o) < 0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
    }
    pctl_reset(st);
    rc = rc == PCTL_DONE ? 0 : pctl_q_fail(st, rc);
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(doc);
    return rc;
}

/* One row of instance_page or instance_page_named (columns: 0 name,
 * 1-2 definition, 3 status, 4 run, 5 plan, 6-8 times, 9 steps done,
 * 10 steps, 11 queued, 12 deleting, 13 created_at, 14 total). */
static json_t *page_row(pctl_stmt *st)
{
    json_t *run = json_null();

    if (!pctl_col_null(st, 4))
        run = json_pack(
            "{s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I}", "id",
            pctl_col_json_int(st, 4), "plan", pctl_col_json_text(st, 5),
            "status", pctl_col_json_text(st, 3), "created_at",
            pctl_col_json_time(st, 6), "started_at", pctl_col_json_time(st, 7),
            "finished_at", pctl_col_json_time(st, 8), "steps_done",
            (json_int_t)pctl_col_i64(st, 9), "steps_total",
            (json_int_t)pctl_col_i64(st, 10));
    if (!run)
        return NULL;
    return json_pack("{s:o, s:{s:o, s:o}, s:o, s:o, s:I, s:b, s:o}", "name",
                     pctl_col_json_text(st, 0), "definition", "name",
                     pctl_col_json_text(st, 1), "version",
                     pctl_col_json_text(st, 2), "status",
                     pctl_col_null(st, 3) ? json_string("NEVER_RUN")
                                          : pctl_col_json_text(st, 3),
                     "run", run, "queued", (json_int_t)pctl_col_i64(st, 11),
                     "deleting", pctl_col_int(st, 12), "created_at",
                     pctl_col_json_time(st, 13));
}

static int count_named(int64_t *out, planctl *p, const char *name)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_instance_count);
    int rc;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_text(st, 1, name);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        *out = pctl_col_i64(st, 0);
        rc = 0;
    } else {
        rc = pctl_q_fail(st, rc);
    }
    pctl_reset(st);
    return rc;
}

int pctl_instances_page(json_t **out, planctl *p, const pctl_ipage_query *q)
{
    int named = !q->status && (!q->sort || !strcmp(q->sort, "name"));
    pctl_stmt *st =
        pctl_q(p, named ? PCTL_Q_instance_page_named : PCTL_Q_instance_page);
    json_t *doc, *arr;
    int64_t total = -1;
    int rc, rows = 0;

    *out = NULL;
    if (!st)
        return pctl_q_err(p);
    doc = json_pack("{s:n, s:[]}", "total", "instances");
    arr = doc ? json_object_get(doc, "instances") : NULL;
    if (!arr) {
        json_decref(doc);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    pctl_bind_text(st, 1, q->name);
    if (named) {
        pctl_bind_i64(st, 2, q->limit);
        pctl_bind_i64(st, 3, q->offset);
    } else {
        pctl_bind_text(st, 2, q->status);
        pctl_bind_text(st, 3, q->sort ? q->sort : "name");
        pctl_bind_i64(st, 4, q->desc);
        pctl_bind_i64(st, 5, q->limit);
        pctl_bind_i64(st, 6, q->offset);
    }
    while ((rc = pctl_step(st)) == PCTL_ROW) {
        json_t *o = page_row(st);

        if (!named && rows++ == 0)
            total = pctl_col_i64(st, 14);
        if (!o || json_array_append_new(arr, o) < 0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
    }
    pctl_reset(st);
    rc = rc == PCTL_DONE ? 0 : rc < 0 ? rc : pctl_q_fail(st, rc);
    if (rc == 0 && named)
        rc = count_named(&total, p, q->name);
    else if (rc == 0 && rows == 0 && q->offset == 0)
        total = 0;
    if (rc == 0 && total >= 0 &&
        json_object_set_new(doc, "total", json_integer(total)) < 0)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc < 0) {
        json_decref(doc);
        return rc;
    }
    *out = doc;
    return 0;
}
