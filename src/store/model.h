/*
 * model.h - a run with its phases, steps and attempts in memory, and the
 * one renderer of the documents of planctl-json(7).
 *
 * Two loaders fill it from independent sources: views.c from the tables,
 * replay.c from the events alone.  Because both render through
 * pctl_model_run_json(), `replay` at the last event and `status` agree
 * byte for byte exactly when the data agree, and replay.c's verify compares the
 * two models field by field.
 */
#ifndef PCTL_STORE_MODEL_H
#define PCTL_STORE_MODEL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "planctl.h"

typedef struct pctl_m_attempt {
    int number;
    planctl_status status;
    int64_t started_at, finished_at; /* 0: none */
    int exit_code;                   /* -1: none */
    char *message, *output;
    char *outputs; /* JSON text (core/outputs.h), or NULL */
} pctl_m_attempt;

typedef struct pctl_m_step {
    int64_t id;
    char *name;
    planctl_status status;
    int attempt, max_attempts;
    int64_t next_attempt_at, deadline_at, started_at, finished_at;
    char *message;
    char *outputs; /* JSON text: what later tasks see, or NULL */
    size_t nattempts;
    pctl_m_attempt *attempts;
} pctl_m_step;

typedef struct pctl_m_phase {
    int64_t id;
    char *name, *strategy;
    planctl_status status;
    int64_t started_at, finished_at;
    char *message;
    size_t nsteps;
    pctl_m_step *steps;
} pctl_m_phase;

typedef struct pctl_m_run {
    int64_t id, retry_of;
    char *uid, *plan, *trigger, *reason, *message;
    char *def_version; /* the definition version it runs */
    char *params; /* verify only: the snapshot, canonical (pctl_m_params) */
    planctl_status status;
    int64_t created_at, started_at, finished_at, deadline_at;
    size_t nphases;
    pctl_m_phase *phases;
} pctl_m_run;

/* A parameter snapshot as verify compares it: compact JSON with sorted
 * keys, or "(not JSON) " and the text as it is, so that a snapshot that
 * does not parse differs from every one that does.  NULL when out of
 * memory. */
char *pctl_m_params(const char *text);

/* Frees what a run owns (not the struct itself).  Can't fail. */
void pctl_m_run_clear(pctl_m_run *r);

/* The run object of planctl-json(7): with phases for status (with_phases 1),
 * without for history (0).  with_phases 2 also gives each step its
 * "outputs" and "attempts" (number, status, started_at, finished_at,
 * exit_code, message, outputs), for the status of a run chosen by id;
 * outputs are objects (secret values "***") or null.  now is for the
 * duration of a run still going.  NULL on allocation failure. */
json_t *pctl_m_run_json(const pctl_m_run *r, int64_t now, int with_phases);

/* The envelopes of the status and history documents, shared by views.c
 * and replay.c so the two cannot differ: {schema, instance, definition,
 * active_run, queued:[], engine:null, parameters:null, plans:[]} and {schema,
 * instance, runs:[]}.  The caller fills the arrays.  NULL on allocation
 * failure. */
json_t *pctl_m_status_doc(const char *instance, const char *def_name,
                          const char *def_version, int64_t active_run);
json_t *pctl_m_history_doc(const char *instance);

/* A plan entry {name, strategy, status, run}; takes over run (NULL: the
 * plan never ran).  NULL on allocation failure. */
json_t *pctl_m_plan_json(const char *name, const char *strategy, json_t *run);

/* Appends a phase / a step / an attempt, zeroed, and returns it; NULL on
 * allocation failure. */
pctl_m_phase *pctl_m_add_phase(pctl_m_run *r);
pctl_m_step *pctl_m_add_step(pctl_m_phase *ph);
pctl_m_attempt *pctl_m_add_attempt(pctl_m_step *s);

/*
 * Compares two models of one run, field by field, and describes the first
 * difference into buf ("run 12 step node-1: status: tables say COMPLETE,
 * events say IN_PROGRESS").  Returns 1 when they differ, 0 when equal.
 * a is the tables', b the events'.  Can't fail.
 */
int pctl_m_run_diff(char *buf, size_t size, const pctl_m_run *a,
                    const pctl_m_run *b);

#endif
