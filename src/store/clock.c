/* clock.c - a handle's clock: the system's, an embedder's
 * (planctl_set_clock), or frozen for the length of a transaction so that
 * a row and its event carry the same time. */
#include <time.h>

#include "store/store.h"

static int64_t system_now(void *data)
{
    struct timespec ts;

    (void)data;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t pctl_now(const planctl *p)
{
    return p->frozen_now ? p->frozen_now : p->now_fn(p->now_data);
}

int pctl_clock_is_system(pctl_clock c)
{
    return c.now_ms == system_now;
}

int64_t pctl_clock_system_now(void)
{
    return system_now(NULL);
}

pctl_clock pctl_clock_get(const planctl *p)
{
    pctl_clock c;

    c.now_ms = p->now_fn;
    c.data = p->now_data;
    return c;
}

void planctl_set_clock(planctl *p, int64_t (*now_ms)(void *data), void *data)
{
    if (!p)
        return;
    p->now_fn = now_ms ? now_ms : system_now;
    p->now_data = now_ms ? data : NULL;
}
