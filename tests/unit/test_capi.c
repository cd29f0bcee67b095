/*
 * test_capi.c - the calls a binding (the Go package) builds on: the
 * executor's release hook (PLANCTL_EXECUTOR_VERSION 2),
 * planctl_interrupt() from another thread, and task kinds known to every
 * handle of the process.  A real database (SQLite, or the suite's
 * PostgreSQL cluster as unit.pg.test_capi), real engines on their own
 * loops, real threads.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "planctl.h"
#include "testutil.h"

/* ---- the release hook -------------------------------------------------- */

/* One job as the executor saw it: what was called, in which order. */
typedef struct seen {
    planctl_job *job;
    int started, cancels, releases;
    int cancel_after_release; /* a cancel() came once released */
    int data_at_release;      /* planctl_job_data() was this seen */
} seen;

typedef struct rel {
    seen jobs[64];
    int n;
    int holds;          /* Hold jobs started */
    int stop_at;        /* request a stop once this many Hold jobs run */
    planctl_engine *e;  /* for that stop */
    int v1_release_run; /* a version 1 executor's bytes past its end ran */
} rel;

static seen *seen_of(rel *r, planctl_job *job)
{
    int i;

    for (i = 0; i < r->n; i++)
        if (r->jobs[i].job == job && !r->jobs[i].releases)
            return &r->jobs[i];
    return NULL;
}

/* The spec says what to do: "done" reports at once, "fail" refuses in
 * start(), "hold" waits for cancel(). */
static int rel_start(planctl_job *job, const planctl_task_info *info,
                     void *data)
{
    rel *r = data;
    seen *s;

    assert_true(r->n < 64);
    s = &r->jobs[r->n++];
    memset(s, 0, sizeof *s);
    s->job = job;
    s->started = 1;
    planctl_job_set_data(job, s);
    if (strstr(info->spec, "fail"))
        return PLANCTL_ERROR;
    if (strstr(info->spec, "hold")) {
        if (++r->holds == r->stop_at)
            assert_int_equal(planctl_engine_request_stop(r->e, 0), 0);
        return 0;
    }
    return planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL);
}

static void rel_cancel(planctl_job *job, void *data)
{
    rel *r = data;
    seen *s = planctl_job_data(job);
    int i;

    /* A cancel of a job already released would be a use after free in a
     * binding: look for it among the released ones too. */
    for (i = 0; i < r->n; i++)
        if (&r->jobs[i] == s && s->releases)
            s->cancel_after_release++;
    if (!s)
        return;
    s->cancels++;
    planctl_step_finish(job, PLANCTL_OUTCOME_ERROR, "cancelled");
}

static void rel_release(planctl_job *job, void *data)
{
    rel *r = data;
    seen *s = seen_of(r, job);

    assert_non_null(s);
    s->data_at_release = planctl_job_data(job) == s;
    s->releases++;
}

/* A version 1 executor, laid out as a caller built against the old
 * header has it, followed by what must never be read as its release. */
typedef struct v1_executor {
    unsigned int version;
    int (*start)(planctl_job *, const planctl_task_info *, void *);
    void (*cancel)(planctl_job *, void *);
    void *data;
} v1_executor;

static void not_a_release(planctl_job *job, void *data)
{
    (void)job;
    ((rel *)data)->v1_release_run++;
}

#define REL_DEF                                                                \
    "{\"name\":\"rel\",\"version\":\"1\",\"tasks\":["                          \
    "{\"name\":\"ok\",\"kind\":\"Rel\",\"spec\":{\"do\":\"done\"}},"           \
    "{\"name\":\"bad\",\"kind\":\"Rel\",\"spec\":{\"do\":\"fail\"}},"          \
    "{\"name\":\"hold\",\"kind\":\"Rel\",\"spec\":{\"do\":\"hold\"}}],"        \
    "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"a\",\"strategy\":"         \
    "\"parallel\",\"steps\":["                                                 \
    "{\"name\":\"s1\",\"tasks\":[\"ok\",\"ok\"]},"                             \
    "{\"name\":\"s2\",\"tasks\":[\"ok\"]}]},"                                  \
    "{\"name\":\"b\",\"steps\":[{\"name\":\"s3\",\"tasks\":[\"bad\"],"         \
    "\"retry\":{\"attempts\":2,\"backoff\":\"10ms\"}}]}]},"                    \
    "\"hold\":{\"phases\":[{\"name\":\"a\",\"strategy\":\"parallel\","         \
    "\"steps\":[{\"name\":\"h1\",\"tasks\":[\"hold\"]},"                       \
    "{\"name\":\"h2\",\"tasks\":[\"hold\"]},"                                  \
    "{\"name\":\"h3\",\"tasks\":[\"hold\"]}]}]}}}"

/* Runs an engine with the Rel kind (exec) on its own loop until it
 * stops: until idle, or stopped by rel_start. */
static int run_rel(planctl *p, const planctl_executor *exec, rel *r,
                   int until_idle)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_engine *e;
    int rc;

    o.until_idle = until_idle;
    o.change_poll_ms = 20;
    o.no_shell = 1;
    assert_int_equal(planctl_engine_new(&e, p, NULL, &o), 0);
    r->e = e;
    if (planctl_engine_register(e, "Rel", exec) != 0)
        fail_msg("register: %s", planctl_errmsg(p));
    rc = planctl_engine_run(e);
    planctl_engine_free(e);
    return rc;
}

static void expect_each_released_once(const rel *r)
{
    int i;

    for (i = 0; i < r->n; i++) {
        if (r->jobs[i].releases != 1)
            fail_msg("job %d: released %d times", i, r->jobs[i].releases);
        if (!r->jobs[i].data_at_release)
            fail_msg("job %d: its data was gone at release", i);
        if (r->jobs[i].cancel_after_release)
            fail_msg("job %d: cancelled after its release", i);
    }
}

/* Jobs that report at once, and jobs whose start() fails (retried once):
 * each released exactly once, its data still there. */
static void test_release_done_and_failed(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, rel_start, rel_cancel,
                           NULL, rel_release};
    static rel r;

    (void)state;
    memset(&r, 0, sizeof r);
    ex.data = &r;
    assert_int_equal(planctl_kind_register(f->p, "Rel", NULL, NULL), 0);
    tu_apply(f->p, REL_DEF);
    tu_create(f->p, "i", "rel");
    run_rel(f->p, &ex, &r, 1);
    /* s1's two tasks, s2's one, s3's two attempts. */
    assert_int_equal(r.n, 5);
    expect_each_released_once(&r);
    assert_int_equal(tu_db_close(f), 0);
}

/* An engine stopped while its jobs run: each cancelled, then released
 * once, before planctl_engine_run() returns. */
static void test_release_engine_stopped(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, rel_start, rel_cancel,
                           NULL, rel_release};
    static rel r;
    planctl_admitted ad;
    int i;

    (void)state;
    memset(&r, 0, sizeof r);
    ex.data = &r;
    r.stop_at = 3;
    assert_int_equal(planctl_kind_register(f->p, "Rel", NULL, NULL), 0);
    tu_apply(f->p, REL_DEF);
    tu_create(f->p, "i", "rel");
    run_rel(f->p, &ex, &r, 1); /* deploy, to the end */
    memset(&r, 0, sizeof r);
    r.stop_at = 3;
    if (planctl_admit_trigger(&ad, f->p, "i", "hold", NULL) != 0)
        fail_msg("trigger: %s", planctl_errmsg(f->p));
    planctl_admitted_clear(&ad);
    run_rel(f->p, &ex, &r, 0);
    assert_int_equal(r.n, 3);
    for (i = 0; i < r.n; i++)
        assert_int_equal(r.jobs[i].cancels, 1);
    expect_each_released_once(&r);
    assert_int_equal(tu_db_close(f), 0);
}

/* A version 1 struct is still accepted, and nothing past its end is read
 * as a release hook. */
static void test_release_v1_accepted(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    static rel r;
    static struct {
        v1_executor ex;
        void (*after)(planctl_job *, void *);
    } v1;

    (void)state;
    memset(&r, 0, sizeof r);
    v1.ex.version = 1;
    v1.ex.start = rel_start;
    v1.ex.cancel = rel_cancel;
    v1.ex.data = &r;
    v1.after = not_a_release;
    assert_int_equal(planctl_kind_register(f->p, "Rel", NULL, NULL), 0);
    tu_apply(f->p, REL_DEF);
    tu_create(f->p, "i", "rel");
    run_rel(f->p, (const planctl_executor *)&v1, &r, 1);
    assert_int_equal(r.n, 5);
    assert_int_equal(r.v1_release_run, 0);
    assert_int_equal(tu_db_close(f), 0);
}

/* ---- planctl_interrupt ------------------------------------------------- */

typedef struct interrupter {
    pthread_t thread;
    planctl *p;
    atomic_int done; /* the call returned */
    atomic_int calls;
} interrupter;

/* Interrupts p every few milliseconds until the call returns, as a
 * binding does once its context is done: no timing to guess. */
static void *interrupt_loop(void *arg)
{
    interrupter *it = arg;

    while (!atomic_load(&it->done)) {
        assert_int_equal(planctl_interrupt(it->p), 0);
        atomic_fetch_add(&it->calls, 1);
        usleep(5000);
    }
    return NULL;
}

#define INTR_DEF                                                               \
    "{\"name\":\"intr\",\"version\":\"1\",\"tasks\":["                         \
    "{\"name\":\"t\",\"kind\":\"Dummy\"}],\"plans\":{\"deploy\":{"             \
    "\"phases\":[{\"name\":\"a\",\"steps\":[{\"name\":\"s\",\"tasks\":"        \
    "[\"t\"]}]}]}}}"

/* Creates instance "i" of intr on p while another thread interrupts p
 * until the call returns; the call must give PLANCTL_EINTR, saying so. */
static void create_interrupted(planctl *p, int64_t *run)
{
    interrupter it;
    int rc;

    memset(&it, 0, sizeof it);
    it.p = p;
    assert_int_equal(pthread_create(&it.thread, NULL, interrupt_loop, &it), 0);
    rc = planctl_instance_create(run, p, "i", "intr", NULL, NULL, 0);
    atomic_store(&it.done, 1);
    assert_int_equal(pthread_join(it.thread, NULL), 0);
    if (rc != PLANCTL_EINTR)
        fail_msg("create gave %s (%s), not PLANCTL_EINTR", planctl_errname(rc),
                 planctl_errmsg(p));
    assert_non_null(strstr(planctl_errmsg(p), "interrupted"));
}

/* An admission waiting for the write lock, which another connection
 * holds, returns PLANCTL_EINTR once another thread interrupts it, long
 * before its busy timeout, having changed nothing; an interrupt when no
 * call runs leaves the next call alone. */
static void test_interrupt_admission_blocked(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    tu_raw *holder = tu_raw_open(f->path);
    planctl *p;
    int64_t run = 0;
    char *doc = NULL;

    (void)state;
    tu_apply(f->p, INTR_DEF);
    o.busy_timeout_ms = 120000; /* without the interrupt: two minutes */
    if (planctl_open(&p, f->path, &o) != 0)
        fail_msg("open: %s", planctl_errmsg(p));
    /* Another connection holds the database's write lock. */
    if (tu_on_pg()) {
        tu_raw_exec(holder, "BEGIN");
        tu_raw_exec(holder, "DO $$BEGIN PERFORM pg_advisory_xact_lock("
                            "1347175255, hashtext(current_schema())); END$$");
    } else {
        tu_raw_exec(holder, "BEGIN IMMEDIATE");
    }
    create_interrupted(p, &run);
    assert_int_equal(run, 0);
    tu_raw_exec(holder, "ROLLBACK");
    /* Nothing was admitted. */
    assert_int_equal(planctl_status_json(&doc, p, "i", NULL),
                     PLANCTL_ENOTFOUND);
    /* With no call running, an interrupt does nothing to the next one. */
    assert_int_equal(planctl_interrupt(p), 0);
    if (planctl_instance_create(&run, p, "i", "intr", NULL, NULL, 0) != 0)
        fail_msg("create after the interrupt: %s", planctl_errmsg(p));
    assert_true(run > 0);
    planctl_close(p);
    tu_raw_close(holder);
    assert_int_equal(tu_db_close(f), 0);
}

/* A NULL handle is refused with a message of the thread's. */
static void test_interrupt_null(void **state)
{
    (void)state;
    assert_int_equal(planctl_interrupt(NULL), PLANCTL_EINVAL);
    assert_non_null(strstr(planctl_thread_errmsg(), "p is NULL"));
    assert_string_equal(planctl_errname(PLANCTL_EINTR), "PLANCTL_EINTR");
    assert_string_equal(planctl_strerror(PLANCTL_EINTR), "interrupted");
}

/* An interrupt that stops a statement while it is being prepared (on
 * PostgreSQL a prepare waits for its tables' locks) is reported as
 * PLANCTL_EINTR, as one that stops it running is: not as a plain
 * PLANCTL_ERROR under the message "interrupted".  SQLite's prepare waits
 * for nothing, so this is PostgreSQL's case. */
static void test_interrupt_prepare(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    tu_raw *holder;
    planctl *p;
    int64_t run = 0;

    (void)state;
    if (!tu_on_pg()) {
        assert_int_equal(tu_db_close(f), 0);
        return;
    }
    tu_apply(f->p, INTR_DEF);
    o.busy_timeout_ms = 120000;
    if (planctl_open(&p, f->path, &o) != 0)
        fail_msg("open: %s", planctl_errmsg(p));
    /* The new handle has prepared nothing that reads instances; another
     * session keeps every statement from reading that table. */
    holder = tu_raw_open(f->path);
    tu_raw_exec(holder, "BEGIN");
    tu_raw_exec(holder, "LOCK TABLE instances IN ACCESS EXCLUSIVE MODE");
    create_interrupted(p, &run);
    tu_raw_exec(holder, "ROLLBACK");
    tu_raw_close(holder);
    /* The statement is prepared at its next use. */
    if (planctl_instance_create(&run, p, "i", "intr", NULL, NULL, 0) != 0)
        fail_msg("create after the interrupt: %s", planctl_errmsg(p));
    planctl_close(p);
    assert_int_equal(tu_db_close(f), 0);
}

/* An admission whose shell preflight check runs long returns
 * PLANCTL_EINTR once interrupted (the check's process killed), long
 * before the deadline; nothing is admitted. */
static void test_interrupt_preflight(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    planctl_admit_options ao = PLANCTL_ADMIT_OPTIONS_INIT;
    planctl_admitted ad;
    interrupter it;
    char *doc = NULL;
    int rc;

    (void)state;
    tu_apply(f->p,
             "{\"name\":\"pf\",\"version\":\"1\",\"tasks\":["
             "{\"name\":\"slow\",\"kind\":\"shell\",\"spec\":{\"command\":"
             "\"sleep 600\"}},{\"name\":\"t\",\"kind\":\"Dummy\"}],"
             "\"plans\":{\"deploy\":{\"preflight\":["
             "{\"name\":\"Slow\",\"task\":\"slow\"}],"
             "\"phases\":[{\"name\":\"a\",\"steps\":[{\"name\":\"s\","
             "\"tasks\":[\"t\"]}]}]}}}");
    ao.preflight_deadline_ms = 600000;
    memset(&it, 0, sizeof it);
    it.p = f->p;
    assert_int_equal(pthread_create(&it.thread, NULL, interrupt_loop, &it), 0);
    rc = planctl_admit_create(&ad, f->p, "i", "pf", NULL, NULL, 0, &ao);
    atomic_store(&it.done, 1);
    assert_int_equal(pthread_join(it.thread, NULL), 0);
    if (rc != PLANCTL_EINTR)
        fail_msg("create gave %s (%s), not PLANCTL_EINTR", planctl_errname(rc),
                 planctl_errmsg(f->p));
    assert_non_null(strstr(planctl_errmsg(f->p), "interrupted"));
    planctl_admitted_clear(&ad);
    assert_int_equal(planctl_status_json(&doc, f->p, "i", NULL),
                     PLANCTL_ENOTFOUND);
    assert_int_equal(tu_db_close(f), 0);
}

/* ---- task kinds known to the whole process ----------------------------- */

#define KIND_DEF(name, kind)                                                   \
    "{\"name\":\"" name "\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","     \
    "\"kind\":\"" kind "\"}],\"plans\":{\"deploy\":{\"phases\":[{\"name\":"    \
    "\"a\",\"steps\":[{\"name\":\"s\",\"tasks\":[\"t\"]}]}]}}}"

static int apply_def(planctl *p, const char *json)
{
    return planctl_definition_apply(NULL, p, json, strlen(json), "k.json");
}

/* A kind registered on one handle, or by an engine on its handle, is
 * accepted by a definition applied from another handle of the process;
 * a kind nobody registered is still refused. */
static void test_kinds_of_the_process(void **state)
{
    tu_db *f = tu_db_open("t.db", 1);
    planctl_executor ex = {PLANCTL_EXECUTOR_VERSION, rel_start, rel_cancel,
                           NULL, rel_release};
    planctl *a, *b;
    planctl_engine *e;
    static rel r;

    (void)state;
    ex.data = &r;
    if (planctl_open(&a, f->path, NULL) != 0 ||
        planctl_open(&b, f->path, NULL) != 0)
        fail_msg("open: %s", planctl_errmsg(a));
    /* Nobody registered it: refused, naming the kind. */
    assert_int_equal(apply_def(b, KIND_DEF("n", "ProcKindNone")),
                     PLANCTL_EDEFINITION);
    assert_non_null(strstr(planctl_errmsg(b), "ProcKindNone"));
    /* Registered on a: b accepts it. */
    assert_int_equal(planctl_kind_register(a, "ProcKindA", NULL, NULL), 0);
    if (apply_def(b, KIND_DEF("ka", "ProcKindA")) != 0)
        fail_msg("apply on b: %s", planctl_errmsg(b));
    /* Registered by an engine (on f->p): a and b accept it. */
    assert_int_equal(planctl_engine_new(&e, f->p, NULL, NULL), 0);
    assert_int_equal(planctl_engine_register(e, "ProcKindE", &ex), 0);
    if (apply_def(b, KIND_DEF("ke", "ProcKindE")) != 0)
        fail_msg("apply on b: %s", planctl_errmsg(b));
    if (apply_def(a, KIND_DEF("ke2", "ProcKindE")) != 0)
        fail_msg("apply on a: %s", planctl_errmsg(a));
    planctl_engine_free(e);
    /* Still refused: a kind nobody registered. */
    assert_int_equal(apply_def(a, KIND_DEF("n2", "ProcKindNone")),
                     PLANCTL_EDEFINITION);
    planctl_close(a);
    planctl_close(b);
    assert_int_equal(tu_db_close(f), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_release_done_and_failed),
        cmocka_unit_test(test_release_engine_stopped),
        cmocka_unit_test(test_release_v1_accepted),
        cmocka_unit_test(test_interrupt_admission_blocked),
        cmocka_unit_test(test_interrupt_preflight),
        cmocka_unit_test(test_interrupt_prepare),
        cmocka_unit_test(test_interrupt_null),
        cmocka_unit_test(test_kinds_of_the_process),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
