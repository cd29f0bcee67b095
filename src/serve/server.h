/*
 * server.h - the one HTTP/1.1 server of the program (server.c), on a
 * libuv loop the caller gives (the engine's own under `planctl run`).
 *
 * The server owns the connections: accept, the request head and body
 * (parsed by request.c), keep-alive and pipelining, back-pressure, the
 * header timer and idle drop, closing once the last answer is written,
 * and live streams with their caps.  What a request means is its
 * handler's: the caller gives a table of functions (serve_handler), and
 * the server calls them and nothing else above it.  The two handlers of
 * the program are the web page (page.c) and the metrics and health
 * endpoint (metrics_handler.c).  Every limit is in limits.h.
 */
#ifndef PCTL_SERVE_SERVER_H
#define PCTL_SERVE_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "serve/limits.h"
#include "serve/request.h"

typedef struct serve_server serve_server;
typedef struct serve_conn serve_conn;

/* The limits one server keeps (limits.h gives the two sets). */
typedef struct serve_limits {
    size_t max_head;       /* bytes of a request line and headers */
    size_t max_body;       /* bytes of a body; 0: no request has one */
    int max_clients;       /* connections at once */
    int max_streams;       /* streams at once (0: none) */
    int streams_per_peer;  /* streams from one address */
    size_t stream_backlog; /* bytes waiting on one stream: dropped past it */
    size_t stream_bytes;   /* bytes waiting on all streams together */
    unsigned head_ms;      /* to send a whole request */
    unsigned idle_ms;      /* idle between requests, or not reading */
    unsigned tick_ms;      /* how often the timers are looked at */
} serve_limits;

extern const serve_limits serve_limits_page, serve_limits_metrics;

/* One request, as a handler is given it: every string NUL-terminated,
 * valid during the call only. */
typedef struct serve_req {
    const char *method, *target;
    const char *host; /* NULL: no Host header */
    const char *body; /* body_len bytes and a NUL ("" without a body) */
    size_t body_len;
    size_t nheaders;
    const char *names[SERVE_MAX_HEADERS], *values[SERVE_MAX_HEADERS];
} serve_req;

/* The value of header name (any case) of r, or NULL. */
const char *serve_req_header(const serve_req *r, const char *name);

/*
 * What the server calls.  request answers r on c exactly once, by
 * serve_reply() or serve_stream_start(), before it returns.  The others
 * may be NULL: started runs once the server listens (bound is its
 * address); tick every limits' tick_ms; stream_ended when a stream of tag
 * ends (its reader left or was dropped, or the server closes); done when
 * the server is freed, last.
 */
typedef struct serve_handler {
    void *data;
    void (*started)(void *data, serve_server *s, const struct sockaddr *bound);
    void (*request)(void *data, serve_conn *c, const serve_req *r);
    void (*tick)(void *data, serve_server *s, uint64_t now);
    void (*stream_ended)(void *data, void *tag);
    void (*done)(void *data);
} serve_handler;

/*
 * Listens on addr and serves with h on loop within lim (which must
 * outlive the server).  The address bound goes to bound ("127.0.0.1:40211").
 * Returns 0, or -1 with a one-line message in err ("cannot listen on
 * 127.0.0.1:9464: address already in use").  Either way *out is set:
 * close it with serve_close(), which also ends the handler (done).
 */
int serve_start(serve_server **out, uv_loop_t *loop,
                const struct sockaddr *addr, const serve_limits *lim,
                const serve_handler *h, char *bound, size_t boundsize,
                char *err, size_t errsize);

/* Stops listening and closes every connection; once every handle is
 * closed the handler's done runs, the server is freed and done(data)
 * runs (done may be NULL).  NULL s calls nothing.  Can't fail. */
void serve_close(serve_server *s, void (*done)(void *data), void *data);

/* The loop s runs on. */
uv_loop_t *serve_loop(const serve_server *s);

/* ---- answers ---- */

#define SERVE_HEAD_ONLY 1 /* the answer to HEAD: no body */
#define SERVE_CLOSE 2     /* close the connection once it is written */

/*
 * Answers c: the status line, Content-Type and Content-Length (none for
 * 304), headers ("Name: value\r\n" each, or NULL), Connection, and the
 * body.  Can't fail: out of memory closes c.
 */
void serve_reply(serve_conn *c, int code, const char *type, const char *headers,
                 const char *body, size_t len, int flags);

/* A plain text answer that closes c, with no-store and the security
 * headers. */
void serve_plain(serve_conn *c, int code, const char *text);

/* The address c comes from ("127.0.0.1", "::1"). */
const char *serve_peer(const serve_conn *c);

/* ---- streams ---- */

#define SERVE_STREAMS_FULL 1 /* as many streams as the server takes */
#define SERVE_PEER_FULL 2    /* as many as one address may open */

/* Whether c may become a stream: 0, SERVE_STREAMS_FULL or
 * SERVE_PEER_FULL. */
int serve_stream_room(const serve_conn *c);

/* Makes c a stream of tag (a handler's topic, not NULL), sending head
 * first (its answer's head and what starts the stream).  What its reader
 * sends from now on is read and dropped. */
void serve_stream_start(serve_conn *c, void *tag, const char *head, size_t n);

/* Sends n bytes to every stream of tag (NULL: every stream).  A reader
 * with more than the stream backlog waiting is dropped instead, and when
 * what waits on all streams passes the stream bytes the readers furthest
 * behind are dropped. */
void serve_stream_send(serve_server *s, const void *tag, const char *data,
                       size_t n);

/* ---- addresses ---- */

/* Writes sa as "127.0.0.1:8080" or "[::1]:8080".  Can't fail. */
void serve_format_addr(char *buf, size_t n, const struct sockaddr *sa);

/* Whether sa is a loopback address (127.0.0.0/8, ::1). */
int serve_is_loopback(const struct sockaddr *sa);

#endif
