/*
 * fuzz_cli_args.c - the libFuzzer target for the planctl command line:
 * cli_args_parse() against the real command table (src/cli/main.c is
 * compiled into this file, its main() renamed), then the helpers the
 * commands call on flag values: cli_parse_params (-p), cli_parse_id
 * (--run), the duration flags, the RFC 3339 time flags, and the lookups
 * cli_arg, cli_arg_count and cli_arg_list.
 *
 * The input is argv[1..], separated by NUL bytes.  Properties:
 *   - the parser returns 0 or CLI_EXIT_USAGE, and on failure writes one
 *     line starting "planctl: " to stderr (exactly one line, whatever
 *     the arguments hold), on success nothing;
 *   - on success every value points into argv (or is ""), counts agree
 *     with the lists, required positionals and flags are present unless
 *     --help or --version was given, and no more positionals than the
 *     command takes;
 *   - the value helpers never crash and answer 0 or CLI_EXIT_USAGE.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/def.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The real command table: cli/main.c's cli_commands[] and cli_ncommands. */
int planctl_cli_main(int argc, char **argv);
#define main planctl_cli_main
#include "cli/main.c"
#undef main

#define MAX_ARGS 32

static void require(int ok)
{
    if (!ok)
        abort();
}

/* Whether p is "" or points inside one of argv[1..argc). */
static int from_argv(const char *p, int argc, char **argv)
{
    int i;

    if (p && p[0] == '\0')
        return 1;
    for (i = 1; i < argc; i++)
        if (p >= argv[i] && p <= argv[i] + strlen(argv[i]))
            return 1;
    return 0;
}

/* Runs f with stderr captured; returns what was written (malloc'd). */
typedef struct captured {
    char *text;
    size_t len;
} captured;

static FILE *saved_stderr;

static void capture_begin(captured *c)
{
    FILE *f;

    c->text = NULL;
    c->len = 0;
    f = open_memstream(&c->text, &c->len);
    require(f != NULL);
    saved_stderr = stderr;
    stderr = f;
}

static void capture_end(void)
{
    FILE *f = stderr;

    stderr = saved_stderr;
    fclose(f);
}

/* A failure writes one "planctl: " line; success writes nothing. */
static void check_report(const captured *c, int rc, int any_newline)
{
    if (rc == 0) {
        require(c->len == 0);
        return;
    }
    require(rc == CLI_EXIT_USAGE);
    require(c->len > 9 && strncmp(c->text, "planctl: ", 9) == 0 &&
            c->text[c->len - 1] == '\n');
    (void)any_newline; /* errors.c folds control characters */
    require(memchr(c->text, '\n', c->len) == c->text + c->len - 1);
}

/* What the commands do with their flags' values. */
static void check_values(const cli_args *a, int any_newline)
{
    const cli_command *cmd = a->cmd;
    size_t i;

    for (i = 0; cmd->flags[i].name; i++) {
        const cli_flag *fl = &cmd->flags[i];
        const char *last = cli_arg(a, fl->name);
        const char *const *list;
        size_t n, j;
        captured c;
        int rc;

        list = cli_arg_list(a, fl->name, &n);
        require(n == cli_arg_count(a, fl->name));
        require((n == 0) == (last == NULL));
        require(n == 0 || last == list[n - 1]);
        if (fl->kind == CLI_FLAG_BOOL) {
            for (j = 0; j < n; j++)
                require(list[j][0] == '\0');
            continue;
        }
        if (fl->kind == CLI_FLAG_LIST && fl->short_name == 'p') {
            planctl_param *params = NULL;
            char *storage = NULL;

            capture_begin(&c);
            rc = cli_parse_params(&params, &storage, list, n);
            capture_end();
            check_report(&c, rc, any_newline);
            free(c.text);
            free(params);
            free(storage);
        }
        if (!last)
            continue;
        if (strcmp(fl->name, "run") == 0 || strcmp(fl->name, "before") == 0) {
            int64_t id = 0;

            capture_begin(&c);
            rc = cli_parse_id(&id, fl->name, last);
            capture_end();
            check_report(&c, rc, any_newline);
            require(rc != 0 || id > 0);
            free(c.text);
        }
        if (strcmp(fl->name, "timeout") == 0 ||
            strcmp(fl->name, "grace") == 0 ||
            strcmp(fl->name, "older-than") == 0) {
            int64_t ms = -1;

            rc = pctl_duration_parse(&ms, last);
            require(rc != 0 || (ms >= 0 && ms <= PCTL_DURATION_MAX_MS));
        }
        if (strcmp(fl->name, "at") == 0) {
            int64_t ms;
            char buf[64];

            if (cli_time_parse(&ms, last) == 0) {
                memset(buf, 0, sizeof buf);
                cli_time_format(buf, sizeof buf, ms);
                require(memchr(buf, '\0', sizeof buf) != NULL);
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf, *argv[MAX_ARGS + 2];
    int argc = 1, any_newline, rc;
    size_t i, start = 0, npos;
    cli_globals g;
    cli_args a;
    captured c;

    buf = malloc(size + 1);
    require(buf != NULL);
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[0] = "planctl";
    for (i = 0; i <= size && argc <= MAX_ARGS; i++) {
        if (i == size || buf[i] == '\0') {
            if (i > start || i < size) /* a trailing NUL ends the list */
                argv[argc++] = buf + start;
            start = i + 1;
        }
    }
    argv[argc] = NULL;
    any_newline = memchr(buf, '\n', size) != NULL;

    capture_begin(&c);
    rc = cli_args_parse(&g, &a, cli_commands, cli_ncommands, argc, argv);
    capture_end();
    check_report(&c, rc, any_newline);
    free(c.text);

    if (rc == 0) {
        require(from_argv(g.db, argc, argv) || !g.db);
        require(from_argv(g.output, argc, argv) || !g.output);
        if (a.cmd) {
            for (npos = 0; a.cmd->pos && a.cmd->pos[npos]; npos++)
                ;
            require(a.npos <= npos && a.npos <= CLI_MAX_POS);
            for (i = 0; i < a.npos; i++)
                require(from_argv(a.pos[i], argc, argv));
            for (i = 0; i < CLI_MAX_FLAGS; i++) {
                size_t j;

                require((a.count[i] == 0) == (a.values[i] == NULL));
                for (j = 0; j < a.count[i]; j++)
                    require(from_argv(a.values[i][j], argc, argv));
            }
            if (!g.help && !g.version) {
                /* Required positionals ("[NAME]" is optional) and flags. */
                for (i = a.npos; i < npos; i++)
                    require(a.cmd->pos[i][0] == '[');
                for (i = 0; a.cmd->flags[i].name; i++)
                    require(!a.cmd->flags[i].required || a.count[i] > 0);
            }
            check_values(&a, any_newline);
        }
    }
    cli_args_free(&a);
    free(buf);
    return 0;
}
