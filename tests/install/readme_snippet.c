/* readme_snippet.c - what the README's embedding snippet leaves to its
 * reader: the File executor and the definition.  readme_snippet.sh puts
 * this file first, then the snippet, whose statements go into main(). */
#include <stdio.h>

#include <planctl.h>

/* Reports every task done at once, saying which it was. */
static int file_start(planctl_job *job, const planctl_task_info *info,
                      void *data)
{
    (void)data;
    printf("my_file_executor: %s %s/%s/%s %s\n", info->instance, info->plan,
           info->phase, info->step, info->spec);
    fflush(stdout);
    planctl_step_finish(job, PLANCTL_OUTCOME_DONE, "written");
    return 0;
}

/* Nothing to stop: every job is reported inside file_start. */
static void file_cancel(planctl_job *job, void *data)
{
    (void)job;
    (void)data;
}

static const planctl_executor my_file_executor = {
    PLANCTL_EXECUTOR_VERSION, file_start, file_cancel, NULL, NULL};

static const char json[] =
    "{\"name\": \"zookeeper\", \"version\": \"1.0.0\",\n"
    " \"tasks\": [{\"name\": \"config\", \"kind\": \"File\",\n"
    "            \"spec\": {\"path\": \"zoo.cfg\","
    " \"content\": \"tickTime=2000\\n\"}}],\n"
    " \"plans\": {\"deploy\": {\"phases\": [{\"name\": \"config\",\n"
    "     \"steps\": [{\"name\": \"config\", \"tasks\": [\"config\"]}]}]}}}\n";
static const size_t len = sizeof json - 1;
