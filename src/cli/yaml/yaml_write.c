/*
 * yaml_write.c - a JSON document written as YAML 1.2 in block style
 * (-o yaml; see yaml.h).
 *
 * The text is written by hand rather than through libyaml's emitter: what
 * needs deciding is which strings may go unquoted, and that is decided
 * here for every reader a user may have, not only for YAML 1.2's core
 * schema: a string that a YAML 1.1 reader would take for a boolean (yes,
 * off), a number (0755, 1_000, 12:30) or a time (2026-11-21) is quoted
 * too, as is anything starting with a digit.  A quoted string uses JSON's
 * escapes, which YAML's double quotes share, plus \u escapes for the
 * characters YAML 1.1 reads as line breaks.
 */
#include "cli/yaml/yaml.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct writer {
    FILE *f;
    int failed;
} writer;

static void put(writer *w, const char *s, size_t n)
{
    if (n && fwrite(s, 1, n, w->f) != n)
        w->failed = 1;
}

static void puts_(writer *w, const char *s)
{
    put(w, s, strlen(s));
}

static void indent(writer *w, int n)
{
    while (n-- > 0)
        put(w, " ", 1);
}

/* Whether the string s (n bytes) reads back as this same string when
 * written plain, for any YAML reader. */
static int plain_ok(const char *s, size_t n)
{
    static const char *const words[] = {
        "null", "~", "true", "false", "yes", "no", "on", "off", "y", "n", NULL};
    size_t i;

    if (n == 0 || strlen(s) != n)
        return 0;
    for (i = 0; words[i]; i++)
        if (strcasecmp(s, words[i]) == 0)
            return 0;
    /* A letter, '_' or '/' first: no indicator, no number, no time, no
     * .inf (whose '.' is not allowed first either). */
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
          s[0] == '_' || s[0] == '/'))
        return 0;
    if (s[n - 1] == ' ' || s[n - 1] == ':')
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9'))
            continue;
        if (c == ':' && s[i + 1] == ' ')
            return 0; /* a key */
        if (!strchr(" _-./()+=,;@:$", c))
            return 0; /* '#', quotes, brackets, controls, non-ASCII */
    }
    return 1;
}

static void quoted(writer *w, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, from = 0;

    put(w, "\"", 1);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[7];
        size_t skip = 1;

        if (c == '"')
            esc = "\\\"";
        else if (c == '\\')
            esc = "\\\\";
        else if (c == '\n')
            esc = "\\n";
        else if (c == '\t')
            esc = "\\t";
        else if (c == '\r')
            esc = "\\r";
        else if (c < 0x20 || c == 0x7f) {
            memcpy(u, "\\u00", 4);
            u[4] = hex[c >> 4];
            u[5] = hex[c & 15];
            u[6] = '\0';
            esc = u;
        } else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] == 0x85) {
            esc = "\\u0085"; /* NEL */
            skip = 2;
        } else if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                   ((unsigned char)s[i + 2] == 0xa8 ||
                    (unsigned char)s[i + 2] == 0xa9)) {
            esc = (unsigned char)s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029";
            skip = 3;
        } else if (c == 0xef && i + 2 < n && (unsigned char)s[i + 1] == 0xbb &&
                   (unsigned char)s[i + 2] == 0xbf) {
            esc = "\\ufeff"; /* a byte order mark */
            skip = 3;
        }
        if (!esc)
            continue;
        put(w, s + from, i - from);
        puts_(w, esc);
        i += skip - 1;
        from = i + 1;
    }
    put(w, s + from, n - from);
    put(w, "\"", 1);
}

static void string(writer *w, const json_t *v)
{
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);

    if (plain_ok(s, n))
        put(w, s, n);
    else
        quoted(w, s, n);
}

static void key(writer *w, const char *k)
{
    if (plain_ok(k, strlen(k)))
        puts_(w, k);
    else
        quoted(w, k, strlen(k));
    put(w, ":", 1);
}

/* A scalar, or an empty mapping or sequence, as one token. */
static void scalar(writer *w, const json_t *v)
{
    char *text;

    switch (json_typeof(v)) {
    case JSON_STRING:
        string(w, v);
        return;
    case JSON_OBJECT:
        puts_(w, "{}");
        return;
    case JSON_ARRAY:
        puts_(w, "[]");
        return;
    default:
        /* null, booleans and numbers as JSON writes them: each is the
         * same value in YAML 1.2 (a real always has its '.' or 'e'). */
        text = json_dumps(v, JSON_ENCODE_ANY);
        if (!text) {
            w->failed = 1;
            return;
        }
        puts_(w, text);
        free(text);
    }
}

static int is_block(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v) > 0) ||
           (json_is_array(v) && json_array_size(v) > 0);
}

/*
 * The value v at column col, starting where the cursor is (the column
 * col, or after "- " of a sequence item at col - 2: first says the line
 * is begun), and ending with a newline.
 */
static void value(writer *w, const json_t *v, int col, int first)
{
    size_t i;

    if (!is_block(v)) {
        scalar(w, v);
        put(w, "\n", 1);
        return;
    }
    if (json_is_object(v)) {
        const char *k;
        const json_t *m;
        int n = 0;

        json_object_foreach((json_t *)v, k, m)
        {
            if (n++ || !first)
                indent(w, col);
            key(w, k);
            if (is_block(m)) {
                put(w, "\n", 1);
                value(w, m, col + 2, 0);
            } else {
                put(w, " ", 1);
                value(w, m, col, 1);
            }
        }
        return;
    }
    for (i = 0; i < json_array_size(v); i++) {
        if (i || !first)
            indent(w, col);
        put(w, "- ", 2);
        value(w, json_array_get(v, i), col + 2, 1);
    }
}

int cli_yaml_dump(const json_t *v, FILE *f)
{
    writer w = {f, 0};

    value(&w, v, 0, 0);
    return w.failed || ferror(f) ? -1 : 0;
}
