/* preflight.h - running a plan's preflight checks (see preflight.c). */
#ifndef PCTL_ENGINE_PREFLIGHT_H
#define PCTL_ENGINE_PREFLIGHT_H

#include "core/def.h"
#include "planctl.h"

/* How one admission runs its checks (from planctl_admit_options). */
typedef struct pctl_preflight_settings {
    int64_t deadline_ms; /* 0: 10 s */
    const char *skip;    /* a skip list, or NULL */
} pctl_preflight_settings;

/*
 * Runs the checks of plan for instance (parameters: the snapshot the run
 * would get), skipping those set->skip names.  *report receives the
 * report (planctl_admitted.preflight_report; the caller's), or NULL when
 * the plan has no checks or preflight itself failed.  Blocks until every
 * check has reported or the deadline passed.  On success *summary (the
 * caller's; NULL when the plan has no checks) receives the line that
 * records it: 'preflight of plan "P" passed', '... passed; skipped: A, B'
 * or '... skipped: A, B' when none ran.  Returns 0 when every check
 * passed or was skipped, PLANCTL_ERROR when one could not run or missed
 * the deadline, else PLANCTL_EPREFLIGHT when one failed; either way the
 * message lists every cause, in declaration order.  Or PLANCTL_ENOMEM.
 */
int pctl_preflight_run(char **report, char **summary, planctl *p,
                       const pctl_def *def, const pctl_plan_def *plan,
                       const char *instance, const char *params,
                       const pctl_preflight_settings *set);

/* Whether a skip list ("A, b,,C") skips every check: "all" as its only
 * entry.  Can't fail. */
int pctl_preflight_skip_all(const char *skip);

/* Whether a skip list names the check (case-insensitive, trimmed).  Can't
 * fail. */
int pctl_preflight_skips(const char *skip, const char *name);

#endif
