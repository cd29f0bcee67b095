/* outputs.c - sets of task outputs and the $PLANCTL_OUTPUT text (see
 * outputs.h). */
#include "outputs.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "envname.h"
#include "planctl.h"
#include "utf8.h"

const char *pctl_output_value(const json_t *v, int *secret)
{
    if (secret)
        *secret = json_is_object(v);
    if (json_is_object(v))
        v = json_object_get(v, "secret");
    return json_string_value(v);
}

/* The bytes one output counts: its key and its value. */
static size_t entry_size(const char *key, const json_t *v)
{
    const char *s = pctl_output_value(v, NULL);

    return strlen(key) + (s ? strlen(s) : 0);
}

size_t pctl_outputs_size(const json_t *o)
{
    const char *key;
    json_t *v;
    size_t n = 0;

    json_object_foreach((json_t *)o, key, v)
    {
        n += entry_size(key, v);
    }
    return n;
}

static int too_big(char *err, size_t errsize, size_t size)
{
    snprintf(err, errsize,
             "outputs of one attempt are limited to %d KiB; these would be "
             "%zu bytes (keys and values)",
             PCTL_OUTPUTS_MAX / 1024, size);
    return PLANCTL_EINVAL;
}

int pctl_outputs_put(json_t *o, size_t *size, char *err, size_t errsize,
                     const char *key, const char *value, size_t vlen,
                     int secret)
{
    json_t *old = json_object_get(o, key), *v;
    size_t was = old ? entry_size(key, old) : 0,
           now = *size - was + strlen(key) + vlen;

    if (!pctl_env_name_valid(key)) {
        snprintf(err, errsize,
                 "output key \"%.64s\" is not letters, digits and _ "
                 "starting with a letter or _",
                 key);
        return PLANCTL_EINVAL;
    }
    if (!pctl_utf8_valid(value, vlen) || memchr(value, '\0', vlen)) {
        snprintf(err, errsize, "output %s is not UTF-8 text without NUL bytes",
                 key);
        return PLANCTL_EINVAL;
    }
    if (now > PCTL_OUTPUTS_MAX)
        return too_big(err, errsize, now);
    v = json_stringn(value, vlen);
    if (v && secret)
        v = json_pack("{s:o}", "secret", v);
    if (!v || json_object_set_new(o, key, v) < 0)
        return PLANCTL_ENOMEM;
    *size = now;
    return 0;
}

int pctl_outputs_merge(json_t *dst, size_t *size, char *err, size_t errsize,
                       const json_t *src)
{
    const char *key;
    json_t *v;
    size_t n = *size;

    json_object_foreach((json_t *)src, key, v)
    {
        json_t *old = json_object_get(dst, key);

        n += entry_size(key, v) - (old ? entry_size(key, old) : 0);
    }
    if (n > PCTL_OUTPUTS_MAX)
        return too_big(err, errsize, n);
    if (json_object_update(dst, (json_t *)src) < 0)
        return PLANCTL_ENOMEM;
    *size = n;
    return 0;
}

/* The next line of [*p, end) without its newline; *p moves past it. */
static const char *next_line(const char **p, const char *end, size_t *len)
{
    const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));

    *len = (size_t)((nl ? nl : end) - s);
    *p = nl ? nl + 1 : end;
    return s;
}

int pctl_outputs_parse(json_t *o, size_t *size, char *err, size_t errsize,
                       const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    char key[256], msg[192];
    size_t lineno = 0;

    while (p < end) {
        size_t n, k = 0, start = ++lineno,
                  mark = strlen(PCTL_OUTPUT_SECRET_MARK);
        const char *line = next_line(&p, end, &n), *value;
        int secret = 0, rc;
        size_t vlen;
        char *joined = NULL;

        if (n == 0)
            continue;
        if (n >= mark && !memcmp(line, PCTL_OUTPUT_SECRET_MARK, mark)) {
            secret = 1;
            line += mark;
            n -= mark;
        }
        while (k < n && k < sizeof key - 1 &&
               (line[k] == '_' || (line[k] >= 'a' && line[k] <= 'z') ||
                (line[k] >= 'A' && line[k] <= 'Z') ||
                (line[k] >= '0' && line[k] <= '9')))
            k++;
        memcpy(key, line, k);
        key[k] = '\0';
        if (k == 0 || (key[0] >= '0' && key[0] <= '9') || k == n ||
            (line[k] != '=' && (k + 2 > n || memcmp(line + k, "<<", 2)))) {
            snprintf(err, errsize,
                     "PLANCTL_OUTPUT line %zu: \"%.*s\" is not KEY=VALUE or "
                     "KEY<<DELIMITER (a KEY is letters, digits and _, not "
                     "starting with a digit)",
                     start, n > 64 ? 64 : (int)n, line);
            return PLANCTL_EINVAL;
        }
        if (line[k] == '=') {
            value = line + k + 1;
            vlen = n - k - 1;
        } else {
            const char *delim = line + k + 2, *vstart = p, *l = NULL;
            size_t dlen = n - k - 2, ln = 0;
            int closed = 0;

            if (dlen == 0) {
                snprintf(err, errsize,
                         "PLANCTL_OUTPUT line %zu: %s<< needs a delimiter "
                         "after <<",
                         start, key);
                return PLANCTL_EINVAL;
            }
            while (p < end) {
                lineno++;
                l = next_line(&p, end, &ln);
                if (ln == dlen && !memcmp(l, delim, dlen)) {
                    closed = 1;
                    break;
                }
            }
            if (!closed) {
                snprintf(err, errsize,
                         "PLANCTL_OUTPUT line %zu: no line \"%.*s\" ends the "
                         "value of %s",
                         start, dlen > 64 ? 64 : (int)dlen, delim, key);
                return PLANCTL_EINVAL;
            }
            value = vstart;
            /* Up to the newline before the delimiter line (none when the
             * value is empty). */
            vlen = l > vstart ? (size_t)(l - vstart) - 1 : 0;
        }
        if (!(joined = pctl_malloc(vlen + 1)))
            return PLANCTL_ENOMEM;
        memcpy(joined, value, vlen);
        joined[vlen] = '\0';
        rc = pctl_outputs_put(o, size, msg, sizeof msg, key, joined, vlen,
                              secret);
        pctl_free(joined);
        if (rc == PLANCTL_EINVAL)
            snprintf(err, errsize, "PLANCTL_OUTPUT line %zu: %s", start, msg);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int pctl_outputs_mask(json_t *set)
{
    json_t *v, *m;
    const char *key;

    json_object_foreach(set, key, v)
    {
        if (json_is_object(v) && (!(m = json_string(PCTL_OUTPUT_MASK)) ||
                                  json_object_set_new(set, key, m) < 0))
            return -1;
    }
    return 0;
}

json_t *pctl_outputs_masked(const char *text)
{
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;

    if (!json_is_object(o)) {
        json_decref(o);
        return json_null();
    }
    if (pctl_outputs_mask(o) < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *pctl_outputs_scrubbed(const char *text, int *changed)
{
    json_t *o = json_loads(text, 0, NULL), *v;
    const char *key;
    char *out = NULL;

    *changed = 0;
    json_object_foreach(o, key, v)
    {
        if (json_is_object(v) && !json_is_null(json_object_get(v, "secret"))) {
            if (json_object_set_new(v, "secret", json_null()) < 0) {
                json_decref(o);
                return NULL;
            }
            *changed = 1;
        }
    }
    out = *changed ? json_dumps(o, JSON_COMPACT) : pctl_strdup(text);
    json_decref(o);
    return out;
}
