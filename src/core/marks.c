/* marks.c - what a status change writes into its row besides the status
 * (see marks.h). */
#include "core/marks.h"

#include <string.h>

pctl_marks pctl_marks_of(planctl_entity entity, planctl_status to,
                         int64_t next_attempt_at, int64_t deadline_at)
{
    int starting = to == PLANCTL_STATUS_IN_PROGRESS;
    pctl_marks m;

    memset(&m, 0, sizeof m);
    switch (entity) {
    case PLANCTL_ENTITY_STEP:
        m.attempt_inc = starting;
        if (to == PLANCTL_STATUS_ERROR && next_attempt_at > 0)
            m.next_attempt_at = next_attempt_at;
        if (starting && deadline_at > 0)
            m.deadline_at = deadline_at;
        break;
    case PLANCTL_ENTITY_RUN:
        if (starting && deadline_at > 0)
            m.deadline_at = deadline_at;
        break;
    default:
        break;
    }
    return m;
}

pctl_marked pctl_marks_apply(planctl_entity entity, const pctl_marks *m,
                             int attempt_before, int64_t deadline_before)
{
    pctl_marked w;

    memset(&w, 0, sizeof w);
    switch (entity) {
    case PLANCTL_ENTITY_STEP:
        w.attempt = attempt_before + m->attempt_inc;
        w.next_attempt_at = m->next_attempt_at;
        w.deadline_at = m->deadline_at;
        break;
    case PLANCTL_ENTITY_RUN:
        w.deadline_at = m->deadline_at ? m->deadline_at : deadline_before;
        break;
    default:
        break;
    }
    return w;
}
