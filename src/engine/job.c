/* job.c - jobs and the hub that hands their outcomes to the loop thread. */
#include "engine/job.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/outputs.h"
#include "core/utf8.h"

static void drain(uv_async_t *async)
{
    pctl_hub *hub = async->data;
    planctl_job *list, *next;

    pthread_mutex_lock(&hub->lock);
    list = hub->head;
    hub->head = hub->tail = NULL;
    pthread_mutex_unlock(&hub->lock);
    for (; list; list = next) {
        next = list->next;
        list->next = NULL;
        list->on_finish(list, list->owner);
    }
}

int pctl_hub_init(pctl_hub *hub, uv_loop_t *loop)
{
    memset(hub, 0, sizeof *hub);
    hub->loop = loop;
    if (pthread_mutex_init(&hub->lock, NULL) != 0)
        return PLANCTL_ENOMEM;
    if (uv_async_init(loop, &hub->async, drain) != 0) {
        pthread_mutex_destroy(&hub->lock);
        return PLANCTL_ERROR;
    }
    hub->async.data = hub;
    hub->open = 1;
    return 0;
}

static void hub_closed(uv_handle_t *h)
{
    pctl_hub *hub = h->data;

    if (--hub->closing > 0)
        return;
    drain(&hub->async); /* anything queued after the last wake-up */
    pthread_mutex_destroy(&hub->lock);
    if (hub->on_closed)
        hub->on_closed(hub, hub->closed_data);
}

void pctl_hub_close(pctl_hub *hub, void (*on_closed)(pctl_hub *, void *),
                    void *data)
{
    if (!hub->open)
        return;
    hub->open = 0;
    hub->on_closed = on_closed;
    hub->closed_data = data;
    hub->closing = 1;
    hub->chld.sig.data = hub;
    hub->closing += pctl_sigchld_release(&hub->chld, hub_closed);
    uv_close((uv_handle_t *)&hub->async, hub_closed);
}

planctl_job *pctl_job_new(pctl_hub *hub,
                          void (*on_finish)(planctl_job *, void *), void *owner)
{
    planctl_job *job = pctl_calloc(1, sizeof *job);

    if (!job)
        return NULL;
    job->hub = hub;
    job->on_finish = on_finish;
    job->owner = owner;
    job->exit_code = -1;
    job->output_max = PCTL_OUTPUT_SIZE_DEFAULT;
    job->output_bytes = -1;
    return job;
}

void pctl_job_bind(planctl_job *job, const planctl_executor *ex)
{
    job->release = ex->version >= 2 ? ex->release : NULL;
    job->release_data = ex->data;
}

void pctl_job_free(planctl_job *job)
{
    if (!job)
        return;
    /* Its report is consumed and no cancel can follow: the executor's
     * state attached to it may go (planctl.h, release). */
    if (job->release)
        job->release(job, job->release_data);
    pctl_free(job->message);
    pctl_free(job->output);
    json_decref(job->outputs);
    pctl_free(job->outputs_error);
    pctl_free(job);
}

/* A call on a job already reported.  The job is the engine's again (and
 * may be freed): nothing of it is read. */
static int reported(void)
{
    return pctl_thread_err(PLANCTL_EINVAL,
                           "the job was already reported "
                           "(planctl_step_finish): it is the engine's now");
}

int planctl_step_finish(planctl_job *job, planctl_outcome outcome,
                        const char *message)
{
    pctl_hub *hub;

    /* One atomic step, so two racing reports cannot both pass. */
    if (!job)
        return pctl_thread_err(PLANCTL_EINVAL, "missing argument: job is NULL");
    if (atomic_exchange(&job->finished, 1))
        return reported();
    job->outcome = outcome;
    /* A message that cannot be copied is lost, not the outcome. */
    job->message = message ? pctl_utf8_clean(message, strlen(message)) : NULL;
    hub = job->hub;
    pthread_mutex_lock(&hub->lock);
    if (hub->tail)
        hub->tail->next = job;
    else
        hub->head = job;
    hub->tail = job;
    pthread_mutex_unlock(&hub->lock);
    /* uv_async_send is the one libuv call that is safe from any thread. */
    uv_async_send(&hub->async);
    return 0;
}

char *pctl_job_output_tail(const char *output, size_t max)
{
    size_t len = strlen(output);

    /* Keep the tail, starting on a character boundary, valid UTF-8. */
    if (len > max) {
        output += len - max;
        len = max;
        while (len > 0 && ((unsigned char)*output & 0xc0) == 0x80) {
            output++;
            len--;
        }
    }
    return pctl_utf8_clean(output, len);
}

char *pctl_job_output_join(const char *prev, const char *cur, size_t max)
{
    char *both = pctl_asprintf("%s%s", prev ? prev : "", cur ? cur : "");
    char *kept = both ? pctl_job_output_tail(both, max) : NULL;

    pctl_free(both);
    return kept;
}

int planctl_job_set_output(planctl_job *job, int exit_code, const char *output)
{
    if (!job)
        return pctl_thread_err(PLANCTL_EINVAL, "missing argument: job is NULL");
    if (job->finished)
        return reported();
    job->exit_code = exit_code;
    pctl_free(job->output);
    job->output = NULL;
    job->output_bytes = -1;
    if (!output)
        return 0;
    job->output_bytes = (int64_t)strlen(output);
    job->output = pctl_job_output_tail(output, job->output_max);
    return job->output ? 0 : pctl_thread_err(PLANCTL_ENOMEM, "out of memory");
}

void pctl_job_output_grew(planctl_job *job,
                          char *(*text)(planctl_job *job, int64_t *bytes))
{
    job->live_text = text;
    if (job->live_dirty)
        return;
    job->live_dirty = 1;
    if (job->on_output)
        job->on_output(job, job->owner);
}

int planctl_job_add_output(planctl_job *job, const char *key, const char *value,
                           unsigned int flags)
{
    char err[256];
    int rc;

    if (!job || !key || !value)
        return pctl_thread_err(PLANCTL_EINVAL, "missing argument: %s is NULL",
                               !job   ? "job"
                               : !key ? "key"
                                      : "value");
    if (job->finished)
        return reported();
    if (!job->outputs && !(job->outputs = json_object()))
        return pctl_thread_err(PLANCTL_ENOMEM, "out of memory");
    rc = pctl_outputs_put(job->outputs, &job->outputs_size, err, sizeof err,
                          key, value, strlen(value),
                          (flags & PLANCTL_OUTPUT_SECRET) != 0);
    /* The first refusal fails the attempt, so an executor that does not
     * check the return cannot have an output go missing silently. */
    if (rc == PLANCTL_EINVAL && !job->outputs_error &&
        !(job->outputs_error = pctl_strdup(err)))
        rc = PLANCTL_ENOMEM;
    if (rc == PLANCTL_EINVAL)
        return pctl_thread_err(rc, "%s", err);
    return rc < 0 ? pctl_thread_err(rc, "out of memory") : rc;
}

uv_loop_t *planctl_job_loop(const planctl_job *job)
{
    return job->hub->loop;
}

void planctl_job_set_data(planctl_job *job, void *data)
{
    job->exec_data = data;
}

void *planctl_job_data(const planctl_job *job)
{
    return job->exec_data;
}
