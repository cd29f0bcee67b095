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

#ifdef PLANCTL_WITH_POSTGRES
#include <libpq-fe.h>
#endif

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

int tu_on_pg(void)
{
    const char *b = getenv("PLANCTL_TEST_BACKEND");

    return b && strcmp(b, "postgres") == 0;
}

#ifdef PLANCTL_WITH_POSTGRES
/* The cluster's socket directory and port, from PLANCTL_PG_STATE/env
 * (lines KEY=VALUE or KEY='VALUE', as tests/pg/cluster.sh writes them). */
static char pg_host[256], pg_port[16];

static void pg_cluster(void)
{
    const char *state = getenv("PLANCTL_PG_STATE");
    char *path, *env, *line, *save = NULL;

    if (*pg_host)
        return;
    path = tu_fmt("%s/env", state ? state : "");
    env = state ? tu_read_file(path, NULL) : NULL;
    free(path);
    if (!env) {
        if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
            fail_msg("no PostgreSQL cluster (PLANCTL_PG_STATE/env), and "
                     "CI=true requires one");
        /* Like tests/pg/lib.sh: no initdb, no cluster, ctest's skip. */
        fprintf(stderr, "no PostgreSQL cluster: skipped\n");
        exit(77);
    }
    for (line = strtok_r(env, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '='), *v, *dst;
        size_t n;

        if (!eq)
            continue;
        *eq = '\0';
        v = eq + 1;
        n = strlen(v);
        if (n >= 2 && v[0] == '\'' && v[n - 1] == '\'') {
            v[n - 1] = '\0';
            v++;
        }
        dst = !strcmp(line, "PGHOST")   ? pg_host
              : !strcmp(line, "PGPORT") ? pg_port
                                        : NULL;
        if (dst)
            snprintf(dst,
                     !strcmp(line, "PGHOST") ? sizeof pg_host : sizeof pg_port,
                     "%s", v);
    }
    free(env);
    if (!*pg_host || !*pg_port)
        fail_msg("%s/env names no PGHOST and PGPORT", state);
}

/* The schemas this process made, dropped at its exit. */
static char **pg_schemas;
static size_t pg_nschemas;
static pid_t pg_owner;

static PGconn *pg_admin(void)
{
    char *ci;
    PGconn *c;

    pg_cluster();
    ci = tu_fmt("host=%s port=%s user=planctl dbname=postgres "
                "options='-c client_min_messages=warning'",
                pg_host, pg_port);
    c = PQconnectdb(ci);
    free(ci);
    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("connecting to the test cluster: %s", PQerrorMessage(c));
    return c;
}

static void pg_run(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);

    if (PQresultStatus(r) != PGRES_COMMAND_OK &&
        PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(c));
    PQclear(r);
}

static void pg_drop_schemas(void)
{
    PGconn *c;
    size_t i;

    /* Only the process that made them: a forked child that exits must not
     * drop its parent's schemas. */
    if (getpid() != pg_owner || !pg_nschemas)
        return;
    c = pg_admin();
    for (i = 0; i < pg_nschemas; i++) {
        char *sql = tu_fmt("DROP SCHEMA IF EXISTS %s CASCADE", pg_schemas[i]);
        PGresult *r = PQexec(c, sql);

        /* Best effort: a schema left behind goes with the cluster. */
        PQclear(r);
        free(sql);
        free(pg_schemas[i]);
    }
    free(pg_schemas);
    pg_schemas = NULL;
    pg_nschemas = 0;
    PQfinish(c);
}
#endif

char *tu_db_target(const char *sqlite_path)
{
#ifdef PLANCTL_WITH_POSTGRES
    static unsigned counter;
    char *schema, *sql, *uri;
    PGconn *c;

    if (!tu_on_pg())
        return strdup(sqlite_path);
    if (!pg_owner) {
        pg_owner = getpid();
        atexit(pg_drop_schemas);
    }
    schema = tu_fmt("t_%ld_%u", (long)getpid(), ++counter);
    /* One an earlier run under the same pid may have left: start empty. */
    c = pg_admin();
    sql = tu_fmt("DROP SCHEMA IF EXISTS %s CASCADE", schema);
    pg_run(c, sql);
    free(sql);
    PQfinish(c);
    pg_schemas = realloc(pg_schemas, (pg_nschemas + 1) * sizeof *pg_schemas);
    assert_non_null(pg_schemas);
    pg_schemas[pg_nschemas++] = schema;
    /* The sessions named after the schema: a test that ends its own
     * sessions finds them among those of the tests beside it, which share
     * the database. */
    uri = tu_fmt("postgresql:///postgres?host=%s&port=%s&user=planctl&"
                 "application_name=%s&schema=%s",
                 pg_host, pg_port, schema, schema);
    assert_non_null(uri);
    return uri;
#else
    if (tu_on_pg())
        fail_msg("PLANCTL_TEST_BACKEND=postgres, but this planctl was built "
                 "without PostgreSQL");
    return strdup(sqlite_path);
#endif
}

struct tu_raw {
    sqlite3 *db;
    int owned; /* db is ours to close */
#ifdef PLANCTL_WITH_POSTGRES
    PGconn *pg;
#endif
};

tu_raw *tu_raw_open(const char *target)
{
    tu_raw *r = calloc(1, sizeof *r);

    assert_non_null(r);
#ifdef PLANCTL_WITH_POSTGRES
    if (!strncmp(target, "postgresql://", 13)) {
        const char *s = strstr(target, "schema=");
        char *ci = strdup(target), *q, *sql;

        /* libpq refuses planctl's own parameter: the URI without it, then
         * the schema on the search path. */
        assert_non_null(s);
        assert_non_null(ci);
        q = strstr(ci, "&schema=");
        assert_non_null(q);
        *q = '\0';
        r->pg = PQconnectdb(ci);
        free(ci);
        if (PQstatus(r->pg) != CONNECTION_OK)
            fail_msg("%s: %s", target, PQerrorMessage(r->pg));
        sql = tu_fmt("SET search_path TO %s", s + 7);
        pg_run(r->pg, sql);
        free(sql);
        return r;
    }
#endif
    assert_int_equal(sqlite3_open(target, &r->db), SQLITE_OK);
    sqlite3_busy_timeout(r->db, 10000);
    r->owned = 1;
    return r;
}

/* A raw connection reading through db, which stays the caller's. */
static tu_raw *raw_borrow(sqlite3 *db)
{
    tu_raw *r = calloc(1, sizeof *r);

    assert_non_null(r);
    r->db = db;
    return r;
}

void tu_raw_close(tu_raw *r)
{
    if (!r)
        return;
#ifdef PLANCTL_WITH_POSTGRES
    if (r->pg)
        PQfinish(r->pg);
#endif
    if (r->owned)
        sqlite3_close(r->db);
    free(r);
}

/* The first column of the first row of sql on r, malloc'd; NULL for no
 * row or NULL.  *row set when there was a row. */
static char *raw_first(tu_raw *r, const char *sql, int *row)
{
    char *v = NULL;

    *row = 0;
#ifdef PLANCTL_WITH_POSTGRES
    if (r->pg) {
        PGresult *res = PQexec(r->pg, sql);

        if (PQresultStatus(res) != PGRES_TUPLES_OK)
            fail_msg("%s: %s", sql, PQerrorMessage(r->pg));
        if (PQntuples(res) > 0) {
            *row = 1;
            if (!PQgetisnull(res, 0, 0)) {
                /* SQLite's comparisons are integers, PostgreSQL's
                 * booleans: read both as 1 or 0. */
                if (PQftype(res, 0) == 16 /* BOOLOID */)
                    v = strdup(*PQgetvalue(res, 0, 0) == 't' ? "1" : "0");
                else
                    v = strdup(PQgetvalue(res, 0, 0));
            }
        }
        PQclear(res);
        return v;
    }
#endif
    {
        sqlite3_stmt *st = NULL;

        if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
            fail_msg("%s: %s", sql, sqlite3_errmsg(r->db));
        if (sqlite3_step(st) == SQLITE_ROW) {
            *row = 1;
            if (sqlite3_column_text(st, 0))
                v = strdup((const char *)sqlite3_column_text(st, 0));
        }
        sqlite3_finalize(st);
    }
    return v;
}

int64_t tu_raw_scalar(tu_raw *r, const char *fmt, ...)
{
    char sql[4096], *v;
    va_list ap;
    int row;
    int64_t n;

    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    v = raw_first(r, sql, &row);
    n = !row ? -1 : v ? strtoll(v, NULL, 10) : 0;
    free(v);
    return n;
}

char *tu_raw_text(tu_raw *r, const char *fmt, ...)
{
    char sql[4096];
    va_list ap;
    int row;

    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    return raw_first(r, sql, &row);
}

void tu_raw_exec(tu_raw *r, const char *fmt, ...)
{
    char sql[8192];
    char *err = NULL;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
#ifdef PLANCTL_WITH_POSTGRES
    if (r->pg) {
        pg_run(r->pg, sql);
        return;
    }
#endif
    if (sqlite3_exec(r->db, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s: %s", sql, err ? err : "?");
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
    {
        char *file_path = tu_fmt("%s/%s", f->dir, file);

        f->path = tu_db_target(file_path);
        free(file_path);
    }
    {
        /* The engine's self-check where the suite asks for it (the
         * sanitizer run sets PLANCTL_CHECK_CACHE=1), as planctl does. */
        planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
        const char *check = getenv("PLANCTL_CHECK_CACHE");

        if (check && strcmp(check, "1") == 0)
            o.flags |= PLANCTL_OPEN_CHECK_CACHE;
        assert_int_equal(planctl_open(&f->p, f->path, &o), 0);
    }
    if (tu_on_pg()) {
        f->raw = tu_raw_open(f->path);
    } else {
        assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
        sqlite3_busy_timeout(f->db, 10000);
        f->raw = raw_borrow(f->db);
    }
    if (chdir_to)
        assert_int_equal(chdir(f->dir), 0);
    return f;
}

int tu_db_close(tu_db *f)
{
    /* Some tests work inside the temp dir; leave it before removing it. */
    if (chdir("/") != 0)
        return -1;
    tu_raw_close(f->raw);
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
