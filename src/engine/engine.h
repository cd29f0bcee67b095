/*
 * engine.h - the engine's internals, shared by engine.c (lifecycle,
 * handles, timers, executors) and pass.c (one pass: results, decisions,
 * commit, task starts).
 *
 * The engine is level-triggered.  Anything that may change what should
 * happen (a task finished, a timer fired, another process committed)
 * only asks for a pass; the pass runs at most once per loop iteration
 * (a zero-delay timer), so everything produced in one iteration is
 * committed in one transaction: group commit.  A pass reads the active
 * runs inside its write transaction, decides with the pure pctl_decide(),
 * writes every transition through the store's gate, commits, and only then
 * starts the tasks of steps that went IN_PROGRESS.
 */
#ifndef PCTL_ENGINE_ENGINE_H
#define PCTL_ENGINE_ENGINE_H

#include <stdint.h>
#include <uv.h>

#include "core/def.h"
#include "engine/job.h"
#include "planctl.h"

/* Why a job is being cancelled; decides what its step becomes. */
typedef enum ejob_cancel {
    EJOB_LIVE = 0, /* not cancelled */
    EJOB_GONE,     /* its step left IN_PROGRESS elsewhere (cancel, timeout,
                      run failed): the outcome is dropped */
    EJOB_SHUTDOWN  /* the engine is stopping: ERROR, interrupted */
} ejob_cancel;

/* The engine's record of one step it is running. */
typedef struct ejob {
    struct ejob *next;
    planctl_job *job; /* the current task's job; NULL between tasks */
    int64_t step_id, run_id, def_id;
    int attempt, max_attempts;
    int task_index;            /* the task of the step being run */
    const pctl_step_def *sdef; /* in the definition cache, kept while used */
    const pctl_retry *retry;
    char *instance, *plan, *phase, *step, *params, *run_uid;
    int64_t deadline_at;
    int64_t poll_at; /* NOT_DONE: start the task again at this time */
    ejob_cancel cancel;
    const planctl_executor *ex; /* of the running task */
    int finished;      /* job's outcome delivered, waiting for the pass */
    int start_pending; /* start the current task after the commit */
    int fx;            /* what the pass decided for it (pass.c) */
    planctl_engine *engine;
} ejob;

typedef struct defent {
    int64_t id;
    pctl_def *def;
    int used; /* referenced in the current pass or by a job */
} defent;

typedef enum engine_state {
    ENGINE_NEW,
    ENGINE_RUNNING,
    ENGINE_STOPPING, /* finishing running steps, starting nothing */
    ENGINE_CLOSING,  /* handles closing */
    ENGINE_STOPPED
} engine_state;

struct planctl_engine {
    planctl *p;
    uv_loop_t *loop;
    planctl_engine_options o;
    engine_state state;
    int stop_rc;   /* why it stopped: 0, or the error */
    int64_t token; /* lease fencing token */
    int64_t data_version;

    uv_timer_t pass_timer; /* zero-delay: one pass per iteration */
    uv_timer_t wake_timer; /* the next retry, deadline or poll */
    uv_timer_t poll_timer; /* commits by other processes */
    uv_timer_t beat_timer; /* lease heartbeat */
    uv_timer_t grace_timer;
    pctl_hub hub;
    int handles_open;
    int pass_pending;
    int64_t backoff_ms; /* after a failed pass */

    ejob *jobs;
    int njobs;
    defent *defs;
    size_t ndefs;
    struct pctl_exec_ent *kinds;
    size_t nkinds;

    void (*done)(planctl_engine *e, void *data);
    void *done_data;
};

/* Asks for a pass in the next loop iteration (idempotent). */
void pctl_engine_request_pass(planctl_engine *e);

/* One pass (pass.c).  Returns 0, or the error that failed it (nothing of
 * it was committed). */
int pctl_engine_pass(planctl_engine *e);

/* The definition of def_id from the cache, loaded on first use; marks it
 * used.  NULL with the handle's message on failure. */
const pctl_def *pctl_engine_def(planctl_engine *e, int64_t def_id);

/* The executor of a task kind, or NULL. */
const planctl_executor *pctl_engine_executor(planctl_engine *e,
                                             const char *kind);

/* Starts the current task of j (after its IN_PROGRESS is committed).  On
 * failure to start, records an ERROR outcome and asks for a pass. */
void pctl_engine_start_task(planctl_engine *e, ejob *j);

/* Cancels j's running task (if any) for the given reason. */
void pctl_engine_cancel_job(planctl_engine *e, ejob *j, ejob_cancel why);

/* Removes j from the list and frees it (its job must be finished). */
void pctl_engine_drop_job(planctl_engine *e, ejob *j);

/* Arms the wake-up timer for time `at` (the handle's clock). */
void pctl_engine_arm_wake(planctl_engine *e, int64_t at);

/* Moves a stopping engine on: closes handles once no job is left. */
void pctl_engine_maybe_close(planctl_engine *e);

#endif
