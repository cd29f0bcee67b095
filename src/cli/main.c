/*
 * main.c - the planctl command-line tool: the command table, the global
 * flags and the clock, then the command itself (which opens the database
 * once its arguments are checked).
 *
 * Adding a command is one entry in CLI_COMMANDS and one cmd/cmd_<verb>.c that
 * defines cli_cmd_<verb>.  The table's order is the order of `--help`.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/timefmt.h"
#include "store/store.h"

#define CLI_COMMANDS(X)                                                        \
    X(validate)                                                                \
    X(explain)                                                                 \
    X(apply)                                                                   \
    X(definitions)                                                             \
    X(create)                                                                  \
    X(set)                                                                     \
    X(upgrade)                                                                 \
    X(delete)                                                                  \
    X(instances)                                                               \
    X(trigger)                                                                 \
    X(cancel)                                                                  \
    X(pause)                                                                   \
    X(resume)                                                                  \
    X(retry)                                                                   \
    X(status)                                                                  \
    X(history)                                                                 \
    X(events)                                                                  \
    X(logs)                                                                    \
    X(run)                                                                     \
    X(engines)                                                                 \
    X(serve)                                                                   \
    X(replay)                                                                  \
    X(verify)                                                                  \
    X(export)                                                                  \
    X(import)                                                                  \
    X(gc)                                                                      \
    X(completion)                                                              \
    X(help)

#define CLI_DECLARE_(verb) extern const cli_command cli_cmd_##verb;
CLI_COMMANDS(CLI_DECLARE_)
#undef CLI_DECLARE_

#define CLI_ENTRY_(verb) &cli_cmd_##verb,
static const cli_command *const cli_commands[] = {CLI_COMMANDS(CLI_ENTRY_)};
#undef CLI_ENTRY_

static const size_t cli_ncommands =
    sizeof(cli_commands) / sizeof(cli_commands[0]);

/* PLANCTL_NOW pins "now" for reproducible output (tests, docs): the
 * library records it and the CLI measures durations to it. */
static int setup_now(cli_ctx *ctx)
{
    const char *env = getenv("PLANCTL_NOW");
    if (env && env[0]) {
        char *end;
        errno = 0;
        long long v = strtoll(env, &end, 10);
        int is_int = (env[0] == '-' || (env[0] >= '0' && env[0] <= '9')) &&
                     !*end && !errno;
        if (is_int) {
            ctx->now_ms = v;
        } else if (pctl_time_read(&ctx->now_ms, env, NULL) != 0) {
            cli_errorf("invalid PLANCTL_NOW \"%s\"; expected a time such as "
                       "2026-11-21T14:03:05Z or \"2026-11-21 14:03:05\" "
                       "(local), or milliseconds since the epoch",
                       env);
            return CLI_EXIT_USAGE;
        }
        ctx->fixed_now = 1;
        return 0;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ctx->now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    return 0;
}

/* PLANCTL_DURABILITY: normal (the default) or full, for every command's
 * connection (each commits its own writes). */
static int setup_durability(cli_ctx *ctx)
{
    const char *env = getenv("PLANCTL_DURABILITY");

    if (!env || !env[0] || strcmp(env, "normal") == 0)
        return 0;
    if (strcmp(env, "full") == 0) {
        ctx->durability_full = 1;
        return 0;
    }
    cli_errorf("invalid PLANCTL_DURABILITY \"%s\"; expected normal or full",
               env);
    return CLI_EXIT_USAGE;
}

/* Whether cmd has an -o of its own (events, which also takes jsonl). */
static int has_own_output(const cli_command *cmd)
{
    for (size_t i = 0; cmd->flags && cmd->flags[i].name; i++)
        if (strcmp(cmd->flags[i].name, "output") == 0)
            return 1;
    return 0;
}

static int run(cli_ctx *ctx, const cli_globals *g, const cli_args *a)
{
    if (g->version) {
        const char *lib = planctl_libversion();
        if (strcmp(lib, PLANCTL_VERSION) == 0)
            printf("planctl %s\n", PLANCTL_VERSION);
        else
            printf("planctl %s (library %s)\n", PLANCTL_VERSION, lib);
        return CLI_EXIT_OK;
    }
    if (g->help) {
        if (a->cmd)
            cli_help_command(stdout, a->cmd);
        else
            cli_help_global(stdout, cli_commands, cli_ncommands);
        return CLI_EXIT_OK;
    }
    if (!a->cmd) {
        cli_help_global(stderr, cli_commands, cli_ncommands);
        return CLI_EXIT_USAGE;
    }

    /* A command with an -o of its own (events: jsonl too) judges the
     * global value itself. */
    ctx->output = g->output;
    if (g->output && strcmp(g->output, "json") == 0) {
        ctx->json = 1;
    } else if (g->output && strcmp(g->output, "yaml") == 0) {
        ctx->json = 1;
        cli_output_yaml();
    } else if (g->output && strcmp(g->output, "text") != 0 &&
               !has_own_output(a->cmd)) {
        cli_errorf(
            "invalid output format \"%s\"; expected text, json or yaml%s",
            g->output,
            strcmp(g->output, "jsonl") == 0
                ? " (jsonl is for the stream of 'planctl events')"
                : "");
        return CLI_EXIT_USAGE;
    }
    const char *env_db = getenv("PLANCTL_DB");
    ctx->db_target = g->db                 ? g->db
                     : env_db && env_db[0] ? env_db
                                           : "./planctl.db";
    /* Every message that names the database shows it without a
     * password; only planctl_open() gets the URI as given. */
    char *shown = pctl_uri_shown(ctx->db_target);
    if (!shown)
        cli_oom();
    ctx->db_path = shown;
    int rc = setup_now(ctx);
    if (rc == 0)
        rc = setup_durability(ctx);
    if (rc == 0) {
        cli_term_detect(&ctx->term, g->no_color);
        ctx->commands = cli_commands;
        ctx->ncommands = cli_ncommands;
        ctx->command = a->cmd->name;
        rc = a->cmd->run(ctx, a);
    }
    ctx->db_path = NULL;
    pctl_free(shown);
    return rc;
}

int main(int argc, char **argv)
{
    cli_globals g;
    cli_args a;
    cli_ctx ctx;

    memset(&ctx, 0, sizeof(ctx));
    memset(&a, 0, sizeof(a));
    tzset();
    /* This process is planctl's: nothing here reads SQLite's memory
     * statistics, so their global mutex is not worth its cost. */
    (void)planctl_process_init();
    /* The hidden commands: the shell's completion asks __complete
     * (complete.c), the build runs __man (doc.c). */
    int rc = cli_complete_command(argc, argv, cli_commands, cli_ncommands);
    if (rc < 0)
        rc = cli_doc_command(argc, argv, cli_commands, cli_ncommands);
    if (rc < 0) {
        rc = cli_args_parse(&g, &a, cli_commands, cli_ncommands, argc, argv);
        if (rc == 0)
            rc = run(&ctx, &g, &a);
    }
    planctl_close(ctx.db);
    cli_args_free(&a);
    /* A full disk or a closed pipe must not look like success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "planctl: cannot write the output: %s\n",
                strerror(errno));
        if (rc == 0)
            rc = CLI_EXIT_ERROR;
    }
    return rc;
}
