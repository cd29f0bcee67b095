/*
 * error.h - the message of a refusal that has no handle to carry it (a
 * NULL handle or engine, a job, a call that takes no handle), kept per
 * thread as dlerror() keeps its own: planctl_thread_errmsg() reads it.
 */
#ifndef PCTL_CORE_ERROR_H
#define PCTL_CORE_ERROR_H

#include <stdarg.h>

/* Sets the calling thread's message (one line, cut to 255 bytes) and
 * returns rc, so a refusal reads `return pctl_thread_err(rc, "...")`. */
int pctl_thread_err(int rc, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int pctl_thread_verr(int rc, const char *fmt, va_list ap)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 0)))
#endif
    ;

#endif
