/* cmd_validate.c - `planctl validate -f FILE`: every error of a definition,
 * one per line with its JSON path, without touching any database. */
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
    "planctl validate -f zookeeper.json",
    "planctl validate -f zookeeper.yaml",
    "render-def | planctl validate -f -",
    "planctl validate -f zookeeper.json -o json",
    "planctl validate -f backup.json --kind S3Upload --kind Snapshot",
    "PLANCTL_KINDS=S3Upload,Snapshot planctl validate -f backup.json",
    NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    cli_definition d;
    char *storage;

    int rc = cli_definition_read(&d, cli_arg(a, "file"));
    if (rc) {
        cli_definition_free(&d);
        return rc;
    }
    const char **kinds = cli_extra_kinds(a, &storage);
    json_t *doc = cli_definition_check(&rc, &d, kinds);
    free(kinds);
    free(storage);
    if (!doc) {
        cli_definition_free(&d);
        if (rc == PLANCTL_ERROR)
            return CLI_EXIT_ERROR; /* cli_json_parse() said why */
        cli_errorf("%s", planctl_strerror(rc));
        return cli_exit_code(rc);
    }
    int valid = json_is_true(json_object_get(doc, "valid"));
    if (ctx->json) {
        rc = cli_json_print_obj(doc);
    } else {
        if (valid)
            printf("%s is valid\n", d.origin);
        else
            cli_render_validate(stdout, doc, d.origin);
        json_decref(doc);
    }
    cli_definition_free(&d);
    return rc ? rc : valid ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

const cli_command cli_cmd_validate = {
    "validate",
    "Check a definition file and list every error",
    "-f FILE",
    "Decodes and checks a definition (syntax, required fields, names,\n"
    "strategies, durations, retries, task references, task kinds and their\n"
    "specs, triggers, unknown fields, limits, and the environment of shell\n"
    "tasks: no two parameters that become one PLANCTL_PARAM_ variable, no\n"
    "two steps of a plan whose names make one PLANCTL_OUTPUT_<STEP>_ prefix,\n"
    "no spec.env name that is not a variable name or starts with PLANCTL_)\n"
    "and prints every error as \"path: Type: message\", in a fixed order,\n"
    "after \"FILE:LINE: \" for a YAML file (then in the order of its\n"
    "lines).  Exits 2 when there is any.\n"
    "A file is YAML when its name ends in .yaml or .yml, JSON when it ends\n"
    "in .json, and otherwise (standard input too) JSON when it starts with\n"
    "{ or [ and YAML when not.  YAML is read by the YAML 1.2 core schema\n"
    "(yes/no/on/off are text; quote a value to make it text); merge keys,\n"
    "duplicate keys, non-text keys, non-standard tags and a second document\n"
    "are refused.  With -o json every error has its \"line\" (null for JSON).\n"
    "No database is opened.  Task kinds other than Dummy and shell are\n"
    "refused unless named with --kind or in PLANCTL_KINDS (comma-separated);\n"
    "their specs are not checked.",
    NULL,
    flags,
    examples,
    run};
