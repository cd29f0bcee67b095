/*
 * api.c - /api/v1, the documents of `planctl ... -o json` over HTTP, and
 * the actions, from the API and from the pages' forms.
 *
 *   GET  /api/v1/instances                 planctl instances -o json
 *   GET  /api/v1/instances/NAME            planctl status NAME -o json
 *                                          (?plan=P, ?run=ID)
 *   GET  /api/v1/instances/NAME/history    (?plan=, ?limit=, ?before=)
 *   GET  /api/v1/instances/NAME/events     (?run=, ?since=, ?limit=, ?tail=)
 *   GET  /api/v1/instances/NAME/logs       (?run=, ?step=, ?attempt=)
 *   GET  /api/v1/engines, /api/v1/definitions
 *   POST /api/v1/instances/NAME/ACTION     trigger, cancel, pause, resume,
 *                                          retry; a JSON body
 *
 * An action goes through the same library calls as the CLI's commands,
 * so it is admitted or refused by the same rules with the same message,
 * and its events name the actor the server gave (planctl_set_actor).
 * Errors are {"schema":1,"error":{"code":"PLANCTL_ECONFLICT","message":
 * "..."}}, in the API's words where the library's advice names a CLI flag.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/secrets.h"
#include "store/store.h"
#include "web/web.h"

/* ---- answers ---- */

/* Every error's code has the library's prefix: the library's own codes
 * by planctl_errname(), and PLANCTL_EFORBIDDEN (403) and
 * PLANCTL_EUNAUTHORIZED (401, src/serve/page.c) that only the server
 * gives. */
#define API_EINVAL "PLANCTL_EINVAL"
#define API_ENOTFOUND "PLANCTL_ENOTFOUND"
#define API_EFORBIDDEN "PLANCTL_EFORBIDDEN"

static char *own_words(planctl *p, int api);

static void json_text(web_res *res, int status, const char *text)
{
    res->status = status;
    res->type = "application/json";
    pctl_wb_add(&res->body, text);
    pctl_wb_add(&res->body, "\n");
}

static void json_doc(web_res *res, int status, json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;

    if (!text) {
        res->body.oom = 1;
    } else {
        json_text(res, status, text);
        free(text);
    }
    json_decref(doc);
}

static void api_error(web_res *res, int status, const char *code,
                      const char *msg)
{
    json_doc(res, status,
             json_pack("{s:i, s:{s:s, s:s}}", "schema", 1, "error", "code",
                       code, "message", msg));
}

static void api_failed(web_res *res, planctl *p, int rc)
{
    char *msg = own_words(p, 1);

    if (!msg) {
        res->body.oom = 1;
        return;
    }
    api_error(res, pctl_web_http_status(rc), planctl_errname(rc), msg);
    pctl_free(msg);
}

/* A library document (*text, which the call that gave rc set), or the
 * error.  text is read here, after the call, not as an argument beside
 * it. */
static void answer(web_res *res, planctl *p, int rc, char **text)
{
    if (rc < 0)
        api_failed(res, p, rc);
    else
        json_text(res, 200, *text);
    planctl_free(*text);
    *text = NULL;
}

/* A whole number from the query: 1 when present and valid, 0 absent,
 * -1 invalid. */
static int num(int64_t *out, const web_req *r, const char *key)
{
    const char *s = pctl_web_param(r, key);
    char *end;
    long long v;

    if (!s || !*s)
        return 0;
    v = strtoll(s, &end, 10);
    if (*end || v < 0)
        return -1;
    *out = (int64_t)v;
    return 1;
}

/* ---- actions ---- */

/* What an action takes, from a form or a JSON body. */
typedef struct act_args {
    const char *plan, *reason;
    int64_t run;
    int queue;
} act_args;

/* What an action did: the run it concerns; for a trigger or a retry,
 * whether that run is QUEUED and its place in the queue (1 starts
 * next), and its plan. */
typedef struct act_result {
    int64_t run;
    int queued, position;
    char plan[64];
} act_result;

/* Runs action (a plan given for a trigger) on instance as opts->actor,
 * then gives the handle its own actor back.  On success *res says what
 * it did and 0 is returned; else the library's code (message in p). */
static int act(planctl *p, const web_req *r, const char *instance,
               const char *action, const act_args *a, act_result *res)
{
    planctl_admit_options ao = PLANCTL_ADMIT_OPTIONS_INIT;
    planctl_admitted adm;
    int64_t *run = &res->run;
    int rc;

    char *own = p->actor; /* the handle's own actor, put back after */

    memset(&adm, 0, sizeof adm);
    memset(res, 0, sizeof *res);
    p->actor = NULL;
    if ((rc = planctl_set_actor(p, r->opts->actor ? r->opts->actor : "web")) <
        0) {
        p->actor = own;
        return rc;
    }
    if (!strcmp(action, "trigger")) {
        ao.queue = a->queue;
        ao.reason = a->reason && *a->reason ? a->reason : NULL;
        rc = planctl_admit_trigger(&adm, p, instance, a->plan, &ao);
        *run = adm.run;
    } else if (!strcmp(action, "retry")) {
        rc = planctl_admit_retry(&adm, p, instance, a->run, &ao);
        *run = adm.run;
    } else if (!strcmp(action, "cancel")) {
        planctl_cancel_options co = PLANCTL_CANCEL_OPTIONS_INIT;

        co.reason = a->reason && *a->reason ? a->reason : NULL;
        co.run = a->run; /* 0: the active run */
        rc = planctl_run_cancel_opts(run, p, instance, &co);
    } else if (!strcmp(action, "pause")) {
        rc = planctl_run_pause(run, p, instance);
    } else {
        rc = planctl_run_resume(run, p, instance);
    }
    if (rc == 0 && adm.run) {
        res->queued = adm.status == PLANCTL_STATUS_QUEUED;
        res->position = adm.queue_position;
        snprintf(res->plan, sizeof res->plan, "%s", adm.plan);
    }
    planctl_admitted_clear(&adm);
    planctl_set_actor(p, NULL);
    p->actor = own;
    return rc;
}

/*
 * The library's messages say what is wrong and the way out in no
 * program's words ("cancel it first, or queue the run"); the API and the
 * forms name their own field for it, as the CLI names its flag.  The message of
 * p in the words of the API (api set) or of the page, in a new string (NULL:
 * out of memory).
 */
static char *own_words(planctl *p, int api)
{
    static const struct {
        const char *cli, *api, *page;
    } words[] = {
        {"queue the run", "queue the run (set \"queue\": true in the body)",
         "queue the run (tick \"queue behind the active run\")"},
    };
    const char *msg = planctl_errmsg(p);
    wb w = WB_INIT;
    size_t i, n;

    for (i = 0; i < sizeof words / sizeof words[0]; i++) {
        const char *at = strstr(msg, words[i].cli);

        if (at) {
            pctl_wb_addn(&w, msg, (size_t)(at - msg));
            pctl_wb_add(&w, api ? words[i].api : words[i].page);
            pctl_wb_add(&w, at + strlen(words[i].cli));
            return pctl_wb_take(&w, &n);
        }
    }
    pctl_wb_add(&w, msg);
    return pctl_wb_take(&w, &n);
}

static int known_action(const char *a)
{
    return !strcmp(a, "trigger") || !strcmp(a, "cancel") ||
           !strcmp(a, "pause") || !strcmp(a, "resume") || !strcmp(a, "retry");
}

/* Whether the Origin header, when there is one, is this server's own:
 * http://HOST or https://HOST with the Host the request came to.  A
 * browser sends it with every POST, so another site's form or script
 * is told apart here even before the CSRF check. */
static int same_origin(const web_req *r)
{
    const char *o = r->raw->origin, *h = r->raw->host;

    if (!o)
        return 1;
    if (!h)
        return 0;
    if (!strncmp(o, "http://", 7))
        o += 7;
    else if (!strncmp(o, "https://", 8))
        o += 8;
    else
        return 0;
    return !strcmp(o, h);
}

/* Why a POST may not act, or NULL when it may. */
static const char *refusal(const web_req *r)
{
    if (!r->opts->allow_actions)
        return "read-only: this server takes no action; start planctl "
               "serve with --allow-actions to allow them";
    if (!same_origin(r))
        return "forbidden: the request comes from another site (Origin "
               "does not match Host)";
    return NULL;
}

void pctl_web_action_form(web_res *res, planctl *p, const web_req *r,
                          const char *name, const char *action)
{
    web_req form = *r;
    const char *why = refusal(r), *csrf;
    act_args a = {0};
    act_result done;
    int rc;

    if (!known_action(action)) {
        pctl_web_page_refused(res, r, 404, "not found: no such action", name);
        return;
    }
    if (why) {
        pctl_web_page_refused(res, r, 403, why, name);
        return;
    }
    /* The form's fields join the query's (route.c keeps both in q). */
    if (!r->raw->content_type ||
        strncmp(r->raw->content_type, "application/x-www-form-urlencoded",
                33) != 0) {
        pctl_web_page_refused(res, r, 415,
                              "unsupported: send the form as "
                              "application/x-www-form-urlencoded",
                              name);
        return;
    }
    csrf = pctl_web_param(&form, "csrf");
    if (!r->opts->csrf || strlen(r->opts->csrf) < 16 || !csrf ||
        !pctl_secret_equal(csrf, strlen(csrf), r->opts->csrf)) {
        pctl_web_page_refused(
            res, r, 403,
            "forbidden: the form's token is missing or stale; "
            "reload the page and try again",
            name);
        return;
    }
    a.plan = pctl_web_param(&form, "plan");
    a.reason = pctl_web_param(&form, "reason");
    a.queue = pctl_web_param(&form, "queue") != NULL;
    if (num(&a.run, &form, "run") < 0) {
        pctl_web_page_refused(res, r, 400,
                              "invalid run: give a run id (a number) "
                              "or leave it empty for the latest",
                              name);
        return;
    }
    if (!strcmp(action, "trigger") && (!a.plan || !*a.plan)) {
        pctl_web_page_refused(res, r, 400,
                              "missing plan: choose the plan to trigger", name);
        return;
    }
    if ((rc = act(p, r, name, action, &a, &done)) < 0) {
        char *msg = own_words(p, 0);

        if (!msg)
            res->body.oom = 1;
        else
            pctl_web_page_refused(res, r, pctl_web_http_status(rc), msg, name);
        pctl_free(msg);
        return;
    }
    /* Back to the instance, whose page says what was done: the run, and
     * for one admitted its plan and place in the queue. */
    res->status = 303;
    pctl_wb_add(&res->headers, "Location: /instances/");
    pctl_wb_url(&res->headers, name);
    pctl_wb_add(&res->headers, "?done=");
    /* The queue's own cancel button says what it did there. */
    pctl_wb_add(&res->headers, !strcmp(action, "cancel") && a.run > 0 &&
                                       pctl_web_param(&form, "queued")
                                   ? "unqueue"
                                   : action);
    if (done.run > 0)
        pctl_wb_addf(&res->headers, "&run=%lld", (long long)done.run);
    if (done.plan[0]) {
        pctl_wb_add(&res->headers, "&plan=");
        pctl_wb_url(&res->headers, done.plan);
    }
    if (done.queued && done.position > 0)
        pctl_wb_addf(&res->headers, "&position=%d", done.position);
    pctl_wb_add(&res->headers, "\r\n");
    pctl_wb_add(&res->body, "done\n");
    res->type = "text/plain; charset=utf-8";
}

static void api_action(web_res *res, planctl *p, const web_req *r,
                       const char *name, const char *action)
{
    const char *why = refusal(r);
    json_t *body = NULL, *v;
    json_error_t jerr;
    act_args a = {0};
    act_result done;
    int rc;

    if (!known_action(action)) {
        api_error(
            res, 404, API_ENOTFOUND,
            "no such action: use trigger, cancel, pause, resume or retry");
        return;
    }
    if (why) {
        api_error(res, 403, API_EFORBIDDEN, why);
        return;
    }
    /* A JSON body cannot come from another site's form without the
     * browser asking this server first (CORS), which it never allows. */
    if (!r->raw->content_type ||
        strncmp(r->raw->content_type, "application/json", 16) != 0) {
        api_error(res, 415, API_EINVAL,
                  "unsupported: send a JSON object with Content-Type "
                  "application/json");
        return;
    }
    if (r->raw->body_len &&
        !(body = json_loadb(r->raw->body, r->raw->body_len, 0, &jerr))) {
        api_error(res, 400, API_EINVAL, "invalid JSON body");
        return;
    }
    if (body && !json_is_object(body)) {
        json_decref(body);
        api_error(res, 400, API_EINVAL, "the body must be a JSON object");
        return;
    }
    a.plan = json_string_value(json_object_get(body, "plan"));
    a.reason = json_string_value(json_object_get(body, "reason"));
    a.queue = json_is_true(json_object_get(body, "queue"));
    v = json_object_get(body, "run");
    if (json_is_integer(v) && json_integer_value(v) > 0)
        a.run = (int64_t)json_integer_value(v);
    else if (v && !json_is_null(v)) {
        json_decref(body);
        api_error(res, 400, API_EINVAL, "\"run\" must be a run id (a number)");
        return;
    }
    if (!strcmp(action, "trigger") && !a.plan) {
        json_decref(body);
        api_error(res, 400, API_EINVAL,
                  "missing \"plan\": the plan to trigger");
        return;
    }
    rc = act(p, r, name, action, &a, &done);
    json_decref(body);
    if (rc < 0) {
        api_failed(res, p, rc);
        return;
    }
    /* A trigger or a retry also says whether its run waits in the queue,
     * and where: null when it did not queue. */
    json_doc(res, 200,
             json_pack("{s:i, s:s, s:s, s:o, s:o}", "schema", 1, "instance",
                       name, "action", action, "run",
                       done.run > 0 ? json_integer(done.run) : json_null(),
                       "queue_position",
                       done.queued && done.position > 0
                           ? json_integer(done.position)
                           : json_null()));
}

/* ---- documents ---- */

/* The 400 of a query number that is not one, naming the parameter. */
static void bad_number(web_res *res, const web_req *r)
{
    static const struct {
        const char *key;
        int64_t max;
    } keys[] = {{"run", INT64_MAX},   {"before", INT64_MAX},
                {"since", INT64_MAX}, {"limit", 100000},
                {"tail", 100000},     {"attempt", 1000000}};
    char msg[160];
    size_t i;

    snprintf(msg, sizeof msg,
             "a number in the query is not a whole number "
             "in range");
    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        int64_t v = 0;
        int got = num(&v, r, keys[i].key);

        if (got < 0 || (got > 0 && v > keys[i].max)) {
            if (keys[i].max == INT64_MAX)
                snprintf(msg, sizeof msg,
                         "?%s= must be a whole number (0 or more)",
                         keys[i].key);
            else
                snprintf(msg, sizeof msg,
                         "?%s= must be a whole number from 0 to %lld",
                         keys[i].key, (long long)keys[i].max);
            break;
        }
    }
    api_error(res, 400, API_EINVAL, msg);
}

static void instance_doc(web_res *res, planctl *p, const web_req *r,
                         const char *name, const char *what)
{
    char *text = NULL;
    int64_t v = 0;
    int bad = 0;

    if (!what) {
        planctl_status_options o = PLANCTL_STATUS_OPTIONS_INIT;

        o.plan = pctl_web_param(r, "plan");
        bad = num(&o.run, r, "run") < 0;
        if (!bad)
            answer(res, p, planctl_status_json(&text, p, name, &o), &text);
    } else if (!strcmp(what, "history")) {
        planctl_history_options o = PLANCTL_HISTORY_OPTIONS_INIT;

        o.plan = pctl_web_param(r, "plan");
        bad = num(&o.before, r, "before") < 0 || num(&v, r, "limit") < 0 ||
              v > 100000;
        o.limit = (int)v;
        if (!bad)
            answer(res, p, planctl_history_json(&text, p, name, &o), &text);
    } else if (!strcmp(what, "events")) {
        planctl_events_options o = PLANCTL_EVENTS_OPTIONS_INIT;
        int64_t lim = 0, tail = 0;

        o.instance = name;
        bad = num(&o.run, r, "run") < 0 || num(&o.since, r, "since") < 0 ||
              num(&lim, r, "limit") < 0 || num(&tail, r, "tail") < 0 ||
              lim > 100000 || tail > 100000;
        o.limit = (int)lim;
        o.tail = (int)tail;
        if (!bad)
            answer(res, p, planctl_events_json(&text, p, &o), &text);
    } else if (!strcmp(what, "logs")) {
        planctl_logs_options o = PLANCTL_LOGS_OPTIONS_INIT;

        o.step = pctl_web_param(r, "step");
        bad = num(&o.run, r, "run") < 0 || num(&v, r, "attempt") < 0 ||
              v > 1000000;
        o.attempt = (int)v;
        if (!bad)
            answer(res, p, planctl_logs_json(&text, p, name, &o), &text);
    } else {
        api_error(res, 404, API_ENOTFOUND, "no such document");
        return;
    }
    if (bad)
        bad_number(res, r);
}

void pctl_web_api(web_res *res, planctl *p, const web_req *r)
{
    int get = !strcmp(r->raw->method, "GET") || !strcmp(r->raw->method, "HEAD");
    char *text = NULL;

    if (!get && strcmp(r->raw->method, "POST") != 0) {
        pctl_wb_add(&res->headers, "Allow: GET, HEAD, POST\r\n");
        api_error(res, 405, API_EINVAL, "method not allowed");
        return;
    }
    if (!get) {
        if (r->nseg == 5 && !strcmp(r->seg[2], "instances"))
            api_action(res, p, r, r->seg[3], r->seg[4]);
        else
            api_error(res, 405, API_EINVAL, "only actions are POSTed");
        return;
    }
    if (r->nseg == 3 && !strcmp(r->seg[2], "instances"))
        answer(res, p, planctl_instances_json(&text, p), &text);
    else if (r->nseg == 3 && !strcmp(r->seg[2], "engines"))
        answer(res, p, planctl_engines_json(&text, p), &text);
    else if (r->nseg == 3 && !strcmp(r->seg[2], "definitions"))
        answer(res, p, planctl_definitions_json(&text, p), &text);
    else if ((r->nseg == 4 || r->nseg == 5) && !strcmp(r->seg[2], "instances"))
        instance_doc(res, p, r, r->seg[3], r->nseg == 5 ? r->seg[4] : NULL);
    else
        api_error(res, 404, API_ENOTFOUND,
                  "no such document: see /api/v1/instances");
}
