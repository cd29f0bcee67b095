/* status.c - status names and the transition table (planctl-json(7) prints it).
 */
#include "status.h"

#include "error.h"

#include <string.h>

static const char *const status_names[] = {
#define X(name) #name,
    PLANCTL_STATUS_MAP(X)
#undef X
};

const pctl_edge pctl_edges[] = {
#define X(entity, from, to) {PLANCTL_ENTITY_##entity, from, to},
#define NEW PCTL_NEW
#define QUEUED PLANCTL_STATUS_QUEUED
#define PENDING PLANCTL_STATUS_PENDING
#define IN_PROGRESS PLANCTL_STATUS_IN_PROGRESS
#define PAUSED PLANCTL_STATUS_PAUSED
#define ERROR PLANCTL_STATUS_ERROR
#define COMPLETE PLANCTL_STATUS_COMPLETE
#define FATAL_ERROR PLANCTL_STATUS_FATAL_ERROR
#define CANCELLED PLANCTL_STATUS_CANCELLED
    PCTL_TRANSITIONS(X)
#undef NEW
#undef QUEUED
#undef PENDING
#undef IN_PROGRESS
#undef PAUSED
#undef ERROR
#undef COMPLETE
#undef FATAL_ERROR
#undef CANCELLED
#undef X
};

const int pctl_edges_count = (int)(sizeof pctl_edges / sizeof pctl_edges[0]);

const char *planctl_status_name(planctl_status s)
{
    if ((unsigned)s >= PLANCTL_STATUS__COUNT)
        return NULL;
    return status_names[s];
}

int planctl_status_parse(planctl_status *out, const char *text)
{
    int i;

    if (!out || !text)
        return pctl_thread_err(PLANCTL_EINVAL, "missing argument: %s is NULL",
                               !out ? "out" : "text");
    for (i = 0; i < PLANCTL_STATUS__COUNT; i++) {
        if (strcmp(status_names[i], text) == 0) {
            *out = (planctl_status)i;
            return 0;
        }
    }
    return pctl_thread_err(PLANCTL_EINVAL,
                           "status \"%.60s\" is not one of planctl's "
                           "(PENDING, IN_PROGRESS, ...; case matters)",
                           text);
}

int planctl_transition_legal(planctl_entity entity, planctl_status from,
                             planctl_status to)
{
    int i;

    for (i = 0; i < pctl_edges_count; i++) {
        if (pctl_edges[i].entity == entity && pctl_edges[i].from == from &&
            pctl_edges[i].to == to)
            return 1;
    }
    return 0;
}

const char *pctl_entity_name(planctl_entity e)
{
    switch (e) {
    case PLANCTL_ENTITY_RUN:
        return "run";
    case PLANCTL_ENTITY_PHASE:
        return "phase";
    case PLANCTL_ENTITY_STEP:
        return "step";
    default:
        return NULL;
    }
}

int pctl_status_terminal(planctl_status s)
{
    return s == PLANCTL_STATUS_COMPLETE || s == PLANCTL_STATUS_FATAL_ERROR ||
           s == PLANCTL_STATUS_CANCELLED;
}

int pctl_status_active(planctl_status s)
{
    return s == PLANCTL_STATUS_PENDING || s == PLANCTL_STATUS_IN_PROGRESS ||
           s == PLANCTL_STATUS_PAUSED;
}

int pctl_status_invariant(planctl_status s, int has_start, int has_finish)
{
    switch (s) {
    case PLANCTL_STATUS_QUEUED:
    case PLANCTL_STATUS_PENDING:
        return !has_start && !has_finish;
    case PLANCTL_STATUS_IN_PROGRESS:
    case PLANCTL_STATUS_PAUSED:
    case PLANCTL_STATUS_ERROR:
        return has_start && !has_finish;
    case PLANCTL_STATUS_COMPLETE:
    case PLANCTL_STATUS_FATAL_ERROR:
    case PLANCTL_STATUS_CANCELLED:
        /* A step CANCELLED before it ever started has no start time, and a
         * carried-over COMPLETE keeps the original times; only the finish
         * is required. */
        return has_finish;
    default:
        return 0;
    }
}
