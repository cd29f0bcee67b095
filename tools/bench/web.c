/*
 * web.c - the web page under load (issue 24): many open live pages while
 * an engine runs at full speed.  The engine's step throughput with them
 * must stay within 10% of its throughput without them, and pages must
 * show a change within a second.
 *
 * The workload: N instances of the throughput benchmark's definition (16
 * Dummy steps: 4 serial, 8 parallel, 4 serial), each with one active run
 * and K - 1 more runs of the same plan queued behind it, so that every
 * instance stays busy (and every open page keeps changing) for the whole
 * of the engine's run, and a page is the size of a real one (one run's
 * tree, a queue, a history).  It is made once; each measured run takes a
 * fresh copy of it.
 *
 * One measured run is the real `BIN --db DB run --until-idle`, a child
 * process, from its start to its exit: steps completed (all of them,
 * checked) per second of wall time.  Two kinds, alternated R times:
 *   - baseline: the engine alone;
 *   - loaded: `BIN --db DB serve --listen 127.0.0.1:0` running beside it,
 *     with P live pages open before the engine starts: P Server-Sent
 *     Events streams opened as a browser's EventSource opens them (GET
 *     /stream?path=PAGE, HTTP/1.1, Accept: text/event-stream), held by
 *     a libuv loop in a thread of this process, which reads every event.
 *     P/8 are the instances page (/), P/8 are run pages
 *     (/instances/NAME/runs/ID, runs spread over the instances and over
 *     their queues), the rest instance pages (/instances/NAME), one per
 *     instance, spread over them.
 * Throughput figure: the median loaded against the median baseline.
 *
 * The update delay, from a change to the page that shows it: every
 * `update` event is stamped on arrival (the wall clock, in ms) and its
 * HTML read for how far it shows its instance or run to be:
 *   - an instance page: how many of its queued runs have left the queue
 *     (its Queue list).  Not its steps: with runs of the same plan
 *     queued, the plan's tree shows the latest of them, QUEUED, not the
 *     one running (planctl_status_json()'s choice, the same in `planctl
 *     status`);
 *   - a run page: how many of the run's steps are COMPLETE.
 * Then for the k-th such change (its event row: QUEUED -> PENDING of the
 * instance's run, or COMPLETE of the run's step), the delay is the
 * arrival of the first update showing k or more, minus the event's `at`:
 * the engine's wall clock in ms when its pass began (every row of a pass
 * carries it; the pass commits at its end).  So it counts the rest of
 * the engine's pass and its commit, the server's wait for its next look
 * at the database (every 250 ms), its rendering of the open pages, and
 * the delivery.  A change that no update showed by the end counts as
 * missed (its delay runs to the end).  p50, p95 and max over every
 * change of every page of every loaded run.
 *
 * Also reported: the server's CPU time (user + system, /proc/PID/stat)
 * per second of the engine's run, its peak RSS, the updates and bytes the
 * pages received, the client thread's own CPU time (it shares the cores:
 * a browser would not), and the engine's CPU time per step on both sides.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "bench.h"
#include "serve/limits.h"

#define TP_STEPS 16 /* bench_tp_definition's */

/* ---- the workload ---- */

static void copy_file(const char *from, const char *to)
{
    static char buf[1 << 16];
    int in = open(from, O_RDONLY), out;
    ssize_t n;

    if (in < 0)
        bench_die("web: open %s: %s", from, strerror(errno));
    out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0)
        bench_die("web: create %s: %s", to, strerror(errno));
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            bench_die("web: write %s: %s", to, strerror(errno));
    if (n < 0 || close(out) != 0)
        bench_die("web: copy to %s failed", to);
    close(in);
}

/* Makes the template database in a child process: N instances named
 * web-<k>, each with one active run of deploy and runs - 1 queued. */
static void setup(const char *path, int instances, int runs)
{
    pid_t pid;

    bench_remove_db(path);
    if ((pid = fork()) < 0)
        bench_die("fork failed");
    if (pid == 0) {
        planctl_trigger_options o = PLANCTL_TRIGGER_OPTIONS_INIT;
        planctl *p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
        char name[64];
        int64_t id;
        int i, j;

        bench_apply(p, bench_tp_definition());
        fx_clone_runs(p, "bench", "web", instances);
        o.queue = 1;
        for (j = 1; j < runs; j++)
            for (i = 0; i < instances; i++) {
                snprintf(name, sizeof name, "web-%d", i);
                if (planctl_plan_trigger(&id, p, name, "deploy", &o) < 0)
                    bench_die("web: trigger %s: %s", name, planctl_errmsg(p));
            }
        /* One file to copy: everything checkpointed, no -wal left. */
        fx_exec(fx_db(p), "PRAGMA wal_checkpoint(TRUNCATE)");
        planctl_close(p);
        _exit(0);
    }
    bench_wait_ok(pid, "web: setup");
}

/* ---- child processes ---- */

/* What is cleaned at exit, even when the benchmark dies halfway: the
 * children running (0: none), each the leader of its own process group;
 * the databases in workdir (unless kept), its logs and workdir itself
 * (when made here) once the benchmark finished. */
static pid_t running[2];
static char workdir[4000];
static int made_dir, keep_files, finished;

static void cleanup(void)
{
    static const char *const files[] = {"web.db", "web-template.db",
                                        "web-engine.log", "web-serve.log"};
    char path[4200];
    size_t i;

    for (i = 0; i < 2; i++)
        if (running[i] > 0) {
            kill(-running[i], SIGTERM);
            waitpid(running[i], NULL, 0);
            running[i] = 0;
        }
    if (!workdir[0] || keep_files)
        return;
    /* The logs stay when it failed: the message names them. */
    for (i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", workdir, files[i]);
        if (i < 2)
            bench_remove_db(path);
        else if (finished)
            unlink(path);
    }
    if (made_dir && finished)
        rmdir(workdir);
}

/* Starts BIN --db path ARGS... with stdout and stderr to log, in a
 * process group of its own; its pid.  With wrap, a command put before it
 * through the shell (for a profile of the server: the pid is then the
 * wrapper's, and its CPU time the wrapper's). */
static pid_t spawn(const char *bin, const char *path, const char *log,
                   const char *wrap, const char *a1, const char *a2,
                   const char *a3)
{
    pid_t pid = fork();

    if (pid < 0)
        bench_die("web: fork: %s", strerror(errno));
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

        setpgid(0, 0);
        if (fd < 0)
            _exit(127);
        dup2(fd, 1);
        dup2(fd, 2);
        if (wrap && *wrap) {
            char cmd[4200];

            snprintf(cmd, sizeof cmd, "exec %s \"$@\"", wrap);
            execl("/bin/sh", "sh", "-c", cmd, "sh", bin, "--db", path, a1, a2,
                  a3, (char *)NULL);
        }
        execl(bin, bin, "--db", path, a1, a2, a3, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* A process's CPU time so far (user + system) in seconds, or -1. */
static double proc_cpu_s(pid_t pid)
{
    char name[64], line[1024], *p;
    unsigned long ut = 0, st = 0;
    FILE *f;
    size_t n;

    snprintf(name, sizeof name, "/proc/%d/stat", (int)pid);
    if (!(f = fopen(name, "r")))
        return -1;
    n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    /* After the command's name (in parentheses): state, then fields 4 to
     * 13, then utime and stime (proc(5)). */
    if (!(p = strrchr(line, ')')) ||
        sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
               &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double ru_cpu_s(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
           (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

/* The wall clock in ms since the epoch, as the engine stamps events. */
static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The port of `planctl serve`, from its line "planctl: serving
 * http://127.0.0.1:PORT/ (read-only)" in log; dies after 10 s. */
static int server_port(const char *log, pid_t pid)
{
    static const char mark[] = "serving http://127.0.0.1:";
    int64_t deadline = bench_ns() + 10 * (int64_t)1000000000;
    char text[4096];

    while (bench_ns() < deadline) {
        FILE *f = fopen(log, "r");
        size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        const char *m;
        int st;

        if (f)
            fclose(f);
        text[n] = '\0';
        if ((m = strstr(text, mark)) != NULL)
            return atoi(m + sizeof mark - 1);
        if (waitpid(pid, &st, WNOHANG) == pid)
            bench_die("web: planctl serve exited: %s", text);
        usleep(10000);
    }
    bench_die("web: planctl serve did not say its address in 10 s");
}

/* ---- the pages: SSE clients on a loop of their own ---- */

enum { PAGE_INSTANCE, PAGE_RUN, PAGE_ROOT };

/* How far a page's update showed its instance or run to be
 * (page_progress()), and when it arrived. */
typedef struct shown {
    int64_t at_ms;
    int done;
} shown;

typedef struct client {
    uv_tcp_t tcp;
    uv_connect_t connect;
    uv_write_t write;
    struct pages *pg;
    int kind, inst;
    int64_t run; /* a run page's */
    char path[160], req[512];
    char *in; /* unparsed input */
    size_t len, cap;
    int head_done, is_update, closed;
    char *data; /* the event being read */
    size_t dlen, dcap;
    shown *shown;
    size_t nshown, capshown;
} client;

typedef struct pages {
    uv_loop_t loop;
    uv_async_t stop;
    struct sockaddr_in addr;
    client *cl;
    int n, runs;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    /* under mu: */
    int ready, failed, dropped;
    int64_t updates, bytes, unparsed;
    char why[256];
    double cpu_s; /* the thread's CPU time, when it ended */
    char rbuf[1 << 16];
} pages;

static void fail(client *c, const char *why)
{
    pages *pg = c->pg;

    pthread_mutex_lock(&pg->mu);
    if (!c->head_done)
        pg->failed++;
    else
        pg->dropped++;
    if (!pg->why[0])
        snprintf(pg->why, sizeof pg->why, "%s: %s", c->path, why);
    pthread_cond_broadcast(&pg->cond);
    pthread_mutex_unlock(&pg->mu);
    if (!c->closed) {
        c->closed = 1;
        uv_close((uv_handle_t *)&c->tcp, NULL);
    }
}

static void add_bytes(char **buf, size_t *len, size_t *cap, const char *s,
                      size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t ncap = *cap ? *cap : 4096;
        char *nb;

        while (*len + n + 1 > ncap)
            ncap *= 2;
        if (!(nb = realloc(*buf, ncap)))
            bench_die("out of memory");
        *buf = nb;
        *cap = ncap;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
}

/* The items between the first from and the next to after it in html;
 * -1 when html has no from or to. */
static int count_between(const char *html, const char *from, const char *to,
                         const char *item)
{
    const char *a = strstr(html, from), *b = a ? strstr(a, to) : NULL, *s;
    int n = 0;

    if (!a || !b)
        return -1;
    for (s = a; (s = strstr(s, item)) != NULL && s < b; s++)
        n++;
    return n;
}

/*
 * How far a page's live HTML shows its instance or run to be: for an
 * instance page, how many of its queued runs have left the queue (the
 * <li> items of <section id="queue">, against the runs - 1 queued at the
 * start); for a run page, how many of its steps are COMPLETE (each
 * <li class="step"> of <section id="tree"> holds its status span, the
 * first data-status after it).  -1 when the HTML is not shaped so
 * (src/web/pages.c changed).
 */
static int page_progress(const client *c, const char *html)
{
    const char *tree, *end, *s;
    int n = 0;

    if (c->kind == PAGE_INSTANCE) {
        if (strstr(html, "<section id=\"queue\"><h2>Queue</h2><p>No run "
                         "waits.</p>"))
            return c->pg->runs - 1;
        n = count_between(html, "<section id=\"queue\">", "</section>", "<li>");
        return n < 0 ? -1 : c->pg->runs - 1 - n;
    }
    if (!(tree = strstr(html, "<section id=\"tree\">")) ||
        !(end = strstr(tree, "</section>")))
        return -1;
    for (s = tree; (s = strstr(s, "<li class=\"step\"")) != NULL && s < end;
         s++) {
        const char *st = strstr(s, "data-status=\"");

        if (st && st < end && !strncmp(st + 13, "COMPLETE\"", 9))
            n++;
    }
    return n;
}

/* One whole event: an update is counted, and an instance page's is read
 * for what it shows. */
static void dispatch(client *c, int64_t at)
{
    pages *pg = c->pg;
    int bad = 0;

    if (!c->is_update)
        return;
    if (c->dlen > 0)
        c->data[--c->dlen] = '\0'; /* the last line's newline */
    {
        shown s;

        s.at_ms = at;
        s.done =
            c->kind == PAGE_ROOT ? 0 : page_progress(c, c->data ? c->data : "");
        if (s.done >= 0) {
            bench_grow((void **)&c->shown, c->nshown, &c->capshown,
                       sizeof *c->shown, 64);
            c->shown[c->nshown++] = s;
        } else {
            bad = 1;
        }
    }
    pthread_mutex_lock(&pg->mu);
    pg->updates++;
    pg->unparsed += bad;
    pthread_mutex_unlock(&pg->mu);
}

/* Reads the SSE lines in c->in (text/event-stream: "event: X", "data: Y",
 * a blank line ends an event; comments and retry: ignored). */
static void sse_lines(client *c)
{
    size_t off = 0;
    int64_t at = wall_ms();

    for (;;) {
        char *line = c->in + off, *nl = memchr(line, '\n', c->len - off);
        size_t n;

        if (!nl)
            break;
        n = (size_t)(nl - line);
        if (n > 0 && line[n - 1] == '\r')
            n--;
        off = (size_t)(nl - c->in) + 1;
        if (n == 0) {
            dispatch(c, at);
            c->is_update = 0;
            c->dlen = 0;
            if (c->data)
                c->data[0] = '\0';
        } else if (n >= 6 && !strncmp(line, "event:", 6)) {
            c->is_update = n == 13 && !strncmp(line, "event: update", 13);
        } else if (n >= 5 && !strncmp(line, "data:", 5)) {
            size_t skip = n > 5 && line[5] == ' ' ? 6 : 5;

            add_bytes(&c->data, &c->dlen, &c->dcap, line + skip, n - skip);
            add_bytes(&c->data, &c->dlen, &c->dcap, "\n", 1);
        }
    }
    memmove(c->in, c->in + off, c->len - off);
    c->len -= off;
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    client *c = h->data;

    (void)hint;
    *buf = uv_buf_init(c->pg->rbuf, sizeof c->pg->rbuf);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    client *c = st->data;
    pages *pg = c->pg;

    if (n < 0) {
        fail(c, n == UV_EOF ? "the server closed the stream"
                            : uv_strerror((int)n));
        return;
    }
    if (n == 0)
        return;
    add_bytes(&c->in, &c->len, &c->cap, buf->base, (size_t)n);
    pthread_mutex_lock(&pg->mu);
    pg->bytes += n;
    pthread_mutex_unlock(&pg->mu);
    if (!c->head_done) {
        char *end = strstr(c->in, "\r\n\r\n");
        size_t hl;

        if (!end)
            return;
        if (strncmp(c->in, "HTTP/1.1 200 ", 13) != 0 ||
            !strstr(c->in, "Content-Type: text/event-stream")) {
            *end = '\0';
            fail(c, c->in);
            return;
        }
        hl = (size_t)(end - c->in) + 4;
        memmove(c->in, c->in + hl, c->len - hl);
        c->len -= hl;
        c->head_done = 1;
        pthread_mutex_lock(&pg->mu);
        pg->ready++;
        pthread_cond_broadcast(&pg->cond);
        pthread_mutex_unlock(&pg->mu);
    }
    sse_lines(c);
}

static void on_written(uv_write_t *w, int status)
{
    client *c = w->data;

    if (status < 0)
        fail(c, uv_strerror(status));
}

static void on_connect(uv_connect_t *req, int status)
{
    client *c = req->data;
    uv_buf_t b = uv_buf_init(c->req, (unsigned int)strlen(c->req));

    if (status < 0) {
        fail(c, uv_strerror(status));
        return;
    }
    c->write.data = c;
    if (uv_write(&c->write, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0 ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0)
        fail(c, "cannot write or read");
}

static void on_stop(uv_async_t *h)
{
    pages *pg = h->data;
    int i;

    for (i = 0; i < pg->n; i++)
        if (!pg->cl[i].closed) {
            pg->cl[i].closed = 1;
            uv_close((uv_handle_t *)&pg->cl[i].tcp, NULL);
        }
    uv_close((uv_handle_t *)&pg->stop, NULL);
}

static void *pages_thread(void *arg)
{
    pages *pg = arg;
    struct timespec ts;
    int i;

    for (i = 0; i < pg->n; i++) {
        client *c = &pg->cl[i];
        /* As many users, each from an address of its own: the server
         * keeps at most SERVE_PAGE_STREAMS_PER_PEER live pages open from
         * one address, and all of 127.0.0.0/8 reaches the loopback. */
        int user = i / SERVE_PAGE_STREAMS_PER_PEER;
        struct sockaddr_in from;
        char ip[32];

        snprintf(ip, sizeof ip, "127.0.%d.%d", user / 250, 1 + user % 250);
        uv_ip4_addr(ip, 0, &from);
        uv_tcp_init(&pg->loop, &c->tcp);
        c->tcp.data = c;
        c->connect.data = c;
        if (uv_tcp_bind(&c->tcp, (const struct sockaddr *)&from, 0) != 0)
            fail(c, "cannot bind to a loopback address");
        if (uv_tcp_connect(&c->connect, &c->tcp,
                           (const struct sockaddr *)&pg->addr, on_connect) != 0)
            fail(c, "cannot connect");
    }
    uv_run(&pg->loop, UV_RUN_DEFAULT);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    pg->cpu_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    return NULL;
}

/* Appends path percent-encoded as encodeURIComponent does. */
static void uri_component(char *out, size_t size, const char *path)
{
    static const char keep[] = "-_.!~*'()";
    size_t n = strlen(out);

    for (; *path && n + 4 < size; path++) {
        unsigned char ch = (unsigned char)*path;

        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
            (ch >= '0' && ch <= '9') || strchr(keep, ch))
            out[n++] = (char)ch;
        else
            n += (size_t)snprintf(out + n, size - n, "%%%02X", ch);
    }
    out[n] = '\0';
}

/* The P pages of a loaded run: their paths and kinds.  runs[k] is the
 * run id of run page k. */
static void pages_plan(pages *pg, int npages, int instances, int runs,
                       const int64_t *run_ids, const int *run_inst, int nruns)
{
    int nroot = npages / 8, ninst = npages - nroot - nruns, k;

    pg->n = npages;
    pg->runs = runs;
    if (!(pg->cl = calloc((size_t)npages, sizeof *pg->cl)))
        bench_die("out of memory");
    for (k = 0; k < npages; k++) {
        client *c = &pg->cl[k];

        c->pg = pg;
        if (k < ninst) {
            c->kind = PAGE_INSTANCE;
            c->inst = (int)((int64_t)k * instances / ninst);
            snprintf(c->path, sizeof c->path, "/instances/web-%d", c->inst);
        } else if (k < ninst + nruns) {
            c->kind = PAGE_RUN;
            c->inst = run_inst[k - ninst];
            c->run = run_ids[k - ninst];
            snprintf(c->path, sizeof c->path, "/instances/web-%d/runs/%lld",
                     c->inst, (long long)run_ids[k - ninst]);
        } else {
            c->kind = PAGE_ROOT;
            c->inst = -1;
            snprintf(c->path, sizeof c->path, "/");
        }
    }
}

static void pages_start(pages *pg, int port)
{
    int i;

    memset(&pg->addr, 0, sizeof pg->addr);
    uv_ip4_addr("127.0.0.1", port, &pg->addr);
    for (i = 0; i < pg->n; i++) {
        client *c = &pg->cl[i];

        /* What a browser's EventSource sends (Chrome's, less its
         * User-Agent and language). */
        snprintf(c->req, sizeof c->req, "GET /stream?path=");
        uri_component(c->req, sizeof c->req, c->path);
        snprintf(c->req + strlen(c->req), sizeof c->req - strlen(c->req),
                 " HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: "
                 "keep-alive\r\nAccept: text/event-stream\r\nCache-Control: "
                 "no-cache\r\nSec-Fetch-Mode: cors\r\nReferer: "
                 "http://127.0.0.1:%d%s\r\n\r\n",
                 port, port, c->path);
    }
    if (uv_loop_init(&pg->loop) != 0 ||
        uv_async_init(&pg->loop, &pg->stop, on_stop) != 0)
        bench_die("web: cannot make the pages' loop");
    pg->stop.data = pg;
    pthread_mutex_init(&pg->mu, NULL);
    pthread_cond_init(&pg->cond, NULL);
    if (pthread_create(&pg->thread, NULL, pages_thread, pg) != 0)
        bench_die("web: cannot start the pages' thread");
}

/* Waits until every page has its stream open; dies after 60 s or when
 * one was refused. */
static void pages_wait_ready(pages *pg)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60;
    pthread_mutex_lock(&pg->mu);
    while (pg->ready < pg->n && !pg->failed)
        if (pthread_cond_timedwait(&pg->cond, &pg->mu, &ts) != 0)
            break;
    if (pg->ready < pg->n)
        bench_die("web: %d of %d pages opened their stream (%s)", pg->ready,
                  pg->n, pg->why[0] ? pg->why : "timed out");
    pthread_mutex_unlock(&pg->mu);
}

static int64_t pages_updates(pages *pg)
{
    int64_t n;

    pthread_mutex_lock(&pg->mu);
    n = pg->updates;
    pthread_mutex_unlock(&pg->mu);
    return n;
}

static void pages_stop(pages *pg)
{
    uv_async_send(&pg->stop);
    pthread_join(pg->thread, NULL);
    if (uv_loop_close(&pg->loop) != 0)
        bench_die("web: the pages' loop has handles left");
    pthread_mutex_destroy(&pg->mu);
    pthread_cond_destroy(&pg->cond);
}

static void pages_free(pages *pg)
{
    int i;

    for (i = 0; i < pg->n; i++) {
        free(pg->cl[i].in);
        free(pg->cl[i].data);
        free(pg->cl[i].shown);
    }
    free(pg->cl);
}

/* ---- the update delays ---- */

typedef struct delays {
    double *v;
    size_t n, cap;
    int64_t missed;
} delays;

/*
 * The delays of one page's updates (see the top) into d: for the k-th
 * change it must show (an instance page: its k-th run promoted from the
 * queue, QUEUED -> PENDING; a run page: its k-th step COMPLETE), from the
 * change's event row in db to the first update showing progress k.
 */
static void page_delays(delays *d, sqlite3 *db, const client *c, int64_t end_ms)
{
    sqlite3_stmt *st;
    int k = 0;
    size_t j = 0;
    char sql[512];

    if (c->kind == PAGE_INSTANCE)
        snprintf(sql, sizeof sql,
                 "SELECT e.at FROM events AS e JOIN instances AS i ON i.id = "
                 "e.instance_id WHERE i.name = 'web-%d' AND e.entity = 'run' "
                 "AND e.from_status = 'QUEUED' AND e.to_status = 'PENDING' "
                 "ORDER BY e.seq",
                 c->inst);
    else
        snprintf(sql, sizeof sql,
                 "SELECT at FROM events WHERE run_id = %lld AND entity = "
                 "'step' AND to_status = 'COMPLETE' ORDER BY seq",
                 (long long)c->run);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        bench_die("%s", sqlite3_errmsg(db));
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t at = sqlite3_column_int64(st, 0);

        k++;
        /* The updates come in order, each showing as much as the one
         * before or more. */
        while (j < c->nshown && c->shown[j].done < k)
            j++;
        bench_grow((void **)&d->v, d->n, &d->cap, sizeof *d->v, 4096);
        if (j == c->nshown) {
            d->missed++;
            d->v[d->n++] = (double)(end_ms - at);
        } else {
            int64_t ms = c->shown[j].at_ms - at;

            d->v[d->n++] = ms > 0 ? (double)ms : 0;
        }
    }
    sqlite3_finalize(st);
}

/* ---- one measured run ---- */

typedef struct result {
    double secs, steps_s, engine_us_per_step;
    /* loaded only: */
    double server_cpu_per_s, server_cpu_total, server_rss_mb;
    double client_cpu_per_s, updates_per_s, mb_per_s, settle_s;
    int64_t updates, dropped, unparsed, missed;
} result;

static result measure(const char *bin, const char *dir, const char *tmpl,
                      int instances, int runs, int npages, delays *d,
                      const int64_t *run_ids, const int *run_inst, int nruns)
{
    char path[4200], elog[4200], slog[4200];
    pid_t engine, server = 0;
    struct rusage ru, eru;
    pages pg;
    result r;
    int64_t t0, t1, steps, left, end_ms = 0, before;
    double c0 = 0, c1 = 0;
    int st;

    memset(&r, 0, sizeof r);
    memset(&pg, 0, sizeof pg);
    snprintf(path, sizeof path, "%s/web.db", dir);
    snprintf(elog, sizeof elog, "%s/web-engine.log", dir);
    snprintf(slog, sizeof slog, "%s/web-serve.log", dir);
    bench_remove_db(path);
    copy_file(tmpl, path);
    if (npages > 0) {
        unlink(slog); /* server_port() must not read the last one's */
        server = spawn(bin, path, slog, getenv("PLANCTL_BENCH_WEB_WRAP"),
                       "serve", "--listen", "127.0.0.1:0");
        running[1] = server;
        pages_plan(&pg, npages, instances, runs, run_ids, run_inst, nruns);
        pages_start(&pg, server_port(slog, server));
        pages_wait_ready(&pg);
        c0 = proc_cpu_s(server);
    }
    t0 = bench_ns();
    engine = running[0] =
        spawn(bin, path, elog, NULL, "run", "--until-idle", NULL);
    if (wait4(engine, &st, 0, &eru) != engine)
        bench_die("web: lost the engine");
    running[0] = 0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bench_die("web: the engine failed (see %s)", elog);
    t1 = bench_ns();
    r.secs = (double)(t1 - t0) / 1e9;
    if (npages > 0) {
        int64_t quiet = bench_ns(), last = pages_updates(&pg);

        c1 = proc_cpu_s(server);
        /* The last changes' updates: until none came for a second
         * (the server looks every 250 ms), 30 s at most. */
        while (bench_ns() - quiet < 1000000000 &&
               bench_ns() - t1 < 30 * (int64_t)1000000000) {
            int64_t now;

            usleep(50000);
            if ((now = pages_updates(&pg)) != last) {
                last = now;
                quiet = bench_ns();
            }
        }
        end_ms = wall_ms();
        r.settle_s = (double)(quiet - t1) / 1e9;
        pages_stop(&pg);
        kill(-server, SIGTERM);
        if (wait4(server, &st, 0, &ru) != server)
            bench_die("web: lost the server");
        running[1] = 0;
        if ((!WIFEXITED(st) || WEXITSTATUS(st) != 0) &&
            !getenv("PLANCTL_BENCH_WEB_WRAP"))
            bench_die("web: planctl serve failed (see %s)", slog);
        r.server_cpu_total = ru_cpu_s(&ru);
        r.server_rss_mb = (double)ru.ru_maxrss / 1024.0;
        r.server_cpu_per_s = (c1 - c0) / r.secs;
        r.client_cpu_per_s = pg.cpu_s / r.secs;
        r.updates = pg.updates;
        r.updates_per_s = (double)pg.updates / r.secs;
        r.mb_per_s = (double)pg.bytes / 1e6 / r.secs;
        r.dropped = pg.dropped;
        r.unparsed = pg.unparsed;
    }
    {
        planctl *p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
        sqlite3 *db = fx_db(p);
        int i;

        left = fx_runs_not_in(db, "COMPLETE");
        steps = fx_steps_in(db, "COMPLETE");
        if (left != 0 || steps != (int64_t)instances * runs * TP_STEPS)
            bench_die("web: %lld steps completed, not %lld; %lld runs not "
                      "complete",
                      (long long)steps, (long long)instances * runs * TP_STEPS,
                      (long long)left);
        /* d[0]: instance pages, d[1]: run pages. */
        before = d ? d[0].missed + d[1].missed : 0;
        for (i = 0; d && i < pg.n; i++)
            if (pg.cl[i].kind != PAGE_ROOT)
                page_delays(&d[pg.cl[i].kind == PAGE_RUN], db, &pg.cl[i],
                            end_ms);
        r.missed = d ? d[0].missed + d[1].missed - before : 0;
        planctl_close(p);
    }
    r.steps_s = (double)steps / r.secs;
    r.engine_us_per_step = ru_cpu_s(&eru) * 1e6 / (double)steps;
    if (npages > 0)
        pages_free(&pg);
    bench_remove_db(path);
    return r;
}

static double median(double *v, int n)
{
    return bench_quantile(v, (size_t)n, 0.5);
}

/* planctl-bench web BIN [--dir D] [--instances N] [--runs K] [--pages P]
 *                   [--reps R] [--setup-only]
 * BIN is the planctl binary; D (default: a new directory under $TMPDIR,
 * removed at the end) holds the scratch databases.  N instances with K
 * runs each (16 steps a run), P open pages, R baseline and R loaded runs,
 * alternated.  --setup-only makes the workload in D and stops (for
 * experiments). */
int bench_web_main(int argc, char **argv)
{
    const char *bin = argc >= 2 && argv[1][0] != '-' ? argv[1] : NULL;
    const char *dir = bench_opt(argc, argv, "--dir", NULL);
    int instances = atoi(bench_opt(argc, argv, "--instances", "200"));
    int runs = atoi(bench_opt(argc, argv, "--runs", "100"));
    int npages = atoi(bench_opt(argc, argv, "--pages", "200"));
    int reps = atoi(bench_opt(argc, argv, "--reps", "3"));
    double base[16], load[16], cpu[16], ebase[16], eload[16];
    char tmpl[4200];
    int64_t run_ids[256];
    int run_inst[256], nruns, k;
    delays d[2], all;
    int64_t t;

    if (!bin)
        bench_die("web: usage: planctl-bench web BIN [--dir D] "
                  "[--instances N] [--runs K] [--pages P] [--reps R]");
    if (instances < 1 || runs < 1 || npages < 8 || reps < 1 || reps > 16)
        bench_die("web: needs --instances and --runs of 1 or more, --pages "
                  "of 8 or more and --reps of 1 to 16");
    nruns = npages / 8;
    if (nruns > 256)
        bench_die("web: --pages must be 2048 at most");
    if (!dir) {
        const char *tmp = getenv("TMPDIR");

        snprintf(workdir, sizeof workdir, "%s/planctl-bench-web.XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(workdir))
            bench_die("web: mkdtemp %s: %s", workdir, strerror(errno));
        made_dir = 1;
    } else {
        snprintf(workdir, sizeof workdir, "%s", dir);
    }
    dir = workdir;
    atexit(cleanup);
    snprintf(tmpl, sizeof tmpl, "%s/web-template.db", dir);
    t = bench_ns();
    setup(tmpl, instances, runs);
    if (bench_flag(argc, argv, "--setup-only")) {
        /* Leaves the workload behind, for experiments. */
        keep_files = 1;
        printf("%s\n", tmpl);
        return 0;
    }
    {
        /* The run pages: runs spread over the instances and over their
         * queues, so that each is live at another time. */
        planctl *p = bench_open(tmpl, PLANCTL_DURABILITY_NORMAL);
        char sql[256];

        for (k = 0; k < nruns; k++) {
            run_inst[k] = (int)((int64_t)k * instances / nruns);
            snprintf(sql, sizeof sql,
                     "SELECT r.id FROM runs AS r JOIN instances AS i ON "
                     "i.id = r.instance_id WHERE i.name = 'web-%d' ORDER BY "
                     "r.id LIMIT 1 OFFSET %d",
                     run_inst[k], (int)((int64_t)k * runs / nruns));
            run_ids[k] = fx_scalar(fx_db(p), sql);
        }
        fx_exec(fx_db(p), "PRAGMA wal_checkpoint(TRUNCATE)");
        planctl_close(p);
    }
    bench_detail("setup",
                 "%d instances, %d runs of %d Dummy steps each (%lld "
                 "steps), made in %.1f s; %d pages: %d instance pages, %d "
                 "run pages, %d on /",
                 instances, runs, TP_STEPS,
                 (long long)instances * runs * TP_STEPS,
                 (double)(bench_ns() - t) / 1e9, npages,
                 npages - nruns - npages / 8, nruns, npages / 8);
    memset(d, 0, sizeof d);
    for (k = 0; k < reps; k++) {
        int side;

        /* Alternated, and the order swapped each round, so a drift of
         * the machine's speed weighs on both sides alike. */
        for (side = 0; side < 2; side++) {
            int loaded = (side + k) % 2 == 1;
            result r =
                measure(bin, dir, tmpl, instances, runs, loaded ? npages : 0,
                        loaded ? d : NULL, run_ids, run_inst, nruns);

            if (!loaded) {
                base[k] = r.steps_s;
                ebase[k] = r.engine_us_per_step;
                bench_detail("baseline",
                             "round %d: %.0f steps/s (%.2f s), engine CPU "
                             "%.1f us/step",
                             k + 1, r.steps_s, r.secs, r.engine_us_per_step);
                continue;
            }
            load[k] = r.steps_s;
            eload[k] = r.engine_us_per_step;
            cpu[k] = r.server_cpu_per_s;
            bench_detail(
                "loaded",
                "round %d: %.0f steps/s (%.2f s), engine CPU %.1f us/step; "
                "server CPU %.2f s/s (%.1f s in all), peak RSS %.1f MB; "
                "%lld updates (%.0f/s, %.1f MB/s) to %d pages, the last "
                "%.2f s after the engine; client thread CPU %.2f s/s; "
                "%lld changes missed, %lld streams dropped, %lld updates "
                "unread",
                k + 1, r.steps_s, r.secs, r.engine_us_per_step,
                r.server_cpu_per_s, r.server_cpu_total, r.server_rss_mb,
                (long long)r.updates, r.updates_per_s, r.mb_per_s, npages,
                r.settle_s, r.client_cpu_per_s, (long long)r.missed,
                (long long)r.dropped, (long long)r.unparsed);
            if (r.dropped || r.unparsed)
                bench_die("web: streams dropped or updates not understood "
                          "(src/web/pages.c changed?)");
        }
    }
    {
        static const char *const what[2] = {
            "instance pages, a run leaving the queue",
            "run pages, a step completed"};
        double ratio[16], b, l;
        int i;

        /* Each round's own ratio first: median() sorts. */
        for (i = 0; i < reps; i++)
            ratio[i] = load[i] / base[i];
        b = median(base, reps);
        l = median(load, reps);
        bench_detail("throughput",
                     "median of %d: %.0f steps/s with %d pages, %.0f "
                     "without; engine CPU %.1f against %.1f us/step; loaded "
                     "over baseline round by round: median %.3f",
                     reps, l, npages, b, median(eload, reps),
                     median(ebase, reps), median(ratio, reps));
        memset(&all, 0, sizeof all);
        for (i = 0; i < 2; i++) {
            size_t j;

            for (j = 0; j < d[i].n; j++) {
                bench_grow((void **)&all.v, all.n, &all.cap, sizeof *all.v,
                           4096);
                all.v[all.n++] = d[i].v[j];
            }
            all.missed += d[i].missed;
            bench_detail("update delay",
                         "%s: %zu changes, p50 %.0f ms, p95 %.0f ms, max "
                         "%.0f ms; %lld never shown",
                         what[i], d[i].n, bench_quantile(d[i].v, d[i].n, 0.5),
                         bench_quantile(d[i].v, d[i].n, 0.95),
                         bench_quantile(d[i].v, d[i].n, 1.0),
                         (long long)d[i].missed);
            free(d[i].v);
        }
        bench_detail("update delay",
                     "all: %zu changes, p50 %.0f ms, p95 %.0f ms, max %.0f "
                     "ms; %lld never shown",
                     all.n, bench_quantile(all.v, all.n, 0.5),
                     bench_quantile(all.v, all.n, 0.95),
                     bench_quantile(all.v, all.n, 1.0), (long long)all.missed);
        bench_summary("web_throughput", l, b, "steps/s", '>', 0.90);
        bench_summary("web_update_p95", bench_quantile(all.v, all.n, 0.95),
                      1000.0, "ms", '<', 1.0);
        bench_summary("web_engine_cpu", median(eload, reps),
                      median(ebase, reps), "us/step", 0, 0);
        bench_summary("web_server_cpu", median(cpu, reps), 1.0, "cpu_s/s", 0,
                      0);
        free(all.v);
    }
    finished = 1; /* cleanup() removes the files */
    return 0;
}
