/*
 * heap.c - the binary min-heap of core/heap.h: v[0] is the smallest, and
 * every entry is no larger than its children v[2i+1] and v[2i+2].
 */
#include "core/heap.h"

#include "core/alloc.h"
#include "planctl.h"

static int less(const pctl_heap_entry *a, const pctl_heap_entry *b)
{
    return a->key < b->key || (a->key == b->key && a->id < b->id);
}

int pctl_heap_push(pctl_heap *h, int64_t key, int64_t id)
{
    pctl_heap_entry e = {key, id};
    size_t i;

    if (pctl_grow((void **)&h->v, h->n, &h->cap, sizeof *h->v) < 0)
        return PLANCTL_ENOMEM;
    /* Up from the new leaf while the parent is larger. */
    for (i = h->n++; i > 0 && less(&e, &h->v[(i - 1) / 2]); i = (i - 1) / 2)
        h->v[i] = h->v[(i - 1) / 2];
    h->v[i] = e;
    return 0;
}

const pctl_heap_entry *pctl_heap_top(const pctl_heap *h)
{
    return h->n > 0 ? &h->v[0] : NULL;
}

void pctl_heap_pop(pctl_heap *h)
{
    pctl_heap_entry last;
    size_t i = 0, c;

    if (h->n == 0)
        return;
    last = h->v[--h->n];
    /* The last leaf goes down from the root, the smaller child up. */
    while ((c = 2 * i + 1) < h->n) {
        if (c + 1 < h->n && less(&h->v[c + 1], &h->v[c]))
            c++;
        if (!less(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n > 0)
        h->v[i] = last;
}

void pctl_heap_clear(pctl_heap *h)
{
    h->n = 0;
}

void pctl_heap_free(pctl_heap *h)
{
    pctl_free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}
