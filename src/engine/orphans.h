/* orphans.h - finding and killing what a dead engine's tasks left running. */
#ifndef PCTL_ENGINE_ORPHANS_H
#define PCTL_ENGINE_ORPHANS_H

#include <stddef.h>
#include <stdint.h>

/* One interrupted attempt: the marker its processes carry in their
 * environment (PLANCTL_RUN_UID, PLANCTL_STEP, PLANCTL_ATTEMPT). */
typedef struct pctl_orphan {
    char *run_uid;
    char *step;
    int attempt;
} pctl_orphan;

/*
 * Sends SIGKILL to every process of this user whose environment carries the
 * marker of one of the n attempts, and returns how many it killed.  The
 * direct child of a shell task dies with its engine (pdeathsig); this finds
 * the children it started, which do not, and the direct child where setpriv
 * is missing.  A process forked but not yet exec'd is not found (it has no
 * marker yet); exec_shell.c's guard keeps it from running its task.
 * Linux only (/proc); elsewhere it does nothing.  Can't fail: what cannot
 * be read is skipped.
 */
size_t pctl_reap_orphans(const pctl_orphan *o, size_t n);

/* The marker of a process found running: its attempt, and the run id it
 * names (PLANCTL_RUN). */
typedef struct pctl_marker {
    pctl_orphan o;
    int64_t run_id;
} pctl_marker;

/*
 * Lists the distinct markers carried by processes of this user (every one
 * of PLANCTL_RUN_UID, PLANCTL_RUN, PLANCTL_STEP and PLANCTL_ATTEMPT set),
 * whatever database they belong to.  *out (free with pctl_markers_free) is
 * NULL when there is none; Linux only.  Errors: PLANCTL_ENOMEM.
 */
int pctl_markers_find(pctl_marker **out, size_t *n);
void pctl_markers_free(pctl_marker *m, size_t n);

#endif
