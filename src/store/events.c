/* events.c - reading the event log (`events`, planctl-json(7)). */
#include <jansson.h>
#include <string.h>

#include "core/alloc.h"
#include "core/outputs.h"
#include "core/secrets.h"
#include "core/timefmt.h"
#include "store/feed.h"
#include "store/store.h"

/* The definitions of the runs whose events carry parameters (the event
 * that admitted a run has its snapshot), loaded once per call: their
 * secret parameters are shown as status shows them, "***". */
typedef struct defs_seen {
    int64_t *ids;
    pctl_def **defs;
    size_t n, cap;
} defs_seen;

static void defs_seen_clear(defs_seen *d)
{
    size_t i;

    for (i = 0; i < d->n; i++)
        pctl_def_free(d->defs[i]);
    pctl_free(d->ids);
    pctl_free(d->defs);
    memset(d, 0, sizeof *d);
}

static int def_of(const pctl_def **out, planctl *p, defs_seen *d, int64_t id)
{
    pctl_def *def = NULL;
    size_t i, cap = d->cap;
    int rc;

    for (i = 0; i < d->n; i++)
        if (d->ids[i] == id) {
            *out = d->defs[i];
            return 0;
        }
    if ((rc = pctl_def_load(&def, p, id)) < 0)
        return rc;
    if (pctl_grow((void **)&d->ids, d->n, &cap, sizeof *d->ids) < 0 ||
        pctl_grow((void **)&d->defs, d->n, &d->cap, sizeof *d->defs) < 0) {
        pctl_def_free(def);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    d->ids[d->n] = id;
    d->defs[d->n++] = def;
    *out = def;
    return 0;
}

static json_t *col_text(pctl_stmt *st, int i)
{
    return pctl_col_null(st, i) ? json_null()
                                : json_string(pctl_col_text(st, i));
}

static json_t *col_int(pctl_stmt *st, int i)
{
    return pctl_col_null(st, i) ? json_null()
                                : json_integer(pctl_col_i64(st, i));
}

/* The event's data (column 12) as an object, shown as status shows what
 * it holds: its run's secret parameters (column 13: the run's
 * definition) and secret task outputs "***".  null when it has none, or
 * when what is stored is not an object (a row imported from elsewhere). */
static int event_data(json_t **out, planctl *p, pctl_stmt *st, defs_seen *seen)
{
    const pctl_def *def = NULL;
    json_t *o, *params;
    int rc;

    *out = NULL;
    o = pctl_col_null(st, 12) ? NULL
                              : json_loads(pctl_col_text(st, 12), 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        *out = json_null();
        return 0;
    }
    if (pctl_outputs_mask(json_object_get(o, "outputs")) < 0) {
        json_decref(o);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    params = json_object_get(o, "params");
    if (json_is_object(params) && !pctl_col_null(st, 13)) {
        if ((rc = def_of(&def, p, seen, pctl_col_i64(st, 13))) < 0) {
            json_decref(o);
            return rc;
        }
        if (pctl_secrets_mask(params, def) < 0) {
            json_decref(o);
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        }
    }
    *out = o;
    return 0;
}

/* Columns: 0 seq, 1 at, 2 instance, 3 run, 4 phase, 5 step, 6 entity,
 * 7 from, 8 to, 9 attempt, 10 message, 11 actor, 12 data, 13 the run's
 * definition. */
static int event_obj(json_t **out, planctl *p, pctl_stmt *st, defs_seen *seen)
{
    char at[PCTL_TIME_BUF];
    json_t *data;
    int rc;

    if ((rc = event_data(&data, p, st, seen)) < 0)
        return rc;
    pctl_time_rfc3339(at, pctl_col_i64(st, 1));
    *out = json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
                     " s:o, s:o}",
                     "seq", (json_int_t)pctl_col_i64(st, 0), "at", at,
                     "instance", col_text(st, 2), "run", col_int(st, 3),
                     "phase", col_text(st, 4), "step", col_text(st, 5),
                     "entity", col_text(st, 6), "from", col_text(st, 7), "to",
                     col_text(st, 8), "attempt", col_int(st, 9), "message",
                     col_text(st, 10), "actor", col_text(st, 11), "data", data);
    return *out ? 0 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
}

/* Moves *since to just before the last tail events of those opts selects
 * (instance_id is the named instance's), or leaves it when there are
 * fewer.  Returns 0 or the statement's error. */
static int tail_start(int64_t *since, planctl *p,
                      const planctl_events_options *opts, int64_t instance_id,
                      int tail, int64_t horizon)
{
    pctl_stmt *st = pctl_q(p, opts->run > 0    ? PCTL_Q_events_run_tail
                              : opts->instance ? PCTL_Q_events_instance_tail
                                               : PCTL_Q_events_all_tail);
    int rc = 0, step;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, *since);
    pctl_bind_i64(st, 2, tail);
    pctl_bind_i64(st, 3, horizon);
    if (opts->run > 0)
        pctl_bind_i64(st, 4, opts->run);
    else if (opts->instance)
        pctl_bind_i64(st, 4, instance_id);
    step = pctl_step(st);
    if (step == PCTL_ROW)
        *since = pctl_col_i64(st, 0);
    else if (step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    return rc;
}

int planctl_events_json(char **out, planctl *p,
                        const planctl_events_options *opts)
{
    planctl_events_options defaults = PLANCTL_EVENTS_OPTIONS_INIT;
    pctl_instance_row row = {0};
    defs_seen seen = {0};
    pctl_stmt *st;
    json_t *doc = NULL, *arr;
    int64_t last, since, horizon;
    int rc = 0, step, tail;

    if (!out || !p)
        return pctl_err_arg(p, !p ? "p" : "out");
    *out = NULL;
    if (!opts)
        opts = &defaults;
    if (opts->version < 1 || opts->version > PLANCTL_EVENTS_OPTIONS_VERSION)
        return pctl_err(p, PLANCTL_EINVAL,
                        "unknown planctl_events_options version %u",
                        opts->version);
    /* Version 1 of the options ends before tail. */
    tail = opts->version >= 2 ? opts->tail : 0;
    if (opts->limit < 0 || opts->since < 0 || opts->run < 0 || tail < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "limit, since, run and tail must not be negative");
    since = opts->since;
    /* Before the statements that read: the events below it are final by
     * then (feed.h). */
    if ((rc = pctl_events_horizon(&horizon, p, since)) < 0)
        return rc;
    if (opts->instance && (rc = pctl_instance_find(&row, p, opts->instance)))
        return rc;
    if (opts->run > 0) {
        /* The run must exist, and belong to the instance if one is named. */
        st = pctl_q(p, PCTL_Q_run_instance);
        if (!st) {
            pctl_instance_row_clear(&row);
            return pctl_q_err(p);
        }
        pctl_bind_i64(st, 1, opts->run);
        step = pctl_step(st);
        if (step != PCTL_ROW ||
            (opts->instance && pctl_col_i64(st, 0) != row.id))
            rc =
                step == PCTL_ROW || step == PCTL_DONE
                    ? pctl_err(p, PLANCTL_ENOTFOUND, "run %lld not found%s%s%s",
                               (long long)opts->run,
                               opts->instance ? " for instance \"" : "",
                               opts->instance ? opts->instance : "",
                               opts->instance ? "\"" : "")
                    : pctl_q_fail(st, step);
        pctl_reset(st);
        if (rc < 0) {
            pctl_instance_row_clear(&row);
            return rc;
        }
    }
    if (tail > 0 &&
        (rc = tail_start(&since, p, opts, row.id, tail, horizon)) < 0) {
        pctl_instance_row_clear(&row);
        return rc;
    }
    last = since;
    st = pctl_q(p, opts->run > 0    ? PCTL_Q_events_run
                   : opts->instance ? PCTL_Q_events_instance
                                    : PCTL_Q_events_all);
    doc = json_pack("{s:i, s:[]}", "schema", 1, "events");
    arr = doc ? json_object_get(doc, "events") : NULL;
    if (!st || !arr) {
        json_decref(doc);
        pctl_instance_row_clear(&row);
        return st ? pctl_err(p, PLANCTL_ENOMEM, "out of memory")
                  : pctl_q_err(p);
    }
    pctl_bind_i64(st, 1, since);
    pctl_bind_i64(st, 2, opts->limit > 0 ? opts->limit : 1000);
    pctl_bind_i64(st, 3, horizon);
    if (opts->run > 0)
        pctl_bind_i64(st, 4, opts->run);
    else if (opts->instance)
        pctl_bind_i64(st, 4, row.id);
    while ((step = pctl_step(st)) == PCTL_ROW) {
        json_t *ev;

        last = pctl_col_i64(st, 0);
        if ((rc = event_obj(&ev, p, st, &seen)) < 0)
            break;
        if (json_array_append_new(arr, ev) < 0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    if (rc == 0 && json_object_set_new(doc, "last_seq", json_integer(last)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(doc);
    pctl_instance_row_clear(&row);
    defs_seen_clear(&seen);
    return rc;
}
