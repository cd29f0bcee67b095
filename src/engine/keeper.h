/* keeper.h - a process that kills an engine's shell tasks once the engine
 * is past the time it may run them (keeper.c). */
#ifndef PCTL_ENGINE_KEEPER_H
#define PCTL_ENGINE_KEEPER_H

#include <stdint.h>

typedef struct pctl_keeper pctl_keeper;

/* Forks the keeper.  0, or a negative errno (nothing started). */
int pctl_keeper_start(pctl_keeper **out);
/* The engine may run tasks until until_ns (uv_hrtime()'s clock); 0: no
 * limit.  Can't fail. */
void pctl_keeper_until(pctl_keeper *k, uint64_t until_ns);
/* Whether that time has passed: a task started now would be killed by
 * the keeper at once, beside whatever another engine started in its
 * place.  0 when k is NULL or has no limit.  Can't fail. */
int pctl_keeper_past(const pctl_keeper *k);
/* A task's process group, from its spawn until the engine reaped it.
 * add: 0, or -ENOSPC (not watched).  Both do nothing when k is NULL. */
int pctl_keeper_add(pctl_keeper *k, int pgid);
void pctl_keeper_remove(pctl_keeper *k, int pgid);
/* The keeper's process id (0 for NULL), for tests.  Can't fail. */
int pctl_keeper_pid(const pctl_keeper *k);
/* Kills and reaps the keeper.  Can't fail. */
void pctl_keeper_stop(pctl_keeper *k);

#endif
