/*
 * help.c - the text of `planctl --help` and `planctl COMMAND --help`,
 * generated from the command table so it cannot drift from the parser.
 */
#include "cli/cli.h"

#include <string.h>

int cli_flag_shadowed(const cli_flag *fl, const cli_flag *by)
{
    for (size_t i = 0; by && by[i].name; i++)
        if (strcmp(by[i].name, fl->name) == 0 ||
            (fl->short_name && by[i].short_name == fl->short_name))
            return 1;
    return 0;
}

/* "  -p, --param K=V" and the like, padded so the help texts line up.
 * Flags of `flags` that a command's own flags (`own`) shadow are left
 * out. */
static void print_flags(FILE *f, const cli_flag *flags, const cli_flag *own)
{
    for (size_t i = 0; flags[i].name; i++) {
        char left[64];
        const cli_flag *fl = &flags[i];
        if (cli_flag_shadowed(fl, own))
            continue;
        if (fl->short_name)
            snprintf(left, sizeof(left), "-%c, --%s%s%s", fl->short_name,
                     fl->name, fl->metavar ? " " : "",
                     fl->metavar ? fl->metavar : "");
        else
            snprintf(left, sizeof(left), "    --%s%s%s", fl->name,
                     fl->metavar ? " " : "", fl->metavar ? fl->metavar : "");
        fprintf(f, "  %-24s %s%s\n", left, fl->help,
                fl->kind == CLI_FLAG_LIST ? " (repeatable)" : "");
    }
}

void cli_help_global(FILE *f, const cli_command *const *cmds, size_t ncmds)
{
    fputs("planctl - run plans of instances and inspect them; every run, "
          "phase and step\nis a row in a SQLite database.\n\n"
          "Usage: planctl [flags] COMMAND [ARGS] [flags]\n\nCommands:\n",
          f);
    for (size_t i = 0; i < ncmds; i++)
        fprintf(f, "  %-13s %s\n", cmds[i]->name, cmds[i]->summary);
    fputs("\nGlobal flags (before or after the command):\n", f);
    print_flags(f, cli_global_flags, NULL);
    fputs("\nExit codes: 0 ok, 1 internal or I/O error, 2 usage error or "
          "invalid input,\n3 refused by a conflict, 4 not found, 5 a "
          "waited-for run ended FATAL_ERROR\nor CANCELLED, 6 timed out "
          "waiting.\n\n"
          "Task outputs: a shell task writes KEY=VALUE lines to the file "
          "named by\n$PLANCTL_OUTPUT; later tasks of its run get them as "
          "PLANCTL_OUTPUT_<STEP>_<KEY>,\nand status --run ID -o json shows "
          "them as \"outputs\" (see 'planctl run --help').\n\n"
          "Run 'planctl COMMAND --help' for a command's flags and "
          "examples.\n",
          f);
}

void cli_help_command(FILE *f, const cli_command *cmd)
{
    fprintf(f, "Usage: planctl %s%s%s\n\n%s\n", cmd->name,
            cmd->usage[0] ? " " : "", cmd->usage, cmd->description);
    if (cmd->flags[0].name) {
        fputs("\nFlags:\n", f);
        print_flags(f, cmd->flags, NULL);
    }
    fputs("\nGlobal flags:\n", f);
    print_flags(f, cli_global_flags, cmd->flags);
    if (cmd->examples && cmd->examples[0]) {
        fputs("\nExamples:\n", f);
        for (size_t i = 0; cmd->examples[i]; i++)
            fprintf(f, "  %s\n", cmd->examples[i]);
    }
}
