/*
 * rules.h - the rules a definition must follow (planctl-definition(5)), each a
 * validator for the runner of validate.h, and their registration order.
 *
 * Every rule walks the whole document (walk.h) and reports only its own
 * kind of problem, skipping what another rule owns: a value of the wrong
 * type is reported by "types" alone, a list past its limit by "limits"
 * alone, and so on.  That is what lets them run in any order, or at once,
 * and still report each problem exactly once.
 */
#ifndef PCTL_CORE_RULES_H
#define PCTL_CORE_RULES_H

#include "validate.h"

/* The built-in rules in registration order, which is the order of the
 * errors: typos first (they usually explain what follows), then missing
 * and mistyped fields, limits, names, values, references, kinds and
 * specs.  Can't fail. */
const pctl_validators *pctl_rules(void);

/* Runs fn on every node of in's document with its path (walk.h): most
 * rules are what they do with one node.  Returns what the walk returns. */
int pctl_rule_walk(const pctl_vin *in, pctl_sink *s,
                   int (*fn)(pctl_sink *, const pctl_visit *, void *));

/* What a version must be, for messages (rules_values.c). */
extern const char pctl_version_rule[];

/* rules_shape.c: the schema of every node. */
int pctl_rule_unknown_fields(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_required(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_types(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_limits(const pctl_vin *in, pctl_sink *s, void *data);

/* One field of rules_shape.c's tables, for the reference (schema.h) and
 * its test. */
typedef struct pctl_shape_field {
    const char *name;
    const char *type; /* as the rules say it: "a string", "an array" */
    int required;
    size_t max; /* lists: the most elements; 0: none */
} pctl_shape_field;

/* The i-th field of node's table: 1 with *out filled, 0 past the last (or
 * for a node without a table, a step's task).  Can't fail. */
int pctl_shape_field_at(pctl_node node, size_t i, pctl_shape_field *out);

/* rules_values.c: names and values. */
int pctl_rule_names(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_unique(const pctl_vin *in, pctl_sink *s, void *data);
/* Only when in->kinds is set, as the specs. */
int pctl_rule_param_vars(const pctl_vin *in, pctl_sink *s, void *data);
/* Only when in->kinds is set: two steps of a plan whose outputs would
 * reach later tasks under one PLANCTL_OUTPUT_<STEP>_ prefix. */
int pctl_rule_step_vars(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_strategies(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_durations(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_retry(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_not_empty(const pctl_vin *in, pctl_sink *s, void *data);

/* rules_params.c: parameter types, defaults and enums; metadata. */
int pctl_rule_param_values(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_meta(const pctl_vin *in, pctl_sink *s, void *data);
/* The fields of maintainers[i]: "name" (required) and "email". */
extern const char *const pctl_maintainer_fields[2];

/* rules_refs.c: what refers to what. */
int pctl_rule_task_refs(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_triggers(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_deploy(const pctl_vin *in, pctl_sink *s, void *data);

/* specs.c: task kinds, and the spec each kind accepts (only when
 * in->kinds is set). */
int pctl_rule_kinds(const pctl_vin *in, pctl_sink *s, void *data);
int pctl_rule_specs(const pctl_vin *in, pctl_sink *s, void *data);
/* The fields of a Dummy task's spec. */
extern const char *const pctl_dummy_spec_fields[5];

#endif
