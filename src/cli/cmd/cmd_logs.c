/* cmd_logs.c - `planctl logs NAME`: the output the attempts of a run kept,
 * once or (--follow) as the engine writes it, from the database. */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/wait.h"
#include "core/logtail.h"

extern const cli_command cli_cmd_logs;

static const char *const pos[] = {"NAME", NULL};

static const cli_flag flags[] = {
    {"run", 0, CLI_FLAG_VALUE, 0, "ID",
     "this run, not the active (or latest) one"},
    {"step", 0, CLI_FLAG_VALUE, 0, "S", "only this step (S or PHASE/S)"},
    {"attempt", 0, CLI_FLAG_VALUE, 0, "N",
     "only this try of the step (with --step)"},
    {"tail", 0, CLI_FLAG_VALUE, 0, "N", "only the last N lines of each"},
    {"follow", 'f', CLI_FLAG_BOOL, 0, NULL,
     "print new output as it comes, until the run (or step) ends"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl logs zk",
    "planctl logs zk --step node-0 --attempt 2",
    "planctl logs zk --run 12 --tail 20",
    "planctl logs zk --follow",
    "planctl logs zk --step check/ping -o json",
    NULL};

/* What a follower remembers of one attempt. */
typedef struct seen {
    char *key;     /* "PHASE/STEP attempt N" */
    int64_t bytes; /* of its output printed (or skipped) so far */
} seen;

typedef struct logs {
    cli_ctx *ctx;
    const char *instance;
    planctl_logs_options opts;
    int64_t tail; /* lines; -1: all */
    int headers;  /* print a header before each attempt's output */
    int follow;   /* headers without the status, which moves on */
    seen *seen;
    size_t nseen;
    const char *last; /* key of the attempt printed last (in seen) */
    int at_bol;       /* what was printed last ends a line */
} logs;

static int parse_count(int64_t *out, const char *flag, const char *text,
                       int64_t min)
{
    char *end;
    long long v;

    errno = 0;
    v = text[0] >= '0' && text[0] <= '9' ? strtoll(text, &end, 10) : -1;
    if (v < min || errno || *end) {
        cli_errorf("invalid %s \"%s\"; expected a whole number (%lld or more)",
                   flag, text, (long long)min);
        return CLI_EXIT_USAGE;
    }
    *out = (int64_t)v;
    return 0;
}

/* Writes output as text: control characters other than newline and tab
 * (and the bidirectional controls) become spaces, as in every text view,
 * so a task's output cannot drive the terminal. */
static void put_text(logs *l, const char *s, size_t n)
{
    cli_buf b = CLI_BUF_INIT;
    size_t i = 0;

    if (!n)
        return;
    while (i < n) {
        size_t run = strcspn(s + i, "\n\t");
        char *part;

        if (run > n - i)
            run = n - i;
        part = cli_xmalloc(run + 1);
        memcpy(part, s + i, run);
        part[run] = '\0';
        cli_buf_add_clean(&b, part);
        free(part);
        i += run;
        if (i < n)
            cli_buf_addn(&b, s + i++, 1);
    }
    fputs(cli_buf_str(&b), stdout);
    cli_buf_free(&b);
    l->at_bol = s[n - 1] == '\n';
}

static void end_line(logs *l)
{
    if (!l->at_bol)
        putchar('\n');
    l->at_bol = 1;
}

static void header(logs *l, const json_t *a, const char *key)
{
    int64_t code = 0;

    l->last = key;
    if (!l->headers)
        return;
    end_line(l);
    /* Followed, an attempt's header is printed once, whenever it is
     * first seen: its status then would say when that was, not how the
     * attempt did (the follow's exit code says how the run did). */
    if (l->follow) {
        printf("==> %s <==\n", key);
        return;
    }
    printf("==> %s [%s]", key, cli_jstr(a, "status"));
    if (cli_jint(&code, a, "exit_code"))
        printf(" exit %lld", (long long)code);
    printf(" <==\n");
}

static void skipped(logs *l, int64_t n)
{
    end_line(l);
    printf("... (%lld bytes not kept)\n", (long long)n);
}

static char *key_of(const json_t *a)
{
    int64_t n = 0;
    cli_buf b = CLI_BUF_INIT;

    cli_jint(&n, a, "attempt");
    cli_buf_addf(&b, "%s/%s attempt %lld", cli_jstr(a, "phase"),
                 cli_jstr(a, "step"), (long long)n);
    return b.s ? b.s : cli_xstrdup("");
}

/* The bytes an attempt wrote in all: output_bytes, or its output's length
 * where that is not recorded. */
static int64_t bytes_of(const json_t *a)
{
    const char *out = cli_jstr(a, "output");
    int64_t n;

    return cli_jint(&n, a, "output_bytes") ? n : out ? (int64_t)strlen(out) : 0;
}

/* Prints what is new of attempt a since s (NULL: never seen), and
 * remembers it. */
static void show(logs *l, const json_t *a, seen *s)
{
    const char *out = cli_jstr(a, "output");
    size_t len = out ? strlen(out) : 0, from;
    char *key = key_of(a);
    int64_t bytes = bytes_of(a);
    pctl_logtail_new what;

    if (!s) {
        l->seen = realloc(l->seen, (l->nseen + 1) * sizeof *l->seen);
        if (!l->seen)
            cli_oom();
        s = &l->seen[l->nseen++];
        s->key = key;
        s->bytes = -1;
        /* Followed, the header waits for output: parallel steps that
         * have written nothing yet print nothing yet. */
        if (!l->follow)
            header(l, a, s->key);
    } else {
        free(key);
        if (bytes == s->bytes)
            return;
    }
    what = pctl_logtail_since(out ? out : "", len, bytes, s->bytes);
    from = what.from;
    if (l->tail >= 0 && s->bytes < 0) {
        from = pctl_logtail_lines(out ? out : "", len, (size_t)l->tail);
        what.lost = 0;
    }
    if (l->follow && what.lost <= 0 && from >= len) {
        s->bytes = bytes;
        return;
    }
    /* A header when the output comes from another attempt than the one
     * printed last, never twice in a row for one. */
    if (l->last != s->key)
        header(l, a, s->key);
    if (what.lost > 0)
        skipped(l, what.lost);
    put_text(l, out ? out + from : "", len - from);
    s->bytes = bytes;
}

static seen *find_seen(logs *l, const json_t *a)
{
    char *key = key_of(a);
    size_t i;

    for (i = 0; i < l->nseen; i++)
        if (!strcmp(l->seen[i].key, key))
            break;
    free(key);
    return i < l->nseen ? &l->seen[i] : NULL;
}

static int fetch(json_t **out, logs *l, int *busy)
{
    char *text = NULL;
    int rc = planctl_logs_json(&text, l->ctx->db, l->instance, &l->opts);

    *out = NULL;
    *busy = rc == PLANCTL_EBUSY;
    if (*busy)
        return 0;
    if (rc < 0)
        return cli_fail(l->ctx, rc);
    *out = cli_json_parse(text);
    planctl_free(text);
    return *out ? 0 : CLI_EXIT_ERROR;
}

/* The exit code that ends a follow: the chosen attempt's, step's or run's
 * end (0 COMPLETE, 5 otherwise), or -1 while it goes on. */
static int ended(const logs *l, const json_t *doc)
{
    const char *st;

    if (l->opts.attempt) {
        st = cli_jstr(json_array_get(json_object_get(doc, "attempts"), 0),
                      "status");
        if (!st || !strcmp(st, "IN_PROGRESS"))
            return -1;
        return strcmp(st, "COMPLETE") ? CLI_EXIT_RUN_FAILED : 0;
    }
    if (l->opts.step)
        return cli_run_exit_code(
            cli_jstr(json_object_get(doc, "step"), "status"));
    return cli_run_exit_code(cli_jstr(json_object_get(doc, "run"), "status"));
}

static int follow_check(void *data, int changed)
{
    logs *l = data;
    json_t *doc;
    size_t i;
    const json_t *a;
    int busy, rc;

    (void)changed;
    if ((rc = fetch(&doc, l, &busy)) != 0)
        return rc;
    if (busy)
        return CLI_POLL_AGAIN;
    json_array_foreach(json_object_get(doc, "attempts"), i, a)
        show(l, a, find_seen(l, a));
    /* The first read pins the run: a later one of the instance is not
     * this one's output. */
    if (!l->opts.run)
        cli_jint(&l->opts.run, json_object_get(doc, "run"), "id");
    rc = ended(l, doc);
    json_decref(doc);
    if (rc >= 0)
        end_line(l);
    fflush(stdout);
    return rc >= 0 ? rc : CLI_POLL_AGAIN;
}

/* -o json: the document, each output cut to its last --tail lines. */
static int print_json(logs *l, json_t *doc)
{
    size_t i;
    json_t *a;

    json_array_foreach(json_object_get(doc, "attempts"), i, a)
    {
        const char *out = cli_jstr(a, "output");

        if (out && l->tail >= 0)
            json_object_set_new(
                a, "output",
                json_string(out + pctl_logtail_lines(out, strlen(out),
                                                     (size_t)l->tail)));
    }
    return cli_json_print_obj(json_incref(doc));
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *run_arg = cli_arg(a, "run"), *att = cli_arg(a, "attempt");
    const char *tail = cli_arg(a, "tail");
    int follow = cli_arg_count(a, "follow") > 0, rc, busy;
    int64_t n;
    logs l;
    json_t *doc;
    size_t i;

    memset(&l, 0, sizeof l);
    l.ctx = ctx;
    l.instance = a->pos[0];
    l.opts = (planctl_logs_options)PLANCTL_LOGS_OPTIONS_INIT;
    l.opts.step = cli_arg(a, "step");
    l.tail = -1;
    l.at_bol = 1;
    if (run_arg && cli_parse_id(&l.opts.run, "--run", run_arg))
        return CLI_EXIT_USAGE;
    if (att && parse_count(&n, "--attempt", att, 1))
        return CLI_EXIT_USAGE;
    if (att && n > 1000000)
        n = 1000000; /* no step has that many: not found, below */
    l.opts.attempt = att ? (int)n : 0;
    if (tail && parse_count(&l.tail, "--tail", tail, 0))
        return CLI_EXIT_USAGE;
    if (att && !l.opts.step)
        return cli_usage_error(&cli_cmd_logs,
                               "--attempt N picks a try of one step: give "
                               "--step S too");
    if (follow && ctx->json)
        return cli_usage_error(&cli_cmd_logs,
                               "--follow prints text as it comes; use -o "
                               "json without --follow for the document");
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0)
        return rc;
    /* One attempt asked for by number prints bare, as `cat` would. */
    l.headers = !l.opts.attempt;
    l.follow = follow;
    if (follow) {
        rc = cli_poll_run(ctx, 0, follow_check, &l);
        if (rc == CLI_POLL_SIGNAL)
            rc = cli_interrupted_exit(ctx);
        else if (rc < 0)
            rc = CLI_EXIT_ERROR;
    } else if ((rc = fetch(&doc, &l, &busy)) == 0 && busy) {
        rc = cli_fail(ctx, PLANCTL_EBUSY);
    } else if (rc == 0) {
        if (ctx->json) {
            rc = print_json(&l, doc);
        } else {
            const json_t *at;

            json_array_foreach(json_object_get(doc, "attempts"), i, at)
                show(&l, at, NULL);
            end_line(&l);
        }
        json_decref(doc);
    }
    for (i = 0; i < l.nseen; i++)
        free(l.seen[i].key);
    free(l.seen);
    return rc;
}

const cli_command cli_cmd_logs = {
    "logs",
    "Show the output of a run's attempts, or follow it",
    "NAME [--run ID] [--step S] [--attempt N] [--tail N] [--follow]",
    "Shows the output each attempt of a run kept (stdout and stderr of a\n"
    "shell task, its last 64 KiB unless the engine was started with\n"
    "--output-size): the instance's active run, else its latest that\n"
    "started, or --run ID.  Every attempt of every step, in definition\n"
    "order, each after a header line \"==> PHASE/STEP attempt N [STATUS]\n"
    "exit CODE <==\" (no exit code while it runs); --step S (or PHASE/S)\n"
    "keeps one step's attempts, and --attempt N one of them, printed\n"
    "without a header.  When an attempt wrote more than it kept, a line\n"
    "\"... (N bytes not kept)\" comes before its output.  --tail N prints\n"
    "only the last N lines of each (also in -o json).  Control characters\n"
    "but newline and tab print as spaces; -o json gives the document\n"
    "{schema, instance, run:{id, plan, status}, step, attempts:[{run, phase,\n"
    "step, attempt, status, exit_code, started_at, finished_at, message,\n"
    "output, output_bytes}]}, null where absent.\n"
    "\n"
    "--follow then prints new output as the engine writes it to the\n"
    "database (at most once a second while a task runs), after a header\n"
    "whenever it comes from another attempt than the output before it\n"
    "(\"==> PHASE/STEP attempt N <==\", without the status, which moves\n"
    "on; an attempt that has written nothing has none yet), and \"... (N\n"
    "bytes not kept)\" for output that came and went between two reads.\n"
    "It ends when the run ends (with --step, the step; with --attempt,\n"
    "that attempt): exit 0 when it ended COMPLETE, 5 otherwise, 130 when\n"
    "interrupted by SIGINT (143: SIGTERM).  Not found: the instance, run,\n"
    "step or attempt, with what there is (exit 4); a step name two phases\n"
    "share (exit 2).",
    pos,
    flags,
    examples,
    run};
