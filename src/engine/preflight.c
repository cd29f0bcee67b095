/*
 * preflight.c - a plan's preflight checks, run before a run is admitted
 * (README, "Preflight checks").
 *
 * A check is a task run as a check, by the same executors as steps: the
 * built-ins and any the process registered (planctl_engine_register puts
 * them on the handle).  All checks of one admission start together on a
 * private libuv loop under one deadline; a check still running at the
 * deadline is cancelled (a shell check's process group is killed) and
 * counts as an internal error, while the others' results still come back.
 * Results are reported in declaration order whatever order they finish in.
 *
 * What a check's outcome means:
 *   - a task with an exit code (shell): 0 passed; 1 failed, the cause being
 *     the last line of its output; anything else an internal error;
 *   - other kinds: DONE passed, FATAL failed (its message the cause),
 *     ERROR or NOT_DONE an internal error;
 *   - no executor for the kind, or a start that fails: an internal error.
 * Internal errors take precedence for the code only: any of them refuses
 * the run with PLANCTL_ERROR, otherwise any failure refuses it with
 * PLANCTL_EPREFLIGHT, and either way the message lists every cause.
 */
#include "engine/preflight.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/kinds.h"
#include "engine/executors.h"
#include "engine/job.h"
#include "store/store.h"

#define DEFAULT_DEADLINE_MS 10000

typedef enum check_status {
    CHECK_RUNNING,
    CHECK_PASSED,
    CHECK_FAILED,
    CHECK_ERROR,
    CHECK_SKIPPED
} check_status;

static const char *const status_names[] = {"running", "passed", "failed",
                                           "error", "skipped"};

typedef struct check {
    const pctl_check_def *def;
    const pctl_task_def *task;
    const planctl_executor *ex;
    planctl_job *job;
    check_status status;
    int timed_out;
    char *message;
    struct runner *r;
} check;

typedef struct runner {
    uv_loop_t loop;
    pctl_hub hub;
    uv_timer_t deadline;
    uv_timer_t intr; /* looks for planctl_interrupt() on the handle */
    planctl *p;
    int interrupted;
    check *checks;
    size_t n, pending;
    int64_t deadline_ms;
    int handles;
} runner;

/* ---- skip lists ---- */

/* Copies text lower-cased and trimmed into buf; returns its length. */
static size_t norm(char *buf, size_t size, const char *text, size_t len)
{
    size_t i, n = 0;

    while (len > 0 && isspace((unsigned char)*text))
        text++, len--;
    while (len > 0 && isspace((unsigned char)text[len - 1]))
        len--;
    for (i = 0; i < len && n + 1 < size; i++)
        buf[n++] = (char)tolower((unsigned char)text[i]);
    buf[n] = '\0';
    return n;
}

int pctl_preflight_skip_all(const char *skip)
{
    const char *s = skip, *comma;
    char buf[128];
    int entries = 0, all = 0;

    while (s && *s) {
        comma = strchr(s, ',');
        if (norm(buf, sizeof buf, s, comma ? (size_t)(comma - s) : strlen(s))) {
            entries++;
            all |= strcmp(buf, "all") == 0;
        }
        s = comma ? comma + 1 : NULL;
    }
    return all && entries == 1;
}

int pctl_preflight_skips(const char *skip, const char *name)
{
    const char *s = skip, *comma;
    char buf[128], want[128];

    norm(want, sizeof want, name, strlen(name));
    while (s && *s) {
        comma = strchr(s, ',');
        norm(buf, sizeof buf, s, comma ? (size_t)(comma - s) : strlen(s));
        if (buf[0] && strcmp(buf, want) == 0)
            return 1;
        s = comma ? comma + 1 : NULL;
    }
    return 0;
}

/* ---- running ---- */

/* The last non-empty line of text, copied (NULL when none). */
static char *last_line(const char *text)
{
    const char *end, *start;

    if (!text)
        return NULL;
    end = text + strlen(text);
    while (end > text && (end[-1] == '\n' || end[-1] == '\r' ||
                          end[-1] == ' ' || end[-1] == '\t'))
        end--;
    start = end;
    while (start > text && start[-1] != '\n')
        start--;
    return end > start ? pctl_strndup(start, (size_t)(end - start)) : NULL;
}

static void handle_closed(uv_handle_t *h)
{
    ((runner *)h->data)->handles--;
}

static void hub_closed(pctl_hub *hub, void *data)
{
    (void)hub;
    ((runner *)data)->handles--;
}

static void all_done(runner *r)
{
    uv_timer_stop(&r->deadline);
    uv_close((uv_handle_t *)&r->deadline, handle_closed);
    uv_timer_stop(&r->intr);
    uv_close((uv_handle_t *)&r->intr, handle_closed);
    pctl_hub_close(&r->hub, hub_closed, r);
}

static void set_result(check *c, check_status st, char *msg)
{
    c->status = st;
    pctl_free(c->message);
    c->message = msg;
}

static void on_finish(planctl_job *job, void *owner)
{
    check *c = owner;
    runner *r = c->r;
    char buf[64];

    if (c->timed_out) {
        pctl_duration_format(buf, sizeof buf, r->deadline_ms);
        set_result(c, CHECK_ERROR, pctl_asprintf("timed out after %s", buf));
    } else if (job->exit_code >= 0) {
        if (job->exit_code == 0)
            set_result(c, CHECK_PASSED, NULL);
        else if (job->exit_code == 1) {
            char *cause = last_line(job->output);

            set_result(c, CHECK_FAILED,
                       cause ? cause : pctl_strdup("exit status 1"));
        } else
            set_result(c, CHECK_ERROR,
                       pctl_strdup(job->message ? job->message : "failed"));
    } else if (job->outcome == PLANCTL_OUTCOME_DONE) {
        set_result(c, CHECK_PASSED, NULL);
    } else {
        set_result(
            c,
            job->outcome == PLANCTL_OUTCOME_FATAL ? CHECK_FAILED : CHECK_ERROR,
            pctl_strdup(job->message ? job->message
                        : job->outcome == PLANCTL_OUTCOME_NOT_DONE ? "not done"
                                                                   : "failed"));
    }
    pctl_job_free(job);
    c->job = NULL;
    if (--r->pending == 0)
        all_done(r);
}

static void on_deadline(uv_timer_t *t)
{
    runner *r = t->data;
    size_t i;

    for (i = 0; i < r->n; i++) {
        check *c = &r->checks[i];

        if (c->job && !c->job->finished) {
            c->timed_out = 1;
            c->ex->cancel(c->job, c->ex->data);
        }
    }
}

/* planctl_interrupt() on the handle: every check still running is
 * cancelled, as at the deadline, and the admission returns EINTR. */
static void on_intr(uv_timer_t *t)
{
    runner *r = t->data;
    size_t i;

    if (!pctl_intr_pending(r->p))
        return;
    r->interrupted = 1;
    uv_timer_stop(t);
    for (i = 0; i < r->n; i++) {
        check *c = &r->checks[i];

        if (c->job && !c->job->finished)
            c->ex->cancel(c->job, c->ex->data);
    }
}

static const planctl_executor *executor_for(planctl *p, const char *kind)
{
    const planctl_executor *ex = pctl_kinds_executor(p->kinds, kind);

    if (ex)
        return ex;
    if (strcmp(kind, "Dummy") == 0)
        return pctl_executor_dummy();
    if (strcmp(kind, "shell") == 0)
        return pctl_executor_shell();
    return NULL;
}

static void start_check(runner *r, check *c, const pctl_plan_def *plan,
                        const char *instance, const char *params, planctl *p)
{
    planctl_task_info info;

    c->r = r;
    c->ex = executor_for(p, c->task->kind);
    if (!c->ex) {
        set_result(
            c, CHECK_ERROR,
            pctl_asprintf("no executor for task kind \"%s\"", c->task->kind));
        return;
    }
    c->job = pctl_job_new(&r->hub, on_finish, c);
    if (!c->job) {
        set_result(c, CHECK_ERROR, pctl_strdup("out of memory"));
        return;
    }
    memset(&info, 0, sizeof info);
    info.instance = instance;
    info.plan = plan->name;
    info.phase = "preflight";
    info.step = c->def->name;
    info.task = c->task->name;
    info.kind = c->task->kind;
    info.spec = c->task->spec;
    info.params = params;
    info.attempt = 1;
    r->pending++;
    pctl_job_bind(c->job, c->ex);
    if (c->ex->start(c->job, &info, c->ex->data) < 0) {
        r->pending--;
        pctl_job_free(c->job);
        c->job = NULL;
        set_result(
            c, CHECK_ERROR,
            pctl_asprintf("cannot start its task \"%s\"", c->task->name));
    }
}

/* Appends a refused check's cause to the "; "-separated list *causes:
 * "Name: message", or "Name: internal error: message" for a check that
 * could not run or missed the deadline.  Returns 0 or PLANCTL_ENOMEM. */
static int add_cause(char **causes, const check *c)
{
    const char *mark = c->status == CHECK_ERROR ? "internal error: " : "";
    const char *msg = c->message ? c->message : "";
    char *list = *causes ? pctl_asprintf("%s; %s: %s%s", *causes, c->def->name,
                                         mark, msg)
                         : pctl_asprintf("%s: %s%s", c->def->name, mark, msg);

    if (!list)
        return PLANCTL_ENOMEM;
    pctl_free(*causes);
    *causes = list;
    return 0;
}

/*
 * Builds the report and the outcome's message.  Every failed check and
 * every internal error is a cause, listed in declaration order; an
 * internal error only decides the code, it hides no other cause.
 */
/* The line that records a preflight that let the plan through: passed,
 * or skipped, naming the checks skipped. */
static char *summarise(const pctl_plan_def *plan, const check *checks, size_t n)
{
    char *skipped = NULL, *line;
    size_t i, nskipped = 0;

    for (i = 0; i < n; i++) {
        if (checks[i].status != CHECK_SKIPPED)
            continue;
        line = pctl_asprintf("%s%s%s", skipped ? skipped : "",
                             skipped ? ", " : "", checks[i].def->name);
        pctl_free(skipped);
        if (!(skipped = line))
            return NULL;
        nskipped++;
    }
    if (nskipped == 0)
        line = pctl_asprintf("preflight of plan \"%s\" passed", plan->name);
    else if (nskipped == n)
        line = pctl_asprintf("preflight of plan \"%s\" skipped: %s", plan->name,
                             skipped);
    else
        line = pctl_asprintf("preflight of plan \"%s\" passed; skipped: %s",
                             plan->name, skipped);
    pctl_free(skipped);
    return line;
}

static int conclude(char **report, char **summary, planctl *p,
                    const pctl_plan_def *plan, check *checks, size_t n)
{
    json_t *doc =
        json_pack("{s:i, s:s, s:s, s:[], s:[]}", "schema", 1, "plan",
                  plan->name, "outcome", "passed", "checks", "warnings");
    json_t *arr = json_object_get(doc, "checks");
    json_t *warn = json_object_get(doc, "warnings");
    char *causes = NULL, *line;
    size_t i, nskipped = 0;
    int rc = doc ? 0 : PLANCTL_ENOMEM, internal = 0;

    for (i = 0; rc == 0 && i < n; i++) {
        check *c = &checks[i];
        json_t *o =
            json_pack("{s:s, s:s, s:s?}", "name", c->def->name, "status",
                      status_names[c->status], "message", c->message);

        if (!o || json_array_append_new(arr, o) < 0) {
            rc = PLANCTL_ENOMEM;
        } else if (c->status == CHECK_SKIPPED) {
            nskipped++;
            line = pctl_asprintf("preflight check %s skipped", c->def->name);
            if (!line || json_array_append_new(warn, json_string(line)) < 0)
                rc = PLANCTL_ENOMEM;
            pctl_free(line);
        } else if (c->status == CHECK_FAILED || c->status == CHECK_ERROR) {
            internal |= c->status == CHECK_ERROR;
            rc = add_cause(&causes, c);
        }
    }
    if (rc == 0 && (causes || nskipped == n) &&
        json_object_set_new(doc, "outcome",
                            json_string(!causes    ? "skipped"
                                        : internal ? "error"
                                                   : "failed")) < 0)
        rc = PLANCTL_ENOMEM;
    if (rc == 0 && !causes && !(*summary = summarise(plan, checks, n)))
        rc = PLANCTL_ENOMEM;
    /* No report rather than one that misses a check. */
    if (rc == 0 && !(*report = json_dumps(doc, JSON_COMPACT)))
        rc = PLANCTL_ENOMEM;
    if (rc < 0)
        rc = pctl_err(p, rc, "out of memory");
    else if (causes)
        rc = pctl_err(p, internal ? PLANCTL_ERROR : PLANCTL_EPREFLIGHT,
                      "preflight checks failed: %s", causes);
    json_decref(doc);
    pctl_free(causes);
    return rc;
}

int pctl_preflight_run(char **report, char **summary, planctl *p,
                       const pctl_def *def, const pctl_plan_def *plan,
                       const char *instance, const char *params,
                       const pctl_preflight_settings *set)
{
    runner r;
    size_t i;
    int rc, skip_all = pctl_preflight_skip_all(set->skip);

    *report = *summary = NULL;
    if (plan->nchecks == 0)
        return 0;
    memset(&r, 0, sizeof r);
    r.deadline_ms =
        set->deadline_ms > 0 ? set->deadline_ms : DEFAULT_DEADLINE_MS;
    r.n = plan->nchecks;
    r.checks = pctl_calloc(r.n, sizeof *r.checks);
    if (!r.checks)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (uv_loop_init(&r.loop) != 0) {
        pctl_free(r.checks);
        return pctl_err(p, PLANCTL_ERROR, "cannot create an event loop");
    }
    if ((rc = pctl_hub_init(&r.hub, &r.loop)) < 0) {
        uv_loop_close(&r.loop);
        pctl_free(r.checks);
        return pctl_err(p, rc, "cannot set up the preflight loop");
    }
    uv_timer_init(&r.loop, &r.deadline);
    r.deadline.data = &r;
    uv_timer_init(&r.loop, &r.intr);
    r.intr.data = &r;
    r.p = p;
    r.handles = 3;
    pctl_intr_enter(p); /* the checks are a section planctl_interrupt stops */
    for (i = 0; i < r.n; i++) {
        check *c = &r.checks[i];

        c->def = &plan->preflight[i];
        c->task = &def->tasks[c->def->task];
        c->r = &r;
        if (skip_all || pctl_preflight_skips(set->skip, c->def->name))
            c->status = CHECK_SKIPPED;
        else
            start_check(&r, c, plan, instance, params, p);
    }
    if (r.pending == 0)
        all_done(&r);
    else {
        uv_timer_start(&r.deadline, on_deadline, (uint64_t)r.deadline_ms, 0);
        /* Looked at every 20 ms: the flag is set from another thread,
         * which has no way into this private loop. */
        uv_timer_start(&r.intr, on_intr, 20, 20);
    }
    while (r.handles > 0)
        uv_run(&r.loop, UV_RUN_ONCE);
    uv_run(&r.loop, UV_RUN_DEFAULT); /* close callbacks still queued */
    if (uv_loop_close(&r.loop) != 0)
        rc = pctl_err(p, PLANCTL_ERROR, "preflight left handles open");
    else if (r.interrupted)
        rc = pctl_err(p, PLANCTL_EINTR,
                      "preflight checks of plan \"%s\": interrupted "
                      "(planctl_interrupt)",
                      plan->name);
    else
        rc = conclude(report, summary, p, plan, r.checks, r.n);
    pctl_intr_leave(p);
    for (i = 0; i < r.n; i++)
        pctl_free(r.checks[i].message);
    pctl_free(r.checks);
    return rc;
}
