/*
 * peakrss - runs a command and checks its peak resident memory.
 *
 *     peakrss LIMIT_MIB|report COMMAND [ARG...]
 *
 * Runs COMMAND, waits for it, and exits with its status.  With LIMIT_MIB
 * above 0 it also says, on stderr, when the command's peak resident set
 * (the kernel's ru_maxrss, in KiB) went over LIMIT_MIB MiB, and then exits
 * 1 if the command itself succeeded.  0 checks nothing (a sanitized
 * build, whose shadow memory is no measure of planctl's).  "report"
 * prints the peak in MiB on stderr as "peakrss: COMMAND took N MiB".
 */
#define _DEFAULT_SOURCE /* wait4() */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct rusage ru;
    long limit;
    pid_t pid;
    int status;

    limit = argc < 3 ? -2 : strcmp(argv[1], "report") == 0 ? -1 : atol(argv[1]);
    if (limit < -1) {
        fprintf(stderr, "usage: peakrss LIMIT_MIB|report COMMAND [ARG...]\n");
        return 2;
    }
    pid = fork();
    if (pid < 0) {
        perror("peakrss: fork");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "peakrss: cannot run %s: %s\n", argv[2],
                strerror(errno));
        _exit(127);
    }
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            perror("peakrss: wait4");
            return 1;
        }
    if (limit == -1)
        fprintf(stderr, "peakrss: %s took %ld MiB\n", argv[2],
                ru.ru_maxrss / 1024);
    if (!WIFEXITED(status))
        return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (limit > 0 && ru.ru_maxrss > limit * 1024) {
        fprintf(stderr, "peakrss: %s took %ld MiB at its peak, over %ld MiB\n",
                argv[2], ru.ru_maxrss / 1024, limit);
        return WEXITSTATUS(status) ? WEXITSTATUS(status) : 1;
    }
    return WEXITSTATUS(status);
}
