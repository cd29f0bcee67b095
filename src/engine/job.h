/*
 * job.h - jobs (one execution of one task) and the hub that brings their
 * outcomes back to the loop thread.
 *
 * planctl_step_finish() may be called from any thread, including from
 * inside an executor's start().  It only records the result and queues the
 * job on its hub under a mutex, then wakes the loop with uv_async_send();
 * the hub's async callback hands each finished job to its owner on the
 * loop thread.  Going through the queue even on the loop thread means an
 * owner never sees a finish re-entrantly, in the middle of start().
 */
#ifndef PCTL_ENGINE_JOB_H
#define PCTL_ENGINE_JOB_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include "core/def.h"
#include "engine/sigchld.h"
#include "planctl.h"

typedef struct pctl_hub pctl_hub;

struct planctl_job {
    pctl_hub *hub;
    /* Called on the loop thread once the job has finished. */
    void (*on_finish)(planctl_job *job, void *owner);
    void *owner;
    void *exec_data; /* planctl_job_set_data */
    /* The result, written by the finishing thread before it is queued.
     * finished is atomic: the loop thread reads it (to decide whether to
     * cancel) while another thread may be finishing the job. */
    atomic_int finished;
    planctl_outcome outcome;
    char *message;
    char *output;
    int exit_code;     /* -1: none */
    size_t output_max; /* bytes of output kept (the engine's output_size) */
    /* The engine's keeper (keeper.c), told of the shell's process
     * groups; NULL: none. */
    struct pctl_keeper *keeper;
    int64_t output_bytes; /* bytes of output written in all, -1: none */
    /* Live output, loop thread only (pctl_job_output_grew): whether output
     * came since the owner last took it, the executor's function giving
     * the output so far, and the owner's function told when it comes. */
    int live_dirty;
    char *(*live_text)(planctl_job *job, int64_t *bytes);
    void (*on_output)(planctl_job *job, void *owner);
    /* Outputs (planctl_job_add_output): the set (core/outputs.h, NULL
     * until one is added), its size, and the first refusal, which fails
     * the attempt. */
    json_t *outputs;
    size_t outputs_size;
    char *outputs_error;
    planctl_job *next; /* the hub's queue */
    /* The executor's release hook (version 2) and its data, called by
     * pctl_job_free(); NULL: none. */
    void (*release)(planctl_job *job, void *data);
    void *release_data;
};

struct pctl_hub {
    uv_loop_t *loop;
    uv_async_t async;
    pthread_mutex_t lock;
    planctl_job *head, *tail;
    int open;
    int closing; /* close callbacks still to come */
    /* Held by the first spawn on the loop, let go when the hub closes
     * (sigchld.c): the engine's, or a preflight's, hold on SIGCHLD. */
    pctl_sigchld chld;
    void (*on_closed)(pctl_hub *hub, void *data);
    void *closed_data;
};

/* Initialises the hub on loop (loop thread).  Returns 0 or a negative
 * PLANCTL_E* code. */
int pctl_hub_init(pctl_hub *hub, uv_loop_t *loop);

/* Closes the hub's handles, letting go of its hold on SIGCHLD (which puts
 * back what SIGCHLD was, see sigchld.h); on_closed(hub, data) runs once
 * they are closed (the hub's memory may be freed then).  Jobs still
 * queued are delivered first.  Loop thread. */
void pctl_hub_close(pctl_hub *hub, void (*on_closed)(pctl_hub *, void *),
                    void *data);

/* A new job on hub whose finish is delivered to on_finish(job, owner).
 * NULL on allocation failure. */
planctl_job *pctl_job_new(pctl_hub *hub,
                          void (*on_finish)(planctl_job *, void *),
                          void *owner);

/* What a job keeps of its output unless its engine says otherwise, and
 * the most an engine may keep (planctl_engine_options.output_size). */
#define PCTL_OUTPUT_SIZE_DEFAULT (PCTL_OUTPUT_KEEP_KIB * 1024)
#define PCTL_OUTPUT_SIZE_MAX (PCTL_OUTPUT_KEEP_MAX_KIB * 1024)

/*
 * An executor's news that its task wrote more output (loop thread only):
 * the first time since the owner last took it, job->on_output (if set)
 * is told, and text(job, &bytes) is what the owner calls, at its own
 * pace, for the output so far (the last output_max bytes, owned, NULL on
 * allocation failure) and the bytes written in all.  Can't fail.
 */
void pctl_job_output_grew(planctl_job *job,
                          char *(*text)(planctl_job *job, int64_t *bytes));

/* The last max bytes of output (max > 0), from a character boundary, as
 * valid UTF-8: a new string, NULL on allocation failure. */
char *pctl_job_output_tail(const char *output, size_t max);

/* The last max bytes of prev then cur (either may be NULL), as
 * pctl_job_output_tail keeps them: a new string, NULL on allocation
 * failure. */
char *pctl_job_output_join(const char *prev, const char *cur, size_t max);

/* Notes that ex's start() is about to be called for job, so that freeing
 * the job calls ex's release hook (a version 2 executor's; loop thread).
 * Can't fail. */
void pctl_job_bind(planctl_job *job, const planctl_executor *ex);

/* Frees a job: after its finish was delivered, or one never started;
 * first calls the release hook pctl_job_bind() noted.  NULL is allowed.
 * Can't fail. */
void pctl_job_free(planctl_job *job);

#endif
