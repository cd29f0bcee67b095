/* select.h - which plan a change runs (planctl-engine(7), "Plan for a parameter
 * change"), as pure functions. */
#ifndef PCTL_CORE_SELECT_H
#define PCTL_CORE_SELECT_H

#include <stddef.h>

#include "def.h"

/*
 * The plan a change of the named parameters runs: the distinct explicit
 * triggers of those parameters (a parameter without a trigger adds nothing
 * when another has one); when none has a trigger, "update" if the
 * definition has it, else "deploy".  Returns 0 and sets *out (borrowed
 * from d) when that is one plan.  Returns PLANCTL_EINVAL when the triggers
 * name different plans, with a message in msg ("parameters A, B trigger
 * different plans: backup, restart; change them separately"), or when a
 * name is unknown.  n must be >= 1.
 */
int pctl_select_for_params(const char **out, const pctl_def *d,
                           const char *const *changed, size_t n, char *msg,
                           size_t msgsz);

/* The plan a version change runs: the first of upgrade, update, deploy
 * that d has (deploy always exists in a valid definition).  Can't fail. */
const char *pctl_select_for_upgrade(const pctl_def *d);

#endif
