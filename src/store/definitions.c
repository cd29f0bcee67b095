/*
 * definitions.c - checking and registering definition versions.
 *
 * A version is stored as canonical JSON (keys sorted, compact), so the same
 * content registered twice is recognised whatever its formatting, and
 * different content under a registered (name, version) is refused: a
 * version means one thing forever, as with any package registry.
 */
#include <jansson.h>
#include <pthread.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/pipeline.h"
#include "core/timefmt.h"
#include "store/store.h"

/* Builds the validate document of planctl-json(7) from a list of errors. */
static json_t *validate_doc(const pctl_ferr_list *errs)
{
    json_t *doc = json_pack("{s:i, s:b, s:[]}", "schema", 1, "valid",
                            errs->n == 0, "errors");
    json_t *arr = doc ? json_object_get(doc, "errors") : NULL;
    size_t i;

    for (i = 0; arr && i < errs->n; i++) {
        const pctl_ferr *e = &errs->items[i];
        json_t *o = json_pack("{s:s, s:s, s:s, s:s?}", "path", e->path, "type",
                              pctl_ferr_type_name(e->type), "message",
                              e->message, "hint", e->hint);

        if (!o || json_array_append_new(arr, o) < 0) {
            json_decref(doc);
            return NULL;
        }
    }
    if (!arr) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

int planctl_definition_check(char **out, const char *json, size_t len,
                             const char *origin, const char *const *extra_kinds)
{
    pctl_def_opts opts = PCTL_DEF_OPTS_INIT;
    pctl_kinds kinds = PCTL_KINDS_INIT;
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    pctl_def *def = NULL;
    json_t *doc;
    size_t i;
    int rc = 0;

    if (!out || !json)
        return pctl_thread_err(PLANCTL_EINVAL, "missing argument: %s is NULL",
                               !out ? "out" : "json");
    *out = NULL;
    for (i = 0; extra_kinds && extra_kinds[i] && rc == 0; i++)
        rc = pctl_kinds_add(&kinds, extra_kinds[i], NULL, NULL);
    if (rc < 0) {
        pctl_kinds_clear(&kinds);
        return rc;
    }
    opts.kinds = &kinds;
    rc = pctl_def_parse(&def, json, len, origin, &opts, &errs);
    pctl_def_free(def);
    pctl_kinds_clear(&kinds);
    if (rc == PLANCTL_ENOMEM || errs.oom) {
        pctl_ferr_list_clear(&errs);
        return PLANCTL_ENOMEM;
    }
    doc = validate_doc(&errs);
    pctl_ferr_list_clear(&errs);
    *out = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    return *out ? 0 : PLANCTL_ENOMEM;
}

/*
 * The task kinds of the process: every name registered on any handle
 * (planctl_kind_register(), or an engine's executor), kept for the life
 * of the process, so that a definition applied from any handle accepts
 * them (planctl.h, planctl_definition_apply).  Names only: a spec check
 * stays the handle's that registered it.  Under a mutex, as handles live
 * on many threads.
 */
static pthread_mutex_t process_lock = PTHREAD_MUTEX_INITIALIZER;
static pctl_kinds process_kinds = PCTL_KINDS_INIT;

/* Adds kind to the process's names.  0 or PLANCTL_ENOMEM. */
static int process_kind_add(const char *kind)
{
    int rc = 0;

    if (pctl_kind_is_builtin(kind))
        return 0;
    pthread_mutex_lock(&process_lock);
    if (!pctl_kinds_find(&process_kinds, kind))
        rc = pctl_kinds_add(&process_kinds, kind, NULL, NULL);
    pthread_mutex_unlock(&process_lock);
    return rc;
}

/* Fills into (empty) with the kinds own knows, checks included, and the
 * names of the process own lacks.  0 or PLANCTL_ENOMEM. */
static int known_kinds(pctl_kinds *into, const pctl_kinds *own)
{
    size_t i;
    int rc = 0;

    for (i = 0; own && i < own->n && rc == 0; i++)
        rc = pctl_kinds_add(into, own->items[i].name, own->items[i].check,
                            own->items[i].data);
    pthread_mutex_lock(&process_lock);
    for (i = 0; i < process_kinds.n && rc == 0; i++)
        if (!pctl_kinds_find(into, process_kinds.items[i].name))
            rc = pctl_kinds_add(into, process_kinds.items[i].name, NULL, NULL);
    pthread_mutex_unlock(&process_lock);
    return rc;
}

int planctl_kind_register(planctl *p, const char *kind,
                          int (*check_spec)(const char *spec_json, char *err,
                                            size_t err_size, void *data),
                          void *data)
{
    int rc;

    if (!p || !kind)
        return pctl_err_arg(p, !p ? "p" : "kind");
    if (!p->kinds) {
        p->kinds = pctl_calloc(1, sizeof(*p->kinds));
        if (!p->kinds)
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    rc = pctl_kinds_add(p->kinds, kind, check_spec, data);
    if (rc == PLANCTL_EINVAL)
        return pctl_err(p, rc,
                        "invalid task kind: give a name of 1 to %d bytes",
                        PCTL_KIND_MAX);
    if (rc == 0)
        rc = process_kind_add(kind);
    if (rc < 0)
        return pctl_err(p, rc, "out of memory");
    return 0;
}

int pctl_kind_set_executor(planctl *p, const char *kind,
                           const planctl_executor *ex)
{
    int rc;

    if (!p->kinds && !(p->kinds = pctl_calloc(1, sizeof(*p->kinds))))
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    rc = pctl_kinds_set_executor(p->kinds, kind, ex);
    if (rc == 0)
        rc = process_kind_add(kind);
    if (rc == PLANCTL_EINVAL)
        return pctl_err(p, rc,
                        "invalid task kind: give a name of 1 to %d bytes",
                        PCTL_KIND_MAX);
    return rc < 0 ? pctl_err(p, rc, "out of memory") : 0;
}

/* The first error as the handle's message, with a pointer to the rest. */
static int report_invalid(planctl *p, const pctl_ferr_list *errs,
                          const char *origin)
{
    char *line = errs->n ? pctl_ferr_render(&errs->items[0]) : NULL;
    int rc;

    if (!line)
        return pctl_err(p, errs->n ? PLANCTL_ENOMEM : PLANCTL_EDEFINITION,
                        errs->n ? "out of memory" : "invalid definition");
    if (errs->n == 1)
        rc = pctl_err(p, PLANCTL_EDEFINITION, "%s: %s", origin, line);
    else
        rc = pctl_err(p, PLANCTL_EDEFINITION, "%s: %s (and %zu more)", origin,
                      line, errs->n - 1);
    pctl_free(line);
    return rc;
}

int planctl_definition_apply(char **out, planctl *p, const char *json,
                             size_t len, const char *origin)
{
    pctl_kinds kinds = PCTL_KINDS_INIT;
    pctl_def_opts opts = PCTL_DEF_OPTS_INIT;
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    pctl_def *def = NULL;
    json_t *root = NULL;
    char *body = NULL;
    pctl_stmt *st;
    int rc, created = 0;

    if (out)
        *out = NULL;
    if (!p || !json)
        return pctl_err_arg(p, !p ? "p" : "json");
    if (!origin)
        origin = "<definition>";
    /* The kinds this handle knows: the built-ins, the registered, and
     * those registered on the other handles of the process. */
    if (known_kinds(&kinds, p->kinds) < 0) {
        pctl_kinds_clear(&kinds);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    opts.kinds = &kinds;
    rc = pctl_def_parse(&def, json, len, origin, &opts, &errs);
    pctl_kinds_clear(&kinds);
    if (rc == PLANCTL_EDEFINITION)
        rc = report_invalid(p, &errs, origin);
    else if (rc < 0 || errs.oom)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    pctl_ferr_list_clear(&errs);
    if (rc < 0)
        return rc;

    /* The body is the document as written, not as defaulted, as bodies
     * have always been stored: a re-apply is compared with them. */
    root = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
    if (!root || pctl_json_encode(&body, root, JSON_COMPACT | JSON_SORT_KEYS))
        body = NULL;
    json_decref(root);
    if (!body) {
        pctl_def_free(def);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }

    if ((rc = pctl_tx_begin(p)) < 0)
        goto done;
    st = pctl_q(p, PCTL_Q_def_body);
    if (!st) {
        rc = pctl_q_err(p);
    } else {
        pctl_bind_text(st, 1, def->name);
        pctl_bind_text(st, 2, def->version);
        rc = pctl_step(st);
        if (rc == PCTL_ROW) {
            int same = strcmp(pctl_col_text(st, 0), body) == 0;

            pctl_reset(st);
            rc = same ? 0
                      : pctl_err(p, PLANCTL_ECONFLICT,
                                 "definition %s@%s is already registered "
                                 "with different content; give the new "
                                 "content a new version",
                                 def->name, def->version);
        } else if (rc == PCTL_DONE) {
            pctl_reset(st);
            created = 1;
            rc = 0;
        } else {
            pctl_reset(st);
            rc = pctl_q_fail(st, rc);
        }
    }
    if (rc == 0 && created) {
        st = pctl_q(p, PCTL_Q_def_insert);
        if (!st) {
            rc = pctl_q_err(p);
        } else {
            pctl_bind_text(st, 1, def->name);
            pctl_bind_text(st, 2, def->version);
            pctl_bind_text(st, 3, body);
            pctl_bind_i64(st, 4, pctl_now(p));
            rc = pctl_q_exec(st);
        }
    }
    rc = pctl_tx_end(p, rc);
    if (rc == 0 && out) {
        json_t *doc =
            json_pack("{s:i, s:s, s:s, s:b}", "schema", 1, "name", def->name,
                      "version", def->version, "created", created);

        *out = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
        json_decref(doc);
        if (!*out)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
done:
    pctl_free(body);
    pctl_def_free(def);
    return rc;
}

int pctl_def_decode_stored(pctl_def **out, planctl *p, int64_t id,
                           const char *body)
{
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    char *origin = pctl_asprintf("definition %lld", (long long)id);
    int rc;

    *out = NULL;
    if (!origin)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    rc = pctl_def_decode(out, body, strlen(body), origin, &errs);
    if (rc == PLANCTL_EDEFINITION)
        rc = report_invalid(p, &errs, origin);
    else if (rc < 0)
        rc = pctl_err(p, rc, "out of memory");
    pctl_ferr_list_clear(&errs);
    pctl_free(origin);
    return rc;
}

int pctl_def_load(pctl_def **out, planctl *p, int64_t id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_def_by_id);
    char *body = NULL;
    int rc;

    *out = NULL;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW)
        body = pctl_strdup(pctl_col_text(st, 0));
    pctl_reset(st);
    if (rc == PCTL_DONE)
        return pctl_err(p, PLANCTL_ENOTFOUND, "definition %lld not found",
                        (long long)id);
    if (rc != PCTL_ROW)
        return pctl_q_fail(st, rc);
    rc = body ? pctl_def_decode_stored(out, p, id, body)
              : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    pctl_free(body);
    return rc;
}

/* o.key = s, or null when s is NULL (absent values are null in every
 * JSON document, never left out).  Returns 0 or -1 (out of memory). */
static int set_str(json_t *o, const char *key, const char *s)
{
    return json_object_set_new(o, key, s ? json_string(s) : json_null());
}

/* The definition's metadata; a field the definition does not have is
 * null (for upgradableFrom: any version may upgrade to it, where [] is
 * none). */
static int add_meta(json_t *o, const pctl_def *def)
{
    json_t *list;
    size_t i;

    if ((!def->nmaintainers &&
         json_object_set_new(o, "maintainers", json_null()) < 0) ||
        (!def->has_upgradable_from &&
         json_object_set_new(o, "upgradableFrom", json_null()) < 0))
        return -1;

    if (set_str(o, "description", def->description) < 0 ||
        set_str(o, "appVersion", def->app_version) < 0 ||
        set_str(o, "url", def->url) < 0)
        return -1;
    if (def->nmaintainers) {
        if (json_object_set_new(o, "maintainers", list = json_array()) < 0)
            return -1;
        for (i = 0; i < def->nmaintainers; i++) {
            json_t *m = json_object();

            if (json_array_append_new(list, m) < 0 ||
                set_str(m, "name", def->maintainers[i].name) < 0 ||
                set_str(m, "email", def->maintainers[i].email) < 0)
                return -1;
        }
    }
    if (def->has_upgradable_from) {
        if (json_object_set_new(o, "upgradableFrom", list = json_array()) < 0)
            return -1;
        for (i = 0; i < def->nupgradable_from; i++)
            if (json_array_append_new(list,
                                      json_string(def->upgradable_from[i])) < 0)
                return -1;
    }
    return 0;
}

int planctl_definitions_json(char **out, planctl *p)
{
    pctl_stmt *st;
    json_t *doc, *arr;
    int rc = 0, step;

    if (!out || !p)
        return pctl_err_arg(p, !p ? "p" : "out");
    *out = NULL;
    st = pctl_q(p, PCTL_Q_def_list);
    if (!st)
        return pctl_q_err(p);
    doc = json_pack("{s:i, s:[]}", "schema", 1, "definitions");
    arr = doc ? json_object_get(doc, "definitions") : NULL;
    if (!arr) {
        json_decref(doc);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        char when[PCTL_TIME_BUF];
        pctl_def *def = NULL;
        json_t *o, *plans;
        size_t i;

        /* The plan list comes from the stored body, decoded once per row:
         * the cost follows the number of definitions, not of runs. */
        rc = pctl_def_load(&def, p, pctl_col_i64(st, 0));
        if (rc < 0)
            break;
        pctl_time_rfc3339(when, pctl_col_i64(st, 1));
        o = json_pack("{s:s, s:s, s:s, s:[]}", "name", def->name, "version",
                      def->version, "created_at", when, "plans");
        plans = o ? json_object_get(o, "plans") : NULL;
        for (i = 0; plans && i < def->nplans; i++)
            if (json_array_append_new(plans, json_string(def->plans[i].name)) <
                0)
                plans = NULL;
        if (plans && add_meta(o, def) < 0)
            plans = NULL;
        if (!plans || json_array_append_new(arr, o) < 0) {
            if (!plans)
                json_decref(o);
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        }
        pctl_def_free(def);
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(doc);
    return rc;
}

int planctl_definition_body(char **out, planctl *p, const char *name,
                            const char *version)
{
    pctl_stmt *st;
    int rc;

    if (out)
        *out = NULL;
    if (!out || !p || !name)
        return pctl_err_arg(p, !p ? "p" : !out ? "out" : "name");
    st = pctl_q(p, version ? PCTL_Q_def_body : PCTL_Q_def_latest_body);
    if (!st)
        return pctl_q_err(p);
    pctl_bind_text(st, 1, name);
    if (version)
        pctl_bind_text(st, 2, version);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        *out = pctl_strdup(pctl_col_text(st, 0));
        pctl_reset(st);
        return *out ? 0 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc != PCTL_DONE) {
        rc = pctl_q_fail(st, rc);
        pctl_reset(st);
        return rc;
    }
    pctl_reset(st);
    return version ? pctl_err_no_version(p, name, version)
                   : pctl_err_no_definition(p, name);
}
