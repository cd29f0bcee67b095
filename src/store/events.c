/* events.c - reading the event log (`events`, planctl-json(7)). */
#include <jansson.h>

#include "core/alloc.h"
#include "core/timefmt.h"
#include "store/store.h"

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

/* Columns: 0 seq, 1 at, 2 instance, 3 run, 4 phase, 5 step, 6 entity,
 * 7 from, 8 to, 9 attempt, 10 message, 11 actor. */
static json_t *event_obj(pctl_stmt *st)
{
    char at[PCTL_TIME_BUF];

    pctl_time_rfc3339(at, pctl_col_i64(st, 1));
    return json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
                     " s:o}",
                     "seq", (json_int_t)pctl_col_i64(st, 0), "at", at,
                     "instance", col_text(st, 2), "run", col_int(st, 3),
                     "phase", col_text(st, 4), "step", col_text(st, 5),
                     "entity", col_text(st, 6), "from", col_text(st, 7), "to",
                     col_text(st, 8), "attempt", col_int(st, 9), "message",
                     col_text(st, 10), "actor", col_text(st, 11));
}

/* Moves *since to just before the last tail events of those opts selects
 * (instance_id is the named instance's), or leaves it when there are
 * fewer.  Returns 0 or the statement's error. */
static int tail_start(int64_t *since, planctl *p,
                      const planctl_events_options *opts, int64_t instance_id,
                      int tail)
{
    pctl_stmt *st = pctl_q(p, opts->run > 0    ? PCTL_Q_events_run_tail
                              : opts->instance ? PCTL_Q_events_instance_tail
                                               : PCTL_Q_events_all_tail);
    int rc = 0, step;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, *since);
    pctl_bind_i64(st, 2, tail);
    if (opts->run > 0)
        pctl_bind_i64(st, 3, opts->run);
    else if (opts->instance)
        pctl_bind_i64(st, 3, instance_id);
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
    pctl_stmt *st;
    json_t *doc = NULL, *arr;
    int64_t last, since;
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
    if (tail > 0 && (rc = tail_start(&since, p, opts, row.id, tail)) < 0) {
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
                  : PLANCTL_ERROR;
    }
    pctl_bind_i64(st, 1, since);
    pctl_bind_i64(st, 2, opts->limit > 0 ? opts->limit : 1000);
    if (opts->run > 0)
        pctl_bind_i64(st, 3, opts->run);
    else if (opts->instance)
        pctl_bind_i64(st, 3, row.id);
    while ((step = pctl_step(st)) == PCTL_ROW) {
        json_t *ev = event_obj(st);

        last = pctl_col_i64(st, 0);
        if (!ev || json_array_append_new(arr, ev) < 0) {
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
    return rc;
}
