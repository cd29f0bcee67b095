/*
 * baseline.c - the raw-SQLite baseline of DESIGN §11: a program that does
 * nothing but the storage work of a transition, as fast as it can.  Each
 * transition is an UPDATE of a step row (a compare-and-set on its status)
 * and an INSERT of an event, with prepared statements, in WAL mode, one
 * transaction per transition (or `batch` transitions per transaction, for
 * reference), at the durability asked for.
 *
 * Its two tables (steps, events) are its own toy schema on purpose, not
 * planctl's nor a copy of it: the baseline is the cost of the least work
 * any tracker must do, whatever planctl's schema becomes, so it follows
 * neither the store's statements nor the fixture's (tests/fixture/fill.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"

#define NSTEPS 1000

static sqlite3_stmt *prep(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;

    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
        SQLITE_OK)
        bench_die("baseline: %s", sqlite3_errmsg(db));
    return st;
}

static void step_done(sqlite3 *db, sqlite3_stmt *st)
{
    if (sqlite3_step(st) != SQLITE_DONE)
        bench_die("baseline: %s", sqlite3_errmsg(db));
    sqlite3_reset(st);
}

double bench_baseline_run(const char *path, planctl_durability durability,
                          int batch, double seconds)
{
    static const char *const status[] = {"PENDING", "IN_PROGRESS", "COMPLETE"};
    sqlite3 *db;
    sqlite3_stmt *begin, *commit, *upd, *ins;
    int64_t start, deadline, n = 0, now;
    int state[NSTEPS] = {0};
    int i;

    unlink(path);
    if (sqlite3_open(path, &db) != SQLITE_OK)
        bench_die("baseline: cannot open %s", path);
    fx_exec(db, "PRAGMA journal_mode = WAL");
    fx_exec(db, durability == PLANCTL_DURABILITY_FULL
                    ? "PRAGMA synchronous = FULL"
                    : "PRAGMA synchronous = NORMAL");
    fx_exec(db, "CREATE TABLE steps (id INTEGER PRIMARY KEY, "
                "status TEXT NOT NULL, updated_at INTEGER NOT NULL);"
                "CREATE TABLE events (seq INTEGER PRIMARY KEY "
                "AUTOINCREMENT, at INTEGER NOT NULL, step_id INTEGER "
                "NOT NULL, from_status TEXT, to_status TEXT NOT NULL);"
                "WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 "
                "FROM k WHERE n < 1000) INSERT INTO steps "
                "SELECT n, 'PENDING', 0 FROM k;");
    begin = prep(db, "BEGIN IMMEDIATE");
    commit = prep(db, "COMMIT");
    upd = prep(db, "UPDATE steps SET status = ?3, updated_at = ?4 "
                   "WHERE id = ?1 AND status = ?2");
    ins = prep(db, "INSERT INTO events (at, step_id, from_status, to_status) "
                   "VALUES (?1, ?2, ?3, ?4)");
    start = bench_ns();
    deadline = start + (int64_t)(seconds * 1e9);
    do {
        step_done(db, begin);
        for (i = 0; i < batch; i++, n++) {
            int id = (int)(n % NSTEPS), from = state[id], to = (from + 1) % 3;

            now = bench_ns() / 1000000;
            sqlite3_bind_int(upd, 1, id + 1);
            sqlite3_bind_text(upd, 2, status[from], -1, SQLITE_STATIC);
            sqlite3_bind_text(upd, 3, status[to], -1, SQLITE_STATIC);
            sqlite3_bind_int64(upd, 4, now);
            step_done(db, upd);
            if (sqlite3_changes(db) != 1)
                bench_die("baseline: compare-and-set missed");
            sqlite3_bind_int64(ins, 1, now);
            sqlite3_bind_int(ins, 2, id + 1);
            sqlite3_bind_text(ins, 3, status[from], -1, SQLITE_STATIC);
            sqlite3_bind_text(ins, 4, status[to], -1, SQLITE_STATIC);
            step_done(db, ins);
            state[id] = to;
        }
        step_done(db, commit);
    } while ((now = bench_ns()) < deadline);
    sqlite3_finalize(begin);
    sqlite3_finalize(commit);
    sqlite3_finalize(upd);
    sqlite3_finalize(ins);
    sqlite3_close(db);
    unlink(path);
    return (double)n / ((double)(now - start) / 1e9);
}

/* planctl-bench baseline --dir D [--seconds S] */
int bench_baseline_main(int argc, char **argv)
{
    const char *dir = bench_opt(argc, argv, "--dir", NULL);
    double secs = atof(bench_opt(argc, argv, "--seconds", "2"));
    char path[4096];

    if (!dir)
        bench_die("baseline: --dir is required");
    snprintf(path, sizeof path, "%s/baseline.db", dir);
    bench_detail("baseline FULL, 1 transition per transaction", "%.0f/s",
                 bench_baseline_run(path, PLANCTL_DURABILITY_FULL, 1, secs));
    bench_detail("baseline NORMAL, 1 transition per transaction", "%.0f/s",
                 bench_baseline_run(path, PLANCTL_DURABILITY_NORMAL, 1, secs));
    bench_detail("baseline FULL, 100 transitions per transaction", "%.0f/s",
                 bench_baseline_run(path, PLANCTL_DURABILITY_FULL, 100, secs));
    return 0;
}
