/*
 * defaults.h - the defaulting runner: defaults registered in order, each
 * filling absent fields of the decoded document, never changing a value
 * the user wrote.
 */
#ifndef PCTL_CORE_DEFAULTS_H
#define PCTL_CORE_DEFAULTS_H

#include <jansson.h>
#include <stddef.h>

#include "walk.h"

/*
 * A default fills absent fields of doc (and nothing else) through
 * pctl_default_set().  Returns 0; or a negative code other than
 * PLANCTL_ENOMEM when it could not be applied, having reported why into s
 * (the runner reports a generic error if it did not); or PLANCTL_ENOMEM.
 * Parts of the document of the wrong shape are skipped: the validators
 * report them.
 */
typedef int (*pctl_default_fn)(json_t *doc, pctl_sink *s, void *data);

typedef struct pctl_default {
    const char *name;
    pctl_default_fn fn;
    void *data;
} pctl_default;

typedef struct pctl_defaults {
    size_t n, cap;
    pctl_default *items; /* registration order */
} pctl_defaults;

#define PCTL_DEFAULTS_INIT                                                     \
    {                                                                          \
        0, 0, NULL                                                             \
    }

/* Registers a default after those registered before.  Returns 0 or
 * PLANCTL_ENOMEM. */
int pctl_defaults_add(pctl_defaults *ds, const char *name, pctl_default_fn fn,
                      void *data);

/* Frees the list.  Can't fail. */
void pctl_defaults_clear(pctl_defaults *ds);

/*
 * Runs every default of ds over doc, one after another in registration
 * order; one that fails is reported (its errors appended to errs) and the
 * others still run.  Returns 0, PLANCTL_EDEFINITION when any failed (doc is
 * then partly defaulted and must not be used for a model), or
 * PLANCTL_ENOMEM (the run stops).
 */
int pctl_defaults_run(const pctl_defaults *ds, json_t *doc,
                      pctl_ferr_list *errs);

/* The built-in defaults of planctl-definition(5), in order: a parameter's
 * required (true when it has no default), a task's spec ({}), plan and phase
 * strategy ("serial"), a step's retry (attempts 3, backoff "1s",
 * multiplier 2, max_backoff the larger of "1m" and backoff).  Can't
 * fail. */
const pctl_defaults *pctl_defaults_builtin(void);

/* Sets o.key to value (taken over) when o is an object without key;
 * otherwise only releases value.  Returns 0, or PLANCTL_ENOMEM (value NULL
 * or the insertion failed). */
int pctl_default_set(json_t *o, const char *key, json_t *value);

#endif
