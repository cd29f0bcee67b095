/* util.c - clocks, statistics, memory figures, output and options. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

void bench_grow(void **v, size_t n, size_t *cap, size_t sz, size_t first)
{
    size_t ncap;
    void *nv;

    if (n < *cap)
        return;
    ncap = *cap ? *cap * 2 : first;
    if (!(nv = realloc(*v, ncap * sz)))
        bench_die("out of memory");
    *v = nv;
    *cap = ncap;
}

void bench_remove_db(const char *path)
{
    static const char *const ext[] = {"", "-wal", "-shm", "-engine"};
    char side[4200];
    size_t i;

    for (i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        snprintf(side, sizeof side, "%s%s", path, ext[i]);
        unlink(side);
    }
}

void bench_wait_ok(pid_t pid, const char *what)
{
    int st;

    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        bench_die("%s failed", what);
}

int64_t bench_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

double bench_quantile(double *v, size_t n, double q)
{
    size_t k;

    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    /* Nearest rank: the smallest value with at least q of them at or
     * below it. */
    k = (size_t)(q * (double)n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

long bench_proc_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t len = strlen(field);
    long kb = -1;

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            kb = strtol(line + len + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

void bench_die(const char *fmt, ...)
{
    va_list ap;

    fputs("planctl-bench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

void bench_summary(const char *name, double value, double baseline,
                   const char *unit, char cmp, double limit)
{
    double ratio = baseline != 0 ? value / baseline : 0;
    int ok = cmp == '<' ? ratio <= limit : ratio >= limit;

    if (!cmp) {
        printf("name=%s value=%.6g baseline=%.6g ratio=%.3f unit=%s "
               "target=none ok=yes\n",
               name, value, baseline, ratio, unit);
        fflush(stdout);
        return;
    }
    printf("name=%s value=%.6g baseline=%.6g ratio=%.3f unit=%s "
           "target=%s%g ok=%s\n",
           name, value, baseline, ratio, unit, cmp == '<' ? "<=" : ">=", limit,
           ok ? "yes" : "no");
    fflush(stdout);
}

void bench_detail(const char *name, const char *fmt, ...)
{
    va_list ap;

    printf("  %s: ", name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

const char *bench_opt(int argc, char **argv, const char *name, const char *def)
{
    int i;

    for (i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return def;
}

int bench_flag(int argc, char **argv, const char *name)
{
    int i;

    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}
