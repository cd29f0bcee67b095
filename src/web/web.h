/*
 * web.h - the web page and /api/v1 of planctl, as one function from a
 * request to a response (planctl_web_respond, route.c).  No sockets: the
 * program's server (src/serve/server.c) and an embedder's own HTTP
 * server call it alike.
 *
 *   html.c    the page being written: appends that remember running out
 *             of memory, HTML escaping, percent-encoding
 *   pct.c     the one percent-decoder (an encoded NUL refused)
 *   route.c   the request: its path, query and form; which page or
 *             document; the security headers; ETag and 304
 *   param.c   a parsed request's query and form fields
 *   jfield.c  a field of a JSON document the library made
 *   live.c    live pages: the page a stream asks for, and which open
 *             pages a change touches
 *   pages.c   the HTML pages, from the same JSON documents as the CLI's
 *   api.c     /api/v1 and the actions
 *   assets    app.css and app.js, embedded at build time
 */
#ifndef PCTL_WEB_WEB_H
#define PCTL_WEB_WEB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "planctl.h"

/* ---- the page being written (html.c) ---- */

/* A growing string whose appends never fail: the first that runs out of
 * memory sets oom and the rest do nothing, so a page is written straight
 * through and checked once at the end. */
typedef struct wb {
    pctl_buf b;
    int oom;
} wb;

void pctl_wb_add(wb *w, const char *s);
void pctl_wb_addn(wb *w, const char *s, size_t n);
void pctl_wb_addf(wb *w, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Text from the database or the request, as HTML text or an attribute
 * value in double quotes: & < > " ' escaped; C0 controls but newline and
 * tab, DEL, the Unicode controls that reorder text (bidi overrides and
 * isolates, U+061C, U+200E-F, U+202A-E, U+2066-9) and the characters that
 * show nothing (zero width spaces and joiners U+200B-D, U+2060-4, U+FEFF,
 * the soft hyphen, fillers, tags: html.c) shown as a visible "<U+202E>"
 * instead, so that nothing a name or an output holds can hide or reorder
 * what is around it; bytes that are not UTF-8 as U+FFFD.
 * NULL: nothing. */
void pctl_wb_text(wb *w, const char *s);
/* s as one percent-encoded path segment or query value. */
void pctl_wb_url(wb *w, const char *s);
#define WB_INIT                                                                \
    {                                                                          \
        PCTL_BUF_INIT, 0                                                       \
    }
/* What w holds so far ("" when nothing). */
static inline const char *wb_str(const wb *w)
{
    return w->b.s ? w->b.s : "";
}
/* Gives the bytes to the caller (NULL when out of memory) and empties w. */
char *pctl_wb_take(wb *w, size_t *len);
void pctl_wb_free(wb *w);

/* ---- percent-decoding (pct.c) ---- */

/* A decoded copy of s[0..n): %XX, and '+' as a space when plus.  NULL
 * when out of memory or when the result would hold a NUL (%00). */
char *pctl_web_decode(const char *s, size_t n, int plus);

/* ---- the request (route.c) ---- */

#define WEB_MAX_PARAMS 16

typedef struct web_kv {
    char *key, *value; /* decoded */
} web_kv;

/* A decoded path, query and form. */
typedef struct web_req {
    const planctl_web_request *raw;
    const planctl_web_options *opts;
    char *path;   /* decoded, without the query */
    char *seg[8]; /* its segments, decoded */
    int nseg;
    web_kv q[WEB_MAX_PARAMS]; /* query, then form fields */
    int nq;
    int live; /* ?part=live: only the live region */
} web_req;

/* A query or form value, or NULL. */
const char *pctl_web_param(const web_req *r, const char *key);

/* The response being made: status, type, extra headers, body. */
typedef struct web_res {
    int status;
    const char *type;
    wb headers; /* "Name: value\r\n" lines beyond the usual ones */
    wb body;
} web_res;

/* ---- pages (pages.c) ---- */

void pctl_web_page_instances(web_res *res, planctl *p, const web_req *r);
void pctl_web_page_instance(web_res *res, planctl *p, const web_req *r,
                            const char *name);
void pctl_web_page_run(web_res *res, planctl *p, const web_req *r,
                       const char *name, int64_t run);
/* The run's timeline as an SVG picture (image/svg+xml). */
void pctl_web_timeline(web_res *res, planctl *p, const web_req *r,
                       const char *name, int64_t run);
void pctl_web_page_engines(web_res *res, planctl *p, const web_req *r);
/* A page that says what went wrong: p#error with msg, or for 401
 * p#unauthorized. */
void pctl_web_page_error(web_res *res, const web_req *r, int status,
                         const char *msg);
/* The same for an action on instance that was refused: with a link back
 * to the instance's page (p#back). */
void pctl_web_page_refused(web_res *res, const web_req *r, int status,
                           const char *msg, const char *instance);
/* The status of a library error code as HTTP: 400, 404, 409 or 500. */
int pctl_web_http_status(int rc);

/* ---- /api/v1 and the actions (api.c) ---- */

void pctl_web_api(web_res *res, planctl *p, const web_req *r);
/* POST /instances/NAME/ACTION from a page's form. */
void pctl_web_action_form(web_res *res, planctl *p, const web_req *r,
                          const char *name, const char *action);

/* ---- the timeline (svg.c) ---- */

/* JSON fields: a string or NULL; an integer or a time (RFC 3339) into
 * *out, 1 when there is one. */
const char *pctl_web_jstr(const json_t *o, const char *key);
int pctl_web_jint(int64_t *out, const json_t *o, const char *key);
int pctl_web_jtime(int64_t *out, const json_t *o, const char *key);

/*
 * Appends to b a standalone SVG 1.1 document: a Gantt chart of run, a run
 * object of the status document whose steps carry their "attempts" (what
 * planctl_status_json() gives the run chosen with opts.run), of instance
 * instance.  One row per phase (its span) and per step, one bar per
 * attempt coloured by how it ended (an unfinished one reaches now), the
 * waits between attempts as dashed lines, a time axis in UTC, a <title>
 * tooltip on everything and a legend.  No script, no external resource.
 * A pure function of its arguments: the same document and now give the
 * same bytes.  Out of memory: b->oom.
 */
void pctl_web_render_svg(wb *b, const char *instance, const json_t *run,
                         int64_t now);

/* ---- the embedded assets (generated at build time) ---- */

typedef struct web_asset {
    const char *name; /* "app.css" */
    const char *type;
    const char *data;
    size_t len;
} web_asset;

extern const web_asset pctl_web_assets[];
extern const size_t pctl_web_nassets;

#endif
