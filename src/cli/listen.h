/* listen.h - the CLI's side of the program's HTTP server (src/serve):
 * the address flags (--listen, --ui, --metrics-addr) and starting the
 * server with the page or the metrics handler (listen.c). */
#ifndef PLANCTL_CLI_LISTEN_H
#define PLANCTL_CLI_LISTEN_H

#include <stddef.h>
#include <sys/socket.h>
#include <uv.h>

#include "planctl.h"
#include "serve/handlers.h"
#include "serve/server.h"

/*
 * Parses an address flag's value: "PORT" or ":PORT" (loopback,
 * 127.0.0.1), "HOST:PORT" with an IPv4 address or "localhost", or
 * "[IPv6]:PORT".  PORT is 0 to 65535 (0: the system picks one).  Returns
 * 0, or -1 with a one-line reason in err.
 */
int cli_parse_addr(struct sockaddr_storage *out, const char *text, char *err,
                   size_t errsize);

/*
 * Serves the web page of cfg->db on addr (serve_limits_page); its URL
 * ("http://127.0.0.1:8080/") goes to url.  Returns 0, or -1 with a
 * one-line message in err.  Either way *out is set (or NULL): close it
 * with serve_close().
 */
int cli_listen_page(serve_server **out, uv_loop_t *loop,
                    const struct sockaddr *addr, const serve_page_config *cfg,
                    char *url, size_t urlsize, char *err, size_t errsize);

/*
 * Serves /metrics and /healthz of e on addr (serve_limits_metrics); the
 * address bound goes to bound.  Returns 0, or -1 with a one-line message
 * in err.  Either way *out is set (or NULL): close it with serve_close().
 */
int cli_listen_metrics(serve_server **out, uv_loop_t *loop,
                       const struct sockaddr *addr, planctl_engine *e,
                       char *bound, size_t boundsize, char *err,
                       size_t errsize);

#endif
