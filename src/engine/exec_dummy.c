/* exec_dummy.c - the Dummy executor, KUDO's test task: it reports what its
 * spec says, after an optional sleep. */
#include "engine/executors.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/def.h"

typedef struct spec {
    int done, want_err, fatal;
    int64_t sleep_ms;
    json_int_t fail_times;
} spec;

/*
 * A job with a sleep, from start() to its timer's close callback.  It is
 * attached to the job (planctl_job_set_data) only while the timer runs, so
 * that a cancel() arriving after the outcome is decided finds NULL and does
 * nothing: the engine may cancel a job whose finish is queued but not yet
 * delivered.
 */
typedef struct dummy {
    planctl_job *job;
    uv_timer_t timer;
    spec sp;
    int attempt;
    planctl_outcome outcome;
    char *message; /* owned; NULL for none */
} dummy;

/* Decodes the spec text (NULL: all defaults) into *out.  Returns 0,
 * PLANCTL_EINVAL with a message in *err (the caller frees it), or
 * PLANCTL_ENOMEM. */
static int parse(spec *out, char **err, const char *text)
{
    json_error_t jerr;
    json_t *root, *v;
    const char *key;
    int rc = 0;

    memset(out, 0, sizeof *out);
    out->done = 1;
    *err = NULL;
    /* No spec, or an empty one (a definition stores a missing spec as
     * "{}"): the defaults, without parsing JSON at every start. */
    if (!text || !strcmp(text, "{}"))
        return 0;
    root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (json_error_code(&jerr) == json_error_out_of_memory)
            return PLANCTL_ENOMEM;
        return pctl_spec_error(err, "Dummy spec", "invalid JSON: %s",
                               jerr.text);
    }
    if (!json_is_object(root)) {
        json_decref(root);
        return pctl_spec_error(err, "Dummy spec", "expected a JSON object");
    }
    json_object_foreach(root, key, v)
    {
        int *flag = !strcmp(key, "done")      ? &out->done
                    : !strcmp(key, "wantErr") ? &out->want_err
                    : !strcmp(key, "fatal")   ? &out->fatal
                                              : NULL;

        if (flag) {
            if (!json_is_boolean(v)) {
                rc = pctl_spec_error(err, "Dummy spec",
                                     "\"%s\": expected a boolean", key);
                break;
            }
            *flag = json_is_true(v);
        } else if (!strcmp(key, "sleep")) {
            if (!json_is_string(v)) {
                rc = pctl_spec_error(err, "Dummy spec",
                                     "\"sleep\": expected a duration string");
                break;
            }
            if (pctl_duration_parse(&out->sleep_ms, json_string_value(v))) {
                rc = pctl_spec_error(err, "Dummy spec",
                                     "\"sleep\": invalid duration \"%.64s\"",
                                     json_string_value(v));
                break;
            }
        } else if (!strcmp(key, "failTimes")) {
            if (!json_is_integer(v) || json_integer_value(v) < 0) {
                rc = pctl_spec_error(err, "Dummy spec",
                                     "\"failTimes\": expected an integer >= 0");
                break;
            }
            out->fail_times = json_integer_value(v);
        } else {
            rc = pctl_spec_error(err, "Dummy spec", "unknown field \"%.64s\"",
                                 key);
            break;
        }
    }
    json_decref(root);
    return rc;
}

/* The outcome the spec asks for at this attempt; *msg is NULL or owned (a
 * message that cannot be allocated is lost, not the outcome). */
static planctl_outcome decide(const spec *sp, int attempt, char **msg)
{
    *msg = NULL;
    if (attempt <= sp->fail_times) {
        *msg = pctl_asprintf("failTimes: attempt %d of the first %lld fails",
                             attempt, (long long)sp->fail_times);
        return PLANCTL_OUTCOME_ERROR;
    }
    /* As in KUDO's Dummy task, fatal only qualifies wantErr: on its own it
     * is no error at all. */
    if (sp->want_err && sp->fatal) {
        *msg = pctl_strdup("fatal: true");
        return PLANCTL_OUTCOME_FATAL;
    }
    if (sp->want_err) {
        *msg = pctl_strdup("wantErr: true");
        return PLANCTL_OUTCOME_ERROR;
    }
    if (!sp->done) {
        *msg = pctl_strdup("done: false");
        return PLANCTL_OUTCOME_NOT_DONE;
    }
    return PLANCTL_OUTCOME_DONE;
}

/* The last thing: the timer is closed, nothing of ours is left on the
 * loop, so the job can be reported and forgotten. */
static void on_closed(uv_handle_t *h)
{
    dummy *d = h->data;

    planctl_step_finish(d->job, d->outcome, d->message);
    pctl_free(d->message);
    pctl_free(d);
}

/* Detaches from the job (later cancels are no-ops) and closes the timer;
 * the finish follows from its close callback. */
static void wind_up(dummy *d)
{
    planctl_job_set_data(d->job, NULL);
    uv_close((uv_handle_t *)&d->timer, on_closed);
}

static void on_timer(uv_timer_t *t)
{
    dummy *d = t->data;

    d->outcome = decide(&d->sp, d->attempt, &d->message);
    wind_up(d);
}

static int dummy_start(planctl_job *job, const planctl_task_info *info,
                       void *data)
{
    char *msg = NULL;
    planctl_outcome o;
    dummy *d;
    spec sp;
    int rc;

    (void)data;
    rc = parse(&sp, &msg, info->spec);
    if (rc == PLANCTL_EINVAL) {
        /* A bad spec will not get better by retrying. */
        planctl_step_finish(job, PLANCTL_OUTCOME_FATAL, msg);
        pctl_free(msg);
        return 0;
    }
    if (rc < 0)
        return rc;
    if (sp.sleep_ms == 0) {
        /* No timer: the hub queues the finish, so it still reaches the
         * engine after start() has returned. */
        o = decide(&sp, info->attempt, &msg);
        planctl_step_finish(job, o, msg);
        pctl_free(msg);
        return 0;
    }
    d = pctl_calloc(1, sizeof *d);
    if (!d)
        return PLANCTL_ENOMEM;
    if (uv_timer_init(planctl_job_loop(job), &d->timer) != 0) {
        pctl_free(d); /* a timer that failed to init is not on the loop */
        return PLANCTL_ERROR;
    }
    d->job = job;
    d->sp = sp;
    d->attempt = info->attempt;
    d->timer.data = d;
    uv_timer_start(&d->timer, on_timer, (uint64_t)sp.sleep_ms, 0);
    planctl_job_set_data(job, d);
    return 0;
}

static void dummy_cancel(planctl_job *job, void *data)
{
    dummy *d = planctl_job_data(job);

    (void)data;
    if (!d)
        return; /* finished, or finishing */
    uv_timer_stop(&d->timer);
    d->outcome = PLANCTL_OUTCOME_ERROR;
    d->message = pctl_strdup("cancelled");
    wind_up(d);
}

static const planctl_executor dummy_executor = {
    PLANCTL_EXECUTOR_VERSION, dummy_start, dummy_cancel, NULL, NULL};

const planctl_executor *pctl_executor_dummy(void)
{
    return &dummy_executor;
}
