/* exec_spec.c - what the built-in executors share: reporting a bad spec. */
#include <stdarg.h>
#include <stdio.h>

#include "core/alloc.h"
#include "engine/executors.h"

int pctl_spec_error(char **err, const char *what, const char *fmt, ...)
{
    char buf[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    *err = pctl_asprintf("%s: %s", what, buf);
    return *err ? PLANCTL_EINVAL : PLANCTL_ENOMEM;
}
