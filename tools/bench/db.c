/*
 * db.c - databases for the benchmarks: opening, raw SQL, and many active
 * runs made quickly through the real schema.
 *
 * A thousand admissions through the API take a second or more each
 * thousand (every one is a dry run and a real one); a benchmark with
 * 10,000 active runs would spend most of its time setting up.  So one run
 * is admitted for real and the others are copies of its rows, made by
 * INSERT ... SELECT in one transaction: the same columns, the same
 * creation events, through the same triggers and unique indexes.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "store/sqlite/sqlite.h"
#include "store/store.h"

planctl *bench_open(const char *path, planctl_durability durability)
{
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    planctl *p;

    o.durability = durability;
    o.busy_timeout_ms = 30000;
    if (planctl_open(&p, path, &o) < 0)
        bench_die("open %s: %s", path, planctl_errmsg(p));
    return p;
}

sqlite3 *bench_db(planctl *p)
{
    return pctl_sqlite_db(p);
}

void bench_exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        bench_die("%s\n  in: %.200s", err ? err : "?", sql);
}

int64_t bench_scalar(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = 0;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        bench_die("%s\n  in: %.200s", sqlite3_errmsg(db), sql);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else if (sqlite3_errcode(db) != SQLITE_DONE)
        bench_die("%s\n  in: %.200s", sqlite3_errmsg(db), sql);
    sqlite3_finalize(st);
    return v;
}

void bench_apply(planctl *p, const char *json)
{
    if (planctl_definition_apply(NULL, p, json, strlen(json), "bench.json") < 0)
        bench_die("apply: %s", planctl_errmsg(p));
}

int64_t bench_clone_runs(planctl *p, const char *def, const char *prefix, int n)
{
    sqlite3 *db = pctl_sqlite_db(p);
    char name[128], sql[2048];
    int64_t run0, inst0, max_inst, max_run;

    snprintf(name, sizeof name, "%s-0", prefix);
    if (planctl_instance_create(&run0, p, name, def, NULL, NULL, 0) < 0)
        bench_die("create %s: %s", name, planctl_errmsg(p));
    if (n <= 1)
        return run0;
    inst0 = bench_scalar(db, "SELECT max(id) FROM instances");
    bench_exec(db, "BEGIN IMMEDIATE");
    max_inst = bench_scalar(db, "SELECT max(id) FROM instances");
    max_run = bench_scalar(db, "SELECT max(id) FROM runs");
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k "
             "WHERE n < %d) "
             "INSERT INTO instances (name, definition_id, params, created_at, "
             "updated_at) SELECT '%s-' || n, i.definition_id, i.params, "
             "i.created_at, i.updated_at FROM k, instances AS i "
             "WHERE i.id = %lld ORDER BY n",
             n - 1, prefix, (long long)inst0);
    bench_exec(db, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO runs (uid, instance_id, definition_id, plan, status, "
             "trigger, reason, params, created_at) "
             "SELECT lower(hex(randomblob(16))), i.id, r.definition_id, "
             "r.plan, r.status, r.trigger, r.reason, r.params, r.created_at "
             "FROM instances AS i, runs AS r WHERE i.id > %lld AND r.id = %lld "
             "ORDER BY i.id",
             (long long)max_inst, (long long)run0);
    bench_exec(db, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO phases (run_id, idx, name, strategy, status) "
             "SELECT r.id, ph.idx, ph.name, ph.strategy, ph.status "
             "FROM runs AS r, phases AS ph WHERE r.id > %lld "
             "AND ph.run_id = %lld ORDER BY r.id, ph.idx",
             (long long)max_run, (long long)run0);
    bench_exec(db, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO steps (run_id, phase_id, idx, name, status, "
             "max_attempts) SELECT r.id, nph.id, s.idx, s.name, s.status, "
             "s.max_attempts FROM runs AS r JOIN steps AS s ON s.run_id = %lld "
             "JOIN phases AS tph ON tph.id = s.phase_id "
             "JOIN phases AS nph ON nph.run_id = r.id AND nph.idx = tph.idx "
             "WHERE r.id > %lld ORDER BY r.id, tph.idx, s.idx",
             (long long)run0, (long long)max_run);
    bench_exec(db, sql);
    /* The creation events, as admission writes them: the run's (its data
     * names the run's uid), then its phases', then its steps'. */
    snprintf(sql, sizeof sql,
             "INSERT INTO events (at, instance_id, run_id, phase_id, step_id, "
             "entity, from_status, to_status, attempt, message, actor, data) "
             "SELECT e.at, r.instance_id, r.id, NULL, NULL, e.entity, "
             "e.from_status, e.to_status, e.attempt, e.message, e.actor, "
             "json_set(e.data, '$.uid', r.uid) FROM runs AS r "
             "JOIN events AS e ON e.run_id = %lld AND e.entity = 'run' "
             "WHERE r.id > %lld ORDER BY r.id, e.seq",
             (long long)run0, (long long)max_run);
    bench_exec(db, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO events (at, instance_id, run_id, phase_id, step_id, "
             "entity, from_status, to_status, attempt, message, actor, data) "
             "SELECT e.at, r.instance_id, r.id, nph.id, NULL, e.entity, "
             "e.from_status, e.to_status, e.attempt, e.message, e.actor, "
             "e.data FROM runs AS r "
             "JOIN events AS e ON e.run_id = %lld AND e.entity = 'phase' "
             "JOIN phases AS tph ON tph.id = e.phase_id "
             "JOIN phases AS nph ON nph.run_id = r.id AND nph.idx = tph.idx "
             "WHERE r.id > %lld ORDER BY r.id, e.seq",
             (long long)run0, (long long)max_run);
    bench_exec(db, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO events (at, instance_id, run_id, phase_id, step_id, "
             "entity, from_status, to_status, attempt, message, actor, data) "
             "SELECT e.at, r.instance_id, r.id, nph.id, ns.id, e.entity, "
             "e.from_status, e.to_status, e.attempt, e.message, e.actor, "
             "e.data FROM runs AS r "
             "JOIN events AS e ON e.run_id = %lld AND e.entity = 'step' "
             "JOIN steps AS ts ON ts.id = e.step_id "
             "JOIN phases AS tph ON tph.id = ts.phase_id "
             "JOIN phases AS nph ON nph.run_id = r.id AND nph.idx = tph.idx "
             "JOIN steps AS ns ON ns.phase_id = nph.id AND ns.idx = ts.idx "
             "WHERE r.id > %lld ORDER BY r.id, e.seq",
             (long long)run0, (long long)max_run);
    bench_exec(db, sql);
    bench_exec(db, "COMMIT");
    return run0;
}
