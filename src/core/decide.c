/* decide.c - the engine's pure decision function (see decide.h). */
#include "decide.h"

#include "rollup.h"
#include "status.h"

typedef struct ctx {
    int64_t now;
    int *slots;
    pctl_action *out;
    size_t n;
    int64_t wake; /* INT64_MAX: none */
    size_t *scratch;
    int paused;
    int starved; /* a due step found no slot */
} ctx;

static void emit(ctx *c, pctl_target t, size_t phase, size_t step,
                 planctl_status from, planctl_status to, pctl_why why)
{
    pctl_action *a = &c->out[c->n++];

    a->target = t;
    a->phase = phase;
    a->step = step;
    a->from = from;
    a->to = to;
    a->why = why;
}

static void wake_at(ctx *c, int64_t t)
{
    if (t > c->now && t < c->wake)
        c->wake = t;
}

static void step_to(ctx *c, size_t pi, size_t si, pctl_step_view *s,
                    planctl_status to, pctl_why why)
{
    emit(c, PCTL_TARGET_STEP, pi, si, s->status, to, why);
    if (to == PLANCTL_STATUS_IN_PROGRESS)
        s->attempt++;
    s->status = to;
}

/* Timeouts, give-ups and due retries of one step. */
static void step_timers(ctx *c, size_t pi, size_t si, pctl_step_view *s)
{
    if (s->status == PLANCTL_STATUS_IN_PROGRESS && s->deadline_at > 0) {
        if (c->now >= s->deadline_at)
            step_to(c, pi, si, s,
                    s->attempt < s->max_attempts ? PLANCTL_STATUS_ERROR
                                                 : PLANCTL_STATUS_FATAL_ERROR,
                    PCTL_WHY_TIMEOUT);
        else
            wake_at(c, s->deadline_at);
        return; /* a step that just timed out waits for its backoff */
    }
    if (s->status != PLANCTL_STATUS_ERROR)
        return;
    if (s->attempt >= s->max_attempts) {
        step_to(c, pi, si, s, PLANCTL_STATUS_FATAL_ERROR, PCTL_WHY_EXHAUSTED);
    } else if (s->busy) {
        return; /* no wake: the try's report comes first */
    } else if (s->next_attempt_at > c->now) {
        wake_at(c, s->next_attempt_at);
    } else if (!c->paused && *c->slots > 0) {
        --*c->slots;
        step_to(c, pi, si, s, PLANCTL_STATUS_IN_PROGRESS, PCTL_WHY_RETRY);
    } else if (!c->paused) {
        c->starved = 1;
    }
}

static void decide_phase(ctx *c, pctl_phase_view *ph, size_t pi)
{
    size_t si, k, nstart;
    planctl_status roll;

    for (si = 0; si < ph->nsteps; si++)
        step_timers(c, pi, si, &ph->steps[si]);
    if (!c->paused) {
        nstart = pctl_startable(ph->strategy, &ph->steps[0].status,
                                sizeof ph->steps[0], ph->nsteps, c->scratch);
        for (k = 0; k < nstart; k++) {
            pctl_step_view *s = &ph->steps[c->scratch[k]];

            if (s->busy)
                continue; /* no slot, no wake: the try's report */
            if (*c->slots == 0) {
                c->starved = 1;
                break;
            }
            --*c->slots;
            step_to(c, pi, c->scratch[k], s, PLANCTL_STATUS_IN_PROGRESS,
                    PCTL_WHY_START);
        }
    }
    roll = pctl_rollup(&ph->steps[0].status, sizeof ph->steps[0], ph->nsteps);
    /* A paused run cannot end, so a failure waits for resume: failing the
     * phase now would leave running siblings under a FATAL_ERROR phase. */
    if (roll == PLANCTL_STATUS_COMPLETE ||
        (roll == PLANCTL_STATUS_FATAL_ERROR && !c->paused)) {
        emit(c, PCTL_TARGET_PHASE, pi, 0, ph->status, roll,
             roll == PLANCTL_STATUS_COMPLETE ? PCTL_WHY_COMPLETE
                                             : PCTL_WHY_FAILED);
        ph->status = roll;
    }
}

/* The run ends FATAL_ERROR: open children close first, then the run. */
static void fail_run(ctx *c, pctl_run_view *run, pctl_why why)
{
    size_t pi, si;

    emit(c, PCTL_TARGET_CLOSE, 0, 0, run->status, PLANCTL_STATUS_CANCELLED,
         why);
    for (pi = 0; pi < run->nphases; pi++) {
        pctl_phase_view *ph = &run->phases[pi];

        for (si = 0; si < ph->nsteps; si++)
            if (!pctl_status_terminal(ph->steps[si].status))
                ph->steps[si].status = PLANCTL_STATUS_CANCELLED;
        if (!pctl_status_terminal(ph->status))
            ph->status = PLANCTL_STATUS_CANCELLED;
    }
    emit(c, PCTL_TARGET_RUN, 0, 0, run->status, PLANCTL_STATUS_FATAL_ERROR,
         why);
    run->status = PLANCTL_STATUS_FATAL_ERROR;
}

size_t pctl_decide_capacity(const pctl_run_view *run)
{
    size_t n = 4, pi;

    for (pi = 0; pi < run->nphases; pi++)
        n += 2 + 2 * run->phases[pi].nsteps;
    return n;
}

size_t pctl_decide(pctl_run_view *run, int64_t now, int *slots,
                   pctl_action *out, int64_t *wake_at_out, size_t *scratch)
{
    ctx c = {now, slots, out, 0, INT64_MAX, scratch, 0, 0};
    size_t pi, k, nstart;
    planctl_status roll;

    *wake_at_out = 0;
    run->starved = 0;
    if (run->status != PLANCTL_STATUS_PENDING &&
        run->status != PLANCTL_STATUS_IN_PROGRESS &&
        run->status != PLANCTL_STATUS_PAUSED)
        return 0; /* QUEUED waits for the store; terminal is done */
    if (run->status == PLANCTL_STATUS_PENDING) {
        emit(&c, PCTL_TARGET_RUN, 0, 0, run->status, PLANCTL_STATUS_IN_PROGRESS,
             PCTL_WHY_START);
        run->status = PLANCTL_STATUS_IN_PROGRESS;
    }
    c.paused = run->status == PLANCTL_STATUS_PAUSED;
    if (!c.paused && run->event_limit) {
        fail_run(&c, run, PCTL_WHY_EVENTS);
        return c.n;
    }
    if (!c.paused && run->deadline_at > 0) {
        if (now >= run->deadline_at) {
            fail_run(&c, run, PCTL_WHY_DEADLINE);
            return c.n;
        }
        wake_at(&c, run->deadline_at);
    }

    for (pi = 0; pi < run->nphases; pi++)
        if (run->phases[pi].status == PLANCTL_STATUS_IN_PROGRESS)
            decide_phase(&c, &run->phases[pi], pi);
    if (!c.paused) {
        size_t first = c.n, last;

        nstart = pctl_startable(run->strategy, &run->phases[0].status,
                                sizeof run->phases[0], run->nphases, scratch);
        for (k = 0; k < nstart; k++) {
            pi = scratch[k];
            emit(&c, PCTL_TARGET_PHASE, pi, 0, run->phases[pi].status,
                 PLANCTL_STATUS_IN_PROGRESS, PCTL_WHY_START);
            run->phases[pi].status = PLANCTL_STATUS_IN_PROGRESS;
        }
        /* The phases just started (the actions first..last) start their
         * steps in this same pass; decide_phase reuses scratch, so walk the
         * actions rather than the indices. */
        last = c.n;
        for (k = first; k < last; k++)
            decide_phase(&c, &run->phases[out[k].phase], out[k].phase);
    }
    roll = pctl_rollup(&run->phases[0].status, sizeof run->phases[0],
                       run->nphases);
    if (!c.paused && roll == PLANCTL_STATUS_COMPLETE) {
        emit(&c, PCTL_TARGET_RUN, 0, 0, run->status, PLANCTL_STATUS_COMPLETE,
             PCTL_WHY_COMPLETE);
        run->status = PLANCTL_STATUS_COMPLETE;
    } else if (!c.paused && roll == PLANCTL_STATUS_FATAL_ERROR) {
        fail_run(&c, run, PCTL_WHY_FAILED);
    }
    *wake_at_out = c.wake == INT64_MAX ? 0 : c.wake;
    run->starved = c.starved;
    return c.n;
}

int64_t pctl_backoff(const pctl_retry *retry, int next)
{
    double wait = (double)retry->backoff_ms;
    int i;

    for (i = 2; i < next && wait < (double)retry->max_backoff_ms; i++)
        wait *= retry->multiplier;
    if (wait > (double)retry->max_backoff_ms)
        wait = (double)retry->max_backoff_ms;
    return (int64_t)wait;
}
