/*
 * bundle.h - what reading a bundle (bundle_read.c) hands to importing it
 * (bundle_import.c): the bundle's rows, sorted by their ids, and where
 * each went.  Private to the store.
 */
#ifndef PCTL_STORE_BUNDLE_H
#define PCTL_STORE_BUNDLE_H

#include <jansson.h>

#include "store/store.h"

/* A row of the bundle and where it went. */
typedef struct bundle_row {
    int64_t id;           /* the bundle's id (seq for events) */
    int64_t nid;          /* the id here; 0 until inserted */
    json_t *o;            /* the bundle's object, borrowed from the document */
    const char *status;   /* runs, phases, steps: the bundle's final status */
    const char *cur;      /* ... and the replayed one; NULL until created */
    int64_t kids;         /* runs, phases: phases, steps created so far */
    struct pctl_def *def; /* definitions: parsed once imported (owned) */
} bundle_row;

enum { T_DEF, T_RUN, T_PHASE, T_STEP, T_ATTEMPT, T_EVENT, T__COUNT };

/* Each table's key in the bundle, its id column, and its name in
 * messages. */
extern const struct pctl_bundle_table_info {
    const char *key, *id, *what;
} pctl_bundle_tables[T__COUNT];

typedef struct bundle_table {
    bundle_row *v;
    size_t n;
} bundle_table;

/* One import: the bundle's tables and the state of the replay. */
typedef struct bundle_imp {
    planctl *p;
    bundle_table t[T__COUNT];
    int64_t inst_id, inst_nid;
    int sqlrc;        /* the SQLite code of the last failed statement */
    int data_changed; /* the current event's data was rewritten */
} bundle_imp;

/*
 * Parses text holding one bundle, or several one after another (a file of
 * `gc --archive`, one per line), into *docs: an array with one bundle per
 * instance, those of the same instance merged (rows de-duplicated by id,
 * the newest instance row kept).  Each is checked for its format and
 * version.  EINVAL, ETOONEW or ENOMEM with the message set.
 */
int pctl_bundle_parse(json_t **docs, planctl *p, const char *text, size_t len);

/* Refuses the bundle: EINVAL with "bundle " and the printf message. */
int pctl_bundle_bad(bundle_imp *m, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Reads one array of the bundle into m->t[tbl], sorted by id. */
int pctl_bundle_load_table(bundle_imp *m, json_t *doc, int tbl);

/* The row with the bundle's id in t, or NULL. */
bundle_row *pctl_bundle_find(bundle_table *t, int64_t id);

/* The definition (name, version) among the bundle's, or NULL. */
bundle_row *pctl_bundle_find_def(bundle_imp *m, const char *name,
                                 const char *version);

/*
 * Resolves the reference o[key] (a bundle id, or null when nullable) into
 * the row it names in table tbl; *out is NULL for null.  The row must have
 * been inserted already when inserted is set.  who names the referrer.
 */
int pctl_bundle_resolve(bundle_row **out, bundle_imp *m, json_t *o,
                        const char *key, int tbl, int nullable, int inserted,
                        const char *who, int64_t id);

#endif
