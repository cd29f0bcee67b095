/*
 * yaml_read.c - a YAML definition read into the JSON value the library
 * checks, with the line of every node (see yaml.h).
 *
 * libyaml's parser hands out events (a scalar, the start or end of a
 * mapping or a sequence, an alias); a recursive descent over them builds
 * the jansson value, resolving each scalar by the YAML 1.2 core schema
 * and recording each node's line under its path, so that an error the
 * validator reports at plans.deploy.strategy can name the line.  libyaml
 * itself implements YAML 1.1, whose resolution (yes/no/on/off as
 * booleans, 0755 as octal) is not used: it resolves nothing, we do.
 */
#include "cli/yaml/yaml.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/buf.h"
#include "core/def.h"
#include "core/walk.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

typedef struct anchor {
    char *name;
    json_t *value;
    size_t nodes; /* values in it, itself included */
    int depth;    /* mappings and sequences nested in it, itself included */
} anchor;

typedef struct reader {
    yaml_parser_t p;
    const char *text; /* the document, len bytes */
    size_t len;
    const char *origin;
    cli_yaml_error *err;
    json_t *lines;
    pctl_buf path; /* the current node's path */
    anchor *anchors;
    size_t nanchors, acap;
    size_t alias_nodes; /* values aliases added so far */
} reader;

/* What a node gave back besides its value. */
typedef struct shape {
    size_t nodes;
    int depth;
} shape;

static int fail(reader *r, yaml_mark_t at, const char *fmt, ...)
{
    char why[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    r->err->type = "Syntax error";
    r->err->line = at.line + 1;
    snprintf(r->err->msg, sizeof r->err->msg, "%s:%zu:%zu: %s", r->origin,
             at.line + 1, at.column + 1, why);
    return CLI_YAML_INVALID;
}

/* Whether the blanks that start the line of mark at hold a tab, at or
 * before it: libyaml's words for that ("found character that cannot start
 * any token") do not say what to change. */
static int tab_indent(const reader *r, yaml_mark_t at)
{
    size_t i = at.index < r->len ? at.index : r->len;
    size_t start = i >= at.column ? i - at.column : 0;

    for (size_t j = start; j < r->len && j <= i; j++) {
        if (r->text[j] == '\t')
            return 1;
        if (r->text[j] != ' ')
            return 0;
    }
    return 0;
}

/* The next event, or libyaml's complaint as a syntax error. */
static int next(reader *r, yaml_event_t *ev)
{
    if (yaml_parser_parse(&r->p, ev))
        return 0;
    if (r->p.error == YAML_MEMORY_ERROR)
        return CLI_YAML_NOMEM;
    if (!r->p.problem)
        return fail(r, r->p.mark, "cannot be read as YAML");
    if (tab_indent(r, r->p.problem_mark))
        return fail(r, r->p.problem_mark,
                    "a tab in the indentation: YAML indents with spaces "
                    "only; replace the tab with spaces");
    if (r->p.context)
        return fail(r, r->p.problem_mark, "%s (%s that starts at line %zu)",
                    r->p.problem, r->p.context, r->p.context_mark.line + 1);
    return fail(r, r->p.problem_mark, "%s", r->p.problem);
}

/* ---- paths and lines ----------------------------------------------------- */

static int path_put(reader *r, const char *s, size_t n)
{
    return pctl_buf_add(&r->path, s, n) < 0 ? CLI_YAML_NOMEM : 0;
}

/* Back to the path as it was at mark (its length then). */
static void path_back(reader *r, size_t mark)
{
    r->path.len = mark;
    if (r->path.s)
        r->path.s[mark] = '\0';
}

/* The current path ("" at the top). */
static const char *path_str(const reader *r)
{
    return r->path.s ? r->path.s : "";
}

/* Appends a member's segment as validation errors write it (walk.c): .key
 * for a name, ["key"] for anything else. */
static int path_key(reader *r, const char *key)
{
    pctl_qbuf q;
    int rc;

    if (pctl_name_valid(key)) {
        if (r->path.len && (rc = path_put(r, ".", 1)) < 0)
            return rc;
        return path_put(r, key, strlen(key));
    }
    pctl_quote(&q, key);
    if ((rc = path_put(r, "[", 1)) < 0 ||
        (rc = path_put(r, q.s, strlen(q.s))) < 0)
        return rc;
    return path_put(r, "]", 1);
}

static int path_index(reader *r, size_t i)
{
    char b[32];
    int n = snprintf(b, sizeof b, "[%zu]", i);

    return path_put(r, b, (size_t)n);
}

/* The current path's line, kept from its first record (a key written
 * twice is refused before it gets here). */
static int record_line(reader *r, yaml_mark_t at)
{
    json_t *n;

    if (!r->lines || json_object_get(r->lines, path_str(r)))
        return 0;
    n = json_integer((json_int_t)at.line + 1);
    if (!n || json_object_set_new(r->lines, path_str(r), n) < 0)
        return CLI_YAML_NOMEM;
    return 0;
}

size_t cli_yaml_line(const json_t *lines, const char *path)
{
    size_t n = strlen(path);
    char *p = malloc(n + 1);
    size_t line = 0;

    if (!p)
        return 0;
    memcpy(p, path, n + 1);
    /* The path, then every prefix that ends before a '.' or a '[', the
     * longest first: a missing field's parent. */
    for (;;) {
        const json_t *v = json_object_get(lines, p);

        if (json_is_integer(v)) {
            line = (size_t)json_integer_value(v);
            break;
        }
        if (n == 0)
            break;
        while (n > 0 && p[n - 1] != '.' && p[n - 1] != '[')
            n--;
        if (n > 0)
            n--; /* the '.' or '[' */
        p[n] = '\0';
    }
    free(p);
    return line;
}

/* ---- scalars: the YAML 1.2 core schema ------------------------------------
 */

static int is_one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strcmp(s, *words) == 0)
            return 1;
    return 0;
}

static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const trues[] = {"true", "True", "TRUE", NULL};
static const char *const falses[] = {"false", "False", "FALSE", NULL};

static int all_of(const char *s, const char *set)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!strchr(set, *s))
            return 0;
    return 1;
}

#define DIGITS "0123456789"

/* [-+]?[0-9]+, 0o[0-7]+ or 0x[0-9a-fA-F]+: the base, or 0. */
static int int_base(const char *s)
{
    if (s[0] == '0' && s[1] == 'o')
        return all_of(s + 2, "01234567") ? 8 : 0;
    if (s[0] == '0' && s[1] == 'x')
        return all_of(s + 2, DIGITS "abcdefABCDEF") ? 16 : 0;
    if (*s == '-' || *s == '+')
        s++;
    return all_of(s, DIGITS) ? 10 : 0;
}

/* [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
static int is_float(const char *s)
{
    size_t whole = 0, frac = 0;

    if (*s == '-' || *s == '+')
        s++;
    while (*s >= '0' && *s <= '9')
        s++, whole++;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9')
            s++, frac++;
    }
    if (whole == 0 && frac == 0)
        return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        return all_of(s, DIGITS);
    }
    return *s == '\0';
}

static int is_special_float(const char *s)
{
    static const char *const words[] = {".inf", ".Inf", ".INF", ".nan",
                                        ".NaN", ".NAN", NULL};

    if (*s == '-' || *s == '+')
        s++;
    return is_one_of(s, words);
}

enum { AS_STR, AS_INT, AS_FLOAT, AS_BOOL, AS_NULL, AS_ANY };

/* The value of scalar text s as kind (AS_ANY: whatever the core schema
 * makes of a plain scalar), into *out; 1 when s is not of that kind. */
static int resolve(reader *r, json_t **out, const char *s, size_t n, int kind,
                   yaml_mark_t at)
{
    int base;

    *out = NULL;
    if (kind == AS_STR) {
        if (!(*out = json_stringn(s, n)))
            return fail(r, at, "text that is not UTF-8");
        return 0;
    }
    if (strlen(s) != n) /* a NUL in a plain scalar: text, or nothing */
        return kind == AS_ANY ? resolve(r, out, s, n, AS_STR, at) : 1;
    if ((kind == AS_ANY || kind == AS_NULL) && is_one_of(s, nulls))
        *out = json_null();
    else if ((kind == AS_ANY || kind == AS_BOOL) && is_one_of(s, trues))
        *out = json_true();
    else if ((kind == AS_ANY || kind == AS_BOOL) && is_one_of(s, falses))
        *out = json_false();
    else if ((kind == AS_ANY || kind == AS_INT || kind == AS_FLOAT) &&
             (base = int_base(s)) != 0) {
        long long v;
        char *end;

        errno = 0;
        v = strtoll(base == 10 ? s : s + 2, &end, base);
        if (errno == ERANGE || *end)
            return fail(r, at,
                        "%s is out of the range of an integer "
                        "(-2^63 to 2^63-1)",
                        s);
        *out = kind == AS_FLOAT ? json_real((double)v)
                                : json_integer((json_int_t)v);
    } else if ((kind == AS_ANY || kind == AS_FLOAT) && is_float(s)) {
        double v;

        errno = 0;
        v = strtod(s, NULL);
        if (errno == ERANGE && (v > 1 || v < -1))
            return fail(r, at, "%s is out of the range of a number", s);
        *out = json_real(v);
    } else if ((kind == AS_ANY || kind == AS_FLOAT) && is_special_float(s)) {
        return fail(r, at, "%s: JSON has no infinity or NaN", s);
    } else if (kind == AS_ANY) {
        return resolve(r, out, s, n, AS_STR, at);
    } else {
        return 1;
    }
    return *out ? 0 : CLI_YAML_NOMEM;
}

/* What a tag asks for: AS_ANY for none, -1 for a tag refused. */
static int tag_kind(const char *tag, int scalar)
{
    static const struct {
        const char *name;
        int kind, scalar;
    } tags[] = {{"str", AS_STR, 1},     {"int", AS_INT, 1},
                {"float", AS_FLOAT, 1}, {"bool", AS_BOOL, 1},
                {"null", AS_NULL, 1},   {"map", AS_ANY, 0},
                {"seq", AS_ANY, 0}};
    size_t i, plen = strlen(TAG_PREFIX);

    if (!tag)
        return AS_ANY;
    if (strcmp(tag, "!") == 0) /* non-specific: a scalar is text */
        return scalar ? AS_STR : AS_ANY;
    if (strncmp(tag, TAG_PREFIX, plen) != 0)
        return -1;
    for (i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (strcmp(tag + plen, tags[i].name) == 0 && tags[i].scalar == scalar)
            return tags[i].kind;
    return -1;
}

/* A tag as the user would write it: !!str for the standard ones. */
static const char *tag_shown(const char *tag, char *buf, size_t size)
{
    size_t plen = strlen(TAG_PREFIX);

    if (strncmp(tag, TAG_PREFIX, plen) == 0)
        snprintf(buf, size, "!!%.60s", tag + plen);
    else
        snprintf(buf, size, "%.60s", tag);
    return buf;
}

static int refuse_tag(reader *r, const char *tag, const char *what,
                      yaml_mark_t at)
{
    char b[80];

    /* A standard tag on the wrong kind of node (!!map on a sequence). */
    if (strcmp(tag, "!") != 0 &&
        (tag_kind(tag, 0) >= 0 || tag_kind(tag, 1) >= 0))
        return fail(r, at, "tag %s does not fit %s",
                    tag_shown(tag, b, sizeof b), what);
    return fail(r, at,
                "tag %s is not supported on %s: only the standard tags "
                "!!str, !!int, !!float, !!bool and !!null (on a scalar), "
                "!!seq and !!map are",
                tag_shown(tag, b, sizeof b), what);
}

static int scalar(reader *r, json_t **out, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    int kind = tag_kind(tag, 1), rc;
    char b[80];
    pctl_qbuf q;

    if (kind < 0)
        return refuse_tag(r, tag, "a scalar", ev->start_mark);
    if (kind == AS_ANY && ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        kind = AS_STR;
    rc = resolve(r, out, s, n, kind, ev->start_mark);
    if (rc == 1)
        return fail(r, ev->start_mark, "%s does not fit its tag %s",
                    pctl_quote(&q, s), tag_shown(tag, b, sizeof b));
    return rc;
}

/* ---- anchors --------------------------------------------------------------
 */

static const anchor *find_anchor(const reader *r, const char *name)
{
    size_t i = r->nanchors;

    while (i-- > 0) /* the latest of a name wins */
        if (strcmp(r->anchors[i].name, name) == 0)
            return &r->anchors[i];
    return NULL;
}

static int add_anchor(reader *r, const char *name, json_t *v, shape sh)
{
    anchor *a;

    if (r->nanchors == r->acap) {
        size_t cap = r->acap ? r->acap * 2 : 8;

        if (!(a = realloc(r->anchors, cap * sizeof *a)))
            return CLI_YAML_NOMEM;
        r->anchors = a;
        r->acap = cap;
    }
    a = &r->anchors[r->nanchors];
    if (!(a->name = strdup(name)))
        return CLI_YAML_NOMEM;
    a->value = json_incref(v);
    a->nodes = sh.nodes;
    a->depth = sh.depth;
    r->nanchors++;
    return 0;
}

static int alias(reader *r, json_t **out, shape *sh, const yaml_event_t *ev,
                 int depth)
{
    const char *name = (const char *)ev->data.alias.anchor;
    const anchor *a = find_anchor(r, name);

    if (!a)
        return fail(r, ev->start_mark,
                    "alias *%.60s names no anchor (&%.60s) written before it",
                    name, name);
    if (a->nodes > CLI_YAML_ALIAS_MAX - r->alias_nodes)
        return fail(r, ev->start_mark,
                    "aliases would add more than %d values to the document; "
                    "write it with fewer of them",
                    CLI_YAML_ALIAS_MAX);
    if (depth + a->depth > PCTL_DEF_MAX_DEPTH)
        return fail(r, ev->start_mark, "nesting deeper than %d levels",
                    PCTL_DEF_MAX_DEPTH);
    r->alias_nodes += a->nodes;
    sh->nodes = a->nodes;
    sh->depth = a->depth;
    *out = json_deep_copy(a->value);
    return *out ? 0 : CLI_YAML_NOMEM;
}

/* ---- nodes ----------------------------------------------------------------
 */

static int node(reader *r, json_t **out, shape *sh, yaml_event_t *ev,
                int depth);

/* A mapping's key: text only. */
static int key_text(reader *r, json_t **key, yaml_event_t *ev)
{
    static const char *const kinds[] = {"null", "a boolean", "a number"};
    const char *what;
    json_t *k = NULL;
    char *text;
    int rc;

    if (ev->type == YAML_MAPPING_START_EVENT ||
        ev->type == YAML_SEQUENCE_START_EVENT)
        return fail(r, ev->start_mark,
                    "a key must be text, not a mapping or a sequence");
    if (ev->type == YAML_ALIAS_EVENT)
        return fail(r, ev->start_mark, "a key must be text, not an alias");
    if ((rc = scalar(r, &k, ev)) < 0)
        return rc;
    if (!json_is_string(k)) {
        what = json_is_null(k)      ? kinds[0]
               : json_is_boolean(k) ? kinds[1]
                                    : kinds[2];
        json_decref(k);
        return fail(r, ev->start_mark,
                    "key %.60s is %s, not text: quote it (\"%.60s\") to use "
                    "it as a name",
                    ev->data.scalar.value, what, ev->data.scalar.value);
    }
    text = (char *)json_string_value(k);
    if (strlen(text) != json_string_length(k)) {
        json_decref(k);
        return fail(r, ev->start_mark, "a key may not hold a NUL character");
    }
    if (strcmp(text, "<<") == 0 &&
        ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        json_decref(k);
        return fail(r, ev->start_mark,
                    "merge keys (<<) are not supported: write the fields "
                    "out, or give the whole value an alias (*name)");
    }
    *key = k;
    return 0;
}

static int mapping(reader *r, json_t *obj, shape *sh, int depth)
{
    size_t mark = r->path.len;
    yaml_event_t ev;
    json_t *key, *v;
    shape csh;
    int rc;

    for (;;) {
        key = v = NULL;
        if ((rc = next(r, &ev)) < 0)
            return rc;
        if (ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        rc = key_text(r, &key, &ev);
        if (rc == 0 && json_object_get(obj, json_string_value(key))) {
            pctl_qbuf q;
            size_t first;

            if ((rc = path_key(r, json_string_value(key))) == 0) {
                first = cli_yaml_line(r->lines, path_str(r));
                rc = first ? fail(r, ev.start_mark,
                                  "duplicate key %s (first at line %zu)",
                                  pctl_quote(&q, json_string_value(key)), first)
                           : fail(r, ev.start_mark, "duplicate key %s",
                                  pctl_quote(&q, json_string_value(key)));
            }
        } else if (rc == 0 && (rc = path_key(r, json_string_value(key))) == 0) {
            rc = record_line(r, ev.start_mark);
        }
        yaml_event_delete(&ev);
        if (rc == 0)
            rc = next(r, &ev);
        if (rc == 0) {
            rc = node(r, &v, &csh, &ev, depth);
            yaml_event_delete(&ev);
        }
        if (rc == 0) {
            sh->nodes += csh.nodes;
            if (csh.depth + 1 > sh->depth)
                sh->depth = csh.depth + 1;
            if (json_object_set_new(obj, json_string_value(key), v) < 0)
                rc = CLI_YAML_NOMEM;
        }
        json_decref(key);
        if (rc < 0)
            return rc;
        path_back(r, mark);
    }
}

static int sequence(reader *r, json_t *arr, shape *sh, int depth)
{
    size_t mark = r->path.len, i;
    yaml_event_t ev;
    json_t *v;
    shape csh;
    int rc;

    for (i = 0;; i++) {
        if ((rc = next(r, &ev)) < 0)
            return rc;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        rc = path_index(r, i);
        if (rc == 0)
            rc = record_line(r, ev.start_mark);
        if (rc == 0)
            rc = node(r, &v, &csh, &ev, depth);
        yaml_event_delete(&ev);
        if (rc < 0)
            return rc;
        sh->nodes += csh.nodes;
        if (csh.depth + 1 > sh->depth)
            sh->depth = csh.depth + 1;
        if (json_array_append_new(arr, v) < 0)
            return CLI_YAML_NOMEM;
        path_back(r, mark);
    }
}

/* The node that starts with ev (the caller's to delete), at depth
 * mappings and sequences below the top. */
static int node(reader *r, json_t **out, shape *sh, yaml_event_t *ev, int depth)
{
    const char *anchor_name = NULL, *tag = NULL;
    json_t *v = NULL;
    int rc;

    *out = NULL;
    sh->nodes = 1;
    sh->depth = 0;
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        return alias(r, out, sh, ev, depth);
    case YAML_SCALAR_EVENT:
        anchor_name = (const char *)ev->data.scalar.anchor;
        rc = scalar(r, &v, ev);
        break;
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT: {
        int map = ev->type == YAML_MAPPING_START_EVENT;

        anchor_name = (const char *)(map ? ev->data.mapping_start.anchor
                                         : ev->data.sequence_start.anchor);
        tag = (const char *)(map ? ev->data.mapping_start.tag
                                 : ev->data.sequence_start.tag);
        if (tag_kind(tag, 0) < 0 ||
            (tag && strcmp(tag, "!") != 0 &&
             strcmp(tag, map ? TAG_PREFIX "map" : TAG_PREFIX "seq") != 0))
            return refuse_tag(r, tag, map ? "a mapping" : "a sequence",
                              ev->start_mark);
        if (depth + 1 > PCTL_DEF_MAX_DEPTH)
            return fail(r, ev->start_mark, "nesting deeper than %d levels",
                        PCTL_DEF_MAX_DEPTH);
        sh->depth = 1;
        if (!(v = map ? json_object() : json_array()))
            return CLI_YAML_NOMEM;
        rc = map ? mapping(r, v, sh, depth + 1) : sequence(r, v, sh, depth + 1);
        break;
    }
    default:
        return fail(r, ev->start_mark, "a value was expected here");
    }
    if (rc == 0 && anchor_name)
        rc = add_anchor(r, anchor_name, v, *sh);
    if (rc < 0) {
        json_decref(v);
        return rc;
    }
    *out = v;
    return 0;
}

/* ---- the document ---------------------------------------------------------
 */

/* Takes an event of the expected type, else fails with why. */
static int expect(reader *r, yaml_event_type_t type, yaml_event_t *ev,
                  const char *why)
{
    int rc = next(r, ev);

    if (rc == 0 && ev->type != type) {
        rc = fail(r, ev->start_mark, "%s", why);
        yaml_event_delete(ev);
    }
    return rc;
}

static int document(reader *r, json_t **out)
{
    yaml_event_t ev;
    shape sh;
    int rc;

    if ((rc = expect(r, YAML_STREAM_START_EVENT, &ev, "no stream")) < 0)
        return rc;
    yaml_event_delete(&ev);
    if ((rc = next(r, &ev)) < 0)
        return rc;
    if (ev.type != YAML_DOCUMENT_START_EVENT) {
        rc = fail(r, ev.start_mark,
                  "no document: the file holds nothing "
                  "but blank lines and comments");
        yaml_event_delete(&ev);
        return rc;
    }
    yaml_event_delete(&ev);
    if ((rc = next(r, &ev)) < 0)
        return rc;
    if ((rc = record_line(r, ev.start_mark)) == 0)
        rc = node(r, out, &sh, &ev, 0);
    yaml_event_delete(&ev);
    if (rc == 0)
        rc = expect(r, YAML_DOCUMENT_END_EVENT, &ev, "the document goes on");
    if (rc == 0) {
        yaml_event_delete(&ev);
        rc = next(r, &ev);
    }
    if (rc == 0) {
        if (ev.type == YAML_DOCUMENT_START_EVENT)
            rc = fail(r, ev.start_mark,
                      "a second document: a file holds one definition");
        else if (ev.type != YAML_STREAM_END_EVENT)
            rc = fail(r, ev.start_mark, "the stream goes on");
        yaml_event_delete(&ev);
    }
    if (rc < 0) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

int cli_yaml_read(json_t **out, json_t **lines, const char *text, size_t len,
                  const char *origin, cli_yaml_error *err)
{
    reader r;
    size_t i;
    int rc;

    *out = NULL;
    if (lines)
        *lines = NULL;
    memset(err, 0, sizeof *err);
    if (len > PCTL_DEF_MAX_BYTES) {
        err->type = "Too long";
        snprintf(err->msg, sizeof err->msg,
                 "definition is %zu bytes; the limit is %d", len,
                 PCTL_DEF_MAX_BYTES);
        return CLI_YAML_INVALID;
    }
    memset(&r, 0, sizeof r);
    r.text = text;
    r.len = len;
    r.origin = origin;
    r.err = err;
    if (!yaml_parser_initialize(&r.p))
        return CLI_YAML_NOMEM;
    yaml_parser_set_input_string(&r.p, (const unsigned char *)text, len);
    if (!(r.lines = json_object())) {
        rc = CLI_YAML_NOMEM;
        goto done;
    }
    rc = document(&r, out);
done:
    for (i = 0; i < r.nanchors; i++) {
        free(r.anchors[i].name);
        json_decref(r.anchors[i].value);
    }
    free(r.anchors);
    pctl_buf_free(&r.path);
    yaml_parser_delete(&r.p);
    if (rc == 0 && lines) {
        *lines = r.lines;
        r.lines = NULL;
    }
    json_decref(r.lines);
    return rc;
}
