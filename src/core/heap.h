/*
 * heap.h - a binary min-heap of (key, id) pairs: how the engine's cache
 * finds the runs whose timer is due (key: the time) and the runs that wait
 * for a slot, oldest first (key: the run id), without walking every
 * active run (engine/cache.c).
 *
 * Entries are never removed from the middle: an entry whose run moved on
 * is left where it is and skipped by whoever pops it (a lazy heap), so
 * the owner decides what a stale entry is and rebuilds the heap when
 * stale entries pile up (pctl_heap_clear, then pushes).
 */
#ifndef PCTL_CORE_HEAP_H
#define PCTL_CORE_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct pctl_heap_entry {
    int64_t key, id;
} pctl_heap_entry;

/* Zero-initialised is an empty heap. */
typedef struct pctl_heap {
    pctl_heap_entry *v;
    size_t n, cap;
} pctl_heap;

/* Adds (key, id).  0, or PLANCTL_ENOMEM with the heap unchanged. */
int pctl_heap_push(pctl_heap *h, int64_t key, int64_t id);

/* The entry with the smallest key (of equal keys, the smallest id), or
 * NULL when the heap is empty.  Can't fail. */
const pctl_heap_entry *pctl_heap_top(const pctl_heap *h);

/* Removes the top entry; an empty heap is left as it is.  Can't fail. */
void pctl_heap_pop(pctl_heap *h);

/* Empties the heap, keeping its room.  Can't fail. */
void pctl_heap_clear(pctl_heap *h);

/* Frees the heap's room; it is an empty heap again.  Can't fail. */
void pctl_heap_free(pctl_heap *h);

#endif
