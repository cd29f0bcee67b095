/*
 * marks.h - what a status change writes into its row besides the status:
 * a step's try count, the time of its next try and the deadline of the
 * running one; a run's deadline.  One rule, read by the gate to bind its
 * UPDATE (store/gate.c, whose SQL adds and stores what it is given and
 * decides nothing) and to know the row it left without reading it back
 * (the engine's cache).  Pure; tested against the real statements in
 * tests/unit/test_marks.c.
 */
#ifndef PCTL_CORE_MARKS_H
#define PCTL_CORE_MARKS_H

#include <stdint.h>

#include "planctl.h"

typedef struct pctl_marks {
    int attempt_inc;         /* step: 1 when a try starts, else 0 */
    int64_t next_attempt_at; /* step: the next try's time; 0: none (NULL) */
    int64_t deadline_at;     /* step: the try's deadline, 0: none (NULL);
                              * run: the new deadline, 0: keep the old */
} pctl_marks;

/*
 * The marks of entity going to status to, given the times its caller
 * computed (0: none): a step keeps next_attempt_at only going to ERROR
 * and deadline_at only going to IN_PROGRESS; a run takes deadline_at only
 * going to IN_PROGRESS; a phase has none.  Can't fail.
 */
pctl_marks pctl_marks_of(planctl_entity entity, planctl_status to,
                         int64_t next_attempt_at, int64_t deadline_at);

/* The row after: its try count and times, from those before and the
 * marks (a run's deadline_at kept when the marks give none). */
typedef struct pctl_marked {
    int attempt;
    int64_t next_attempt_at, deadline_at;
} pctl_marked;

pctl_marked pctl_marks_apply(planctl_entity entity, const pctl_marks *m,
                             int attempt_before, int64_t deadline_before);

#endif
