/*
 * ips.c - instructions per completed step: the engine against a limit
 * program that writes the same rows (issue 16).  tools/bench/instructions
 * runs the pieces, two of them under callgrind:
 *
 *   ips-setup   makes the database: N instances, each with one PENDING run
 *               of two phases (serial between them) of five parallel Dummy
 *               steps each, the workload of the issue;
 *   ips-engine  runs the engine on a copy of it, in this process through
 *               the public API, until idle, and records every row it
 *               writes, commit by commit (wlog.c);
 *   ips-limit   (limit.c) writes the same rows into another copy, from
 *               that record and the engine's event log, with the same
 *               statements and one transaction per engine commit;
 *   ips-check   checks that both wrote the same rows in the same commits
 *               and that both databases end the same, row for row, then
 *               prints the summary lines from the instruction counts.
 *
 * Only bench_counted_engine() is counted on the engine's side: the engine
 * from planctl_engine_new() to planctl_engine_free(), its statements
 * prepared on the way.  Opening the database is not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "bench.h"

#define PHASE_STEPS 5

/* Long enough that no poll for other writers and no lease heartbeat
 * happens during a run, however slow callgrind makes it: nobody else
 * writes, and they would make the count depend on the wall clock. */
#define QUIET_MS (6 * 3600 * 1000)

static char *definition(void)
{
    static char buf[4096];
    size_t len;
    int ph, i;

    len = (size_t)snprintf(buf, sizeof buf,
                           "{\"name\":\"ips\",\"version\":\"1\",\"tasks\":[{"
                           "\"name\":\"noop\",\"kind\":\"Dummy\"}],\"plans\":"
                           "{\"deploy\":{\"strategy\":\"serial\",\"phases\":[");
    for (ph = 0; ph < 2; ph++) {
        len += (size_t)snprintf(buf + len, sizeof buf - len,
                                "%s{\"name\":\"p%d\",\"strategy\":\"parallel\","
                                "\"steps\":[",
                                ph ? "," : "", ph);
        for (i = 0; i < PHASE_STEPS; i++)
            len += (size_t)snprintf(buf + len, sizeof buf - len,
                                    "%s{\"name\":\"s%d\",\"tasks\":[\"noop\"]}",
                                    i ? "," : "", i);
        len += (size_t)snprintf(buf + len, sizeof buf - len, "]}");
    }
    snprintf(buf + len, sizeof buf - len, "]}}}");
    return buf;
}

/* planctl-bench ips-setup --db PATH [--instances N]
 * A new database at PATH (which must not exist), checkpointed into one
 * file so that a copy of it is the whole database. */
int bench_ips_setup_main(int argc, char **argv)
{
    const char *path = bench_opt(argc, argv, "--db", NULL);
    int n = atoi(bench_opt(argc, argv, "--instances", "200"));
    planctl *p;

    if (!path || n < 1)
        bench_die("ips-setup: --db and --instances N >= 1 are required");
    p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
    bench_apply(p, definition());
    fx_clone_runs(p, "ips", "ips", n);
    fx_exec(fx_db(p), "PRAGMA wal_checkpoint(TRUNCATE)");
    planctl_close(p);
    printf("%s: %d instances, %d Dummy steps\n", path, n, n * 2 * PHASE_STEPS);
    return 0;
}

static void on_stopped(planctl_engine *e, void *data)
{
    (void)e;
    *(int *)data = 1;
}

BENCH_NOINLINE int bench_counted_engine(planctl *p, bench_wlog *w);

/* The engine, from new to free, until idle, with its writes recorded. */
BENCH_NOINLINE int bench_counted_engine(planctl *p, bench_wlog *w)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_engine *e;
    uv_loop_t loop;
    int stopped = 0, rc;

    o.until_idle = 1;
    o.change_poll_ms = QUIET_MS;
    o.lease_ttl_ms = 3 * (int64_t)QUIET_MS;
    bench_wlog_hook(w, fx_db(p));
    if (uv_loop_init(&loop) != 0 || planctl_engine_new(&e, p, &loop, &o) < 0)
        bench_die("ips-engine: cannot create the engine");
    if (planctl_engine_start(e, on_stopped, &stopped) < 0)
        bench_die("ips-engine: %s", planctl_errmsg(p));
    uv_run(&loop, UV_RUN_DEFAULT);
    rc = stopped ? planctl_engine_status(e) : PLANCTL_ERROR;
    planctl_engine_free(e);
    if (uv_loop_close(&loop) != 0)
        bench_die("ips-engine: handles left open");
    bench_wlog_unhook(fx_db(p));
    return rc;
}

/* planctl-bench ips-engine --db PATH --log FILE */
int bench_ips_engine_main(int argc, char **argv)
{
    const char *path = bench_opt(argc, argv, "--db", NULL);
    const char *log = bench_opt(argc, argv, "--log", NULL);
    bench_wlog w;
    planctl *p;
    int rc;

    if (!path || !log)
        bench_die("ips-engine: --db and --log are required");
    memset(&w, 0, sizeof w);
    p = bench_open(path, PLANCTL_DURABILITY_NORMAL);
    if ((rc = bench_counted_engine(p, &w)) != 0)
        bench_die("ips-engine: the engine failed: %s", planctl_errmsg(p));
    if (fx_runs_not_in(fx_db(p), "COMPLETE") != 0)
        bench_die("ips-engine: not every run completed");
    if (w.rollbacks)
        bench_die("ips-engine: %zu transactions were rolled back", w.rollbacks);
    planctl_close(p);
    bench_wlog_save(&w, log);
    bench_wlog_free(&w);
    return 0;
}

/* ---- the check ---- */

static int cmp_op(const void *a, const void *b)
{
    const bench_wop *x = a, *y = b;

    if (x->table != y->table)
        return x->table < y->table ? -1 : 1;
    if (x->rowid != y->rowid)
        return x->rowid < y->rowid ? -1 : 1;
    return (x->op > y->op) - (x->op < y->op);
}

/* Whether a commit wrote the lease row. */
static int has_lease(const bench_wop *ops, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (ops[i].table == BENCH_W_LEASE)
            return 1;
    return 0;
}

/* The engine's commits that wrote anything against the limit's, each the
 * same set of rows. */
static void check_logs(const bench_wlog *e, const bench_wlog *l)
{
    size_t ke, kl = 0, ne, nl, i, empty = 0, lease = 0, rows = 0;
    bench_wop *a = NULL, *b = NULL;

    for (ke = 0; ke < e->ncommits; ke++) {
        const bench_wop *oe = bench_wlog_commit(e, ke, &ne), *ol;

        if (!ne) {
            empty++;
            continue;
        }
        lease += has_lease(oe, ne);
        if (kl == l->ncommits)
            bench_die("ips-check: the engine made more commits than the "
                      "limit program (%zu)",
                      l->ncommits);
        ol = bench_wlog_commit(l, kl, &nl);
        if (ne != nl)
            bench_die("ips-check: commit %zu of the engine wrote %zu rows, "
                      "the limit program's %zu wrote %zu",
                      ke, ne, kl, nl);
        a = realloc(a, ne * sizeof *a);
        b = realloc(b, ne * sizeof *b);
        if (!a || !b)
            bench_die("out of memory");
        memcpy(a, oe, ne * sizeof *a);
        memcpy(b, ol, ne * sizeof *b);
        qsort(a, ne, sizeof *a, cmp_op);
        qsort(b, ne, sizeof *b, cmp_op);
        for (i = 0; i < ne; i++)
            if (cmp_op(&a[i], &b[i]) != 0)
                bench_die("ips-check: commit %zu of the engine and %zu of the "
                          "limit program differ: %c %s %lld against %c %s "
                          "%lld",
                          ke, kl, a[i].op, bench_wtable_name(a[i].table),
                          (long long)a[i].rowid, b[i].op,
                          bench_wtable_name(b[i].table), (long long)b[i].rowid);
        rows += ne;
        kl++;
    }
    if (kl != l->ncommits)
        bench_die("ips-check: the limit program made %zu commits, the "
                  "engine %zu that wrote rows",
                  l->ncommits, kl);
    free(a);
    free(b);
    bench_detail("commits",
                 "the engine made %zu commits: %zu wrote rows (%zu rows; %zu "
                 "of them took or released the lease), the limit program's "
                 "%zu commits wrote the same rows, each as its engine commit; "
                 "%zu engine commits wrote nothing (not replayed)",
                 e->ncommits, kl, rows, lease, l->ncommits, empty);
}

/* Both databases hold the same rows in every table the engine writes. */
static void check_tables(sqlite3 *db)
{
    static const char *const tables[] = {"instances", "runs",     "phases",
                                         "steps",     "attempts", "events"};
    char sql[256];
    size_t i;

    for (i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        int64_t a, b;

        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM (SELECT * FROM main.%s EXCEPT "
                 "SELECT * FROM lim.%s)",
                 tables[i], tables[i]);
        a = fx_scalar(db, sql);
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM (SELECT * FROM lim.%s EXCEPT "
                 "SELECT * FROM main.%s)",
                 tables[i], tables[i]);
        b = fx_scalar(db, sql);
        if (a || b)
            bench_die("ips-check: table %s differs: %lld rows only in the "
                      "engine's database, %lld only in the limit program's",
                      tables[i], (long long)a, (long long)b);
    }
}

/* "runs 200 COMPLETE" and such, for both databases side by side. */
static void print_counts(sqlite3 *db)
{
    static const char *const q[] = {"runs", "phases", "steps", "attempts",
                                    "events"};
    char sql[256], line[1024];
    size_t i, len = 0;
    int k;

    for (k = 0; k < 2; k++) {
        len = 0;
        line[0] = 0;
        for (i = 0; i < sizeof q / sizeof q[0]; i++) {
            sqlite3_stmt *st;

            /* events have no status: one group */
            snprintf(sql, sizeof sql,
                     "SELECT '%s' || %s, count(*) FROM %s.%s GROUP BY 1", q[i],
                     i == 4 ? "''" : "' ' || status", k ? "lim" : "main", q[i]);
            if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                bench_die("%s", sqlite3_errmsg(db));
            while (sqlite3_step(st) == SQLITE_ROW && len < sizeof line - 64)
                len += (size_t)snprintf(
                    line + len, sizeof line - len, "%s%s %lld", len ? ", " : "",
                    (const char *)sqlite3_column_text(st, 0),
                    (long long)sqlite3_column_int64(st, 1));
            sqlite3_finalize(st);
        }
        bench_detail(k ? "limit rows" : "engine rows", "%s", line);
    }
}

/* planctl-bench ips-check --engine-db E --limit-db L --engine-log F
 *                         --limit-log G --engine-ir X --limit-ir Y
 *                         [--recorded R]
 * X and Y are callgrind's instruction counts of the two runs; R the
 * engine's instructions per step recorded in RESULTS.md (0 or absent: no
 * comparison). */
int bench_ips_check_main(int argc, char **argv)
{
    const char *edb = bench_opt(argc, argv, "--engine-db", NULL);
    const char *ldb = bench_opt(argc, argv, "--limit-db", NULL);
    const char *elog = bench_opt(argc, argv, "--engine-log", NULL);
    const char *llog = bench_opt(argc, argv, "--limit-log", NULL);
    double eir = atof(bench_opt(argc, argv, "--engine-ir", "0"));
    double lir = atof(bench_opt(argc, argv, "--limit-ir", "0"));
    double recorded = atof(bench_opt(argc, argv, "--recorded", "0"));
    bench_wlog we, wl;
    sqlite3 *db;
    char sql[4200];
    int64_t steps, seq0 = INT64_MAX, commits = 0;
    size_t k, i, n;

    if (!edb || !ldb || !elog || !llog || eir <= 0 || lir <= 0)
        bench_die("ips-check: --engine-db, --limit-db, --engine-log, "
                  "--limit-log, --engine-ir and --limit-ir are required");
    bench_wlog_load(&we, elog);
    bench_wlog_load(&wl, llog);
    check_logs(&we, &wl);
    if (sqlite3_open_v2(edb, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        bench_die("ips-check: cannot open %s", edb);
    snprintf(sql, sizeof sql, "ATTACH '%s' AS lim", ldb);
    fx_exec(db, sql);
    print_counts(db);
    check_tables(db);
    /* The steps the engine completed: those of its events. */
    for (k = 0; k < we.ncommits; k++) {
        const bench_wop *ops = bench_wlog_commit(&we, k, &n);

        commits += n > 0 && !has_lease(ops, n);
        for (i = 0; i < n; i++)
            if (ops[i].table == BENCH_W_EVENTS && ops[i].op == 'I' &&
                ops[i].rowid < seq0)
                seq0 = ops[i].rowid;
    }
    steps = fx_step_completions_since(db, seq0 - 1);
    sqlite3_close(db);
    if (steps <= 0)
        bench_die("ips-check: the engine completed no step");
    bench_detail("same rows",
                 "both databases hold the same instances, runs, phases, "
                 "steps, attempts and events, column for column");
    bench_detail("instructions",
                 "engine %.0f, limit program %.0f, for %lld completed steps "
                 "(%.1f per commit that wrote step work)",
                 eir, lir, (long long)steps,
                 commits ? (double)steps / (double)commits : 0.0);
    bench_summary("instructions_per_step", eir / (double)steps,
                  lir / (double)steps, "instructions/step", '<', 1.10);
    if (recorded > 0)
        bench_summary("instructions_per_step_recorded", eir / (double)steps,
                      recorded, "instructions/step", '<', 1.03);
    bench_wlog_free(&we);
    bench_wlog_free(&wl);
    return 0;
}
