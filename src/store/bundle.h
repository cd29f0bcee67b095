/*
 * bundle.h - what reading a bundle (bundle_read.c) hands to importing it
 * (bundle_import.c), through the staging database (sqlite/stage.c): the
 * bundle's rows, and where each went.  Private to the store.
 */
#ifndef PCTL_STORE_BUNDLE_H
#define PCTL_STORE_BUNDLE_H

#include <jansson.h>

#include "store/store.h"

/* The most bytes of one value of a bundle (a row, the instance): what
 * the importer holds in memory at once.  The exporter refuses to write a
 * row longer, so that what it writes can always be read back. */
#define PCTL_BUNDLE_VALUE_MAX ((size_t)64 * 1024 * 1024)

enum { T_DEF, T_RUN, T_PHASE, T_STEP, T_ATTEMPT, T_EVENT, T__COUNT };

/* Each table's key in the bundle, its id column, and its name in
 * messages. */
extern const struct pctl_bundle_table_info {
    const char *key, *id, *what;
} pctl_bundle_tables[T__COUNT];

/*
 * The staging database: a bundle is read from its stream into a private
 * temporary SQLite database (a file of SQLite's temporary directory,
 * removed when closed), so the import holds in memory only the rows it is
 * working on.  Rows of bundles of one instance are merged there (the first
 * of each id kept, the newest instance row); the importer's bookkeeping
 * per row (its new id, its replayed status, children created) lives there
 * too.  See sqlite/stage.c.
 */
typedef struct bundle_stage bundle_stage;

/* A row of the bundle and where it went. */
typedef struct bundle_row {
    int64_t id;           /* the bundle's id (seq for events) */
    int64_t nid;          /* the id here; 0 until inserted */
    json_t *o;            /* the bundle's object (owned) */
    char *status;         /* runs, phases, steps: the bundle's final status */
    char *cur;            /* ... and the replayed one; NULL until created */
    int64_t kids;         /* runs, phases: phases, steps created so far */
    struct pctl_def *def; /* definitions: parsed once imported (owned) */
} bundle_row;

/* One import: the instance being imported and the state of the replay. */
typedef struct bundle_imp {
    planctl *p;
    bundle_stage *stage;
    int64_t grp;      /* the instance's group in the stage */
    bundle_row *defs; /* its definitions, by id (few: in memory) */
    size_t ndefs;
    bundle_row cache[T__COUNT]; /* the row of each table fetched last */
    int64_t inst_id, inst_nid;
    const planctl_import_options *opts;
    json_t *secrets;  /* withheld name -> the value given for it, or NULL */
    json_t *used;     /* the names of opts->params some instance withheld */
    int dbrc;         /* the code of the last failed statement, or 0 */
    int data_changed; /* the current event's data was rewritten */
} bundle_imp;

/* ---- bundle_secrets.c ---- */

/* The instance's "withheld" (in: its bundle object), with the definitions
 * imported: each name's value from m->opts->params, parsed by its
 * parameter's type, into m->secrets; each name given and used is added
 * to m->used.  EINVAL, naming them, when some are not given or a value
 * is not of its type; ENOMEM. */
int pctl_bundle_secrets_take(bundle_imp *m, const json_t *in);

/* Puts the values in m->secrets back where the bundle has null for them:
 * in the object params, or in the JSON text of o's key (of its "params"
 * member when in_member).  Returns 1 when something was put back (o's
 * key then holds the new text), 0, or ENOMEM. */
int pctl_bundle_secrets_put(bundle_imp *m, json_t *params);
int pctl_bundle_secrets_put_text(bundle_imp *m, json_t *o, const char *key,
                                 int in_member);

/* After every instance: EINVAL for a value of opts->params that no
 * instance withheld (used: the names some did), or one given twice. */
int pctl_bundle_secrets_check_unused(planctl *p,
                                     const planctl_import_options *opts,
                                     const json_t *used);

/* ---- sqlite/stage.c ---- */

/* Opens an empty stage.  EIO (no temporary file), ENOMEM; the message on
 * p. */
int pctl_stage_open(bundle_stage **out, planctl *p);
void pctl_stage_close(bundle_stage *s);

/* Reading: puts one row of the bundle being read (status: runs, phases,
 * steps) and body its text.  1 when the bundle has that id in that table
 * already, 0, or an error. */
int pctl_stage_put(bundle_stage *s, planctl *p, int tbl, int64_t id,
                   const char *status, const char *body);

/* Ends the bundle being read: its rows join those of its instance (key:
 * name#id where it came from; name its name), whose instance row becomes
 * instance (text) when updated_at is as new or newer. */
int pctl_stage_end_bundle(bundle_stage *s, planctl *p, const char *key,
                          const char *name, int64_t updated_at,
                          const char *instance);

/* The number of instances, and two of one name if there are (*grp_b 0 if
 * not). */
int pctl_stage_groups(bundle_stage *s, planctl *p, int64_t *count,
                      int64_t *grp_a, int64_t *grp_b);

/* Instance grp's name and instance row (text, owned by the caller); ENOTFOUND
 * after the last. */
int pctl_stage_group(bundle_stage *s, planctl *p, int64_t grp, char **name,
                     char **instance);

/* The number of rows of tbl of the instance being imported. */
int pctl_stage_count(int64_t *out, bundle_imp *m, int tbl);

/* Calls fn(m, row, data) for each row of tbl, by id; fn's row is only
 * valid during the call.  Stops at fn's first error. */
int pctl_stage_each(bundle_imp *m, int tbl,
                    int (*fn)(bundle_imp *m, bundle_row *r, void *data),
                    void *data);

/* The row of tbl with the bundle's id, or NULL: valid until the next
 * fetch from tbl (m->cache). */
int pctl_stage_fetch(bundle_row **out, bundle_imp *m, int tbl, int64_t id);

/* The new id of the row of tbl with the bundle's id (0 while not
 * inserted); *found 0 when the bundle has none.  Leaves the cache be. */
int pctl_stage_nid(int64_t *out, int *found, bundle_imp *m, int tbl,
                   int64_t id);

/* Writes r's bookkeeping (nid, cur, kids) back. */
int pctl_stage_save(bundle_imp *m, int tbl, const bundle_row *r);

/* The first run, phase or step (in that order, then by id) not created
 * or not ended where the bundle says: 1 with its table, id, statuses
 * (owned, cur NULL when never created), 0 when none. */
int pctl_stage_unfinished(bundle_imp *m, int *tbl, int64_t *id, char **status,
                          char **cur);

/* Frees what the row owns. */
void pctl_bundle_row_clear(bundle_row *r);

/* ---- bundle_read.c ---- */

/*
 * Reads a stream holding one bundle, or several one after another (a file
 * of `gc --archive`, one per line) into the stage, each checked for its
 * format and version and the shape of its rows (an object with a positive
 * integer id, a string status where one is needed, no id twice).  EINVAL
 * (the message names the place: "<bundle>:LINE:COLUMN" for what is not
 * JSON), ETOONEW, EIO (the reader failed), ENOMEM.
 */
int pctl_bundle_read(bundle_stage *s, planctl *p,
                     int (*read)(void *data, char *buf, size_t cap,
                                 size_t *len),
                     void *data);

/* Refuses the bundle: EINVAL with "bundle " and the printf message. */
int pctl_bundle_bad(bundle_imp *m, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The definition (name, version) among the bundle's, or NULL. */
bundle_row *pctl_bundle_find_def(bundle_imp *m, const char *name,
                                 const char *version);

/* The definition with the bundle's id, or NULL. */
bundle_row *pctl_bundle_def(bundle_imp *m, int64_t id);

/*
 * Resolves the reference o[key] (a bundle id, or null when nullable) into
 * the row it names in table tbl (fetched: valid until the next fetch from
 * tbl); *out is NULL for null.  The row must have been inserted already
 * when inserted is set.  who names the referrer.
 */
int pctl_bundle_resolve(bundle_row **out, bundle_imp *m, json_t *o,
                        const char *key, int tbl, int nullable, int inserted,
                        const char *who, int64_t id);

#endif
