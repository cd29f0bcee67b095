/*
 * input.c - what validate and apply read: a file, or standard input for
 * "-", whole into memory for the library, and the extra task kinds.
 * (import streams its bundle instead: cmd_import.c.)
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Far above the library's own limit on a definition, so the library is the
 * one to explain the limit; this only stops reading /dev/zero forever. */
#define CLI_INPUT_MAX ((size_t)64 * 1024 * 1024)

int cli_read_input(char **out, size_t *len, const char *path)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    cli_buf b = CLI_BUF_INIT;
    char chunk[65536];
    size_t n;

    *out = NULL;
    *len = 0;
    if (!f) {
        cli_errorf("cannot read \"%s\": %s", path, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        /* Input too large is input refused, exit 2 like any other (a
         * smaller oversize definition or bundle is the library's EINVAL). */
        if (b.len + n > CLI_INPUT_MAX) {
            cli_errorf("cannot read \"%s\": larger than %zu MiB, the most "
                       "planctl reads",
                       is_stdin ? "<stdin>" : path, CLI_INPUT_MAX >> 20);
            cli_buf_free(&b);
            if (!is_stdin)
                fclose(f);
            return CLI_EXIT_USAGE;
        }
        cli_buf_addn(&b, chunk, n);
    }
    int err = ferror(f) ? errno : 0;
    if (!is_stdin)
        fclose(f);
    if (err) {
        cli_errorf("cannot read \"%s\": %s", is_stdin ? "<stdin>" : path,
                   strerror(err));
        cli_buf_free(&b);
        return CLI_EXIT_ERROR;
    }
    if (!b.s)
        cli_buf_add(&b, "");
    *out = b.s;
    *len = b.len;
    return 0;
}

/* The extra kinds: every --kind, then PLANCTL_KINDS split at commas (empty
 * entries skipped), as a NULL-terminated array pointing into *storage.
 * Free both with free(). */
const char **cli_extra_kinds(const cli_args *a, char **storage)
{
    const char *env = getenv("PLANCTL_KINDS");
    const char *const *given;
    size_t n, i, w = 0;
    const char **v;
    char *tok, *save = NULL;

    given = cli_arg_list(a, "kind", &n);
    *storage = strdup(env ? env : "");
    v = calloc(n + strlen(env ? env : "") / 2 + 2, sizeof(*v));
    if (!*storage || !v)
        cli_oom();
    for (i = 0; i < n; i++)
        v[w++] = given[i];
    for (tok = strtok_r(*storage, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save))
        v[w++] = tok;
    v[w] = NULL;
    return v;
}
