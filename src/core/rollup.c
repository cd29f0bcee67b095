/* rollup.c - start order, roll-up and closing rules of the statuses
 * (planctl-json(7)). */
#include "rollup.h"

#include "status.h"

static int started(planctl_status s)
{
    return s == PLANCTL_STATUS_IN_PROGRESS || s == PLANCTL_STATUS_ERROR ||
           s == PLANCTL_STATUS_COMPLETE || s == PLANCTL_STATUS_PAUSED;
}

static int failed(planctl_status s)
{
    return s == PLANCTL_STATUS_FATAL_ERROR || s == PLANCTL_STATUS_CANCELLED;
}

size_t pctl_startable(pctl_strategy strategy, const planctl_status *kids,
                      size_t stride, size_t n, size_t *out)
{
    size_t i, count = 0;

    for (i = 0; i < n; i++)
        if (failed(PCTL_KID(kids, stride, i)))
            return 0;
    for (i = 0; i < n; i++) {
        planctl_status k = PCTL_KID(kids, stride, i);

        if (strategy == PCTL_STRATEGY_SERIAL) {
            if (k == PLANCTL_STATUS_COMPLETE)
                continue;
            if (k == PLANCTL_STATUS_PENDING)
                out[count++] = i;
            break;
        }
        if (k == PLANCTL_STATUS_PENDING)
            out[count++] = i;
    }
    return count;
}

planctl_status pctl_rollup(const planctl_status *kids, size_t stride, size_t n)
{
    int any_fatal = 0, any_cancelled = 0, any_started = 0, all_complete = 1;
    size_t i;

    for (i = 0; i < n; i++) {
        planctl_status k = PCTL_KID(kids, stride, i);

        any_fatal |= k == PLANCTL_STATUS_FATAL_ERROR;
        any_cancelled |= k == PLANCTL_STATUS_CANCELLED;
        any_started |= started(k);
        all_complete &= k == PLANCTL_STATUS_COMPLETE;
    }
    if (any_fatal)
        return PLANCTL_STATUS_FATAL_ERROR;
    if (any_cancelled)
        return PLANCTL_STATUS_CANCELLED;
    if (all_complete)
        return PLANCTL_STATUS_COMPLETE;
    return any_started ? PLANCTL_STATUS_IN_PROGRESS : PLANCTL_STATUS_PENDING;
}

int pctl_close_child(planctl_status child, planctl_status run_end,
                     planctl_status *to, const char **message)
{
    int fatal = run_end == PLANCTL_STATUS_FATAL_ERROR;

    if (pctl_status_terminal(child))
        return 0;
    *to = PLANCTL_STATUS_CANCELLED;
    if (child == PLANCTL_STATUS_PENDING || child == PLANCTL_STATUS_QUEUED)
        *message = fatal ? "not started: run ended FATAL_ERROR"
                         : "not started: run cancelled";
    else
        *message =
            fatal ? "cancelled: run ended FATAL_ERROR" : "cancelled by user";
    return 1;
}
