/* http.h - the metrics and health endpoint of `planctl run`: a minimal
 * HTTP/1.1 server on the engine's libuv loop. */
#ifndef PLANCTL_CLI_HTTP_H
#define PLANCTL_CLI_HTTP_H

#include <stddef.h>
#include <sys/socket.h>
#include <uv.h>

#include "planctl.h"
#include "serve/limits.h" /* its limits */

typedef struct cli_http cli_http;

/*
 * Parses a --metrics-addr value: "PORT" or ":PORT" (loopback,
 * 127.0.0.1), "HOST:PORT" with an IPv4 address or "localhost", or
 * "[IPv6]:PORT".  PORT is 0 to 65535 (0: the system picks one).  Returns
 * 0, or -1 with a one-line reason in err.
 */
int cli_http_parse_addr(struct sockaddr_storage *out, const char *text,
                        char *err, size_t errsize);

/* Writes sa as "127.0.0.1:8080" or "[::1]:8080".  Can't fail. */
void cli_http_format_addr(char *buf, size_t n, const struct sockaddr *sa);

/*
 * Listens on addr and serves GET /metrics (planctl_engine_metrics) and
 * GET /healthz (planctl_engine_healthy) of e on loop.  The address it is
 * bound to ("127.0.0.1:40211") goes to bound.  Returns 0, or -1 with a
 * one-line message in err ("cannot listen on 127.0.0.1:9464: address
 * already in use").  Either way *out is set: close it with
 * cli_http_close().
 */
int cli_http_start(cli_http **out, uv_loop_t *loop, planctl_engine *e,
                   const struct sockaddr *addr, char *bound, size_t boundsize,
                   char *err, size_t errsize);

/* Stops listening and closes every connection; once every handle is
 * closed the server is freed and done(data) runs (done may be NULL).  NULL
 * h calls nothing.  Can't fail. */
void cli_http_close(cli_http *h, void (*done)(void *data), void *data);

#endif
