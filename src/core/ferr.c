/* ferr.c - the field-error list: append with de-duplication, render, and
 * the "did you mean" suggestion. */
#include "ferr.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "planctl.h"

/* Longest word or candidate pctl_closest() compares.  Names are at most 63
 * characters, so anything longer is not a name anyone meant to type, and a
 * fixed bound lets the edit distance run in a stack buffer and never fail. */
#define CLOSEST_MAX 64

const char *pctl_ferr_type_name(pctl_ferr_type t)
{
    switch (t) {
    case PCTL_FERR_SYNTAX:
        return "Syntax error";
    case PCTL_FERR_REQUIRED:
        return "Required value";
    case PCTL_FERR_INVALID:
        return "Invalid value";
    case PCTL_FERR_TYPE:
        return "Invalid type";
    case PCTL_FERR_UNSUPPORTED:
        return "Unsupported value";
    case PCTL_FERR_DUPLICATE:
        return "Duplicate value";
    case PCTL_FERR_NOT_FOUND:
        return "Not found";
    case PCTL_FERR_FORBIDDEN:
        return "Forbidden";
    case PCTL_FERR_TOO_LONG:
        return "Too long";
    case PCTL_FERR_TOO_MANY:
        return "Too many";
    }
    /* An out-of-range value is a caller bug; still render something. */
    return "Error";
}

/* The rendered line is a sequence of pieces; both rendering and the
 * duplicate test walk the same sequence so they cannot disagree. */
typedef struct pieces {
    const char *p[8];
    size_t n;
} pieces;

static void split(pieces *out, const pctl_ferr *e)
{
    out->n = 0;
    if (e->type != PCTL_FERR_SYNTAX) {
        if (e->path && e->path[0]) {
            out->p[out->n++] = e->path;
            out->p[out->n++] = ": ";
        }
        out->p[out->n++] = pctl_ferr_type_name(e->type);
        if (e->message && e->message[0]) {
            out->p[out->n++] = ": ";
            out->p[out->n++] = e->message;
        }
    } else {
        out->p[out->n++] = e->message ? e->message : "";
    }
    if (e->hint) {
        out->p[out->n++] = " (";
        out->p[out->n++] = e->hint;
        out->p[out->n++] = ")";
    }
}

char *pctl_ferr_render(const pctl_ferr *e)
{
    pieces ps;
    size_t i, len = 0;
    char *s, *w;

    split(&ps, e);
    for (i = 0; i < ps.n; i++)
        len += strlen(ps.p[i]);
    s = pctl_malloc(len + 1);
    if (!s)
        return NULL;
    w = s;
    for (i = 0; i < ps.n; i++) {
        size_t n = strlen(ps.p[i]);

        memcpy(w, ps.p[i], n);
        w += n;
    }
    *w = '\0';
    return s;
}

/* Whether e renders exactly as line, without allocating. */
static int renders_as(const pctl_ferr *e, const char *line)
{
    pieces ps;
    size_t i;

    split(&ps, e);
    for (i = 0; i < ps.n; i++) {
        size_t n = strlen(ps.p[i]);

        if (strncmp(line, ps.p[i], n) != 0)
            return 0;
        line += n;
    }
    return *line == '\0';
}

static void ferr_free(pctl_ferr *e)
{
    pctl_free(e->path);
    pctl_free(e->message);
    pctl_free(e->hint);
}

static char *vformat(const char *fmt, va_list ap)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 0)))
#endif
    ;

static char *vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    int n;
    char *s;

    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    s = pctl_malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

/* Whether list holds an item rendered as line. */
static int holds(const pctl_ferr_list *list, const char *line)
{
    size_t i;

    for (i = 0; i < list->n; i++)
        if (renders_as(&list->items[i], line))
            return 1;
    return 0;
}

/* Appends e (taken over) unless an item renders like it: 1 appended, 0
 * dropped as a duplicate (e freed), PLANCTL_ENOMEM (e freed, oom set). */
static int append(pctl_ferr_list *list, pctl_ferr *e)
{
    char *line = pctl_ferr_render(e);
    int dup;

    if (!line)
        goto oom;
    dup = holds(list, line);
    pctl_free(line);
    if (dup) {
        ferr_free(e);
        return 0;
    }
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 8;
        pctl_ferr *items;

        if (cap > (size_t)-1 / sizeof(*items))
            goto oom;
        items = pctl_realloc(list->items, cap * sizeof(*items));
        if (!items)
            goto oom;
        list->items = items;
        list->cap = cap;
    }
    list->items[list->n++] = *e;
    return 1;

oom:
    ferr_free(e);
    list->oom = 1;
    return PLANCTL_ENOMEM;
}

int pctl_ferr_addv(pctl_ferr_list *list, const char *path, pctl_ferr_type type,
                   const char *hint, const char *fmt, va_list ap)
{
    pctl_ferr e = {NULL, type, NULL, NULL};
    int rc;

    e.message = vformat(fmt, ap);
    e.path = pctl_strdup(path ? path : "");
    if (hint)
        e.hint = pctl_strdup(hint);
    if (!e.message || !e.path || (hint && !e.hint)) {
        ferr_free(&e);
        list->oom = 1;
        return PLANCTL_ENOMEM;
    }
    rc = append(list, &e);
    return rc < 0 ? rc : 0;
}

int pctl_ferr_add(pctl_ferr_list *list, const char *path, pctl_ferr_type type,
                  const char *hint, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = pctl_ferr_addv(list, path, type, hint, fmt, ap);
    va_end(ap);
    return rc;
}

int pctl_ferr_list_merge(pctl_ferr_list *dst, pctl_ferr_list *src, size_t max,
                         size_t *dropped)
{
    size_t i, moved = 0;
    int rc = 0;

    if (dropped)
        *dropped = 0;
    for (i = 0; i < src->n; i++) {
        if (rc < 0) {
            ferr_free(&src->items[i]);
            continue;
        }
        if (moved >= max) {
            /* Only a line that would have been kept counts as left out. */
            char *line = pctl_ferr_render(&src->items[i]);

            if (!line) {
                dst->oom = 1;
                rc = PLANCTL_ENOMEM;
            } else if (dropped && !holds(dst, line)) {
                (*dropped)++;
            }
            pctl_free(line);
            ferr_free(&src->items[i]);
            continue;
        }
        rc = append(dst, &src->items[i]);
        if (rc > 0)
            moved++;
    }
    pctl_free(src->items);
    src->items = NULL;
    src->n = src->cap = 0;
    if (src->oom) {
        /* An error src could not record is lost to dst as well. */
        dst->oom = 1;
        src->oom = 0;
    }
    return rc < 0 ? rc : 0;
}

void pctl_ferr_list_clear(pctl_ferr_list *list)
{
    size_t i;

    for (i = 0; i < list->n; i++)
        ferr_free(&list->items[i]);
    pctl_free(list->items);
    list->items = NULL;
    list->n = 0;
    list->cap = 0;
    list->oom = 0;
}

/*
 * Edit distance between a and b (both at most CLOSEST_MAX bytes): the
 * Levenshtein distance, except that swapping two adjacent characters counts
 * as one edit, not two (the "optimal string alignment" distance).  Swaps
 * are the commonest typo ("nmae", "sepc") and plain Levenshtein would rate
 * them too far from the word meant to suggest it.
 */
static size_t distance(const char *a, size_t na, const char *b, size_t nb,
                       size_t limit)
{
    size_t rows[3][CLOSEST_MAX + 1];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    size_t i, j;

    for (j = 0; j <= nb; j++)
        prev[j] = j;
    for (i = 1; i <= na; i++) {
        size_t *t, low;

        cur[0] = low = i;
        for (j = 1; j <= nb; j++) {
            size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);

            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
            if (best < low)
                low = best;
        }
        /* No row's minimum is below the previous row's, so once it
         * passes the limit the distance will too: stop early. */
        if (low > limit)
            return limit + 1;
        t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[nb];
}

/*
 * A suggestion is useful only when it is close relative to the word: one
 * edit for short words, a third of the length for longer ones.  An exact
 * match is not a suggestion (the word was right; something else is wrong).
 * NULL candidates are skipped so callers can pass sparse name tables.
 */
const char *pctl_closest(const char *word, const char *const *candidates,
                         size_t n)
{
    size_t nw, limit, i, best_d = (size_t)-1;
    const char *best = NULL;

    if (!word)
        return NULL;
    nw = strlen(word);
    if (nw > CLOSEST_MAX)
        return NULL;
    limit = nw / 3 > 1 ? nw / 3 : 1;
    for (i = 0; i < n; i++) {
        size_t nc, d;

        if (!candidates[i])
            continue;
        nc = strlen(candidates[i]);
        /* The distance is at least the difference in length. */
        if (nc > CLOSEST_MAX || (nc > nw ? nc - nw : nw - nc) > limit)
            continue;
        /* Only a strictly better candidate matters (ties go to the
         * first), so the search narrows as it finds closer ones. */
        d = distance(word, nw, candidates[i], nc,
                     best_d <= limit ? best_d - 1 : limit);
        if (d == 0)
            return NULL;
        if (d < best_d && d <= limit) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}
