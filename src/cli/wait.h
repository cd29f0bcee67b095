/*
 * wait.h - following the database while another process (the engine)
 * changes it: the poll loop shared by `events --follow`, `status --watch`
 * and `--wait`, and waiting for one run to end.
 *
 * The engine runs in another process, so the only way to notice progress
 * is the database itself: PRAGMA data_version (planctl_data_version())
 * polled every 100 ms, plus a re-read every second whatever it says.
 */
#ifndef PLANCTL_CLI_WAIT_H
#define PLANCTL_CLI_WAIT_H

#include "cli.h"

/* What a check returns to keep polling. */
#define CLI_POLL_AGAIN (-1)
/* What cli_poll_run() returns besides a check's exit code. */
#define CLI_POLL_TIMEOUT (-2)
#define CLI_POLL_SIGNAL (-3)

/* How often data_version is polled, and how often a check runs anyway. */
#define CLI_POLL_INTERVAL_MS 100
#define CLI_POLL_FALLBACK_MS 1000

/*
 * Called at once, then whenever another connection committed (changed is
 * 1) and every second anyway (changed is 0).  Returns CLI_POLL_AGAIN to
 * go on, or an exit code (>= 0) to stop with.
 */
typedef int (*cli_poll_fn)(void *data, int changed);

/*
 * Runs a libuv loop of its own that calls check as described above until
 * it returns an exit code (returned), timeout_ms (when > 0) elapses
 * (CLI_POLL_TIMEOUT) or SIGINT or SIGTERM arrives (CLI_POLL_SIGNAL).
 * Every handle is closed and the loop closed before it returns.  Prints
 * the error and returns CLI_EXIT_ERROR when the loop cannot be set up.
 */
int cli_poll_run(cli_ctx *ctx, int64_t timeout_ms, cli_poll_fn check,
                 void *data);

/* The exit code of a command a signal interrupted while it polled, as
 * shells report a process killed by it: 128 + the signal (130 for SIGINT,
 * 143 for SIGTERM).  Can't fail. */
int cli_interrupted_exit(const cli_ctx *ctx);

/* The exit code a run's status ends a wait with: 0 for COMPLETE, 5 for
 * FATAL_ERROR and CANCELLED, -1 while the run is not terminal.  Can't
 * fail. */
int cli_run_exit_code(const char *status);

/* The run object with this id among the plans of a status document, or
 * NULL.  Can't fail. */
const json_t *cli_doc_find_run(const json_t *doc, int64_t id);

/* Refreshes ctx->now_ms from the real clock, unless PLANCTL_NOW fixed it.
 * Can't fail. */
void cli_now_refresh(cli_ctx *ctx);

/*
 * Reads --wait and --timeout D for cmd: *wait is set when --wait was
 * given, *timeout_ms to the timeout (0: none).  Prints the error and
 * returns CLI_EXIT_USAGE for a bad duration or --timeout without --wait.
 */
int cli_wait_flags(int *wait, int64_t *timeout_ms, const cli_command *cmd,
                   const cli_args *a);

/*
 * Waits until run (of instance) is terminal, showing its progress on
 * stderr when that is a terminal, then prints the outcome: one line
 * ('run 12 of plan "deploy" COMPLETE in 1m12s'), or with -o json the
 * document {"schema":1,"run":{...}}.  Returns 0 (COMPLETE), 5
 * (FATAL_ERROR, CANCELLED), 6 (timeout_ms elapsed; the run goes on), 1
 * (interrupted), or the exit code of a failed read.
 */
int cli_wait_run(cli_ctx *ctx, const char *instance, int64_t run,
                 int64_t timeout_ms);

#endif
