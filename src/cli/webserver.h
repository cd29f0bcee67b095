/* webserver.h - the HTTP/1.1 server of `planctl serve` and `planctl run
 * --ui` (webserver.c): the library's web page (planctl_web_respond) on a
 * libuv loop, with keep-alive, a live stream per page, a token, and
 * limits on clients, sizes and idle time. */
#ifndef PLANCTL_CLI_WEBSERVER_H
#define PLANCTL_CLI_WEBSERVER_H

#include <stddef.h>
#include <sys/socket.h>
#include <uv.h>

#include "planctl.h"
#include "serve/limits.h" /* its limits */

typedef struct cli_web cli_web;

typedef struct cli_web_config {
    const struct sockaddr *addr;
    int allow_actions;
    const char *token; /* every request needs it; NULL: none */
} cli_web_config;

/*
 * Listens on cfg->addr and serves db (which the caller keeps open until
 * done) on loop.  The URL it serves goes to url ("http://127.0.0.1:8080/").
 * Returns 0, or -1 with a one-line message in err.  Either way *out is
 * set: close it with cli_web_close().
 */
int cli_web_start(cli_web **out, uv_loop_t *loop, planctl *db,
                  const cli_web_config *cfg, char *url, size_t urlsize,
                  char *err, size_t errsize);

/* Stops listening and closes every connection; when every handle is
 * closed the server is freed and done(data) runs (done may be NULL).
 * NULL s calls nothing. */
void cli_web_close(cli_web *s, void (*done)(void *data), void *data);

/* Whether addr is a loopback address (127.0.0.0/8, ::1). */
int cli_web_is_loopback(const struct sockaddr *addr);

#endif
