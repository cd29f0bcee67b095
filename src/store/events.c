/* events.c - reading the event log (DESIGN §8 `events`). */
#include <jansson.h>

#include "core/alloc.h"
#include "core/timefmt.h"
#include "store/store.h"

static json_t *col_text(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL
               ? json_null()
               : json_string((const char *)sqlite3_column_text(st, i));
}

static json_t *col_int(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL
               ? json_null()
               : json_integer(sqlite3_column_int64(st, i));
}

/* Columns: 0 seq, 1 at, 2 instance, 3 run, 4 phase, 5 step, 6 entity,
 * 7 from, 8 to, 9 attempt, 10 message, 11 actor. */
static json_t *event_obj(sqlite3_stmt *st)
{
    char at[PCTL_TIME_BUF];

    pctl_time_rfc3339(at, sqlite3_column_int64(st, 1));
    return json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
                     " s:o}",
                     "seq", (json_int_t)sqlite3_column_int64(st, 0), "at", at,
                     "instance", col_text(st, 2), "run", col_int(st, 3),
                     "phase", col_text(st, 4), "step", col_text(st, 5),
                     "entity", col_text(st, 6), "from", col_text(st, 7), "to",
                     col_text(st, 8), "attempt", col_int(st, 9), "message",
                     col_text(st, 10), "actor", col_text(st, 11));
}

int planctl_events_json(char **out, planctl *p,
                        const planctl_events_options *opts)
{
    planctl_events_options defaults = PLANCTL_EVENTS_OPTIONS_INIT;
    pctl_instance_row row = {0};
    sqlite3_stmt *st;
    json_t *doc = NULL, *arr;
    int64_t last;
    int rc = 0, step;

    if (!out || !p)
        return p ? pctl_err(p, PLANCTL_EINVAL, "missing argument")
                 : PLANCTL_EINVAL;
    *out = NULL;
    if (!opts)
        opts = &defaults;
    if (opts->limit < 0 || opts->since < 0 || opts->run < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "limit, since and run must not be negative");
    last = opts->since;
    if (opts->instance && (rc = pctl_instance_find(&row, p, opts->instance)))
        return rc;
    if (opts->run > 0) {
        /* The run must exist, and belong to the instance if one is named. */
        st = pctl_legacy_stmt(p, PCTL_Q_run_instance);
        if (!st) {
            pctl_instance_row_clear(&row);
            return PLANCTL_ERROR;
        }
        sqlite3_bind_int64(st, 1, opts->run);
        step = sqlite3_step(st);
        if (step != SQLITE_ROW ||
            (opts->instance && sqlite3_column_int64(st, 0) != row.id))
            rc =
                step == SQLITE_ROW || step == SQLITE_DONE
                    ? pctl_err(p, PLANCTL_ENOTFOUND, "run %lld not found%s%s%s",
                               (long long)opts->run,
                               opts->instance ? " for instance \"" : "",
                               opts->instance ? opts->instance : "",
                               opts->instance ? "\"" : "")
                    : pctl_sqlerr(p, step, "reading run");
        sqlite3_reset(st);
        if (rc < 0) {
            pctl_instance_row_clear(&row);
            return rc;
        }
    }
    st = pctl_legacy_stmt(p, opts->run > 0    ? PCTL_Q_events_run
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
    sqlite3_bind_int64(st, 1, opts->since);
    sqlite3_bind_int(st, 2, opts->limit > 0 ? opts->limit : 1000);
    if (opts->run > 0)
        sqlite3_bind_int64(st, 3, opts->run);
    else if (opts->instance)
        sqlite3_bind_int64(st, 3, row.id);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *ev = event_obj(st);

        last = sqlite3_column_int64(st, 0);
        if (!ev || json_array_append_new(arr, ev) < 0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = pctl_sqlerr(p, step, "reading events");
    sqlite3_reset(st);
    if (rc == 0 && json_object_set_new(doc, "last_seq", json_integer(last)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(doc);
    pctl_instance_row_clear(&row);
    return rc;
}
