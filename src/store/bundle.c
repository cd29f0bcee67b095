/*
 * bundle.c - exporting one instance, with everything needed to rebuild it
 * elsewhere, as one versioned JSON bundle (planctl-engine(7),
 * "DEBUGGING").
 *
 * A bundle is a machine format and must be lossless: every column of every
 * row is written as stored (times as integer milliseconds, JSON columns of
 * runs and events as their text), rows keep their original ids, and the
 * events come in seq order.  The importer (bundle_import.c) remaps the ids
 * and rebuilds the rows by replaying the status changes through the
 * database's transition guards rather than around them; see the note at
 * the top of that file.  The whole export reads one snapshot (one read
 * transaction), so a running engine cannot tear it.
 *
 * Layout, version 1:
 *   {"format":"planctl-bundle","version":1,"exported_at":RFC3339,
 *    "instance":{id,name,params{},last_applied{}|null,deleting,created_at,
 *                updated_at,definition:{name,version}},
 *    "definitions":[{id,name,version,body,created_at}],
 *    "runs":[..],"phases":[..],"steps":[..],"attempts":[..],"events":[..]}
 * where each row of the last five holds every column of its table under
 * the column's name.  The definitions are every version the instance, its
 * runs or its events name.  `gc --archive` writes the same layout for one
 * run: the instance, that run's rows and events, the definitions they and
 * the instance name.
 */
#include <jansson.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/outputs.h"
#include "core/secrets.h"
#include "core/timefmt.h"
#include "store/bundle.h"
#include "store/store.h"

/* One column as JSON: NULL, an integer, a real or text, exactly as stored
 * (a BLOB never occurs in planctl's tables; it would be exported as text).
 * NULL when out of memory, or *bad_text for text that is not UTF-8. */
static json_t *column_json(pctl_stmt *st, int i, int *bad_text)
{
    const char *text;
    json_t *v;

    switch (pctl_col_type(st, i)) {
    case PCTL_COL_NULL:
        return json_null();
    case PCTL_COL_INT:
        return json_integer(pctl_col_i64(st, i));
    case PCTL_COL_REAL:
        return json_real(pctl_col_real(st, i));
    default:
        /* text first, then its length (sql.h: col_bytes). */
        text = pctl_col_text(st, i);
        if (!text)
            return NULL;
        v = json_stringn(text, pctl_col_bytes(st, i));
        /* The library stores valid UTF-8 (task output is cleaned); a row
         * written by hand may not be. */
        *bad_text = !v;
        return v;
    }
}

/* ---- writing, in pieces ---- */

/* The bundle on its way to write(): whole pieces, not one per row. */
typedef struct sink {
    planctl *p;
    planctl_write_fn write;
    void *data;
    int in_memory;    /* write() fails only for want of memory */
    int secrets;      /* secret outputs in clear (export --include-secrets) */
    json_t *withhold; /* names of secret parameters to leave out, or NULL */
    size_t n;
    char buf[65536];
} sink;

static int write_failed(sink *o)
{
    return o->in_memory
               ? pctl_err(o->p, PLANCTL_ENOMEM, "out of memory")
               : pctl_err(o->p, PLANCTL_EIO, "cannot write the bundle");
}

static int flush(sink *o)
{
    int rc = o->n && o->write(o->data, o->buf, o->n) < 0 ? write_failed(o) : 0;

    o->n = 0;
    return rc;
}

static int put(sink *o, const char *s, size_t n)
{
    int rc;

    if (o->n + n > sizeof o->buf && (rc = flush(o)) < 0)
        return rc;
    if (n > sizeof o->buf)
        return o->write(o->data, s, n) < 0 ? write_failed(o) : 0;
    memcpy(o->buf + o->n, s, n);
    o->n += n;
    return 0;
}

/* v as compact JSON; what names it in a message. */
static int put_json(sink *o, json_t *v, const char *what, int64_t id)
{
    char *text = json_dumps(v, JSON_COMPACT);
    size_t n = text ? strlen(text) : 0;
    int rc;

    if (!text)
        return pctl_err(o->p, PLANCTL_ENOMEM, "out of memory");
    /* What import would refuse is not written (bundle.h). */
    if (n > PCTL_BUNDLE_VALUE_MAX)
        rc =
            pctl_err(o->p, PLANCTL_EINVAL,
                     "%s %lld is %zu MiB as JSON, more than the %zu MiB a "
                     "bundle may hold in one row; it cannot be exported",
                     what, (long long)id, n >> 20, PCTL_BUNDLE_VALUE_MAX >> 20);
    else
        rc = put(o, text, n);
    pctl_free(text);
    return rc;
}

/* A secret output's value is left out of a bundle unless asked for
 * (planctl-definition(5) "TASK OUTPUTS"): in a row's outputs column, and in an
 * event's data. */
static int scrub(json_t *o)
{
    json_t *v = json_object_get(o, "outputs"), *d = json_object_get(o, "data");
    json_t *data, *outs;
    char *text;
    int changed = 0, rc = 0;

    if (json_is_string(v) && strstr(json_string_value(v), "\"secret\"")) {
        if (!(text = pctl_outputs_scrubbed(json_string_value(v), &changed)))
            return PLANCTL_ENOMEM;
        if (changed)
            rc = json_object_set_new(o, "outputs", json_string(text));
        pctl_free(text);
    }
    if (rc == 0 && json_is_string(d) &&
        strstr(json_string_value(d), "\"secret\"") &&
        (data = json_loads(json_string_value(d), 0, NULL))) {
        outs = json_object_get(data, "outputs");
        if (json_is_object(outs) &&
            (text = json_dumps(outs, JSON_COMPACT)) != NULL) {
            char *clean = pctl_outputs_scrubbed(text, &changed);

            pctl_free(text);
            if (!clean)
                rc = -1;
            else if (changed)
                rc = json_object_set_new(data, "outputs",
                                         json_loads(clean, 0, NULL));
            pctl_free(clean);
            if (rc == 0 && changed && (text = json_dumps(data, JSON_COMPACT))) {
                rc = json_object_set_new(o, "data", json_string(text));
                pctl_free(text);
            }
        }
        json_decref(data);
    }
    return rc < 0 ? PLANCTL_ENOMEM : 0;
}

/* Leaves the values of the secret parameters names out of the JSON text
 * held by o's key (a run's "params"), or of its "params" member (an
 * event's "data"): null stands for each, and found (when not NULL)
 * receives their names.  0, or -1 when out of memory. */
static int withhold_text(json_t *o, const char *key, int in_member,
                         const json_t *names, json_t *found)
{
    json_t *col = json_object_get(o, key), *v;
    char *text;
    int n, rc = 0;

    if (!json_is_string(col) ||
        !strstr(json_string_value(col), in_member ? "\"params\"" : "\""))
        return 0;
    /* A row that is not JSON is exported as it is: import judges it. */
    if (!(v = json_loads(json_string_value(col), 0, NULL)))
        return 0;
    n = pctl_secrets_withhold(in_member ? json_object_get(v, "params") : v,
                              names, found);
    if (n < 0)
        rc = -1;
    else if (n > 0 && !(text = json_dumps(v, JSON_COMPACT)))
        rc = -1;
    else if (n > 0) {
        rc = json_object_set_new(o, key, json_string(text));
        pctl_free(text);
    }
    json_decref(v);
    return rc < 0 ? -1 : 0;
}

/* A secret parameter's value is left out of a bundle unless asked for
 * (planctl-definition(5) "SECRET PARAMETERS"): in a run's snapshot, and in the
 * data of the event that created it. */
static int withhold_row(json_t *o, const json_t *names, json_t *found)
{
    if (withhold_text(o, "params", 0, names, found) < 0)
        return -1;
    return withhold_text(o, "data", 1, names, found);
}

/* Writes every row of the named query for instance_id (?1) and run_id
 * (?2) as an array of objects keyed by column name. */
static int rows_json(sink *w, pctl_query q, int64_t iid, int64_t run_id,
                     const char *what, const char *row_what)
{
    planctl *p = w->p;
    pctl_stmt *st = pctl_q(p, q);
    int rc = 0, step, i, n, first = 1;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, iid);
    pctl_bind_i64(st, 2, run_id);
    n = pctl_ncols(st);
    rc = put(w, "[", 1);
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        json_t *o = json_object();
        int bad = 0;

        for (i = 0; o && i < n; i++)
            if (json_object_set_new(o, pctl_col_name(st, i),
                                    column_json(st, i, &bad)) < 0) {
                json_decref(o);
                o = NULL;
            }
        if (bad)
            rc = pctl_err(p, PLANCTL_EIO,
                          "%s: column %s of row %lld is not valid UTF-8; "
                          "fix the row with sqlite3",
                          what, pctl_col_name(st, i - 1),
                          (long long)pctl_col_i64(st, 0));
        else if (!o || (!w->secrets && scrub(o) < 0) ||
                 (w->withhold && withhold_row(o, w->withhold, NULL) < 0))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        else if (!first)
            rc = put(w, ",", 1);
        if (rc == 0)
            rc = put_json(w, o, row_what, pctl_col_i64(st, 0));
        first = 0;
        json_decref(o);
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    return rc < 0 ? rc : put(w, "]", 1);
}

/* A JSON column of the instance, parsed: an object, or null when NULL. */
static int parse_column(json_t **out, planctl *p, pctl_stmt *st, int i,
                        const char *instance, const char *what)
{
    const char *text = pctl_col_text(st, i);

    *out = NULL;
    if (!text) {
        if (!pctl_col_null(st, i)) /* text that could not be had */
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        *out = json_null();
        return *out ? 0 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    *out = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    if (!*out || !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return pctl_err(p, PLANCTL_EIO,
                        "instance \"%s\": %s in the database is not a JSON "
                        "object",
                        instance, what);
    }
    return 0;
}

static int instance_json(json_t **out, planctl *p, int64_t iid,
                         const char *name)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_bundle_instance);
    json_t *params = NULL, *applied = NULL;
    int rc, step;

    *out = NULL;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, iid);
    step = pctl_step(st);
    if (step != PCTL_ROW) {
        rc = step == PCTL_DONE ? pctl_err(p, PLANCTL_ENOTFOUND,
                                          "instance \"%s\" not found", name)
                               : pctl_q_fail(st, step);
        pctl_reset(st);
        return rc;
    }
    /* Columns: 0 id, 1 name, 2 params, 3 last_applied, 4 deleting,
     * 5 created_at, 6 updated_at, 7 definition name, 8 version. */
    rc = parse_column(&params, p, st, 2, name, "params");
    if (rc == 0)
        rc = parse_column(&applied, p, st, 3, name, "last_applied");
    if (rc == 0)
        *out = json_pack("{s:I, s:s, s:O, s:O, s:b, s:I, s:I, s:{s:s, s:s}}",
                         "id", (json_int_t)iid, "name", pctl_col_text(st, 1),
                         "params", params, "last_applied", applied, "deleting",
                         pctl_col_int(st, 4) != 0, "created_at",
                         (json_int_t)pctl_col_i64(st, 5), "updated_at",
                         (json_int_t)pctl_col_i64(st, 6), "definition", "name",
                         pctl_col_text(st, 7), "version", pctl_col_text(st, 8));
    if (rc == 0 && !*out)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* "O" took references of its own. */
    json_decref(params);
    json_decref(applied);
    pctl_reset(st);
    return rc;
}

/* The sections after "instance", each filled by one named query: of the
 * whole instance, or of one run of it. */
static const struct section {
    const char *key;
    pctl_query all, one_run;
    const char *what, *row;
} sections[] = {
    {"definitions", PCTL_Q_bundle_definitions, PCTL_Q_archive_definitions,
     "reading definitions", "definition"},
    {"runs", PCTL_Q_bundle_runs, PCTL_Q_archive_runs, "reading runs", "run"},
    {"phases", PCTL_Q_bundle_phases, PCTL_Q_archive_phases, "reading phases",
     "phase"},
    {"steps", PCTL_Q_bundle_steps, PCTL_Q_archive_steps, "reading steps",
     "step"},
    {"attempts", PCTL_Q_bundle_attempts, PCTL_Q_archive_attempts,
     "reading attempts", "attempt"},
    {"events", PCTL_Q_bundle_events, PCTL_Q_archive_events, "reading events",
     "event"},
};

/* The names of the secret parameters of the definitions the bundle
 * carries (query q, as the "definitions" section reads them) into
 * w->withhold. */
static int secret_names(sink *w, pctl_query q, int64_t iid, int64_t run_id)
{
    planctl *p = w->p;
    pctl_stmt *st = pctl_q(p, q);
    int64_t *ids = NULL;
    size_t n = 0, cap = 0, i;
    int rc = 0, step;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, iid);
    pctl_bind_i64(st, 2, run_id);
    while ((step = pctl_step(st)) == PCTL_ROW) {
        if (pctl_grow((void **)&ids, n, &cap, sizeof *ids)) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        ids[n++] = pctl_col_i64(st, 0);
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    if (rc == 0 && !(w->withhold = json_array()))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* Read by SQLite from the bodies as stored: decoding a definition of
     * 100,000 steps would take more memory than the whole export. */
    for (i = 0; rc == 0 && i < n; i++) {
        if (!(st = pctl_q(p, PCTL_Q_def_secret_params))) {
            rc = pctl_q_err(p);
            break;
        }
        pctl_bind_i64(st, 1, ids[i]);
        while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW)
            if (pctl_col_text(st, 0) &&
                pctl_secrets_add_name(w->withhold, pctl_col_text(st, 0)) < 0)
                rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        if (rc == 0 && step != PCTL_DONE)
            rc = pctl_q_fail(st, step);
        pctl_reset(st);
    }
    pctl_free(ids);
    return rc;
}

/* Unless the export includes secrets: leaves the values of secret
 * parameters out of the instance's params and last_applied, and lists
 * in its "withheld" the names whose value the bundle leaves out anywhere
 * (there, or in a run's snapshot), which import asks for again. */
static int withhold_instance(sink *w, json_t *inst, int64_t iid, int64_t run_id)
{
    planctl *p = w->p;
    json_t *found = json_array();
    pctl_stmt *st;
    int rc = 0, step;

    if (!found || json_object_set_new(inst, "withheld", found) < 0)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (w->secrets)
        return 0;
    if ((rc = secret_names(
             w, run_id ? PCTL_Q_archive_definitions : PCTL_Q_bundle_definitions,
             iid, run_id)) < 0)
        return rc;
    if (json_array_size(w->withhold) == 0)
        return 0;
    if (pctl_secrets_withhold(json_object_get(inst, "params"), w->withhold,
                              found) < 0 ||
        pctl_secrets_withhold(json_object_get(inst, "last_applied"),
                              w->withhold, found) < 0)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* The runs are read twice: here only for the names their snapshots
     * hold, as the instance comes first in the bundle. */
    if (!(st = pctl_q(p, run_id ? PCTL_Q_archive_runs : PCTL_Q_bundle_runs)))
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, iid);
    pctl_bind_i64(st, 2, run_id);
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        const char *text = pctl_col_text(st, 9); /* runs.params */
        json_t *o = text ? json_pack("{s:s}", "params", text) : NULL;

        if (text && (!o || withhold_row(o, w->withhold, found) < 0))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        json_decref(o);
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    return rc;
}

/* Writes the bundle of instance iid (named name), or of its run run_id
 * only: the header, the instance, then each section, row by row. */
static int build(sink *w, int64_t iid, const char *name, int64_t run_id)
{
    planctl *p = w->p;
    char when[PCTL_TIME_BUF], key[32];
    json_t *head, *inst = NULL;
    char *text = NULL;
    size_t i;
    int rc;

    pctl_time_rfc3339(when, pctl_now(p));
    head = json_pack("{s:s, s:i, s:s}", "format", PLANCTL_BUNDLE_FORMAT,
                     "version", PLANCTL_BUNDLE_VERSION, "exported_at", when);
    /* The header object without its closing brace; the rest follows. */
    if (!head || !(text = json_dumps(head, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    else
        rc = put(w, text, strlen(text) - 1);
    json_decref(head);
    pctl_free(text);
    if (rc == 0)
        rc = instance_json(&inst, p, iid, name);
    if (rc == 0)
        rc = withhold_instance(w, inst, iid, run_id);
    if (rc == 0)
        rc = put(w, ",\"instance\":", 12);
    if (rc == 0)
        rc = put_json(w, inst, "instance", iid);
    json_decref(inst);
    for (i = 0; rc == 0 && i < sizeof sections / sizeof sections[0]; i++) {
        snprintf(key, sizeof key, ",\"%s\":", sections[i].key);
        rc = put(w, key, strlen(key));
        if (rc == 0)
            rc = rows_json(w, run_id ? sections[i].one_run : sections[i].all,
                           iid, run_id, sections[i].what, sections[i].row);
    }
    if (rc == 0)
        rc = put(w, "}", 1);
    rc = rc < 0 ? rc : flush(w);
    json_decref(w->withhold);
    w->withhold = NULL;
    return rc;
}

/* A bundle into memory. */
static int to_text(void *data, const char *buf, size_t len)
{
    return pctl_buf_add(data, buf, len);
}

/* build() into a new string: what failed to grow it is ENOMEM.  secrets:
 * secret outputs in clear. */
static int build_text(char **outp, planctl *p, int64_t iid, const char *name,
                      int64_t run_id, int secrets)
{
    pctl_buf t = PCTL_BUF_INIT;
    sink *w = pctl_calloc(1, sizeof *w);
    int rc;

    *outp = NULL;
    if (!w)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    w->p = p;
    w->write = to_text;
    w->data = &t;
    w->in_memory = 1;
    w->secrets = secrets;
    rc = build(w, iid, name, run_id);
    pctl_free(w);
    if (rc < 0)
        pctl_buf_free(&t);
    else
        *outp = t.s;
    return rc;
}

int pctl_bundle_run_json(char **outp, planctl *p, int64_t instance_id,
                         const char *instance, int64_t run_id)
{
    return build_text(outp, p, instance_id, instance, run_id, 0);
}

/* The instance's bundle through w, from one snapshot: a plain BEGIN is a
 * read transaction until it writes, which this never does. */
static int export(planctl *p, const char *instance, sink *w, char **text_out,
                  int secrets)
{
    pctl_instance_row row = {0};
    int rc;

    if ((rc = pctl_tx_read(p)) < 0)
        return rc;
    if ((rc = pctl_instance_find(&row, p, instance)) == 0)
        rc = text_out ? build_text(text_out, p, row.id, instance, 0, secrets)
                      : build(w, row.id, instance, 0);
    pctl_tx_read_end(p);
    pctl_instance_row_clear(&row);
    return rc;
}

/* Whether opts (NULL: the defaults) ask for secrets; EINVAL on the
 * handle for an unknown version. */
static int export_secrets(planctl *p, const planctl_export_options *opts,
                          int *secrets)
{
    *secrets = 0;
    if (!opts)
        return 0;
    if (opts->version < 1 || opts->version > PLANCTL_EXPORT_OPTIONS_VERSION)
        return pctl_err(p, PLANCTL_EINVAL, "unknown export options version %u",
                        opts->version);
    *secrets = opts->include_secrets != 0;
    return 0;
}

int planctl_export(char **outp, planctl *p, const char *instance,
                   const planctl_export_options *opts)
{
    int secrets, rc;

    if (!outp || !p || !instance)
        return pctl_err_arg(p, !p ? "p" : !outp ? "out" : "instance");
    *outp = NULL;
    if ((rc = export_secrets(p, opts, &secrets)) < 0)
        return rc;
    return export(p, instance, NULL, outp, secrets);
}

int planctl_export_json(char **outp, planctl *p, const char *instance)
{
    return planctl_export(outp, p, instance, NULL);
}

int planctl_export_stream_opts(planctl *p, const char *instance,
                               const planctl_export_options *opts,
                               planctl_write_fn write, void *data)
{
    sink *w;
    int rc, secrets;

    if (!p || !instance || !write)
        return pctl_err_arg(p, !p ? "p" : !instance ? "instance" : "write");
    if ((rc = export_secrets(p, opts, &secrets)) < 0)
        return rc;
    if (!(w = pctl_calloc(1, sizeof *w)))
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    w->p = p;
    w->write = write;
    w->data = data;
    w->secrets = secrets;
    rc = export(p, instance, w, NULL, secrets);
    pctl_free(w);
    return rc;
}

int planctl_export_stream(planctl *p, const char *instance,
                          planctl_write_fn write, void *data)
{
    return planctl_export_stream_opts(p, instance, NULL, write, data);
}
