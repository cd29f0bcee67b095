/*
 * validate.c - the validation runner.
 *
 * Each registered entry (a validator, or a sequentially group run as one
 * unit) gets a result slot of its own: a sink for a validator, one sink
 * per member for a group, nested as the groups are.  Workers take the next
 * unit from a shared counter and fill its slot; nothing else is shared, so
 * validators need no locks.  Once every unit has run, the slots are merged
 * in registration order - a group's members in their order, depth first -
 * which is what makes the output independent of which worker finished
 * first.  The merge drops a line already present (the first occurrence is
 * kept) and stops recording at PCTL_DEF_MAX_ERRORS, counting the rest.
 */
#include "validate.h"

#include <pthread.h>
#include <string.h>

#include "alloc.h"
#include "def.h"
#include "planctl.h"

/* The result of one validator or group: a group's lives in its members. */
typedef struct result {
    pctl_sink sink;
    struct result *members;
    size_t nmembers;
} result;

pctl_validator pctl_validator_of(const char *name, pctl_validate_fn fn,
                                 void *data)
{
    pctl_validator v;

    v.name = name;
    v.fn = fn;
    v.data = data;
    v.members = NULL;
    v.nmembers = 0;
    return v;
}

pctl_validator pctl_sequentially(const char *name,
                                 const pctl_validator *members, size_t n)
{
    pctl_validator v;

    v.name = name;
    v.fn = NULL;
    v.data = NULL;
    v.members = members;
    v.nmembers = n;
    return v;
}

int pctl_validators_add(pctl_validators *vs, pctl_validator v)
{
    if (vs->n == vs->cap) {
        size_t cap = vs->cap ? vs->cap * 2 : 8;
        pctl_validator *items = pctl_realloc(vs->items, cap * sizeof(*items));

        if (!items)
            return PLANCTL_ENOMEM;
        vs->items = items;
        vs->cap = cap;
    }
    vs->items[vs->n++] = v;
    return 0;
}

void pctl_validators_clear(pctl_validators *vs)
{
    pctl_free(vs->items);
    vs->items = NULL;
    vs->n = vs->cap = 0;
}

static void result_free(result *r)
{
    size_t i;

    pctl_sink_clear(&r->sink);
    for (i = 0; i < r->nmembers; i++)
        result_free(&r->members[i]);
    pctl_free(r->members);
    r->members = NULL;
    r->nmembers = 0;
}

/* Runs v into r (zeroed by the caller).  A group runs every member, in
 * order, whatever the earlier ones reported; only a failure stops it. */
static int run_unit(const pctl_validator *v, const pctl_vin *in, result *r)
{
    size_t i;

    if (v->fn)
        return v->fn(in, &r->sink, v->data);
    if (v->nmembers == 0)
        return 0;
    r->members = pctl_calloc(v->nmembers, sizeof(*r->members));
    if (!r->members)
        return PLANCTL_ENOMEM;
    r->nmembers = v->nmembers;
    for (i = 0; i < v->nmembers; i++)
        PCTL_CHECK(run_unit(&v->members[i], in, &r->members[i]));
    return 0;
}

/* ---- the merge ----------------------------------------------------------- */

typedef struct merge {
    pctl_ferr_list *errs;
    size_t recorded; /* lines this run added to errs */
    size_t more;     /* errors found but not recorded */
    size_t found;    /* every error the validators counted */
} merge;

static int merge_result(merge *m, result *r)
{
    size_t i, before = m->errs->n, dropped;
    size_t room = m->recorded < PCTL_DEF_MAX_ERRORS
                      ? PCTL_DEF_MAX_ERRORS - m->recorded
                      : 0;

    m->found += r->sink.nerrs;
    m->more += r->sink.nlost;
    PCTL_CHECK(pctl_ferr_list_merge(m->errs, &r->sink.errs, room, &dropped));
    m->recorded += m->errs->n - before;
    m->more += dropped;
    for (i = 0; i < r->nmembers; i++)
        PCTL_CHECK(merge_result(m, &r->members[i]));
    return 0;
}

/* ---- the workers --------------------------------------------------------- */

typedef struct pool {
    const pctl_validators *vs;
    const pctl_vin *in;
    result *results;
    int *rcs;
    pthread_mutex_t lock;
    size_t next; /* the next unit to take, under lock */
    int failed;  /* a unit failed: take no more, under lock */
} pool;

static void *worker(void *arg)
{
    pool *p = arg;

    for (;;) {
        size_t i;
        int rc;

        pthread_mutex_lock(&p->lock);
        i = p->failed ? p->vs->n : p->next;
        if (i < p->vs->n)
            p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->vs->n)
            return NULL;
        rc = run_unit(&p->vs->items[i], p->in, &p->results[i]);
        p->rcs[i] = rc;
        if (rc < 0) {
            pthread_mutex_lock(&p->lock);
            p->failed = 1;
            pthread_mutex_unlock(&p->lock);
        }
    }
}

/* Runs every unit on nworkers threads, the calling one included. */
static void run_units(pool *p, unsigned nworkers)
{
    pthread_t threads[PCTL_VALIDATE_MAX_WORKERS];
    size_t started = 0, i;

    if (nworkers > PCTL_VALIDATE_MAX_WORKERS)
        nworkers = PCTL_VALIDATE_MAX_WORKERS;
    if (nworkers > p->vs->n)
        nworkers = (unsigned)p->vs->n;
    /* A thread that cannot be started leaves more for the others: the
     * calling thread alone still runs everything. */
    while (nworkers > 1 && started + 1 < nworkers &&
           pthread_create(&threads[started], NULL, worker, p) == 0)
        started++;
    worker(p);
    for (i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
}

int pctl_validators_run_all(const pctl_validators *vs, const pctl_vin *in,
                            unsigned workers, pctl_ferr_list *errs)
{
    merge m = {NULL, 0, 0, 0};
    pool p;
    size_t i;
    int rc = 0;

    if (vs->n == 0)
        return 0;
    memset(&p, 0, sizeof(p));
    p.vs = vs;
    p.in = in;
    p.results = pctl_calloc(vs->n, sizeof(*p.results));
    p.rcs = pctl_calloc(vs->n, sizeof(*p.rcs));
    if (!p.results || !p.rcs) {
        rc = PLANCTL_ENOMEM;
        goto done;
    }
    if (pthread_mutex_init(&p.lock, NULL) != 0) {
        rc = PLANCTL_ENOMEM;
        goto done;
    }
    run_units(&p, workers);
    pthread_mutex_destroy(&p.lock);

    /* The first failure in registration order is the one reported. */
    for (i = 0; i < vs->n && rc == 0; i++)
        rc = p.rcs[i];
    if (rc < 0)
        goto done;
    m.errs = errs;
    for (i = 0; i < vs->n && rc == 0; i++)
        rc = merge_result(&m, &p.results[i]);
    if (rc == 0 && m.more)
        rc = pctl_ferr_add(errs, "", PCTL_FERR_TOO_MANY, NULL,
                           "%zu more errors; only the first %d are shown",
                           m.more, PCTL_DEF_MAX_ERRORS);
    if (rc == 0 && m.found)
        rc = PLANCTL_EDEFINITION;

done:
    for (i = 0; p.results && i < vs->n; i++)
        result_free(&p.results[i]);
    pctl_free(p.results);
    pctl_free(p.rcs);
    return rc;
}

int pctl_validator_run(const pctl_validator *v, const pctl_vin *in,
                       pctl_sink *s)
{
    result r;
    merge m = {NULL, 0, 0, 0};
    int rc;

    memset(&r, 0, sizeof(r));
    rc = run_unit(v, in, &r);
    if (rc == 0) {
        m.errs = &s->errs;
        rc = merge_result(&m, &r);
        s->nerrs += m.found;
        s->nlost += m.more;
    }
    result_free(&r);
    return rc;
}
