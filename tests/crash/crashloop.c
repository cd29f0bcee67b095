/*
 * crashloop.c - kills the engine with SIGKILL at seeded random moments,
 * many times, while a workload of hundreds of instances runs, then lets it
 * finish and checks that nothing was lost, run twice or left behind.
 *
 * Everything is the real thing: the engine is a child process, restarted
 * after every kill: `planctl run`, or (given --embedder, for a seeded half
 * of its lives) crash_embedder (embedder.c), a program that embeds the
 * library with an engine on one handle and a second handle beside it that
 * reads the event log and triggers runs.  A second process (`planctl
 * cancel/pause/resume/retry/trigger/set/create`) acts on the instances
 * while the engine runs and while it is dead, and the database is a real
 * SQLite file.  This process opens its own connection afresh for each
 * look and closes it, as a CLI process does: a connection held open here
 * would hide an engine whose locks were lost.  The workload mixes Dummy steps
 * (sleeping, failing once) with shell steps (sleeping, failing until a retry,
 * failing fatally, failing every time, and one that starts a background
 * process).
 *
 * What is checked:
 *   - after every kill: the invariants of harness.h (attempts numbered
 *     1..n, their intervals never overlapping, never two active runs for
 *     an instance, ...), and every few kills `planctl verify`;
 *   - no step ever ran twice at once, also as the tasks saw it: each shell
 *     task holds flock() on a file named after its run and step for as
 *     long as any of its processes lives, and records it when it finds the
 *     lock taken (so a process of an interrupted attempt still running when
 *     the retry starts is caught);
 *   - no shell process survives its engine: the processes carrying the
 *     loop's marker in their environment when an engine is killed must be
 *     gone once a restarted engine has recovered the interrupted attempts
 *     (the background process of the "bg" task lives 30 s unless killed);
 *   - while the embedder runs, every commit it reports (the engine's
 *     logger, runs its second handle triggered, events it read) is visible
 *     at once to this process, and its -wal file keeps its inode (a
 *     process that takes itself for the last connection deletes it);
 *     after its kill, none of those commits is lost;
 *   - at the end: every run terminal, no attempt open, no marked process
 *     left, `planctl verify` passes, PRAGMA integrity_check is ok, and
 *     every commit any embedder reported is still there.
 *
 * Usage:
 *   crashloop --planctl PATH [--embedder PATH] [--seed N] [--kills K]
 *             [--instances M] [--dir DIR] [--keep] [--verify-every V]
 *             [--max-delay MS]
 * The seed is printed first and with any failure; the same seed makes the
 * same choices (the timing of the machine still varies).  Exit 0 when
 * every check held, 1 on a violation, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
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

#define CLI_TIMEOUT_MS 120000    /* one CLI command (sanitizers are slow) */
#define SURVIVOR_GRACE_MS 3000   /* from recovery to the processes' death */
#define RECOVERY_LIMIT_MS 60000  /* a restarted engine must recover by then */
#define FINAL_TIMEOUT_MS 1200000 /* the last engine, until idle */

static const char *const modes[] = {"ok",      "flaky", "fatal",
                                    "exhaust", "ok",    "flaky"};

/* The shell task: holds the step's lock while any of its processes lives,
 * records an overlap when the lock is taken, then does what $1 says. */
static const char task_script[] =
    "#!/bin/sh\n"
    "# One shell task of the crash loop: $1 what, $2 how long.\n"
    "exec 9>>\"$CRASHLOOP_DIR/locks/$PLANCTL_RUN_UID.$PLANCTL_STEP\"\n"
    "if ! flock -n 9; then\n"
    "    echo \"instance $PLANCTL_INSTANCE run $PLANCTL_RUN step "
    "$PLANCTL_STEP attempt $PLANCTL_ATTEMPT started while another attempt "
    "of the step still ran\" >> \"$CRASHLOOP_DIR/overlaps\"\n"
    "fi\n"
    "case $1 in\n"
    "work) sleep \"$2\" ;;\n"
    "bg) sleep 30 & g=$!; sleep \"$2\"; kill $g; wait $g 2>/dev/null ;;\n"
    "check)\n"
    "    sleep \"$2\"\n"
    "    case $PLANCTL_PARAM_MODE in\n"
    "    fatal) echo 'fatal: mode says so'; exit 7 ;;\n"
    "    exhaust) echo 'fails every time'; exit 1 ;;\n"
    "    flaky) if [ \"$PLANCTL_ATTEMPT\" -lt 2 ]; then echo 'flaky: first "
    "try fails'; exit 1; fi ;;\n"
    "    esac ;;\n"
    "esac\n"
    "exit 0\n";

#define RETRY                                                                  \
    "{\"attempts\": 6, \"backoff\": \"50ms\", \"max_backoff\": \"200ms\"}"
#define RETRY3 "{\"attempts\": 3, \"backoff\": \"50ms\"}"
#define TASK(what, secs)                                                       \
    "\"command\": \"exec \\\"$CRASHLOOP_DIR/task\\\" " what " " secs "\""

static const char definition[] =
    "{\"name\": \"crash\", \"version\": \"1\",\n"
    " \"parameters\": [{\"name\": \"MODE\", \"default\": \"ok\"}],\n"
    " \"tasks\": [\n"
    "  {\"name\": \"quick\", \"kind\": \"Dummy\"},\n"
    "  {\"name\": \"nap\", \"kind\": \"Dummy\", \"spec\": {\"sleep\": "
    "\"150ms\"}},\n"
    "  {\"name\": \"flaky\", \"kind\": \"Dummy\", \"spec\": {\"failTimes\": "
    "1}},\n"
    "  {\"name\": \"work\", \"kind\": \"shell\", \"spec\": {" TASK(
        "work",
        "0.2") "}},\n"
               "  {\"name\": \"bg\", \"kind\": \"shell\", \"spec\": {" TASK(
                   "bg",
                   "0.3") "}},\n"
                          "  {\"name\": \"check\", \"kind\": \"shell\", "
                          "\"spec\": {" TASK(
                              "check",
                              "0.05") ", \"fatal_exit_codes\": [7]}}],\n"
                                      " \"plans\": {\n"
                                      "  \"deploy\": {\"phases\": [\n"
                                      "   {\"name\": \"prep\", \"steps\": [\n"
                                      "    {\"name\": \"render\", \"tasks\": "
                                      "[\"quick\", \"nap\"], \"retry\": " RETRY
                                      "}]},\n"
                                      "   {\"name\": \"nodes\", \"strategy\": "
                                      "\"parallel\", \"steps\": [\n"
                                      "    {\"name\": \"n0\", \"tasks\": "
                                      "[\"work\"], \"retry\": " RETRY "},\n"
                                      "    {\"name\": \"n1\", \"tasks\": "
                                      "[\"nap\", \"work\"], \"retry\": " RETRY
                                      "},\n"
                                      "    {\"name\": \"n2\", \"tasks\": "
                                      "[\"bg\"], \"retry\": " RETRY "},\n"
                                      "    {\"name\": \"n3\", \"tasks\": "
                                      "[\"flaky\", \"quick\"], "
                                      "\"retry\": " RETRY "}]},\n"
                                      "   {\"name\": \"verify\", \"steps\": [\n"
                                      "    {\"name\": \"check\", \"tasks\": "
                                      "[\"check\"], \"retry\": " RETRY3
                                      "}]}]},\n"
                                      "  \"update\": {\"phases\": [{\"name\": "
                                      "\"roll\", \"steps\": [\n"
                                      "    {\"name\": \"r0\", \"tasks\": "
                                      "[\"work\"], \"retry\": " RETRY "},\n"
                                      "    {\"name\": \"r1\", \"tasks\": "
                                      "[\"check\"], \"retry\": " RETRY3
                                      "}]}]},\n"
                                      "  \"backup\": {\"phases\": [{\"name\": "
                                      "\"dump\", \"strategy\": "
                                      "\"parallel\", \"steps\": [\n"
                                      "    {\"name\": \"b0\", \"tasks\": "
                                      "[\"bg\"], \"retry\": " RETRY "},\n"
                                      "    {\"name\": \"b1\", \"tasks\": "
                                      "[\"nap\"], \"retry\": " RETRY "}]}]}\n"
                                      " }}\n";

typedef struct loop {
    const char *planctl;
    const char *embedder; /* crash_embedder, or NULL */
    char *dir, *db, *wal, *overlaps, *log, *report;
    char *env_dir, *env_tag, *marker;
    h_rng rng;
    uint64_t seed;
    int kills, instances, created, verify_every, keep;
    int64_t max_delay;
    int kill_no; /* the kill under way, for messages */
    sqlite3 *rdb;
    pid_t engine;
    /* Processes a dead engine left; they must die once it is recovered. */
    h_proc *pending;
    size_t npending;
    int recovering;         /* attempts of a dead engine are still open */
    int64_t recover_before; /* wall ms: attempts started until then */
    int64_t recovery_due;   /* mono ms: a live engine must have recovered */
    int64_t recovered_at;   /* mono ms */
    /* The embedder's life under way: its report, read up to report_off,
     * and the lines of all its lives (life_from: this life's first). */
    int embedded;
    ino_t wal_ino; /* the -wal while it runs, once it said "ready" */
    off_t report_off;
    char partial[256];
    size_t npartial;
    char **lines;
    size_t nlines, cap_lines, life_from;
    /* what happened, for the summary */
    int chaos, refused, dead_chaos, survivors_seen, lives_embedded;
    long checked;
    int64_t t0;
} loop;

static loop L;

static void print_tail(const char *path, size_t max)
{
    char *text = h_read_file(path);
    size_t len;

    if (!text)
        return;
    len = strlen(text);
    fprintf(stderr, "--- last lines of %s\n%s", path,
            len > max ? text + len - max : text);
    free(text);
}

static void fail(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

static void fail(const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fprintf(stderr,
            "crashloop: FAILED at kill %d of %d (seed %llu): ", L.kill_no,
            L.kills, (unsigned long long)L.seed);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (L.log)
        print_tail(L.log, 3000);
    if (L.engine > 0) {
        kill(L.engine, SIGKILL);
        waitpid(L.engine, NULL, 0);
    }
    fprintf(stderr,
            "crashloop: reproduce with: crashloop --planctl %s%s%s --seed "
            "%llu --kills %d --instances %d\n"
            "crashloop: the database and logs are kept in %s\n",
            L.planctl, L.embedder ? " --embedder " : "",
            L.embedder ? L.embedder : "", (unsigned long long)L.seed, L.kills,
            L.instances, L.dir ? L.dir : "(none)");
    exit(1);
}

/* ---- this process's look at the database ---- */

/* A connection of this process, opened afresh after each rdb_release(). */
static sqlite3 *rdb(void)
{
    if (!L.rdb && !(L.rdb = h_db_open(L.db)))
        fail("cannot open %s", L.db);
    return L.rdb;
}

/* Closes it, as the CLI's processes close theirs: a connection held open
 * for the whole loop would keep any other from ever being the last. */
static void rdb_release(void)
{
    sqlite3_close(L.rdb);
    L.rdb = NULL;
}

/* ---- the CLI ---- */

/* Runs `planctl --db DB args...` (NULL-terminated) under a time limit.
 * Fails the loop if it crashed, hung or exited with a code not in
 * allowed (a string of digits, e.g. "034"), or if a refusal did not
 * come as one "planctl: " line.  Returns the exit code. */
static int cli(const char *allowed, ...)
{
    static char *const env[] = {"NO_COLOR=1", NULL};
    char *argv[16], *prefix = h_fmt("%s/cli", L.dir), d[96];
    h_result r;
    va_list ap;
    int n = 0, code;

    argv[n++] = (char *)L.planctl;
    argv[n++] = "--db";
    argv[n++] = L.db;
    va_start(ap, allowed);
    while (n < 15 && (argv[n] = va_arg(ap, char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    if (h_run(&r, prefix, argv, env, CLI_TIMEOUT_MS) < 0)
        fail("cannot run %s", L.planctl);
    free(prefix);
    if (!r.exited || r.timed_out)
        fail("planctl %s %s: %s; stderr: %s", argv[3], argv[4] ? argv[4] : "",
             h_describe(&r, d, sizeof d), r.err);
    code = r.code;
    if (code > 9 || !strchr(allowed, '0' + code))
        fail("planctl %s %s: exit %d, expected one of %s; stderr: %s", argv[3],
             argv[4] ? argv[4] : "", code, allowed, r.err);
    if (code != 0) {
        char *nl = strchr(r.err, '\n');

        if (strncmp(r.err, "planctl: ", 9) != 0 || !nl || nl[1] != '\0')
            fail("planctl %s: exit %d without a one-line message: \"%s\"",
                 argv[3], code, r.err);
        L.refused++;
    }
    h_result_free(&r);
    return code;
}

static char *instance_name(int i)
{
    return h_fmt("i%04d", i);
}

static void create_one(void)
{
    char *name = instance_name(L.created), *param;

    param = h_fmt("MODE=%s",
                  modes[L.created % (int)(sizeof modes / sizeof modes[0])]);
    cli("0", "create", name, "--definition", "crash", "-p", param, NULL);
    L.created++;
    free(name);
    free(param);
}

/* An instance with an active run (the seed picks which), or NULL. */
static char *busy_instance(void)
{
    int64_t n = h_db_int(rdb(), "SELECT count(*) FROM runs WHERE status IN "
                                "('PENDING', 'IN_PROGRESS', 'PAUSED')");
    sqlite3_stmt *st = NULL;
    char *name = NULL;

    if (n <= 0 ||
        sqlite3_prepare_v2(rdb(),
                           "SELECT i.name FROM runs r JOIN instances i ON "
                           "i.id = r.instance_id WHERE r.status IN "
                           "('PENDING', 'IN_PROGRESS', 'PAUSED') ORDER BY "
                           "r.id LIMIT 1 OFFSET ?1",
                           -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_int64(st, 1, h_rng_range(&L.rng, 0, n - 1));
    if (sqlite3_step(st) == SQLITE_ROW)
        name = h_fmt("%s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return name;
}

/* One action of the second process: mostly on an instance that has an
 * active run, else on any. */
static void chaos(void)
{
    char *name;
    int pick;

    if (L.created == 0)
        return;
    name = h_rng_range(&L.rng, 0, 3) ? busy_instance() : NULL;
    if (!name)
        name = instance_name((int)h_rng_range(&L.rng, 0, L.created - 1));
    pick = (int)h_rng_range(&L.rng, 0, 99);
    L.chaos++;
    if (pick < 22)
        cli("0234", "pause", name, NULL);
    else if (pick < 44)
        cli("0234", "resume", name, NULL);
    else if (pick < 56)
        cli("034", "cancel", name, "--reason", "crash loop", NULL);
    else if (pick < 72)
        cli("023", "retry", name, NULL);
    else if (pick < 80)
        cli("03", "trigger", name, "backup", NULL);
    else if (pick < 86)
        cli("03", "trigger", name, "backup", "--queue", NULL);
    else if (pick < 94) {
        char *param = h_fmt("MODE=%s", modes[h_rng_range(&L.rng, 0, 5)]);

        cli("03", "set", name, "-p", param, NULL);
        free(param);
    } else {
        cli("0", "status", name, NULL);
    }
    free(name);
}

/* ---- the engine ---- */

/* `planctl run`, or for a seeded half of the lives (with --embedder) the
 * embedding program, reading the events that follow the last one now. */
static void start_engine(void)
{
    char conc[16], seed[24], since[24];
    char *argv[] = {
        (char *)L.planctl, "--db", L.db, "run", "--concurrency", conc,
        "--grace",         "1s",   NULL};
    char *eargv[] = {(char *)L.embedder,
                     "--db",
                     L.db,
                     "--report",
                     L.report,
                     "--seed",
                     seed,
                     "--since",
                     since,
                     "--concurrency",
                     conc,
                     NULL};
    char *env[] = {L.env_dir, L.env_tag, NULL};

    snprintf(conc, sizeof conc, "%d", (int)h_rng_range(&L.rng, 4, 64));
    L.embedded = L.embedder && h_rng_range(&L.rng, 0, 1) == 0;
    if (L.embedded) {
        snprintf(seed, sizeof seed, "%llu",
                 (unsigned long long)h_rng_next(&L.rng) >> 1);
        snprintf(since, sizeof since, "%lld",
                 (long long)h_db_int(rdb(), "SELECT coalesce(max(seq), 0) "
                                            "FROM events"));
        L.lives_embedded++;
        L.life_from = L.nlines;
        L.wal_ino = 0;
    }
    L.engine = h_spawn(L.embedded ? eargv : argv, env, L.log, L.log, 1);
    if (L.engine < 0)
        fail("cannot start the engine");
}

/* Whether the commit a report line names is in the database, as a new
 * read of this process sees it: 1, or 0. */
static int reported_commit_there(const char *line)
{
    char a[32], b[32], c[64], *sql = NULL;
    long long n1;
    int64_t got;

    if (sscanf(line, "run %lld", &n1) == 1)
        sql = sqlite3_mprintf("SELECT count(*) FROM runs WHERE id = %lld", n1);
    else if (sscanf(line, "event %lld %31s %31s", &n1, a, b) == 3)
        sql = sqlite3_mprintf("SELECT count(*) FROM events WHERE seq = %lld "
                              "AND run_id IS %s AND to_status IS %Q",
                              n1, strcmp(a, "-") ? a : "NULL",
                              strcmp(b, "-") ? b : NULL);
    else if (sscanf(line, "log %lld %31s %63s", &n1, b, c) == 3 &&
             !strcmp(c, "-"))
        sql = sqlite3_mprintf("SELECT count(*) FROM events WHERE run_id = "
                              "%lld AND entity = 'run' AND to_status = %Q",
                              n1, b);
    else if (sscanf(line, "log %lld %31s %63s", &n1, b, c) == 3)
        sql = sqlite3_mprintf("SELECT count(*) FROM events e JOIN steps s ON "
                              "s.id = e.step_id WHERE e.run_id = %lld AND "
                              "e.entity = 'step' AND s.name = %Q AND "
                              "e.to_status = %Q",
                              n1, c, b);
    else
        fail("the embedder reported \"%s\", which this loop does not know",
             line);
    if (!sql)
        fail("out of memory");
    got = h_db_int(rdb(), sql);
    sqlite3_free(sql);
    if (got < 0)
        fail("cannot look up \"%s\": %s", line, sqlite3_errmsg(rdb()));
    L.checked++;
    return got > 0;
}

/* The embedder's -wal must keep its inode from its "ready" on: only a
 * process that takes itself for the last connection deletes it. */
static void check_wal(void)
{
    struct stat sb;

    if (!L.embedded || !L.wal_ino)
        return;
    if (stat(L.wal, &sb) != 0)
        fail("%s is gone while the embedder runs with its connections "
             "open (it lost its locks)",
             L.wal);
    if (sb.st_ino != L.wal_ino)
        fail("%s was replaced while the embedder runs with its connections "
             "open (it lost its locks)",
             L.wal);
}

static void keep_line(const char *line)
{
    if (L.nlines == L.cap_lines) {
        L.cap_lines = L.cap_lines ? L.cap_lines * 2 : 1024;
        L.lines = realloc(L.lines, L.cap_lines * sizeof *L.lines);
        if (!L.lines)
            fail("out of memory");
    }
    L.lines[L.nlines++] = h_fmt("%s", line);
}

/* Reads the lines the embedder wrote since the last look: each commit it
 * reports must be visible here at once. */
static void read_report(void)
{
    char buf[4096];
    ssize_t got;
    int fd;

    if (!L.embedder)
        return;
    fd = open(L.report, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return; /* not written yet */
    while ((got = pread(fd, buf, sizeof buf, L.report_off)) > 0) {
        ssize_t i;

        L.report_off += got;
        for (i = 0; i < got; i++) {
            if (buf[i] != '\n') {
                if (L.npartial + 1 >= sizeof L.partial)
                    fail("a line of the embedder's report is too long");
                L.partial[L.npartial++] = buf[i];
                continue;
            }
            L.partial[L.npartial] = '\0';
            L.npartial = 0;
            if (!strcmp(L.partial, "ready")) {
                struct stat sb;

                if (stat(L.wal, &sb) != 0)
                    fail("the embedder opened its handles, but %s is not "
                         "there: another process deleted it under them",
                         L.wal);
                L.wal_ino = sb.st_ino;
                continue;
            }
            if (!reported_commit_there(L.partial))
                fail("the embedder reported \"%s\" committed, but another "
                     "process does not see it",
                     L.partial);
            keep_line(L.partial);
        }
    }
    close(fd);
}

/* Every commit the embedders reported from line `from` on is still there
 * (after a kill -9, and at the end). */
static void recheck_reports(size_t from, const char *when)
{
    size_t i;

    for (i = from; i < L.nlines; i++)
        if (!reported_commit_there(L.lines[i]))
            fail("the embedder reported \"%s\" committed, and %s it is "
                 "gone",
                 L.lines[i], when);
}

/* The engine must still run: it never exits by itself. */
static void engine_alive(void)
{
    int st;
    pid_t got = waitpid(L.engine, &st, WNOHANG);

    if (got == L.engine) {
        L.engine = 0;
        if (WIFEXITED(st))
            fail("the engine exited by itself with code %d", WEXITSTATUS(st));
        fail("the engine died of signal %d (%s)", WTERMSIG(st),
             strsignal(WTERMSIG(st)));
    }
}

/* ---- what a dead engine left ---- */

static void add_survivors(void)
{
    h_proc *found;
    size_t n = h_scan_marked(&found, L.marker), i, k;

    for (i = 0; i < n; i++) {
        for (k = 0; k < L.npending; k++)
            if (L.pending[k].pid == found[i].pid &&
                L.pending[k].start == found[i].start)
                break;
        if (k < L.npending)
            continue;
        L.pending = realloc(L.pending, (L.npending + 1) * sizeof *L.pending);
        if (!L.pending)
            fail("out of memory");
        L.pending[L.npending++] = found[i];
        L.survivors_seen++;
    }
    free(found);
}

/* Attempts a dead engine left open become ERROR once an engine recovers
 * them; then what their processes started must be gone. */
static void watch_recovery(void)
{
    size_t i, k;

    if (L.recovering) {
        char sql[160];

        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM attempts WHERE finished_at IS NULL "
                 "AND started_at <= %lld",
                 (long long)L.recover_before);
        if (h_db_int(rdb(), sql) == 0) {
            L.recovering = 0;
            L.recovered_at = h_mono_ms();
        } else if (L.engine > 0 && L.recovery_due &&
                   h_mono_ms() > L.recovery_due) {
            fail("a restarted engine did not recover the attempts of the "
                 "dead one within %d ms",
                 RECOVERY_LIMIT_MS);
        }
        return;
    }
    for (i = k = 0; i < L.npending; i++)
        if (h_proc_alive(&L.pending[i]))
            L.pending[k++] = L.pending[i];
    L.npending = k;
    if (L.npending && h_mono_ms() - L.recovered_at > SURVIVOR_GRACE_MS)
        fail("process %ld (%s) of a killed engine's task still runs %d ms "
             "after a new engine recovered (a shell task outlived its "
             "engine)",
             (long)L.pending[0].pid, L.pending[0].cmd, SURVIVOR_GRACE_MS);
}

static void check_overlaps(void)
{
    char *text = h_read_file(L.overlaps);

    if (text && *text)
        fail("a step ran twice at once: %s", text);
    free(text);
}

static void check_db(int final)
{
    char *msg = h_check_db(rdb(), final);

    if (msg)
        fail("%s", msg);
}

static void verify(void)
{
    cli("0", "verify", NULL);
}

/* ---- the loop ---- */

static void usage(void)
{
    fprintf(stderr, "usage: crashloop --planctl PATH [--embedder PATH] "
                    "[--seed N] [--kills K] [--instances M] [--dir DIR] "
                    "[--keep] [--verify-every V] [--max-delay MS]\n");
    exit(2);
}

static long num_arg(int argc, char **argv, int *i)
{
    return h_num_arg(argc, argv, i, usage);
}

static void setup(void)
{
    char *path, *locks;

    if (!L.dir) {
        const char *tmp = getenv("TMPDIR");

        L.dir = h_fmt("%s/planctl-crash-XXXXXX", tmp ? tmp : "/tmp");
        if (!mkdtemp(L.dir))
            fail("cannot create a directory in %s", tmp ? tmp : "/tmp");
    } else if (mkdir(L.dir, 0700) != 0 && errno != EEXIST) {
        fail("cannot create %s", L.dir);
    }
    L.db = h_fmt("%s/planctl.db", L.dir);
    L.wal = h_fmt("%s-wal", L.db);
    L.report = h_fmt("%s/embedder.report", L.dir);
    L.overlaps = h_fmt("%s/overlaps", L.dir);
    L.log = h_fmt("%s/engine.log", L.dir);
    L.env_dir = h_fmt("CRASHLOOP_DIR=%s", L.dir);
    L.env_tag = h_fmt("CRASHLOOP_TAG=%llu-%ld", (unsigned long long)L.seed,
                      (long)getpid());
    L.marker = L.env_tag;
    locks = h_fmt("%s/locks", L.dir);
    if (mkdir(locks, 0700) != 0 && errno != EEXIST)
        fail("cannot create %s", locks);
    free(locks);
    path = h_fmt("%s/task", L.dir);
    if (h_write_file(path, task_script, 0700) != 0)
        fail("cannot write %s", path);
    free(path);
    path = h_fmt("%s/crash.json", L.dir);
    if (h_write_file(path, definition, 0600) != 0)
        fail("cannot write %s", path);
    cli("0", "apply", "-f", path, NULL);
    free(path);
}

/* While the engine lives: the second process acts, instances are
 * created, recovery and survivors are watched. */
static void live(int64_t until)
{
    while (h_mono_ms() < until) {
        int64_t nap = h_rng_range(&L.rng, 5, 40);

        engine_alive();
        watch_recovery();
        read_report();
        check_wal();
        if (L.created < L.instances && h_rng_range(&L.rng, 0, 3) == 0)
            create_one();
        if (h_rng_range(&L.rng, 0, 5) == 0)
            chaos();
        if (h_mono_ms() + nap > until)
            nap = until - h_mono_ms();
        rdb_release();
        h_sleep_ms(nap);
    }
}

static void kill_engine(void)
{
    h_result r;
    char d[96];

    engine_alive();
    kill(L.engine, SIGKILL);
    if (h_wait(&r, L.engine, 30000) != 0)
        fail("cannot wait for the engine");
    L.engine = 0;
    if (r.exited || r.sig != SIGKILL)
        fail("the engine ended with %s, not by our SIGKILL",
             h_describe(&r, d, sizeof d));
    /* What it reported before it died was committed: still there. */
    if (L.embedded) {
        read_report();
        recheck_reports(L.life_from, "after its kill -9");
        L.embedded = 0;
        L.wal_ino = 0;
    }
    /* What its tasks left must go once a new engine has recovered. */
    add_survivors();
    L.recovering = 1;
    L.recover_before = h_now_ms();
    L.recovery_due = 0;
}

static void summary(void)
{
    sqlite3_stmt *st;

    printf("crashloop: seed %llu: %d kills, %d instances, %d actions of "
           "the second process (%d refused, %d while no engine ran), %d "
           "processes of killed engines seen and gone, %.1f s\n",
           (unsigned long long)L.seed, L.kills, L.created, L.chaos, L.refused,
           L.dead_chaos, L.survivors_seen,
           (double)(h_mono_ms() - L.t0) / 1000.0);
    printf("crashloop: runs:");
    if (sqlite3_prepare_v2(rdb(),
                           "SELECT status, count(*) FROM runs GROUP BY "
                           "status ORDER BY status",
                           -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW)
            printf(" %s %d", sqlite3_column_text(st, 0),
                   sqlite3_column_int(st, 1));
    }
    sqlite3_finalize(st);
    printf("; attempts %lld, interrupted by a kill %lld\n",
           (long long)h_db_int(rdb(), "SELECT count(*) FROM attempts"),
           (long long)h_db_int(rdb(), "SELECT count(*) FROM attempts WHERE "
                                      "message = 'interrupted: engine "
                                      "stopped'"));
    if (L.embedder)
        printf("crashloop: %d of the engine's lives were the embedder; %zu "
               "commits it reported, %ld looks that they were there\n",
               L.lives_embedded, L.nlines, L.checked);
}

int main(int argc, char **argv)
{
    int i, seeded = 0;
    const char *env_seed = getenv("PLANCTL_CRASH_SEED");

    L.kills = 30;
    L.instances = 200;
    L.verify_every = 5;
    L.max_delay = 1200;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--planctl") && i + 1 < argc)
            L.planctl = argv[++i];
        else if (!strcmp(argv[i], "--embedder") && i + 1 < argc)
            L.embedder = argv[++i];
        else if (!strcmp(argv[i], "--seed")) {
            L.seed = (uint64_t)num_arg(argc, argv, &i);
            seeded = 1;
        } else if (!strcmp(argv[i], "--kills"))
            L.kills = (int)num_arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--instances"))
            L.instances = (int)num_arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--verify-every"))
            L.verify_every = (int)num_arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--max-delay"))
            L.max_delay = num_arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            L.dir = h_fmt("%s", argv[++i]);
        else if (!strcmp(argv[i], "--keep"))
            L.keep = 1;
        else
            usage();
    }
    if (!L.planctl || L.instances < 1)
        usage();
    if (!seeded)
        L.seed = env_seed ? strtoull(env_seed, NULL, 10) : h_seed_from_clock();
    h_rng_seed(&L.rng, L.seed);
    signal(SIGPIPE, SIG_IGN);
    L.t0 = h_mono_ms();
    printf("crashloop: seed %llu (--seed %llu reproduces the choices), %d "
           "kills, %d instances\n",
           (unsigned long long)L.seed, (unsigned long long)L.seed, L.kills,
           L.instances);
    fflush(stdout);

    setup();
    while (L.created < (L.instances + 1) / 2)
        create_one();

    for (L.kill_no = 1; L.kill_no <= L.kills; L.kill_no++) {
        /* Mostly mid-work; one kill in eight during start-up or the
         * recovery pass itself. */
        int64_t delay = h_rng_range(&L.rng, 0, 7) == 0
                            ? h_rng_range(&L.rng, 0, 40)
                            : h_rng_range(&L.rng, 50, L.max_delay);

        start_engine();
        if (L.recovering)
            L.recovery_due = h_mono_ms() + RECOVERY_LIMIT_MS;
        live(h_mono_ms() + delay);
        kill_engine();
        check_overlaps();
        check_db(0);
        if (L.verify_every && L.kill_no % L.verify_every == 0)
            verify();
        /* An operator acting while no engine runs: often a cancel of a
         * run whose tasks the dead engine left running. */
        if (h_rng_range(&L.rng, 0, 2) == 0) {
            char *name = busy_instance();

            L.dead_chaos++;
            if (name && h_rng_range(&L.rng, 0, 1) == 0) {
                L.chaos++;
                cli("034", "cancel", name, "--reason", "engine down", NULL);
            } else {
                chaos();
            }
            free(name);
        }
    }
    L.kill_no = L.kills;

    /* Let it finish: every instance created, nothing paused, one engine
     * until nothing is left to do. */
    while (L.created < L.instances)
        create_one();
    {
        char **names;
        size_t n, k;

        if (h_paused_instances(rdb(), &names, &n) != 0)
            fail("cannot list paused runs: %s", sqlite3_errmsg(rdb()));
        for (k = 0; k < n; k++) {
            cli("0", "resume", names[k], NULL);
            free(names[k]);
        }
        free(names);
    }
    {
        char *argv2[] = {(char *)L.planctl, "--db", L.db, "run",
                         "--until-idle",    NULL};
        char *env[] = {L.env_dir, L.env_tag, NULL};
        h_result r;
        char d[96];

        L.engine = h_spawn(argv2, env, L.log, L.log, 1);
        if (L.engine < 0 || h_wait(&r, L.engine, FINAL_TIMEOUT_MS) != 0)
            fail("cannot run the last engine");
        L.engine = 0;
        if (!r.exited || r.code != 0)
            fail("the last engine (run --until-idle) ended with %s",
                 h_describe(&r, d, sizeof d));
    }
    /* That engine recovered everything; what killed engines left is gone. */
    if (L.recovering) {
        L.recovering = 0;
        L.recovered_at = h_mono_ms();
    }
    while (L.npending) {
        watch_recovery();
        h_sleep_ms(20);
    }
    {
        h_proc *left;
        size_t n = h_scan_marked(&left, L.marker);

        if (n)
            fail("process %ld (%s) of a task outlived every engine",
                 (long)left[0].pid, left[0].cmd);
        free(left);
    }
    check_overlaps();
    check_db(1);
    recheck_reports(0, "at the end");
    verify();
    summary();
    rdb_release();
    if (!L.keep)
        h_rmtree(L.dir);
    else
        printf("crashloop: kept %s\n", L.dir);
    printf("crashloop: ok\n");
    return 0;
}
