/* kinds.c - the registry of task kinds known besides the built-ins. */
#include "kinds.h"

#include <string.h>

#include "alloc.h"
#include "planctl.h"

const char *const pctl_builtin_kinds[2] = {"Dummy", "shell"};

int pctl_kind_is_builtin(const char *name)
{
    return name && (strcmp(name, "Dummy") == 0 || strcmp(name, "shell") == 0);
}

int pctl_kinds_add(pctl_kinds *k, const char *name, pctl_spec_check check,
                   void *data)
{
    pctl_kind *items;
    size_t i, len;
    char *copy;

    if (!k || !name)
        return PLANCTL_EINVAL;
    len = strlen(name);
    if (len == 0 || len > PCTL_KIND_MAX)
        return PLANCTL_EINVAL;
    for (i = 0; i < k->n; i++) {
        if (strcmp(k->items[i].name, name) == 0) {
            k->items[i].check = check;
            k->items[i].data = data;
            return 0;
        }
    }
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 4;

        items = pctl_realloc(k->items, cap * sizeof(*items));
        if (!items)
            return PLANCTL_ENOMEM;
        k->items = items;
        k->cap = cap;
    }
    copy = pctl_strndup(name, len);
    if (!copy)
        return PLANCTL_ENOMEM;
    k->items[k->n].name = copy;
    k->items[k->n].check = check;
    k->items[k->n].data = data;
    k->n++;
    return 0;
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
