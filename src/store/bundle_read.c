/*
 * bundle_read.c - reading bundles for the importer (bundle_import.c): the
 * header check, several bundles of one file merged per instance, and the
 * rows of each table sorted by id so references resolve by binary search.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
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

static int cmp_row(const void *a, const void *b)
{
    const bundle_row *x = a, *y = b;

    return x->id < y->id ? -1 : x->id > y->id;
}

bundle_row *pctl_bundle_find(bundle_table *t, int64_t id)
{
    bundle_row key;

    key.id = id;
    return t->n ? bsearch(&key, t->v, t->n, sizeof *t->v, cmp_row) : NULL;
}

int pctl_bundle_load_table(bundle_imp *m, json_t *doc, int tbl)
{
    json_t *arr = json_object_get(doc, pctl_bundle_tables[tbl].key), *o;
    bundle_table *t = &m->t[tbl];
    size_t i;

    if (!json_is_array(arr))
        return pctl_err(
            m->p, PLANCTL_EINVAL,
            "not a planctl bundle: \"%s\" is missing or not an array",
            pctl_bundle_tables[tbl].key);
    t->v = pctl_calloc(json_array_size(arr) + 1, sizeof *t->v);
    if (!t->v)
        return pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    json_array_foreach(arr, i, o)
    {
        json_t *id = json_object_get(o, pctl_bundle_tables[tbl].id);
        bundle_row *r = &t->v[t->n++];

        if (!json_is_object(o) || !json_is_integer(id) ||
            json_integer_value(id) <= 0)
            return pctl_bundle_bad(
                m, "%s[%zu]: not an object with a positive integer \"%s\"",
                pctl_bundle_tables[tbl].key, i, pctl_bundle_tables[tbl].id);
        r->id = json_integer_value(id);
        r->o = o;
        if (tbl == T_RUN || tbl == T_PHASE || tbl == T_STEP) {
            r->status = json_string_value(json_object_get(o, "status"));
            if (!r->status)
                return pctl_bundle_bad(
                    m, "%s %lld: \"status\" must be a string",
                    pctl_bundle_tables[tbl].what, (long long)r->id);
        }
    }
    qsort(t->v, t->n, sizeof *t->v, cmp_row);
    for (i = 1; i < t->n; i++)
        if (t->v[i].id == t->v[i - 1].id)
            return pctl_bundle_bad(
                m, "has two %ss with %s %lld", pctl_bundle_tables[tbl].what,
                pctl_bundle_tables[tbl].id, (long long)t->v[i].id);
    return 0;
}

int pctl_bundle_resolve(bundle_row **out, bundle_imp *m, json_t *o,
                        const char *key, int tbl, int nullable, int inserted,
                        const char *who, int64_t id)
{
    json_t *v = json_object_get(o, key);

    *out = NULL;
    if ((!v || json_is_null(v)) && nullable)
        return 0;
    if (!json_is_integer(v))
        return pctl_bundle_bad(m, "%s %lld: \"%s\" must be an integer", who,
                               (long long)id, key);
    *out = pctl_bundle_find(&m->t[tbl], json_integer_value(v));
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

bundle_row *pctl_bundle_find_def(bundle_imp *m, const char *name,
                                 const char *version)
{
    size_t i;

    for (i = 0; name && version && i < m->t[T_DEF].n; i++) {
        json_t *o = m->t[T_DEF].v[i].o;

        if (!strcmp(json_string_value(json_object_get(o, "name")), name) &&
            !strcmp(json_string_value(json_object_get(o, "version")), version))
            return &m->t[T_DEF].v[i];
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
                        "%snot a planctl bundle: it has no \"format\": \"%s\"; "
                        "make one with 'planctl export NAME'",
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

/* Adds the rows of from's table that into does not have (by id). */
static int merge_table(json_t *into, json_t *from, int tbl)
{
    json_t *a = json_object_get(into, pctl_bundle_tables[tbl].key);
    json_t *b = json_object_get(from, pctl_bundle_tables[tbl].key);
    json_t *seen = json_object(), *o;
    const char *idkey = pctl_bundle_tables[tbl].id;
    char buf[32];
    size_t i;
    int rc = 0;

    /* A malformed table is left for the loader to name. */
    if (!json_is_array(a) || !json_is_array(b)) {
        json_decref(seen);
        return 0;
    }
    if (!seen)
        return -1;
    json_array_foreach(a, i, o)
    {
        snprintf(buf, sizeof buf, "%lld",
                 (long long)json_integer_value(json_object_get(o, idkey)));
        if (json_object_set(seen, buf, json_true()) < 0)
            rc = -1;
    }
    json_array_foreach(b, i, o)
    {
        json_t *id = json_object_get(o, idkey);

        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(id));
        if (rc == 0 && json_is_integer(id) && json_object_get(seen, buf))
            continue;
        if (rc == 0 && (json_array_append(a, o) < 0 ||
                        json_object_set(seen, buf, json_true()) < 0))
            rc = -1;
    }
    json_decref(seen);
    return rc;
}

/* Merges bundle from into into: the newer instance row, the rows into does
 * not have.  -1 when out of memory. */
static int merge(json_t *into, json_t *from)
{
    json_t *a = json_object_get(into, "instance");
    json_t *b = json_object_get(from, "instance");
    int tbl;

    if (json_integer_value(json_object_get(b, "updated_at")) >=
            json_integer_value(json_object_get(a, "updated_at")) &&
        json_object_set(into, "instance", b) < 0)
        return -1;
    for (tbl = 0; tbl < T__COUNT; tbl++)
        if (merge_table(into, from, tbl) < 0)
            return -1;
    return 0;
}

/* Adds doc to *docs, merged into the bundle of its instance if there is
 * one; groups maps instance keys to positions in docs. */
static int add_doc(planctl *p, json_t *docs, json_t *groups, json_t *doc)
{
    char *key = instance_key(doc);
    json_t *at;
    int rc = 0;

    if (!key)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    at = json_object_get(groups, key);
    if (at) {
        if (merge(json_array_get(docs, (size_t)json_integer_value(at)), doc) <
            0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    } else if (json_object_set_new(
                   groups, key,
                   json_integer((json_int_t)json_array_size(docs))) < 0 ||
               json_array_append(docs, doc) < 0) {
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    pctl_free(key);
    return rc;
}

/* Two groups of one name cannot both be imported under it. */
static int check_names(planctl *p, json_t *docs)
{
    size_t i, j;

    for (i = 0; i < json_array_size(docs); i++)
        for (j = i + 1; j < json_array_size(docs); j++) {
            json_t *a = json_object_get(json_array_get(docs, i), "instance");
            json_t *b = json_object_get(json_array_get(docs, j), "instance");
            const char *na = json_string_value(json_object_get(a, "name"));
            const char *nb = json_string_value(json_object_get(b, "name"));

            if (na && nb && strcmp(na, nb) == 0)
                return pctl_err(
                    p, PLANCTL_EINVAL,
                    "the bundles hold two instances named \"%s\" (ids %lld "
                    "and %lld where they came from); put each in a file of "
                    "its own and import one with --as NAME",
                    na, (long long)json_integer_value(json_object_get(a, "id")),
                    (long long)json_integer_value(json_object_get(b, "id")));
        }
    return 0;
}

/* The offset of the first byte at or after off that is not blank space;
 * *line counts the newlines passed. */
static size_t skip_blank(const char *text, size_t len, size_t off, size_t *line)
{
    for (; off < len && text[off] && strchr(" \t\r\n", text[off]); off++)
        *line += text[off] == '\n';
    return off;
}

int pctl_bundle_parse(json_t **docs, planctl *p, const char *text, size_t len)
{
    json_t *groups = json_object();
    size_t off, line = 1, count = 0;
    int rc = 0;

    *docs = json_array();
    if (!*docs || !groups)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    off = skip_blank(text, len, 0, &line);
    while (rc == 0 && (off < len || count == 0)) {
        json_error_t jerr;
        json_t *doc;
        char where[48] = "";
        size_t end, end_line = line;

        doc =
            json_loadb(text + off, len - off,
                       JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &jerr);
        if (!doc) {
            rc = json_error_code(&jerr) == json_error_out_of_memory
                     ? pctl_err(p, PLANCTL_ENOMEM, "out of memory")
                     : pctl_err(p, PLANCTL_EINVAL,
                                "bundle is not JSON: <bundle>:%zu:%d: %s",
                                line + (size_t)jerr.line - 1, jerr.column,
                                jerr.text);
            break;
        }
        /* With JSON_DISABLE_EOF_CHECK, position is what the value took. */
        for (end = off; end < off + (size_t)jerr.position && end < len; end++)
            end_line += text[end] == '\n';
        end = skip_blank(text, len, end, &end_line);
        count++;
        /* One bundle alone keeps the messages of one; with several, each
         * names itself. */
        if (count > 1 || end < len)
            snprintf(where, sizeof where, "bundle %zu (line %zu): ", count,
                     line);
        rc = check_header(p, doc, where);
        if (rc == 0)
            rc = add_doc(p, *docs, groups, doc);
        json_decref(doc);
        off = end;
        line = end_line;
    }
    if (rc == 0)
        rc = check_names(p, *docs);
    json_decref(groups);
    if (rc < 0) {
        json_decref(*docs);
        *docs = NULL;
    }
    return rc;
}
