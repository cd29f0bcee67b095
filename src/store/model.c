/* model.c - runs in memory: rendering to the JSON of planctl-json(7), and
 * comparing. */
#include "store/model.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/outputs.h"
#include "core/timefmt.h"

char *pctl_m_params(const char *text)
{
    json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    char *out;

    if (!v)
        return pctl_asprintf("(not JSON) %s", text ? text : "(null)");
    out = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(v);
    return out;
}

void pctl_m_run_clear(pctl_m_run *r)
{
    size_t i, j, k;

    for (i = 0; i < r->nphases; i++) {
        pctl_m_phase *ph = &r->phases[i];

        for (j = 0; j < ph->nsteps; j++) {
            pctl_m_step *s = &ph->steps[j];

            for (k = 0; k < s->nattempts; k++) {
                pctl_free(s->attempts[k].message);
                pctl_free(s->attempts[k].output);
                pctl_free(s->attempts[k].outputs);
            }
            pctl_free(s->attempts);
            pctl_free(s->name);
            pctl_free(s->message);
            pctl_free(s->outputs);
        }
        pctl_free(ph->steps);
        pctl_free(ph->name);
        pctl_free(ph->strategy);
        pctl_free(ph->message);
    }
    pctl_free(r->phases);
    pctl_free(r->uid);
    pctl_free(r->plan);
    pctl_free(r->trigger);
    pctl_free(r->reason);
    pctl_free(r->def_version);
    pctl_free(r->message);
    pctl_free(r->params);
    memset(r, 0, sizeof *r);
}

/* Grows an array by one zeroed element; returns it or NULL. */
static void *push(void **v, size_t *n, size_t sz)
{
    char *nv = pctl_realloc(*v, (*n + 1) * sz);

    if (!nv)
        return NULL;
    *v = nv;
    memset(nv + *n * sz, 0, sz);
    return nv + (*n)++ * sz;
}

pctl_m_phase *pctl_m_add_phase(pctl_m_run *r)
{
    return push((void **)&r->phases, &r->nphases, sizeof *r->phases);
}

pctl_m_step *pctl_m_add_step(pctl_m_phase *ph)
{
    return push((void **)&ph->steps, &ph->nsteps, sizeof *ph->steps);
}

pctl_m_attempt *pctl_m_add_attempt(pctl_m_step *s)
{
    pctl_m_attempt *a =
        push((void **)&s->attempts, &s->nattempts, sizeof *s->attempts);

    if (a)
        a->exit_code = -1;
    return a;
}

static json_t *time_or_null(int64_t ms)
{
    char buf[PCTL_TIME_BUF];

    if (ms == 0)
        return json_null();
    pctl_time_rfc3339(buf, ms);
    return json_string(buf);
}

static json_t *text_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *status_json(planctl_status s)
{
    return json_string(planctl_status_name(s));
}

static json_t *attempt_json(const pctl_m_attempt *a)
{
    return json_pack(
        "{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "number", a->number,
        "status", status_json(a->status), "started_at",
        time_or_null(a->started_at), "finished_at",
        time_or_null(a->finished_at), "exit_code",
        a->exit_code >= 0 ? json_integer(a->exit_code) : json_null(), "message",
        text_or_null(a->message), "output", text_or_null(a->output), "outputs",
        pctl_outputs_masked(a->outputs));
}

static json_t *step_json(const pctl_m_step *s, int with_attempts)
{
    json_t *o = json_pack(
        "{s:s, s:o, s:i, s:i, s:o, s:o, s:o, s:o}", "name", s->name, "status",
        status_json(s->status), "attempt", s->attempt, "max_attempts",
        s->max_attempts, "next_attempt_at",
        time_or_null(s->status == PLANCTL_STATUS_ERROR ? s->next_attempt_at
                                                       : 0),
        "started_at", time_or_null(s->started_at), "finished_at",
        time_or_null(s->finished_at), "message", text_or_null(s->message));
    json_t *arr;
    size_t k;

    if (!o || !with_attempts)
        return o;
    if (json_object_set_new(o, "outputs", pctl_outputs_masked(s->outputs)) <
        0) {
        json_decref(o);
        return NULL;
    }
    arr = json_array();
    if (!arr || json_object_set_new(o, "attempts", arr) < 0) {
        json_decref(o);
        return NULL;
    }
    for (k = 0; k < s->nattempts; k++) {
        if (json_array_append_new(arr, attempt_json(&s->attempts[k])) < 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *phase_json(const pctl_m_phase *ph, int with_attempts)
{
    json_t *o =
        json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:[]}", "name", ph->name,
                  "strategy", ph->strategy, "status", status_json(ph->status),
                  "started_at", time_or_null(ph->started_at), "finished_at",
                  time_or_null(ph->finished_at), "message",
                  text_or_null(ph->message), "steps");
    json_t *steps = o ? json_object_get(o, "steps") : NULL;
    size_t i;

    for (i = 0; steps && i < ph->nsteps; i++)
        if (json_array_append_new(steps,
                                  step_json(&ph->steps[i], with_attempts)) < 0)
            steps = NULL;
    if (!steps) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *pctl_m_run_json(const pctl_m_run *r, int64_t now, int with_phases)
{
    json_t *o, *phases, *params;
    int64_t end = r->finished_at ? r->finished_at : now;
    size_t i;

    o = json_pack(
        "{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id",
        (json_int_t)r->id, "uid", text_or_null(r->uid), "plan",
        text_or_null(r->plan), "status", status_json(r->status), "trigger",
        text_or_null(r->trigger), "reason", text_or_null(r->reason), "retry_of",
        r->retry_of ? json_integer(r->retry_of) : json_null(), "created_at",
        time_or_null(r->created_at), "started_at", time_or_null(r->started_at),
        "finished_at", time_or_null(r->finished_at), "duration_ms",
        r->started_at
            ? json_integer(end > r->started_at ? end - r->started_at : 0)
            : json_null(),
        "message", text_or_null(r->message));
    if (o && json_object_set_new(o, "definition_version",
                                 text_or_null(r->def_version)) < 0) {
        json_decref(o);
        return NULL;
    }
    if (!o || !with_phases)
        return o;
    /* The snapshot the run has, with its values' types; null when it is
     * not JSON (a damaged row). */
    params = r->params ? json_loads(r->params, 0, NULL) : NULL;
    if (json_object_set_new(o, "params", params ? params : json_null()) < 0) {
        json_decref(o);
        return NULL;
    }
    phases = json_array();
    if (!phases || json_object_set_new(o, "phases", phases) < 0) {
        json_decref(o);
        return NULL;
    }
    for (i = 0; i < r->nphases; i++) {
        if (json_array_append_new(
                phases, phase_json(&r->phases[i], with_phases > 1)) < 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

json_t *pctl_m_status_doc(const char *instance, const char *def_name,
                          const char *def_version, int64_t active_run)
{
    /* "engine", "waiting" and "parameters" are null here, and in what
     * replay rebuilds (the log records neither engines, nor why a run
     * waits, nor an instance's values as such); planctl_status_json()
     * fills them in. */
    return json_pack("{s:i, s:s, s:{s:s, s:s}, s:o, s:[], s:n, s:n, s:n, s:[]}",
                     "schema", 1, "instance", instance, "definition", "name",
                     def_name, "version", def_version, "active_run",
                     active_run ? json_integer(active_run) : json_null(),
                     "queued", "engine", "waiting", "parameters", "plans");
}

json_t *pctl_m_history_doc(const char *instance)
{
    return json_pack("{s:i, s:s, s:[]}", "schema", 1, "instance", instance,
                     "runs");
}

json_t *pctl_m_plan_json(const char *name, const char *strategy, json_t *run)
{
    json_t *status = run ? json_incref(json_object_get(run, "status"))
                         : json_string("NEVER_RUN");

    return json_pack("{s:s, s:s, s:o, s:o}", "name", name, "strategy", strategy,
                     "status", status, "run", run ? run : json_null());
}

/* ---- comparing ---- */

static int str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

#define DIFF_INT(what, x, y)                                                   \
    do {                                                                       \
        if ((x) != (y)) {                                                      \
            snprintf(buf, size, "%s: %s: tables say %lld, events say %lld",    \
                     where, what, (long long)(x), (long long)(y));             \
            return 1;                                                          \
        }                                                                      \
    } while (0)
#define DIFF_STATUS(x, y)                                                      \
    do {                                                                       \
        if ((x) != (y)) {                                                      \
            snprintf(buf, size, "%s: tables say %s, events say %s", where,     \
                     planctl_status_name(x), planctl_status_name(y));          \
            return 1;                                                          \
        }                                                                      \
    } while (0)
#define DIFF_STR(what, x, y)                                                   \
    do {                                                                       \
        if (!str_eq((x), (y))) {                                               \
            snprintf(buf, size,                                                \
                     "%s: %s: tables say %s%s%s, events say %s%s%s", where,    \
                     what, (x) ? "\"" : "", (x) ? (x) : "null",                \
                     (x) ? "\"" : "", (y) ? "\"" : "", (y) ? (y) : "null",     \
                     (y) ? "\"" : "");                                         \
            return 1;                                                          \
        }                                                                      \
    } while (0)

static int step_diff(char *buf, size_t size, const char *where,
                     const pctl_m_step *a, const pctl_m_step *b)
{
    size_t k;

    DIFF_STATUS(a->status, b->status);
    DIFF_INT("attempt", a->attempt, b->attempt);
    DIFF_INT("max_attempts", a->max_attempts, b->max_attempts);
    DIFF_INT("started_at", a->started_at, b->started_at);
    DIFF_INT("finished_at", a->finished_at, b->finished_at);
    if (a->status == PLANCTL_STATUS_ERROR)
        DIFF_INT("next_attempt_at", a->next_attempt_at, b->next_attempt_at);
    if (a->status == PLANCTL_STATUS_IN_PROGRESS)
        DIFF_INT("deadline_at", a->deadline_at, b->deadline_at);
    DIFF_STR("message", a->message, b->message);
    DIFF_STR("outputs", a->outputs, b->outputs);
    DIFF_INT("attempts", (int64_t)a->nattempts, (int64_t)b->nattempts);
    for (k = 0; k < a->nattempts; k++) {
        const pctl_m_attempt *x = &a->attempts[k], *y = &b->attempts[k];
        char w[300];

        snprintf(w, sizeof w, "%s attempt %d", where, x->number);
        {
            const char *saved = where;

            where = w;
            DIFF_INT("number", x->number, y->number);
            DIFF_STATUS(x->status, y->status);
            DIFF_INT("started_at", x->started_at, y->started_at);
            DIFF_INT("finished_at", x->finished_at, y->finished_at);
            DIFF_INT("exit_code", x->exit_code, y->exit_code);
            DIFF_STR("message", x->message, y->message);
            DIFF_STR("output", x->output, y->output);
            DIFF_STR("outputs", x->outputs, y->outputs);
            where = saved;
        }
    }
    return 0;
}

int pctl_m_run_diff(char *buf, size_t size, const pctl_m_run *a,
                    const pctl_m_run *b)
{
    char where[256];
    size_t i, j;

    snprintf(where, sizeof where, "run %lld", (long long)a->id);
    DIFF_STR("uid", a->uid, b->uid);
    DIFF_STR("plan", a->plan, b->plan);
    DIFF_STATUS(a->status, b->status);
    DIFF_STR("trigger", a->trigger, b->trigger);
    DIFF_STR("reason", a->reason, b->reason);
    DIFF_STR("definition_version", a->def_version, b->def_version);
    /* Not the values themselves: a snapshot may hold secret ones. */
    if (a->params && b->params && !str_eq(a->params, b->params)) {
        snprintf(buf, size,
                 "%s: params: tables and events hold different snapshots "
                 "(not shown: they may hold secret values)",
                 where);
        return 1;
    }
    DIFF_INT("retry_of", a->retry_of, b->retry_of);
    DIFF_INT("created_at", a->created_at, b->created_at);
    DIFF_INT("started_at", a->started_at, b->started_at);
    DIFF_INT("finished_at", a->finished_at, b->finished_at);
    DIFF_INT("deadline_at", a->deadline_at, b->deadline_at);
    DIFF_STR("message", a->message, b->message);
    DIFF_INT("phases", (int64_t)a->nphases, (int64_t)b->nphases);
    for (i = 0; i < a->nphases; i++) {
        const pctl_m_phase *x = &a->phases[i], *y = &b->phases[i];

        snprintf(where, sizeof where, "run %lld phase %s", (long long)a->id,
                 x->name);
        DIFF_STR("name", x->name, y->name);
        DIFF_STR("strategy", x->strategy, y->strategy);
        DIFF_STATUS(x->status, y->status);
        DIFF_INT("started_at", x->started_at, y->started_at);
        DIFF_INT("finished_at", x->finished_at, y->finished_at);
        DIFF_STR("message", x->message, y->message);
        DIFF_INT("steps", (int64_t)x->nsteps, (int64_t)y->nsteps);
        for (j = 0; j < x->nsteps; j++) {
            snprintf(where, sizeof where, "run %lld step %s", (long long)a->id,
                     x->steps[j].name);
            DIFF_STR("name", x->steps[j].name, y->steps[j].name);
            if (step_diff(buf, size, where, &x->steps[j], &y->steps[j]))
                return 1;
        }
    }
    return 0;
}
