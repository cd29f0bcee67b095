/*
 * instances.c - creating, changing, upgrading and deleting instances, each
 * with the plan it runs (planctl-engine(7), "Plan for a parameter change"), in
 * one transaction per call.
 *
 * An instance stores only the parameter values set explicitly; each run
 * stores the full snapshot it runs with (defaults overlaid with those
 * values), so a later change of a default never rewrites history.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/select.h"
#include "core/utf8.h"
#include "store/store.h"

/* The instance's definition as event data, so replay knows which
 * definition (and so which plans) an instance had at any point. */
static char *def_data(const pctl_def *def)
{
    json_t *o = json_pack("{s:{s:s, s:s}}", "definition", "name", def->name,
                          "version", def->version);
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

    json_decref(o);
    return s;
}

/* Finds a definition by name and version (NULL: newest registered): its
 * id, and its decoded body in one read (admit: a create's, which takes
 * the write lock on PostgreSQL: def_latest_admit). */
static int find_definition(int64_t *out, pctl_def **def, planctl *p,
                           const char *name, const char *version, int admit)
{
    pctl_stmt *st = pctl_q(
        p, admit ? (version ? PCTL_Q_def_by_name_version_admit
                            : PCTL_Q_def_latest_admit)
                 : (version ? PCTL_Q_def_by_name_version : PCTL_Q_def_latest));
    char *body = NULL;
    int rc;

    *out = 0;
    *def = NULL;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_text(st, 1, name);
    if (version)
        pctl_bind_text(st, 2, version);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        *out = pctl_col_i64(st, 0);
        body = pctl_strdup(pctl_col_text(st, 1));
    }
    pctl_reset(st);
    if (rc == PCTL_ROW) {
        rc = body ? pctl_def_decode_stored(def, p, *out, body)
                  : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        pctl_free(body);
        return rc;
    }
    if (rc != PCTL_DONE)
        return pctl_q_fail(st, rc);
    if (version)
        return pctl_err_no_version(p, name, version);
    return pctl_err_no_definition(p, name);
}

static int save_instance(planctl *p, int64_t id, int64_t def_id,
                         const char *params)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_instance_update);

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, id);
    pctl_bind_i64(st, 2, def_id);
    pctl_bind_text(st, 3, params);
    pctl_bind_i64(st, 4, pctl_now(p));
    return pctl_q_exec(st);
}

/* Refuses changes to an instance that is being deleted. */
static int check_not_deleting(planctl *p, const pctl_instance_row *r,
                              const char *name)
{
    if (!r->deleting)
        return 0;
    return pctl_err(p, PLANCTL_ECONFLICT, "instance \"%s\" is being deleted",
                    name);
}

int pctl_store_create(planctl_admitted *out, planctl *p, const char *name,
                      const char *definition, const char *version,
                      const pctl_param_change *ch, pctl_preflight_gate *pf)
{
    pctl_admission a = {0};
    pctl_instance_row existing = {0};
    pctl_def *def = NULL;
    json_t *explicit_obj = NULL, *removed = NULL;
    char *explicit_text = NULL, *snap = NULL, *msg = NULL, *data = NULL;
    int64_t def_id = 0, inst_id = 0;
    pctl_stmt *st;
    int rc, deferred = 0;

    if (!out || !p || !name || !definition || !ch ||
        (ch->nvalues && !ch->values))
        return pctl_err_arg(p, !p            ? "p"
                               : !out        ? "out"
                               : !name       ? "name"
                               : !definition ? "definition"
                                             : "params");
    memset(out, 0, sizeof *out);
    if (!pctl_name_valid(name))
        return pctl_err(p, PLANCTL_EINVAL,
                        "instance name \"%s\" is invalid: use 1-%d letters, "
                        "digits, '_', '.' or '-', starting with a letter or "
                        "digit",
                        name, PCTL_NAME_MAX);
    /* Beside the engines and other creates on PostgreSQL: it inserts
     * every row it writes (store.h). */
    if ((rc = pctl_tx_begin_admit(p)) < 0)
        return rc;
    rc = find_definition(&def_id, &def, p, definition, version, 1);
    if (rc == 0 &&
        (!(explicit_obj = json_object()) || !(removed = json_object())))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0)
        rc = pctl_params_apply(&explicit_text, &snap, removed, p, explicit_obj,
                               def, ch, NULL);
    if (rc == 0) {
        a.instance_name = name;
        a.definition_id = def_id;
        a.def = def;
        a.plan = "deploy";
        a.trigger = "create";
        a.fresh = 1;
        a.params_json = snap;
        a.pf = pf;
        /* The instance's event, whichever way it is written. */
        msg = pctl_asprintf("instance created from %s@%s", def->name,
                            def->version);
        if (!msg || !(data = def_data(def)))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    /* In one statement where the backend can (PostgreSQL): the instance,
     * its run, their rows and events, and the commit's counter (so only
     * in a transaction of its own: an outer one counts its commit
     * itself). */
    if (rc == 0 && p->conn->m->counted && !p->observer && !p->fleet_id &&
        p->tx_depth == 1 && !pctl_events_deferring(p)) {
        pctl_new_instance n = {explicit_text, msg, data};

        rc = pctl_admit_new(out, &inst_id, p, &a, &n);
        if (rc != PCTL_ADMIT_ROW_BY_ROW)
            goto made;
        rc = 0;
    }
    /* The name taken is said first, whatever else is wrong: the insert
     * tells it (no row), and so does a read on the way out of an error
     * (not found is what a create wants: no "did you mean" to compute,
     * which reads every name). */
    if (rc == 0) {
        st = pctl_q(p, PCTL_Q_instance_insert);
        if (!st) {
            rc = pctl_q_err(p);
        } else {
            pctl_bind_text(st, 1, name);
            pctl_bind_i64(st, 2, def_id);
            pctl_bind_text(st, 3, explicit_text);
            pctl_bind_i64(st, 4, pctl_now(p));
            rc = pctl_step(st);
            inst_id = rc == PCTL_ROW ? pctl_col_i64(st, 0) : 0;
            pctl_reset(st);
            rc = rc == PCTL_ROW    ? 0
                 : rc == PCTL_DONE ? PLANCTL_ECONFLICT
                                   : pctl_q_fail(st, rc);
        }
    } else if (rc == PLANCTL_ENOTFOUND || rc == PLANCTL_EINVAL ||
               rc == PLANCTL_EDEFINITION) {
        /* Refused input, not a failed statement (after which a read
         * would fail too, and hide the first error). */
        int found = pctl_instance_get(&existing, p, name);

        if (found == 0)
            rc = PLANCTL_ECONFLICT;
        else if (found != PLANCTL_ENOTFOUND)
            rc = found; /* the read failed: that is the error now */
    }
made:
    pctl_instance_row_clear(&existing);
    if (rc == PLANCTL_ECONFLICT)
        rc = pctl_err(p, PLANCTL_ECONFLICT,
                      "instance \"%s\" already exists; choose another name "
                      "or delete it first",
                      name);
    /* The instance's event goes with its run's (one statement on
     * PostgreSQL). */
    if (rc == 0 && !out->run && !pctl_events_deferring(p) &&
        (rc = pctl_events_defer(p, 1)) == 0)
        deferred = 1;
    if (rc == 0 && !out->run)
        rc = pctl_event_admin(p, inst_id, "instance", msg, pctl_user(p), data);
    if (rc == 0 && !out->run) {
        a.instance_id = inst_id;
        rc = pctl_admit(out, p, &a);
    }
    if (deferred) {
        if (rc == 0)
            rc = pctl_events_flush_later(p);
        pctl_events_defer(p, 0);
    }
    rc = pctl_tx_end(p, rc);
    if (rc < 0)
        memset(out, 0, sizeof *out);
    pctl_free(msg);
    pctl_free(data);
    pctl_free(snap);
    pctl_free(explicit_text);
    json_decref(explicit_obj);
    json_decref(removed);
    pctl_def_free(def);
    return rc;
}

/* The common path of set and upgrade: new explicit values (and maybe a new
 * definition) -> snapshot -> the selected plan admitted. */
typedef struct change_req {
    const char *name;
    const char *version; /* upgrade: the new version, else NULL */
    const pctl_param_change *ch;
    pctl_preflight_gate *pf;
} change_req;

/* An upgrade to def from version from must be one def allows
 * (upgradableFrom; absent: any). */
static int check_upgradable(planctl *p, const pctl_def *def, const char *from,
                            const char *instance)
{
    char *allowed, *n;
    size_t i;
    int rc;

    if (!def->has_upgradable_from)
        return 0;
    for (i = 0; i < def->nupgradable_from; i++)
        if (strcmp(def->upgradable_from[i], from) == 0)
            return 0;
    allowed = pctl_strdup("");
    for (i = 0; allowed && i < def->nupgradable_from; i++) {
        n = pctl_asprintf("%s%s%s", allowed, i ? ", " : "",
                          def->upgradable_from[i]);
        pctl_free(allowed);
        allowed = n;
    }
    if (!allowed)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (def->nupgradable_from == 0)
        rc = pctl_err(p, PLANCTL_EINVAL,
                      "%s@%s cannot be upgraded to: its upgradableFrom lists "
                      "no version (instance \"%s\" is at %s)",
                      def->name, def->version, instance, from);
    else
        rc = pctl_err(p, PLANCTL_EINVAL,
                      "%s@%s can be upgraded to only from %s (its "
                      "upgradableFrom); instance \"%s\" is at %s",
                      def->name, def->version, allowed, instance, from);
    pctl_free(allowed);
    return rc;
}

static int change_once(planctl_admitted *out, planctl *p, const change_req *req)
{
    pctl_instance_row row = {0};
    pctl_def *old_def = NULL, *def = NULL;
    json_t *explicit_obj = NULL, *before = NULL, *after = NULL;
    json_t *removed = json_object();
    char *explicit_text = NULL, *old_snap = NULL, *snap = NULL;
    char *busy = NULL, *reason = NULL, *data = NULL, sel_msg[1024];
    const char **changed = NULL, *plan = NULL;
    int64_t def_id, active;
    size_t nchanged = 0, i;
    pctl_admission a = {0};
    int rc;

    memset(out, 0, sizeof *out);
    if (!removed)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if ((rc = pctl_tx_begin_run(p)) < 0) {
        json_decref(removed);
        return rc;
    }
    rc = pctl_instance_find_locked(&row, p, req->name);
    if (rc == 0)
        rc = check_not_deleting(p, &row, req->name);
    def_id = row.definition_id;
    if (rc == 0)
        rc = pctl_def_load(&old_def, p, row.definition_id);
    if (rc == 0 && req->version) {
        rc = find_definition(&def_id, &def, p, old_def->name, req->version, 0);
        if (rc == 0 && def_id == row.definition_id)
            rc = pctl_err(p, PLANCTL_EINVAL,
                          "instance \"%s\" already uses %s@%s", req->name,
                          old_def->name, old_def->version);
    }
    if (rc == 0 && !def) {
        def = old_def;
        old_def = NULL;
    }
    /* Refuse early, naming the active run, before reporting anything
     * else: it is what the user has to act on first.  A parameter change
     * is looked at first all the same: one that changes nothing is
     * nothing to do whether a run is active or not (below). */
    if (rc == 0 &&
        (rc = pctl_active_run_describe(&busy, &active, p, row.id, req->name)) ==
            0 &&
        busy && req->version)
        rc = pctl_err(p, PLANCTL_ECONFLICT,
                      "%s; cancel it or wait for it to finish", busy);
    if (rc == 0 && req->version)
        rc = check_upgradable(p, def, old_def->version, req->name);
    if (rc == 0 && !(explicit_obj = json_loads(row.params, 0, NULL)))
        rc = pctl_err(p, PLANCTL_EIO,
                      "instance \"%s\" has unreadable "
                      "parameters",
                      req->name);
    /* The values before, by the definition they were set under. */
    if (rc == 0) {
        rc = pctl_params_resolve(&old_snap, p, old_def ? old_def : def,
                                 row.params);
        if (rc == PLANCTL_EINVAL) /* e.g. a required value never set */
            rc = 0;
        before = old_snap ? json_loads(old_snap, 0, NULL) : json_object();
        if (!before)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0)
        rc = pctl_params_apply(&explicit_text, &snap, removed, p, explicit_obj,
                               def, req->ch, req->version ? before : NULL);
    if (rc == 0 && !(after = json_loads(snap, 0, NULL)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0)
        rc = pctl_params_check_immutable(p, def, before, after, removed);
    if (rc == 0 && !req->version) {
        if (pctl_params_changed(&changed, &nchanged, def, before, after,
                                removed) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        if (rc == 0 && nchanged == 0)
            goto done; /* nothing changes: no write, no run */
    }
    /* What else a change would say (a bad value, plans of two triggers)
     * comes after the active run. */
    if (busy && !req->version && (rc == 0 || rc == PLANCTL_EINVAL))
        rc = pctl_err(p, PLANCTL_ECONFLICT,
                      "%s; cancel it or wait for it to finish", busy);
    if (rc == 0 && !req->version) {
        if (pctl_select_for_params(&plan, def, changed, nchanged, sel_msg,
                                   sizeof sel_msg) < 0)
            rc = pctl_err(p, PLANCTL_EINVAL, "%s", sel_msg);
        if (rc == 0) {
            reason = pctl_strdup("parameters changed:");
            for (i = 0; reason && i < nchanged; i++) {
                char *r =
                    pctl_asprintf("%s%s %s", reason, i ? "," : "", changed[i]);
                pctl_free(reason);
                reason = r;
            }
        }
    } else if (rc == 0) {
        plan = pctl_select_for_upgrade(def);
        reason = pctl_asprintf("upgrade from %s to %s",
                               old_def ? old_def->version : "?", def->version);
    }
    if (rc == 0 && !reason)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0)
        rc = save_instance(p, row.id, def_id, explicit_text);
    if (rc == 0)
        rc = (data = def_data(def)) != NULL
                 ? pctl_event_admin(p, row.id, "instance", reason, pctl_user(p),
                                    data)
                 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0) {
        a.instance_id = row.id;
        a.instance_name = req->name;
        a.definition_id = def_id;
        a.def = def;
        a.plan = plan;
        a.trigger = req->version ? "upgrade" : "set";
        a.reason = reason;
        a.params_json = snap;
        a.pf = req->pf;
        rc = pctl_admit(out, p, &a);
    }
done:
    rc = pctl_tx_end(p, rc);
    if (rc < 0)
        memset(out, 0, sizeof *out);
    pctl_free(changed);
    pctl_free(reason);
    pctl_free(data);
    pctl_free(busy);
    pctl_free(snap);
    pctl_free(old_snap);
    pctl_free(explicit_text);
    json_decref(explicit_obj);
    json_decref(before);
    json_decref(after);
    json_decref(removed);
    pctl_def_free(def);
    pctl_def_free(old_def);
    pctl_instance_row_clear(&row);
    return rc;
}

/* A change made again, from the start, when the server broke a deadlock
 * with an engine's pass by ending it (PCTL_TX_RUN, as runs.c's). */
static int change_instance(planctl_admitted *out, planctl *p,
                           const change_req *req)
{
    int tries = 0, rc;

    do
        rc = change_once(out, p, req);
    while (pctl_tx_again(p, rc, &tries));
    return rc;
}

/* The arguments every change needs. */
static int change_args_ok(const pctl_param_change *ch)
{
    return ch && (!ch->nvalues || ch->values) && (!ch->nunset || ch->unset);
}

int pctl_store_set(planctl_admitted *out, planctl *p, const char *name,
                   const pctl_param_change *ch, pctl_preflight_gate *pf)
{
    change_req req = {name, NULL, ch, pf};

    if (!out || !p || !name || !change_args_ok(ch))
        return pctl_err_arg(p, !p      ? "p"
                               : !out  ? "out"
                               : !name ? "name"
                                       : "params");
    if (ch->nvalues == 0 && ch->nunset == 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "no parameter given: no value to set and none to "
                        "unset");
    return change_instance(out, p, &req);
}

int pctl_store_upgrade(planctl_admitted *out, planctl *p, const char *name,
                       const char *version, const pctl_param_change *ch,
                       pctl_preflight_gate *pf)
{
    change_req req = {name, version, ch, pf};

    if (!out || !p || !name || !version || !change_args_ok(ch))
        return pctl_err_arg(p, !p         ? "p"
                               : !out     ? "out"
                               : !name    ? "name"
                               : !version ? "version"
                                          : "params");
    return change_instance(out, p, &req);
}

static int remove_instance(planctl *p, int64_t id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_instance_delete);

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, id);
    return pctl_q_exec(st);
}

/* Hands the instance's whole bundle (read before its rows were removed)
 * to the archive, then says the delete is about to commit. */
static int archive_instance(planctl *p, const planctl_delete_options *o,
                            const char *bundle, const char *name)
{
    if (o->archive(o->archive_data, bundle, strlen(bundle)) != 0 ||
        o->archive(o->archive_data, NULL, 0) != 0)
        return pctl_err(p, PLANCTL_EIO,
                        "writing instance \"%s\" to the archive failed; "
                        "nothing was removed",
                        name);
    return 0;
}

int planctl_instance_delete(int64_t *out, planctl *p, const char *name,
                            int force)
{
    planctl_delete_options o = PLANCTL_DELETE_OPTIONS_INIT;

    o.force = force;
    return planctl_instance_delete_opts(out, p, name, &o);
}

/* One try of a delete: on PostgreSQL beside the engines, under the
 * instance's row lock (PCTL_TX_RUN; store/README says why it is enough). */
static int delete_once(int64_t *out, planctl *p, const char *name,
                       const planctl_delete_options *opts)
{
    planctl_admitted admitted;
    pctl_instance_row row = {0};
    pctl_def *def = NULL;
    char *busy = NULL, *snap = NULL, *bundle = NULL;
    int64_t active;
    pctl_stmt *st;
    pctl_admission a = {0};
    int rc, force = opts->force != 0;
    int archive = opts->archive && !opts->dry_run;

    *out = 0;
    if ((rc = pctl_tx_begin_run(p)) < 0)
        return rc;
    rc = pctl_instance_find_locked(&row, p, name);
    if (rc == 0 &&
        (rc = pctl_active_run_describe(&busy, &active, p, row.id, name)) == 0 &&
        busy)
        rc = pctl_err(p, PLANCTL_ECONFLICT,
                      "%s; cancel it before deleting the instance", busy);
    if (rc == 0)
        rc = pctl_def_load(&def, p, row.definition_id);
    if (rc == 0 && (force || !pctl_def_plan(def, "cleanup"))) {
        /* The bundle is read before the rows go, and handed to the
         * archive only once they are gone: a delete made again (after a
         * deadlock the server broke) archives once. */
        if (archive)
            rc = pctl_bundle_run_json(&bundle, p, row.id, name, 0);
        if (rc == 0)
            rc = remove_instance(p, row.id);
        if (rc == 0 && archive)
            rc = archive_instance(p, opts, bundle, name);
        goto done;
    }
    if (rc == 0 && archive)
        rc = pctl_err(p, PLANCTL_EINVAL,
                      "instance \"%s\" has a cleanup plan, which removes it "
                      "when it completes, after this command: nothing to "
                      "archive now",
                      name);
    if (rc == 0)
        rc = pctl_params_resolve(&snap, p, def, row.params);
    if (rc == 0 && !row.deleting) {
        st = pctl_q(p, PCTL_Q_instance_mark_deleting);
        if (!st) {
            rc = pctl_q_err(p);
        } else {
            pctl_bind_i64(st, 1, row.id);
            pctl_bind_i64(st, 2, pctl_now(p));
            rc = pctl_q_exec(st);
        }
        if (rc == 0)
            rc = pctl_event_admin(p, row.id, "instance",
                                  "deletion requested: running cleanup",
                                  pctl_user(p), NULL);
    }
    if (rc == 0) {
        a.instance_id = row.id;
        a.instance_name = name;
        a.definition_id = row.definition_id;
        a.def = def;
        a.plan = "cleanup";
        a.trigger = "delete";
        a.params_json = snap;
        rc = pctl_admit(&admitted, p, &a);
        *out = admitted.run;
    }
done:
    if (opts->dry_run && rc == 0)
        pctl_tx_rollback(p); /* *out keeps what the delete would do */
    else
        rc = pctl_tx_end(p, rc);
    if (rc < 0)
        *out = 0;
    pctl_free(bundle);
    pctl_free(busy);
    pctl_free(snap);
    pctl_def_free(def);
    pctl_instance_row_clear(&row);
    return rc;
}

int planctl_instance_delete_opts(int64_t *out, planctl *p, const char *name,
                                 const planctl_delete_options *opts)
{
    planctl_delete_options defaults = PLANCTL_DELETE_OPTIONS_INIT;
    int rc, tries = 0;

    if (!out || !p || !name)
        return pctl_err_arg(p, !p ? "p" : !out ? "out" : "name");
    *out = 0;
    if (!opts)
        opts = &defaults;
    if (opts->version != PLANCTL_DELETE_OPTIONS_VERSION)
        return pctl_err(p, PLANCTL_EINVAL,
                        "unknown planctl_delete_options version %u",
                        opts->version);
    do
        rc = delete_once(out, p, name, opts);
    while (pctl_tx_again(p, rc, &tries));
    return rc;
}
