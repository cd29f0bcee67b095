/*
 * webserver.c - the HTTP/1.1 server of `planctl serve` (and `planctl run
 * --ui`): the library's web page and API (planctl_web_respond()) on a
 * libuv loop, one thread, so the database handle is only ever used by
 * one request at a time and never beside the engine's work.
 *
 * What it adds to the library's handler:
 *   - connections: HTTP/1.1 keep-alive and pipelining; at most
 *     SERVE_PAGE_MAX_CLIENTS, a request head of 16 KiB and a body of 64 KiB;
 *     a client that does not send a whole request within 10 s of its
 *     first byte (or of connecting), stays idle for 30 s between
 *     requests, or takes nothing of an answer for 30 s, is dropped;
 *   - back-pressure: while a connection's answer waits to be taken by
 *     the kernel, nothing more is read from it, and one turn of the loop
 *     serves at most one of its requests, so a client that pipelines
 *     without reading costs one answer of memory and never holds the
 *     loop (the engine's, under `run --ui`) from the others;
 *   - streams: at most SERVE_PAGE_STREAMS_PER_PEER from one address and
 *     SERVE_PAGE_MAX_CLIENTS - SERVE_PAGE_RESERVED in all, so that new clients
 *     always find room; a stream whose reader is too slow to take what it
 *     is sent (4 MiB waiting) is dropped, and when the updates waiting on
 *     all streams pass SERVE_PAGE_STREAM_BYTES the slowest are dropped;
 *   - who may ask: with a token, every request carries it (Authorization:
 *     Bearer, or the cookie that /login?token= sets); on loopback
 *     without a token, the Host header must name the loopback address,
 *     so that a web site cannot reach this server by rebinding its own
 *     name to 127.0.0.1;
 *   - /stream?path=PAGE: Server-Sent Events for an open page.  Every
 *     250 ms the server asks the database whether anything was committed
 *     (planctl_data_version(): SQLite's data_version, PostgreSQL's commit
 *     counter); when something was, the library says which open pages
 *     the events since its last look touch (planctl_web_changes_read(),
 *     src/web/live.c), and each such page that has readers is rendered
 *     once (?part=live) and sent to all of them if it changed.
 *     A run page with a running attempt is rendered every second too,
 *     since its output grows in files, not rows.
 *
 * Why not libmicrohttpd: the server must run on the engine's own libuv
 * loop for `run --ui` (and must never call the handle from two threads);
 * libmicrohttpd brings its own threads or an external select loop to
 * bridge, and streams would need its suspend/resume.  What a page needs
 * (keep-alive, conditional requests, streams, limits) is small enough to
 * keep here, tested by the browser suite.  No compression: the pages
 * carry the CSRF secret, and compressing a secret beside text a client
 * chooses leaks it (BREACH); on loopback or a LAN, bytes are cheap.
 */
#include "webserver.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "core/secrets.h"
#include "http.h"
#include "serve/request.h"

#define TICK_MS 250    /* how often the database is asked for changes */
#define FOLLOW_MS 1000 /* a page following output: rendered this often */
#define PING_MS 15000  /* a comment on idle streams, so proxies keep them */

typedef struct topic {
    struct topic *next;
    char *path;
    char etag[24]; /* of the last body sent */
    int readers;
    int follow;        /* the page says it follows output (X-Planctl-Follow) */
    int dirty;         /* the database changed since it was last rendered */
    uint64_t rendered; /* when (uv_now) it was last rendered */
    uint64_t cost;     /* ms its last rendering took */
} topic;

typedef struct conn {
    uv_tcp_t tcp;
    struct conn *next, *prev;
    struct cli_web *s;
    char *in;
    size_t len;
    uint64_t since;      /* the last byte read or written */
    uint64_t head_start; /* the request under way began (0: none) */
    int closing, stream, keep;
    int paused;    /* not read until its answers are taken (back-pressure) */
    int last;      /* its last answer is given: nothing more is read */
    size_t queued; /* bytes written but not yet taken by the kernel */
    topic *topic;
    char peer[64];
} conn;

/* Bytes to send, shared by the streams an update goes to. */
typedef struct chunk {
    int refs;
    size_t len;
    char data[];
} chunk;

typedef struct wreq {
    uv_write_t w;
    conn *c;
    chunk *k;
} wreq;

struct cli_web {
    uv_tcp_t listener;
    uv_timer_t tick;
    uv_loop_t *loop;
    planctl *db;
    conn *conns;
    int nconns, nstreams, open_handles, closing;
    topic *topics;
    int64_t version;
    int64_t seq; /* the last event looked at */
    uint64_t pinged;
    int allow_actions;
    char *token;
    int loopback;
    char csrf[33];
    char hosts[3][100];                 /* the Host values loopback accepts */
    char head[SERVE_PAGE_MAX_HEAD + 1]; /* the request head being parsed */
    void (*done)(void *data);
    void *done_data;
};

/* ---- connections ---- */

static void topic_free(topic *t)
{
    planctl_free(t->path);
    free(t);
}

static void maybe_done(cli_web *s)
{
    void (*done)(void *data) = s->done;
    void *data = s->done_data;
    topic *t;

    if (!s->closing || s->open_handles > 0)
        return;
    while ((t = s->topics) != NULL) {
        s->topics = t->next;
        topic_free(t);
    }
    free(s->token);
    free(s);
    if (done)
        done(data);
}

static void conn_closed(uv_handle_t *h)
{
    conn *c = h->data;
    cli_web *s = c->s;

    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->topic)
        c->topic->readers--;
    if (c->stream)
        s->nstreams--;
    s->nconns--;
    s->open_handles--;
    free(c->in);
    free(c);
    maybe_done(s);
}

static void conn_close(conn *c)
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
        cli_oom();
    k->refs = 1;
    k->len = n;
    memcpy(k->data, data, n);
    return k;
}

static void chunk_drop(chunk *k)
{
    if (--k->refs == 0)
        free(k);
}

/* Bytes queued on c that the kernel has not taken yet. */
static size_t waiting(const conn *c)
{
    return uv_stream_get_write_queue_size((const uv_stream_t *)&c->tcp);
}

static void consume(conn *c);
static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf);
static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf);

/* Reads from c again once its answers are taken, serving first what it
 * already sent. */
static void resume(conn *c)
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
    conn *c = r->c;

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
static void send_chunk(conn *c, chunk *k)
{
    wreq *r;
    uv_buf_t b;

    if (c->closing)
        return;
    if (!(r = malloc(sizeof *r)))
        cli_oom();
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
static void send_bytes(conn *c, const char *data, size_t n)
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

/* Writes one response; head_only leaves the body out (HEAD). */
static void reply(conn *c, int code, const char *type, const char *headers,
                  const char *body, size_t len, int head_only)
{
    cli_buf b = CLI_BUF_INIT;

    cli_buf_addf(&b, "HTTP/1.1 %d %s\r\n", code, reason_of(code));
    if (code != 304)
        cli_buf_addf(&b, "Content-Type: %s\r\nContent-Length: %zu\r\n", type,
                     len);
    cli_buf_add(&b, headers ? headers : "");
    cli_buf_add(&b, c->keep ? "Connection: keep-alive\r\n\r\n"
                            : "Connection: close\r\n\r\n");
    if (code != 304 && !head_only)
        cli_buf_addn(&b, body, len);
    send_bytes(c, b.s, b.len);
    cli_buf_free(&b);
}

static void plain(conn *c, int code, const char *text)
{
    c->keep = 0;
    c->last = 1;
    uv_read_stop((uv_stream_t *)&c->tcp);
    reply(c, code, "text/plain; charset=utf-8",
          "Cache-Control: no-store\r\n" PLANCTL_WEB_SECURITY_HEADERS, text,
          strlen(text), 0);
}

/* ---- the request ---- */

typedef struct req {
    char method[16];
    char *target;
    int minor; /* HTTP/1.minor */
    int keep, chunked;
    const char *host, *origin, *ctype, *inm, *auth, *cookie;
    long long clen;
    const char *body;
} req;

/* Copies n bytes of p into the head buffer at *at, NUL-terminated. */
static const char *head_str(char **at, const char *p, size_t n)
{
    char *out = *at;

    memcpy(out, p, n);
    out[n] = '\0';
    *at += n + 1;
    return out;
}

/* Fills r from the parsed head h, copying what the library is given
 * into head (which holds as many bytes as the head had, plus one). */
static int take_head(req *r, const serve_request *h, char *head)
{
    static const struct {
        const char *name;
        size_t off;
    } wanted[] = {
        {"Origin", offsetof(req, origin)},
        {"Content-Type", offsetof(req, ctype)},
        {"If-None-Match", offsetof(req, inm)},
        {"Authorization", offsetof(req, auth)},
        {"Cookie", offsetof(req, cookie)},
    };
    size_t i, n;
    const char *v;

    memset(r, 0, sizeof *r);
    if (h->method_len >= sizeof r->method)
        return 501;
    memcpy(r->method, h->method, h->method_len);
    r->method[h->method_len] = '\0';
    r->target = (char *)head_str(&head, h->target, h->target_len);
    r->minor = h->minor;
    r->keep = !h->close;
    r->chunked = h->chunked;
    r->clen = h->content_length;
    if (h->host)
        r->host = head_str(&head, h->host->value, h->host->value_len);
    for (i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if ((v = serve_header_value(h, wanted[i].name, &n)) != NULL)
            *(const char **)((char *)r + wanted[i].off) = head_str(&head, v, n);
    return 0;
}

/* Whether r carries the token, in its Authorization header or its
 * planctl_token cookie. */
static int authorized(const cli_web *s, const req *r)
{
    const char *k;

    if (!s->token)
        return 1;
    if (r->auth && !strncasecmp(r->auth, "Bearer ", 7) &&
        pctl_secret_equal(r->auth + 7, strlen(r->auth + 7), s->token))
        return 1;
    for (k = r->cookie; k && (k = strstr(k, "planctl_token=")) != NULL; k++) {
        const char *v = k + 14, *end = v;

        if (k != r->cookie && k[-1] != ' ' && k[-1] != ';')
            continue;
        while (*end && *end != ';')
            end++;
        if (pctl_secret_equal(v, (size_t)(end - v), s->token))
            return 1;
    }
    return 0;
}

static int host_ok(const cli_web *s, const req *r)
{
    int i;

    if (!s->loopback || s->token)
        return 1;
    for (i = 0; r->host && i < 3; i++)
        if (!strcasecmp(r->host, s->hosts[i]))
            return 1;
    return 0;
}

/* 401, with a page saying how to give the token, or for the API its
 * error document. */
static void unauthorized(conn *c, const char *target, int head_only)
{
    static const char page[] =
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>Unauthorized</title></head><body><h1>Unauthorized</h1>"
        "<p id=\"unauthorized\">This planctl server needs its token: open "
        "/login?token=TOKEN once, or send Authorization: Bearer TOKEN."
        "</p></body></html>\n";
    static const char doc[] =
        "{\"schema\":1,\"error\":{\"code\":\"PLANCTL_EUNAUTHORIZED\","
        "\"message\":\"this server needs its token: send Authorization: "
        "Bearer TOKEN\"}}\n";
    static const char headers[] =
        "WWW-Authenticate: Bearer realm=\"planctl\"\r\n"
        "Cache-Control: no-store\r\n" PLANCTL_WEB_SECURITY_HEADERS;

    if (!strncmp(target, "/api/", 5))
        reply(c, 401, "application/json", headers, doc, sizeof doc - 1,
              head_only);
    else
        reply(c, 401, "text/html; charset=utf-8", headers, page,
              sizeof page - 1, head_only);
}

/* /login?token=T: the token as a cookie, then the instances. */
static void login(conn *c, const req *r)
{
    const char *t = strstr(r->target, "token=");
    size_t n = 0;
    cli_buf h = CLI_BUF_INIT;

    if (t)
        for (t += 6; t[n] && t[n] != '&'; n++)
            ;
    if (!t || !c->s->token || !pctl_secret_equal(t, n, c->s->token)) {
        unauthorized(c, r->target, 0);
        return;
    }
    cli_buf_add(&h, "Location: /\r\nCache-Control: no-store\r\n"
                    "Set-Cookie: planctl_token=");
    cli_buf_addn(&h, t, n);
    cli_buf_add(&h, "; Path=/; HttpOnly; SameSite=Strict\r\n");
    reply(c, 303, "text/plain; charset=utf-8", h.s, "", 0, 0);
    cli_buf_free(&h);
}

/* ---- the library's pages ---- */

static void web_options(const cli_web *s, planctl_web_options *o,
                        const char *actor)
{
    planctl_web_options init = PLANCTL_WEB_OPTIONS_INIT;

    *o = init;
    o->allow_actions = s->allow_actions;
    o->csrf = s->csrf;
    o->actor = actor;
    o->stream = 1;
}

/* Asks the library for target; 0, or -1 when it failed (out of memory). */
static int render(cli_web *s, planctl_web_response *out, const char *method,
                  const char *target, const req *r, const char *actor)
{
    planctl_web_request wr = PLANCTL_WEB_REQUEST_INIT;
    planctl_web_options o;

    web_options(s, &o, actor);
    wr.method = method;
    wr.target = target;
    if (r) {
        wr.host = r->host;
        wr.origin = r->origin;
        wr.content_type = r->ctype;
        wr.if_none_match = r->inm;
        wr.body = r->body;
        wr.body_len = r->clen > 0 ? (size_t)r->clen : 0;
    }
    return planctl_web_respond(out, s->db, &wr, &o) < 0 ? -1 : 0;
}

/* The live target of a page: its path with part=live. */
static char *live_target(const char *path)
{
    cli_buf b = CLI_BUF_INIT;

    cli_buf_add(&b, path);
    cli_buf_add(&b, strchr(path, '?') ? "&part=live" : "?part=live");
    return b.s;
}

/* The ETag the library gave an answer (the hash of its body), or "". */
static void body_tag(char *out, size_t n, const planctl_web_response *w)
{
    const char *e = w->headers ? strstr(w->headers, "ETag: ") : NULL;
    size_t len = e ? strcspn(e + 6, "\r") : 0;

    if (len >= n)
        len = n - 1;
    memcpy(out, e ? e + 6 : "", len);
    out[len] = '\0';
}

/* ---- streams ---- */

/* The event for a page's new inner HTML, into b: one data: line per
 * line of it. */
static void update_event(cli_buf *b, const char *html, size_t n)
{
    size_t i = 0;

    cli_buf_add(b, "event: update\n");
    while (i <= n) {
        size_t e = i;

        while (e < n && html[e] != '\n' && html[e] != '\r')
            e++;
        cli_buf_add(b, "data: ");
        cli_buf_addn(b, html + i, e - i);
        cli_buf_add(b, "\n");
        if (e >= n)
            break;
        i = e + 1;
    }
    cli_buf_add(b, "\n");
}

/* Sends an event to a stream's reader, or drops a reader that takes
 * them slower than pages change. */
static void send_event(conn *c, chunk *ev)
{
    if (waiting(c) > SERVE_PAGE_STREAM_BACKLOG)
        conn_close(c);
    else
        send_chunk(c, ev);
}

/* Keeps what waits on all streams together under
 * SERVE_PAGE_STREAM_BYTES by dropping the readers furthest behind. */
static void trim_streams(cli_web *s)
{
    size_t total = 0;
    conn *c, *slowest;

    for (c = s->conns; c; c = c->next)
        if (c->stream && !c->closing)
            total += waiting(c);
    while (total > SERVE_PAGE_STREAM_BYTES) {
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

/* How many streams are open from c's address. */
static int streams_from(const cli_web *s, const conn *c)
{
    const conn *o;
    int n = 0;

    for (o = s->conns; o; o = o->next)
        if (o->stream && !o->closing && !strcmp(o->peer, c->peer))
            n++;
    return n;
}

static void open_stream(conn *c, const req *r)
{
    cli_web *s = c->s;
    char *path = NULL, *target;
    planctl_web_response w;
    topic *t;
    int rc = planctl_web_stream_page(&path, r->target);

    if (rc == PLANCTL_ENOMEM) {
        plain(c, 500, "out of memory\n");
        return;
    }
    if (rc < 0) {
        plain(c, 400,
              "bad request: /stream?path=PAGE names a page, "
              "e.g. /stream?path=%2Finstances%2Fzk\n");
        return;
    }
    /* Streams last: some connections stay for the other requests, and
     * one address cannot take all the rest. */
    if (s->nstreams >= SERVE_PAGE_MAX_CLIENTS - SERVE_PAGE_RESERVED ||
        streams_from(s, c) >= SERVE_PAGE_STREAMS_PER_PEER) {
        planctl_free(path);
        plain(c, 503,
              s->nstreams >= SERVE_PAGE_MAX_CLIENTS - SERVE_PAGE_RESERVED
                  ? "too many live pages open: the page is shown without "
                    "updates; reload it later\n"
                  : "too many live pages open from this address: close "
                    "some tabs\n");
        return;
    }
    for (t = s->topics; t && strcmp(t->path, path); t = t->next)
        ;
    if (!t) {
        target = live_target(path);
        if (render(s, &w, "GET", target, r, NULL) < 0) {
            free(target);
            planctl_free(path);
            plain(c, 500, "out of memory\n");
            return;
        }
        free(target);
        if (w.status != 200) {
            reply(c, w.status, w.content_type, w.headers, w.body, w.body_len,
                  0);
            planctl_web_response_clear(&w);
            planctl_free(path);
            return;
        }
        if (!(t = calloc(1, sizeof *t)))
            cli_oom();
        t->path = path;
        path = NULL;
        body_tag(t->etag, sizeof t->etag, &w);
        t->follow = w.headers && strstr(w.headers, "X-Planctl-Follow:") != NULL;
        t->rendered = uv_now(s->loop);
        t->next = s->topics;
        s->topics = t;
        planctl_web_response_clear(&w);
    }
    planctl_free(path);
    t->readers++;
    c->topic = t;
    c->stream = 1;
    s->nstreams++;
    c->keep = 0;
    c->len = 0; /* still read: a reader's end closes it at once */
    {
        static const char head[] =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
            "X-Accel-Buffering: no\r\nConnection: keep-alive\r\n\r\n"
            "retry: 1000\n\n";

        send_bytes(c, head, sizeof head - 1);
    }
}

/* Renders each page that has readers and was touched, and sends it to
 * them when it changed.  A page that is dear to render (a filtered list
 * of 100,000 instances) waits three times as long as it took since its
 * last rendering, so the server never spends more than a quarter of its
 * time on one page however fast the database changes. */
static void refresh(cli_web *s, int changed, const planctl_web_changes *ch)
{
    uint64_t now = uv_now(s->loop);
    topic **pt = &s->topics, *t;

    while ((t = *pt) != NULL) {
        planctl_web_response w;
        char tag[24], *target;
        conn *c;

        if (t->readers == 0) {
            *pt = t->next;
            topic_free(t);
            continue;
        }
        pt = &t->next;
        if (changed && (!ch || planctl_web_changes_touch(ch, t->path)))
            t->dirty = 1;
        if (!t->dirty && !(t->follow && now - t->rendered >= FOLLOW_MS))
            continue;
        if (now - t->rendered < 3 * t->cost)
            continue;
        target = live_target(t->path);
        t->dirty = 0;
        t->rendered = now;
        {
            uint64_t t0 = uv_hrtime();
            int rc = render(s, &w, "GET", target, NULL, NULL);

            t->cost = (uv_hrtime() - t0) / 1000000;
            free(target);
            if (rc < 0)
                continue;
        }
        t->follow = w.headers && strstr(w.headers, "X-Planctl-Follow:") != NULL;
        if (w.status == 200) {
            body_tag(tag, sizeof tag, &w);
            if (strcmp(tag, t->etag) != 0) {
                cli_buf ev = CLI_BUF_INIT;
                chunk *k;

                memcpy(t->etag, tag, sizeof tag);
                update_event(&ev, w.body, w.body_len);
                k = chunk_new(ev.s, ev.len);
                cli_buf_free(&ev);
                for (c = s->conns; c; c = c->next)
                    if (c->topic == t && !c->closing)
                        send_event(c, k);
                chunk_drop(k);
                trim_streams(s);
            }
        }
        planctl_web_response_clear(&w);
    }
}

static void on_tick(uv_timer_t *h)
{
    cli_web *s = h->data;
    uint64_t now = uv_now(s->loop);
    int64_t v = 0;
    int changed = 0;
    conn *c, *next;

    planctl_web_changes *ch = NULL;

    if (s->topics && planctl_data_version(&v, s->db) == 0 && v != s->version) {
        s->version = v;
        changed = 1;
        planctl_web_changes_read(&ch, s->db, &s->seq); /* NULL: every page */
    }
    if (s->topics)
        refresh(s, changed, ch);
    planctl_web_changes_free(ch);
    for (c = s->conns; c; c = next) {
        next = c->next;
        if (c->stream || c->closing)
            continue;
        if (c->queued || c->paused) {
            /* An answer the client takes nothing of. */
            if (now - c->since >= SERVE_PAGE_IDLE_MS)
                conn_close(c);
        } else if (c->head_start ? now - c->head_start >= SERVE_PAGE_HEAD_MS
                                 : now - c->since >= SERVE_PAGE_IDLE_MS) {
            conn_close(c);
        }
    }
    if (now - s->pinged >= PING_MS) {
        chunk *k = chunk_new(": ping\n\n", 8);

        s->pinged = now;
        for (c = s->conns; c; c = c->next)
            if (c->stream && !c->closing)
                send_event(c, k);
        chunk_drop(k);
        trim_streams(s);
    }
}

/* ---- serving ---- */

static void serve(conn *c, req *r)
{
    cli_web *s = c->s;
    planctl_web_response w;
    char actor[96];
    int head = !strcmp(r->method, "HEAD");

    c->keep = r->keep;
    if (!host_ok(s, r)) {
        plain(c, 421,
              "misdirected: this server answers to 127.0.0.1 or "
              "localhost only (Host header)\n");
        return;
    }
    if (!strncmp(r->target, "/login", 6) &&
        (r->target[6] == '\0' || r->target[6] == '?')) {
        login(c, r);
        return;
    }
    if (!authorized(s, r)) {
        unauthorized(c, r->target, head);
        return;
    }
    if (!strcmp(r->method, "GET") && !strncmp(r->target, "/stream", 7) &&
        (r->target[7] == '\0' || r->target[7] == '?')) {
        open_stream(c, r);
        return;
    }
    snprintf(actor, sizeof actor, "web %s", c->peer);
    if (render(s, &w, r->method, r->target, r, actor) < 0) {
        plain(c, 500, "internal error: out of memory\n");
        return;
    }
    reply(c, w.status, w.content_type, w.headers, w.body, w.body_len, head);
    planctl_web_response_clear(&w);
}

/* Serves the whole requests in c->in, one a turn of the loop: after
 * one is answered, c is paused until its answers are taken (written()
 * resumes it), so a client gets no more than it reads. */
static void consume(conn *c)
{
    int served = 0;

    while (!c->closing && !c->stream && !c->last && c->len > 0) {
        char save;
        size_t headlen, total;
        serve_request h;
        req r;
        int bad;

        if (served) {
            c->paused = 1;
            uv_read_stop((uv_stream_t *)&c->tcp);
            return;
        }

        c->in[c->len] = '\0';
        if (memchr(c->in, '\0', c->len)) {
            plain(c, 400, "bad request\n");
            return;
        }
        bad = serve_parse_request(
            &h, c->in,
            c->len < SERVE_PAGE_MAX_HEAD ? c->len : SERVE_PAGE_MAX_HEAD);
        if (bad == SERVE_PARTIAL) {
            if (c->len >= SERVE_PAGE_MAX_HEAD)
                plain(c, 431, "request head too large\n");
            return;
        }
        if (bad == SERVE_BAD) {
            plain(c, 400, "bad request\n");
            return;
        }
        headlen = (size_t)bad;
        /* What the library is given, NUL-terminated, in a copy: c->in
         * must stay whole while the body is on its way. */
        if ((bad = take_head(&r, &h, c->s->head)) != 0) {
            plain(c, bad, "not implemented: an unknown method\n");
            return;
        }
        if (r.chunked) {
            plain(c, 501,
                  "not implemented: send a body with Content-Length, "
                  "not Transfer-Encoding\n");
            return;
        }
        if (r.clen > SERVE_PAGE_MAX_BODY) {
            plain(c, 413, "request body too large (64 KiB at most)\n");
            return;
        }
        if (!strcmp(r.method, "POST") && r.clen < 0) {
            plain(c, 411, "a POST needs Content-Length\n");
            return;
        }
        total = headlen + (size_t)(r.clen > 0 ? r.clen : 0);
        if (c->len < total)
            return; /* the rest of the body is on its way */
        /* The body, NUL-terminated for the library (it ends in the
         * buffer's spare byte or the next request's first, restored). */
        save = c->in[total];
        c->in[total] = '\0';
        r.body = c->in + headlen;
        serve(c, &r);
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
        c->head_start = c->len ? uv_now(c->s->loop) : 0;
    }
}

#define IN_CAP (SERVE_PAGE_MAX_HEAD + SERVE_PAGE_MAX_BODY + 1)

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    conn *c = h->data;

    (void)hint;
    if (!c->in && !(c->in = malloc(IN_CAP + 1)))
        cli_oom();
    *buf = uv_buf_init(c->in + c->len, (unsigned int)(IN_CAP - c->len));
}

static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    conn *c = st->data;

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
    if (!c->closing && !c->stream && !c->last && !c->paused && c->len >= IN_CAP)
        plain(c, 413, "request too large\n");
}

static void peer_name(conn *c)
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
 * request, or not reading its answer. */
static int drop_idle(cli_web *s, const conn *except)
{
    conn *c, *oldest = NULL;

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
    cli_web *s = ls->data;
    conn *c;

    if (status < 0 || s->closing)
        return;
    if (!(c = calloc(1, sizeof *c)))
        return;
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
    if (s->nconns > SERVE_PAGE_MAX_CLIENTS && !drop_idle(s, c)) {
        plain(c, 503, "too many clients\n");
        return;
    }
    if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb) != 0)
        conn_close(c);
}

/* ---- the server ---- */

int cli_web_is_loopback(const struct sockaddr *sa)
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
    cli_web *s = h->data;

    s->open_handles--;
    maybe_done(s);
}

/* 32 hex digits from the system's random source. */
static int random_hex(char out[33])
{
    unsigned char raw[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC), i;
    ssize_t n = fd >= 0 ? read(fd, raw, sizeof raw) : -1;

    if (fd >= 0)
        close(fd);
    if (n != (ssize_t)sizeof raw)
        return -1;
    for (i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

int cli_web_start(cli_web **out, uv_loop_t *loop, planctl *db,
                  const cli_web_config *cfg, char *url, size_t urlsize,
                  char *err, size_t errsize)
{
    cli_web *s = calloc(1, sizeof *s);
    struct sockaddr_storage ss;
    int rc, len = (int)sizeof ss, port;
    char bound[96];

    *out = NULL;
    if (!s)
        cli_oom();
    s->loop = loop;
    s->db = db;
    s->allow_actions = cfg->allow_actions;
    s->loopback = cli_web_is_loopback(cfg->addr);
    if (cfg->token && !(s->token = strdup(cfg->token)))
        cli_oom();
    uv_tcp_init(loop, &s->listener);
    uv_timer_init(loop, &s->tick);
    s->listener.data = s->tick.data = s;
    s->open_handles = 2;
    *out = s;
    if (random_hex(s->csrf) < 0) {
        snprintf(err, errsize, "cannot read /dev/urandom for the form token");
        return -1;
    }
    if ((rc = uv_tcp_bind(&s->listener, cfg->addr, 0)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&s->listener, 511, on_connection)) !=
            0 ||
        (rc = uv_tcp_getsockname(&s->listener, (struct sockaddr *)&ss, &len)) !=
            0) {
        cli_http_format_addr(bound, sizeof bound, cfg->addr);
        snprintf(err, errsize, "cannot listen on %s: %s", bound,
                 uv_strerror(rc));
        return -1;
    }
    cli_http_format_addr(bound, sizeof bound, (struct sockaddr *)&ss);
    snprintf(url, urlsize, "http://%s/", bound);
    port =
        ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                       : ((struct sockaddr_in *)&ss)->sin_port);
    snprintf(s->hosts[0], sizeof s->hosts[0], "%s", bound);
    snprintf(s->hosts[1], sizeof s->hosts[1], "localhost:%d", port);
    snprintf(s->hosts[2], sizeof s->hosts[2], "[::1]:%d", port);
    planctl_data_version(&s->version, db);
    {
        planctl_web_changes *ch = NULL;

        s->seq = PLANCTL_WEB_SINCE_NOW;
        if (planctl_web_changes_read(&ch, db, &s->seq) < 0)
            s->seq = 0;
        planctl_web_changes_free(ch);
    }
    s->pinged = uv_now(loop);
    uv_timer_start(&s->tick, on_tick, TICK_MS, TICK_MS);
    return 0;
}

void cli_web_close(cli_web *s, void (*done)(void *data), void *data)
{
    conn *c;

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
