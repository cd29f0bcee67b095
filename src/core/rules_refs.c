/*
 * rules_refs.c - the rules about references: the tasks a step or a
 * preflight check names, the plans parameter triggers name, and the
 * deploy plan every definition must have.
 *
 * References are resolved against the names as written, so a task with an
 * invalid name is reported once, at its name, and not again at every step
 * that uses it; when the list itself is unreadable (not an array, or past
 * its limit) references to it go unchecked.
 */
#include <string.h>

#include "def.h"
#include "planctl.h"
#include "rules.h"

static int resolve(pctl_sink *s, const char *field, const char *name,
                   const pctl_names *ns)
{
    if (!ns || !ns->known || pctl_names_find(ns, name, NULL))
        return 0;
    return pctl_sink_not_found(s, field, name, ns->v, ns->n);
}

static int task_refs_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const pctl_vin *in = data;
    const char *name;

    if (v->node == PCTL_NODE_STEP_TASK) {
        name = pctl_string(v->value);
        return name ? resolve(s, NULL, name, in->tasks) : 0;
    }
    if (v->node == PCTL_NODE_CHECK) {
        name = pctl_get_string(v->value, "task");
        return name ? resolve(s, "task", name, in->tasks) : 0;
    }
    return 0;
}

int pctl_rule_task_refs(const pctl_vin *in, pctl_sink *s, void *data)
{
    pctl_visitor vis;

    (void)data;
    vis.node = task_refs_node;
    vis.list = NULL;
    return pctl_walk(in->doc, s, &vis, (void *)in);
}

static int triggers_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const pctl_vin *in = data;
    const char *plan;

    if (v->node != PCTL_NODE_PARAM)
        return 0;
    plan = pctl_get_string(v->value, "trigger");
    return plan ? resolve(s, "trigger", plan, in->plans) : 0;
}

/* A parameter's trigger names the plan its change runs. */
int pctl_rule_triggers(const pctl_vin *in, pctl_sink *s, void *data)
{
    pctl_visitor vis;

    (void)data;
    vis.node = triggers_node;
    vis.list = NULL;
    return pctl_walk(in->doc, s, &vis, (void *)in);
}

/* Reported whenever plans is an object, even one past its limit. */
int pctl_rule_deploy(const pctl_vin *in, pctl_sink *s, void *data)
{
    const json_t *plans = json_object_get(in->doc, "plans");

    (void)data;
    if (!json_is_object(plans) || json_object_get(plans, "deploy"))
        return 0;
    PCTL_CHECK(pctl_sink_key(s, "plans"));
    PCTL_CHECK(pctl_sink_fail(s, "deploy", PCTL_FERR_REQUIRED, NULL,
                              "a definition must have a deploy plan"));
    pctl_sink_back(s, 0);
    return 0;
}
