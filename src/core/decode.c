/* decode.c - a definition's text to a JSON document and back: the size
 * limit, syntax errors with their position, and the nesting limit. */
#include <string.h>

#include "alloc.h"
#include "buf.h"
#include "pipeline.h"
#include "planctl.h"

/*
 * Where the text nests deeper than PCTL_DEF_MAX_DEPTH: 1 with the line
 * and column (counted as jansson counts them: lines from 1, columns in
 * characters from 1) of the bracket that goes too deep, or 0.  The text
 * is valid JSON (jansson parsed it), so skipping strings is all the lexing
 * needed.
 */
static int too_deep(const char *text, size_t len, int *line, int *col)
{
    int depth = 0, in_string = 0;
    size_t i;

    *line = 1;
    *col = 0;
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];

        if (c == '\n') {
            (*line)++;
            *col = 0;
            continue;
        }
        if ((c & 0xC0) != 0x80)
            (*col)++;
        if (in_string) {
            if (c == '\\')
                i++, (*col)++; /* an escaped character is ASCII */
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > PCTL_DEF_MAX_DEPTH)
                return 1;
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    return 0;
}

int pctl_json_decode(json_t **out, const char *text, size_t len,
                     const char *origin, pctl_ferr_list *errs)
{
    json_error_t jerr;
    json_t *root;
    int rc, line, col;

    *out = NULL;
    if (!origin)
        origin = "<definition>";
    if (len > PCTL_DEF_MAX_BYTES) {
        rc = pctl_ferr_add(errs, "", PCTL_FERR_TOO_LONG, NULL,
                           "definition is %zu bytes; the limit is %d", len,
                           PCTL_DEF_MAX_BYTES);
        return rc < 0 ? rc : PLANCTL_EDEFINITION;
    }
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        /* jansson leaves the error text empty when an allocation failed
         * while building a value, and only sometimes sets the code. */
        if (json_error_code(&jerr) == json_error_out_of_memory ||
            jerr.text[0] == '\0')
            return PLANCTL_ENOMEM;
        rc = pctl_ferr_add(errs, "", PCTL_FERR_SYNTAX, NULL, "%s:%d:%d: %s",
                           origin, jerr.line, jerr.column, jerr.text);
        return rc < 0 ? rc : PLANCTL_EDEFINITION;
    }
    /* Every later stage may then recurse over the document (jansson's
     * dump and equality do) without a hostile depth. */
    if (too_deep(text, len, &line, &col)) {
        json_decref(root);
        rc = pctl_ferr_add(errs, "", PCTL_FERR_SYNTAX, NULL,
                           "%s:%d:%d: nesting deeper than %d levels", origin,
                           line, col, PCTL_DEF_MAX_DEPTH);
        return rc < 0 ? rc : PLANCTL_EDEFINITION;
    }
    *out = root;
    return 0;
}

typedef struct dumpbuf {
    pctl_buf b;
    int oom;
} dumpbuf;

static int dump_cb(const char *buf, size_t size, void *data)
{
    dumpbuf *d = data;

    if (pctl_buf_add(&d->b, buf, size) < 0) {
        d->oom = 1;
        return -1;
    }
    return 0;
}

/* Our callback remembers a failed write whatever jansson does with it. */
int pctl_json_encode(char **out, const json_t *v, size_t flags)
{
    dumpbuf d = {PCTL_BUF_INIT, 0};

    *out = NULL;
    if (json_dump_callback(v, dump_cb, &d, flags) != 0 || d.oom || !d.b.s) {
        pctl_buf_free(&d.b);
        return PLANCTL_ENOMEM;
    }
    *out = d.b.s;
    return 0;
}
