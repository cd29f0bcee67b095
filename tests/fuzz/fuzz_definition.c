/*
 * fuzz_definition.c - the libFuzzer target for the definition pipeline:
 * decode, defaults and every rule, with the built-in kinds and one
 * registered kind with a spec check, then the model built from what passes.
 *
 * Whatever the input, the pipeline must return 0 with a model or
 * PLANCTL_EDEFINITION with errors, never crash, leak or read out of
 * bounds; the asserts below turn a broken contract into a crash the fuzzer
 * keeps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/def.h"
#include "planctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An embedder's check: refuses a spec that mentions "no". */
static int check(const char *spec, char *err, size_t err_size, void *data)
{
    (void)data;
    if (!strstr(spec, "no"))
        return 0;
    strncpy(err, "no is no", err_size - 1);
    err[err_size - 1] = '\0';
    return -1;
}

static void require(int ok)
{
    if (!ok)
        abort();
}

static void parse(const char *text, size_t len, const pctl_def_opts *opts)
{
    pctl_ferr_list errs = PCTL_FERR_LIST_INIT;
    pctl_def *d = NULL;
    size_t i;
    int rc;

    rc = pctl_def_parse(&d, text, len, "fuzz.json", opts, &errs);
    require(rc == 0 || rc == PLANCTL_EDEFINITION);
    require((rc == 0) == (d != NULL));
    require((rc == 0) == (errs.n == 0));
    require(errs.n <= PCTL_DEF_MAX_ERRORS + 1);
    for (i = 0; i < errs.n; i++) {
        char *line = pctl_ferr_render(&errs.items[i]);

        require(line != NULL);
        pctl_free(line);
    }
    for (i = 0; d && i < d->nplans; i++) {
        const pctl_plan_def *pl = &d->plans[i];
        size_t j, k, t;

        require(pl->nphases > 0);
        for (j = 0; j < pl->nchecks; j++)
            require(pl->preflight[j].task < d->ntasks);
        for (j = 0; j < pl->nphases; j++) {
            require(pl->phases[j].nsteps > 0);
            for (k = 0; k < pl->phases[j].nsteps; k++) {
                const pctl_step_def *st = &pl->phases[j].steps[k];

                require(st->ntasks > 0 && st->retry.attempts >= 1);
                require(st->retry.max_backoff_ms >= st->retry.backoff_ms);
                for (t = 0; t < st->ntasks; t++)
                    require(st->tasks[t] < d->ntasks);
            }
        }
    }
    require(!d || pctl_def_plan(d, "deploy") != NULL);
    pctl_def_free(d);
    pctl_ferr_list_clear(&errs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pctl_kinds kinds = PCTL_KINDS_INIT;
    pctl_def_opts opts = PCTL_DEF_OPTS_INIT;

    if (kinds.n == 0 && pctl_kinds_add(&kinds, "Ext", check, NULL) != 0)
        abort();
    opts.workers = 1;
    /* As planctl validate and apply see it: kinds and specs checked. */
    opts.kinds = &kinds;
    parse((const char *)data, size, &opts);
    /* As the engine reads a stored definition back: structure only. */
    opts.kinds = NULL;
    parse((const char *)data, size, &opts);
    return 0;
}
