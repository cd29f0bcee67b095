/*
 * sigchld.h - libuv's SIGCHLD handler, made fit for a process whose
 * runtime owns signals (Go), and given back when planctl is done with it
 * (sigchld.c).
 */
#ifndef PCTL_ENGINE_SIGCHLD_H
#define PCTL_ENGINE_SIGCHLD_H

#include <uv.h>

/* One loop's hold on SIGCHLD: a watcher that keeps libuv's handler
 * installed while the loop may spawn.  Zeroed: not held. */
typedef struct pctl_sigchld {
    uv_signal_t sig;
    int inited; /* sig was initialised: it must be closed */
    int held;   /* and counts among the process's holders */
} pctl_sigchld;

/*
 * Before a spawn on loop (its thread): makes libuv's SIGCHLD handler
 * installed, with SA_ONSTACK added, and keeps it so until
 * pctl_sigchld_release(), so that no later uv_spawn() installs it again
 * (without the flag, around its fork).  The first hold of the process
 * notes what SIGCHLD was before, for the last release.  Again on a held
 * h: only makes sure of the flag.  0, or a negative libuv error (nothing
 * held).
 */
int pctl_sigchld_hold(pctl_sigchld *h, uv_loop_t *loop);

/*
 * After a spawn: adds SA_ONSTACK to libuv's handler should it lack it
 * (while anything is held).  Can't fail.
 */
void pctl_sigchld_check(void);

/*
 * Lets go of h (its loop's thread), closing its watcher: closed(handle)
 * runs once it is closed.  The last release of the process puts back
 * what SIGCHLD was before the first hold, if libuv then left it at its
 * default (no other watcher of SIGCHLD in the process).  Returns 1 when
 * closed will be called, 0 when h held nothing.  Can't fail.
 */
int pctl_sigchld_release(pctl_sigchld *h, uv_close_cb closed);

#endif
