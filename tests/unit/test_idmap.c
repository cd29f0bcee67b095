/*
 * test_idmap.c - the id map of core/idmap.c against a brute-force
 * reference: ids of every kind, replacement, growth, the backward shift
 * of deletion in clusters that wrap around the end of the table, a long
 * pseudo-random sequence of operations, and failed allocations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/idmap.h"
#include "planctl.h"
#include "testutil.h"

/* Values are addresses in here: distinct, never NULL. */
static char vals[1024];

#define VAL(k) ((void *)&vals[(k) % sizeof vals])

/* A fixed-seed generator (splitmix64), so a failure can be replayed. */
static uint64_t rng_state;

static uint64_t rng(void)
{
    return tu_splitmix64(&rng_state);
}

static size_t home(const pctl_idmap *m, int64_t id)
{
    return pctl_idmap_hash(id) & (m->cap - 1);
}

/* The table's own invariants: the count, the size, empty slots all zero,
 * and each entry reachable from its home without crossing an empty slot.
 * (A duplicate or a stray id shows as a count the reference disagrees
 * with.) */
static void check_table(const pctl_idmap *m)
{
    size_t i, j, n = 0;

    if (m->cap == 0) {
        assert_null(m->slots);
        assert_int_equal(m->n, 0);
        return;
    }
    assert_non_null(m->slots);
    assert_int_equal(m->cap & (m->cap - 1), 0);
    assert_true(m->n * 2 <= m->cap);
    for (i = 0; i < m->cap; i++) {
        if (m->slots[i].id == 0) {
            assert_null(m->slots[i].v);
            continue;
        }
        n++;
        assert_non_null(m->slots[i].v);
        for (j = home(m, m->slots[i].id); j != i; j = (j + 1) & (m->cap - 1))
            if (m->slots[j].id == 0)
                fail_msg("id %lld at slot %zu: slot %zu on its way from "
                         "home %zu is empty",
                         (long long)m->slots[i].id, i, j,
                         home(m, m->slots[i].id));
    }
    assert_int_equal(n, m->n);
}

/* The reference: ids[k] maps to ref[k] (NULL: absent). */
typedef struct refmap {
    const int64_t *ids;
    void **ref;
    size_t n;
} refmap;

/* Every id of the reference is found, or not, as it says. */
static void check_against(const pctl_idmap *m, const refmap *r)
{
    size_t k, present = 0;

    check_table(m);
    for (k = 0; k < r->n; k++) {
        void *got = pctl_idmap_get(m, r->ids[k]);

        if (got != r->ref[k])
            fail_msg("id %lld: got %p, want %p", (long long)r->ids[k], got,
                     r->ref[k]);
        present += r->ref[k] != NULL;
    }
    assert_int_equal(present, m->n);
}

/* The next id from *cursor on, going by step (1 or -1), whose home is
 * slot h of a table of cap slots. */
static int64_t with_home(int64_t *cursor, int64_t step, size_t cap, size_t h)
{
    int64_t id = *cursor;

    while (id == 0 || (pctl_idmap_hash(id) & (cap - 1)) != h)
        id += step;
    *cursor = id + step;
    return id;
}

static void test_empty(void **state)
{
    pctl_idmap m = PCTL_IDMAP_INIT;

    (void)state;
    assert_null(pctl_idmap_get(&m, 1));
    assert_null(pctl_idmap_get(&m, 0));
    pctl_idmap_del(&m, 1);
    pctl_idmap_del(&m, 0);
    assert_int_equal(pctl_idmap_put(&m, 0, VAL(1)), PLANCTL_EINVAL);
    assert_int_equal(pctl_idmap_put(&m, 1, NULL), PLANCTL_EINVAL);
    check_table(&m);
    pctl_idmap_free(&m);
    pctl_idmap_free(&m);
    check_table(&m);

    /* Id 0 stays out of a map with a table too, and never matches an
     * empty slot. */
    assert_int_equal(pctl_idmap_put(&m, 7, VAL(7)), 0);
    assert_int_equal(pctl_idmap_put(&m, 0, VAL(0)), PLANCTL_EINVAL);
    assert_null(pctl_idmap_get(&m, 0));
    pctl_idmap_del(&m, 0);
    assert_int_equal(m.n, 1);
    assert_ptr_equal(pctl_idmap_get(&m, 7), VAL(7));
    check_table(&m);
    pctl_idmap_free(&m);
    check_table(&m);
    assert_null(pctl_idmap_get(&m, 7));
}

static void test_kinds_of_ids(void **state)
{
    static const int64_t ids[] = {
        1,
        -1,
        2,
        -2,
        INT64_MAX,
        INT64_MIN,
        INT64_MAX - 1,
        INT64_MIN + 1,
        (int64_t)1 << 32,
        -((int64_t)1 << 32),
        (int64_t)1 << 62,
        (int64_t)0x7FFFFFFF,
        (int64_t)0x80000000,
        (int64_t)0xFFFFFFFF,
        /* Multiples of 2^40 share their home in every table up to 2^11
         * slots: one long cluster. */
        (int64_t)1 << 40,
        (int64_t)2 << 40,
        (int64_t)3 << 40,
        (int64_t)4 << 40,
        -((int64_t)1 << 40),
        -((int64_t)5 << 40),
    };
    enum { N = sizeof ids / sizeof ids[0] };
    void *ref[N] = {0};
    refmap r = {ids, ref, N};
    pctl_idmap m = PCTL_IDMAP_INIT;
    size_t k, d;

    (void)state;
    for (k = 0; k < N; k++) {
        assert_int_equal(pctl_idmap_put(&m, ids[k], VAL(k)), 0);
        ref[k] = VAL(k);
        check_against(&m, &r);
    }
    /* Replacing keeps the count. */
    for (k = 0; k < N; k++) {
        assert_int_equal(pctl_idmap_put(&m, ids[k], VAL(100 + k)), 0);
        ref[k] = VAL(100 + k);
        check_against(&m, &r);
    }
    assert_int_equal(m.n, N);
    /* Deleting in an order unlike the insertion's; twice is no error. */
    for (k = 0; k < N; k++) {
        d = (k * 7 + 3) % N;
        pctl_idmap_del(&m, ids[d]);
        ref[d] = NULL;
        check_against(&m, &r);
        pctl_idmap_del(&m, ids[d]);
        check_against(&m, &r);
    }
    assert_int_equal(m.n, 0);
    pctl_idmap_free(&m);
}

/* Tens of thousands of ids, through several doublings, then most of
 * them deleted: every one is found or not as it should be. */
static void test_growth(void **state)
{
    enum { N = 40000 };
    int64_t *ids = calloc(N, sizeof *ids);
    void **ref = calloc(N, sizeof *ref);
    refmap r = {ids, ref, N};
    pctl_idmap m = PCTL_IDMAP_INIT;
    size_t k, last_cap = 0, doublings = 0;

    (void)state;
    assert_non_null(ids);
    assert_non_null(ref);
    for (k = 0; k < N; k++) /* sequential, as row ids are, both signs */
        ids[k] = k % 2 ? (int64_t)(k / 2 + 1) : -(int64_t)(k / 2 + 1);
    for (k = 0; k < N; k++) {
        assert_int_equal(pctl_idmap_put(&m, ids[k], VAL(k)), 0);
        ref[k] = VAL(k);
        if (m.cap != last_cap) {
            /* 64 at first, then twice as large at more than half full. */
            assert_int_equal(m.cap, last_cap ? last_cap * 2 : 64);
            assert_int_equal(m.n, last_cap / 2 + 1);
            check_against(&m, &r);
            last_cap = m.cap;
            doublings++;
        }
    }
    assert_true(doublings >= 10);
    check_against(&m, &r);
    for (k = 0; k < N; k++)
        if (k % 5 != 0) {
            pctl_idmap_del(&m, ids[k]);
            ref[k] = NULL;
        }
    /* Deleting never shrinks (nor allocates). */
    assert_int_equal(m.cap, last_cap);
    check_against(&m, &r);
    for (k = 0; k < N; k++) {
        assert_int_equal(pctl_idmap_put(&m, ids[k], VAL(k + 1)), 0);
        ref[k] = VAL(k + 1);
    }
    assert_int_equal(m.cap, last_cap);
    check_against(&m, &r);
    pctl_idmap_free(&m);
    free(ids);
    free(ref);
}

/*
 * A cluster that runs past the last slot of the 64-slot table and on
 * from slot 0: ids whose homes are the last slots and the first ones,
 * inserted in many orders, then each deleted in turn from a fresh copy,
 * and then all deleted in many orders.  After every step every id left
 * is found and the table's invariants hold.
 */
static void test_wrapped_cluster(void **state)
{
    /* Home slots, some shared, across the end: 60..63, then 0..2. */
    static const size_t homes[] = {61, 62, 62, 63, 60, 0,  63, 62, 1,  0,
                                   2,  61, 63, 0,  1,  62, 60, 2,  63, 1};
    enum { N = sizeof homes / sizeof homes[0] };
    int64_t ids[N];
    void *ref[N];
    refmap r = {ids, ref, N};
    size_t order[N], k, t, round, wrapped = 0;
    int64_t up = 1, down = -1;

    (void)state;
    /* Distinct ids for each home, positive and negative. */
    for (k = 0; k < N; k++)
        ids[k] = k % 2 ? with_home(&down, -1, 64, homes[k])
                       : with_home(&up, 1, 64, homes[k]);
    rng_state = 22;
    for (round = 0; round < 300; round++) {
        pctl_idmap m = PCTL_IDMAP_INIT;

        /* A random insertion order (the first round: as listed). */
        for (k = 0; k < N; k++)
            order[k] = k;
        for (k = N - 1; round > 0 && k > 0; k--) {
            size_t j = rng() % (k + 1), x = order[k];

            order[k] = order[j];
            order[j] = x;
        }
        memset(ref, 0, sizeof ref);
        for (k = 0; k < N; k++) {
            assert_int_equal(pctl_idmap_put(&m, ids[order[k]], VAL(order[k])),
                             0);
            ref[order[k]] = VAL(order[k]);
        }
        assert_int_equal(m.cap, 64); /* N <= 32: no growth */
        check_against(&m, &r);
        /* The cluster does wrap: slot 63 and slot 0 are both taken. */
        wrapped += m.slots[63].id != 0 && m.slots[0].id != 0;

        /* Each id deleted alone from a copy of the full table. */
        for (k = 0; k < N; k++) {
            pctl_idmap c = m;

            c.slots = malloc(m.cap * sizeof *m.slots);
            assert_non_null(c.slots);
            memcpy(c.slots, m.slots, m.cap * sizeof *m.slots);
            pctl_idmap_del(&c, ids[k]);
            ref[k] = NULL;
            check_against(&c, &r);
            ref[k] = VAL(k);
            free(c.slots);
        }

        /* Then all of them, in another random order, re-inserting now and
         * then so the cluster changes shape under the deletions. */
        for (k = 0; k < N; k++) {
            t = order[(k * 7 + round) % N];
            pctl_idmap_del(&m, ids[t]);
            ref[t] = NULL;
            check_against(&m, &r);
            if (rng() % 4 == 0) {
                size_t back = order[rng() % N];

                if (!ref[back]) {
                    assert_int_equal(
                        pctl_idmap_put(&m, ids[back], VAL(back + 1)), 0);
                    ref[back] = VAL(back + 1);
                    check_against(&m, &r);
                }
            }
        }
        for (k = 0; k < N; k++) {
            pctl_idmap_del(&m, ids[k]);
            ref[k] = NULL;
        }
        check_against(&m, &r);
        assert_int_equal(m.n, 0);
        pctl_idmap_free(&m);
    }
    assert_int_equal(wrapped, 300);
}

/* An exact case: the cluster 62, 63 | 0, 1, 2 and where each entry sits
 * after a deletion in its middle. */
static void test_wrapped_shift_exact(void **state)
{
    pctl_idmap m = PCTL_IDMAP_INIT;
    int64_t at62 = 1, at63 = 1, at0 = 1, at2 = 1;
    int64_t a = with_home(&at62, 1, 64, 62);
    int64_t b = with_home(&at62, 1, 64, 62);
    int64_t c = with_home(&at63, 1, 64, 63);
    int64_t d = with_home(&at0, 1, 64, 0);
    int64_t e = with_home(&at62, 1, 64, 62);
    int64_t f = with_home(&at2, 1, 64, 2);

    (void)state;
    assert_int_equal(pctl_idmap_put(&m, a, VAL(1)), 0); /* 62 */
    assert_int_equal(pctl_idmap_put(&m, b, VAL(2)), 0); /* 63 */
    assert_int_equal(pctl_idmap_put(&m, c, VAL(3)), 0); /* 0 */
    assert_int_equal(pctl_idmap_put(&m, d, VAL(4)), 0); /* 1 */
    assert_int_equal(pctl_idmap_put(&m, e, VAL(5)), 0); /* 2 */
    assert_int_equal(pctl_idmap_put(&m, f, VAL(6)), 0); /* 3 */
    assert_int_equal(m.slots[62].id, a);
    assert_int_equal(m.slots[63].id, b);
    assert_int_equal(m.slots[0].id, c);
    assert_int_equal(m.slots[1].id, d);
    assert_int_equal(m.slots[2].id, e);
    assert_int_equal(m.slots[3].id, f);

    /* Deleting b (63): c (home 63) moves back to 63, d (home 0) to 0,
     * e (home 62) to 1, f (home 2) to 2; slot 3 is empty. */
    pctl_idmap_del(&m, b);
    check_table(&m);
    assert_int_equal(m.slots[62].id, a);
    assert_int_equal(m.slots[63].id, c);
    assert_int_equal(m.slots[0].id, d);
    assert_int_equal(m.slots[1].id, e);
    assert_int_equal(m.slots[2].id, f);
    assert_int_equal(m.slots[3].id, 0);

    /* Deleting d (0): e (home 62) moves back to 0; f stays at its home. */
    pctl_idmap_del(&m, d);
    check_table(&m);
    assert_int_equal(m.slots[0].id, e);
    assert_int_equal(m.slots[1].id, 0);
    assert_int_equal(m.slots[2].id, f);

    /* Deleting a (62): c (home 63) stays; e (home 62, at 0) moves back to
     * 62, and 0 empties. */
    pctl_idmap_del(&m, a);
    check_table(&m);
    assert_int_equal(m.slots[62].id, e);
    assert_int_equal(m.slots[63].id, c);
    assert_int_equal(m.slots[0].id, 0);
    assert_int_equal(m.slots[2].id, f);
    assert_ptr_equal(pctl_idmap_get(&m, c), VAL(3));
    assert_ptr_equal(pctl_idmap_get(&m, e), VAL(5));
    assert_ptr_equal(pctl_idmap_get(&m, f), VAL(6));
    assert_null(pctl_idmap_get(&m, a));
    assert_null(pctl_idmap_get(&m, b));
    assert_null(pctl_idmap_get(&m, d));
    assert_int_equal(m.n, 3);
    pctl_idmap_free(&m);
}

/*
 * Long pseudo-random sequences of puts, replacements, gets and deletes,
 * each on a fresh map, checked against the reference at every step and
 * in full every so often.  The pool's first ids all have their homes
 * around the end of a 64-slot table, so the small episodes keep one
 * dense cluster wrapping there; the rest are of every kind (sequential,
 * negative, random, near the extremes, multiples of 2^40, which share
 * their home in small tables), and the large episodes grow the map
 * through several doublings.  The share of puts rises and falls, so each
 * map fills its pool, empties and fills again.
 */
static void test_random_sequence(void **state)
{
    enum { POOL = 3000, WRAPPED = 64 };
    static const struct {
        size_t pool, ops;
    } episodes[] = {
        {4, 20000},        {12, 50000},   {32, 200000},   {33, 100000},
        {WRAPPED, 100000}, {300, 200000}, {POOL, 300000},
    };
    int64_t *ids = calloc(POOL, sizeof *ids);
    void **ref = calloc(POOL, sizeof *ref);
    int64_t up = 1, down = -1, seq = 1;
    size_t k, j, e;

    (void)state;
    assert_non_null(ids);
    assert_non_null(ref);
    rng_state = 2022;
    for (k = 0; k < POOL; k++) {
        int64_t id;
        int dup;

        do {
            if (k < WRAPPED) {
                size_t h = (size_t)(61 + rng() % 5) & 63; /* 61..63, 0, 1 */

                id = k % 2 ? with_home(&down, -1, 64, h)
                           : with_home(&up, 1, 64, h);
            } else if (k % 5 == 0) {
                id = seq++; /* sequential, as row ids are */
            } else if (k % 5 == 1) {
                id = -seq++;
            } else if (k % 5 == 2) {
                id = (int64_t)rng();
            } else if (k % 5 == 3) {
                id = rng() % 2 ? INT64_MAX - (int64_t)(rng() % 100000)
                               : INT64_MIN + (int64_t)(rng() % 100000);
            } else {
                id = (int64_t)(rng() % 100000 + 1) << 40;
                id = rng() % 2 ? id : -id;
            }
            dup = id == 0;
            for (j = 0; !dup && j < k; j++)
                dup = ids[j] == id;
        } while (dup);
        ids[k] = id;
    }
    for (e = 0; e < sizeof episodes / sizeof episodes[0]; e++) {
        refmap r = {ids, ref, episodes[e].pool};
        pctl_idmap m = PCTL_IDMAP_INIT;
        size_t op, n = 0, max_n = 0, max_cap = 0;

        memset(ref, 0, POOL * sizeof *ref);
        for (op = 0; op < episodes[e].ops; op++) {
            unsigned wave = (unsigned)(op * 8 / episodes[e].ops % 4);
            unsigned put_pct = wave == 0   ? 85
                               : wave == 1 ? 45
                               : wave == 2 ? 15
                                           : 60;
            unsigned roll = (unsigned)(rng() % 100);

            k = (size_t)(rng() % episodes[e].pool);
            if (roll < put_pct) {
                void *v = VAL(rng());

                assert_int_equal(pctl_idmap_put(&m, ids[k], v), 0);
                n += ref[k] == NULL;
                ref[k] = v;
            } else if (roll < 90) {
                pctl_idmap_del(&m, ids[k]);
                n -= ref[k] != NULL;
                ref[k] = NULL;
            }
            if (pctl_idmap_get(&m, ids[k]) != ref[k])
                fail_msg("episode %zu op %zu: id %lld is wrong", e, op,
                         (long long)ids[k]);
            assert_int_equal(m.n, n);
            max_n = n > max_n ? n : max_n;
            max_cap = m.cap > max_cap ? m.cap : max_cap;
            if (op % 997 == 0)
                check_against(&m, &r);
        }
        check_against(&m, &r);
        /* Each filled most of its pool, and grew as far as that takes. */
        assert_true(max_n * 4 >= episodes[e].pool * 3);
        assert_true(max_cap >= 2 * max_n);
        pctl_idmap_free(&m);
    }
    free(ids);
    free(ref);
}

/* ---- failed allocations ---- */

static int fail_all;
static long allocations;

static void *t_malloc(size_t n)
{
    allocations++;
    return fail_all ? NULL : malloc(n);
}

static void *t_realloc(void *p, size_t n)
{
    allocations++;
    return fail_all ? NULL : realloc(p, n);
}

/* A put that cannot grow the table leaves the map as it was; replacing
 * and deleting never allocate, so they work all the same. */
static void test_alloc_fail(void **state)
{
    static const pctl_alloc_hooks hooks = {t_malloc, t_realloc, free};
    int64_t ids[40];
    void *ref[40] = {0};
    refmap r = {ids, ref, 40};
    pctl_idmap m = PCTL_IDMAP_INIT;
    size_t k;

    (void)state;
    for (k = 0; k < 40; k++)
        ids[k] = (int64_t)k * 1000 - 7;
    pctl_alloc_set_hooks(&hooks);

    /* The first put allocates the table. */
    fail_all = 1;
    allocations = 0;
    assert_int_equal(pctl_idmap_put(&m, ids[0], VAL(0)), PLANCTL_ENOMEM);
    assert_int_equal(allocations, 1);
    check_against(&m, &r);
    fail_all = 0;

    /* 32 fit in 64 slots; the 33rd doubles the table. */
    for (k = 0; k < 32; k++) {
        assert_int_equal(pctl_idmap_put(&m, ids[k], VAL(k)), 0);
        ref[k] = VAL(k);
    }
    assert_int_equal(m.cap, 64);
    fail_all = 1;
    allocations = 0;
    assert_int_equal(pctl_idmap_put(&m, ids[32], VAL(32)), PLANCTL_ENOMEM);
    assert_int_equal(allocations, 1);
    assert_int_equal(m.cap, 64);
    check_against(&m, &r);
    /* A full table still takes replacements, and deletions. */
    assert_int_equal(pctl_idmap_put(&m, ids[5], VAL(500)), 0);
    ref[5] = VAL(500);
    pctl_idmap_del(&m, ids[6]);
    ref[6] = NULL;
    check_against(&m, &r);
    /* That made room for one without growing. */
    assert_int_equal(pctl_idmap_put(&m, ids[32], VAL(32)), 0);
    ref[32] = VAL(32);
    assert_int_equal(pctl_idmap_put(&m, ids[33], VAL(33)), PLANCTL_ENOMEM);
    assert_int_equal(allocations, 2);
    check_against(&m, &r);

    fail_all = 0;
    assert_int_equal(pctl_idmap_put(&m, ids[33], VAL(33)), 0);
    ref[33] = VAL(33);
    assert_int_equal(m.cap, 128);
    check_against(&m, &r);
    pctl_idmap_free(&m);
    pctl_alloc_set_hooks(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_kinds_of_ids),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_wrapped_cluster),
        cmocka_unit_test(test_wrapped_shift_exact),
        cmocka_unit_test(test_random_sequence),
        cmocka_unit_test(test_alloc_fail),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
