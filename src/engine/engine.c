/*
 * engine.c - the engine's life: options, executors, handles and timers,
 * the lease, and shutdown.  The pass itself is in pass.c, which hands
 * back what it decided; engine.c applies it (after_pass), giving the
 * jobs' part to tasks.c.
 *
 * Handles: five timers and the hub's async, all initialised by start and
 * closed together when the engine stops; the engine reports done only
 * after the last close callback, so the embedder's uv_loop_close() then
 * returns 0.  Shutdown: stop starting steps, give running ones the grace
 * period, cancel the rest (their attempts end ERROR, retried at the next
 * start), wait for every job to report, commit, release the lease, close.
 */
#include "engine/engine.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "core/alloc.h"
#include "core/enginfo.h"
#include "core/kinds.h"
#include "engine/cache.h"
#include "engine/executors.h"
#include "engine/keeper.h"
#include "engine/metrics.h"
#include "store/counts.h"
#include "store/store.h"

#define DEFAULT_CONCURRENCY 64
#define DEFAULT_CHANGE_POLL_MS 100
#define DEFAULT_TASK_POLL_MS 1000
#define MAX_BACKOFF_MS 5000
/* Failed passes a stopping engine with no task running makes before it
 * gives up committing and stops anyway (run_pass). */
#define STOP_TRIES 3

/* Fenced off: another engine owns the database now and nothing more may
 * be written.  Jobs are stopped and forgotten in memory only; their steps
 * are the new owner's to recover. */
static void wind_down_fenced(planctl_engine *e)
{
    ejob *j, *next;

    for (j = e->jobs; j; j = next) {
        next = j->next;
        if (j->finished)
            pctl_engine_drop_job(e, j);
        else
            pctl_engine_cancel_job(e, j, EJOB_GONE);
    }
}

/* Stops all writing: another engine owns the database (ESTALE), the
 * path no longer names the file this engine opened (EIO, ident.c), or a
 * stopping engine cannot reach its database (run_pass).  Jobs are stopped
 * and forgotten; the engine closes. */
static void fence(planctl_engine *e, int why)
{
    e->fenced = 1;
    e->stop_rc = why;
    if (why < 0 && !e->stop_msg)
        e->stop_msg = pctl_strdup(planctl_errmsg(e->p));
    atomic_store(&e->xt_running, 0);
    if (e->state == ENGINE_RUNNING)
        planctl_engine_stop(e, 0);
    e->pass_pending = 0; /* passes cannot succeed any more */
    uv_timer_stop(&e->pass_timer);
    uv_idle_stop(&e->pass_idle);
    wind_down_fenced(e);
    pctl_engine_maybe_close(e);
}

static void on_pass(uv_timer_t *t);
static void on_pass_idle(uv_idle_t *h);

/* Asks for a pass in the loop's next idle phase (idempotent): after the
 * loop has polled, so that what came in meanwhile (jobs reporting, the
 * heartbeat's timer, a client of the web page) is served between two
 * passes however many passes follow each other.  Not a zero-delay timer:
 * libuv before 1.48 runs a timer started with no delay from a timer's
 * callback in the same turn of the loop, so a pass asking for another
 * (a backlog claimed a slice a pass) ran passes back to back without
 * polling: no job's report applied, no heartbeat renewed, until the chain
 * ended (4,000 runs on one engine: 0.7 s, past half a 1 s TTL).  The
 * files below engine.c reach it through e->request_pass. */
static void request_pass(planctl_engine *e)
{
    if (e->fenced) {
        /* No pass can run; a job reporting in just needs forgetting. */
        if (e->state == ENGINE_STOPPING) {
            wind_down_fenced(e);
            pctl_engine_maybe_close(e);
        }
        return;
    }
    if (e->pass_pending ||
        (e->state != ENGINE_RUNNING && e->state != ENGINE_STOPPING))
        return;
    e->pass_pending = 1;
    uv_idle_start(&e->pass_idle, on_pass_idle);
}

/* The output of running tasks goes to the database at most once a second
 * (OUTPUT_EVERY_MS), all of it in one small transaction, and only while
 * some task writes: a task that prints nothing costs nothing here. */
#define OUTPUT_EVERY_MS 1000

static void on_output(uv_timer_t *t);

/* Arms the output timer (idempotent); files below reach it through
 * e->request_output. */
static void request_output(planctl_engine *e)
{
    uint64_t now = uv_now(e->loop), due = e->output_at + OUTPUT_EVERY_MS;

    if (e->fenced || uv_is_active((uv_handle_t *)&e->output_timer) ||
        (e->state != ENGINE_RUNNING && e->state != ENGINE_STOPPING))
        return;
    uv_timer_start(&e->output_timer, on_output,
                   e->output_at && due > now ? due - now : 0, 0);
}

static void on_output(uv_timer_t *t)
{
    planctl_engine *e = t->data;

    e->output_at = uv_now(e->loop);
    if (e->output_at == 0)
        e->output_at = 1; /* 0 means "never written" */
    if (pctl_engine_write_output(e) < 0) {
        /* Busy or fenced: the tasks' outcomes will carry their output. */
        pctl_metrics_log(e, PLANCTL_LOG_WARN, "writing task output failed",
                         planctl_errmsg(e->p));
        request_output(e);
    }
}

static void on_wake(uv_timer_t *t)
{
    request_pass(t->data);
}

/* Arms the wake-up timer for time `at` (the handle's clock). */
static void arm_wake(planctl_engine *e, int64_t at)
{
    int64_t delay = at - pctl_now(e->p);

    uv_timer_start(&e->wake_timer, on_wake, delay > 0 ? (uint64_t)delay : 0, 0);
}

/* A pass committed: what it decided now happens.  Its jobs' part first
 * (tasks.c: cancels, the jobs that reported, new steps' jobs, starts: no
 * task starts before its IN_PROGRESS is durable), then the definitions
 * nothing uses any more are dropped (after the new jobs took theirs),
 * then the next pass, the wake-up, or the stop of an engine run until
 * idle.  The pass hands this back rather than doing it so that it calls
 * neither engine.c nor tasks.c (engine.h). */
static void after_pass(planctl_engine *e, pctl_pass_result *res)
{
    int open = 0;

    pctl_engine_apply_jobs(e, res);
    pctl_pass_result_free(res);
    pctl_engine_defs_trim(e);
    /* What the cache had to tell (read anew, runs added or dropped) has
     * been seen: by reconcile() and by the trim. */
    if (e->active)
        e->active->fresh = e->active->members = e->active->entered = 0;
    if (res->more)
        request_pass(e);
    if (e->state == ENGINE_RUNNING) {
        if (res->wake_at > 0)
            arm_wake(e, res->wake_at);
        /* A run that ended freed its instance: a queued run the store
         * promoted is read and started by the next pass.  With nothing
         * promoted there is nothing for it to do: asking anyway made an
         * empty pass, often before the tasks this pass started could
         * report (half of all passes, the throughput benchmark's runs
         * ending in most of them). */
        if (res->runs_promoted)
            request_pass(e);
        else if (e->o.until_idle && e->njobs == 0 &&
                 res->active_runs == res->waiting_runs &&
                 (res->waiting_runs > 0 ||
                  (pctl_runs_open_any(&open, e->p) == 0 && !open)))
            /* Idle: nothing open, or only runs that wait for a task kind
             * this engine has no executor for (and the runs queued behind
             * them, which wait too). */
            planctl_engine_stop(e, 0);
    }
}

/* Whether a task of this engine is still running (a job that has not
 * reported). */
static int running_jobs(const planctl_engine *e)
{
    const ejob *j;

    for (j = e->jobs; j; j = j->next)
        if (!j->finished)
            return 1;
    return 0;
}

static void run_pass(planctl_engine *e)
{
    pctl_pass_result res;
    int rc;

    e->pass_pending = 0;
    if (e->state != ENGINE_RUNNING && e->state != ENGINE_STOPPING)
        return;
    rc = e->fenced ? PLANCTL_ESTALE : pctl_engine_pass(&res, e);
    if (rc == PLANCTL_ESTALE) {
        if (!e->fenced)
            pctl_metrics_log(e, PLANCTL_LOG_ERROR, "lease lost",
                             planctl_errmsg(e->p));
        fence(e, e->fenced ? e->stop_rc : rc);
        return;
    }
    if (rc < 0 && e->state == ENGINE_STOPPING && !running_jobs(e) &&
        ++e->stop_failures >= STOP_TRIES) {
        /* Stopping, no task left to wait for, and the database keeps
         * failing (a server gone, a disk failing): backing off for ever
         * would never exit.  Nothing of the failed passes was committed;
         * steps this engine left IN_PROGRESS are recovered by the next
         * engine, as after a crash.  The lease is abandoned, not
         * released: releasing is a write too. */
        pctl_metrics_log(e, PLANCTL_LOG_ERROR,
                         "stopped without committing its last pass",
                         planctl_errmsg(e->p));
        fence(e, rc);
        return;
    }
    if (rc < 0) {
        /* A busy or failing database: try again later, longer each time;
         * nothing of the failed pass was committed. */
        e->backoff_ms = e->backoff_ms ? e->backoff_ms * 2 : 50;
        if (e->backoff_ms > MAX_BACKOFF_MS)
            e->backoff_ms = MAX_BACKOFF_MS;
        uv_timer_start(&e->pass_timer, on_pass, (uint64_t)e->backoff_ms, 0);
        e->pass_pending = 1;
        pctl_metrics_pass_failed(e, e->backoff_ms);
        return;
    }
    after_pass(e, &res);
    e->backoff_ms = 0;
    e->stop_failures = 0;
    pctl_engine_maybe_close(e);
}

/* A pass asked for at once (request_pass). */
static void on_pass_idle(uv_idle_t *h)
{
    uv_idle_stop(h);
    run_pass(h->data);
}

/* A pass tried again after a failed one (its backoff). */
static void on_pass(uv_timer_t *t)
{
    run_pass(t->data);
}

/*
 * The engine's clock.  Durations inside one engine (a retry's backoff, a
 * step's timeout, a run's deadline, a poll) must not follow the wall
 * clock: moved forward an hour, a 30 s timeout would fire at once; moved
 * back a day, a retry would wait a day.  So the engine reads its handle's
 * clock once, when it starts, and from then on advances that reading by
 * the monotonic clock.  The times it records are wall-clock times (what is
 * persisted must survive a restart, and is what people read), in the
 * frame of that first reading: under a clock the embedder fixed
 * (planctl_set_clock(), PLANCTL_NOW for the CLI) the engine starts at that
 * time and moves on from it, so what it records and what views measure
 * against the same fixed clock stay seconds apart, never days.  While the
 * engine runs, its clock is the handle's, so everything written through
 * the handle shares the frame.
 *
 * When that first reading was the system's wall clock, the frame also
 * follows the wall clock when it jumps (set by hand, or stepped by NTP):
 * at a difference of more than CLOCK_JUMP_MS the frame moves to it, and
 * the next pass moves every pending deadline and retry time of the active
 * runs by the same amount (store/clockshift.c), in the database and in
 * the engine's memory.  Durations stay true, and what the engine records
 * and what 'planctl status' shows keep agreeing with the clock on the
 * wall.
 */
#define CLOCK_JUMP_MS 2000
static int64_t engine_clock(void *data)
{
    planctl_engine *e = data;
    int64_t now =
        e->clock_wall0 + (int64_t)((uv_hrtime() - e->clock_mono0) / 1000000u);

    if (e->clock_follows_wall) {
        int64_t wall = pctl_clock_system_now(), d = wall - now;

        if (d > CLOCK_JUMP_MS || d < -CLOCK_JUMP_MS) {
            e->clock_wall0 += d;
            e->clock_shift += d; /* applied by the next pass */
            now = wall;
        }
    }
    return now;
}

static void clock_install(planctl_engine *e)
{
    e->handle_clock = pctl_clock_get(e->p);
    e->clock_follows_wall = pctl_clock_is_system(e->handle_clock);
    e->clock_shift = 0;
    e->clock_wall0 = pctl_now(e->p);
    e->clock_mono0 = uv_hrtime();
    planctl_set_clock(e->p, engine_clock, e);
    e->clock_installed = 1;
}

static void clock_restore(planctl_engine *e)
{
    if (!e->clock_installed)
        return;
    planctl_set_clock(e->p, e->handle_clock.now_ms, e->handle_clock.data);
    e->clock_installed = 0;
}

static int self_fence(planctl_engine *e);
static void fleet_beat(planctl_engine *e);
static void beat_taken(planctl_engine *e, uint64_t t0);
static void give_back_database(planctl_engine *e);

/* One of several engines was told of work for others: its next pass
 * looks at the shares (a look that may ask the others for runs, asked
 * for by its heartbeat or its runs' end, stays one: a look asked for by
 * a notification never asks, or two short engines would wake each other
 * at every pass). */
static void claim_woken(planctl_engine *e)
{
    if (e->fleet && e->want_claim != PCTL_CLAIM_BEAT &&
        e->want_claim != PCTL_CLAIM_SHORT)
        e->want_claim = PCTL_CLAIM_WOKEN;
}

/* Commits by other processes (a `planctl trigger` from a shell) show as a
 * new PRAGMA data_version (on PostgreSQL, as notifications); our own
 * commits do not change it. */
static void on_poll(uv_timer_t *t)
{
    planctl_engine *e = t->data;
    int64_t v;

    if (e->fenced || self_fence(e))
        return;
    /* An engine of this host that exited is declared dead now, not at the
     * next heartbeat: its runs move on at once. */
    if (e->fleet && pctl_fleet_peer_gone(e->p))
        fleet_beat(e);
    if (pctl_db_ident_check(e->p) < 0) {
        pctl_metrics_log(e, PLANCTL_LOG_ERROR, "database gone",
                         planctl_errmsg(e->p));
        fence(e, PLANCTL_EIO);
        return;
    }
    /* Reading the clock notices a jump of the wall clock; a pass moves
     * the pending times with it at once, not only at the next wake-up. */
    (void)pctl_now(e->p);
    if (e->clock_shift)
        request_pass(e);
    /* Among several engines, only what makes work for others notifies:
     * an admission, a release, an engine joining, leaving or declared
     * dead, a change to a run somebody holds.  The others' passes move
     * the change token too (each one's BEGIN reads it) and ask for
     * nothing: counted as wake-ups, they had every engine count the
     * shares and claim from the first run (both read every active run)
     * at every poll, whatever happened. */
    if (pctl_db_heard(&v, e->p) == 0 && v != e->heard) {
        e->heard = v;
        claim_woken(e);
        request_pass(e);
    }
}

/* ---- the engine's observer of the store's writes ----
 * Its cache of active runs follows them (cache.h), and its metrics and
 * log count them. */

static int obs_known(void *data, const planctl *p, planctl_entity entity,
                     int64_t id, pctl_known_row *out)
{
    planctl_engine *e = data;

    return pctl_active_observer.known(&e->active, p, entity, id, out);
}

static void obs_written(void *data, const pctl_written *w)
{
    planctl_engine *e = data;

    pctl_active_observer.written(&e->active, w);
    if (e->in_pass)
        pctl_metrics_change(e, w->change, w->run_id, w->instance_id,
                            w->attempt);
}

static void obs_task(void *data, int64_t step_id, int task_index)
{
    planctl_engine *e = data;

    pctl_active_observer.task(&e->active, step_id, task_index);
}

static void obs_events(void *data, int64_t run_id, int64_t count)
{
    planctl_engine *e = data;

    pctl_active_observer.events(&e->active, run_id, count);
    /* A run written through the engine's own handle outside its passes (an
     * embedder admitting, cancelling or pausing on the handle it gave the
     * engine): no other connection committed, so nothing else would ask
     * for a pass, and the run would wait for the next thing that does.
     * Among several engines, a run it does not hold may be one to
     * claim. */
    if (e->in_pass || run_id <= 0)
        return;
    if (!(e->active && pctl_active_find_run(e->active, run_id)))
        claim_woken(e);
    request_pass(e);
}

static void obs_missed(void *data)
{
    planctl_engine *e = data;

    pctl_active_observer.missed(&e->active);
}

static const pctl_observer observer = {obs_known, obs_written, obs_task,
                                       obs_events, obs_missed};

/* One of several engines: renews its heartbeat, which also declares dead
 * the engines whose heartbeat stopped (their runs are claimed at the next
 * pass), and looks for runs nobody holds (the slow safety net behind the
 * notifications). */
static void fleet_beat(planctl_engine *e)
{
    uint64_t t0 = uv_hrtime();
    int rc, reaped = 0;
    char *said = NULL;

    rc = pctl_fleet_beat(e->p, &reaped, &said);
    if (rc == 0) {
        pctl_active_committed(e->active, e->p);
        pctl_metrics_beat(e);
        beat_taken(e, t0);
        /* Which engines, and what of theirs is taken over. */
        if (reaped)
            pctl_metrics_log(e, PLANCTL_LOG_WARN, "engines declared dead",
                             said);
        pctl_free(said);
        e->want_claim = PCTL_CLAIM_BEAT;
        request_pass(e);
    } else if (rc == PLANCTL_ESTALE) {
        pctl_metrics_log(e, PLANCTL_LOG_ERROR, "declared dead",
                         planctl_errmsg(e->p));
        fence(e, PLANCTL_ESTALE);
    }
    /* Other failures (busy, the server away) are retried at the next beat;
     * past its time the engine fences itself (self_fence). */
}

/*
 * An engine whose last heartbeat is older than half its TTL stops: it
 * cancels its tasks and writes nothing more, before anyone may take its
 * runs over (its TTL).  Its keeper kills what is left at 2/3 of the TTL,
 * also when this loop does not run at all.
 */
static int self_fence(planctl_engine *e)
{
    uint64_t half = (uint64_t)e->o.lease_ttl_ms * 1000000u / 2;
    uint64_t beat = e->beat_at;

    if (!e->fleet || e->fenced || uv_hrtime() < beat + half)
        return 0;
    pctl_err(e->p, PLANCTL_ESTALE,
             "engine %s could not renew its heartbeat on %s for %.1f s (its "
             "TTL is %.1f s): it stops its tasks and stops, before other "
             "engines may take its runs over",
             e->p->fleet_name ? e->p->fleet_name : "?", e->p->path,
             (double)(uv_hrtime() - beat) / 1e9,
             (double)e->o.lease_ttl_ms / 1000.0);
    pctl_metrics_log(e, PLANCTL_LOG_ERROR, "heartbeat late",
                     planctl_errmsg(e->p));
    fence(e, PLANCTL_ESTALE);
    return 1;
}

static void on_beat(uv_timer_t *t)
{
    planctl_engine *e = t->data;
    int rc;

    /* A loop that was held up past half the TTL stops rather than beat:
     * its keeper may have killed its tasks already. */
    if (e->fenced || self_fence(e))
        return;
    if (e->fleet) {
        fleet_beat(e);
        return;
    }
    rc = pctl_lease_heartbeat(e->p, e->token);
    /* The heartbeat writes the lease row only: the cache of active runs
     * is still true, and need not be read anew at the next pass. */
    if (rc == 0)
        pctl_active_committed(e->active, e->p);
    if (rc == 0)
        pctl_metrics_beat(e);
    if (rc == PLANCTL_ESTALE) {
        pctl_metrics_log(e, PLANCTL_LOG_ERROR, "lease lost",
                         planctl_errmsg(e->p));
        fence(e, PLANCTL_ESTALE);
    }
    /* Other failures (busy) are retried at the next beat. */
}

static void cancel_all(planctl_engine *e, ejob_cancel why)
{
    ejob *j;

    for (j = e->jobs; j; j = j->next)
        if (!j->finished && j->cancel == EJOB_LIVE)
            pctl_engine_cancel_job(e, j, why);
}

static void on_grace(uv_timer_t *t)
{
    planctl_engine *e = t->data;

    cancel_all(e, e->fenced ? EJOB_GONE : EJOB_SHUTDOWN);
    request_pass(e);
}

static void closed_one(planctl_engine *e)
{
    if (--e->handles_open == 0) {
        e->state = ENGINE_STOPPED;
        pctl_metrics_log(e, PLANCTL_LOG_INFO, "stopped", NULL);
        if (e->done)
            e->done(e, e->done_data);
    }
}

static void handle_closed(uv_handle_t *h)
{
    closed_one(h->data);
}

static void hub_closed(pctl_hub *hub, void *data)
{
    (void)hub;
    closed_one(data);
}

static void xt_close(planctl_engine *e);

static void close_handles(planctl_engine *e)
{
    uv_timer_t *timers[] = {&e->pass_timer, &e->wake_timer,  &e->poll_timer,
                            &e->beat_timer, &e->grace_timer, &e->output_timer};
    size_t i;

    xt_close(e); /* while the handle still reads the gauges */
    e->state = ENGINE_CLOSING;
    clock_restore(e);
    if (e->p->observer_data == e)
        pctl_observe(e->p, NULL, NULL);
    for (i = 0; i < sizeof timers / sizeof timers[0]; i++) {
        uv_timer_stop(timers[i]);
        uv_close((uv_handle_t *)timers[i], handle_closed);
    }
    uv_idle_stop(&e->pass_idle);
    uv_close((uv_handle_t *)&e->pass_idle, handle_closed);
    pctl_hub_close(&e->hub, hub_closed, e);
}

void pctl_engine_maybe_close(planctl_engine *e)
{
    if (e->state != ENGINE_STOPPING || e->njobs > 0 || e->pass_pending)
        return;
    /* Every job has reported and its outcome was committed. */
    pctl_active_drop(&e->active);
    give_back_database(e);
    close_handles(e);
}

/* ---- from any thread ----
 *
 * Other threads reach the engine through xt_async and what xt_lock
 * guards: a stop they ask for (planctl_engine_request_stop) and fresh
 * metrics (planctl_engine_metrics_snapshot) are done on the loop thread
 * at its next turn, the metrics handed back through xt_text.  Health is
 * two atomics (planctl_engine_healthy).  xt_async is used only while
 * xt_open is 1, under the lock: it is initialised by start and closed by
 * xt_close, each under the lock, so no thread wakes a closed handle. */

/* Renders the metrics now and publishes them for the other threads
 * (loop thread).  Out of memory keeps the last ones. */
static void xt_publish(planctl_engine *e)
{
    char *text = NULL;

    if (planctl_engine_metrics(&text, e) < 0)
        return;
    pthread_mutex_lock(&e->xt_lock);
    pctl_free(e->xt_text);
    e->xt_text = text;
    e->xt_gen++;
    pthread_cond_broadcast(&e->xt_cond);
    pthread_mutex_unlock(&e->xt_lock);
}

static void on_xt(uv_async_t *a)
{
    planctl_engine *e = a->data;
    int stop, metrics;
    int64_t grace;

    pthread_mutex_lock(&e->xt_lock);
    stop = e->xt_stop;
    grace = e->xt_grace;
    metrics = e->xt_metrics;
    e->xt_stop = e->xt_metrics = 0;
    pthread_mutex_unlock(&e->xt_lock);
    if (stop)
        planctl_engine_stop(e, grace);
    if (metrics)
        xt_publish(e);
}

/* Opens the way in (start, loop thread): a stop asked for before the
 * engine started is done at the loop's first turn. */
static int xt_open(planctl_engine *e)
{
    int rc = uv_async_init(e->loop, &e->xt_async, on_xt);

    if (rc < 0)
        return rc;
    e->xt_async.data = e;
    pthread_mutex_lock(&e->xt_lock);
    e->xt_open = 1;
    if (e->xt_stop)
        uv_async_send(&e->xt_async);
    pthread_mutex_unlock(&e->xt_lock);
    return 0;
}

/* Closes the way in (the engine closing, loop thread): the last metrics
 * are published, and whoever waits for fresh ones gets them. */
static void xt_close(planctl_engine *e)
{
    atomic_store(&e->xt_running, 0);
    xt_publish(e);
    pthread_mutex_lock(&e->xt_lock);
    e->xt_open = 2;
    pthread_cond_broadcast(&e->xt_cond);
    pthread_mutex_unlock(&e->xt_lock);
    uv_close((uv_handle_t *)&e->xt_async, handle_closed);
}

/* The longest wait for fresh metrics: a year (no time_t overflow). */
#define WAIT_MAX_MS (365LL * 24 * 3600 * 1000)

int planctl_engine_request_stop(planctl_engine *e, int64_t grace_ms)
{
    if (!e)
        return PLANCTL_EINVAL;
    pthread_mutex_lock(&e->xt_lock);
    if (e->xt_open < 2) {
        /* Several requests: the shortest grace wins, as with stop. */
        if (!e->xt_stop || grace_ms < e->xt_grace)
            e->xt_grace = grace_ms;
        e->xt_stop = 1;
        if (e->xt_open == 1)
            uv_async_send(&e->xt_async);
    }
    pthread_mutex_unlock(&e->xt_lock);
    return 0;
}

int planctl_engine_metrics_snapshot(char **out, planctl_engine *e,
                                    int64_t wait_ms)
{
    struct timespec until;
    uint64_t gen;

    if (!out)
        return PLANCTL_EINVAL;
    *out = NULL;
    if (!e || wait_ms < 0)
        return PLANCTL_EINVAL;
    if (wait_ms > WAIT_MAX_MS) /* a wait past any deadline's end */
        wait_ms = WAIT_MAX_MS;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)(wait_ms / 1000);
    until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&e->xt_lock);
    gen = e->xt_gen;
    if (e->xt_open == 1 && wait_ms > 0) {
        e->xt_metrics = 1;
        uv_async_send(&e->xt_async);
        while (e->xt_gen == gen && e->xt_open == 1 &&
               pthread_cond_timedwait(&e->xt_cond, &e->xt_lock, &until) == 0)
            ;
    }
    *out = e->xt_text ? pctl_strdup(e->xt_text) : NULL;
    pthread_mutex_unlock(&e->xt_lock);
    return *out ? 0 : PLANCTL_ENOMEM;
}

/* ---- executors ---- */

int planctl_engine_register(planctl_engine *e, const char *kind,
                            const planctl_executor *ex)
{
    planctl_executor copy;
    int rc;

    if (!e)
        return pctl_err_arg(NULL, "e");
    if (!kind || !ex)
        return pctl_err_arg(e->p, !kind ? "kind" : "ex");
    if (ex->version < 1 || ex->version > PLANCTL_EXECUTOR_VERSION)
        return pctl_err(e->p, PLANCTL_EINVAL,
                        "executor of kind \"%.60s\" has version %u: this "
                        "library knows versions 1 to %d "
                        "(PLANCTL_EXECUTOR_VERSION)",
                        kind, ex->version, PLANCTL_EXECUTOR_VERSION);
    if (!ex->start || !ex->cancel)
        return pctl_err(e->p, PLANCTL_EINVAL,
                        "executor of kind \"%.60s\" has no %s function: "
                        "both start and cancel are required",
                        kind, !ex->start ? "start" : "cancel");
    /* One registry on the handle: definitions using the kind validate (a
     * spec check given before is kept), the engine runs its tasks, and
     * the preflight checks that run in this process can use it. */
    /* A version 1 struct ends before release: read only what it has. */
    memset(&copy, 0, sizeof copy);
    copy.version = ex->version;
    copy.start = ex->start;
    copy.cancel = ex->cancel;
    copy.data = ex->data;
    if (ex->version >= 2)
        copy.release = ex->release;
    rc = pctl_kind_set_executor(e->p, kind, &copy);
    return rc < 0 ? rc : 0;
}

/*
 * How many tasks the process has descriptors for.  A shell task holds two
 * pipes' ends while it runs and a few more while it is spawned; the
 * database, the loop and an HTTP server need their own.  Counted when
 * the engine starts, from the soft limit and what is open then, so that a
 * low limit (ulimit -n 64) slows the engine down instead of failing tasks
 * with "too many open files".  A start that still runs out (descriptors
 * taken by the embedder later) waits and is tried again (exec_shell.c).
 */
#define FDS_PER_TASK 3
#define FDS_RESERVED 24

static int open_fds(int limit)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *de;
    int n = 0, fd;

    if (d) {
        while ((de = readdir(d)))
            n += de->d_name[0] != '.';
        closedir(d);
        return n - 1; /* the directory's own */
    }
    for (fd = 0; fd < limit && fd < 65536; fd++)
        n += fcntl(fd, F_GETFD) != -1;
    return n;
}

static int task_budget(void)
{
    struct rlimit rl;
    long limit, left;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return INT_MAX;
    limit = rl.rlim_cur > (rlim_t)INT_MAX ? INT_MAX : (long)rl.rlim_cur;
    left = limit - open_fds((int)limit) - FDS_RESERVED;
    return left < FDS_PER_TASK ? 1 : (int)(left / FDS_PER_TASK);
}

/* ---- lifecycle ---- */

/* The engine's loop (its own when loop is NULL) and what other threads
 * use.  0, or PLANCTL_ENOMEM or a libuv error, with nothing left. */
static int xt_init(planctl_engine *e, uv_loop_t *loop)
{
    pthread_condattr_t ca;
    int rc;

    if (!loop) {
        if (!(e->own_loop = pctl_malloc(sizeof *e->own_loop)))
            return PLANCTL_ENOMEM;
        if ((rc = uv_loop_init(e->own_loop)) < 0) {
            pctl_free(e->own_loop);
            e->own_loop = NULL;
            return rc;
        }
        loop = e->own_loop;
    }
    e->loop = loop;
    pthread_mutex_init(&e->xt_lock, NULL);
    /* Waits are measured on the monotonic clock, as the engine's. */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->xt_cond, &ca);
    pthread_condattr_destroy(&ca);
    return 0;
}

/* Undoes xt_init, and frees the metrics last published.  The engine's
 * own loop has no handle left by then (planctl_engine_run closes them, or
 * it never ran).  Can't fail. */
static void xt_fini(planctl_engine *e)
{
    pthread_cond_destroy(&e->xt_cond);
    pthread_mutex_destroy(&e->xt_lock);
    pctl_free(e->xt_text);
    e->xt_text = NULL;
    if (e->own_loop) {
        uv_run(e->own_loop, UV_RUN_DEFAULT); /* close callbacks still due */
        (void)uv_loop_close(e->own_loop);
        pctl_free(e->own_loop);
        e->own_loop = NULL;
    }
}

/* The metrics other threads read until the engine runs: the counters at
 * zero, no gauge read (no database call before start).  0 or ENOMEM. */
static int xt_first_text(planctl_engine *e)
{
    pctl_gauges g;

    memset(&g, 0, sizeof g);
    return pctl_metrics_render(&e->xt_text, e->metrics, &g);
}

int planctl_engine_new(planctl_engine **out, planctl *p, uv_loop_t *loop,
                       const planctl_engine_options *opts)
{
    planctl_engine_options defaults = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_engine *e;
    int rc;

    if (!out || !p) {
        if (out)
            *out = NULL;
        return pctl_err_arg(p, !p ? "p" : "out");
    }
    *out = NULL;
    if (!opts)
        opts = &defaults;
    if (opts->version < 1 || opts->version > PLANCTL_ENGINE_OPTIONS_VERSION ||
        opts->concurrency < 0 || opts->change_poll_ms < 0 ||
        opts->task_poll_ms < 0 || opts->lease_ttl_ms < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "invalid engine options (version %u)", opts->version);
    if (opts->version >= 3 && opts->capacity < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "capacity of %lld runs: give 0 (no limit) or more",
                        (long long)opts->capacity);
    if (opts->version >= 2 &&
        (opts->output_size < 0 || opts->output_size > PCTL_OUTPUT_SIZE_MAX))
        return pctl_err(p, PLANCTL_EINVAL,
                        "output size of %lld bytes: give 0 (the default, "
                        "64 KiB) to %d (1 MiB)",
                        (long long)opts->output_size, PCTL_OUTPUT_SIZE_MAX);
    e = pctl_calloc(1, sizeof *e);
    if (!e)
        return PLANCTL_ENOMEM;
    e->p = p;
    if ((rc = xt_init(e, loop)) < 0) {
        pctl_free(e);
        return rc == PLANCTL_ENOMEM
                   ? rc
                   : pctl_err(p, rc, "cannot make the engine's own loop");
    }
    /* A version 1 struct ends before output_size, a version 2 one before
     * name, a version 3 one before no_shell. */
    memcpy(&e->o, opts,
           opts->version >= 4   ? sizeof *opts
           : opts->version == 3 ? offsetof(planctl_engine_options, no_shell)
           : opts->version == 2
               ? offsetof(planctl_engine_options, name)
               : offsetof(planctl_engine_options, output_size));
    e->o.version = PLANCTL_ENGINE_OPTIONS_VERSION;
    if (e->o.name && *e->o.name && !(e->name = pctl_strdup(e->o.name))) {
        xt_fini(e);
        pctl_free(e);
        return PLANCTL_ENOMEM;
    }
    e->o.name = e->name;
    if (!e->o.output_size)
        e->o.output_size = PCTL_OUTPUT_SIZE_DEFAULT;
    e->request_pass = request_pass;
    e->request_output = request_output;
    if (!(e->metrics = pctl_metrics_new()) || xt_first_text(e) < 0) {
        pctl_metrics_free(e->metrics);
        xt_fini(e);
        pctl_free(e->name);
        pctl_free(e);
        return PLANCTL_ENOMEM;
    }
    if (!e->o.concurrency)
        e->o.concurrency = DEFAULT_CONCURRENCY;
    e->fd_budget = task_budget();
    if (!e->o.change_poll_ms)
        e->o.change_poll_ms = DEFAULT_CHANGE_POLL_MS;
    if (!e->o.task_poll_ms)
        e->o.task_poll_ms = DEFAULT_TASK_POLL_MS;
    if (!e->o.lease_ttl_ms)
        e->o.lease_ttl_ms = PCTL_LEASE_TTL_DEFAULT_MS;
    /* Without shell the engine never spawns, so libuv never handles
     * SIGCHLD for it (sigchld.c): its runs that use shell wait, as for any
     * kind it has no executor for. */
    if (planctl_engine_register(e, "Dummy", pctl_executor_dummy()) < 0 ||
        (!e->o.no_shell &&
         planctl_engine_register(e, "shell", pctl_executor_shell()) < 0)) {
        planctl_engine_free(e);
        return PLANCTL_ENOMEM;
    }
    *out = e;
    return 0;
}

/* A heartbeat that began at t0 (uv_hrtime()) committed: the engine may
 * run tasks for 2/3 of its TTL from t0, so that they are gone by the time
 * the others may take its runs (its TTL after that heartbeat, on the
 * database's clock, which runs no faster). */
static void beat_taken(planctl_engine *e, uint64_t t0)
{
    e->beat_at = t0;
    pctl_keeper_until(e->keeper,
                      t0 + (uint64_t)e->o.lease_ttl_ms * 1000000u * 2 / 3);
}

/* One engine per database (the lease), or one of several (store/fleet.c,
 * with a keeper for its tasks: keeper.c). */
static int take_database(planctl_engine *e)
{
    uint64_t t0 = uv_hrtime();
    int rc;

    if (!pctl_fleet_supported(e->p))
        return pctl_lease_acquire(&e->token, e->p, e->o.lease_ttl_ms);
    if ((rc = pctl_keeper_start(&e->keeper)) < 0)
        return pctl_err(e->p, PLANCTL_EIO,
                        "cannot start the engine's keeper process: %s",
                        strerror(-rc));
    char *said = NULL;
    if ((rc = pctl_fleet_join(e->p, e->name, e->o.lease_ttl_ms, e->o.capacity,
                              &said)) < 0) {
        pctl_free(said);
        pctl_keeper_stop(e->keeper);
        e->keeper = NULL;
        return rc;
    }
    /* A dead engine of this host, declared so as this one joined: its
     * runs are this one's to take over. */
    if (said)
        pctl_metrics_log(e, PLANCTL_LOG_WARN, "engines declared dead", said);
    pctl_free(said);
    e->fleet = 1;
    e->fleet_share = -1; /* looked at in its first pass */
    e->want_claim = PCTL_CLAIM_BEAT;
    beat_taken(e, t0);
    return 0;
}

static void give_back_database(planctl_engine *e)
{
    if (!e->fleet) {
        if (e->fenced)
            pctl_lease_abandon(e->p);
        else
            pctl_lease_release(e->p, e->token);
        return;
    }
    if (e->fenced)
        pctl_fleet_forget(e->p);
    else
        pctl_fleet_leave(e->p);
    pctl_keeper_stop(e->keeper);
    e->keeper = NULL;
}

int planctl_engine_start(planctl_engine *e,
                         void (*stopped)(planctl_engine *, void *), void *data)
{
    size_t i;
    int rc;

    if (!e)
        return pctl_err_arg(NULL, "e");
    uv_timer_t *timers[] = {&e->pass_timer, &e->wake_timer,  &e->poll_timer,
                            &e->beat_timer, &e->grace_timer, &e->output_timer};
    if (e->state != ENGINE_NEW)
        return pctl_err(e->p, PLANCTL_EINVAL,
                        "the engine was started already: an engine starts "
                        "once");
    /* Nobody else runs the engine's own loop. */
    if (e->own_loop && !e->own_run)
        return pctl_err(e->p, PLANCTL_EINVAL,
                        "the engine has a loop of its own: "
                        "planctl_engine_run() starts and runs it");
    clock_install(e);
    if ((rc = take_database(e)) < 0) {
        clock_restore(e);
        return rc;
    }
    if ((rc = pctl_hub_init(&e->hub, e->loop)) < 0) {
        give_back_database(e);
        clock_restore(e);
        return pctl_err(e->p, rc, "cannot set up the engine's loop handles");
    }
    if ((rc = xt_open(e)) < 0) {
        pctl_hub_close(&e->hub, NULL, NULL);
        give_back_database(e);
        clock_restore(e);
        return pctl_err(e->p, PLANCTL_ERROR,
                        "cannot set up the engine's loop handles: %s",
                        uv_strerror(rc));
    }
    for (i = 0; i < sizeof timers / sizeof timers[0]; i++) {
        uv_timer_init(e->loop, timers[i]);
        timers[i]->data = e;
    }
    uv_idle_init(e->loop, &e->pass_idle);
    e->pass_idle.data = e;
    /* The timers, the pass's idle handle, the hub and xt_async. */
    e->handles_open = (int)(sizeof timers / sizeof timers[0]) + 3;
    pctl_db_heard(&e->heard, e->p);
    pctl_db_ident_note(e->p);
    uv_timer_start(&e->poll_timer, on_poll, (uint64_t)e->o.change_poll_ms,
                   (uint64_t)e->o.change_poll_ms);
    uv_timer_start(&e->beat_timer, on_beat, (uint64_t)(e->o.lease_ttl_ms / 3),
                   (uint64_t)(e->o.lease_ttl_ms / 3));
    e->done = stopped;
    e->done_data = data;
    /* The descriptors there are bound how many tasks run at once. */
    if (e->fd_budget < e->o.concurrency) {
        char detail[128];

        snprintf(detail, sizeof detail,
                 "at most %d steps at once instead of %d: the process may "
                 "open few descriptors (ulimit -n)",
                 e->fd_budget, e->o.concurrency);
        e->o.concurrency = e->fd_budget;
        pctl_metrics_log(e, PLANCTL_LOG_WARN, "concurrency lowered", detail);
    }
    e->state = ENGINE_RUNNING;
    pctl_observe(e->p, &observer, e);
    pctl_metrics_beat(e);
    atomic_store(&e->xt_running, 1);
    pctl_metrics_log(e, PLANCTL_LOG_INFO,
                     e->fleet ? "engine started, joined the engines"
                              : "engine started, lease taken",
                     e->p->path);
    /* The first pass recovers: steps left IN_PROGRESS without a job here
     * were interrupted and become ERROR. */
    request_pass(e);
    return 0;
}

int planctl_engine_stop(planctl_engine *e, int64_t grace_ms)
{
    if (!e)
        return pctl_err_arg(NULL, "e");
    if (e->state == ENGINE_NEW)
        return pctl_err(e->p, PLANCTL_EINVAL,
                        "the engine was never started: nothing to stop");
    if (e->state == ENGINE_CLOSING || e->state == ENGINE_STOPPED)
        return 0;
    if (e->state == ENGINE_RUNNING) {
        e->state = ENGINE_STOPPING;
        atomic_store(&e->xt_running, 0);
        uv_timer_stop(&e->wake_timer);
        pctl_metrics_log(e, PLANCTL_LOG_INFO, "stopping", NULL);
        /* A pass backing off after failures is tried again now: the
         * stop's tries (STOP_TRIES) start from the shortest backoff. */
        if (e->pass_pending && e->backoff_ms) {
            e->backoff_ms = 0;
            uv_timer_stop(&e->pass_timer);
            uv_idle_start(&e->pass_idle, on_pass_idle);
        }
    }
    /* A second stop may shorten the grace, never lengthen it. */
    if (grace_ms <= 0)
        on_grace(&e->grace_timer);
    else if (!uv_is_active((uv_handle_t *)&e->grace_timer) ||
             uv_timer_get_due_in(&e->grace_timer) > (uint64_t)grace_ms)
        uv_timer_start(&e->grace_timer, on_grace, (uint64_t)grace_ms, 0);
    request_pass(e);
    return 0;
}

/* Closes what an executor left open on the engine's own loop. */
static void close_left(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

int planctl_engine_run(planctl_engine *e)
{
    int rc;

    if (!e)
        return pctl_err_arg(NULL, "e");
    if (!e->own_loop || e->state != ENGINE_NEW)
        return pctl_err(e->p, PLANCTL_EINVAL,
                        e->own_loop ? "the engine was started already"
                                    : "the engine runs on its embedder's "
                                      "loop: run that loop");
    e->own_run = 1;
    if ((rc = planctl_engine_start(e, NULL, NULL)) < 0) {
        e->own_run = 0;
        return rc;
    }
    uv_run(e->own_loop, UV_RUN_DEFAULT);
    /* The engine has stopped and closed its handles; anything an
     * executor left on the loop goes with it. */
    uv_walk(e->own_loop, close_left, NULL);
    uv_run(e->own_loop, UV_RUN_DEFAULT);
    return planctl_engine_status(e);
}

int planctl_engine_status(const planctl_engine *e)
{
    if (!e)
        return pctl_err_arg(NULL, "e");
    /* The reason it stopped, not what failed while it closed. */
    if (e->stop_rc < 0 && e->stop_msg)
        pctl_err(e->p, e->stop_rc, "%s", e->stop_msg);
    return e->stop_rc;
}

void planctl_engine_free(planctl_engine *e)
{
    size_t i;

    if (!e)
        return;
    /* Freeing a running engine would leave libuv with dangling handles;
     * refuse quietly rather than crash (documented: stop it first). */
    if (e->state != ENGINE_NEW && e->state != ENGINE_STOPPED)
        return;
    while (e->jobs)
        pctl_engine_drop_job(e, e->jobs);
    pctl_active_drop(&e->active);
    for (i = 0; i < e->ndefs; i++)
        pctl_engine_defent_free(&e->defs[i]);
    /* Its executors go with it (their data may): the kinds stay known. */
    pctl_kinds_drop_executors(e->p->kinds);
    pctl_free(e->defs);
    pctl_free(e->stop_msg);
    pctl_idmap_free(&e->waiting);
    pctl_idmap_free(&e->waits);
    pctl_metrics_free(e->metrics);
    xt_fini(e);
    pctl_free(e->name);
    pctl_free(e);
}
