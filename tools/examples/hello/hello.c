/* hello.c - the smallest whole embedder: one task kind of its own, one
 * plan, the embedder's own libuv loop.  Build it against an installed
 * planctl and run it in an empty directory:
 *
 *   cc hello.c -o hello $(pkg-config --cflags --libs planctl)
 *   ./hello && planctl --db hello.db status world
 */
#include <stdio.h>
#include <string.h>

#include <planctl.h>
#include <uv.h>

/* The executor of kind "Greet": does its work at once and reports it. */
static int greet(planctl_job *job, const planctl_task_info *t, void *data)
{
    (void)data;
    printf("%s: %s says %s\n", t->instance, t->step, t->spec);
    return planctl_step_finish(job, PLANCTL_OUTCOME_DONE, "greeted");
}

static void cancel(planctl_job *job, void *data) /* nothing runs long */
{
    (void)job, (void)data;
}

static const planctl_executor greeter = {PLANCTL_EXECUTOR_VERSION, greet,
                                         cancel, NULL, NULL};

static const char def[] =
    "{\"name\": \"hello\", \"version\": \"1\","
    " \"tasks\": [{\"name\": \"hi\", \"kind\": \"Greet\","
    "              \"spec\": {\"words\": \"hello\"}}],"
    " \"plans\": {\"deploy\": {\"phases\": [{\"name\": \"greet\","
    "   \"strategy\": \"parallel\", \"steps\": ["
    "     {\"name\": \"first\", \"tasks\": [\"hi\"]},"
    "     {\"name\": \"second\", \"tasks\": [\"hi\"]}]}]}}}";

static void stopped(planctl_engine *e, void *data)
{
    (void)e, (void)data;
}

int main(void)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    uv_loop_t *loop = uv_default_loop(); /* yours: the engine joins it */
    planctl_engine *e = NULL;
    planctl *p;
    int64_t run;
    int rc;

    if ((rc = planctl_open(&p, "hello.db", NULL)) == 0) {
        o.until_idle = 1; /* a service leaves it 0, stops with _stop() */
        if ((rc = planctl_engine_new(&e, p, loop, &o)) == 0 &&
            (rc = planctl_engine_register(e, "Greet", &greeter)) == 0 &&
            (rc = planctl_definition_apply(NULL, p, def, strlen(def),
                                           "hello.json")) == 0 &&
            (rc = planctl_instance_create(&run, p, "world", "hello", NULL, NULL,
                                          0)) == 0 &&
            (rc = planctl_engine_start(e, stopped, NULL)) == 0)
            uv_run(loop, UV_RUN_DEFAULT); /* until the engine stopped */
    }
    if (rc < 0)
        fprintf(stderr, "hello: %s\n", planctl_errmsg(p));
    planctl_engine_free(e);
    planctl_close(p);
    return rc < 0;
}
