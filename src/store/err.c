/*
 * err.c - the handle's message, at the bottom of the store: every file
 * above, and every backend, sets it through pctl_err(); the caller reads
 * it with planctl_errmsg().
 */
#include <stdarg.h>
#include <stdio.h>

#include "core/alloc.h"
#include "core/error.h"
#include "store/store.h"

int pctl_err(planctl *p, int rc, const char *fmt, ...)
{
    va_list ap;
    char *msg;
    int n;

    /* No handle to carry it: the thread's message does
     * (planctl_thread_errmsg). */
    if (!p) {
        va_start(ap, fmt);
        pctl_thread_verr(rc, fmt, ap);
        va_end(ap);
        return rc;
    }
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    msg = n >= 0 ? pctl_malloc((size_t)n + 1) : NULL;
    if (msg) {
        char *r, *w;

        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
        /* One line, whatever went in: SQLite quotes a failed CHECK with
         * its schema text, line breaks and indentation included, and
         * names from outside may hold control characters.  Each run of
         * them (and the spaces after) becomes one space. */
        for (r = w = msg; *r;) {
            if ((unsigned char)*r < 0x20 || *r == 0x7f) {
                while (*r &&
                       ((unsigned char)*r < 0x20 || *r == 0x7f || *r == ' '))
                    r++;
                *w++ = ' ';
            } else {
                *w++ = *r++;
            }
        }
        *w = '\0';
    }
    pctl_free(p->errmsg);
    p->errmsg = msg; /* NULL reads as "out of memory" */
    p->errcode = msg ? rc : PLANCTL_ENOMEM;
    return rc;
}

int pctl_err_arg(planctl *p, const char *name)
{
    return pctl_err(p, PLANCTL_EINVAL, "missing argument: %s is NULL", name);
}

const char *planctl_errmsg(const planctl *p)
{
    if (!p)
        return "out of memory";
    if (!p->errmsg)
        return "";
    return p->errmsg;
}
