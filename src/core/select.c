/* select.c - plan selection for parameter and version changes. */
#include "select.h"

#include <stdio.h>
#include <string.h>

#include "planctl.h"

static const char *default_plan(const pctl_def *d)
{
    return pctl_def_plan(d, "update") ? "update" : "deploy";
}

/* Appends s to buf with a separator, truncating safely. */
static void append(char *buf, size_t size, const char *sep, const char *s)
{
    size_t len = strlen(buf);

    if (len >= size)
        return;
    snprintf(buf + len, size - len, "%s%s", len ? sep : "", s);
}

int pctl_select_for_params(const char **out, const pctl_def *d,
                           const char *const *changed, size_t n, char *msg,
                           size_t msgsz)
{
    const char *plans[64];
    size_t nplans = 0, i, j;
    char names[512] = "", list[512] = "";

    *out = NULL;
    for (i = 0; i < n; i++) {
        const pctl_param_def *pd = pctl_def_param(d, changed[i]);
        const char *plan;

        if (!pd) {
            snprintf(msg, msgsz, "unknown parameter \"%s\"", changed[i]);
            return PLANCTL_EINVAL;
        }
        plan = pd->trigger ? pd->trigger : default_plan(d);
        for (j = 0; j < nplans && strcmp(plans[j], plan) != 0; j++)
            ;
        if (j == nplans && nplans < sizeof plans / sizeof plans[0])
            plans[nplans++] = plan;
    }
    if (nplans == 1) {
        *out = plans[0];
        return 0;
    }
    /* Name them in a stable order: plans sorted, parameters as given. */
    for (i = 1; i < nplans; i++) {
        const char *t = plans[i];

        for (j = i; j > 0 && strcmp(plans[j - 1], t) > 0; j--)
            plans[j] = plans[j - 1];
        plans[j] = t;
    }
    for (i = 0; i < n; i++)
        append(names, sizeof names, ", ", changed[i]);
    for (i = 0; i < nplans; i++)
        append(list, sizeof list, ", ", plans[i]);
    snprintf(msg, msgsz,
             "parameters %s trigger different plans: %s; change them "
             "separately",
             names, list);
    return PLANCTL_EINVAL;
}

const char *pctl_select_for_upgrade(const pctl_def *d)
{
    if (pctl_def_plan(d, "upgrade"))
        return "upgrade";
    return default_plan(d);
}
