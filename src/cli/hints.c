/*
 * hints.c - the CLI's advice after a library message.  The library says
 * what is wrong, naming the thing and its state ("instance \"zk\" not
 * found"); which command or flag of planctl fixes it is the CLI's to say,
 * in its own words ("; see 'planctl instances'").  An embedder, the web
 * API and the Go package add their own.
 *
 * One table, keyed by the error code, the command (where the same words
 * call for other advice in another command) and the shape of the message: a
 * pattern that must match the whole message, where each * takes any text
 * (the shortest that lets the rest match) and is numbered from 1; the
 * advice is the line printed instead, where $0 is the whole message and
 * $1..$9 what the stars took.  The first row that matches wins; a message
 * no row matches is printed as it is.
 */
#include "cli.h"

#include <string.h>

#define MAX_STARS 9

typedef struct capture {
    const char *at[MAX_STARS + 1];
    size_t len[MAX_STARS + 1];
    int n;
} capture;

typedef struct hint {
    int rc;               /* the code the message comes with */
    const char *commands; /* " status retry ": only there; NULL: any */
    const char *pattern;
    const char *advice;
    /* Advice that is not one text: writes the line itself. */
    void (*write)(cli_buf *out, const capture *c);
} hint;

static void secret_flags(cli_buf *out, const capture *c);

static const hint hints[] = {
    {PLANCTL_ENOTFOUND, NULL, "instance \"*\" not found*",
     "$0; see 'planctl instances'", NULL},
    {PLANCTL_ENOTFOUND, NULL, "definition \"*\" is not registered*",
     "$0; register it with 'planctl apply -f FILE'", NULL},
    {PLANCTL_ENOTFOUND, " status retry logs watch history ",
     "run * not found for instance \"*\"", "$0; see 'planctl history $2'",
     NULL},
    {PLANCTL_EDEFINITION, NULL,
     "*Unsupported value: \"*\": supported values: *or when named as extra "
     "kinds*",
     "$1Unsupported value: \"$2\": supported values: $3or when named (--kind "
     "\"$2\", PLANCTL_KINDS)$4",
     NULL},
    {PLANCTL_EDEFINITION, NULL, "* (and * more)",
     "$1 (and $2 more; see 'planctl validate -f FILE')", NULL},
    {PLANCTL_ECONFLICT, NULL,
     "instance \"*\" is running plan *; cancel it first, "
     "or queue the run",
     "instance \"$1\" is running plan $2; cancel it or use --queue", NULL},
    {PLANCTL_ECONFLICT, NULL, "instance \"*\" is being deleted",
     "$0; finish with 'planctl delete $1' (add --force after a failed "
     "cleanup)",
     NULL},
    {PLANCTL_EINVAL, NULL,
     "plan \"cleanup\" runs only when instance \"*\" is "
     "deleted",
     "plan \"cleanup\" runs only through 'planctl delete $1'", NULL},
    {PLANCTL_EINVAL, NULL, "no parameter given: *",
     "no parameter given; use -p NAME=VALUE or --unset NAME", NULL},
    {PLANCTL_EINVAL, NULL,
     "instance \"*\" has a cleanup plan, which removes it "
     "when it completes, after this command: nothing to "
     "archive now",
     "$0; add --force to remove it at once without cleanup, or export it "
     "before",
     NULL},
    {PLANCTL_EINVAL, NULL, "the parameter snapshot to run with is not JSON (*)",
     "$0; check the database with 'planctl verify'", NULL},
    {PLANCTL_EIO, NULL,
     "instance \"*\": * in the database is not a JSON object",
     "$0; run 'planctl verify'", NULL},
    {PLANCTL_EIO, NULL,
     "the database's -wal file * was removed and another made "
     "while this process had it open; stopped without writing "
     "more",
     "$0: check the database with 'planctl verify'", NULL},
    {PLANCTL_EIO, NULL, "database * is damaged (SQLite: *)",
     "$0; restore it from a backup, or run 'planctl verify' on a copy to "
     "see what can still be read",
     NULL},
    /* Import. */
    {PLANCTL_ECONFLICT, NULL, "the bundle's instance \"*\" already exists here",
     "instance \"$1\" already exists; import it under another name with "
     "--as NAME",
     NULL},
    {PLANCTL_EINVAL, NULL, "the bundles hold two instances named *",
     "$0; put each in a file of its own and import one with --as NAME", NULL},
    {PLANCTL_EINVAL, NULL,
     "the bundles hold * instances, but a new name is for one",
     "$0; import without --as", NULL},
    {PLANCTL_EINVAL, NULL, "*not a planctl bundle: it has no \"format\": *",
     "$0; make one with 'planctl export NAME'", NULL},
    {PLANCTL_EINVAL, NULL,
     "the bundle leaves out the value* of secret parameter* "
     "* (exported without secrets); give * in the import's "
     "parameters",
     NULL, secret_flags},
    {PLANCTL_EINVAL, NULL,
     "parameter \"*\" is not a secret parameter whose value "
     "the bundle leaves out: an import takes values only for "
     "those; change other values after the import",
     "parameter \"$1\" is not a secret parameter whose value the bundle "
     "leaves out: import -p gives only those; change other values after the "
     "import with 'planctl set'",
     NULL},
    /* Opening the database (--db, PLANCTL_DB). */
    {PLANCTL_ENOTFOUND, NULL, "database * does not exist",
     "$0; create it with 'planctl apply' or check --db", NULL},
    {PLANCTL_ENOTFOUND, NULL, "database * is empty",
     "$0; create it with 'planctl apply' or check --db", NULL},
    {PLANCTL_ENOTDB, NULL, "* is not a planctl database (*)",
     "$0; check --db or PLANCTL_DB", NULL},
    {PLANCTL_ENOTDB, NULL, "* is an SQLite database but not a planctl one",
     "$0; check --db or PLANCTL_DB", NULL},
    {PLANCTL_ENOTDB, NULL,
     "schema * of * not planctl's; give another schema "
     "(?schema=NAME) or database",
     "$0 in --db or PLANCTL_DB", NULL},
};

/* Does s match p whole?  Stars from star on fill c (shortest first). */
static int match(const char *s, const char *p, capture *c, int star)
{
    for (; *p && *p != '*'; p++, s++)
        if (*s != *p)
            return 0;
    if (!*p)
        return !*s;
    /* A star: the shortest text that lets the rest match. */
    if (star > MAX_STARS)
        return 0;
    for (const char *end = s;; end++) {
        if (match(end, p + 1, c, star + 1)) {
            c->at[star] = s;
            c->len[star] = (size_t)(end - s);
            if (star > c->n)
                c->n = star;
            return 1;
        }
        if (!*end)
            return 0;
    }
}

static void expand(cli_buf *out, const char *advice, const capture *c)
{
    for (const char *a = advice; *a; a++) {
        if (a[0] == '$' && a[1] >= '0' && a[1] <= '9' && a[1] - '0' <= c->n) {
            int i = a[1] - '0';

            cli_buf_addn(out, c->at[i], c->len[i]);
            a++;
        } else {
            cli_buf_addn(out, a, 1);
        }
    }
}

/* The old words of the import's refusal: each withheld parameter as the
 * -p flag that gives it. */
static void secret_flags(cli_buf *out, const capture *c)
{
    const char *q = c->at[3], *end = c->at[3] + c->len[3];
    int first = 1;

    expand(out,
           "the bundle leaves out the value$1 of secret parameter$2 $3 "
           "(exported without --include-secrets); give $4 with ",
           c);
    /* $3 is "A", "B": the names between the quotes. */
    while (q < end && (q = memchr(q, '"', (size_t)(end - q)))) {
        const char *close = memchr(q + 1, '"', (size_t)(end - q - 1));

        if (!close)
            break;
        cli_buf_addf(out, "%s-p %.*s=VALUE", first ? "" : " ",
                     (int)(close - q - 1), q + 1);
        first = 0;
        q = close + 1;
    }
}

/* Is command one of the row's? */
static int for_command(const hint *h, const char *command)
{
    const char *at;
    size_t n = command ? strlen(command) : 0;

    if (!h->commands)
        return 1;
    for (at = h->commands; n && (at = strstr(at, command)); at += n)
        if (at[-1] == ' ' && at[n] == ' ')
            return 1;
    return 0;
}

void cli_hint(cli_buf *out, const char *command, int rc, const char *msg)
{
    size_t i;

    for (i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        capture c;

        memset(&c, 0, sizeof c);
        if (hints[i].rc != rc || !for_command(&hints[i], command) ||
            !match(msg, hints[i].pattern, &c, 1))
            continue;
        c.at[0] = msg;
        c.len[0] = strlen(msg);
        if (hints[i].write)
            hints[i].write(out, &c);
        else
            expand(out, hints[i].advice, &c);
        return;
    }
    cli_buf_add(out, msg);
}
