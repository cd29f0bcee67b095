/*
 * yaml.h - YAML definitions read into the JSON value the library checks,
 * and JSON documents written as YAML (-o yaml).
 *
 * Reading follows the YAML 1.2 core schema: a plain scalar is null
 * (null, Null, NULL, ~ or nothing), a boolean (true/false in those three
 * spellings), an integer (decimal, 0o octal, 0x hex) or a float (.inf and
 * .nan refused: JSON has neither) when it reads as one, and text
 * otherwise; yes/no/on/off are text.  A quoted scalar is always text.
 * Anchors and aliases are supported, an alias being a copy of what its
 * anchor names, up to CLI_YAML_ALIAS_MAX values in all; merge keys (<<),
 * duplicate keys, keys that are not text, tags other than the standard
 * ones, a second document and nesting deeper than a JSON definition may
 * have are refused with the line and column.
 *
 * Only the standard library, libyaml, jansson and the core's message
 * helpers are used, so the unit test and the fuzzer build these files
 * alone.
 */
#ifndef PCTL_CLI_YAML_H
#define PCTL_CLI_YAML_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* The most values aliases may add to a document, all aliases together:
 * enough for a retry policy shared by a thousand steps, far too few for a
 * "billion laughs". */
#define CLI_YAML_ALIAS_MAX 100000

enum {
    CLI_YAML_INVALID = -1, /* err says where and why */
    CLI_YAML_NOMEM = -2
};

typedef struct cli_yaml_error {
    const char *type; /* "Syntax error", or "Too long" for the size */
    size_t line;      /* from 1; 0 when there is no place */
    char msg[512];    /* "<origin>:L:C: why" */
} cli_yaml_error;

/*
 * Reads the YAML text (len bytes, at most the library's limit on a
 * definition) as one document into *out (a new reference), and into
 * *lines, when lines is not NULL, an object mapping the path of every
 * node, written as validation errors write it (plans.deploy.phases[0]),
 * to its line: a member's is its key's, an element's its own.  Returns
 * 0, CLI_YAML_INVALID with err filled (nothing in *out or *lines), or
 * CLI_YAML_NOMEM.
 */
int cli_yaml_read(json_t **out, json_t **lines, const char *text, size_t len,
                  const char *origin, cli_yaml_error *err);

/* The line of the error path in lines: the path's own, or else that of
 * the nearest enclosing node the file has (a missing field is reported
 * at its parent).  0 when none is known.  Can't fail. */
size_t cli_yaml_line(const json_t *lines, const char *path);

/*
 * Writes v as a YAML 1.2 block document to f: keys in the order the
 * object has them, strings quoted when they would read as anything else
 * (another type in YAML 1.2 or 1.1, an indicator, a comment, a key) and
 * written with JSON's escapes inside double quotes.  Returns 0, or -1
 * when writing failed.
 */
int cli_yaml_dump(const json_t *v, FILE *f);

#endif
