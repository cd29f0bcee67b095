/*
 * tracker.c - when each write transaction of a connection became durable,
 * and which commit made each event row durable.
 *
 * SQLite calls the WAL hook after a commit is written (and, with
 * synchronous=FULL, synced), once the write lock is released: that is the
 * moment a transition is durable.  The update hook names every row
 * inserted into events during the transaction; the WAL hook stamps them.
 * Installing a WAL hook replaces SQLite's default one, which checkpoints
 * once the WAL holds 1000 pages; this one does the same, so the engine is
 * measured as it runs without the tracker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define AUTOCHECKPOINT_PAGES 1000

static void push(int64_t **v, size_t *n, size_t *cap, int64_t x)
{
    bench_grow((void **)v, *n, cap, sizeof **v, 1024);
    (*v)[(*n)++] = x;
}

static void on_update(void *data, int op, const char *dbname, const char *table,
                      sqlite3_int64 rowid)
{
    bench_tracker *t = data;

    (void)dbname;
    if (op == SQLITE_INSERT && strcmp(table, "events") == 0 &&
        rowid > t->base_seq)
        push(&t->pending, &t->npending, &t->cappending, rowid);
}

static void on_rollback(void *data)
{
    ((bench_tracker *)data)->npending = 0;
}

static int on_wal(void *data, sqlite3 *db, const char *dbname, int pages)
{
    bench_tracker *t = data;
    int64_t now = bench_ns();
    size_t i;

    for (i = 0; i < t->npending; i++) {
        size_t k = (size_t)(t->pending[i] - t->base_seq - 1);

        if (k >= t->cap) {
            size_t ncap = t->cap ? t->cap : 4096;
            int64_t *nv;

            while (ncap <= k)
                ncap *= 2;
            nv = realloc(t->commit_ns, ncap * sizeof *nv);
            if (!nv)
                bench_die("out of memory");
            memset(nv + t->cap, 0, (ncap - t->cap) * sizeof *nv);
            t->commit_ns = nv;
            t->cap = ncap;
        }
        t->commit_ns[k] = now;
    }
    t->npending = 0;
    if (t->ncommits++ == 0)
        t->first_ns = now;
    t->last_ns = now;
    push(&t->commit_times, &t->ntimes, &t->captimes, now);
    if (pages >= AUTOCHECKPOINT_PAGES)
        sqlite3_wal_checkpoint(db, dbname);
    return SQLITE_OK;
}

void bench_tracker_start(bench_tracker *t, sqlite3 *db, int64_t base_seq)
{
    memset(t, 0, sizeof *t);
    t->base_seq = base_seq;
    sqlite3_update_hook(db, on_update, t);
    sqlite3_rollback_hook(db, on_rollback, t);
    sqlite3_wal_hook(db, on_wal, t);
}

void bench_tracker_stop(bench_tracker *t, sqlite3 *db)
{
    sqlite3_update_hook(db, NULL, NULL);
    sqlite3_rollback_hook(db, NULL, NULL);
    sqlite3_wal_autocheckpoint(db, AUTOCHECKPOINT_PAGES);
    free(t->pending);
    free(t->commit_ns);
    free(t->commit_times);
    memset(t, 0, sizeof *t);
}

int64_t bench_tracker_time(const bench_tracker *t, int64_t seq)
{
    size_t k;

    if (seq <= t->base_seq)
        return 0;
    k = (size_t)(seq - t->base_seq - 1);
    return k < t->cap ? t->commit_ns[k] : 0;
}

/* ---- statement profile (PLANCTL_BENCH_PROFILE=1) ---- */

typedef struct prof_ent {
    char sql[100]; /* the statement's first characters, one line */
    int64_t ns, calls;
} prof_ent;

static prof_ent prof[512];
static size_t nprof;

/* Statements are told apart by their text (those of sqlite3_exec() are
 * prepared and finalized each time). */
static int on_trace(unsigned type, void *data, void *stmt, void *arg)
{
    const char *sql = sqlite3_sql((sqlite3_stmt *)stmt);
    char key[sizeof prof[0].sql];
    size_t i, k = 0;

    (void)data;
    if (type != SQLITE_TRACE_PROFILE || !sql)
        return 0;
    while (*sql == ' ' || *sql == '\n')
        sql++;
    for (; sql[k] && k + 1 < sizeof key; k++)
        key[k] = sql[k] == '\n' ? ' ' : sql[k];
    key[k] = 0;
    for (i = 0; i < nprof && strcmp(prof[i].sql, key) != 0; i++)
        ;
    if (i == nprof) {
        if (nprof == sizeof prof / sizeof prof[0])
            return 0;
        memcpy(prof[nprof++].sql, key, k + 1);
    }
    prof[i].ns += *(sqlite3_int64 *)arg;
    prof[i].calls++;
    return 0;
}

static int cmp_prof(const void *a, const void *b)
{
    const prof_ent *x = a, *y = b;

    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

void bench_profile_start(sqlite3 *db)
{
    const char *env = getenv("PLANCTL_BENCH_PROFILE");

    if (env && *env && strcmp(env, "0") != 0)
        sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, on_trace, NULL);
}

void bench_profile_report(sqlite3 *db)
{
    size_t i;
    int64_t total = 0;

    if (nprof == 0)
        return;
    sqlite3_trace_v2(db, 0, NULL, NULL);
    qsort(prof, nprof, sizeof prof[0], cmp_prof);
    for (i = 0; i < nprof; i++)
        total += prof[i].ns;
    fprintf(stderr, "statement profile: %.1f ms in all\n", (double)total / 1e6);
    for (i = 0; i < nprof && i < 25; i++)
        fprintf(stderr, "  %8.1f ms %7lld calls %8.2f us/call  %.80s\n",
                (double)prof[i].ns / 1e6, (long long)prof[i].calls,
                (double)prof[i].ns / 1e3 / (double)prof[i].calls, prof[i].sql);
    nprof = 0;
}
