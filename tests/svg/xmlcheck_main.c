/*
 * xmlcheck_main.c - `xmlcheck FILE...`: tells whether each file is
 * well-formed XML (xmlcheck.h), for the CLI cases that parse what planctl
 * writes.  Prints "FILE: well-formed, root <svg>, N elements, depth D" or
 * "FILE:LINE:COL: problem", and exits 0 when every file is well-formed,
 * 1 otherwise (2 for a file it cannot read).  "-" reads standard input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmlcheck.h"

static char *slurp(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);

    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);

            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (buf && ferror(f)) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    int i, rc = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: xmlcheck FILE...\n");
        return 2;
    }
    for (i = 1; i < argc; i++) {
        int std = strcmp(argv[i], "-") == 0;
        FILE *f = std ? stdin : fopen(argv[i], "rb");
        xml_report r;
        size_t len = 0;
        char *text;

        if (!f) {
            fprintf(stderr, "xmlcheck: %s: %s\n", argv[i], strerror(errno));
            return 2;
        }
        text = slurp(f, &len);
        if (!std)
            fclose(f);
        if (!text) {
            fprintf(stderr, "xmlcheck: %s: cannot read it\n", argv[i]);
            return 2;
        }
        if (xml_check(text, len, &r) == 0) {
            printf("%s: well-formed, root <%s>, %zu elements, depth %zu\n",
                   argv[i], r.root, r.elements, r.depth);
        } else {
            printf("%s:%zu:%zu: %s\n", argv[i], r.line, r.col, r.error);
            rc = 1;
        }
        free(text);
    }
    return rc;
}
