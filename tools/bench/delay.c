/*
 * delay.c - the forwarder of delay.h: one thread, one ppoll(2) loop (its
 * timeout in nanoseconds, so a delay of half a millisecond is kept to
 * within the kernel's timer slack, about 50 us, rather than rounded to a
 * millisecond as poll's would be).
 *
 * Each connection accepted is a pair: the client's socket and a new one
 * to the target.  Each direction of a pair keeps a queue of the chunks
 * read from its source, each stamped with the time it may leave (read
 * time + delay); the loop writes a chunk only once that time has come, in
 * the order read, so the bytes of a direction leave as they came, later
 * by at least the delay.  The same delay applies to an end of stream
 * (passed on as shutdown(SHUT_WR) once the queue before it is written).
 * A queue holding more than QUEUE_MAX bytes stops reading its source
 * until it drains.  Sockets are non-blocking and TCP ones have Nagle off,
 * so the forwarder adds no wait of its own beyond a pass of the loop.
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "delay.h"

#define QUEUE_MAX (4u << 20)
#define READ_MAX 65536

typedef struct chunk {
    struct chunk *next;
    int64_t due; /* monotonic ns: not written before */
    size_t len, off;
    char data[];
} chunk;

/* One direction: read from fd[d], written to fd[1 - d]. */
typedef struct side {
    chunk *head, *tail;
    size_t queued;   /* bytes */
    int eof;         /* the source ended */
    int64_t eof_due; /* when the end may be passed on */
    int shut;        /* passed on: the destination is shut for writing */
    int blocked;     /* the destination's buffer is full: wait for POLLOUT */
} side;

typedef struct pair {
    int fd[2]; /* 0: the client's, 1: the target's */
    side dir[2];
} pair;

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void nodelay(int fd)
{
    int one = 1;

    /* Fails harmlessly on a Unix socket. */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Splits "HOST:PORT" (the last colon) into its parts; 0, or -1. */
static int split_addr(const char *addr, char *host, size_t hn, char *port,
                      size_t pn)
{
    const char *c = strrchr(addr, ':');
    size_t h;

    if (!c || c == addr || !c[1])
        return -1;
    h = (size_t)(c - addr);
    if (h >= hn || strlen(c + 1) >= pn)
        return -1;
    memcpy(host, addr, h);
    host[h] = 0;
    strcpy(port, c + 1);
    return 0;
}

int bench_delay_listen(const char *host, int *port)
{
    struct addrinfo hints, *ai = NULL;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char pbuf[16];
    int fd, one = 1, rc;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
    snprintf(pbuf, sizeof pbuf, "%d", *port);
    if ((rc = getaddrinfo(host, pbuf, &hints, &ai)) != 0) {
        fprintf(stderr, "delay: cannot listen on %s:%d: %s\n", host, *port,
                gai_strerror(rc));
        return -1;
    }
    fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0 ||
        nonblock(fd) < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        fprintf(stderr, "delay: cannot listen on %s:%d: %s\n", host, *port,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    if (ss.ss_family == AF_INET)
        *port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    else
        *port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

/* A new socket connected to `to`, non-blocking; -1 (and a message). */
static int connect_to(const char *to)
{
    int fd = -1;

    if (to[0] == '/') {
        struct sockaddr_un sa;

        memset(&sa, 0, sizeof sa);
        sa.sun_family = AF_UNIX;
        if (strlen(to) >= sizeof sa.sun_path) {
            fprintf(stderr, "delay: socket path too long: %s\n", to);
            return -1;
        }
        strcpy(sa.sun_path, to);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            close(fd);
            fd = -1;
        }
    } else {
        struct addrinfo hints, *ai = NULL;
        char host[256], port[32];

        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        if (split_addr(to, host, sizeof host, port, sizeof port) < 0 ||
            getaddrinfo(host, port, &hints, &ai) != 0) {
            fprintf(stderr, "delay: not a HOST:PORT: %s\n", to);
            return -1;
        }
        fd = socket(ai->ai_family, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
            close(fd);
            fd = -1;
        }
        freeaddrinfo(ai);
        if (fd >= 0)
            nodelay(fd);
    }
    if (fd < 0) {
        fprintf(stderr, "delay: cannot connect to %s: %s\n", to,
                strerror(errno));
        return -1;
    }
    if (nonblock(fd) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void pair_free(pair *p)
{
    int d;

    for (d = 0; d < 2; d++) {
        chunk *c = p->dir[d].head, *n;

        for (; c; c = n) {
            n = c->next;
            free(c);
        }
        if (p->fd[d] >= 0)
            close(p->fd[d]);
    }
    free(p);
}

/* Writes what is due of direction d; 0, or -1 when the pair is broken. */
static int flush(pair *p, int d, int64_t now)
{
    side *s = &p->dir[d];
    int dst = p->fd[1 - d];

    while (s->head && !s->blocked && s->head->due <= now) {
        chunk *c = s->head;
        ssize_t n = send(dst, c->data + c->off, c->len - c->off, MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                s->blocked = 1;
                break;
            }
            if (errno == EINTR)
                continue;
            return -1;
        }
        c->off += (size_t)n;
        s->queued -= (size_t)n;
        if (c->off < c->len) {
            s->blocked = 1;
            break;
        }
        s->head = c->next;
        if (!s->head)
            s->tail = NULL;
        free(c);
    }
    if (!s->head && s->eof && !s->shut && s->eof_due <= now) {
        (void)shutdown(dst, SHUT_WR);
        s->shut = 1;
    }
    return 0;
}

/* Reads what fd[d] has into direction d's queue; 0, or -1 when broken. */
static int fill(pair *p, int d, int64_t due)
{
    static char buf[READ_MAX];
    side *s = &p->dir[d];

    while (!s->eof && s->queued < QUEUE_MAX) {
        ssize_t n = recv(p->fd[d], buf, sizeof buf, 0);
        chunk *c;

        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            s->eof = 1;
            s->eof_due = due;
            return 0;
        }
        if (!(c = malloc(sizeof *c + (size_t)n)))
            return -1;
        c->next = NULL;
        c->due = due;
        c->len = (size_t)n;
        c->off = 0;
        memcpy(c->data, buf, (size_t)n);
        if (s->tail)
            s->tail->next = c;
        else
            s->head = c;
        s->tail = c;
        s->queued += (size_t)n;
    }
    return 0;
}

int bench_delay_serve(int lfd, const char *to, int64_t delay_ns)
{
    pair **pairs = NULL;
    struct pollfd *pfd = NULL;
    size_t npairs = 0, cap = 0, i;

    for (;;) {
        int64_t now = now_ns(), wake = -1;
        struct timespec ts, *tsp = NULL;
        size_t np = 1;
        int d;

        /* Write what is due; drop the pairs that are done or broken. */
        for (i = 0; i < npairs;) {
            pair *p = pairs[i];

            if (flush(p, 0, now) < 0 || flush(p, 1, now) < 0 ||
                (p->dir[0].shut && p->dir[1].shut)) {
                pair_free(p);
                pairs[i] = pairs[--npairs];
                continue;
            }
            i++;
        }
        if (!(pfd = realloc(pfd, (1 + 2 * npairs) * sizeof *pfd))) {
            fprintf(stderr, "delay: out of memory\n");
            return 1;
        }
        pfd[0].fd = lfd;
        pfd[0].events = POLLIN;
        for (i = 0; i < npairs; i++) {
            pair *p = pairs[i];

            for (d = 0; d < 2; d++) {
                side *s = &p->dir[d], *o = &p->dir[1 - d];
                short ev = 0;
                int64_t due = -1;

                /* fd[d] is the source of s and the destination of o. */
                if (!s->eof && s->queued < QUEUE_MAX)
                    ev |= POLLIN;
                if (o->blocked)
                    ev |= POLLOUT;
                pfd[np].fd = p->fd[d];
                pfd[np].events = ev;
                np++;
                if (s->head && !s->blocked)
                    due = s->head->due;
                else if (!s->head && s->eof && !s->shut)
                    due = s->eof_due;
                if (due >= 0 && (wake < 0 || due < wake))
                    wake = due;
            }
        }
        if (wake >= 0) {
            int64_t w = wake > now ? wake - now : 0;

            ts.tv_sec = (time_t)(w / 1000000000);
            ts.tv_nsec = (long)(w % 1000000000);
            tsp = &ts;
        }
        if (ppoll(pfd, np, tsp, NULL) < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "delay: poll: %s\n", strerror(errno));
            return 1;
        }
        now = now_ns();
        for (i = 0; i < npairs; i++) {
            pair *p = pairs[i];

            for (d = 0; d < 2; d++) {
                short re = pfd[1 + 2 * i + (size_t)d].revents;

                if (re & POLLOUT)
                    p->dir[1 - d].blocked = 0;
                if ((re & (POLLIN | POLLHUP | POLLERR)) &&
                    fill(p, d, now + delay_ns) < 0) {
                    /* Broken: both ways end now, queues dropped. */
                    p->dir[0].shut = p->dir[1].shut = 1;
                    p->dir[0].blocked = p->dir[1].blocked = 1;
                }
            }
        }
        if (pfd[0].revents & POLLIN) {
            int cfd;

            while ((cfd = accept(lfd, NULL, NULL)) >= 0) {
                pair *p = calloc(1, sizeof *p);
                int tfd = connect_to(to);

                if (!p || tfd < 0 || nonblock(cfd) < 0) {
                    free(p);
                    if (tfd >= 0)
                        close(tfd);
                    close(cfd);
                    continue;
                }
                nodelay(cfd);
                p->fd[0] = cfd;
                p->fd[1] = tfd;
                if (npairs == cap) {
                    size_t nc = cap ? cap * 2 : 16;
                    pair **np2 = realloc(pairs, nc * sizeof *np2);

                    if (!np2) {
                        pair_free(p);
                        continue;
                    }
                    pairs = np2;
                    cap = nc;
                }
                pairs[npairs++] = p;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
                errno != ECONNABORTED) {
                fprintf(stderr, "delay: accept: %s\n", strerror(errno));
                return 1;
            }
        }
    }
}

int bench_delay_main(int argc, char **argv)
{
    const char *to = NULL, *listen_at = "127.0.0.1:0";
    char host[256], port[32];
    long delay_us = 500;
    int i, lfd, p;

    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--to") == 0)
            to = argv[i + 1];
        else if (strcmp(argv[i], "--listen") == 0)
            listen_at = argv[i + 1];
        else if (strcmp(argv[i], "--delay-us") == 0)
            delay_us = strtol(argv[i + 1], NULL, 10);
        else
            break;
    }
    if (i != argc || !to || delay_us < 0 ||
        split_addr(listen_at, host, sizeof host, port, sizeof port) < 0) {
        fprintf(stderr, "usage: delay --to PATH|HOST:PORT [--listen "
                        "HOST:PORT] [--delay-us N]\n"
                        "  forwards every connection to HOST:PORT (default "
                        "127.0.0.1:0, any free port) to the Unix socket PATH "
                        "or to HOST:PORT, holding each byte N microseconds "
                        "each way (default 500: 1 ms a round trip)\n");
        return 2;
    }
    p = atoi(port);
    if ((lfd = bench_delay_listen(host, &p)) < 0)
        return 1;
    printf("listening on %s:%d\n", host, p);
    fflush(stdout);
    return bench_delay_serve(lfd, to, (int64_t)delay_us * 1000);
}

#ifdef PCTL_DELAY_MAIN
int main(int argc, char **argv)
{
    return bench_delay_main(argc, argv);
}
#endif
