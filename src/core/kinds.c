/* kinds.c - the registry of task kinds known besides the built-ins: spec
 * checks and executors (see kinds.h). */
#include "kinds.h"

#include <string.h>

#include "alloc.h"
#include "planctl.h"

const char *const pctl_builtin_kinds[2] = {"Dummy", "shell"};

int pctl_kind_is_builtin(const char *name)
{
    return name && (strcmp(name, "Dummy") == 0 || strcmp(name, "shell") == 0);
}

/* The entry of name, added (no check, no executor) if it is new; NULL
 * with *rc set when it cannot be. */
static pctl_kind *entry(pctl_kinds *k, const char *name, int *rc)
{
    pctl_kind *items;
    size_t i, len;
    char *copy;

    *rc = PLANCTL_EINVAL;
    if (!k || !name)
        return NULL;
    len = strlen(name);
    if (len == 0 || len > PCTL_KIND_MAX)
        return NULL;
    *rc = 0;
    for (i = 0; i < k->n; i++)
        if (strcmp(k->items[i].name, name) == 0)
            return &k->items[i];
    *rc = PLANCTL_ENOMEM;
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 4;

        items = pctl_realloc(k->items, cap * sizeof(*items));
        if (!items)
            return NULL;
        k->items = items;
        k->cap = cap;
    }
    copy = pctl_strndup(name, len);
    if (!copy)
        return NULL;
    memset(&k->items[k->n], 0, sizeof k->items[k->n]);
    k->items[k->n].name = copy;
    *rc = 0;
    return &k->items[k->n++];
}

int pctl_kinds_add(pctl_kinds *k, const char *name, pctl_spec_check check,
                   void *data)
{
    int rc;
    pctl_kind *e = entry(k, name, &rc);

    if (e) {
        e->check = check;
        e->data = data;
    }
    return rc;
}

int pctl_kinds_set_executor(pctl_kinds *k, const char *name,
                            const planctl_executor *ex)
{
    int rc;
    pctl_kind *e = ex ? entry(k, name, &rc) : NULL;

    if (!ex)
        return PLANCTL_EINVAL;
    if (e)
        e->ex = *ex;
    return rc;
}

const planctl_executor *pctl_kinds_executor(const pctl_kinds *k,
                                            const char *name)
{
    const pctl_kind *e = pctl_kinds_find(k, name);

    return e && e->ex.start ? &e->ex : NULL;
}

void pctl_kinds_drop_executors(pctl_kinds *k)
{
    size_t i;

    for (i = 0; k && i < k->n; i++)
        memset(&k->items[i].ex, 0, sizeof k->items[i].ex);
}

const pctl_kind *pctl_kinds_find(const pctl_kinds *k, const char *name)
{
    size_t i;

    for (i = 0; k && name && i < k->n; i++)
        if (strcmp(k->items[i].name, name) == 0)
            return &k->items[i];
    return NULL;
}

void pctl_kinds_clear(pctl_kinds *k)
{
    size_t i;

    for (i = 0; i < k->n; i++)
        pctl_free(k->items[i].name);
    pctl_free(k->items);
    k->items = NULL;
    k->n = k->cap = 0;
}

void pctl_kinds_free(struct pctl_kinds *k)
{
    if (!k)
        return;
    pctl_kinds_clear(k);
    pctl_free(k);
}
