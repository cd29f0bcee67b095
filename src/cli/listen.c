/*
 * listen.c - the CLI's side of the program's HTTP server: what an
 * address flag means, and which handler serves it.  The server and its
 * two handlers are src/serve's; the CLI only picks them and says where
 * they listen.
 */
#include "listen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_port(int *out, const char *s)
{
    char *end;
    long v;

    if (!*s || *s == '-' || *s == '+')
        return -1;
    v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 65535)
        return -1;
    *out = (int)v;
    return 0;
}

int cli_parse_addr(struct sockaddr_storage *out, const char *text, char *err,
                   size_t errsize)
{
    char host[64];
    const char *colon, *port_s;
    int port;

    memset(out, 0, sizeof *out);
    if (text[0] == '[') {
        const char *close = strchr(text, ']');

        if (!close || close[1] != ':' ||
            (size_t)(close - text - 1) >= sizeof host) {
            snprintf(err, errsize, "an IPv6 address is written [ADDR]:PORT");
            return -1;
        }
        memcpy(host, text + 1, (size_t)(close - text - 1));
        host[close - text - 1] = '\0';
        port_s = close + 2;
    } else if ((colon = strrchr(text, ':')) != NULL) {
        if ((size_t)(colon - text) >= sizeof host) {
            snprintf(err, errsize, "the host is too long");
            return -1;
        }
        memcpy(host, text, (size_t)(colon - text));
        host[colon - text] = '\0';
        port_s = colon + 1;
    } else {
        host[0] = '\0';
        port_s = text;
    }
    if (parse_port(&port, port_s) < 0) {
        snprintf(err, errsize, "the port must be a number from 0 to 65535");
        return -1;
    }
    /* Only a port: loopback.  Anything wider must be asked for. */
    if (!host[0] || strcmp(host, "localhost") == 0)
        snprintf(host, sizeof host, "127.0.0.1");
    if (text[0] == '[') {
        if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)out) != 0) {
            snprintf(err, errsize, "\"%s\" is not an IPv6 address", host);
            return -1;
        }
        return 0;
    }
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)out) != 0 ||
        strspn(host, "0123456789.") != strlen(host)) {
        snprintf(err, errsize, "\"%s\" is not an IPv4 address or \"localhost\"",
                 host);
        return -1;
    }
    return 0;
}

int cli_listen_page(serve_server **out, uv_loop_t *loop,
                    const struct sockaddr *addr, const serve_page_config *cfg,
                    char *url, size_t urlsize, char *err, size_t errsize)
{
    serve_handler h;
    char bound[96];

    *out = NULL;
    if (serve_page_handler(&h, cfg, err, errsize) < 0)
        return -1;
    if (serve_start(out, loop, addr, &serve_limits_page, &h, bound,
                    sizeof bound, err, errsize) < 0)
        return -1;
    snprintf(url, urlsize, "http://%s/", bound);
    return 0;
}

int cli_listen_metrics(serve_server **out, uv_loop_t *loop,
                       const struct sockaddr *addr, planctl_engine *e,
                       char *bound, size_t boundsize, char *err, size_t errsize)
{
    serve_handler h;

    serve_metrics_handler(&h, e);
    return serve_start(out, loop, addr, &serve_limits_metrics, &h, bound,
                       boundsize, err, errsize);
}
