/*
 * test_metrics.c - the engine's metrics and log: the exposition is valid
 * Prometheus text (checked by expo_check.h, which is itself shown to
 * reject broken text), counters move with a real engine on a real loop and
 * database and agree with the rows it wrote, a rolled-back pass counts
 * nothing, health follows the engine's life and lease, and the logger gets
 * the engine's events at its level.  No timing is asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>
#include <uv.h>

#include "engine/engine.h"
#include "engine/metrics.h"
#include "expo_check.h"
#include "planctl.h"
#include "store/store.h"
#include "testutil.h"

typedef struct fixture {
    char *dir, *path;
    planctl *p;
    sqlite3 *db;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    f->dir = tu_mkdtemp();
    f->path = tu_fmt("%s/metrics.db", f->dir);
    assert_int_equal(planctl_open(&f->p, f->path, NULL), 0);
    assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
    sqlite3_busy_timeout(f->db, 10000);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    sqlite3_close(f->db);
    planctl_close(f->p);
    tu_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

static void expect_valid(const char *text)
{
    char err[300];

    if (expo_check(text, err, sizeof err) != 0)
        fail_msg("invalid exposition: %s\n%s", err, text);
}

static void expect_invalid(const char *text, const char *why)
{
    char err[300];

    if (expo_check(text, err, sizeof err) == 0)
        fail_msg("the checker accepted %s:\n%s", why, text);
    if (!strstr(err, why))
        fail_msg("wanted \"%s\", the checker said \"%s\"", why, err);
}

/* ---- the checker ---- */

#define HIST_HEAD "# HELP h_seconds x\n# TYPE h_seconds histogram\n"

static void test_checker(void **state)
{
    (void)state;
    expect_valid(
        "# HELP a_total A.\n# TYPE a_total counter\na_total 3\n"
        "# HELP g x\n# TYPE g gauge\ng{k=\"a\\\"b\\\\c\\n\"} -1.5\n" HIST_HEAD
        "h_seconds_bucket{le=\"0.1\"} 1\n"
        "h_seconds_bucket{le=\"1\"} 2\n"
        "h_seconds_bucket{le=\"+Inf\"} 2\n"
        "h_seconds_sum 0.7\nh_seconds_count 2\n");
    expect_invalid("a_total 3\n", "without HELP and TYPE");
    expect_invalid("# HELP a x\na 1\n", "without HELP and TYPE");
    expect_invalid("# HELP a x\n# TYPE a counter\na -1\n", "negative");
    expect_invalid("# HELP a x\n# TYPE a counter\na one\n", "bad value");
    expect_invalid("# HELP a x\n# TYPE a counter\na{k=\"v} 1\n",
                   "unterminated");
    expect_invalid("# HELP a x\n# TYPE a counter\na{k=\"\\t\"} 1\n",
                   "bad escape");
    expect_invalid("# HELP a x\n# TYPE a counter\na 1\n"
                   "# HELP b x\n# TYPE b gauge\nb 1\na 2\n",
                   "not together");
    expect_invalid("# HELP a x\n# TYPE a counter\na 1\n# HELP a y\n",
                   "after its samples");
    expect_invalid("# HELP a x\n# TYPE a counter\na 1", "newline");
    expect_invalid(HIST_HEAD "h_seconds_bucket{le=\"0.1\"} 2\n"
                             "h_seconds_bucket{le=\"1\"} 1\n"
                             "h_seconds_bucket{le=\"+Inf\"} 2\n"
                             "h_seconds_sum 1\nh_seconds_count 2\n",
                   "not cumulative");
    expect_invalid(HIST_HEAD "h_seconds_bucket{le=\"0.1\"} 1\n"
                             "h_seconds_sum 1\nh_seconds_count 1\n",
                   "+Inf");
    expect_invalid(HIST_HEAD "h_seconds_bucket{le=\"+Inf\"} 2\n"
                             "h_seconds_sum 1\nh_seconds_count 3\n",
                   "_count 3 != +Inf bucket 2");
    expect_invalid(HIST_HEAD "h_seconds_bucket{le=\"1\"} 1\n"
                             "h_seconds_bucket{le=\"0.5\"} 1\n"
                             "h_seconds_bucket{le=\"+Inf\"} 1\n"
                             "h_seconds_sum 1\nh_seconds_count 1\n",
                   "not increasing");
}

/* ---- the registry ---- */

static void test_escape(void **state)
{
    char buf[64];

    (void)state;
    assert_int_equal(pctl_metrics_escape(buf, sizeof buf, "a\"b\\c\nd"), 10);
    assert_string_equal(buf, "a\\\"b\\\\c\\nd");
    /* Cut short, still terminated, and the length it needs is told. */
    assert_int_equal(pctl_metrics_escape(buf, 4, "a\"bc"), 5);
    assert_string_equal(buf, "a\\\"");
}

static void test_render_valid(void **state)
{
    pctl_metrics *m = pctl_metrics_new();
    pctl_gauges g = {3, 2, 1, 2, 1};
    char *text;
    int i;

    (void)state;
    assert_non_null(m);
    for (i = 0; i < 50; i++) {
        pctl_hist_observe(&m->commit_seconds, i * 0.0007);
        pctl_hist_observe(&m->batch, (double)(i * 37 % 7000));
    }
    pctl_hist_observe(&m->pass_seconds, 100.0); /* past the last bound */
    m->transitions[PLANCTL_ENTITY_STEP][PLANCTL_STATUS_COMPLETE] = 7;
    assert_int_equal(pctl_metrics_render(&text, m, &g), 0);
    expect_valid(text);
    assert_true(expo_value(text, "planctl_transitions_total{entity=\"step\","
                                 "to=\"COMPLETE\"}") == 7);
    assert_true(expo_value(text, "planctl_queue_depth") == 3);
    assert_true(expo_value(text, "planctl_active_runs") == 2);
    assert_true(expo_value(text, "planctl_runs_held") == 2);
    assert_true(expo_value(text, "planctl_commit_seconds_count") == 50);
    assert_true(expo_value(text, "planctl_pass_seconds_bucket{le=\"10\"}") ==
                0);
    assert_true(expo_value(text, "planctl_pass_seconds_bucket{le=\"+Inf\"}") ==
                1);
    /* Only legal destinations are listed: a run never goes to ERROR. */
    assert_null(strstr(text, "entity=\"run\",to=\"ERROR\""));
    assert_non_null(strstr(text, "entity=\"step\",to=\"ERROR\""));
    planctl_free(text);
    pctl_metrics_free(m);
}

/* Changes told by the gate count only once their transaction commits. */
static void test_rollback_not_counted(void **state)
{
    fixture *f = *state;
    planctl_engine *e;
    uv_loop_t loop;
    pctl_change c = PCTL_CHANGE_INIT;
    pctl_metrics *m;

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(planctl_engine_new(&e, f->p, &loop, NULL), 0);
    m = e->metrics;
    c.entity = PLANCTL_ENTITY_STEP;
    c.id = 1;
    c.from = PLANCTL_STATUS_ERROR;
    c.to = PLANCTL_STATUS_IN_PROGRESS;
    pctl_metrics_change(e, &c, 1, 0, 2);
    pctl_metrics_change(e, &c, 1, 0, 2);
    pctl_metrics_pass_end(e, PLANCTL_EBUSY, 10, 20);
    assert_int_equal(m->attempts, 0);
    assert_int_equal(
        m->transitions[PLANCTL_ENTITY_STEP][PLANCTL_STATUS_IN_PROGRESS], 0);
    assert_int_equal(m->batch.count, 0);
    pctl_metrics_change(e, &c, 1, 0, 2);
    pctl_metrics_pass_end(e, 0, 10, 20);
    assert_int_equal(m->attempts, 1);
    assert_int_equal(m->retries, 1);
    assert_int_equal(m->batch.count, 1);
    assert_true(m->batch.sum == 1);
    planctl_engine_free(e);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* ---- a real engine ---- */

#define MAX_RECORDS 256

typedef struct scenario {
    fixture *f;
    uv_loop_t loop;
    uv_timer_t timer;
    planctl_engine *e;
    int stopped;
    char *first;        /* the first scrape */
    int scrapes, grew;  /* scrapes taken; a later one showed more */
    int healthy_seen;   /* planctl_engine_healthy() was 1 while running */
    int healthy_at_end; /* ... and what it said in the stopped callback */
    char *msgs[MAX_RECORDS];
    planctl_log_level levels[MAX_RECORDS];
    int nmsgs;
} scenario;

static void logger(const planctl_log_record *rec, void *data)
{
    scenario *s = data;

    assert_non_null(rec->msg);
    assert_true(rec->ts_ms > 0);
    if (s->nmsgs < MAX_RECORDS) {
        s->levels[s->nmsgs] = rec->level;
        s->msgs[s->nmsgs++] = tu_fmt(
            "%s|%s|%s|%d|%s|%s|%s", rec->msg,
            rec->instance ? rec->instance : "", rec->step ? rec->step : "",
            rec->attempt, rec->status ? rec->status : "",
            rec->actor ? rec->actor : "", rec->phase ? rec->phase : "");
    }
}

static int logged(const scenario *s, const char *prefix)
{
    int i, n = 0;

    for (i = 0; i < s->nmsgs; i++)
        if (strncmp(s->msgs[i], prefix, strlen(prefix)) == 0)
            n++;
    return n;
}

static double total_transitions(const char *text)
{
    static const char *const ents[] = {"run", "phase", "step"};
    double sum = 0;
    int i, st;

    for (i = 0; i < 3; i++)
        for (st = 0; st < PLANCTL_STATUS__COUNT; st++) {
            char series[128];
            double v;

            snprintf(series, sizeof series,
                     "planctl_transitions_total{entity=\"%s\",to=\"%s\"}",
                     ents[i], planctl_status_name((planctl_status)st));
            if ((v = expo_value(text, series)) > 0)
                sum += v;
        }
    return sum;
}

static void on_scrape(uv_timer_t *t)
{
    scenario *s = t->data;
    char *text;

    assert_int_equal(planctl_engine_metrics(&text, s->e), 0);
    expect_valid(text);
    if (planctl_engine_healthy(s->e))
        s->healthy_seen = 1;
    if (!s->first)
        s->first = text;
    else {
        if (total_transitions(text) > total_transitions(s->first) &&
            expo_value(text, "planctl_attempts_total") >
                expo_value(s->first, "planctl_attempts_total"))
            s->grew = 1;
        planctl_free(text);
    }
    s->scrapes++;
}

static void on_stopped(planctl_engine *e, void *data)
{
    scenario *s = data;

    s->stopped = 1;
    s->healthy_at_end = planctl_engine_healthy(e);
    uv_close((uv_handle_t *)&s->timer, NULL);
}

#define WORK_DEF                                                               \
    "{\"name\":\"w\",\"version\":\"1\",\"tasks\":["                            \
    "{\"name\":\"slow\",\"kind\":\"Dummy\",\"spec\":{\"sleep\":\"60ms\"}},"    \
    "{\"name\":\"flaky\",\"kind\":\"Dummy\",\"spec\":{\"failTimes\":1}},"      \
    "{\"name\":\"boom\",\"kind\":\"Dummy\",\"spec\":{\"wantErr\":true,"        \
    "\"fatal\":true}}],"                                                       \
    "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["           \
    "{\"name\":\"a\",\"tasks\":[\"slow\"]},"                                   \
    "{\"name\":\"b\",\"tasks\":[\"flaky\",\"slow\"],"                          \
    "\"retry\":{\"attempts\":3,\"backoff\":\"20ms\"}},"                        \
    "{\"name\":\"c\",\"tasks\":[\"slow\"]}]}]},"                               \
    "\"bad\":{\"phases\":[{\"name\":\"p\",\"steps\":["                         \
    "{\"name\":\"x\",\"tasks\":[\"slow\",\"boom\"]}]}]}}}"

static void test_engine_metrics(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_trigger_options topt = PLANCTL_TRIGGER_OPTIONS_INIT;
    scenario s;
    char *text;
    int64_t run = 0;
    int i;

    memset(&s, 0, sizeof s);
    s.f = f;
    if (planctl_definition_apply(NULL, f->p, WORK_DEF, strlen(WORK_DEF),
                                 "w.json"))
        fail_msg("apply: %s", planctl_errmsg(f->p));
    for (i = 0; i < 4; i++) {
        char name[16];

        snprintf(name, sizeof name, "i%d", i);
        assert_int_equal(
            planctl_instance_create(&run, f->p, name, "w", NULL, NULL, 0), 0);
    }
    /* A queued plan behind i0's deploy, failing fatally once it runs. */
    topt.queue = 1;
    assert_int_equal(planctl_plan_trigger(&run, f->p, "i0", "bad", &topt), 0);

    o.until_idle = 1;
    o.change_poll_ms = 20;
    assert_int_equal(uv_loop_init(&s.loop), 0);
    assert_int_equal(planctl_engine_new(&s.e, f->p, &s.loop, &o), 0);
    assert_int_equal(planctl_engine_healthy(s.e), 0); /* not started */
    assert_int_equal(
        planctl_engine_set_logger(s.e, PLANCTL_LOG_INFO, logger, &s), 0);
    assert_int_equal(
        planctl_engine_set_logger(s.e, (planctl_log_level)9, logger, &s),
        PLANCTL_EINVAL);
    /* Before the start: valid, with the gauges read from the database. */
    assert_int_equal(planctl_engine_metrics(&text, s.e), 0);
    expect_valid(text);
    assert_true(expo_value(text, "planctl_queue_depth") == 1);
    assert_true(expo_value(text, "planctl_active_runs") == 4);
    assert_true(expo_value(text, "planctl_attempts_total") == 0);
    assert_true(expo_value(text, "planctl_lease_held") == 0);
    planctl_free(text);

    assert_int_equal(planctl_engine_start(s.e, on_stopped, &s), 0);
    uv_timer_init(&s.loop, &s.timer);
    s.timer.data = &s;
    uv_timer_start(&s.timer, on_scrape, 0, 15);
    uv_run(&s.loop, UV_RUN_DEFAULT);
    assert_true(s.stopped);
    assert_true(s.scrapes >= 2);
    assert_true(s.grew);
    assert_true(s.healthy_seen);
    assert_int_equal(s.healthy_at_end, 0);
    assert_int_equal(planctl_engine_healthy(s.e), 0);

    /* The counters agree with the rows the engine wrote. */
    assert_int_equal(planctl_engine_metrics(&text, s.e), 0);
    expect_valid(text);
    assert_true(expo_value(text, "planctl_attempts_total") ==
                (double)tu_scalar(f->db, "SELECT count(*) FROM attempts"));
    assert_true(expo_value(text, "planctl_retries_total") ==
                (double)tu_scalar(f->db, "SELECT count(*) FROM attempts "
                                         "WHERE number > 1"));
    assert_true(expo_value(text, "planctl_retries_total") == 4);
    assert_true(expo_value(text, "planctl_fatal_errors_total") == 1);
    assert_true(expo_value(text, "planctl_transitions_total{entity=\"run\","
                                 "to=\"COMPLETE\"}") == 4);
    assert_true(expo_value(text, "planctl_transitions_total{entity=\"run\","
                                 "to=\"FATAL_ERROR\"}") == 1);
    assert_true(expo_value(text, "planctl_transitions_total{entity=\"run\","
                                 "to=\"PENDING\"}") == 1); /* promoted */
    assert_true(total_transitions(text) ==
                (double)tu_scalar(f->db,
                                  "SELECT count(*) FROM events WHERE actor IN "
                                  "('engine', 'planctl') AND from_status IS "
                                  "NOT NULL"));
    assert_true(expo_value(text, "planctl_queue_depth") == 0);
    assert_true(expo_value(text, "planctl_active_runs") == 0);
    assert_true(expo_value(text, "planctl_running_steps") == 0);
    assert_true(expo_value(text, "planctl_pass_seconds_count") > 0);
    assert_true(expo_value(text, "planctl_commit_batch_transitions_sum") ==
                total_transitions(text));
    planctl_free(text);

    /* The log, at info: engine events and run ends, no step chatter. */
    assert_int_equal(logged(&s, "engine started"), 1);
    assert_int_equal(logged(&s, "run started|i"), 5);
    assert_int_equal(logged(&s, "run ended|i"), 5);
    assert_int_equal(logged(&s, "run ended|i0||0|FATAL_ERROR"), 1);
    assert_int_equal(logged(&s, "run promoted from the queue|i0|"), 1);
    assert_int_equal(logged(&s, "step failed, retrying|i"), 4);
    assert_int_equal(logged(&s, "step failed, retrying|i1|b|1|ERROR"), 1);
    assert_int_equal(logged(&s, "step failed|i0|x|1|FATAL_ERROR"), 1);
    assert_int_equal(logged(&s, "stopping"), 1);
    assert_int_equal(logged(&s, "stopped"), 1);
    assert_int_equal(logged(&s, "step started"), 0);
    assert_int_equal(logged(&s, "phase"), 0);
    for (i = 0; i < s.nmsgs; i++) {
        assert_true(s.levels[i] >= PLANCTL_LOG_INFO);
        free(s.msgs[i]);
    }
    planctl_free(s.first);
    planctl_engine_free(s.e);
    assert_int_equal(uv_loop_close(&s.loop), 0);
}

/* ---- what others do, seen by the engine ---- */

#define SLOW_DEF                                                               \
    "{\"name\":\"s\",\"version\":\"1\",\"tasks\":["                            \
    "{\"name\":\"slow\",\"kind\":\"Dummy\",\"spec\":{\"sleep\":\"1h\"}}],"     \
    "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["           \
    "{\"name\":\"a\",\"tasks\":[\"slow\"]}]}]}}}"

typedef struct others {
    scenario s;
    planctl *second; /* another handle on the file, as another process */
    int acted;
} others;

/* Once both steps run, o1 is cancelled through the second handle and o2
 * through the engine's own, outside its passes. */
static void cancel_both(uv_timer_t *t)
{
    others *o = t->data;

    if (o->acted ||
        tu_scalar(o->s.f->db, "SELECT count(*) FROM steps WHERE status = "
                              "'IN_PROGRESS'") < 2)
        return;
    o->acted = 1;
    assert_int_equal(planctl_run_cancel(NULL, o->second, "o1", "not needed"),
                     0);
    assert_int_equal(planctl_run_cancel(NULL, o->s.f->p, "o2", NULL), 0);
    uv_timer_stop(t);
}

/* A cancel by another writer shows in the engine's log (once, with who
 * made it) and in its transition counts, as its own changes do. */
static void test_others_counted(void **state)
{
    fixture *f = *state;
    planctl_engine_options opt = PLANCTL_ENGINE_OPTIONS_INIT;
    others o;
    char *text;
    int64_t run = 0;
    int i;

    memset(&o, 0, sizeof o);
    o.s.f = f;
    assert_int_equal(planctl_definition_apply(NULL, f->p, SLOW_DEF,
                                              strlen(SLOW_DEF), "s.json"),
                     0);
    assert_int_equal(
        planctl_instance_create(&run, f->p, "o1", "s", NULL, NULL, 0), 0);
    assert_int_equal(
        planctl_instance_create(&run, f->p, "o2", "s", NULL, NULL, 0), 0);
    assert_int_equal(planctl_open(&o.second, f->path, NULL), 0);
    opt.until_idle = 1;
    opt.change_poll_ms = 10;
    assert_int_equal(uv_loop_init(&o.s.loop), 0);
    assert_int_equal(planctl_engine_new(&o.s.e, f->p, &o.s.loop, &opt), 0);
    assert_int_equal(
        planctl_engine_set_logger(o.s.e, PLANCTL_LOG_DEBUG, logger, &o.s), 0);
    assert_int_equal(planctl_engine_start(o.s.e, on_stopped, &o.s), 0);
    uv_timer_init(&o.s.loop, &o.s.timer);
    o.s.timer.data = &o;
    uv_timer_start(&o.s.timer, cancel_both, 0, 5);
    uv_run(&o.s.loop, UV_RUN_DEFAULT);
    assert_true(o.s.stopped);
    assert_true(o.acted);

    assert_int_equal(logged(&o.s, "run ended|o1||0|CANCELLED|user|"), 1);
    assert_int_equal(logged(&o.s, "run ended|o2||0|CANCELLED|user|"), 1);
    assert_int_equal(logged(&o.s, "step cancelled|o1|a|"), 1);
    assert_int_equal(logged(&o.s, "phase ended|o1||0|CANCELLED|user|p"), 1);
    assert_int_equal(logged(&o.s, "step started|o1|a|1|IN_PROGRESS||"), 1);
    assert_int_equal(planctl_engine_metrics(&text, o.s.e), 0);
    assert_true(expo_value(text, "planctl_transitions_total{entity=\"run\","
                                 "to=\"CANCELLED\"}") == 2);
    assert_true(expo_value(text, "planctl_transitions_total{entity=\"step\","
                                 "to=\"CANCELLED\"}") == 2);
    /* Every change after the engine started counted once, whoever made
     * it (the rows created before are the first read's). */
    assert_true(total_transitions(text) ==
                (double)tu_scalar(f->db, "SELECT count(*) FROM events WHERE "
                                         "from_status IS NOT NULL"));
    planctl_free(text);
    for (i = 0; i < o.s.nmsgs; i++)
        free(o.s.msgs[i]);
    planctl_engine_free(o.s.e);
    assert_int_equal(uv_loop_close(&o.s.loop), 0);
    planctl_close(o.second);
}

/* Fenced off by another engine: no longer healthy, and the log says why. */
static void steal(uv_timer_t *t)
{
    scenario *s = t->data;

    if (planctl_engine_healthy(s->e))
        s->healthy_seen = 1;
    if (s->scrapes++ == 5)
        assert_int_equal(sqlite3_exec(s->f->db,
                                      "UPDATE engine_lease SET token = "
                                      "token + 100",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
}

static void test_fenced_unhealthy(void **state)
{
    fixture *f = *state;
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    scenario s;
    int i;

    memset(&s, 0, sizeof s);
    s.f = f;
    o.change_poll_ms = 20;
    o.lease_ttl_ms = 300;
    assert_int_equal(uv_loop_init(&s.loop), 0);
    assert_int_equal(planctl_engine_new(&s.e, f->p, &s.loop, &o), 0);
    assert_int_equal(
        planctl_engine_set_logger(s.e, PLANCTL_LOG_DEBUG, logger, &s), 0);
    assert_int_equal(planctl_engine_start(s.e, on_stopped, &s), 0);
    uv_timer_init(&s.loop, &s.timer);
    s.timer.data = &s;
    uv_timer_start(&s.timer, steal, 0, 20);
    uv_run(&s.loop, UV_RUN_DEFAULT);
    assert_int_equal(planctl_engine_status(s.e), PLANCTL_ESTALE);
    assert_true(s.healthy_seen);
    assert_int_equal(s.healthy_at_end, 0);
    assert_int_equal(logged(&s, "lease lost"), 1);
    for (i = 0; i < s.nmsgs; i++)
        free(s.msgs[i]);
    planctl_engine_free(s.e);
    assert_int_equal(uv_loop_close(&s.loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checker),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_render_valid),
        cmocka_unit_test_setup_teardown(test_rollback_not_counted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_engine_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fenced_unhealthy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_others_counted, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
