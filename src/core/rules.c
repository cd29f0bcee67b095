/* rules.c - the built-in rules' registration: which validators run, how
 * they are grouped, and so the order of their errors. */
#include "rules.h"

/* Cheap rules about one kind of value run as one unit each: starting a
 * worker for every one would cost more than they do. */
static const pctl_validator names[] = {
    {"name syntax", pctl_rule_names, NULL, NULL, 0},
    {"unique names", pctl_rule_unique, NULL, NULL, 0},
    {"parameter variables", pctl_rule_param_vars, NULL, NULL, 0},
    {"step output variables", pctl_rule_step_vars, NULL, NULL, 0}};

static const pctl_validator values[] = {
    {"strategies", pctl_rule_strategies, NULL, NULL, 0},
    {"durations", pctl_rule_durations, NULL, NULL, 0},
    {"retry ranges", pctl_rule_retry, NULL, NULL, 0},
    {"non-empty lists", pctl_rule_not_empty, NULL, NULL, 0},
    {"parameter values", pctl_rule_param_values, NULL, NULL, 0},
    {"metadata", pctl_rule_meta, NULL, NULL, 0}};

static const pctl_validator refs[] = {
    {"task references", pctl_rule_task_refs, NULL, NULL, 0},
    {"parameter triggers", pctl_rule_triggers, NULL, NULL, 0},
    {"deploy plan", pctl_rule_deploy, NULL, NULL, 0}};

/* A spec is judged only for a known kind, and an embedder's spec check is
 * called from this one unit, never from two threads at once. */
static const pctl_validator kinds[] = {
    {"task kinds", pctl_rule_kinds, NULL, NULL, 0},
    {"task specs", pctl_rule_specs, NULL, NULL, 0}};

static pctl_validator all[] = {
    {"unknown fields", pctl_rule_unknown_fields, NULL, NULL, 0},
    {"required fields", pctl_rule_required, NULL, NULL, 0},
    {"types", pctl_rule_types, NULL, NULL, 0},
    {"limits", pctl_rule_limits, NULL, NULL, 0},
    {"names", NULL, NULL, names, PCTL_COUNT(names)},
    {"values", NULL, NULL, values, PCTL_COUNT(values)},
    {"references", NULL, NULL, refs, PCTL_COUNT(refs)},
    {"kinds", NULL, NULL, kinds, PCTL_COUNT(kinds)}};

static const pctl_validators rules = {PCTL_COUNT(all), PCTL_COUNT(all), all};

const pctl_validators *pctl_rules(void)
{
    return &rules;
}
