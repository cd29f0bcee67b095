/*
 * http.c - the metrics and health endpoint of `planctl run`: a minimal
 * HTTP/1.1 server on the engine's own libuv loop.
 *
 *   GET /metrics  200, text/plain; version=0.0.4 (planctl_engine_metrics)
 *   GET /healthz  200 "ok" while the engine runs and holds its lease,
 *                 503 otherwise (stopping, fenced off, lease not renewed)
 *   other paths   404; other methods 405; a malformed request 400; a
 *                 request line and headers past 8 KiB 431
 *
 * One request per connection: the answer says Connection: close and the
 * server closes after writing it.  A client that sends nothing useful for
 * SERVE_METRICS_HEAD_MS is dropped, and at most SERVE_METRICS_MAX_CLIENTS are
 * served at once, so a slow or hostile client cannot hold the engine's loop;
 * past that, a new client takes the place of the one that has waited longest
 * without a whole request, so slow clients cannot make a health probe fail.
 * Everything runs on the loop thread, so the engine is only read between its
 * passes.
 *
 * It lives in the CLI, not the library: an embedder has its own HTTP
 * server and mounts planctl_engine_metrics() and planctl_engine_healthy()
 * there, and a library that opened sockets on the embedder's loop unasked
 * would be a surprise.
 */
#include "http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve/request.h"

typedef struct client {
    uv_tcp_t tcp;
    struct client *next, *prev;
    struct cli_http *server;
    uint64_t since; /* uv_now() when it connected */
    size_t len;
    int answered, closing;
    uv_write_t wr;
    char *reply;
    char
        req[SERVE_METRICS_MAX_REQUEST + 2]; /* a byte past the limit, and NUL */
} client;

struct cli_http {
    uv_tcp_t listener;
    uv_timer_t sweep;
    uv_loop_t *loop;
    planctl_engine *engine;
    client *clients;
    int nclients;
    int open_handles; /* listener, sweep and clients not yet closed */
    int closing;
    void (*done)(void *data);
    void *done_data;
};

/* ---- addresses ---- */

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

int cli_http_parse_addr(struct sockaddr_storage *out, const char *text,
                        char *err, size_t errsize)
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

void cli_http_format_addr(char *buf, size_t n, const struct sockaddr *sa)
{
    char ip[64] = "?";
    int port = 0;

    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;

        uv_ip6_name(a, ip, sizeof ip);
        port = ntohs(a->sin6_port);
        snprintf(buf, n, "[%s]:%d", ip, port);
        return;
    }
    uv_ip4_name((const struct sockaddr_in *)sa, ip, sizeof ip);
    port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
    snprintf(buf, n, "%s:%d", ip, port);
}

/* ---- connections ---- */

/* Frees the server once its last handle is closed, then tells. */
static void maybe_done(cli_http *s)
{
    void (*done)(void *data) = s->done;
    void *data = s->done_data;

    if (!s->closing || s->open_handles > 0)
        return;
    free(s);
    if (done)
        done(data);
}

static void client_closed(uv_handle_t *h)
{
    client *c = h->data;
    cli_http *s = c->server;

    if (c->prev)
        c->prev->next = c->next;
    else
        s->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nclients--;
    s->open_handles--;
    free(c->reply);
    free(c);
    maybe_done(s);
}

static void client_close(client *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    uv_close((uv_handle_t *)&c->tcp, client_closed);
}

static void written(uv_write_t *w, int status)
{
    (void)status;
    client_close(w->data);
}

static void respond(client *c, int code, const char *reason, const char *ctype,
                    const char *extra, const char *body)
{
    cli_buf b = CLI_BUF_INIT;
    uv_buf_t buf;

    c->answered = 1;
    uv_read_stop((uv_stream_t *)&c->tcp);
    cli_buf_addf(&b,
                 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
                 "Content-Length: %zu\r\n%sConnection: close\r\n\r\n%s",
                 code, reason, ctype, strlen(body), extra ? extra : "", body);
    c->reply = b.s; /* freed with the client */
    buf = uv_buf_init(b.s, (unsigned int)b.len);
    c->wr.data = c;
    if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, &buf, 1, written) != 0)
        client_close(c);
}

static void plain(client *c, int code, const char *reason, const char *extra,
                  const char *body)
{
    respond(c, code, reason, "text/plain; charset=utf-8", extra, body);
}

/* Whether the path of h's target (before any query) is path. */
static int path_is(const serve_request *h, const char *path)
{
    size_t n = strcspn(h->target, "?"), p = strlen(path);

    if (n > h->target_len)
        n = h->target_len;
    return n == p && !memcmp(h->target, path, p);
}

/* Answers a complete request head h. */
static void serve(client *c, const serve_request *h)
{
    int health = path_is(h, "/healthz");

    if (!health && !path_is(h, "/metrics")) {
        plain(c, 404, "Not Found", NULL,
              "not found: try /metrics or /healthz\n");
        return;
    }
    if (h->method_len != 3 || memcmp(h->method, "GET", 3) != 0) {
        plain(c, 405, "Method Not Allowed", "Allow: GET\r\n",
              "method not allowed: use GET\n");
        return;
    }
    if (health) {
        if (planctl_engine_healthy(c->server->engine))
            plain(c, 200, "OK", NULL, "ok\n");
        else
            plain(c, 503, "Service Unavailable", NULL,
                  "unavailable: the engine is not running with its lease\n");
        return;
    }
    {
        char *text = NULL;

        if (planctl_engine_metrics(&text, c->server->engine) < 0) {
            plain(c, 500, "Internal Server Error", NULL, "out of memory\n");
            return;
        }
        respond(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", NULL,
                text);
        planctl_free(text);
    }
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    client *c = h->data;

    (void)hint;
    /* One byte more than the limit, to tell "too long" from "just fits". */
    *buf = uv_buf_init(c->req + c->len,
                       (unsigned int)(SERVE_METRICS_MAX_REQUEST + 1 - c->len));
}

static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    client *c = st->data;
    serve_request h;
    int rc;

    (void)buf;
    if (c->answered || c->closing)
        return;
    if (n < 0) {
        client_close(c); /* EOF or error before a whole request */
        return;
    }
    c->len += (size_t)n;
    c->req[c->len] = '\0'; /* req has one byte beyond what alloc gives */
    rc = serve_parse_request(&h, c->req, c->len);
    if (rc == SERVE_BAD) {
        plain(c, 400, "Bad Request", NULL, "bad request\n");
        return;
    }
    if (rc > 0 && (size_t)rc <= SERVE_METRICS_MAX_REQUEST) {
        serve(c, &h);
        return;
    }
    if (c->len > SERVE_METRICS_MAX_REQUEST)
        plain(c, 431, "Request Header Fields Too Large", NULL,
              "request too large\n");
}

/* Makes room for a new client by closing the one that has waited longest
 * without sending a whole request (an idle or slow client, never one
 * being answered), so that a liveness probe gets an honest answer while
 * slow clients hold every place.  Returns 0 when there is none. */
static int drop_oldest_idle(cli_http *s, const client *except)
{
    client *c, *oldest = NULL;

    for (c = s->clients; c; c = c->next)
        if (c != except && !c->answered && !c->closing &&
            (!oldest || c->since <= oldest->since))
            oldest = c;
    if (!oldest)
        return 0;
    client_close(oldest);
    return 1;
}

static void on_connection(uv_stream_t *ls, int status)
{
    cli_http *s = ls->data;
    client *c;

    if (status < 0 || s->closing)
        return;
    c = calloc(1, sizeof *c);
    if (!c)
        return; /* the connection waits in the backlog */
    c->server = s;
    uv_tcp_init(s->loop, &c->tcp);
    c->tcp.data = c;
    c->since = uv_now(s->loop);
    c->next = s->clients;
    if (s->clients)
        s->clients->prev = c;
    s->clients = c;
    s->nclients++;
    s->open_handles++;
    if (uv_accept(ls, (uv_stream_t *)&c->tcp) != 0) {
        client_close(c);
        return;
    }
    if (s->nclients > SERVE_METRICS_MAX_CLIENTS && !drop_oldest_idle(s, c)) {
        plain(c, 503, "Service Unavailable", NULL, "too many clients\n");
        return;
    }
    if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb) != 0)
        client_close(c);
}

/* Drops clients that have not sent a whole request in time. */
static void on_sweep(uv_timer_t *t)
{
    cli_http *s = t->data;
    uint64_t now = uv_now(s->loop);
    client *c;

    for (c = s->clients; c; c = c->next)
        if (!c->answered && now - c->since >= SERVE_METRICS_HEAD_MS)
            client_close(c);
}

/* ---- the server ---- */

static void handle_closed(uv_handle_t *h)
{
    cli_http *s = h->data;

    s->open_handles--;
    maybe_done(s);
}

int cli_http_start(cli_http **out, uv_loop_t *loop, planctl_engine *e,
                   const struct sockaddr *addr, char *bound, size_t boundsize,
                   char *err, size_t errsize)
{
    cli_http *s = calloc(1, sizeof *s);
    struct sockaddr_storage ss;
    int rc, len = (int)sizeof ss;

    *out = NULL;
    if (!s)
        cli_oom();
    s->loop = loop;
    s->engine = e;
    uv_tcp_init(loop, &s->listener);
    uv_timer_init(loop, &s->sweep);
    s->listener.data = s->sweep.data = s;
    s->open_handles = 2;
    /* bind may leave EADDRINUSE for listen to report. */
    if ((rc = uv_tcp_bind(&s->listener, addr, 0)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&s->listener, 128, on_connection)) !=
            0 ||
        (rc = uv_tcp_getsockname(&s->listener, (struct sockaddr *)&ss, &len)) !=
            0) {
        char want[80];

        cli_http_format_addr(want, sizeof want, addr);
        snprintf(err, errsize, "cannot listen on %s: %s", want,
                 uv_strerror(rc));
        *out = s; /* the caller closes it */
        return -1;
    }
    cli_http_format_addr(bound, boundsize, (struct sockaddr *)&ss);
    uv_timer_start(&s->sweep, on_sweep, 1000, 1000);
    *out = s;
    return 0;
}

void cli_http_close(cli_http *s, void (*done)(void *data), void *data)
{
    client *c;

    if (!s)
        return;
    s->closing = 1;
    s->done = done;
    s->done_data = data;
    for (c = s->clients; c; c = c->next)
        client_close(c);
    uv_timer_stop(&s->sweep);
    uv_close((uv_handle_t *)&s->sweep, handle_closed);
    uv_close((uv_handle_t *)&s->listener, handle_closed);
}
