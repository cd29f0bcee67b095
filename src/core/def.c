/*
 * def.c - a definition's model (def.h): its lifetime and lookups.  The
 * pipeline that builds it from text is pipeline.c.
 */
#include "def.h"

#include <string.h>

#include "alloc.h"
#include "planctl.h"

static void plan_free(pctl_plan_def *pl)
{
    size_t i, j;

    for (i = 0; i < pl->nphases; i++) {
        pctl_phase_def *ph = &pl->phases[i];

        for (j = 0; j < ph->nsteps; j++) {
            pctl_free(ph->steps[j].name);
            pctl_free(ph->steps[j].tasks);
        }
        pctl_free(ph->steps);
        pctl_free(ph->name);
    }
    pctl_free(pl->phases);
    for (i = 0; i < pl->nchecks; i++)
        pctl_free(pl->preflight[i].name);
    pctl_free(pl->preflight);
    pctl_free(pl->name);
}

void pctl_def_free(pctl_def *d)
{
    size_t i;

    if (!d)
        return;
    for (i = 0; i < d->nparams; i++) {
        pctl_free(d->params[i].name);
        pctl_free(d->params[i].default_json);
        pctl_free(d->params[i].enum_json);
        pctl_free(d->params[i].trigger);
        pctl_free(d->params[i].description);
    }
    pctl_free(d->params);
    for (i = 0; i < d->ntasks; i++) {
        pctl_free(d->tasks[i].name);
        pctl_free(d->tasks[i].kind);
        pctl_free(d->tasks[i].spec);
    }
    pctl_free(d->tasks);
    for (i = 0; i < d->nplans; i++)
        plan_free(&d->plans[i]);
    pctl_free(d->plans);
    for (i = 0; i < d->nmaintainers; i++) {
        pctl_free(d->maintainers[i].name);
        pctl_free(d->maintainers[i].email);
    }
    pctl_free(d->maintainers);
    for (i = 0; i < d->nupgradable_from; i++)
        pctl_free(d->upgradable_from[i]);
    pctl_free(d->upgradable_from);
    pctl_free(d->description);
    pctl_free(d->url);
    pctl_free(d->app_version);
    pctl_free(d->name);
    pctl_free(d->version);
    pctl_free(d);
}

/* Linear searches: the limits keep every list short, and a linear search
 * does not depend on how a hand-built pctl_def was ordered. */
const pctl_plan_def *pctl_def_plan(const pctl_def *d, const char *name)
{
    size_t i;

    for (i = 0; d && i < d->nplans; i++)
        if (strcmp(d->plans[i].name, name) == 0)
            return &d->plans[i];
    return NULL;
}

const pctl_param_def *pctl_def_param(const pctl_def *d, const char *name)
{
    size_t i;

    for (i = 0; d && i < d->nparams; i++)
        if (strcmp(d->params[i].name, name) == 0)
            return &d->params[i];
    return NULL;
}

const pctl_task_def *pctl_def_task(const pctl_def *d, const char *name)
{
    size_t i;

    for (i = 0; d && i < d->ntasks; i++)
        if (strcmp(d->tasks[i].name, name) == 0)
            return &d->tasks[i];
    return NULL;
}

const char *pctl_strategy_name(pctl_strategy s)
{
    return s == PCTL_STRATEGY_PARALLEL ? "parallel" : "serial";
}
