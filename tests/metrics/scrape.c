/*
 * scrape.c - `planctl run --metrics-addr 127.0.0.1:0` scraped over
 * loopback while it runs a workload: /metrics is valid exposition text
 * (tests/unit/expo_check.h) whose counters grow between two scrapes,
 * /healthz is 200 while the engine holds its lease and 503 once it is
 * stopping, other paths, methods, malformed and oversized requests get
 * 404, 405, 400 and 431, what a proxy could read otherwise (a \v in
 * Content-Length, a space before a colon, two Hosts, a bare CR,
 * HTTP/1.9) is one 400, many clients at once are all answered, more
 * slow clients than the server holds do not make /healthz fail, nor do
 * more clients that pipeline requests and never read, a client dripping
 * its header is dropped at the header timer, every
 * stderr line is a JSON log record, and the command exits 0.  Then the
 * refusals: a port in use (exit 1, naming it, the lease never taken) and
 * bad addresses (exit 2).  Nothing here asserts a duration; waits are
 * generous upper bounds.
 *
 * Usage: scrape PLANCTL_BINARY
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "expo_check.h"

static const char *planctl;
static char dir[256];
static int failures;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);               \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Runs planctl with args (NULL-terminated) in dir; stderr to err_path
 * (or /dev/null).  Returns the pid. */
static pid_t spawn(const char *err_path, const char *const *args)
{
    pid_t pid = fork();

    if (pid == 0) {
        const char *argv[32];
        int i = 0, fd;

        argv[i++] = planctl;
        while (*args && i < 31)
            argv[i++] = *args++;
        argv[i] = NULL;
        if (chdir(dir) != 0)
            _exit(127);
        fd = open(err_path ? err_path : "/dev/null",
                  O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        execv(planctl, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Waits for pid at most limit_ms; kills it if it is still there.  Returns
 * its exit code, or -1 when it was killed or died of a signal. */
static int wait_exit(pid_t pid, int limit_ms)
{
    int st, waited = 0;

    while (waitpid(pid, &st, WNOHANG) == 0) {
        if (waited >= limit_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        sleep_ms(20);
        waited += 20;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_cli(const char *err_path, const char *const *args)
{
    return wait_exit(spawn(err_path, args), 60000);
}

static int connect_to(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static void send_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, s, n, MSG_NOSIGNAL);

        if (k <= 0)
            return; /* the server may close early (431): fine */
        s += k;
        n -= (size_t)k;
    }
}

/* Reads until the server closes (it always does: Connection: close). */
static char *recv_all(int fd)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    struct pollfd pfd = {fd, POLLIN, 0};

    for (;;) {
        ssize_t k;

        if (poll(&pfd, 1, 30000) <= 0)
            break;
        if (len + 1024 > cap)
            buf = realloc(buf, cap *= 2);
        k = recv(fd, buf + len, cap - len - 1, 0);
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    buf[len] = '\0';
    return buf;
}

/* Sends raw, returns the whole response (malloc'd) or NULL. */
static char *request(int port, const char *raw, size_t n)
{
    int fd = connect_to(port);
    char *resp;

    if (fd < 0)
        return NULL;
    send_all(fd, raw, n);
    resp = recv_all(fd);
    close(fd);
    return resp;
}

static char *get(int port, const char *path)
{
    char raw[512];

    snprintf(raw, sizeof raw, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
    return request(port, raw, strlen(raw));
}

static int status_of(const char *resp)
{
    int code = 0;

    if (!resp || sscanf(resp, "HTTP/1.1 %d", &code) != 1)
        return 0;
    return code;
}

static const char *body_of(const char *resp)
{
    const char *b = resp ? strstr(resp, "\r\n\r\n") : NULL;

    return b ? b + 4 : "";
}

static double transitions(const char *text)
{
    const char *p = text;
    double sum = 0;

    while ((p = strstr(p, "\nplanctl_transitions_total{")) != NULL) {
        const char *sp = strchr(p + 1, ' ');

        sum += strtod(sp + 1, NULL);
        p = sp;
    }
    return sum;
}

/* Scrapes /metrics, checks it, returns the body (malloc'd) or NULL. */
static char *scrape(int port)
{
    char *resp = get(port, "/metrics"), *body, err[300];

    CHECK(status_of(resp) == 200, "/metrics answered %d", status_of(resp));
    CHECK(resp && strstr(resp, "Content-Type: text/plain; version=0.0.4"),
          "/metrics content type");
    CHECK(resp && strstr(resp, "Connection: close"), "Connection: close");
    if (status_of(resp) != 200) {
        free(resp);
        return NULL;
    }
    body = strdup(body_of(resp));
    free(resp);
    if (expo_check(body, err, sizeof err) != 0) {
        CHECK(0, "invalid exposition: %s", err);
        free(body);
        return NULL;
    }
    return body;
}

/* The port from "metrics listening on 127.0.0.1:PORT" in the log. */
static int find_port(const char *log_path)
{
    int i;

    for (i = 0; i < 1500; i++) {
        char *log = read_file(log_path), *p;
        int port = 0;

        if (log && (p = strstr(log, "metrics listening on 127.0.0.1:")))
            port = atoi(p + strlen("metrics listening on 127.0.0.1:"));
        free(log);
        if (port > 0)
            return port;
        sleep_ms(20);
    }
    return 0;
}

#define DEF                                                                    \
    "{\"name\":\"m\",\"version\":\"1\",\"tasks\":["                            \
    "{\"name\":\"w\",\"kind\":\"Dummy\",\"spec\":{\"sleep\":\"100ms\"}},"      \
    "{\"name\":\"f\",\"kind\":\"Dummy\",\"spec\":{\"failTimes\":1}},"          \
    "{\"name\":\"forever\",\"kind\":\"Dummy\",\"spec\":{\"sleep\":\"1h\"}}],"  \
    "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["           \
    "{\"name\":\"s1\",\"tasks\":[\"w\",\"f\"],"                                \
    "\"retry\":{\"backoff\":\"50ms\"}},"                                       \
    "{\"name\":\"s2\",\"tasks\":[\"w\"]},{\"name\":\"s3\",\"tasks\":[\"w\"]}," \
    "{\"name\":\"s4\",\"tasks\":[\"w\"]},{\"name\":\"s5\",\"tasks\":[\"w\"]}," \
    "{\"name\":\"s6\",\"tasks\":[\"w\"]}]}]},"                                 \
    "\"hold\":{\"phases\":[{\"name\":\"p\",\"steps\":["                        \
    "{\"name\":\"h\",\"tasks\":[\"forever\"]}]}]}}}"

static void many_clients(int port)
{
    enum { N = 40 };
    int fds[N], i, ok = 0;
    const char *req = "GET /healthz HTTP/1.1\r\n\r\n";

    /* All connected before any sends: the server holds them all. */
    for (i = 0; i < N; i++)
        fds[i] = connect_to(port);
    for (i = 0; i < N; i++)
        if (fds[i] >= 0)
            send_all(fds[i], req, strlen(req));
    for (i = 0; i < N; i++) {
        char *resp;

        if (fds[i] < 0)
            continue;
        resp = recv_all(fds[i]);
        if (status_of(resp) == 200)
            ok++;
        free(resp);
        close(fds[i]);
    }
    CHECK(ok == N, "%d of %d clients at once got 200", ok, N);
}

/* More slow clients than the server holds (256), connected and silent:
 * a health probe still gets its honest 200, the oldest silent client
 * making room for it. */
static void slow_clients(int port)
{
    enum { N = 300 };
    int fds[N], i, code;
    char *resp;

    for (i = 0; i < N; i++)
        fds[i] = connect_to(port);
    /* Let the server accept them all. */
    sleep_ms(500);
    resp = get(port, "/healthz");
    code = status_of(resp);
    CHECK(code == 200, "/healthz with %d slow clients: %d (%s)", N, code,
          resp ? resp : "no answer");
    free(resp);
    for (i = 0; i < N; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

static void bad_requests(int port)
{
    char *r, *big;
    size_t n = 9000;

    r = get(port, "/nope");
    CHECK(status_of(r) == 404, "unknown path: %d", status_of(r));
    free(r);
    r = request(port, "POST /metrics HTTP/1.1\r\n\r\n", 26);
    CHECK(status_of(r) == 405, "POST: %d", status_of(r));
    CHECK(r && strstr(r, "Allow: GET"), "405 names the method");
    free(r);
    r = request(port, "hello\r\n\r\n", 9);
    CHECK(status_of(r) == 400, "garbage: %d", status_of(r));
    free(r);
    big = malloc(n + 1);
    memcpy(big, "GET /metrics HTTP/1.1\r\nX-Pad: ", 30);
    memset(big + 30, 'a', n - 30);
    big[n] = '\0';
    r = request(port, big, n);
    CHECK(status_of(r) == 431, "oversized request: %d", status_of(r));
    free(r);
    free(big);
    /* A query string is not part of the path. */
    r = get(port, "/healthz?verbose=1");
    CHECK(status_of(r) == 200, "/healthz?...: %d", status_of(r));
    free(r);
}

/* What a proxy in front could read as another request: each is one 400
 * and the end of the connection, never an answer from /metrics. */
static void strict_requests(int port)
{
    static const char *const bad[][2] = {
        {"Content-Length with a leading \\v",
         "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: \v2\r\n\r\nab"},
        {"a space before the colon",
         "GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n"},
        {"two Host headers",
         "GET /metrics HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"},
        {"a bare CR inside a header value",
         "GET /metrics HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n"},
        {"HTTP/1.9", "GET /metrics HTTP/1.9\r\nHost: x\r\n\r\n"}};
    size_t i;

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *r = request(port, bad[i][1], strlen(bad[i][1]));
        const char *second = r ? strstr(r + 1, "HTTP/1.") : NULL;

        CHECK(status_of(r) == 400 && !second, "%s: one 400, then the end: %s",
              bad[i][0], r ? r : "no answer");
        free(r);
    }
}

/* Clients that pipeline requests and never read an answer, more of them
 * than the server holds: the engine's loop goes on (a probe is answered
 * 200 within a generous bound) and the server keeps room for it. */
static void pipelining_nonreaders(int port)
{
    enum { N = 300, BURST = 65536 };
    static const char one[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    char *burst = malloc(BURST), *r;
    int fds[N], i, small = 4096, code;
    size_t n = 0;
    struct timespec t0, t1;

    while (n + sizeof one - 1 <= BURST) {
        memcpy(burst + n, one, sizeof one - 1);
        n += sizeof one - 1;
    }
    for (i = 0; i < N; i++) {
        fds[i] = connect_to(port);
        if (fds[i] < 0)
            continue;
        setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
        /* As much as the kernel takes at once; never read. */
        (void)send(fds[i], burst, n, MSG_NOSIGNAL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    r = get(port, "/healthz");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    code = status_of(r);
    CHECK(code == 200,
          "/healthz beside %d pipelining clients that never "
          "read: %d (%s)",
          N, code, r ? r : "no answer");
    CHECK(t1.tv_sec - t0.tv_sec < 10, "/healthz beside them answered in %lds",
          (long)(t1.tv_sec - t0.tv_sec));
    free(r);
    r = scrape(port);
    CHECK(r != NULL, "/metrics beside them");
    free(r);
    for (i = 0; i < N; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(burst);
}

/* A client that sends its request a byte every half second is dropped
 * at the header timer (10 s from connecting), never answered. */
static void header_dripper(int port)
{
    static const char head[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
    int fd = connect_to(port), closed = 0;
    struct timespec t0, t1;
    char got[256];

    CHECK(fd >= 0, "dripper connects");
    if (fd < 0)
        return;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    send_all(fd, head, sizeof head - 1);
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};

        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (t1.tv_sec - t0.tv_sec > 60)
            break;
        if (poll(&pfd, 1, 500) > 0) {
            ssize_t k = recv(fd, got, sizeof got - 1, 0);

            if (k > 0) {
                got[k] = '\0';
                CHECK(0, "the dripper got an answer: %s", got);
            }
            closed = 1;
            break;
        }
        if (send(fd, "a", 1, MSG_NOSIGNAL) < 0) {
            closed = 1;
            break;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(closed && t1.tv_sec - t0.tv_sec >= 5,
          "a client dripping its header is dropped after about 10 s "
          "(closed %d after %lds)",
          closed, (long)(t1.tv_sec - t0.tv_sec));
    close(fd);
}

static void check_log(const char *path)
{
    char *log = read_file(path), *line, *save = NULL;
    int n = 0, started = 0, ended = 0, stopped = 0;

    CHECK(log != NULL, "no log");
    if (!log)
        return;
    for (line = strtok_r(log, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        const char *msg;

        n++;
        CHECK(o && json_is_object(o), "not a JSON line: %s", line);
        if (!o)
            continue;
        CHECK(json_is_string(json_object_get(o, "ts")) &&
                  json_is_string(json_object_get(o, "level")) &&
                  json_is_string(json_object_get(o, "msg")),
              "a record without ts, level, msg: %s", line);
        msg = json_string_value(json_object_get(o, "msg"));
        if (msg && strcmp(msg, "run started") == 0) {
            started++;
            CHECK(json_is_string(json_object_get(o, "instance")) &&
                      json_is_integer(json_object_get(o, "run")),
                  "run started without context: %s", line);
        }
        if (msg && strcmp(msg, "run ended") == 0)
            ended++;
        if (msg && strcmp(msg, "stopped") == 0)
            stopped++;
        json_decref(o);
    }
    CHECK(n > 0, "empty log");
    CHECK(started >= 4, "%d runs started in the log", started);
    CHECK(ended >= 3, "%d runs ended in the log", ended);
    CHECK(stopped == 1, "\"stopped\" logged %d times", stopped);
    free(log);
}

static void scenario_run(void)
{
    char defpath[300], errpath[300];
    FILE *f;
    char *first = NULL, *second = NULL, *r;
    pid_t pid;
    int port, i, code;

    snprintf(defpath, sizeof defpath, "%s/m.json", dir);
    snprintf(errpath, sizeof errpath, "%s/run.log", dir);
    f = fopen(defpath, "w");
    fputs(DEF, f);
    fclose(f);
    {
        const char *a1[] = {"apply", "-f", "m.json", NULL};
        const char *a2[] = {"create", "i1", "--definition", "m", NULL};
        const char *a3[] = {"create", "i2", "--definition", "m", NULL};
        const char *a4[] = {"create", "i3", "--definition", "m", NULL};
        const char *a5[] = {"create", "hold", "--definition", "m", NULL};
        const char *a6[] = {"trigger", "hold", "hold", "--queue", NULL};

        CHECK(run_cli(NULL, a1) == 0, "apply");
        CHECK(run_cli(NULL, a2) == 0, "create i1");
        CHECK(run_cli(NULL, a3) == 0, "create i2");
        CHECK(run_cli(NULL, a4) == 0, "create i3");
        CHECK(run_cli(NULL, a5) == 0, "create hold");
        CHECK(run_cli(NULL, a6) == 0, "trigger hold");
    }
    {
        const char *args[] = {
            "run",  "--metrics-addr", "127.0.0.1:0", "--log-format",
            "json", "--grace",        "1h",          NULL};

        pid = spawn(errpath, args);
    }
    port = find_port(errpath);
    CHECK(port > 0, "no \"metrics listening on\" line");
    if (port <= 0) {
        kill(pid, SIGKILL);
        wait_exit(pid, 10000);
        return;
    }
    /* The engine holds its lease once it logged that it started. */
    for (i = 0; i < 1500; i++) {
        r = get(port, "/healthz");
        code = status_of(r);
        free(r);
        if (code == 200)
            break;
        sleep_ms(20);
    }
    CHECK(code == 200, "/healthz while running: %d", code);

    first = scrape(port);
    /* The counters move while the workload runs (steps of 100ms). */
    for (i = 0; first && i < 1500; i++) {
        second = scrape(port);
        if (!second)
            break;
        if (transitions(second) > transitions(first) &&
            expo_value(second, "planctl_attempts_total") >
                expo_value(first, "planctl_attempts_total"))
            break;
        free(second);
        second = NULL;
        sleep_ms(20);
    }
    CHECK(second != NULL, "the counters never grew between two scrapes");
    free(first);
    free(second);

    bad_requests(port);
    strict_requests(port);
    many_clients(port);
    slow_clients(port);
    pipelining_nonreaders(port);
    header_dripper(port);

    /* Wait for the workload: the three deploys end, "hold" runs forever
     * (its step sleeps an hour): the engine now has a step to wait for. */
    for (i = 0; i < 3000; i++) {
        char *m = scrape(port);
        double done =
            m ? expo_value(m, "planctl_transitions_total{entity=\"run\","
                              "to=\"COMPLETE\"}")
              : -1;
        double running = m ? expo_value(m, "planctl_running_steps") : -1;

        free(m);
        if (done >= 3 && running == 1)
            break;
        sleep_ms(20);
    }
    /* Stopping (grace 1h, the step still running): not healthy. */
    kill(pid, SIGTERM);
    for (i = 0; i < 1500; i++) {
        r = get(port, "/healthz");
        code = status_of(r);
        free(r);
        if (code == 503)
            break;
        sleep_ms(20);
    }
    CHECK(code == 503, "/healthz while stopping: %d", code);
    r = scrape(port);
    CHECK(r && expo_value(r, "planctl_lease_held") == 0, "lease_held 0");
    free(r);
    kill(pid, SIGTERM); /* the second: at once */
    code = wait_exit(pid, 60000);
    CHECK(code == 0, "planctl run exited %d", code);
    /* Every handle closed: nothing listens any more. */
    i = connect_to(port);
    CHECK(i < 0, "still listening after exit");
    if (i >= 0)
        close(i);
    check_log(errpath);
}

static void scenario_refusals(void)
{
    char errpath[300], addr[64];
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), code;
    char *err;

    snprintf(errpath, sizeof errpath, "%s/refused.log", dir);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 1) == 0,
          "test listener");
    getsockname(fd, (struct sockaddr *)&a, &len);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", ntohs(a.sin_port));
    {
        const char *args[] = {"run", "--until-idle", "--metrics-addr", addr,
                              NULL};

        code = run_cli(errpath, args);
    }
    err = read_file(errpath);
    CHECK(code == 1, "port in use: exit %d", code);
    CHECK(err && strstr(err, addr) && strstr(err, "address already in use"),
          "port in use message: %s", err ? err : "");
    CHECK(err && !strstr(err, "engine"), "the engine started: %s",
          err ? err : "");
    free(err);
    close(fd);

    {
        static const char *const bad[] = {
            "abc",  "127.0.0.1:65536", "example.com:80",
            "[::1", "1.2.3:80",        ":-1"};
        size_t i;

        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            const char *args[] = {"run", "--metrics-addr", bad[i], NULL};

            code = run_cli(errpath, args);
            err = read_file(errpath);
            CHECK(code == 2, "--metrics-addr %s: exit %d", bad[i], code);
            CHECK(err && strstr(err, "--metrics-addr") &&
                      strchr(err, '\n') == err + strlen(err) - 1,
                  "--metrics-addr %s: one line naming the flag: %s", bad[i],
                  err ? err : "");
            free(err);
        }
    }
    {
        const char *args[] = {"run", "--log-format", "xml", NULL};
        const char *args2[] = {"run", "--log-level", "loud", NULL};

        CHECK(run_cli(NULL, args) == 2, "--log-format xml");
        CHECK(run_cli(NULL, args2) == 2, "--log-level loud");
    }
}

int main(int argc, char **argv)
{
    char cmd[300];

    if (argc != 2) {
        fprintf(stderr, "usage: scrape PLANCTL_BINARY\n");
        return 2;
    }
    if (!(planctl = realpath(argv[1], NULL))) {
        perror(argv[1]);
        return 2;
    }
    snprintf(dir, sizeof dir, "%s/planctl-scrape.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    {
        char db[300];

        snprintf(db, sizeof db, "%s/planctl.db", dir);
        setenv("PLANCTL_DB", db, 1);
    }
    scenario_run();
    scenario_refusals();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    free((char *)planctl);
    printf("ok\n");
    return 0;
}
