/* cmd_help.c - `planctl help [COMMAND]`: the help of planctl or of one
 * command, as --help prints it, for those who type git's and kubectl's
 * reflex. */
#include "cli/cli.h"

#include <string.h>

extern const cli_command cli_cmd_help;

static const char *const pos[] = {"[COMMAND]", NULL};

static const cli_flag flags[] = {{NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl help", "planctl help status",
                                       NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    if (a->npos == 0) {
        cli_help_global(stdout, ctx->commands, ctx->ncommands);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < ctx->ncommands; i++) {
        if (strcmp(ctx->commands[i]->name, a->pos[0]) == 0) {
            cli_help_command(stdout, ctx->commands[i]);
            return CLI_EXIT_OK;
        }
    }
    return cli_unknown_command(a->pos[0], ctx->commands, ctx->ncommands);
}

const cli_command cli_cmd_help = {
    "help",
    "Show the help of planctl or of a command",
    "[COMMAND]",
    "With no COMMAND, prints what planctl --help prints; with one, what\n"
    "planctl COMMAND --help prints.  An unknown COMMAND is a usage error\n"
    "(exit 2) naming the closest command.",
    pos,
    flags,
    examples,
    run};
