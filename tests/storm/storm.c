/*
 * storm.c - the concurrency storm: while `planctl run` runs, many
 * processes at once run trigger, set, cancel, pause, resume, retry and
 * status on a few overlapping instances, for a fixed time.
 *
 * Each worker is a process of its own running the real CLI, one command
 * after another, each under a time limit.  What must hold:
 *   - no command crashes or hangs (a signal or the time limit fails the
 *     storm), and the engine keeps running throughout;
 *   - every exit code is one the command documents for the situation
 *     (0, 2 for a run in the wrong state to pause, resume or retry, 3 for
 *     a conflict or a busy database, 4 for no active run), never 1;
 *   - a refusal is one line starting with "planctl: ", and a conflict
 *     (exit 3) says why: the active run it met ("is running plan") or the
 *     locked database;
 *   - the invariants of harness.h hold while the storm blows (checked
 *     repeatedly) and after it: never two active runs for an instance, in
 *     the tables or at any point of the event log; attempts numbered and
 *     never overlapping; then, once an engine has run everything to its
 *     end, every run terminal, `planctl verify` passes and PRAGMA
 *     integrity_check is ok.
 *
 * Usage:
 *   storm --planctl PATH [--seed N] [--procs P] [--seconds S]
 *         [--instances I] [--dir DIR] [--keep]
 * The seed is printed; exit 0 when every check held, 1 otherwise.
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

#define CMD_TIMEOUT_MS 120000 /* one command; a hang fails the storm */
#define MAX_PROCS 64

static const char definition[] =
    "{\"name\": \"storm\", \"version\": \"1\",\n"
    " \"parameters\": [{\"name\": \"MODE\", \"default\": \"a\"}],\n"
    " \"tasks\": [\n"
    "  {\"name\": \"quick\", \"kind\": \"Dummy\"},\n"
    "  {\"name\": \"nap\", \"kind\": \"Dummy\", \"spec\": {\"sleep\": "
    "\"100ms\"}},\n"
    "  {\"name\": \"flaky\", \"kind\": \"Dummy\", \"spec\": {\"failTimes\": "
    "1}},\n"
    "  {\"name\": \"sh\", \"kind\": \"shell\", \"spec\": {\"command\": "
    "\"sleep 0.1\"}},\n"
    "  {\"name\": \"mayfail\", \"kind\": \"shell\", \"spec\": {\"command\": "
    "\"test \\\"$PLANCTL_PARAM_MODE\\\" != c\"}}],\n"
    " \"plans\": {\n"
    "  \"deploy\": {\"phases\": [\n"
    "   {\"name\": \"a\", \"strategy\": \"parallel\", \"steps\": [\n"
    "    {\"name\": \"s1\", \"tasks\": [\"nap\"]},\n"
    "    {\"name\": \"s2\", \"tasks\": [\"sh\", \"flaky\"], \"retry\": "
    "{\"attempts\": 3, \"backoff\": \"50ms\"}}]},\n"
    "   {\"name\": \"b\", \"steps\": [\n"
    "    {\"name\": \"s3\", \"tasks\": [\"mayfail\"], \"retry\": "
    "{\"attempts\": 2, \"backoff\": \"50ms\"}}]}]},\n"
    "  \"update\": {\"phases\": [{\"name\": \"u\", \"steps\": [\n"
    "    {\"name\": \"s\", \"tasks\": [\"sh\", \"mayfail\"], \"retry\": "
    "{\"attempts\": 2, \"backoff\": \"50ms\"}}]}]},\n"
    "  \"backup\": {\"phases\": [{\"name\": \"d\", \"steps\": [\n"
    "    {\"name\": \"s\", \"tasks\": [\"nap\", \"quick\"]}]}]}\n"
    " }}\n";

/* The commands of the storm, each with the exit codes it may give. */
typedef struct command {
    const char *name;
    const char *allowed;
} command;

enum {
    C_TRIGGER,
    C_QUEUE,
    C_SET,
    C_CANCEL,
    C_PAUSE,
    C_RESUME,
    C_RETRY,
    C_STATUS,
    C__COUNT
};

static const command commands[C__COUNT] = {
    {"trigger", "03"}, {"trigger --queue", "03"}, {"set", "03"},
    {"cancel", "034"}, {"pause", "0234"},         {"resume", "0234"},
    {"retry", "023"},  {"status", "03"},
};

static struct {
    const char *planctl;
    char *dir, *db, *log;
    uint64_t seed;
    int procs, seconds, instances, keep;
    pid_t engine;
    sqlite3 *rdb;
} S;

static void fail(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

static void fail(const char *fmt, ...)
{
    va_list ap;
    char *log = S.log ? h_read_file(S.log) : NULL;

    fflush(stdout);
    fprintf(stderr, "storm: FAILED (seed %llu): ", (unsigned long long)S.seed);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (log) {
        size_t len = strlen(log);

        fprintf(stderr, "--- end of the engine's log\n%s",
                len > 2000 ? log + len - 2000 : log);
        free(log);
    }
    if (S.engine > 0) {
        kill(S.engine, SIGKILL);
        waitpid(S.engine, NULL, 0);
    }
    fprintf(stderr, "storm: the database and logs are kept in %s\n",
            S.dir ? S.dir : "(none)");
    exit(1);
}

/* Runs planctl with args; returns the result (the caller frees it). */
static void run_cli(h_result *r, const char *prefix, int64_t timeout_ms, ...)
{
    static char *const env[] = {"NO_COLOR=1", NULL};
    char *argv[16];
    va_list ap;
    int n = 0;

    argv[n++] = (char *)S.planctl;
    argv[n++] = "--db";
    argv[n++] = S.db;
    va_start(ap, timeout_ms);
    while (n < 15 && (argv[n] = va_arg(ap, char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    if (h_run(r, prefix, argv, env, timeout_ms) < 0)
        fail("cannot run %s", S.planctl);
}

/* Runs a setup or final command that must succeed. */
static void must(const char *what, ...)
{
    static char *const env[] = {"NO_COLOR=1", NULL};
    char *argv[16], *prefix = h_fmt("%s/main", S.dir), d[96];
    h_result r;
    va_list ap;
    int n = 0;

    argv[n++] = (char *)S.planctl;
    argv[n++] = "--db";
    argv[n++] = S.db;
    va_start(ap, what);
    while (n < 15 && (argv[n] = va_arg(ap, char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    if (h_run(&r, prefix, argv, env, CMD_TIMEOUT_MS) < 0)
        fail("cannot run %s", S.planctl);
    if (!r.exited || r.code != 0)
        fail("%s: %s: %s%s", what, h_describe(&r, d, sizeof d), r.out, r.err);
    h_result_free(&r);
    free(prefix);
}

/* ---- a worker ---- */

/* Whether a refusal says what it should. */
static const char *bad_refusal(int code, const char *err)
{
    const char *nl = strchr(err, '\n');

    if (strncmp(err, "planctl: ", 9) != 0 || !nl || nl[1] != '\0')
        return "a refusal must be one line starting with \"planctl: \"";
    /* A refusal because of the run's state is a conflict too: pausing a
     * paused run, resuming a running one, retrying one that did not fail
     * (DESIGN §8). */
    if (code == 3 && !strstr(err, "is running plan") &&
        !strstr(err, "is locked by another process") &&
        !strstr(err, "can be paused") && !strstr(err, "can be resumed") &&
        !strstr(err, "can be retried"))
        return "a conflict (exit 3) must name the active run, the lock or "
               "the run's state";
    if (code == 4 && !strstr(err, "has no active run"))
        return "exit 4 must say there is no active run";
    if (code == 2 && !strstr(err, "has no run yet"))
        return "exit 2 must say what state the run is in";
    return NULL;
}

/* Runs commands until the deadline; writes its tallies to stats.K and
 * any failure to fail.K.  Returns the process's exit status. */
static int worker(int k, int64_t until)
{
    h_rng rng;
    char *prefix = h_fmt("%s/w%d", S.dir, k);
    char *stats = h_fmt("%s/stats.%d", S.dir, k);
    char *failf = h_fmt("%s/fail.%d", S.dir, k);
    long tally[C__COUNT][10];
    FILE *f;
    int c, code;

    memset(tally, 0, sizeof tally);
    S.engine = 0; /* the parent's; a worker never touches it */
    h_rng_seed(&rng, S.seed * 1000003ULL + (uint64_t)k);
    while (h_mono_ms() < until) {
        char name[32], param[32], d[96];
        const char *why = NULL;
        h_result r;

        snprintf(name, sizeof name, "st%d",
                 (int)h_rng_range(&rng, 0, S.instances - 1));
        c = (int)h_rng_range(&rng, 0, C__COUNT - 1);
        switch (c) {
        case C_TRIGGER:
            run_cli(&r, prefix, CMD_TIMEOUT_MS, "trigger", name, "backup",
                    NULL);
            break;
        case C_QUEUE:
            run_cli(&r, prefix, CMD_TIMEOUT_MS, "trigger", name, "backup",
                    "--queue", NULL);
            break;
        case C_SET:
            snprintf(param, sizeof param, "MODE=%c",
                     (char)('a' + h_rng_range(&rng, 0, 2)));
            run_cli(&r, prefix, CMD_TIMEOUT_MS, "set", name, "-p", param, NULL);
            break;
        case C_CANCEL:
            run_cli(&r, prefix, CMD_TIMEOUT_MS, "cancel", name, "--reason",
                    "storm", NULL);
            break;
        case C_PAUSE:
            run_cli(&r, prefix, CMD_TIMEOUT_MS, "pause", name, NULL);
            break;
        case C_RESUME:
            run_cli(&r, prefix, CMD_TIMEOUT_MS, "resume", name, NULL);
            break;
        case C_RETRY:
            run_cli(&r, prefix, CMD_TIMEOUT_MS, "retry", name, NULL);
            break;
        default:
            run_cli(&r, prefix, CMD_TIMEOUT_MS, "status", name, NULL);
            break;
        }
        code = r.exited && !r.timed_out ? r.code : -1;
        if (code < 0)
            why = h_describe(&r, d, sizeof d);
        else if (code > 9 || !strchr(commands[c].allowed, '0' + code))
            why = "an exit code the command does not document here";
        else if (code != 0)
            why = bad_refusal(code, r.err);
        if (why) {
            char *msg = h_fmt("planctl %s %s: exit %d: %s\nstderr: %s",
                              commands[c].name, name, code, why, r.err);

            h_write_file(failf, msg, 0600);
            free(msg);
            h_result_free(&r);
            return 1;
        }
        tally[c][code]++;
        h_result_free(&r);
    }
    f = fopen(stats, "w");
    if (!f)
        return 1;
    for (c = 0; c < C__COUNT; c++)
        for (code = 0; code < 10; code++)
            if (tally[c][code])
                fprintf(f, "%d %d %ld\n", c, code, tally[c][code]);
    fclose(f);
    return 0;
}

/* ---- the storm ---- */

static void usage(void)
{
    fprintf(stderr, "usage: storm --planctl PATH [--seed N] [--procs P] "
                    "[--seconds S] [--instances I] [--dir DIR] [--keep]\n");
    exit(2);
}

static long num_arg(int argc, char **argv, int *i)
{
    return h_num_arg(argc, argv, i, usage);
}

static void engine_alive(void)
{
    int st;

    if (waitpid(S.engine, &st, WNOHANG) == S.engine) {
        S.engine = 0;
        if (WIFEXITED(st))
            fail("the engine exited by itself with code %d", WEXITSTATUS(st));
        fail("the engine died of signal %d (%s)", WTERMSIG(st),
             strsignal(WTERMSIG(st)));
    }
}

static void check_db(int final)
{
    char *msg = h_check_db(S.rdb, final);

    if (msg)
        fail("%s", msg);
}

int main(int argc, char **argv)
{
    pid_t pids[MAX_PROCS];
    long tally[C__COUNT][10];
    int i, seeded = 0, checks = 0;
    const char *env_seed = getenv("PLANCTL_STORM_SEED");
    int64_t t0, until;

    S.procs = 12;
    S.seconds = 15;
    S.instances = 3;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--planctl") && i + 1 < argc)
            S.planctl = argv[++i];
        else if (!strcmp(argv[i], "--seed")) {
            S.seed = (uint64_t)num_arg(argc, argv, &i);
            seeded = 1;
        } else if (!strcmp(argv[i], "--procs"))
            S.procs = (int)num_arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--seconds"))
            S.seconds = (int)num_arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--instances"))
            S.instances = (int)num_arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            S.dir = h_fmt("%s", argv[++i]);
        else if (!strcmp(argv[i], "--keep"))
            S.keep = 1;
        else
            usage();
    }
    if (!S.planctl || S.procs < 1 || S.procs > MAX_PROCS || S.instances < 1)
        usage();
    if (!seeded)
        S.seed = env_seed ? strtoull(env_seed, NULL, 10) : h_seed_from_clock();
    signal(SIGPIPE, SIG_IGN);
    t0 = h_mono_ms();
    printf("storm: seed %llu, %d processes for %d s on %d instances\n",
           (unsigned long long)S.seed, S.procs, S.seconds, S.instances);
    fflush(stdout);

    if (!S.dir) {
        const char *tmp = getenv("TMPDIR");

        S.dir = h_fmt("%s/planctl-storm-XXXXXX", tmp ? tmp : "/tmp");
        if (!mkdtemp(S.dir))
            fail("cannot create a directory in %s", tmp ? tmp : "/tmp");
    } else if (mkdir(S.dir, 0700) != 0 && errno != EEXIST) {
        fail("cannot create %s", S.dir);
    }
    S.db = h_fmt("%s/planctl.db", S.dir);
    S.log = h_fmt("%s/engine.log", S.dir);
    {
        char *path = h_fmt("%s/storm.json", S.dir);

        if (h_write_file(path, definition, 0600) != 0)
            fail("cannot write %s", path);
        must("apply", "apply", "-f", path, NULL);
        free(path);
    }
    for (i = 0; i < S.instances; i++) {
        char name[32];

        snprintf(name, sizeof name, "st%d", i);
        must("create", "create", name, "--definition", "storm", NULL);
    }
    S.rdb = h_db_open(S.db);
    if (!S.rdb)
        fail("cannot open %s", S.db);
    {
        char *argv2[] = {(char *)S.planctl, "--db", S.db, "run",
                         "--grace",         "2s",   NULL};

        S.engine = h_spawn(argv2, NULL, S.log, S.log, 1);
        if (S.engine < 0)
            fail("cannot start the engine");
    }

    /* The storm. */
    until = h_mono_ms() + (int64_t)S.seconds * 1000;
    fflush(stdout);
    fflush(stderr);
    for (i = 0; i < S.procs; i++) {
        pids[i] = fork();
        if (pids[i] < 0)
            fail("cannot fork");
        if (pids[i] == 0)
            _exit(worker(i, until));
    }
    while (h_mono_ms() < until) {
        engine_alive();
        check_db(0);
        checks++;
        h_sleep_ms(200);
    }
    for (i = 0; i < S.procs; i++) {
        h_result r;
        char d[96];

        if (h_wait(&r, pids[i], CMD_TIMEOUT_MS + 30000) != 0)
            fail("cannot wait for worker %d", i);
        if (!r.exited || r.code != 0) {
            char *path = h_fmt("%s/fail.%d", S.dir, i);
            char *msg = h_read_file(path);

            fail("worker %d: %s: %s", i, h_describe(&r, d, sizeof d),
                 msg ? msg : "(no message)");
        }
    }
    engine_alive();
    check_db(0);

    /* The engine stops gracefully on SIGTERM. */
    {
        h_result r;
        char d[96];

        kill(S.engine, SIGTERM);
        if (h_wait(&r, S.engine, 60000) != 0)
            fail("cannot wait for the engine");
        S.engine = 0;
        if (!r.exited || r.code != 0 || r.timed_out)
            fail("the engine, stopped with SIGTERM, ended with %s",
                 h_describe(&r, d, sizeof d));
    }
    /* Everything to its end: nothing paused, one engine until idle. */
    {
        char **names;
        size_t n, k;

        if (h_paused_instances(S.rdb, &names, &n) != 0)
            fail("cannot list paused runs: %s", sqlite3_errmsg(S.rdb));
        for (k = 0; k < n; k++) {
            must("resume", "resume", names[k], NULL);
            free(names[k]);
        }
        free(names);
    }
    must("the last engine", "run", "--until-idle", NULL);
    check_db(1);
    must("verify", "verify", NULL);

    memset(tally, 0, sizeof tally);
    for (i = 0; i < S.procs; i++) {
        char *path = h_fmt("%s/stats.%d", S.dir, i);
        FILE *f = fopen(path, "r");
        int c, code;
        long n;

        while (f && fscanf(f, "%d %d %ld", &c, &code, &n) == 3)
            if (c >= 0 && c < C__COUNT && code >= 0 && code < 10)
                tally[c][code] += n;
        if (f)
            fclose(f);
        free(path);
    }
    printf("storm: seed %llu: %d processes, %d s, invariants checked %d "
           "times during the storm\n",
           (unsigned long long)S.seed, S.procs, S.seconds, checks);
    for (i = 0; i < C__COUNT; i++) {
        int code;

        printf("storm:   %-16s", commands[i].name);
        for (code = 0; code < 10; code++)
            if (tally[i][code])
                printf(" exit %d: %ld", code, tally[i][code]);
        printf("\n");
    }
    printf("storm: runs %lld (%lld COMPLETE), events %lld, %.1f s\n",
           (long long)h_db_int(S.rdb, "SELECT count(*) FROM runs"),
           (long long)h_db_int(S.rdb, "SELECT count(*) FROM runs WHERE "
                                      "status = 'COMPLETE'"),
           (long long)h_db_int(S.rdb, "SELECT count(*) FROM events"),
           (double)(h_mono_ms() - t0) / 1000.0);
    sqlite3_close(S.rdb);
    if (!S.keep)
        h_rmtree(S.dir);
    else
        printf("storm: kept %s\n", S.dir);
    printf("storm: ok\n");
    return 0;
}
