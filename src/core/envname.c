/* envname.c - the names of a shell task's environment variables (see
 * envname.h). */
#include "envname.h"

#include <string.h>

#include "alloc.h"

static int is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int pctl_env_name_valid(const char *name)
{
    size_t i;

    if (!is_alpha(name[0]) && name[0] != '_')
        return 0;
    for (i = 1; name[i]; i++)
        if (!is_alpha(name[i]) && !is_digit(name[i]) && name[i] != '_')
            return 0;
    return 1;
}

int pctl_env_name_reserved(const char *name)
{
    return strncmp(name, PCTL_ENV_RESERVED, strlen(PCTL_ENV_RESERVED)) == 0;
}

/* prefix, name mapped (a-z upper-cased, all but A-Z, 0-9 and '_' made
 * '_'), then suffix as it is, in a new string; NULL when out of memory. */
static char *mapped(const char *prefix, const char *name, const char *suffix)
{
    size_t pre = strlen(prefix), len = strlen(name), suf = strlen(suffix), i;
    char *out = pctl_malloc(pre + len + suf + 1);

    if (!out)
        return NULL;
    memcpy(out, prefix, pre);
    for (i = 0; i < len; i++) {
        char c = name[i];

        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        else if (!(c >= 'A' && c <= 'Z') && !is_digit(c))
            c = '_';
        out[pre + i] = c;
    }
    memcpy(out + pre + len, suffix, suf + 1);
    return out;
}

char *pctl_env_param_name(const char *name)
{
    return mapped(PCTL_ENV_PARAM, name, "");
}

char *pctl_env_step_name(const char *step)
{
    return mapped(PCTL_ENV_OUTPUT, step, "");
}

char *pctl_env_output_name(const char *step, const char *key)
{
    char *pre = pctl_env_step_name(step), *out = NULL;

    if (pre)
        out = pctl_asprintf("%s_%s", pre, key);
    pctl_free(pre);
    return out;
}
