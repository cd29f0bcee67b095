/*
 * tasks.c - running the tasks of a step: starting the current task with
 * its executor, cancelling it, and the engine's records of running steps.
 *
 * A step's tasks run in order, each to completion before the next; a
 * retried step resumes at its failed task (steps.task_index).  A start
 * that fails, or a kind nobody serves, becomes the task's outcome at once,
 * handled by the next pass like any other.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "engine/engine.h"
#include "store/store.h"

static void on_job_finish(planctl_job *job, void *owner)
{
    ejob *j = owner;

    (void)job;
    j->finished = 1;
    pctl_engine_request_pass(j->engine);
}

/* Records an outcome for j without an executor having run. */
static void fail_now(planctl_engine *e, ejob *j, planctl_job *job,
                     planctl_outcome outcome, const char *msg)
{
    job->finished = 1;
    job->outcome = outcome;
    job->message = pctl_strdup(msg);
    j->job = job;
    j->finished = 1;
    pctl_engine_request_pass(e);
}

void pctl_engine_start_task(planctl_engine *e, ejob *j)
{
    const pctl_def *def = NULL;
    const pctl_task_def *td;
    planctl_task_info info;
    planctl_job *job;
    size_t i;
    char msg[256];
    int rc;

    for (i = 0; i < e->ndefs; i++)
        if (e->defs[i].id == j->def_id)
            def = e->defs[i].def;
    job = pctl_job_new(&e->hub, on_job_finish, j);
    if (!job) {
        /* Nothing can record the failure; the step stays IN_PROGRESS
         * without a task and the next pass treats it as interrupted. */
        pctl_engine_drop_job(e, j);
        pctl_engine_request_pass(e);
        return;
    }
    if (!def || (size_t)j->task_index >= j->sdef->ntasks) {
        fail_now(e, j, job, PLANCTL_OUTCOME_FATAL,
                 "the step's definition is not loaded");
        return;
    }
    td = &def->tasks[j->sdef->tasks[j->task_index]];
    j->ex = pctl_engine_executor(e, td->kind);
    if (!j->ex) {
        snprintf(msg, sizeof msg,
                 "no executor for task kind \"%s\" (task \"%s\"); the engine "
                 "knows only the kinds registered with it",
                 td->kind, td->name);
        fail_now(e, j, job, PLANCTL_OUTCOME_FATAL, msg);
        return;
    }
    memset(&info, 0, sizeof info);
    info.instance = j->instance;
    info.plan = j->plan;
    info.phase = j->phase;
    info.step = j->step;
    info.task = td->name;
    info.kind = td->kind;
    info.spec = td->spec;
    info.params = j->params;
    info.run = j->run_id;
    info.attempt = j->attempt;
    info.deadline_ms = j->deadline_at;
    info.run_uid = j->run_uid;
    j->job = job;
    rc = j->ex->start(job, &info, j->ex->data);
    if (rc < 0) {
        snprintf(msg, sizeof msg, "cannot start task \"%s\": %s", td->name,
                 planctl_strerror(rc));
        fail_now(e, j, job, PLANCTL_OUTCOME_ERROR, msg);
    }
}

void pctl_engine_cancel_job(planctl_engine *e, ejob *j, ejob_cancel why)
{
    if (j->cancel != EJOB_LIVE || j->finished)
        return;
    j->cancel = why;
    if (j->job && !j->job->finished) {
        /* The executor reports back once stopped; its outcome is then
         * ignored (the pass looks at j->cancel). */
        j->ex->cancel(j->job, j->ex->data);
        return;
    }
    if (!j->job) {
        /* Between tasks or waiting to poll: nothing to stop. */
        j->finished = 1;
        pctl_engine_request_pass(e);
    }
}

void pctl_engine_drop_job(planctl_engine *e, ejob *j)
{
    ejob **pp;

    for (pp = &e->jobs; *pp; pp = &(*pp)->next) {
        if (*pp == j) {
            *pp = j->next;
            e->njobs--;
            break;
        }
    }
    pctl_job_free(j->job);
    pctl_free(j->instance);
    pctl_free(j->plan);
    pctl_free(j->phase);
    pctl_free(j->step);
    pctl_free(j->params);
    pctl_free(j->run_uid);
    pctl_free(j);
}
