/*
 * render_tree.c - the `planctl status` tree of planctl(1), rendered from the
 * status document alone so that it always agrees with `status -o json`.
 *
 * Every plan shows its active run, else its latest (or NEVER_RUN), the
 * run's times and duration, why it waits when its engine said so, and under it
 * the phases and steps with attempts, the next retry and their messages.  Box
 * drawing and colour are used only where the terminal takes them (cli_term);
 * otherwise the tree is plain ASCII.
 */
#include "cli/cli.h"

#include <string.h>

typedef struct tree {
    const char *version; /* the instance's definition version */
    FILE *f;
    const cli_term *t;
    int64_t now;
    int all_steps;         /* no summary of big phases */
    const json_t *queued;  /* the document's "queued" array */
    const json_t *waiting; /* the document's "waiting", or NULL */
    cli_line line;
    cli_buf prefix; /* the stems of the levels above */
} tree;

static void add(tree *tr, const char *s)
{
    cli_line_add_color(&tr->line, s, NULL);
}

/* "├── " or "└── " before a node, and "│   " or "    " under it. */
static const char *branch(const tree *tr, int last)
{
    if (tr->t->unicode)
        return last ? "\u2514\u2500\u2500 " : "\u251c\u2500\u2500 ";
    return last ? "`-- " : "|-- ";
}

static const char *stem(const tree *tr, int last)
{
    if (tr->t->unicode)
        return last ? "    " : "\u2502   ";
    return last ? "    " : "|   ";
}

static void begin(tree *tr, int last)
{
    add(tr, cli_buf_str(&tr->prefix));
    add(tr, branch(tr, last));
}

static void add_status(tree *tr, const char *status)
{
    if (!status)
        status = "UNKNOWN";
    add(tr, "[");
    cli_line_add_color(&tr->line, status, cli_status_sgr(status));
    add(tr, "]");
}

/* Appends ": message" with the message kept on one line. */
static void add_message(tree *tr, const json_t *obj)
{
    const char *msg = cli_jstr(obj, "message");
    if (!msg || !msg[0])
        return;
    add(tr, ": ");
    cli_buf_add_clean(&tr->line.text, msg);
}

/* Appends one detail after the status: " x" for the first, ", x" after. */
static void add_detail(tree *tr, int *n, const char *s)
{
    add(tr, (*n)++ ? ", " : " ");
    add(tr, s);
}

static void add_name(tree *tr, const char *kind, const json_t *obj,
                     int with_strategy)
{
    const char *name = cli_jstr(obj, "name");
    add(tr, kind);
    add(tr, " ");
    cli_buf_add_clean(&tr->line.text, name ? name : "?");
    if (with_strategy) {
        const char *strategy = cli_jstr(obj, "strategy");
        add(tr, " (");
        add(tr, strategy ? strategy : "serial");
        add(tr, ")");
    }
    add(tr, " ");
}

/* The duration of something that has finished, if it started. */
static int finished_duration(int64_t *out, const json_t *obj)
{
    int64_t start, end;
    if (!cli_jtime(&start, obj, "started_at") ||
        !cli_jtime(&end, obj, "finished_at"))
        return 0;
    *out = end - start;
    return 1;
}

static int queue_position(const tree *tr, int64_t id)
{
    size_t i;
    const json_t *v;
    json_array_foreach(tr->queued, i, v)
    {
        if (json_is_integer(v) && json_integer_value(v) == id)
            return (int)i + 1;
    }
    return 0;
}

static void render_step(tree *tr, const json_t *step, int last)
{
    const char *status = cli_jstr(step, "status");
    int64_t attempt = 0, max = 0, next, dur;
    char tmp[96], d[32];
    int n = 0;

    begin(tr, last);
    add_name(tr, "Step", step, 0);
    add_status(tr, status);

    cli_jint(&attempt, step, "attempt");
    cli_jint(&max, step, "max_attempts");
    /* The attempt count matters while a step is being tried and when it
     * took more than one try; a first-time success needs no count. */
    int trying =
        status && (!strcmp(status, "IN_PROGRESS") || !strcmp(status, "ERROR") ||
                   !strcmp(status, "FATAL_ERROR"));
    if ((trying && attempt > 0) || attempt > 1) {
        if (max > 0)
            snprintf(tmp, sizeof(tmp), "attempt %lld/%lld", (long long)attempt,
                     (long long)max);
        else
            snprintf(tmp, sizeof(tmp), "attempt %lld", (long long)attempt);
        add_detail(tr, &n, tmp);
    }
    if (status && !strcmp(status, "ERROR") &&
        cli_jtime(&next, step, "next_attempt_at")) {
        if (next > tr->now) {
            cli_duration_format(d, sizeof(d), next - tr->now);
            snprintf(tmp, sizeof(tmp), "next try in %s", d);
            add_detail(tr, &n, tmp);
        } else {
            add_detail(tr, &n, "next try now");
        }
    }
    if (finished_duration(&dur, step)) {
        cli_duration_format(d, sizeof(d), dur);
        add_detail(tr, &n, d);
    } else if (status && !strcmp(status, "IN_PROGRESS") &&
               cli_jtime(&dur, step, "started_at")) {
        /* How long it has been running, as the run's line shows. */
        cli_duration_format(d, sizeof(d), tr->now - dur);
        add_detail(tr, &n, d);
    }
    add_message(tr, step);
    cli_line_emit(&tr->line, tr->f, tr->t);
}

static int is_complete(const json_t *step)
{
    const char *s = cli_jstr(step, "status");
    return s && !strcmp(s, "COMPLETE");
}

/* A phase of many steps: one line of counts by status ("398/400
 * COMPLETE, 2 ERROR"), then the steps that are not COMPLETE, the first
 * CLI_BIG_PHASE_LIST of them, and how many more. */
static void render_big_phase(tree *tr, const json_t *steps)
{
    static const char *const order[] = {"COMPLETE",    "IN_PROGRESS", "ERROR",
                                        "PENDING",     "PAUSED",      "QUEUED",
                                        "FATAL_ERROR", "CANCELLED",   NULL};
    size_t i, j, count = json_array_size(steps), rest = 0, shown = 0, other;
    const json_t *step;
    char tmp[96];

    /* Counts in a fixed order, whatever order the steps are in. */
    begin(tr, 0);
    for (j = 0; order[j]; j++) {
        size_t n = 0;
        json_array_foreach(steps, i, step)
        {
            const char *s = cli_jstr(step, "status");
            n += s && !strcmp(s, order[j]);
        }
        if (j == 0)
            snprintf(tmp, sizeof(tmp), "%zu/%zu steps ", n, count);
        else if (n == 0)
            continue;
        else
            snprintf(tmp, sizeof(tmp), ", %zu ", n);
        add(tr, tmp);
        cli_line_add_color(&tr->line, order[j], cli_status_sgr(order[j]));
        rest += n;
    }
    if ((other = count - rest) > 0) {
        snprintf(tmp, sizeof(tmp), ", %zu other", other);
        add(tr, tmp);
    }
    add(tr, " (--all shows every step)");
    cli_line_emit(&tr->line, tr->f, tr->t);

    size_t pending = 0;
    json_array_foreach(steps, i, step)
    {
        pending += !is_complete(step);
    }
    json_array_foreach(steps, i, step)
    {
        if (is_complete(step) || shown == CLI_BIG_PHASE_LIST)
            continue;
        shown++;
        render_step(tr, step, shown == pending);
    }
    if (pending > shown) {
        begin(tr, 1);
        snprintf(tmp, sizeof(tmp), "... and %zu more steps not COMPLETE",
                 pending - shown);
        add(tr, tmp);
        cli_line_emit(&tr->line, tr->f, tr->t);
    }
}

static void render_phase(tree *tr, const json_t *phase, int last)
{
    int64_t dur;
    char d[32];
    int n = 0;

    begin(tr, last);
    add_name(tr, "Phase", phase, 1);
    add_status(tr, cli_jstr(phase, "status"));
    if (finished_duration(&dur, phase)) {
        cli_duration_format(d, sizeof(d), dur);
        add_detail(tr, &n, d);
    }
    add_message(tr, phase);
    cli_line_emit(&tr->line, tr->f, tr->t);

    const json_t *steps = json_object_get(phase, "steps");
    size_t before = tr->prefix.len, i, count = json_array_size(steps);
    const json_t *step;
    cli_buf_add(&tr->prefix, stem(tr, last));
    if (count > CLI_BIG_PHASE && !tr->all_steps) {
        render_big_phase(tr, steps);
    } else {
        json_array_foreach(steps, i, step)
        {
            render_step(tr, step, i + 1 == count);
        }
    }
    tr->prefix.len = before;
    tr->prefix.s[before] = '\0';
}

/* Why run id waits, as its engine recorded it (planctl-json(7),
 * "waiting"): ", waits for an engine with task kind "helm"", ", waits
 * for a free slot (...)" or ", waits for an engine with room (...)". */
static void add_waiting(tree *tr, int *n, int64_t id)
{
    const char *cause = cli_jstr(tr->waiting, "cause");
    int64_t run = 0, conc = 0;
    char tmp[96];

    if (!cause || !cli_jint(&run, tr->waiting, "run") || run != id)
        return;
    if (!strcmp(cause, "executor")) {
        add_detail(tr, n, "waits for an engine with task kind \"");
        cli_buf_add_clean(&tr->line.text, cli_jstr(tr->waiting, "kind")
                                              ? cli_jstr(tr->waiting, "kind")
                                              : "?");
        add(tr, "\"");
    } else if (!strcmp(cause, "capacity")) {
        add_detail(tr, n,
                   "waits for an engine with room (every engine holds its "
                   "capacity of active runs)");
    } else if (cli_jint(&conc, tr->waiting, "concurrency")) {
        snprintf(tmp, sizeof(tmp),
                 "waits for a free slot (the engine runs %lld step%s at "
                 "once)",
                 (long long)conc, conc == 1 ? "" : "s");
        add_detail(tr, n, tmp);
    } else {
        add_detail(tr, n, "waits for a free slot of the engine");
    }
}

/* " run 12, started 2026-11-21 14:03:05 UTC, 1m12s" and the like: the
 * zone is named here, where a time is read back into --at. */
static void add_run_details(tree *tr, const json_t *run)
{
    int64_t id = 0, other, created, started, finished, dur;
    char tmp[128], when[64], d[32];
    int n = 0;

    cli_jint(&id, run, "id");
    snprintf(tmp, sizeof(tmp), "run %lld", (long long)id);
    add_detail(tr, &n, tmp);
    /* Why it runs: the --reason given, "parameters changed: N"; a retry's
     * reason is the detail after. */
    const char *reason = cli_jstr(run, "reason");
    const char *trigger = cli_jstr(run, "trigger");
    if (reason && reason[0] && !(trigger && !strcmp(trigger, "retry"))) {
        add(tr, " (");
        cli_buf_add_clean(&tr->line.text, reason);
        add(tr, ")");
    }
    if (cli_jint(&other, run, "retry_of")) {
        snprintf(tmp, sizeof(tmp), "retry of run %lld", (long long)other);
        add_detail(tr, &n, tmp);
    }
    /* The version it runs, when not the one the header names (a run from
     * before an upgrade, or its retry). */
    const char *version = cli_jstr(run, "definition_version");
    if (version && tr->version && strcmp(version, tr->version) != 0) {
        add(tr, n++ ? ", " : " ");
        add(tr, "version ");
        cli_buf_add_clean(&tr->line.text, version);
    }
    int pos = queue_position(tr, id);
    if (pos > 0) {
        snprintf(tmp, sizeof(tmp), "position %d in queue", pos);
        add_detail(tr, &n, tmp);
    }

    int has_start = cli_jtime(&started, run, "started_at");
    int has_end = cli_jtime(&finished, run, "finished_at");
    if (has_end) {
        cli_time_format_zone(when, sizeof(when), finished);
        snprintf(tmp, sizeof(tmp), "finished %s", when);
        add_detail(tr, &n, tmp);
    } else if (has_start) {
        cli_time_format_zone(when, sizeof(when), started);
        snprintf(tmp, sizeof(tmp), "started %s", when);
        add_detail(tr, &n, tmp);
    } else if (cli_jtime(&created, run, "created_at")) {
        cli_time_format_zone(when, sizeof(when), created);
        snprintf(tmp, sizeof(tmp), "created %s", when);
        add_detail(tr, &n, tmp);
    }

    /* The library's duration when it gives one; a run still going is
     * measured to now, so the line shows how long it has been running. */
    int has_dur = cli_jint(&dur, run, "duration_ms");
    if (!has_dur && has_start) {
        dur = (has_end ? finished : tr->now) - started;
        has_dur = 1;
    }
    if (has_dur) {
        cli_duration_format(d, sizeof(d), dur);
        add_detail(tr, &n, d);
    }
    add_waiting(tr, &n, id);
}

static void render_plan(tree *tr, const json_t *plan, int last)
{
    const json_t *run = json_object_get(plan, "run");
    const char *status = cli_jstr(plan, "status");

    begin(tr, last);
    add_name(tr, "Plan", plan, 1);
    if (!status && json_is_object(run))
        status = cli_jstr(run, "status");
    add_status(tr, status ? status : "NEVER_RUN");
    if (json_is_object(run)) {
        add_run_details(tr, run);
        add_message(tr, run);
    }
    cli_line_emit(&tr->line, tr->f, tr->t);
    if (!json_is_object(run))
        return;

    const json_t *phases = json_object_get(run, "phases");
    size_t before = tr->prefix.len, i, count = json_array_size(phases);
    const json_t *phase;
    cli_buf_add(&tr->prefix, stem(tr, last));
    json_array_foreach(phases, i, phase)
    {
        render_phase(tr, phase, i + 1 == count);
    }
    tr->prefix.len = before;
    tr->prefix.s[before] = '\0';
}

/* The plan whose shown run is run id, or NULL. */
static const char *plan_of_run(const json_t *plans, int64_t id)
{
    size_t i;
    const json_t *plan;
    json_array_foreach(plans, i, plan)
    {
        int64_t rid;
        if (cli_jint(&rid, json_object_get(plan, "run"), "id") && rid == id)
            return cli_jstr(plan, "name");
    }
    return NULL;
}

static void render_header(tree *tr, const json_t *doc, const char *active_plan)
{
    const json_t *def = json_object_get(doc, "definition");
    const json_t *plans = json_object_get(doc, "plans");
    const char *name = cli_jstr(doc, "instance");
    const char *dname = cli_jstr(def, "name");
    const char *dversion = cli_jstr(def, "version");
    int64_t active;

    cli_buf_add_clean(&tr->line.text, name ? name : "?");
    add(tr, " (definition ");
    cli_buf_add_clean(&tr->line.text, dname ? dname : "?");
    add(tr, "@");
    cli_buf_add_clean(&tr->line.text, dversion ? dversion : "?");
    if (cli_jint(&active, doc, "active_run")) {
        const char *plan = plan_of_run(plans, active);
        if (!plan)
            plan = active_plan;
        char tmp[64];
        if (plan) {
            add(tr, ", active plan ");
            cli_buf_add_clean(&tr->line.text, plan);
        } else {
            /* Neither shown nor looked up: the id is all there is. */
            snprintf(tmp, sizeof(tmp), ", active run %lld", (long long)active);
            add(tr, tmp);
        }
    } else {
        add(tr, ", no active plan");
    }
    add(tr, ")");
    cli_line_emit(&tr->line, tr->f, tr->t);
}

static void render_queue(tree *tr, const json_t *doc,
                         const char *const *queued_plans)
{
    const json_t *plans = json_object_get(doc, "plans");
    size_t i;
    const json_t *v;
    if (json_array_size(tr->queued) == 0)
        return;
    add(tr, "Queued:");
    json_array_foreach(tr->queued, i, v)
    {
        int64_t id = json_is_integer(v) ? json_integer_value(v) : 0;
        const char *plan = queued_plans ? queued_plans[i] : NULL;
        char tmp[48];
        if (!plan)
            plan = plan_of_run(plans, id);
        snprintf(tmp, sizeof(tmp), "%s run %lld", i ? "," : "", (long long)id);
        add(tr, tmp);
        if (plan) {
            add(tr, " (");
            cli_buf_add_clean(&tr->line.text, plan);
            add(tr, ")");
        }
    }
    cli_line_emit(&tr->line, tr->f, tr->t);
}

void cli_render_status(FILE *f, const json_t *doc, const cli_term *t,
                       int64_t now, const cli_status_extra *extra)
{
    tree tr = {cli_jstr(json_object_get(doc, "definition"), "version"),
               f,
               t,
               now,
               extra ? extra->all_steps : 0,
               json_object_get(doc, "queued"),
               json_object_get(doc, "waiting"),
               CLI_LINE_INIT,
               CLI_BUF_INIT};
    const json_t *plans = json_object_get(doc, "plans");
    size_t i, count = json_array_size(plans);
    const json_t *plan;

    cli_buf_add(&tr.prefix, ""); /* so prefix.s is never NULL */
    render_header(&tr, doc, extra ? extra->active_plan : NULL);
    json_array_foreach(plans, i, plan)
    {
        render_plan(&tr, plan, i + 1 == count);
    }
    render_queue(&tr, doc, extra ? extra->queued_plans : NULL);
    cli_line_free(&tr.line);
    cli_buf_free(&tr.prefix);
}
