/*
 * wlog.c - the rows a connection writes, commit by commit: what the engine
 * wrote in each of its transactions, so that the limit program (limit.c)
 * can write the same rows with the same batching, and ips.c can check
 * that it did.
 *
 * SQLite's update hook names every row inserted, updated or deleted (not
 * those of its own tables, such as sqlite_sequence); the commit hook
 * closes a transaction's list, the rollback hook drops it.  The hooks are
 * named bench_uncounted_*: tools/bench/instructions leaves them out of the
 * instructions it counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const char *const table_names[BENCH_W__COUNT] = {
    "runs",      "phases",       "steps",     "attempts", "events",
    "instances", "engine_lease", "run_waits", "other"};

const char *bench_wtable_name(int table)
{
    return table >= 0 && table < BENCH_W__COUNT ? table_names[table] : "?";
}

static int table_of(const char *name)
{
    int t;

    for (t = 0; t < BENCH_W_OTHER; t++)
        if (strcmp(name, table_names[t]) == 0)
            return t;
    return BENCH_W_OTHER;
}

static void push_op(bench_wlog *w, char op, int table, int64_t rowid)
{
    bench_grow((void **)&w->ops, w->nops, &w->capops, sizeof *w->ops, 4096);
    w->ops[w->nops].rowid = rowid;
    w->ops[w->nops].op = op;
    w->ops[w->nops].table = (unsigned char)table;
    w->nops++;
}

static void push_end(bench_wlog *w)
{
    bench_grow((void **)&w->ends, w->ncommits, &w->capends, sizeof *w->ends,
               256);
    w->ends[w->ncommits++] = w->nops;
}

BENCH_NOINLINE void bench_uncounted_update(void *data, int op,
                                           const char *dbname,
                                           const char *table,
                                           sqlite3_int64 rowid);
BENCH_NOINLINE int bench_uncounted_commit(void *data);
BENCH_NOINLINE void bench_uncounted_rollback(void *data);

BENCH_NOINLINE void bench_uncounted_update(void *data, int op,
                                           const char *dbname,
                                           const char *table,
                                           sqlite3_int64 rowid)
{
    (void)dbname;
    push_op(data,
            op == SQLITE_INSERT   ? 'I'
            : op == SQLITE_DELETE ? 'D'
                                  : 'U',
            table_of(table), rowid);
}

BENCH_NOINLINE int bench_uncounted_commit(void *data)
{
    push_end(data);
    return 0; /* the commit goes ahead */
}

BENCH_NOINLINE void bench_uncounted_rollback(void *data)
{
    bench_wlog *w = data;

    w->nops = w->ncommits ? w->ends[w->ncommits - 1] : 0;
    w->rollbacks++;
}

void bench_wlog_hook(bench_wlog *w, sqlite3 *db)
{
    sqlite3_update_hook(db, bench_uncounted_update, w);
    sqlite3_commit_hook(db, bench_uncounted_commit, w);
    sqlite3_rollback_hook(db, bench_uncounted_rollback, w);
}

void bench_wlog_unhook(sqlite3 *db)
{
    sqlite3_update_hook(db, NULL, NULL);
    sqlite3_commit_hook(db, NULL, NULL);
    sqlite3_rollback_hook(db, NULL, NULL);
}

const bench_wop *bench_wlog_commit(const bench_wlog *w, size_t k, size_t *n)
{
    size_t from = k ? w->ends[k - 1] : 0;

    *n = w->ends[k] - from;
    return w->ops + from;
}

/* The file: a line "commit N" per transaction (N rows), then a line
 * "I|U|D TABLE ROWID" per row. */
void bench_wlog_save(const bench_wlog *w, const char *path)
{
    FILE *f = fopen(path, "w");
    size_t k, i, n;

    if (!f)
        bench_die("cannot write %s", path);
    for (k = 0; k < w->ncommits; k++) {
        const bench_wop *ops = bench_wlog_commit(w, k, &n);

        fprintf(f, "commit %zu\n", n);
        for (i = 0; i < n; i++)
            fprintf(f, "%c %s %lld\n", ops[i].op,
                    bench_wtable_name(ops[i].table), (long long)ops[i].rowid);
    }
    if (fclose(f) != 0)
        bench_die("cannot write %s", path);
}

void bench_wlog_load(bench_wlog *w, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[256], table[64], op;
    size_t n, left = 0;
    long long rowid;
    int open = 0;

    memset(w, 0, sizeof *w);
    if (!f)
        bench_die("cannot read %s", path);
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "commit %zu", &n) == 1) {
            if (left)
                bench_die("%s: a commit is cut short", path);
            if (open)
                push_end(w);
            open = 1;
            left = n;
            continue;
        }
        if (!left || sscanf(line, "%c %63s %lld", &op, table, &rowid) != 3)
            bench_die("%s: unreadable line: %s", path, line);
        push_op(w, op, table_of(table), rowid);
        left--;
    }
    fclose(f);
    if (left)
        bench_die("%s: the last commit is cut short", path);
    if (open)
        push_end(w);
}

void bench_wlog_free(bench_wlog *w)
{
    free(w->ops);
    free(w->ends);
    memset(w, 0, sizeof *w);
}
