/*
 * corpus_replay.c - runs the fuzz target once on every file of the corpus
 * directories given, so the corpus is a regression test without libFuzzer
 * (every build registers one as the ctest fuzz.<name>.replay).  Each
 * file's name is printed before it is fed, so when an input aborts, the
 * last line of the output names it.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feeds one file; returns 0, or 1 when it cannot be read. */
static int feed(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (!f) {
        perror(path);
        return 1;
    }
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            buf = realloc(buf, cap);
            if (!buf) {
                fclose(f);
                return 1;
            }
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    fclose(f);
    printf("%s\n", path);
    fflush(stdout);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int i, failed = 0, files = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
        return 2;
    }
    for (i = 1; i < argc; i++) {
        struct stat sb;
        struct dirent *e;
        DIR *d;

        if (stat(argv[i], &sb) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(sb.st_mode)) {
            failed |= feed(argv[i]);
            files++;
            continue;
        }
        d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            return 1;
        }
        while ((e = readdir(d)) != NULL) {
            char path[4096];

            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            failed |= feed(path);
            files++;
        }
        closedir(d);
    }
    printf("%d inputs replayed\n", files);
    return failed || files == 0;
}
