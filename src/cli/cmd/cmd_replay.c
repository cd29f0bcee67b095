/* cmd_replay.c - `planctl replay [NAME] [--until SEQ | --at TIME]`: the
 * state the event log alone gives, as of any event, in the shapes of
 * status and history. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

extern const cli_command cli_cmd_replay;

static const char *const pos[] = {"[NAME]", NULL};

static const cli_flag flags[] = {
    {"until", 0, CLI_FLAG_VALUE, 0, "SEQ", "replay events up to this seq"},
    {"at", 0, CLI_FLAG_VALUE, 0, "TIME",
     "replay events up to this time: as status prints it (local unless it "
     "names a zone), RFC 3339, or \"2h ago\""},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl replay zk",
    "planctl replay zk --until 1234",
    "planctl replay --at 2026-11-21T14:03:05Z -o json",
    "planctl replay zk --at \"2026-11-21 14:03:05\"",
    "planctl replay zk --at \"10m ago\"",
    NULL};

/* The active run's plan, for the tree's header. */
static const char *active_plan(const json_t *status)
{
    json_int_t active =
        json_integer_value(json_object_get(status, "active_run"));
    const json_t *plans = json_object_get(status, "plans"), *pl;
    size_t i;

    json_array_foreach(plans, i, pl)
    {
        const json_t *run = json_object_get(pl, "run");

        if (active && json_integer_value(json_object_get(run, "id")) == active)
            return json_string_value(json_object_get(pl, "name"));
    }
    return NULL;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    planctl_replay_options o = PLANCTL_REPLAY_OPTIONS_INIT;
    const char *name = a->npos > 0 ? a->pos[0] : NULL;
    const char *until = cli_arg(a, "until"), *at = cli_arg(a, "at");
    const json_t *one;
    json_t *doc;
    char *out = NULL;
    size_t i;
    int rc;

    if (until && at)
        return cli_usage_error(&cli_cmd_replay,
                               "--until and --at cannot be used together");
    if (until) {
        char *end;
        long long v = strtoll(until, &end, 10);

        if (*end || v < 1)
            return cli_usage_error(&cli_cmd_replay,
                                   "--until must be an event number (see "
                                   "'planctl events'), not \"%s\"",
                                   until);
        o.until_seq = v;
    }
    if (at && cli_time_read(&o.at_ms, ctx, at) != 0 &&
        cli_time_zone_refusal("--at", at))
        return CLI_EXIT_USAGE;
    if (at && cli_time_read(&o.at_ms, ctx, at) != 0)
        return cli_usage_error(
            &cli_cmd_replay, "--at must be " CLI_TIME_FORMS ", not \"%s\"", at);
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0)
        return rc;
    rc = planctl_replay_json(&out, ctx->db, name, &o);
    if (rc < 0)
        return cli_fail(ctx, rc);
    if (ctx->json) {
        rc = cli_json_print(out);
        planctl_free(out);
        return rc;
    }
    doc = cli_json_parse(out);
    planctl_free(out);
    if (!doc)
        return CLI_EXIT_ERROR;
    printf("replayed from the event log up to event %lld\n",
           (long long)json_integer_value(json_object_get(doc, "until_seq")));
    json_array_foreach(json_object_get(doc, "instances"), i, one)
    {
        const json_t *status = json_object_get(one, "status");
        cli_status_extra extra;

        memset(&extra, 0, sizeof extra);
        extra.active_plan = active_plan(status);
        printf("\n");
        cli_render_status(stdout, status, &ctx->term, ctx->now_ms, &extra);
        printf("\n");
        cli_render_history(stdout, json_object_get(one, "history"), &ctx->term,
                           ctx->now_ms, 0);
    }
    json_decref(doc);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_replay = {
    "replay",
    "Show what the event log alone says, as of any event",
    "[NAME] [--until SEQ | --at TIME]",
    "Rebuilds runs, phases and steps from the event log alone - not from the\n"
    "tables - as they were after event SEQ (or at TIME), for one instance or\n"
    "all, and shows them as status and history do.  Time travel for\n"
    "debugging: 'planctl events' lists the sequence numbers.  On PostgreSQL,\n"
    "where writers commit side by side, --until SEQ takes the events numbered\n"
    "up to SEQ: exact for each run, whose events are in its own order, and\n"
    "not always a moment the whole database was in.",
    pos,
    flags,
    examples,
    run};
