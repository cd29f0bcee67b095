/*
 * schema.h - the reference of a definition's format: every object of a
 * definition with its fields, each with its type, whether it is required,
 * its default, its limit and a description.
 *
 * It is what `planctl explain` prints and what planctl-definition(5) is
 * generated from (src/cli/doc/doc.c).  The names, types, required flags and
 * limits are those of the validator's tables (rules_shape.c), of the
 * maintainers' rule (rules_params.c) and of the built-in kinds' specs
 * (specs.c, shellspec.h); the descriptions and defaults are written here,
 * beside them.  tests/unit/test_defschema.c ties the two: every field the
 * validator accepts must be described here with the same type, required
 * flag and limit, every default must be what the defaults write, and every
 * field described as a duration must be refused when it is not one.
 *
 * A field described here that the validator does not accept is not shown
 * (pctl_def_schema_field() skips it), so a description may land before its
 * field does.
 */
#ifndef PCTL_CORE_SCHEMA_H
#define PCTL_CORE_SCHEMA_H

#include <stddef.h>

/* The source of a node's fields in the validator, for the tie. */
typedef enum pctl_schema_src {
    PCTL_SCHEMA_SRC_SHAPE,      /* rules_shape.c's table of node.shape */
    PCTL_SCHEMA_SRC_MAINTAINER, /* pctl_maintainer_fields */
    PCTL_SCHEMA_SRC_DUMMY,      /* pctl_dummy_spec_fields */
    PCTL_SCHEMA_SRC_SHELL,      /* PCTL_SHELL_SPEC */
    PCTL_SCHEMA_SRC_KINDS       /* tasks.spec: one "field" per built-in kind */
} pctl_schema_src;

typedef struct pctl_schema_field {
    const char *name;
    /* As shown: "string", "integer", "number", "boolean", "duration",
     * "object", "[]object", "[]string", "[]integer", "map[string]object",
     * "map[string]string" or "any". */
    const char *type;
    int required;
    /* The default as JSON ("\"serial\"", "3", "{}"), or words in
     * parentheses ("(the larger of \"1m\" and backoff)"); NULL: none. */
    const char *def;
    size_t max;              /* lists and maps: the most entries; 0: none */
    const char *description; /* one line */
    const char *details;     /* more, for explain and the man page; or NULL */
    const char *child;       /* the path of the object it holds, or NULL */
} pctl_schema_field;

typedef struct pctl_schema_node {
    const char *path;        /* "" (the definition), "plans.phases.steps" */
    const char *type;        /* as shown where it is a field: "[]object" */
    const char *title;       /* "A step" */
    const char *description; /* a paragraph; lines end with '\n' */
    pctl_schema_src src;
    int shape; /* a pctl_node (walk.h) when src is PCTL_SCHEMA_SRC_SHAPE */
    const pctl_schema_field *fields; /* as written; see pctl_def_schema_field */
    size_t nfields;
} pctl_schema_node;

/* Every node, the definition first, in the order of a document.  *n
 * receives their number.  Can't fail. */
const pctl_schema_node *pctl_def_schema_nodes(size_t *n);

/* The node at path ("" for the definition), or NULL.  Can't fail. */
const pctl_schema_node *pctl_def_schema_node(const char *path);

/* The i-th field of node that the validator accepts, in the order
 * written; NULL past the last.  Can't fail. */
const pctl_schema_field *pctl_def_schema_field(const pctl_schema_node *node,
                                               size_t i);

/*
 * Resolves a dotted path ("plans.phases.steps.retry.backoff"): sets *node
 * to the node it ends at and *field to NULL, or *node to the node holding
 * the field it ends at and *field to that field.  Returns 1 on success;
 * 0 when a segment is unknown, with *node the last node reached and
 * *bad_at the offset in path of the first unknown segment.  Can't fail.
 */
int pctl_def_schema_resolve(const char *path, const pctl_schema_node **node,
                            const pctl_schema_field **field, size_t *bad_at);

/* The grammar of a duration, a sentence for the reference.  Can't fail. */
extern const char pctl_def_schema_duration_text[];

/* A complete, valid definition, for the reference (validated by its
 * test). */
extern const char pctl_def_schema_example[];

#endif
