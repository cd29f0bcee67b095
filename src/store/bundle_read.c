/*
 * bundle_read.c - reading bundles for the importer (bundle_import.c): the
 * stream of one or several bundles read a row at a time into the staging
 * database (sqlite/stage.c), each bundle's header and the shape of its
 * rows checked; and the lookups the importer makes.
 *
 * The stream is never whole in memory: core/jscan.c walks the braces,
 * keys and brackets of each bundle and hands back one row at a time.  The
 * members of a bundle may come in any order; the header is judged at the
 * bundle's end, before any fault of its rows is told.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/jscan.h"
#include "store/bundle.h"

const struct pctl_bundle_table_info pctl_bundle_tables[T__COUNT] = {
    {"definitions", "id", "definition"}, {"runs", "id", "run"},
    {"phases", "id", "phase"},           {"steps", "id", "step"},
    {"attempts", "id", "attempt"},       {"events", "seq", "event"},
};

int pctl_bundle_bad(bundle_imp *m, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pctl_err(m->p, PLANCTL_EINVAL, "bundle %s", msg);
}

int pctl_bundle_resolve(bundle_row **out, bundle_imp *m, json_t *o,
                        const char *key, int tbl, int nullable, int inserted,
                        const char *who, int64_t id)
{
    json_t *v = json_object_get(o, key);
    int rc;

    *out = NULL;
    if ((!v || json_is_null(v)) && nullable)
        return 0;
    if (!json_is_integer(v))
        return pctl_bundle_bad(m, "%s %lld: \"%s\" must be an integer", who,
                               (long long)id, key);
    if ((rc = pctl_stage_fetch(out, m, tbl, json_integer_value(v))) < 0)
        return rc;
    if (!*out)
        return pctl_bundle_bad(
            m, "%s %lld refers to %s %lld, which is not in the bundle", who,
            (long long)id, pctl_bundle_tables[tbl].what,
            (long long)json_integer_value(v));
    if (inserted && !(*out)->nid)
        return pctl_bundle_bad(
            m, "%s %lld refers to %s %lld before the event that creates it",
            who, (long long)id, pctl_bundle_tables[tbl].what,
            (long long)(*out)->id);
    return 0;
}

bundle_row *pctl_bundle_def(bundle_imp *m, int64_t id)
{
    size_t i;

    for (i = 0; i < m->ndefs; i++)
        if (m->defs[i].id == id)
            return &m->defs[i];
    return NULL;
}

bundle_row *pctl_bundle_find_def(bundle_imp *m, const char *name,
                                 const char *version)
{
    size_t i;

    for (i = 0; name && version && i < m->ndefs; i++) {
        const char *n =
            json_string_value(json_object_get(m->defs[i].o, "name"));
        const char *v =
            json_string_value(json_object_get(m->defs[i].o, "version"));

        if (n && v && !strcmp(n, name) && !strcmp(v, version))
            return &m->defs[i];
    }
    return NULL;
}

/* ---- the header, and several bundles in one text ---- */

/* where: "" for a text of one bundle, "bundle N: " for one of several. */
static int check_header(planctl *p, json_t *doc, const char *where)
{
    json_t *v = json_object_get(doc, "version");
    const char *format = json_string_value(json_object_get(doc, "format"));

    if (!json_is_object(doc) || !format ||
        strcmp(format, PLANCTL_BUNDLE_FORMAT) != 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "%snot a planctl bundle: it has no \"format\": \"%s\"",
                        where, PLANCTL_BUNDLE_FORMAT);
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return pctl_err(p, PLANCTL_EINVAL,
                        "%snot a planctl bundle: \"version\" must be a "
                        "positive integer",
                        where);
    if (json_integer_value(v) > PLANCTL_BUNDLE_VERSION)
        return pctl_err(p, PLANCTL_ETOONEW,
                        "%sbundle format version %lld is newer than this "
                        "planctl reads (up to %d); upgrade planctl",
                        where, (long long)json_integer_value(v),
                        PLANCTL_BUNDLE_VERSION);
    if (!json_is_object(json_object_get(doc, "instance")))
        return pctl_err(p, PLANCTL_EINVAL,
                        "%snot a planctl bundle: \"instance\" is missing or "
                        "not an object",
                        where);
    return 0;
}

/* The key that groups bundles of one instance: its name and its id where
 * the bundles came from (an instance deleted and created again is
 * another). */
static char *instance_key(json_t *doc)
{
    json_t *in = json_object_get(doc, "instance");
    const char *name = json_string_value(json_object_get(in, "name"));
    json_t *id = json_object_get(in, "id");
    char buf[32];
    char *key;
    size_t n;

    if (!name || !json_is_integer(id))
        return pctl_strdup("");
    snprintf(buf, sizeof buf, "#%lld", (long long)json_integer_value(id));
    n = strlen(name) + strlen(buf) + 1;
    if ((key = pctl_malloc(n)))
        snprintf(key, n, "%s%s", name, buf);
    return key;
}

/* ---- reading the stream ---- */

/* Keys at a bundle's top level: version 1 has ten. */
#define MAX_KEYS 1000

/* One stream of bundles being read into the stage. */
typedef struct reader {
    planctl *p;
    bundle_stage *s;
    pctl_jscan js;
    size_t count;   /* bundles begun */
    json_t *head;   /* this bundle's format, version, instance... */
    unsigned found; /* bit tbl: this bundle's table tbl was an array */
    char *row_err;  /* the first fault of its rows, told after the header */
    json_t *keys;   /* the keys seen at its top level */
} reader;

/* A fault of a row: kept until the header is known to be right (a bundle
 * of a newer format is told as that, not as rows it cannot read). */
static int row_fault(reader *r, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int row_fault(reader *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (r->row_err)
        return 0;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->row_err = pctl_strdup(msg);
    return r->row_err ? 0 : pctl_err(r->p, PLANCTL_ENOMEM, "out of memory");
}

/* What the scanner said, as the library says it. */
static int scan_err(reader *r, int rc)
{
    switch (rc) {
    case PCTL_JSCAN_SYNTAX:
        return pctl_err(r->p, PLANCTL_EINVAL, "bundle is not JSON: %s",
                        r->js.msg);
    case PCTL_JSCAN_TOOBIG:
        return pctl_err(r->p, PLANCTL_EINVAL,
                        "bundle: %s, the most planctl reads as one row",
                        r->js.msg);
    case PCTL_JSCAN_READ:
        return pctl_err(r->p, PLANCTL_EIO, "the bundle cannot be read");
    default:
        return pctl_err(r->p, PLANCTL_ENOMEM, "out of memory");
    }
}

/* One row of table tbl, the i-th of its array. */
static int take_row(reader *r, int tbl, size_t i)
{
    const char *idkey = pctl_bundle_tables[tbl].id;
    const char *status = NULL;
    json_t *o = NULL, *id;
    char *text = NULL;
    int rc;

    if ((rc = pctl_jscan_value(&o, &text, &r->js, JSON_REJECT_DUPLICATES)) < 0)
        return scan_err(r, rc);
    id = json_object_get(o, idkey);
    if (!json_is_object(o) || !json_is_integer(id) ||
        json_integer_value(id) <= 0) {
        rc = row_fault(r,
                       "%s[%zu]: not an object with a positive integer "
                       "\"%s\"",
                       pctl_bundle_tables[tbl].key, i, idkey);
    } else if ((tbl == T_RUN || tbl == T_PHASE || tbl == T_STEP) &&
               !(status = json_string_value(json_object_get(o, "status")))) {
        rc = row_fault(r, "%s %lld: \"status\" must be a string",
                       pctl_bundle_tables[tbl].what,
                       (long long)json_integer_value(id));
    } else if ((rc = pctl_stage_put(r->s, r->p, tbl, json_integer_value(id),
                                    status, text)) == 1) {
        rc = row_fault(r, "has two %ss with %s %lld",
                       pctl_bundle_tables[tbl].what, idkey,
                       (long long)json_integer_value(id));
    }
    json_decref(o);
    pctl_free(text);
    return rc;
}

/* The value of a table's key: an array of rows, each staged. */
static int take_table(reader *r, int tbl)
{
    json_t *v = NULL;
    size_t i = 0;
    int rc, c;

    if ((c = pctl_jscan_peek(&r->js)) < 0)
        return scan_err(r, c);
    if (c != '[') {
        /* Read for its syntax; told as missing at the bundle's end. */
        rc = pctl_jscan_value(&v, NULL, &r->js, JSON_DECODE_ANY);
        json_decref(v);
        return rc < 0 ? scan_err(r, rc) : 0;
    }
    r->found |= 1u << tbl;
    if ((rc = pctl_jscan_take(&r->js, '[', "'['")) < 0)
        return scan_err(r, rc);
    if ((c = pctl_jscan_peek(&r->js)) == ']')
        return pctl_jscan_take(&r->js, ']', "']'");
    for (rc = 0; rc == 0; i++) {
        if ((rc = take_row(r, tbl, i)) < 0)
            return rc;
        if ((c = pctl_jscan_peek(&r->js)) < 0)
            return scan_err(r, c);
        rc = pctl_jscan_take(&r->js, c == ']' ? ']' : ',', "',' or ']'");
        if (rc < 0)
            return scan_err(r, rc);
        if (c == ']')
            break;
    }
    return 0;
}

/* One "key": value of a bundle's top level. */
static int take_member(reader *r)
{
    json_t *key = NULL, *v = NULL;
    const char *k;
    int rc, tbl;

    if ((rc = pctl_jscan_peek(&r->js)) < 0)
        return scan_err(r, rc);
    if (rc != '"')
        return scan_err(r, pctl_jscan_take(&r->js, '"', "string or '}'"));
    if ((rc = pctl_jscan_value(&key, NULL, &r->js, JSON_DECODE_ANY)) < 0 ||
        (rc = pctl_jscan_take(&r->js, ':', "':'")) < 0) {
        json_decref(key);
        return scan_err(r, rc);
    }
    k = json_string_value(key);
    if (json_object_get(r->keys, k)) {
        /* As jansson's JSON_REJECT_DUPLICATES would. */
        snprintf(r->js.msg, sizeof r->js.msg,
                 "%s:%zu:%zu: duplicate object key near '\"%.60s\"'",
                 r->js.origin, r->js.line, r->js.col, k);
        json_decref(key);
        return scan_err(r, PCTL_JSCAN_SYNTAX);
    }
    if (json_object_size(r->keys) >= MAX_KEYS) {
        json_decref(key);
        return pctl_err(r->p, PLANCTL_EINVAL,
                        "bundle: more than %d keys at its top level; it is "
                        "not one planctl wrote",
                        MAX_KEYS);
    }
    if (json_object_set(r->keys, k, json_true()) < 0) {
        json_decref(key);
        return pctl_err(r->p, PLANCTL_ENOMEM, "out of memory");
    }
    for (tbl = 0; tbl < T__COUNT; tbl++)
        if (!strcmp(k, pctl_bundle_tables[tbl].key))
            break;
    if (tbl < T__COUNT) {
        rc = take_table(r, tbl);
    } else if ((rc = pctl_jscan_value(&v, NULL, &r->js,
                                      JSON_DECODE_ANY |
                                          JSON_REJECT_DUPLICATES)) < 0) {
        rc = scan_err(r, rc);
    } else if (strcmp(k, "format") && strcmp(k, "version") &&
               strcmp(k, "instance")) {
        json_decref(v); /* exported_at, or a key of a later version */
    } else if (json_object_set_new(r->head, k, v) < 0) {
        rc = pctl_err(r->p, PLANCTL_ENOMEM, "out of memory");
    }
    json_decref(key);
    return rc;
}

/* The end of one bundle: its header, its tables, its rows' faults, then
 * its rows join its instance's.  line: where it began. */
static int end_bundle(reader *r, size_t line)
{
    json_t *in = json_object_get(r->head, "instance");
    char where[48] = "", *key = NULL, *text = NULL;
    int rc, tbl, c = pctl_jscan_peek(&r->js);

    if (c < 0)
        return scan_err(r, c);
    /* One bundle alone keeps the messages of one; with several, each
     * names itself. */
    if (r->count > 1 || c != 256)
        snprintf(where, sizeof where, "bundle %zu (line %zu): ", r->count,
                 line);
    if ((rc = check_header(r->p, r->head, where)) < 0)
        return rc;
    for (tbl = 0; tbl < T__COUNT; tbl++)
        if (!(r->found & (1u << tbl)))
            return pctl_err(
                r->p, PLANCTL_EINVAL,
                "not a planctl bundle: \"%s\" is missing or not an array",
                pctl_bundle_tables[tbl].key);
    if (r->row_err)
        return pctl_err(r->p, PLANCTL_EINVAL, "bundle %s", r->row_err);
    key = instance_key(r->head);
    text = json_dumps(in, JSON_COMPACT);
    if (!key || !text)
        rc = pctl_err(r->p, PLANCTL_ENOMEM, "out of memory");
    else
        rc = pctl_stage_end_bundle(
            r->s, r->p, key, json_string_value(json_object_get(in, "name")),
            json_integer_value(json_object_get(in, "updated_at")), text);
    pctl_free(key);
    pctl_free(text);
    return rc;
}

/* One bundle: an object, its members read as they come. */
static int take_bundle(reader *r)
{
    size_t line;
    json_t *v = NULL;
    int rc, c;

    r->count++;
    r->found = 0;
    pctl_free(r->row_err);
    r->row_err = NULL;
    json_object_clear(r->head);
    json_object_clear(r->keys);
    if ((c = pctl_jscan_peek(&r->js)) < 0)
        return scan_err(r, c);
    line = r->js.line;
    if (c != '{') {
        /* Not an object: JSON or not, it is no bundle. */
        if ((rc = pctl_jscan_value(&v, NULL, &r->js, JSON_REJECT_DUPLICATES)) <
            0)
            return scan_err(r, rc);
        json_decref(v);
        return check_header(r->p, NULL, "");
    }
    if ((rc = pctl_jscan_take(&r->js, '{', "'{'")) < 0)
        return scan_err(r, rc);
    if ((c = pctl_jscan_peek(&r->js)) == '}') {
        pctl_jscan_take(&r->js, '}', "'}'");
        return end_bundle(r, line);
    }
    for (;;) {
        if ((rc = take_member(r)) < 0)
            return rc;
        if ((c = pctl_jscan_peek(&r->js)) < 0)
            return scan_err(r, c);
        if ((rc = pctl_jscan_take(&r->js, c == '}' ? '}' : ',', "',' or '}'")) <
            0)
            return scan_err(r, rc);
        if (c == '}')
            return end_bundle(r, line);
    }
}

int pctl_bundle_read(bundle_stage *s, planctl *p,
                     int (*read)(void *data, char *buf, size_t cap,
                                 size_t *len),
                     void *data)
{
    reader r;
    int rc, c = 0;

    memset(&r, 0, sizeof r);
    r.p = p;
    r.s = s;
    r.head = json_object();
    r.keys = json_object();
    rc = pctl_jscan_init(&r.js, read, data, PCTL_BUNDLE_VALUE_MAX, "<bundle>");
    if (rc < 0 || !r.head || !r.keys)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    /* At least one bundle: an empty text is not one. */
    while (rc == 0 && (r.count == 0 || (c = pctl_jscan_peek(&r.js)) != 256))
        rc = r.count > 0 && c < 0 ? scan_err(&r, c) : take_bundle(&r);
    pctl_jscan_free(&r.js);
    pctl_free(r.row_err);
    json_decref(r.head);
    json_decref(r.keys);
    return rc;
}
