/* logs.c - planctl_logs_json(): the output the attempts of one run kept,
 * with what chose them (`planctl logs`), from one snapshot. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/ferr.h"
#include "store/store.h"

/* Steps named in a not-found message, at most. */
#define LIST_MAX 10

/* The run: opts->run, or the default one.  *run is {"id","plan","status"}.
 * Errors: ENOTFOUND, those of the store. */
static int find_run(json_t **run, planctl *p, int64_t instance_id,
                    const char *instance, int64_t id)
{
    pctl_stmt *st = pctl_q(p, id ? PCTL_Q_logs_run : PCTL_Q_logs_default_run);
    int rc;

    *run = NULL;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, instance_id);
    if (id)
        pctl_bind_i64(st, 2, id);
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        *run = json_pack("{s:I, s:s, s:s}", "id",
                         (json_int_t)pctl_col_i64(st, 0), "plan",
                         pctl_col_text(st, 1), "status", pctl_col_text(st, 2));
        rc = *run ? 0 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    } else if (rc == PCTL_DONE && id) {
        rc = pctl_err(p, PLANCTL_ENOTFOUND,
                      "run %lld not found for instance \"%s\"", (long long)id,
                      instance);
    } else if (rc == PCTL_DONE) {
        rc = pctl_err(p, PLANCTL_ENOTFOUND, "instance \"%s\" has no run",
                      instance);
    } else {
        rc = pctl_q_fail(st, rc);
    }
    pctl_reset(st);
    return rc;
}

/* The steps of run_id in definition order: [{"phase","name","id",
 * "status"}]. */
static int read_steps(json_t **out, planctl *p, int64_t run_id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_logs_steps);
    int rc = 0, step;

    if (!st)
        return pctl_q_err(p);
    if (!(*out = json_array()))
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    pctl_bind_i64(st, 1, run_id);
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        json_t *o = json_pack(
            "{s:s, s:s, s:I, s:s}", "phase", pctl_col_text(st, 0), "name",
            pctl_col_text(st, 1), "id", (json_int_t)pctl_col_i64(st, 2),
            "status", pctl_col_text(st, 3));

        if (json_array_append_new(*out, o) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    return rc;
}

static const char *jtext(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* Whether step s is what name asks for ("STEP" or "PHASE/STEP"). */
static int matches(const json_t *s, const char *name)
{
    const char *slash = strchr(name, '/'), *phase = jtext(s, "phase");

    if (!slash)
        return !strcmp(jtext(s, "name"), name);
    return strlen(phase) == (size_t)(slash - name) &&
           !strncmp(phase, name, (size_t)(slash - name)) &&
           !strcmp(jtext(s, "name"), slash + 1);
}

/* ENOTFOUND for a step run_id does not have, listing those it has (the
 * first LIST_MAX) with the closest name. */
static int no_step(planctl *p, const json_t *steps, const char *name,
                   int64_t run_id, const char *instance)
{
    size_t n = json_array_size(steps), i, len = 0;
    const char **names = pctl_calloc(n ? n : 1, sizeof *names);
    char list[1024], hint[160] = "";
    const char *best;
    const json_t *s;

    if (!names)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    list[0] = '\0';
    json_array_foreach(steps, i, s)
    {
        names[i] = jtext(s, "name");
        if (i < LIST_MAX && len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s/%s",
                                    i ? ", " : "", jtext(s, "phase"), names[i]);
    }
    if (n > LIST_MAX && len < sizeof list)
        snprintf(list + len, sizeof list - len, " and %zu more", n - LIST_MAX);
    best = pctl_closest(strchr(name, '/') ? strchr(name, '/') + 1 : name, names,
                        n);
    if (best)
        snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", best);
    pctl_free(names);
    if (!n)
        return pctl_err(p, PLANCTL_ENOTFOUND,
                        "run %lld of \"%s\" has no step \"%s\": it has no "
                        "steps",
                        (long long)run_id, instance, name);
    return pctl_err(p, PLANCTL_ENOTFOUND,
                    "run %lld of \"%s\" has no step \"%s\"%s; its steps: %s",
                    (long long)run_id, instance, name, hint, list);
}

/* The step name chooses among steps (a new reference in *out).  Errors:
 * ENOTFOUND, EINVAL (a name in two phases), ENOMEM. */
static int pick_step(json_t **out, planctl *p, const json_t *steps,
                     const char *name, int64_t run_id, const char *instance)
{
    char phases[512];
    size_t i, found = 0, len = 0;
    const json_t *s;

    *out = NULL;
    phases[0] = '\0';
    json_array_foreach(steps, i, s)
    {
        if (!matches(s, name))
            continue;
        if (!found++)
            *out = (json_t *)s;
        if (len < sizeof phases)
            len += (size_t)snprintf(phases + len, sizeof phases - len, "%s%s",
                                    found > 1 ? ", " : "", jtext(s, "phase"));
    }
    if (!found)
        return no_step(p, steps, name, run_id, instance);
    if (found > 1) {
        const char *first = jtext(*out, "phase");

        *out = NULL;
        return pctl_err(p, PLANCTL_EINVAL,
                        "step \"%s\" of run %lld is in phases %s; name one "
                        "as PHASE/STEP (such as %s/%s)",
                        name, (long long)run_id, phases, first, name);
    }
    json_incref(*out);
    return 0;
}

/* Appends the attempts of step s (all, or number `only`) to arr; *count
 * gets how many the step has.  Errors: those of the store, ENOMEM. */
static int add_attempts(json_t *arr, int *count, planctl *p, int64_t run_id,
                        const json_t *s, int only)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_logs_attempts);
    int rc = 0, step;

    *count = 0;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, json_integer_value(json_object_get(s, "id")));
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        int number = (int)pctl_col_i64(st, 0);
        json_t *o;

        ++*count;
        if (only && number != only)
            continue;
        o = json_pack(
            "{s:I, s:s, s:s, s:i, s:s, s:o, s:o, s:o, s:o, s:o, "
            "s:o}",
            "run", (json_int_t)run_id, "phase", jtext(s, "phase"), "step",
            jtext(s, "name"), "attempt", number, "status", pctl_col_text(st, 1),
            "exit_code", pctl_col_json_int(st, 4), "started_at",
            pctl_col_json_time(st, 2), "finished_at", pctl_col_json_time(st, 3),
            "message", pctl_col_json_text(st, 5), "output",
            pctl_col_json_text(st, 6), "output_bytes",
            pctl_col_json_int(st, 7));
        if (json_array_append_new(arr, o) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    return rc;
}

static int build(json_t *doc, planctl *p, const char *instance,
                 const planctl_logs_options *o)
{
    pctl_instance_row row = {0};
    json_t *run = NULL, *steps = NULL, *chosen = NULL, *arr;
    int64_t run_id = 0;
    int rc, count = 0;
    size_t i;
    const json_t *s;

    rc = pctl_instance_find(&row, p, instance);
    if (rc == 0)
        rc = find_run(&run, p, row.id, instance, o->run);
    if (rc == 0) {
        run_id = json_integer_value(json_object_get(run, "id"));
        json_object_set(doc, "run", run);
        rc = read_steps(&steps, p, run_id);
    }
    if (rc == 0 && o->step)
        rc = pick_step(&chosen, p, steps, o->step, run_id, instance);
    arr = json_object_get(doc, "attempts");
    if (rc == 0 && chosen) {
        json_t *st = json_pack(
            "{s:s, s:s, s:s}", "phase", jtext(chosen, "phase"), "name",
            jtext(chosen, "name"), "status", jtext(chosen, "status"));

        rc = st && json_object_set_new(doc, "step", st) == 0
                 ? add_attempts(arr, &count, p, run_id, chosen, o->attempt)
                 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        if (rc == 0 && o->attempt && !json_array_size(arr) && count)
            rc = pctl_err(p, PLANCTL_ENOTFOUND,
                          "step %s/%s of run %lld has attempts 1 to %d, not "
                          "%d",
                          jtext(chosen, "phase"), jtext(chosen, "name"),
                          (long long)run_id, count, o->attempt);
        else if (rc == 0 && o->attempt && !json_array_size(arr))
            rc = pctl_err(p, PLANCTL_ENOTFOUND,
                          "step %s/%s of run %lld has no attempt yet, not %d",
                          jtext(chosen, "phase"), jtext(chosen, "name"),
                          (long long)run_id, o->attempt);
    }
    json_array_foreach(steps, i, s)
    {
        if (rc == 0 && !chosen)
            rc = add_attempts(arr, &count, p, run_id, s, 0);
    }
    json_decref(chosen);
    json_decref(steps);
    json_decref(run);
    pctl_instance_row_clear(&row);
    return rc;
}

int planctl_logs_json(char **out, planctl *p, const char *instance,
                      const planctl_logs_options *opts)
{
    planctl_logs_options defaults = PLANCTL_LOGS_OPTIONS_INIT;
    json_t *doc;
    int rc;

    if (!out || !p || !instance)
        return pctl_err_arg(p, !p ? "p" : !out ? "out" : "instance");
    *out = NULL;
    if (!opts)
        opts = &defaults;
    if (opts->version != PLANCTL_LOGS_OPTIONS_VERSION || opts->run < 0 ||
        opts->attempt < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "logs options: version must be %d, run and attempt "
                        "must not be negative",
                        PLANCTL_LOGS_OPTIONS_VERSION);
    if (opts->attempt && !opts->step)
        return pctl_err(p, PLANCTL_EINVAL,
                        "an attempt is chosen within a step: give the step "
                        "too");
    doc = json_pack("{s:i, s:s, s:n, s:n, s:[]}", "schema", 1, "instance",
                    instance, "run", "step", "attempts");
    if (!doc)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* A read transaction: every row comes from one snapshot. */
    if ((rc = pctl_tx_read(p)) < 0) {
        json_decref(doc);
        return rc;
    }
    rc = build(doc, p, instance, opts);
    pctl_tx_read_end(p);
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(doc);
    return rc;
}
