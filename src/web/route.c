/*
 * route.c - planctl_web_respond(): a request's path, query and form
 * decoded; the page, document or action it names; the headers every
 * answer carries; ETag and 304 for what did not change.
 *
 *   GET  /                                  instances (pages.c)
 *   GET  /instances/NAME                    one instance
 *   GET  /instances/NAME/runs/ID            one run
 *   GET  /instances/NAME/runs/ID/timeline.svg
 *   GET  /engines
 *   GET  /assets/app.css, /assets/app.js    embedded at build time
 *   GET  /favicon.ico                       the icon (assets/icon.svg)
 *   POST /instances/NAME/ACTION             a page's form (api.c)
 *   *    /api/v1/...                        the JSON API (api.c)
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "store/store.h"
#include "web/web.h"

#define SECURITY_HEADERS PLANCTL_WEB_SECURITY_HEADERS

/* Adds the key=value pairs of s[0..n) ('&'-separated) to r.  -1 when
 * out of memory or past WEB_MAX_PARAMS. */
static int add_pairs(web_req *r, const char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        size_t end = i, eq;

        while (end < n && s[end] != '&')
            end++;
        for (eq = i; eq < end && s[eq] != '='; eq++)
            ;
        if (end > i) {
            if (r->nq == WEB_MAX_PARAMS)
                return -1;
            r->q[r->nq].key = pctl_web_decode(s + i, eq - i, 1);
            r->q[r->nq].value = pctl_web_decode(eq < end ? s + eq + 1 : "",
                                                eq < end ? end - eq - 1 : 0, 1);
            r->nq++;
            if (!r->q[r->nq - 1].key || !r->q[r->nq - 1].value)
                return -1;
        }
        i = end + 1;
    }
    return 0;
}

static void req_free(web_req *r)
{
    int i;

    pctl_free(r->path);
    for (i = 0; i < r->nseg; i++)
        pctl_free(r->seg[i]);
    for (i = 0; i < r->nq; i++) {
        pctl_free(r->q[i].key);
        pctl_free(r->q[i].value);
    }
}

/* Splits the target into r: 0, or 400 (a bad target) or -1 (memory). */
static int parse_target(web_req *r, const char *target)
{
    const char *q = strchr(target, '?'), *s;
    size_t plen = q ? (size_t)(q - target) : strlen(target);

    if (target[0] != '/')
        return 400;
    if (!(r->path = pctl_web_decode(target, plen, 0)))
        return 400;
    /* Segments from the raw path, so that an encoded '/' in a name
     * stays inside its segment. */
    s = target + 1;
    while (s < target + plen) {
        const char *e = s;

        while (e < target + plen && *e != '/')
            e++;
        if (e > s) {
            if (r->nseg == (int)(sizeof r->seg / sizeof r->seg[0]))
                return 404;
            if (!(r->seg[r->nseg] = pctl_web_decode(s, (size_t)(e - s), 0)))
                return 400;
            r->nseg++;
        }
        s = e + 1;
    }
    if (q && add_pairs(r, q + 1, strlen(q + 1)) < 0)
        return 400;
    r->live =
        pctl_web_param(r, "part") && !strcmp(pctl_web_param(r, "part"), "live");
    return 0;
}

static int seg_is(const web_req *r, int i, const char *s)
{
    return i < r->nseg && !strcmp(r->seg[i], s);
}

/* A run id from the path: > 0, or 0 when it is not one. */
static int64_t parse_id(const char *s)
{
    char *end;
    long long v;

    if (!s || *s < '0' || *s > '9')
        return 0;
    v = strtoll(s, &end, 10);
    return *end || v <= 0 ? 0 : (int64_t)v;
}

static void asset(web_res *res, const web_req *r, const char *name)
{
    size_t i;

    for (i = 0; i < pctl_web_nassets; i++)
        if (!strcmp(pctl_web_assets[i].name, name)) {
            res->status = 200;
            res->type = pctl_web_assets[i].type;
            pctl_wb_addn(&res->body, pctl_web_assets[i].data,
                         pctl_web_assets[i].len);
            return;
        }
    pctl_web_page_error(res, r, 404, "not found: no such asset");
}

static int is_get(const web_req *r)
{
    return !strcmp(r->raw->method, "GET") || !strcmp(r->raw->method, "HEAD");
}

static void route(web_res *res, planctl *p, web_req *r)
{
    int64_t run;

    if (seg_is(r, 0, "api") && seg_is(r, 1, "v1")) {
        pctl_web_api(res, p, r);
        return;
    }
    if (!is_get(r) && strcmp(r->raw->method, "POST") != 0) {
        pctl_wb_add(&res->headers, "Allow: GET, HEAD, POST\r\n");
        pctl_web_page_error(
            res, r, 405, "method not allowed: use GET, or POST for an action");
        return;
    }
    if (!strcmp(r->raw->method, "POST")) {
        if (r->nseg == 3 && seg_is(r, 0, "instances"))
            pctl_web_action_form(res, p, r, r->seg[1], r->seg[2]);
        else
            pctl_web_page_error(res, r, 405,
                                "method not allowed: only actions are POSTed");
        return;
    }
    if (r->nseg == 0)
        pctl_web_page_instances(res, p, r);
    else if (r->nseg == 1 && seg_is(r, 0, "engines"))
        pctl_web_page_engines(res, p, r);
    else if (r->nseg == 2 && seg_is(r, 0, "assets"))
        asset(res, r, r->seg[1]);
    /* What a browser asks for on a page that names no icon (the server's
     * 401 page): a 404 would be a console error on it. */
    else if (r->nseg == 1 && seg_is(r, 0, "favicon.ico"))
        asset(res, r, "icon.svg");
    else if (r->nseg == 2 && seg_is(r, 0, "instances"))
        pctl_web_page_instance(res, p, r, r->seg[1]);
    else if (r->nseg >= 4 && r->nseg <= 5 && seg_is(r, 0, "instances") &&
             seg_is(r, 2, "runs") && (run = parse_id(r->seg[3])) > 0 &&
             (r->nseg == 4 || seg_is(r, 4, "timeline.svg")))
        (r->nseg == 5 ? pctl_web_timeline : pctl_web_page_run)(res, p, r,
                                                               r->seg[1], run);
    else
        pctl_web_page_error(res, r, 404, "not found: no such page");
}

/* FNV-1a of the body, as a strong ETag. */
static void etag(char *out, size_t n, const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    size_t i;

    for (i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    snprintf(out, n, "\"%016llx\"", (unsigned long long)h);
}

/* Whether an If-None-Match header names tag. */
static int matches(const char *inm, const char *tag)
{
    return inm && (!strcmp(inm, "*") || strstr(inm, tag) != NULL);
}

int planctl_web_respond(planctl_web_response *out, planctl *p,
                        const planctl_web_request *req,
                        const planctl_web_options *opts)
{
    planctl_web_options defaults = PLANCTL_WEB_OPTIONS_INIT;
    web_res res = {
        0, "text/html; charset=utf-8", {PCTL_BUF_INIT, 0}, {PCTL_BUF_INIT, 0}};
    web_req r;
    int bad;

    if (out)
        memset(out, 0, sizeof *out);
    if (!out || !p || !req)
        return pctl_err_arg(p, !p ? "p" : !out ? "out" : "req");
    if (req->version != PLANCTL_WEB_REQUEST_VERSION)
        return pctl_err(p, PLANCTL_EINVAL,
                        "web request of version %u: this library knows "
                        "version %d",
                        req->version, PLANCTL_WEB_REQUEST_VERSION);
    if (!req->method || !req->target)
        return pctl_err_arg(p, !req->method ? "req->method" : "req->target");
    if (opts && opts->version != PLANCTL_WEB_OPTIONS_VERSION)
        return pctl_err(p, PLANCTL_EINVAL,
                        "web options of version %u: this library knows "
                        "version %d",
                        opts->version, PLANCTL_WEB_OPTIONS_VERSION);
    memset(&r, 0, sizeof r);
    r.raw = req;
    r.opts = opts ? opts : &defaults;
    bad = parse_target(&r, req->target);
    /* A form's fields join the query's: pctl_web_param() reads both. */
    if (!bad && !strcmp(req->method, "POST") && req->content_type &&
        !strncmp(req->content_type, "application/x-www-form-urlencoded", 33) &&
        req->body && add_pairs(&r, req->body, req->body_len) < 0)
        bad = 400;
    if (bad == 400)
        pctl_web_page_error(&res, &r, 400,
                            "bad request: the address is not valid");
    else if (bad == 404)
        pctl_web_page_error(&res, &r, 404, "not found: no such page");
    else
        route(&res, p, &r);

    pctl_wb_add(&res.headers, SECURITY_HEADERS);
    if (res.status == 200 && is_get(&r) && !res.body.oom) {
        char tag[40];

        etag(tag, sizeof tag, res.body.b.s ? res.body.b.s : "", res.body.b.len);
        pctl_wb_addf(&res.headers, "ETag: %s\r\nCache-Control: no-cache\r\n",
                     tag);
        if (matches(req->if_none_match, tag)) {
            res.status = 304;
            pctl_wb_free(&res.body);
        }
    } else {
        pctl_wb_add(&res.headers, "Cache-Control: no-store\r\n");
    }
    req_free(&r);
    if (res.body.oom || res.headers.oom) {
        pctl_wb_free(&res.body);
        pctl_wb_free(&res.headers);
        return PLANCTL_ENOMEM;
    }
    out->status = res.status;
    out->content_type = res.type;
    out->headers = pctl_wb_take(&res.headers, &(size_t){0});
    out->body = pctl_wb_take(&res.body, &out->body_len);
    if (!out->headers || !out->body) {
        planctl_web_response_clear(out);
        return PLANCTL_ENOMEM;
    }
    return 0;
}

void planctl_web_response_clear(planctl_web_response *r)
{
    if (!r)
        return;
    pctl_free(r->headers);
    pctl_free(r->body);
    memset(r, 0, sizeof *r);
}
