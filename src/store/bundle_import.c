/*
 * bundle_import.c - loading a bundle written by planctl_export_json() into
 * a database, under its own or another instance name, in one transaction.
 *
 * Design note: the import replays, it does not copy.  The database guards
 * every status: a run, phase or step can only be inserted in a status
 * reachable from "(new)" and only moved along an edge of the `transitions`
 * table (schema.sql).  Those triggers stay on.  So each run, phase and
 * step is inserted, with all its other columns as the bundle has them, in
 * the status its creation event names, at the moment that event comes in
 * the bundle's seq order; each later status event is applied as a
 * compare-and-set `UPDATE ... SET status` that the triggers judge like any
 * other change; every event is appended after the change it records, with
 * a new seq in the original order.  The guards watch the status column
 * only, so writing the other columns up front gives the same rows as
 * writing them last.  Walking the history in order also keeps the
 * one-active-run index satisfied, as it was where the bundle came from.
 * At the end each row's replayed status must equal the bundle's; a bundle
 * whose events do not lead there, take an illegal edge, or refer to rows
 * it does not carry is refused, and the rollback leaves nothing behind.
 *
 * Ids are remapped: runs, phases, steps, attempts and events get new ids;
 * references follow (runs.retry_of naming a run outside the bundle becomes
 * NULL).  A run keeps its uid unless the database already has that uid
 * (a second import of the same bundle): the copy then gets a fresh one.
 * The creation event of a run carries its uid and retry_of for replay, so
 * those two fields of its data follow the row; every other text, messages
 * included, is kept verbatim.
 *
 * A text may hold several bundles (a `gc --archive` file holds one per
 * removed run): bundle_read.c merges those of one instance, and all of them
 * are imported in the one transaction.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "store/bundle.h"

/* ---- binding rows ---- */

/*
 * The columns each insert binds as ?1..?n, in order, with their types, one
 * letter per column: I an integer, T a string; lower case: or null.
 */
typedef struct cols {
    const char *types;
    const char *names[16];
} cols;

static const cols run_cols = {"TTTtTIiiit",
                              {"uid", "plan", "trigger", "reason", "params",
                               "created_at", "started_at", "finished_at",
                               "deadline_at", "message"}};
static const cols phase_cols = {
    "ITTiit",
    {"idx", "name", "strategy", "started_at", "finished_at", "message"}};
static const cols step_cols = {"ITIIIiiiit",
                               {"idx", "name", "attempt", "max_attempts",
                                "task_index", "next_attempt_at", "deadline_at",
                                "started_at", "finished_at", "message"}};
static const cols attempt_cols = {"ITIiitt",
                                  {"number", "status", "started_at",
                                   "finished_at", "exit_code", "message",
                                   "output"}};
static const cols event_cols = {"ITttitTt",
                                {"at", "entity", "from_status", "to_status",
                                 "attempt", "message", "actor", "data"}};

/* Checks the types of the columns of r->o; with st, binds them as
 * ?1..?n. */
static int bind_cols(bundle_imp *m, pctl_stmt *st, const bundle_row *r,
                     const cols *c, int tbl)
{
    int i;

    for (i = 0; c->types[i]; i++) {
        json_t *v = json_object_get(r->o, c->names[i]);
        char t = c->types[i];

        if ((!v || json_is_null(v)) && (t == 'i' || t == 't')) {
            if (st)
                pctl_bind_text(st, i + 1, NULL);
        } else if (json_is_integer(v) && (t == 'I' || t == 'i')) {
            if (st)
                pctl_bind_i64(st, i + 1, json_integer_value(v));
        } else if (json_is_string(v) && (t == 'T' || t == 't')) {
            if (st)
                pctl_bind_text(st, i + 1, json_string_value(v));
        } else {
            return pctl_bundle_bad(
                m, "%s %lld: \"%s\" must be %s%s", pctl_bundle_tables[tbl].what,
                (long long)r->id, c->names[i],
                t == 'I' || t == 'i' ? "an integer" : "a string",
                t == 'i' || t == 't' ? " or null" : "");
        }
    }
    return 0;
}

/* Steps an insert or update; *id receives column 0 of a RETURNING row and
 * uid (if not NULL) a copy of column 1.  A constraint the bundle breaks is
 * EINVAL naming who; other failures keep their codes. */
static int exec(bundle_imp *m, pctl_stmt *st, int64_t *id, char **uid,
                const char *who, int64_t who_id)
{
    int step = pctl_step(st), rc = 0;

    m->dbrc = 0;
    if (step == PCTL_ROW) {
        if (id)
            *id = pctl_col_i64(st, 0);
        if (uid && !(*uid = pctl_strdup(pctl_col_text(st, 1))))
            rc = pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
        step = pctl_step(st);
    }
    if (rc == 0 && step != PCTL_DONE) {
        m->dbrc = step = pctl_q_fail(st, step);
        if (step == PLANCTL_ECONFLICT || step == PLANCTL_ETRANSITION)
            rc = pctl_bundle_bad(m, "%s %lld: %s; the bundle is corrupt", who,
                                 (long long)who_id, pctl_db_detail(st));
        else
            rc = step;
    }
    pctl_reset(st);
    return rc;
}

/* The "outputs" of a step row (attempt 0) or an attempt row (0004; absent
 * from bundles written before it), into task_outputs under the new step
 * id: a JSON object as text, its secret values there or left out
 * ({"secret": null}), or null. */
static int put_outputs(bundle_imp *m, const bundle_row *r, int64_t step_nid,
                       int attempt)
{
    json_t *v = json_object_get(r->o, "outputs"), *o;
    const char *what = attempt ? "attempt" : "step";
    int rc;

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return pctl_bundle_bad(m,
                               "%s %lld: \"outputs\" must be a string or null",
                               what, (long long)r->id);
    o = json_loads(json_string_value(v), 0, NULL);
    rc = json_is_object(o);
    json_decref(o);
    if (!rc)
        return pctl_bundle_bad(m, "%s %lld: \"outputs\" is not a JSON object",
                               what, (long long)r->id);
    rc = pctl_outputs_record(m->p, step_nid, attempt, json_string_value(v));
    m->dbrc = rc;
    return rc;
}

/* ---- checks beyond the types ---- */

/*
 * A parameter snapshot (a run's, or the instance's values and
 * last_applied) as strictly as the CLI takes one: a JSON object whose
 * names are the definition's parameters and whose values are of their
 * parameter's type, strings (as every value was before parameters had
 * types) or null (unset).  A bundle is data from elsewhere; a snapshot that is
 * not would reach a task, or fail a later retry, far from its cause.
 */
static int check_params(bundle_imp *m, const json_t *v, const pctl_def *def,
                        const char *what, int64_t id, const char *field)
{
    const char *key;
    json_t *val;

    if (!json_is_object(v))
        return pctl_bundle_bad(m,
                               "%s %lld: \"%s\" must be a JSON object of "
                               "parameter values",
                               what, (long long)id, field);
    json_object_foreach((json_t *)v, key, val)
    {
        if (!pctl_def_param(def, key))
            return pctl_bundle_bad(m,
                                   "%s %lld: \"%s\" names parameter \"%s\", "
                                   "which definition %s@%s does not have",
                                   what, (long long)id, field, key, def->name,
                                   def->version);
        /* A string is what every value was before parameters had types:
         * stored values are taken as they are. */
        pctl_ptype t = pctl_def_param(def, key)->type;

        if (!json_is_string(val) && !json_is_null(val) &&
            !pctl_ptype_is(t, val))
            return pctl_bundle_bad(
                m, "%s %lld: \"%s\": the value of \"%s\" must be %s%s%s", what,
                (long long)id, field, key,
                t == PCTL_PTYPE_STRING ? "" : pctl_ptype_expect(t),
                t == PCTL_PTYPE_STRING ? "" : ", ", "a string or null");
    }
    return 0;
}

/* The definition of a definition row already imported, parsed once. */
static int def_of(const pctl_def **out, bundle_imp *m, bundle_row *d)
{
    int rc = 0;

    if (!d->def)
        rc = pctl_def_load(&d->def, m->p, d->nid);
    *out = d->def;
    return rc;
}

/* ---- definitions and the instance ---- */

static int import_definition(bundle_imp *m, bundle_row *r)
{
    const char *name = json_string_value(json_object_get(r->o, "name"));
    const char *ver = json_string_value(json_object_get(r->o, "version"));
    const char *body = json_string_value(json_object_get(r->o, "body"));
    json_t *created = json_object_get(r->o, "created_at");
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    pctl_def *def = NULL;
    pctl_stmt *st;
    int rc, step;

    if (!name || !ver || !body || !json_is_integer(created))
        return pctl_bundle_bad(
            m,
            "definition %lld: needs string \"name\", \"version\" and "
            "\"body\" and integer \"created_at\"",
            (long long)r->id);
    /* Only a body that decodes as the version it claims to be goes in. */
    rc = pctl_def_decode(&def, body, strlen(body), "<bundle>", &errs);
    if (rc == 0 && (strcmp(def->name, name) || strcmp(def->version, ver)))
        rc = pctl_bundle_bad(m, "definition %s@%s: its body is %s@%s", name,
                             ver, def->name, def->version);
    else if (rc == PLANCTL_EDEFINITION)
        rc = pctl_bundle_bad(
            m, "definition %s@%s: its body is not a valid definition: %s", name,
            ver, errs.n ? errs.items[0].message : "invalid definition");
    else if (rc < 0)
        rc = pctl_err(m->p, rc, "out of memory");
    pctl_ferr_list_clear(&errs);
    if (rc < 0) {
        pctl_def_free(def);
        return rc;
    }
    /* Decoded once: def_of() answers from it. */
    r->def = def;

    if (!(st = pctl_q(m->p, PCTL_Q_bundle_def_find)))
        return pctl_q_err(m->p);
    pctl_bind_text(st, 1, name);
    pctl_bind_text(st, 2, ver);
    step = pctl_step(st);
    if (step == PCTL_ROW) {
        r->nid = pctl_col_i64(st, 0);
        if (strcmp(pctl_col_text(st, 1), body) != 0)
            rc = pctl_err(m->p, PLANCTL_ECONFLICT,
                          "definition %s@%s is registered here with a "
                          "different body; a version means one thing, so the "
                          "bundle cannot be imported into this database",
                          name, ver);
    } else if (step != PCTL_DONE) {
        rc = pctl_q_fail(st, step);
    }
    pctl_reset(st);
    if (rc < 0 || r->nid)
        return rc;
    if (!(st = pctl_q(m->p, PCTL_Q_bundle_def_insert)))
        return pctl_q_err(m->p);
    pctl_bind_text(st, 1, name);
    pctl_bind_text(st, 2, ver);
    pctl_bind_text(st, 3, body);
    pctl_bind_i64(st, 4, json_integer_value(created));
    return exec(m, st, &r->nid, NULL, "definition", r->id);
}

static int import_instance(bundle_imp *m, json_t *in, const char *name)
{
    json_t *def = json_object_get(in, "definition");
    json_t *params = json_object_get(in, "params");
    json_t *applied = json_object_get(in, "last_applied");
    json_t *id = json_object_get(in, "id");
    json_t *t0 = json_object_get(in, "created_at");
    json_t *t1 = json_object_get(in, "updated_at");
    json_t *deleting = json_object_get(in, "deleting");
    bundle_row *d = pctl_bundle_find_def(
        m, json_string_value(json_object_get(def, "name")),
        json_string_value(json_object_get(def, "version")));
    char *ptext = NULL, *atext = NULL;
    pctl_instance_row existing;
    pctl_stmt *st;
    int rc;

    if (!json_is_integer(id) || !json_is_object(params) ||
        !(json_is_object(applied) || json_is_null(applied)) ||
        !json_is_boolean(deleting) || !json_is_integer(t0) ||
        !json_is_integer(t1))
        return pctl_bundle_bad(
            m, "instance: needs integer \"id\", \"created_at\" and "
               "\"updated_at\", object \"params\", \"last_applied\" (or "
               "null) and boolean \"deleting\"");
    if (!d)
        return pctl_bundle_bad(
            m, "instance: its \"definition\" is not one of the bundle's "
               "definitions");
    m->inst_id = json_integer_value(id);
    if (!pctl_name_valid(name))
        return pctl_err(
            m->p, PLANCTL_EINVAL,
            "instance name \"%s\" is invalid: use 1-%d letters, digits, '_', "
            "'.' or '-', starting with a letter or digit",
            name, PCTL_NAME_MAX);
    rc = pctl_instance_get(&existing, m->p, name);
    pctl_instance_row_clear(&existing);
    if (rc == 0)
        return pctl_err(m->p, PLANCTL_ECONFLICT,
                        "the bundle's instance \"%s\" already exists here",
                        name);
    if (rc != PLANCTL_ENOTFOUND)
        return rc;
    if ((rc = pctl_bundle_secrets_take(m, in)) < 0 ||
        (rc = pctl_bundle_secrets_put(m, params)) < 0 ||
        (!json_is_null(applied) &&
         (rc = pctl_bundle_secrets_put(m, applied)) < 0))
        return rc;
    {
        const pctl_def *pd;

        if ((rc = def_of(&pd, m, d)) < 0 ||
            (rc = check_params(m, params, pd, "instance", m->inst_id,
                               "params")) < 0 ||
            (!json_is_null(applied) &&
             (rc = check_params(m, applied, pd, "instance", m->inst_id,
                                "last_applied")) < 0))
            return rc;
    }
    ptext = json_dumps(params, JSON_COMPACT);
    atext = json_is_null(applied) ? NULL : json_dumps(applied, JSON_COMPACT);
    if (!ptext || (!atext && !json_is_null(applied))) {
        rc = pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    } else if (!(st = pctl_q(m->p, PCTL_Q_bundle_instance_insert))) {
        rc = pctl_q_err(m->p);
    } else {
        pctl_bind_text(st, 1, name);
        pctl_bind_i64(st, 2, d->nid);
        pctl_bind_text(st, 3, ptext);
        pctl_bind_text(st, 4, atext);
        pctl_bind_i64(st, 5, json_is_true(deleting));
        pctl_bind_i64(st, 6, json_integer_value(t0));
        pctl_bind_i64(st, 7, json_integer_value(t1));
        rc = exec(m, st, &m->inst_nid, NULL, "instance", m->inst_id);
    }
    pctl_free(ptext);
    pctl_free(atext);
    return rc;
}

/* A run's own fields beyond their types: its plan is one its definition
 * has, and its parameters are the definition's (check_params). */
static int check_run(bundle_imp *m, const bundle_row *r, bundle_row *d)
{
    const char *plan = json_string_value(json_object_get(r->o, "plan"));
    const char *text = json_string_value(json_object_get(r->o, "params"));
    const pctl_def *def;
    json_t *v;
    int rc;

    if ((rc = def_of(&def, m, d)) < 0)
        return rc;
    if (plan && !pctl_def_plan(def, plan))
        return pctl_bundle_bad(m,
                               "run %lld: plan \"%s\" is not a plan of "
                               "definition %s@%s",
                               (long long)r->id, plan, def->name, def->version);
    if (!text)
        return 0; /* bind_cols says what is wrong */
    if (!(v = json_loads(text, JSON_DECODE_ANY, NULL)))
        return pctl_bundle_bad(m, "run %lld: \"params\" is not JSON: %.60s",
                               (long long)r->id, text);
    rc = check_params(m, v, def, "run", r->id, "params");
    json_decref(v);
    return rc;
}

/* ---- rows, created as their creation events come ---- */

/* The run's definition and instance must be the bundle's. */
static int insert_run(bundle_imp *m, bundle_row *r, const char *status,
                      json_t *data)
{
    pctl_stmt *st = pctl_q(m->p, PCTL_Q_bundle_run_insert);
    json_t *ro = json_object_get(data, "retry_of");
    bundle_row *def;
    int64_t retried = 0;
    int found = 0;
    char *uid = NULL;
    int rc;

    if (!st)
        return pctl_q_err(m->p);
    {
        json_t *v = json_object_get(r->o, "definition_id");

        if (!json_is_integer(v))
            return pctl_bundle_bad(
                m, "run %lld: \"definition_id\" must be an integer",
                (long long)r->id);
        if (!(def = pctl_bundle_def(m, json_integer_value(v))))
            return pctl_bundle_bad(m,
                                   "run %lld refers to definition %lld, which "
                                   "is not in the bundle",
                                   (long long)r->id,
                                   (long long)json_integer_value(v));
    }
    if (json_integer_value(json_object_get(r->o, "instance_id")) != m->inst_id)
        return pctl_bundle_bad(
            m, "run %lld belongs to another instance than the bundle's",
            (long long)r->id);
    /* A secret value the bundle left out goes back before the row does. */
    if ((rc = pctl_bundle_secrets_put_text(m, r->o, "params", 0)) < 0 ||
        (rc = bind_cols(m, st, r, &run_cols, T_RUN)) < 0 ||
        (rc = check_run(m, r, def)) < 0)
        return rc;
    pctl_bind_i64(st, 11, m->inst_nid);
    pctl_bind_i64(st, 12, def->nid);
    pctl_bind_text(st, 13, status);
    if ((rc = exec(m, st, &r->nid, &uid, "run", r->id)) < 0 ||
        (rc = pctl_stage_save(m, T_RUN, r)) < 0)
        return rc;
    /* The creation event tells replay the uid and the run retried. */
    if (strcmp(uid, json_string_value(json_object_get(r->o, "uid"))) != 0) {
        m->data_changed = 1;
        if (json_object_set_new(data, "uid", json_string(uid)) < 0)
            rc = pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && json_is_integer(ro))
        rc = pctl_stage_nid(&retried, &found, m, T_RUN, json_integer_value(ro));
    if (rc == 0 && json_is_integer(ro) &&
        (!found || retried != json_integer_value(ro))) {
        m->data_changed = 1;
        if (json_object_set_new(data, "retry_of",
                                retried ? json_integer(retried) : json_null()) <
            0)
            rc = pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    }
    pctl_free(uid);
    return rc;
}

/* A phase of run, or a step of run's phase.  Children are created in
 * order, as admission does: status and replay list them by position. */
static int insert_child(bundle_imp *m, int tbl, bundle_row *r, bundle_row *run,
                        bundle_row *phase, const char *status)
{
    bundle_row *parent = tbl == T_STEP ? phase : run;
    pctl_stmt *st = pctl_q(m->p, tbl == T_STEP ? PCTL_Q_bundle_step_insert
                                               : PCTL_Q_bundle_phase_insert);
    int rc, k = tbl == T_STEP ? 11 : 7;

    if (!st)
        return pctl_q_err(m->p);
    if ((rc = bind_cols(m, st, r, tbl == T_STEP ? &step_cols : &phase_cols,
                        tbl)) < 0)
        return rc;
    if (json_integer_value(json_object_get(r->o, "idx")) != parent->kids++)
        return pctl_bundle_bad(
            m, "%s %lld: idx %lld, but %lld is next in its %s",
            pctl_bundle_tables[tbl].what, (long long)r->id,
            (long long)json_integer_value(json_object_get(r->o, "idx")),
            (long long)parent->kids - 1, tbl == T_STEP ? "phase" : "run");
    if ((rc = pctl_stage_save(m, tbl == T_STEP ? T_PHASE : T_RUN, parent)) < 0)
        return rc;
    pctl_bind_i64(st, k++, run->nid);
    if (tbl == T_STEP)
        pctl_bind_i64(st, k++, phase->nid);
    pctl_bind_text(st, k, status);
    if ((rc = exec(m, st, &r->nid, NULL, pctl_bundle_tables[tbl].what, r->id)) <
            0 ||
        (tbl == T_STEP && (rc = put_outputs(m, r, r->nid, 0)) < 0))
        return rc;
    return pctl_stage_save(m, tbl, r);
}

/* The row a status event is about, checked against the event's other
 * references: a phase of the event's run, a step of its phase. */
static int subject(bundle_row **out, bundle_imp *m, int tbl, bundle_row *run,
                   bundle_row *phase, bundle_row *step, int64_t seq)
{
    json_t *o;

    *out = tbl == T_RUN ? run : tbl == T_PHASE ? phase : step;
    if (!*out)
        return pctl_bundle_bad(m, "event %lld: a %s event without its %s id",
                               (long long)seq, pctl_bundle_tables[tbl].what,
                               pctl_bundle_tables[tbl].what);
    o = (*out)->o;
    if ((tbl != T_RUN && (!run || json_integer_value(json_object_get(
                                      o, "run_id")) != run->id)) ||
        (tbl == T_STEP && (!phase || json_integer_value(json_object_get(
                                         o, "phase_id")) != phase->id)))
        return pctl_bundle_bad(
            m, "event %lld: %s %lld is not of the event's %s", (long long)seq,
            pctl_bundle_tables[tbl].what, (long long)(*out)->id,
            tbl == T_STEP ? "run and phase" : "run");
    return 0;
}

/* The row's replayed status is now to. */
static int set_cur(bundle_imp *m, int tbl, bundle_row *r, const char *to)
{
    char *cur = pctl_strdup(to);

    if (!cur)
        return pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    pctl_free(r->cur);
    r->cur = cur;
    return pctl_stage_save(m, tbl, r);
}

/* Creates the row of a creation event, or moves it along the event's edge
 * through the transition guards. */
static int apply_status(bundle_imp *m, const bundle_row *ev, int tbl,
                        bundle_row *run, bundle_row *phase, bundle_row *step,
                        json_t *data)
{
    static const pctl_query moves[T__COUNT] = {0, PCTL_Q_bundle_run_status,
                                               PCTL_Q_bundle_phase_status,
                                               PCTL_Q_bundle_step_status};
    const char *from = json_string_value(json_object_get(ev->o, "from_status"));
    const char *to = json_string_value(json_object_get(ev->o, "to_status"));
    const char *what = pctl_bundle_tables[tbl].what;
    pctl_stmt *st;
    bundle_row *r;
    int rc;

    if ((rc = subject(&r, m, tbl, run, phase, step, ev->id)) < 0)
        return rc;
    if (!to)
        return pctl_bundle_bad(m, "event %lld: a %s event without a to_status",
                               (long long)ev->id, what);
    if (!from) {
        if (r->cur)
            return pctl_bundle_bad(m,
                                   "event %lld creates %s %lld a second time",
                                   (long long)ev->id, what, (long long)r->id);
        if ((tbl != T_RUN && !run->nid) || (tbl == T_STEP && !phase->nid))
            return pctl_bundle_bad(m,
                                   "event %lld creates %s %lld before its %s",
                                   (long long)ev->id, what, (long long)r->id,
                                   run->nid ? "phase" : "run");
        rc = tbl == T_RUN ? insert_run(m, r, to, data)
                          : insert_child(m, tbl, r, run, phase, to);
        if (rc == PLANCTL_EINVAL && m->dbrc == PLANCTL_ETRANSITION)
            rc = pctl_bundle_bad(
                m,
                "event %lld: a %s cannot be created %s; the bundle is corrupt",
                (long long)ev->id, what, to);
        return rc < 0 ? rc : set_cur(m, tbl, r, to);
    }
    if (!r->cur)
        return pctl_bundle_bad(
            m, "event %lld changes %s %lld before the event that creates it",
            (long long)ev->id, what, (long long)r->id);
    if (strcmp(r->cur, from) != 0)
        return pctl_bundle_bad(
            m,
            "event %lld moves %s %lld from %s, but it is %s at that "
            "point; the events are out of order or incomplete",
            (long long)ev->id, what, (long long)r->id, from, r->cur);
    if (!(st = pctl_q(m->p, moves[tbl])))
        return pctl_q_err(m->p);
    pctl_bind_i64(st, 1, r->nid);
    pctl_bind_text(st, 2, from);
    pctl_bind_text(st, 3, to);
    rc = exec(m, st, NULL, NULL, "event", ev->id);
    if (rc == PLANCTL_EINVAL && m->dbrc == PLANCTL_ETRANSITION)
        rc = pctl_bundle_bad(
            m,
            "event %lld: %s %lld cannot go from %s to %s; the bundle is "
            "corrupt",
            (long long)ev->id, what, (long long)r->id, from, to);
    return rc < 0 ? rc : set_cur(m, tbl, r, to);
}

/* What replay needs from a creation event's data must agree with the row:
 * a run's uid, plan and trigger, a phase's or step's name. */
static int check_creation(bundle_imp *m, const bundle_row *ev, int tbl,
                          const bundle_row *r, json_t *data)
{
    static const char *const keys[] = {"uid", "plan", "trigger", "name"};
    size_t i = tbl == T_RUN ? 0 : 3, end = tbl == T_RUN ? 3 : 4;

    for (; i < end; i++) {
        const char *a = json_string_value(json_object_get(data, keys[i]));
        const char *b = json_string_value(json_object_get(r->o, keys[i]));

        if (!a || !b || strcmp(a, b) != 0)
            return pctl_bundle_bad(
                m, "event %lld: its data does not give the %s of %s %lld",
                (long long)ev->id, keys[i], pctl_bundle_tables[tbl].what,
                (long long)r->id);
    }
    return 0;
}

static int import_event(bundle_imp *m, bundle_row *ev, void *unused)
{
    const char *entity = json_string_value(json_object_get(ev->o, "entity"));
    const char *text = json_string_value(json_object_get(ev->o, "data"));
    int creation = !json_string_value(json_object_get(ev->o, "from_status"));
    int tbl = !entity                    ? -1
              : !strcmp(entity, "run")   ? T_RUN
              : !strcmp(entity, "phase") ? T_PHASE
              : !strcmp(entity, "step")  ? T_STEP
                                         : -1;
    json_t *data = NULL;
    bundle_row *run = NULL, *phase = NULL, *step = NULL;
    char *newtext = NULL;
    pctl_stmt *st;
    int rc;

    (void)unused;
    if ((rc = bind_cols(m, NULL, ev, &event_cols, T_EVENT)) < 0)
        return rc;
    /* The bundle holds the instance's events: replay reads them by it. */
    if (json_integer_value(json_object_get(ev->o, "instance_id")) != m->inst_id)
        return pctl_bundle_bad(m, "event %lld is not of the bundle's instance",
                               (long long)ev->id);
    if ((rc = pctl_bundle_resolve(&run, m, ev->o, "run_id", T_RUN, 1, 0,
                                  "event", ev->id)) < 0 ||
        (rc = pctl_bundle_resolve(&phase, m, ev->o, "phase_id", T_PHASE, 1, 0,
                                  "event", ev->id)) < 0 ||
        (rc = pctl_bundle_resolve(&step, m, ev->o, "step_id", T_STEP, 1, 0,
                                  "event", ev->id)) < 0)
        return rc;
    m->data_changed = 0;
    if (text)
        data = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    /* As in the run's row (insert_run), so replay agrees with it. */
    if (tbl == T_RUN && creation && json_is_object(data)) {
        rc = pctl_bundle_secrets_put(m, json_object_get(data, "params"));
        if (rc < 0) {
            json_decref(data);
            return rc;
        }
        m->data_changed |= rc;
        rc = 0;
    }
    if (tbl >= 0 && creation) {
        bundle_row *r = tbl == T_RUN ? run : tbl == T_PHASE ? phase : step;

        if (!json_is_object(data))
            rc = pctl_bundle_bad(m,
                                 "event %lld: a creation event needs its data",
                                 (long long)ev->id);
        else if (r)
            rc = check_creation(m, ev, tbl, r, data);
    } else if (entity && !strcmp(entity, "instance")) {
        json_t *def = json_object_get(data, "definition");

        if (def && !pctl_bundle_find_def(
                       m, json_string_value(json_object_get(def, "name")),
                       json_string_value(json_object_get(def, "version"))))
            rc = pctl_bundle_bad(
                m, "event %lld names a definition the bundle does not carry",
                (long long)ev->id);
    }
    if (rc == 0 && tbl >= 0)
        rc = apply_status(m, ev, tbl, run, phase, step, data);
    /* The rows the event refers to exist by now, or the bundle is bad. */
    if (rc == 0 &&
        ((run && !run->nid) || (phase && !phase->nid) || (step && !step->nid)))
        rc = pctl_bundle_bad(
            m,
            "event %lld refers to a run, phase or step before the event "
            "that creates it",
            (long long)ev->id);
    if (rc == 0 && m->data_changed) {
        newtext = json_dumps(data, JSON_COMPACT);
        if (!newtext)
            rc = pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    }
    st = rc == 0 ? pctl_q(m->p, PCTL_Q_bundle_event_insert) : NULL;
    if (rc == 0 && !st)
        rc = pctl_q_err(m->p);
    if (rc == 0 && (rc = bind_cols(m, st, ev, &event_cols, T_EVENT)) == 0) {
        /* A run's creation data is written back only if it changed, so an
         * import into a fresh database keeps it byte for byte. */
        if (newtext)
            pctl_bind_text(st, 8, newtext);
        pctl_bind_i64(st, 9, m->inst_nid);
        pctl_bind_id(st, 10, run ? run->nid : 0);
        pctl_bind_id(st, 11, phase ? phase->nid : 0);
        pctl_bind_id(st, 12, step ? step->nid : 0);
        rc = exec(m, st, NULL, NULL, "event", ev->id);
    }
    pctl_free(newtext);
    json_decref(data);
    return rc;
}

/* ---- after the events ---- */

/* Every row was created and ended where the bundle says. */
static int check_final(bundle_imp *m)
{
    char *status = NULL, *cur = NULL;
    int64_t id = 0;
    int tbl = 0, rc;

    rc = pctl_stage_unfinished(m, &tbl, &id, &status, &cur);
    if (rc == 1 && !cur)
        rc = pctl_bundle_bad(m, "%s %lld has no creation event",
                             pctl_bundle_tables[tbl].what, (long long)id);
    else if (rc == 1)
        rc = pctl_bundle_bad(m, "%s %lld is %s but its events leave it %s",
                             pctl_bundle_tables[tbl].what, (long long)id,
                             status, cur);
    pctl_free(status);
    pctl_free(cur);
    return rc;
}

/* retry_of last: a run in the bundle is remapped, another is gone. */
static int finish_run(bundle_imp *m, bundle_row *r, void *unused)
{
    json_t *v = json_object_get(r->o, "retry_of");
    pctl_stmt *st;
    int64_t retried;
    int found, rc;

    (void)unused;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v))
        return pctl_bundle_bad(
            m, "run %lld: \"retry_of\" must be an integer or null",
            (long long)r->id);
    if ((rc = pctl_stage_nid(&retried, &found, m, T_RUN,
                             json_integer_value(v))) < 0 ||
        !found)
        return rc;
    if (!(st = pctl_q(m->p, PCTL_Q_bundle_run_retry_of)))
        return pctl_q_err(m->p);
    pctl_bind_i64(st, 1, r->nid);
    pctl_bind_i64(st, 2, retried);
    return exec(m, st, NULL, NULL, "run", r->id);
}

/* How many bytes of output an attempt wrote in all (0005; absent from
 * bundles written before it, and null for an attempt that wrote none or
 * was imported so): a count of 0 or more, or nothing. */
static int put_output_bytes(bundle_imp *m, const bundle_row *a,
                            int64_t step_nid, int number)
{
    json_t *v = json_object_get(a->o, "output_bytes");
    int rc;

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return pctl_bundle_bad(m,
                               "attempt %lld: \"output_bytes\" must be a "
                               "count (0 or more) or null",
                               (long long)a->id);
    rc = pctl_output_bytes_record(m->p, step_nid, number,
                                  (int64_t)json_integer_value(v));
    m->dbrc = rc;
    return rc;
}

static int import_attempt(bundle_imp *m, bundle_row *a, void *unused)
{
    planctl_status status;
    bundle_row *step;
    pctl_stmt *st;
    int rc, number;

    (void)unused;
    if ((rc = pctl_bundle_resolve(&step, m, a->o, "step_id", T_STEP, 0, 1,
                                  "attempt", a->id)) < 0)
        return rc;
    if (!(st = pctl_q(m->p, PCTL_Q_bundle_attempt_insert)))
        return pctl_q_err(m->p);
    if ((rc = bind_cols(m, st, a, &attempt_cols, T_ATTEMPT)) < 0)
        return rc;
    /* No guard watches attempts; status and verify parse theirs. */
    if (planctl_status_parse(
            &status, json_string_value(json_object_get(a->o, "status"))) < 0)
        return pctl_bundle_bad(m, "attempt %lld: unknown status",
                               (long long)a->id);
    pctl_bind_i64(st, 8, step->nid);
    if ((rc = exec(m, st, &a->nid, NULL, "attempt", a->id)) < 0)
        return rc;
    number = (int)json_integer_value(json_object_get(a->o, "number"));
    if ((rc = put_output_bytes(m, a, step->nid, number)) < 0)
        return rc;
    return put_outputs(m, a, step->nid, number);
}

static int finish_rows(bundle_imp *m)
{
    int rc = pctl_stage_each(m, T_RUN, finish_run, NULL);

    return rc < 0 ? rc : pctl_stage_each(m, T_ATTEMPT, import_attempt, NULL);
}

/* ---- the whole ---- */

/* Keeps a definition row in m->defs (they are few, and looked up by name
 * and version). */
static int keep_def(bundle_imp *m, bundle_row *r, void *unused)
{
    bundle_row *v = pctl_realloc(m->defs, (m->ndefs + 1) * sizeof *v);

    (void)unused;
    if (!v)
        return pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    m->defs = v;
    m->defs[m->ndefs++] = *r;
    memset(r, 0, sizeof *r); /* now m->defs' */
    return 0;
}

static int import_all(bundle_imp *m, json_t *instance, const char *name)
{
    size_t i;
    int rc;

    rc = pctl_stage_each(m, T_DEF, keep_def, NULL);
    for (i = 0; rc == 0 && i < m->ndefs; i++)
        rc = import_definition(m, &m->defs[i]);
    if (rc == 0)
        rc = import_instance(m, instance, name);
    if (rc == 0)
        rc = pctl_stage_each(m, T_EVENT, import_event, NULL);
    if (rc == 0)
        rc = check_final(m);
    if (rc == 0)
        rc = finish_rows(m);
    if (rc == 0) {
        pctl_stmt *st = pctl_q(m->p, PCTL_Q_bundle_count_events);

        if (!st)
            return pctl_q_err(m->p);
        pctl_bind_i64(st, 1, m->inst_nid);
        rc = pctl_q_exec(st);
    }
    /* The rows must be what the events say they are (a time, a message
     * changed in one but not the other): what verify would find wrong
     * after the import is a reason to import nothing. */
    if (rc == 0 &&
        (rc = pctl_verify_instance(m->p, m->inst_nid)) == PLANCTL_EMISMATCH)
        rc = pctl_bundle_bad(m, "has rows that disagree with its events: %s",
                             planctl_errmsg(m->p));
    return rc;
}

/*
 * An active run imported as it was would be advanced by the next engine
 * on this database: a bundle taken for debugging would run its shell
 * commands here.  So it is paused, through the gate (events record it): a
 * PENDING run by way of IN_PROGRESS, the only legal path to PAUSED, with
 * no step started.  *paused receives its id, or 0 when nothing was
 * active.
 */
static int pause_active(bundle_imp *m, int64_t *paused)
{
    pctl_stmt *st = pctl_q(m->p, PCTL_Q_run_active);
    planctl_status status = PLANCTL_STATUS_PAUSED;
    pctl_change c = PCTL_CHANGE_INIT;
    char msg[256];
    int rc;

    *paused = 0;
    if (!st)
        return pctl_q_err(m->p);
    pctl_bind_i64(st, 1, m->inst_nid);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        *paused = pctl_col_i64(st, 0);
        if (planctl_status_parse(&status, pctl_col_text(st, 2)) < 0)
            rc = pctl_err(m->p, PLANCTL_EIO, "run %lld has an unknown status",
                          (long long)*paused);
    }
    pctl_reset(st);
    if (rc < 0)
        return rc;
    if (rc == PCTL_DONE || status == PLANCTL_STATUS_PAUSED) {
        *paused = 0;
        return 0;
    }
    snprintf(msg, sizeof msg,
             "paused on import, so that nothing of the bundle runs here "
             "until it is resumed");
    c.entity = PLANCTL_ENTITY_RUN;
    c.id = *paused;
    c.actor = "planctl";
    if (status == PLANCTL_STATUS_PENDING) {
        c.from = PLANCTL_STATUS_PENDING;
        c.to = PLANCTL_STATUS_IN_PROGRESS;
        if ((rc = pctl_gate(m->p, &c)) < 0)
            return rc;
    }
    c.from = PLANCTL_STATUS_IN_PROGRESS;
    c.to = PLANCTL_STATUS_PAUSED;
    c.message = msg;
    return pctl_gate(m->p, &c);
}

/* Imports the staged instance m->grp (instance: its row) as name. */
static int import_group(bundle_imp *m, json_t *instance, const char *name,
                        json_t *report, int keep_active)
{
    int64_t paused = 0, runs = 0, events = 0;
    size_t i;
    int rc = 0, tbl;

    if (!name)
        rc = pctl_err(m->p, PLANCTL_EINVAL,
                      "bundle instance: \"name\" must be a string");
    if (rc == 0)
        rc = import_all(m, instance, name);
    if (rc == 0 && !keep_active)
        rc = pause_active(m, &paused);
    if (rc == 0 && (rc = pctl_stage_count(&runs, m, T_RUN)) == 0)
        rc = pctl_stage_count(&events, m, T_EVENT);
    if (rc == 0 &&
        json_array_append_new(
            report,
            json_pack("{s:s, s:I, s:I, s:o}", "instance", name, "runs",
                      (json_int_t)runs, "events", (json_int_t)events, "paused",
                      paused ? json_integer(paused) : json_null())) < 0)
        rc = pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    for (i = 0; i < m->ndefs; i++) {
        pctl_def_free(m->defs[i].def);
        pctl_bundle_row_clear(&m->defs[i]);
    }
    pctl_free(m->defs);
    for (tbl = 0; tbl < T__COUNT; tbl++)
        pctl_bundle_row_clear(&m->cache[tbl]);
    return rc;
}

/* {"schema":1,"instance":NAME (null for several),"runs":N,"events":N,
 *  "instances":[{"instance","runs","events"}]} */
static char *answer(json_t *report)
{
    json_int_t runs = 0, events = 0;
    json_t *o, *r;
    char *text = NULL;
    size_t i;

    json_array_foreach(report, i, r)
    {
        runs += json_integer_value(json_object_get(r, "runs"));
        events += json_integer_value(json_object_get(r, "events"));
    }
    o = json_pack("{s:i}", "schema", 1);
    /* Never omitted (planctl-json(7)): null when the text held several. */
    if (o && json_object_set(
                 o, "instance",
                 json_array_size(report) == 1
                     ? json_object_get(json_array_get(report, 0), "instance")
                     : json_null()) < 0) {
        json_decref(o);
        o = NULL;
    }
    if (o && (json_object_set_new(o, "runs", json_integer(runs)) < 0 ||
              json_object_set_new(o, "events", json_integer(events)) < 0 ||
              json_object_set(o, "instances", report) < 0)) {
        json_decref(o);
        o = NULL;
    }
    if (o)
        text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return text;
}

int planctl_import_json(char **out, planctl *p, const char *bundle, size_t len,
                        const char *as_name)
{
    planctl_import_options o = PLANCTL_IMPORT_OPTIONS_INIT;

    o.as_name = as_name;
    return planctl_import(out, p, bundle, len, &o);
}

/* planctl_import()'s text as a stream. */
typedef struct memory {
    const char *at;
    size_t left;
} memory;

static int read_memory(void *data, char *buf, size_t cap, size_t *len)
{
    memory *mem = data;

    *len = mem->left < cap ? mem->left : cap;
    memcpy(buf, mem->at, *len);
    mem->at += *len;
    mem->left -= *len;
    return 0;
}

int planctl_import(char **out, planctl *p, const char *bundle, size_t len,
                   const planctl_import_options *opts)
{
    memory mem;

    mem.at = bundle;
    mem.left = len;
    if (out)
        *out = NULL;
    if (!bundle)
        return pctl_err_arg(p, "bundle");
    return planctl_import_stream(out, p, opts, read_memory, &mem);
}

/* Two instances of one name cannot both be imported under it. */
static int same_name(bundle_stage *stage, planctl *p, int64_t a, int64_t b)
{
    char *name = NULL, *text[2] = {NULL, NULL}, *ignored = NULL;
    json_int_t id[2] = {0, 0};
    int rc, i;

    rc = pctl_stage_group(stage, p, a, &name, &text[0]);
    if (rc == 0)
        rc = pctl_stage_group(stage, p, b, &ignored, &text[1]);
    for (i = 0; rc == 0 && i < 2; i++) {
        json_t *in = json_loads(text[i], 0, NULL);

        id[i] = json_integer_value(json_object_get(in, "id"));
        json_decref(in);
    }
    if (rc == 0)
        rc = pctl_err(p, PLANCTL_EINVAL,
                      "the bundles hold two instances named \"%s\" (ids %lld "
                      "and %lld where they came from)",
                      name, (long long)id[0], (long long)id[1]);
    pctl_free(name);
    pctl_free(ignored);
    pctl_free(text[0]);
    pctl_free(text[1]);
    return rc;
}

/* Imports every staged instance, in the order first seen. */
static int import_groups(bundle_stage *stage, planctl *p, int64_t count,
                         const planctl_import_options *opts, json_t *report)
{
    json_t *used = json_array();
    int64_t grp;
    int rc = used ? 0 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");

    for (grp = 1; rc == 0 && grp <= count; grp++) {
        char *name = NULL, *text = NULL;
        json_t *instance = NULL;
        bundle_imp m;

        memset(&m, 0, sizeof m);
        m.p = p;
        m.stage = stage;
        m.grp = grp;
        m.opts = opts;
        m.used = used;
        rc = pctl_stage_group(stage, p, grp, &name, &text);
        if (rc == 0 && !(instance = json_loads(text, 0, NULL)))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        if (rc == 0)
            rc =
                import_group(&m, instance, opts->as_name ? opts->as_name : name,
                             report, opts->keep_active);
        json_decref(m.secrets);
        json_decref(instance);
        pctl_free(name);
        pctl_free(text);
    }
    if (rc == 0)
        rc = pctl_bundle_secrets_check_unused(p, opts, used);
    json_decref(used);
    return rc;
}

int planctl_import_stream(char **out, planctl *p,
                          const planctl_import_options *opts,
                          planctl_read_fn read, void *data)
{
    int64_t count = 0, a = 0, b = 0;
    bundle_stage *stage = NULL;
    json_t *report = NULL;
    int rc;

    if (out)
        *out = NULL;
    if (!p || !opts || !read)
        return pctl_err_arg(p, !p ? "p" : !opts ? "opts" : "read");
    if (opts->version < 1 || opts->version > PLANCTL_IMPORT_OPTIONS_VERSION)
        return pctl_err(p, PLANCTL_EINVAL, "unknown import options version %u",
                        opts->version);
    rc = pctl_stage_open(&stage, p);
    if (rc == 0)
        rc = pctl_bundle_read(stage, p, read, data);
    if (rc == 0)
        rc = pctl_stage_groups(stage, p, &count, &a, &b);
    if (rc == 0 && b)
        rc = same_name(stage, p, a, b);
    if (rc == 0 && opts->as_name && count > 1)
        rc = pctl_err(p, PLANCTL_EINVAL,
                      "the bundles hold %lld instances, but a new name is for "
                      "one",
                      (long long)count);
    if (rc == 0 && !(report = json_array()))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0 && (rc = pctl_tx_begin(p)) == 0) {
        rc = import_groups(stage, p, count, opts, report);
        /* The answer is made before the commit, so a failure to make it
         * leaves nothing imported either. */
        if (rc == 0 && out && !(*out = answer(report)))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        rc = pctl_tx_end(p, rc);
        if (rc < 0 && out) {
            pctl_free(*out);
            *out = NULL;
        }
    }
    json_decref(report);
    pctl_stage_close(stage);
    return rc;
}
