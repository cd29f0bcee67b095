/*
 * limits.h - every limit of the program's HTTP server (server.c) in one
 * place, in two sets (server.c's serve_limits_page and
 * serve_limits_metrics): the web page (`planctl serve`, `planctl run
 * --ui`) and the metrics and health endpoint (`planctl run
 * --metrics-addr`).  planctl-engine(7)'s web and metrics sections quote
 * these numbers.
 */
#ifndef PCTL_SERVE_LIMITS_H
#define PCTL_SERVE_LIMITS_H

/* ---- the web page ---- */

/* The most bytes of a request's line and headers, and of its body. */
#define SERVE_PAGE_MAX_HEAD 16384
#define SERVE_PAGE_MAX_BODY 65536
/* The most clients at once (open pages hold one stream each). */
#define SERVE_PAGE_MAX_CLIENTS 1024
/* Connections streams may not take, kept for the other requests. */
#define SERVE_PAGE_RESERVED 128
/* The most streams (open pages) from one client address. */
#define SERVE_PAGE_STREAMS_PER_PEER 32
/* The most bytes of updates waiting on one stream, and on all together. */
#define SERVE_PAGE_STREAM_BACKLOG (4u << 20)
#define SERVE_PAGE_STREAM_BYTES (32u << 20)
/* To send a whole request, from its first byte (or from connecting). */
#define SERVE_PAGE_HEAD_MS 10000
/* Idle between requests on a kept connection, or with an answer that
 * the client takes nothing of. */
#define SERVE_PAGE_IDLE_MS 30000
/* How often the timers are looked at and the database is asked whether
 * anything changed for the open pages. */
#define SERVE_PAGE_TICK_MS 250

/* ---- the metrics and health endpoint ---- */

/* The most bytes of a request (line and headers). */
#define SERVE_METRICS_MAX_REQUEST 8192
/* The most clients connected at once; more are turned away. */
#define SERVE_METRICS_MAX_CLIENTS 256
/* To send a whole request, from connecting; and to take the answer. */
#define SERVE_METRICS_HEAD_MS 10000
#define SERVE_METRICS_IDLE_MS 10000
/* How often the timers are looked at. */
#define SERVE_METRICS_TICK_MS 1000

#endif
