/*
 * sigchld.c - libuv's SIGCHLD handler, which uv_spawn() needs to learn
 * that a child exited, where shell spawns with libuv: on a kernel without
 * pidfd_open(), or in a process that ignores SIGCHLD (exec_shell.c,
 * "Spawning").  Elsewhere shell spawns with posix_spawn() and watches a
 * pidfd, and nothing here runs: no handler is installed at all.
 *
 * Why not libuv everywhere, with the flag added (as below): libuv installs
 * its handler in uv_signal_start() (uv__signal_register_handler, with
 * SA_RESTART only) for the first SIGCHLD watcher of the process, whatever
 * is installed already, and blocks signals around it on the calling
 * thread only.  So between libuv's sigaction() and planctl's, however
 * short, any other thread (a Go runtime's) can take a SIGCHLD of the
 * host's children on its own stack.  No order of calls closes that: the
 * handler's address is libuv's private symbol, and libuv registers anew
 * for every first watcher.  Not using libuv's child watching does.  The
 * proof that the pidfd way holds: it makes no sigaction() call that
 * changes anything and creates no signal watcher, so SIGCHLD is the
 * host's at every instant; tests/unit/test_signals.c reads it from a
 * thread throughout the first spawns of its process (and catches the
 * instant without the flag when shell spawns the libuv way).
 *
 * Two things about it hurt a host whose runtime owns signals, as Go's
 * does.  libuv installs it without SA_ONSTACK (src/unix/signal.c,
 * uv__signal_register_handler: SA_RESTART only), so a SIGCHLD that
 * arrives on a thread running Go code pushes its frame onto that
 * goroutine's small stack and overwrites what lies below (Go's os/signal
 * documentation requires SA_ONSTACK of every handler non-Go code
 * installs).  And once its last SIGCHLD watcher stops, libuv sets SIGCHLD
 * to SIG_DFL, so the host's own handler never comes back.
 *
 * libuv has no flag for either, so planctl does both itself:
 *
 *   - Before a loop's first spawn it starts a SIGCHLD watcher of its own
 *     on that loop (pctl_sigchld_hold).  When that is the first in the
 *     process, libuv installs its handler there and then, and planctl at
 *     once installs the same handler again with SA_ONSTACK added.  The
 *     watcher stays until the engine (or the preflight) is done, so the
 *     handler stays too: uv_spawn() finds it installed and never installs
 *     it again, as it would around every fork otherwise (libuv drops it
 *     whenever a loop's last child is reaped).  After each spawn the flag
 *     is checked again all the same (pctl_sigchld_check), in case
 *     something else in the process made libuv install it anew.
 *   - The first hold of the process notes what SIGCHLD was (the host's
 *     handler, its flags and mask); when the last hold is let go and
 *     libuv has put SIG_DFL in its place, that is put back.  If libuv
 *     still watches SIGCHLD for someone else (the host's own uv_spawn),
 *     its handler stays, with the flag.
 *
 * What remains on this way: the instant between libuv's sigaction and
 * planctl's, once per first hold, when the handler is there without the
 * flag (no child of planctl's exists yet then; a child of the host's
 * exiting in that instant is the only risk), and SIGCHLD is libuv's while
 * a hold lasts: a host watching SIGCHLD itself (Go's signal.Notify) hears
 * nothing then.
 * Holds are counted for the whole process, under a mutex, as engines may
 * run on loops of several threads.
 */
#include "engine/sigchld.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int holders;                /* holds of the process */
static struct sigaction before;    /* SIGCHLD before the first of them */
static void (*libuv_handler)(int); /* what libuv installed for them */

static void on_sigchld(uv_signal_t *s, int signum)
{
    /* Nothing to do: libuv's own child watcher reaps. */
    (void)s;
    (void)signum;
}

/* Adds SA_ONSTACK to libuv's handler if it lacks it.  Under the lock. */
static void add_onstack(void)
{
    struct sigaction now;

    if (sigaction(SIGCHLD, NULL, &now) != 0 || now.sa_handler == SIG_DFL ||
        now.sa_handler == SIG_IGN || now.sa_handler != libuv_handler ||
        (now.sa_flags & SA_ONSTACK))
        return;
    now.sa_flags |= SA_ONSTACK;
    (void)sigaction(SIGCHLD, &now, NULL);
}

int pctl_sigchld_hold(pctl_sigchld *h, uv_loop_t *loop)
{
    struct sigaction now;
    int rc;

    pthread_mutex_lock(&lock);
    if (h->held) {
        add_onstack();
        pthread_mutex_unlock(&lock);
        return 0;
    }
    if (holders == 0 && sigaction(SIGCHLD, NULL, &before) != 0)
        memset(&before, 0, sizeof before); /* cannot fail for SIGCHLD */
    if (!h->inited) {
        if ((rc = uv_signal_init(loop, &h->sig)) < 0) {
            pthread_mutex_unlock(&lock);
            return rc;
        }
        h->inited = 1;
        /* Not work of the loop's: it never keeps uv_run() going. */
        uv_unref((uv_handle_t *)&h->sig);
    }
    if ((rc = uv_signal_start(&h->sig, on_sigchld, SIGCHLD)) < 0) {
        pthread_mutex_unlock(&lock);
        return rc;
    }
    h->held = 1;
    /* A watcher of SIGCHLD is now started, so the handler installed is
     * libuv's (installed just now, or already for another watcher). */
    if (holders++ == 0 && sigaction(SIGCHLD, NULL, &now) == 0)
        libuv_handler = now.sa_handler;
    add_onstack();
    pthread_mutex_unlock(&lock);
    return 0;
}

void pctl_sigchld_check(void)
{
    pthread_mutex_lock(&lock);
    if (holders > 0)
        add_onstack();
    pthread_mutex_unlock(&lock);
}

int pctl_sigchld_release(pctl_sigchld *h, uv_close_cb closed)
{
    struct sigaction now;

    if (!h->inited)
        return 0;
    pthread_mutex_lock(&lock);
    /* Stops the watcher at once (uv_close of a signal handle stops it
     * before it returns): libuv sets SIG_DFL if it was the last one. */
    uv_close((uv_handle_t *)&h->sig, closed);
    h->inited = 0;
    if (h->held && --holders == 0 && sigaction(SIGCHLD, NULL, &now) == 0 &&
        now.sa_handler == SIG_DFL)
        (void)sigaction(SIGCHLD, &before, NULL);
    h->held = 0;
    pthread_mutex_unlock(&lock);
    return 1;
}
