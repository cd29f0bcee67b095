/*
 * earlykill.c - kills the engine while the child of the shell step it just
 * started is between its fork and its exec, and checks that this child
 * never runs its task beside the retry of a restarted engine.
 *
 * The crash loop hit this about once in 14 runs (seed 839345500: "a step
 * ran twice at once").  The child sets PR_SET_PDEATHSIG only once it runs
 * setpriv, after its exec, so an engine that dies before that sends it no
 * signal; and until the exec (for a moment inside it, too) its environment
 * does not show the marker the restarted engine reaps by.  Here the window
 * is made as wide as we like: slowexec.so (LD_PRELOAD, tests only) holds
 * the first child the engine spawns before its exec until we say go, with
 * its close-on-exec descriptors already closed as they are at that moment
 * of an exec (else the engine's lock, which the child shares, would keep a
 * restarted engine out).
 *
 *   1. Engine A starts the step's attempt 1; its child stops before exec.
 *   2. A is killed with SIGKILL.  Engine B (no slowexec) marks attempt 1
 *      interrupted, reaps what carries its marker (not the held child) and
 *      starts attempt 2, whose task holds the step's lock until released.
 *   3. Once B is past the first seconds in which it looks again for marked
 *      processes (SWEEP_MS in engine/pass.c), the held child may go on: it
 *      execs setpriv, whose prctl now comes after its parent died.
 *
 * What is checked: the held child survived the recovery (else the race was
 * not provoked); once let go it ends within GONE_MS without ever starting
 * its task (no "attempt 1" in the starts, nothing found the lock taken);
 * then, attempt 2 released, B runs until idle, the run is COMPLETE and the
 * invariants of harness.h hold.
 *
 * Usage: earlykill --planctl PATH --slowexec PATH [--dir DIR] [--keep]
 * Exit 0 when every check held, 1 on a failure (the directory is kept), 2
 * on bad usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "harness.h"

#define CLI_TIMEOUT_MS 120000 /* one CLI command (sanitizers are slow) */
#define WAIT_MS 60000         /* for the held child, for attempt 2 */
#define SWEEP_PAST_MS 3500    /* B's start to go: past SWEEP_MS (3 s) */
#define GONE_MS 10000         /* go to the held child's end */
#define FINAL_TIMEOUT_MS 300000

/* The step's task: notes its start, takes the step's lock (or notes that
 * another attempt holds it), then holds it until released. */
static const char task_script[] =
    "#!/bin/sh\n"
    "d=$EARLYKILL_DIR\n"
    "echo \"attempt $PLANCTL_ATTEMPT pid $$\" >> \"$d/starts\"\n"
    "exec 9>>\"$d/lock\"\n"
    "if ! flock -n 9; then\n"
    "    echo \"attempt $PLANCTL_ATTEMPT started while another attempt of "
    "the step still ran\" >> \"$d/overlaps\"\n"
    "    exit 1\n"
    "fi\n"
    "n=0\n"
    "while [ ! -e \"$d/release\" ] && [ $n -lt 1200 ]; do\n"
    "    sleep 0.05; n=$((n + 1))\n"
    "done\n"
    "exit 0\n";

static const char definition[] =
    "{\"name\": \"early\", \"version\": \"1\",\n"
    " \"tasks\": [{\"name\": \"hold\", \"kind\": \"shell\", \"spec\": "
    "{\"command\": \"exec \\\"$EARLYKILL_DIR/task\\\"\"}}],\n"
    " \"plans\": {\"deploy\": {\"phases\": [{\"name\": \"p\", \"steps\": [\n"
    "  {\"name\": \"s\", \"tasks\": [\"hold\"],\n"
    "   \"retry\": {\"attempts\": 3, \"backoff\": \"50ms\"}}]}]}}}\n";

static struct {
    const char *planctl, *slowexec;
    char *dir, *db, *log, *env_dir;
    int keep;
    pid_t engine;
    h_proc held;
} T;

static void touch(const char *name)
{
    char *path = h_fmt("%s/%s", T.dir, name);

    h_write_file(path, "", 0600);
    free(path);
}

static void fail(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

static void fail(const char *fmt, ...)
{
    char *text;
    va_list ap;

    fflush(stdout);
    fprintf(stderr, "earlykill: FAILED: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (T.log && (text = h_read_file(T.log)) != NULL) {
        size_t len = strlen(text);

        fprintf(stderr, "--- last lines of %s\n%s", T.log,
                len > 3000 ? text + len - 3000 : text);
        free(text);
    }
    if (T.engine > 0) {
        kill(T.engine, SIGKILL);
        waitpid(T.engine, NULL, 0);
    }
    if (T.held.pid > 0 && h_proc_alive(&T.held))
        kill(T.held.pid, SIGKILL);
    if (T.dir) {
        touch("go");
        touch("release");
        fprintf(stderr, "earlykill: the database and logs are kept in %s\n",
                T.dir);
    }
    exit(1);
}

static void cli(const char *what, ...)
{
    static char *const env[] = {"NO_COLOR=1", NULL};
    char *argv[16], *prefix = h_fmt("%s/cli", T.dir), d[96];
    h_result r;
    va_list ap;
    int n = 0;

    argv[n++] = (char *)T.planctl;
    argv[n++] = "--db";
    argv[n++] = T.db;
    argv[n++] = (char *)what;
    va_start(ap, what);
    while (n < 15 && (argv[n] = va_arg(ap, char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    if (h_run(&r, prefix, argv, env, CLI_TIMEOUT_MS) < 0)
        fail("cannot run %s", T.planctl);
    free(prefix);
    if (!r.exited || r.code != 0)
        fail("planctl %s: %s; stderr: %s", what, h_describe(&r, d, sizeof d),
             r.err);
    h_result_free(&r);
}

/* Whether DIR/name holds needle. */
static int file_has(const char *name, const char *needle)
{
    char *path = h_fmt("%s/%s", T.dir, name), *text = h_read_file(path);
    int has = text && strstr(text, needle);

    free(text);
    free(path);
    return has;
}

static void engine_alive(const char *which)
{
    int st;

    if (waitpid(T.engine, &st, WNOHANG) == T.engine) {
        T.engine = 0;
        fail("engine %s ended by itself (%s %d)", which,
             WIFEXITED(st) ? "exit" : "signal",
             WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    }
}

static void setup(void)
{
    char *path;

    if (!T.dir) {
        const char *tmp = getenv("TMPDIR");

        T.dir = h_fmt("%s/planctl-earlykill-XXXXXX", tmp ? tmp : "/tmp");
        if (!mkdtemp(T.dir))
            fail("cannot create a directory in %s", tmp ? tmp : "/tmp");
    } else if (mkdir(T.dir, 0700) != 0 && errno != EEXIST) {
        fail("cannot create %s", T.dir);
    }
    T.db = h_fmt("%s/planctl.db", T.dir);
    T.log = h_fmt("%s/engine.log", T.dir);
    T.env_dir = h_fmt("EARLYKILL_DIR=%s", T.dir);
    path = h_fmt("%s/task", T.dir);
    if (h_write_file(path, task_script, 0700) != 0)
        fail("cannot write %s", path);
    free(path);
    path = h_fmt("%s/early.json", T.dir);
    if (h_write_file(path, definition, 0600) != 0)
        fail("cannot write %s", path);
    cli("apply", "-f", path, NULL);
    free(path);
    cli("create", "e1", "--definition", "early", NULL);
}

/* Engine A, with slowexec: returns once its first child is held. */
static void start_held(void)
{
    char *argv[] = {(char *)T.planctl, "--db", T.db, "run", NULL};
    const char *asan = getenv("ASAN_OPTIONS");
    /* slowexec.so is not the first library of a sanitized planctl. */
    char *env_asan = h_fmt("ASAN_OPTIONS=%s%sverify_asan_link_order=0",
                           asan ? asan : "", asan && *asan ? ":" : "");
    char *env_slow = h_fmt("SLOWEXEC_DIR=%s", T.dir);
    char *env_pre = h_fmt("LD_PRELOAD=%s", T.slowexec);
    /* Shell's libuv way (fork, then exec: room to hold the child between
     * them); its posix_spawn way has the parent suspended until the exec,
     * and runs the same guard. */
    char *env[] = {
        T.env_dir, env_slow, env_pre, env_asan, "PLANCTL_SHELL_SPAWN=libuv",
        NULL};
    char *path = h_fmt("%s/held", T.dir), *text = NULL;
    int64_t until = h_mono_ms() + WAIT_MS;
    long pid = 0;

    T.engine = h_spawn(argv, env, T.log, T.log, 1);
    if (T.engine < 0)
        fail("cannot start engine A");
    while (!(text = h_read_file(path)) || !strchr(text, '\n')) {
        free(text);
        text = NULL;
        engine_alive("A");
        if (h_mono_ms() > until)
            fail("engine A spawned no task within %d ms", WAIT_MS);
        h_sleep_ms(5);
    }
    pid = strtol(text, NULL, 10);
    if (pid <= 1 || h_proc_of(&T.held, (pid_t)pid) != 0)
        fail("the held child (pid %ld) is not running", pid);
    free(text);
    free(path);
    free(env_asan);
    free(env_slow);
    free(env_pre);
}

static void kill_engine(void)
{
    h_result r;
    char d[96];

    kill(T.engine, SIGKILL);
    if (h_wait(&r, T.engine, 30000) != 0)
        fail("cannot wait for engine A");
    T.engine = 0;
    if (r.exited || r.sig != SIGKILL)
        fail("engine A ended with %s, not by our SIGKILL",
             h_describe(&r, d, sizeof d));
}

static void final_checks(sqlite3 *db)
{
    char *msg = h_check_db(db, 1);

    if (msg)
        fail("%s", msg);
    if (h_db_int(db, "SELECT count(*) FROM runs WHERE status = "
                     "'COMPLETE'") != 1)
        fail("the run did not complete");
    if (h_db_int(db, "SELECT count(*) FROM attempts WHERE number = 1 AND "
                     "message = 'interrupted: engine stopped'") != 1)
        fail("attempt 1 was not recovered as interrupted");
}

static void usage(void)
{
    fprintf(stderr, "usage: earlykill --planctl PATH --slowexec PATH "
                    "[--dir DIR] [--keep]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    char *argv_b[6], d[96];
    int64_t b_started, until;
    h_result r;
    sqlite3 *db;
    int i;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--planctl") && i + 1 < argc)
            T.planctl = argv[++i];
        else if (!strcmp(argv[i], "--slowexec") && i + 1 < argc)
            T.slowexec = argv[++i];
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            T.dir = h_fmt("%s", argv[++i]);
        else if (!strcmp(argv[i], "--keep"))
            T.keep = 1;
        else
            usage();
    }
    if (!T.planctl || !T.slowexec)
        usage();
    signal(SIGPIPE, SIG_IGN);
    setup();

    start_held();
    kill_engine();
    printf("earlykill: engine A killed; its child %ld is held before its "
           "exec\n",
           (long)T.held.pid);

    argv_b[0] = (char *)T.planctl;
    argv_b[1] = "--db";
    argv_b[2] = T.db;
    argv_b[3] = "run";
    argv_b[4] = "--until-idle";
    argv_b[5] = NULL;
    {
        char *env[] = {T.env_dir, NULL};

        T.engine = h_spawn(argv_b, env, T.log, T.log, 1);
    }
    if (T.engine < 0)
        fail("cannot start engine B");
    b_started = h_mono_ms();
    for (until = b_started + WAIT_MS; !file_has("starts", "attempt 2 ");) {
        engine_alive("B");
        if (h_mono_ms() > until)
            fail("engine B did not start attempt 2 within %d ms", WAIT_MS);
        h_sleep_ms(10);
    }
    if (h_mono_ms() < b_started + SWEEP_PAST_MS)
        h_sleep_ms(b_started + SWEEP_PAST_MS - h_mono_ms());
    engine_alive("B");
    if (!h_proc_alive(&T.held))
        fail("the race was not provoked: the held child %ld did not survive "
             "the recovery",
             (long)T.held.pid);
    printf("earlykill: attempt 2 runs; the held child survived the "
           "recovery; letting it go\n");

    touch("go");
    for (until = h_mono_ms() + GONE_MS; h_proc_alive(&T.held);) {
        if (h_mono_ms() > until)
            fail("the held child %ld (%s) still runs %d ms after it was let "
                 "go",
                 (long)T.held.pid, T.held.cmd, GONE_MS);
        h_sleep_ms(10);
    }
    if (file_has("overlaps", "attempt"))
        fail("a step ran twice at once: the held child of the killed engine "
             "ran its task beside attempt 2");
    if (file_has("starts", "attempt 1 "))
        fail("the killed engine's attempt 1 started its task after a new "
             "engine had recovered it");

    touch("release");
    if (h_wait(&r, T.engine, FINAL_TIMEOUT_MS) != 0)
        fail("cannot wait for engine B");
    T.engine = 0;
    if (!r.exited || r.code != 0)
        fail("engine B (run --until-idle) ended with %s",
             h_describe(&r, d, sizeof d));
    if (!(db = h_db_open(T.db)))
        fail("cannot open %s", T.db);
    final_checks(db);
    sqlite3_close(db);
    if (!T.keep)
        h_rmtree(T.dir);
    printf("earlykill: ok\n");
    return 0;
}
