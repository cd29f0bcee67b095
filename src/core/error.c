/* error.c - error code names and texts, generated from PLANCTL_ERRNO_MAP. */
#include "alloc.h"
#include "planctl.h"

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
