/* bridge.h - the C side of the Go package: executors, the logger and the
 * job calls, whose messages live in planctl_thread_errmsg() of the thread
 * that called (a goroutine may move between threads, so each is read in
 * the same C call). */
#ifndef PLANCTL_GO_BRIDGE_H
#define PLANCTL_GO_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "planctl.h"

int gop_register(planctl_engine *e, const char *kind, uintptr_t handle);
void gop_job_set_handle(planctl_job *job, uintptr_t handle);
uintptr_t gop_job_handle(const planctl_job *job);
int gop_set_logger(planctl_engine *e, int min, uintptr_t handle);
int gop_step_finish(planctl_job *job, int outcome, const char *msg, char *err,
                    size_t err_size);
int gop_add_output(planctl_job *job, const char *key, const char *value,
                   unsigned int flags, char *err, size_t err_size);
int gop_set_output(planctl_job *job, int exit_code, const char *output,
                   char *err, size_t err_size);

#endif
