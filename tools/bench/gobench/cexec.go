package main

/*
#cgo pkg-config: planctl
#include <pthread.h>
#include <time.h>
#include <stdlib.h>
#include "planctl.h"

// The C executor reporting from a thread of its own, as the Go executor
// reports from its goroutine: start() queues the job, one worker thread
// reports it DONE.
typedef struct cq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	planctl_job **jobs;
	size_t n, cap;
	int quit;
} cq;

static int q_start(planctl_job *job, const planctl_task_info *info, void *data)
{
	cq *q = data;
	(void)info;
	pthread_mutex_lock(&q->mu);
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 256;
		planctl_job **j = realloc(q->jobs, cap * sizeof *j);
		if (!j) {
			pthread_mutex_unlock(&q->mu);
			return PLANCTL_ENOMEM;
		}
		q->jobs = j;
		q->cap = cap;
	}
	q->jobs[q->n++] = job;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

static void *q_worker(void *data)
{
	cq *q = data;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->n == 0 && !q->quit)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->n == 0)
			break;
		planctl_job *job = q->jobs[--q->n];
		pthread_mutex_unlock(&q->mu);
		planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL);
		pthread_mutex_lock(&q->mu);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

// The C executor of the rounds in C: reports DONE from inside start(),
// as the Go executor returns nil at once.
static int c_start(planctl_job *job, const planctl_task_info *info, void *data)
{
	(void)info;
	(void)data;
	return planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL);
}

static void c_cancel(planctl_job *job, void *data)
{
	(void)job;
	(void)data;
}

// Runs an engine with the C executor of kind Work until idle, on a loop
// of its own, on the calling thread.  0 or a negative code.
static int c_round(const char *path, int concurrency, int threaded,
		   int64_t *ns)
{
	planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
	planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, c_start, c_cancel, NULL};
	cq q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 0};
	pthread_t worker;
	planctl *p = NULL;
	planctl_engine *e = NULL;
	int rc;

	if (threaded) {
		ex.start = q_start;
		ex.data = &q;
		if (pthread_create(&worker, NULL, q_worker, &q) != 0)
			return PLANCTL_ERROR;
	}
	o.until_idle = 1;
	o.concurrency = concurrency;
	o.no_shell = 1;
	rc = planctl_open(&p, path, NULL);
	if (rc == 0)
		rc = planctl_engine_new(&e, p, NULL, &o);
	if (rc == 0)
		rc = planctl_engine_register(e, "Work", &ex);
	if (rc == 0) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = planctl_engine_run(e);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		*ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 +
		      (t1.tv_nsec - t0.tv_nsec);
	}
	planctl_engine_free(e);
	planctl_close(p);
	if (threaded) {
		pthread_mutex_lock(&q.mu);
		q.quit = 1;
		pthread_cond_signal(&q.cv);
		pthread_mutex_unlock(&q.mu);
		pthread_join(worker, NULL);
		free(q.jobs);
	}
	return rc;
}
*/
import "C"

import (
	"time"
	"unsafe"
)

// cRound runs a round with the C executor; d is the time of
// planctl_engine_run alone, as the Go rounds time Engine.Run alone.
func cRound(path string, concurrency int, threaded bool) (rc int, d time.Duration) {
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	t := C.int(0)
	if threaded {
		t = 1
	}
	var ns C.int64_t
	rc = int(C.c_round(cp, C.int(concurrency), t, &ns))
	return rc, time.Duration(ns)
}
