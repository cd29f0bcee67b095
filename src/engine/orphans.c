/*
 * orphans.c - after a crash, kill the processes an interrupted shell task
 * left behind.
 *
 * The run's uid is random (128 bits), so a process whose environment says
 * PLANCTL_RUN_UID=<uid>, PLANCTL_STEP=<step> and PLANCTL_ATTEMPT=<n> can
 * only belong to that attempt: unlike a saved pid, the marker cannot be
 * reused by an unrelated process.  /proc/<pid>/environ is readable only
 * for one's own processes, so nothing else is ever touched.
 *
 * The marker is set by an exec, so a child the dead engine had forked but
 * not yet exec'd cannot be found here (nor, for an instant inside each
 * exec, a marked one: its environ reads empty until the new image is set
 * up); nor by its parent (init by now) or its group (it may not have
 * called setsid() yet).  It needs no finding: the shell executor's guard
 * (exec_shell.c, "Dying with the engine") starts the task only if the
 * engine was still alive once pdeathsig was armed.
 */
#include "engine/orphans.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "planctl.h"

#define ENVIRON_MAX (256 * 1024)

/* Whether env (NUL-separated, len bytes) holds the exact entry want. */
static int has_entry(const char *env, size_t len, const char *want)
{
    size_t i = 0, wl = strlen(want);

    while (i < len) {
        size_t el = strnlen(env + i, len - i);

        if (el == wl && memcmp(env + i, want, wl) == 0)
            return 1;
        i += el + 1;
    }
    return 0;
}

static int matches(const char *env, size_t len, const pctl_orphan *o)
{
    char uid[96], step[160], attempt[48];

    snprintf(uid, sizeof uid, "PLANCTL_RUN_UID=%s", o->run_uid);
    snprintf(step, sizeof step, "PLANCTL_STEP=%s", o->step);
    snprintf(attempt, sizeof attempt, "PLANCTL_ATTEMPT=%d", o->attempt);
    return has_entry(env, len, uid) && has_entry(env, len, step) &&
           has_entry(env, len, attempt);
}

size_t pctl_reap_orphans(const pctl_orphan *o, size_t n)
{
#ifdef __linux__
    DIR *d;
    struct dirent *de;
    char *buf, path[64];
    size_t killed = 0, i;
    pid_t self = getpid();

    if (n == 0 || !(d = opendir("/proc")))
        return 0;
    buf = pctl_malloc(ENVIRON_MAX);
    if (!buf) {
        closedir(d);
        return 0;
    }
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        ssize_t len = 0, got;
        int fd;

        if (*end || pid <= 1 || (pid_t)pid == self)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/environ", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        while (len < ENVIRON_MAX &&
               (got = read(fd, buf + len, (size_t)(ENVIRON_MAX - len))) > 0)
            len += got;
        close(fd);
        for (i = 0; i < n; i++) {
            if (matches(buf, (size_t)len, &o[i]) &&
                kill((pid_t)pid, SIGKILL) == 0) {
                killed++;
                break;
            }
        }
    }
    pctl_free(buf);
    closedir(d);
    return killed;
#else
    (void)o;
    (void)n;
    return 0;
#endif
}

/* The value of entry name=... in env (NUL-separated, len bytes, with a NUL
 * after them), or NULL. */
static const char *env_value(const char *env, size_t len, const char *name)
{
    size_t i = 0, nl = strlen(name);

    while (i < len) {
        size_t el = strnlen(env + i, len - i);

        if (el > nl && memcmp(env + i, name, nl) == 0 && env[i + nl] == '=')
            return env + i + nl + 1;
        i += el + 1;
    }
    return NULL;
}

static int add_marker(pctl_marker **v, size_t *n, const char *uid,
                      const char *run, const char *step, const char *attempt)
{
    pctl_marker *nv, *m;
    size_t i;
    int att = atoi(attempt);

    for (i = 0; i < *n; i++)
        if ((*v)[i].o.attempt == att && !strcmp((*v)[i].o.run_uid, uid) &&
            !strcmp((*v)[i].o.step, step))
            return 0;
    nv = pctl_realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv)
        return PLANCTL_ENOMEM;
    *v = nv;
    m = &nv[*n];
    m->o.run_uid = pctl_strdup(uid);
    m->o.step = pctl_strdup(step);
    m->o.attempt = att;
    m->run_id = strtoll(run, NULL, 10);
    (*n)++;
    return m->o.run_uid && m->o.step ? 0 : PLANCTL_ENOMEM;
}

int pctl_markers_find(pctl_marker **out, size_t *n)
{
    int rc = 0;

    *out = NULL;
    *n = 0;
#ifdef __linux__
    {
        DIR *d;
        struct dirent *de;
        char *buf, path[64];
        pid_t self = getpid();

        if (!(d = opendir("/proc")))
            return 0;
        buf = pctl_malloc(ENVIRON_MAX);
        if (!buf) {
            closedir(d);
            return PLANCTL_ENOMEM;
        }
        while (rc == 0 && (de = readdir(d)) != NULL) {
            char *end;
            long pid = strtol(de->d_name, &end, 10);
            const char *uid, *run, *step, *attempt;
            ssize_t len = 0, got;
            int fd;

            if (*end || pid <= 1 || (pid_t)pid == self)
                continue;
            snprintf(path, sizeof path, "/proc/%ld/environ", pid);
            fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            while (len < ENVIRON_MAX - 1 &&
                   (got = read(fd, buf + len,
                               (size_t)(ENVIRON_MAX - 1 - len))) > 0)
                len += got;
            close(fd);
            buf[len] = '\0';
            uid = env_value(buf, (size_t)len, "PLANCTL_RUN_UID");
            run = env_value(buf, (size_t)len, "PLANCTL_RUN");
            step = env_value(buf, (size_t)len, "PLANCTL_STEP");
            attempt = env_value(buf, (size_t)len, "PLANCTL_ATTEMPT");
            if (uid && run && step && attempt)
                rc = add_marker(out, n, uid, run, step, attempt);
        }
        pctl_free(buf);
        closedir(d);
    }
#endif
    if (rc < 0) {
        pctl_markers_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

void pctl_markers_free(pctl_marker *m, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        pctl_free(m[i].o.run_uid);
        pctl_free(m[i].o.step);
    }
    pctl_free(m);
}
