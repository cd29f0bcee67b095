/*
 * query.c - `planctl status` and `planctl history --limit 50` as whole
 * processes (the real CLI binary: start, open, read, print, exit) against
 * a database with a long history and against an almost empty one holding
 * the same instance with the same recent runs.  The two databases are
 * queried in turn, many times, and the medians compared: DESIGN §11 wants
 * the large one within noise of the small one (index lookups only).
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

/* Runs argv with stdout to out_path (or /dev/null) and returns the wall
 * time in ns, and in *cpu_ns the CPU time (user and system) it used; dies
 * unless it exits 0. */
static int64_t run_timed(char *const argv[], const char *out_path,
                         int64_t *cpu_ns)
{
    posix_spawn_file_actions_t fa;
    struct rusage ru;
    int64_t t0, t1;
    pid_t pid;
    int st;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path ? out_path : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    t0 = bench_ns();
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
        bench_die("query: cannot run %s", argv[0]);
    if (wait4(pid, &st, 0, &ru) != pid)
        bench_die("query: wait4 failed");
    t1 = bench_ns();
    if (cpu_ns)
        *cpu_ns =
            ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
            ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bench_die("query: %s %s %s exited %d", argv[0], argv[1], argv[3],
                  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return t1 - t0;
}

static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    long n = 0;
    int c;

    if (!f)
        return -1;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* planctl-bench query --planctl BIN --big DB --small DB [--focus NAME]
 *                     [--reps N] [--dir D] */
int bench_query_main(int argc, char **argv)
{
    const char *bin = bench_opt(argc, argv, "--planctl", NULL);
    const char *big = bench_opt(argc, argv, "--big", NULL);
    const char *small = bench_opt(argc, argv, "--small", NULL);
    const char *focus = bench_opt(argc, argv, "--focus", "zk");
    const char *dir = bench_opt(argc, argv, "--dir", "/tmp");
    int reps = atoi(bench_opt(argc, argv, "--reps", "40"));
    static const char *const cmds[2][4] = {{"status", NULL, NULL, NULL},
                                           {"history", "--limit", "50", NULL}};
    static const char *const names[2] = {"status", "history"};
    int c, i, k;

    if (!bin || !big || !small)
        bench_die("query: --planctl, --big and --small are required");
    setenv("NO_COLOR", "1", 1);
    setenv("TZ", "UTC", 1);
    for (c = 0; c < 2; c++) {
        double t[2][1000], cpu[2][1000];
        long lines[2];
        char out[2][4096];

        if (reps > 1000)
            reps = 1000;
        for (k = 0; k < 2; k++) {
            char *av[10];
            int n = 0;

            av[n++] = (char *)bin;
            av[n++] = "--db";
            av[n++] = (char *)(k ? big : small);
            av[n++] = (char *)cmds[c][0];
            av[n++] = (char *)focus;
            for (i = 1; cmds[c][i]; i++)
                av[n++] = (char *)cmds[c][i];
            av[n] = NULL;
            snprintf(out[k], sizeof out[k], "%s/query-%s-%d.out", dir, names[c],
                     k);
            run_timed(av, out[k], NULL); /* warm-up, and the output */
            lines[k] = count_lines(out[k]);
            unlink(out[k]);
        }
        if (lines[0] != lines[1] || lines[0] <= 0)
            bench_die("query: %s printed %ld lines on the small database and "
                      "%ld on the large one",
                      names[c], lines[0], lines[1]);
        /* In turn, so drift on a shared machine hits both alike. */
        for (i = 0; i < reps; i++) {
            for (k = 0; k < 2; k++) {
                char *av[10];
                int n = 0, j;

                av[n++] = (char *)bin;
                av[n++] = "--db";
                av[n++] = (char *)(k ? big : small);
                av[n++] = (char *)cmds[c][0];
                av[n++] = (char *)focus;
                for (j = 1; cmds[c][j]; j++)
                    av[n++] = (char *)cmds[c][j];
                av[n] = NULL;
                int64_t cns;

                t[k][i] = (double)run_timed(av, NULL, &cns) / 1e6;
                cpu[k][i] = (double)cns / 1e6;
            }
        }
        {
            double small_ms = bench_quantile(t[0], (size_t)reps, 0.5);
            double big_ms = bench_quantile(t[1], (size_t)reps, 0.5);
            double small_cpu = bench_quantile(cpu[0], (size_t)reps, 0.5);
            double big_cpu = bench_quantile(cpu[1], (size_t)reps, 0.5);
            char name[64];

            bench_detail(names[c],
                         "%ld lines; median of %d runs, large / small "
                         "database: wall %.2f / %.2f ms (ratio %.2f), CPU "
                         "%.2f / %.2f ms (ratio %.2f)",
                         lines[0], reps, big_ms, small_ms, big_ms / small_ms,
                         big_cpu, small_cpu, big_cpu / small_cpu);
            /* The figure compared is the CPU time the process used: it is
             * the work done (what history size could change), while the
             * wall time of a few-millisecond process on a shared machine
             * is mostly the scheduler's; both are printed above. */
            snprintf(name, sizeof name, "%s_big_vs_small", names[c]);
            bench_summary(name, big_cpu, small_cpu, "ms_cpu", '<', 1.2);
        }
    }
    return 0;
}
