/* slowexec.c - an LD_PRELOAD module for earlykill.c: holds the first child
 * an engine spawns between its fork and its exec, for as long as the test
 * wants.
 *
 * With SLOWEXEC_DIR set, the first execvp() of all the processes sharing
 * that directory (the one that creates DIR/held) first does what the exec
 * would do to its file descriptors (closes those marked close-on-exec: the
 * engine's lock, libuv's pipe that tells the engine the exec happened),
 * writes its pid to DIR/held, then waits until DIR/go exists (at most 60 s)
 * and execs.  Every other execvp() goes straight through.  libuv calls
 * execvp() in the child of a fork, where only async-signal-safe calls may
 * be made: the paths are built and execvp looked up in the constructor. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MAX_MS 60000

typedef int (*execvp_fn)(const char *, char *const[]);

static execvp_fn real_execvp;
static char held[4096], go[4096];

__attribute__((constructor)) static void init(void)
{
    const char *dir = getenv("SLOWEXEC_DIR");

    /* POSIX's way to store dlsym()'s result in a function pointer. */
    *(void **)&real_execvp = dlsym(RTLD_NEXT, "execvp");
    if (!dir || strlen(dir) + sizeof "/held" > sizeof held)
        return;
    strcpy(held, dir);
    strcat(held, "/held");
    strcpy(go, dir);
    strcat(go, "/go");
}

static void hold(void)
{
    struct timespec nap = {0, 10 * 1000 * 1000};
    char digits[24], *p = digits + sizeof digits;
    long pid = (long)getpid();
    int fd, ms;

    /* What the exec will do anyway, done now: the engine's restart must
     * not wait for this child (its lock), nor the engine for its exec. */
    for (fd = 3; fd < 4096; fd++) {
        int flags = fcntl(fd, F_GETFD);

        if (flags >= 0 && (flags & FD_CLOEXEC))
            close(fd);
    }
    fd = open(held, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return; /* not the first */
    *--p = '\n';
    do
        *--p = (char)('0' + pid % 10);
    while ((pid /= 10) > 0);
    if (write(fd, p, (size_t)(digits + sizeof digits - p)) < 0)
        _exit(126);
    close(fd);
    for (ms = 0; ms < WAIT_MAX_MS && access(go, F_OK) != 0; ms += 10)
        nanosleep(&nap, NULL);
}

int execvp(const char *file, char *const argv[])
{
    if (!real_execvp) {
        errno = ENOSYS;
        return -1;
    }
    if (held[0] && access(held, F_OK) != 0)
        hold();
    return real_execvp(file, argv);
}
