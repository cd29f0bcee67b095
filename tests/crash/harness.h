/* harness.h - what the crash loop and the concurrency storm share: a
 * seeded random generator, child processes under time limits, the
 * processes a dead engine's tasks left behind, and the invariants checked
 * in the database. */
#ifndef PCTL_HARNESS_H
#define PCTL_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sqlite3;

/* ---- randomness: splitmix64, so a seed replays the same choices ---- */

typedef struct h_rng {
    uint64_t s;
} h_rng;

void h_rng_seed(h_rng *r, uint64_t seed);
uint64_t h_rng_next(h_rng *r);
/* Uniform in [lo, hi].  Can't fail. */
int64_t h_rng_range(h_rng *r, int64_t lo, int64_t hi);
/* A seed from the clock and the pid, for runs not given one. */
uint64_t h_seed_from_clock(void);

/* ---- time ---- */

/* Wall-clock milliseconds since the epoch: the clock the database's times
 * use, so the two compare. */
int64_t h_now_ms(void);
/* Monotonic milliseconds, for deadlines. */
int64_t h_mono_ms(void);
void h_sleep_ms(int64_t ms);

/* ---- strings and files ---- */

/* malloc'd printf; exits the process on out of memory (a test harness). */
char *h_fmt(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* The whole file, NUL-terminated and malloc'd, or NULL. */
char *h_read_file(const char *path);
/* Writes text to path with the given mode.  Returns 0 or -1. */
int h_write_file(const char *path, const char *text, int mode);
/* rm -rf.  Returns 0 or -1. */
int h_rmtree(const char *path);

/* ---- child processes ---- */

/* How a finished command ended. */
typedef struct h_result {
    int exited; /* 1: it exited with `code`; 0: killed by signal `sig` */
    int code, sig;
    int timed_out; /* we killed it when its time was up */
    char *out;     /* its stdout and stderr, malloc'd (h_run only) */
    char *err;
} h_result;

/*
 * Starts argv (argv[0] a path) with env_extra ("K=V" entries,
 * NULL-terminated, may be NULL) added to this process's environment,
 * stdin from /dev/null, stdout to out_path and stderr to err_path (NULL:
 * /dev/null; appended to when append is set).  Returns the pid or -1.
 */
pid_t h_spawn(char *const argv[], char *const env_extra[], const char *out_path,
              const char *err_path, int append);

/* Waits for pid at most timeout_ms (0: no limit), then kills it with
 * SIGKILL and reaps it (timed_out set).  Returns 0, or -1 if waitpid
 * failed. */
int h_wait(h_result *r, pid_t pid, int64_t timeout_ms);

/* Runs argv to completion under a time limit, capturing stdout and stderr
 * through files named after tmp_prefix.  Returns 0 or -1 (could not
 * start). */
int h_run(h_result *r, const char *tmp_prefix, char *const argv[],
          char *const env_extra[], int64_t timeout_ms);
void h_result_free(h_result *r);

/* "exit 3", "killed by signal 11", "hung: killed after 30000ms". */
const char *h_describe(const h_result *r, char *buf, size_t n);

/* ---- processes left behind ---- */

typedef struct h_proc {
    pid_t pid;
    unsigned long long start; /* start time in clock ticks since boot */
    char cmd[80];             /* its command line, for messages */
} h_proc;

/* Live (not zombie) processes of ours whose environment holds the exact
 * entry `marker` ("K=V").  *out is malloc'd (NULL when none). */
size_t h_scan_marked(h_proc **out, const char *marker);
/* Whether the process still runs: same pid, same start time, not a
 * zombie. */
int h_proc_alive(const h_proc *p);
/* The live process pid (not a zombie) in *out.  Returns 0, or -1 when
 * there is none. */
int h_proc_of(h_proc *out, pid_t pid);

/* ---- the database ---- */

/* Opens the database read-write (for WAL readers) with a busy timeout;
 * NULL on failure with the message printed. */
struct sqlite3 *h_db_open(const char *path);
/* The first column of the first row of sql as an integer (-1: no row,
 * -2: an SQL error, printed). */
int64_t h_db_int(struct sqlite3 *db, const char *sql);

/*
 * The invariants of DESIGN §3-§5 that must hold at every moment, checked
 * in one read transaction: never two active runs for an instance (in the
 * tables, and at every point of the event log); every step's attempts
 * numbered 1..n with n its attempt count, their [start, end] intervals in
 * order and never overlapping; an open attempt only for an IN_PROGRESS
 * step and exactly one for each; no terminal run or phase with an open
 * child.  final also requires every run terminal and no attempt open.
 * Returns NULL, or a malloc'd message naming the first violation.
 */
char *h_check_invariants(struct sqlite3 *db, int final);

/* PRAGMA integrity_check and foreign_key_check.  NULL or a malloc'd
 * message. */
char *h_check_integrity(struct sqlite3 *db);

/* h_check_invariants(), then, when final, h_check_integrity(): the first
 * failure's message (malloc'd) or NULL. */
char *h_check_db(struct sqlite3 *db, int final);

/* The number after argv[*i] (advancing *i): a whole number >= 0, else
 * usage() (which must not return). */
long h_num_arg(int argc, char **argv, int *i, void (*usage)(void));

/* The names of the instances whose run is PAUSED, malloc'd (free each and
 * the array), in *out with their count; -1 (sqlite3_errmsg says why) if
 * they cannot be read. */
int h_paused_instances(struct sqlite3 *db, char ***out, size_t *n);

#endif
