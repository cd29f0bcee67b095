/* test_serve.c - the program's HTTP request parser (src/serve/request.c):
 * what it takes, where a head ends, that a head cut anywhere is partial,
 * and every request a proxy in front could read otherwise refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "serve/request.h"

static int parse(serve_request *r, const char *s)
{
    return serve_parse_request(r, s, strlen(s));
}

static void test_good(void **state)
{
    static const char req[] = "POST /instances/a%20b/pause?x=1 HTTP/1.1\r\n"
                              "Host: 127.0.0.1:8080\r\n"
                              "Content-Length: 12\r\n"
                              "X-Empty:\r\n"
                              "Cookie:  a=b; c=d \t\r\n"
                              "\r\nbody follows";
    serve_request r;
    size_t n;
    const char *v;

    (void)state;
    assert_int_equal(parse(&r, req), (int)(strstr(req, "body") - req));
    assert_int_equal(r.method_len, 4);
    assert_memory_equal(r.method, "POST", 4);
    assert_int_equal(r.target_len, strlen("/instances/a%20b/pause?x=1"));
    assert_int_equal(r.minor, 1);
    assert_int_equal(r.content_length, 12);
    assert_non_null(r.host);
    assert_int_equal(r.host->value_len, strlen("127.0.0.1:8080"));
    assert_int_equal(r.close, 0);
    v = serve_header_value(&r, "cookie", &n);
    assert_non_null(v);
    assert_int_equal(n, strlen("a=b; c=d"));
    assert_memory_equal(v, "a=b; c=d", n);
    v = serve_header_value(&r, "X-Empty", &n);
    assert_non_null(v);
    assert_int_equal(n, 0);
    assert_null(serve_header_value(&r, "Origin", &n));
}

static void test_connection(void **state)
{
    serve_request r;

    (void)state;
    assert_true(parse(&r, "GET / HTTP/1.0\r\n\r\n") > 0);
    assert_int_equal(r.close, 1);
    assert_true(parse(&r, "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n") >
                0);
    assert_int_equal(r.close, 0);
    assert_true(parse(&r, "GET / HTTP/1.1\r\nConnection: te, close\r\n\r\n") >
                0);
    assert_int_equal(r.close, 1);
    assert_true(parse(&r, "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                          "\r\n") > 0);
    assert_int_equal(r.chunked, 1);
    assert_int_equal(r.content_length, -1);
}

/* Every proper prefix of a good head is partial, never bad. */
static void test_partial(void **state)
{
    static const char req[] = "GET /engines HTTP/1.1\r\nHost: x\r\n"
                              "Accept: */*\r\n\r\n";
    serve_request r;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof req - 1; i++)
        assert_int_equal(serve_parse_request(&r, req, i), SERVE_PARTIAL);
    assert_int_equal(serve_parse_request(&r, req, sizeof req - 1),
                     (int)sizeof req - 1);
}

static void test_bad(void **state)
{
    static const char *const bad[] = {
        "GET / HTTP/1.9\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "GET / HTTP/1.10\r\n\r\n",
        "GET / http/1.1\r\n\r\n",
        "GET /\r\n\r\n",
        "GET  / HTTP/1.1\r\n\r\n",
        "G(T / HTTP/1.1\r\n\r\n",
        "GET /a\x01 HTTP/1.1\r\n\r\n",
        "NONSENSE\r\n\r\n",
        "GET / HTTP/1.1\n\n",
        "GET / HTTP/1.1\r\nHost: x\n\r\n",
        "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "GET / HTTP/1.1\r\nhost: a\r\nHOST: a\r\n\r\n",
        "GET / HTTP/1.1\r\nX-A: a\rb\r\n\r\n",
        "GET / HTTP/1.1\r\nX-A: a\x0b\r\n\r\n",
        "GET / HTTP/1.1\r\nX-A: a\x7f\r\n\r\n",
        "GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n",
        "GET / HTTP/1.1\r\n: empty\r\n\r\n",
        "GET / HTTP/1.1\r\nNo colon\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: \x0b"
        "2\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: +2\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: -2\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 2 2\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 0x2\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 9999999999999999999\r\n\r\n",
    };
    serve_request r;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (parse(&r, bad[i]) != SERVE_BAD)
            fail_msg("taken: %s", bad[i]);
    /* A NUL anywhere in the head. */
    assert_int_equal(
        serve_parse_request(&r, "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 25),
        SERVE_BAD);
}

/* Too many headers. */
static void test_many(void **state)
{
    char buf[8192];
    size_t n = 0;
    int i;
    serve_request r;

    (void)state;
    n += (size_t)snprintf(buf + n, sizeof buf - n, "GET / HTTP/1.1\r\n");
    for (i = 0; i <= SERVE_MAX_HEADERS; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "X-%d: v\r\n", i);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "\r\n");
    assert_int_equal(serve_parse_request(&r, buf, n), SERVE_BAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),    cmocka_unit_test(test_connection),
        cmocka_unit_test(test_partial), cmocka_unit_test(test_bad),
        cmocka_unit_test(test_many),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
