/*
 * pipeline.c - the definition pipeline: text to a validated model
 * (pctl_def_parse, pctl_def_decode); def.c holds the model's lifetime.
 *
 * A definition goes through four stages, each in its own file:
 *
 *   decode    (decode.c)    text -> JSON document.  Syntax errors are one
 *                           "file:line:col: text" error; so are a text over
 *                           4 MiB and nesting deeper than 64 levels, which
 *                           are refused before anything walks the document.
 *   defaults  (defaults.c)  registered defaults run in order over the
 *                           document, each filling absent fields only.  One
 *                           that fails is reported and the others still run;
 *                           then no model is built.
 *   validate  (validate.c,  registered validators (the rules) all run over
 *              rules*.c,    the defaulted document, read-only, concurrently
 *              specs.c)     up to a worker limit; their errors come back
 *                           flattened, de-duplicated and in registration
 *                           order, whatever finished first.
 *   build     (build.c)     a defaulted, valid document -> pctl_def.
 *
 * Why defaults before the rules: every rule, and the builder, then sees
 * one complete document, so no rule repeats a default and a default
 * cannot disagree with the value the engine later uses.  Why rules that
 * each walk the whole document instead of one walk doing everything: a rule
 * is a unit that can be tested alone, shown not to mutate its input, and
 * run beside the others; the shared walk (walk.c) makes them agree on what
 * they skip, so each problem is reported once, by the rule that owns it.
 *
 * Errors are Kubernetes field errors (ferr.h): "path: Type: message
 * (hint)".  Everything allocates through alloc.h, so the tests can fail
 * the Nth allocation of the whole pipeline.
 */
#include "pipeline.h"

#include <string.h>

#include "alloc.h"
#include "def.h"
#include "defaults.h"
#include "planctl.h"
#include "rules.h"

/* Below this size a definition is validated on the calling thread.  The
 * rules are cheap next to jansson's parse and free: measured on two cores,
 * four workers halved the time of a 2.5 MiB definition (720 to 340 ms) and
 * gained nothing at 220 KiB. */
#define PARALLEL_MIN_BYTES (1024 * 1024)
#define PARALLEL_WORKERS 4

static unsigned workers_for(const pctl_def_opts *opts, size_t len)
{
    if (opts && opts->workers)
        return opts->workers;
    return len >= PARALLEL_MIN_BYTES ? PARALLEL_WORKERS : 1;
}

int pctl_def_parse(pctl_def **out, const char *text, size_t len,
                   const char *origin, const pctl_def_opts *opts,
                   pctl_ferr_list *errs)
{
    pctl_names tasks, plans;
    json_t *doc = NULL;
    pctl_vin in;
    int rc, defaults_rc;

    *out = NULL;
    memset(&tasks, 0, sizeof(tasks));
    memset(&plans, 0, sizeof(plans));
    rc = pctl_json_decode(&doc, text, len, origin, errs);
    if (rc < 0)
        return rc;

    defaults_rc = pctl_defaults_run(
        opts && opts->defaults ? opts->defaults : pctl_defaults_builtin(), doc,
        errs);
    if (defaults_rc == PLANCTL_ENOMEM) {
        rc = defaults_rc;
        goto done;
    }

    if ((rc = pctl_names_build(&tasks, doc, 0)) < 0 ||
        (rc = pctl_names_build(&plans, doc, 1)) < 0)
        goto done;
    in.doc = doc;
    in.kinds = opts ? opts->kinds : NULL;
    in.tasks = &tasks;
    in.plans = &plans;
    rc = pctl_validators_run_all(opts && opts->rules ? opts->rules
                                                     : pctl_rules(),
                                 &in, workers_for(opts, len), errs);
    if (rc == 0 && defaults_rc < 0)
        rc = defaults_rc;
    if (rc == 0)
        rc = pctl_def_build(out, doc, &tasks);

done:
    pctl_names_free(&tasks);
    pctl_names_free(&plans);
    json_decref(doc);
    if (rc == 0 && errs->oom) {
        /* An error that could not be recorded still makes it invalid. */
        pctl_def_free(*out);
        *out = NULL;
        rc = PLANCTL_ENOMEM;
    }
    return rc;
}

int pctl_def_decode(pctl_def **out, const char *text, size_t len,
                    const char *origin, pctl_ferr_list *errs)
{
    return pctl_def_parse(out, text, len, origin, NULL, errs);
}

/* ---- the model ----------------------------------------------------------- */
