/*
 * server.c - the one HTTP/1.1 server of the program (server.h): the
 * connection's life from accept to close, for whichever handler the
 * caller gives.  One thread, the caller's libuv loop.
 *
 *   - a connection: its request head (request.c, at most max_head) and
 *     body (at most max_body; a POST needs a Content-Length when a body
 *     is taken, no Transfer-Encoding), keep-alive and pipelining, closed
 *     once the answer that ends it is written;
 *   - back-pressure: while a connection's answer waits to be taken by
 *     the kernel, nothing more is read from it, and one turn of the loop
 *     serves at most one of its requests, so a client that pipelines
 *     without reading costs one answer of memory and never holds the
 *     loop (the engine's, under `run`) from the others;
 *   - timers: a client that does not send a whole request within head_ms
 *     of its first byte (or of connecting), stays idle idle_ms between
 *     requests, or takes nothing of an answer for idle_ms, is dropped;
 *     past max_clients, a new client takes the place of the connection
 *     (not a stream) that has gone longest without a byte;
 *   - streams: at most max_streams (so that other requests always find
 *     room) and streams_per_peer from one address; a reader with more
 *     than stream_backlog waiting is dropped, and past stream_bytes
 *     waiting on all streams the slowest are dropped.
 */
#include "serve/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "planctl.h"

const serve_limits serve_limits_page = {
    SERVE_PAGE_MAX_HEAD,         SERVE_PAGE_MAX_BODY,
    SERVE_PAGE_MAX_CLIENTS,      SERVE_PAGE_MAX_CLIENTS - SERVE_PAGE_RESERVED,
    SERVE_PAGE_STREAMS_PER_PEER, SERVE_PAGE_STREAM_BACKLOG,
    SERVE_PAGE_STREAM_BYTES,     SERVE_PAGE_HEAD_MS,
    SERVE_PAGE_IDLE_MS,          SERVE_PAGE_TICK_MS,
};

const serve_limits serve_limits_metrics = {
    SERVE_METRICS_MAX_REQUEST,
    0,
    SERVE_METRICS_MAX_CLIENTS,
    0,
    0,
    0,
    0,
    SERVE_METRICS_HEAD_MS,
    SERVE_METRICS_IDLE_MS,
    SERVE_METRICS_TICK_MS,
};

struct serve_conn {
    uv_tcp_t tcp;
    struct serve_conn *next, *prev;
    serve_server *s;
    char *in; /* what was read and not yet served */
    size_t len;
    uint64_t since;      /* the last byte read or written */
    uint64_t head_start; /* the request under way began (0: none) */
    int closing, stream, keep;
    int paused;    /* not read until its answers are taken (back-pressure) */
    int last;      /* its last answer is given: nothing more is read */
    int answered;  /* the handler answered the request it was given */
    size_t queued; /* bytes written but not yet taken by the kernel */
    void *tag;     /* a stream's */
    char peer[64];
};

struct serve_server {
    uv_tcp_t listener;
    uv_timer_t tick;
    uv_loop_t *loop;
    const serve_limits *lim;
    serve_handler h;
    serve_conn *conns;
    int nconns, nstreams, open_handles, closing;
    char *head; /* the copy of a request head a handler is given */
    void (*done)(void *data);
    void *done_data;
};

/* Bytes to send, shared by the streams an update goes to. */
typedef struct chunk {
    int refs;
    size_t len;
    char data[];
} chunk;

typedef struct wreq {
    uv_write_t w;
    serve_conn *c;
    chunk *k;
} wreq;

/* ---- connections ---- */

static void maybe_done(serve_server *s)
{
    void (*done)(void *data) = s->done;
    void *data = s->done_data;

    if (!s->closing || s->open_handles > 0)
        return;
    if (s->h.done)
        s->h.done(s->h.data);
    free(s->head);
    free(s);
    if (done)
        done(data);
}

static void conn_closed(uv_handle_t *h)
{
    serve_conn *c = h->data;
    serve_server *s = c->s;

    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->stream) {
        s->nstreams--;
        if (s->h.stream_ended)
            s->h.stream_ended(s->h.data, c->tag);
    }
    s->nconns--;
    s->open_handles--;
    free(c->in);
    free(c);
    maybe_done(s);
}

static void conn_close(serve_conn *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

static chunk *chunk_new(const char *data, size_t n)
{
    chunk *k = malloc(sizeof *k + n);

    if (!k)
        return NULL;
    k->refs = 1;
    k->len = n;
    memcpy(k->data, data, n);
    return k;
}

static void chunk_drop(chunk *k)
{
    if (k && --k->refs == 0)
        free(k);
}

/* Bytes queued on c that the kernel has not taken yet. */
static size_t waiting(const serve_conn *c)
{
    return uv_stream_get_write_queue_size((const uv_stream_t *)&c->tcp);
}

static void consume(serve_conn *c);
static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf);
static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf);

/* Reads from c again once its answers are taken, serving first what it
 * already sent. */
static void resume(serve_conn *c)
{
    if (!c->paused || c->closing || waiting(c) > 0)
        return;
    c->paused = 0;
    if (c->len > 0)
        c->head_start = uv_now(c->s->loop);
    consume(c);
    if (!c->paused && !c->closing && !c->last &&
        uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb) != 0)
        conn_close(c);
}

static void written(uv_write_t *w, int status)
{
    wreq *r = (wreq *)w;
    serve_conn *c = r->c;

    c->queued -= r->k->len;
    c->since = uv_now(c->s->loop);
    chunk_drop(r->k);
    free(r);
    if (status < 0 || (!c->keep && !c->stream && c->queued == 0))
        conn_close(c);
    else
        resume(c);
}

/* Queues k on c (which takes a reference). */
static void send_chunk(serve_conn *c, chunk *k)
{
    wreq *r;
    uv_buf_t b;

    if (c->closing)
        return;
    if (!k || !(r = malloc(sizeof *r))) {
        conn_close(c); /* out of memory: this connection goes */
        return;
    }
    r->c = c;
    r->k = k;
    k->refs++;
    c->queued += k->len;
    b = uv_buf_init(k->data, (unsigned int)k->len);
    if (uv_write(&r->w, (uv_stream_t *)&c->tcp, &b, 1, written) != 0) {
        c->queued -= k->len;
        chunk_drop(k);
        free(r);
        conn_close(c);
    }
}

/* Queues n bytes of data on c (copied). */
static void send_bytes(serve_conn *c, const char *data, size_t n)
{
    chunk *k;

    if (c->closing)
        return;
    k = chunk_new(data, n);
    send_chunk(c, k);
    chunk_drop(k);
}

static const char *reason_of(int code)
{
    switch (code) {
    case 200:
        return "OK";
    case 303:
        return "See Other";
    case 304:
        return "Not Modified";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 409:
        return "Conflict";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 415:
        return "Unsupported Media Type";
    case 421:
        return "Misdirected Request";
    case 431:
        return "Request Header Fields Too Large";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    default:
        return code >= 500 ? "Internal Server Error" : "Error";
    }
}

void serve_reply(serve_conn *c, int code, const char *type, const char *headers,
                 const char *body, size_t len, int flags)
{
    pctl_buf b = PCTL_BUF_INIT;
    char line[160];
    int bad = 0;

    c->answered = 1;
    if (flags & SERVE_CLOSE)
        c->keep = 0;
    snprintf(line, sizeof line, "HTTP/1.1 %d %s\r\n", code, reason_of(code));
    bad |= pctl_buf_add(&b, line, strlen(line));
    if (code != 304) {
        snprintf(line, sizeof line,
                 "Content-Type: %s\r\nContent-Length: %zu\r\n", type, len);
        bad |= pctl_buf_add(&b, line, strlen(line));
    }
    if (headers)
        bad |= pctl_buf_add(&b, headers, strlen(headers));
    if (c->keep)
        bad |= pctl_buf_add(&b, "Connection: keep-alive\r\n\r\n", 26);
    else
        bad |= pctl_buf_add(&b, "Connection: close\r\n\r\n", 21);
    if (code != 304 && !(flags & SERVE_HEAD_ONLY) && len)
        bad |= pctl_buf_add(&b, body, len);
    if (bad)
        conn_close(c);
    else
        send_bytes(c, b.s, b.len);
    pctl_buf_free(&b);
}

void serve_plain(serve_conn *c, int code, const char *text)
{
    c->keep = 0;
    c->last = 1;
    uv_read_stop((uv_stream_t *)&c->tcp);
    serve_reply(c, code, "text/plain; charset=utf-8",
                "Cache-Control: no-store\r\n" PLANCTL_WEB_SECURITY_HEADERS,
                text, strlen(text), SERVE_CLOSE);
}

const char *serve_peer(const serve_conn *c)
{
    return c->peer;
}

uv_loop_t *serve_loop(const serve_server *s)
{
    return s->loop;
}

/* ---- streams ---- */

int serve_stream_room(const serve_conn *c)
{
    const serve_server *s = c->s;
    const serve_conn *o;
    int n = 0;

    if (s->nstreams >= s->lim->max_streams)
        return SERVE_STREAMS_FULL;
    for (o = s->conns; o; o = o->next)
        if (o->stream && !o->closing && !strcmp(o->peer, c->peer))
            n++;
    return n >= s->lim->streams_per_peer ? SERVE_PEER_FULL : 0;
}

void serve_stream_start(serve_conn *c, void *tag, const char *head, size_t n)
{
    c->answered = 1;
    c->tag = tag;
    c->stream = 1;
    c->s->nstreams++;
    c->keep = 0;
    c->len = 0; /* still read: a reader's end closes it at once */
    send_bytes(c, head, n);
}

/* Keeps what waits on all streams together under the stream bytes by
 * dropping the readers furthest behind. */
static void trim_streams(serve_server *s)
{
    size_t total = 0;
    serve_conn *c, *slowest;

    for (c = s->conns; c; c = c->next)
        if (c->stream && !c->closing)
            total += waiting(c);
    while (total > s->lim->stream_bytes) {
        slowest = NULL;
        for (c = s->conns; c; c = c->next)
            if (c->stream && !c->closing &&
                (!slowest || waiting(c) > waiting(slowest)))
                slowest = c;
        if (!slowest)
            break;
        total -= waiting(slowest);
        conn_close(slowest);
    }
}

void serve_stream_send(serve_server *s, const void *tag, const char *data,
                       size_t n)
{
    chunk *k = chunk_new(data, n);
    serve_conn *c;

    for (c = s->conns; c; c = c->next) {
        if (!c->stream || c->closing || (tag && c->tag != tag))
            continue;
        if (waiting(c) > s->lim->stream_backlog)
            conn_close(c); /* it takes them slower than they come */
        else
            send_chunk(c, k);
    }
    chunk_drop(k);
    trim_streams(s);
}

/* ---- the request ---- */

/* Copies n bytes of p to *at, NUL-terminated. */
static const char *head_str(char **at, const char *p, size_t n)
{
    char *out = *at;

    memcpy(out, p, n);
    out[n] = '\0';
    *at += n + 1;
    return out;
}

/* Fills r from the parsed head h, copying its strings into s->head
 * (which holds as many bytes as the head had, plus one). */
static void take_head(serve_req *r, const serve_request *h, char *head)
{
    size_t i;

    memset(r, 0, sizeof *r);
    r->method = head_str(&head, h->method, h->method_len);
    r->target = head_str(&head, h->target, h->target_len);
    r->nheaders = h->nheaders;
    for (i = 0; i < h->nheaders; i++) {
        const serve_header *x = &h->headers[i];

        r->names[i] = head_str(&head, x->name, x->name_len);
        r->values[i] = head_str(&head, x->value, x->value_len);
        if (x == h->host)
            r->host = r->values[i];
    }
}

const char *serve_req_header(const serve_req *r, const char *name)
{
    size_t i;

    for (i = 0; i < r->nheaders; i++)
        if (!strcasecmp(r->names[i], name))
            return r->values[i];
    return NULL;
}

/* Serves the whole requests in c->in, one a turn of the loop: after
 * one is answered, c is paused until its answers are taken (written()
 * resumes it), so a client gets no more than it reads. */
static void consume(serve_conn *c)
{
    serve_server *s = c->s;
    const serve_limits *lim = s->lim;
    int served = 0;

    while (!c->closing && !c->stream && !c->last && c->len > 0) {
        char save;
        size_t headlen, total, clen;
        serve_request h;
        serve_req r;
        int rc;

        if (served) {
            c->paused = 1;
            uv_read_stop((uv_stream_t *)&c->tcp);
            return;
        }
        rc = serve_parse_request(
            &h, c->in, c->len < lim->max_head ? c->len : lim->max_head);
        if (rc == SERVE_PARTIAL) {
            if (c->len >= lim->max_head)
                serve_plain(c, 431, "request head too large\n");
            return;
        }
        if (rc == SERVE_BAD) {
            serve_plain(c, 400, "bad request\n");
            return;
        }
        headlen = (size_t)rc;
        c->keep = !h.close;
        if (h.method_len >= 16) {
            serve_plain(c, 501, "not implemented: an unknown method\n");
            return;
        }
        if (h.chunked) {
            serve_plain(c, 501,
                        "not implemented: send a body with Content-Length, "
                        "not Transfer-Encoding\n");
            return;
        }
        if (h.content_length > (long long)lim->max_body) {
            if (lim->max_body)
                serve_plain(c, 413,
                            "request body too large (64 KiB at most)\n");
            else
                serve_plain(c, 413, "request body not taken here\n");
            return;
        }
        if (lim->max_body && h.content_length < 0 && h.method_len == 4 &&
            !memcmp(h.method, "POST", 4)) {
            serve_plain(c, 411, "a POST needs Content-Length\n");
            return;
        }
        clen = h.content_length > 0 ? (size_t)h.content_length : 0;
        total = headlen + clen;
        if (c->len < total)
            return; /* the rest of the body is on its way */
        if (memchr(c->in + headlen, '\0', clen)) {
            serve_plain(c, 400, "bad request\n");
            return;
        }
        /* What the handler is given, NUL-terminated, in a copy: c->in
         * must stay whole while the body is on its way. */
        take_head(&r, &h, s->head);
        /* The body, NUL-terminated (it ends in the buffer's spare byte
         * or the next request's first, restored). */
        save = c->in[total];
        c->in[total] = '\0';
        r.body = c->in + headlen;
        r.body_len = clen;
        c->answered = 0;
        s->h.request(s->h.data, c, &r);
        if (!c->answered)
            serve_plain(c, 500, "internal error: no answer\n");
        served = 1;
        c->in[total] = save;
        if (c->closing || c->stream)
            return;
        if (!c->keep) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->last = 1;
            c->len = 0;
            return;
        }
        memmove(c->in, c->in + total, c->len - total);
        c->len -= total;
        c->head_start = c->len ? uv_now(s->loop) : 0;
    }
}

/* The most bytes a connection holds: a whole request, and one byte more
 * to tell "too large" from "just fits". */
static size_t in_cap(const serve_server *s)
{
    return s->lim->max_head + s->lim->max_body + 1;
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    serve_conn *c = h->data;
    size_t cap = in_cap(c->s);

    (void)hint;
    if (!c->in && !(c->in = malloc(cap + 1))) {
        *buf = uv_buf_init(NULL, 0); /* UV_ENOBUFS: the read fails */
        return;
    }
    *buf = uv_buf_init(c->in + c->len, (unsigned int)(cap - c->len));
}

static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    serve_conn *c = st->data;

    (void)buf;
    if (c->closing)
        return;
    if (n < 0) {
        conn_close(c);
        return;
    }
    c->since = uv_now(c->s->loop);
    if (c->stream)
        return; /* what a stream's reader sends means nothing */
    if (c->last || n == 0)
        return;
    if (!c->head_start)
        c->head_start = c->since; /* slow bytes after it do not move it */
    c->len += (size_t)n;
    consume(c);
    if (!c->closing && !c->stream && !c->last && !c->paused &&
        c->len >= in_cap(c->s))
        serve_plain(c, 413, "request too large\n");
}

static void peer_name(serve_conn *c)
{
    struct sockaddr_storage ss;
    int len = (int)sizeof ss;
    char ip[64] = "?";

    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET6)
            uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof ip);
        else
            uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof ip);
    }
    snprintf(c->peer, sizeof c->peer, "%s", ip);
}

/* Makes room by closing the connection (not a stream) that has gone
 * longest without a byte read or written: idle, slow to send its
 * request, or not reading its answer.  0 when there is none. */
static int drop_idle(serve_server *s, const serve_conn *except)
{
    serve_conn *c, *oldest = NULL;

    for (c = s->conns; c; c = c->next)
        if (c != except && !c->stream && !c->closing &&
            (!oldest || c->since < oldest->since))
            oldest = c;
    if (!oldest)
        return 0;
    conn_close(oldest);
    return 1;
}

static void on_connection(uv_stream_t *ls, int status)
{
    serve_server *s = ls->data;
    serve_conn *c;

    if (status < 0 || s->closing)
        return;
    if (!(c = calloc(1, sizeof *c)))
        return; /* the connection waits in the backlog */
    c->s = s;
    uv_tcp_init(s->loop, &c->tcp);
    c->tcp.data = c;
    c->since = c->head_start = uv_now(s->loop);
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    s->open_handles++;
    if (uv_accept(ls, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    peer_name(c);
    if (s->nconns > s->lim->max_clients && !drop_idle(s, c)) {
        serve_plain(c, 503, "too many clients\n");
        return;
    }
    if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb) != 0)
        conn_close(c);
}

/* Drops the connections past their timers, then lets the handler do its
 * periodic work. */
static void on_tick(uv_timer_t *t)
{
    serve_server *s = t->data;
    const serve_limits *lim = s->lim;
    uint64_t now = uv_now(s->loop);
    serve_conn *c, *next;

    if (s->h.tick)
        s->h.tick(s->h.data, s, now);
    for (c = s->conns; c; c = next) {
        next = c->next;
        if (c->stream || c->closing)
            continue;
        if (c->queued || c->paused) {
            /* An answer the client takes nothing of. */
            if (now - c->since >= lim->idle_ms)
                conn_close(c);
        } else if (c->head_start ? now - c->head_start >= lim->head_ms
                                 : now - c->since >= lim->idle_ms) {
            conn_close(c);
        }
    }
}

/* ---- the server ---- */

void serve_format_addr(char *buf, size_t n, const struct sockaddr *sa)
{
    char ip[64] = "?";

    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;

        uv_ip6_name(a, ip, sizeof ip);
        snprintf(buf, n, "[%s]:%d", ip, ntohs(a->sin6_port));
        return;
    }
    uv_ip4_name((const struct sockaddr_in *)sa, ip, sizeof ip);
    snprintf(buf, n, "%s:%d", ip,
             ntohs(((const struct sockaddr_in *)sa)->sin_port));
}

int serve_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >>
                24) == 127;
    if (sa->sa_family == AF_INET6) {
        static const unsigned char one[16] = {[15] = 1};

        return !memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr, one, 16);
    }
    return 0;
}

static void handle_closed(uv_handle_t *h)
{
    serve_server *s = h->data;

    s->open_handles--;
    maybe_done(s);
}

int serve_start(serve_server **out, uv_loop_t *loop,
                const struct sockaddr *addr, const serve_limits *lim,
                const serve_handler *h, char *bound, size_t boundsize,
                char *err, size_t errsize)
{
    serve_server *s = calloc(1, sizeof *s);
    struct sockaddr_storage ss;
    int rc, len = (int)sizeof ss;
    char want[80];

    *out = s;
    if (!s || !(s->head = malloc(lim->max_head + 1))) {
        snprintf(err, errsize, "cannot serve: out of memory");
        if (s)
            free(s);
        *out = NULL;
        if (h->done)
            h->done(h->data);
        return -1;
    }
    s->loop = loop;
    s->lim = lim;
    s->h = *h;
    uv_tcp_init(loop, &s->listener);
    uv_timer_init(loop, &s->tick);
    s->listener.data = s->tick.data = s;
    s->open_handles = 2;
    /* bind may leave EADDRINUSE for listen to report. */
    if ((rc = uv_tcp_bind(&s->listener, addr, 0)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&s->listener, 511, on_connection)) !=
            0 ||
        (rc = uv_tcp_getsockname(&s->listener, (struct sockaddr *)&ss, &len)) !=
            0) {
        serve_format_addr(want, sizeof want, addr);
        snprintf(err, errsize, "cannot listen on %s: %s", want,
                 uv_strerror(rc));
        return -1;
    }
    serve_format_addr(bound, boundsize, (struct sockaddr *)&ss);
    if (s->h.started)
        s->h.started(s->h.data, s, (struct sockaddr *)&ss);
    uv_timer_start(&s->tick, on_tick, lim->tick_ms, lim->tick_ms);
    return 0;
}

void serve_close(serve_server *s, void (*done)(void *data), void *data)
{
    serve_conn *c;

    if (!s)
        return;
    s->closing = 1;
    s->done = done;
    s->done_data = data;
    for (c = s->conns; c; c = c->next)
        conn_close(c);
    uv_timer_stop(&s->tick);
    uv_close((uv_handle_t *)&s->tick, handle_closed);
    uv_close((uv_handle_t *)&s->listener, handle_closed);
}
