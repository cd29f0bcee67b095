/*
 * request.c - the request head parser of every server of the program
 * (request.h says what it refuses and why).  It copies nothing: what it
 * finds points into the caller's buffer.
 */
#include "serve/request.h"

#include <string.h>
#include <strings.h>

/* RFC 9110 tchar: what a method or a header name is made of. */
static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* A byte a field value may hold: visible, a space, a tab, or not ASCII. */
static int is_value_char(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* The end of the line starting at p (the CR of its CRLF) within end,
 * or NULL: *bad when the line holds a CR or LF that is not its end. */
static const char *line_end(const char *p, const char *end, int *bad)
{
    const char *q;

    for (q = p; q < end; q++) {
        if (*q == '\n') {
            *bad = 1; /* a bare LF */
            return NULL;
        }
        if (*q == '\r') {
            if (q + 1 == end)
                return NULL;
            if (q[1] != '\n')
                *bad = 1; /* a bare CR */
            return *bad ? NULL : q;
        }
    }
    return NULL;
}

static int name_is(const serve_header *h, const char *name)
{
    return h->name_len == strlen(name) &&
           !strncasecmp(h->name, name, h->name_len);
}

/* Whether the comma-separated list v[0..n) names token (any case). */
static int list_has(const char *v, size_t n, const char *token)
{
    size_t i = 0, t = strlen(token);

    while (i < n) {
        size_t j;

        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        for (j = i; j < n && v[j] != ','; j++)
            ;
        {
            size_t e = j;

            while (e > i && (v[e - 1] == ' ' || v[e - 1] == '\t'))
                e--;
            if (e - i == t && !strncasecmp(v + i, token, t))
                return 1;
        }
        i = j;
    }
    return 0;
}

static int parse_line(serve_request *r, const char *p, const char *eol)
{
    const char *sp1, *sp2, *q;

    for (q = p; q < eol && is_tchar((unsigned char)*q); q++)
        ;
    if (q == p || q == eol || *q != ' ')
        return -1;
    sp1 = q;
    for (q = sp1 + 1; q < eol && (unsigned char)*q > 0x20 && *q != 0x7f; q++)
        ;
    if (q == sp1 + 1 || q == eol || *q != ' ')
        return -1;
    sp2 = q;
    if (eol - (sp2 + 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
        (sp2[8] != '0' && sp2[8] != '1'))
        return -1;
    r->method = p;
    r->method_len = (size_t)(sp1 - p);
    r->target = sp1 + 1;
    r->target_len = (size_t)(sp2 - sp1 - 1);
    r->minor = sp2[8] - '0';
    return 0;
}

static int parse_header(serve_request *r, const char *p, const char *eol)
{
    serve_header *h;
    const char *q, *v, *e, *colon;

    if (r->nheaders == SERVE_MAX_HEADERS)
        return -1;
    for (q = p; q < eol && is_tchar((unsigned char)*q); q++)
        ;
    if (q == p || q == eol || *q != ':')
        return -1; /* no name, a folded line, or a space before ':' */
    colon = q;
    for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
        ;
    for (e = eol; e > v && (e[-1] == ' ' || e[-1] == '\t'); e--)
        ;
    for (q = v; q < e; q++)
        if (!is_value_char((unsigned char)*q))
            return -1;
    h = &r->headers[r->nheaders++];
    h->name = p;
    h->name_len = (size_t)(colon - p);
    h->value = v;
    h->value_len = (size_t)(e - v);
    if (name_is(h, "Host")) {
        if (r->host)
            return -1;
        r->host = h;
    } else if (name_is(h, "Content-Length")) {
        long long n = 0;

        if (r->content_length >= 0 || h->value_len == 0 || h->value_len > 18)
            return -1;
        for (q = v; q < e; q++) {
            if (*q < '0' || *q > '9')
                return -1;
            n = n * 10 + (*q - '0');
        }
        r->content_length = n;
    } else if (name_is(h, "Transfer-Encoding")) {
        r->chunked = 1;
    }
    return 0;
}

int serve_parse_request(serve_request *r, const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len, *eol;
    int bad = 0;

    memset(r, 0, sizeof *r);
    r->content_length = -1;
    if (!(eol = line_end(p, end, &bad)))
        return bad ? SERVE_BAD : SERVE_PARTIAL;
    if (parse_line(r, p, eol) < 0)
        return SERVE_BAD;
    for (p = eol + 2;; p = eol + 2) {
        if (!(eol = line_end(p, end, &bad)))
            return bad ? SERVE_BAD : SERVE_PARTIAL;
        if (eol == p)
            break; /* the blank line */
        if (parse_header(r, p, eol) < 0)
            return SERVE_BAD;
    }
    /* 1.1 keeps its connection unless it says close; 1.0 only when it
     * asks to. */
    {
        size_t n = 0;
        const char *c = serve_header_value(r, "Connection", &n);

        r->close = r->minor ? c && list_has(c, n, "close")
                            : !(c && list_has(c, n, "keep-alive"));
    }
    return (int)(eol + 2 - buf);
}

const char *serve_header_value(const serve_request *r, const char *name,
                               size_t *len)
{
    size_t i;

    for (i = 0; i < r->nheaders; i++)
        if (name_is(&r->headers[i], name)) {
            *len = r->headers[i].value_len;
            return r->headers[i].value;
        }
    return NULL;
}
