/*
 * logtail.h - what is new of an attempt's kept output, and its last lines:
 * the arithmetic `planctl logs` does on the window of output an attempt
 * keeps (its last bytes, with the count of all it wrote).
 *
 * The window ends where the output ends, so bytes written since an
 * earlier read are the window's last ones: exactly so for text; output
 * the engine cleaned (a NUL or a byte that is not UTF-8 stored as U+FFFD)
 * may shift a join by a few bytes.
 */
#ifndef PCTL_CORE_LOGTAIL_H
#define PCTL_CORE_LOGTAIL_H

#include <stddef.h>
#include <stdint.h>

typedef struct pctl_logtail_new {
    size_t from;  /* where in the window the new output starts */
    int64_t lost; /* bytes written since, but no longer kept; 0: none */
} pctl_logtail_new;

/* The new part of window text[0..len) of an output that has bytes written
 * in all, when seen bytes of it were printed before (-1: none yet): from
 * the first new byte (moved past a cut character), or from 0 with lost
 * set when more came than the window keeps.  Nothing new (bytes <= seen)
 * is from == len.  Can't fail. */
pctl_logtail_new pctl_logtail_since(const char *text, size_t len, int64_t bytes,
                                    int64_t seen);

/* Where the last n lines of text[0..len) begin (a final newline ends the
 * last line, it starts none): 0 when there are no more than n, len for
 * n == 0.  Can't fail. */
size_t pctl_logtail_lines(const char *text, size_t len, size_t n);

/* Bytes of the last line an attempt's message quotes, at most. */
#define PCTL_LOGTAIL_LINE_MAX 200

/* The last line of text that is not blank, trimmed of blanks at both
 * ends and cut to PCTL_LOGTAIL_LINE_MAX bytes on a character boundary,
 * as a failed attempt's message quotes it ("exit status 1: LINE"):
 * where it starts in text, with its length in *len (0: no such line).
 * Can't fail. */
const char *pctl_logtail_last_line(const char *text, size_t *len);

#endif
