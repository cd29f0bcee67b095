/* rules_walk.c - the walk every rule of a definition takes: its visitor
 * over the decoded document, shared by the rule files (rules_*.c) and so
 * kept apart from the table that runs them (rules.c). */
#include "rules.h"

int pctl_rule_walk(const pctl_vin *in, pctl_sink *s,
                   int (*fn)(pctl_sink *, const pctl_visit *, void *))
{
    pctl_visitor vis;

    vis.node = fn;
    vis.list = NULL;
    return pctl_walk(in->doc, s, &vis, NULL);
}
