/* harness.c - what the crash loop and the concurrency storm share (see
 * harness.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <sqlite3.h>

extern char **environ;

/* ---- randomness ---- */

void h_rng_seed(h_rng *r, uint64_t seed)
{
    r->s = seed;
}

uint64_t h_rng_next(h_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int64_t h_rng_range(h_rng *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(h_rng_next(r) % (uint64_t)(hi - lo + 1));
}

uint64_t h_seed_from_clock(void)
{
    struct timespec ts;
    h_rng r;

    clock_gettime(CLOCK_REALTIME, &ts);
    h_rng_seed(&r, (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^
                       ((uint64_t)getpid() << 32));
    /* Short enough to type back in. */
    return h_rng_next(&r) % 1000000000ULL;
}

/* ---- time ---- */

int64_t h_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t h_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void h_sleep_ms(int64_t ms)
{
    struct timespec ts;

    if (ms <= 0)
        return;
    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- strings and files ---- */

char *h_fmt(const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    s = n < 0 ? NULL : malloc((size_t)n + 1);
    if (!s) {
        fputs("harness: out of memory\n", stderr);
        exit(99);
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

char *h_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;

    if (!f)
        return NULL;
    for (;;) {
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap ? cap * 2 : 8192);

            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
            cap = cap ? cap * 2 : 8192;
        }
        got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[len] = '\0';
    return buf;
}

int h_write_file(const char *path, const char *text, int mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    size_t len = strlen(text), done = 0;

    if (fd < 0)
        return -1;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    if (fchmod(fd, (mode_t)mode) != 0) {
        close(fd);
        return -1;
    }
    return close(fd);
}

static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int h_rmtree(const char *path)
{
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- child processes ---- */

static int redirect(int to, const char *path, int append)
{
    int flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC);
    int fd = path ? open(path, flags, 0600) : open("/dev/null", O_WRONLY);

    if (fd < 0)
        return -1;
    if (fd != to) {
        if (dup2(fd, to) < 0)
            return -1;
        close(fd);
    }
    return 0;
}

static int stdin_null(void)
{
    int fd = open("/dev/null", O_RDONLY);

    if (fd < 0)
        return -1;
    if (fd != 0) {
        if (dup2(fd, 0) < 0)
            return -1;
        close(fd);
    }
    return 0;
}

pid_t h_spawn(char *const argv[], char *const env_extra[], const char *out_path,
              const char *err_path, int append)
{
    pid_t pid;
    size_t i;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid != 0)
        return pid;
    /* The child: SIGPIPE back to its default (the harness ignores it). */
    signal(SIGPIPE, SIG_DFL);
    if (stdin_null() < 0 || redirect(1, out_path, append) < 0 ||
        redirect(2, err_path, append) < 0)
        _exit(126);
    for (i = 0; env_extra && env_extra[i]; i++)
        putenv(env_extra[i]);
    execv(argv[0], argv);
    _exit(127);
}

int h_wait(h_result *r, pid_t pid, int64_t timeout_ms)
{
    int64_t deadline = timeout_ms > 0 ? h_mono_ms() + timeout_ms : 0;
    int64_t nap = 1;
    int st = 0;
    pid_t got;

    memset(r, 0, sizeof *r);
    for (;;) {
        got = waitpid(pid, &st, deadline ? WNOHANG : 0);
        if (got == pid)
            break;
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (deadline && h_mono_ms() >= deadline) {
            kill(pid, SIGKILL);
            r->timed_out = 1;
            deadline = 0; /* now wait for it for good */
            continue;
        }
        h_sleep_ms(nap);
        if (nap < 20)
            nap *= 2;
    }
    if (WIFEXITED(st)) {
        r->exited = 1;
        r->code = WEXITSTATUS(st);
    } else if (WIFSIGNALED(st)) {
        r->sig = WTERMSIG(st);
    }
    return 0;
}

int h_run(h_result *r, const char *tmp_prefix, char *const argv[],
          char *const env_extra[], int64_t timeout_ms)
{
    char *out = h_fmt("%s.out", tmp_prefix), *err = h_fmt("%s.err", tmp_prefix);
    pid_t pid = h_spawn(argv, env_extra, out, err, 0);
    int rc = -1;

    memset(r, 0, sizeof *r);
    if (pid > 0 && h_wait(r, pid, timeout_ms) == 0) {
        r->out = h_read_file(out);
        r->err = h_read_file(err);
        if (!r->out)
            r->out = h_fmt("%s", "");
        if (!r->err)
            r->err = h_fmt("%s", "");
        rc = 0;
    }
    unlink(out);
    unlink(err);
    free(out);
    free(err);
    return rc;
}

void h_result_free(h_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

const char *h_describe(const h_result *r, char *buf, size_t n)
{
    if (r->timed_out)
        snprintf(buf, n, "hung: killed when its time was up");
    else if (r->exited)
        snprintf(buf, n, "exit %d", r->code);
    else
        snprintf(buf, n, "killed by signal %d (%s)", r->sig, strsignal(r->sig));
    return buf;
}

/* ---- processes left behind ---- */

/* Reads /proc/<pid>/stat: the state letter and the start time. */
static int proc_stat(pid_t pid, char *state, unsigned long long *start)
{
    char path[64], buf[1024], *p;
    FILE *f;
    size_t n;
    int field;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command may hold spaces and parentheses: skip past the last ')'. */
    p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return -1;
    p += 2;
    *state = *p;
    /* Field 3 is the state; the start time is field 22. */
    for (field = 3; field < 22 && p; field++) {
        p = strchr(p, ' ');
        if (p)
            p++;
    }
    if (!p)
        return -1;
    *start = strtoull(p, NULL, 10);
    return 0;
}

static int environ_has(pid_t pid, const char *marker)
{
    char path[64];
    static char buf[256 * 1024];
    size_t len = 0, i, ml = strlen(marker);
    ssize_t got;
    int fd;

    snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    while (len < sizeof buf &&
           (got = read(fd, buf + len, sizeof buf - len)) > 0)
        len += (size_t)got;
    close(fd);
    for (i = 0; i < len;) {
        size_t el = strnlen(buf + i, len - i);

        if (el == ml && memcmp(buf + i, marker, ml) == 0)
            return 1;
        i += el + 1;
    }
    return 0;
}

static void proc_cmd(pid_t pid, char *out, size_t n)
{
    char path[64];
    size_t got, i;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
    out[0] = '\0';
    f = fopen(path, "r");
    if (!f)
        return;
    got = fread(out, 1, n - 1, f);
    fclose(f);
    out[got] = '\0';
    for (i = 0; i + 1 < got; i++)
        if (out[i] == '\0')
            out[i] = ' ';
}

size_t h_scan_marked(h_proc **out, const char *marker)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    size_t n = 0, cap = 0;
    pid_t self = getpid();

    *out = NULL;
    if (!d)
        return 0;
    while ((de = readdir(d)) != NULL) {
        char *end, state;
        long pid = strtol(de->d_name, &end, 10);
        unsigned long long start;

        if (*end || pid <= 1 || (pid_t)pid == self)
            continue;
        if (!environ_has((pid_t)pid, marker) ||
            proc_stat((pid_t)pid, &state, &start) != 0 || state == 'Z' ||
            state == 'X')
            continue;
        if (n == cap) {
            h_proc *np = realloc(*out, (cap = cap ? cap * 2 : 16) * sizeof *np);

            if (!np)
                break;
            *out = np;
        }
        (*out)[n].pid = (pid_t)pid;
        (*out)[n].start = start;
        proc_cmd((pid_t)pid, (*out)[n].cmd, sizeof(*out)[n].cmd);
        n++;
    }
    closedir(d);
    return n;
}

int h_proc_alive(const h_proc *p)
{
    char state;
    unsigned long long start;

    if (proc_stat(p->pid, &state, &start) != 0)
        return 0;
    return start == p->start && state != 'Z' && state != 'X';
}

int h_proc_of(h_proc *out, pid_t pid)
{
    char state;

    if (proc_stat(pid, &state, &out->start) != 0 || state == 'Z' ||
        state == 'X')
        return -1;
    out->pid = pid;
    proc_cmd(pid, out->cmd, sizeof out->cmd);
    return 0;
}

/* ---- the database ---- */

sqlite3 *h_db_open(const char *path)
{
    sqlite3 *db = NULL;

    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        fprintf(stderr, "harness: cannot open %s: %s\n", path,
                db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 10000);
    return db;
}

int64_t h_db_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
    }
    if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
        fprintf(stderr, "harness: %s: %s\n", sql, sqlite3_errmsg(db));
        v = -2;
    }
    sqlite3_finalize(st);
    return v;
}

/* Runs sql; if it returns a row, formats the message from the row's
 * columns joined with ", " after `what`.  NULL when no row. */
static char *first_row(sqlite3 *db, const char *what, const char *sql)
{
    sqlite3_stmt *st = NULL;
    char *msg = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL), i;

    if (rc != SQLITE_OK) {
        msg = h_fmt("%s: cannot check (%s)", what, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return msg;
    }
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        msg = h_fmt("%s:", what);
        for (i = 0; i < sqlite3_column_count(st); i++) {
            const char *v = (const char *)sqlite3_column_text(st, i);
            char *m = h_fmt("%s%s %s=%s", msg, i ? "," : "",
                            sqlite3_column_name(st, i), v ? v : "NULL");

            free(msg);
            msg = m;
        }
    } else if (rc != SQLITE_DONE) {
        msg = h_fmt("%s: cannot check (%s)", what, sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    return msg;
}

static int is_active(const char *s)
{
    return s && (!strcmp(s, "PENDING") || !strcmp(s, "IN_PROGRESS") ||
                 !strcmp(s, "PAUSED"));
}

/* Walks the runs' status events in order: at no point may an instance
 * have two runs PENDING, IN_PROGRESS or PAUSED. */
static char *check_event_log(sqlite3 *db)
{
    int64_t max_run = h_db_int(db, "SELECT coalesce(max(id), 0) FROM runs");
    int64_t max_inst =
        h_db_int(db, "SELECT coalesce(max(id), 0) FROM instances");
    int64_t max_ev = h_db_int(db, "SELECT coalesce(max(run_id), 0) FROM "
                                  "events");
    unsigned char *active;
    int64_t *count, *holder;
    sqlite3_stmt *st = NULL;
    char *msg = NULL;
    int rc;

    if (max_run < 0 || max_inst < 0 || max_ev < 0)
        return h_fmt("event log: cannot read the sizes");
    if (max_ev > max_run)
        max_run = max_ev;
    active = calloc((size_t)max_run + 1, 1);
    count = calloc((size_t)max_inst + 1, sizeof *count);
    holder = calloc((size_t)max_inst + 1, sizeof *holder);
    if (!active || !count || !holder) {
        free(active);
        free(count);
        free(holder);
        return h_fmt("event log: out of memory");
    }
    rc = sqlite3_prepare_v2(db,
                            "SELECT seq, instance_id, run_id, to_status FROM "
                            "events WHERE entity = 'run' AND run_id IS NOT "
                            "NULL AND to_status IS NOT NULL ORDER BY seq",
                            -1, &st, NULL);
    while (rc == SQLITE_OK && !msg && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(st, 0);
        int64_t inst = sqlite3_column_int64(st, 1);
        int64_t run = sqlite3_column_int64(st, 2);
        int now = is_active((const char *)sqlite3_column_text(st, 3));

        if (inst < 0 || inst > max_inst || run < 1 || run > max_run) {
            msg = h_fmt("event %lld names instance %lld run %lld, out of "
                        "range",
                        (long long)seq, (long long)inst, (long long)run);
            break;
        }
        if (now && !active[run]) {
            if (count[inst] > 0)
                msg = h_fmt("two active runs: instance id %lld had run %lld "
                            "active when run %lld became active (event %lld)",
                            (long long)inst, (long long)holder[inst],
                            (long long)run, (long long)seq);
            count[inst]++;
            holder[inst] = run;
        } else if (!now && active[run]) {
            count[inst]--;
        }
        active[run] = (unsigned char)now;
        rc = SQLITE_OK;
    }
    if (!msg && rc != SQLITE_DONE && rc != SQLITE_OK)
        msg = h_fmt("event log: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    free(active);
    free(count);
    free(holder);
    return msg;
}

#define TERMINAL "('COMPLETE', 'FATAL_ERROR', 'CANCELLED')"

char *h_check_invariants(sqlite3 *db, int final)
{
    static const struct {
        const char *what, *sql;
    } always[] = {
        {"an instance with two active runs",
         "SELECT instance_id, group_concat(id) AS runs FROM runs WHERE "
         "status IN ('PENDING', 'IN_PROGRESS', 'PAUSED') GROUP BY "
         "instance_id HAVING count(*) > 1"},
        {"a step whose attempts are not numbered 1..n (n = its attempt "
         "count)",
         "SELECT s.run_id, s.name, s.status, s.attempt, count(a.id) AS rows, "
         "min(a.number) AS first, max(a.number) AS last FROM steps s "
         "LEFT JOIN attempts a ON a.step_id = s.id WHERE s.message IS NULL "
         "OR s.message NOT LIKE 'carried over from run %' GROUP BY s.id "
         "HAVING count(a.id) <> s.attempt OR (count(a.id) > 0 AND "
         "(min(a.number) <> 1 OR max(a.number) <> count(a.id)))"},
        {"an attempt that ended before it started",
         "SELECT s.run_id, s.name, a.number, a.started_at, a.finished_at "
         "FROM attempts a JOIN steps s ON s.id = a.step_id WHERE "
         "a.finished_at < a.started_at"},
        {"two attempts of one step overlapping (the step ran twice at once)",
         "SELECT s.run_id, s.name, a.number, a.started_at, a.finished_at, "
         "b.number AS next, b.started_at AS next_started_at FROM attempts a "
         "JOIN attempts b ON b.step_id = a.step_id AND b.number = a.number "
         "+ 1 JOIN steps s ON s.id = a.step_id WHERE a.finished_at IS NULL "
         "OR a.finished_at > b.started_at"},
        {"an open attempt of a step that is not IN_PROGRESS",
         "SELECT s.run_id, s.name, s.status, a.number FROM attempts a JOIN "
         "steps s ON s.id = a.step_id WHERE a.finished_at IS NULL AND "
         "s.status <> 'IN_PROGRESS'"},
        {"an IN_PROGRESS step without exactly one open attempt",
         "SELECT s.run_id, s.name, s.attempt, (SELECT count(*) FROM "
         "attempts WHERE step_id = s.id AND finished_at IS NULL) AS open "
         "FROM steps s WHERE s.status = 'IN_PROGRESS' AND (SELECT count(*) "
         "FROM attempts WHERE step_id = s.id AND finished_at IS NULL) <> 1"},
        {"a terminal run with a step that is not",
         "SELECT r.id AS run, r.status, s.name, s.status AS step_status FROM "
         "runs r JOIN steps s ON s.run_id = r.id WHERE r.status IN " TERMINAL
         " AND s.status NOT IN " TERMINAL},
        {"a terminal run with a phase that is not",
         "SELECT r.id AS run, r.status, p.name, p.status AS phase_status "
         "FROM runs r JOIN phases p ON p.run_id = r.id WHERE r.status "
         "IN " TERMINAL " AND p.status NOT IN " TERMINAL},
    };
    static const struct {
        const char *what, *sql;
    } at_end[] = {
        {"a run that did not finish",
         "SELECT id, plan, status FROM runs WHERE status NOT IN " TERMINAL},
        {"an attempt still open",
         "SELECT s.run_id, s.name, a.number FROM attempts a JOIN steps s ON "
         "s.id = a.step_id WHERE a.finished_at IS NULL"},
    };
    char *msg = NULL;
    size_t i;

    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return h_fmt("cannot begin a read: %s", sqlite3_errmsg(db));
    for (i = 0; !msg && i < sizeof always / sizeof always[0]; i++)
        msg = first_row(db, always[i].what, always[i].sql);
    for (i = 0; final && !msg && i < sizeof at_end / sizeof at_end[0]; i++)
        msg = first_row(db, at_end[i].what, at_end[i].sql);
    if (!msg)
        msg = check_event_log(db);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    return msg;
}

char *h_check_integrity(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    char *msg = NULL;

    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) !=
            SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW)
        msg = h_fmt("integrity_check: %s", sqlite3_errmsg(db));
    else if (strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0)
        msg = h_fmt("integrity_check: %s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (!msg)
        msg = first_row(db, "foreign_key_check",
                        "SELECT * FROM pragma_foreign_key_check");
    return msg;
}

int h_paused_instances(sqlite3 *db, char ***out, size_t *n)
{
    sqlite3_stmt *st;

    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT i.name FROM runs r JOIN instances i ON "
                           "i.id = r.instance_id WHERE r.status = 'PAUSED'",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        *out = realloc(*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = h_fmt("%s", sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    return 0;
}

char *h_check_db(sqlite3 *db, int final)
{
    char *msg = h_check_invariants(db, final);

    if (!msg && final)
        msg = h_check_integrity(db);
    return msg;
}

long h_num_arg(int argc, char **argv, int *i, void (*usage)(void))
{
    char *end;
    long v;

    if (*i + 1 >= argc)
        usage();
    v = strtol(argv[++*i], &end, 10);
    if (*end || v < 0)
        usage();
    return v;
}
