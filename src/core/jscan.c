/*
 * jscan.c - reading a JSON text of any length in bounded memory (see
 * jscan.h).
 */
#include "core/jscan.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"

#define BUF_SIZE 65536
#define MAX_DEPTH 2048 /* jansson's own */

int pctl_jscan_init(pctl_jscan *s, pctl_jscan_read_fn read, void *data,
                    size_t max, const char *origin)
{
    memset(s, 0, sizeof *s);
    s->read = read;
    s->data = data;
    s->max = max;
    s->line = 1;
    s->origin = origin;
    s->buf = pctl_malloc(BUF_SIZE);
    return s->buf ? 0 : PCTL_JSCAN_NOMEM;
}

void pctl_jscan_free(pctl_jscan *s)
{
    pctl_free(s->buf);
    s->buf = NULL;
}

/* The next byte, not taken: 0-255, 256 at the end, or PCTL_JSCAN_READ. */
static int look(pctl_jscan *s)
{
    if (s->at < s->have)
        return (unsigned char)s->buf[s->at];
    if (s->eof)
        return 256;
    s->at = s->have = 0;
    if (s->read(s->data, s->buf, BUF_SIZE, &s->have) < 0) {
        s->have = 0;
        snprintf(s->msg, sizeof s->msg, "%s: cannot be read", s->origin);
        return PCTL_JSCAN_READ;
    }
    if (s->have == 0) {
        s->eof = 1;
        return 256;
    }
    return (unsigned char)s->buf[0];
}

/* Takes the byte look() returned. */
static void advance(pctl_jscan *s, int c)
{
    s->at++;
    s->offset++;
    if (c == '\n') {
        s->line++;
        s->col = 0;
    } else {
        s->col++;
    }
}

int pctl_jscan_peek(pctl_jscan *s)
{
    int c;

    while ((c = look(s)) == ' ' || c == '\t' || c == '\r' || c == '\n')
        advance(s, c);
    return c;
}

static int syntax(pctl_jscan *s, const char *why, int near)
{
    if (near == 256)
        snprintf(s->msg, sizeof s->msg, "%s:%zu:%zu: %s near end of file",
                 s->origin, s->line, s->col, why);
    else if (near >= 0x20 && near < 0x7f)
        snprintf(s->msg, sizeof s->msg, "%s:%zu:%zu: %s near '%c'", s->origin,
                 s->line, s->col, why, near);
    else
        snprintf(s->msg, sizeof s->msg, "%s:%zu:%zu: %s", s->origin, s->line,
                 s->col, why);
    return PCTL_JSCAN_SYNTAX;
}

int pctl_jscan_take(pctl_jscan *s, int c, const char *what)
{
    int got = pctl_jscan_peek(s);
    char why[64];

    if (got < 0)
        return got;
    if (got == c) {
        advance(s, got);
        return 0;
    }
    if (got != 256)
        advance(s, got); /* the column of the byte that is wrong */
    snprintf(why, sizeof why, "%s expected", what);
    return syntax(s, why, got);
}

static int is_delimiter(int c)
{
    return c == 256 || c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
           c == ',' || c == ':' || c == '[' || c == ']' || c == '{' ||
           c == '}' || c == '"';
}

/*
 * Takes the bytes of one value into t: by its brackets and strings, until
 * it closes, the stream ends or a bracket does not match (jansson then
 * names what is wrong).  0, or PCTL_JSCAN_TOOBIG, _NOMEM, _READ.
 */
static int capture(pctl_buf *t, pctl_jscan *s)
{
    unsigned char open[MAX_DEPTH / 8] = {0}; /* 1: '{' at that depth */
    int c = look(s), in_str = 0, esc = 0, scalar, depth = 0;

    scalar = c != '{' && c != '[' && c != '"';
    for (;;) {
        if ((c = look(s)) < 0)
            return c;
        if (c == 256 || (scalar && t->len > 0 && is_delimiter(c)))
            break;
        if (t->len >= s->max) {
            snprintf(s->msg, sizeof s->msg,
                     "%s:%zu:%zu: a value longer than %zu MiB", s->origin,
                     s->line, s->col, s->max >> 20);
            return PCTL_JSCAN_TOOBIG;
        }
        advance(s, c);
        if (pctl_buf_addc(t, (char)c) < 0)
            return PCTL_JSCAN_NOMEM;
        if (scalar)
            continue;
        if (in_str) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            if (depth == MAX_DEPTH)
                break; /* jansson says "maximum parsing depth reached" */
            if (c == '{')
                open[depth / 8] |= (unsigned char)(1u << (depth % 8));
            else
                open[depth / 8] &= (unsigned char)~(1u << (depth % 8));
            depth++;
        } else if (c == '}' || c == ']') {
            int brace =
                depth > 0 && (open[(depth - 1) / 8] >> ((depth - 1) % 8)) & 1;

            if (depth == 0 || brace != (c == '}'))
                break; /* a bracket that does not match */
            depth--;
        }
        if (depth == 0 && !in_str)
            break;
    }
    return 0;
}

int pctl_jscan_value(json_t **out, char **text, pctl_jscan *s, size_t flags)
{
    pctl_buf t = PCTL_BUF_INIT;
    size_t line, col;
    json_error_t jerr;
    int rc;

    *out = NULL;
    if (text)
        *text = NULL;
    if ((rc = pctl_jscan_peek(s)) < 0)
        return rc;
    line = s->line;
    col = s->col;
    rc = capture(&t, s);
    /* Nothing taken: jansson says what it expected. */
    if (rc == 0 && !t.s && pctl_buf_add(&t, "", 0) < 0)
        rc = PCTL_JSCAN_NOMEM;
    if (rc == 0) {
        *out = json_loadb(t.s, t.len, flags, &jerr);
        if (!*out && json_error_code(&jerr) == json_error_out_of_memory) {
            rc = PCTL_JSCAN_NOMEM;
        } else if (!*out) {
            /* jansson's position is within the value: onto the stream. */
            if (jerr.line <= 1)
                col += (size_t)(jerr.column > 0 ? jerr.column : 0);
            else
                col = (size_t)(jerr.column > 0 ? jerr.column : 0);
            snprintf(s->msg, sizeof s->msg, "%s:%zu:%zu: %s", s->origin,
                     line + (size_t)(jerr.line > 1 ? jerr.line - 1 : 0), col,
                     jerr.text);
            rc = PCTL_JSCAN_SYNTAX;
        }
    }
    if (rc == 0 && text) {
        *text = t.s;
        t.s = NULL;
    }
    pctl_buf_free(&t);
    return rc;
}
