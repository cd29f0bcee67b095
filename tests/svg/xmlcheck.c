/* xmlcheck.c - the XML 1.0 well-formedness checker of xmlcheck.h. */
#include "xmlcheck.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 256
#define MAX_ATTRS 256

typedef struct parser {
    const unsigned char *s;
    size_t len, pos;
    xml_report *out;
    /* The open elements: where each name starts and its length. */
    size_t stack[MAX_DEPTH], stack_len[MAX_DEPTH];
    size_t depth;
} parser;

/* Records the first problem, at byte offset at; returns -1. */
static int fail(parser *p, size_t at, const char *fmt, ...)
{
    va_list ap;
    size_t i;

    p->out->line = 1;
    p->out->col = 1;
    for (i = 0; i < at && i < p->len; i++) {
        if (p->s[i] == '\n') {
            p->out->line++;
            p->out->col = 1;
        } else {
            p->out->col++;
        }
    }
    va_start(ap, fmt);
    vsnprintf(p->out->error, sizeof p->out->error, fmt, ap);
    va_end(ap);
    return -1;
}

static int allowed_char(unsigned long c)
{
    return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
           (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

/* Every byte is part of a UTF-8 sequence of a character XML allows. */
static int check_chars(parser *p)
{
    size_t i = 0, n, k;

    while (i < p->len) {
        unsigned char b = p->s[i];
        unsigned long c;

        if (b < 0x80)
            n = 1, c = b;
        else if (b >= 0xc2 && b <= 0xdf)
            n = 2, c = b & 0x1f;
        else if (b >= 0xe0 && b <= 0xef)
            n = 3, c = b & 0x0f;
        else if (b >= 0xf0 && b <= 0xf4)
            n = 4, c = b & 0x07;
        else
            return fail(p, i, "byte 0x%02x is not UTF-8", b);
        if (i + n > p->len)
            return fail(p, i, "truncated UTF-8 sequence");
        for (k = 1; k < n; k++) {
            if ((p->s[i + k] & 0xc0) != 0x80)
                return fail(p, i, "invalid UTF-8 sequence");
            c = (c << 6) | (p->s[i + k] & 0x3f);
        }
        if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000))
            return fail(p, i, "overlong UTF-8 sequence");
        if (!allowed_char(c))
            return fail(p, i, "character U+%04lX is not allowed in XML", c);
        i += n;
    }
    return 0;
}

static int at(const parser *p, const char *lit)
{
    size_t n = strlen(lit);

    return p->pos + n <= p->len && memcmp(p->s + p->pos, lit, n) == 0;
}

static int is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_space(parser *p)
{
    while (p->pos < p->len && is_space(p->s[p->pos]))
        p->pos++;
}

/* Non-ASCII bytes are accepted in names: the checker is for our output,
 * whose names are ASCII, and a browser accepts most letters there. */
static int name_start(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
           c == ':' || c >= 0x80;
}

static int name_char(int c)
{
    return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* Reads a name at pos; *start and *n receive it. */
static int name(parser *p, size_t *start, size_t *n, const char *what)
{
    *start = p->pos;
    if (p->pos >= p->len || !name_start(p->s[p->pos]))
        return fail(p, p->pos, "expected %s", what);
    while (p->pos < p->len && name_char(p->s[p->pos]))
        p->pos++;
    *n = p->pos - *start;
    return 0;
}

/* An entity or character reference; pos is on the '&'. */
static int reference(parser *p)
{
    static const char *const known[] = {"amp", "lt", "gt", "quot", "apos"};
    size_t start = p->pos, i, n;

    p->pos++;
    if (p->pos < p->len && p->s[p->pos] == '#') {
        unsigned long c = 0;
        int hex = 0, digits = 0;

        p->pos++;
        if (p->pos < p->len && p->s[p->pos] == 'x')
            hex = 1, p->pos++;
        for (; p->pos < p->len; p->pos++, digits++) {
            int d = p->s[p->pos];

            if (d >= '0' && d <= '9')
                d -= '0';
            else if (hex && d >= 'a' && d <= 'f')
                d -= 'a' - 10;
            else if (hex && d >= 'A' && d <= 'F')
                d -= 'A' - 10;
            else
                break;
            c = c * (hex ? 16 : 10) + (unsigned long)d;
            if (c > 0x10ffff)
                c = 0x110000;
        }
        if (!digits || p->pos >= p->len || p->s[p->pos] != ';')
            return fail(p, start, "malformed character reference");
        if (!allowed_char(c))
            return fail(p, start,
                        "character reference to a character XML "
                        "does not allow");
        p->pos++;
        return 0;
    }
    if (name(p, &i, &n, "an entity name after '&'") < 0)
        return -1;
    if (p->pos >= p->len || p->s[p->pos] != ';')
        return fail(p, start, "entity reference without ';'");
    p->pos++;
    for (i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strlen(known[i]) == n && memcmp(p->s + start + 1, known[i], n) == 0)
            return 0;
    return fail(p, start, "unknown entity &%.*s;", (int)n, p->s + start + 1);
}

/* Skips past the first occurrence of end; fails with what when absent. */
static int until(parser *p, const char *end, size_t start, const char *what)
{
    size_t n = strlen(end);

    for (; p->pos + n <= p->len; p->pos++)
        if (memcmp(p->s + p->pos, end, n) == 0) {
            p->pos += n;
            return 0;
        }
    return fail(p, start, "%s is not closed", what);
}

static int comment(parser *p)
{
    size_t start = p->pos;

    for (p->pos += 4; p->pos + 1 < p->len; p->pos++)
        if (p->s[p->pos] == '-' && p->s[p->pos + 1] == '-') {
            if (p->pos + 2 < p->len && p->s[p->pos + 2] == '>') {
                p->pos += 3;
                return 0;
            }
            return fail(p, p->pos, "\"--\" inside a comment");
        }
    return fail(p, start, "comment is not closed");
}

static int pi(parser *p)
{
    size_t start = p->pos, ts, tn;

    p->pos += 2;
    if (name(p, &ts, &tn, "a processing instruction's target") < 0)
        return -1;
    if (tn == 3 && (p->s[ts] | 0x20) == 'x' && (p->s[ts + 1] | 0x20) == 'm' &&
        (p->s[ts + 2] | 0x20) == 'l')
        return fail(p, start, "XML declaration not at the very start");
    return until(p, "?>", start, "processing instruction");
}

/* Comments, processing instructions and white space, outside the root. */
static int misc(parser *p, const char *where)
{
    for (;;) {
        skip_space(p);
        if (p->pos >= p->len)
            return 0;
        if (at(p, "<!--")) {
            if (comment(p) < 0)
                return -1;
        } else if (at(p, "<?")) {
            if (pi(p) < 0)
                return -1;
        } else if (at(p, "<!DOCTYPE")) {
            return fail(p, p->pos,
                        "document type declarations are not "
                        "supported");
        } else if (p->s[p->pos] == '<') {
            return 0;
        } else {
            return fail(p, p->pos, "text %s the root element", where);
        }
    }
}

/* A start tag at pos; *empty tells whether it was <x/>. */
static int start_tag(parser *p, int *empty)
{
    size_t ns, nn, attr[MAX_ATTRS][2], nattr = 0, i;

    p->pos++;
    if (name(p, &ns, &nn, "an element name after '<'") < 0)
        return -1;
    for (;;) {
        size_t before = p->pos, as, an;
        unsigned char q;

        skip_space(p);
        if (p->pos >= p->len)
            return fail(p, ns - 1, "tag is not closed");
        if (at(p, "/>")) {
            p->pos += 2;
            *empty = 1;
            break;
        }
        if (p->s[p->pos] == '>') {
            p->pos++;
            *empty = 0;
            break;
        }
        if (p->pos == before)
            return fail(p, p->pos,
                        "expected white space before an "
                        "attribute");
        if (name(p, &as, &an, "an attribute name") < 0)
            return -1;
        for (i = 0; i < nattr; i++)
            if (attr[i][1] == an &&
                memcmp(p->s + attr[i][0], p->s + as, an) == 0)
                return fail(p, as, "attribute %.*s given twice", (int)an,
                            p->s + as);
        if (nattr == MAX_ATTRS)
            return fail(p, as, "more than %d attributes", MAX_ATTRS);
        attr[nattr][0] = as;
        attr[nattr++][1] = an;
        skip_space(p);
        if (p->pos >= p->len || p->s[p->pos] != '=')
            return fail(p, p->pos, "expected '=' after attribute %.*s", (int)an,
                        p->s + as);
        p->pos++;
        skip_space(p);
        if (p->pos >= p->len || (p->s[p->pos] != '"' && p->s[p->pos] != '\''))
            return fail(p, p->pos, "value of attribute %.*s is not quoted",
                        (int)an, p->s + as);
        q = p->s[p->pos++];
        for (;;) {
            if (p->pos >= p->len)
                return fail(p, as, "value of attribute %.*s is not closed",
                            (int)an, p->s + as);
            if (p->s[p->pos] == q) {
                p->pos++;
                break;
            }
            if (p->s[p->pos] == '<')
                return fail(p, p->pos, "'<' in the value of attribute %.*s",
                            (int)an, p->s + as);
            if (p->s[p->pos] == '&') {
                if (reference(p) < 0)
                    return -1;
            } else {
                p->pos++;
            }
        }
    }
    p->out->elements++;
    if (p->out->elements == 1)
        snprintf(p->out->root, sizeof p->out->root, "%.*s", (int)nn, p->s + ns);
    if (!*empty) {
        if (p->depth == MAX_DEPTH)
            return fail(p, ns, "nested deeper than %d elements", MAX_DEPTH);
        p->stack[p->depth] = ns;
        p->stack_len[p->depth++] = nn;
        if (p->depth > p->out->depth)
            p->out->depth = p->depth;
    } else if (p->out->depth == 0) {
        p->out->depth = 1;
    }
    return 0;
}

static int end_tag(parser *p)
{
    size_t start = p->pos, ns, nn, os, on;

    p->pos += 2;
    if (name(p, &ns, &nn, "an element name after '</'") < 0)
        return -1;
    skip_space(p);
    if (p->pos >= p->len || p->s[p->pos] != '>')
        return fail(p, start, "end tag is not closed");
    p->pos++;
    os = p->stack[p->depth - 1];
    on = p->stack_len[p->depth - 1];
    if (on != nn || memcmp(p->s + os, p->s + ns, nn) != 0)
        return fail(p, start, "</%.*s> closes <%.*s>", (int)nn, p->s + ns,
                    (int)on, p->s + os);
    p->depth--;
    return 0;
}

/* The root element and everything in it. */
static int element(parser *p)
{
    int empty;

    if (start_tag(p, &empty) < 0)
        return -1;
    while (p->depth > 0) {
        if (p->pos >= p->len) {
            size_t os = p->stack[p->depth - 1], on = p->stack_len[p->depth - 1];

            return fail(p, os - 1, "<%.*s> is not closed", (int)on, p->s + os);
        }
        if (at(p, "</")) {
            if (end_tag(p) < 0)
                return -1;
        } else if (at(p, "<!--")) {
            if (comment(p) < 0)
                return -1;
        } else if (at(p, "<![CDATA[")) {
            size_t start = p->pos;

            p->pos += 9;
            if (until(p, "]]>", start, "CDATA section") < 0)
                return -1;
        } else if (at(p, "<?")) {
            if (pi(p) < 0)
                return -1;
        } else if (at(p, "<!")) {
            return fail(p, p->pos, "unexpected markup declaration");
        } else if (p->s[p->pos] == '<') {
            if (start_tag(p, &empty) < 0)
                return -1;
        } else if (p->s[p->pos] == '&') {
            if (reference(p) < 0)
                return -1;
        } else if (at(p, "]]>")) {
            return fail(p, p->pos, "\"]]>\" in text");
        } else {
            p->pos++;
        }
    }
    return 0;
}

static int contains(const unsigned char *s, size_t n, const char *lit)
{
    size_t k = strlen(lit), i;

    for (i = 0; i + k <= n; i++)
        if (memcmp(s + i, lit, k) == 0)
            return 1;
    return 0;
}

int xml_check(const char *text, size_t len, xml_report *out)
{
    parser p;

    memset(out, 0, sizeof *out);
    memset(&p, 0, sizeof p);
    p.s = (const unsigned char *)text;
    p.len = len;
    p.out = out;
    if (check_chars(&p) < 0)
        return -1;
    if (at(&p, "\xef\xbb\xbf"))
        p.pos += 3;
    if (at(&p, "<?xml") && p.pos + 5 < len && is_space(p.s[p.pos + 5])) {
        size_t start = p.pos;

        if (until(&p, "?>", start, "XML declaration") < 0)
            return -1;
        if (!contains(p.s + start, p.pos - start, "version="))
            return fail(&p, start, "XML declaration without a version");
    }
    if (misc(&p, "before") < 0)
        return -1;
    if (p.pos >= len)
        return fail(&p, p.pos, "no root element");
    if (element(&p) < 0 || misc(&p, "after") < 0)
        return -1;
    if (p.pos < len)
        return fail(&p, p.pos, "a second root element");
    return 0;
}
