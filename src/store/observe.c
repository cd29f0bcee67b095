/*
 * observe.c - the handle's one observer of what the store writes (see
 * store.h): the store reports, the observer (an engine) keeps what it
 * wants of it.
 */
#include "store/store.h"

void pctl_observe(planctl *p, const pctl_observer *o, void *data)
{
    p->observer = o;
    p->observer_data = o ? data : NULL;
}

int pctl_observed_known(const planctl *p, planctl_entity entity, int64_t id,
                        pctl_known_row *out)
{
    return p->observer &&
           p->observer->known(p->observer_data, p, entity, id, out);
}

void pctl_observed_written(planctl *p, const pctl_written *w)
{
    if (p->observer)
        p->observer->written(p->observer_data, w);
}

void pctl_observed_task(planctl *p, int64_t step_id, int task_index)
{
    if (p->observer)
        p->observer->task(p->observer_data, step_id, task_index);
}

void pctl_observed_events(planctl *p, int64_t run_id, int64_t count)
{
    if (p->observer)
        p->observer->events(p->observer_data, run_id, count);
}

void pctl_observed_missed(planctl *p)
{
    if (p->observer)
        p->observer->missed(p->observer_data);
}
