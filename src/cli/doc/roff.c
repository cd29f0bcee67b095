/*
 * roff.c - text written as roff for the man pages: the one escaping the
 * generated pages (doc.c) and the written ones (markup.c) share.
 */
#include "cli/cli.h"

#include <ctype.h>

/* Whether the word starting at s (up to a space, or up to a space outside
 * brackets in a usage line) holds a hyphen. */
static int hyphen_ahead(const char *s, int usage)
{
    for (int depth = 0; *s && *s != '\n' && (*s != ' ' || depth > 0); s++) {
        if (*s == '-')
            return 1;
        if (usage && *s == '[')
            depth++;
        else if (usage && *s == ']' && depth > 0)
            depth--;
    }
    return 0;
}

/*
 * Writes s as roff text: backslashes and hyphens escaped (a hyphen in an
 * option must stay an ASCII minus when copied from the page), and a line
 * that would start with a control character ('.' or '\'') guarded by \&.
 * A word holding a hyphen (a flag) is never hyphenated.  An empty
 * line becomes a paragraph break.  usage: s is a usage line or a
 * metavariable, whose runs of capitals (NAME, K=V, D[@V]) are set in
 * italics and whose optional parts ("[--timeout D]") are not broken across
 * lines.
 */
void cli_roff(FILE *f, const char *s, int usage)
{
    int bol = 1, italic = 0, depth = 0;

    for (const char *start = s; *s; s++) {
        unsigned char c = (unsigned char)*s;
        int word_start = s == start || s[-1] == '\n' ||
                         (s[-1] == ' ' && (!usage || depth == 0));
        int cap = usage && (isupper(c) || (italic && (c == '_' || isdigit(c))));

        if (italic && !cap) {
            fputs("\\fR", f);
            italic = 0;
        }
        if (c == '\n') {
            fputs(bol ? ".PP\n" : "\n", f);
            bol = 1;
            continue;
        }
        if (bol && (c == '.' || c == '\''))
            fputs("\\&", f);
        bol = 0;
        if (word_start && c != ' ' && hyphen_ahead(s, usage))
            fputs("\\%", f);
        if (cap && !italic) {
            fputs("\\fI", f);
            italic = 1;
        }
        if (usage && c == '[')
            depth++;
        else if (usage && c == ']' && depth > 0)
            depth--;
        if (c == '\\')
            fputs("\\e", f);
        else if (c == '-')
            fputs("\\-", f);
        else if (c == ' ' && depth > 0)
            fputs("\\ ", f);
        else
            fputc(c, f);
    }
    if (italic)
        fputs("\\fR", f);
}
