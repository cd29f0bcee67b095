/*
 * pass.c - one pass of the engine, in one write transaction:
 *
 *   1. read: every active run with its phases and steps, from the cache
 *      the engine keeps between passes (cache.h), brought up to date or
 *      read anew through the store;
 *   2. outcomes: every job that reported since the last pass (at most
 *      MAX_OUTCOMES; the rest wait for the next pass) moves its step
 *      (COMPLETE, ERROR with the next try's time, FATAL_ERROR), or on to
 *      its next task, or waits to be polled again (NOT_DONE);
 *   3. reconcile: jobs whose step is no longer IN_PROGRESS (cancelled by
 *      another process, say) are cancelled; steps IN_PROGRESS that no job
 *      of ours runs were interrupted (a dead engine) and become ERROR;
 *   4. decide: pctl_decide() for every run that may have something to do
 *      (it changed, a time it waits for came, or it waits for a slot and
 *      one is free), and every action through the gate;
 *   5. commit, and hand back what was decided (pctl_pass_result): only
 *      then does engine.c have tasks.c forget finished jobs, cancel jobs,
 *      and start the tasks of steps that went IN_PROGRESS (a task never
 *      starts before its IN_PROGRESS is durable), and arm the wake-up and
 *      ask for the next pass.
 * If anything fails before the commit, the transaction is rolled back, the
 * cache dropped (the next pass reads everything), and nothing else in
 * memory has changed: the effects of step 2 and the starts of step 4 are
 * only recorded, and applied after the commit.
 *
 * pass.c calls neither engine.c nor tasks.c: it decides and commits, and
 * what follows is data handed back, so the engine's files call one way
 * (engine.h).  libuv's uv_run() is the model: it runs its phases in
 * order, and no phase calls back into the loop driver.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/decide.h"
#include "core/logtail.h"
#include "core/outputs.h"
#include "engine/cache.h"
#include "engine/engine.h"
#include "engine/metrics.h"
#include "engine/orphans.h"
#include "engine/outfile.h"
#include "store/store.h"

/* What one pass does at most, so a burst (a thousand runs admitted at
 * once, tasks finishing together, a restart) makes several bounded
 * transactions, each committed and its tasks started, rather than one
 * huge one: outcomes applied, transitions decided (a run is decided
 * whole, so this may be passed by one run's worth), steps started.  The
 * rest waits for the next pass, asked for at once: in the next turn of
 * the loop, after what came in meanwhile was served (engine.c). */
#define MAX_OUTCOMES 1024
#define MAX_ACTIONS 4096
#define MAX_STARTS 1024

typedef struct pass {
    planctl_engine *e;
    pctl_pass_result r;  /* handed to engine.c once committed */
    pctl_run_row **work; /* the runs that changed or whose time came, in id
                            order (pctl_active_work) */
    size_t nwork;
    size_t cap, ccap;     /* of r.starts, r.cancels */
    pctl_orphan *orphans; /* interrupted attempts, reaped before the commit */
    size_t norphans, ocap;
    size_t nactions; /* decided so far */
    size_t ndecided; /* runs decided */
} pass;

static void wake_min(pass *ps, int64_t t)
{
    if (t > 0 && (ps->r.wake_at == 0 || t < ps->r.wake_at))
        ps->r.wake_at = t;
}

/* The job running a cached step: set when the job is made (or when the
 * cache is read anew), cleared when it is dropped. */
static ejob *job_of(const pctl_step_row *row)
{
    return row->job;
}

/* Cancels j after the commit: its step is ending in this pass.  A job
 * that reported already has no task to stop; but if this pass applied its
 * report as "go on" (its next task, or a poll of a task not done yet), it
 * must not: its step ends here, so it is dropped at the commit instead.
 * A report not applied yet is the next pass's, which finds the step
 * closed. */
static int defer_cancel(pass *ps, ejob *j)
{
    ejob **n;

    if (!j || j->cancel != EJOB_LIVE)
        return 0;
    if (j->finished) {
        if (j->fx == EJOB_FX_NEXT_TASK || j->fx == EJOB_FX_POLL)
            j->fx = EJOB_FX_DROP;
        return 0;
    }
    if (ps->r.ncancels == ps->ccap) {
        ps->ccap = ps->ccap ? ps->ccap * 2 : 8;
        n = pctl_realloc(ps->r.cancels, ps->ccap * sizeof *n);
        if (!n)
            return pctl_err(ps->e->p, PLANCTL_ENOMEM, "out of memory");
        ps->r.cancels = n;
    }
    ps->r.cancels[ps->r.ncancels++] = j;
    return 0;
}

/* The engine's change of step id from one status to another; callers set
 * what else the change carries (pctl_change's fields) before step_gate(). */
static pctl_change step_change_of(int64_t id, planctl_status from,
                                  planctl_status to, const char *msg)
{
    pctl_change c = PCTL_CHANGE_INIT;

    c.entity = PLANCTL_ENTITY_STEP;
    c.id = id;
    c.from = from;
    c.to = to;
    c.message = msg;
    c.actor = PCTL_ACTOR_ENGINE;
    return c;
}

/* A step change through the gate; a step that moved on meanwhile (ESTALE,
 * or gone with its run) is not an error for the engine. */
static int step_gate(planctl_engine *e, const pctl_change *c)
{
    int rc = pctl_gate(e->p, c);

    return rc == PLANCTL_ESTALE || rc == PLANCTL_ENOTFOUND ? 1 : rc;
}

/*
 * Adds what job output to its attempt's outputs (j->outputs).  Applying
 * one report twice (a pass rolled back, then the next) gives the same set.
 * A refusal (the executor's, or the attempt's 64 KiB) is written into why
 * and *refused set: the attempt then fails.  Returns 0 or ENOMEM.
 */
static int gather_outputs(planctl_engine *e, ejob *j, const planctl_job *job,
                          char *why, size_t size, int *refused)
{
    int rc;

    *refused = 0;
    if (job->outputs_error) {
        snprintf(why, size, "%s", job->outputs_error);
        *refused = 1;
        return 0;
    }
    if (!job->outputs || !json_object_size(job->outputs))
        return 0;
    if (!j->outputs && !(j->outputs = json_object()))
        return pctl_err(e->p, PLANCTL_ENOMEM, "out of memory");
    rc = pctl_outputs_merge(j->outputs, &j->outputs_size, why, size,
                            job->outputs);
    *refused = rc == PLANCTL_EINVAL;
    return rc == PLANCTL_ENOMEM ? pctl_err(e->p, rc, "out of memory") : 0;
}

/* The attempt's outputs as the gate records them: JSON text (pctl_free),
 * or NULL when there are none.  Sets *rc to ENOMEM on failure. */
static char *outputs_text(planctl_engine *e, const ejob *j, int *rc)
{
    char *text;

    if (!j->outputs || !json_object_size(j->outputs))
        return NULL;
    if (!(text = json_dumps(j->outputs, JSON_COMPACT)))
        *rc = pctl_err(e->p, PLANCTL_ENOMEM, "out of memory");
    return text;
}

static int64_t next_try(const pctl_retry *retry, int attempt, int64_t now)
{
    return now + pctl_backoff(retry, attempt + 1);
}

/* ---- 1. outcomes ---- */

/* j's run has outputs now: the tasks that start later read them. */
static void mark_outputs(planctl_engine *e, const ejob *j)
{
    pctl_run_row *r;
    size_t pi, si;

    if (pctl_active_find_step(e->active, j->step_id, &r, &pi, &si))
        r->outputs = 2;
}

/* The bytes of output j's attempt wrote in all, its last task's included
 * (-1: none of its tasks recorded output). */
static int64_t output_bytes(const ejob *j, const planctl_job *job)
{
    if (job && job->output_bytes >= 0)
        return j->output_base + job->output_bytes;
    return j->output_prev ? j->output_base : -1;
}

/* Closes job j's try (IN_PROGRESS -> to) with what the job left: its exit
 * code, the output tail out, its bytes, its outputs (all it has: a try
 * ended here with its job's outputs in hand has no others); grant: the
 * try does not count (pctl_change.grant_attempt). */
static int close_try(planctl_engine *e, const ejob *j, const planctl_job *job,
                     planctl_status to, const char *msg, int64_t next,
                     const char *out, const char *outputs, int grant)
{
    pctl_change c =
        step_change_of(j->step_id, PLANCTL_STATUS_IN_PROGRESS, to, msg);

    c.next_attempt_at = next;
    c.exit_code = job ? job->exit_code : -1;
    c.output = out;
    c.output_bytes = output_bytes(j, job);
    c.grant_attempt = grant;
    c.outputs = outputs;
    c.outputs_known = 1;
    return step_gate(e, &c);
}

/* The output j's attempt keeps: its earlier tasks' then its last one's.
 * Points into j or job, or at *own (pctl_free). */
static const char *attempt_output(char **own, const ejob *j,
                                  const planctl_job *job)
{
    const char *cur = job ? job->output : NULL;

    *own = NULL;
    if (!j->output_prev || !cur)
        return cur ? cur : j->output_prev;
    *own = pctl_job_output_join(j->output_prev, cur, job->output_max);
    return *own ? *own : cur; /* out of memory: the last task's alone */
}

/* Before the engine ends j's try itself (its step's timeout, its run's
 * deadline or failure), what its tasks wrote so far goes into the try,
 * for the gate to keep (store/gate.c): up to this moment, not up to the
 * last of the writes made at most once a second.  A task still running
 * is stopped after the commit; what it writes after this is not kept. */
static int flush_output(pass *ps, const ejob *j)
{
    planctl_job *job = j ? j->job : NULL;
    pctl_live_output out;
    char *own = NULL, *live = NULL;
    const char *text;
    int64_t bytes = 0;
    int rc;

    /* A job that reported but was not applied yet (more outcomes than a
     * pass applies): what was stored stays. */
    if (!j || j->cancel != EJOB_LIVE || (job && job->finished))
        return 0;
    if (job && job->live_text) {
        /* NULL: winding up; what was stored stays. */
        if (!(live = job->live_text(job, &bytes)))
            return 0;
        if (j->output_prev) {
            own = pctl_job_output_join(j->output_prev, live, job->output_max);
            pctl_free(live);
            if (!own)
                return pctl_err(ps->e->p, PLANCTL_ENOMEM, "out of memory");
            live = NULL;
        }
        text = own ? own : live;
        bytes += j->output_base;
    } else {
        text = j->output_prev;
        bytes = j->output_base;
    }
    if (!text || !*text) {
        pctl_free(own);
        pctl_free(live);
        return 0;
    }
    out.step_id = j->step_id;
    out.attempt = j->attempt;
    out.output = text;
    out.bytes = bytes;
    rc = pctl_attempt_output_put(ps->e->p, &out);
    pctl_free(own);
    pctl_free(live);
    return rc;
}

static int apply_outcome(pass *ps, ejob *j)
{
    planctl_engine *e = ps->e;
    planctl_job *job = j->job;
    planctl_status to;
    char why[320], *outputs = NULL, *own = NULL;
    const char *msg, *out, *line;
    size_t len = 0;
    int rc = 0, refused = 0;

    if (j->cancel == EJOB_GONE) {
        j->fx = EJOB_FX_DROP;
        return 0;
    }
    if (j->cancel == EJOB_SHUTDOWN) {
        /* Its task was stopped (or was not running: between tasks).  The
         * engine's own stop is no failure of the task: the try does not
         * count (the step gets one more), as many times as the step has
         * tries, so that a task which stops its engine cannot loop for
         * ever.  A crash (recovery in reconcile()) counts. */
        j->fx = EJOB_FX_DROP;
        if (job &&
            (rc = gather_outputs(e, j, job, why, sizeof why, &refused)) < 0)
            return rc;
        outputs = outputs_text(e, j, &rc);
        /* Its message quotes the last line it wrote, as one a crash
         * interrupted does (store/gate.c). */
        out = attempt_output(&own, j, job);
        line = out ? pctl_logtail_last_line(out, &len) : NULL;
        snprintf(why, sizeof why, "interrupted: engine stopped%s%.*s",
                 line && len ? ": " : "", line ? (int)len : 0,
                 line ? line : "");
        if (rc == 0)
            rc = close_try(e, j, job, PLANCTL_STATUS_ERROR, why,
                           next_try(j->retry, j->attempt, ps->r.now), out,
                           outputs, j->max_attempts < 2 * j->retry->attempts);
        pctl_free(outputs);
        pctl_free(own);
        return rc < 0 ? rc : 0;
    }
    if (!job) /* cannot happen: only cancels finish a job-less ejob */
        return pctl_err(e->p, PLANCTL_ERROR,
                        "step %lld finished without a "
                        "task",
                        (long long)j->step_id);
    if ((rc = gather_outputs(e, j, job, why, sizeof why, &refused)) < 0)
        return rc;
    /* Outputs refused fail a task that did not fail by itself. */
    if (refused && (job->outcome == PLANCTL_OUTCOME_DONE ||
                    job->outcome == PLANCTL_OUTCOME_NOT_DONE)) {
        to = j->attempt < j->max_attempts ? PLANCTL_STATUS_ERROR
                                          : PLANCTL_STATUS_FATAL_ERROR;
        msg = why;
    } else {
        switch (job->outcome) {
        case PLANCTL_OUTCOME_DONE:
            if ((size_t)j->task_index + 1 < j->sdef->ntasks) {
                /* The outputs so far go with the task index, so that a
                 * retry after a crash resumes with them. */
                j->fx = EJOB_FX_NEXT_TASK;
                if (job->output_bytes > 0) {
                    char *kept = pctl_job_output_join(
                        j->output_prev, job->output, job->output_max);

                    if (!kept)
                        return pctl_err(e->p, PLANCTL_ENOMEM, "out of memory");
                    pctl_free(j->output_prev);
                    j->output_prev = kept;
                    j->output_base += job->output_bytes;
                }
                outputs = outputs_text(e, j, &rc);
                if (rc == 0)
                    rc = pctl_step_set_task(e->p, j->step_id, j->task_index + 1,
                                            j->attempt, outputs);
                pctl_free(outputs);
                return rc;
            }
            to = PLANCTL_STATUS_COMPLETE;
            msg = job->message;
            break;
        case PLANCTL_OUTCOME_NOT_DONE:
            j->fx = EJOB_FX_POLL;
            return 0;
        case PLANCTL_OUTCOME_ERROR:
        case PLANCTL_OUTCOME_FATAL:
        default:
            to = job->outcome == PLANCTL_OUTCOME_ERROR &&
                         j->attempt < j->max_attempts
                     ? PLANCTL_STATUS_ERROR
                     : PLANCTL_STATUS_FATAL_ERROR;
            msg = job->message ? job->message : "failed";
            break;
        }
    }
    j->fx = EJOB_FX_DROP;
    outputs = outputs_text(e, j, &rc);
    if (rc == 0 && outputs && to == PLANCTL_STATUS_COMPLETE)
        mark_outputs(e, j);
    if (rc == 0)
        rc = close_try(e, j, job, to, msg,
                       to == PLANCTL_STATUS_ERROR
                           ? next_try(j->retry, j->attempt, ps->r.now)
                           : 0,
                       attempt_output(&own, j, job), outputs, 0);
    pctl_free(outputs);
    pctl_free(own);
    return rc < 0 ? rc : 0;
}

/* ---- 3. reconcile ---- */

/* Remembers an interrupted attempt whose processes may still run. */
static int add_orphan(pass *ps, const char *uid, const char *step, int attempt)
{
    pctl_orphan *n;

    if (ps->norphans == ps->ocap) {
        ps->ocap = ps->ocap ? ps->ocap * 2 : 8;
        n = pctl_realloc(ps->orphans, ps->ocap * sizeof *n);
        if (!n)
            return pctl_err(ps->e->p, PLANCTL_ENOMEM, "out of memory");
        ps->orphans = n;
    }
    n = &ps->orphans[ps->norphans++];
    n->run_uid = pctl_strdup(uid);
    n->step = pctl_strdup(step);
    n->attempt = attempt;
    if (!n->run_uid || !n->step)
        return pctl_err(ps->e->p, PLANCTL_ENOMEM, "out of memory");
    return 0;
}

/*
 * The first pass of an engine also reaps what a dead engine's attempts
 * left running when those attempts were stopped while no engine watched:
 * cancelled (planctl cancel works without an engine), or ended by a
 * timeout or a shutdown whose kill the dead engine never sent.  Recovery
 * only sees steps still IN_PROGRESS, so without this their processes
 * would outlive their engine (found by tests/crash).  The processes are
 * found by their marker; the database says whether the attempt is its
 * own and was stopped.
 */
/* How long after its first pass an engine keeps looking for processes of
 * stopped attempts. */
#define SWEEP_MS 3000

static int sweep_stopped(pass *ps)
{
    pctl_marker *m = NULL;
    size_t n = 0, i;
    int rc = pctl_markers_find(&m, &n), stopped;

    if (rc < 0)
        return pctl_err(ps->e->p, rc, "out of memory");
    for (i = 0; rc == 0 && i < n; i++) {
        rc = pctl_attempt_stopped(&stopped, ps->e->p, m[i].run_id,
                                  m[i].o.run_uid, m[i].o.step, m[i].o.attempt);
        if (rc == 0 && stopped)
            rc = add_orphan(ps, m[i].o.run_uid, m[i].o.step, m[i].o.attempt);
    }
    pctl_markers_free(m, n);
    return rc;
}

/*
 * The private output directories ($PLANCTL_OUTPUT, engine/outfile.c) a
 * dead engine's shell tasks left in $TMPDIR, secret outputs and all: each
 * names its attempt, and goes once that attempt is this database's and has
 * ended (recovery, a takeover, or a cancel while no engine ran closed it).
 * Looked for on an engine's first pass and on any pass that recovered
 * attempts, after their processes were killed; a directory of a running
 * attempt, of another database, or of another user stays.
 */
static int sweep_outdirs(pass *ps)
{
    pctl_outdir *d = NULL;
    pctl_try_ref *tries = NULL;
    unsigned char *ended = NULL;
    size_t n = 0, i;
    int rc = pctl_outdirs_find(&d, &n);

    if (rc < 0)
        return pctl_err(ps->e->p, rc, "out of memory");
    if (n == 0)
        return 0;
    /* Asked of the database all at once: one round trip, however many
     * directories dead engines' tasks left. */
    if (!(tries = pctl_calloc(n, sizeof *tries)) ||
        !(ended = pctl_calloc(n, 1))) {
        rc = pctl_err(ps->e->p, PLANCTL_ENOMEM, "out of memory");
    } else {
        for (i = 0; i < n; i++) {
            tries[i].run_id = d[i].run_id;
            tries[i].run_uid = d[i].uid;
            tries[i].step = d[i].step;
            tries[i].attempt = d[i].attempt;
        }
        rc = pctl_attempts_ended(ended, ps->e->p, tries, n);
    }
    for (i = 0; rc == 0 && i < n; i++)
        if (ended[i])
            (void)pctl_outdir_remove(&d[i]);
    pctl_free(tries);
    pctl_free(ended);
    pctl_outdirs_free(d, n);
    return rc;
}

/* Cancels j (or, if it reported already, forgets it) unless its step is
 * still IN_PROGRESS at its attempt. */
static int check_ours(pass *ps, pctl_active *a, ejob *j)
{
    pctl_run_row *r;
    size_t pi, si;

    if (j->cancel != EJOB_LIVE || j->fx == EJOB_FX_DROP)
        return 0;
    if (pctl_active_find_step(a, j->step_id, &r, &pi, &si) &&
        r->id == j->run_id &&
        r->view.phases[pi].steps[si].status == PLANCTL_STATUS_IN_PROGRESS &&
        r->view.phases[pi].steps[si].attempt == j->attempt)
        return 0;
    if (j->finished) {
        j->fx = EJOB_FX_DROP; /* nothing runs; just do not go on */
        return 0;
    }
    return defer_cancel(ps, j);
}

static int reconcile(pass *ps, pctl_active *a)
{
    planctl_engine *e = ps->e;
    pctl_run_row *r;
    size_t wi, pi, si, k;
    ejob *j;
    int rc;

    /* A cache read anew knows no job yet, nor a run that entered it (a
     * claim, a promotion) whose steps a job of ours still runs: its
     * claim, or its start, was lost and is found again. */
    if (a->entered)
        for (j = e->jobs; j; j = j->next)
            if (pctl_active_find_step(a, j->step_id, &r, &pi, &si) &&
                !r->phases[pi].steps[si].job)
                r->phases[pi].steps[si].job = j;
    /* Jobs whose step is no longer ours to run.  A step found IN_PROGRESS
     * at the same attempt is still ours.  A job that reported in this pass
     * and would go on (its next task, or a poll) is checked too: its step
     * may have been cancelled in the same breath.  Only a change can make
     * a job not ours: every job is looked at after a full read, else those
     * of the runs that changed. */
    if (a->fresh) {
        for (j = e->jobs; j; j = j->next)
            if ((rc = check_ours(ps, a, j)) < 0)
                return rc;
    } else {
        /* Those of runs another writer ended (the sync dropped them). */
        for (k = 0; k < a->norphaned; k++)
            if ((rc = check_ours(ps, a, a->orphaned[k])) < 0)
                return rc;
        for (wi = 0; wi < ps->nwork; wi++) {
            r = ps->work[wi];
            if (!r->dirty)
                continue;
            for (pi = 0; pi < r->view.nphases; pi++)
                for (si = 0; si < r->view.phases[pi].nsteps; si++)
                    if ((j = r->phases[pi].steps[si].job) &&
                        (rc = check_ours(ps, a, j)) < 0)
                        return rc;
        }
    }
    /* Steps IN_PROGRESS that no job of ours runs: interrupted.  Only a run
     * that changed can have one: every run is new after a full read, and
     * dropping a job marks its run. */
    for (wi = 0; wi < ps->nwork; wi++) {
        r = ps->work[wi];
        if (!r->dirty)
            continue;
        for (pi = 0; pi < r->view.nphases; pi++) {
            for (si = 0; si < r->view.phases[pi].nsteps; si++) {
                pctl_step_view *v = &r->view.phases[pi].steps[si];
                const pctl_def *def;
                const pctl_plan_def *plan;
                pctl_change c;

                if (v->status != PLANCTL_STATUS_IN_PROGRESS ||
                    job_of(&r->phases[pi].steps[si]))
                    continue;
                def = pctl_engine_def(e, r->definition_id);
                plan = def ? pctl_def_plan(def, r->plan) : NULL;
                if (!plan || pi >= plan->nphases ||
                    si >= plan->phases[pi].nsteps)
                    return def ? pctl_err(e->p, PLANCTL_EIO,
                                          "run %lld does not match its "
                                          "definition",
                                          (long long)r->id)
                               : PLANCTL_EIO;
                c = step_change_of(
                    r->phases[pi].steps[si].id, PLANCTL_STATUS_IN_PROGRESS,
                    PLANCTL_STATUS_ERROR, "interrupted: engine stopped");
                c.next_attempt_at = next_try(&plan->phases[pi].steps[si].retry,
                                             v->attempt, ps->r.now);
                rc = step_gate(e, &c);
                if (rc == 0)
                    rc = add_orphan(ps, r->uid, r->phases[pi].steps[si].name,
                                    v->attempt);
                if (rc < 0)
                    return rc;
            }
        }
    }
    return 0;
}

/* ---- 4. decide and apply ---- */

#define START_STRINGS 6 /* of a pctl_start */

/* Copies a start's strings into one block, each *dst[k] pointing at the
 * copy of src[k]: the block (the caller's), or NULL when out of memory or
 * a string is missing. */
static char *copy_strings(const char **const dst[START_STRINGS],
                          const char *const src[START_STRINGS])
{
    size_t len[START_STRINGS], total = 0, k;
    char *block, *d;

    for (k = 0; k < START_STRINGS; k++) {
        if (!src[k])
            return NULL;
        len[k] = strlen(src[k]) + 1;
        total += len[k];
    }
    if (!(block = d = pctl_malloc(total)))
        return NULL;
    for (k = 0; k < START_STRINGS; k++) {
        memcpy(d, src[k], len[k]);
        *dst[k] = d;
        d += len[k];
    }
    return block;
}

static int add_start(pass *ps, pctl_run_row *r, size_t pi, size_t si,
                     const pctl_step_def *sd, int64_t deadline)
{
    pctl_start *s, *n;

    if (ps->r.nstarts == ps->cap) {
        ps->cap = ps->cap ? ps->cap * 2 : 16;
        n = pctl_realloc(ps->r.starts, ps->cap * sizeof *n);
        if (!n)
            return pctl_err(ps->e->p, PLANCTL_ENOMEM, "out of memory");
        ps->r.starts = n;
    }
    s = &ps->r.starts[ps->r.nstarts++];
    memset(s, 0, sizeof *s);
    s->step_id = r->phases[pi].steps[si].id;
    s->run_id = r->id;
    s->def_id = r->definition_id;
    s->deadline_at = deadline;
    s->attempt = r->view.phases[pi].steps[si].attempt;
    s->max_attempts = r->view.phases[pi].steps[si].max_attempts;
    s->task_index = r->phases[pi].steps[si].task_index;
    s->sdef = sd;
    {
        const char *const src[START_STRINGS] = {
            r->instance,        r->plan,
            r->phases[pi].name, r->phases[pi].steps[si].name,
            r->params,          r->uid};
        const char **const dst[START_STRINGS] = {&s->instance, &s->plan,
                                                 &s->phase,    &s->step,
                                                 &s->params,   &s->run_uid};

        s->strings = copy_strings(dst, src);
    }
    if (!s->strings)
        return pctl_err(ps->e->p, PLANCTL_ENOMEM, "out of memory");
    return 0;
}

static int apply_action(pass *ps, pctl_run_row *r, const pctl_plan_def *plan,
                        const pctl_action *a)
{
    planctl_engine *e = ps->e;
    pctl_change c = PCTL_CHANGE_INIT;
    char msg[256], dur[32];
    const pctl_step_def *sd = NULL;
    int64_t id = 0, deadline = 0;
    ejob *j;
    int rc;

    c.from = a->from;
    c.to = a->to;
    c.actor = PCTL_ACTOR_ENGINE;
    switch (a->target) {
    case PCTL_TARGET_CLOSE:
        for (j = e->jobs; j; j = j->next)
            if (j->run_id == r->id && ((rc = flush_output(ps, j)) < 0 ||
                                       (rc = defer_cancel(ps, j)) < 0))
                return rc;
        return pctl_close_children(e->p, r->id, PLANCTL_STATUS_FATAL_ERROR,
                                   NULL, "engine");
    case PCTL_TARGET_RUN:
        c.entity = PLANCTL_ENTITY_RUN;
        c.id = r->id;
        if (a->why == PCTL_WHY_DEADLINE) {
            pctl_duration_format(dur, sizeof dur, plan->deadline_ms);
            snprintf(msg, sizeof msg, "deadline of %s passed", dur);
            c.message = msg;
        } else if (a->why == PCTL_WHY_EVENTS) {
            snprintf(msg, sizeof msg,
                     "reached the limit of %lld events per run (run %lld of "
                     "instance \"%s\": its events show what repeated)",
                     (long long)e->p->run_events_max, (long long)r->id,
                     r->instance);
            c.message = msg;
        } else if (a->to == PLANCTL_STATUS_FATAL_ERROR) {
            size_t pi;

            c.message = "a phase failed";
            for (pi = 0; pi < r->view.nphases; pi++)
                if (r->view.phases[pi].status == PLANCTL_STATUS_FATAL_ERROR) {
                    snprintf(msg, sizeof msg, "phase \"%s\" failed",
                             r->phases[pi].name);
                    c.message = msg;
                    break;
                }
        }
        /* A plan's deadline becomes the run's, an absolute time set as
         * it starts (and recorded in that event). */
        if (a->why == PCTL_WHY_START && plan->deadline_ms > 0) {
            c.deadline_at = ps->r.now + plan->deadline_ms;
            wake_min(ps, c.deadline_at);
        }
        return pctl_gate(e->p, &c);
    case PCTL_TARGET_PHASE:
        c.entity = PLANCTL_ENTITY_PHASE;
        c.id = r->phases[a->phase].id;
        if (a->to == PLANCTL_STATUS_FATAL_ERROR) {
            size_t si;
            const pctl_phase_view *pv = &r->view.phases[a->phase];

            c.message = "a step failed";
            for (si = 0; si < pv->nsteps; si++)
                if (pv->steps[si].status == PLANCTL_STATUS_FATAL_ERROR) {
                    snprintf(msg, sizeof msg, "step \"%s\" failed",
                             r->phases[a->phase].steps[si].name);
                    c.message = msg;
                    break;
                }
        }
        return pctl_gate(e->p, &c);
    case PCTL_TARGET_STEP:
    default:
        break;
    }
    sd = &plan->phases[a->phase].steps[a->step];
    id = r->phases[a->phase].steps[a->step].id;
    switch (a->why) {
    case PCTL_WHY_START:
    case PCTL_WHY_RETRY:
        deadline = sd->timeout_ms > 0 ? ps->r.now + sd->timeout_ms : 0;
        c = step_change_of(id, a->from, a->to, NULL);
        c.deadline_at = deadline;
        rc = step_gate(e, &c);
        if (rc == 0)
            rc = add_start(ps, r, a->phase, a->step, sd, deadline);
        wake_min(ps, deadline);
        return rc < 0 ? rc : 0;
    case PCTL_WHY_TIMEOUT:
        pctl_duration_format(dur, sizeof dur, sd->timeout_ms);
        snprintf(msg, sizeof msg, "timed out after %s", dur);
        j = job_of(&r->phases[a->phase].steps[a->step]);
        if ((rc = flush_output(ps, j)) < 0 || (rc = defer_cancel(ps, j)) < 0)
            return rc;
        c = step_change_of(id, a->from, a->to, msg);
        if (a->to == PLANCTL_STATUS_ERROR)
            c.next_attempt_at = next_try(
                &sd->retry, r->view.phases[a->phase].steps[a->step].attempt,
                ps->r.now);
        rc = step_gate(e, &c);
        return rc < 0 ? rc : 0;
    case PCTL_WHY_EXHAUSTED:
    default: {
        const char *last = r->phases[a->phase].steps[a->step].message;

        snprintf(msg, sizeof msg, "gave up after %d attempts%s%s",
                 r->view.phases[a->phase].steps[a->step].attempt,
                 last ? ": " : "", last ? last : "");
        c = step_change_of(id, a->from, a->to, msg);
        rc = step_gate(e, &c);
        return rc < 0 ? rc : 0;
    }
    }
}

/* Whether deciding r now could do anything: it changed since it was last
 * decided, a time it waits for has come, or it waits for a slot and one
 * is free.  pctl_decide() is a function of the run, the time and the
 * slots alone, so otherwise it would decide nothing again. */
static int needs_deciding(const pctl_run_row *r, int64_t now, int slots)
{
    return r->dirty || (r->wake_at > 0 && r->wake_at <= now) ||
           (!r->quiet && slots > 0);
}

typedef struct deciding {
    pctl_action *actions;
    size_t *scratch, cap;
    int slots;
} deciding;

/* Decides run r and applies what it decided. */
static int decide_run(pass *ps, pctl_active *a, deciding *d, pctl_run_row *r)
{
    planctl_engine *e = ps->e;
    const pctl_def *def;
    const pctl_plan_def *plan;
    const char *kind;
    int64_t wake;
    size_t k, n, pi, si;
    int rc = 0;

    if (!pctl_status_active(r->view.status))
        return 0; /* ended in this pass or the last; dropped soon */
    if (!needs_deciding(r, ps->r.now, d->slots))
        return 0;
    if (ps->nactions >= MAX_ACTIONS) {
        ps->r.more = 1; /* still to decide: the next pass does */
        pctl_active_requeue(a, r);
        return 0;
    }
    def = pctl_engine_def(e, r->definition_id);
    plan = def ? pctl_def_plan(def, r->plan) : NULL;
    if (!plan)
        return def ? pctl_err(e->p, PLANCTL_EIO,
                              "run %lld: definition has no plan \"%s\"",
                              (long long)r->id, r->plan)
                   : PLANCTL_EIO;
    /* A run that needs a task kind this engine cannot execute is not
     * ours to advance: it waits, as it is, for an engine that can (an
     * embedder's controller), and is never failed for it.  Only a
     * change (its cancel, say) has it decided again. */
    if ((kind = pctl_engine_missing_kind(e, r->definition_id, plan))) {
        ps->ndecided++;
        r->dirty = 0;
        r->quiet = 1;
        pctl_active_decided(a, r, 0);
        if ((rc = pctl_engine_note_wait(e, r->id, PCTL_WAIT_EXECUTOR, kind)) <
            0)
            return rc;
        return pctl_engine_note_waiting(e, r->id, r->instance_id, r->instance,
                                        r->plan, kind);
    }
    ps->ndecided++;
    r->dirty = 0;
    r->view.strategy = plan->strategy;
    /* A step with a job of ours still running that is not its current
     * try must not start: never two tries of one step in flight.  ERROR:
     * the job was cancelled and has not reported yet.  PENDING: its start
     * was lost (a commit the server forgot in a crash) while the job ran
     * on; reconcile cancelled it.  The job's report, then its drop, mark
     * the run. */
    for (pi = 0; pi < r->view.nphases; pi++)
        for (si = 0; si < r->view.phases[pi].nsteps; si++) {
            pctl_step_view *v = &r->view.phases[pi].steps[si];
            ejob *sj = job_of(&r->phases[pi].steps[si]);

            v->busy =
                v->status != PLANCTL_STATUS_IN_PROGRESS && sj && !sj->finished;
        }
    if (pctl_decide_capacity(&r->view) > d->cap) {
        pctl_action *na;

        d->cap = pctl_decide_capacity(&r->view);
        na = pctl_realloc(d->actions, d->cap * sizeof *na);
        if (!na)
            return pctl_err(e->p, PLANCTL_ENOMEM, "out of memory");
        d->actions = na;
    }
    n = pctl_decide(&r->view, ps->r.now, &d->slots, d->actions, &wake,
                    d->scratch);
    /* What to wait for before deciding it again; a run that acted is
     * decided again anyway (the store marks what it changed). */
    r->quiet = n == 0 && d->slots > 0;
    pctl_active_decided(a, r, wake == INT64_MAX ? 0 : wake);
    /* A due step found no slot: the run says so (a write only when that
     * changes). */
    if ((rc = pctl_engine_note_wait(
             e, r->id, r->view.starved ? PCTL_WAIT_SLOT : PCTL_WAIT_NONE,
             NULL)) < 0)
        return rc;
    ps->nactions += n;
    for (k = 0; rc == 0 && k < n; k++)
        rc = apply_action(ps, r, plan, &d->actions[k]);
    if (n > 0)
        pctl_active_dirty(a, r); /* the next pass sees what it did */
    return rc;
}

/* Decides the runs of this pass's work, in id order, and with them, while
 * slots are free, the runs that wait for one, oldest first: never a walk
 * of every active run. */
static int decide_all(pass *ps, pctl_active *a)
{
    planctl_engine *e = ps->e;
    deciding d = {NULL, NULL, 0, e->o.concurrency};
    size_t wi = 0;
    int rc = 0, capped = 0;
    ejob *j;

    /* Every job still running takes a slot; those that finished in this
     * pass (dropped at the commit, all on the done list) do not. */
    d.slots -= e->njobs;
    for (j = e->done_head; j; j = j->done_next)
        if (j->fx == EJOB_FX_DROP)
            d.slots++;
    if (d.slots > MAX_STARTS) {
        d.slots = MAX_STARTS;
        capped = 1;
    }

    d.scratch = pctl_calloc(a->max_children + 1, sizeof *d.scratch);
    if (!d.scratch)
        return pctl_err(e->p, PLANCTL_ENOMEM, "out of memory");
    while (rc == 0) {
        pctl_run_row *r = wi < ps->nwork ? ps->work[wi] : NULL,
                     *h = d.slots > 0 ? pctl_active_hungry(a) : NULL;

        if (h && (!r || h->id < r->id)) {
            pctl_active_hungry_pop(a);
            r = h;
        } else if (r) {
            wi++;
        } else {
            break;
        }
        rc = decide_run(ps, a, &d, r);
    }
    if (capped && d.slots == 0)
        ps->r.more = 1; /* more slots free than one pass starts */
    pctl_free(d.actions);
    pctl_free(d.scratch);
    return rc;
}

/* What the decisions leave for later, and what the pass reports of the
 * runs: how many are active, how many wait for a task kind, the earliest
 * time one waits for. */
static void end_decisions(pass *ps, pctl_active *a)
{
    size_t wi;

    /* A stopping engine decides nothing: its work waits, still marked. */
    if (ps->e->state != ENGINE_RUNNING)
        for (wi = 0; wi < ps->nwork; wi++)
            if (ps->work[wi]->dirty)
                pctl_active_requeue(a, ps->work[wi]);
    pctl_active_settle(a);
    wake_min(ps, pctl_active_next_wake(a));
    pctl_engine_forget_waiting(ps->e, a);
    ps->r.active_runs = pctl_active_count(a);
    ps->r.waiting_runs = pctl_engine_waiting_count(ps->e);
}

/* ---- 5. commit, and what is left to do ---- */

void pctl_pass_result_free(pctl_pass_result *res)
{
    size_t i;

    for (i = 0; i < res->nstarts; i++)
        pctl_free(res->starts[i].strings);
    pctl_free(res->starts);
    pctl_free(res->cancels);
    res->starts = NULL;
    res->cancels = NULL;
    res->nstarts = res->ncancels = 0;
}

static void free_orphans(pass *ps)
{
    size_t i;

    for (i = 0; i < ps->norphans; i++) {
        pctl_free(ps->orphans[i].run_uid);
        pctl_free(ps->orphans[i].step);
    }
    pctl_free(ps->orphans);
}

/* The wall clock jumped by delta (engine.c): every pending time of the
 * active runs moves with it, in the database (store/clockshift.c) and in
 * the cache read from it; the jobs' own times move after the commit. */
static int shift_clock(planctl_engine *e, pctl_active *a, int64_t delta)
{
    size_t ri, pi, si;
    int rc = pctl_clock_shift(e->p, delta);

    for (ri = 0; rc == 0 && a && ri < a->nruns; ri++) {
        pctl_run_row *r = a->runs[ri];

        if (!pctl_status_active(r->view.status))
            continue;
        if (r->deadline_at)
            r->deadline_at += delta;
        if (r->view.deadline_at)
            r->view.deadline_at += delta;
        if (r->wake_at)
            r->wake_at += delta;
        pctl_active_dirty(a, r);
        for (pi = 0; pi < r->view.nphases; pi++)
            for (si = 0; si < r->view.phases[pi].nsteps; si++) {
                pctl_step_view *v = &r->view.phases[pi].steps[si];

                if (v->status == PLANCTL_STATUS_ERROR && v->next_attempt_at)
                    v->next_attempt_at += delta;
                if (v->status == PLANCTL_STATUS_IN_PROGRESS && v->deadline_at)
                    v->deadline_at += delta;
            }
    }
    pctl_active_timers_reset(a);
    return rc;
}

/* How many runs one pass claims at most: its concurrency (what it could
 * start at once), between these two.  Claiming in slices lets engines
 * that start together take turns, and keeps a pass that reads the runs
 * it claims short. */
#define CLAIM_MIN 16
#define CLAIM_MAX 256

/*
 * After a claim that counted the shares (why: what asked for it; not one
 * going on with the count of a pass before), what it holds is the mark
 * its runs' end is measured from (pctl_engine_pass).  Below its share by
 * more than one, with no run left that nobody holds: the others hold more
 * than theirs, or some do.  Its commit wakes them; each counts the
 * shares again and gives back what it holds above its share plus one
 * (shed()), which wakes this one to claim it.  The engines' passes wake
 * nobody, so without asking it would wait for the others' next
 * heartbeat, idle at the end of a backlog.  It asks after a count its
 * heartbeat or its runs' end asked for, never after a notification's
 * (which may be another's ask: two short engines would wake each other
 * at every pass while the one above its share has no run between
 * steps).
 */
static void ask_if_short(planctl_engine *e, int why)
{
    if (why == PCTL_CLAIM_AGAIN)
        return;
    e->held_at_count = e->held_at_claim;
    if (why != PCTL_CLAIM_WOKEN && e->unheld_left == 0 &&
        e->held_at_claim < e->fleet_share - 1)
        pctl_fleet_ask(e->p);
}

/*
 * One of several engines takes runs nobody holds (store/fleet.c), oldest
 * first, up to its fair share of the active runs (the live engines share
 * them evenly, capped ones at most their capacity: pctl_fair_share) and
 * its capacity, a slice a pass (a full slice asks for another pass).  It
 * looks again when woken (an admission, runs given back, an engine
 * joining or declared dead) and at each heartbeat, so that a new engine
 * gets work without anyone arranging it: the others give back what is
 * above their share (shed(), at step boundaries).  The runs read in are
 * decided in this pass: their steps IN_PROGRESS, which no job of ours
 * runs, were interrupted (reconcile).
 */
static int claim(pass *ps, pctl_active *a)
{
    planctl_engine *e = ps->e;
    int64_t room, *ids = NULL, share, unheld;
    int64_t mine = (int64_t)pctl_active_count(a);
    int64_t after;
    int again = e->want_claim == PCTL_CLAIM_AGAIN && e->fleet_share >= 0;
    /* What asked for it: a notification's look never asks (ask_if_short). */
    int why = again                               ? PCTL_CLAIM_AGAIN
              : e->want_claim == PCTL_CLAIM_WOKEN ? PCTL_CLAIM_WOKEN
                                                  : PCTL_CLAIM_SHORT;
    size_t n = 0, i;
    int rc, ran_out;

    e->want_claim = 0;
    /* Going on (a full slice, or its own runs ended while runs nobody
     * held were left): the shares it last looked at.  Counting them costs
     * a read of every active run, which a backlog of 20,000 made the
     * fleet's costliest statement, asked for at nearly every pass; they
     * move slowly, and a heartbeat or a notification looks again. */
    if (again) {
        share = e->fleet_share;
        unheld = e->unheld_left;
    } else if ((rc = pctl_fleet_share(e->p, e->o.capacity, &share, &unheld)) <
               0) {
        return rc;
    }
    e->fleet_share = share;
    e->unheld_left = unheld;
    e->held_at_claim = mine;
    room = e->o.concurrency;
    room = room < CLAIM_MIN ? CLAIM_MIN : room > CLAIM_MAX ? CLAIM_MAX : room;
    if (e->o.capacity && e->o.capacity - mine < room)
        room = e->o.capacity - mine;
    if (share - mine < room)
        room = share - mine;
    if (room <= 0 || unheld <= 0) {
        ask_if_short(e, why);
        return 0;
    }
    /* Going on, after the last run it took: a claim from the first run
     * reads every active run, one after it about its slice. */
    after = again ? e->claim_after : 0;
    e->claim_after = 0;
    rc = pctl_fleet_claim(e->p, room, after, &ids, &n);
    /* Fewer than it asked for after a run: none are left after it, and
     * those below it (given back since) are looked for from the first at
     * the next pass. */
    ran_out = (int64_t)n < room && after > 0;
    if (rc == 0) {
        /* Fewer than it asked for from the first: nobody's runs are left
         * (others may have taken some since it counted). */
        e->unheld_left =
            (int64_t)n < room && !ran_out ? 0 : unheld - (int64_t)n;
        e->held_at_claim = mine + (int64_t)n;
        rc = pctl_active_claimed(a, e->p, ids, n);
    }
    /* What their former holder recorded of why they wait. */
    if (rc == 0)
        rc = pctl_engine_waits_gone(e, NULL, ids, n);
    if (rc == 0 && ((int64_t)n == room || ran_out)) {
        for (i = 0; !ran_out && i < n; i++)
            if (ids[i] > e->claim_after)
                e->claim_after = ids[i];
        e->want_claim = PCTL_CLAIM_AGAIN;
        ps->r.more = 1;
    }
    pctl_metrics_claimed(e, n);
    pctl_free(ids);
    if (rc == 0)
        ask_if_short(e, why);
    return rc;
}

/* Whether run r is between steps: no step of it IN_PROGRESS, and no job
 * of it still running (one that reported in this pass and ends with it
 * runs no more), so that another engine may take it without
 * interrupting anything. */
static int between_steps(const pctl_run_row *r)
{
    size_t pi, si;
    const ejob *j;

    if (r->ended || !pctl_status_active(r->view.status))
        return 0;
    for (pi = 0; pi < r->view.nphases; pi++)
        for (si = 0; si < r->view.phases[pi].nsteps; si++) {
            if (r->view.phases[pi].steps[si].status ==
                PLANCTL_STATUS_IN_PROGRESS)
                return 0;
            j = job_of(&r->phases[pi].steps[si]);
            if (j && !(j->finished && j->fx == EJOB_FX_DROP))
                return 0;
        }
    return 1;
}

/*
 * One of several engines holding more than its fair share plus one gives
 * runs back, newest first, down to its share: only runs between steps
 * (never one with a try running), so that the others take them at a step
 * boundary, as each of its runs reaches one.  A boundary where fewer of
 * its runs were between steps than it had to give leaves it above its
 * share: it goes on at the next ones until it is down to it (stopping
 * at its share plus one left a joiner below its share for good:
 * pg.fleet_share part 4).  Runs in this pass whose
 * step just ended are among them: they are given back before the pass
 * decides their next step.  Before pctl_active_work(): a run given back
 * leaves the cache.  It walks the cache (newest first, until it has
 * enough) only while above its share, which the next step boundaries
 * end.
 */
static int shed(pass *ps, pctl_active *a)
{
    planctl_engine *e = ps->e;
    int64_t mine = (int64_t)pctl_active_count(a), give[CLAIM_MAX];
    size_t n = 0, want, i;
    int rc;

    if (!e->fleet || e->state != ENGINE_RUNNING || e->fleet_share < 0)
        return 0;
    if (mine > e->fleet_share + 1)
        e->shedding = 1;
    if (!e->shedding || mine <= e->fleet_share) {
        e->shedding = 0;
        return 0;
    }
    want = (size_t)(mine - e->fleet_share);
    if (want > CLAIM_MAX)
        want = CLAIM_MAX;
    for (i = a->nruns; i > 0 && n < want; i--)
        if (between_steps(a->runs[i - 1]))
            give[n++] = a->runs[i - 1]->id;
    if (n == 0)
        return 0;
    rc = pctl_fleet_release(e->p, give, n);
    for (i = 0; rc == 0 && i < n; i++)
        rc = pctl_active_forget(a, e->p, give[i]);
    return rc;
}

int pctl_engine_pass(pctl_pass_result *out, planctl_engine *e)
{
    pass ps;
    pctl_sync_info sync;
    pctl_active *a;
    ejob *j;
    int64_t shift, held;
    int rc;
    size_t applied = 0;
    uint64_t t0 = uv_hrtime(), t_commit;

    memset(out, 0, sizeof *out);
    memset(&ps, 0, sizeof ps);
    ps.e = e;
    ps.r.now = pctl_now(e->p);
    /* One pass is one commit and one moment: every time it records is the
     * same, so what started together reads as having started together.
     * Its events are written together before the commit. */
    if ((rc = pctl_engine_pass_open(e->p, ps.r.now)) < 0)
        return rc;
    /* What the sync will read first, sent to be answered with the fence:
     * one round trip for both. */
    if ((rc = pctl_active_ahead(e->active, e->p)) < 0) {
        pctl_tx_rollback(e->p);
        return rc;
    }
    if ((rc = pctl_engine_pass_fenced(e->p, e->token)) < 0)
        return rc;
    e->in_pass = 1;
    memset(&sync, 0, sizeof sync);
    if (rc == 0)
        rc = pctl_active_sync(&e->active, e->p, &sync);
    a = e->active;
    pctl_metrics_sync(e, &sync);
    pctl_feed_clear(&sync.others);
    /* Read anew: what it recorded of why runs wait is said again. */
    if (rc == 0)
        rc = pctl_engine_waits_fresh(e, a);
    if (rc == 0 && e->fleet && e->want_claim && e->state == ENGINE_RUNNING)
        rc = claim(&ps, a);
    shift = e->clock_shift;
    if (rc == 0 && shift)
        rc = shift_clock(e, a, shift);
    for (j = e->done_head; rc == 0 && j; j = j->done_next) {
        if (applied == MAX_OUTCOMES) {
            ps.r.more = 1;
            break;
        }
        applied++;
        pctl_active_touch(a, j->run_id);
        rc = apply_outcome(&ps, j);
    }
    /* Runs above its share go back between steps, before their next
     * step is decided. */
    if (rc == 0)
        rc = shed(&ps, a);
    /* The runs this pass looks at: those that changed (by the outcomes
     * too) or whose time came. */
    if (rc == 0 && pctl_active_work(a, ps.r.now, &ps.work, &ps.nwork) < 0)
        rc = pctl_err(e->p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0)
        rc = reconcile(&ps, a);
    /* Not on the first pass only: a process the dead engine had forked
     * but not yet exec'd carries no marker at that moment (and may have
     * missed its pdeathsig), so the passes of the first seconds look
     * again, each before it starts any retry (found by tests/crash).  The
     * shell executor's guard (exec_shell.c) now keeps such a process from
     * starting its task at all; the later looks stay as a second line. */
    if (rc == 0 && (!e->swept || uv_now(e->loop) < e->sweep_until))
        rc = sweep_stopped(&ps);
    if (rc == 0 && e->state == ENGINE_RUNNING)
        rc = decide_all(&ps, a);
    if (rc == 0)
        rc = pctl_engine_waits_gone(e, a, NULL, 0);
    if (rc == 0)
        end_decisions(&ps, a);
    pctl_free(ps.work);
    pctl_metrics_decided(e, ps.ndecided);
    /* What the processes of interrupted attempts started must not run on
     * beside the retry.  They are killed before the attempts' ERROR is
     * committed: an engine that dies in between leaves the steps
     * IN_PROGRESS, so the next one reaps them again, where killing after
     * the commit left them running with their steps ERROR and retried
     * (found by tests/crash). */
    if (rc == 0)
        pctl_reap_orphans(ps.orphans, ps.norphans);
    if (rc == 0 && (!e->swept || ps.norphans > 0))
        rc = sweep_outdirs(&ps);
    t_commit = uv_hrtime();
    if (rc == 0)
        rc = pctl_queues_promote(e->p);
    if (rc == 0)
        rc = pctl_events_flush(e->p);
    if (rc == 0)
        rc = pctl_active_mark(e->active, e->p);
    rc = pctl_engine_pass_end(e->p, rc);
    /* The mark, read with the commit, moves the cursor; one that could
     * not be taken leaves a cache the next pass reads anew. */
    if (pctl_active_marked(e->active, e->p, rc == 0) < 0 && rc == 0)
        pctl_active_drop(&e->active);
    e->in_pass = 0;
    pctl_metrics_pass_end(e, rc, uv_hrtime() - t_commit, uv_hrtime() - t0);
    if (rc < 0) {
        for (j = e->done_head; j; j = j->done_next)
            j->fx = EJOB_FX_NONE;
        pctl_pass_result_free(&ps.r);
        free_orphans(&ps);
        pctl_active_drop(&e->active);
        /* What it claimed or gave back went back: it looks again. */
        if (e->fleet && e->want_claim != PCTL_CLAIM_WOKEN)
            e->want_claim = PCTL_CLAIM_BEAT;
        return rc;
    }
    /* A run that ends frees its instance's slot: the store promotes the
     * queued run behind it (store/gate.c), which the cache reads and the
     * next pass starts. */
    ps.r.runs_promoted = (int)pctl_active_promoted(e->active);
    pctl_active_committed(e->active, e->p);
    /* Runs of its own ended while others waited for an engine: it has
     * room for them now, and nothing else would tell it before its next
     * heartbeat (found by planctl-bench pg --fleet: a 5 s wait at the
     * end of one round in three with two engines). */
    if (e->fleet && e->state == ENGINE_RUNNING && e->unheld_left > 0 &&
        (int64_t)pctl_active_count(e->active) < e->held_at_claim &&
        !e->want_claim) {
        e->want_claim = PCTL_CLAIM_AGAIN;
        ps.r.more = 1;
    }
    /* Its runs ended while nobody's were left: below its share (as last
     * counted) by more than one, and down to half of what it held when it
     * last counted the shares (or to none), it counts them again, and
     * asks the others for runs if it is short (claim()).  At halves, not
     * at every run: a count reads every active run. */
    held = (int64_t)pctl_active_count(e->active);
    if (e->fleet && e->state == ENGINE_RUNNING && !e->want_claim &&
        e->unheld_left == 0 && held < e->fleet_share - 1 &&
        held < e->held_at_count && 2 * held <= e->held_at_count) {
        e->want_claim = PCTL_CLAIM_SHORT;
        ps.r.more = 1;
    }
    if (shift) {
        /* Committed: the jobs' times follow (a failed pass leaves the
         * shift for the next one). */
        e->clock_shift -= shift;
        for (j = e->jobs; j; j = j->next) {
            if (j->deadline_at)
                j->deadline_at += shift;
            if (j->poll_at)
                j->poll_at += shift;
        }
    }
    /* Only after a dead engine's attempts were recovered. */
    if (!e->swept && ps.norphans > 0)
        e->sweep_until = uv_now(e->loop) + SWEEP_MS;
    e->swept = 1;
    free_orphans(&ps);
    *out = ps.r;
    return 0;
}
