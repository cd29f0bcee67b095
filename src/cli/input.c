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

#include "cli/yaml.h"

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
    if (rc || !is_yaml(path, d->json, d->len))
        return rc;
    rc = cli_yaml_read(&v, &d->lines, d->json, d->len, d->origin, &e);
    free(d->json);
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
    json_decref(d->lines);
    json_decref(d->refusal);
    memset(d, 0, sizeof(*d));
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
    return doc;
}
