/*
 * errors.c - how the CLI reports failure: one line on stderr starting with
 * "planctl: ", and the exit codes of planctl-json(7) mapped from library codes.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cli_exit_code(int rc)
{
    switch (rc) {
    case PLANCTL_OK:
        return CLI_EXIT_OK;
    case PLANCTL_EINVAL:
    case PLANCTL_EDEFINITION:
    case PLANCTL_EPREFLIGHT: /* a check failed: the input is refused */
        return CLI_EXIT_USAGE;
    case PLANCTL_ECONFLICT:
    case PLANCTL_EBUSY:
    case PLANCTL_ESTALE:
        return CLI_EXIT_CONFLICT;
    case PLANCTL_ENOTFOUND:
        return CLI_EXIT_NOTFOUND;
    default:
        return CLI_EXIT_ERROR;
    }
}

/* The most of one quoted thing (a name, a value the user gave) an error
 * echoes, and what is kept of a longer one. */
#define QUOTE_MAX 120
#define QUOTE_KEEP 60

/* Appends s to b with every double-quoted part longer than QUOTE_MAX
 * bytes cut to its first QUOTE_KEEP (on a character boundary), so a
 * 100 KB name does not come back whole: "abc..." (100000 bytes). */
static void add_shortened(cli_buf *b, const char *s)
{
    const char *open, *close;

    while ((open = strchr(s, '"')) && (close = strchr(open + 1, '"'))) {
        size_t len = (size_t)(close - open - 1), keep = QUOTE_KEEP;

        if (len <= QUOTE_MAX) {
            cli_buf_addn(b, s, (size_t)(close + 1 - s));
            s = close + 1;
            continue;
        }
        while (keep > 0 && ((unsigned char)open[1 + keep] & 0xc0) == 0x80)
            keep--;
        cli_buf_addn(b, s, (size_t)(open + 1 - s) + keep);
        cli_buf_addf(b, "...\" (%zu bytes)", len);
        s = close + 1;
    }
    cli_buf_add(b, s);
}

static void verrorf(const char *fmt, va_list ap)
{
    cli_buf clean = CLI_BUF_INIT, shortened = CLI_BUF_INIT;
    char small[1024], *text = small;
    va_list copy;
    int n;

    /* Messages quote what the user typed: control characters (a newline,
     * an escape sequence) become spaces, so an error is always one line
     * and cannot drive the terminal. */
    va_copy(copy, ap);
    n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small) {
        text = cli_xmalloc((size_t)n + 1);
        vsnprintf(text, (size_t)n + 1, fmt, copy);
    }
    va_end(copy);
    cli_buf_add_clean(&clean, n < 0 ? fmt : text);
    if (text != small)
        free(text);
    add_shortened(&shortened, cli_buf_str(&clean));
    /* Flush stdout first so that, when both go to one pipe, the error
     * lands after whatever the command printed before it failed. */
    fflush(stdout);
    fprintf(stderr, "planctl: %s\n", cli_buf_str(&shortened));
    cli_buf_free(&clean);
    cli_buf_free(&shortened);
}

void cli_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verrorf(fmt, ap);
    va_end(ap);
}

int cli_fail(const cli_ctx *ctx, int rc)
{
    const char *msg = ctx->db ? planctl_errmsg(ctx->db) : "";
    cli_buf text = CLI_BUF_INIT, clean = CLI_BUF_INIT;

    if (!msg[0])
        msg = planctl_strerror(rc);
    /* The library says what is wrong; the CLI adds how to fix it with its
     * own commands and flags (hints.c). */
    cli_hint(&text, ctx->command, rc, msg);
    /* Messages quote user input (names, paths); keep them one line. */
    cli_buf_add_clean(&clean, cli_buf_str(&text));
    cli_errorf("%s", cli_buf_str(&clean));
    cli_buf_free(&text);
    cli_buf_free(&clean);
    return cli_exit_code(rc);
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
{
    cli_buf msg = CLI_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    cli_buf_addf(&msg, "%s; usage: planctl %s%s%s", small, cmd->name,
                 cmd->usage[0] ? " " : "", cmd->usage);
    cli_errorf("%s", cli_buf_str(&msg));
    cli_buf_free(&msg);
    return CLI_EXIT_USAGE;
}
