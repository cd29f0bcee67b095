/*
 * open.c - how a command opens the database: once its arguments are
 * checked, with the durability and the PLANCTL_NOW clock the command
 * line asked for.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int64_t fixed_clock(void *data)
{
    return *(const int64_t *)data;
}

int cli_open_db(cli_ctx *ctx, cli_db_mode mode)
{
    if (mode == CLI_DB_NONE || ctx->db)
        return 0;
    planctl_open_options opts = PLANCTL_OPEN_OPTIONS_INIT;
    if (ctx->durability_full)
        opts.durability = PLANCTL_DURABILITY_FULL;
    /* Only a command that stores something new may create the file; for
     * the others a mistyped --db must be reported, not created empty. */
    if (mode == CLI_DB_EXISTING)
        opts.flags |= PLANCTL_OPEN_NOCREATE;
    /* The engine's self-check, for the test suite and for debugging. */
    const char *check = getenv("PLANCTL_CHECK_CACHE");
    if (check && strcmp(check, "1") == 0)
        opts.flags |= PLANCTL_OPEN_CHECK_CACHE;
    int rc = planctl_open(&ctx->db, ctx->db_target, &opts);
    if (rc < 0) {
        if (!ctx->db)
            cli_oom();
        return cli_fail(ctx, rc);
    }
    if (ctx->fixed_now)
        planctl_set_clock(ctx->db, fixed_clock, &ctx->now_ms);
    return 0;
}
