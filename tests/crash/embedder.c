/*
 * embedder.c - the crash loop's other engine: a program that embeds
 * libplanctl as a controller does, killed with SIGKILL like `planctl run`.
 *
 * Handle A runs the engine on the program's libuv loop.  Handle B is opened
 * beside it once the engine has started (as planctl.h recommends) and is
 * the program's own: on a timer it reads the event log page by page, reads
 * an instance's status, and now and then triggers a run.  Every commit the
 * program knows of is reported as one line of the report file, written
 * after the commit:
 *
 *   ready                   A and B are open: the -wal must stay from now on
 *   log RUN STATUS STEP     the engine's logger: a status change it committed
 *                           (STEP "-" for the run's own)
 *   run RUN                 B triggered run RUN
 *   event SEQ RUN TO        B read event SEQ (RUN and TO "-" when null)
 *
 * The crash loop checks that each line is visible at once to another
 * process, and still there after the kill.
 *
 * Usage: crash_embedder --db PATH --report FILE [--seed N] [--since SEQ]
 *                       [--concurrency C]
 * B reads the events after SEQ (the crash loop passes the last one there
 * was when it started this program).  Runs until killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <uv.h>

#include "harness.h"
#include "planctl.h"

#define MAX_NAMES 1024

typedef struct embedder {
    const char *db;
    planctl *a; /* the engine's */
    planctl *b; /* the program's own */
    planctl_engine *e;
    uv_loop_t loop;
    uv_timer_t tick;
    h_rng rng;
    int report;
    int64_t since; /* the last event B has read */
    char *names[MAX_NAMES];
    size_t nnames;
    long lines;
} embedder;

static embedder E;

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "crash_embedder: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void say(const char *fmt, ...)
{
    char line[256];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof line - 1)
        die("report line too long");
    line[n++] = '\n';
    /* One write() a line on an O_APPEND file: a kill leaves whole lines. */
    if (write(E.report, line, (size_t)n) != n)
        die("cannot write the report: %s", strerror(errno));
    E.lines++;
}

static void on_log(const planctl_log_record *rec, void *data)
{
    (void)data;
    /* At info and above: the run's own changes, and steps failing. */
    if (rec->run <= 0 || !rec->status)
        return;
    if (!strncmp(rec->msg, "run ", 4))
        say("log %lld %s -", (long long)rec->run, rec->status);
    else if (rec->step)
        say("log %lld %s %s", (long long)rec->run, rec->status, rec->step);
}

static void remember(const char *name)
{
    size_t i;

    for (i = 0; i < E.nnames; i++)
        if (!strcmp(E.names[i], name))
            return;
    if (E.nnames < MAX_NAMES)
        E.names[E.nnames++] = h_fmt("%s", name);
}

/* B reads the next page of the event log and reports what it read. */
static void read_events(void)
{
    planctl_events_options o = PLANCTL_EVENTS_OPTIONS_INIT;
    json_t *doc, *ev;
    char *text = NULL;
    size_t i;

    o.since = E.since;
    o.limit = 200;
    if (planctl_events_json(&text, E.b, &o) < 0) {
        /* Busy or an I/O error under the kills of other processes: the
         * next tick tries again, as an embedder would. */
        fprintf(stderr, "crash_embedder: events: %s\n", planctl_errmsg(E.b));
        return;
    }
    doc = json_loads(text, 0, NULL);
    planctl_free(text);
    if (!doc)
        die("events: not JSON");
    json_array_foreach(json_object_get(doc, "events"), i, ev)
    {
        const json_t *run = json_object_get(ev, "run");
        const char *to = json_string_value(json_object_get(ev, "to"));
        const char *inst = json_string_value(json_object_get(ev, "instance"));
        char id[24] = "-";

        if (inst)
            remember(inst);
        if (json_is_integer(run))
            snprintf(id, sizeof id, "%lld", (long long)json_integer_value(run));
        say("event %lld %s %s",
            (long long)json_integer_value(json_object_get(ev, "seq")), id,
            to ? to : "-");
    }
    E.since = json_integer_value(json_object_get(doc, "last_seq"));
    json_decref(doc);
}

static void on_tick(uv_timer_t *t)
{
    const char *name;
    char *text = NULL;
    int64_t run;

    read_events();
    if (E.nnames == 0)
        goto next;
    name = E.names[h_rng_range(&E.rng, 0, (int64_t)E.nnames - 1)];
    if (planctl_status_json(&text, E.b, name, NULL) == 0)
        planctl_free(text);
    if (h_rng_range(&E.rng, 0, 9) == 0) {
        planctl_trigger_options o = PLANCTL_TRIGGER_OPTIONS_INIT;

        o.queue = 1;
        o.reason = "crash loop embedder";
        if (planctl_plan_trigger(&run, E.b, name, "backup", &o) == 0)
            say("run %lld", (long long)run);
    }
next:
    uv_timer_start(t, on_tick, (uint64_t)h_rng_range(&E.rng, 10, 50), 0);
}

static void usage(void)
{
    fprintf(stderr, "usage: crash_embedder --db PATH --report FILE [--seed N] "
                    "[--since SEQ] [--concurrency C]\n");
    exit(2);
}

static long num_arg(int argc, char **argv, int *i)
{
    return h_num_arg(argc, argv, i, usage);
}

int main(int argc, char **argv)
{
    planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
    const char *report = NULL;
    uint64_t seed = 1;
    int i;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc)
            E.db = argv[++i];
        else if (!strcmp(argv[i], "--report") && i + 1 < argc)
            report = argv[++i];
        else if (!strcmp(argv[i], "--seed"))
            seed = (uint64_t)num_arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--since"))
            E.since = num_arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--concurrency"))
            o.concurrency = (int)num_arg(argc, argv, &i);
        else
            usage();
    }
    if (!E.db || !report)
        usage();
    h_rng_seed(&E.rng, seed);
    E.report = open(report, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (E.report < 0)
        die("cannot open %s: %s", report, strerror(errno));
    if (planctl_open(&E.a, E.db, NULL) < 0)
        die("open A: %s", planctl_errmsg(E.a));
    if (uv_loop_init(&E.loop) != 0 ||
        planctl_engine_new(&E.e, E.a, &E.loop, &o) < 0 ||
        planctl_engine_set_logger(E.e, PLANCTL_LOG_INFO, on_log, NULL) < 0)
        die("cannot set up the engine");
    if (planctl_engine_start(E.e, NULL, NULL) < 0)
        die("start: %s", planctl_errmsg(E.a));
    /* The engine's connection holds its locks now: B opens beside it. */
    if (planctl_open(&E.b, E.db, NULL) < 0)
        die("open B: %s", planctl_errmsg(E.b));
    say("ready");
    uv_timer_init(&E.loop, &E.tick);
    uv_timer_start(&E.tick, on_tick, 0, 0);
    uv_run(&E.loop, UV_RUN_DEFAULT);
    die("the loop ended");
    return 1;
}
