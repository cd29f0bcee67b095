/* cmd_definitions.c - `planctl definitions [NAME]`: the registered
 * definition versions and their plans, as a table; with NAME one version's
 * body, or with --diff the differences between two versions' bodies. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

static const char *const pos[] = {"[DEFINITION]", "[V2]", NULL};

static const cli_flag flags[] = {
    {"version", 0, CLI_FLAG_VALUE, 0, "V",
     "the version to show (default: the one registered last)"},
    {"diff", 0, CLI_FLAG_VALUE, 0, "V1 V2",
     "show how version V2's body differs from V1's"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl definitions",
    "planctl definitions -o json",
    "planctl definitions zookeeper",
    "planctl definitions zookeeper --version 0.2.0 -o yaml",
    "planctl definitions zookeeper --diff 0.2.0 0.3.0",
    NULL};

/* The most lines a body may have, and the most cells of the table of
 * common subsequences (the lines left once the common head and tail are
 * set aside, one side times the other), for --diff. */
#define DIFF_MAX_LINES 10000
#define DIFF_MAX_CELLS 25000000u

/* The lines of s, pointing into it (its newlines become NULs). */
typedef struct lines {
    char **v;
    size_t n;
} lines;

static void split_lines(lines *l, char *s)
{
    size_t cap = 16;
    l->v = cli_xmalloc(cap * sizeof *l->v);
    l->n = 0;
    while (*s) {
        char *nl = strchr(s, '\n');
        if (l->n == cap) {
            cap *= 2;
            char **grown = realloc(l->v, cap * sizeof *l->v);
            if (!grown)
                cli_oom();
            l->v = grown;
        }
        l->v[l->n++] = s;
        if (!nl)
            break;
        *nl = '\0';
        s = nl + 1;
    }
}

/* One line of the edit script: ' ' kept, '-' only in a, '+' only in b. */
typedef struct edit {
    char op;
    const char *text;
} edit;

/* Prints the hunks of script e[0..n) with three lines of context. */
static void print_hunks(const edit *e, size_t n)
{
    const size_t ctx = 3;
    size_t i = 0;
    while (i < n) {
        while (i < n && e[i].op == ' ')
            i++;
        if (i == n)
            break;
        /* The hunk: from ctx kept lines before the change to ctx after
         * the last change no further than 2 * ctx kept lines apart. */
        size_t start = i > ctx ? i - ctx : 0, end = i;
        while (end < n) {
            size_t kept = 0;
            while (end + kept < n && e[end + kept].op == ' ')
                kept++;
            if (end + kept == n || kept > 2 * ctx) {
                end += kept < ctx ? kept : ctx;
                break;
            }
            end += kept;
            while (end < n && e[end].op != ' ')
                end++;
        }
        size_t a0 = 0, b0 = 0, na = 0, nb = 0;
        for (size_t k = 0; k < start; k++) {
            a0 += e[k].op != '+';
            b0 += e[k].op != '-';
        }
        for (size_t k = start; k < end; k++) {
            na += e[k].op != '+';
            nb += e[k].op != '-';
        }
        /* diff(1)'s numbering: an empty side names the line before. */
        printf("@@ -%zu", na ? a0 + 1 : a0);
        if (na != 1)
            printf(",%zu", na);
        printf(" +%zu", nb ? b0 + 1 : b0);
        if (nb != 1)
            printf(",%zu", nb);
        printf(" @@\n");
        for (size_t k = start; k < end; k++)
            printf("%c%s\n", e[k].op, e[k].text);
        i = end;
    }
}

/* The body of name@version pretty-printed, as `definitions NAME` shows
 * it.  Returns 0 or the exit code after printing why. */
static int pretty_body(char **out, cli_ctx *ctx, const char *name,
                       const char *version)
{
    char *body = NULL;
    int rc = planctl_definition_body(&body, ctx->db, name, version);
    if (rc < 0)
        return cli_fail(ctx, rc);
    json_t *doc = cli_json_parse(body);
    planctl_free(body);
    if (!doc)
        return CLI_EXIT_ERROR;
    *out = json_dumps(doc, JSON_INDENT(2));
    json_decref(doc);
    if (!*out)
        cli_oom();
    return 0;
}

static int diff(cli_ctx *ctx, const char *name, const char *v1, const char *v2)
{
    char *ta = NULL, *tb = NULL;
    int rc = pretty_body(&ta, ctx, name, v1);
    if (rc == 0)
        rc = pretty_body(&tb, ctx, name, v2);
    if (rc) {
        free(ta);
        return rc;
    }
    lines a, b;
    split_lines(&a, ta);
    split_lines(&b, tb);

    /* The common head and tail need no table. */
    size_t head = 0, tail = 0;
    while (head < a.n && head < b.n && strcmp(a.v[head], b.v[head]) == 0)
        head++;
    while (tail < a.n - head && tail < b.n - head &&
           strcmp(a.v[a.n - 1 - tail], b.v[b.n - 1 - tail]) == 0)
        tail++;
    size_t m = a.n - head - tail, n = b.n - head - tail;

    if (a.n > DIFF_MAX_LINES || b.n > DIFF_MAX_LINES) {
        cli_errorf("%s@%s and %s@%s are too big to compare (%zu and %zu "
                   "lines; the limit is %d each); compare the output of "
                   "'planctl definitions %s --version V' with diff(1)",
                   name, v1, name, v2, a.n, b.n, DIFF_MAX_LINES, name);
        rc = CLI_EXIT_ERROR;
    } else if (m && n > DIFF_MAX_CELLS / m) {
        cli_errorf("%s@%s and %s@%s differ too much to compare (%zu and "
                   "%zu differing lines; the limit is %u for the two "
                   "multiplied); compare the output of 'planctl "
                   "definitions %s --version V' with diff(1)",
                   name, v1, name, v2, m, n, DIFF_MAX_CELLS, name);
        rc = CLI_EXIT_ERROR;
    } else if (m || n) {
        /* len[i][j]: the longest common subsequence of the middle lines
         * of a from i and of b from j (at most 10,000: 16 bits). */
        size_t w = n + 1;
        unsigned short *len = calloc((m + 1) * w, sizeof *len);
        edit *e = cli_xmalloc((a.n + b.n) * sizeof *e);
        size_t ne = 0;
        if (!len)
            cli_oom();
        for (size_t i = m; i-- > 0;)
            for (size_t j = n; j-- > 0;)
                len[i * w + j] =
                    strcmp(a.v[head + i], b.v[head + j]) == 0
                        ? (unsigned short)(len[(i + 1) * w + j + 1] + 1)
                    : len[(i + 1) * w + j] >= len[i * w + j + 1]
                        ? len[(i + 1) * w + j]
                        : len[i * w + j + 1];
        for (size_t k = 0; k < head; k++)
            e[ne++] = (edit){' ', a.v[k]};
        size_t i = 0, j = 0;
        while (i < m || j < n) {
            if (i < m && j < n && strcmp(a.v[head + i], b.v[head + j]) == 0) {
                e[ne++] = (edit){' ', a.v[head + i]};
                i++, j++;
            } else if (j == n ||
                       (i < m && len[(i + 1) * w + j] >= len[i * w + j + 1])) {
                e[ne++] = (edit){'-', a.v[head + i++]};
            } else {
                e[ne++] = (edit){'+', b.v[head + j++]};
            }
        }
        for (size_t k = a.n - tail; k < a.n; k++)
            e[ne++] = (edit){' ', a.v[k]};
        printf("--- %s@%s\n+++ %s@%s\n", name, v1, name, v2);
        print_hunks(e, ne);
        free(len);
        free(e);
    }
    free(a.v);
    free(b.v);
    free(ta);
    free(tb);
    return rc;
}

/* Refuses a NAME that is not registered, naming those that are (with the
 * closest first when one is close).  Returns 0 or the exit code. */
static int check_name(cli_ctx *ctx, const char *name)
{
    char *out = NULL;
    int rc = planctl_definitions_json(&out, ctx->db);
    if (rc < 0)
        return cli_fail(ctx, rc);
    json_t *doc = cli_json_parse(out);
    planctl_free(out);
    if (!doc)
        return CLI_EXIT_ERROR;
    json_t *defs = json_object_get(doc, "definitions");
    size_t n = json_array_size(defs), nnames = 0;
    const char **names = cli_xmalloc((n ? n : 1) * sizeof *names);
    for (size_t i = 0; i < n; i++) {
        const char *s = cli_jstr(json_array_get(defs, i), "name");
        /* Sorted by name: a repeat follows its first. */
        if (s && (nnames == 0 || strcmp(names[nnames - 1], s) != 0))
            names[nnames++] = s;
    }
    rc = 0;
    size_t i = 0;
    while (i < nnames && strcmp(names[i], name) != 0)
        i++;
    if (i == nnames && nnames == 0) {
        cli_errorf("definition \"%s\" is not registered, and none is; "
                   "register one with 'planctl apply -f FILE'",
                   name);
        rc = CLI_EXIT_NOTFOUND;
    } else if (i == nnames) {
        cli_buf msg = CLI_BUF_INIT;
        const char *best = cli_closest(name, names, nnames);
        cli_buf_add(&msg, "definition \"");
        cli_buf_add_clean(&msg, name);
        cli_buf_add(&msg, "\" is not registered");
        if (best)
            cli_buf_addf(&msg, " (did you mean \"%s\"?)", best);
        cli_buf_add(&msg, "; registered: ");
        for (size_t k = 0; k < nnames && k < 20; k++)
            cli_buf_addf(&msg, "%s%s", k ? ", " : "", names[k]);
        if (nnames > 20)
            cli_buf_addf(&msg, ", ... (%zu more; see 'planctl definitions')",
                         nnames - 20);
        cli_errorf("%s", cli_buf_str(&msg));
        cli_buf_free(&msg);
        rc = CLI_EXIT_NOTFOUND;
    }
    free(names);
    json_decref(doc);
    return rc;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *name = a->npos > 0 ? a->pos[0] : NULL;
    const char *version = cli_arg(a, "version");
    const char *v1 = cli_arg(a, "diff");
    const char *v2 = a->npos > 1 ? a->pos[1] : NULL;

    if (!name && (version || v1))
        return cli_usage_error(a->cmd, "--%s needs a DEFINITION",
                               version ? "version" : "diff");
    if (v2 && !v1)
        return cli_usage_error(a->cmd, "unexpected argument \"%s\"", v2);
    if (v1 && !v2)
        return cli_usage_error(a->cmd,
                               "--diff needs two versions: --diff V1 V2");
    if (v1 && version)
        return cli_usage_error(a->cmd, "give --version or --diff, not both");
    if (v1 && ctx->json)
        return cli_usage_error(a->cmd, "--diff prints text; leave out -o");

    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    if (!name) {
        char *out = NULL;
        rc = planctl_definitions_json(&out, ctx->db);
        if (rc < 0)
            return cli_fail(ctx, rc);
        return cli_print_doc(ctx, out, cli_render_definitions);
    }
    if ((rc = check_name(ctx, name)) != 0)
        return rc;
    if (v1)
        return diff(ctx, name, v1, v2);

    char *body = NULL;
    rc = planctl_definition_body(&body, ctx->db, name, version);
    if (rc < 0)
        return cli_fail(ctx, rc);
    rc = cli_json_print(body);
    planctl_free(body);
    return rc;
}

const cli_command cli_cmd_definitions = {
    "definitions",
    "List the registered definition versions, or show one",
    "[DEFINITION [--version V | --diff V1 V2]]",
    "Without DEFINITION, lists every registered definition version with\n"
    "its plans, sorted by name, then by registration order.\n"
    "\n"
    "With DEFINITION, prints the body of its version V (default: the one\n"
    "registered last) as registered, pretty-printed JSON with its keys\n"
    "sorted (-o yaml: as YAML; -o json is the same JSON), which 'planctl\n"
    "apply -f' takes back.  An unknown DEFINITION or version exits 4,\n"
    "naming the registered definitions or the definition's versions.\n"
    "\n"
    "--diff V1 V2 prints how V2's body differs from V1's: a unified diff\n"
    "of the pretty-printed JSON lines, headed '--- DEFINITION@V1' and\n"
    "'+++ DEFINITION@V2', with three lines of context; nothing when they\n"
    "are the same.  The exit status is 0 either way (1 stays an error).\n"
    "Bodies of more than 10000 lines, or whose differing parts would\n"
    "make more than 25,000,000 line pairs, are refused (exit 1).",
    pos,
    flags,
    examples,
    run};
