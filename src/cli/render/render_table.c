/*
 * render_table.c - aligned tables with a header row in capitals (like
 * kubectl's), and the views built on them: instances, definitions and
 * history, plus the one-line-per-error listing of a validate document.
 */
#include "cli/cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct cli_table {
    size_t ncols;
    const char *const *headers;
    size_t nrows, cap;
    char **cells;      /* nrows * ncols, row-major, already cleaned */
    size_t *color_col; /* per row */
    const char **sgr;  /* per row, NULL for none */
};

cli_table *cli_table_new(const char *const *headers, size_t ncols)
{
    cli_table *tb = cli_xmalloc(sizeof(*tb));
    memset(tb, 0, sizeof(*tb));
    tb->ncols = ncols;
    tb->headers = headers;
    return tb;
}

void cli_table_row(cli_table *tb, const char *const *cells, size_t color_col,
                   const char *sgr)
{
    if (tb->nrows == tb->cap) {
        size_t cap = tb->cap ? tb->cap * 2 : 16;
        char **c = realloc(tb->cells, cap * tb->ncols * sizeof(*c));
        if (!c)
            cli_oom();
        tb->cells = c;
        size_t *cc = realloc(tb->color_col, cap * sizeof(*cc));
        if (!cc)
            cli_oom();
        tb->color_col = cc;
        const char **s = realloc((void *)tb->sgr, cap * sizeof(*s));
        if (!s)
            cli_oom();
        tb->sgr = s;
        tb->cap = cap;
    }
    for (size_t i = 0; i < tb->ncols; i++) {
        cli_buf b = CLI_BUF_INIT;
        cli_buf_add_clean(&b, cells[i] ? cells[i] : "-");
        tb->cells[tb->nrows * tb->ncols + i] = b.s ? b.s : cli_xstrdup("");
    }
    tb->color_col[tb->nrows] = color_col;
    tb->sgr[tb->nrows] = sgr;
    tb->nrows++;
}

static void print_row(const cli_table *tb, const char *const *cells,
                      const size_t *widths, size_t color_col, const char *sgr,
                      FILE *f, const cli_term *t)
{
    cli_line line = CLI_LINE_INIT;
    for (size_t c = 0; c < tb->ncols; c++) {
        /* No blanks after the last cell with text: trailing spaces are
         * noise in diffs and copied text. */
        size_t rest = c + 1;
        while (rest < tb->ncols && !cells[rest][0])
            rest++;
        cli_line_add_color(&line, cells[c], c == color_col ? sgr : NULL);
        if (rest == tb->ncols)
            break;
        size_t w = cli_text_width(cells[c], strlen(cells[c]));
        for (; w < widths[c] + 3; w++)
            cli_buf_add(&line.text, " ");
    }
    cli_line_emit(&line, f, t);
    cli_line_free(&line);
}

void cli_table_print(cli_table *tb, FILE *f, const cli_term *t)
{
    size_t *widths = cli_xmalloc(tb->ncols * sizeof(*widths));
    for (size_t c = 0; c < tb->ncols; c++) {
        widths[c] = cli_text_width(tb->headers[c], strlen(tb->headers[c]));
        for (size_t r = 0; r < tb->nrows; r++) {
            const char *cell = tb->cells[r * tb->ncols + c];
            size_t w = cli_text_width(cell, strlen(cell));
            if (w > widths[c])
                widths[c] = w;
        }
    }
    print_row(tb, tb->headers, widths, (size_t)-1, NULL, f, t);
    for (size_t r = 0; r < tb->nrows; r++)
        print_row(tb, (const char *const *)&tb->cells[r * tb->ncols], widths,
                  tb->color_col[r], tb->sgr[r], f, t);
    free(widths);
}

void cli_table_free(cli_table *tb)
{
    if (!tb)
        return;
    for (size_t i = 0; i < tb->nrows * tb->ncols; i++)
        free(tb->cells[i]);
    free(tb->cells);
    free(tb->color_col);
    free((void *)tb->sgr);
    free(tb);
}

/* A time field as local time, or NULL (shown "-") when absent. */
static const char *time_cell(char *buf, size_t size, const json_t *obj,
                             const char *key)
{
    int64_t ms;
    if (!cli_jtime(&ms, obj, key))
        return NULL;
    cli_time_format(buf, size, ms);
    return buf;
}

void cli_render_instances(FILE *f, const json_t *doc, const cli_term *t)
{
    static const char *const headers[] = {"NAME", "DEFINITION", "STATUS",
                                          "ACTIVE RUN", "CREATED"};
    const json_t *list = json_object_get(doc, "instances");
    size_t i;
    const json_t *inst;

    if (json_array_size(list) == 0) {
        fputs("no instances\n", f);
        return;
    }
    cli_table *tb = cli_table_new(headers, 5);
    json_array_foreach(list, i, inst)
    {
        const json_t *def = json_object_get(inst, "definition");
        const char *status = cli_jstr(inst, "status");
        char defbuf[160], statusbuf[64], active[32], created[32];
        int64_t run;

        snprintf(defbuf, sizeof(defbuf), "%s@%s",
                 cli_jstr(def, "name") ? cli_jstr(def, "name") : "?",
                 cli_jstr(def, "version") ? cli_jstr(def, "version") : "?");
        /* A deleting instance is shown so in its status, as kubectl shows
         * Terminating. */
        snprintf(statusbuf, sizeof(statusbuf), "%s%s", status ? status : "-",
                 json_is_true(json_object_get(inst, "deleting")) ? " (deleting)"
                                                                 : "");
        const char *cells[5] = {
            cli_jstr(inst, "name"), defbuf, statusbuf, NULL,
            time_cell(created, sizeof(created), inst, "created_at")};
        if (cli_jint(&run, inst, "active_run")) {
            snprintf(active, sizeof(active), "%lld", (long long)run);
            cells[3] = active;
        }
        cli_table_row(tb, cells, 2, cli_status_sgr(status));
    }
    cli_table_print(tb, f, t);
    cli_table_free(tb);
}

/* ", "-separated strings of list (each cleaned) after label. */
static void add_list(cli_buf *b, const char *label, const json_t *list)
{
    const json_t *v;
    size_t i;

    cli_buf_add(b, label);
    json_array_foreach(list, i, v)
    {
        const char *email = cli_jstr(v, "email");

        if (i)
            cli_buf_add(b, ", ");
        cli_buf_add_clean(b, json_is_string(v) ? json_string_value(v)
                                               : cli_jstr(v, "name"));
        if (email) {
            cli_buf_add(b, " <");
            cli_buf_add_clean(b, email);
            cli_buf_add(b, ">");
        }
    }
    cli_buf_add(b, "\n");
}

/* A definition's metadata, under the table: only for the definitions
 * that have some, so a list without any reads as it always did. */
static void definition_meta(cli_buf *b, const json_t *def)
{
    static const char *const fields[] = {"description", "appVersion", "url"};
    static const char *const labels[] = {
        "  description: ", "  app version: ", "  url: "};
    const json_t *from = json_object_get(def, "upgradableFrom"),
                 *maintainers = json_object_get(def, "maintainers");
    size_t i;

    /* Absent fields are null. */
    if (!json_is_array(from))
        from = NULL;
    if (!json_is_array(maintainers))
        maintainers = NULL;
    if (!cli_jstr(def, "description") && !cli_jstr(def, "appVersion") &&
        !cli_jstr(def, "url") && !maintainers && !from)
        return;
    cli_buf_add(b, "\n");
    cli_buf_add_clean(b, cli_jstr(def, "name"));
    cli_buf_add(b, "@");
    cli_buf_add_clean(b, cli_jstr(def, "version"));
    cli_buf_add(b, "\n");
    for (i = 0; i < 3; i++) {
        if (!cli_jstr(def, fields[i]))
            continue;
        cli_buf_add(b, labels[i]);
        cli_buf_add_clean(b, cli_jstr(def, fields[i]));
        cli_buf_add(b, "\n");
    }
    if (maintainers)
        add_list(b, "  maintainers: ", maintainers);
    if (from && json_array_size(from) == 0)
        cli_buf_add(b, "  upgradable from: no version\n");
    else if (from)
        add_list(b, "  upgradable from: ", from);
}

void cli_render_definitions(FILE *f, const json_t *doc, const cli_term *t)
{
    cli_buf meta = CLI_BUF_INIT;
    static const char *const headers[] = {"NAME", "VERSION", "PLANS",
                                          "CREATED"};
    const json_t *list = json_object_get(doc, "definitions");
    size_t i, j;
    const json_t *def, *plan;

    if (json_array_size(list) == 0) {
        fputs("no definitions\n", f);
        return;
    }
    cli_table *tb = cli_table_new(headers, 4);
    json_array_foreach(list, i, def)
    {
        cli_buf plans = CLI_BUF_INIT;
        char created[32];
        json_array_foreach(json_object_get(def, "plans"), j, plan)
        {
            if (j)
                cli_buf_add(&plans, ",");
            cli_buf_add(&plans, json_string_value(plan)
                                    ? json_string_value(plan)
                                    : "?");
        }
        const char *cells[4] = {
            cli_jstr(def, "name"), cli_jstr(def, "version"),
            cli_buf_str(&plans),
            time_cell(created, sizeof(created), def, "created_at")};
        cli_table_row(tb, cells, (size_t)-1, NULL);
        cli_buf_free(&plans);
        definition_meta(&meta, def);
    }
    cli_table_print(tb, f, t);
    cli_table_free(tb);
    fputs(cli_buf_str(&meta), f);
    cli_buf_free(&meta);
}

void cli_render_history(FILE *f, const json_t *doc, const cli_term *t,
                        int64_t now, int limit)
{
    static const char *const headers[] = {"RUN",      "PLAN",    "VERSION",
                                          "STATUS",   "TRIGGER", "STARTED",
                                          "DURATION", "MESSAGE"};
    const json_t *runs = json_object_get(doc, "runs");
    size_t i, n = json_array_size(runs);
    const json_t *run;
    int64_t last = 0;

    if (n == 0) {
        fputs("no runs\n", f);
        return;
    }
    cli_table *tb = cli_table_new(headers, 8);
    json_array_foreach(runs, i, run)
    {
        const char *status = cli_jstr(run, "status");
        const char *msg = cli_jstr(run, "message");
        const char *trigger = cli_jstr(run, "trigger");
        const char *reason = cli_jstr(run, "reason");
        char id[32], started[32], dur[32];
        int64_t ms, start, end;
        cli_buf why = CLI_BUF_INIT;

        /* The trigger with its reason: "manual (disk swap)".  A retry
         * says which run it retries from retry_of, as the status tree
         * does: its reason was written with the id the run had then,
         * which an import renumbers (and gc may have removed that run:
         * then just "retry"). */
        int64_t of;
        int retry = trigger && !strcmp(trigger, "retry");
        if (retry && cli_jint(&of, run, "retry_of"))
            cli_buf_addf(&why, "retry of run %lld", (long long)of);
        else
            cli_buf_add(&why, trigger ? trigger : "-");
        if (reason && reason[0] && !retry)
            cli_buf_addf(&why, " (%s)", reason);
        cli_jint(&last, run, "id");
        snprintf(id, sizeof(id), "%lld", (long long)last);
        const char *cells[8] = {
            id,
            cli_jstr(run, "plan"),
            cli_jstr(run, "definition_version"),
            status,
            cli_buf_str(&why),
            time_cell(started, sizeof(started), run, "started_at"),
            NULL,
            msg ? msg : ""};
        /* As in the status tree: the library's duration, else a started
         * run measured to its end or to now. */
        int has = cli_jint(&ms, run, "duration_ms");
        if (!has && cli_jtime(&start, run, "started_at")) {
            ms = (cli_jtime(&end, run, "finished_at") ? end : now) - start;
            has = 1;
        }
        if (has) {
            cli_duration_format(dur, sizeof(dur), ms);
            cells[6] = dur;
        }
        cli_table_row(tb, cells, 3, cli_status_sgr(status));
        cli_buf_free(&why);
    }
    cli_table_print(tb, f, t);
    cli_table_free(tb);
    /* A full page means there may be older runs: say how to get them. */
    if ((int)n >= (limit > 0 ? limit : 20))
        fprintf(f, "(more: --before %lld)\n", (long long)last);
}

size_t cli_render_validate(FILE *f, const json_t *doc, const char *origin)
{
    const json_t *errors = json_object_get(doc, "errors");
    size_t i;
    const json_t *e;
    json_array_foreach(errors, i, e)
    {
        const char *path = cli_jstr(e, "path");
        const char *type = cli_jstr(e, "type");
        const char *msg = cli_jstr(e, "message");
        const char *hint = cli_jstr(e, "hint");
        cli_buf line = CLI_BUF_INIT;

        /* A syntax error's message already says file:line:col. */
        int syntax = type && strcmp(type, "Syntax error") == 0;
        int64_t at;
        if (!syntax && cli_jint(&at, e, "line")) {
            cli_buf_add_clean(&line, origin);
            cli_buf_addf(&line, ":%" PRId64 ": ", at);
        }
        if (!syntax && path && path[0]) {
            cli_buf_add_clean(&line, path);
            cli_buf_add(&line, ": ");
        }
        if (!syntax && type) {
            cli_buf_add_clean(&line, type);
            if (msg && msg[0])
                cli_buf_add(&line, ": ");
        }
        if (msg)
            cli_buf_add_clean(&line, msg);
        if (hint && hint[0]) {
            cli_buf_add(&line, " (");
            cli_buf_add_clean(&line, hint);
            cli_buf_add(&line, ")");
        }
        fprintf(f, "%s\n", cli_buf_str(&line));
        cli_buf_free(&line);
    }
    return json_array_size(errors);
}
