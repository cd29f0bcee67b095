/* secrets.c - masking, withholding and putting back the values of secret
 * parameters (secrets.h). */
#include <string.h>

#include "core/secrets.h"

int pctl_secrets_mask(json_t *params, const pctl_def *def)
{
    size_t i;
    int n = 0;

    if (!json_is_object(params) || !def)
        return 0;
    for (i = 0; i < def->nparams; i++) {
        const char *name = def->params[i].name;

        if (!def->params[i].secret || !json_object_get(params, name))
            continue;
        if (json_object_set_new(params, name, json_string(PCTL_SECRET_MASK)) <
            0)
            return -1;
        n++;
    }
    return n;
}

int pctl_secrets_add_name(json_t *names, const char *name)
{
    size_t i;
    int cmp = 1;

    for (i = 0; i < json_array_size(names); i++) {
        cmp = strcmp(json_string_value(json_array_get(names, i)), name);
        if (cmp >= 0)
            break;
    }
    if (cmp == 0)
        return 0;
    return json_array_insert_new(names, i, json_string(name)) < 0 ? -1 : 0;
}

int pctl_secrets_withhold(json_t *params, const json_t *names, json_t *found)
{
    size_t i;
    int n = 0;

    if (!json_is_object(params))
        return 0;
    for (i = 0; i < json_array_size(names); i++) {
        const char *name = json_string_value(json_array_get(names, i));

        if (!name || !json_object_get(params, name))
            continue;
        if (json_object_set_new(params, name, json_null()) < 0 ||
            (found && pctl_secrets_add_name(found, name) < 0))
            return -1;
        n++;
    }
    return n;
}

int pctl_secrets_restore(json_t *params, const json_t *values)
{
    const char *name;
    json_t *v;
    int n = 0;

    if (!json_is_object(params))
        return 0;
    json_object_foreach((json_t *)values, name, v)
    {
        if (!json_is_null(json_object_get(params, name)))
            continue;
        if (json_object_set(params, name, v) < 0)
            return -1;
        n++;
    }
    return n;
}

int pctl_secret_equal(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b), i;
    unsigned diff = (unsigned)(la != lb);

    for (i = 0; i < la; i++)
        diff |= (unsigned)(unsigned char)a[i] ^
                (unsigned)(unsigned char)(i < lb ? b[i] : 0);
    return diff == 0;
}
