/* executors.h - the built-in executors: Dummy (KUDO's test task) and shell. */
#ifndef PCTL_ENGINE_EXECUTORS_H
#define PCTL_ENGINE_EXECUTORS_H

#include "planctl.h"

/* The built-in executors; static tables, never freed. */
const planctl_executor *pctl_executor_dummy(void);
const planctl_executor *pctl_executor_shell(void);

/* How shell spawns and learns of a child's exit (exec_shell.c).
 * PCTL_SPAWN_AUTO, the default: posix_spawn(), then a pidfd where the
 * kernel has pidfd_open(), else a thread waiting in waitid(); neither
 * touches a signal.  PCTL_SPAWN_THREAD: the thread even with a pidfd.
 * PCTL_SPAWN_LIBUV: libuv's uv_spawn() and its SIGCHLD handler
 * (sigchld.c), the way of a process that ignores SIGCHLD.  With AUTO,
 * PLANCTL_SHELL_SPAWN=thread or =libuv in the environment picks one.
 * Tests set the others; any thread, before the spawns it is meant for. */
enum { PCTL_SPAWN_AUTO, PCTL_SPAWN_THREAD, PCTL_SPAWN_LIBUV };
void pctl_shell_spawn_way(int way);

/* Sets *err to "<what>: <message>" for a spec that cannot be used, and
 * returns PLANCTL_EINVAL (PLANCTL_ENOMEM if *err cannot be allocated). */
int pctl_spec_error(char **err, const char *what, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
