/*
 * uri.c - a PostgreSQL database URI: which schema, what libpq gets, and
 * what may be shown.
 *
 * planctl takes libpq's URIs as they are (postgresql://user@host/db?...,
 * with every parameter libpq knows, and its environment and ~/.pgpass for
 * what the URI leaves out), plus one parameter of its own, schema=NAME
 * (default planctl), removed before libpq sees the URI, since libpq
 * refuses parameters it does not know.
 *
 * A password can be in the user part (user:secret@host) or a parameter
 * (password=secret).  The handle keeps the URI without either for every
 * message and output (p->path); only the connection keeps the original.
 */
#include <ctype.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dbname.h"
#include "store/postgres/pg.h"

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* value[0..n) percent-decoded, or NULL (out of memory or a bad escape). */
static char *decode(const char *value, size_t n)
{
    char *out = pctl_malloc(n + 1);
    size_t i, k = 0;

    if (!out)
        return NULL;
    for (i = 0; i < n; i++) {
        if (value[i] == '%') {
            int hi = i + 2 < n ? hexval((unsigned char)value[i + 1]) : -1;
            int lo = hi >= 0 ? hexval((unsigned char)value[i + 2]) : -1;

            if (hi < 0 || lo < 0) {
                pctl_free(out);
                return NULL;
            }
            out[k++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[k++] = value[i];
        }
    }
    out[k] = '\0';
    return out;
}

/* Whether s is a name planctl accepts for its schema: lower-case letters,
 * digits and _, not starting with a digit, at most 63 bytes (PostgreSQL's
 * limit), so it never needs quoting to mean itself. */
static int valid_schema(const char *s)
{
    size_t n = strlen(s), i;

    if (n == 0 || n > 63 || isdigit((unsigned char)s[0]))
        return 0;
    for (i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) ||
              s[i] == '_'))
            return 0;
    return 1;
}

/* The end of the authority (user@host:port) that starts at s. */
static const char *authority_end(const char *s)
{
    return s + strcspn(s, "/?");
}

/*
 * Copies uri to a new string, leaving out: the password of the user part
 * (redact), and the parameters named password (redact) or schema
 * (drop_schema, whose value goes to *schema).  NULL when out of memory or,
 * with drop_schema, when the schema value has a bad escape (*bad set).
 */
static char *rewrite(const char *uri, int redact, int drop_schema,
                     char **schema, int *bad)
{
    size_t n = strlen(uri);
    char *out = pctl_malloc(n + 1), *o;
    const char *start = strstr(uri, "://"), *auth, *end, *at, *q;

    if (!out)
        return NULL;
    o = out;
    auth = start + 3;
    end = authority_end(auth);
    memcpy(o, uri, (size_t)(auth - uri));
    o += auth - uri;
    /* The user part: up to the last '@' of the authority. */
    at = NULL;
    for (q = auth; q < end; q++)
        if (*q == '@')
            at = q;
    if (at && redact) {
        const char *colon = memchr(auth, ':', (size_t)(at - auth));
        const char *ustop = colon ? colon : at;

        memcpy(o, auth, (size_t)(ustop - auth));
        o += ustop - auth;
        memcpy(o, at, (size_t)(end - at));
        o += end - at;
    } else {
        memcpy(o, auth, (size_t)(end - auth));
        o += end - auth;
    }
    q = strchr(end, '?');
    /* The path (the database's name). */
    memcpy(o, end, (size_t)((q ? q : uri + n) - end));
    o += (q ? q : uri + n) - end;
    if (q) {
        const char *par = q + 1;
        int first = 1;

        while (*par) {
            size_t len = strcspn(par, "&");
            const char *eq = memchr(par, '=', len);
            size_t klen = eq ? (size_t)(eq - par) : len;
            int skip = 0;

            if (drop_schema && klen == 6 && strncmp(par, "schema", 6) == 0) {
                pctl_free(*schema);
                *schema = eq ? decode(eq + 1, len - klen - 1) : NULL;
                if (!*schema) {
                    *bad = 1;
                    pctl_free(out);
                    return NULL;
                }
                skip = 1;
            } else if (redact && klen == 8 &&
                       strncmp(par, "password", 8) == 0) {
                skip = 1;
            }
            if (!skip && len > 0) {
                *o++ = first ? '?' : '&';
                first = 0;
                memcpy(o, par, len);
                o += len;
            }
            par += len;
            if (*par == '&')
                par++;
        }
    }
    *o = '\0';
    return out;
}

char *pctl_pg_uri_redact(const char *uri)
{
    int bad = 0;

    if (!pctl_is_server_uri(uri))
        return pctl_strdup(uri ? uri : "");
    return rewrite(uri, 1, 0, NULL, &bad);
}

void pctl_pg_uri_free(pctl_pg_uri *u)
{
    pctl_free(u->conninfo);
    pctl_free(u->shown);
    pctl_free(u->schema);
    memset(u, 0, sizeof *u);
}

int pctl_pg_uri_parse(pctl_pg_uri *out, planctl *p, const char *uri)
{
    int bad = 0;

    memset(out, 0, sizeof *out);
    if (!(out->shown = pctl_pg_uri_redact(uri)))
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    out->conninfo = rewrite(uri, 0, 1, &out->schema, &bad);
    if (!out->conninfo) {
        int rc = bad ? pctl_err(p, PLANCTL_EINVAL,
                                "database URI %s: the schema parameter has a "
                                "bad %%-escape; give schema=NAME",
                                out->shown)
                     : pctl_err(p, PLANCTL_ENOMEM, "out of memory");

        pctl_pg_uri_free(out);
        return rc;
    }
    if (!out->schema && !(out->schema = pctl_strdup(PCTL_PG_DEFAULT_SCHEMA))) {
        pctl_pg_uri_free(out);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (!valid_schema(out->schema)) {
        int rc = pctl_err(p, PLANCTL_EINVAL,
                          "database URI %s: schema \"%s\" is not a name "
                          "planctl uses; give lower-case letters, digits and "
                          "_ (at most 63, not starting with a digit)",
                          out->shown, out->schema);

        pctl_pg_uri_free(out);
        return rc;
    }
    return 0;
}
