/* stopspawn.c - an LD_PRELOAD module for tests/pg/spawn_stopped.sh: stops
 * the engine (SIGSTOP to itself) right after its first posix_spawn() has
 * started a child, before the engine has done anything more with it.
 *
 * With STOPSPAWN_DIR set, the first posix_spawn() that succeeds in a
 * process that can create DIR/stopped (O_EXCL: once for all the processes
 * sharing DIR) writes the child's pid there and stops the process it runs
 * in; it goes on when the test sends SIGCONT.  Every other call goes
 * straight through.  Tests only: the task's processes load it too, and
 * none of them calls posix_spawn(). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*spawn_fn)(pid_t *, const char *,
                        const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[],
                        char *const[]);

static spawn_fn real_spawn;
static char stopped[4096];

__attribute__((constructor)) static void init(void)
{
    const char *dir = getenv("STOPSPAWN_DIR");

    /* POSIX's way to store dlsym()'s result in a function pointer. */
    *(void **)&real_spawn = dlsym(RTLD_NEXT, "posix_spawn");
    if (dir && strlen(dir) + sizeof "/stopped" <= sizeof stopped)
        snprintf(stopped, sizeof stopped, "%s/stopped", dir);
}

int posix_spawn(pid_t *pid, const char *path,
                const posix_spawn_file_actions_t *fa,
                const posix_spawnattr_t *at, char *const argv[],
                char *const envp[])
{
    char line[32];
    int rc, fd, n, written;

    if (!real_spawn)
        return ENOSYS;
    rc = real_spawn(pid, path, fa, at, argv, envp);
    if (rc != 0 || !stopped[0] ||
        (fd = open(stopped, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
        return rc;
    n = snprintf(line, sizeof line, "%ld\n", (long)*pid);
    written = write(fd, line, (size_t)n) == n;
    close(fd);
    if (written) /* else the test, finding no pid, fails */
        raise(SIGSTOP);
    return rc;
}
