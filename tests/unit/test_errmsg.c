/*
 * test_errmsg.c - every refusal of the C API carries a message: each public
 * function that can fail, called with each bad input, returns its code and
 * leaves a one-line message naming the thing and its state where
 * planctl.h says it goes (the handle, the engine's handle, or the
 * thread's message when there is no handle to carry it).
 *
 * One table: a row names the call, what it is given wrong, the code it
 * must return, where the message must be and a piece of it that only
 * this refusal writes.  Before each row both messages are set to a
 * sentinel, so a row passes only on a message its own call wrote.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "core/error.h"
#include "planctl.h"
#include "store/store.h"
#include "testutil.h"

#define DEF                                                                    \
    "{\"name\": \"zookeeper\", \"version\": \"0.2.0\","                        \
    " \"parameters\": [{\"name\": \"NODES\", \"default\": \"3\"}],"            \
    " \"tasks\": [{\"name\": \"wait\", \"kind\": \"Dummy\"}],"                 \
    " \"plans\": {"                                                            \
    "   \"deploy\": {\"phases\": [{\"name\": \"a\", \"steps\": ["              \
    "     {\"name\": \"s\", \"tasks\": [\"wait\"]}]}]},"                       \
    "   \"update\": {\"phases\": [{\"name\": \"a\", \"steps\": ["              \
    "     {\"name\": \"s\", \"tasks\": [\"wait\"]}]}]}}}"

#define SENTINEL "sentinel: no message was written"

typedef struct fx {
    tu_db *db;
    planctl *p;
    uv_loop_t loop;
    char captured[512]; /* the message of a handle a row opened itself */
} fx;

static fx *F;

typedef enum where {
    HANDLE,   /* planctl_errmsg() of the fixture's handle */
    THREAD,   /* planctl_thread_errmsg() */
    CAPTURED, /* the row copied it from a handle of its own to F->captured */
} where;

typedef struct row {
    const char *call; /* "planctl_open: out NULL" */
    int (*fn)(void);
    int rc;
    where at;
    const char *want;
} row;

/* ---- inputs ---- */

static char *text_out;
static int64_t id_out;
static planctl_admitted admitted;
static const planctl_param one_param = {"NODES", "5"};
static const planctl_param unknown_param = {"NOPE", "1"};

static int write_nothing(void *data, const char *buf, size_t len)
{
    (void)buf;
    (void)len;
    (void)data;
    return 0;
}

static int read_nothing(void *data, char *buf, size_t size, size_t *got)
{
    (void)buf;
    (void)size;
    (void)data;
    *got = 0;
    return 0;
}

static int start_nothing(planctl_job *job, const planctl_task_info *info,
                         void *data)
{
    (void)info;
    (void)data;
    return planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL);
}

static void cancel_nothing(planctl_job *job, void *data)
{
    (void)job;
    (void)data;
}

/* Opens its own handle on path and keeps the message it carries. */
static int open_captured(const char *path, const planctl_open_options *o)
{
    planctl *h = NULL;
    int rc = planctl_open(&h, path, o);

    snprintf(F->captured, sizeof F->captured, "%s", planctl_errmsg(h));
    planctl_close(h);
    return rc;
}

/* ---- calls without a handle ---- */

static int status_parse_null(void)
{
    return planctl_status_parse(NULL, "PENDING");
}
static int status_parse_bad(void)
{
    planctl_status s;
    return planctl_status_parse(&s, "pending-ish");
}
static int process_init_late(void)
{
    return planctl_process_init();
}
static int check_null_json(void)
{
    return planctl_definition_check(&text_out, NULL, 0, "x.json", NULL);
}
static int check_null_out(void)
{
    return planctl_definition_check(NULL, "{}", 2, "x.json", NULL);
}
static int open_null_out(void)
{
    return planctl_open(NULL, "x.db", NULL);
}
static int open_empty_path(void)
{
    return open_captured("", NULL);
}
static int open_null_path(void)
{
    return open_captured(NULL, NULL);
}
static int open_bad_version(void)
{
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    char *path = tu_fmt("%s/other.db", F->db->dir);
    int rc;

    o.version = 99;
    rc = open_captured(path, &o);
    free(path);
    return rc;
}
static int open_absent_nocreate(void)
{
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    char *path = tu_fmt("%s/absent.db", F->db->dir);
    int rc;

    o.flags = PLANCTL_OPEN_NOCREATE;
    rc = open_captured(path, &o);
    free(path);
    return rc;
}

/* ---- the handle ---- */

static int limits_null_p(void)
{
    return planctl_set_event_limits(NULL, 0, 0);
}
static int limits_negative(void)
{
    return planctl_set_event_limits(F->p, -1, 0);
}
static int actor_null_p(void)
{
    return planctl_set_actor(NULL, "me");
}
static int actor_empty(void)
{
    return planctl_set_actor(F->p, "");
}
static int data_version_null_out(void)
{
    return planctl_data_version(NULL, F->p);
}
static int data_version_null_p(void)
{
    return planctl_data_version(&id_out, NULL);
}

/* ---- definitions ---- */

static int apply_null_p(void)
{
    return planctl_definition_apply(&text_out, NULL, DEF, strlen(DEF), "d");
}
static int apply_null_json(void)
{
    return planctl_definition_apply(&text_out, F->p, NULL, 0, "d");
}
static int apply_invalid(void)
{
    return planctl_definition_apply(&text_out, F->p, "{\"name\": 1}", 11,
                                    "bad.json");
}
static int kind_null_p(void)
{
    return planctl_kind_register(NULL, "File", NULL, NULL);
}
static int kind_null(void)
{
    return planctl_kind_register(F->p, NULL, NULL, NULL);
}
static int kind_empty(void)
{
    return planctl_kind_register(F->p, "", NULL, NULL);
}
static int definitions_null_out(void)
{
    return planctl_definitions_json(NULL, F->p);
}
static int definitions_null_p(void)
{
    return planctl_definitions_json(&text_out, NULL);
}
static int body_null_name(void)
{
    return planctl_definition_body(&text_out, F->p, NULL, NULL);
}
static int body_unknown(void)
{
    return planctl_definition_body(&text_out, F->p, "zookeepr", NULL);
}
static int body_unknown_version(void)
{
    return planctl_definition_body(&text_out, F->p, "zookeeper", "9.9.9");
}

/* ---- instances ---- */

static int create_null_p(void)
{
    return planctl_instance_create(&id_out, NULL, "x", "zookeeper", NULL, NULL,
                                   0);
}
static int create_null_out(void)
{
    return planctl_instance_create(NULL, F->p, "x", "zookeeper", NULL, NULL, 0);
}
static int create_null_name(void)
{
    return planctl_instance_create(&id_out, F->p, NULL, "zookeeper", NULL, NULL,
                                   0);
}
static int create_null_definition(void)
{
    return planctl_instance_create(&id_out, F->p, "x", NULL, NULL, NULL, 0);
}
static int create_null_params(void)
{
    return planctl_instance_create(&id_out, F->p, "x", "zookeeper", NULL, NULL,
                                   1);
}
static int create_unknown_definition(void)
{
    return planctl_instance_create(&id_out, F->p, "x", "zookeepr", NULL, NULL,
                                   0);
}
static int create_exists(void)
{
    return planctl_instance_create(&id_out, F->p, "zk", "zookeeper", NULL, NULL,
                                   0);
}
static int create_unknown_param(void)
{
    return planctl_instance_create(&id_out, F->p, "x", "zookeeper", NULL,
                                   &unknown_param, 1);
}
static int set_null_name(void)
{
    return planctl_instance_set(&id_out, F->p, NULL, &one_param, 1);
}
static int set_no_param(void)
{
    return planctl_instance_set(&id_out, F->p, "zk", NULL, 0);
}
static int set_unknown_instance(void)
{
    return planctl_instance_set(&id_out, F->p, "zq", &one_param, 1);
}
static int upgrade_null_version(void)
{
    return planctl_instance_upgrade(&id_out, F->p, "zk", NULL, NULL, 0);
}
static int upgrade_unknown_version(void)
{
    return planctl_instance_upgrade(&id_out, F->p, "zk", "9.9.9", NULL, 0);
}
static int delete_null_name(void)
{
    return planctl_instance_delete(&id_out, F->p, NULL, 0);
}
static int delete_unknown(void)
{
    return planctl_instance_delete(&id_out, F->p, "zq", 0);
}
static int delete_opts_version(void)
{
    planctl_delete_options o = PLANCTL_DELETE_OPTIONS_INIT;

    o.version = 99;
    return planctl_instance_delete_opts(&id_out, F->p, "zk", &o);
}
static int instances_null_out(void)
{
    return planctl_instances_json(NULL, F->p);
}

/* ---- runs ---- */

static int trigger_null_instance(void)
{
    return planctl_plan_trigger(&id_out, F->p, NULL, "update", NULL);
}
static int trigger_null_plan(void)
{
    return planctl_plan_trigger(&id_out, F->p, "zk", NULL, NULL);
}
static int trigger_unknown_plan(void)
{
    return planctl_plan_trigger(&id_out, F->p, "zk", "updat", NULL);
}
static int trigger_cleanup(void)
{
    return planctl_plan_trigger(&id_out, F->p, "zk", "cleanup", NULL);
}
static int trigger_busy(void)
{
    return planctl_plan_trigger(&id_out, F->p, "zk", "update", NULL);
}
static int trigger_opts_version(void)
{
    planctl_trigger_options o = PLANCTL_TRIGGER_OPTIONS_INIT;

    o.version = 99;
    return planctl_plan_trigger(&id_out, F->p, "zk", "update", &o);
}
static int retry_negative(void)
{
    return planctl_run_retry(&id_out, F->p, "zk", -3);
}
static int retry_unknown_run(void)
{
    return planctl_run_retry(&id_out, F->p, "zk", 999);
}
static int admit_create_null_out(void)
{
    return planctl_admit_create(NULL, F->p, "x", "zookeeper", NULL, NULL, 0,
                                NULL);
}
static int admit_create_opts_version(void)
{
    planctl_admit_options o = PLANCTL_ADMIT_OPTIONS_INIT;

    o.version = 99;
    return planctl_admit_create(&admitted, F->p, "x", "zookeeper", NULL, NULL,
                                0, &o);
}
static int admit_set_null_p(void)
{
    return planctl_admit_set(&admitted, NULL, "zk", &one_param, 1, NULL);
}
static int admit_upgrade_null_out(void)
{
    return planctl_admit_upgrade(NULL, F->p, "zk", "0.2.0", NULL, 0, NULL);
}
static int admit_trigger_null_out(void)
{
    return planctl_admit_trigger(NULL, F->p, "zk", "update", NULL);
}
static int admit_retry_null_instance(void)
{
    return planctl_admit_retry(&admitted, F->p, NULL, 0, NULL);
}
static int cancel_null_instance(void)
{
    return planctl_run_cancel(&id_out, F->p, NULL, NULL);
}
static int cancel_unknown(void)
{
    return planctl_run_cancel(&id_out, F->p, "zq", NULL);
}
static int pause_null_instance(void)
{
    return planctl_run_pause(&id_out, F->p, NULL);
}
static int pause_pending(void)
{
    return planctl_run_pause(&id_out, F->p, "zk");
}
static int resume_not_paused(void)
{
    return planctl_run_resume(&id_out, F->p, "zk");
}
static int transition_null_p(void)
{
    return planctl_transition(NULL, PLANCTL_ENTITY_RUN, 1,
                              PLANCTL_STATUS_PENDING,
                              PLANCTL_STATUS_IN_PROGRESS, NULL, NULL);
}
static int transition_bad_entity(void)
{
    return planctl_transition(F->p, (planctl_entity)9, 1,
                              PLANCTL_STATUS_PENDING,
                              PLANCTL_STATUS_IN_PROGRESS, NULL, NULL);
}
static int transition_bad_status(void)
{
    return planctl_transition(F->p, PLANCTL_ENTITY_RUN, 1,
                              PLANCTL_STATUS_PENDING, (planctl_status)77, NULL,
                              NULL);
}
static int transition_illegal(void)
{
    return planctl_transition(F->p, PLANCTL_ENTITY_RUN, 1,
                              PLANCTL_STATUS_PENDING, PLANCTL_STATUS_COMPLETE,
                              NULL, NULL);
}
static int transition_unknown_run(void)
{
    return planctl_transition(F->p, PLANCTL_ENTITY_RUN, 999,
                              PLANCTL_STATUS_PENDING,
                              PLANCTL_STATUS_IN_PROGRESS, NULL, NULL);
}

/* ---- documents ---- */

static int status_null_out(void)
{
    return planctl_status_json(NULL, F->p, "zk", NULL);
}
static int status_null_instance(void)
{
    return planctl_status_json(&text_out, F->p, NULL, NULL);
}
static int status_unknown(void)
{
    return planctl_status_json(&text_out, F->p, "zq", NULL);
}
static int status_unknown_run(void)
{
    planctl_status_options o = PLANCTL_STATUS_OPTIONS_INIT;

    o.run = 999;
    return planctl_status_json(&text_out, F->p, "zk", &o);
}
static int engines_null_out(void)
{
    return planctl_engines_json(NULL, F->p);
}
static int history_null_instance(void)
{
    return planctl_history_json(&text_out, F->p, NULL, NULL);
}
static int logs_null_instance(void)
{
    return planctl_logs_json(&text_out, F->p, NULL, NULL);
}
static int logs_unknown(void)
{
    return planctl_logs_json(&text_out, F->p, "zq", NULL);
}
static int logs_opts_version(void)
{
    planctl_logs_options o = PLANCTL_LOGS_OPTIONS_INIT;

    o.version = 99;
    return planctl_logs_json(&text_out, F->p, "zk", &o);
}
static int events_null_out(void)
{
    return planctl_events_json(NULL, F->p, NULL);
}
static int events_opts_version(void)
{
    planctl_events_options o = PLANCTL_EVENTS_OPTIONS_INIT;

    o.version = 99;
    return planctl_events_json(&text_out, F->p, &o);
}
static int events_unknown_instance(void)
{
    planctl_events_options o = PLANCTL_EVENTS_OPTIONS_INIT;

    o.instance = "zq";
    return planctl_events_json(&text_out, F->p, &o);
}
static int web_null_req(void)
{
    planctl_web_response r;
    return planctl_web_respond(&r, F->p, NULL, NULL);
}
static int web_null_out(void)
{
    planctl_web_request q = PLANCTL_WEB_REQUEST_INIT;
    return planctl_web_respond(NULL, F->p, &q, NULL);
}
static int web_request_version(void)
{
    planctl_web_request q = PLANCTL_WEB_REQUEST_INIT;
    planctl_web_response r;

    q.version = 99;
    return planctl_web_respond(&r, F->p, &q, NULL);
}
static int web_null_target(void)
{
    planctl_web_request q = PLANCTL_WEB_REQUEST_INIT;
    planctl_web_response r;

    q.target = NULL;
    return planctl_web_respond(&r, F->p, &q, NULL);
}
static int web_options_version(void)
{
    planctl_web_request q = PLANCTL_WEB_REQUEST_INIT;
    planctl_web_options o = PLANCTL_WEB_OPTIONS_INIT;
    planctl_web_response r;

    o.version = 99;
    return planctl_web_respond(&r, F->p, &q, &o);
}
static int replay_null_out(void)
{
    return planctl_replay_json(NULL, F->p, NULL, NULL);
}
static int replay_unknown(void)
{
    return planctl_replay_json(&text_out, F->p, "zq", NULL);
}
static int verify_null_out(void)
{
    return planctl_verify(NULL, F->p);
}
static int gc_null_out(void)
{
    return planctl_gc(NULL, F->p, NULL);
}
static int gc_opts_version(void)
{
    planctl_gc_options o = PLANCTL_GC_OPTIONS_INIT;

    o.version = 99;
    return planctl_gc(&text_out, F->p, &o);
}

/* ---- export and import ---- */

static int export_json_null_instance(void)
{
    return planctl_export_json(&text_out, F->p, NULL);
}
static int export_json_unknown(void)
{
    return planctl_export_json(&text_out, F->p, "zq");
}
static int export_stream_null_write(void)
{
    return planctl_export_stream(F->p, "zk", NULL, NULL);
}
static int export_opts_version(void)
{
    planctl_export_options o = PLANCTL_EXPORT_OPTIONS_INIT;

    o.version = 99;
    return planctl_export(&text_out, F->p, "zk", &o);
}
static int export_stream_opts_null_instance(void)
{
    return planctl_export_stream_opts(F->p, NULL, NULL, write_nothing, NULL);
}
static int import_json_null_bundle(void)
{
    return planctl_import_json(&text_out, F->p, NULL, 0, NULL);
}
static int import_json_not_bundle(void)
{
    return planctl_import_json(&text_out, F->p, "{}", 2, NULL);
}
static int import_opts_version(void)
{
    planctl_import_options o = PLANCTL_IMPORT_OPTIONS_INIT;

    o.version = 99;
    return planctl_import(&text_out, F->p, "{}", 2, &o);
}
static int import_stream_null_opts(void)
{
    return planctl_import_stream(&text_out, F->p, NULL, read_nothing, NULL);
}
static int import_stream_null_read(void)
{
    planctl_import_options o = PLANCTL_IMPORT_OPTIONS_INIT;
    return planctl_import_stream(&text_out, F->p, &o, NULL, NULL);
}

/* ---- the engine ---- */

static const planctl_executor ex_ok = {PLANCTL_EXECUTOR_VERSION, start_nothing,
                                       cancel_nothing, NULL, NULL};

/* Runs call(e) on a new engine of the fixture's handle, then frees it. */
static int with_engine(int (*call)(planctl_engine *e))
{
    planctl_engine *e = NULL;
    int rc;

    assert_int_equal(planctl_engine_new(&e, F->p, &F->loop, NULL), 0);
    rc = call(e);
    planctl_engine_free(e);
    return rc;
}

static int new_null_out(void)
{
    return planctl_engine_new(NULL, F->p, &F->loop, NULL);
}
static int new_null_p(void)
{
    planctl_engine *e;
    return planctl_engine_new(&e, NULL, &F->loop, NULL);
}
/* An engine made with no loop has one of its own, which only
 * planctl_engine_run() may start. */
static int start_own_loop(void)
{
    planctl_engine *e;
    int rc = planctl_engine_new(&e, F->p, NULL, NULL);

    if (rc == 0) {
        rc = planctl_engine_start(e, NULL, NULL);
        planctl_engine_free(e);
    }
    return rc;
}
static int new_opts_version(void)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_engine *e;

    o.version = 99;
    return planctl_engine_new(&e, F->p, &F->loop, &o);
}
static int new_capacity(void)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_engine *e;

    o.capacity = -1;
    return planctl_engine_new(&e, F->p, &F->loop, &o);
}
static int new_output_size(void)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    planctl_engine *e;

    o.output_size = 1 << 30;
    return planctl_engine_new(&e, F->p, &F->loop, &o);
}
static int reg_no_cancel_(planctl_engine *e)
{
    planctl_executor x = ex_ok;

    x.cancel = NULL;
    return planctl_engine_register(e, "File", &x);
}
static int reg_no_cancel(void)
{
    return with_engine(reg_no_cancel_);
}
static int reg_no_start_(planctl_engine *e)
{
    planctl_executor x = ex_ok;

    x.start = NULL;
    return planctl_engine_register(e, "File", &x);
}
static int reg_no_start(void)
{
    return with_engine(reg_no_start_);
}
static int reg_version0_(planctl_engine *e)
{
    planctl_executor x = ex_ok;

    x.version = 0;
    return planctl_engine_register(e, "File", &x);
}
static int reg_version0(void)
{
    return with_engine(reg_version0_);
}
static int reg_null_kind_(planctl_engine *e)
{
    return planctl_engine_register(e, NULL, &ex_ok);
}
static int reg_null_kind(void)
{
    return with_engine(reg_null_kind_);
}
static int reg_empty_kind_(planctl_engine *e)
{
    return planctl_engine_register(e, "", &ex_ok);
}
static int reg_empty_kind(void)
{
    return with_engine(reg_empty_kind_);
}
static int reg_null_ex_(planctl_engine *e)
{
    return planctl_engine_register(e, "File", NULL);
}
static int reg_null_ex(void)
{
    return with_engine(reg_null_ex_);
}
static int reg_null_engine(void)
{
    return planctl_engine_register(NULL, "File", &ex_ok);
}
static int start_null(void)
{
    return planctl_engine_start(NULL, NULL, NULL);
}
static int stop_never_started_(planctl_engine *e)
{
    return planctl_engine_stop(e, 0);
}
static int stop_never_started(void)
{
    return with_engine(stop_never_started_);
}
static int stop_null(void)
{
    return planctl_engine_stop(NULL, 0);
}
static int status_null(void)
{
    return planctl_engine_status(NULL);
}
static int metrics_null_out_(planctl_engine *e)
{
    return planctl_engine_metrics(NULL, e);
}
static int metrics_null_out(void)
{
    return with_engine(metrics_null_out_);
}
static int metrics_null_engine(void)
{
    return planctl_engine_metrics(&text_out, NULL);
}
static int logger_bad_level_(planctl_engine *e)
{
    return planctl_engine_set_logger(e, (planctl_log_level)9, NULL, NULL);
}
static int logger_bad_level(void)
{
    return with_engine(logger_bad_level_);
}
static int logger_null(void)
{
    return planctl_engine_set_logger(NULL, PLANCTL_LOG_INFO, NULL, NULL);
}

/* ---- jobs (from any thread: the thread's message) ---- */

static int finish_null(void)
{
    return planctl_step_finish(NULL, PLANCTL_OUTCOME_DONE, NULL);
}
static int add_output_null(void)
{
    return planctl_job_add_output(NULL, "K", "v", 0);
}
static int set_output_null(void)
{
    return planctl_job_set_output(NULL, 0, "x");
}

static const row rows[] = {
    {"planctl_status_parse: out NULL", status_parse_null, PLANCTL_EINVAL,
     THREAD, "missing argument: out is NULL"},
    {"planctl_status_parse: unknown text", status_parse_bad, PLANCTL_EINVAL,
     THREAD, "status \"pending-ish\" is not"},
    {"planctl_process_init: after SQLite started", process_init_late,
     PLANCTL_EBUSY, THREAD, "already initialised"},
    {"planctl_definition_check: json NULL", check_null_json, PLANCTL_EINVAL,
     THREAD, "missing argument: json is NULL"},
    {"planctl_definition_check: out NULL", check_null_out, PLANCTL_EINVAL,
     THREAD, "missing argument: out is NULL"},
    {"planctl_open: out NULL", open_null_out, PLANCTL_EINVAL, THREAD,
     "missing argument: out is NULL"},
    {"planctl_open: path empty", open_empty_path, PLANCTL_EINVAL, CAPTURED,
     "path is empty"},
    {"planctl_open: path NULL", open_null_path, PLANCTL_EINVAL, CAPTURED,
     "path is empty"},
    {"planctl_open: options version", open_bad_version, PLANCTL_EINVAL,
     CAPTURED, "version 99"},
    {"planctl_open: absent with NOCREATE", open_absent_nocreate,
     PLANCTL_ENOTFOUND, CAPTURED, "absent.db does not exist"},

    {"planctl_set_event_limits: p NULL", limits_null_p, PLANCTL_EINVAL, THREAD,
     "missing argument: p is NULL"},
    {"planctl_set_event_limits: negative", limits_negative, PLANCTL_EINVAL,
     HANDLE, "must not be negative"},
    {"planctl_set_actor: p NULL", actor_null_p, PLANCTL_EINVAL, THREAD,
     "missing argument: p is NULL"},
    {"planctl_set_actor: empty", actor_empty, PLANCTL_EINVAL, HANDLE,
     "an actor is 1 to 128 bytes"},
    {"planctl_data_version: out NULL", data_version_null_out, PLANCTL_EINVAL,
     HANDLE, "missing argument: out is NULL"},
    {"planctl_data_version: p NULL", data_version_null_p, PLANCTL_EINVAL,
     THREAD, "missing argument: p is NULL"},

    {"planctl_definition_apply: p NULL", apply_null_p, PLANCTL_EINVAL, THREAD,
     "missing argument: p is NULL"},
    {"planctl_definition_apply: json NULL", apply_null_json, PLANCTL_EINVAL,
     HANDLE, "missing argument: json is NULL"},
    {"planctl_definition_apply: invalid", apply_invalid, PLANCTL_EDEFINITION,
     HANDLE, "bad.json"},
    {"planctl_kind_register: p NULL", kind_null_p, PLANCTL_EINVAL, THREAD,
     "missing argument: p is NULL"},
    {"planctl_kind_register: kind NULL", kind_null, PLANCTL_EINVAL, HANDLE,
     "missing argument: kind is NULL"},
    {"planctl_kind_register: kind empty", kind_empty, PLANCTL_EINVAL, HANDLE,
     "invalid task kind"},
    {"planctl_definitions_json: out NULL", definitions_null_out, PLANCTL_EINVAL,
     HANDLE, "missing argument: out is NULL"},
    {"planctl_definitions_json: p NULL", definitions_null_p, PLANCTL_EINVAL,
     THREAD, "missing argument: p is NULL"},
    {"planctl_definition_body: name NULL", body_null_name, PLANCTL_EINVAL,
     HANDLE, "missing argument: name is NULL"},
    {"planctl_definition_body: unknown", body_unknown, PLANCTL_ENOTFOUND,
     HANDLE, "definition \"zookeepr\" is not registered"},
    {"planctl_definition_body: unknown version", body_unknown_version,
     PLANCTL_ENOTFOUND, HANDLE, "zookeeper@9.9.9 is not registered"},

    {"planctl_instance_create: p NULL", create_null_p, PLANCTL_EINVAL, THREAD,
     "missing argument: p is NULL"},
    {"planctl_instance_create: out NULL", create_null_out, PLANCTL_EINVAL,
     HANDLE, "missing argument: out is NULL"},
    {"planctl_instance_create: name NULL", create_null_name, PLANCTL_EINVAL,
     HANDLE, "missing argument: name is NULL"},
    {"planctl_instance_create: definition NULL", create_null_definition,
     PLANCTL_EINVAL, HANDLE, "missing argument: definition is NULL"},
    {"planctl_instance_create: params NULL", create_null_params, PLANCTL_EINVAL,
     HANDLE, "missing argument: params is NULL"},
    {"planctl_instance_create: unknown definition", create_unknown_definition,
     PLANCTL_ENOTFOUND, HANDLE, "definition \"zookeepr\" is not registered"},
    {"planctl_instance_create: exists", create_exists, PLANCTL_ECONFLICT,
     HANDLE, "\"zk\" already exists"},
    {"planctl_instance_create: unknown parameter", create_unknown_param,
     PLANCTL_EINVAL, HANDLE, "NOPE"},
    {"planctl_instance_set: name NULL", set_null_name, PLANCTL_EINVAL, HANDLE,
     "missing argument: name is NULL"},
    {"planctl_instance_set: no parameter", set_no_param, PLANCTL_EINVAL, HANDLE,
     "no parameter given"},
    {"planctl_instance_set: unknown instance", set_unknown_instance,
     PLANCTL_ENOTFOUND, HANDLE, "instance \"zq\" not found"},
    {"planctl_instance_upgrade: version NULL", upgrade_null_version,
     PLANCTL_EINVAL, HANDLE, "missing argument: version is NULL"},
    {"planctl_instance_upgrade: unknown version", upgrade_unknown_version,
     PLANCTL_ENOTFOUND, HANDLE, "zookeeper@9.9.9 is not registered"},
    {"planctl_instance_delete: name NULL", delete_null_name, PLANCTL_EINVAL,
     HANDLE, "missing argument: name is NULL"},
    {"planctl_instance_delete: unknown", delete_unknown, PLANCTL_ENOTFOUND,
     HANDLE, "instance \"zq\" not found"},
    {"planctl_instance_delete_opts: options version", delete_opts_version,
     PLANCTL_EINVAL, HANDLE, "version 99"},
    {"planctl_instances_json: out NULL", instances_null_out, PLANCTL_EINVAL,
     HANDLE, "missing argument: out is NULL"},

    {"planctl_plan_trigger: instance NULL", trigger_null_instance,
     PLANCTL_EINVAL, HANDLE, "missing argument: instance is NULL"},
    {"planctl_plan_trigger: plan NULL", trigger_null_plan, PLANCTL_EINVAL,
     HANDLE, "missing argument: plan is NULL"},
    {"planctl_plan_trigger: unknown plan", trigger_unknown_plan,
     PLANCTL_ENOTFOUND, HANDLE, "has no plan \"updat\""},
    {"planctl_plan_trigger: cleanup", trigger_cleanup, PLANCTL_EINVAL, HANDLE,
     "plan \"cleanup\" runs only"},
    {"planctl_plan_trigger: a run is active", trigger_busy, PLANCTL_ECONFLICT,
     HANDLE, "zk"},
    {"planctl_plan_trigger: options version", trigger_opts_version,
     PLANCTL_EINVAL, HANDLE, "trigger options of version 99"},
    {"planctl_run_retry: negative run", retry_negative, PLANCTL_EINVAL, HANDLE,
     "run_id -3 is negative"},
    {"planctl_run_retry: unknown run", retry_unknown_run, PLANCTL_ENOTFOUND,
     HANDLE, "run 999"},
    {"planctl_admit_create: out NULL", admit_create_null_out, PLANCTL_EINVAL,
     HANDLE, "missing argument: out is NULL"},
    {"planctl_admit_create: options version", admit_create_opts_version,
     PLANCTL_EINVAL, HANDLE, "version 99"},
    {"planctl_admit_set: p NULL", admit_set_null_p, PLANCTL_EINVAL, THREAD,
     "missing argument: p is NULL"},
    {"planctl_admit_upgrade: out NULL", admit_upgrade_null_out, PLANCTL_EINVAL,
     HANDLE, "missing argument: out is NULL"},
    {"planctl_admit_trigger: out NULL", admit_trigger_null_out, PLANCTL_EINVAL,
     HANDLE, "missing argument: out is NULL"},
    {"planctl_admit_retry: instance NULL", admit_retry_null_instance,
     PLANCTL_EINVAL, HANDLE, "missing argument: instance is NULL"},
    {"planctl_run_cancel: instance NULL", cancel_null_instance, PLANCTL_EINVAL,
     HANDLE, "missing argument: instance is NULL"},
    {"planctl_run_cancel: unknown", cancel_unknown, PLANCTL_ENOTFOUND, HANDLE,
     "instance \"zq\" not found"},
    {"planctl_run_pause: instance NULL", pause_null_instance, PLANCTL_EINVAL,
     HANDLE, "missing argument: instance is NULL"},
    {"planctl_run_pause: run not in progress", pause_pending, PLANCTL_ECONFLICT,
     HANDLE, "PENDING"},
    {"planctl_run_resume: run not paused", resume_not_paused, PLANCTL_ECONFLICT,
     HANDLE, "PENDING"},
    {"planctl_transition: p NULL", transition_null_p, PLANCTL_EINVAL, THREAD,
     "missing argument: p is NULL"},
    {"planctl_transition: bad entity", transition_bad_entity, PLANCTL_EINVAL,
     HANDLE, "entity 9 is not an entity"},
    {"planctl_transition: bad status", transition_bad_status, PLANCTL_EINVAL,
     HANDLE, "to 77 is not a status"},
    {"planctl_transition: illegal", transition_illegal, PLANCTL_ETRANSITION,
     HANDLE, "cannot go from PENDING to COMPLETE"},
    {"planctl_transition: unknown run", transition_unknown_run,
     PLANCTL_ENOTFOUND, HANDLE, "999"},

    {"planctl_status_json: out NULL", status_null_out, PLANCTL_EINVAL, HANDLE,
     "missing argument: out is NULL"},
    {"planctl_status_json: instance NULL", status_null_instance, PLANCTL_EINVAL,
     HANDLE, "missing argument: instance is NULL"},
    {"planctl_status_json: unknown", status_unknown, PLANCTL_ENOTFOUND, HANDLE,
     "instance \"zq\" not found"},
    {"planctl_status_json: unknown run", status_unknown_run, PLANCTL_ENOTFOUND,
     HANDLE, "run 999 not found"},
    {"planctl_engines_json: out NULL", engines_null_out, PLANCTL_EINVAL, HANDLE,
     "missing argument: out is NULL"},
    {"planctl_history_json: instance NULL", history_null_instance,
     PLANCTL_EINVAL, HANDLE, "missing argument: instance is NULL"},
    {"planctl_logs_json: instance NULL", logs_null_instance, PLANCTL_EINVAL,
     HANDLE, "missing argument: instance is NULL"},
    {"planctl_logs_json: unknown", logs_unknown, PLANCTL_ENOTFOUND, HANDLE,
     "instance \"zq\" not found"},
    {"planctl_logs_json: options version", logs_opts_version, PLANCTL_EINVAL,
     HANDLE, "logs options: version must be 1"},
    {"planctl_events_json: out NULL", events_null_out, PLANCTL_EINVAL, HANDLE,
     "missing argument: out is NULL"},
    {"planctl_events_json: options version", events_opts_version,
     PLANCTL_EINVAL, HANDLE, "version 99"},
    {"planctl_events_json: unknown instance", events_unknown_instance,
     PLANCTL_ENOTFOUND, HANDLE, "instance \"zq\" not found"},
    {"planctl_web_respond: req NULL", web_null_req, PLANCTL_EINVAL, HANDLE,
     "missing argument: req is NULL"},
    {"planctl_web_respond: out NULL", web_null_out, PLANCTL_EINVAL, HANDLE,
     "missing argument: out is NULL"},
    {"planctl_web_respond: request version", web_request_version,
     PLANCTL_EINVAL, HANDLE, "web request of version 99"},
    {"planctl_web_respond: target NULL", web_null_target, PLANCTL_EINVAL,
     HANDLE, "missing argument: req->target is NULL"},
    {"planctl_web_respond: options version", web_options_version,
     PLANCTL_EINVAL, HANDLE, "web options of version 99"},
    {"planctl_replay_json: out NULL", replay_null_out, PLANCTL_EINVAL, HANDLE,
     "missing argument: out is NULL"},
    {"planctl_replay_json: unknown", replay_unknown, PLANCTL_ENOTFOUND, HANDLE,
     "\"zq\""},
    {"planctl_verify: out NULL", verify_null_out, PLANCTL_EINVAL, HANDLE,
     "missing argument: out is NULL"},
    {"planctl_gc: out NULL", gc_null_out, PLANCTL_EINVAL, HANDLE,
     "missing argument: out is NULL"},
    {"planctl_gc: options version", gc_opts_version, PLANCTL_EINVAL, HANDLE,
     "gc options: version must be 1 or 2"},

    {"planctl_export_json: instance NULL", export_json_null_instance,
     PLANCTL_EINVAL, HANDLE, "missing argument: instance is NULL"},
    {"planctl_export_json: unknown", export_json_unknown, PLANCTL_ENOTFOUND,
     HANDLE, "instance \"zq\" not found"},
    {"planctl_export_stream: write NULL", export_stream_null_write,
     PLANCTL_EINVAL, HANDLE, "missing argument: write is NULL"},
    {"planctl_export: options version", export_opts_version, PLANCTL_EINVAL,
     HANDLE, "version 99"},
    {"planctl_export_stream_opts: instance NULL",
     export_stream_opts_null_instance, PLANCTL_EINVAL, HANDLE,
     "missing argument: instance is NULL"},
    {"planctl_import_json: bundle NULL", import_json_null_bundle,
     PLANCTL_EINVAL, HANDLE, "missing argument: bundle is NULL"},
    {"planctl_import_json: not a bundle", import_json_not_bundle,
     PLANCTL_EINVAL, HANDLE, "not a planctl bundle"},
    {"planctl_import: options version", import_opts_version, PLANCTL_EINVAL,
     HANDLE, "version 99"},
    {"planctl_import_stream: opts NULL", import_stream_null_opts,
     PLANCTL_EINVAL, HANDLE, "missing argument: opts is NULL"},
    {"planctl_import_stream: read NULL", import_stream_null_read,
     PLANCTL_EINVAL, HANDLE, "missing argument: read is NULL"},

    {"planctl_engine_new: out NULL", new_null_out, PLANCTL_EINVAL, HANDLE,
     "missing argument: out is NULL"},
    {"planctl_engine_new: p NULL", new_null_p, PLANCTL_EINVAL, THREAD,
     "missing argument: p is NULL"},
    {"planctl_engine_start: own loop", start_own_loop, PLANCTL_EINVAL, HANDLE,
     "the engine has a loop of its own"},
    {"planctl_engine_new: options version", new_opts_version, PLANCTL_EINVAL,
     HANDLE, "version 99"},
    {"planctl_engine_new: negative capacity", new_capacity, PLANCTL_EINVAL,
     HANDLE, "capacity of -1 runs"},
    {"planctl_engine_new: output size", new_output_size, PLANCTL_EINVAL, HANDLE,
     "output size of 1073741824 bytes"},
    {"planctl_engine_register: no cancel", reg_no_cancel, PLANCTL_EINVAL,
     HANDLE, "\"File\" has no cancel function"},
    {"planctl_engine_register: no start", reg_no_start, PLANCTL_EINVAL, HANDLE,
     "\"File\" has no start function"},
    {"planctl_engine_register: version 0", reg_version0, PLANCTL_EINVAL, HANDLE,
     "\"File\" has version 0"},
    {"planctl_engine_register: kind NULL", reg_null_kind, PLANCTL_EINVAL,
     HANDLE, "missing argument: kind is NULL"},
    {"planctl_engine_register: kind empty", reg_empty_kind, PLANCTL_EINVAL,
     HANDLE, "invalid task kind"},
    {"planctl_engine_register: ex NULL", reg_null_ex, PLANCTL_EINVAL, HANDLE,
     "missing argument: ex is NULL"},
    {"planctl_engine_register: engine NULL", reg_null_engine, PLANCTL_EINVAL,
     THREAD, "missing argument: e is NULL"},
    {"planctl_engine_start: engine NULL", start_null, PLANCTL_EINVAL, THREAD,
     "missing argument: e is NULL"},
    {"planctl_engine_stop: never started", stop_never_started, PLANCTL_EINVAL,
     HANDLE, "never started"},
    {"planctl_engine_stop: engine NULL", stop_null, PLANCTL_EINVAL, THREAD,
     "missing argument: e is NULL"},
    {"planctl_engine_status: engine NULL", status_null, PLANCTL_EINVAL, THREAD,
     "missing argument: e is NULL"},
    {"planctl_engine_metrics: out NULL", metrics_null_out, PLANCTL_EINVAL,
     HANDLE, "missing argument: out is NULL"},
    {"planctl_engine_metrics: engine NULL", metrics_null_engine, PLANCTL_EINVAL,
     THREAD, "missing argument: e is NULL"},
    {"planctl_engine_set_logger: bad level", logger_bad_level, PLANCTL_EINVAL,
     HANDLE, "log level 9 is not a level"},
    {"planctl_engine_set_logger: engine NULL", logger_null, PLANCTL_EINVAL,
     THREAD, "missing argument: e is NULL"},

    {"planctl_step_finish: job NULL", finish_null, PLANCTL_EINVAL, THREAD,
     "missing argument: job is NULL"},
    {"planctl_job_add_output: job NULL", add_output_null, PLANCTL_EINVAL,
     THREAD, "missing argument: job is NULL"},
    {"planctl_job_set_output: job NULL", set_output_null, PLANCTL_EINVAL,
     THREAD, "missing argument: job is NULL"},
};

static int setup(void **state)
{
    (void)state;
    F = calloc(1, sizeof *F);
    assert_non_null(F);
    F->db = tu_db_open("errmsg.db", 0);
    F->p = F->db->p;
    assert_int_equal(uv_loop_init(&F->loop), 0);
    tu_apply(F->p, DEF);
    tu_create(F->p, "zk", "zookeeper");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(uv_loop_close(&F->loop), 0);
    assert_int_equal(tu_db_close(F->db), 0);
    free(F);
    return 0;
}

static void test_every_refusal_has_a_message(void **state)
{
    size_t i, failed = 0;

    (void)state;
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *r = &rows[i];
        const char *msg;
        int rc;

        pctl_err(F->p, 0, SENTINEL);
        pctl_thread_err(0, SENTINEL);
        snprintf(F->captured, sizeof F->captured, SENTINEL);
        text_out = NULL;
        rc = r->fn();
        planctl_free(text_out);
        planctl_admitted_clear(&admitted);
        msg = r->at == HANDLE   ? planctl_errmsg(F->p)
              : r->at == THREAD ? planctl_thread_errmsg()
                                : F->captured;
        if (rc != r->rc || !strstr(msg, r->want) || strchr(msg, '\n')) {
            fprintf(stderr, "%s: got %s \"%s\", want %s with \"%s\"\n", r->call,
                    planctl_errname(rc), msg, planctl_errname(r->rc), r->want);
            failed++;
        }
    }
    assert_int_equal(failed, 0);
}

/* ---- a job's refusals, from inside a real engine ---- */

typedef struct probe {
    int rc_key, rc_null, rc_twice, rc_set_after;
    char msg_key[256], msg_null[256], msg_twice[256], msg_set_after[256];
} probe;

static void keep(int *rc_out, char *msg_out, int rc)
{
    *rc_out = rc;
    snprintf(msg_out, 256, "%s", planctl_thread_errmsg());
}

static int probe_start(planctl_job *job, const planctl_task_info *info,
                       void *data)
{
    probe *pr = data;

    if (info->attempt > 1) /* the bad output failed the first try */
        return planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL);
    keep(&pr->rc_key, pr->msg_key, planctl_job_add_output(job, "1x", "v", 0));
    keep(&pr->rc_null, pr->msg_null, planctl_job_add_output(job, "K", NULL, 0));
    planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL);
    /* The job is the engine's now, but it is only freed once the loop
     * drains the report, after start() returns. */
    keep(&pr->rc_twice, pr->msg_twice,
         planctl_step_finish(job, PLANCTL_OUTCOME_DONE, NULL));
    keep(&pr->rc_set_after, pr->msg_set_after,
         planctl_job_set_output(job, 0, "late"));
    return 0;
}

static void stopped(planctl_engine *e, void *data)
{
    (void)e;
    *(int *)data = 1;
}

static void test_job_refusals(void **state)
{
    static const char probe_def[] =
        "{\"name\": \"probe\", \"version\": \"1\","
        " \"tasks\": [{\"name\": \"t\", \"kind\": \"Probe\"}],"
        " \"plans\": {\"deploy\": {\"phases\": [{\"name\": \"a\","
        " \"steps\": [{\"name\": \"s\", \"tasks\": [\"t\"]}]}]}}}";
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    probe pr;
    planctl_executor x = {PLANCTL_EXECUTOR_VERSION, probe_start, cancel_nothing,
                          &pr, NULL};
    planctl_engine *e;
    int done = 0;
    tu_db *db = tu_db_open("jobs.db", 0);

    (void)state;
    memset(&pr, 0, sizeof pr);
    o.until_idle = 1;
    o.change_poll_ms = 20;
    assert_int_equal(planctl_engine_new(&e, db->p, &F->loop, &o), 0);
    assert_int_equal(planctl_engine_register(e, "Probe", &x), 0);
    tu_apply(db->p, probe_def);
    tu_create(db->p, "pr", "probe");
    assert_int_equal(planctl_engine_start(e, stopped, &done), 0);
    /* A second start is refused on the engine's handle. */
    pctl_err(db->p, 0, SENTINEL);
    assert_int_equal(planctl_engine_start(e, stopped, &done), PLANCTL_EINVAL);
    assert_non_null(strstr(planctl_errmsg(db->p), "started already"));
    uv_run(&F->loop, UV_RUN_DEFAULT);
    assert_true(done);
    planctl_engine_free(e);
    assert_int_equal(tu_db_close(db), 0);

    assert_int_equal(pr.rc_key, PLANCTL_EINVAL);
    assert_non_null(strstr(pr.msg_key, "1x"));
    assert_int_equal(pr.rc_null, PLANCTL_EINVAL);
    assert_string_equal(pr.msg_null, "missing argument: value is NULL");
    assert_int_equal(pr.rc_twice, PLANCTL_EINVAL);
    assert_non_null(strstr(pr.msg_twice, "already reported"));
    assert_int_equal(pr.rc_set_after, PLANCTL_EINVAL);
    assert_non_null(strstr(pr.msg_set_after, "already reported"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_refusal_has_a_message),
        cmocka_unit_test(test_job_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
