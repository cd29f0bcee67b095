/*
 * rules_params.c - the rules about a parameter's type and values (its
 * type is one planctl knows, its default and its enum's values are of
 * that type, the default is one of the enum's values) and about the
 * definition's metadata (maintainers, upgradableFrom).
 */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "def.h"
#include "pipeline.h"
#include "planctl.h"
#include "rules.h"

/* A value as compact JSON for a message, cut at PCTL_ECHO_MAX bytes
 * with "..." (on a UTF-8 boundary).  Returns q->s.  Can't fail: without
 * memory it says "a value". */
static const char *echo(pctl_qbuf *q, const json_t *v)
{
    char *text = NULL;
    size_t n;

    if (pctl_json_encode(&text, v, JSON_ENCODE_ANY | JSON_COMPACT) < 0) {
        strcpy(q->s, "a value");
        return q->s;
    }
    n = strlen(text);
    if (n > PCTL_ECHO_MAX) {
        n = PCTL_ECHO_MAX;
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
            n--;
        memcpy(q->s, text, n);
        strcpy(q->s + n, "...");
    } else {
        memcpy(q->s, text, n + 1);
    }
    pctl_free(text);
    return q->s;
}

/* Reports msg at field[index]. */
static int fail_at(pctl_sink *s, const char *field, size_t index,
                   pctl_ferr_type type, const char *msg)
{
    size_t mark = pctl_sink_mark(s);
    int rc = pctl_sink_key(s, field);

    if (rc == 0)
        rc = pctl_sink_index(s, index);
    if (rc == 0)
        rc = pctl_sink_fail(s, NULL, type, NULL, "%s", msg);
    pctl_sink_back(s, mark);
    return rc;
}

/* ---- parameter values ---------------------------------------------------- */

static const char WRONG_TYPE[] = "the parameter is of type %s: must be %s";

/* The enum's values: each of the type, none twice, at least one. */
static int check_enum(pctl_sink *s, pctl_ptype t, const json_t *list)
{
    size_t i, j, n = json_array_size(list);
    char msg[160];
    pctl_qbuf q;

    if (n == 0)
        return pctl_sink_fail(s, "enum", PCTL_FERR_REQUIRED, NULL,
                              "must list at least one value");
    snprintf(msg, sizeof msg, WRONG_TYPE, pctl_ptype_name(t),
             pctl_ptype_expect(t));
    for (i = 0; i < n; i++) {
        const json_t *v = json_array_get(list, i);

        if (!pctl_ptype_is(t, v)) {
            PCTL_CHECK(fail_at(s, "enum", i, PCTL_FERR_TYPE, msg));
            continue;
        }
        for (j = 0; j < i; j++)
            if (pctl_pvalue_equal(v, json_array_get(list, j)))
                break;
        if (j < i)
            PCTL_CHECK(fail_at(s, "enum", i, PCTL_FERR_DUPLICATE, echo(&q, v)));
    }
    return 0;
}

static int param_values_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const json_t *def, *list;
    const char *tname;
    pctl_ptype t = PCTL_PTYPE_STRING;
    json_t *dv = NULL;
    pctl_qbuf q;
    pctl_hbuf h;
    int rc = 0;

    (void)data;
    if (v->node != PCTL_NODE_PARAM || !json_is_object(v->value))
        return 0;
    tname = pctl_get_string(v->value, "type");
    if (tname && !pctl_ptype_find(&t, tname))
        return pctl_sink_fail(
            s, "type", PCTL_FERR_UNSUPPORTED,
            pctl_did_you_mean(
                &h, pctl_closest(tname, pctl_ptype_names(), PCTL_PTYPE_COUNT)),
            "%s: supported values: \"array\", \"boolean\", \"integer\", "
            "\"map\", \"number\", \"string\"",
            pctl_quote(&q, tname));
    list = pctl_get_array(v->value, "enum", PCTL_DEF_MAX_ENUM);
    if (list)
        PCTL_CHECK(check_enum(s, t, list));
    def = json_object_get(v->value, "default");
    if (!def || json_is_null(def))
        return 0;
    if (!(dv = pctl_ptype_default(t, def)))
        return PLANCTL_ENOMEM;
    if (!pctl_ptype_is(t, dv))
        rc = pctl_sink_fail(s, "default", PCTL_FERR_TYPE, NULL, WRONG_TYPE,
                            pctl_ptype_name(t), pctl_ptype_expect(t));
    else if (json_array_size(list) > 0 && !pctl_pvalue_in(list, dv))
        rc = pctl_sink_fail(s, "default", PCTL_FERR_UNSUPPORTED, NULL,
                            "%s: not one of the values in enum", echo(&q, dv));
    json_decref(dv);
    return rc;
}

/* A parameter's type is known, and its default and enum are of it. */
int pctl_rule_param_values(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)data;
    return pctl_rule_walk(in, s, param_values_node);
}

/* ---- metadata ------------------------------------------------------------ */

/* maintainers[i]: {"name": string (required), "email": string}. */
const char *const pctl_maintainer_fields[2] = {"name", "email"};

static int maintainer(pctl_sink *s, const json_t *m)
{
    const char *const *known = pctl_maintainer_fields;
    size_t i;

    if (!json_is_object(m))
        return pctl_sink_fail(s, NULL, PCTL_FERR_TYPE, NULL,
                              "must be an object");
    PCTL_CHECK(pctl_sink_unknown(s, "maintainers", m, known,
                                 PCTL_COUNT(pctl_maintainer_fields)));
    if (!json_object_get(m, "name"))
        PCTL_CHECK(
            pctl_sink_fail(s, "name", PCTL_FERR_REQUIRED, NULL, "%s", ""));
    for (i = 0; i < PCTL_COUNT(pctl_maintainer_fields); i++) {
        const json_t *f = json_object_get(m, known[i]);

        if (f && !json_is_string(f))
            PCTL_CHECK(pctl_sink_fail(s, known[i], PCTL_FERR_TYPE, NULL,
                                      "must be a string"));
    }
    return 0;
}

static int meta_node(pctl_sink *s, const pctl_visit *v, void *data)
{
    const json_t *list;
    size_t i, mark;
    char msg[sizeof(pctl_qbuf) + 80];
    pctl_qbuf q;

    (void)data;
    if (v->node != PCTL_NODE_ROOT)
        return 0;
    list = pctl_get_array(v->value, "maintainers", PCTL_DEF_MAX_MAINTAINERS);
    for (i = 0; i < json_array_size(list); i++) {
        mark = pctl_sink_mark(s);
        PCTL_CHECK(pctl_sink_key(s, "maintainers"));
        PCTL_CHECK(pctl_sink_index(s, i));
        PCTL_CHECK(maintainer(s, json_array_get(list, i)));
        pctl_sink_back(s, mark);
    }
    list = pctl_get_array(v->value, "upgradableFrom", PCTL_DEF_MAX_UPGRADABLE);
    for (i = 0; i < json_array_size(list); i++) {
        const json_t *e = json_array_get(list, i);
        const char *ver = pctl_string(e);

        if (!json_is_string(e)) {
            PCTL_CHECK(fail_at(s, "upgradableFrom", i, PCTL_FERR_TYPE,
                               "must be a string"));
        } else if (!pctl_version_valid(ver)) {
            snprintf(msg, sizeof msg, "%s: %s",
                     pctl_quote(&q, json_string_value(e)), pctl_version_rule);
            PCTL_CHECK(fail_at(s, "upgradableFrom", i, PCTL_FERR_INVALID, msg));
        }
    }
    return 0;
}

/* Maintainers are {name, email}; upgradableFrom lists versions. */
int pctl_rule_meta(const pctl_vin *in, pctl_sink *s, void *data)
{
    (void)data;
    return pctl_rule_walk(in, s, meta_node);
}
