/*
 * kinds.h - the registry of task kinds an embedder provides, which the
 * definition validator consults besides the built-ins ("Dummy", "shell").
 */
#ifndef PCTL_CORE_KINDS_H
#define PCTL_CORE_KINDS_H

#include <stddef.h>

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

/* The registration of name, or NULL.  k may be NULL.  Can't fail. */
const pctl_kind *pctl_kinds_find(const pctl_kinds *k, const char *name);

/* Frees the names; the registry is empty and reusable.  Can't fail. */
void pctl_kinds_clear(pctl_kinds *k);

/* Clears and frees a registry allocated with pctl_malloc.  NULL is
 * allowed.  Can't fail. */
void pctl_kinds_free(struct pctl_kinds *k);

#endif
