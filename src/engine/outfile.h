/*
 * outfile.h - the file a shell task writes its outputs to
 * ($PLANCTL_OUTPUT): made fresh and empty for each run of a task, in a
 * private directory of its own, read once the task has exited, then
 * removed.  Only shell tasks have one: Dummy and embedders' executors
 * report outputs with planctl_job_add_output().
 */
#ifndef PCTL_ENGINE_OUTFILE_H
#define PCTL_ENGINE_OUTFILE_H

#include <stddef.h>
#include <stdint.h>

#include "planctl.h"

typedef struct pctl_outfile {
    char *dir, *path; /* NULL when none was made */
} pctl_outfile;

/* Makes the directory (mode 0700, under $TMPDIR or /tmp) and the empty
 * file (0600) in it.  The directory is named for the task's attempt,
 *
 *     planctl-out-RUN.UID.ATTEMPT.STEP.XXXXXX
 *
 * (the run's id and random uid, the try, the step's name, mkdtemp's six
 * characters), so that the recovery of an engine killed while the task ran
 * can tell it from any other and remove it (pctl_outdirs_find); without
 * a run (a preflight check), or with a uid or step name of another form,
 * it is planctl-out-XXXXXX.  Returns 0, or a negative UV_E* code (nothing
 * is left behind). */
int pctl_outfile_make(pctl_outfile *f, const planctl_task_info *info);

/* Reads the file the task wrote and adds its outputs to job (core/
 * outputs.h gives the format).  Returns 0, PLANCTL_EINVAL with a message
 * in *err (a malformed line, too much: the attempt fails with it), or
 * PLANCTL_ENOMEM. */
int pctl_outfile_read(const pctl_outfile *f, planctl_job *job, char **err);

/* Removes the file and its directory, whatever the task left there, and
 * frees the names.  Can't fail. */
void pctl_outfile_remove(pctl_outfile *f);

/* A directory an attempt's task had (pctl_outfile_make), found in
 * $TMPDIR (or /tmp): its path and the attempt its name gives. */
typedef struct pctl_outdir {
    char *path;
    int64_t run_id;
    char uid[33];
    char step[64];
    int attempt;
} pctl_outdir;

/* Lists the directories of $TMPDIR (or /tmp) named as pctl_outfile_make
 * names those of an attempt, owned by this user, not a symbolic link, with
 * mode 0700: what a task of a dead engine may have left.  *out (free with
 * pctl_outdirs_free) is NULL when there is none; a directory that cannot
 * be read lists none.  Errors: PLANCTL_ENOMEM. */
int pctl_outdirs_find(pctl_outdir **out, size_t *n);
void pctl_outdirs_free(pctl_outdir *d, size_t n);

/* Removes d's output file and then d, if it is still a directory of this
 * user with mode 0700 (a directory the task put more into is left, as
 * pctl_outfile_remove leaves it).  Returns 1 when d is gone, else 0.
 * Can't fail. */
int pctl_outdir_remove(const pctl_outdir *d);

#endif
