/*
 * metrics.h - the engine's metrics registry (counters, gauges, histograms
 * rendered as Prometheus text) and its event log, fed by small hooks in
 * the engine (engine.c, pass.c) and by the store's gate.
 *
 * Transitions are told by the gate inside the pass's transaction, so they
 * are first kept as pending; the pass then either commits them (counted,
 * logged, observed as one batch) or drops them (rolled back: they never
 * happened).  Everything here runs on the loop thread.
 */
#ifndef PCTL_ENGINE_METRICS_H
#define PCTL_ENGINE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "planctl.h"

struct pctl_change;

/* The most buckets a histogram has (besides +Inf). */
#define PCTL_HIST_MAX 16

typedef struct pctl_hist {
    const double *bounds; /* upper bounds, increasing */
    size_t nbounds;
    uint64_t counts[PCTL_HIST_MAX + 1]; /* per bucket; the last is +Inf */
    double sum;
    uint64_t count;
} pctl_hist;

/* One status change made in the current transaction. */
typedef struct pctl_pending {
    planctl_entity entity;
    planctl_status from, to;
    int64_t run_id;
    int attempt;
    /* Only when a logger wants this change (else NULL): copies. */
    char *instance, *plan, *step, *message;
} pctl_pending;

typedef struct pctl_metrics {
    uint64_t transitions[PLANCTL_ENTITY__COUNT][PLANCTL_STATUS__COUNT];
    uint64_t attempts, retries, fatal_errors, pass_failures;
    /* What the passes read of the active runs (engine/cache.h). */
    uint64_t cache_full_reads, cache_runs_reread;
    uint64_t runs_decided; /* runs the passes decided (pass.c) */
    uint64_t runs_claimed; /* runs claimed from nobody (pass.c) */
    pctl_hist commit_seconds, batch, pass_seconds;
    pctl_pending *pending;
    size_t npending, cap;
    /* The logger (planctl_engine_set_logger). */
    void (*log_cb)(const planctl_log_record *rec, void *data);
    void *log_data;
    planctl_log_level log_min;
    uint64_t beat_at; /* uv_now() of the lease taken or last renewed */
} pctl_metrics;

/* A fresh registry, or NULL when out of memory. */
pctl_metrics *pctl_metrics_new(void);

/* Frees m and what it holds.  NULL is allowed.  Can't fail. */
void pctl_metrics_free(pctl_metrics *m);

/* Adds one observation.  Can't fail. */
void pctl_hist_observe(pctl_hist *h, double v);

/* One status change of the open transaction, as the store reported it
 * to the engine's observer (engine.c).  Can't fail (a change that cannot
 * be recorded for the log is still counted). */
void pctl_metrics_change(planctl_engine *e, const struct pctl_change *c,
                         int64_t run_id, int64_t instance_id, int attempt);

/* What a pass's sync of the active runs read (everything anew, or the
 * runs another writer changed) and the status changes others made, which
 * are counted and logged here with who made them.  Can't fail. */
struct pctl_sync_info;
void pctl_metrics_sync(planctl_engine *e, const struct pctl_sync_info *s);

/* A pass decided n runs (committed or not).  Can't fail. */
void pctl_metrics_decided(planctl_engine *e, size_t n);

/* The pass's transaction ended: rc 0 committed (the pending changes are
 * counted and logged, commit_ns and pass_ns observed), else rolled back
 * (the pending changes are dropped).  Can't fail. */
void pctl_metrics_pass_end(planctl_engine *e, int rc, uint64_t commit_ns,
                           uint64_t pass_ns);

/* A pass failed and is retried in backoff_ms: counted and logged with the
 * handle's message.  Can't fail. */
void pctl_metrics_pass_failed(planctl_engine *e, int64_t backoff_ms);

/* The lease was taken or renewed now.  Can't fail. */
void pctl_metrics_beat(planctl_engine *e);
/* n runs claimed by one of several engines.  Can't fail. */
void pctl_metrics_claimed(planctl_engine *e, size_t n);

/* Logs (warn) that a run waits for an engine with a task kind this one
 * has no executor for.  Can't fail. */
void pctl_metrics_waiting(planctl_engine *e, const char *instance, int64_t run,
                          const char *plan, const char *kind);

/* Logs an engine event (no run context) at level.  detail may be NULL.
 * Can't fail. */
void pctl_metrics_log(planctl_engine *e, planctl_log_level level,
                      const char *msg, const char *detail);

/*
 * The exposition text (Prometheus text format 0.0.4) of m with the gauges
 * given.  *out is malloc'd (pctl_free).  Returns 0 or PLANCTL_ENOMEM.
 */
typedef struct pctl_gauges {
    int64_t queue_depth, active_runs, running_steps;
    int64_t runs_held; /* active runs this engine holds (its cache) */
    int lease_held;
} pctl_gauges;
int pctl_metrics_render(char **out, const pctl_metrics *m,
                        const pctl_gauges *g);

/* Writes s escaped as a label value into dst (size n, NUL-terminated,
 * cut short if it does not fit).  Returns the length it needs (without
 * the NUL).  Can't fail. */
size_t pctl_metrics_escape(char *dst, size_t n, const char *s);

#endif
