/*
 * tasks.c - running the tasks of a step: starting the current task with
 * its executor, cancelling it, and the engine's records of running steps.
 *
 * A step's tasks run in order, each to completion before the next; a
 * retried step resumes at its failed task (steps.task_index).  A start
 * that fails, or a kind nobody serves, becomes the task's outcome at once,
 * handled by the next pass like any other.
 *
 * tasks.c lies below engine.c and never calls up into it: what must
 * reach the engine (a job reported, or cannot be started) asks for a pass
 * through e->request_pass, which the engine installed, because a report
 * arrives from the hub with no caller in engine.c to return to.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/outputs.h"
#include "engine/cache.h"
#include "engine/engine.h"
#include "engine/executors.h"
#include "store/store.h"

/* ---- the engine's lists of jobs ---- */

void pctl_engine_add_job(planctl_engine *e, ejob *j)
{
    pctl_engine_def_jobs(e, j->def_id, 1);
    j->prev = NULL;
    j->next = e->jobs;
    if (e->jobs)
        e->jobs->prev = j;
    e->jobs = j;
    e->njobs++;
}

void pctl_engine_job_finished(planctl_engine *e, ejob *j)
{
    j->finished = 1;
    if (!j->in_done) {
        j->in_done = 1;
        j->done_next = NULL;
        j->done_prev = e->done_tail;
        if (e->done_tail)
            e->done_tail->done_next = j;
        else
            e->done_head = j;
        e->done_tail = j;
    }
    e->request_pass(e);
}

void pctl_engine_done_remove(planctl_engine *e, ejob *j)
{
    if (!j->in_done)
        return;
    if (j->done_prev)
        j->done_prev->done_next = j->done_next;
    else
        e->done_head = j->done_next;
    if (j->done_next)
        j->done_next->done_prev = j->done_prev;
    else
        e->done_tail = j->done_prev;
    j->done_next = j->done_prev = NULL;
    j->in_done = 0;
}

void pctl_engine_wait_add(planctl_engine *e, ejob *j)
{
    if (j->in_wait)
        return;
    j->in_wait = 1;
    j->wait_next = NULL;
    j->wait_prev = e->wait_tail;
    if (e->wait_tail)
        e->wait_tail->wait_next = j;
    else
        e->wait_head = j;
    e->wait_tail = j;
}

void pctl_engine_wait_remove(planctl_engine *e, ejob *j)
{
    if (!j->in_wait)
        return;
    if (j->wait_prev)
        j->wait_prev->wait_next = j->wait_next;
    else
        e->wait_head = j->wait_next;
    if (j->wait_next)
        j->wait_next->wait_prev = j->wait_prev;
    else
        e->wait_tail = j->wait_prev;
    j->wait_next = j->wait_prev = NULL;
    j->in_wait = 0;
}

/* ---- tasks ---- */

static void on_job_finish(planctl_job *job, void *owner)
{
    ejob *j = owner;

    (void)job;
    pctl_engine_job_finished(j->engine, j);
}

/* Its task wrote more output: written at the engine's pace. */
static void on_job_output(planctl_job *job, void *owner)
{
    ejob *j = owner;

    (void)job;
    j->engine->request_output(j->engine);
}

int pctl_engine_write_output(planctl_engine *e)
{
    pctl_live_output *out = NULL, *grown;
    size_t n = 0, cap = 0, i;
    ejob *j;
    int rc = 0;

    for (j = e->jobs; j && rc == 0; j = j->next) {
        planctl_job *job = j->job;
        int64_t bytes = 0;
        char *text;

        if (!job || !job->live_dirty || job->finished || !job->live_text ||
            j->cancel != EJOB_LIVE)
            continue;
        job->live_dirty = 0;
        if (!(text = job->live_text(job, &bytes)))
            continue; /* winding up: its outcome carries the output */
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            if (!(grown = pctl_realloc(out, cap * sizeof *out))) {
                pctl_free(text);
                job->live_dirty = 1;
                rc = PLANCTL_ENOMEM;
                break;
            }
            out = grown;
        }
        out[n].step_id = j->step_id;
        out[n].attempt = j->attempt;
        if (j->output_prev) {
            char *both =
                pctl_job_output_join(j->output_prev, text, job->output_max);

            pctl_free(text);
            if (!(text = both)) {
                job->live_dirty = 1;
                rc = PLANCTL_ENOMEM;
                break;
            }
        }
        out[n].output = text;
        out[n].bytes = j->output_base + bytes;
        n++;
    }
    if (rc == 0 && n)
        rc = pctl_attempt_live_output(e->p, e->token, out, n);
    for (i = 0; i < n; i++)
        pctl_free((char *)out[i].output);
    pctl_free(out);
    if (rc < 0) /* written again with the next output, or at the end */
        for (j = e->jobs; j; j = j->next)
            if (j->job && j->job->live_text && !j->job->finished)
                j->job->live_dirty = 1;
    return rc;
}

/* Records an outcome for j without an executor having run. */
static void fail_now(planctl_engine *e, ejob *j, planctl_job *job,
                     planctl_outcome outcome, const char *msg)
{
    job->finished = 1;
    job->outcome = outcome;
    job->message = pctl_strdup(msg);
    j->job = job;
    pctl_engine_job_finished(e, j);
}

/*
 * The outputs j's task is given (planctl_task_info.outputs) in *out, a new
 * string or NULL when none: those of the run's steps that completed with
 * some, and those of the earlier tasks of j's own attempt under its own
 * step.  Dummy tasks get none: nothing is read for them, so a run without
 * outputs costs what it did before outputs existed; and a run known to
 * have none is not read again.  A step resumed at a later task first
 * takes the outputs its previous attempt recorded.  Errors: those of the
 * store (the message on the handle), ENOMEM.
 */
static int task_outputs(planctl_engine *e, ejob *j, char **out)
{
    json_t *all = NULL, *prev = NULL, *own;
    pctl_run_row *r = NULL;
    size_t pi, si;
    char why[256];
    int rc = 0;

    *out = NULL;
    if (j->seed) {
        j->seed = 0;
        rc = pctl_attempt_outputs(&prev, e->p, j->step_id, j->attempt - 1);
        if (rc == 0 && prev && !j->outputs && !(j->outputs = json_object()))
            rc = PLANCTL_ENOMEM;
        /* Within the limit when it was recorded; a refusal cannot come. */
        if (rc == 0 && prev &&
            pctl_outputs_merge(j->outputs, &j->outputs_size, why, sizeof why,
                               prev) == PLANCTL_ENOMEM)
            rc = PLANCTL_ENOMEM;
        json_decref(prev);
    }
    if (rc < 0 || j->ex->start == pctl_executor_dummy()->start)
        return rc;
    if (pctl_active_find_step(e->active, j->step_id, &r, &pi, &si) &&
        r->outputs == 1)
        all = json_object();
    else if ((rc = pctl_run_outputs(&all, e->p, j->run_id)) == 0 && r)
        r->outputs = json_object_size(all) ? 2 : 1;
    if (rc == 0 && !all)
        rc = PLANCTL_ENOMEM;
    if (rc == 0 && j->outputs && json_object_size(j->outputs) &&
        (!(own = json_deep_copy(j->outputs)) ||
         json_object_set_new(all, j->step, own) < 0))
        rc = PLANCTL_ENOMEM;
    if (rc == 0 && json_object_size(all) &&
        !(*out = json_dumps(all, JSON_COMPACT)))
        rc = PLANCTL_ENOMEM;
    json_decref(all);
    return rc;
}

void pctl_engine_start_task(planctl_engine *e, ejob *j)
{
    const pctl_def *def = NULL;
    const defent *d;
    const pctl_task_def *td;
    planctl_task_info info;
    planctl_job *job;
    char msg[256], *outputs = NULL;
    int rc;

    if ((d = pctl_engine_defent(e, j->def_id)))
        def = d->def;
    job = pctl_job_new(&e->hub, on_job_finish, j);
    if (job) {
        job->output_max = (size_t)e->o.output_size;
        job->keeper = e->keeper;
        job->on_output = on_job_output;
    }
    if (!job) {
        /* Nothing can record the failure; the step stays IN_PROGRESS
         * without a task and the next pass treats it as interrupted. */
        pctl_engine_drop_job(e, j);
        e->request_pass(e);
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
    if ((rc = task_outputs(e, j, &outputs)) < 0) {
        snprintf(msg, sizeof msg, "cannot read the outputs of run %lld: %s",
                 (long long)j->run_id,
                 rc == PLANCTL_ENOMEM ? "out of memory" : planctl_errmsg(e->p));
        fail_now(e, j, job, PLANCTL_OUTCOME_ERROR, msg);
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
    info.outputs = outputs;
    j->job = job;
    pctl_job_bind(job, j->ex);
    rc = j->ex->start(job, &info, j->ex->data);
    pctl_free(outputs);
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
        pctl_engine_wait_remove(e, j);
        pctl_engine_job_finished(e, j);
    }
}

void pctl_engine_drop_job(planctl_engine *e, ejob *j)
{
    pctl_run_row *r;
    size_t pi, si;

    if (j->prev)
        j->prev->next = j->next;
    else
        e->jobs = j->next;
    if (j->next)
        j->next->prev = j->prev;
    e->njobs--;
    pctl_engine_def_jobs(e, j->def_id, -1);
    pctl_engine_done_remove(e, j);
    pctl_engine_wait_remove(e, j);
    /* Its step may now be IN_PROGRESS with nobody running it: the next
     * pass looks at the run. */
    pctl_active_touch(e->active, j->run_id);
    if (pctl_active_find_step(e->active, j->step_id, &r, &pi, &si) &&
        r->phases[pi].steps[si].job == j)
        r->phases[pi].steps[si].job = NULL;
    pctl_job_free(j->job);
    json_decref(j->outputs);
    pctl_free(j->output_prev);
    pctl_free(j->strings);
    pctl_free(j);
}

/* ---- after a pass ---- */

/* Called by engine.c once a pass committed, never by the pass itself:
 * pass.c only records what it decided, so that it calls no file above
 * defs.c.  The order of the steps below is the one the pass's decisions
 * assume (a cancel and a report of the same step in one pass:
 * test_pass_races.c). */
void pctl_engine_apply_jobs(planctl_engine *e, pctl_pass_result *res)
{
    ejob *j, *next;
    size_t i;

    /* Cancels first: a job the commit also dropped is then already gone
     * from this list's point of view (it finished, so cancel skips it). */
    for (i = 0; i < res->ncancels; i++)
        pctl_engine_cancel_job(e, res->cancels[i], EJOB_GONE);
    /* What the pass decided for the jobs that reported (those it did not
     * get to stay on the done list for the next). */
    for (j = e->done_head; j; j = next) {
        next = j->done_next;
        switch (j->fx) {
        case EJOB_FX_DROP:
            pctl_engine_drop_job(e, j);
            continue;
        case EJOB_FX_NEXT_TASK:
            pctl_job_free(j->job);
            j->job = NULL;
            j->finished = 0;
            j->task_index++;
            j->start_pending = 1;
            break;
        case EJOB_FX_POLL:
            pctl_job_free(j->job);
            j->job = NULL;
            j->finished = 0;
            j->poll_at = res->now + e->o.task_poll_ms;
            break;
        default:
            continue;
        }
        j->fx = EJOB_FX_NONE;
        pctl_engine_done_remove(e, j);
        pctl_engine_wait_add(e, j);
    }
    /* New steps: the ejob takes the strings' block over. */
    for (i = 0; i < res->nstarts; i++) {
        pctl_start *s = &res->starts[i];
        ejob *nj = pctl_calloc(1, sizeof *nj);

        if (!nj) {
            /* The step stays IN_PROGRESS without a job; the next pass
             * sees it as interrupted and retries it. */
            pctl_active_touch(e->active, s->run_id);
            continue;
        }
        nj->engine = e;
        nj->step_id = s->step_id;
        nj->run_id = s->run_id;
        nj->def_id = s->def_id;
        nj->attempt = s->attempt;
        nj->max_attempts = s->max_attempts;
        nj->task_index = s->task_index;
        nj->sdef = s->sdef;
        nj->retry = &s->sdef->retry;
        nj->deadline_at = s->deadline_at;
        nj->strings = s->strings;
        nj->instance = s->instance;
        nj->plan = s->plan;
        nj->phase = s->phase;
        nj->step = s->step;
        nj->params = s->params;
        nj->run_uid = s->run_uid;
        nj->seed = s->task_index > 0 && s->attempt > 1;
        s->strings = NULL;
        nj->start_pending = 1;
        pctl_engine_add_job(e, nj);
        pctl_engine_wait_add(e, nj);
        {
            pctl_run_row *r;
            size_t pi, si;

            if (pctl_active_find_step(e->active, nj->step_id, &r, &pi, &si))
                r->phases[pi].steps[si].job = nj;
        }
    }
    /* Jobs with no task running: start what is due. */
    for (j = e->wait_head; j; j = next) {
        next = j->wait_next; /* starting may drop j */
        if (j->cancel != EJOB_LIVE || j->job) {
            pctl_engine_wait_remove(e, j);
            continue;
        }
        if (e->state != ENGINE_RUNNING) {
            /* Stopping: a step between tasks does not start its next. */
            pctl_engine_cancel_job(e, j, EJOB_SHUTDOWN);
            continue;
        }
        if (j->poll_at > 0 && j->poll_at <= res->now) {
            j->poll_at = 0;
            j->start_pending = 1;
        }
        if (j->start_pending) {
            j->start_pending = 0;
            pctl_engine_wait_remove(e, j);
            pctl_engine_start_task(e, j);
            continue;
        }
        /* Not due yet: the pass's wake-up comes no later than the poll. */
        if (j->poll_at > 0 && (res->wake_at == 0 || j->poll_at < res->wake_at))
            res->wake_at = j->poll_at;
    }
}
