/*
 * alloc.h - the library's allocation wrappers, with a hook so tests can
 * fail the Nth allocation (see tests/unit/test_alloc_fail.c).
 */
#ifndef PCTL_CORE_ALLOC_H
#define PCTL_CORE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* malloc/calloc/realloc/free/strdup through the installed hooks.  They
 * return NULL on failure like their libc namesakes. */
void *pctl_malloc(size_t n);
void *pctl_calloc(size_t count, size_t size);
void *pctl_realloc(void *ptr, size_t n);
void pctl_free(void *ptr);
char *pctl_strdup(const char *s);
char *pctl_strndup(const char *s, size_t n);
/* printf into a new string, or NULL on failure. */
char *pctl_asprintf(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Makes room for one more item in *v, an array of n items of sz bytes
 * with room for *cap: doubles it (16 at first) when it is full.  0, or
 * PLANCTL_ENOMEM with *v and *cap unchanged. */
int pctl_grow(void **v, size_t n, size_t *cap, size_t sz);

/* Appends id to *v, an array of *n ids with room for *cap, growing it as
 * pctl_grow() does.  0, or PLANCTL_ENOMEM with nothing changed. */
int pctl_push_id(int64_t **v, size_t *n, size_t *cap, int64_t id);

typedef struct pctl_alloc_hooks {
    void *(*malloc_fn)(size_t);
    void *(*realloc_fn)(void *, size_t);
    void (*free_fn)(void *);
} pctl_alloc_hooks;

/* Installs hooks for the library and for jansson (NULL restores libc).
 * Not thread-safe: call before any other library use.  Can't fail. */
void pctl_alloc_set_hooks(const pctl_alloc_hooks *hooks);

#endif
