/*
 * pipeline.h - the stages of pctl_def_parse() around the two runners: JSON
 * text to a document (decode), a document back to text, and a defaulted,
 * valid document to the model (build).
 */
#ifndef PCTL_CORE_PIPELINE_H
#define PCTL_CORE_PIPELINE_H

#include <jansson.h>
#include <stddef.h>

#include "def.h"
#include "ferr.h"
#include "walk.h"

/*
 * Parses text (len bytes) into *out.  A text over PCTL_DEF_MAX_BYTES, a
 * syntax error ("origin:line:col: text") or nesting deeper than
 * PCTL_DEF_MAX_DEPTH is one error in errs and PLANCTL_EDEFINITION, with
 * *out NULL; PLANCTL_ENOMEM likewise.
 */
int pctl_json_decode(json_t **out, const char *text, size_t len,
                     const char *origin, pctl_ferr_list *errs);

/*
 * v encoded as JSON text (jansson flags), in a new string (pctl_free).
 * Not json_dumps(): jansson (2.14) ignores a failed write of an object key,
 * so under memory pressure json_dumps can return a corrupt document as if
 * all were well.  Returns 0 or PLANCTL_ENOMEM.
 */
int pctl_json_encode(char **out, const json_t *v, size_t flags);

/* Builds the model from a document that is defaulted and passed every
 * rule.  tasks indexes its task names.  Returns 0, PLANCTL_ENOMEM, or
 * PLANCTL_ERROR for a document that was not defaulted (a bug). */
int pctl_def_build(pctl_def **out, const json_t *doc, const pctl_names *tasks);

#endif
