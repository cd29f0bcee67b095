/*
 * keeper.c - the process that kills an engine's tasks when the engine
 * cannot: one of several engines on a database (store/fleet.c) whose
 * heartbeat is late may see its runs taken over by another engine once its
 * TTL has passed, and by then none of its tasks may still run.  An engine
 * whose loop runs stops them itself (engine.c, self-fencing); one that is
 * stopped (SIGSTOP), stuck in a call to a server that does not answer, or
 * starved of CPU cannot, so a small process forked at its start does.
 *
 * The two share one page: the time (CLOCK_MONOTONIC, as uv_hrtime())
 * until which the engine may run tasks, which the engine moves forward at
 * every heartbeat, and the process groups of its shell tasks (each leads
 * its own: exec_shell.c).  Past that time the keeper sends SIGKILL to every
 * group listed, every 20 ms, until the time moves again.
 *
 * The keeper calls only async-signal-safe functions (the engine may have
 * threads when it forks), closes every descriptor it inherited (it must
 * not hold the engine's connection or files open), starts with every
 * signal at its default and none blocked (the host's handlers, Go's say,
 * have no runtime in the keeper to run in: it is forked with all signals
 * blocked, and resets them before it unblocks them), and dies with the
 * engine (PR_SET_PDEATHSIG, and it checks its parent).  PR_SET_PDEATHSIG
 * follows the thread that forked: the loop's thread, from which the
 * engine is used and which lives as long as the engine does.
 *
 * A group is listed from its spawn until its exit is reported, which
 * libuv does right after reaping it: in that instant the id is free again,
 * and a keeper past its time could signal a new group of that id.  It is
 * past its time only when the engine is stopped or stuck, so not then
 * reporting exits either.
 */
#include "engine/keeper.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"

#define KEEPER_SLOTS 8192
#define KEEPER_TICK_NS (20 * 1000 * 1000)

typedef struct shared {
    _Atomic uint64_t until; /* 0: no limit yet */
    _Atomic int32_t groups[KEEPER_SLOTS];
} shared;

struct pctl_keeper {
    shared *sh;
    pid_t pid;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void close_inherited(void)
{
    struct rlimit rl;
    long fd, max = 1024;

#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
        return;
#endif
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        max = (long)rl.rlim_cur;
    for (fd = 3; fd < max; fd++)
        close((int)fd);
}

/* The keeper's first act: the signals it inherited, handlers and mask,
 * back to their defaults (async-signal-safe calls only). */
static void reset_signals(void)
{
    struct sigaction dfl;
    sigset_t none;
    int sig;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            (void)sigaction(sig, &dfl, NULL); /* EINVAL: not one */
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
}

_Noreturn static void watch(shared *sh, pid_t parent)
{
    struct timespec tick = {0, KEEPER_TICK_NS};
    size_t i;

    reset_signals();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close_inherited();
    for (;;) {
        uint64_t until;

        if (getppid() != parent)
            _exit(0);
        until = atomic_load(&sh->until);
        if (until && mono_ns() > until)
            for (i = 0; i < KEEPER_SLOTS; i++) {
                int32_t g = atomic_load(&sh->groups[i]);

                if (g > 0)
                    kill(-(pid_t)g, SIGKILL);
            }
        nanosleep(&tick, NULL);
    }
}

int pctl_keeper_start(pctl_keeper **out)
{
    pctl_keeper *k;
    pid_t parent = getpid();
    sigset_t all, saved;
    int err;

    *out = NULL;
    if (!(k = pctl_calloc(1, sizeof *k)))
        return -ENOMEM;
    k->sh = mmap(NULL, sizeof *k->sh, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (k->sh == MAP_FAILED) {
        err = errno;
        pctl_free(k);
        return -err;
    }
    /* No handler of the host's may run in the keeper before it resets
     * them: it is born with every signal blocked. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    k->pid = fork();
    if (k->pid == 0)
        watch(k->sh, parent);
    err = errno;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (k->pid < 0) {
        munmap(k->sh, sizeof *k->sh);
        pctl_free(k);
        return -err;
    }
    *out = k;
    return 0;
}

void pctl_keeper_until(pctl_keeper *k, uint64_t until_ns)
{
    if (k)
        atomic_store(&k->sh->until, until_ns);
}

int pctl_keeper_past(const pctl_keeper *k)
{
    uint64_t until = k ? atomic_load(&k->sh->until) : 0;

    return until && mono_ns() > until;
}

int pctl_keeper_add(pctl_keeper *k, int pgid)
{
    size_t i;

    if (!k || pgid <= 0)
        return 0;
    for (i = 0; i < KEEPER_SLOTS; i++) {
        int32_t empty = 0;

        if (atomic_compare_exchange_strong(&k->sh->groups[i], &empty,
                                           (int32_t)pgid))
            return 0;
    }
    return -ENOSPC;
}

void pctl_keeper_remove(pctl_keeper *k, int pgid)
{
    size_t i;

    if (!k || pgid <= 0)
        return;
    for (i = 0; i < KEEPER_SLOTS; i++)
        if (atomic_load(&k->sh->groups[i]) == pgid) {
            atomic_store(&k->sh->groups[i], 0);
            return;
        }
}

int pctl_keeper_pid(const pctl_keeper *k)
{
    return k ? (int)k->pid : 0;
}

void pctl_keeper_stop(pctl_keeper *k)
{
    if (!k)
        return;
    kill(k->pid, SIGKILL);
    while (waitpid(k->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    munmap(k->sh, sizeof *k->sh);
    pctl_free(k);
}
