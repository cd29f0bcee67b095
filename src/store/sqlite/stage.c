/*
 * stage.c - the staging database of an import (see bundle.h).
 *
 * A bundle can be larger than the memory an import may take (100 x 1,000
 * steps export to 112 MB, which jansson would hold as more than 1 GB), and
 * the replay needs its rows by id in any order.  So reading a bundle puts
 * each row, as its text, in a private temporary SQLite database, and the
 * import fetches them from there one at a time.  SQLite keeps a small page
 * cache and spills the rest to its temporary file; nothing of the stage
 * touches the database being imported into, and nothing needs to last:
 * no journal, no sync.
 *
 *   pending  the rows of the bundle being read, keyed by (table, id): a
 *            second row with one id is the bundle's fault;
 *   groups   one per instance (name#id where the bundles came from), in
 *            the order first seen, with the newest instance row;
 *   rows     the rows of each instance, those of several bundles merged
 *            (the first row of an id kept);
 *   state    the importer's bookkeeping per row.
 *
 * The stage is SQLite whatever backend the import writes into: it is a
 * scratch file of this process, not a planctl database, so it lives with
 * the SQLite backend's files and speaks to SQLite directly.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "store/bundle.h"
#include "store/sqlite/sqlite.h"

enum {
    S_PUT,
    S_GROUP_FIND,
    S_GROUP_ADD,
    S_GROUP_SET,
    S_MOVE,
    S_CLEAR,
    S_GROUP_COUNT,
    S_SAME_NAME,
    S_GROUP,
    S_COUNT,
    S_EACH,
    S_ROW,
    S_NID,
    S_SAVE,
    S_UNFINISHED,
    S__COUNT
};

static const char *const sql[S__COUNT] = {
    "INSERT INTO pending(tbl, id, status, body) VALUES (?1, ?2, ?3, ?4) "
    "ON CONFLICT DO NOTHING",
    "SELECT grp, updated_at FROM groups WHERE key = ?1",
    "INSERT INTO groups(key, name, updated_at, instance) "
    "VALUES (?1, ?2, ?3, ?4)",
    "UPDATE groups SET name = ?2, updated_at = ?3, instance = ?4 "
    "WHERE grp = ?1",
    "INSERT INTO rows(grp, tbl, id, status, body) "
    "SELECT ?1, tbl, id, status, body FROM pending WHERE true "
    "ON CONFLICT DO NOTHING",
    "DELETE FROM pending",
    "SELECT count(*) FROM groups",
    "SELECT a.grp, b.grp FROM groups a JOIN groups b "
    "ON a.name = b.name AND a.grp < b.grp ORDER BY a.grp, b.grp LIMIT 1",
    "SELECT name, instance FROM groups WHERE grp = ?1",
    "SELECT count(*) FROM rows WHERE grp = ?1 AND tbl = ?2",
    "SELECT r.id, r.body, r.status, s.nid, s.cur, s.kids FROM rows r "
    "LEFT JOIN state s ON s.grp = r.grp AND s.tbl = r.tbl AND s.id = r.id "
    "WHERE r.grp = ?1 AND r.tbl = ?2 ORDER BY r.id",
    "SELECT r.id, r.body, r.status, s.nid, s.cur, s.kids FROM rows r "
    "LEFT JOIN state s ON s.grp = r.grp AND s.tbl = r.tbl AND s.id = r.id "
    "WHERE r.grp = ?1 AND r.tbl = ?2 AND r.id = ?3",
    "SELECT s.nid FROM rows r LEFT JOIN state s "
    "ON s.grp = r.grp AND s.tbl = r.tbl AND s.id = r.id "
    "WHERE r.grp = ?1 AND r.tbl = ?2 AND r.id = ?3",
    "INSERT OR REPLACE INTO state(grp, tbl, id, nid, cur, kids) "
    "VALUES (?6, ?1, ?2, ?3, ?4, ?5)",
    "SELECT r.tbl, r.id, r.status, s.cur FROM rows r "
    "LEFT JOIN state s ON s.grp = r.grp AND s.tbl = r.tbl AND s.id = r.id "
    "WHERE r.grp = ?1 AND r.tbl BETWEEN 1 AND 3 "
    "AND (s.cur IS NULL OR s.cur <> r.status) ORDER BY r.tbl, r.id LIMIT 1",
};

static const char schema[] =
    "PRAGMA journal_mode = OFF;"
    "PRAGMA synchronous = OFF;"
    "PRAGMA locking_mode = EXCLUSIVE;"
    "PRAGMA cache_size = -4096;"
    "CREATE TABLE pending(tbl INTEGER, id INTEGER, status TEXT, body TEXT, "
    "  PRIMARY KEY (tbl, id)) WITHOUT ROWID;"
    "CREATE TABLE groups(grp INTEGER PRIMARY KEY, key TEXT UNIQUE, "
    "  name TEXT, updated_at INTEGER, instance TEXT);"
    "CREATE TABLE rows(grp INTEGER, tbl INTEGER, id INTEGER, status TEXT, "
    "  body TEXT, PRIMARY KEY (grp, tbl, id)) WITHOUT ROWID;"
    "CREATE TABLE state(grp INTEGER, tbl INTEGER, id INTEGER, nid INTEGER, "
    "  cur TEXT, kids INTEGER, PRIMARY KEY (grp, tbl, id)) WITHOUT ROWID;";

struct bundle_stage {
    sqlite3 *db;
    sqlite3_stmt *st[S__COUNT];
};

static int stage_err(planctl *p, bundle_stage *s, int rc)
{
    if (rc == SQLITE_NOMEM || !s->db)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    return pctl_err(p, PLANCTL_EIO,
                    "cannot stage the bundle in a temporary file (in "
                    "$TMPDIR, or /tmp): %s; free space there, or point "
                    "TMPDIR elsewhere",
                    sqlite3_errmsg(s->db));
}

int pctl_stage_open(bundle_stage **out, planctl *p)
{
    bundle_stage *s = pctl_calloc(1, sizeof *s);
    int rc, i;

    *out = NULL;
    if (!s)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* "": a private temporary database in a file SQLite deletes. */
    rc = sqlite3_open_v2(
        "", &s->db,
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(s->db, schema, NULL, NULL, NULL);
    /* One transaction for the whole stage: nothing of it needs to last. */
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL);
    for (i = 0; rc == SQLITE_OK && i < S__COUNT; i++)
        rc = sqlite3_prepare_v3(s->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                                &s->st[i], NULL);
    if (rc != SQLITE_OK) {
        rc = stage_err(p, s, rc);
        pctl_stage_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void pctl_stage_close(bundle_stage *s)
{
    int i;

    if (!s)
        return;
    for (i = 0; i < S__COUNT; i++)
        sqlite3_finalize(s->st[i]);
    sqlite3_close(s->db);
    pctl_free(s);
}

/* Steps a statement that returns no row; resets it. */
static int run(bundle_stage *s, planctl *p, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : stage_err(p, s, rc);
}

int pctl_stage_put(bundle_stage *s, planctl *p, int tbl, int64_t id,
                   const char *status, const char *body)
{
    sqlite3_stmt *st = s->st[S_PUT];
    int rc;

    sqlite3_bind_int(st, 1, tbl);
    sqlite3_bind_int64(st, 2, id);
    pctl_sqlite_bind_text_static(st, 3, status);
    pctl_sqlite_bind_text_static(st, 4, body);
    if ((rc = run(s, p, st)) < 0)
        return rc;
    return sqlite3_changes(s->db) == 0;
}

int pctl_stage_end_bundle(bundle_stage *s, planctl *p, const char *key,
                          const char *name, int64_t updated_at,
                          const char *instance)
{
    sqlite3_stmt *st = s->st[S_GROUP_FIND];
    int64_t grp = 0, newest = 0;
    int rc;

    pctl_sqlite_bind_text_static(st, 1, key);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        grp = sqlite3_column_int64(st, 0);
        newest = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return stage_err(p, s, rc);
    if (!grp || updated_at >= newest) {
        st = s->st[grp ? S_GROUP_SET : S_GROUP_ADD];
        if (grp)
            sqlite3_bind_int64(st, 1, grp);
        else
            pctl_sqlite_bind_text_static(st, 1, key);
        pctl_sqlite_bind_text_static(st, 2, name);
        sqlite3_bind_int64(st, 3, updated_at);
        pctl_sqlite_bind_text_static(st, 4, instance);
        if ((rc = run(s, p, st)) < 0)
            return rc;
        if (!grp)
            grp = sqlite3_last_insert_rowid(s->db);
    }
    sqlite3_bind_int64(s->st[S_MOVE], 1, grp);
    if ((rc = run(s, p, s->st[S_MOVE])) < 0)
        return rc;
    return run(s, p, s->st[S_CLEAR]);
}

/* Steps a statement expected to return one row; 1 for a row, 0 for none,
 * or an error.  The caller resets it. */
static int row(bundle_stage *s, planctl *p, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    sqlite3_reset(st);
    return stage_err(p, s, rc);
}

int pctl_stage_groups(bundle_stage *s, planctl *p, int64_t *count,
                      int64_t *grp_a, int64_t *grp_b)
{
    sqlite3_stmt *st = s->st[S_GROUP_COUNT];
    int rc;

    *count = *grp_a = *grp_b = 0;
    if ((rc = row(s, p, st)) < 0)
        return rc;
    *count = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    st = s->st[S_SAME_NAME];
    if ((rc = row(s, p, st)) < 0)
        return rc;
    if (rc) {
        *grp_a = sqlite3_column_int64(st, 0);
        *grp_b = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    return 0;
}

static int dup_column(char **out, sqlite3_stmt *st, int i)
{
    const char *v = (const char *)sqlite3_column_text(st, i);

    *out = v ? pctl_strdup(v) : NULL;
    return v && !*out ? -1 : 0;
}

int pctl_stage_group(bundle_stage *s, planctl *p, int64_t grp, char **name,
                     char **instance)
{
    sqlite3_stmt *st = s->st[S_GROUP];
    int rc;

    *name = *instance = NULL;
    sqlite3_bind_int64(st, 1, grp);
    if ((rc = row(s, p, st)) <= 0)
        return rc < 0 ? rc : PLANCTL_ENOTFOUND;
    if (dup_column(name, st, 0) < 0 || dup_column(instance, st, 1) < 0) {
        pctl_free(*name);
        *name = NULL;
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    } else {
        rc = 0;
    }
    sqlite3_reset(st);
    return rc;
}

int pctl_stage_count(int64_t *out, bundle_imp *m, int tbl)
{
    sqlite3_stmt *st = m->stage->st[S_COUNT];
    int rc;

    *out = 0;
    sqlite3_bind_int64(st, 1, m->grp);
    sqlite3_bind_int(st, 2, tbl);
    if ((rc = row(m->stage, m->p, st)) < 0)
        return rc;
    *out = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return 0;
}

void pctl_bundle_row_clear(bundle_row *r)
{
    json_decref(r->o);
    pctl_free(r->status);
    pctl_free(r->cur);
    memset(r, 0, sizeof *r);
}

/* Fills r from the current row of S_EACH or S_ROW: id, body, status, nid,
 * cur, kids.  The body was a JSON object when it was staged. */
static int load_row(bundle_imp *m, bundle_row *r, sqlite3_stmt *st)
{
    const char *body = (const char *)sqlite3_column_text(st, 1);

    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->nid = sqlite3_column_int64(st, 3);
    r->kids = sqlite3_column_int64(st, 5);
    if (body)
        r->o = json_loads(body, 0, NULL);
    if (!r->o || dup_column(&r->status, st, 2) < 0 ||
        dup_column(&r->cur, st, 4) < 0) {
        pctl_bundle_row_clear(r);
        return pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    }
    return 0;
}

int pctl_stage_each(bundle_imp *m, int tbl,
                    int (*fn)(bundle_imp *m, bundle_row *r, void *data),
                    void *data)
{
    sqlite3_stmt *st = m->stage->st[S_EACH];
    bundle_row r;
    int rc = 0, step;

    sqlite3_bind_int64(st, 1, m->grp);
    sqlite3_bind_int(st, 2, tbl);
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if ((rc = load_row(m, &r, st)) < 0)
            break;
        rc = fn(m, &r, data);
        pctl_bundle_row_clear(&r);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = stage_err(m->p, m->stage, step);
    sqlite3_reset(st);
    return rc;
}

int pctl_stage_fetch(bundle_row **out, bundle_imp *m, int tbl, int64_t id)
{
    bundle_row *r = &m->cache[tbl];
    sqlite3_stmt *st = m->stage->st[S_ROW];
    int rc;

    *out = NULL;
    if (r->o && r->id == id) {
        *out = r;
        return 0;
    }
    pctl_bundle_row_clear(r);
    sqlite3_bind_int64(st, 1, m->grp);
    sqlite3_bind_int(st, 2, tbl);
    sqlite3_bind_int64(st, 3, id);
    if ((rc = row(m->stage, m->p, st)) <= 0)
        return rc;
    if ((rc = load_row(m, r, st)) == 0)
        *out = r;
    sqlite3_reset(st);
    return rc;
}

int pctl_stage_nid(int64_t *out, int *found, bundle_imp *m, int tbl, int64_t id)
{
    sqlite3_stmt *st = m->stage->st[S_NID];
    int rc;

    *out = 0;
    *found = 0;
    sqlite3_bind_int64(st, 1, m->grp);
    sqlite3_bind_int(st, 2, tbl);
    sqlite3_bind_int64(st, 3, id);
    if ((rc = row(m->stage, m->p, st)) <= 0)
        return rc;
    *found = 1;
    *out = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return 0;
}

int pctl_stage_save(bundle_imp *m, int tbl, const bundle_row *r)
{
    sqlite3_stmt *st = m->stage->st[S_SAVE];

    sqlite3_bind_int(st, 1, tbl);
    sqlite3_bind_int64(st, 2, r->id);
    sqlite3_bind_int64(st, 3, r->nid);
    pctl_sqlite_bind_text_static(st, 4, r->cur);
    sqlite3_bind_int64(st, 5, r->kids);
    sqlite3_bind_int64(st, 6, m->grp);
    return run(m->stage, m->p, st);
}

int pctl_stage_unfinished(bundle_imp *m, int *tbl, int64_t *id, char **status,
                          char **cur)
{
    sqlite3_stmt *st = m->stage->st[S_UNFINISHED];
    int rc;

    *status = *cur = NULL;
    sqlite3_bind_int64(st, 1, m->grp);
    if ((rc = row(m->stage, m->p, st)) <= 0)
        return rc;
    *tbl = sqlite3_column_int(st, 0);
    *id = sqlite3_column_int64(st, 1);
    if (dup_column(status, st, 2) < 0 || dup_column(cur, st, 3) < 0) {
        pctl_free(*status);
        *status = NULL;
        rc = pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    }
    sqlite3_reset(st);
    return rc;
}
