/* cmd_apply.c - `planctl apply -f FILE`: validate a definition and register
 * it under its name and version. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

static const cli_flag flags[] = {
    {"file", 'f', CLI_FLAG_VALUE, 1, "FILE",
     "the definition (JSON or YAML), or - for standard input"},
    {"kind", 0, CLI_FLAG_LIST, 0, "NAME",
     "a task kind your program provides, besides Dummy and shell"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl apply -f zookeeper.json", "planctl apply -f zookeeper.yaml",
    "planctl --db /var/lib/planctl/zk.db apply -f zookeeper.json",
    "planctl apply -f backup.json --kind S3Upload", NULL};

/* Prints every error of an invalid definition, as validate does, on stderr
 * (or the validate document on stdout with -o json).  Returns 1 when the
 * definition was indeed invalid. */
static int report_invalid(const cli_ctx *ctx, const cli_definition *d,
                          const char *const *kinds)
{
    int rc;
    json_t *doc = cli_definition_check(&rc, d, kinds);
    if (!doc || json_is_true(json_object_get(doc, "valid")) ||
        json_array_size(json_object_get(doc, "errors")) == 0) {
        json_decref(doc);
        return 0;
    }
    if (ctx->json) {
        cli_json_print_obj(doc);
        return 1;
    }
    fflush(stdout);
    cli_render_validate(stderr, doc, d->origin);
    json_decref(doc);
    return 1;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    cli_definition d;
    char *out = NULL, *storage;
    size_t i;

    int rc = cli_definition_read(&d, cli_arg(a, "file"));
    if (rc) {
        cli_definition_free(&d);
        return rc;
    }
    const char **kinds = cli_extra_kinds(a, &storage);
    /* Check before opening, so a broken file does not leave a new empty
     * database behind. */
    if (report_invalid(ctx, &d, kinds)) {
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    rc = cli_open_db(ctx, CLI_DB_CREATE);
    /* The handle accepts the extra kinds as the check did. */
    for (i = 0; rc == 0 && kinds[i]; i++)
        if ((rc = planctl_kind_register(ctx->db, kinds[i], NULL, NULL)) < 0)
            rc = cli_fail(ctx, rc);
    if (rc == 0) {
        rc = planctl_definition_apply(&out, ctx->db, d.json, d.len, d.origin);
        if (rc == PLANCTL_EDEFINITION && report_invalid(ctx, &d, kinds))
            rc = CLI_EXIT_USAGE;
        else if (rc < 0)
            rc = cli_fail(ctx, rc);
    }
done:
    free(kinds);
    free(storage);
    cli_definition_free(&d);
    if (rc)
        return rc;

    if (ctx->json) {
        rc = cli_json_print(out);
        planctl_free(out);
        return rc;
    }
    json_t *doc = cli_json_parse(out);
    planctl_free(out);
    if (!doc)
        return CLI_EXIT_ERROR;
    printf("definition %s@%s %s\n", cli_jstr(doc, "name"),
           cli_jstr(doc, "version"),
           json_is_false(json_object_get(doc, "created")) ? "unchanged"
                                                          : "registered");
    json_decref(doc);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_apply = {
    "apply",
    "Validate a definition and register its version",
    "-f FILE",
    "Registers the definition, JSON or YAML (as 'planctl validate' reads\n"
    "them; YAML is stored as the JSON of the same value), under its name\n"
    "and version.  Applying the same content again changes nothing;\n"
    "different content under a version that exists is refused (exit 3).\n"
    "An invalid definition is refused with every error listed, as 'planctl\n"
    "validate' prints them (exit 2).  Task kinds other than Dummy and shell\n"
    "are refused unless named with --kind or in PLANCTL_KINDS\n"
    "(comma-separated); the program that runs them must register them too.",
    NULL,
    flags,
    examples,
    run};
