/* alloc.c - allocation wrappers with test hooks, shared with jansson. */
#include "alloc.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planctl.h"

static pctl_alloc_hooks hooks = {malloc, realloc, free};

void pctl_alloc_set_hooks(const pctl_alloc_hooks *h)
{
    if (h) {
        hooks = *h;
    } else {
        hooks.malloc_fn = malloc;
        hooks.realloc_fn = realloc;
        hooks.free_fn = free;
    }
    json_set_alloc_funcs(hooks.malloc_fn, hooks.free_fn);
}

void *pctl_malloc(size_t n)
{
    return hooks.malloc_fn(n ? n : 1);
}

void *pctl_calloc(size_t count, size_t size)
{
    void *p;

    if (size && count > (size_t)-1 / size)
        return NULL;
    p = pctl_malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *pctl_realloc(void *ptr, size_t n)
{
    return hooks.realloc_fn(ptr, n ? n : 1);
}

void pctl_free(void *ptr)
{
    if (ptr)
        hooks.free_fn(ptr);
}

char *pctl_strndup(const char *s, size_t n)
{
    char *d = pctl_malloc(n + 1);

    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *pctl_strdup(const char *s)
{
    return s ? pctl_strndup(s, strlen(s)) : NULL;
}

char *pctl_asprintf(const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    s = pctl_malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

int pctl_grow(void **v, size_t n, size_t *cap, size_t sz)
{
    size_t ncap;
    void *nv;

    if (n < *cap)
        return 0;
    ncap = *cap ? *cap * 2 : 16;
    if (ncap < *cap || ncap > (size_t)-1 / sz ||
        !(nv = pctl_realloc(*v, ncap * sz)))
        return PLANCTL_ENOMEM;
    *v = nv;
    *cap = ncap;
    return 0;
}

int pctl_push_id(int64_t **v, size_t *n, size_t *cap, int64_t id)
{
    if (pctl_grow((void **)v, *n, cap, sizeof **v) < 0)
        return PLANCTL_ENOMEM;
    (*v)[(*n)++] = id;
    return 0;
}
