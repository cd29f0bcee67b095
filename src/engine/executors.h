/* executors.h - the built-in executors: Dummy (KUDO's test task) and shell. */
#ifndef PCTL_ENGINE_EXECUTORS_H
#define PCTL_ENGINE_EXECUTORS_H

#include "planctl.h"

/* The built-in executors; static tables, never freed. */
const planctl_executor *pctl_executor_dummy(void);
const planctl_executor *pctl_executor_shell(void);

/* How shell spawns (exec_shell.c): 0, with posix_spawn() and a pidfd
 * where the kernel has pidfd_open(), never touching a signal; 1, with
 * libuv's uv_spawn() and its SIGCHLD handler (sigchld.c), as on a kernel
 * without.  The default is 0; tests set 1 to run the second way.  Any
 * thread, before the spawns it is meant for. */
void pctl_shell_spawn_with_libuv(int on);

/* Sets *err to "<what>: <message>" for a spec that cannot be used, and
 * returns PLANCTL_EINVAL (PLANCTL_ENOMEM if *err cannot be allocated). */
int pctl_spec_error(char **err, const char *what, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
