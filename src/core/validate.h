/*
 * validate.h - the validation runner: validators registered in order, run
 * all of them (independent ones concurrently, up to a worker limit), and
 * report their errors flattened, de-duplicated and in registration order.
 */
#ifndef PCTL_CORE_VALIDATE_H
#define PCTL_CORE_VALIDATE_H

#include <jansson.h>
#include <stddef.h>

#include "ferr.h"
#include "kinds.h"
#include "walk.h"

/* The most workers pctl_validators_run_all() starts, whatever it is
 * asked for. */
#define PCTL_VALIDATE_MAX_WORKERS 16

/* What every validator reads, all of it read-only while they run. */
typedef struct pctl_vin {
    const json_t *doc;       /* the defaulted document */
    const pctl_kinds *kinds; /* NULL: task kinds, specs and parameters'
                                variables go unchecked */
    const pctl_names *tasks; /* task names, as written */
    const pctl_names *plans; /* plan names */
} pctl_vin;

/*
 * A validator reports into its own sink (s), never into another's, and
 * must not modify anything in `in`: validators run at the same time on
 * the same input.  Returns 0 (errors found are entries in the sink, not
 * failures) or PLANCTL_ENOMEM.
 */
typedef int (*pctl_validate_fn)(const pctl_vin *in, pctl_sink *s, void *data);

/* A validator, or a sequentially group of them (fn NULL, members set). */
typedef struct pctl_validator {
    const char *name;
    pctl_validate_fn fn;
    void *data;
    const struct pctl_validator *members;
    size_t nmembers;
} pctl_validator;

/* One validator. */
pctl_validator pctl_validator_of(const char *name, pctl_validate_fn fn,
                                 void *data);

/* The combinator: members (borrowed; they must outlive every run) run in
 * order on one worker, all of them whatever errors the earlier ones found,
 * and their errors come in that order.  Groups may nest. */
pctl_validator pctl_sequentially(const char *name,
                                 const pctl_validator *members, size_t n);

typedef struct pctl_validators {
    size_t n, cap;
    pctl_validator *items; /* registration order */
} pctl_validators;

#define PCTL_VALIDATORS_INIT                                                   \
    {                                                                          \
        0, 0, NULL                                                             \
    }

/* Registers v after those registered before.  Returns 0 or
 * PLANCTL_ENOMEM. */
int pctl_validators_add(pctl_validators *vs, pctl_validator v);

/* Frees the list (not what its entries point to).  Can't fail. */
void pctl_validators_clear(pctl_validators *vs);

/*
 * Runs every validator of vs against in, on up to `workers` threads (0 or
 * 1: all on the calling thread; the calling thread is always one of the
 * workers, and a thread that cannot be started only means fewer workers).
 * Appends to errs, in registration order whatever finishes first, each
 * group's and validator's errors flattened, a line already in errs (or
 * reported earlier) dropped, at most PCTL_DEF_MAX_ERRORS of them and then
 * one "Too many: N more errors" line.
 *
 * Returns 0 when no validator reported anything, PLANCTL_EDEFINITION when
 * some did, or the first failure of a validator (PLANCTL_ENOMEM) - then
 * errs may hold part of the errors.
 */
int pctl_validators_run_all(const pctl_validators *vs, const pctl_vin *in,
                            unsigned workers, pctl_ferr_list *errs);

/* Runs one validator or group alone, on the calling thread, into s (which
 * the caller clears).  Returns 0 or the validator's failure. */
int pctl_validator_run(const pctl_validator *v, const pctl_vin *in,
                       pctl_sink *s);

#endif
