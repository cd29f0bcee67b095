/*
 * output.c - what stdout can take (terminal, colour, Unicode, width), lines
 * cut to the terminal width with colour, and printing (as JSON, or as YAML
 * with -o yaml) and reading the JSON documents the library returns.
 */
#include "cli/cli.h"

#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/yaml/yaml.h"

/* Whether the user's locale encodes text as UTF-8, so box drawing shows as
 * lines and not as mojibake.  The CLI otherwise runs in the C locale. */
static int utf8_locale(void)
{
    int utf8 = 0;
    if (setlocale(LC_CTYPE, "")) {
        const char *cs = nl_langinfo(CODESET);
        utf8 = cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
    }
    setlocale(LC_CTYPE, "C");
    return utf8;
}

void cli_term_detect(cli_term *t, int no_color)
{
    memset(t, 0, sizeof(*t));
    t->tty = isatty(STDOUT_FILENO);
    if (!t->tty)
        return;
    const char *nc = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    int plain = no_color || (nc && nc[0]) || (term && !strcmp(term, "dumb"));
    t->color = !plain;
    /* Box drawing goes with colour: whoever turns colour off is usually
     * capturing a terminal for text, and ASCII survives that better. */
    t->unicode = !plain && utf8_locale();

    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        t->width = ws.ws_col;
    } else {
        const char *cols = getenv("COLUMNS");
        t->width = cols ? atoi(cols) : 0;
        if (t->width < 0)
            t->width = 0;
    }
}

const char *cli_status_sgr(const char *status)
{
    static const struct {
        const char *status, *sgr;
    } map[] = {
        {"COMPLETE", "32"}, {"FATAL_ERROR", "31"}, {"ERROR", "33"},
        {"PAUSED", "33"},   {"IN_PROGRESS", "36"}, {"CANCELLED", "2"},
        {"NEVER_RUN", "2"},
    };
    for (size_t i = 0; status && i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(map[i].status, status) == 0)
            return map[i].sgr;
    return NULL;
}

void cli_line_add_color(cli_line *l, const char *s, const char *sgr)
{
    size_t start = l->text.len;
    cli_buf_add(&l->text, s);
    if (sgr && l->ncolors < CLI_LINE_MAX_COLORS) {
        l->colors[l->ncolors].start = start;
        l->colors[l->ncolors].end = l->text.len;
        l->colors[l->ncolors].sgr = sgr;
        l->ncolors++;
    }
}

/* The byte offset where the text reaches width columns. */
static size_t cut_at(const char *s, size_t len, size_t width)
{
    size_t w = 0, i;
    for (i = 0; i < len; i++) {
        if (((unsigned char)s[i] & 0xc0) == 0x80)
            continue;
        if (w == width)
            break;
        w++;
    }
    return i;
}

void cli_line_emit(cli_line *l, FILE *f, const cli_term *t)
{
    const char *s = cli_buf_str(&l->text);
    size_t len = l->text.len, cut = len;
    const char *ellipsis = NULL;

    if (t->width > 0 && cli_text_width(s, len) > (size_t)t->width) {
        ellipsis = t->unicode ? "\u2026" : "...";
        size_t ew = t->unicode ? 1 : 3;
        size_t budget = (size_t)t->width > ew ? (size_t)t->width - ew : 0;
        cut = cut_at(s, len, budget);
    }

    size_t pos = 0;
    for (size_t i = 0; i < l->ncolors; i++) {
        size_t start = l->colors[i].start, end = l->colors[i].end;
        if (start >= cut)
            break;
        if (end > cut)
            end = cut;
        fwrite(s + pos, 1, start - pos, f);
        if (t->color)
            fprintf(f, "\033[%sm", l->colors[i].sgr);
        fwrite(s + start, 1, end - start, f);
        if (t->color)
            fputs("\033[0m", f);
        pos = end;
    }
    fwrite(s + pos, 1, cut - pos, f);
    if (ellipsis)
        fputs(ellipsis, f);
    fputc('\n', f);

    l->text.len = 0;
    if (l->text.s)
        l->text.s[0] = '\0';
    l->ncolors = 0;
}

void cli_line_free(cli_line *l)
{
    cli_buf_free(&l->text);
    l->ncolors = 0;
}

json_t *cli_json_parse(const char *text)
{
    json_error_t err;
    json_t *doc = json_loads(text, 0, &err);
    if (!doc)
        cli_errorf("internal error: the library returned invalid JSON "
                   "(%d:%d: %s)",
                   err.line, err.column, err.text);
    return doc;
}

/* -o yaml: documents are printed as YAML, the second and later of one
 * command (status --watch) each after a "---" line, so that the output
 * reads as a stream of YAML documents. */
static int print_yaml;
static unsigned long printed;

void cli_output_yaml(void)
{
    print_yaml = 1;
}

int cli_json_print_obj(json_t *doc)
{
    int rc;

    if (!doc)
        cli_oom();
    if (print_yaml) {
        rc = printed++ && fputs("---\n", stdout) == EOF ? -1 : 0;
        if (cli_yaml_dump(doc, stdout) < 0)
            rc = -1;
    } else {
        rc = json_dumpf(doc, stdout, JSON_INDENT(2)) == 0 ? 0 : -1;
        fputc('\n', stdout);
    }
    json_decref(doc);
    if (rc < 0) {
        cli_errorf("cannot write the output");
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

int cli_json_print(const char *text)
{
    json_t *doc = cli_json_parse(text);
    if (!doc)
        return CLI_EXIT_ERROR;
    return cli_json_print_obj(doc);
}

const char *cli_jstr(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

int cli_jint(int64_t *out, const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        return 0;
    *out = (int64_t)json_integer_value(v);
    return 1;
}

int cli_jtime(int64_t *out, const json_t *obj, const char *key)
{
    const char *s = cli_jstr(obj, key);
    return s && cli_time_parse(out, s) == 0;
}
