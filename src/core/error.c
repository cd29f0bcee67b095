/* error.c - error code names and texts, generated from PLANCTL_ERRNO_MAP,
 * and the per-thread message of refusals that have no handle. */
#include "error.h"

#include <stdio.h>

#include "alloc.h"
#include "planctl.h"

/* A fixed buffer: setting it cannot fail for want of memory, and a thread
 * that ends leaves nothing to free. */
static _Thread_local char thread_msg[256];

int pctl_thread_verr(int rc, const char *fmt, va_list ap)
{
    char *c;

    vsnprintf(thread_msg, sizeof thread_msg, fmt, ap);
    /* One line, as a handle's message is. */
    for (c = thread_msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = ' ';
    return rc;
}

int pctl_thread_err(int rc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    pctl_thread_verr(rc, fmt, ap);
    va_end(ap);
    return rc;
}

const char *planctl_thread_errmsg(void)
{
    return thread_msg;
}

const char *planctl_strerror(int code)
{
    switch (code) {
    case 0:
        return "success";
#define X(name, value, text)                                                   \
    case value:                                                                \
        return text;
        PLANCTL_ERRNO_MAP(X)
#undef X
    default:
        return "unknown error";
    }
}

const char *planctl_errname(int code)
{
    switch (code) {
    case 0:
        return "PLANCTL_OK";
#define X(name, value, text)                                                   \
    case value:                                                                \
        return "PLANCTL_" #name;
        PLANCTL_ERRNO_MAP(X)
#undef X
    default:
        return "PLANCTL_UNKNOWN";
    }
}

const char *planctl_libversion(void)
{
    return PLANCTL_VERSION;
}

void planctl_free(void *ptr)
{
    pctl_free(ptr);
}
