/*
 * engine.h - the engine's internals, shared by engine.c (lifecycle,
 * handles, timers), pass.c (one pass: outcomes, decisions, commit),
 * tasks.c (the jobs: starting, cancelling, finishing their tasks) and
 * defs.c (the definition cache, executors, runs waiting for a kind).
 *
 * They call each other one way only, engine.c on top:
 *
 *     engine.c -> pass.c  -> defs.c
 *     engine.c -> tasks.c -> defs.c
 *     engine.c -> defs.c
 *
 * (and all of them down to metrics.c, job.c, orphans.c and the store).
 *
 * engine.c runs a pass, which decides and commits and hands back what it
 * decided (pctl_pass_result); engine.c then gives the jobs' part to
 * tasks.c, arms the wake-up and asks for the next pass.  Nothing below
 * calls up: a job's report reaches the engine through the function it
 * installed (planctl_engine.request_pass).
 *
 * The engine is level-triggered.  Anything that may change what should
 * happen (a task finished, a timer fired, another process committed)
 * only asks for a pass; the pass runs at most once per loop iteration
 * (in its idle phase, after the loop has polled), so everything
 * produced in one iteration is committed in one transaction: group
 * commit.  A pass reads the active runs inside its write transaction
 * (from its cache, kept true between passes from what the store reports
 * of its writes, cache.h), decides with the pure pctl_decide() for the
 * runs that may have something to do, writes every transition through
 * the store's gate (its events written together at the commit,
 * store/journal.c), commits, and only then starts the tasks of steps
 * that went IN_PROGRESS.  A pass is bounded (pass.c): what is left waits
 * for the next one, asked for at once.
 */
#ifndef PCTL_ENGINE_ENGINE_H
#define PCTL_ENGINE_ENGINE_H

#include <stdint.h>
#include <uv.h>

#include "core/def.h"
#include "core/idmap.h"
#include "engine/job.h"
#include "planctl.h"
#include "store/store.h"

/* Why a job is being cancelled; decides what its step becomes. */
typedef enum ejob_cancel {
    EJOB_LIVE = 0, /* not cancelled */
    EJOB_GONE,     /* its step left IN_PROGRESS elsewhere (cancel, timeout,
                      run failed): the outcome is dropped */
    EJOB_SHUTDOWN  /* the engine is stopping: ERROR, interrupted */
} ejob_cancel;

/* What a pass decided for a job that reported (pass.c), applied once the
 * pass committed (tasks.c). */
typedef enum ejob_fx {
    EJOB_FX_NONE = 0,  /* nothing yet: its report waits for a pass */
    EJOB_FX_DROP,      /* its step ended (or is not ours): forget it */
    EJOB_FX_NEXT_TASK, /* its task is done: start the step's next */
    EJOB_FX_POLL       /* its task is not done: start it again later */
} ejob_fx;

/* The engine's record of one step it is running.  Besides the list of
 * all jobs, a job is on the `done` list from its report until a pass has
 * applied it, and on the `waiting` list while it has no task running (new,
 * between tasks, or waiting to be polled), so a pass touches the jobs that
 * changed, not all of them. */
typedef struct ejob {
    struct ejob *next, *prev;
    struct ejob *done_next, *done_prev;
    struct ejob *wait_next, *wait_prev;
    int in_done, in_wait;
    planctl_job *job; /* the current task's job; NULL between tasks */
    int64_t step_id, run_id, def_id;
    int attempt, max_attempts;
    int task_index;            /* the task of the step being run */
    const pctl_step_def *sdef; /* in the definition cache, kept while used */
    const pctl_retry *retry;
    /* Its run's and step's names, parameters and uid, all in one block
     * (strings, owned), taken over from the pass's pctl_start. */
    char *strings;
    const char *instance, *plan, *phase, *step, *params, *run_uid;
    int64_t deadline_at;
    int64_t poll_at; /* NOT_DONE: start the task again at this time */
    ejob_cancel cancel;
    const planctl_executor *ex; /* of the running task */
    int finished;      /* job's outcome delivered, waiting for the pass */
    int start_pending; /* start the current task after the commit */
    ejob_fx fx;        /* what the pass decided for it (pass.c) */
    /* The outputs of this attempt's tasks so far (core/outputs.h), NULL
     * until one has some, and their size; seed: resumed at a later task,
     * the earlier tasks' outputs are the previous attempt's. */
    json_t *outputs;
    size_t outputs_size;
    int seed;
    /* Bytes of output this attempt's earlier tasks wrote: a task's own
     * count starts after them, so the attempt's count only grows. */
    int64_t output_base;
    char *output_prev; /* what they kept of it (NULL: none), owned */
    planctl_engine *engine;
} ejob;

typedef struct defent {
    int64_t id;
    pctl_def *def;
    size_t jobs; /* of the engine's jobs, those that run its steps */
    /* Per plan (def->plans' order), once looked at: the first task kind it
     * uses that this engine has no executor for, or NULL. */
    const char **missing;
    unsigned char *checked;
} defent;

typedef enum engine_state {
    ENGINE_NEW,
    ENGINE_RUNNING,
    ENGINE_STOPPING, /* finishing running steps, starting nothing */
    ENGINE_CLOSING,  /* handles closing */
    ENGINE_STOPPED
} engine_state;

/* Why the next pass of one of several engines claims (want_claim).  After
 * its heartbeat's look or its runs' end's, short of its share, it asks
 * the others for runs (pass.c ask_if_short). */
#define PCTL_CLAIM_WOKEN 1 /* a notification: it looks at the shares */
#define PCTL_CLAIM_BEAT 2  /* its heartbeat: it looks at the shares */
#define PCTL_CLAIM_AGAIN 3 /* going on: the shares it last looked at */
#define PCTL_CLAIM_SHORT 4 /* its runs ended: it looks at the shares */

struct planctl_engine {
    planctl *p;
    uv_loop_t *loop;
    /* The engine's own loop (planctl_engine_new with loop NULL, run by
     * planctl_engine_run), the same as loop; NULL: the embedder's. */
    uv_loop_t *own_loop;
    int own_run; /* planctl_engine_run is starting it */
    planctl_engine_options o;
    engine_state state;
    int stop_rc; /* why it stopped: 0, or the error */
    /* stop_rc's message as it was when the engine stopped: what the
     * engine did after (closing, leaving the fleet) may fail too and
     * replace the handle's message. */
    char *stop_msg;
    int fenced;    /* writes nothing more: lease lost, or its file gone */
    int64_t token; /* lease fencing token */
    /* One of several engines on the database (store/fleet.c): it claims
     * runs, and holds only those. */
    int fleet;
    char *name; /* its name (a copy of o.name), or NULL */
    /* Whether the next pass claims runs nobody holds, up to its fair
     * share: 0 no; PCTL_CLAIM_WOKEN (a notification), PCTL_CLAIM_BEAT (a
     * heartbeat) and PCTL_CLAIM_SHORT (its runs ended) look at the shares
     * again, PCTL_CLAIM_AGAIN goes on with those it last looked at (pass.c
     * claim). */
    int want_claim;
    /* Its fair share of the active runs as last looked at (pass.c claim;
     * -1 before): above it by more than one, it gives back runs between
     * steps, and goes on (shedding) until it is down to it. */
    int64_t fleet_share;
    int shedding;
    /* Runs nobody held when it last claimed, beyond what it took, and
     * how many it held then: once it holds fewer (its runs ended), it
     * claims again at once rather than at its next heartbeat, as its
     * own commits wake nobody (pass.c). */
    int64_t unheld_left, held_at_claim;
    /* How many it held after its last claim that counted the shares:
     * down to half of it with nobody's runs left (and at none), it counts
     * them again, and asks the others for runs if short (pass.c). */
    int64_t held_at_count;
    /* The last run its claims took while going on with a backlog (0: its
     * next claim starts from the first run): runs below it are not looked
     * at again until the runs after it run out (pass.c claim). */
    int64_t claim_after;
    uint64_t beat_at;           /* uv_hrtime() when its last heartbeat began */
    struct pctl_keeper *keeper; /* kills its tasks when it cannot
                                   (keeper.c) */
    int64_t heard; /* others' commits that asked for attention (store.h
                      pctl_db_heard) */

    uv_idle_t pass_idle;   /* a pass asked for: one per turn of the loop */
    uv_timer_t pass_timer; /* a pass tried again after a backoff */
    uv_timer_t wake_timer; /* the next retry, deadline or poll */
    uv_timer_t poll_timer; /* commits by other processes */
    uv_timer_t beat_timer; /* lease heartbeat */
    uv_timer_t grace_timer;
    uv_timer_t output_timer; /* writes the output of running tasks */
    uint64_t output_at;      /* uv_now() of its last write */
    pctl_hub hub;
    int handles_open;
    int pass_pending;
    int64_t backoff_ms; /* after a failed pass */
    int stop_failures;  /* passes failed since it began stopping */
    int in_pass;        /* inside pctl_engine_pass: the changes the observer
                           reports are the pass's; others' (this handle's outside
                           a pass too) reach the metrics through the feed */
    int swept; /* a pass has reaped what stopped attempts left (pass.c) */
    uint64_t sweep_until; /* uv_now() until which passes look again */

    ejob *jobs;
    int njobs;
    ejob *done_head, *done_tail; /* reported, not yet applied */
    ejob *wait_head, *wait_tail; /* no task running */
    struct pctl_active *active;  /* the active runs, kept between passes */
    defent *defs;
    size_t ndefs;
    int fd_budget; /* tasks the process has descriptors for */
    /* Runs noted as waiting for a task kind (to the engine itself, a
     * marker): asked of every run the pass leaves alone, so by id. */
    pctl_idmap waiting;
    /* What this engine recorded in run_waits of the runs it holds, by run
     * (a pctl_wait_cause as the pointer): so it writes only when a run
     * starts or stops waiting, or waits for something else (defs.c). */
    pctl_idmap waits;

    void (*done)(planctl_engine *e, void *data);
    void *done_data;

    /* Asks for a pass in the next loop iteration (idempotent): engine.c's
     * request_pass(), installed by planctl_engine_new.  tasks.c lies
     * below engine.c and calls up only through this: a job reports
     * through the hub (job.c) with nothing of engine.c on the stack, so
     * the news can only go up by a function the engine handed down, the
     * way hiredis's core calls the hooks an adapter installed and knows
     * no loop. */
    void (*request_pass)(planctl_engine *e);
    /* Asks for the output of running tasks to be written, at most once a
     * second (engine.c's request_output(), installed the same way). */
    void (*request_output)(planctl_engine *e);

    struct pctl_metrics *metrics; /* counters, histograms, log (metrics.c) */

    /* The engine's clock (engine.c): the handle's clock read once at
     * start, advanced by the monotonic clock; the handle's own is put back
     * when the engine closes. */
    int64_t clock_wall0;
    uint64_t clock_mono0; /* uv_hrtime() at clock_wall0 */
    pctl_clock handle_clock;
    int clock_installed;
    int clock_follows_wall; /* the handle's clock was the system's */
    int64_t clock_shift;    /* a jump of the wall clock the next pass applies */

    /* What other threads may ask of the engine (engine.c, "From any
     * thread"): a stop, fresh metrics, its health.  Under xt_lock: */
    pthread_mutex_t xt_lock;
    pthread_cond_t xt_cond; /* xt_gen moved, or xt_open became 2 */
    uv_async_t xt_async;    /* wakes the loop for them */
    int xt_open;            /* 0 not started, 1 xt_async usable, 2 closed */
    int xt_stop;            /* a stop is asked for, with xt_grace */
    int64_t xt_grace;
    int xt_metrics;  /* fresh metrics are asked for */
    uint64_t xt_gen; /* how many times xt_text was published */
    char *xt_text;   /* the metrics last published, owned */
    /* Health (planctl_engine_healthy), read by any thread: RUNNING and
     * not fenced, and the uv_hrtime() of the last heartbeat. */
    atomic_int xt_running;
    _Atomic uint64_t xt_beat_ns;
};

/* ---- pass.c: one pass ---- */

/* A step a pass moved to IN_PROGRESS: its job is made and its task
 * started once the pass committed.  The strings are copies (the cache's
 * rows may go while the job runs) in one block, owned here until a job
 * takes it over: one allocation per start, not one per string. */
typedef struct pctl_start {
    int64_t step_id, run_id, def_id, deadline_at;
    int attempt, max_attempts;
    int task_index; /* a retry resumes at the task that failed */
    const pctl_step_def *sdef;
    char *strings; /* holds the six below */
    const char *instance, *plan, *phase, *step, *params, *run_uid;
} pctl_start;

/* What a committed pass leaves to do, handed to engine.c.  What it
 * decided for the jobs that reported is on the jobs (ejob.fx, the done
 * list). */
typedef struct pctl_pass_result {
    int64_t now;        /* the pass's moment */
    int64_t wake_at;    /* the next retry, deadline or poll; 0: none */
    pctl_start *starts; /* steps that went IN_PROGRESS */
    size_t nstarts;
    ejob **cancels; /* jobs whose step ended: cancelled as EJOB_GONE */
    size_t ncancels;
    size_t active_runs;  /* runs still active */
    size_t waiting_runs; /* of them, waiting for a task kind */
    int runs_promoted;   /* queued runs the pass promoted: pass again */
    int more;            /* work left for the next pass, asked for at once */
} pctl_pass_result;

/* One pass: decides and commits (pass.c).  Returns 0 with *out filled
 * (free with pctl_pass_result_free), or the error that failed it: nothing
 * of it was committed, and *out is empty. */
int pctl_engine_pass(pctl_pass_result *out, planctl_engine *e);

/* Frees the starts no job took over and the cancels; the other fields
 * stay.  Can't fail. */
void pctl_pass_result_free(pctl_pass_result *res);

/* ---- defs.c: the definition cache, executors, runs waiting for a kind */

/* The definition of def_id from the cache, loaded on first use; marks it
 * used.  NULL with the handle's message on failure. */
const pctl_def *pctl_engine_def(planctl_engine *e, int64_t def_id);

/* Frees what a cached definition owns.  Can't fail. */
void pctl_engine_defent_free(defent *d);

/* The first task kind the plan of def_id (cached by pctl_engine_def)
 * uses that this engine has no executor for, or NULL when it can run all
 * of them.  Borrowed from the definition.  Can't fail. */
const char *pctl_engine_missing_kind(planctl_engine *e, int64_t def_id,
                                     const pctl_plan_def *plan);

/* Notes that run waits for kind (once per run and engine: an event and a
 * log record).  Returns 0 or the error that failed the event. */
int pctl_engine_note_waiting(planctl_engine *e, int64_t run_id,
                             int64_t instance_id, const char *instance,
                             const char *plan, const char *kind);

/* Whether run_id was noted as waiting.  Can't fail. */
int pctl_engine_is_waiting(const planctl_engine *e, int64_t run_id);

/* Forgets the runs noted as waiting that are no longer active: those the
 * cache lists as gone (and empties that list), or, read anew, those it
 * does not hold.  Can't fail. */
void pctl_engine_forget_waiting(planctl_engine *e, struct pctl_active *a);

/* How many active runs are noted as waiting.  Can't fail. */
size_t pctl_engine_waiting_count(const planctl_engine *e);

/* Why a run waits, as run_waits records it. */
typedef enum pctl_wait_cause {
    PCTL_WAIT_NONE = 0,
    PCTL_WAIT_EXECUTOR = 1, /* for an engine with an executor of a kind */
    PCTL_WAIT_SLOT = 2      /* for a free slot of the concurrency */
} pctl_wait_cause;

/* Records why run_id waits (kind: the task kind, for EXECUTOR), when
 * that differs from what the engine recorded before: one write when a
 * run starts or stops waiting, none at a pass that changes nothing.
 * Inside the pass.  Errors: the store's. */
int pctl_engine_note_wait(planctl_engine *e, int64_t run_id,
                          pctl_wait_cause cause, const char *kind);

/* At a pass whose cache was read anew (a->fresh: the engine's start, or
 * after a rollback, when what it recorded may not be what it thinks):
 * forgets what it recorded and removes it from the database; every run
 * is decided in that pass and says again why it waits.  Before the
 * decisions.  Errors: the store's. */
int pctl_engine_waits_fresh(planctl_engine *e, struct pctl_active *a);

/* Forgets, and removes from the database, what was recorded of runs
 * that left the active set (a->gone) or that this engine just claimed
 * (ids[0..n): what their former holder recorded).  Before
 * pctl_engine_forget_waiting(), which empties a->gone.  Errors: the
 * store's. */
int pctl_engine_waits_gone(planctl_engine *e, struct pctl_active *a,
                           const int64_t *ids, size_t n);

/* The cached definition of def_id, or NULL.  Can't fail. */
defent *pctl_engine_defent(planctl_engine *e, int64_t def_id);

/* Counts a job made (delta 1) or dropped (-1) for its definition, which
 * is kept while a job uses it.  Can't fail. */
void pctl_engine_def_jobs(planctl_engine *e, int64_t def_id, int delta);

/* The executor of a task kind, or NULL. */
const planctl_executor *pctl_engine_executor(planctl_engine *e,
                                             const char *kind);

/* Drops the cached definitions that no active run or job uses, when the
 * set of active runs changed.  Can't fail. */
void pctl_engine_defs_trim(planctl_engine *e);

/* ---- tasks.c: the engine's jobs and their tasks ---- */

/* Starts the current task of j (after its IN_PROGRESS is committed).  On
 * failure to start, records an ERROR outcome and asks for a pass. */
void pctl_engine_start_task(planctl_engine *e, ejob *j);

/* Cancels j's running task (if any) for the given reason. */
void pctl_engine_cancel_job(planctl_engine *e, ejob *j, ejob_cancel why);

/* Writes the output so far of the running tasks that wrote more since the
 * last time, in one transaction of its own.  Returns 0, or the store's
 * error (the output is then left to be written again). */
int pctl_engine_write_output(planctl_engine *e);

/* Removes j from the lists and frees it (its job must be finished). */
void pctl_engine_drop_job(planctl_engine *e, ejob *j);

/* Adds a new job to the engine's list.  Can't fail. */
void pctl_engine_add_job(planctl_engine *e, ejob *j);

/* j has reported (or was stopped with no task running): marks it
 * finished, queues it for the next pass and asks for one. */
void pctl_engine_job_finished(planctl_engine *e, ejob *j);

/* The done and waiting lists (see ejob).  Can't fail; idempotent. */
void pctl_engine_done_remove(planctl_engine *e, ejob *j);
void pctl_engine_wait_add(planctl_engine *e, ejob *j);
void pctl_engine_wait_remove(planctl_engine *e, ejob *j);

/* Applies what a committed pass decided for the jobs, in this order:
 * cancels res->cancels (EJOB_GONE); drops, moves on or polls later the
 * jobs that reported (ejob.fx); makes the jobs of res->starts (taking
 * their strings over); starts every task that is due, or, the engine
 * stopping, cancels the jobs between tasks (EJOB_SHUTDOWN).  Lowers
 * res->wake_at to the next poll not yet due.  Can't fail: a job that
 * cannot be made or started is the next pass's to recover. */
void pctl_engine_apply_jobs(planctl_engine *e, pctl_pass_result *res);

/* ---- engine.c ---- */

/* Moves a stopping engine on: closes handles once no job is left. */
void pctl_engine_maybe_close(planctl_engine *e);

#endif
