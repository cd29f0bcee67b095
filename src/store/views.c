/*
 * views.c - the status, history and instances documents of DESIGN §8.
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
#include "core/timefmt.h"
#include "store/store.h"

static json_t *time_or_null(sqlite3_stmt *st, int col)
{
    char buf[PCTL_TIME_BUF];

    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return json_null();
    pctl_time_rfc3339(buf, sqlite3_column_int64(st, col));
    return json_string(buf);
}

static json_t *text_or_null(sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return json_null();
    return json_string((const char *)sqlite3_column_text(st, col));
}

static json_t *int_or_null(sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return json_null();
    return json_integer(sqlite3_column_int64(st, col));
}

/* duration_ms: finish (or now, while running) minus start; null before a
 * run starts. */
static json_t *duration(sqlite3_stmt *st, int start_col, int end_col,
                        int64_t now)
{
    int64_t start, end;

    if (sqlite3_column_type(st, start_col) == SQLITE_NULL)
        return json_null();
    start = sqlite3_column_int64(st, start_col);
    end = sqlite3_column_type(st, end_col) == SQLITE_NULL
              ? now
              : sqlite3_column_int64(st, end_col);
    return json_integer(end > start ? end - start : 0);
}

/* Columns of PCTL_Q_run_* queries that select a run:
 * 0 id, 1 uid, 2 plan, 3 status, 4 trigger, 5 reason, 6 retry_of,
 * 7 created_at, 8 started_at, 9 finished_at, 10 message. */
static json_t *run_summary(sqlite3_stmt *st, int64_t now)
{
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
                     " s:o}",
                     "id", (json_int_t)sqlite3_column_int64(st, 0), "uid",
                     text_or_null(st, 1), "plan", text_or_null(st, 2), "status",
                     text_or_null(st, 3), "trigger", text_or_null(st, 4),
                     "reason", text_or_null(st, 5), "retry_of",
                     int_or_null(st, 6), "created_at", time_or_null(st, 7),
                     "started_at", time_or_null(st, 8), "finished_at",
                     time_or_null(st, 9), "duration_ms",
                     duration(st, 8, 9, now), "message", text_or_null(st, 10));
}

/* The phases, with their steps, of one run, in definition order. */
static int add_phases(planctl *p, json_t *run, int64_t run_id)
{
    sqlite3_stmt *ph = pctl_stmt(p, PCTL_Q_view_phases);
    sqlite3_stmt *sp;
    json_t *phases = json_array(), *cur = NULL, *steps = NULL;
    int64_t cur_id = 0;
    int rc;

    if (!ph || !phases) {
        json_decref(phases);
        return ph ? pctl_err(p, PLANCTL_ENOMEM, "out of memory")
                  : PLANCTL_ERROR;
    }
    if (json_object_set_new(run, "phases", phases) < 0)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* Columns: 0 id, 1 name, 2 strategy, 3 status, 4 started, 5 finished,
     * 6 message. */
    sqlite3_bind_int64(ph, 1, run_id);
    while ((rc = sqlite3_step(ph)) == SQLITE_ROW) {
        cur = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:[]}", "name",
                        text_or_null(ph, 1), "strategy", text_or_null(ph, 2),
                        "status", text_or_null(ph, 3), "started_at",
                        time_or_null(ph, 4), "finished_at", time_or_null(ph, 5),
                        "message", text_or_null(ph, 6), "steps");
        if (!cur || json_array_append_new(phases, cur) < 0) {
            sqlite3_reset(ph);
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        }
    }
    sqlite3_reset(ph);
    if (rc != SQLITE_DONE)
        return pctl_sqlerr(p, rc, "reading phases");

    /* Steps of the whole run in (phase idx, step idx) order; one query per
     * run rather than one per phase. */
    sp = pctl_stmt(p, PCTL_Q_view_steps);
    if (!sp)
        return PLANCTL_ERROR;
    sqlite3_bind_int64(sp, 1, run_id);
    /* Columns: 0 phase idx, 1 name, 2 status, 3 attempt, 4 max_attempts,
     * 5 next_attempt_at, 6 started, 7 finished, 8 message. */
    while ((rc = sqlite3_step(sp)) == SQLITE_ROW) {
        int64_t pidx = sqlite3_column_int64(sp, 0);
        json_t *step;

        if (!steps || pidx != cur_id) {
            cur = json_array_get(phases, (size_t)pidx);
            steps = cur ? json_object_get(cur, "steps") : NULL;
            cur_id = pidx;
        }
        step = json_pack(
            "{s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o}", "name",
            text_or_null(sp, 1), "status", text_or_null(sp, 2), "attempt",
            (json_int_t)sqlite3_column_int64(sp, 3), "max_attempts",
            (json_int_t)sqlite3_column_int64(sp, 4), "next_attempt_at",
            time_or_null(sp, 5), "started_at", time_or_null(sp, 6),
            "finished_at", time_or_null(sp, 7), "message", text_or_null(sp, 8));
        if (!steps || !step || json_array_append_new(steps, step) < 0) {
            sqlite3_reset(sp);
            return pctl_err(p, steps ? PLANCTL_ENOMEM : PLANCTL_EIO,
                            steps ? "out of memory"
                                  : "step without its phase in run %lld",
                            (long long)run_id);
        }
    }
    sqlite3_reset(sp);
    return rc == SQLITE_DONE ? 0 : pctl_sqlerr(p, rc, "reading steps");
}

/* The full run object (with phases) for a prepared statement positioned
 * on a run row. */
static int full_run(json_t **out, planctl *p, sqlite3_stmt *st)
{
    int64_t id = sqlite3_column_int64(st, 0);
    json_t *run = run_summary(st, pctl_now(p));
    int rc;

    *out = NULL;
    if (!run)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    sqlite3_reset(st); /* add_phases uses other statements; free this one */
    if ((rc = add_phases(p, run, id)) < 0) {
        json_decref(run);
        return rc;
    }
    *out = run;
    return 0;
}

/* A run by query: 1 row expected or none (*out = NULL). */
static int run_by(json_t **out, planctl *p, pctl_query q, int64_t a,
                  const char *b)
{
    sqlite3_stmt *st = pctl_stmt(p, q);
    int rc;

    *out = NULL;
    if (!st)
        return PLANCTL_ERROR;
    sqlite3_bind_int64(st, 1, a);
    if (b)
        pctl_bind_text(st, 2, b);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return full_run(out, p, st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : pctl_sqlerr(p, rc, "reading run");
}

static int ids_into(planctl *p, pctl_query q, int64_t id, json_t *arr)
{
    sqlite3_stmt *st = pctl_stmt(p, q);
    int rc;

    if (!st)
        return PLANCTL_ERROR;
    sqlite3_bind_int64(st, 1, id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (json_array_append_new(
                arr, json_integer(sqlite3_column_int64(st, 0))) < 0) {
            sqlite3_reset(st);
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : pctl_sqlerr(p, rc, "reading runs");
}

/* Adds one plan entry {name, strategy, status, run}. */
static int add_plan(planctl *p, json_t *plans, const pctl_plan_def *pd,
                    int64_t instance_id, json_t *pinned)
{
    json_t *run = pinned, *o, *status;
    int rc = 0;

    if (!run && (rc = run_by(&run, p, PCTL_Q_run_latest_of_plan, instance_id,
                             pd->name)) < 0)
        return rc;
    if (pinned)
        json_incref(pinned);
    status = run ? json_incref(json_object_get(run, "status"))
                 : json_string("NEVER_RUN");
    o = json_pack("{s:s, s:s, s:o, s:o}", "name", pd->name, "strategy",
                  pctl_strategy_name(pd->strategy), "status", status, "run",
                  run ? run : json_null());
    if (!o || json_array_append_new(plans, o) < 0)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    return 0;
}

int planctl_status_json(char **out, planctl *p, const char *instance,
                        const planctl_status_options *opts)
{
    planctl_status_options defaults = PLANCTL_STATUS_OPTIONS_INIT;
    pctl_instance_row row = {0};
    pctl_def *def = NULL;
    json_t *doc = NULL, *pinned = NULL, *plans, *queued;
    const char *pinned_plan = NULL;
    int64_t active_id = 0;
    char *busy = NULL;
    size_t i;
    int rc;

    if (!out || !p || !instance)
        return p ? pctl_err(p, PLANCTL_EINVAL, "missing argument")
                 : PLANCTL_EINVAL;
    *out = NULL;
    if (!opts)
        opts = &defaults;
    /* A read transaction: every row comes from one snapshot. */
    if ((rc = pctl_exec(p, "BEGIN")) < 0)
        return rc;
    rc = pctl_instance_find(&row, p, instance);
    if (rc == 0)
        rc = pctl_def_load(&def, p, row.definition_id);
    if (rc == 0 && opts->plan && !pctl_def_plan(def, opts->plan))
        rc = pctl_err(p, PLANCTL_ENOTFOUND,
                      "definition %s@%s has no plan \"%s\"", def->name,
                      def->version, opts->plan);
    if (rc == 0 && opts->run > 0) {
        if (rc == 0) {
            sqlite3_stmt *st = pctl_stmt(p, PCTL_Q_run_of_instance);

            if (!st) {
                rc = PLANCTL_ERROR;
            } else {
                sqlite3_bind_int64(st, 1, row.id);
                sqlite3_bind_int64(st, 2, opts->run);
                rc = sqlite3_step(st);
                if (rc == SQLITE_ROW) {
                    rc = full_run(&pinned, p, st);
                } else {
                    sqlite3_reset(st);
                    rc =
                        rc == SQLITE_DONE
                            ? pctl_err(p, PLANCTL_ENOTFOUND,
                                       "run %lld not found for instance "
                                       "\"%s\"; see 'planctl history %s'",
                                       (long long)opts->run, instance, instance)
                            : pctl_sqlerr(p, rc, "reading run");
                }
            }
        }
        if (rc == 0)
            pinned_plan = json_string_value(json_object_get(pinned, "plan"));
    }
    if (rc == 0)
        rc = pctl_active_run_describe(&busy, &active_id, p, row.id, instance);
    if (rc == 0) {
        doc = json_pack("{s:i, s:s, s:{s:s, s:s}, s:o, s:[], s:[]}", "schema",
                        1, "instance", instance, "definition", "name",
                        def->name, "version", def->version, "active_run",
                        active_id ? json_integer(active_id) : json_null(),
                        "queued", "plans");
        if (!doc)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        queued = json_object_get(doc, "queued");
        rc = ids_into(p, PCTL_Q_run_queued_ids, row.id, queued);
    }
    plans = doc ? json_object_get(doc, "plans") : NULL;
    for (i = 0; rc == 0 && i < def->nplans; i++) {
        const pctl_plan_def *pd = &def->plans[i];

        if (opts->plan && strcmp(opts->plan, pd->name) != 0)
            continue;
        rc = add_plan(p, plans, pd, row.id,
                      pinned_plan && strcmp(pinned_plan, pd->name) == 0 ? pinned
                                                                        : NULL);
    }
    sqlite3_exec(p->db, "COMMIT", NULL, NULL, NULL);
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(doc);
    json_decref(pinned);
    pctl_free(busy);
    pctl_def_free(def);
    pctl_instance_row_clear(&row);
    return rc;
}

int planctl_history_json(char **out, planctl *p, const char *instance,
                         const planctl_history_options *opts)
{
    planctl_history_options defaults = PLANCTL_HISTORY_OPTIONS_INIT;
    pctl_instance_row row = {0};
    sqlite3_stmt *st = NULL;
    json_t *doc = NULL, *runs;
    int64_t now;
    int rc;

    if (!out || !p || !instance)
        return p ? pctl_err(p, PLANCTL_EINVAL, "missing argument")
                 : PLANCTL_EINVAL;
    *out = NULL;
    if (!opts)
        opts = &defaults;
    if (opts->limit < 0 || opts->before < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "limit and before must not be negative");
    now = pctl_now(p);
    rc = pctl_instance_find(&row, p, instance);
    if (rc == 0) {
        doc = json_pack("{s:i, s:s, s:[]}", "schema", 1, "instance", instance,
                        "runs");
        st = pctl_stmt(p, opts->plan ? PCTL_Q_history_plan : PCTL_Q_history);
        if (!doc)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        else if (!st)
            rc = PLANCTL_ERROR;
    }
    if (rc == 0) {
        runs = json_object_get(doc, "runs");
        sqlite3_bind_int64(st, 1, row.id);
        sqlite3_bind_int64(st, 2, opts->before > 0 ? opts->before : INT64_MAX);
        sqlite3_bind_int(st, 3, opts->limit > 0 ? opts->limit : 20);
        if (opts->plan)
            pctl_bind_text(st, 4, opts->plan);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            json_t *r = run_summary(st, now);

            if (!r || json_array_append_new(runs, r) < 0) {
                rc = SQLITE_NOMEM;
                break;
            }
        }
        sqlite3_reset(st);
        rc = rc == SQLITE_DONE ? 0 : pctl_sqlerr(p, rc, "reading history");
    }
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(doc);
    pctl_instance_row_clear(&row);
    return rc;
}

int planctl_instances_json(char **out, planctl *p)
{
    sqlite3_stmt *st;
    json_t *doc, *arr;
    int rc;

    if (!out || !p)
        return p ? pctl_err(p, PLANCTL_EINVAL, "missing argument")
                 : PLANCTL_EINVAL;
    *out = NULL;
    st = pctl_stmt(p, PCTL_Q_instance_list);
    if (!st)
        return PLANCTL_ERROR;
    doc = json_pack("{s:i, s:[]}", "schema", 1, "instances");
    arr = doc ? json_object_get(doc, "instances") : NULL;
    if (!arr) {
        json_decref(doc);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    /* Columns: 0 name, 1 def name, 2 def version, 3 latest status,
     * 4 active run, 5 deleting, 6 created_at. */
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = json_pack(
            "{s:o, s:{s:o, s:o}, s:o, s:o, s:b, s:o}", "name",
            text_or_null(st, 0), "definition", "name", text_or_null(st, 1),
            "version", text_or_null(st, 2), "status",
            sqlite3_column_type(st, 3) == SQLITE_NULL ? json_string("NEVER_RUN")
                                                      : text_or_null(st, 3),
            "active_run", int_or_null(st, 4), "deleting",
            sqlite3_column_int(st, 5), "created_at", time_or_null(st, 6));

        if (!o || json_array_append_new(arr, o) < 0) {
            rc = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_reset(st);
    rc = rc == SQLITE_DONE ? 0 : pctl_sqlerr(p, rc, "reading instances");
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(doc);
    return rc;
}
