/* testutil.c - helpers shared by the unit tests. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "testutil.h"

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

#include <cmocka.h>
#include <ftw.h>
#include <jansson.h>
#include <sqlite3.h>
#include <uv.h>

#include "planctl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tu_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char *tmpl = tu_fmt("%s/planctl-test-XXXXXX", base ? base : "/tmp");

    if (!tmpl || !mkdtemp(tmpl)) {
        free(tmpl);
        return NULL;
    }
    return tmpl;
}

static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int tu_rmtree(const char *path)
{
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
            buf[n] = '\0';
            if (len)
                *len = (size_t)n;
        } else {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    return buf;
}

int tu_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    int rc = 0;

    if (!f)
        return -1;
    if (fwrite(data, 1, len, f) != len)
        rc = -1;
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

char *tu_fmt(const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

size_t tu_count(const char *hay, const char *needle)
{
    size_t n = 0, len = strlen(needle);

    while ((hay = strstr(hay, needle)) != NULL) {
        n++;
        hay += len;
    }
    return n;
}

static sqlite3_stmt *query(sqlite3 *db, const char *fmt, va_list ap)
{
    char sql[4096];
    sqlite3_stmt *st = NULL;

    vsnprintf(sql, sizeof sql, fmt, ap);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    return st;
}

uint64_t tu_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

int64_t tu_scalar(sqlite3 *db, const char *fmt, ...)
{
    va_list ap;
    sqlite3_stmt *st;
    int64_t v = -1;

    va_start(ap, fmt);
    st = query(db, fmt, ap);
    va_end(ap);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

char *tu_text(sqlite3 *db, const char *fmt, ...)
{
    va_list ap;
    sqlite3_stmt *st;
    char *v = NULL;

    va_start(ap, fmt);
    st = query(db, fmt, ap);
    va_end(ap);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        v = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

void tu_expect_gone(int pid, const char *what)
{
    int i;

    for (i = 0; i < 100 && kill((pid_t)pid, 0) == 0; i++)
        usleep(20000);
    if (kill((pid_t)pid, 0) == 0)
        fail_msg("%s (pid %d) is still alive", what, pid);
}

static void tu_stopped(planctl_engine *e, void *data)
{
    (void)e;
    *(int *)data = 1;
}

int tu_engine_until_idle(planctl *p)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_engine *e;
    uv_loop_t loop;
    int stopped = 0, rc;

    o.until_idle = 1;
    o.change_poll_ms = 20;
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(planctl_engine_new(&e, p, &loop, &o), 0);
    assert_int_equal(planctl_engine_start(e, tu_stopped, &stopped), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_true(stopped);
    rc = planctl_engine_status(e);
    planctl_engine_free(e);
    assert_int_equal(uv_loop_close(&loop), 0);
    return rc;
}

/* The definition of tu_replay_workload(): retries, a fatal step, a shell
 * step with output, plans deploy, update and backup. */
#define TU_RP_DEF                                                              \
    "{\"name\":\"rp\",\"version\":\"1\",\"parameters\":[{\"name\":\"N\","      \
    "\"default\":\"1\"}],\"tasks\":["                                          \
    "{\"name\":\"quick\",\"kind\":\"Dummy\"},"                                 \
    "{\"name\":\"flaky\",\"kind\":\"Dummy\",\"spec\":{\"failTimes\":2}},"      \
    "{\"name\":\"boom\",\"kind\":\"Dummy\",\"spec\":{\"wantErr\":true,"        \
    "\"fatal\":true}},"                                                        \
    "{\"name\":\"say\",\"kind\":\"shell\",\"spec\":{\"command\":\"echo "       \
    "hello $PLANCTL_PARAM_N; exit 0\"}}],"                                     \
    "\"plans\":{"                                                              \
    "\"deploy\":{\"phases\":[{\"name\":\"a\",\"strategy\":\"parallel\","       \
    "\"steps\":[{\"name\":\"s1\",\"tasks\":[\"say\"]},{\"name\":\"s2\","       \
    "\"tasks\":[\"flaky\"],\"retry\":{\"attempts\":3,\"backoff\":\"10ms\"}}]}" \
    ","                                                                        \
    "{\"name\":\"b\",\"steps\":[{\"name\":\"s3\",\"tasks\":[\"quick\"]}]}]},"  \
    "\"update\":{\"phases\":[{\"name\":\"a\",\"steps\":[{\"name\":\"ok\","     \
    "\"tasks\":[\"quick\"]},{\"name\":\"bad\",\"tasks\":[\"boom\"]}]}]},"      \
    "\"backup\":{\"phases\":[{\"name\":\"a\",\"steps\":[{\"name\":\"c\","      \
    "\"tasks\":[\"quick\"]}]}]}}}"

void tu_replay_workload(planctl *p)
{
    planctl_trigger_options q = PLANCTL_TRIGGER_OPTIONS_INIT;
    int64_t r;

    if (planctl_definition_apply(NULL, p, TU_RP_DEF, strlen(TU_RP_DEF),
                                 "rp.json") != 0)
        fail_msg("apply: %s", planctl_errmsg(p));
    assert_int_equal(planctl_instance_create(&r, p, "zk", "rp", NULL, NULL, 0),
                     0);
    assert_int_equal(tu_engine_until_idle(p), 0);
    assert_int_equal(planctl_plan_trigger(&r, p, "zk", "update", NULL), 0);
    assert_int_equal(tu_engine_until_idle(p), 0);
    assert_int_equal(planctl_run_retry(&r, p, "zk", 0), 0);
    q.queue = 1;
    assert_int_equal(planctl_plan_trigger(&r, p, "zk", "backup", &q), 0);
    assert_int_equal(tu_engine_until_idle(p), 0);
    assert_int_equal(
        planctl_instance_create(&r, p, "kafka", "rp", NULL, NULL, 0), 0);
    assert_int_equal(planctl_run_cancel(NULL, p, "kafka", "not today"), 0);
    assert_int_equal(planctl_plan_trigger(&r, p, "kafka", "backup", NULL), 0);
}

tu_db *tu_db_open(const char *file, int chdir_to)
{
    tu_db *f = calloc(1, sizeof *f);

    assert_non_null(f);
    f->dir = tu_mkdtemp();
    assert_non_null(f->dir);
    f->path = tu_fmt("%s/%s", f->dir, file);
    assert_int_equal(planctl_open(&f->p, f->path, NULL), 0);
    assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
    sqlite3_busy_timeout(f->db, 10000);
    if (chdir_to)
        assert_int_equal(chdir(f->dir), 0);
    return f;
}

int tu_db_close(tu_db *f)
{
    /* Some tests work inside the temp dir; leave it before removing it. */
    if (chdir("/") != 0)
        return -1;
    sqlite3_close(f->db);
    planctl_close(f->p);
    tu_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

void tu_apply(planctl *p, const char *json)
{
    if (planctl_definition_apply(NULL, p, json, strlen(json), "t.json"))
        fail_msg("apply: %s", planctl_errmsg(p));
}

int64_t tu_create(planctl *p, const char *name, const char *def)
{
    int64_t run = 0;

    if (planctl_instance_create(&run, p, name, def, NULL, NULL, 0))
        fail_msg("create: %s", planctl_errmsg(p));
    return run;
}

void tu_expect_text(sqlite3 *db, const char *want, const char *fmt, ...)
{
    va_list ap;
    char sql[2048];
    char *got;

    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    got = tu_text(db, "%s", sql);
    if (!got || strcmp(got, want) != 0)
        fail_msg("%s\n  got:  %s\n  want: %s", sql, got ? got : "(null)", want);
    free(got);
}

char *tu_status_as_replayed(const char *status)
{
    json_t *doc = json_loads(status, 0, NULL);
    char *out;

    assert_non_null(doc);
    json_object_set_new(doc, "parameters", json_null());
    out = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    assert_non_null(out);
    return out;
}
