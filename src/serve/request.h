/*
 * request.h - the one parser of HTTP/1.x request heads for every server
 * of the program (request.c), in the shape of picohttpparser: it is
 * given the bytes received so far and says how many the head took, that
 * more must come, or that the head is bad.
 *
 * It is strict wherever a proxy in front could read the same bytes as
 * another request: only HTTP/1.0 and HTTP/1.1; lines end in CRLF; a
 * header name is a token followed at once by ':' (no space before it);
 * a value holds no control character but tab (no bare CR, no \v); no
 * folded lines; at most one Host and one Content-Length, the latter
 * only digits.
 */
#ifndef PCTL_SERVE_REQUEST_H
#define PCTL_SERVE_REQUEST_H

#include <stddef.h>

/* The most headers a request may carry. */
#define SERVE_MAX_HEADERS 64

typedef struct serve_header {
    const char *name, *value; /* into the buffer parsed, not terminated */
    size_t name_len, value_len;
} serve_header;

typedef struct serve_request {
    const char *method, *target; /* into the buffer, not terminated */
    size_t method_len, target_len;
    int minor; /* HTTP/1.minor: 0 or 1 */
    serve_header headers[SERVE_MAX_HEADERS];
    size_t nheaders;
    long long content_length; /* -1: none */
    const serve_header *host; /* NULL: none */
    int chunked;              /* it has a Transfer-Encoding */
    int close; /* Connection: close (1.1) or no keep-alive (1.0) */
} serve_request;

#define SERVE_PARTIAL (-2) /* the head is not whole yet */
#define SERVE_BAD (-1)     /* the head is not a request: 400 */

/*
 * Parses the request head at the start of buf[0..len).  Returns the
 * bytes of the head (through its blank line), SERVE_PARTIAL when more
 * must come, or SERVE_BAD.  The pointers in r point into buf.
 */
int serve_parse_request(serve_request *r, const char *buf, size_t len);

/* The value of the header name (case-insensitive) and its length, or
 * NULL. */
const char *serve_header_value(const serve_request *r, const char *name,
                               size_t *len);

#endif
