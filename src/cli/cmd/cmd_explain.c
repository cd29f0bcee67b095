/* cmd_explain.c - `planctl explain [FIELD]`: the reference of a
 * definition's fields, as kubectl explain, from the tables the validator's
 * are tied to (core/schema.h). */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

#include "core/def.h"
#include "core/schema.h"

extern const cli_command cli_cmd_explain;

static const char *const pos[] = {"[FIELD]", NULL};

static const cli_flag flags[] = {{NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl explain",
    "planctl explain plans.phases.steps",
    "planctl explain plans.phases.steps.retry.backoff",
    "planctl explain tasks.spec.shell",
    "planctl explain parameters -o json",
    NULL};

/* The field whose value is node (a node's field in its parent), or NULL
 * for the definition itself. */
static const pctl_schema_field *field_of(const pctl_schema_node *node)
{
    size_t n;
    const pctl_schema_node *nodes = pctl_def_schema_nodes(&n);
    const pctl_schema_field *f;

    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; (f = pctl_def_schema_field(&nodes[i], j)); j++)
            if (f->child && strcmp(f->child, node->path) == 0)
                return f;
    return NULL;
}

/* text, its lines joined, wrapped at 76 columns with indent spaces before
 * each line. */
static void wrap(FILE *f, const char *text, int indent)
{
    int col = 0, gap = 1;

    while (*text) {
        size_t len;

        while (*text == ' ' || *text == '\n')
            text++;
        len = strcspn(text, " \n");
        if (!len)
            break;
        if (col > 0 && col + gap + (int)len > 76) {
            fputc('\n', f);
            col = 0;
        }
        if (col == 0)
            col = fprintf(f, "%*s", indent, "");
        else
            col += fprintf(f, "%*s", gap, "");
        col += fprintf(f, "%.*s", (int)len, text);
        /* Two spaces after a full stop, as the texts are written. */
        gap = text[len - 1] == '.' && text[len] == ' ' && text[len + 1] == ' '
                  ? 2
                  : 1;
        text += len;
    }
    if (col)
        fputc('\n', f);
}

/* The text of s with its lines joined, in a new string. */
static char *joined(const char *text)
{
    cli_buf b = CLI_BUF_INIT;
    const char *s = text;

    for (; s && *s; s++) {
        if (*s == '\n') {
            if (s[1])
                cli_buf_add(&b, s > text && s[-1] == '.' ? "  " : " ");
        } else {
            cli_buf_addn(&b, s, 1);
        }
    }
    cli_buf_add(&b, "");
    return b.s;
}

/* The whole description of a field: its line, then its details. */
static char *field_text(const pctl_schema_field *fl, int with_limit)
{
    cli_buf b = CLI_BUF_INIT;

    cli_buf_addf(&b, "%s.", fl->description);
    if (fl->details)
        cli_buf_addf(&b, "  %s", fl->details);
    if (with_limit && fl->max)
        cli_buf_addf(&b, "  At most %zu.", fl->max);
    if (strcmp(fl->type, "duration") == 0)
        cli_buf_addf(&b, "  %s", pctl_def_schema_duration_text);
    return b.s;
}

/* ---- text ---------------------------------------------------------------- */

static void print_head(const char *path, const pctl_schema_field *fl)
{
    printf("FIELD:    %s\n", path);
    printf("TYPE:     %s\n", fl->type);
    printf("REQUIRED: %s\n", fl->required ? "yes" : "no");
    if (fl->def)
        printf("DEFAULT:  %s\n", fl->def);
    if (fl->max)
        printf("LIMIT:    at most %zu\n", fl->max);
}

static void print_fields(const pctl_schema_node *node)
{
    const pctl_schema_field *fl;
    int wname = 4, wtype = 4, wdef = 7;
    int kinds = node->src == PCTL_SCHEMA_SRC_KINDS;

    for (size_t i = 0; (fl = pctl_def_schema_field(node, i)); i++) {
        int l;

        if ((l = (int)strlen(fl->name)) > wname)
            wname = l;
        if ((l = (int)strlen(fl->type)) > wtype)
            wtype = l;
        if (fl->def && (l = (int)strlen(fl->def)) > wdef)
            wdef = l;
    }
    printf("\n%s:\n", kinds ? "KINDS" : "FIELDS");
    if (kinds) {
        for (size_t i = 0; (fl = pctl_def_schema_field(node, i)); i++)
            printf("  %-*s  %s\n", wname, fl->name, fl->description);
        return;
    }
    printf("  %-*s  %-*s  %-8s  %-*s  %s\n", wname, "NAME", wtype, "TYPE",
           "REQUIRED", wdef, "DEFAULT", "DESCRIPTION");
    for (size_t i = 0; (fl = pctl_def_schema_field(node, i)); i++) {
        char limit[48] = "";

        if (fl->max)
            snprintf(limit, sizeof limit, " (at most %zu)", fl->max);
        printf("  %-*s  %-*s  %-8s  %-*s  %s%s\n", wname, fl->name, wtype,
               fl->type, fl->required ? "yes" : "no", wdef,
               fl->def ? fl->def : "-", fl->description, limit);
    }
}

static void print_text(const pctl_schema_node *node,
                       const pctl_schema_field *leaf)
{
    const pctl_schema_field *fl = leaf ? leaf : field_of(node);
    char *text;

    if (leaf) {
        /* The node is the one holding the field. */
        char path[256];

        snprintf(path, sizeof path, "%s%s%s", node->path,
                 node->path[0] ? "." : "", leaf->name);
        print_head(path, leaf);
        text = field_text(leaf, 0);
        putchar('\n');
        wrap(stdout, text, 4);
        free(text);
        return;
    }
    if (!fl) {
        printf("DEFINITION (object)\n\n");
    } else {
        print_head(node->path, fl);
        putchar('\n');
        text = field_text(fl, 0);
        wrap(stdout, text, 4);
        free(text);
        putchar('\n');
    }
    text = joined(node->description);
    wrap(stdout, text, 4);
    free(text);
    print_fields(node);
    if (!fl)
        printf("\nSee 'planctl explain FIELD' for one of them (such as "
               "plans.phases.steps),\nand planctl-definition(5) for the "
               "whole format.\n");
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t *field_json(const pctl_schema_field *fl, const char *path)
{
    char *text = field_text(fl, 1);
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:b, s:s?, s:o, s:s, s:s?}", "name", fl->name, "path",
        path, "type", fl->type, "required", fl->required, "default", fl->def,
        "max", fl->max ? json_integer((json_int_t)fl->max) : json_null(),
        "description", text, "node", fl->child);

    free(text);
    if (!o)
        cli_oom();
    return o;
}

static int print_json(const pctl_schema_node *node,
                      const pctl_schema_field *leaf)
{
    const pctl_schema_field *fl = leaf ? leaf : field_of(node);
    char path[256];
    json_t *doc, *fields;

    if (leaf)
        snprintf(path, sizeof path, "%s%s%s", node->path,
                 node->path[0] ? "." : "", leaf->name);
    else
        snprintf(path, sizeof path, "%s", node->path);
    if (fl) {
        doc = field_json(fl, path);
        json_object_del(doc, "node");
    } else {
        doc = json_pack("{s:s, s:s, s:s, s:b, s:n, s:n}", "name", "", "path",
                        "", "type", "object", "required", 1, "default", "max");
    }
    if (!doc)
        cli_oom();
    if (leaf) {
        json_object_set_new(doc, "title", json_null());
        json_object_set_new(doc, "fields", json_null());
    } else {
        char *text = joined(node->description);
        const char *desc =
            json_string_value(json_object_get(doc, "description"));
        cli_buf b = CLI_BUF_INIT;

        cli_buf_addf(&b, "%s%s%s", desc ? desc : "", desc ? "  " : "", text);
        free(text);
        json_object_set_new(doc, "description", json_string(b.s));
        cli_buf_free(&b);
        json_object_set_new(doc, "title", json_string(node->title));
        fields = json_array();
        for (size_t i = 0; (fl = pctl_def_schema_field(node, i)); i++) {
            char sub[256];

            snprintf(sub, sizeof sub, "%s%s%s", node->path,
                     node->path[0] ? "." : "", fl->name);
            json_array_append_new(fields, field_json(fl, sub));
        }
        json_object_set_new(doc, "fields", fields);
    }
    json_t *out = json_pack("{s:i}", "schema", 1);
    if (!out)
        cli_oom();
    json_object_update(out, doc);
    json_decref(doc);
    return cli_json_print_obj(out);
}

/* ---- the command --------------------------------------------------------- */

static int unknown(const char *path, const pctl_schema_node *at, size_t bad)
{
    const char *names[64];
    const pctl_schema_field *fl;
    size_t n = 0, len = strcspn(path + bad, ".");
    char word[128];
    const char *hint;

    snprintf(word, sizeof word, "%.*s", (int)len, path + bad);
    for (size_t i = 0; n < 64 && (fl = pctl_def_schema_field(at, i)); i++)
        names[n++] = fl->name;
    hint = word[0] ? cli_closest(word, names, n) : NULL;
    /* Below a field that holds no object: "name.x". */
    if (bad > 0) {
        const pctl_schema_node *node;
        const pctl_schema_field *leaf;
        size_t b2;
        char prefix[256];

        snprintf(prefix, sizeof prefix, "%.*s", (int)bad - 1, path);
        if (pctl_def_schema_resolve(prefix, &node, &leaf, &b2) && leaf) {
            cli_errorf("%s is of type %s: it has no field \"%s\". "
                       "See 'planctl explain %s'.",
                       prefix, leaf->type, word, prefix);
            return CLI_EXIT_USAGE;
        }
    }
    cli_buf b = CLI_BUF_INIT;
    if (!word[0])
        cli_buf_addf(&b, "invalid field path \"%s\": an empty segment.", path);
    else if (at->path[0])
        cli_buf_addf(&b, "unknown field \"%s\" in %s", word, at->path);
    else
        cli_buf_addf(&b, "unknown field \"%s\"", word);
    if (hint)
        cli_buf_addf(&b, "; did you mean \"%s\"?", hint);
    cli_buf_addf(&b, " See 'planctl explain%s%s'.", at->path[0] ? " " : "",
                 at->path);
    cli_errorf("%s", b.s);
    cli_buf_free(&b);
    return CLI_EXIT_USAGE;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *path = a->npos ? a->pos[0] : "";
    const pctl_schema_node *node;
    const pctl_schema_field *leaf;
    size_t bad;

    if (!pctl_def_schema_resolve(path, &node, &leaf, &bad))
        return unknown(path, node, bad);
    if (ctx->json)
        return print_json(node, leaf);
    print_text(node, leaf);
    return CLI_EXIT_OK;
}

void cli_explain_paths(cli_buf *b)
{
    size_t n;
    const pctl_schema_node *nodes = pctl_def_schema_nodes(&n);
    const pctl_schema_field *f;

    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; (f = pctl_def_schema_field(&nodes[i], j)); j++)
            cli_buf_addf(b, "%s%s%s%s", b->len ? " " : "", nodes[i].path,
                         nodes[i].path[0] ? "." : "", f->name);
}

const cli_command cli_cmd_explain = {
    "explain",
    "Describe the fields of a definition",
    "[FIELD]",
    "Describes a field of a definition and, for an object, each of its\n"
    "fields: type, whether it is required, default and what it is for.\n"
    "FIELD is a dotted path from the top of a definition, the names of\n"
    "plans and the positions of list entries left out: plans.phases.steps\n"
    "is the object of every step; plans.phases.steps.retry.backoff is one\n"
    "field.  Without FIELD: the top level.  The spec of a task depends on\n"
    "its kind: tasks.spec lists the built-in kinds, tasks.spec.shell and\n"
    "tasks.spec.Dummy their fields.  An unknown FIELD is a usage error\n"
    "(exit 2).  With -o json: {\"schema\":1, \"name\", \"path\", \"type\",\n"
    "\"required\", \"default\", \"max\", \"description\", \"title\",\n"
    "\"fields\"} (\"fields\": each field alike, null for a field that holds\n"
    "no object).  The whole format is planctl-definition(5).",
    pos,
    flags,
    examples,
    run};
