/* bridge.c - trampolines from libplanctl's callbacks to the Go functions
 * exported by exports.go (cgo allows no C definitions in the preamble of a
 * file that has //export).  The executor's data is a runtime/cgo.Handle,
 * never a Go pointer. */
#include <string.h>

#include "_cgo_export.h"
#include "bridge.h"

static int start_cb(planctl_job *job, const planctl_task_info *info, void *data)
{
    return goExecutorStart(job, (planctl_task_info *)info, (uintptr_t)data);
}

static void cancel_cb(planctl_job *job, void *data)
{
    goExecutorCancel(job, (uintptr_t)data);
}

static void release_cb(planctl_job *job, void *data)
{
    goExecutorRelease(job, (uintptr_t)data);
}

static void log_cb(const planctl_log_record *rec, void *data)
{
    goEngineLog((planctl_log_record *)rec, (uintptr_t)data);
}

int gop_register(planctl_engine *e, const char *kind, uintptr_t handle)
{
    planctl_executor ex;

    memset(&ex, 0, sizeof ex);
    ex.version = PLANCTL_EXECUTOR_VERSION;
    ex.start = start_cb;
    ex.cancel = cancel_cb;
    ex.release = release_cb;
    ex.data = (void *)handle;
    return planctl_engine_register(e, kind, &ex);
}

void gop_job_set_handle(planctl_job *job, uintptr_t handle)
{
    planctl_job_set_data(job, (void *)handle);
}

uintptr_t gop_job_handle(const planctl_job *job)
{
    return (uintptr_t)planctl_job_data(job);
}

int gop_set_logger(planctl_engine *e, int min, uintptr_t handle)
{
    return planctl_engine_set_logger(e, (planctl_log_level)min, log_cb,
                                     (void *)handle);
}

static int with_msg(int rc, char *err, size_t err_size)
{
    if (rc < 0 && err_size > 0) {
        strncpy(err, planctl_thread_errmsg(), err_size - 1);
        err[err_size - 1] = '\0';
    }
    return rc;
}

int gop_step_finish(planctl_job *job, int outcome, const char *msg, char *err,
                    size_t err_size)
{
    return with_msg(planctl_step_finish(job, (planctl_outcome)outcome, msg),
                    err, err_size);
}

int gop_add_output(planctl_job *job, const char *key, const char *value,
                   unsigned int flags, char *err, size_t err_size)
{
    return with_msg(planctl_job_add_output(job, key, value, flags), err,
                    err_size);
}

int gop_set_output(planctl_job *job, int exit_code, const char *output,
                   char *err, size_t err_size)
{
    return with_msg(planctl_job_set_output(job, exit_code, output), err,
                    err_size);
}
