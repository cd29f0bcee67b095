/*
 * page.c - the web page handler of the program's server (handlers.h),
 * for `planctl serve` and `planctl run --ui`: the library's page and API
 * (planctl_web_respond()) with what a server adds to it.
 *
 *   - who may ask: with a token, every request carries it (Authorization:
 *     Bearer, or the cookie that /login?token= sets); on loopback
 *     without a token, the Host header must name the loopback address,
 *     so that a web site cannot reach this server by rebinding its own
 *     name to 127.0.0.1;
 *   - /stream?path=PAGE: Server-Sent Events for an open page (a topic:
 *     the page and its readers).  A stream's first event is the page's
 *     live part as it is when the stream opens, so that a change between
 *     the page's load and its stream is shown too.  At each tick of the
 *     server (250 ms) the handler asks the database whether anything was
 *     committed (planctl_data_version(): SQLite's data_version,
 *     PostgreSQL's commit counter); when something was, the library says
 *     which open pages the events since its last look touch
 *     (planctl_web_changes_read(), src/web/live.c), and each such page
 *     that has readers is rendered once (?part=live) and sent to all of
 *     them if it changed.  A run
 *     page with a running attempt is rendered every second too, since
 *     its output grows in files, not rows.  The caps on streams and what
 *     waits on them are the server's.
 *
 * No compression: the pages carry the form token, and compressing a
 * secret beside text a client chooses leaks it (BREACH).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/secrets.h"
#include "serve/handlers.h"

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

typedef struct page {
    serve_server *s;
    planctl *db;
    topic *topics;
    int64_t version;
    int64_t seq; /* the last event looked at */
    uint64_t pinged;
    int allow_actions;
    char *token;
    int loopback;
    char csrf[33];
    char hosts[3][100]; /* the Host values loopback accepts */
} page;

static void topic_free(topic *t)
{
    planctl_free(t->path);
    free(t);
}

/* ---- who may ask ---- */

/* Whether r carries the token, in its Authorization header or its
 * planctl_token cookie. */
static int authorized(const page *pg, const serve_req *r)
{
    const char *auth = serve_req_header(r, "Authorization");
    const char *cookie = serve_req_header(r, "Cookie"), *k;

    if (!pg->token)
        return 1;
    if (auth && !strncasecmp(auth, "Bearer ", 7) &&
        pctl_secret_equal(auth + 7, strlen(auth + 7), pg->token))
        return 1;
    for (k = cookie; k && (k = strstr(k, "planctl_token=")) != NULL; k++) {
        const char *v = k + 14, *end = v;

        if (k != cookie && k[-1] != ' ' && k[-1] != ';')
            continue;
        while (*end && *end != ';')
            end++;
        if (pctl_secret_equal(v, (size_t)(end - v), pg->token))
            return 1;
    }
    return 0;
}

static int host_ok(const page *pg, const serve_req *r)
{
    int i;

    if (!pg->loopback || pg->token)
        return 1;
    for (i = 0; r->host && i < 3; i++)
        if (!strcasecmp(r->host, pg->hosts[i]))
            return 1;
    return 0;
}

/* 401, with a page saying how to give the token, or for the API its
 * error document. */
static void unauthorized(serve_conn *c, const char *target, int flags)
{
    static const char html[] =
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
        serve_reply(c, 401, "application/json", headers, doc, sizeof doc - 1,
                    flags);
    else
        serve_reply(c, 401, "text/html; charset=utf-8", headers, html,
                    sizeof html - 1, flags);
}

/* /login?token=T: the token as a cookie, then the instances. */
static void login(page *pg, serve_conn *c, const serve_req *r)
{
    const char *t = strstr(r->target, "token=");
    size_t n = 0;
    pctl_buf h = PCTL_BUF_INIT;
    static const char pre[] = "Location: /\r\nCache-Control: no-store\r\n"
                              "Set-Cookie: planctl_token=";
    static const char post[] = "; Path=/; HttpOnly; SameSite=Strict\r\n";

    if (t)
        for (t += 6; t[n] && t[n] != '&'; n++)
            ;
    if (!t || !pg->token || !pctl_secret_equal(t, n, pg->token)) {
        unauthorized(c, r->target, 0);
        return;
    }
    if (pctl_buf_add(&h, pre, sizeof pre - 1) < 0 ||
        pctl_buf_add(&h, t, n) < 0 ||
        pctl_buf_add(&h, post, sizeof post - 1) < 0)
        serve_plain(c, 500, "internal error: out of memory\n");
    else
        serve_reply(c, 303, "text/plain; charset=utf-8", h.s, "", 0, 0);
    pctl_buf_free(&h);
}

/* ---- the library's pages ---- */

/* Asks the library for target; 0, or -1 when it failed (out of memory).
 * r gives the request's headers and body (NULL: a plain GET). */
static int render(page *pg, planctl_web_response *out, const char *method,
                  const char *target, const serve_req *r, const char *actor)
{
    planctl_web_request wr = PLANCTL_WEB_REQUEST_INIT;
    planctl_web_options o = PLANCTL_WEB_OPTIONS_INIT;

    o.allow_actions = pg->allow_actions;
    o.csrf = pg->csrf;
    o.actor = actor;
    o.stream = 1;
    wr.method = method;
    wr.target = target;
    if (r) {
        wr.host = r->host;
        wr.origin = serve_req_header(r, "Origin");
        wr.content_type = serve_req_header(r, "Content-Type");
        wr.if_none_match = serve_req_header(r, "If-None-Match");
        wr.body = r->body;
        wr.body_len = r->body_len;
    }
    return planctl_web_respond(out, pg->db, &wr, &o) < 0 ? -1 : 0;
}

/* The live target of a page: its path with part=live; NULL: out of
 * memory. */
static char *live_target(const char *path)
{
    size_t n = strlen(path);
    char *t = malloc(n + 11);

    if (t)
        snprintf(t, n + 11, "%s%s", path,
                 strchr(path, '?') ? "&part=live" : "?part=live");
    return t;
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

static int follows(const planctl_web_response *w)
{
    return w->headers && strstr(w->headers, "X-Planctl-Follow:") != NULL;
}

/* ---- streams ---- */

/* The event for a page's new inner HTML, into b: one data: line per
 * line of it.  -1: out of memory. */
static int update_event(pctl_buf *b, const char *html, size_t n)
{
    size_t i = 0;
    int bad = pctl_buf_add(b, "event: update\n", 14);

    while (i <= n) {
        size_t e = i;

        while (e < n && html[e] != '\n' && html[e] != '\r')
            e++;
        bad |= pctl_buf_add(b, "data: ", 6);
        bad |= pctl_buf_add(b, html + i, e - i);
        bad |= pctl_buf_add(b, "\n", 1);
        if (e >= n)
            break;
        i = e + 1;
    }
    bad |= pctl_buf_add(b, "\n", 1);
    return bad ? -1 : 0;
}

/* The topic of path, made when no stream has it, and its live part as
 * it is now in *w (clear it after); NULL when c was answered instead
 * (the page is not there, out of memory). */
static topic *topic_of(page *pg, serve_conn *c, const serve_req *r, char **path,
                       planctl_web_response *w)
{
    char *target;
    topic *t;

    if (!(target = live_target(*path)) ||
        render(pg, w, "GET", target, r, NULL) < 0) {
        free(target);
        serve_plain(c, 500, "out of memory\n");
        return NULL;
    }
    free(target);
    if (w->status != 200) {
        serve_reply(c, w->status, w->content_type, w->headers, w->body,
                    w->body_len, 0);
        planctl_web_response_clear(w);
        return NULL;
    }
    for (t = pg->topics; t && strcmp(t->path, *path); t = t->next)
        ;
    if (t)
        return t;
    if (!(t = calloc(1, sizeof *t))) {
        planctl_web_response_clear(w);
        serve_plain(c, 500, "out of memory\n");
        return NULL;
    }
    t->path = *path;
    *path = NULL;
    body_tag(t->etag, sizeof t->etag, w);
    t->follow = follows(w);
    t->rendered = uv_now(serve_loop(pg->s));
    t->next = pg->topics;
    pg->topics = t;
    return t;
}

static void open_stream(page *pg, serve_conn *c, const serve_req *r)
{
    static const char head[] =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
        "X-Accel-Buffering: no\r\nConnection: keep-alive\r\n\r\n"
        "retry: 1000\n\n";
    char *path = NULL;
    planctl_web_response w;
    pctl_buf b = PCTL_BUF_INIT;
    topic *t;
    int rc = planctl_web_stream_page(&path, r->target), room;

    if (rc == PLANCTL_ENOMEM) {
        serve_plain(c, 500, "out of memory\n");
        return;
    }
    if (rc < 0) {
        serve_plain(c, 400,
                    "bad request: /stream?path=PAGE names a page, "
                    "e.g. /stream?path=%2Finstances%2Fzk\n");
        return;
    }
    /* Streams last: some connections stay for the other requests, and
     * one address cannot take all the rest. */
    if ((room = serve_stream_room(c)) != 0) {
        planctl_free(path);
        serve_plain(c, 503,
                    room == SERVE_STREAMS_FULL
                        ? "too many live pages open: the page is shown "
                          "without updates; reload it later\n"
                        : "too many live pages open from this address: "
                          "close some tabs\n");
        return;
    }
    t = topic_of(pg, c, r, &path, &w);
    planctl_free(path);
    if (!t)
        return;
    /* The stream starts with the live part as it is now: a change that
     * came between the page's load and this request is otherwise never
     * sent, as the topic's tag already has it. */
    if (pctl_buf_add(&b, head, sizeof head - 1) < 0 ||
        update_event(&b, w.body, w.body_len) < 0) {
        planctl_web_response_clear(&w);
        pctl_buf_free(&b);
        serve_plain(c, 500, "out of memory\n");
        return;
    }
    planctl_web_response_clear(&w);
    t->readers++;
    serve_stream_start(c, t, b.s, b.len);
    pctl_buf_free(&b);
}

/* Renders each page that has readers and was touched, and sends it to
 * them when it changed.  A page that is dear to render (a filtered list
 * of 100,000 instances) waits three times as long as it took since its
 * last rendering, so the server never spends more than a quarter of its
 * time on one page however fast the database changes. */
static void refresh(page *pg, uint64_t now, int changed,
                    const planctl_web_changes *ch)
{
    topic **pt = &pg->topics, *t;

    while ((t = *pt) != NULL) {
        planctl_web_response w;
        char tag[24], *target;
        uint64_t t0;
        int rc;

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
        if (!(target = live_target(t->path)))
            continue;
        t->dirty = 0;
        t->rendered = now;
        t0 = uv_hrtime();
        rc = render(pg, &w, "GET", target, NULL, NULL);
        t->cost = (uv_hrtime() - t0) / 1000000;
        free(target);
        if (rc < 0)
            continue;
        t->follow = follows(&w);
        if (w.status == 200) {
            body_tag(tag, sizeof tag, &w);
            if (strcmp(tag, t->etag) != 0) {
                pctl_buf ev = PCTL_BUF_INIT;

                if (update_event(&ev, w.body, w.body_len) == 0) {
                    memcpy(t->etag, tag, sizeof tag);
                    serve_stream_send(pg->s, t, ev.s, ev.len);
                }
                pctl_buf_free(&ev);
            }
        }
        planctl_web_response_clear(&w);
    }
}

static void tick(void *data, serve_server *s, uint64_t now)
{
    page *pg = data;
    planctl_web_changes *ch = NULL;
    int64_t v = 0;
    int changed = 0;

    (void)s;
    if (pg->topics && planctl_data_version(&v, pg->db) == 0 &&
        v != pg->version) {
        pg->version = v;
        changed = 1;
        planctl_web_changes_read(&ch, pg->db, &pg->seq); /* NULL: every page */
    }
    if (pg->topics)
        refresh(pg, now, changed, ch);
    planctl_web_changes_free(ch);
    if (now - pg->pinged >= PING_MS) {
        pg->pinged = now;
        serve_stream_send(pg->s, NULL, ": ping\n\n", 8);
    }
}

static void stream_ended(void *data, void *tag)
{
    topic *t = tag;

    (void)data;
    t->readers--;
}

/* ---- serving ---- */

static void request(void *data, serve_conn *c, const serve_req *r)
{
    page *pg = data;
    planctl_web_response w;
    char actor[96];
    int flags = !strcmp(r->method, "HEAD") ? SERVE_HEAD_ONLY : 0;

    if (!host_ok(pg, r)) {
        serve_plain(c, 421,
                    "misdirected: this server answers to 127.0.0.1 or "
                    "localhost only (Host header)\n");
        return;
    }
    if (!strncmp(r->target, "/login", 6) &&
        (r->target[6] == '\0' || r->target[6] == '?')) {
        login(pg, c, r);
        return;
    }
    /* The icon is the same for everyone and tells nothing: a browser
     * asks for it on the 401 page too, where a refusal is a console
     * error. */
    if (!authorized(pg, r) && strcmp(r->target, "/favicon.ico") != 0) {
        unauthorized(c, r->target, flags);
        return;
    }
    if (!strcmp(r->method, "GET") && !strncmp(r->target, "/stream", 7) &&
        (r->target[7] == '\0' || r->target[7] == '?')) {
        open_stream(pg, c, r);
        return;
    }
    snprintf(actor, sizeof actor, "web %s", serve_peer(c));
    if (render(pg, &w, r->method, r->target, r, actor) < 0) {
        serve_plain(c, 500, "internal error: out of memory\n");
        return;
    }
    serve_reply(c, w.status, w.content_type, w.headers, w.body, w.body_len,
                flags);
    planctl_web_response_clear(&w);
}

static void started(void *data, serve_server *s, const struct sockaddr *bound)
{
    page *pg = data;
    char addr[96];
    const char *colon;

    pg->s = s;
    pg->loopback = serve_is_loopback(bound);
    serve_format_addr(addr, sizeof addr, bound);
    colon = strrchr(addr, ':');
    snprintf(pg->hosts[0], sizeof pg->hosts[0], "%s", addr);
    snprintf(pg->hosts[1], sizeof pg->hosts[1], "localhost%s", colon);
    snprintf(pg->hosts[2], sizeof pg->hosts[2], "[::1]%s", colon);
    pg->pinged = uv_now(serve_loop(s));
}

static void done(void *data)
{
    page *pg = data;
    topic *t;

    while ((t = pg->topics) != NULL) {
        pg->topics = t->next;
        topic_free(t);
    }
    free(pg->token);
    free(pg);
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

int serve_page_handler(serve_handler *out, const serve_page_config *cfg,
                       char *err, size_t errsize)
{
    page *pg = calloc(1, sizeof *pg);

    memset(out, 0, sizeof *out);
    if (!pg || (cfg->token && !(pg->token = strdup(cfg->token)))) {
        free(pg);
        snprintf(err, errsize, "cannot serve the page: out of memory");
        return -1;
    }
    if (random_hex(pg->csrf) < 0) {
        free(pg->token);
        free(pg);
        snprintf(err, errsize, "cannot read /dev/urandom for the form token");
        return -1;
    }
    pg->db = cfg->db;
    pg->allow_actions = cfg->allow_actions;
    planctl_data_version(&pg->version, pg->db);
    {
        planctl_web_changes *ch = NULL;

        pg->seq = PLANCTL_WEB_SINCE_NOW;
        if (planctl_web_changes_read(&ch, pg->db, &pg->seq) < 0)
            pg->seq = 0;
        planctl_web_changes_free(ch);
    }
    out->data = pg;
    out->started = started;
    out->request = request;
    out->tick = tick;
    out->stream_ended = stream_ended;
    out->done = done;
    return 0;
}
