/*
 * input.c - what validate and apply read: a file, or standard input for
 * "-", whole into memory for the library, a definition in JSON or YAML
 * (YAML handed on as the same value in JSON, with the line of each node
 * for the errors), and the extra task kinds.  (import streams its bundle
 * instead: cmd_import.c.)
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/yaml/yaml.h"
#include "core/def.h"

/* Far above the library's own limit on a definition, so the library is the
 * one to explain the limit; this only stops reading /dev/zero forever. */
#define CLI_INPUT_MAX ((size_t)64 * 1024 * 1024)

int cli_read_input(char **out, size_t *len, const char *path)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    cli_buf b = CLI_BUF_INIT;
    char chunk[65536];
    size_t n;

    *out = NULL;
    *len = 0;
    if (!f) {
        cli_errorf("cannot read \"%s\": %s", path, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        /* Input too large is input refused, exit 2 like any other (a
         * smaller oversize definition or bundle is the library's EINVAL). */
        if (b.len + n > CLI_INPUT_MAX) {
            cli_errorf("cannot read \"%s\": larger than %zu MiB, the most "
                       "planctl reads",
                       is_stdin ? "<stdin>" : path, CLI_INPUT_MAX >> 20);
            cli_buf_free(&b);
            if (!is_stdin)
                fclose(f);
            return CLI_EXIT_USAGE;
        }
        cli_buf_addn(&b, chunk, n);
    }
    int err = ferror(f) ? errno : 0;
    if (!is_stdin)
        fclose(f);
    if (err) {
        cli_errorf("cannot read \"%s\": %s", is_stdin ? "<stdin>" : path,
                   strerror(err));
        cli_buf_free(&b);
        return CLI_EXIT_ERROR;
    }
    if (!b.s)
        cli_buf_add(&b, "");
    *out = b.s;
    *len = b.len;
    return 0;
}

/* The extra kinds: every --kind, then PLANCTL_KINDS split at commas (empty
 * entries skipped), as a NULL-terminated array pointing into *storage.
 * Free both with free(). */
const char **cli_extra_kinds(const cli_args *a, char **storage)
{
    const char *env = getenv("PLANCTL_KINDS");
    const char *const *given;
    size_t n, i, w = 0;
    const char **v;
    char *tok, *save = NULL;

    given = cli_arg_list(a, "kind", &n);
    *storage = strdup(env ? env : "");
    v = calloc(n + strlen(env ? env : "") / 2 + 2, sizeof(*v));
    if (!*storage || !v)
        cli_oom();
    for (i = 0; i < n; i++)
        v[w++] = given[i];
    for (tok = strtok_r(*storage, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save))
        v[w++] = tok;
    v[w] = NULL;
    return v;
}

/* ---- definitions: JSON or YAML ------------------------------------------ */

/* Whether path names a file by extension e (".yaml"), in any case. */
static int has_ext(const char *path, const char *e)
{
    size_t n = strlen(path), m = strlen(e);
    return n > m && strcasecmp(path + n - m, e) == 0;
}

/* YAML by the name (.yaml, .yml), JSON by the name (.json); any other
 * name, and standard input, by the content: JSON when it starts with '{'
 * or '[' (after blank space and a byte order mark) or holds nothing else,
 * YAML otherwise. */
static int is_yaml(const char *path, const char *text, size_t len)
{
    size_t i = 0;

    if (has_ext(path, ".yaml") || has_ext(path, ".yml"))
        return 1;
    if (has_ext(path, ".json"))
        return 0;
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        i = 3;
    while (i < len && strchr(" \t\r\n", text[i]))
        i++;
    return i < len && text[i] != '{' && text[i] != '[';
}

/* The validate document of a file that is not YAML: one error. */
static json_t *refusal_doc(const cli_yaml_error *e)
{
    json_t *doc = json_pack(
        "{s:i, s:b, s:[{s:s, s:s, s:s, s:n, s:o}]}", "schema", 1, "valid", 0,
        "errors", "path", "", "type", e->type, "message", e->msg, "hint",
        "line", e->line ? json_integer((json_int_t)e->line) : json_null());
    if (!doc)
        cli_oom();
    return doc;
}

int cli_definition_read(cli_definition *d, const char *path)
{
    json_t *v = NULL;
    cli_yaml_error e;

    memset(d, 0, sizeof(*d));
    d->origin = strcmp(path, "-") == 0 ? "<stdin>" : path;
    int rc = cli_read_input(&d->json, &d->len, path);
    /* Too large to be a definition: refused as a file, as one too large
     * to read is (the library would say it without the file's name). */
    if (rc == 0 && d->len > PCTL_DEF_MAX_BYTES) {
        cli_errorf("\"%s\" is %zu bytes; a definition may have at most %d "
                   "(%d MiB)",
                   d->origin, d->len, PCTL_DEF_MAX_BYTES,
                   PCTL_DEF_MAX_BYTES >> 20);
        return CLI_EXIT_USAGE;
    }
    if (rc || !is_yaml(path, d->json, d->len))
        return rc;
    rc = cli_yaml_read(&v, &d->lines, d->json, d->len, d->origin, &e);
    d->yaml = d->json;
    d->json = NULL;
    d->len = 0;
    if (rc == CLI_YAML_NOMEM)
        cli_oom();
    if (rc < 0) {
        d->refusal = refusal_doc(&e);
        return 0;
    }
    /* The library takes JSON: the same value, written compactly (JSON is
     * what is stored). */
    d->json = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(v);
    if (!d->json)
        cli_oom();
    d->len = strlen(d->json);
    return 0;
}

void cli_definition_free(cli_definition *d)
{
    free(d->json);
    free(d->yaml);
    json_decref(d->lines);
    json_decref(d->refusal);
    memset(d, 0, sizeof(*d));
}

/* ---- hints for what YAML and JSON users get wrong ------------------------ */

/* The value at an error's path (plans.deploy.phases[0].name) in v, or
 * NULL.  A key holding '.' or '[' is not found: no hint then. */
static const json_t *at_path(const json_t *v, const char *path)
{
    while (v && *path) {
        if (*path == '[') {
            char *end;
            unsigned long i = strtoul(path + 1, &end, 10);
            if (*end != ']')
                return NULL;
            v = json_array_get(v, i);
            path = end + 1;
        } else {
            size_t n = strcspn(path, ".[");
            char key[256];
            if (n >= sizeof(key))
                return NULL;
            memcpy(key, path, n);
            key[n] = '\0';
            v = json_object_get(v, key);
            path += n;
        }
        if (*path == '.')
            path++;
    }
    return v;
}

/* The scalar written after "key:" on line `line` of the YAML text (its
 * comment and blanks left out), into buf; "" when the line does not read
 * so (a flow collection, a value on the next line). */
static void yaml_scalar(char *buf, size_t size, const char *text, size_t line,
                        const char *key)
{
    const char *p = text, *end, *k;
    size_t klen = strlen(key), n;

    buf[0] = '\0';
    for (size_t l = 1; p && l < line; l++)
        if ((p = strchr(p, '\n')) != NULL)
            p++;
    if (!p)
        return;
    end = p + strcspn(p, "\n");
    for (k = p; k + klen < end; k++)
        if (!strncmp(k, key, klen) && k[klen] == ':')
            break;
    if (k + klen >= end)
        return;
    p = k + klen + 1;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    n = strcspn(p, "#\n");
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
        n--;
    if (n == 0 || n >= size || strchr("\"'[{", *p))
        return;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

/* The last member name of a path ("version" of "version", "required" of
 * "parameters[0].required"), or "". */
static const char *last_key(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *k = dot ? dot + 1 : path;
    return strchr(k, '[') ? "" : k;
}

/* Whether a text is a word YAML 1.1 read as a boolean and 1.2 reads as
 * text; *truth is which boolean it meant. */
static int yaml11_bool(const char *s, int *truth)
{
    static const char *const yes[] = {"yes", "y", "on"};
    static const char *const no[] = {"no", "n", "off"};
    for (size_t i = 0; i < 3; i++) {
        if (!strcasecmp(s, yes[i]))
            return *truth = 1, 1;
        if (!strcasecmp(s, no[i]))
            return *truth = 0, 1;
    }
    return 0;
}

/* Appends to paths (an array) the path of every node of v that matches
 * the path pattern, where "[]" matches any index, in document order. */
static void find_like(json_t *paths, const json_t *v, const char *pat,
                      cli_buf *prefix)
{
    if (!v)
        return;
    if (!*pat) {
        json_array_append_new(paths, json_string(cli_buf_str(prefix)));
        return;
    }
    if (*pat == '.')
        pat++;
    size_t keep = prefix->len;
    if (pat[0] == '[' && pat[1] == ']') {
        for (size_t i = 0; i < json_array_size(v); i++) {
            cli_buf_addf(prefix, "[%zu]", i);
            find_like(paths, json_array_get(v, i), pat + 2, prefix);
            prefix->len = keep;
            if (prefix->s)
                prefix->s[keep] = '\0';
        }
        return;
    }
    if (pat[0] == '[') {
        char *end;
        unsigned long i = strtoul(pat + 1, &end, 10);
        if (*end != ']')
            return;
        cli_buf_addf(prefix, "[%lu]", i);
        find_like(paths, json_array_get(v, i), end + 1, prefix);
        prefix->len = keep;
        if (prefix->s)
            prefix->s[keep] = '\0';
        return;
    }
    size_t n = strcspn(pat, ".[");
    char key[256];
    if (n >= sizeof(key) || !json_is_object(v))
        return;
    memcpy(key, pat, n);
    key[n] = '\0';
    const json_t *child = json_object_get(v, key);
    if (!child)
        return;
    cli_buf_addf(prefix, "%s%s", keep ? "." : "", key);
    find_like(paths, child, pat + n, prefix);
    prefix->len = keep;
    if (prefix->s)
        prefix->s[keep] = '\0';
}

/* Where the first of a duplicated name is: the first node before path
 * with the same value in the same list, by its line in YAML, else by its
 * path.
 * Returns 0 when there is none to name. */
static int first_of(char *buf, size_t size, const cli_definition *d,
                    const json_t *doc, const char *path, const json_t *value)
{
    char pat[512];
    size_t w = 0;
    int found = 0;

    /* The pattern: the path with its last index as any (names are
     * unique within one list: the steps of one phase). */
    const char *last = strrchr(path, '[');
    const char *close = last ? strchr(last, ']') : NULL;
    if (!close || strlen(path) + 1 > sizeof(pat))
        return 0;
    w = (size_t)(last - path);
    memcpy(pat, path, w);
    snprintf(pat + w, sizeof(pat) - w, "[]%s", close + 1);
    json_t *paths = json_array();
    cli_buf prefix = CLI_BUF_INIT;
    if (!paths)
        cli_oom();
    find_like(paths, doc, pat, &prefix);
    cli_buf_free(&prefix);
    for (size_t i = 0; i < json_array_size(paths) && !found; i++) {
        const char *other = json_string_value(json_array_get(paths, i));
        if (!other || !strcmp(other, path))
            break; /* document order: nothing before this one */
        if (!json_equal(at_path(doc, other), (json_t *)value))
            continue;
        size_t line = d->lines ? cli_yaml_line(d->lines, other) : 0;
        if (line)
            snprintf(buf, size, "the first is at line %zu", line);
        else
            snprintf(buf, size, "the first is %s", other);
        found = 1;
    }
    json_decref(paths);
    return found;
}

/* A hint for error e where the library gave none: what YAML made of an
 * unquoted number or a YAML 1.1 boolean, and where the first of a
 * duplicated name is. */
static void add_hint(json_t *e, const cli_definition *d, const json_t *doc)
{
    const char *path = cli_jstr(e, "path"), *type = cli_jstr(e, "type");
    const char *msg = cli_jstr(e, "message");
    char hint[256] = "", text[128];
    int truth;

    if (!path || !path[0] || !type || !msg || cli_jstr(e, "hint"))
        return;
    const json_t *v = at_path(doc, path);
    if (!v)
        return;
    if (d->yaml && !strcmp(type, "Invalid type") &&
        strstr(msg, "must be a string") && json_is_number(v)) {
        size_t line = cli_yaml_line(d->lines, path);
        yaml_scalar(text, sizeof(text), d->yaml, line, last_key(path));
        if (text[0])
            snprintf(hint, sizeof(hint),
                     "YAML reads %s unquoted as a number; quote it: \"%s\"",
                     text, text);
        else
            snprintf(hint, sizeof(hint),
                     "YAML reads it unquoted as a number; quote it");
    } else if (d->yaml && !strcmp(type, "Invalid type") &&
               strstr(msg, "must be a boolean") && json_is_string(v) &&
               yaml11_bool(json_string_value(v), &truth)) {
        snprintf(hint, sizeof(hint), "YAML 1.2 reads %s as text; write %s",
                 json_string_value(v), truth ? "true" : "false");
    } else if (!strcmp(type, "Duplicate value") &&
               !strcmp(last_key(path), "name")) {
        first_of(hint, sizeof(hint), d, doc, path, v);
    }
    if (hint[0] && json_object_set_new(e, "hint", json_string(hint)) < 0)
        cli_oom();
}

/* For sorting a YAML file's errors by line, the library's order among
 * those of one line (qsort is not stable).  Errors without a line
 * (about the whole file) come first. */
typedef struct by_line {
    size_t line, index;
    json_t *e;
} by_line;

static int by_line_cmp(const void *a, const void *b)
{
    const by_line *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void sort_by_line(json_t *errors)
{
    size_t n = json_array_size(errors);
    by_line *v = cli_xmalloc((n ? n : 1) * sizeof(*v));
    int64_t line;

    for (size_t i = 0; i < n; i++) {
        v[i].e = json_incref(json_array_get(errors, i));
        v[i].line = cli_jint(&line, v[i].e, "line") ? (size_t)line : 0;
        v[i].index = i;
    }
    qsort(v, n, sizeof(*v), by_line_cmp);
    json_array_clear(errors);
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new(errors, v[i].e) < 0)
            cli_oom();
    free(v);
}

json_t *cli_definition_check(int *rc, const cli_definition *d,
                             const char *const *kinds)
{
    char *out = NULL;
    json_t *doc, *e;
    size_t i;

    *rc = 0;
    if (d->refusal)
        return json_incref(d->refusal);
    *rc = planctl_definition_check(&out, d->json, d->len, d->origin, kinds);
    if (*rc < 0)
        return NULL;
    doc = cli_json_parse(out);
    planctl_free(out);
    if (!doc) {
        *rc = PLANCTL_ERROR;
        return NULL;
    }
    /* Each error's line in a YAML file; none in JSON (whose syntax errors
     * say theirs in the message), nor for what concerns the whole file. */
    json_array_foreach(json_object_get(doc, "errors"), i, e)
    {
        const char *path = cli_jstr(e, "path");
        size_t line =
            d->lines && path && path[0] ? cli_yaml_line(d->lines, path) : 0;
        if (json_object_set_new(e, "line",
                                line ? json_integer((json_int_t)line)
                                     : json_null()) < 0)
            cli_oom();
    }
    /* The hints need the definition's value; JSON that does not parse has
     * said so in its one error. */
    json_t *value = json_loadb(d->json, d->len, JSON_DECODE_ANY, NULL);
    json_array_foreach(json_object_get(doc, "errors"), i, e)
        add_hint(e, d, value);
    json_decref(value);
    /* In a YAML file, in the order of its lines, as an editor shows them;
     * the library's fixed order among the errors of one line. */
    if (d->lines)
        sort_by_line(json_object_get(doc, "errors"));
    return doc;
}
