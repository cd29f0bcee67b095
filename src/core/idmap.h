/*
 * idmap.h - a hash map from a row id (any nonzero int64) to a pointer:
 * how the engine's cache finds a run, phase or step by id
 * (engine/cache.c) and the event queue a run's counter (store/journal.c).
 *
 * Open addressing with linear probing in a power-of-two table kept at
 * most half full, and backward-shift deletion, so there are no
 * tombstones and a lookup stops at the first empty slot.  Id 0 marks an
 * empty slot, which is why ids are nonzero (row ids are).
 */
#ifndef PCTL_CORE_IDMAP_H
#define PCTL_CORE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct pctl_idmap_slot {
    int64_t id; /* 0: empty */
    void *v;
} pctl_idmap_slot;

/* Zero-initialised (PCTL_IDMAP_INIT) is an empty map. */
typedef struct pctl_idmap {
    pctl_idmap_slot *slots; /* NULL until the first put */
    size_t cap, n;          /* cap: 0 or a power of two, at least 2 * n */
} pctl_idmap;

#define PCTL_IDMAP_INIT                                                        \
    {                                                                          \
        NULL, 0, 0                                                             \
    }

/* The hash of id: its home slot is pctl_idmap_hash(id) & (cap - 1).  The
 * multiply spreads consecutive ids (Fibonacci hashing); the shift folds
 * high bits into the low ones the mask keeps.  Can't fail. */
static inline size_t pctl_idmap_hash(int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15u;

    return (size_t)(x ^ (x >> 29));
}

/* Maps id to v, replacing what id mapped to.  0, or PLANCTL_ENOMEM (the
 * map is unchanged) or PLANCTL_EINVAL (id is 0 or v is NULL). */
int pctl_idmap_put(pctl_idmap *m, int64_t id, void *v);

/* What id maps to, or NULL when nothing does.  Can't fail. */
void *pctl_idmap_get(const pctl_idmap *m, int64_t id);

/* Removes id from the map; an id not in it is no error.  It never
 * allocates: can't fail. */
void pctl_idmap_del(pctl_idmap *m, int64_t id);

/* Frees the table; m is an empty map again.  Can't fail. */
void pctl_idmap_free(pctl_idmap *m);

#endif
