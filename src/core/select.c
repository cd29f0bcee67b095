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
    /* The distinct explicit triggers, in the order they come. */
    for (i = 0; i < n; i++) {
        const pctl_param_def *pd = pctl_def_param(d, changed[i]);

        if (!pd) {
            snprintf(msg, msgsz, "unknown parameter \"%s\"", changed[i]);
            return PLANCTL_EINVAL;
        }
        if (!pd->trigger)
            continue;
        for (j = 0; j < nplans && strcmp(plans[j], pd->trigger) != 0; j++)
            ;
        if (j == nplans && nplans < sizeof plans / sizeof plans[0])
            plans[nplans++] = pd->trigger;
    }
    /* Parameters without a trigger choose a plan only when no changed
     * parameter has one (KUDO's rule too). */
    if (nplans == 0) {
        *out = default_plan(d);
        return 0;
    }
    if (nplans == 1) {
        *out = plans[0];
        return 0;
    }
    /* Name them in a stable order: plans sorted, parameters as given (only
     * those with a trigger: the others chose nothing). */
    for (i = 1; i < nplans; i++) {
        const char *t = plans[i];

        for (j = i; j > 0 && strcmp(plans[j - 1], t) > 0; j--)
            plans[j] = plans[j - 1];
        plans[j] = t;
    }
    for (i = 0; i < n; i++)
        if (pctl_def_param(d, changed[i])->trigger)
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
