/* cmd_completion.c - `planctl completion bash|zsh|fish`: the completion
 * script for a shell (complete.c). */
#include "cli/cli.h"

extern const cli_command cli_cmd_completion;

static const char *const pos[] = {"SHELL", NULL};

static const cli_flag flags[] = {{NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "source <(planctl completion bash)",
    "planctl completion zsh > \"${fpath[1]}/_planctl\"",
    "planctl completion fish > ~/.config/fish/completions/planctl.fish", NULL};

static int run(cli_ctx *ctx, const cli_args *a)
{
    (void)ctx;
    if (cli_completion_script(stdout, a->pos[0]) < 0)
        return cli_usage_error(&cli_cmd_completion,
                               "unknown shell \"%s\"; expected bash, zsh or "
                               "fish",
                               a->pos[0]);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_completion = {
    "completion",
    "Print the shell completion script for bash, zsh or fish",
    "SHELL",
    "Prints the completion script for SHELL (bash, zsh or fish).  It\n"
    "completes commands, each command's flags, the values of flags with\n"
    "fixed choices (-o, --durability, --log-level), file names, and from\n"
    "the database the line names (--db, else PLANCTL_DB, else\n"
    "./planctl.db): instance names, the plans of the instance after\n"
    "trigger NAME and --plan, definition names and versions (create\n"
    "--definition D[@V], upgrade --version), and run ids (--run).  The\n"
    "script asks planctl on every TAB, so it stays right as planctl\n"
    "changes.  cmake --install puts it where bash-completion, zsh and\n"
    "fish look: share/bash-completion/completions/planctl,\n"
    "share/zsh/site-functions/_planctl and\n"
    "share/fish/vendor_completions.d/planctl.fish.",
    pos,
    flags,
    examples,
    run};
