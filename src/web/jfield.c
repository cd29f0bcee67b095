/* jfield.c - reading a field of a JSON document that the library made
 * (a status, a history): what the pages (pages.c) and the timeline
 * (svg.c) both read, where a missing or mistyped field is "not there". */
#include "core/timefmt.h"
#include "web/web.h"

const char *pctl_web_jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

int pctl_web_jint(int64_t *out, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);

    if (!json_is_integer(v))
        return 0;
    *out = (int64_t)json_integer_value(v);
    return 1;
}

int pctl_web_jtime(int64_t *out, const json_t *o, const char *key)
{
    const char *s = pctl_web_jstr(o, key);

    return s && pctl_time_parse(out, s) == 0;
}
