/*
 * falias.h - the field names users write that are not planctl's, with the
 * field to write instead: "retries" on a step is "retry": {"attempts": N},
 * "parallel": true on a phase is "strategy": "parallel", "cmd" in a shell
 * spec is "command".  Edit distance finds a typo ("retrys"); these are the
 * words of other tools, which it misses or answers wrongly ("cmd" is one
 * edit from "cwd").
 *
 * Nodes are named by their path in the reference (core/schema.h), and
 * tests/unit/test_defschema.c checks that every target is a field there.
 */
#ifndef PCTL_CORE_FALIAS_H
#define PCTL_CORE_FALIAS_H

#include <jansson.h>
#include <stddef.h>

#include "walk.h"

typedef struct pctl_falias {
    const char *node;   /* "plans.phases.steps" */
    const char *word;   /* what was written: "retries" */
    const char *target; /* below node, dotted: "retry.attempts" */
    const char *value;  /* JSON to show as its value; NULL: what was written */
} pctl_falias;

/* Every alias; *n receives their number.  Can't fail. */
const pctl_falias *pctl_faliases(size_t *n);

/* "did you mean \"retry\": {\"attempts\": 3}?" in h for word, written with
 * value in an object at node; NULL when word is no alias there.  Can't
 * fail. */
const char *pctl_falias_hint(pctl_hbuf *h, const char *node, const char *word,
                             const json_t *value);

/* The path in the reference of an object node (PCTL_NODE_STEP:
 * "plans.phases.steps"); NULL for a step's task, which is a string.
 * Can't fail. */
const char *pctl_node_path(pctl_node node);

#endif
