/*
 * metrics.c - the engine's metrics registry and event log: counters of
 * committed status changes, histograms of passes and commits, the
 * Prometheus text exposition, and the records handed to the embedder's
 * logger.
 *
 * The gate tells of each status change inside the pass's transaction;
 * such a change is only real once the transaction commits, so it waits in
 * a pending list until pctl_metrics_pass_end() counts and logs it, or
 * drops it with a rollback.  A scrape never shows, and the log never
 * says, something the database does not hold.
 */
#include "engine/metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/status.h"
#include "engine/cache.h"
#include "engine/engine.h"
#include "store/counts.h"
#include "store/store.h"

/* Seconds: from half a millisecond (a commit without fsync) to 10 s. */
static const double seconds_bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                        0.025,  0.05,  0.1,    0.25,  0.5,
                                        1,      2.5,   5,      10};
/* Status changes per commit: 0 (a pass with nothing to write) upwards. */
static const double batch_bounds[] = {0,   1,   2,   5,    10,   20,  50,
                                      100, 200, 500, 1000, 2000, 5000};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void hist_init(pctl_hist *h, const double *bounds, size_t n)
{
    memset(h, 0, sizeof *h);
    h->bounds = bounds;
    h->nbounds = n < PCTL_HIST_MAX ? n : PCTL_HIST_MAX;
}

pctl_metrics *pctl_metrics_new(void)
{
    pctl_metrics *m = pctl_calloc(1, sizeof *m);

    if (!m)
        return NULL;
    hist_init(&m->commit_seconds, seconds_bounds, NELEM(seconds_bounds));
    hist_init(&m->pass_seconds, seconds_bounds, NELEM(seconds_bounds));
    hist_init(&m->batch, batch_bounds, NELEM(batch_bounds));
    m->log_min = PLANCTL_LOG_INFO;
    return m;
}

static void pending_clear(pctl_metrics *m)
{
    size_t i;

    for (i = 0; i < m->npending; i++) {
        pctl_free(m->pending[i].instance);
        pctl_free(m->pending[i].plan);
        pctl_free(m->pending[i].step);
        pctl_free(m->pending[i].message);
    }
    m->npending = 0;
}

void pctl_metrics_free(pctl_metrics *m)
{
    if (!m)
        return;
    pending_clear(m);
    pctl_free(m->pending);
    pctl_free(m);
}

void pctl_hist_observe(pctl_hist *h, double v)
{
    size_t i = 0;

    while (i < h->nbounds && v > h->bounds[i])
        i++;
    h->counts[i]++;
    h->sum += v;
    h->count++;
}

/* ---- the log ---- */

static int64_t wall_ms(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void emit(pctl_metrics *m, planctl_log_record *rec)
{
    if (!m || !m->log_cb || rec->level < m->log_min)
        return;
    rec->ts_ms = wall_ms();
    m->log_cb(rec, m->log_data);
}

void pctl_metrics_log(planctl_engine *e, planctl_log_level level,
                      const char *msg, const char *detail)
{
    planctl_log_record rec;

    memset(&rec, 0, sizeof rec);
    rec.level = level;
    rec.msg = msg;
    rec.detail = detail;
    emit(e->metrics, &rec);
}

void pctl_metrics_waiting(planctl_engine *e, const char *instance, int64_t run,
                          const char *plan, const char *kind)
{
    planctl_log_record rec;
    char detail[256];

    snprintf(detail, sizeof detail,
             "no executor for task kind \"%s\" here; it starts once an engine "
             "that has one runs",
             kind);
    memset(&rec, 0, sizeof rec);
    rec.level = PLANCTL_LOG_WARN;
    rec.msg = "run waits for a task kind";
    rec.instance = instance;
    rec.run = run;
    rec.plan = plan;
    rec.detail = detail;
    emit(e->metrics, &rec);
}

/* How loud a status change is in the log. */
static planctl_log_level change_level(planctl_entity entity, planctl_status to)
{
    if (entity == PLANCTL_ENTITY_RUN) {
        if (to == PLANCTL_STATUS_FATAL_ERROR)
            return PLANCTL_LOG_ERROR;
        if (to == PLANCTL_STATUS_CANCELLED)
            return PLANCTL_LOG_WARN;
        return PLANCTL_LOG_INFO;
    }
    if (entity == PLANCTL_ENTITY_STEP) {
        if (to == PLANCTL_STATUS_FATAL_ERROR)
            return PLANCTL_LOG_ERROR;
        if (to == PLANCTL_STATUS_ERROR)
            return PLANCTL_LOG_WARN;
    }
    return PLANCTL_LOG_DEBUG;
}

static const char *change_msg(planctl_entity entity, planctl_status from,
                              planctl_status to)
{
    switch (entity) {
    case PLANCTL_ENTITY_RUN:
        if (to == PLANCTL_STATUS_PENDING)
            return "run promoted from the queue";
        if (to == PLANCTL_STATUS_IN_PROGRESS)
            return from == PLANCTL_STATUS_PAUSED ? "run resumed"
                                                 : "run started";
        if (to == PLANCTL_STATUS_PAUSED)
            return "run paused";
        return "run ended";
    case PLANCTL_ENTITY_PHASE:
        return to == PLANCTL_STATUS_IN_PROGRESS ? "phase started"
                                                : "phase ended";
    default:
        switch (to) {
        case PLANCTL_STATUS_IN_PROGRESS:
            return "step started";
        case PLANCTL_STATUS_COMPLETE:
            return "step completed";
        case PLANCTL_STATUS_ERROR:
            return "step failed, retrying";
        case PLANCTL_STATUS_FATAL_ERROR:
            return "step failed";
        default:
            return "step cancelled";
        }
    }
}

/* Copies the names a log line of change c needs, from the engine's cache
 * of active runs (where the pass found the rows it changes). */
static void name_change(pctl_pending *pd, planctl_engine *e,
                        const struct pctl_change *c, int64_t instance_id)
{
    pctl_run_row *r = NULL;
    size_t pi, si, i;

    if (c->entity == PLANCTL_ENTITY_STEP &&
        pctl_active_find_step(e->active, c->id, &r, &pi, &si))
        pd->step = pctl_strdup(r->phases[pi].steps[si].name);
    else
        r = pctl_active_find_run(e->active, pd->run_id);
    if (!r && instance_id > 0) {
        /* A queued run promoted: not in the cache yet, but the run of
         * its instance that ended is, and names the instance. */
        const pctl_run_row *other =
            pctl_active_find_instance(e->active, instance_id);

        if (other)
            pd->instance = pctl_strdup(other->instance);
    }
    if (r) {
        pd->instance = pctl_strdup(r->instance);
        pd->plan = pctl_strdup(r->plan);
        if (c->entity == PLANCTL_ENTITY_PHASE)
            for (i = 0; i < r->view.nphases; i++)
                if (r->phases[i].id == c->id)
                    pd->step = pctl_strdup(r->phases[i].name);
    }
    if (c->message)
        pd->message = pctl_strdup(c->message);
}

/* Logs a status change of entity from -> to, with what names it (name:
 * the phase's or the step's) and who made it (actor, NULL: the engine). */
static void log_status(pctl_metrics *m, planctl_entity entity,
                       planctl_status from, planctl_status to,
                       const pctl_pending *names, const char *actor)
{
    planctl_log_record rec;

    memset(&rec, 0, sizeof rec);
    rec.level = change_level(entity, to);
    rec.msg = change_msg(entity, from, to);
    rec.instance = names->instance;
    rec.run = names->run_id;
    rec.plan = names->plan;
    rec.attempt = names->attempt;
    rec.status = planctl_status_name(to);
    if (entity == PLANCTL_ENTITY_PHASE)
        rec.phase = names->step;
    else
        rec.step = names->step;
    rec.detail = names->message;
    rec.actor = actor;
    emit(m, &rec);
}

/* A log line of a status change another writer made (c). */
static void log_other(pctl_metrics *m, const pctl_feed_change *c)
{
    pctl_pending names;

    memset(&names, 0, sizeof names);
    names.instance = c->instance;
    names.run_id = c->run_id;
    names.plan = c->plan;
    names.attempt = c->attempt;
    names.step = c->entity == PLANCTL_ENTITY_PHASE  ? c->phase
                 : c->entity == PLANCTL_ENTITY_STEP ? c->step
                                                    : NULL;
    names.message = c->message;
    log_status(m, c->entity, c->from, c->to, &names, c->actor);
}

void pctl_metrics_sync(planctl_engine *e, const pctl_sync_info *s)
{
    pctl_metrics *m = e->metrics;
    size_t i, j;

    m->cache_full_reads += s->full != 0;
    m->cache_runs_reread += s->reread;
    for (i = 0; i < PLANCTL_ENTITY__COUNT; i++)
        for (j = 0; j < PLANCTL_STATUS__COUNT; j++)
            m->transitions[i][j] += s->others.counts[i][j];
    if (!m->log_cb)
        return;
    for (i = 0; i < s->others.nchanges; i++)
        if (change_level(s->others.changes[i].entity,
                         s->others.changes[i].to) >= m->log_min)
            log_other(m, &s->others.changes[i]);
    if (s->others.nmore > 0) {
        char detail[128];

        snprintf(detail, sizeof detail,
                 "%zu more status changes by other writers, not logged one "
                 "by one (the event log lists them)",
                 s->others.nmore);
        pctl_metrics_log(e, PLANCTL_LOG_INFO, "changes by other writers",
                         detail);
    }
}

void pctl_metrics_decided(planctl_engine *e, size_t n)
{
    e->metrics->runs_decided += n;
}

void pctl_metrics_change(planctl_engine *e, const struct pctl_change *c,
                         int64_t run_id, int64_t instance_id, int attempt)
{
    pctl_metrics *m = e->metrics;
    pctl_pending *pd;

    if (m->npending == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        pctl_pending *nv = pctl_realloc(m->pending, cap * sizeof *nv);

        if (!nv)
            return; /* not counted; the database is right regardless */
        m->pending = nv;
        m->cap = cap;
    }
    pd = &m->pending[m->npending++];
    memset(pd, 0, sizeof *pd);
    pd->entity = c->entity;
    pd->from = c->from;
    pd->to = c->to;
    pd->run_id = run_id;
    pd->attempt = c->entity == PLANCTL_ENTITY_STEP ? attempt : 0;
    if (m->log_cb && change_level(c->entity, c->to) >= m->log_min)
        name_change(pd, e, c, instance_id);
}

static void log_change(pctl_metrics *m, const pctl_pending *pd)
{
    log_status(m, pd->entity, pd->from, pd->to, pd, NULL);
}

void pctl_metrics_pass_end(planctl_engine *e, int rc, uint64_t commit_ns,
                           uint64_t pass_ns)
{
    pctl_metrics *m = e->metrics;
    size_t i;

    if (!m)
        return;
    if (rc < 0) {
        pending_clear(m);
        return;
    }
    for (i = 0; i < m->npending; i++) {
        const pctl_pending *pd = &m->pending[i];

        m->transitions[pd->entity][pd->to]++;
        if (pd->entity == PLANCTL_ENTITY_STEP) {
            if (pd->to == PLANCTL_STATUS_IN_PROGRESS) {
                m->attempts++;
                if (pd->from == PLANCTL_STATUS_ERROR)
                    m->retries++;
            } else if (pd->to == PLANCTL_STATUS_FATAL_ERROR) {
                m->fatal_errors++;
            }
        }
        if (m->log_cb && change_level(pd->entity, pd->to) >= m->log_min)
            log_change(m, pd);
    }
    pctl_hist_observe(&m->batch, (double)m->npending);
    pctl_hist_observe(&m->commit_seconds, (double)commit_ns / 1e9);
    pctl_hist_observe(&m->pass_seconds, (double)pass_ns / 1e9);
    pending_clear(m);
}

void pctl_metrics_pass_failed(planctl_engine *e, int64_t backoff_ms)
{
    char detail[768];

    if (!e->metrics)
        return;
    e->metrics->pass_failures++;
    snprintf(detail, sizeof detail, "%s; retrying in %lldms",
             planctl_errmsg(e->p), (long long)backoff_ms);
    pctl_metrics_log(e, PLANCTL_LOG_WARN, "pass failed, backing off", detail);
}

void pctl_metrics_claimed(planctl_engine *e, size_t n)
{
    e->metrics->runs_claimed += n;
}

void pctl_metrics_beat(planctl_engine *e)
{
    if (e->metrics)
        e->metrics->beat_at = uv_now(e->loop);
    atomic_store(&e->xt_beat_ns, uv_hrtime());
}

/* ---- the exposition ---- */

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_addf(sbuf *b, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_addf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (b->oom)
        return;
    for (;;) {
        size_t room = b->cap - b->len;

        va_start(ap, fmt);
        n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        {
            size_t cap = b->cap ? b->cap * 2 : 4096;
            char *ns;

            while (cap - b->len <= (size_t)n)
                cap *= 2;
            if (!(ns = pctl_realloc(b->s, cap))) {
                b->oom = 1;
                return;
            }
            b->s = ns;
            b->cap = cap;
        }
    }
}

size_t pctl_metrics_escape(char *dst, size_t n, const char *s)
{
    size_t need = 0;

    for (; *s; s++) {
        const char *rep = NULL;
        char one[2] = {*s, 0};
        size_t k;

        if (*s == '\\')
            rep = "\\\\";
        else if (*s == '"')
            rep = "\\\"";
        else if (*s == '\n')
            rep = "\\n";
        else
            rep = one;
        for (k = 0; rep[k]; k++, need++)
            if (need + 1 < n)
                dst[need] = rep[k];
    }
    if (n > 0)
        dst[need < n ? need : n - 1] = '\0';
    return need;
}

static void head(sbuf *b, const char *name, const char *type, const char *help)
{
    sb_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void scalar(sbuf *b, const char *name, const char *type,
                   const char *help, uint64_t v)
{
    head(b, name, type, help);
    sb_addf(b, "%s %llu\n", name, (unsigned long long)v);
}

static void hist(sbuf *b, const char *name, const char *help,
                 const pctl_hist *h)
{
    uint64_t cum = 0;
    size_t i;

    head(b, name, "histogram", help);
    for (i = 0; i < h->nbounds; i++) {
        cum += h->counts[i];
        sb_addf(b, "%s_bucket{le=\"%g\"} %llu\n", name, h->bounds[i],
                (unsigned long long)cum);
    }
    cum += h->counts[h->nbounds];
    sb_addf(b, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)cum);
    sb_addf(b, "%s_sum %.9g\n", name, h->sum);
    sb_addf(b, "%s_count %llu\n", name, (unsigned long long)h->count);
}

/* Whether some legal transition of entity ends in to. */
static int reachable(planctl_entity entity, planctl_status to)
{
    int from;

    for (from = 0; from <= PLANCTL_STATUS__COUNT; from++)
        if (planctl_transition_legal(entity, (planctl_status)from, to))
            return 1;
    return 0;
}

int pctl_metrics_render(char **out, const pctl_metrics *m, const pctl_gauges *g)
{
    sbuf b = {NULL, 0, 0, 0};
    int ent, st;
    char ev[64], sv[64];

    *out = NULL;
    head(&b, "planctl_transitions_total", "counter",
         "Status changes the engine committed or read of other writers "
         "(not engines), by entity and new status.");
    for (ent = 0; ent < PLANCTL_ENTITY__COUNT; ent++)
        for (st = 0; st < PLANCTL_STATUS__COUNT; st++) {
            if (!reachable((planctl_entity)ent, (planctl_status)st))
                continue;
            pctl_metrics_escape(ev, sizeof ev,
                                pctl_entity_name((planctl_entity)ent));
            pctl_metrics_escape(sv, sizeof sv,
                                planctl_status_name((planctl_status)st));
            sb_addf(&b,
                    "planctl_transitions_total{entity=\"%s\",to=\"%s\"} "
                    "%llu\n",
                    ev, sv, (unsigned long long)m->transitions[ent][st]);
        }
    scalar(&b, "planctl_attempts_total", "counter", "Step attempts started.",
           m->attempts);
    scalar(&b, "planctl_retries_total", "counter",
           "Step attempts that retried a failed one.", m->retries);
    scalar(&b, "planctl_fatal_errors_total", "counter",
           "Steps that ended FATAL_ERROR.", m->fatal_errors);
    scalar(&b, "planctl_pass_failures_total", "counter",
           "Engine passes rolled back and retried with backoff.",
           m->pass_failures);
    scalar(&b, "planctl_cache_full_reads_total", "counter",
           "Times a pass read every active run anew.", m->cache_full_reads);
    scalar(&b, "planctl_cache_runs_reread_total", "counter",
           "Active runs read again after another writer changed them.",
           m->cache_runs_reread);
    scalar(&b, "planctl_runs_decided_total", "counter",
           "Runs a pass decided: changed, a time come, or a slot free.",
           m->runs_decided);
    scalar(&b, "planctl_queue_depth", "gauge", "Runs QUEUED.",
           (uint64_t)(g->queue_depth > 0 ? g->queue_depth : 0));
    scalar(&b, "planctl_active_runs", "gauge",
           "Runs PENDING, IN_PROGRESS or PAUSED.",
           (uint64_t)(g->active_runs > 0 ? g->active_runs : 0));
    scalar(&b, "planctl_running_steps", "gauge",
           "Steps this engine is running now.",
           (uint64_t)(g->running_steps > 0 ? g->running_steps : 0));
    scalar(&b, "planctl_runs_held", "gauge",
           "Active runs this engine holds: all of them with one engine per "
           "database, those it claimed among several.",
           (uint64_t)(g->runs_held > 0 ? g->runs_held : 0));
    scalar(&b, "planctl_runs_claimed_total", "counter",
           "Active runs this engine claimed from nobody (several engines on "
           "one database: new runs, and those of engines declared dead).",
           m->runs_claimed);
    scalar(&b, "planctl_lease_held", "gauge",
           "1 while the engine runs and holds the database's lease.",
           g->lease_held ? 1 : 0);
    hist(&b, "planctl_pass_seconds",
         "Duration of engine passes that committed.", &m->pass_seconds);
    hist(&b, "planctl_commit_seconds",
         "Duration of the COMMIT of each engine pass.", &m->commit_seconds);
    hist(&b, "planctl_commit_batch_transitions",
         "Status changes committed by each engine pass.", &m->batch);
    if (b.oom) {
        pctl_free(b.s);
        return PLANCTL_ENOMEM;
    }
    *out = b.s;
    return 0;
}

/* ---- the public calls ---- */

int planctl_engine_metrics(char **out, planctl_engine *e)
{
    pctl_gauges g;

    if (!out || !e) {
        if (out)
            *out = NULL;
        return pctl_err_arg(e ? e->p : NULL, !e ? "e" : "out");
    }
    *out = NULL;
    if (!e->metrics)
        return pctl_err(e->p, PLANCTL_ENOMEM, "out of memory");
    memset(&g, 0, sizeof g);
    /* A read of its own outside any pass; a database it cannot read just
     * shows empty gauges (the pass failures counter tells the story). */
    if (e->p->tx_depth == 0 &&
        pctl_runs_open_counts(e->p, &g.queue_depth, &g.active_runs) < 0)
        g.queue_depth = g.active_runs = 0;
    g.running_steps = e->njobs;
    g.runs_held = e->active ? (int64_t)pctl_active_count(e->active) : 0;
    g.lease_held = planctl_engine_healthy(e);
    return pctl_metrics_render(out, e->metrics, &g);
}

/* Any thread: reads only what the loop thread publishes atomically
 * (engine.c), and the monotonic clock. */
int planctl_engine_healthy(const planctl_engine *e)
{
    uint64_t beat;

    if (!e || !atomic_load(&((planctl_engine *)e)->xt_running))
        return 0;
    beat = atomic_load(&((planctl_engine *)e)->xt_beat_ns);
    return uv_hrtime() - beat < (uint64_t)e->o.lease_ttl_ms * 1000000u;
}

int planctl_engine_set_logger(planctl_engine *e, planctl_log_level min,
                              void (*cb)(const planctl_log_record *, void *),
                              void *data)
{
    if (!e)
        return pctl_err_arg(NULL, "e");
    if ((int)min < PLANCTL_LOG_DEBUG || (int)min > PLANCTL_LOG_ERROR)
        return pctl_err(e->p, PLANCTL_EINVAL,
                        "log level %d is not a level: give PLANCTL_LOG_DEBUG "
                        "to PLANCTL_LOG_ERROR",
                        (int)min);
    if (!e->metrics)
        return pctl_err(e->p, PLANCTL_ENOMEM, "out of memory");
    e->metrics->log_cb = cb;
    e->metrics->log_data = data;
    e->metrics->log_min = min;
    return 0;
}

const char *planctl_log_level_name(planctl_log_level level)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};

    if ((int)level < 0 || (int)level > PLANCTL_LOG_ERROR)
        return NULL;
    return names[level];
}
