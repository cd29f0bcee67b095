/* exec_shell.c - the shell executor: runs a task's argv or command as a
 * child process, with the run's parameters in its environment. */

/*
 * Spawning.  The child is started with posix_spawn() (glibc's clone with
 * CLONE_VFORK: no copy of a large host's page tables, as fork() makes) and
 * its exit is learnt from a pidfd watched by a uv_poll_t, then reaped with
 * waitid() for its pid alone: no signal handler is installed, so SIGCHLD
 * stays the host's at every instant (planctl.h, "Signals"; sigchld.c says
 * why libuv's way cannot).  Where the kernel has no pidfd_open() (before
 * Linux 5.3, and under valgrind 3.19), a thread of its own waits for that
 * pid alone in waitid() and wakes the loop with a uv_async_t: still no
 * signal handler.  Only a process that ignores SIGCHLD, where the kernel
 * would reap the child before anyone could read its status, starts it
 * with uv_spawn() instead, with libuv's SIGCHLD handler held with
 * SA_ONSTACK (sigchld.c).  All start it the same: stdin /dev/null, stdout
 * and stderr into pipes, a session of its own, every signal at its
 * default and none blocked.
 *
 * Handles.  A started job owns one struct shell and, inside it, libuv
 * handles: the process (uv_spawn's), the pidfd's watcher or the reaper
 * thread's uv_async_t, one pipe for stdout and one for stderr, `timer`
 * (the task's timeout, then the grace between SIGTERM and SIGKILL) and
 * `drain` (how long output may stay open once the process has exited).
 * uv_spawn() initialises the process handle even when it fails, so it is
 * closed on that path too.  Every handle is freed only by its close
 * callback: `closing` counts the callbacks still to come, and the last one
 * reports the job with planctl_step_finish() and frees the struct.
 * Nothing touches the job after that finish.
 *
 * When to finish.  The process's exit and the end of its output arrive in
 * no fixed order: the exit callback can run while unread output still sits
 * in a pipe, and a pipe can reach EOF long before the process exits.  The
 * job finishes only when it has both the exit status and EOF on both pipes,
 * so the tail of the output (kept for the attempt, and its last line put
 * in the message) is never cut short.  One exception: a background process
 * that outlives the child but keeps the pipes open (`daemon &`) would hold
 * the job forever, so `drain` stops waiting for EOF DRAIN_MS after the exit
 * and such processes are left alone.
 *
 * Killing.  The child is spawned in a session of its own (setsid()), so
 * it leads its own process group; cancel() and the timeout send
 * SIGTERM to the whole group (kill(-pid), where uv_process_kill() would
 * reach the child alone), then SIGKILL after KILL_GRACE_MS.  That is what
 * takes down grandchildren (`sleep 300 & ...`), which also hold the pipes.
 *
 * Dying with the engine.  A task must not run on beside the retry of a
 * restarted engine: its process must die with the engine, or carry the
 * marker a restarted engine reaps by (PLANCTL_RUN_UID, STEP and ATTEMPT in
 * its environment, engine/orphans.c) before the engine dies.  Neither spawn
 * runs code of ours between fork and exec, so the child is run as
 *
 *     setpriv --pdeathsig KILL -- /bin/sh -c GUARD sh <engine pid> argv...
 *
 * setpriv sets PR_SET_PDEATHSIG and execs the guard, which keeps it.  The
 * guard execs the task only if its parent is still the engine ($PPID, read
 * after the prctl), else exits 125.  setpriv alone left a hole (found by
 * tests/crash): an engine dying between the fork and the prctl sends no
 * signal, and until its exec (for an instant inside each exec, too) the
 * child does not show the marker, so recovery missed it and it ran its
 * task beside the retry.  With the guard, an engine dead before the check
 * means the task never starts; one alive at the check had pdeathsig armed
 * before it, so its death kills the child.  Without setpriv there is no
 * pdeathsig: the guard still keeps the task of an engine that died first
 * from starting, and the rest is left to reaping by marker.  The pid
 * cannot be mistaken: an orphan's new parent (init or a subreaper) lived,
 * with a pid of its own, while the engine did.
 * pdeathsig reaches the direct child only (and fires when the engine's
 * loop thread exits, not only its process); grandchildren are found by
 * their marker, or killed with the group on cancel.
 *
 * The start gate.  Where other engines may take a late engine's runs
 * (PostgreSQL), its keeper (keeper.c) kills its tasks once it is past its
 * time, but it can kill only the groups it was told of, and it is told
 * once the spawn has returned.  An engine stopped in between (SIGSTOP, a
 * frozen VM) would leave a task the keeper does not know running beside
 * the retry of another engine (tests/pg/spawn_stopped.sh).  So a fleet
 * engine's child waits, before its exec, on a socket (descriptor 3,
 * GUARD_GATED) until the engine has listed its group with the keeper and
 * then found itself still within its time: then it sends a line and the
 * child execs the task.  Past its time, it closes the socket without a
 * word: the child exits 125 and the try ends "not done", using no
 * attempt.  An engine stopped after listing the group is the keeper's to
 * handle: it kills the group, waiting at the gate or running.  A socket,
 * not a pipe, so the line can be sent with MSG_NOSIGNAL: a child already
 * killed raises no SIGPIPE in the host.  Without a keeper (SQLite: one
 * engine per database) there is no gate.
 *
 * Parameters reach the child only through its environment, never pasted
 * into a command string, so a value like `$(rm -rf ~)` stays inert.
 */
/* posix_spawn's POSIX_SPAWN_SETSID and addchdir_np, and pipe2(): the
 * spawn without libuv's SIGCHLD ("Spawning", below). */
#define _GNU_SOURCE
#include "engine/executors.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/def.h"
#include "core/envname.h"
#include "core/logtail.h"
#include "core/outputs.h"
#include "core/ptype.h"
#include "core/shellspec.h"
#include "engine/job.h"
#include "engine/keeper.h"
#include "engine/outfile.h"
#include "engine/sigchld.h"

#define TAIL_MIN 4096      /* output kept at least, for the message's line */
#define KILL_GRACE_MS 5000 /* from SIGTERM to SIGKILL */
#define DRAIN_MS 2000      /* output left open after the exit */
#define LOST_STATUS (-1)   /* exit status reaped by someone else */
#define SETPRIV "/usr/bin/setpriv"
/* Execs the rest of its arguments if $1 is its parent's pid (see "Dying
 * with the engine"); `case` is a reserved word, so no function imported
 * from the environment can stand in for it, as one could for `[`. */
#define GUARD "case $PPID in \"$1\") shift; exec \"$@\";; esac; exit 125"
/* GUARD that also waits at the start gate (see "The start gate"): a line
 * read from descriptor 3 lets it exec, with 3 closed; end of file (the
 * engine past its time, or gone) makes it exit 125.  `unset` is a special
 * built-in, so an imported function cannot stand in for it; it removes
 * any that would for `read`. */
#define GUARD_GATED                                                            \
    "unset -f read; case $PPID in \"$1\") shift; read -r g <&3 && "            \
    "exec \"$@\" 3<&-;; esac; exit 125"
#define GATE_FD 3 /* the gate's descriptor in the child */

extern char **environ;

enum { STOP_NONE, STOP_CANCEL, STOP_TIMEOUT };

typedef struct shell {
    planctl_job *job;
    uv_process_t proc; /* the child, where it was spawned by libuv */
    uv_poll_t exitw;   /* else its pidfd, readable once it has exited */
    uv_async_t reapw;  /* else the reaper thread's word that it reaped */
    pthread_t reaper;  /* that thread, while reaper_on */
    int reaper_on;
    int reap_rc;        /* the thread's waitid(): its return */
    siginfo_t reaped;   /* and what it read */
    int pid;            /* the child's, 0 before it runs */
    int pidfd;          /* -1: none */
    uv_pipe_t pipes[2]; /* stdout, stderr */
    uv_timer_t timer;   /* the timeout, then the SIGKILL grace */
    uv_timer_t drain;
    int closing;    /* close callbacks still to come */
    int wound_up;   /* every handle is closing; the last one finishes */
    int open_pipes; /* pipes not yet at EOF */
    int exited, term_signal;
    int64_t exit_status;
    int stop;      /* STOP_*: the kill is ours, and why */
    int term_sent; /* SIGTERM went to the group */
    int64_t timeout_ms;
    unsigned char fatal[256]; /* fatal by code: fatal_exit_codes, 126 and
                                 127 unless in retry_exit_codes */
    int failed;               /* before the process ran: */
    planctl_outcome outcome;  /* ...the outcome */
    char *message;            /* ...and its message, owned */
    pctl_outfile out;         /* $PLANCTL_OUTPUT */
    uint64_t total;           /* output bytes seen */
    size_t pos; /* the next write in tail (its oldest byte once full) */
    size_t cap; /* of tail: the job's output_max, at least TAIL_MIN, so the
                   message has its last line whatever the attempt keeps */
    char *tail;
    char buf[16384]; /* read buffer; shared, as a read completes at once */
} shell;

/* The child's environment: "NAME=VALUE" strings, owned, NULL-terminated. */
typedef struct envv {
    char **v;
    size_t n, cap;
} envv;

/* ---- spec and environment ---------------------------------------------- */

/* Decodes the spec text (NULL: "{}") into *sp, which borrows from *root;
 * the caller json_decref()s *root in every case.  The rules are
 * core/shellspec.c's, the ones validation applies, read the executor's
 * way.  Returns 0, PLANCTL_EINVAL with a message in *err, or
 * PLANCTL_ENOMEM. */
static int parse(pctl_shell_spec *sp, json_t **root, char **err,
                 const char *text)
{
    char msg[PCTL_SHELL_MSG_MAX];
    json_error_t jerr;
    int rc = 0;

    memset(sp, 0, sizeof *sp);
    *root = json_loads(text ? text : "{}", JSON_REJECT_DUPLICATES, &jerr);
    if (!*root && json_error_code(&jerr) == json_error_out_of_memory)
        rc = PLANCTL_ENOMEM;
    else if (!*root)
        rc = pctl_spec_error(err, "shell spec", "invalid JSON: %s", jerr.text);
    else if (!json_is_object(*root))
        rc = pctl_spec_error(err, "shell spec", "expected a JSON object");
    else if ((rc = pctl_shell_spec_decode(sp, msg, sizeof msg, NULL, *root,
                                          PCTL_SHELL_EXECUTE)) ==
             PLANCTL_EINVAL)
        rc = pctl_spec_error(err, "shell spec", "%s", msg);
    return rc;
}

/* Adds kv ("NAME=VALUE", taken over; NULL: allocation failed), replacing
 * a variable of the same name.  Returns 0 or PLANCTL_ENOMEM. */
static int env_put(envv *e, char *kv)
{
    size_t i, len;

    if (!kv)
        return PLANCTL_ENOMEM;
    len = strcspn(kv, "=");
    for (i = 0; i < e->n; i++) {
        if (!strncmp(e->v[i], kv, len) && e->v[i][len] == '=') {
            pctl_free(e->v[i]);
            e->v[i] = kv;
            return 0;
        }
    }
    if (e->n + 1 >= e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 64;
        char **v = pctl_realloc(e->v, cap * sizeof *v);

        if (!v) {
            pctl_free(kv);
            return PLANCTL_ENOMEM;
        }
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = kv;
    e->v[e->n] = NULL;
    return 0;
}

static const char *env_get(const envv *e, const char *name)
{
    size_t i, len = strlen(name);

    for (i = 0; i < e->n; i++)
        if (!strncmp(e->v[i], name, len) && e->v[i][len] == '=')
            return e->v[i] + len + 1;
    return NULL;
}

/* The parameter's variable (pctl_env_param_name) set to its value as a
 * task receives it (pctl_ptype_text: scalars as text, arrays and maps as
 * compact JSON).  NULL on allocation failure. */
static char *param_var(const char *key, const json_t *v)
{
    char *name = pctl_env_param_name(key), *text = pctl_ptype_text(v);
    char *kv = name && text ? pctl_asprintf("%s=%s", name, text) : NULL;

    pctl_free(text);
    pctl_free(name);
    return kv;
}

/* Adds the parameters (JSON text; NULL: none), skipping those without a
 * value.  Returns 0, PLANCTL_EINVAL with a message in *err, or
 * PLANCTL_ENOMEM. */
static int put_params(envv *e, char **err, const char *text)
{
    json_error_t jerr;
    json_t *params, *v;
    const char *key;
    int rc = 0;

    if (!text)
        return 0;
    params = json_loads(text, 0, &jerr);
    if (!params && json_error_code(&jerr) == json_error_out_of_memory) {
        rc = PLANCTL_ENOMEM;
    } else if (!json_is_object(params)) {
        *err = pctl_strdup("shell: the parameters are not a JSON object");
        rc = *err ? PLANCTL_EINVAL : PLANCTL_ENOMEM;
    }
    json_object_foreach(params, key, v)
    {
        if (!rc && !json_is_null(v)) /* unset stays unset */
            rc = env_put(e, param_var(key, v));
    }
    json_decref(params);
    return rc;
}

/* Adds the outputs the task is given (JSON text, planctl_task_info's;
 * NULL: none) as PLANCTL_OUTPUT_<STEP>_<KEY>, in the order given, so of
 * two that map to one variable the later step's wins.  A secret left out
 * of an imported bundle has no value and sets nothing.  Returns 0 or
 * PLANCTL_ENOMEM. */
static int put_outputs(envv *e, const char *text)
{
    json_t *all = text ? json_loads(text, 0, NULL) : NULL, *set, *v;
    const char *step, *key, *value;
    int rc = 0;

    json_object_foreach(all, step, set)
    {
        json_object_foreach(set, key, v)
        {
            char *name;

            if (rc || !(value = pctl_output_value(v, NULL)))
                continue;
            name = pctl_env_output_name(step, key);
            rc = env_put(e, name ? pctl_asprintf("%s=%s", name, value) : NULL);
            pctl_free(name);
        }
    }
    json_decref(all);
    return rc;
}

/*
 * The engine's environment, then spec.env, then the engine's own
 * variables (the parameters', PLANCTL_INSTANCE and the rest), each
 * overriding the ones before: nothing a definition says can change what
 * the engine sets.  spec.env's PLANCTL_* names are dropped besides.
 * Validation refuses them, but a definition stored before it did may
 * hold them, and one would set a parameter that has no value, or stand
 * in for a variable the engine leaves unset (a preflight check has no
 * PLANCTL_RUN_UID).  Returns 0, PLANCTL_EINVAL with a message in *err, or
 * PLANCTL_ENOMEM.
 */
static int build_env(envv *e, char **err, const planctl_task_info *info,
                     const pctl_shell_spec *sp, const char *outfile)
{
    /* PLANCTL_RUN_UID with STEP and ATTEMPT also mark the process and its
     * children, so a restarted engine can find what a dead one left
     * running (engine/orphans.c). */
    static const char *const names[] = {"INSTANCE", "PLAN", "PHASE",
                                        "STEP",     "TASK", "RUN_UID"};
    const char *values[] = {info->instance, info->plan, info->phase,
                            info->step,     info->task, info->run_uid};
    size_t i;
    void *it;
    int rc = 0;

    for (i = 0; environ && environ[i] && !rc; i++)
        rc = env_put(e, pctl_strdup(environ[i]));
    for (it = pctl_iter(sp->env); it && !rc; it = pctl_iter_next(sp->env, it)) {
        const char *key = json_object_iter_key(it);

        if (!pctl_env_name_reserved(key))
            rc = env_put(e, pctl_asprintf(
                                "%s=%s", key,
                                json_string_value(json_object_iter_value(it))));
    }
    if (!rc)
        rc = put_params(e, err, info->params);
    if (!rc)
        rc = put_outputs(e, info->outputs);
    if (!rc && outfile)
        rc = env_put(e, pctl_asprintf("%s=%s", PCTL_ENV_OUTPUT_FILE, outfile));
    for (i = 0; i < sizeof names / sizeof names[0] && !rc; i++)
        if (values[i])
            rc =
                env_put(e, pctl_asprintf("PLANCTL_%s=%s", names[i], values[i]));
    if (!rc)
        rc =
            env_put(e, pctl_asprintf("PLANCTL_RUN=%lld", (long long)info->run));
    if (!rc)
        rc = env_put(e, pctl_asprintf("PLANCTL_ATTEMPT=%d", info->attempt));
    return rc;
}

/* ---- checks before the spawn -------------------------------------------- */

/* 0 if cwd/dir/file (cwd only for a relative path, dir only when dlen > 0)
 * is an executable regular file, else a UV_E* code. */
static int can_exec(const char *cwd, const char *dir, int dlen,
                    const char *file)
{
    int rel = cwd && (dlen ? dir[0] != '/' : file[0] != '/'), rc;
    char *path = pctl_asprintf("%s%s%.*s%s%s", rel ? cwd : "", rel ? "/" : "",
                               dlen, dir, dlen ? "/" : "", file);
    struct stat st;

    if (!path)
        return UV_ENOMEM;
    if (stat(path, &st) != 0)
        rc = uv_translate_sys_error(errno);
    else
        rc = S_ISREG(st.st_mode) && access(path, X_OK) == 0 ? 0 : UV_EACCES;
    pctl_free(path);
    return rc;
}

/* Looks file up as execvp() will in the child (PATH from its environment,
 * relative paths from its cwd).  Only for a clear message: with the guard
 * in front, uv_spawn() itself succeeds whatever file is.  0 or UV_E*. */
static int lookup(const char *file, const char *cwd, const char *path)
{
    int rc = UV_ENOENT, r;
    const char *end;

    if (strchr(file, '/'))
        return can_exec(cwd, "", 0, file);
    for (path = path ? path : "/bin:/usr/bin";; path = end + 1) {
        end = path + strcspn(path, ":");
        r = can_exec(cwd, path, (int)(end - path), file);
        if (r == 0 || r == UV_ENOMEM)
            return r;
        if (r == UV_EACCES)
            rc = r; /* execvp reports EACCES over a later ENOENT */
        if (!*end)
            return rc;
    }
}

/* Checks that cwd is a directory and file can run.  Returns 0,
 * PLANCTL_EINVAL with a message in *msg, or PLANCTL_ENOMEM; *code is the
 * exit code the shell gives a program it cannot run (127: not found, 126:
 * not executable), 0 for a bad cwd. */
static int precheck(char **msg, int *code, const char *file, const char *cwd,
                    const char *path)
{
    struct stat st;
    int rc = 0;

    if (cwd && stat(cwd, &st) != 0)
        rc = uv_translate_sys_error(errno);
    else if (cwd && !S_ISDIR(st.st_mode))
        rc = UV_ENOTDIR;
    if (rc)
        *msg = pctl_asprintf("cwd \"%s\": %s", cwd, uv_strerror(rc));
    else if ((rc = lookup(file, cwd, path)) == UV_ENOMEM)
        return PLANCTL_ENOMEM;
    else if (rc) {
        *code = rc == UV_ENOENT ? PCTL_SHELL_NOTFOUND : PCTL_SHELL_NOEXEC;
        *msg = pctl_asprintf("cannot run \"%s\": %s", file, uv_strerror(rc));
    }
    return !rc ? 0 : *msg ? PLANCTL_EINVAL : PLANCTL_ENOMEM;
}

/* ---- output ------------------------------------------------------------- */

static void keep(shell *s, const char *p, size_t n)
{
    size_t room = s->cap - s->pos;

    s->total += n;
    if (n >= s->cap) {
        memcpy(s->tail, p + n - s->cap, s->cap);
        s->pos = 0;
        return;
    }
    memcpy(s->tail + s->pos, p, n < room ? n : room);
    if (n > room)
        memcpy(s->tail, p + room, n - room);
    s->pos = (s->pos + n) % s->cap;
}

/* The kept output as a string (owned; NULL on allocation failure): when
 * older output was dropped it starts on a character boundary, and a NUL
 * becomes U+FFFD, as the output must be a C string. */
static char *tail_text(const shell *s)
{
    size_t len = s->total < s->cap ? (size_t)s->total : s->cap;
    size_t start = s->total < s->cap ? 0 : s->pos, i, nuls = 0;
    char *out, *q;

#define AT(i) (s->tail[(start + (i)) % s->cap])
    for (i = 0; s->total > s->cap && i < 3; i++, start++, len--)
        if (((unsigned char)AT(0) & 0xc0) != 0x80)
            break;
    for (i = 0; i < len; i++)
        nuls += AT(i) == '\0';
    if (!(out = q = pctl_malloc(len + 2 * nuls + 1)))
        return NULL;
    for (i = 0; i < len; i++) {
        if (!AT(i)) {
            memcpy(q, "\xef\xbf\xbd", 3);
            q += 3;
        } else {
            *q++ = AT(i);
        }
    }
#undef AT
    *q = '\0';
    return out;
}

/* The output so far as the attempt keeps it (planctl_job.live_text): NULL
 * once the job winds up, as its outcome will carry the output. */
static char *live_text(planctl_job *job, int64_t *bytes)
{
    shell *s = planctl_job_data(job);
    char *text, *kept;

    if (!s || !(text = tail_text(s)))
        return NULL;
    kept = pctl_job_output_tail(text, job->output_max);
    pctl_free(text);
    *bytes = (int64_t)s->total;
    return kept;
}

static const char *signame(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},
        {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},
        {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
        {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
        {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
        {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"}};
    size_t i;

    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig)
            return names[i].name;
    return NULL;
}

/* Records the output and reports how the process ended.  A message that
 * cannot be allocated is lost, not the outcome. */
static void report(shell *s)
{
    char head[96], d[32], *tail = tail_text(s), *msg = NULL;
    planctl_outcome o = PLANCTL_OUTCOME_ERROR;
    int code = s->term_signal ? 128 + s->term_signal : (int)s->exit_status;
    const char *line = "";
    size_t len = 0;

    if (tail)
        line = pctl_logtail_last_line(tail, &len);
    pctl_duration_format(d, sizeof d, s->timeout_ms);
    if (s->stop == STOP_TIMEOUT)
        snprintf(head, sizeof head, "timed out after %s", d);
    else if (s->term_signal && signame(s->term_signal))
        snprintf(head, sizeof head, "killed by signal %d (%s)", s->term_signal,
                 signame(s->term_signal));
    else if (s->term_signal)
        snprintf(head, sizeof head, "killed by signal %d", s->term_signal);
    else if (s->exit_status == LOST_STATUS)
        snprintf(head, sizeof head,
                 "exit status unknown: the process was reaped by another "
                 "part of this process");
    else
        snprintf(head, sizeof head, "exit status %d", code);
    if (!s->stop && !s->term_signal && code == 0)
        o = PLANCTL_OUTCOME_DONE;
    else if (!s->stop && !s->term_signal && code >= 0 && code < 256 &&
             s->fatal[code])
        o = PLANCTL_OUTCOME_FATAL;
    /* What it wrote to $PLANCTL_OUTPUT: a malformed file fails a task
     * that succeeded (its refusal is the message), and is no news for one
     * that failed. */
    if (s->stop != STOP_CANCEL && s->out.path &&
        pctl_outfile_read(&s->out, s->job, &msg) == PLANCTL_EINVAL &&
        o == PLANCTL_OUTCOME_DONE) {
        o = PLANCTL_OUTCOME_ERROR;
    } else {
        pctl_free(msg);
        msg = NULL;
    }
    if (msg)
        ;                            /* the refusal of its outputs */
    else if (s->stop == STOP_CANCEL) /* its outcome is ignored anyway */
        msg = pctl_strdup("cancelled");
    else if (o != PLANCTL_OUTCOME_DONE && len)
        msg = pctl_asprintf("%s: %.*s", head, (int)len, line);
    else if (o != PLANCTL_OUTCOME_DONE)
        msg = pctl_strdup(head);
    planctl_job_set_output(s->job, code, tail ? tail : "");
    s->job->output_bytes = (int64_t)s->total; /* tail is its last bytes */
    planctl_step_finish(s->job, o, msg);
    pctl_free(msg);
    pctl_free(tail);
}

/* ---- handles ------------------------------------------------------------ */

/* Reports the job and frees it: nothing of it is left on the loop. */
static void finish(shell *s)
{
    if (s->failed)
        planctl_step_finish(s->job, s->outcome, s->message);
    else
        report(s);
    pctl_outfile_remove(&s->out);
    if (s->pidfd >= 0)
        close(s->pidfd); /* its watcher is closed by now */
    pctl_free(s->message);
    pctl_free(s->tail);
    pctl_free(s);
}

static void on_closed(uv_handle_t *h)
{
    shell *s = h->data;

    if (--s->closing == 0 && s->wound_up)
        finish(s);
}

/* Closes h if it was initialised and is not closing yet. */
static void close_handle(shell *s, void *handle)
{
    uv_handle_t *h = handle;

    if (uv_handle_get_type(h) == UV_UNKNOWN_HANDLE || uv_is_closing(h))
        return;
    s->closing++;
    uv_close(h, on_closed);
}

/* Closes every handle; the last close callback reports the job.  From here
 * on cancel() finds no data on the job and does nothing. */
static void wind_up(shell *s)
{
    s->wound_up = 1;
    planctl_job_set_data(s->job, NULL);
    close_handle(s, &s->proc);
    close_handle(s, &s->exitw);
    close_handle(s, &s->reapw);
    close_handle(s, &s->pipes[0]);
    close_handle(s, &s->pipes[1]);
    close_handle(s, &s->timer);
    close_handle(s, &s->drain);
}

/* A failure before the process ran: report it once the handles are closed
 * (msg is taken over; NULL when it could not be allocated). */
/* The task could not run: reported as outcome o with msg (taken over). */
static void fail_as(shell *s, planctl_outcome o, char *msg)
{
    s->failed = 1;
    s->outcome = o;
    s->message = msg;
    wind_up(s);
    if (!s->closing) /* no handle was initialised */
        finish(s);
}

static void fail(shell *s, char *msg)
{
    fail_as(s, PLANCTL_OUTCOME_ERROR, msg);
}

static void maybe_finish(shell *s)
{
    if (!s->wound_up && s->exited && s->open_pipes == 0)
        wind_up(s);
}

static void close_pipe(shell *s, uv_pipe_t *p)
{
    if (uv_is_closing((uv_handle_t *)p))
        return;
    uv_read_stop((uv_stream_t *)p);
    close_handle(s, p);
    s->open_pipes--;
}

static void on_drain(uv_timer_t *t)
{
    shell *s = t->data;

    close_pipe(s, &s->pipes[0]);
    close_pipe(s, &s->pipes[1]);
    maybe_finish(s);
}

/* The task's timeout, or cancel(): SIGTERM to the group; then, once the
 * grace is over, SIGKILL.  The group outlives its leader while any member
 * lives; when it is gone, kill() fails with ESRCH, which is fine. */
static void on_timer(uv_timer_t *t)
{
    shell *s = t->data;

    if (s->term_sent) { /* the grace is over */
        kill(-s->pid, SIGKILL);
        if (s->exited && s->open_pipes > 0)
            uv_timer_start(&s->drain, on_drain, DRAIN_MS, 0);
        return;
    }
    if (!s->stop) /* the task's timeout, not a cancel */
        s->stop = STOP_TIMEOUT;
    s->term_sent = 1;
    kill(-s->pid, SIGTERM);
    uv_timer_stop(&s->drain); /* the output waits for the SIGKILL now */
    uv_timer_start(&s->timer, on_timer, KILL_GRACE_MS, 0);
}

/* The child has exited with status, or was killed by signal sig. */
static void exited(shell *s, int64_t status, int sig)
{
    s->exited = 1;
    pctl_keeper_remove(s->job->keeper, s->pid);
    s->exit_status = status;
    s->term_signal = sig;
    if (s->open_pipes > 0 && !s->term_sent)
        uv_timer_start(&s->drain, on_drain, DRAIN_MS, 0);
    maybe_finish(s);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
    exited(p->data, status, sig);
}

/* The child was reaped by waitid(), which returned rc and filled si. */
static void reaped(shell *s, int rc, const siginfo_t *si)
{
    if (rc != 0) /* reaped by someone else in the process: status lost */
        exited(s, LOST_STATUS, 0);
    else if (si->si_code == CLD_EXITED)
        exited(s, si->si_status, 0);
    else
        exited(s, 0, si->si_status);
}

/* The child's pidfd is readable: it has exited (a zombie until reaped
 * here, so its pid cannot have been reused).  Reaps it. */
static void on_pidfd(uv_poll_t *w, int status, int events)
{
    shell *s = w->data;
    siginfo_t si;
    int rc;

    (void)events;
    memset(&si, 0, sizeof si);
    do
        rc = waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG);
    while (rc != 0 && errno == EINTR);
    if (rc == 0 && si.si_pid == 0 && status == 0)
        return; /* not yet after all */
    uv_poll_stop(w);
    reaped(s, rc, &si);
}

/* The reaper thread: waits for the child alone (no pidfd to watch), then
 * wakes the loop.  Every signal is blocked in it (reaper_start()). */
static void *reap(void *arg)
{
    shell *s = arg;
    siginfo_t si;
    int rc;

    memset(&si, 0, sizeof si);
    do
        rc = waitid(P_PID, (id_t)s->pid, &si, WEXITED);
    while (rc != 0 && errno == EINTR);
    s->reap_rc = rc;
    s->reaped = si;
    uv_async_send(&s->reapw);
    return NULL;
}

/* The reaper thread has reaped the child (its loop's side). */
static void on_reaped(uv_async_t *a)
{
    shell *s = a->data;

    if (!s->reaper_on)
        return;
    pthread_join(s->reaper, NULL); /* it is returning: its writes are seen */
    s->reaper_on = 0;
    reaped(s, s->reap_rc, &s->reaped);
}

/* Starts the reaper thread for s->pid, with every signal blocked, so that
 * no host's handler ever runs on it.  0 or UV_E*. */
static int reaper_start(shell *s)
{
    sigset_t all, was;
    pthread_attr_t at;
    int rc;

    if ((rc = uv_async_init(planctl_job_loop(s->job), &s->reapw, on_reaped)) <
        0)
        return rc;
    if ((rc = pthread_attr_init(&at)) != 0)
        return uv_translate_sys_error(rc);
    (void)pthread_attr_setstacksize(&at, 64 * 1024); /* waitid() alone */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &was);
    rc = pthread_create(&s->reaper, &at, reap, s);
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    pthread_attr_destroy(&at);
    if (rc != 0)
        return uv_translate_sys_error(rc);
    s->reaper_on = 1;
    return 0;
}

/* Kills a child that cannot be watched or read, and reaps it: it must not
 * run on unwatched. */
static void kill_reap(shell *s)
{
    kill(-s->pid, SIGKILL);
    kill(s->pid, SIGKILL);
    if (s->reaper_on) { /* the thread reaps it */
        pthread_join(s->reaper, NULL);
        s->reaper_on = 0;
    } else {
        while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    shell *s = h->data;

    (void)hint;
    *buf = uv_buf_init(s->buf, sizeof s->buf);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    shell *s = st->data;

    if (n > 0) {
        keep(s, buf->base, (size_t)n);
        pctl_job_output_grew(s->job, live_text);
    } else if (n < 0) { /* EOF, or an error that ends this pipe as well */
        close_pipe(s, (uv_pipe_t *)st);
        maybe_finish(s);
    }
}

/* ---- the executor ------------------------------------------------------- */

/* Where the task's own argv starts in the child's argv. */
static size_t task_index(int setpriv)
{
    return setpriv ? 9 : 5;
}

/* The child's argv, NULL-terminated: [setpriv --pdeathsig KILL --] /bin/sh
 * -c GUARD sh <pid> (GUARD_GATED if gated), then the task's argv or /bin/sh
 * -c <command>.  The strings are borrowed from the spec and pid.  NULL when
 * out of memory. */
static char **build_argv(const pctl_shell_spec *sp, int setpriv, int gated,
                         const char *pid)
{
    const char *guard = gated ? GUARD_GATED : GUARD;
    const char *const pre[] = {"setpriv", "--pdeathsig", "KILL", "--",
                               "/bin/sh", "-c",          guard,  "sh"};
    size_t n = sp->argv ? json_array_size(sp->argv) : 3, k = 0, i;
    char **v = pctl_malloc((task_index(1) + n + 1) * sizeof *v);

    if (!v)
        return NULL;
    for (i = setpriv ? 0 : 4; i < sizeof pre / sizeof pre[0]; i++)
        v[k++] = (char *)pre[i];
    v[k++] = (char *)pid;
    for (i = 0; sp->argv && i < n; i++)
        v[k++] = (char *)json_string_value(json_array_get(sp->argv, i));
    if (!sp->argv) {
        v[k++] = "/bin/sh";
        v[k++] = "-c";
        v[k++] = (char *)sp->command;
    }
    v[k] = NULL;
    return v;
}

static atomic_int spawn_way; /* PCTL_SPAWN_* */

void pctl_shell_spawn_way(int way)
{
    atomic_store(&spawn_way, way);
}

/* The way set by pctl_shell_spawn_way(), else by PLANCTL_SHELL_SPAWN
 * (libuv or thread) in the environment, for tests only
 * (tests/crash/earlykill.c holds a child between its fork and its exec,
 * which only libuv's way has room for). */
static int way_forced(void)
{
    const char *env = getenv("PLANCTL_SHELL_SPAWN");
    int way = atomic_load(&spawn_way);

    if (way != PCTL_SPAWN_AUTO || !env)
        return way;
    return !strcmp(env, "libuv")    ? PCTL_SPAWN_LIBUV
           : !strcmp(env, "thread") ? PCTL_SPAWN_THREAD
                                    : PCTL_SPAWN_AUTO;
}

/* Whether a child's exit is watched through a pidfd: unless a test asks
 * for the thread, where the kernel has pidfd_open() (Linux 5.3; asked
 * once, a pidfd on the process itself).  Any thread. */
static int pidfd_works(void)
{
    static atomic_int known; /* 0: not asked; 1: yes; 2: no */
    int k = atomic_load(&known), fd;

    if (way_forced() == PCTL_SPAWN_THREAD)
        return 0;
    if (k)
        return k == 1;
    fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (fd >= 0)
        close(fd);
    k = fd >= 0 || errno != ENOSYS ? 1 : 2;
    atomic_store(&known, k);
    return k == 1;
}

/* Every signal, glibc's own included: its sigfillset() leaves out the two
 * it uses inside (32 and 33, below SIGRTMIN), and its posix_spawn() sets
 * the ones not in the "default" set that the parent catches to SIG_IGN in
 * the child, which exec keeps; a task would start with them ignored,
 * where a forked child's exec resets them to their default.  So their
 * bits are set in the set as glibc lays it out (bit sig - 1). */
static void all_signals(sigset_t *set)
{
    int sig;

    sigfillset(set);
    sigdelset(set, SIGKILL);
    sigdelset(set, SIGSTOP);
#ifdef __GLIBC__
    for (sig = 32; sig < SIGRTMIN; sig++) {
        unsigned long *w = (unsigned long *)(void *)set;
        size_t bits = 8 * sizeof *w;

        w[(size_t)(sig - 1) / bits] |= 1UL << ((size_t)(sig - 1) % bits);
    }
#else
    (void)sig;
#endif
}

/* Whether the process ignores SIGCHLD (SIG_IGN or SA_NOCLDWAIT): the
 * kernel then reaps every child at once, planctl's too, whose exit status
 * would be lost.  libuv's uv_spawn() installs its handler over that, so
 * such a process spawns the libuv way.  Any thread. */
static int sigchld_ignored(void)
{
    struct sigaction now;

    return sigaction(SIGCHLD, NULL, &now) == 0 &&
           (now.sa_handler == SIG_IGN || (now.sa_flags & SA_NOCLDWAIT));
}

/* fd moved to min or above (closing fd), so that no dup2 in the child
 * onto a descriptor below min is onto itself, which would leave it
 * close-on-exec.  Returns the new descriptor or -1 with errno set. */
static int at_least(int fd, int min)
{
    int moved;

    if (fd < 0 || fd >= min)
        return fd;
    moved = fcntl(fd, F_DUPFD_CLOEXEC, min);
    close(fd);
    return moved;
}

/* Starts the child with posix_spawn(): stdin /dev/null, stdout and stderr
 * into new pipes whose read ends come back in rd[], the gate (>= 0, above
 * GATE_FD) on GATE_FD, in a session of its own, every signal at its
 * default and none blocked (as uv_spawn() would).  Nothing of libuv's
 * runs, and no signal handler is installed.  Returns 0 with s->pid set, or
 * UV_E*. */
static int spawn_posix(shell *s, const char *file, char **argv, char **env,
                       const char *cwd, int gate, int rd[2])
{
    int out[2] = {-1, -1}, err[2] = {-1, -1}, null, rc, i;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t all, none;
    pid_t pid;

    rd[0] = rd[1] = -1;
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        rc = uv_translate_sys_error(errno);
        goto done;
    }
    null = open("/dev/null", O_RDWR | O_CLOEXEC);
    out[1] = at_least(out[1], 3);
    err[1] = at_least(err[1], 3);
    if ((null = at_least(null, 3)) < 0 || out[1] < 0 || err[1] < 0) {
        rc = uv_translate_sys_error(errno);
        if (null >= 0)
            close(null);
        goto done;
    }
    all_signals(&all);
    sigemptyset(&none);
    if ((rc = posix_spawn_file_actions_init(&fa)) != 0) {
        close(null);
        rc = uv_translate_sys_error(rc);
        goto done;
    }
    if ((rc = posix_spawnattr_init(&at)) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        close(null);
        rc = uv_translate_sys_error(rc);
        goto done;
    }
    if (!(rc = posix_spawn_file_actions_adddup2(&fa, null, 0)) &&
        !(rc = posix_spawn_file_actions_adddup2(&fa, out[1], 1)) &&
        !(rc = posix_spawn_file_actions_adddup2(&fa, err[1], 2)) &&
        !(rc = gate >= 0 ? posix_spawn_file_actions_adddup2(&fa, gate, GATE_FD)
                         : 0) &&
        !(rc = cwd ? posix_spawn_file_actions_addchdir_np(&fa, cwd) : 0) &&
        !(rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID |
                                                 POSIX_SPAWN_SETSIGDEF |
                                                 POSIX_SPAWN_SETSIGMASK)) &&
        !(rc = posix_spawnattr_setsigdefault(&at, &all)) &&
        !(rc = posix_spawnattr_setsigmask(&at, &none)))
        rc = posix_spawn(&pid, file, &fa, &at, argv, env);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    close(null);
    if (rc != 0) {
        rc = uv_translate_sys_error(rc);
        goto done;
    }
    s->pid = (int)pid;
    /* A child not yet reaped cannot lose its pid: the pidfd is its. */
    if (!pidfd_works())
        rc = reaper_start(s);
    else if ((s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0)
        rc = uv_translate_sys_error(errno);
    else if ((rc = uv_poll_init(planctl_job_loop(s->job), &s->exitw,
                                s->pidfd)) == 0)
        rc = uv_poll_start(&s->exitw, UV_READABLE, on_pidfd);
    if (rc < 0) { /* cannot watch it */
        kill_reap(s);
        s->pid = 0;
        goto done;
    }
    rd[0] = out[0];
    rd[1] = err[0];
    out[0] = err[0] = -1;
    rc = 0;
done:
    for (i = 0; i < 2; i++) {
        if (out[i] >= 0)
            close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
    }
    return rc;
}

/* Starts the child with uv_spawn(), where the kernel has no pidfd: libuv
 * then reaps it on SIGCHLD, its handler held with SA_ONSTACK
 * (sigchld.c).  The gate (>= 0) goes on GATE_FD.  Returns 0 with s->pid
 * set, or UV_E*. */
static int spawn_uv(shell *s, const char *file, char **argv, char **env,
                    const char *cwd, int gate)
{
    uv_process_options_t opts;
    uv_stdio_container_t stdio[GATE_FD + 1];
    int i, rc;

    memset(&opts, 0, sizeof opts);
    stdio[0].flags = UV_IGNORE; /* libuv opens /dev/null */
    for (i = 0; i < 2; i++) {
        stdio[i + 1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
        stdio[i + 1].data.stream = (uv_stream_t *)&s->pipes[i];
    }
    opts.exit_cb = on_exit_cb;
    opts.file = file;
    opts.args = argv;
    opts.env = env;
    opts.cwd = cwd;
    opts.flags = UV_PROCESS_DETACHED; /* setsid(): its own process group */
    stdio[GATE_FD].flags = UV_INHERIT_FD;
    stdio[GATE_FD].data.fd = gate;
    opts.stdio_count = gate >= 0 ? GATE_FD + 1 : GATE_FD;
    opts.stdio = stdio;
    /* libuv's SIGCHLD handler, installed with SA_ONSTACK before the fork
     * and kept until the engine (or preflight) is done (sigchld.c). */
    if ((rc = pctl_sigchld_hold(&s->job->hub->chld, planctl_job_loop(s->job))) <
        0)
        return rc;
    /* uv_spawn() initialises the handle even when it fails. */
    rc = uv_spawn(planctl_job_loop(s->job), &s->proc, &opts);
    pctl_sigchld_check();
    if (rc == 0)
        s->pid = s->proc.pid;
    return rc;
}

/* The message of a try not started because the engine is past its time
 * (NULL when out of memory). */
static char *late_message(const char *file)
{
    return pctl_asprintf("not started: the engine is past the time it may "
                         "run \"%s\" (its heartbeat is late)",
                         file);
}

/* A new start gate ("The start gate"): gate[0] the engine's end, gate[1]
 * the child's, above GATE_FD.  0, or UV_E* with neither open. */
static int gate_make(int gate[2])
{
    int rc;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gate) != 0) {
        gate[0] = gate[1] = -1;
        return uv_translate_sys_error(errno);
    }
    if ((gate[1] = at_least(gate[1], GATE_FD + 1)) < 0) {
        rc = uv_translate_sys_error(errno);
        close(gate[0]);
        gate[0] = -1;
        return rc;
    }
    return 0;
}

/* Lets the child waiting at the gate go on if its group is listed with
 * the keeper (listed: pctl_keeper_add()'s return) and the engine is still
 * within its time; else leaves it to exit at end of file, and the try to
 * end "not done".  Closes gate (the engine's end). */
static void gate_open(shell *s, int gate, int listed, const char *file)
{
    if (listed < 0 || pctl_keeper_past(s->job->keeper)) {
        s->failed = 1; /* finish() reports it, once the child has exited */
        s->outcome = PLANCTL_OUTCOME_NOT_DONE;
        s->message = listed < 0 ? pctl_asprintf("waiting for resources to "
                                                "start \"%s\": %s",
                                                file, uv_strerror(listed))
                                : late_message(file);
    } else {
        /* A child killed meanwhile (by the keeper) makes this EPIPE: its
         * exit says what happened. */
        (void)send(gate, "\n", 1, MSG_NOSIGNAL);
    }
    close(gate);
}

/* Spawns the process on the initialised handles and starts reading; a
 * failure winds the job up with ERROR.  Can't fail otherwise. */
static void spawn(shell *s, char **argv, char **env, const char *cwd,
                  int setpriv)
{
    const char *file = argv[task_index(setpriv)];
    const char *prog = setpriv ? SETPRIV : "/bin/sh";
    int i, rc = 0, rd[2] = {-1, -1}, gate[2] = {-1, -1};

    /* An engine that was stopped (SIGSTOP, a frozen VM) between a pass's
     * commit and its starts wakes up past its time: its keeper kills
     * what it starts now, and another engine may have retried the step
     * meanwhile.  Not started, then (found by pg.backend_killed: a try
     * ran beside its retry once the stopped engine was continued).  One
     * stopped during the spawn itself is the start gate's to catch. */
    if (pctl_keeper_past(s->job->keeper)) {
        fail_as(s, PLANCTL_OUTCOME_NOT_DONE, late_message(file));
        return;
    }
    if (s->job->keeper)
        rc = gate_make(gate);
    if (rc == 0 && way_forced() != PCTL_SPAWN_LIBUV && !sigchld_ignored()) {
        rc = spawn_posix(s, prog, argv, env, cwd, gate[1], rd);
        for (i = 0; rc == 0 && i < 2; i++)
            if ((rc = uv_pipe_open(&s->pipes[i], rd[i])) == 0)
                rd[i] = -1;
        for (i = 0; i < 2; i++)
            if (rd[i] >= 0)
                close(rd[i]);
        if (rc < 0 && s->pid > 0) /* a pipe it writes cannot be read */
            kill_reap(s);
    } else if (rc == 0) {
        rc = spawn_uv(s, prog, argv, env, cwd, gate[1]);
    }
    if (gate[1] >= 0)
        close(gate[1]);
    if (rc < 0 && gate[0] >= 0) /* no child waits at it */
        close(gate[0]);
    if (rc == UV_EMFILE || rc == UV_ENFILE || rc == UV_EAGAIN ||
        rc == UV_ENOMEM) {
        /* Out of descriptors or processes: the engine's condition, not
         * the task's.  Reported as "not done yet", so the engine starts
         * it again after its poll interval, using no attempt. */
        fail_as(s, PLANCTL_OUTCOME_NOT_DONE,
                pctl_asprintf("waiting for resources to start \"%s\": %s", file,
                              uv_strerror(rc)));
        return;
    }
    if (rc < 0) {
        fail(s, pctl_asprintf("cannot run \"%s\": %s", file, uv_strerror(rc)));
        return;
    }
    /* Past its time, the engine's keeper kills the group (keeper.c; it
     * has room for 8192, more than an engine runs at once). */
    rc = pctl_keeper_add(s->job->keeper, s->pid);
    if (gate[0] >= 0)
        gate_open(s, gate[0], rc, file);
    s->open_pipes = 2;
    for (i = 0; i < 2; i++)
        if (uv_read_start((uv_stream_t *)&s->pipes[i], on_alloc, on_read))
            close_pipe(s, &s->pipes[i]);
    if (s->timeout_ms > 0)
        uv_timer_start(&s->timer, on_timer, (uint64_t)s->timeout_ms, 0);
    planctl_job_set_data(s->job, s);
}

static int shell_start(planctl_job *job, const planctl_task_info *info,
                       void *data)
{
    uv_loop_t *loop = planctl_job_loop(job);
    planctl_outcome o = PLANCTL_OUTCOME_FATAL;
    int rc, setpriv = access(SETPRIV, X_OK) == 0; /* cheap; it may change */
    int code = 0;
    char **argv = NULL, *msg = NULL, pid[24];
    envv e = {NULL, 0, 0};
    pctl_shell_spec sp;
    json_t *root;
    shell *s;

    (void)data;
    if (!(s = pctl_calloc(1, sizeof *s)))
        return PLANCTL_ENOMEM;
    s->cap = job->output_max > TAIL_MIN ? job->output_max : TAIL_MIN;
    if (!(s->tail = pctl_malloc(s->cap))) {
        pctl_free(s);
        return PLANCTL_ENOMEM;
    }
    s->job = job;
    s->pidfd = -1;
    /* libuv never touches a handle's data, init included. */
    s->proc.data = s->exitw.data = s->reapw.data = s;
    s->timer.data = s->drain.data = s;
    s->pipes[0].data = s->pipes[1].data = s;
    rc = parse(&sp, &root, &msg, info->spec);
    if (rc == 0 && (rc = pctl_outfile_make(&s->out, info)) < 0) {
        /* The machine's trouble, not the spec's: out of descriptors is
         * waited out as a spawn's is (spawn()); the rest is retried. */
        o = rc == UV_EMFILE || rc == UV_ENFILE ? PLANCTL_OUTCOME_NOT_DONE
                                               : PLANCTL_OUTCOME_ERROR;
        msg = pctl_asprintf("%scannot make the PLANCTL_OUTPUT file: %s",
                            o == PLANCTL_OUTCOME_NOT_DONE
                                ? "waiting for resources to start the task: "
                                : "",
                            uv_strerror(rc));
        rc = msg ? PLANCTL_EINVAL : PLANCTL_ENOMEM;
    }
    if (rc == 0)
        rc = build_env(&e, &msg, info, &sp, s->out.path);
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    if (rc == 0 && !(argv = build_argv(&sp, setpriv, job->keeper != NULL, pid)))
        rc = PLANCTL_ENOMEM;
    if (rc == 0) {
        memcpy(s->fatal, sp.fatal_exit_codes, sizeof s->fatal);
        s->fatal[PCTL_SHELL_NOEXEC] |= !sp.retry_exit_codes[PCTL_SHELL_NOEXEC];
        s->fatal[PCTL_SHELL_NOTFOUND] |=
            !sp.retry_exit_codes[PCTL_SHELL_NOTFOUND];
    }
    /* A bad spec will not get better by retrying (FATAL); a missing cwd
     * may (ERROR); a program that cannot run is what the shell's exit 127
     * (not found) or 126 (not executable) would be: fatal unless the spec
     * says to retry it. */
    if (rc == 0 &&
        (rc = precheck(&msg, &code, argv[task_index(setpriv)], sp.cwd,
                       env_get(&e, "PATH"))) == PLANCTL_EINVAL)
        o = code && s->fatal[code] ? PLANCTL_OUTCOME_FATAL
                                   : PLANCTL_OUTCOME_ERROR;
    if (rc == PLANCTL_EINVAL) {
        planctl_step_finish(job, o, msg);
        rc = 0;
        pctl_outfile_remove(&s->out);
        pctl_free(s->tail);
        pctl_free(s);
    } else if (rc < 0) {
        pctl_outfile_remove(&s->out);
        pctl_free(s->tail);
        pctl_free(s);
    } else if ((rc = uv_timer_init(loop, &s->timer)) < 0 ||
               (rc = uv_timer_init(loop, &s->drain)) < 0 ||
               (rc = uv_pipe_init(loop, &s->pipes[0], 0)) < 0 ||
               (rc = uv_pipe_init(loop, &s->pipes[1], 0)) < 0) {
        fail(s, pctl_asprintf("cannot start: %s", uv_strerror(rc)));
        rc = 0;
    } else {
        s->timeout_ms = sp.timeout;
        spawn(s, argv, e.v, sp.cwd, setpriv);
    }
    pctl_free(msg);
    pctl_free(argv);
    while (e.n)
        pctl_free(e.v[--e.n]);
    pctl_free(e.v);
    json_decref(root);
    return rc;
}

static void shell_cancel(planctl_job *job, void *data)
{
    shell *s = planctl_job_data(job);

    (void)data;
    if (!s)
        return; /* winding up: its finish is on the way */
    s->stop = STOP_CANCEL;
    if (!s->term_sent)
        on_timer(&s->timer); /* SIGTERM now, SIGKILL after the grace */
}

static const planctl_executor shell_executor = {
    PLANCTL_EXECUTOR_VERSION, shell_start, shell_cancel, NULL, NULL};

const planctl_executor *pctl_executor_shell(void)
{
    return &shell_executor;
}
