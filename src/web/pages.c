/*
 * pages.c - the HTML pages, written from the same JSON documents the CLI
 * prints (planctl_status_json() and the others), so that a page and
 * `planctl status` cannot disagree.
 *
 * Every page is a header, a <main id="live"> region and what follows it.
 * ?part=live answers only the region's inner HTML: what app.js asks for
 * (or what /stream sends) to update an open page in place.  Forms stay
 * outside the region, so an update never takes the text being typed.
 * Times are written in UTC inside <time datetime>; app.js shows them in
 * the reader's zone with the zone named, and the UTC time on hover.
 * Nothing here measures to "now": a page changes only when the database
 * does, so its ETag holds while nothing happens (app.js counts elapsed
 * times on the reader's side).
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/def.h"
#include "core/timefmt.h"
#include "store/store.h"
#include "web/web.h"

#define PAGE_SIZE 50
/* A phase with more steps than this is shown folded, with its counts. */
#define BIG_PHASE 25
/* The runs an instance page shows: its last ones. */
#define HISTORY_RUNS 20
/* The events a run page shows: its last ones. */
#define RUN_EVENTS 200

/* ---- JSON fields ---- */

#define js pctl_web_jstr
#define ji pctl_web_jint

/* ---- pieces ---- */

/* open, text (escaped) and close, when there is text. */
static void wrap(wb *w, const char *open, const char *text, const char *close)
{
    if (!text)
        return;
    pctl_wb_add(w, open);
    pctl_wb_text(w, text);
    pctl_wb_add(w, close);
}

/* Each status's icon: characters that DejaVu Sans (the fonts Debian
 * installs by default) draws, so that no icon is an empty box there
 * (the pause sign U+23F8 is not among them: PAUSED is U+2016). */
static const char *status_icon(const char *s)
{
    static const char *const icons[PLANCTL_STATUS__COUNT] = {
        [PLANCTL_STATUS_COMPLETE] = "\xE2\x9C\x94",    /* ✔ */
        [PLANCTL_STATUS_IN_PROGRESS] = "\xE2\x96\xB6", /* ▶ */
        [PLANCTL_STATUS_PENDING] = "\xE2\x97\x8B",     /* ○ */
        [PLANCTL_STATUS_QUEUED] = "\xE2\x8B\xAF",      /* ⋯ */
        [PLANCTL_STATUS_PAUSED] = "\xE2\x80\x96",      /* ‖ */
        [PLANCTL_STATUS_ERROR] = "\xE2\x9A\xA0",       /* ⚠ */
        [PLANCTL_STATUS_FATAL_ERROR] = "\xE2\x9C\x96", /* ✖ */
        [PLANCTL_STATUS_CANCELLED] = "\xE2\x8A\x98",   /* ⊘ */
        [PLANCTL_STATUS_NEVER_RUN] = "\xE2\x80\x93",   /* – */
    };
    planctl_status st;

    return s && planctl_status_parse(&st, s) == 0 ? icons[st] : "?";
}

/* The status as an icon and its word: never colour alone. */
static void status_span(wb *w, const char *s)
{
    if (!s)
        s = "NEVER_RUN";
    pctl_wb_add(w, "<span class=\"status s-");
    pctl_wb_text(w, s);
    pctl_wb_add(w, "\" data-status=\"");
    pctl_wb_text(w, s);
    pctl_wb_add(w, "\"><span aria-hidden=\"true\">");
    pctl_wb_add(w, status_icon(s));
    pctl_wb_add(w, "</span> ");
    pctl_wb_text(w, s);
    pctl_wb_add(w, "</span>");
}

/* An RFC 3339 time as "2026-11-21 14:03:05 UTC". */
static void utc_text(wb *w, const char *iso)
{
    if (strlen(iso) >= 19) {
        pctl_wb_addn(w, iso, 10);
        pctl_wb_add(w, " ");
        pctl_wb_addn(w, iso + 11, 8);
        pctl_wb_add(w, " UTC");
    } else {
        pctl_wb_text(w, iso);
    }
}

/* An RFC 3339 time from a document, shown in UTC until app.js makes it
 * local (with ago, as how long ago); "–" for null. */
static void time_el_as(wb *w, const char *iso, int ago)
{
    if (!iso) {
        pctl_wb_add(w, "<span class=\"none\">\xE2\x80\x93</span>");
        return;
    }
    pctl_wb_add(w, ago ? "<time data-ago datetime=\"" : "<time datetime=\"");
    pctl_wb_text(w, iso);
    pctl_wb_add(w, "\" title=\"");
    pctl_wb_text(w, iso);
    pctl_wb_add(w, "\">");
    utc_text(w, iso);
    pctl_wb_add(w, "</time>");
}

static void time_el(wb *w, const char *iso)
{
    time_el_as(w, iso, 0);
}

/* How long something took; for one still going, an element app.js
 * counts up from its start. */
static void duration_el(wb *w, const json_t *o)
{
    int64_t ms, a, b;
    char buf[64];

    if (!js(o, "finished_at")) {
        if (js(o, "started_at")) {
            pctl_wb_add(w, "<span class=\"elapsed\" data-since=\"");
            pctl_wb_text(w, js(o, "started_at"));
            pctl_wb_add(w, "\">running</span>");
        }
        return;
    }
    /* Phases and steps carry their times, runs their duration too. */
    if (!ji(&ms, o, "duration_ms")) {
        if (!pctl_web_jtime(&a, o, "started_at") ||
            !pctl_web_jtime(&b, o, "finished_at"))
            return;
        ms = b - a;
    }
    if (ms >= 0) {
        pctl_duration_format(buf, sizeof buf, ms);
        pctl_wb_add(w, buf);
    }
}

static void instance_href(wb *w, const char *name)
{
    pctl_wb_add(w, "/instances/");
    pctl_wb_url(w, name);
}

static void run_link(wb *w, const char *instance, int64_t run)
{
    pctl_wb_add(w, "<a href=\"");
    instance_href(w, instance);
    pctl_wb_addf(w, "/runs/%lld\">run %lld</a>", (long long)run,
                 (long long)run);
}

/* ---- the frame ---- */

/* A query value that is a whole number > 0, else 0. */
static int64_t param_id(const web_req *r, const char *key)
{
    const char *v = pctl_web_param(r, key);
    char *end;
    long long n;

    if (!v || *v < '0' || *v > '9')
        return 0;
    n = strtoll(v, &end, 10);
    return *end || n <= 0 ? 0 : (int64_t)n;
}

/* What a trigger or a retry from the page admitted, as `planctl trigger`
 * says it: "Triggered: run 7 of plan "deploy" queued (position 2)."
 * from the address the form sent the page back to (api.c); 0 when it
 * names no run. */
static int admitted_flash(wb *w, const web_req *r, const char *done)
{
    int64_t run = param_id(r, "run"), pos = param_id(r, "position");
    const char *plan = pctl_web_param(r, "plan");

    if (!run || (strcmp(done, "trigger") && strcmp(done, "retry")) ||
        r->nseg != 2 || strcmp(r->seg[0], "instances"))
        return 0;
    pctl_wb_add(w, strcmp(done, "trigger") ? "Retried: " : "Triggered: ");
    run_link(w, r->seg[1], run);
    if (plan && *plan) {
        pctl_wb_add(w, " of plan \"");
        pctl_wb_text(w, plan);
        pctl_wb_add(w, "\"");
    }
    if (pos)
        pctl_wb_addf(w, " queued (position %lld).", (long long)pos);
    else
        pctl_wb_add(w, " admitted.");
    return 1;
}

/* The document up to its content: head, header, the flash of an action
 * just done.  Nothing for ?part=live. */
static void page_head(web_res *res, const web_req *r, const char *title)
{
    wb *w = &res->body;
    const char *done = pctl_web_param(r, "done");
    static const struct {
        const char *action, *said;
    } flashes[] = {
        {"trigger", "Triggered: the run is admitted."},
        {"cancel", "Cancelled: the active run is ending."},
        {"unqueue", "Cancelled: the queued run will not start."},
        {"pause", "Paused: running steps finish, nothing new starts."},
        {"resume", "Resumed."},
        {"retry", "Retry admitted."},
    };
    size_t i;

    res->status = 200;
    if (r->live)
        return;
    pctl_wb_add(w, "<!DOCTYPE html>\n<html lang=\"en\" data-live=\"off\"><head>"
                   "<meta charset=\"utf-8\">"
                   "<meta name=\"viewport\" content=\"width=device-width, "
                   "initial-scale=1\">"
                   "<meta name=\"color-scheme\" content=\"light dark\">"
                   "<title>");
    pctl_wb_text(w, title);
    pctl_wb_add(w, " \xC2\xB7 planctl</title>"
                   "<link rel=\"icon\" href=\"/assets/icon.svg\" "
                   "type=\"image/svg+xml\">"
                   "<link rel=\"stylesheet\" href=\"/assets/app.css\">"
                   "<script src=\"/assets/app.js\" defer></script></head>\n");
    pctl_wb_addf(w, "<body data-stream=\"%d\">", r->opts->stream ? 1 : 0);
    pctl_wb_add(w, "<a class=\"skip\" href=\"#live\">Skip to content</a>"
                   "<header><a class=\"brand\" href=\"/\">planctl</a><nav "
                   "aria-label=\"Main\"><a href=\"/\">Instances</a> "
                   "<a href=\"/engines\">Engines</a></nav>");
    pctl_wb_add(w, r->opts->allow_actions
                       ? "<span class=\"mode\">actions allowed</span>"
                       : "<span class=\"mode\">read-only</span>");
    pctl_wb_add(w, "</header>\n");
    for (i = 0; done && i < sizeof flashes / sizeof flashes[0]; i++)
        if (!strcmp(done, flashes[i].action)) {
            pctl_wb_add(w, "<p id=\"flash\" role=\"status\">");
            if (!admitted_flash(w, r, done))
                pctl_wb_add(w, flashes[i].said);
            pctl_wb_add(w, "</p>");
        }
}

/* Opens the live region, whose inner HTML is what ?part=live answers. */
static void page_main(web_res *res, const web_req *r, const char *live_path)
{
    wb *w = &res->body;

    if (r->live)
        return;
    pctl_wb_add(w, "<main id=\"live\" tabindex=\"-1\" data-updates=\"0\"");
    if (live_path) {
        pctl_wb_add(w, " data-live-path=\"");
        pctl_wb_text(w, live_path);
        pctl_wb_add(w, "\"");
    }
    pctl_wb_add(w, ">\n");
}

static void page_main_end(web_res *res, const web_req *r)
{
    if (!r->live)
        pctl_wb_add(&res->body, "</main>\n");
}

static void page_end(web_res *res, const web_req *r)
{
    if (!r->live)
        pctl_wb_add(&res->body, "<footer>planctl " PLANCTL_VERSION
                                " \xC2\xB7 <a href=\"/api/v1/instances\">JSON "
                                "API</a></footer>\n</body></html>\n");
}

int pctl_web_http_status(int rc)
{
    switch (rc) {
    case PLANCTL_EINVAL:
    case PLANCTL_EDEFINITION:
    case PLANCTL_EPREFLIGHT:
        return 400;
    case PLANCTL_ENOTFOUND:
        return 404;
    case PLANCTL_ECONFLICT:
    case PLANCTL_ESTALE:
    case PLANCTL_ETRANSITION:
        return 409;
    case PLANCTL_EBUSY:
        return 503;
    default:
        return 500;
    }
}

static void error_page(web_res *res, const web_req *r, int status,
                       const char *msg, const char *instance)
{
    web_req plain = *r;

    pctl_wb_free(&res->body);
    plain.live = 0;
    page_head(res, &plain, "Error");
    page_main(res, &plain, NULL);
    res->status = status;
    res->type = "text/html; charset=utf-8";
    pctl_wb_add(&res->body, "<h1>Error</h1><p id=\"error\" role=\"alert\">");
    pctl_wb_text(&res->body, msg);
    pctl_wb_add(&res->body, "</p><p>");
    if (instance) {
        pctl_wb_add(&res->body, "<a id=\"back\" href=\"");
        instance_href(&res->body, instance);
        pctl_wb_add(&res->body, "\">Back to ");
        pctl_wb_text(&res->body, instance);
        pctl_wb_add(&res->body, "</a> \xC2\xB7 ");
    }
    pctl_wb_add(&res->body, "<a href=\"/\">All instances</a></p>");
    page_main_end(res, &plain);
    page_end(res, &plain);
}

void pctl_web_page_error(web_res *res, const web_req *r, int status,
                         const char *msg)
{
    error_page(res, r, status, msg, NULL);
}

void pctl_web_page_refused(web_res *res, const web_req *r, int status,
                           const char *msg, const char *instance)
{
    error_page(res, r, status, msg, instance);
}

/* A library call failed: its message on an error page. */
static void failed(web_res *res, planctl *p, const web_req *r, int rc)
{
    pctl_web_page_error(res, r, pctl_web_http_status(rc), planctl_errmsg(p));
}

/* ---- instances ---- */

/* A link to the instances page with the current filter and these. */
static void list_href(wb *w, const web_req *r, const char *sort,
                      const char *order, int64_t page)
{
    const char *name = pctl_web_param(r, "name"),
               *st = pctl_web_param(r, "status");

    pctl_wb_add(w, "/?sort=");
    pctl_wb_url(w, sort);
    pctl_wb_add(w, "&amp;order=");
    pctl_wb_url(w, order);
    if (name && *name) {
        pctl_wb_add(w, "&amp;name=");
        pctl_wb_url(w, name);
    }
    if (st && *st) {
        pctl_wb_add(w, "&amp;status=");
        pctl_wb_url(w, st);
    }
    if (page > 1)
        pctl_wb_addf(w, "&amp;page=%lld", (long long)page);
}

static void sort_th(wb *w, const web_req *r, const char *key, const char *label,
                    const char *sort, int desc)
{
    int on = !strcmp(sort, key);

    pctl_wb_add(w, "<th scope=\"col\"");
    if (on)
        pctl_wb_add(w, desc ? " aria-sort=\"descending\""
                            : " aria-sort=\"ascending\"");
    pctl_wb_add(w, "><a href=\"");
    list_href(w, r, key, on && !desc ? "desc" : "asc", 1);
    pctl_wb_add(w, "\">");
    pctl_wb_add(w, label);
    if (on)
        pctl_wb_add(w, desc ? " \xE2\x86\x93" : " \xE2\x86\x91");
    pctl_wb_add(w, "</a></th>");
}

void pctl_web_page_instances(web_res *res, planctl *p, const web_req *r)
{
    pctl_ipage_query q = {0};
    const char *sort = pctl_web_param(r, "sort"),
               *order = pctl_web_param(r, "order");
    const char *name = pctl_web_param(r, "name"),
               *st = pctl_web_param(r, "status");
    const char *pg = pctl_web_param(r, "page");
    int64_t page = pg ? atoll(pg) : 1, total = -1;
    json_t *doc = NULL, *arr, *o;
    wb *w = &res->body;
    planctl_status filter;
    size_t i;
    int rc;

    if (!sort || (strcmp(sort, "status") && strcmp(sort, "age")))
        sort = "name";
    if (page < 1 || page > 1000000)
        page = 1;
    q.name = name && *name ? name : NULL;
    if (st && planctl_status_parse(&filter, st) == 0)
        q.status = planctl_status_name(filter);
    q.sort = sort;
    q.desc = order && !strcmp(order, "desc");
    q.limit = PAGE_SIZE;
    q.offset = (page - 1) * PAGE_SIZE;
    if ((rc = pctl_instances_page(&doc, p, &q)) < 0) {
        failed(res, p, r, rc);
        return;
    }
    ji(&total, doc, "total");
    arr = json_object_get(doc, "instances");

    page_head(res, r, "Instances");
    if (!r->live) {
        /* The filter: a GET form, outside the live region. */
        pctl_wb_add(w, "<h1>Instances</h1><form id=\"filter\" method=\"get\" "
                       "action=\"/\" role=\"search\"><label>Name contains "
                       "<input name=\"name\" type=\"search\" value=\"");
        pctl_wb_text(w, q.name);
        pctl_wb_add(w, "\"></label> <label>Status <select name=\"status\">"
                       "<option value=\"\">any</option>");
        for (i = 0; i < PLANCTL_STATUS__COUNT; i++)
            pctl_wb_addf(w, "<option%s>%s</option>",
                         q.status == planctl_status_name((planctl_status)i)
                             ? " selected"
                             : "",
                         planctl_status_name((planctl_status)i));
        pctl_wb_add(w, "</select></label> <input type=\"hidden\" name=\"sort\" "
                       "value=\"");
        pctl_wb_text(w, sort);
        pctl_wb_add(w, "\"><button>Filter</button></form>");
    }
    page_main(res, r, "/");

    if (total >= 0)
        pctl_wb_addf(w, "<p class=\"count\">%lld instance%s%s</p>",
                     (long long)total, total == 1 ? "" : "s",
                     q.name || q.status ? " match" : "");
    if (json_array_size(arr) == 0) {
        pctl_wb_add(w, "<p id=\"empty\">");
        pctl_wb_add(w, q.name || q.status ? "No instance matches the filter."
                                          : "No instance yet: create one with "
                                            "<code>planctl create</code>.");
        pctl_wb_add(w, "</p>");
    } else {
        pctl_wb_add(
            w, "<div class=\"scroll\"><table id=\"instances\"><thead><tr>");
        sort_th(w, r, "name", "Name", sort, q.desc);
        pctl_wb_add(w, "<th scope=\"col\">Definition</th>");
        sort_th(w, r, "status", "Status", sort, q.desc);
        pctl_wb_add(
            w, "<th scope=\"col\">Run</th><th scope=\"col\">Progress</th>");
        sort_th(w, r, "age", "Age", sort, q.desc);
        pctl_wb_add(w, "<th scope=\"col\">Queued</th></tr></thead><tbody>\n");
        json_array_foreach(arr, i, o)
        {
            const json_t *run = json_object_get(o, "run"),
                         *def = json_object_get(o, "definition");
            int64_t id = 0, done = 0, all = 0, queued = 0;

            pctl_wb_add(w, "<tr data-instance=\"");
            pctl_wb_text(w, js(o, "name"));
            pctl_wb_add(w, "\"><td class=\"name\"><a href=\"");
            instance_href(w, js(o, "name"));
            pctl_wb_add(w, "\">");
            pctl_wb_text(w, js(o, "name"));
            pctl_wb_add(w, "</a>");
            if (json_is_true(json_object_get(o, "deleting")))
                pctl_wb_add(w, " <span class=\"tag\">deleting</span>");
            pctl_wb_add(w, "</td><td class=\"definition\">");
            pctl_wb_text(w, js(def, "name"));
            pctl_wb_add(w, "@");
            pctl_wb_text(w, js(def, "version"));
            pctl_wb_add(w, "</td><td class=\"status\">");
            status_span(w, js(o, "status"));
            pctl_wb_add(w, "</td><td class=\"run\">");
            if (json_is_object(run) && ji(&id, run, "id")) {
                run_link(w, js(o, "name"), id);
                pctl_wb_add(w, " ");
                pctl_wb_text(w, js(run, "plan"));
            }
            pctl_wb_add(w, "</td><td class=\"progress\">");
            if (json_is_object(run) && ji(&done, run, "steps_done") &&
                ji(&all, run, "steps_total") && all > 0)
                pctl_wb_addf(
                    w,
                    "<progress max=\"%lld\" value=\"%lld\"></progress> "
                    "%lld/%lld steps",
                    (long long)all, (long long)done, (long long)done,
                    (long long)all);
            pctl_wb_add(w, "</td><td class=\"age\">");
            time_el_as(w,
                       json_is_object(run)
                           ? (js(run, "started_at") ? js(run, "started_at")
                                                    : js(run, "created_at"))
                           : NULL,
                       1);
            ji(&queued, o, "queued");
            pctl_wb_addf(w, "</td><td class=\"queue\">%lld</td></tr>\n",
                         (long long)queued);
        }
        pctl_wb_add(w, "</tbody></table></div>");
    }
    if (page > 1 || (total > page * PAGE_SIZE) ||
        (total < 0 && json_array_size(arr) == PAGE_SIZE)) {
        pctl_wb_add(w, "<nav class=\"pager\" aria-label=\"Pages\">");
        if (page > 1) {
            pctl_wb_add(w, "<a rel=\"prev\" href=\"");
            list_href(w, r, sort, q.desc ? "desc" : "asc", page - 1);
            pctl_wb_add(w, "\">\xE2\x86\x90 Previous</a> ");
        }
        pctl_wb_addf(w, "<span>page %lld", (long long)page);
        if (total >= 0)
            pctl_wb_addf(w, " of %lld",
                         (long long)((total + PAGE_SIZE - 1) / PAGE_SIZE));
        pctl_wb_add(w, "</span>");
        if (total < 0 || total > page * PAGE_SIZE) {
            pctl_wb_add(w, " <a rel=\"next\" href=\"");
            list_href(w, r, sort, q.desc ? "desc" : "asc", page + 1);
            pctl_wb_add(w, "\">Next \xE2\x86\x92</a>");
        }
        pctl_wb_add(w, "</nav>");
    }
    page_main_end(res, r);
    page_end(res, r);
    json_decref(doc);
}

/* ---- the tree ---- */

/* A step's line: name, status, attempts, next try, message. */
static void step_li(wb *w, const json_t *step)
{
    int64_t att = 0, max = 0;

    pctl_wb_add(w, "<li class=\"step\" data-step=\"");
    pctl_wb_text(w, js(step, "name"));
    pctl_wb_add(w, "\"><span class=\"name\">");
    pctl_wb_text(w, js(step, "name"));
    pctl_wb_add(w, "</span> ");
    status_span(w, js(step, "status"));
    if (ji(&att, step, "attempt") && ji(&max, step, "max_attempts") &&
        (att > 1 || max > 1))
        pctl_wb_addf(w, " <span class=\"attempts\">attempt %lld/%lld</span>",
                     (long long)att, (long long)max);
    pctl_wb_add(w, " <span class=\"dur\">");
    /* A step in ERROR waits for its next try: it does not run (`planctl
     * status` says "next try in 5s", so does app.js from data-until). */
    if (!js(step, "status") || strcmp(js(step, "status"), "ERROR") != 0)
        duration_el(w, step);
    pctl_wb_add(w, "</span>");
    if (js(step, "next_attempt_at")) {
        pctl_wb_add(w, " <span class=\"next\">next try <time data-until "
                       "datetime=\"");
        pctl_wb_text(w, js(step, "next_attempt_at"));
        pctl_wb_add(w, "\" title=\"");
        pctl_wb_text(w, js(step, "next_attempt_at"));
        pctl_wb_add(w, "\">at ");
        utc_text(w, js(step, "next_attempt_at"));
        pctl_wb_add(w, "</time></span>");
    }
    wrap(w, "<div class=\"msg\">", js(step, "message"), "</div>");
    pctl_wb_add(w, "</li>");
}

/* The phases of a run, each a <details> that app.js keeps open or closed
 * across updates (by its id); a big one starts closed, with its counts. */
static void phases_ul(wb *w, const char *plan, const json_t *run)
{
    const json_t *phase, *step;
    size_t i, j;

    pctl_wb_add(w, "<ul class=\"phases\">");
    json_array_foreach(json_object_get(run, "phases"), i, phase)
    {
        const json_t *steps = json_object_get(phase, "steps");
        size_t n = json_array_size(steps), k;
        size_t count[PLANCTL_STATUS__COUNT] = {0};

        pctl_wb_add(w, "<li><details class=\"phase\" data-phase=\"");
        pctl_wb_text(w, js(phase, "name"));
        pctl_wb_add(w, "\" id=\"phase-");
        pctl_wb_text(w, plan);
        pctl_wb_add(w, "-");
        pctl_wb_text(w, js(phase, "name"));
        pctl_wb_add(w, n > BIG_PHASE ? "\">" : "\" open>");
        pctl_wb_add(w, "<summary>Phase <span class=\"name\">");
        pctl_wb_text(w, js(phase, "name"));
        pctl_wb_add(w, "</span> (");
        pctl_wb_text(w, js(phase, "strategy"));
        pctl_wb_add(w, ") ");
        status_span(w, js(phase, "status"));
        pctl_wb_add(w, " <span class=\"dur\">");
        duration_el(w, phase);
        pctl_wb_add(w, "</span>");
        if (n > BIG_PHASE) {
            pctl_wb_addf(w, " <span class=\"counts\">%zu steps:", n);
            json_array_foreach(steps, j, step)
            {
                planctl_status st;

                if (js(step, "status") &&
                    planctl_status_parse(&st, js(step, "status")) == 0)
                    count[st]++;
            }
            for (k = 0; k < PLANCTL_STATUS__COUNT; k++)
                if (count[k])
                    pctl_wb_addf(w, " %zu %s", count[k],
                                 planctl_status_name((planctl_status)k));
            pctl_wb_add(w, "</span>");
        }
        wrap(w, " <span class=\"msg\">", js(phase, "message"), "</span>");
        pctl_wb_add(w, "</summary><ul class=\"steps\">");
        json_array_foreach(steps, j, step) step_li(w, step);
        pctl_wb_add(w, "</ul></details></li>");
    }
    pctl_wb_add(w, "</ul>");
}

/* A run's own line: status, id, times, message. */
static void run_line(wb *w, const char *instance, const json_t *run)
{
    int64_t id = 0;

    status_span(w, js(run, "status"));
    if (ji(&id, run, "id")) {
        pctl_wb_add(w, " ");
        run_link(w, instance, id);
    }
    if (js(run, "finished_at")) {
        pctl_wb_add(w, ", finished ");
        time_el(w, js(run, "finished_at"));
    } else if (js(run, "started_at")) {
        pctl_wb_add(w, ", started ");
        time_el(w, js(run, "started_at"));
    } else if (js(run, "created_at")) {
        pctl_wb_add(w, ", created ");
        time_el(w, js(run, "created_at"));
    }
    pctl_wb_add(w, " <span class=\"dur\">");
    duration_el(w, run);
    pctl_wb_add(w, "</span>");
    wrap(w, "<div class=\"msg\">", js(run, "message"), "</div>");
}

/* Why run id waits, when the document's "waiting" says so: "waits for a
 * free slot ..." inside a span of class waits, after a space. */
static void waiting_span(wb *w, const json_t *doc, int64_t id)
{
    const json_t *wt = json_object_get(doc, "waiting");
    const char *cause = js(wt, "cause");
    int64_t run = 0, conc = 0;

    if (!cause || !ji(&run, wt, "run") || run != id)
        return;
    pctl_wb_add(w, " <span class=\"waits\">");
    if (!strcmp(cause, "executor")) {
        pctl_wb_add(w, "waits for an engine with task kind <code>");
        pctl_wb_text(w, js(wt, "kind") ? js(wt, "kind") : "?");
        pctl_wb_add(w, "</code>");
    } else if (!strcmp(cause, "capacity")) {
        pctl_wb_add(w, "waits for an engine with room (every engine holds its "
                       "capacity of active runs)");
    } else if (ji(&conc, wt, "concurrency")) {
        pctl_wb_addf(w,
                     "waits for a free slot (the engine runs %lld step%s at "
                     "once)",
                     (long long)conc, conc == 1 ? "" : "s");
    } else {
        pctl_wb_add(w, "waits for a free slot of the engine");
    }
    if (js(wt, "since")) {
        pctl_wb_add(w, " since ");
        time_el(w, js(wt, "since"));
    }
    pctl_wb_add(w, "</span>");
}

/* Who runs the instance's work: the engine line of `planctl status`. */
static void engine_p(wb *w, const json_t *doc)
{
    const json_t *e = json_object_get(doc, "engine");
    int64_t pid = 0;

    if (!json_is_integer(json_object_get(doc, "active_run")) &&
        json_array_size(json_object_get(doc, "queued")) == 0)
        return;
    pctl_wb_add(w, "<p class=\"engine\" id=\"engine\">");
    if (!json_is_object(e)) {
        pctl_wb_add(w, "No engine is running: nothing moves until "
                       "<code>planctl run</code> starts.</p>");
        return;
    }
    pctl_wb_add(w, "Engine ");
    if (js(e, "name")) {
        pctl_wb_text(w, js(e, "name"));
        pctl_wb_add(w, " ");
    }
    if (ji(&pid, e, "pid"))
        pctl_wb_addf(w, "(pid %lld on ", (long long)pid);
    pctl_wb_text(w, js(e, "host"));
    pctl_wb_add(w, ") holds the run, last seen ");
    time_el(w, js(e, "last_seen"));
    if (json_is_false(json_object_get(e, "alive")))
        pctl_wb_add(w, " <strong>(not alive)</strong>");
    /* What it holds the run for, when the run waits. */
    {
        int64_t run = 0;

        if (ji(&run, json_object_get(doc, "waiting"), "run")) {
            pctl_wb_addf(w, "; run %lld", (long long)run);
            waiting_span(w, doc, run);
        }
    }
    pctl_wb_add(w, "</p>");
}

/* ---- one instance ---- */

static void params_section(wb *w, const json_t *doc)
{
    const json_t *params = json_object_get(doc, "parameters"), *pa;
    size_t i;

    pctl_wb_add(w, "<section id=\"params\"><h2>Parameters</h2>");
    if (json_array_size(params) == 0) {
        pctl_wb_add(w, "<p>None.</p></section>");
        return;
    }
    pctl_wb_add(w,
                "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Name"
                "</th><th scope=\"col\">Value</th><th scope=\"col\">From</th>"
                "</tr></thead><tbody>");
    json_array_foreach(params, i, pa)
    {
        const json_t *v = json_object_get(pa, "value");

        pctl_wb_add(w, "<tr data-param=\"");
        pctl_wb_text(w, js(pa, "name"));
        pctl_wb_add(w, "\"><td class=\"name\">");
        pctl_wb_text(w, js(pa, "name"));
        if (json_is_true(json_object_get(pa, "secret"))) {
            pctl_wb_add(w, "</td><td class=\"value secret\">(secret)");
        } else if (json_is_null(v) || !v) {
            pctl_wb_add(w, "</td><td class=\"value none\">unset");
        } else {
            pctl_wb_add(w, "</td><td class=\"value\">");
            if (json_is_string(v)) {
                pctl_wb_text(w, json_string_value(v));
            } else {
                char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

                if (!t)
                    w->oom = 1;
                pctl_wb_text(w, t);
                free(t);
            }
        }
        pctl_wb_add(w, "</td><td>");
        pctl_wb_add(w, json_is_true(json_object_get(pa, "default")) ? "default"
                                                                    : "set");
        pctl_wb_add(w, "</td></tr>");
    }
    pctl_wb_add(w, "</tbody></table></div></section>");
}

/* The document a section shows (*text, which the call that gave rc
 * set, freed here), or NULL after writing the library's message and
 * closing the section. */
static json_t *section_doc(wb *w, planctl *p, int rc, char **text)
{
    json_t *doc = rc < 0 ? NULL : json_loads(*text, 0, NULL);

    planctl_free(*text);
    *text = NULL;
    if (!doc) {
        pctl_wb_add(w, "<p class=\"error\">");
        pctl_wb_text(w, rc < 0 ? planctl_errmsg(p) : "out of memory");
        pctl_wb_add(w, "</p></section>");
    }
    return doc;
}

/* The instance's last HISTORY_RUNS runs (newest first), or NULL with
 * *err the library's message (a new string; NULL when out of memory). */
static json_t *history_doc(planctl *p, const char *name, char **err)
{
    planctl_history_options ho = PLANCTL_HISTORY_OPTIONS_INIT;
    char *text = NULL;
    json_t *doc = NULL;

    *err = NULL;
    ho.limit = HISTORY_RUNS;
    if (planctl_history_json(&text, p, name, &ho) < 0)
        *err = pctl_strdup(planctl_errmsg(p));
    else if (!(doc = json_loads(text, 0, NULL)))
        *err = pctl_strdup("out of memory");
    planctl_free(text);
    return doc;
}

/* The runs of history_doc(), or err. */
static void history_section(wb *w, const char *name, const json_t *doc,
                            const char *err)
{
    const json_t *run;
    size_t i;

    pctl_wb_add(w, "<section id=\"history\"><h2>History</h2>");
    if (!doc) {
        wrap(w, "<p class=\"error\">", err ? err : "out of memory", "</p>");
        pctl_wb_add(w, "</section>");
        return;
    }
    pctl_wb_add(w,
                "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Run"
                "</th><th scope=\"col\">Plan</th><th scope=\"col\">Status</th>"
                "<th scope=\"col\">Trigger</th><th scope=\"col\">Created</th>"
                "<th scope=\"col\">Took</th><th scope=\"col\">Message</th></tr>"
                "</thead><tbody>");
    json_array_foreach(json_object_get(doc, "runs"), i, run)
    {
        int64_t id = 0;

        ji(&id, run, "id");
        pctl_wb_addf(w, "<tr data-run=\"%lld\"><td>", (long long)id);
        run_link(w, name, id);
        pctl_wb_add(w, "</td><td>");
        pctl_wb_text(w, js(run, "plan"));
        pctl_wb_add(w, "</td><td>");
        status_span(w, js(run, "status"));
        pctl_wb_add(w, "</td><td>");
        pctl_wb_text(w, js(run, "trigger"));
        if (js(run, "reason")) {
            pctl_wb_add(w, ": ");
            pctl_wb_text(w, js(run, "reason"));
        }
        pctl_wb_add(w, "</td><td>");
        time_el(w, js(run, "created_at"));
        pctl_wb_add(w, "</td><td>");
        duration_el(w, run);
        pctl_wb_add(w, "</td><td class=\"msg\">");
        pctl_wb_text(w, js(run, "message"));
        pctl_wb_add(w, "</td></tr>");
    }
    pctl_wb_add(w, "</tbody></table></div></section>");
}

/* A library document (*text, which the call that gave rc set, freed
 * here), parsed; NULL after writing the error page. */
static json_t *page_doc(web_res *res, planctl *p, const web_req *r, int rc,
                        char **text)
{
    json_t *doc = NULL;

    if (rc < 0)
        failed(res, p, r, rc);
    else if (!(doc = json_loads(*text, 0, NULL)))
        res->body.oom = 1;
    planctl_free(*text);
    *text = NULL;
    return doc;
}

/* An instance's status document (with run: that run's, attempts and
 * all), or NULL after writing the error page. */
static json_t *status_doc(web_res *res, planctl *p, const web_req *r,
                          const char *name, int64_t run)
{
    planctl_status_options so = PLANCTL_STATUS_OPTIONS_INIT;
    char *text = NULL;

    so.run = run;
    return page_doc(res, p, r, planctl_status_json(&text, p, name, &so), &text);
}

/* The actions of the page's forms, as bits of a set. */
static const char *const action_names[] = {"trigger", "cancel", "pause",
                                           "resume", "retry"};
enum {
    ACT_TRIGGER = 1,
    ACT_CANCEL = 2,
    ACT_PAUSE = 4,
    ACT_RESUME = 8,
    ACT_RETRY = 16
};

/* The status of run id in a history document's runs, else in a status
 * document's plans; NULL when neither has it. */
static const char *run_status(const json_t *doc, const json_t *hist, int64_t id)
{
    const json_t *o;
    int64_t v = 0;
    size_t i;

    json_array_foreach(json_object_get(hist, "runs"), i,
                       o) if (ji(&v, o, "id") && v == id) return js(o,
                                                                    "status");
    json_array_foreach(json_object_get(doc, "plans"), i, o)
    {
        const json_t *run = json_object_get(o, "run");

        if (json_is_object(run) && ji(&v, run, "id") && v == id)
            return js(run, "status");
    }
    return NULL;
}

/* The plan of run id of instance name: from the history document when
 * it lists the run (the newest runs, where queued ones are), else asked
 * of the library for that one run; NULL when neither has it.  A new
 * string. */
static char *run_plan(planctl *p, const char *name, const json_t *hist,
                      int64_t id)
{
    planctl_history_options ho = PLANCTL_HISTORY_OPTIONS_INIT;
    const json_t *o, *one;
    json_t *doc;
    char *text = NULL, *plan = NULL;
    int64_t v = 0;
    size_t i;

    json_array_foreach(json_object_get(hist, "runs"), i, o)
    {
        if (ji(&v, o, "id") && v == id)
            return js(o, "plan") ? pctl_strdup(js(o, "plan")) : NULL;
    }
    ho.limit = 1;
    ho.before = id + 1;
    if (planctl_history_json(&text, p, name, &ho) < 0)
        return NULL;
    doc = json_loads(text, 0, NULL);
    planctl_free(text);
    one = json_array_get(json_object_get(doc, "runs"), 0);
    if (ji(&v, one, "id") && v == id && js(one, "plan"))
        plan = pctl_strdup(js(one, "plan"));
    json_decref(doc);
    return plan;
}

/* The actions the library would take now (DESIGN.md, statuses and
 * admission), from the instance's status document and its history:
 * trigger always (queued behind an active run); cancel while a run is
 * active; pause an IN_PROGRESS one, resume a PAUSED one; retry, with no
 * run active, when the latest run ended FATAL_ERROR or CANCELLED (the
 * run a retry without a run id takes). */
static unsigned applicable(const json_t *doc, const json_t *hist)
{
    unsigned set = ACT_TRIGGER;
    int64_t active = 0;
    const char *st;

    if (ji(&active, doc, "active_run")) {
        st = run_status(doc, hist, active);
        set |= ACT_CANCEL;
        if (!st || !strcmp(st, "IN_PROGRESS"))
            set |= ACT_PAUSE;
        if (!st || !strcmp(st, "PAUSED"))
            set |= ACT_RESUME;
        return set;
    }
    st = js(json_array_get(json_object_get(hist, "runs"), 0), "status");
    if (!hist ||
        (st && (!strcmp(st, "FATAL_ERROR") || !strcmp(st, "CANCELLED"))))
        set |= ACT_RETRY;
    return set;
}

/* Inside the live region: the actions that apply now, for app.js to
 * show only their forms as the page updates (the forms stay outside the
 * region, so that an update never takes the text being typed). */
static void applicable_div(wb *w, const web_req *r, unsigned set)
{
    size_t i;
    int first = 1;

    if (!r->opts->allow_actions || !r->opts->csrf)
        return;
    pctl_wb_add(w, "<div id=\"applicable\" hidden data-actions=\"");
    for (i = 0; i < sizeof action_names / sizeof action_names[0]; i++)
        if (set & (1u << i)) {
            pctl_wb_add(w, first ? "" : " ");
            pctl_wb_add(w, action_names[i]);
            first = 0;
        }
    pctl_wb_add(w, "\"></div>");
}

/* Opens the form of action on instance name, with the form token;
 * hidden when it does not apply now (set). */
static void form_open(wb *w, const web_req *r, const char *name,
                      const char *action, unsigned set)
{
    size_t i;

    pctl_wb_add(w, "<form method=\"post\" data-action=\"");
    pctl_wb_add(w, action);
    pctl_wb_add(w, "\"");
    for (i = 0; i < sizeof action_names / sizeof action_names[0]; i++)
        if (!strcmp(action, action_names[i]) && !(set & (1u << i)))
            pctl_wb_add(w, " hidden");
    pctl_wb_add(w, " action=\"");
    instance_href(w, name);
    pctl_wb_add(w, "/");
    pctl_wb_add(w, action);
    pctl_wb_add(w, "\"><input type=\"hidden\" name=\"csrf\" value=\"");
    pctl_wb_text(w, r->opts->csrf);
    pctl_wb_add(w, "\">");
}

/* The forms of the actions, outside the live region. */
static void actions_section(wb *w, const web_req *r, const char *name,
                            const json_t *doc, unsigned set)
{
    const json_t *plan;
    size_t i;

    pctl_wb_add(
        w, "<section id=\"actions\" aria-label=\"Actions\"><h2>Actions</h2>");
    if (!r->opts->allow_actions || !r->opts->csrf) {
        pctl_wb_add(w, "<p id=\"readonly\">This server is read-only: start "
                       "<code>planctl serve --allow-actions</code> to trigger, "
                       "cancel, pause, resume or retry from this page.</p>"
                       "</section>");
        return;
    }
    form_open(w, r, name, "trigger", set);
    pctl_wb_add(w, "<label>Plan <select name=\"plan\">");
    json_array_foreach(json_object_get(doc, "plans"), i, plan)
        wrap(w, "<option>", js(plan, "name"), "</option>");
    pctl_wb_add(
        w, "</select></label> <label>Reason <input name=\"reason\" "
           "maxlength=\"500\"></label> <label><input type=\"checkbox\" "
           "name=\"queue\" value=\"1\"> queue behind the active run</label> "
           "<button>Trigger</button></form>");
    form_open(w, r, name, "cancel", set);
    pctl_wb_add(
        w, "<label>Reason <input name=\"reason\" maxlength=\"500\"></label> "
           "<button>Cancel the active run</button></form>");
    form_open(w, r, name, "pause", set);
    pctl_wb_add(w, "<button>Pause</button></form>");
    form_open(w, r, name, "resume", set);
    pctl_wb_add(w, "<button>Resume</button></form>");
    form_open(w, r, name, "retry", set);
    pctl_wb_add(w,
                "<label>Run <input name=\"run\" inputmode=\"numeric\" "
                "pattern=\"[0-9]*\" size=\"6\" placeholder=\"latest\"></label> "
                "<button>Retry</button></form>");
    pctl_wb_add(w, "</section>");
}

void pctl_web_page_instance(web_res *res, planctl *p, const web_req *r,
                            const char *name)
{
    json_t *doc = status_doc(res, p, r, name, 0), *plan, *q, *hist;
    const json_t *def;
    wb *w = &res->body;
    char *herr = NULL;
    unsigned set;
    size_t i;

    if (!doc)
        return;
    hist = history_doc(p, name, &herr);
    set = applicable(doc, hist);
    def = json_object_get(doc, "definition");
    page_head(res, r, name);
    if (!r->live) {
        pctl_wb_add(w, "<h1>");
        pctl_wb_text(w, name);
        pctl_wb_add(w, "</h1><p class=\"sub\">definition ");
        pctl_wb_text(w, js(def, "name"));
        pctl_wb_add(w, "@");
        pctl_wb_text(w, js(def, "version"));
        pctl_wb_add(w, "</p>");
        actions_section(w, r, name, doc, set);
    }
    {
        wb path = {PCTL_BUF_INIT, 0};
        size_t n;
        char *s;

        instance_href(&path, name);
        s = pctl_wb_take(&path, &n);
        if (!s)
            w->oom = 1;
        page_main(res, r, s ? s : "/");
        free(s);
    }
    applicable_div(w, r, set);
    engine_p(w, doc);
    pctl_wb_add(w, "<section id=\"tree\"><h2>Plans</h2><ul class=\"plans\">");
    json_array_foreach(json_object_get(doc, "plans"), i, plan)
    {
        const json_t *run = json_object_get(plan, "run");

        pctl_wb_add(w, "<li class=\"plan\" data-plan=\"");
        pctl_wb_text(w, js(plan, "name"));
        pctl_wb_add(w, "\"><div class=\"line\">Plan <span class=\"name\">");
        pctl_wb_text(w, js(plan, "name"));
        pctl_wb_add(w, "</span> (");
        pctl_wb_text(w, js(plan, "strategy"));
        pctl_wb_add(w, ") ");
        if (json_is_object(run)) {
            int64_t id = 0;

            run_line(w, name, run);
            if (ji(&id, run, "id"))
                waiting_span(w, doc, id);
        } else {
            status_span(w, js(plan, "status"));
        }
        pctl_wb_add(w, "</div>");
        if (json_is_object(run))
            phases_ul(w, js(plan, "name"), run);
        pctl_wb_add(w, "</li>");
    }
    pctl_wb_add(w, "</ul></section>");
    pctl_wb_add(w, "<section id=\"queue\"><h2>Queue</h2>");
    if (json_array_size(json_object_get(doc, "queued")) == 0)
        pctl_wb_add(w, "<p>No run waits.</p>");
    else {
        pctl_wb_add(w, "<ol>");
        json_array_foreach(json_object_get(doc, "queued"), i, q)
        {
            int64_t id = (int64_t)json_integer_value(q);
            char *qplan = run_plan(p, name, hist, id);

            pctl_wb_add(w, "<li>");
            run_link(w, name, id);
            if (qplan)
                wrap(w, " of plan <span class=\"plan\">", qplan, "</span>");
            pctl_free(qplan);
            /* Removed from the queue before it starts.  In the live
             * region, so a run that joins the queue gets its button
             * with the update that shows it. */
            if (r->opts->allow_actions && r->opts->csrf) {
                pctl_wb_add(w, " ");
                form_open(w, r, name, "cancel", ~0u);
                pctl_wb_addf(w,
                             "<input type=\"hidden\" name=\"run\" "
                             "value=\"%lld\"><input type=\"hidden\" "
                             "name=\"queued\" value=\"1\"><button "
                             "aria-label=\"Cancel run %lld\">Cancel</button>"
                             "</form>",
                             (long long)id, (long long)id);
            }
            pctl_wb_add(w, "</li>");
        }
        pctl_wb_add(w, "</ol>");
    }
    pctl_wb_add(w, "</section>");
    params_section(w, doc);
    history_section(w, name, hist, herr);
    page_main_end(res, r);
    page_end(res, r);
    pctl_free(herr);
    json_decref(hist);
    json_decref(doc);
}

/* ---- one run ---- */

/* The status document of run id of instance name, with the run object
 * (*run) and its plan's name (*plan); NULL after writing the error page
 * (404 when the instance has no such run). */
static json_t *run_doc(web_res *res, planctl *p, const web_req *r,
                       const char *name, int64_t id, const json_t **run,
                       const char **plan)
{
    json_t *doc = status_doc(res, p, r, name, id);
    const json_t *pl;
    size_t i;

    json_array_foreach(json_object_get(doc, "plans"), i, pl)
    {
        const json_t *o = json_object_get(pl, "run");
        int64_t rid = 0;

        if (json_is_object(o) && ji(&rid, o, "id") && rid == id) {
            *plan = js(pl, "name");
            *run = o;
            return doc;
        }
    }
    if (doc) {
        json_decref(doc);
        pctl_web_page_error(res, r, 404, "not found: no such run");
    }
    return NULL;
}

/* Whether run has an attempt that has not ended. */
static int has_running_attempt(const json_t *run)
{
    const json_t *phase, *step, *a;
    size_t i, j, k;

    json_array_foreach(json_object_get(run, "phases"), i, phase)
        json_array_foreach(json_object_get(phase, "steps"), j, step)
            json_array_foreach(json_object_get(step, "attempts"), k, a)
    {
        if (!js(a, "finished_at"))
            return 1;
    }
    return 0;
}

/* The output so far of attempt num of step of phase, from a logs
 * document's attempts, or NULL. */
static const char *live_output(const json_t *logs, const char *phase,
                               const char *step, int64_t num)
{
    const json_t *a;
    int64_t n = 0;
    size_t i;

    json_array_foreach(logs, i, a)
    {
        if (ji(&n, a, "attempt") && n == num && js(a, "phase") && phase &&
            !strcmp(js(a, "phase"), phase) && js(a, "step") && step &&
            !strcmp(js(a, "step"), step))
            return js(a, "output");
    }
    return NULL;
}

/* The attempts of a run, each with its output (an unfinished one's from
 * logs, the attempts of a logs document: the status document has an
 * attempt's output only once it has ended); *running set when one is
 * unfinished, *count and *done counted. */
static void attempts_section(wb *w, const json_t *run, const json_t *logs,
                             int *running, size_t *count, size_t *done)
{
    const json_t *phase, *step, *a;
    size_t i, j, k;

    pctl_wb_add(w, "<section id=\"attempts\"><h2>Attempts</h2>");
    json_array_foreach(json_object_get(run, "phases"), i, phase)
        json_array_foreach(json_object_get(phase, "steps"), j, step)
            json_array_foreach(json_object_get(step, "attempts"), k, a)
    {
        int64_t num = 0, code = 0;

        ji(&num, a, "number");
        pctl_wb_add(w, "<section class=\"attempt\" data-step=\"");
        pctl_wb_text(w, js(step, "name"));
        pctl_wb_addf(w, "\" data-attempt=\"%lld\"><h3>", (long long)num);
        pctl_wb_text(w, js(phase, "name"));
        pctl_wb_add(w, " / ");
        pctl_wb_text(w, js(step, "name"));
        pctl_wb_addf(w, " \xC2\xB7 attempt %lld ", (long long)num);
        status_span(w, js(a, "status"));
        pctl_wb_add(w, "</h3><p class=\"times\">");
        time_el(w, js(a, "started_at"));
        pctl_wb_add(w, " \xE2\x86\x92 ");
        time_el(w, js(a, "finished_at"));
        (*count)++;
        if (!js(a, "finished_at"))
            *running = 1;
        else
            (*done)++;
        if (ji(&code, a, "exit_code"))
            pctl_wb_addf(
                w, " \xC2\xB7 <span class=\"exit-code\">exit code %lld</span>",
                (long long)code);
        pctl_wb_add(w, "</p>");
        wrap(w, "<p class=\"message\">", js(a, "message"), "</p>");
        {
            const char *out = js(a, "finished_at")
                                  ? js(a, "output")
                                  : live_output(logs, js(phase, "name"),
                                                js(step, "name"), num);

            if (out) {
                pctl_wb_add(w, "<pre class=\"output\" tabindex=\"0\">");
                pctl_wb_text(w, out);
                pctl_wb_add(w, "</pre>");
            } else {
                pctl_wb_add(w, js(a, "finished_at")
                                   ? "<p class=\"none\">No output.</p>"
                                   : "<p class=\"none\">No output yet.</p>");
            }
        }
        pctl_wb_add(w, "</section>");
    }
    pctl_wb_add(w, "</section>");
}

static void events_section(wb *w, planctl *p, const char *name, int64_t run)
{
    planctl_events_options eo = PLANCTL_EVENTS_OPTIONS_INIT;
    char *text = NULL;
    json_t *doc, *e;
    size_t i;

    eo.instance = name;
    eo.run = run;
    eo.tail = RUN_EVENTS;
    pctl_wb_add(w, "<section id=\"events\"><h2>Events</h2>");
    if (!(doc = section_doc(w, p, planctl_events_json(&text, p, &eo), &text)))
        return;
    pctl_wb_add(w,
                "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Seq"
                "</th><th scope=\"col\">At</th><th scope=\"col\">What</th>"
                "<th scope=\"col\">Change</th><th scope=\"col\">Message</th>"
                "<th scope=\"col\">By</th></tr></thead><tbody>");
    json_array_foreach(json_object_get(doc, "events"), i, e)
    {
        int64_t seq = 0, att = 0;

        ji(&seq, e, "seq");
        pctl_wb_addf(w, "<tr data-seq=\"%lld\"><td>%lld</td><td>",
                     (long long)seq, (long long)seq);
        time_el(w, js(e, "at"));
        pctl_wb_add(w, "</td><td>");
        pctl_wb_text(w, js(e, "entity"));
        if (js(e, "phase")) {
            pctl_wb_add(w, " ");
            pctl_wb_text(w, js(e, "phase"));
        }
        if (js(e, "step")) {
            pctl_wb_add(w, " / ");
            pctl_wb_text(w, js(e, "step"));
        }
        if (ji(&att, e, "attempt"))
            pctl_wb_addf(w, " #%lld", (long long)att);
        pctl_wb_add(w, "</td><td>");
        if (js(e, "to")) {
            pctl_wb_text(w, js(e, "from") ? js(e, "from") : "new");
            pctl_wb_add(w, " \xE2\x86\x92 ");
            pctl_wb_text(w, js(e, "to"));
        }
        pctl_wb_add(w, "</td><td class=\"msg\">");
        pctl_wb_text(w, js(e, "message"));
        pctl_wb_add(w, "</td><td>");
        pctl_wb_text(w, js(e, "actor"));
        pctl_wb_add(w, "</td></tr>");
    }
    pctl_wb_add(w, "</tbody></table></div></section>");
    json_decref(doc);
}

void pctl_web_page_run(web_res *res, planctl *p, const web_req *r,
                       const char *name, int64_t id)
{
    const json_t *run = NULL;
    const char *plan = NULL;
    json_t *doc = run_doc(res, p, r, name, id, &run, &plan), *logs = NULL;
    wb *w = &res->body;
    char title[300];
    int running = 0;
    size_t count = 0, done = 0;

    if (!doc)
        return;
    snprintf(title, sizeof title, "run %lld", (long long)id);
    page_head(res, r, title);
    if (!r->live) {
        pctl_wb_add(w, "<h1><a href=\"");
        instance_href(w, name);
        pctl_wb_add(w, "\">");
        pctl_wb_text(w, name);
        pctl_wb_addf(w, "</a> \xC2\xB7 run %lld</h1>", (long long)id);
    }
    page_main(res, r, "run");
    pctl_wb_add(w, "<section id=\"summary\"><p>Plan <span class=\"name\">");
    pctl_wb_text(w, plan);
    pctl_wb_add(w, "</span> ");
    run_line(w, name, run);
    pctl_wb_add(w, "</p><p class=\"sub\">trigger ");
    pctl_wb_text(w, js(run, "trigger"));
    wrap(w, " (", js(run, "reason"), ")");
    pctl_wb_add(w, ", definition version ");
    pctl_wb_text(w, js(run, "definition_version"));
    pctl_wb_add(w, "</p></section>");
    engine_p(w, doc);
    pctl_wb_add(w, "<section id=\"tree\"><h2>Phases</h2>");
    phases_ul(w, plan, run);
    pctl_wb_add(w, "</section>");
    /* The output running attempts wrote so far: what `planctl logs`
     * shows (an attempt's output is in the status document once it has
     * ended).  The page changes with it, and the server renders a page
     * that follows output every second (X-Planctl-Follow below). */
    if (has_running_attempt(run)) {
        planctl_logs_options lo = PLANCTL_LOGS_OPTIONS_INIT;
        char *text = NULL;

        lo.run = id;
        if (planctl_logs_json(&text, p, name, &lo) < 0)
            wrap(w, "<p class=\"error\" id=\"logs-error\">", planctl_errmsg(p),
                 "</p>");
        else if (!(logs = json_loads(text, 0, NULL)))
            w->oom = 1;
        planctl_free(text);
    }
    attempts_section(w, run, json_object_get(logs, "attempts"), &running,
                     &count, &done);
    pctl_wb_add(
        w, "<section id=\"timeline-box\"><h2>Timeline</h2><img id=\"timeline\" "
           "alt=\"The timeline of the run: a bar per attempt\" src=\"");
    instance_href(w, name);
    pctl_wb_addf(w, "/runs/%lld/timeline.svg", (long long)id);
    /* Changes with the run's attempts, so that an update loads it anew
     * (an <img> put back with the same address is not asked for again). */
    pctl_wb_add(w, "?v=");
    pctl_wb_url(w, js(run, "status"));
    pctl_wb_addf(w, "-%zu-%zu\"></section>", count, done);
    events_section(w, p, name, id);
    page_main_end(res, r);
    page_end(res, r);
    /* Output may grow with nothing else changing: the server looks
     * again every second while an attempt runs. */
    if (running)
        pctl_wb_add(&res->headers, "X-Planctl-Follow: 1\r\n");
    json_decref(logs);
    json_decref(doc);
}

/* ---- engines ---- */

void pctl_web_page_engines(web_res *res, planctl *p, const web_req *r)
{
    char *text = NULL;
    json_t *doc, *e;
    wb *w = &res->body;
    size_t i;

    if (!(doc = page_doc(res, p, r, planctl_engines_json(&text, p), &text)))
        return;
    page_head(res, r, "Engines");
    if (!r->live)
        pctl_wb_add(w, "<h1>Engines</h1>");
    page_main(res, r, "/engines");
    if (json_array_size(json_object_get(doc, "engines")) == 0) {
        pctl_wb_add(w,
                    "<p id=\"no-engine\">No engine is running: runs wait until "
                    "<code>planctl run</code> (or a controller that embeds "
                    "planctl) starts.</p>");
    } else {
        pctl_wb_add(
            w, "<div class=\"scroll\"><table id=\"engines\"><thead><tr>"
               "<th scope=\"col\">Name</th><th scope=\"col\">PID</th>"
               "<th scope=\"col\">Host</th><th scope=\"col\">Since</th>"
               "<th scope=\"col\">Last seen</th><th scope=\"col\">Alive</th>"
               "<th scope=\"col\">Runs</th><th scope=\"col\">Capacity</th>"
               "</tr></thead><tbody>");
        json_array_foreach(json_object_get(doc, "engines"), i, e)
        {
            int64_t pid = 0, runs = 0, cap = 0;
            int alive = json_is_true(json_object_get(e, "alive"));

            ji(&pid, e, "pid");
            pctl_wb_addf(w, "<tr data-engine=\"%lld\"><td>", (long long)pid);
            pctl_wb_text(w, js(e, "name") ? js(e, "name") : "\xE2\x80\x93");
            pctl_wb_addf(w, "</td><td>%lld</td><td>", (long long)pid);
            pctl_wb_text(w, js(e, "host"));
            pctl_wb_add(w, "</td><td>");
            time_el(w, js(e, "since"));
            pctl_wb_add(w, "</td><td>");
            time_el(w, js(e, "last_seen"));
            pctl_wb_add(w, "</td><td>");
            pctl_wb_add(w, alive ? "\xE2\x9C\x94 yes"
                                 : "\xE2\x9C\x96 no (gone or late)");
            pctl_wb_add(w, "</td><td>");
            if (ji(&runs, e, "runs"))
                pctl_wb_addf(w, "%lld", (long long)runs);
            else
                pctl_wb_add(w, "all");
            pctl_wb_add(w, "</td><td>");
            /* As `planctl engines` says it: 0 is no limit. */
            if (ji(&cap, e, "capacity") && cap > 0)
                pctl_wb_addf(w, "%lld", (long long)cap);
            else if (ji(&cap, e, "capacity"))
                pctl_wb_add(w, "no limit");
            pctl_wb_add(w, "</td></tr>");
        }
        pctl_wb_add(w, "</tbody></table></div>");
    }
    page_main_end(res, r);
    page_end(res, r);
    json_decref(doc);
}

/* ---- a run's timeline ---- */

void pctl_web_timeline(web_res *res, planctl *p, const web_req *r,
                       const char *name, int64_t id)
{
    const json_t *run = NULL;
    const char *plan = NULL;
    json_t *doc = run_doc(res, p, r, name, id, &run, &plan);

    if (!doc)
        return;
    res->status = 200;
    res->type = "image/svg+xml";
    pctl_web_render_svg(&res->body, name, run, pctl_now(p));
    json_decref(doc);
}
