/*
 * markup.c - the written parts of the man pages (src/cli/doc/man/NAME.md), a
 * small subset of Markdown, turned into roff when `planctl __man` prints
 * them, so the reference reads as the README did and needs no tool to
 * build.  The markup is described in src/cli/doc/man/README.
 *
 * Blocks, one after another, separated by blank lines:
 *   # TITLE               .SH TITLE
 *   ## Title              .SS Title
 *   - item (continued     a bulleted paragraph; an indented paragraph
 *     indented)           after it continues the item
 *   ```  ...  ```         lines as they are (no fill), indented
 *   | a | b | c |         a table: each row a tagged paragraph, a the
 *                         tag, b and c its text; a header row (the one
 *                         above |---|) is left out
 *   other lines           a paragraph
 * Inline: `code` and **bold** in bold, *word* in italics, [text](link)
 * as its text.
 */
#include "cli/cli.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Writes n bytes at s as roff text. */
static void plain(FILE *f, const char *s, size_t n)
{
    char *copy;

    if (n == 0)
        return;
    copy = strndup(s, n);
    if (!copy)
        cli_oom();
    cli_roff(f, copy, 0);
    free(copy);
}

/* Where the span opened by the n-character mark at s ends (the closing
 * mark), or NULL.  An emphasis mark opens only before a word and closes
 * only after one, so "a * b" and "2*3" stay as they are. */
static const char *closing(const char *s, const char *end, const char *mark,
                           size_t n)
{
    const char *c;

    if (s + n >= end)
        return NULL;
    if (mark[0] == '*' && (s[n] == ' ' || s[n] == '*'))
        return NULL;
    for (c = s + n; c + n <= end; c++) {
        if (memcmp(c, mark, n) != 0)
            continue;
        if (mark[0] == '`')
            return c;
        if (c[-1] != ' ' && (c + n == end || !isalnum((unsigned char)c[n])))
            return c;
    }
    return NULL;
}

/* Writes n bytes of inline markup at s. */
static void inline_text(FILE *f, const char *s, size_t n)
{
    const char *end = s + n, *run = s;

    for (const char *p = s; p < end;) {
        const char *close = NULL;
        size_t m = 0;

        if (*p == '`') {
            m = 1;
            close = closing(p, end, "`", 1);
        } else if (*p == '*' && p + 1 < end && p[1] == '*') {
            m = 2;
            close = closing(p, end, "**", 2);
        } else if (*p == '*' && (p == s || !isalnum((unsigned char)p[-1]))) {
            m = 1;
            close = closing(p, end, "*", 1);
        } else if (*p == '[') {
            const char *rb = memchr(p, ']', (size_t)(end - p));

            if (rb && rb + 1 < end && rb[1] == '(' &&
                memchr(rb, ')', (size_t)(end - rb))) {
                plain(f, run, (size_t)(p - run));
                inline_text(f, p + 1, (size_t)(rb - p - 1));
                p = (const char *)memchr(rb, ')', (size_t)(end - rb)) + 1;
                run = p;
                continue;
            }
        }
        if (!close) {
            p++;
            continue;
        }
        plain(f, run, (size_t)(p - run));
        fputs(m == 1 && *p == '*' ? "\\fI" : "\\fB", f);
        if (*p == '`') {
            /* A name is not hyphenated where the line breaks. */
            fputs("\\%", f);
            plain(f, p + 1, (size_t)(close - p - 1));
        } else {
            inline_text(f, p + m, (size_t)(close - p - m));
        }
        fputs("\\fR", f);
        p = close + m;
        run = p;
    }
    plain(f, run, (size_t)(end - run));
}

/* The line at s: its length without the newline, and where the next one
 * starts. */
static size_t line_len(const char *s, const char **next)
{
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);

    *next = nl ? nl + 1 : s + n;
    return n;
}

static size_t indent_of(const char *s, size_t n)
{
    size_t i = 0;

    while (i < n && s[i] == ' ')
        i++;
    return i;
}

static int is_blank(const char *s, size_t n)
{
    return indent_of(s, n) == n;
}

static int is_fence(const char *s, size_t n)
{
    size_t i = indent_of(s, n);

    return n - i >= 3 && memcmp(s + i, "```", 3) == 0;
}

static int is_item(const char *s, size_t n)
{
    return n >= 2 && s[0] == '-' && s[1] == ' ';
}

/* A paragraph's text: the lines from s, joined by single spaces, up to a
 * blank line, a fence, a heading, a table or another item.  Returns where
 * it stopped. */
static const char *paragraph(FILE *f, const char *s)
{
    char *text = NULL;
    size_t len = 0;
    int first = 1;

    for (;;) {
        const char *next;
        size_t n = line_len(s, &next), i;

        if (!*s || is_blank(s, n) || is_fence(s, n) ||
            (!first && (s[0] == '#' || s[0] == '|' || is_item(s, n))))
            break;
        i = indent_of(s, n);
        if (first && is_item(s, n))
            i = 2;
        text = realloc(text, len + (n - i) + 2);
        if (!text)
            cli_oom();
        if (len)
            text[len++] = ' ';
        memcpy(text + len, s + i, n - i);
        len += n - i;
        first = 0;
        s = next;
    }
    inline_text(f, text ? text : "", len);
    fputc('\n', f);
    free(text);
    return s;
}

/* The cells of a table row at s (n bytes), each trimmed. */
static void table_row(FILE *f, const char *s, size_t n)
{
    const char *end = s + n, *cell = s + 1;
    int col = 0;

    while (cell < end) {
        const char *bar = memchr(cell, '|', (size_t)(end - cell));
        const char *a = cell, *b = bar ? bar : end;

        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        if (!bar && a == b)
            break;
        if (col == 0)
            fputs(".TP\n", f);
        else if (col > 1)
            fputs(" \\(em ", f);
        inline_text(f, a, (size_t)(b - a));
        if (col == 0)
            fputc('\n', f);
        col++;
        if (!bar)
            break;
        cell = bar + 1;
    }
    if (col > 0)
        fputc('\n', f);
}

static int is_rule(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("|-: ", s[i]))
            return 0;
    return n > 0;
}

static const char *table(FILE *f, const char *s)
{
    for (;;) {
        const char *next, *after;
        size_t n = line_len(s, &next);

        if (!*s || s[0] != '|')
            return s;
        /* A header row: the next line is the rule under it. */
        if (*next && is_rule(next, line_len(next, &after))) {
            s = after;
            continue;
        }
        table_row(f, s, n);
        s = next;
    }
}

static const char *verbatim(FILE *f, const char *s, int in_item)
{
    const char *next;
    size_t n = line_len(s, &next);
    size_t base = indent_of(s, n);

    fputs(in_item ? ".IP \"\" 4\n.nf\n" : ".PP\n.RS 4\n.nf\n", f);
    for (s = next; *s; s = next) {
        size_t i;

        n = line_len(s, &next);
        if (is_fence(s, n))
            break;
        i = indent_of(s, n) < base ? indent_of(s, n) : base;
        plain(f, s + i, n - i);
        fputc('\n', f);
    }
    fputs(in_item ? ".fi\n" : ".fi\n.RE\n", f);
    return next;
}

void cli_markup_roff(FILE *f, const char *src)
{
    const char *s = src;
    int in_item = 0;

    while (*s) {
        const char *next;
        size_t n = line_len(s, &next);

        if (is_blank(s, n)) {
            s = next;
        } else if (n > 3 && memcmp(s, "## ", 3) == 0) {
            fputs(".SS ", f);
            plain(f, s + 3, n - 3);
            fputc('\n', f);
            in_item = 0;
            s = next;
        } else if (n > 2 && memcmp(s, "# ", 2) == 0) {
            fputs(".SH ", f);
            plain(f, s + 2, n - 2);
            fputc('\n', f);
            in_item = 0;
            s = next;
        } else if (is_fence(s, n)) {
            s = verbatim(f, s, in_item && s[0] == ' ');
        } else if (s[0] == '|') {
            s = table(f, s);
            in_item = 0;
        } else if (is_item(s, n)) {
            fputs(".IP \\(bu 2\n", f);
            s = paragraph(f, s);
            in_item = 1;
        } else if (in_item && s[0] == ' ') {
            fputs(".IP \"\" 2\n", f);
            s = paragraph(f, s);
        } else {
            fputs(".PP\n", f);
            s = paragraph(f, s);
            in_item = 0;
        }
    }
}
