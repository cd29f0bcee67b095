/*
 * fuzz_yaml.c - the libFuzzer target for the CLI's YAML reader and writer
 * (src/cli/yaml/yaml_read.c, yaml_write.c): any bytes as a definition file.
 *
 * Properties:
 *   - the reader returns 0 with a value and the line of its root, or
 *     CLI_YAML_INVALID with a one-line message that starts with the
 *     origin and names a line, and no value;
 *   - the line of any path is 0 or one the input may have (or the one
 *     after it, for an empty node at the end);
 *   - a value read is written as YAML without failing, and that text
 *     reads back as the same value (the -o yaml round trip).
 * A broken property aborts, which the fuzzer keeps as a crash.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/yaml/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok)
{
    if (!ok)
        abort();
}

/* The most lines size bytes may hold as libyaml counts them (which also
 * breaks lines at U+0085, U+2028 and U+2029, and reads UTF-16): one a
 * byte, and the one after the last. */
static size_t most_lines(size_t size)
{
    return size + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *v = NULL, *lines = NULL, *back = NULL;
    cli_yaml_error err;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    int rc;

    rc = cli_yaml_read(&v, &lines, (const char *)data, size, "f.yaml", &err);
    if (rc == CLI_YAML_NOMEM)
        return 0;
    if (rc != 0) {
        require(rc == CLI_YAML_INVALID && !v && !lines);
        require(strchr(err.msg, '\n') == NULL);
        require(strcmp(err.type, "Too long") == 0 ||
                (strncmp(err.msg, "f.yaml:", 7) == 0 && err.line > 0 &&
                 err.line <= most_lines(size)));
        return 0;
    }
    require(v && lines);
    require(cli_yaml_line(lines, "") >= 1);
    /* An empty node at the end is placed after the last line ("---"). */
    require(cli_yaml_line(lines, "plans.deploy.phases[0].steps[0].tasks") <=
            most_lines(size));

    f = open_memstream(&text, &len);
    require(f != NULL);
    require(cli_yaml_dump(v, f) == 0);
    fclose(f);
    rc = cli_yaml_read(&back, NULL, text, len, "back.yaml", &err);
    if (rc != CLI_YAML_NOMEM) {
        if (rc != 0) {
            fprintf(stderr, "written:\n%s\nrefused: %s\n", text, err.msg);
            /* The text may be longer than a definition may be. */
            require(strcmp(err.type, "Too long") == 0);
        } else {
            require(json_equal(v, back));
        }
    }
    json_decref(back);
    free(text);
    json_decref(lines);
    json_decref(v);
    return 0;
}
