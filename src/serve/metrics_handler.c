/*
 * metrics_handler.c - the metrics and health handler of the program's server
 * (handlers.h), for `planctl run --metrics-addr`:
 *
 *   GET /metrics  200, text/plain; version=0.0.4 (planctl_engine_metrics)
 *   GET /healthz  200 "ok" while the engine runs and holds its lease,
 *                 503 otherwise (stopping, fenced off, lease not renewed)
 *   other paths   404; other methods 405
 *
 * Every answer closes its connection.  The connections, the parser and
 * the limits (a request head of 8 KiB, 256 clients, 10 s to send a
 * request and to take the answer) are the server's.  It runs on the
 * engine's own loop, so the engine is only read between its passes.
 */
#include <string.h>

#include "core/alloc.h"
#include "serve/handlers.h"
#include "web/web.h"

static void plain(serve_conn *c, int code, const char *extra, const char *body)
{
    serve_reply(c, code, "text/plain; charset=utf-8", extra, body, strlen(body),
                SERVE_CLOSE);
}

/* Whether the path of target (before any query, decoded) is path. */
static int path_is(const char *target, const char *path)
{
    char *p = pctl_web_decode(target, strcspn(target, "?"), 0);
    int is = p && !strcmp(p, path);

    pctl_free(p);
    return is;
}

static void request(void *data, serve_conn *c, const serve_req *r)
{
    planctl_engine *e = data;
    int health = path_is(r->target, "/healthz");
    char *text = NULL;

    if (!health && !path_is(r->target, "/metrics")) {
        plain(c, 404, NULL, "not found: try /metrics or /healthz\n");
        return;
    }
    if (strcmp(r->method, "GET") != 0) {
        plain(c, 405, "Allow: GET\r\n", "method not allowed: use GET\n");
        return;
    }
    if (health) {
        if (planctl_engine_healthy(e))
            plain(c, 200, NULL, "ok\n");
        else
            plain(c, 503, NULL,
                  "unavailable: the engine is not running with its lease\n");
        return;
    }
    if (planctl_engine_metrics(&text, e) < 0) {
        plain(c, 500, NULL, "out of memory\n");
        return;
    }
    serve_reply(c, 200, "text/plain; version=0.0.4; charset=utf-8", NULL, text,
                strlen(text), SERVE_CLOSE);
    planctl_free(text);
}

void serve_metrics_handler(serve_handler *out, planctl_engine *e)
{
    memset(out, 0, sizeof *out);
    out->data = e;
    out->request = request;
}
