/*
 * test_heap.c - the min-heap of core/heap.c against a brute-force
 * reference: order by key then id, equal keys, the shape after every
 * operation, a long pseudo-random sequence of pushes and pops, clearing,
 * and a failed allocation that leaves the heap as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/heap.h"
#include "planctl.h"
#include "testutil.h"

/* A fixed-seed generator (splitmix64), so a failure can be replayed. */
static uint64_t rng_state;

static uint64_t rng(void)
{
    return tu_splitmix64(&rng_state);
}

/* The reference: an unordered array, its smallest found by a scan. */
typedef struct ref {
    pctl_heap_entry v[4096];
    size_t n;
} ref;

static int before(const pctl_heap_entry *a, const pctl_heap_entry *b)
{
    return a->key < b->key || (a->key == b->key && a->id < b->id);
}

static size_t ref_min(const ref *r)
{
    size_t i, m = 0;

    for (i = 1; i < r->n; i++)
        if (before(&r->v[i], &r->v[m]))
            m = i;
    return m;
}

/* Every parent no larger than its children, and the same entries as the
 * reference (as multisets: compared sorted). */
static int cmp_entry(const void *a, const void *b)
{
    const pctl_heap_entry *x = a, *y = b;

    return before(x, y) ? -1 : before(y, x) ? 1 : 0;
}

static void check_against(const pctl_heap *h, const ref *r)
{
    static pctl_heap_entry a[4096], b[4096];
    size_t i;

    assert_int_equal(h->n, r->n);
    for (i = 1; i < h->n; i++)
        if (before(&h->v[i], &h->v[(i - 1) / 2]))
            fail_msg("entry %zu is smaller than its parent", i);
    memcpy(a, h->v, h->n * sizeof *a);
    memcpy(b, r->v, r->n * sizeof *b);
    qsort(a, h->n, sizeof *a, cmp_entry);
    qsort(b, r->n, sizeof *b, cmp_entry);
    assert_memory_equal(a, b, h->n * sizeof *a);
}

static void test_empty(void **state)
{
    pctl_heap h = {0};

    (void)state;
    assert_null(pctl_heap_top(&h));
    pctl_heap_pop(&h); /* nothing to pop: no harm */
    assert_int_equal(h.n, 0);
    pctl_heap_free(&h);
}

static void test_order(void **state)
{
    pctl_heap h = {0};
    static const int64_t keys[] = {50, 10, 30, 10, 20, 50, -5, 10};
    static const int64_t ids[] = {1, 9, 2, 3, 4, 0, 7, 5};
    static const int64_t want_keys[] = {-5, 10, 10, 10, 20, 30, 50, 50};
    static const int64_t want_ids[] = {7, 3, 5, 9, 4, 2, 0, 1};
    size_t i;

    (void)state;
    for (i = 0; i < 8; i++)
        assert_int_equal(pctl_heap_push(&h, keys[i], ids[i]), 0);
    for (i = 0; i < 8; i++) {
        const pctl_heap_entry *t = pctl_heap_top(&h);

        assert_non_null(t);
        assert_int_equal(t->key, want_keys[i]);
        assert_int_equal(t->id, want_ids[i]);
        pctl_heap_pop(&h);
    }
    assert_null(pctl_heap_top(&h));
    /* Cleared, it keeps its room and works again. */
    assert_int_equal(pctl_heap_push(&h, 3, 3), 0);
    pctl_heap_clear(&h);
    assert_null(pctl_heap_top(&h));
    assert_true(h.cap > 0);
    assert_int_equal(pctl_heap_push(&h, 2, 2), 0);
    assert_int_equal(pctl_heap_top(&h)->key, 2);
    pctl_heap_free(&h);
    assert_null(h.v);
}

static void test_random_sequence(void **state)
{
    static ref r;
    pctl_heap h = {0};
    size_t op, m;

    (void)state;
    rng_state = 16;
    r.n = 0;
    for (op = 0; op < 200000; op++) {
        uint64_t x = rng();

        /* Pushes a little more often than pops, with few distinct keys
         * so that ties are common; now and then everything goes. */
        if (x % 1000 == 0) {
            pctl_heap_clear(&h);
            r.n = 0;
        } else if (x % 9 < 5 && r.n < 4096) {
            int64_t key = (int64_t)(rng() % 64) - 8,
                    id = (int64_t)(rng() % 512);

            assert_int_equal(pctl_heap_push(&h, key, id), 0);
            r.v[r.n].key = key;
            r.v[r.n++].id = id;
        } else if (r.n > 0) {
            m = ref_min(&r);
            assert_int_equal(pctl_heap_top(&h)->key, r.v[m].key);
            assert_int_equal(pctl_heap_top(&h)->id, r.v[m].id);
            pctl_heap_pop(&h);
            r.v[m] = r.v[--r.n];
        }
        if (op % 997 == 0)
            check_against(&h, &r);
    }
    check_against(&h, &r);
    pctl_heap_free(&h);
}

/* ---- a failed allocation ---- */

static int fail_all;

static void *t_malloc(size_t n)
{
    return fail_all ? NULL : malloc(n);
}

static void *t_realloc(void *p, size_t n)
{
    return fail_all ? NULL : realloc(p, n);
}

static void test_alloc_fail(void **state)
{
    static const pctl_alloc_hooks hooks = {t_malloc, t_realloc, free};
    static ref r;
    pctl_heap h = {0};
    int64_t k;

    (void)state;
    r.n = 0;
    pctl_alloc_set_hooks(&hooks);
    fail_all = 1;
    assert_int_equal(pctl_heap_push(&h, 1, 1), PLANCTL_ENOMEM);
    assert_int_equal(h.n, 0);
    fail_all = 0;
    /* Fill the first room exactly, then fail the growth. */
    for (k = 0; h.n == 0 || h.n < h.cap; k++) {
        assert_int_equal(pctl_heap_push(&h, 100 - k, k), 0);
        r.v[r.n].key = 100 - k;
        r.v[r.n++].id = k;
    }
    fail_all = 1;
    assert_int_equal(pctl_heap_push(&h, -1, 999), PLANCTL_ENOMEM);
    check_against(&h, &r);
    fail_all = 0;
    assert_int_equal(pctl_heap_push(&h, -1, 999), 0);
    assert_int_equal(pctl_heap_top(&h)->id, 999);
    pctl_heap_free(&h);
    pctl_alloc_set_hooks(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_random_sequence),
        cmocka_unit_test(test_alloc_fail),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
