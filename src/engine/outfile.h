/*
 * outfile.h - the file a shell task writes its outputs to
 * ($PLANCTL_OUTPUT): made fresh and empty for each run of a task, in a
 * private directory of its own, read once the task has exited, then
 * removed.  Only shell tasks have one: Dummy and embedders' executors
 * report outputs with planctl_job_add_output().
 */
#ifndef PCTL_ENGINE_OUTFILE_H
#define PCTL_ENGINE_OUTFILE_H

#include "planctl.h"

typedef struct pctl_outfile {
    char *dir, *path; /* NULL when none was made */
} pctl_outfile;

/* Makes the directory (mode 0700, under $TMPDIR or /tmp) and the empty
 * file (0600) in it.  Returns 0, or a negative UV_E* code (nothing is
 * left behind). */
int pctl_outfile_make(pctl_outfile *f);

/* Reads the file the task wrote and adds its outputs to job (core/
 * outputs.h gives the format).  Returns 0, PLANCTL_EINVAL with a message
 * in *err (a malformed line, too much: the attempt fails with it), or
 * PLANCTL_ENOMEM. */
int pctl_outfile_read(const pctl_outfile *f, planctl_job *job, char **err);

/* Removes the file and its directory, whatever the task left there, and
 * frees the names.  Can't fail. */
void pctl_outfile_remove(pctl_outfile *f);

#endif
