/* executors.h - the built-in executors: Dummy (KUDO's test task) and shell. */
#ifndef PCTL_ENGINE_EXECUTORS_H
#define PCTL_ENGINE_EXECUTORS_H

#include "planctl.h"

/* The built-in executors; static tables, never freed. */
const planctl_executor *pctl_executor_dummy(void);
const planctl_executor *pctl_executor_shell(void);

/* Sets *err to "<what>: <message>" for a spec that cannot be used, and
 * returns PLANCTL_EINVAL (PLANCTL_ENOMEM if *err cannot be allocated). */
int pctl_spec_error(char **err, const char *what, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
