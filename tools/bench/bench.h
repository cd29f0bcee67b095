/*
 * bench.h - what the benchmark programs share: clocks, statistics, memory
 * figures, summary lines, the commit tracker.  Databases filled fast
 * through the real schema, and the counts that check a benchmark's
 * result, are the fixture layer shared with the tests (tests/fixture/
 * fill.h), the one place with SQL over planctl's tables besides the
 * store.
 *
 * The benchmarks measure the real library (libplanctl.a, linked as built)
 * and the real CLI binary.  They include the library's internal headers
 * only to observe it: the tracker hooks the SQLite connection a handle
 * owns, which adds nothing to the public interface.
 */
#ifndef PCTL_BENCH_H
#define PCTL_BENCH_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fill.h" /* tests/fixture: databases filled fast, and counts */
#include "planctl.h"

/* ---- clocks, statistics, memory ---- */

/* Monotonic time in nanoseconds. */
int64_t bench_ns(void);

/* Sorts v (n values) in place and returns its q-quantile (0..1) by the
 * nearest-rank method; 0 for n == 0. */
double bench_quantile(double *v, size_t n, double q);

/* A field of /proc/self/status in KiB ("VmHWM", "VmRSS"), or -1. */
long bench_proc_kb(const char *field);

/* Prints a message to stderr and exits 1. */
void bench_die(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* Prints one summary line: name=N value=V baseline=B ratio=R unit=U
 * target=T ok=yes|no.  cmp is '<' (ratio must be at most limit) or '>'
 * (at least limit), or 0 for a figure reported without a target
 * (target=none ok=yes). */
void bench_summary(const char *name, double value, double baseline,
                   const char *unit, char cmp, double limit);

/* Prints a detail line ("  name: text") on stdout. */
void bench_detail(const char *name, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- databases ---- */

/* Opens (creating and migrating) a planctl database or dies. */
planctl *bench_open(const char *path, planctl_durability durability);

/* Removes a database and its side files (-wal, -shm, -engine); missing
 * ones are no error. */
void bench_remove_db(const char *path);

/* Makes room for one more item in *v, an array of n items of sz bytes
 * with room for *cap: doubles it (first items at first) when full, or
 * dies. */
void bench_grow(void **v, size_t n, size_t *cap, size_t sz, size_t first);

/* Waits for child pid; dies naming what it was unless it exited 0. */
void bench_wait_ok(pid_t pid, const char *what);

/* Applies a definition or dies. */
void bench_apply(planctl *p, const char *json);

/* ---- the commit tracker ---- */

/*
 * Observes the write transactions of one connection: each commit's time
 * (taken once the commit is durable, from SQLite's WAL hook, which keeps
 * the default checkpointing of 1000 pages), and for every event row the
 * commit that made it durable.
 */
typedef struct bench_tracker {
    int64_t base_seq; /* events with seq > base are stamped */
    int64_t *pending; /* event seqs of the open transaction */
    size_t npending, cappending;
    int64_t *commit_ns; /* per seq - base - 1; 0: unknown */
    size_t cap;
    int64_t ncommits, first_ns, last_ns;
    int64_t *commit_times; /* every commit's time, in order */
    size_t ntimes, captimes;
} bench_tracker;

/* Starts tracking db; events with seq <= base_seq are ignored. */
void bench_tracker_start(bench_tracker *t, sqlite3 *db, int64_t base_seq);
/* Stops tracking (restores SQLite's default WAL hook) and frees. */
void bench_tracker_stop(bench_tracker *t, sqlite3 *db);
/* The commit time of event seq, or 0. */
int64_t bench_tracker_time(const bench_tracker *t, int64_t seq);

/* With PLANCTL_BENCH_PROFILE=1 in the environment: the time each
 * statement of db takes, summed and reported on stderr (the ones that
 * took longest first).  Nothing otherwise. */
void bench_profile_start(sqlite3 *db);
void bench_profile_report(sqlite3 *db);

/* ---- row writes of a connection, commit by commit (wlog.c) ---- */

/*
 * Functions named bench_counted_* are the regions whose instructions
 * tools/bench/instructions counts, and bench_uncounted_* are left out of
 * them (callgrind's --toggle-collect works by function name).  Neither may
 * be inlined or cloned under another name.
 */
#if defined(__clang__)
#define BENCH_NOINLINE __attribute__((noinline))
#elif defined(__GNUC__)
#define BENCH_NOINLINE __attribute__((noinline, noclone))
#else
#define BENCH_NOINLINE
#endif

/* The tables a row write can be on. */
enum {
    BENCH_W_RUNS,
    BENCH_W_PHASES,
    BENCH_W_STEPS,
    BENCH_W_ATTEMPTS,
    BENCH_W_EVENTS,
    BENCH_W_INSTANCES,
    BENCH_W_LEASE, /* engine_lease */
    BENCH_W_WAITS, /* run_waits */
    BENCH_W_OTHER,
    BENCH_W__COUNT
};

/* One row written: 'I'nsert, 'U'pdate or 'D'elete, its table, its rowid. */
typedef struct bench_wop {
    int64_t rowid;
    char op;
    unsigned char table;
} bench_wop;

/*
 * Every row a connection wrote, as SQLite's update hook names them, cut
 * into the transactions that committed (commit hook); the rows of a
 * transaction rolled back are forgotten.  Commit k holds ops[ends[k - 1]
 * .. ends[k]) (from 0 for k = 0).  A commit that wrote nothing (a write
 * transaction that changed no row) is there, empty.
 */
typedef struct bench_wlog {
    bench_wop *ops;
    size_t nops, capops;
    size_t *ends;
    size_t ncommits, capends;
    size_t rollbacks;
} bench_wlog;

/* Starts (replacing any update, commit and rollback hook of db) and stops
 * recording db's writes into w. */
void bench_wlog_hook(bench_wlog *w, sqlite3 *db);
void bench_wlog_unhook(sqlite3 *db);
/* Writes w to path, or reads it back into w (its old content ignored),
 * or dies. */
void bench_wlog_save(const bench_wlog *w, const char *path);
void bench_wlog_load(bench_wlog *w, const char *path);
void bench_wlog_free(bench_wlog *w);
/* The ops of commit k, and their number. */
const bench_wop *bench_wlog_commit(const bench_wlog *w, size_t k, size_t *n);
/* A table's name ("runs", ..., "engine_lease", "other"). */
const char *bench_wtable_name(int table);

/* ---- subcommands ---- */

int bench_baseline_main(int argc, char **argv);
int bench_throughput_main(int argc, char **argv);
int bench_pg_main(int argc, char **argv);
/* The throughput benchmark's definition "bench": 4 serial, 8 parallel and
 * 4 serial Dummy steps (throughput.c). */
char *bench_tp_definition(void);
int bench_gen_main(int argc, char **argv);
int bench_query_main(int argc, char **argv);
int bench_scaling_main(int argc, char **argv);
int bench_recovery_main(int argc, char **argv);
int bench_foreign_main(int argc, char **argv);
int bench_ips_setup_main(int argc, char **argv);
int bench_ips_engine_main(int argc, char **argv);
int bench_ips_limit_main(int argc, char **argv);
int bench_ips_check_main(int argc, char **argv);
int bench_web_main(int argc, char **argv);

/* The raw-SQLite baseline (baseline.c): transitions per second doing one
 * UPDATE and one INSERT per transaction (batch 1) or per batch
 * transitions, for `seconds`, in a new database at path. */
double bench_baseline_run(const char *path, planctl_durability durability,
                          int batch, double seconds);

/* Option parsing: the value of --name in argv, or def. */
const char *bench_opt(int argc, char **argv, const char *name, const char *def);
int bench_flag(int argc, char **argv, const char *name);

#endif
