/* ptype.c - the types of a parameter's value: names, checks, parsing of
 * command-line text, and the text a task receives (see ptype.h). */
#include "ptype.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "pipeline.h"
#include "planctl.h"

static const char *const names[PCTL_PTYPE_COUNT] = {
    "string", "integer", "number", "boolean", "array", "map"};

static const char *const expects[PCTL_PTYPE_COUNT] = {
    "a string",
    "an integer (such as 3)",
    "a number (such as 2.5)",
    "a boolean (true or false)",
    "an array (JSON such as [\"a\",\"b\"])",
    "a map (a JSON object such as {\"k\":\"v\"})"};

const char *pctl_ptype_name(pctl_ptype t)
{
    return (unsigned)t < PCTL_PTYPE_COUNT ? names[t] : "?";
}

const char *const *pctl_ptype_names(void)
{
    return names;
}

const char *pctl_ptype_expect(pctl_ptype t)
{
    return (unsigned)t < PCTL_PTYPE_COUNT ? expects[t] : "?";
}

int pctl_ptype_find(pctl_ptype *out, const char *name)
{
    int i;

    for (i = 0; name && i < PCTL_PTYPE_COUNT; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (pctl_ptype)i;
            return 1;
        }
    return 0;
}

int pctl_ptype_is(pctl_ptype t, const json_t *v)
{
    switch (t) {
    case PCTL_PTYPE_STRING:
        return json_is_string(v);
    case PCTL_PTYPE_INTEGER:
        return json_is_integer(v);
    case PCTL_PTYPE_NUMBER:
        return json_is_number(v);
    case PCTL_PTYPE_BOOLEAN:
        return json_is_boolean(v);
    case PCTL_PTYPE_ARRAY:
        return json_is_array(v);
    case PCTL_PTYPE_MAP:
        return json_is_object(v);
    }
    return 0;
}

/* A JSON number literal, exactly (RFC 8259): -?(0|[1-9][0-9]*)(.[0-9]+)?
 * ([eE][+-]?[0-9]+)?; with integer set, without fraction or exponent. */
static int number_syntax(const char *s, int integer)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return 0;
    if (integer)
        return *s == '\0';
    if (*s == '.') {
        if (!(*++s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

int pctl_ptype_parse(json_t **out, pctl_ptype t, const char *text)
{
    json_error_t jerr;
    json_t *v = NULL;

    *out = NULL;
    switch (t) {
    case PCTL_PTYPE_STRING:
        v = json_string(text);
        break;
    case PCTL_PTYPE_BOOLEAN:
        if (strcmp(text, "true") && strcmp(text, "false"))
            return PLANCTL_EINVAL;
        v = json_boolean(strcmp(text, "true") == 0);
        break;
    case PCTL_PTYPE_INTEGER:
    case PCTL_PTYPE_NUMBER:
    case PCTL_PTYPE_ARRAY:
    case PCTL_PTYPE_MAP:
        /* jansson reads a number once its syntax is exact, and refuses
         * what overflows. */
        if ((t == PCTL_PTYPE_INTEGER || t == PCTL_PTYPE_NUMBER) &&
            !number_syntax(text, t == PCTL_PTYPE_INTEGER))
            return PLANCTL_EINVAL;
        v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
        if (!v)
            return json_error_code(&jerr) == json_error_out_of_memory
                       ? PLANCTL_ENOMEM
                       : PLANCTL_EINVAL;
        if (!pctl_ptype_is(t, v) ||
            (json_is_real(v) && !isfinite(json_real_value(v)))) {
            json_decref(v);
            return PLANCTL_EINVAL;
        }
        break;
    }
    if (!v)
        return PLANCTL_ENOMEM;
    *out = v;
    return 0;
}

json_t *pctl_ptype_default(pctl_ptype t, const json_t *def)
{
    char *text = NULL;
    json_t *v;

    if (t != PCTL_PTYPE_STRING ||
        !(json_is_number(def) || json_is_boolean(def)))
        return json_incref((json_t *)def);
    if (pctl_json_encode(&text, def,
                         JSON_ENCODE_ANY | JSON_COMPACT |
                             JSON_REAL_PRECISION(15)) < 0)
        return NULL;
    v = json_string(text);
    pctl_free(text);
    return v;
}

int pctl_pvalue_equal(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b) &&
        !(json_is_integer(a) && json_is_integer(b)))
        return json_number_value(a) == json_number_value(b);
    return json_equal((json_t *)a, (json_t *)b);
}

int pctl_pvalue_in(const json_t *list, const json_t *v)
{
    size_t i;

    for (i = 0; i < json_array_size(list); i++)
        if (pctl_pvalue_equal(v, json_array_get(list, i)))
            return 1;
    return 0;
}

int pctl_enum_has(const char *enum_json, const json_t *v)
{
    json_t *list;
    int found;

    if (!enum_json)
        return 1;
    list = json_loads(enum_json, 0, NULL);
    found = pctl_pvalue_in(list, v);
    json_decref(list);
    return found;
}

/* The shortest %g form that reads back as d. */
static char *real_text(double d)
{
    char buf[40];
    int prec;

    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    return pctl_strdup(buf);
}

char *pctl_ptype_text(const json_t *v)
{
    char *s = NULL;

    switch (json_typeof(v)) {
    case JSON_STRING:
        return pctl_strdup(json_string_value(v));
    case JSON_INTEGER:
        return pctl_asprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL:
        return real_text(json_real_value(v));
    case JSON_TRUE:
        return pctl_strdup("true");
    case JSON_FALSE:
        return pctl_strdup("false");
    case JSON_ARRAY:
    case JSON_OBJECT:
        return pctl_json_encode(&s, v, JSON_COMPACT | JSON_SORT_KEYS) == 0
                   ? s
                   : NULL;
    case JSON_NULL:
    default:
        return NULL;
    }
}
