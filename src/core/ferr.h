/*
 * ferr.h - field errors: Kubernetes-style (path, type, message, hint)
 * records collected by the definition decoder and validators.
 *
 * Rendered as "path: Type: message" ("plans.deploy.strategy: Unsupported
 * value: \"serail\": supported values: \"parallel\", \"serial\""), or
 * "Type: message" when the path is empty, or the message alone for syntax
 * errors (type PCTL_FERR_SYNTAX).
 */
#ifndef PCTL_CORE_FERR_H
#define PCTL_CORE_FERR_H

#include <stdarg.h>
#include <stddef.h>

typedef enum pctl_ferr_type {
    PCTL_FERR_SYNTAX,      /* "Syntax error" - message is file:line:col: .. */
    PCTL_FERR_REQUIRED,    /* "Required value" */
    PCTL_FERR_INVALID,     /* "Invalid value" */
    PCTL_FERR_TYPE,        /* "Invalid type" */
    PCTL_FERR_UNSUPPORTED, /* "Unsupported value" */
    PCTL_FERR_DUPLICATE,   /* "Duplicate value" */
    PCTL_FERR_NOT_FOUND,   /* "Not found" */
    PCTL_FERR_FORBIDDEN,   /* "Forbidden" (unknown field) */
    PCTL_FERR_TOO_LONG,    /* "Too long" */
    PCTL_FERR_TOO_MANY     /* "Too many" */
} pctl_ferr_type;

typedef struct pctl_ferr {
    char *path; /* "" for the document itself */
    pctl_ferr_type type;
    char *message; /* may be "" */
    char *hint;    /* NULL when none, e.g. "did you mean \"render\"?" */
} pctl_ferr;

typedef struct pctl_ferr_list {
    size_t n, cap;
    pctl_ferr *items;
    int oom; /* set when an append failed for lack of memory */
} pctl_ferr_list;

#define PCTL_FERR_LIST_INIT                                                    \
    {                                                                          \
        0, 0, NULL, 0                                                          \
    }

/* "Required value" etc.  Can't fail. */
const char *pctl_ferr_type_name(pctl_ferr_type t);

/* Appends a copy of (path, type, message, hint); hint may be NULL.  The
 * message is printf-formatted.  On allocation failure sets list->oom and
 * returns PLANCTL_ENOMEM; otherwise 0.  Duplicates (same rendered line)
 * are dropped, the first kept. */
int pctl_ferr_add(pctl_ferr_list *list, const char *path, pctl_ferr_type type,
                  const char *hint, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* pctl_ferr_add with a va_list.  Same results. */
int pctl_ferr_addv(pctl_ferr_list *list, const char *path, pctl_ferr_type type,
                   const char *hint, const char *fmt, va_list ap)
#ifdef __GNUC__
    __attribute__((format(printf, 5, 0)))
#endif
    ;

/* Moves every item of src to the end of dst, in order, dropping those that
 * render like one dst already holds (the first occurrence is kept); at
 * most max items are moved and *dropped (if not NULL) receives how many
 * others were left out for that limit alone.  src is empty afterwards.
 * Returns 0, or PLANCTL_ENOMEM (dst->oom set; what was not moved is
 * freed). */
int pctl_ferr_list_merge(pctl_ferr_list *dst, pctl_ferr_list *src, size_t max,
                         size_t *dropped);

/* Renders item i as one line into a new string (caller frees with
 * pctl_free), or NULL on allocation failure. */
char *pctl_ferr_render(const pctl_ferr *e);

/* Frees the items; the list is empty and reusable afterwards.  Can't
 * fail. */
void pctl_ferr_list_clear(pctl_ferr_list *list);

/* The name in candidates[0..n) closest to word by edit distance (a swap of
 * neighbouring characters counts as one edit; ties go to the first), or
 * NULL when none is close enough to be a useful suggestion (distance greater
 * than max(1, strlen(word)/3)) or word is itself a candidate.  NULL
 * candidates are skipped.  Can't fail. */
const char *pctl_closest(const char *word, const char *const *candidates,
                         size_t n);

#endif
