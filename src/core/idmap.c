/* idmap.c - a hash map from a nonzero int64 id to a pointer (see idmap.h). */
#include "idmap.h"

#include <string.h>

#include "alloc.h"
#include "planctl.h"

#define FIRST_CAP 64

/* The slot holding id, or the empty slot that ends its probe sequence.
 * m has a table and id is not 0.  Can't fail. */
static pctl_idmap_slot *probe(const pctl_idmap *m, int64_t id)
{
    size_t mask = m->cap - 1, i = pctl_idmap_hash(id) & mask;

    while (m->slots[i].id != 0 && m->slots[i].id != id)
        i = (i + 1) & mask;
    return &m->slots[i];
}

/* Doubles the table (FIRST_CAP slots at first) and moves every entry
 * over.  0, or PLANCTL_ENOMEM with m unchanged. */
static int grow(pctl_idmap *m)
{
    pctl_idmap nm;
    size_t i;
    int rc = 0;

    nm.cap = m->cap ? m->cap * 2 : FIRST_CAP;
    nm.n = m->n;
    nm.slots = pctl_calloc(nm.cap, sizeof *nm.slots);
    if (!nm.slots) {
        rc = PLANCTL_ENOMEM;
    } else {
        for (i = 0; i < m->cap; i++)
            if (m->slots[i].id != 0)
                *probe(&nm, m->slots[i].id) = m->slots[i];
        pctl_free(m->slots);
        *m = nm;
    }
    return rc;
}

int pctl_idmap_put(pctl_idmap *m, int64_t id, void *v)
{
    pctl_idmap_slot *s = NULL;
    int rc = 0;

    if (id == 0 || !v) {
        rc = PLANCTL_EINVAL;
        goto done;
    }
    if (m->cap > 0)
        s = probe(m, id);
    if (!s || s->id != id) {
        /* A new id: room first, as it may move everything. */
        if ((m->n + 1) * 2 > m->cap) {
            if ((rc = grow(m)) < 0)
                goto done;
            s = probe(m, id);
        }
        s->id = id;
        m->n++;
    }
    s->v = v;
done:
    return rc;
}

void *pctl_idmap_get(const pctl_idmap *m, int64_t id)
{
    size_t mask = m->cap - 1, i;
    void *v = NULL;

    /* Not probe(): the loop must not take an empty slot for id 0. */
    if (m->cap > 0)
        for (i = pctl_idmap_hash(id) & mask; m->slots[i].id != 0;
             i = (i + 1) & mask)
            if (m->slots[i].id == id) {
                v = m->slots[i].v;
                break;
            }
    return v;
}

void pctl_idmap_del(pctl_idmap *m, int64_t id)
{
    size_t mask = m->cap - 1, i, j, home;
    pctl_idmap_slot *s = NULL;

    if (m->cap > 0 && id != 0)
        s = probe(m, id);
    if (s && s->id == id) {
        m->n--;
        /*
         * Backward shift.  The slot at i is a hole now.  An entry further
         * on in the cluster may fill it if the hole lies on its probe
         * sequence, i.e. its home is not in (i, j], cyclically: counted
         * back from j, its home is at least as far as i.  The entry moves
         * and the hole goes where it was, until the cluster ends; then
         * the hole is emptied.
         */
        i = (size_t)(s - m->slots);
        for (j = (i + 1) & mask; m->slots[j].id != 0; j = (j + 1) & mask) {
            home = pctl_idmap_hash(m->slots[j].id) & mask;
            if (((j - home) & mask) >= ((j - i) & mask)) {
                m->slots[i] = m->slots[j];
                i = j;
            }
        }
        m->slots[i].id = 0;
        m->slots[i].v = NULL;
    }
}

void pctl_idmap_free(pctl_idmap *m)
{
    pctl_free(m->slots);
    memset(m, 0, sizeof *m);
}
