/*
 * jscan.h - reading a JSON text of any length from a stream in bounded
 * memory.
 *
 * jansson parses a whole document into a tree: a bundle of 100 MB becomes
 * more than 1 GB.  The scanner walks the outer structure itself (the
 * braces, brackets, keys, colons and commas around the values it is asked
 * for) and hands back one value at a time as its own text, for jansson to
 * parse.  It holds one read buffer and the value being taken, so memory is
 * bounded by the largest single value, never by the stream.
 *
 * A value is taken by its brackets and strings only; whether it is valid
 * JSON inside is for json_loadb() to say: pctl_jscan_value() does that and
 * reports its complaint at the place in the stream.  Positions are
 * jansson's: line from 1, column counted in bytes from 1, of the byte read
 * last.
 */
#ifndef PCTL_CORE_JSCAN_H
#define PCTL_CORE_JSCAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Reads up to cap bytes into buf: 0 with *len 0 at the end, -1 on an
 * error. */
typedef int (*pctl_jscan_read_fn)(void *data, char *buf, size_t cap,
                                  size_t *len);

enum {
    PCTL_JSCAN_SYNTAX = -1, /* not JSON: s->msg says where and why */
    PCTL_JSCAN_READ = -2,   /* the reader failed */
    PCTL_JSCAN_NOMEM = -3,
    PCTL_JSCAN_TOOBIG = -4 /* one value longer than max: s->msg */
};

typedef struct pctl_jscan {
    pctl_jscan_read_fn read;
    void *data;
    char *buf;          /* the read buffer */
    size_t have, at;    /* bytes in buf, and the next one to take */
    int eof;            /* the reader said the end */
    size_t line, col;   /* position of the last byte taken */
    uint64_t offset;    /* bytes taken so far */
    size_t max;         /* most bytes of one value */
    const char *origin; /* the name in messages, e.g. "<bundle>" */
    char msg[256];      /* the last error: "<origin>:L:C: why" */
} pctl_jscan;

/* Sets s up to read from read(data), values up to max bytes.  ENOMEM as
 * PCTL_JSCAN_NOMEM. */
int pctl_jscan_init(pctl_jscan *s, pctl_jscan_read_fn read, void *data,
                    size_t max, const char *origin);
void pctl_jscan_free(pctl_jscan *s);

/* The next byte after blank space, not taken: 0-255, 256 at the end, or a
 * negative PCTL_JSCAN_* code. */
int pctl_jscan_peek(pctl_jscan *s);

/* Takes the byte c after blank space, or PCTL_JSCAN_SYNTAX "'c' expected"
 * (what names the place, e.g. "',' or '}'"). */
int pctl_jscan_take(pctl_jscan *s, int c, const char *what);

/*
 * Takes the next value after blank space and parses it with jansson
 * (flags as json_loadb's): *out owns it; text, if not NULL, receives its
 * text as it was (NUL-terminated, the caller's to pctl_free()).  The
 * value's text is at most
 * s->max bytes (PCTL_JSCAN_TOOBIG beyond); a syntax error anywhere in it,
 * the end of the stream included, is PCTL_JSCAN_SYNTAX with jansson's
 * message at the stream's position.
 */
int pctl_jscan_value(json_t **out, char **text, pctl_jscan *s, size_t flags);

#endif
