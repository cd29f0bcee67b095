/*
 * test_schema.c - opening and migrating databases: the migrations produce
 * exactly schema/schema.sql, re-opening is idempotent, new files are 0600,
 * and files that are not ours (or are too new) are refused untouched.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "planctl.h"
#include "store/queries.h"
#include "store/sqlite/sqlite.h"
#include "store/store.h"
#include "testutil.h"

static char *dir;

static int setup(void **state)
{
    (void)state;
    dir = tu_mkdtemp();
    return dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(dir);
    free(dir);
    return 0;
}

/* Collapses runs of white space, and drops it before ',' and ')' and after
 * '(', so formatting differences do not count (ALTER TABLE ADD COLUMN
 * stores "\n, col ...)" where schema.sql has ",\n    col ...\n)"). */
static char *squeeze(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    int space = 0;

    for (; *s; s++) {
        if (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') {
            space = 1;
            continue;
        }
        if (space && o != out && *s != ',' && *s != ')' && o[-1] != '(')
            *o++ = ' ';
        space = 0;
        *o++ = *s;
    }
    *o = '\0';
    return out;
}

/* Every schema object and the transitions rows, as one comparable text. */
static char *describe(sqlite3 *db)
{
    sqlite3_stmt *st;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);

    buf[0] = '\0';
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT type || ' ' || name || ' ' || tbl_name "
                           "|| ' ' || coalesce(sql, '') FROM sqlite_master "
                           "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, "
                           "name",
                           -1, &st, NULL),
        SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        char *line = squeeze((const char *)sqlite3_column_text(st, 0));

        while (len + strlen(line) + 2 > cap)
            buf = realloc(buf, cap *= 2);
        len += (size_t)sprintf(buf + len, "%s\n", line);
        free(line);
    }
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT entity || ' ' || "
                                        "coalesce(from_status, '-') || ' ' "
                                        "|| to_status FROM transitions ORDER "
                                        "BY 1",
                                        -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *row = (const char *)sqlite3_column_text(st, 0);

        while (len + strlen(row) + 2 > cap)
            buf = realloc(buf, cap *= 2);
        len += (size_t)sprintf(buf + len, "%s\n", row);
    }
    sqlite3_finalize(st);
    return buf;
}

static int pragma(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int v;

    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void test_migrations_match_schema(void **state)
{
    char *a = tu_fmt("%s/migrated.db", dir), *b = tu_fmt("%s/schema.db", dir);
    char *schema = tu_read_file(PLANCTL_SOURCE_DIR "/schema/schema.sql", NULL);
    char *da, *db_text;
    planctl *p;
    sqlite3 *x, *y;

    (void)state;
    assert_non_null(schema);
    assert_int_equal(planctl_open(&p, a, NULL), 0);
    assert_int_equal(planctl_schema_version(p),
                     planctl_schema_version_supported());
    planctl_close(p);

    assert_int_equal(sqlite3_open(a, &x), SQLITE_OK);
    assert_int_equal(sqlite3_open(b, &y), SQLITE_OK);
    assert_int_equal(sqlite3_exec(y, schema, NULL, NULL, NULL), SQLITE_OK);
    da = describe(x);
    db_text = describe(y);
    assert_string_equal(da, db_text);
    assert_int_equal(pragma(x, "PRAGMA application_id"),
                     pragma(y, "PRAGMA application_id"));
    assert_int_equal(pragma(x, "PRAGMA user_version"),
                     planctl_schema_version_supported());
    sqlite3_close(x);
    sqlite3_close(y);
    free(da);
    free(db_text);
    free(schema);
    free(a);
    free(b);
}

/* Runs sql on db and returns sqlite3_exec's code. */
static int exec_rc(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* How many OpenEphemeral opcodes sql compiles to on db. */
static int ephemeral_tables(sqlite3 *db, const char *sql)
{
    char *q = tu_fmt("EXPLAIN %s", sql);
    sqlite3_stmt *st;
    int n = 0;

    assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        n += strcmp((const char *)sqlite3_column_text(st, 1),
                    "OpenEphemeral") == 0;
    sqlite3_finalize(st);
    free(q);
    return n;
}

/*
 * 0003 edits the events CHECK in sqlite_schema and rebuilds two partial
 * indexes.  A database left at version 2 with rows in it: after planctl
 * opens it, every row and the AUTOINCREMENT high-water mark are still
 * there, the integrity check passes, the constraints still refuse what
 * they refused, and neither the event INSERT nor a run's status UPDATE
 * builds a temporary table any more.
 */
static void test_migration_0003_keeps_rows_and_constraints(void **state)
{
    char *path = tu_fmt("%s/v2.db", dir);
    char *m1 =
        tu_read_file(PLANCTL_SOURCE_DIR "/migrations/0001_init.sql", NULL);
    char *m2 = tu_read_file(
        PLANCTL_SOURCE_DIR "/migrations/0002_run_event_count.sql", NULL);
    const char *ins_event = "INSERT INTO events (at, instance_id, run_id, "
                            "entity, actor) VALUES (1, 1, 1, ?, 'test')";
    sqlite3 *db;
    sqlite3_stmt *st;
    planctl *p;

    (void)state;
    assert_non_null(m1);
    assert_non_null(m2);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(exec_rc(db, m1), SQLITE_OK);
    assert_int_equal(exec_rc(db, m2), SQLITE_OK);
    assert_int_equal(
        exec_rc(db,
                "PRAGMA user_version = 2;"
                "INSERT INTO definitions VALUES (1, 'd', '1', '{}', 0);"
                "INSERT INTO instances VALUES (1, 'i', 1, '{}', NULL, 0, 0, 0);"
                "INSERT INTO runs (id, uid, instance_id, definition_id, plan,"
                " status, trigger, params, created_at) VALUES"
                " (1, 'u1', 1, 1, 'deploy', 'PENDING', 'create', '{}', 0);"
                "INSERT INTO events (seq, at, instance_id, run_id, entity,"
                " actor) VALUES (41, 0, 1, 1, 'run', 'test'),"
                " (42, 0, 1, NULL, 'instance', 'test');"
                "DELETE FROM events WHERE seq = 42;"),
        SQLITE_OK);
    assert_int_equal(ephemeral_tables(db, ins_event), 1);
    sqlite3_close(db);

    assert_int_equal(planctl_open(&p, path, NULL), 0);
    assert_int_equal(planctl_schema_version(p),
                     planctl_schema_version_supported());
    planctl_close(p);

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_extended_result_codes(db, 1);
    assert_int_equal(pragma(db, "SELECT count(*) FROM events"), 1);
    assert_int_equal(
        pragma(db, "SELECT seq FROM sqlite_sequence WHERE name = 'events'"),
        42);
    assert_int_equal(pragma(db, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(
        sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    assert_int_equal(ephemeral_tables(db, ins_event), 0);
    assert_int_equal(ephemeral_tables(db,
                                      "UPDATE runs SET status = 'IN_PROGRESS' "
                                      "WHERE id = 1 AND status = 'PENDING'"),
                     0);

    /* The CHECK: each entity of DESIGN §10 goes in, anything else not. */
    assert_int_equal(sqlite3_prepare_v2(db, ins_event, -1, &st, NULL),
                     SQLITE_OK);
    {
        static const char *const ok[] = {"run", "phase", "step", "instance",
                                         "engine"};
        static const char *const bad[] = {"Run", "steps", "", "run "};
        size_t i;

        for (i = 0; i < sizeof ok / sizeof *ok; i++) {
            sqlite3_bind_text(st, 1, ok[i], -1, SQLITE_STATIC);
            assert_int_equal(sqlite3_step(st), SQLITE_DONE);
            sqlite3_reset(st);
        }
        for (i = 0; i < sizeof bad / sizeof *bad; i++) {
            sqlite3_bind_text(st, 1, bad[i], -1, SQLITE_STATIC);
            assert_int_equal(sqlite3_step(st), SQLITE_CONSTRAINT_CHECK);
            sqlite3_reset(st);
        }
        sqlite3_bind_null(st, 1);
        assert_int_equal(sqlite3_step(st), SQLITE_CONSTRAINT_NOTNULL);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);

    /* runs_one_active: still one active run per instance; a queued one
     * and a finished one beside it are fine. */
    assert_int_equal(
        exec_rc(db, "INSERT INTO runs (uid, instance_id, definition_id, "
                    "plan, status, trigger, params, created_at) VALUES "
                    "('u2', 1, 1, 'deploy', 'QUEUED', 'manual', '{}', 0)"),
        SQLITE_OK);
    assert_int_equal(
        exec_rc(db, "UPDATE runs SET status = 'PENDING' WHERE uid = 'u2'"),
        SQLITE_CONSTRAINT_UNIQUE);
    assert_int_equal(
        exec_rc(db, "UPDATE runs SET status = 'CANCELLED' WHERE uid = 'u1'; "
                    "UPDATE runs SET status = 'PENDING' WHERE uid = 'u2'"),
        SQLITE_OK);
    assert_int_equal(pragma(db, "SELECT count(*) FROM runs WHERE status = "
                                "'PENDING' OR status = 'IN_PROGRESS' OR "
                                "status = 'PAUSED'"),
                     1);
    sqlite3_close(db);
    free(m1);
    free(m2);
    free(path);
}

static void test_reopen_is_idempotent(void **state)
{
    char *path = tu_fmt("%s/re.db", dir);
    planctl *p;
    int i;

    (void)state;
    for (i = 0; i < 3; i++) {
        assert_int_equal(planctl_open(&p, path, NULL), 0);
        assert_int_equal(planctl_schema_version(p),
                         planctl_schema_version_supported());
        planctl_close(p);
    }
    free(path);
}

static void test_new_file_mode_and_wal(void **state)
{
    char *path = tu_fmt("%s/mode.db", dir);
    char *wal = tu_fmt("%s-wal", path);
    struct stat sb;
    planctl *p;
    sqlite3 *x;
    mode_t old = umask(0); /* the mode must not depend on the umask */

    (void)state;
    assert_int_equal(planctl_open(&p, path, NULL), 0);
    umask(old);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    if (stat(wal, &sb) == 0)
        assert_int_equal(sb.st_mode & 0777, 0600);
    {
        /* The file was made under a temporary name and linked into
         * place; that name is gone. */
        DIR *d = opendir(dir);
        struct dirent *de;

        assert_non_null(d);
        while ((de = readdir(d)) != NULL)
            if (strncmp(de->d_name, "mode.db.new-", 12) == 0)
                fail_msg("%s/%s was left behind", dir, de->d_name);
        closedir(d);
    }
    assert_int_equal(sqlite3_open(path, &x), SQLITE_OK);
    {
        sqlite3_stmt *st;

        assert_int_equal(
            sqlite3_prepare_v2(x, "PRAGMA journal_mode", -1, &st, NULL),
            SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
        sqlite3_finalize(st);
    }
    sqlite3_close(x);
    planctl_close(p);
    free(wal);
    free(path);
}

/* Opens path expecting `expect`, and checks the file is unchanged and that
 * the message names the file. */
static void refuse_untouched(const char *path, int expect)
{
    size_t n1, n2;
    char *before = tu_read_file(path, &n1), *after;
    planctl *p;

    assert_non_null(before);
    assert_int_equal(planctl_open(&p, path, NULL), expect);
    assert_non_null(p);
    assert_non_null(strstr(planctl_errmsg(p), path));
    planctl_close(p);
    after = tu_read_file(path, &n2);
    assert_non_null(after);
    assert_int_equal(n1, n2);
    assert_memory_equal(before, after, n1);
    free(before);
    free(after);
}

static void test_refuses_non_sqlite(void **state)
{
    char *path = tu_fmt("%s/notes.txt", dir);
    const char text[] = "these are my notes, not a database\n"
                        "they are long enough to look like a page header....";

    (void)state;
    assert_int_equal(tu_write_file(path, text, sizeof text - 1), 0);
    refuse_untouched(path, PLANCTL_ENOTDB);
    free(path);
}

static void test_refuses_foreign_sqlite(void **state)
{
    char *path = tu_fmt("%s/other.db", dir);
    sqlite3 *x;

    (void)state;
    assert_int_equal(sqlite3_open(path, &x), SQLITE_OK);
    assert_int_equal(sqlite3_exec(x,
                                  "CREATE TABLE photos (id INTEGER PRIMARY "
                                  "KEY, name TEXT); INSERT INTO photos "
                                  "VALUES (1, 'cat')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(x);
    refuse_untouched(path, PLANCTL_ENOTDB);
    free(path);
}

static void test_refuses_newer_schema(void **state)
{
    char *path = tu_fmt("%s/newer.db", dir);
    planctl *p;
    sqlite3 *x;

    (void)state;
    assert_int_equal(planctl_open(&p, path, NULL), 0);
    planctl_close(p);
    assert_int_equal(sqlite3_open(path, &x), SQLITE_OK);
    /* Fold the WAL back so the main file is the whole database. */
    assert_int_equal(sqlite3_exec(x,
                                  "PRAGMA user_version = 99; PRAGMA "
                                  "journal_mode = DELETE",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(x);
    refuse_untouched(path, PLANCTL_ETOONEW);
    assert_int_equal(planctl_open(&p, path, NULL), PLANCTL_ETOONEW);
    assert_non_null(strstr(planctl_errmsg(p), "schema version 99"));
    planctl_close(p);
    free(path);
}

static void test_empty_file_is_initialised(void **state)
{
    char *path = tu_fmt("%s/empty.db", dir);
    planctl *p;

    (void)state;
    assert_int_equal(tu_write_file(path, "", 0), 0);
    assert_int_equal(planctl_open(&p, path, NULL), 0);
    assert_int_equal(planctl_schema_version(p),
                     planctl_schema_version_supported());
    planctl_close(p);
    free(path);
}

static void test_nocreate_and_readonly(void **state)
{
    char *path = tu_fmt("%s/absent.db", dir);
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    planctl *p;
    char *out = NULL;

    (void)state;
    o.flags = PLANCTL_OPEN_NOCREATE;
    assert_int_equal(planctl_open(&p, path, &o), PLANCTL_ENOTFOUND);
    assert_non_null(strstr(planctl_errmsg(p), "does not exist"));
    planctl_close(p);
    assert_int_not_equal(access(path, F_OK), 0);

    assert_int_equal(planctl_open(&p, path, NULL), 0);
    planctl_close(p);
    o.flags = PLANCTL_OPEN_READONLY;
    assert_int_equal(planctl_open(&p, path, &o), 0);
    assert_int_equal(planctl_instances_json(&out, p), 0);
    assert_non_null(strstr(out, "\"instances\": []") ? out : strstr(out, "[]"));
    planctl_free(out);
    assert_int_equal(planctl_definition_apply(NULL, p, "{}", 2, "x.json"),
                     PLANCTL_EDEFINITION);
    planctl_close(p);
    free(path);
}

static void test_options_version_checked(void **state)
{
    char *path = tu_fmt("%s/opt.db", dir);
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    planctl *p;

    (void)state;
    o.version = 99;
    assert_int_equal(planctl_open(&p, path, &o), PLANCTL_EINVAL);
    planctl_close(p);
    assert_int_equal(planctl_open(&p, "", NULL), PLANCTL_EINVAL);
    planctl_close(p);
    assert_int_equal(planctl_open(&p, dir, NULL), PLANCTL_EINVAL);
    assert_non_null(strstr(planctl_errmsg(p), "is a directory"));
    planctl_close(p);
    free(path);
}

/* The durability option reaches the connection: synchronous is per
 * connection, so read it through the handle's own (store internals). */
static void test_durability_option(void **state)
{
    char *path = tu_fmt("%s/sync.db", dir);
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    planctl *p;

    (void)state;
    assert_int_equal(planctl_open(&p, path, NULL), 0);
    assert_int_equal(pragma(pctl_sqlite_db(p), "PRAGMA synchronous"),
                     1); /* NORMAL */
    assert_int_equal(pragma(pctl_sqlite_db(p), "PRAGMA foreign_keys"), 1);
    planctl_close(p);
    o.durability = PLANCTL_DURABILITY_FULL;
    assert_int_equal(planctl_open(&p, path, &o), 0);
    assert_int_equal(pragma(pctl_sqlite_db(p), "PRAGMA synchronous"),
                     2); /* FULL */
    planctl_close(p);
    free(path);
}

/* queries.h and each src/store/sql/<backend>.sql name the same statements. */
static void test_query_names_agree(void **state)
{
    static const char *const names[] = {
#define X(name) #name,
        PCTL_QUERIES(X)
#undef X
    };
    char *sql =
        tu_read_file(PLANCTL_SOURCE_DIR "/src/store/sql/sqlite.sql", NULL);
    const char *s;
    size_t i, sections = 0;

    (void)state;
    assert_non_null(sql);
    for (s = sql; (s = strstr(s, "\n-- name: ")) != NULL; s++)
        sections++;
    assert_int_equal(sections, sizeof names / sizeof names[0]);
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *marker = tu_fmt("\n-- name: %s\n", names[i]);

        if (!strstr(sql, marker))
            fail_msg("query %s has no section in sql/sqlite.sql", names[i]);
        free(marker);
    }
    free(sql);
}

/* Every named statement prepares on a database of the current schema,
 * through the backend's table (sql.h), and a failure names the statement.
 * With a second dialect this is where the two are compared: the same
 * result columns in the same order for every name. */
static void test_every_statement_prepares(void **state)
{
    char *tmp = tu_mkdtemp(), *path = tu_fmt("%s/q.db", tmp);
    planctl *p = NULL;
    int q;

    (void)state;
    assert_int_equal(planctl_open(&p, path, NULL), 0);
    assert_ptr_equal(p->conn->m, &pctl_db_sqlite);
    for (q = 0; q < PCTL_Q__COUNT; q++) {
        pctl_stmt *st = pctl_q(p, (pctl_query)q);

        if (!st)
            fail_msg("%s does not prepare: %s", pctl_query_name(q),
                     planctl_errmsg(p));
        assert_int_equal(st->q, q);
    }
    /* A statement that fails names itself. */
    assert_int_equal(pctl_step(pctl_q(p, PCTL_Q_verify_integrity)), PCTL_ROW);
    {
        pctl_stmt *st = pctl_q(p, PCTL_Q_instance_insert);

        pctl_bind_text(st, 1, NULL); /* name NOT NULL */
        assert_true(pctl_step(st) < 0);
        assert_non_null(strstr(planctl_errmsg(p), "instance_insert: "));
        /* The database's own words, without the name in front. */
        assert_string_equal(pctl_db_detail(st),
                            planctl_errmsg(p) + strlen("instance_insert: "));
        pctl_reset(st);
    }
    /* A step that gave what its caller did not expect names it too. */
    {
        pctl_stmt *st = pctl_q(p, PCTL_Q_verify_foreign_keys);

        assert_int_equal(pctl_step(st), PCTL_DONE);
        assert_int_equal(pctl_q_fail(st, PCTL_DONE), PLANCTL_ERROR);
        assert_string_equal(planctl_errmsg(p),
                            "verify_foreign_keys: no row where one was "
                            "expected");
        pctl_reset(st);
    }
    planctl_close(p);
    free(path);
    tu_rmtree(tmp);
    free(tmp);
}

/* A handle whose open failed has no database: every call on it is refused
 * with EINVAL saying so, never a crash, and it still closes. */
static void test_unopened_handle(void **state)
{
    char *tmp = tu_mkdtemp(), *out = NULL;
    planctl *p = NULL;
    int64_t v = 0;

    (void)state;
    assert_int_equal(planctl_open(&p, tmp, NULL), PLANCTL_EINVAL); /* a dir */
    assert_non_null(p);
    assert_null(p->conn);
    /* EINVAL where a transaction would begin, ERROR where a statement
     * would be prepared; the message says why either way. */
    assert_true(planctl_instances_json(&out, p) < 0);
    assert_non_null(strstr(planctl_errmsg(p), "did not open"));
    assert_true(planctl_definition_apply(NULL, p, "{}", 2, NULL) < 0);
    assert_int_equal(planctl_data_version(&v, p), PLANCTL_EINVAL);
    assert_non_null(strstr(planctl_errmsg(p), "did not open"));
    assert_int_equal(planctl_verify(&out, p), PLANCTL_EINVAL);
    assert_non_null(strstr(planctl_errmsg(p), "did not open"));
    assert_null(out);
    planctl_close(p);
    tu_rmtree(tmp);
    free(tmp);
}

static void test_error_names(void **state)
{
    (void)state;
    assert_string_equal(planctl_errname(PLANCTL_ENOTFOUND),
                        "PLANCTL_ENOTFOUND");
    assert_string_equal(planctl_strerror(PLANCTL_ECONFLICT), "conflict");
    assert_string_equal(planctl_errname(0), "PLANCTL_OK");
    assert_string_equal(planctl_errname(-999), "PLANCTL_UNKNOWN");
    assert_string_equal(planctl_strerror(-999), "unknown error");
    assert_string_equal(planctl_libversion(), PLANCTL_VERSION);
    assert_string_equal(planctl_errmsg(NULL), "out of memory");
}

/* planctl_process_init() as main() called it, before any SQLite use. */
static int process_init_rc = 1;

/* It took effect (no memory statistics), and a second call, once SQLite
 * is initialised, changes nothing and says so. */
static void test_process_init(void **state)
{
    char *path = tu_fmt("%s/pi.db", dir);
    planctl *p;

    (void)state;
    assert_int_equal(process_init_rc, 0);
    assert_int_equal(planctl_open(&p, path, NULL), 0);
    assert_int_equal(sqlite3_memory_used(), 0);
    assert_int_equal(planctl_process_init(), PLANCTL_EBUSY);
    planctl_close(p);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_process_init),
        cmocka_unit_test(test_migrations_match_schema),
        cmocka_unit_test(test_migration_0003_keeps_rows_and_constraints),
        cmocka_unit_test(test_reopen_is_idempotent),
        cmocka_unit_test(test_new_file_mode_and_wal),
        cmocka_unit_test(test_refuses_non_sqlite),
        cmocka_unit_test(test_refuses_foreign_sqlite),
        cmocka_unit_test(test_refuses_newer_schema),
        cmocka_unit_test(test_empty_file_is_initialised),
        cmocka_unit_test(test_nocreate_and_readonly),
        cmocka_unit_test(test_options_version_checked),
        cmocka_unit_test(test_durability_option),
        cmocka_unit_test(test_query_names_agree),
        cmocka_unit_test(test_every_statement_prepares),
        cmocka_unit_test(test_unopened_handle),
        cmocka_unit_test(test_error_names),
    };

    process_init_rc = planctl_process_init();
    return cmocka_run_group_tests(tests, setup, teardown);
}
