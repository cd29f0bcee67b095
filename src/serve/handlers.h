/*
 * handlers.h - the two handlers the program gives its server
 * (server.h): the web page and /api/v1 (page.c) and the metrics and
 * health endpoint (metrics_handler.c).  Each fills a serve_handler table for
 * serve_start(); the server ends it (its done) when it closes.
 */
#ifndef PCTL_SERVE_HANDLERS_H
#define PCTL_SERVE_HANDLERS_H

#include <stddef.h>

#include "planctl.h"
#include "serve/server.h"

typedef struct serve_page_config {
    planctl *db;       /* kept open by the caller until the server is done */
    int allow_actions; /* the page and the API may act */
    const char *token; /* every request needs it (copied); NULL: none */
} serve_page_config;

/*
 * The web page: the library's planctl_web_respond() with its live
 * streams (/stream?path=PAGE, updated when planctl_data_version() moves
 * and planctl_web_changes_touch() says the page shows the change), the
 * token (Authorization: Bearer, or the cookie /login?token= sets) and,
 * on loopback without a token, the Host check.  Serve it with
 * serve_limits_page.  Returns 0, or -1 with a one-line message in err
 * (out of memory, no random source for the form token).
 */
int serve_page_handler(serve_handler *out, const serve_page_config *cfg,
                       char *err, size_t errsize);

/*
 * The metrics and health endpoint of engine e: GET /metrics
 * (planctl_engine_metrics()) and GET /healthz (200 while
 * planctl_engine_healthy(), 503 otherwise), each answer closing its
 * connection.  Serve it with serve_limits_metrics.  Can't fail.
 */
void serve_metrics_handler(serve_handler *out, planctl_engine *e);

#endif
