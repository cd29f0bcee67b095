/*
 * delay.h - a TCP forwarder that holds every byte for a set time each way,
 * so a benchmark can show what a database on another machine costs
 * (delay.c).  It needs no root and no kernel module: it listens on a
 * loopback TCP port and forwards each connection to a Unix socket or a
 * TCP address (PostgreSQL's), byte order kept per connection and per
 * direction.
 *
 * Built into planctl-bench (`planctl-bench delay`, and pg.c's fleet
 * figures run it in a child process) and alone as planctl-delay for its
 * test (tests/bench/test_delay.py), so it uses libc only.
 */
#ifndef PCTL_BENCH_DELAY_H
#define PCTL_BENCH_DELAY_H

#include <stdint.h>

/* Opens a listening TCP socket on host:port (port 0: any free one, which
 * *port receives); the descriptor, or -1 with a message on stderr. */
int bench_delay_listen(const char *host, int *port);

/*
 * Accepts connections on lfd and forwards each to `to` (a Unix socket's
 * path when it starts with '/', else HOST:PORT), each chunk read in
 * either direction written on no sooner than delay_ns nanoseconds after
 * it was read (and an end of stream passed on no sooner than delay_ns
 * after it came).  Runs until killed; returns 1 with a message on stderr
 * only when it cannot go on (accept or poll failing).
 */
int bench_delay_serve(int lfd, const char *to, int64_t delay_ns);

/* planctl-bench delay --to PATH|HOST:PORT [--listen HOST:PORT]
 * [--delay-us N]: prints "listening on HOST:PORT" and serves. */
int bench_delay_main(int argc, char **argv);

#endif
