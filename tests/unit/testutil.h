/* testutil.h - helpers shared by the unit tests: temp dirs, files, the
 * database under test. */
#ifndef PCTL_TESTUTIL_H
#define PCTL_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Creates a fresh temporary directory (removed by tu_rmtree) and returns
 * its path in a static buffer owned by the caller's copy. */
char *tu_mkdtemp(void);
/* rm -rf path.  Returns 0 on success. */
int tu_rmtree(const char *path);
/* Reads a whole file into a NUL-terminated malloc'd buffer; *len if not
 * NULL.  NULL on failure. */
char *tu_read_file(const char *path, size_t *len);
/* Writes len bytes to path (mode 0644).  Returns 0 on success. */
int tu_write_file(const char *path, const void *data, size_t len);
/* malloc'd printf. */
char *tu_fmt(const char *fmt, ...);
/* The next number of a fixed-seed generator (splitmix64) whose state is
 * *state, so that a failure can be replayed from its seed. */
uint64_t tu_splitmix64(uint64_t *state);
/* How many times needle (not empty) occurs in hay, not overlapping. */
size_t tu_count(const char *hay, const char *needle);

struct sqlite3;

/* The first column of the first row of a query (printf-formatted) on db,
 * or -1 when there is no row; fails the test on an SQL error. */
int64_t tu_scalar(struct sqlite3 *db, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The same as text, malloc'd, or NULL for no row or NULL. */
char *tu_text(struct sqlite3 *db, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Waits up to two seconds for process pid to be gone (reaped or never
 * there); fails the test naming what when it is still alive. */
void tu_expect_gone(int pid, const char *what);

/* The backend under test.  The unit.pg.* ctests (tests/pg/CMakeLists.txt)
 * run a test on PostgreSQL: PLANCTL_TEST_BACKEND=postgres, and
 * PLANCTL_PG_STATE the directory where tests/pg/cluster.sh wrote `env`.
 * Without either, SQLite, as always. */
int tu_on_pg(void);
/* The database target of a test whose SQLite database would be
 * sqlite_path: the path itself, or on PostgreSQL a URI naming a new,
 * empty schema of the test cluster (each call another one, dropped when
 * the test program exits).  malloc'd.  With no cluster running the
 * program ends with 77 (ctest's skip), unless CI=true, where it fails. */
char *tu_db_target(const char *sqlite_path);

/* A raw connection to a target (a SQLite path or the URI of a schema),
 * for looking at rows under the seam on either backend: plain SQL both
 * dialects read alike.  A PostgreSQL boolean reads as 1 or 0. */
typedef struct tu_raw tu_raw;
/* Opens one; fails the test on error. */
tu_raw *tu_raw_open(const char *target);
void tu_raw_close(tu_raw *r);
/* tu_scalar() and tu_text() on a raw connection. */
int64_t tu_raw_scalar(tu_raw *r, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
char *tu_raw_text(tu_raw *r, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Runs statements that return no rows; fails the test on error. */
void tu_raw_exec(tu_raw *r, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

struct planctl;
/* Fails the test, naming the call, its code and the handle's message,
 * unless call returns 0 (for calls whose failure must say why). */
#define tu_ok(p, call)                                                         \
    do {                                                                       \
        int tu_rc_ = (call);                                                   \
        if (tu_rc_ != 0)                                                       \
            fail_msg("%s: %d: %s", #call, tu_rc_, planctl_errmsg(p));          \
    } while (0)

/* Runs an engine (own loop, until_idle) on p until nothing is left to do;
 * fails the test if the loop does not close clean.  Returns the engine's
 * status (0, or why it stopped). */
int tu_engine_until_idle(struct planctl *p);

/* A database under test: a fresh temporary directory, the file name in
 * it, a handle on it and a raw connection for looking at rows (busy
 * timeout 10 s).  On PostgreSQL (tu_on_pg()) path is the URI of a new
 * schema instead, db is NULL and only raw looks at rows; on SQLite raw
 * reads through db.  tu_db_open() fails the test on any error; with chdir
 * set the process works in the directory (shell tasks write there).
 * tu_db_close() leaves the directory first, then frees everything;
 * -1 when it could not leave it. */
typedef struct tu_db {
    char *dir, *path;
    struct planctl *p;
    struct sqlite3 *db;
    tu_raw *raw;
} tu_db;
tu_db *tu_db_open(const char *file, int chdir_to);
int tu_db_close(tu_db *f);

/* Registers the definition json on p (file name "t.json"); fails the test
 * with planctl's message on error. */
void tu_apply(struct planctl *p, const char *json);
/* Creates instance name of definition def on p and returns the id of the
 * run its creation admitted (0: none); fails the test on error. */
int64_t tu_create(struct planctl *p, const char *name, const char *def);
/* Fails the test, showing the query and both values, unless the query
 * (printf-formatted) gives the text want on db. */
void tu_expect_text(struct sqlite3 *db, const char *want, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The debugging workload (test_replay.c, test_bundle.c): definition "rp"
 * (TU_RP_DEF) applied, then instance "zk": deploy with retries completes;
 * update fails fatally, a retry of it carries its COMPLETE step over and
 * fails again; a backup queued behind the retry completes (runs 1-4).
 * Instance "kafka": its deploy cancelled before it started, then one
 * PENDING backup (runs 5, 6).  Fails the test on any error. */
void tu_replay_workload(struct planctl *p);

/* A status document (JSON text) as replay rebuilds it: "parameters" null,
 * since the event log does not record an instance's values as such.
 * Free with free(). */
char *tu_status_as_replayed(const char *status);

#endif
