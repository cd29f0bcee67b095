/*
 * cmd_events.c - `planctl events [NAME]`: the event log, oldest first, as a
 * table, one document, or one JSON object a line, and (--follow) the events
 * other processes commit from then on.
 *
 * The library returns at most a page of events per call, with the seq to
 * ask again from; the command pages through all of them.  Following polls
 * the database (wait.c): the engine writing the events is another process.
 */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/wait.h"

extern const cli_command cli_cmd_events;

/* NAME is optional: without it, every instance's events. */
static const char *const pos[] = {"[NAME]", NULL};

static const cli_flag flags[] = {
    {"run", 0, CLI_FLAG_VALUE, 0, "ID", "only the events of this run"},
    {"since", 0, CLI_FLAG_VALUE, 0, "SEQ",
     "only events after this sequence number"},
    {"limit", 0, CLI_FLAG_VALUE, 0, "N",
     "only the first N events (with --follow: stop after N)"},
    {"tail", 0, CLI_FLAG_VALUE, 0, "N",
     "only the last N events (with --follow: then the new ones)"},
    {"follow", 'f', CLI_FLAG_BOOL, 0, NULL,
     "then print new events as they come, until interrupted or (--run) "
     "until the run ends"},
    /* The command's own -o: the global one knows no jsonl. */
    {"output", 'o', CLI_FLAG_VALUE, 0, "FORMAT",
     "text (default), json, yaml or jsonl (one event a line)"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl events zk",
    "planctl events zk --run 12 -o json",
    "planctl events --since 1500 -o jsonl",
    "planctl events zk --tail 20",
    "planctl events zk --run 12 --follow",
    "planctl events --follow -o jsonl | jq -c 'select(.to == \"FATAL_ERROR\")'",
    NULL};

/* How many events one call asks for; pages are read until one is short. */
#define PAGE 1000

typedef enum format { FMT_TEXT, FMT_JSON, FMT_JSONL } format;

#define NCOLS 9
#define COL_CHANGE 5
#define COL_MESSAGE 8

/* ACTOR is who made the change: "user" (a planctl command), "planctl" (the
 * engine, or what a command did as a consequence), "web ADDRESS". */
static const char *const headers[NCOLS] = {"SEQ",     "TIME",   "INSTANCE",
                                           "RUN",     "ENTITY", "CHANGE",
                                           "ATTEMPT", "ACTOR",  "MESSAGE"};

/* While following, columns are at least this wide, so that the rows of
 * later batches mostly line up with the first. */
static const size_t follow_widths[NCOLS] = {5, 19, 8, 4, 20, 26, 7, 7, 0};

/* The widest CHANGE cell: a status change takes at most 26 columns
 * ("IN_PROGRESS -> FATAL_ERROR"); an admin event's text is cut here with
 * an ellipsis, whole in MESSAGE, so that one long note does not widen the
 * column on every row. */
#define CHANGE_MAX 40

/* Rows of the text table, printed a batch at a time.  The first batch sets
 * the column widths, and later ones keep them (a longer cell pushes the
 * rest of its row only), so that the output does not depend on how the
 * events happened to be batched. */
typedef struct table {
    size_t widths[NCOLS];
    int header_done;
    size_t nrows, cap;
    char **cells;     /* nrows * NCOLS, cleaned */
    const char **sgr; /* per row: the colour of CHANGE, or NULL */
} table;

typedef struct events {
    cli_ctx *ctx;
    planctl_events_options opts; /* opts.since moves on as pages come */
    format fmt;
    table tb;
    json_t *all; /* -o json: every event, for the one document */
    size_t printed;
    int64_t limit;      /* --limit: stop after this many; 0: no limit */
    char *run_instance; /* --run --follow: the run's instance */
} events;

/* ---- the text table ----------------------------------------------------- */

static void table_add(table *tb, const char *const *cells, const char *sgr)
{
    if (tb->nrows == tb->cap) {
        size_t cap = tb->cap ? tb->cap * 2 : 64;
        char **c = realloc(tb->cells, cap * NCOLS * sizeof(*c));
        if (!c)
            cli_oom();
        tb->cells = c;
        const char **s = realloc((void *)tb->sgr, cap * sizeof(*s));
        if (!s)
            cli_oom();
        tb->sgr = s;
        tb->cap = cap;
    }
    for (size_t i = 0; i < NCOLS; i++) {
        cli_buf b = CLI_BUF_INIT;
        cli_buf_add_clean(&b, cells[i] ? cells[i] : "-");
        tb->cells[tb->nrows * NCOLS + i] = b.s ? b.s : cli_xstrdup("");
    }
    tb->sgr[tb->nrows++] = sgr;
}

static void print_row(const table *tb, const char *const *cells,
                      const char *sgr, const cli_term *t)
{
    cli_line line = CLI_LINE_INIT;
    for (size_t c = 0; c < NCOLS; c++) {
        /* No blanks after the last cell with text, as in render_table.c. */
        size_t rest = c + 1;
        while (rest < NCOLS && !cells[rest][0])
            rest++;
        cli_line_add_color(&line, cells[c], c == COL_CHANGE ? sgr : NULL);
        if (rest == NCOLS)
            break;
        /* Three blanks between columns, also after a cell too wide for
         * its column (possible while following). */
        size_t w = cli_text_width(cells[c], strlen(cells[c]));
        size_t end = w > tb->widths[c] ? w + 3 : tb->widths[c] + 3;
        for (; w < end; w++)
            cli_buf_add(&line.text, " ");
    }
    cli_line_emit(&line, stdout, t);
    cli_line_free(&line);
}

/* Prints the rows gathered so far (the header first, once, even when there
 * are none) and forgets them. */
static void table_flush(table *tb, const cli_term *t)
{
    for (size_t c = 0; c < NCOLS && !tb->header_done; c++) {
        size_t w = cli_text_width(headers[c], strlen(headers[c]));
        if (w > tb->widths[c])
            tb->widths[c] = w;
        for (size_t r = 0; r < tb->nrows; r++) {
            const char *cell = tb->cells[r * NCOLS + c];
            w = cli_text_width(cell, strlen(cell));
            if (w > tb->widths[c])
                tb->widths[c] = w;
        }
    }
    if (!tb->header_done) {
        print_row(tb, headers, NULL, t);
        tb->header_done = 1;
    }
    for (size_t r = 0; r < tb->nrows; r++) {
        print_row(tb, (const char *const *)&tb->cells[r * NCOLS], tb->sgr[r],
                  t);
        for (size_t c = 0; c < NCOLS; c++)
            free(tb->cells[r * NCOLS + c]);
    }
    tb->nrows = 0;
}

static void table_free(table *tb)
{
    for (size_t i = 0; i < tb->nrows * NCOLS; i++)
        free(tb->cells[i]);
    free(tb->cells);
    free((void *)tb->sgr);
}

/* The text of an admin event as its CHANGE cell, into b: cleaned, and cut
 * to CHANGE_MAX columns with an ellipsis.  Returns whether it was cut. */
static int change_text(cli_buf *b, const char *msg, const cli_term *t)
{
    cli_buf_add_clean(b, msg);
    const char *s = cli_buf_str(b);
    if (cli_text_width(s, b->len) <= CHANGE_MAX)
        return 0;
    const char *ellipsis = t->unicode ? "\xe2\x80\xa6" : "...";
    size_t keep = CHANGE_MAX - (t->unicode ? 1 : 3), chars = 0, cut;
    /* Cut at a character boundary, never inside a UTF-8 sequence. */
    for (cut = 0; cut < b->len; cut++)
        if (((unsigned char)s[cut] & 0xc0) != 0x80 && chars++ == keep)
            break;
    b->len = cut;
    b->s[cut] = '\0';
    cli_buf_add(b, ellipsis);
    return 1;
}

/* One event as a row: ENTITY names the phase and step ("step
 * nodes/node-0"); CHANGE is "PENDING -> IN_PROGRESS", "(new) -> PENDING"
 * for a row created, or the message of an admin event (which then leaves
 * MESSAGE empty, unless CHANGE had to cut it: MESSAGE then has it whole). */
static void add_event_row(table *tb, const json_t *ev, const cli_term *t)
{
    const char *entity = cli_jstr(ev, "entity");
    const char *phase = cli_jstr(ev, "phase"), *step = cli_jstr(ev, "step");
    const char *from = cli_jstr(ev, "from"), *to = cli_jstr(ev, "to");
    const char *msg = cli_jstr(ev, "message");
    cli_buf what = CLI_BUF_INIT, change = CLI_BUF_INIT;
    char seq[32], at[32], run[32], attempt[32];
    int64_t v;

    snprintf(seq, sizeof(seq), "%lld",
             cli_jint(&v, ev, "seq") ? (long long)v : 0LL);
    if (!cli_jtime(&v, ev, "at"))
        snprintf(at, sizeof(at), "-");
    else
        cli_time_format(at, sizeof(at), v);
    const char *cells[NCOLS] = {
        seq,  at,   cli_jstr(ev, "instance"), NULL,          NULL,
        NULL, NULL, cli_jstr(ev, "actor"),    msg ? msg : ""};
    if (cli_jint(&v, ev, "run")) {
        snprintf(run, sizeof(run), "%lld", (long long)v);
        cells[3] = run;
    }
    if (cli_jint(&v, ev, "attempt")) {
        snprintf(attempt, sizeof(attempt), "%lld", (long long)v);
        cells[6] = attempt;
    }

    cli_buf_add(&what, entity ? entity : "?");
    if (entity && strcmp(entity, "step") == 0)
        cli_buf_addf(&what, " %s/%s", phase ? phase : "?", step ? step : "?");
    else if (entity && strcmp(entity, "phase") == 0)
        cli_buf_addf(&what, " %s", phase ? phase : "?");
    cells[4] = cli_buf_str(&what);

    if (to) {
        cli_buf_addf(&change, "%s -> %s", from ? from : "(new)", to);
        cells[COL_CHANGE] = cli_buf_str(&change);
    } else {
        int cut = change_text(&change, msg ? msg : "", t);
        cells[COL_CHANGE] = cli_buf_str(&change);
        if (!cut)
            cells[COL_MESSAGE] = "";
    }
    table_add(tb, cells, cli_status_sgr(to));
    cli_buf_free(&what);
    cli_buf_free(&change);
}

/* ---- reading pages ------------------------------------------------------ */

static void emit(events *e, const json_t *ev)
{
    if (e->fmt == FMT_JSONL) {
        char *line = json_dumps(ev, JSON_COMPACT);
        if (!line)
            cli_oom();
        puts(line);
        free(line);
    } else if (e->fmt == FMT_JSON) {
        json_array_append(e->all, (json_t *)ev);
    } else {
        add_event_row(&e->tb, ev, &e->ctx->term);
    }
    e->printed++;
}

/* One page of events as the library's document.  Returns 0,
 * PLANCTL_EBUSY untouched, or the exit code after printing the error. */
static int fetch(json_t **doc, cli_ctx *ctx, const planctl_events_options *o)
{
    char *text = NULL;
    int rc = planctl_events_json(&text, ctx->db, o);

    *doc = NULL;
    if (rc == PLANCTL_EBUSY)
        return rc;
    if (rc < 0)
        return cli_fail(ctx, rc);
    *doc = cli_json_parse(text);
    planctl_free(text);
    return *doc ? 0 : CLI_EXIT_ERROR;
}

/*
 * Reads every event after opts.since, page by page, handing each to
 * emit() and moving opts.since on.  Returns 0, PLANCTL_EBUSY untouched (the
 * caller may try again), or the exit code after printing the error.
 */
static int read_all(events *e)
{
    for (;;) {
        if (e->limit && (int64_t)e->printed >= e->limit)
            return 0;
        e->opts.limit = PAGE;
        if (e->limit && e->limit - (int64_t)e->printed < PAGE)
            e->opts.limit = (int)(e->limit - (int64_t)e->printed);
        json_t *doc;
        int rc = fetch(&doc, e->ctx, &e->opts);
        if (rc)
            return rc;
        const json_t *list = json_object_get(doc, "events");
        size_t i, n = json_array_size(list);
        const json_t *ev;
        int64_t last;
        json_array_foreach(list, i, ev)
        {
            emit(e, ev);
        }
        if (cli_jint(&last, doc, "last_seq"))
            e->opts.since = last;
        json_decref(doc);
        /* --tail placed since once; the pages after go on from there. */
        e->opts.tail = 0;
        if (n < (size_t)e->opts.limit)
            return 0;
    }
}

/* Prints what read_all() gathered for the text table and flushes. */
static void flush_out(events *e)
{
    if (e->fmt == FMT_TEXT)
        table_flush(&e->tb, &e->ctx->term);
    fflush(stdout);
}

static int follow_check(void *data, int changed)
{
    events *e = data;
    cli_run_info ri;
    int ended = -1;

    (void)changed; /* reading after the last seq is one index lookup */
    /* The run's status is read before its events: once it is terminal,
     * the events read next include the last it will ever have (they are
     * committed with the status).  A run that is gone is left to
     * read_all(), which reports it. */
    if (e->run_instance &&
        cli_run_lookup(&ri, e->ctx, e->run_instance, e->opts.run) == 0)
        ended = cli_run_exit_code(ri.status);
    int rc = read_all(e);
    flush_out(e);
    if (rc == PLANCTL_EBUSY)
        return CLI_POLL_AGAIN;
    if (rc)
        return rc;
    if (e->limit && (int64_t)e->printed >= e->limit)
        return CLI_EXIT_OK;
    return ended >= 0 ? ended : CLI_POLL_AGAIN;
}

/* The instance of run e->opts.run, from its first event, for following
 * its status.  Returns 0, or the exit code after printing the error (the
 * run or the instance named not found). */
static int find_run_instance(events *e)
{
    planctl_events_options o = e->opts;
    json_t *doc;

    o.since = 0;
    o.limit = 1;
    o.tail = 0;
    int rc = fetch(&doc, e->ctx, &o);
    if (rc == PLANCTL_EBUSY)
        return cli_fail(e->ctx, rc);
    if (rc)
        return rc;
    const char *name =
        cli_jstr(json_array_get(json_object_get(doc, "events"), 0), "instance");
    if (name)
        e->run_instance = cli_xstrdup(name);
    json_decref(doc);
    return 0;
}

static int parse_format(format *out, cli_ctx *ctx, const char *text)
{
    if (!text)
        *out = ctx->json ? FMT_JSON : FMT_TEXT;
    else if (strcmp(text, "text") == 0)
        *out = FMT_TEXT;
    else if (strcmp(text, "json") == 0)
        *out = FMT_JSON;
    else if (strcmp(text, "yaml") == 0) {
        *out = FMT_JSON; /* the same document, printed as YAML */
        cli_output_yaml();
    } else if (strcmp(text, "jsonl") == 0)
        *out = FMT_JSONL;
    else
        return cli_usage_error(&cli_cmd_events,
                               "invalid output format \"%s\"; expected "
                               "text, json, yaml or jsonl",
                               text);
    return 0;
}

/* --limit N or --tail N: a count from 1. */
static int parse_count(int64_t *out, const char *flag, const char *text)
{
    char *end;
    errno = 0;
    long long v =
        text[0] >= '0' && text[0] <= '9' ? strtoll(text, &end, 10) : -1;
    if (v <= 0 || v > INT_MAX || errno || *end) {
        cli_errorf("invalid %s \"%s\"; expected a number of events from 1 "
                   "to %d",
                   flag, text, INT_MAX);
        return CLI_EXIT_USAGE;
    }
    *out = (int64_t)v;
    return 0;
}

static int parse_since(int64_t *out, const char *text)
{
    char *end;
    errno = 0;
    long long v =
        text[0] >= '0' && text[0] <= '9' ? strtoll(text, &end, 10) : -1;
    if (v < 0 || errno || *end) {
        cli_errorf("invalid --since \"%s\"; expected a sequence number (0 "
                   "or more)",
                   text);
        return CLI_EXIT_USAGE;
    }
    *out = (int64_t)v;
    return 0;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *run_arg = cli_arg(a, "run"), *since = cli_arg(a, "since");
    const char *limit = cli_arg(a, "limit"), *tail = cli_arg(a, "tail");
    int follow = cli_arg_count(a, "follow") > 0;
    int64_t tail_n = 0;
    events e;
    int rc;

    memset(&e, 0, sizeof(e));
    e.ctx = ctx;
    e.opts = (planctl_events_options)PLANCTL_EVENTS_OPTIONS_INIT;
    e.opts.instance = a->npos > 0 ? a->pos[0] : NULL;
    e.opts.limit = PAGE;
    if ((rc = parse_format(&e.fmt, ctx,
                           cli_arg(a, "output") ? cli_arg(a, "output")
                                                : ctx->output)) != 0)
        return rc;
    if (run_arg && cli_parse_id(&e.opts.run, "--run", run_arg))
        return CLI_EXIT_USAGE;
    if (since && parse_since(&e.opts.since, since))
        return CLI_EXIT_USAGE;
    if (limit && tail)
        return cli_usage_error(&cli_cmd_events,
                               "--limit (the first N events) and --tail (the "
                               "last N) do not go together; choose one");
    if (limit && parse_count(&e.limit, "--limit", limit))
        return CLI_EXIT_USAGE;
    if (tail && parse_count(&tail_n, "--tail", tail))
        return CLI_EXIT_USAGE;
    e.opts.tail = (int)tail_n;
    if (follow && e.fmt == FMT_JSON)
        return cli_usage_error(&cli_cmd_events,
                               "--follow streams events: use -o jsonl (one "
                               "event a line) or text, not json or yaml");
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0)
        return rc;
    if (e.fmt == FMT_JSON && !(e.all = json_array()))
        cli_oom();
    if (follow && e.opts.run && (rc = find_run_instance(&e)) != 0) {
        json_decref(e.all);
        return rc;
    }
    if (follow) {
        memcpy(e.tb.widths, follow_widths, sizeof(e.tb.widths));
        /* The first check prints what exists, so the signal handlers are
         * in place before anything is printed: whoever waits for the
         * output can then interrupt it.  SIGINT or SIGTERM is how
         * following ends. */
        rc = cli_poll_run(ctx, 0, follow_check, &e);
        if (rc == CLI_POLL_SIGNAL)
            rc = cli_interrupted_exit(ctx);
    } else {
        rc = read_all(&e);
        if (rc == PLANCTL_EBUSY)
            rc = cli_fail(ctx, rc);
        if (rc == 0 && e.fmt == FMT_JSON) {
            rc = cli_json_print_obj(json_pack("{s:i, s:O, s:I}", "schema", 1,
                                              "events", e.all, "last_seq",
                                              (json_int_t)e.opts.since));
        } else if (rc == 0 && e.fmt == FMT_TEXT && !e.printed) {
            puts("no events");
            e.tb.header_done = 1;
        }
        if (rc == 0)
            flush_out(&e);
    }
    json_decref(e.all);
    table_free(&e.tb);
    free(e.run_instance);
    return rc < 0 ? CLI_EXIT_ERROR : rc;
}

const cli_command cli_cmd_events = {
    "events",
    "Show the event log, or follow it",
    "[NAME] [--run ID] [--since SEQ] [--limit N | --tail N] [--follow] "
    "[-o text|json|yaml|jsonl]",
    "Shows the event log oldest first: every status change of a run, phase\n"
    "or step, and the admin actions, each with its sequence number and who\n"
    "made it (ACTOR: user, planctl, engine, web ADDRESS); an admin action's\n"
    "text longer than the CHANGE column is cut there and whole in MESSAGE.\n"
    "NAME limits it to one instance, --run to one run, --since to the events\n"
    "after a sequence number; of those, --limit N shows the first N and\n"
    "--tail N the last N.  -o json prints one document {schema, events,\n"
    "last_seq} (-o yaml: the same document in YAML); -o jsonl prints one\n"
    "event object a line and nothing else, the stable format for scripts:\n"
    "{seq, at, instance, run, phase, step, entity, from, to, attempt,\n"
    "message, actor}.\n"
    "\n"
    "--follow then keeps printing events as other processes (the engine,\n"
    "other planctl commands) commit them, within about 100ms, until SIGINT\n"
    "(exit 130, as shells expect of an interrupted command) or SIGTERM\n"
    "(exit 143).  With --run ID it also ends when that run does, after its\n"
    "last event, as status --watch does: exit 0 when it is COMPLETE, 5 when\n"
    "FATAL_ERROR or CANCELLED (at once for a run that already ended).  An\n"
    "instance's events (NAME without --run) are followed until interrupted:\n"
    "an instance outlives its runs.  With --limit N it stops after N events\n"
    "(exit 0); --tail N prints the last N before following.",
    pos,
    flags,
    examples,
    run};
