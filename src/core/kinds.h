/*
 * kinds.h - the one registry of task kinds a handle knows besides the
 * built-ins ("Dummy", "shell"): for each, the spec check the definition
 * validator consults and the executor an engine (and preflight checks)
 * runs its tasks with.  A kind may have either or both: a check registered
 * by planctl_kind_register(), an executor by planctl_engine_register().
 */
#ifndef PCTL_CORE_KINDS_H
#define PCTL_CORE_KINDS_H

#include <stddef.h>

#include "planctl.h"

/* The longest kind name accepted by pctl_kinds_add(). */
#define PCTL_KIND_MAX 255

/* Checks a task's spec (compact JSON text): 0 when it is valid, or a
 * negative code with a one-line message in err (err_size bytes). */
typedef int (*pctl_spec_check)(const char *spec_json, char *err,
                               size_t err_size, void *data);

typedef struct pctl_kind {
    char *name;
    pctl_spec_check check; /* NULL: any spec object is accepted */
    void *data;
    planctl_executor ex; /* ex.start NULL: no executor registered */
} pctl_kind;

typedef struct pctl_kinds {
    size_t n, cap;
    pctl_kind *items; /* in registration order */
} pctl_kinds;

#define PCTL_KINDS_INIT                                                        \
    {                                                                          \
        0, 0, NULL                                                             \
    }

/* The built-in kinds, sorted: "Dummy", "shell".  Can't fail. */
extern const char *const pctl_builtin_kinds[2];

/* 1 if name is a built-in kind.  Can't fail. */
int pctl_kind_is_builtin(const char *name);

/* Registers name with its spec check (may be NULL), replacing the check of
 * a name registered before.  Returns 0, PLANCTL_EINVAL (name NULL, empty
 * or longer than PCTL_KIND_MAX bytes) or PLANCTL_ENOMEM (k unchanged). */
int pctl_kinds_add(pctl_kinds *k, const char *name, pctl_spec_check check,
                   void *data);

/* Sets the executor of name (copied), registering the kind without a spec
 * check if it is new; a check registered before is kept.  Returns 0,
 * PLANCTL_EINVAL (as pctl_kinds_add) or PLANCTL_ENOMEM (k unchanged). */
int pctl_kinds_set_executor(pctl_kinds *k, const char *name,
                            const planctl_executor *ex);

/* The executor registered for name, or NULL (none; a built-in kind's own
 * executor is the engine's to supply).  k may be NULL.  Can't fail. */
const planctl_executor *pctl_kinds_executor(const pctl_kinds *k,
                                            const char *name);

/* Forgets every executor; spec checks stay.  k may be NULL.  Can't
 * fail. */
void pctl_kinds_drop_executors(pctl_kinds *k);

/* The registration of name, or NULL.  k may be NULL.  Can't fail. */
const pctl_kind *pctl_kinds_find(const pctl_kinds *k, const char *name);

/* Frees the names; the registry is empty and reusable.  Can't fail. */
void pctl_kinds_clear(pctl_kinds *k);

/* Clears and frees a registry allocated with pctl_malloc.  NULL is
 * allowed.  Can't fail. */
void pctl_kinds_free(struct pctl_kinds *k);

#endif
