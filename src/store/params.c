/*
 * params.c - an instance's parameter values: the explicit values given
 * (parsed by each parameter's type, checked against its enum), removed
 * (unset) or kept (immutable), and the snapshot a run gets (defaults
 * overlaid with the explicit values).
 *
 * Every problem with the values of one call is reported together, in one
 * EINVAL message, so a user fixes them in one go.  Values stored before
 * parameters had types (strings, whatever the type) are taken as they
 * are: only values given now are parsed.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/pipeline.h"
#include "core/secrets.h"
#include "core/utf8.h"
#include "core/walk.h"
#include "store/store.h"

/* The most an @FILE value may hold. */
#define MAX_FILE_VALUE PCTL_DEF_MAX_BYTES

/* Appends "; " + text to *msg (a growing pctl_malloc'd string), and frees
 * text.  Returns 0 or PLANCTL_ENOMEM. */
static int add_problem(char **msg, char *text)
{
    char *n = NULL;

    if (text)
        n = *msg ? pctl_asprintf("%s; %s", *msg, text) : pctl_strdup(text);
    pctl_free(text);
    if (!n)
        return PLANCTL_ENOMEM;
    pctl_free(*msg);
    *msg = n;
    return 0;
}

/* The end of a call that gathered problems: rc when it failed (out of
 * memory), else EINVAL with every problem when there is one, else 0.
 * Frees problems. */
static int finish(planctl *p, int rc, char *problems)
{
    if (rc < 0)
        rc = pctl_err(p, rc, "out of memory");
    else if (problems)
        rc = pctl_err(p, PLANCTL_EINVAL, "%s", problems);
    pctl_free(problems);
    return rc;
}

/* The unknown-name line, with the closest known name. */
static char *unknown_line(const pctl_def *def, const char *name)
{
    const char **names = pctl_calloc(def->nparams + 1, sizeof *names);
    const char *hint;
    char *line;
    size_t i;

    if (!names)
        return NULL;
    for (i = 0; i < def->nparams; i++)
        names[i] = def->params[i].name;
    hint = pctl_closest(name, names, def->nparams);
    line = hint ? pctl_asprintf("unknown parameter \"%s\" for %s@%s (did you "
                                "mean \"%s\"?)",
                                name, def->name, def->version, hint)
                : pctl_asprintf("unknown parameter \"%s\" for %s@%s", name,
                                def->name, def->version);
    pctl_free(names);
    return line;
}

/* The text of file path into *out (pctl_free).  Returns 0, or -1 with
 * errno set (EFBIG: larger than MAX_FILE_VALUE; EISDIR: a directory,
 * which fopen() opens and reading then fails with a mere EIO). */
static int read_file(char **out, const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    struct stat st;

    *out = NULL;
    if (!f)
        return -1;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        errno = EISDIR;
        return -1;
    }
    do {
        if (n + 4096 + 1 > cap) {
            char *nb;

            cap = cap ? cap * 2 : 8192;
            if (!(nb = pctl_realloc(buf, cap))) {
                errno = ENOMEM;
                break;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n > MAX_FILE_VALUE)
            errno = EFBIG;
    } while (got > 0 && n <= MAX_FILE_VALUE);
    if (ferror(f) || n > MAX_FILE_VALUE || !buf || errno == ENOMEM) {
        int e = ferror(f) ? EIO : n > MAX_FILE_VALUE ? EFBIG : ENOMEM;

        fclose(f);
        pctl_free(buf);
        errno = e;
        return -1;
    }
    fclose(f);
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* values listed for a message: "a", "b", 3 (the first 10, then ...). */
static char *enum_list(const char *enum_json)
{
    json_t *list = json_loads(enum_json, 0, NULL);
    char *out = pctl_strdup(""), *item, *n;
    size_t i;

    for (i = 0; out && i < json_array_size(list); i++) {
        if (i == 10) {
            n = pctl_asprintf("%s, ...", out);
            pctl_free(out);
            out = n;
            break;
        }
        item = NULL;
        if (pctl_json_encode(&item, json_array_get(list, i),
                             JSON_ENCODE_ANY | JSON_COMPACT) < 0) {
            pctl_free(out);
            out = NULL;
            break;
        }
        n = pctl_asprintf("%s%s%s", out, i ? ", " : "", item);
        pctl_free(item);
        pctl_free(out);
        out = n;
    }
    json_decref(list);
    return out;
}

/*
 * The value text for parameter pd as a value (*out, a new reference), or
 * a problem line in *line (*out NULL).  With files, an array's or a
 * map's text "@PATH" is read from the file PATH.  Returns 0 or
 * PLANCTL_ENOMEM.
 */
static int parse_value(json_t **out, char **line, const pctl_param_def *pd,
                       const char *text, int files)
{
    int from_file =
        files && text[0] == '@' &&
        (pd->type == PCTL_PTYPE_ARRAY || pd->type == PCTL_PTYPE_MAP);
    char *content = NULL, *given;
    pctl_qbuf q;
    int rc;

    *out = NULL;
    *line = NULL;
    if (from_file && read_file(&content, text + 1) < 0) {
        if (errno == ENOMEM)
            return PLANCTL_ENOMEM;
        *line = pctl_asprintf(
            "parameter \"%s\": cannot read %s: %s", pd->name, text + 1,
            errno == EFBIG    ? "larger than 4 MiB"
            : errno == EISDIR ? "it is a directory, not a file"
                              : strerror(errno));
        return *line ? 0 : PLANCTL_ENOMEM;
    }
    rc = pctl_ptype_parse(out, pd->type, from_file ? content : text);
    pctl_free(content);
    if (rc != PLANCTL_EINVAL)
        return rc;
    /* A secret's value is not repeated, even a wrong one. */
    given = from_file    ? pctl_asprintf("the content of %s", text + 1)
            : pd->secret ? pctl_strdup(PCTL_SECRET_MASK)
                         : pctl_strdup(pctl_quote(&q, text));
    if (given)
        *line = pctl_asprintf("parameter \"%s\" must be %s, not %s", pd->name,
                              pctl_ptype_expect(pd->type), given);
    pctl_free(given);
    return *line ? 0 : PLANCTL_ENOMEM;
}

/* The line for a value outside pd's enum: a string quoted as text, any
 * other value as its JSON. */
static char *enum_line(const pctl_param_def *pd, const json_t *v)
{
    char *allowed = enum_list(pd->enum_json), *given = NULL, *line = NULL;
    pctl_qbuf q;

    if (pd->secret)
        given = pctl_strdup(PCTL_SECRET_MASK);
    else if (json_is_string(v))
        given = pctl_strdup(pctl_quote(&q, json_string_value(v)));
    else if (pctl_json_encode(&given, v, JSON_ENCODE_ANY | JSON_COMPACT) < 0)
        given = NULL;
    if (allowed && given)
        line = pctl_asprintf("parameter \"%s\" must be one of %s, not %s",
                             pd->name, allowed, given);
    pctl_free(allowed);
    pctl_free(given);
    return line;
}

/* 1 if name is given among the first n values. */
static int given_before(const planctl_param *values, size_t n, const char *name)
{
    size_t j;

    for (j = 0; j < n; j++)
        if (values[j].name && values[j].value &&
            strcmp(values[j].name, name) == 0)
            return 1;
    return 0;
}

/* One -p value: checked, parsed by type and enum, set in explicit_obj;
 * a problem is added to *problems. */
static int merge_value(char **problems, json_t *explicit_obj,
                       const pctl_def *def, const planctl_param *values,
                       size_t i, int files)
{
    const planctl_param *pv = &values[i];
    const pctl_param_def *pd;
    char *line = NULL;
    json_t *v = NULL;

    /* A value-less or name-less entry is how a front end passes on a
     * NAME=VALUE it could not split (the CLI's -p), so its syntax is
     * reported with every other problem. */
    if (!pv->value || !pv->name[0])
        return add_problem(problems,
                           pctl_asprintf("invalid parameter \"%s%s%s\"; "
                                         "expected NAME=VALUE",
                                         pv->name, pv->value ? "=" : "",
                                         pv->value ? pv->value : ""));
    if (given_before(values, i, pv->name))
        return add_problem(problems, pctl_asprintf("parameter \"%s\" given "
                                                   "twice",
                                                   pv->name));
    if (!(pd = pctl_def_param(def, pv->name)))
        return add_problem(problems, unknown_line(def, pv->name));
    /* JSON text holds only UTF-8; refuse other bytes by name rather than
     * let json_string() fail as if memory ran out. */
    if (!pctl_utf8_valid(pv->value, strlen(pv->value))) {
        PCTL_CHECK(
            add_problem(problems, pctl_asprintf("parameter \"%s\" has a value "
                                                "that is not valid UTF-8; give "
                                                "text",
                                                pv->name)));
        /* A stand-in, so the name is not also reported missing; the call
         * fails and nothing is stored. */
        return json_object_set_new(explicit_obj, pv->name, json_string("")) < 0
                   ? PLANCTL_ENOMEM
                   : 0;
    }
    PCTL_CHECK(parse_value(&v, &line, pd, pv->value, files));
    if (v && !pctl_enum_has(pd->enum_json, v) && !(line = enum_line(pd, v))) {
        json_decref(v);
        return PLANCTL_ENOMEM;
    }
    if (line) {
        json_decref(v);
        PCTL_CHECK(add_problem(problems, line));
        v = json_string(""); /* a stand-in, as above */
    }
    return v && json_object_set_new(explicit_obj, pv->name, v) == 0
               ? 0
               : PLANCTL_ENOMEM;
}

/* One --unset name: removed from explicit_obj (recorded in removed) when
 * set there; not set is nothing to do. */
static int unset_value(char **problems, json_t *explicit_obj, json_t *removed,
                       const pctl_def *def, const pctl_param_change *ch,
                       size_t i)
{
    const char *name = ch->unset[i];
    const pctl_param_def *pd = pctl_def_param(def, name);
    json_t *v;
    size_t j;

    for (j = 0; j < i; j++)
        if (strcmp(ch->unset[j], name) == 0)
            return add_problem(problems,
                               pctl_asprintf("parameter \"%s\" given twice "
                                             "to unset",
                                             name));
    if (given_before(ch->values, ch->nvalues, name))
        return add_problem(problems,
                           pctl_asprintf("parameter \"%s\" is both given a "
                                         "value and unset; choose one",
                                         name));
    if (!pd)
        return add_problem(problems, unknown_line(def, name));
    if (pd->required && !pd->default_json)
        return add_problem(problems,
                           pctl_asprintf("parameter \"%s\" is required by "
                                         "%s@%s and has no default, so it "
                                         "cannot be unset; give it another "
                                         "value with -p %s=VALUE",
                                         name, def->name, def->version, name));
    if (!(v = json_object_get(explicit_obj, name)))
        return 0;
    if (json_object_set(removed, name, v) < 0)
        return PLANCTL_ENOMEM;
    return json_object_del(explicit_obj, name) < 0 ? PLANCTL_ERROR : 0;
}

/*
 * Applies ch to explicit_obj (owned by the caller), reporting every
 * problem in one message.  With drop_unknown, names the definition does
 * not define that were already in the object are removed silently (an
 * upgrade to a version without them).
 */
static int merge_params(planctl *p, json_t *explicit_obj, json_t *removed,
                        const pctl_def *def, const pctl_param_change *ch,
                        int drop_unknown)
{
    char *problems = NULL;
    const char *key;
    void *tmp;
    json_t *v;
    size_t i;
    int rc = 0;

    if (drop_unknown) {
        json_object_foreach_safe(explicit_obj, tmp, key, v)
        {
            if (!pctl_def_param(def, key))
                json_object_del(explicit_obj, key);
        }
    }
    for (i = 0; i < ch->nvalues; i++)
        if (!ch->values[i].name)
            return pctl_err(p, PLANCTL_EINVAL,
                            "a parameter name must not be NULL");
    for (i = 0; i < ch->nunset; i++)
        if (!ch->unset[i])
            return pctl_err(p, PLANCTL_EINVAL,
                            "a parameter name to unset must not be NULL");
    for (i = 0; rc == 0 && i < ch->nvalues; i++)
        rc =
            merge_value(&problems, explicit_obj, def, ch->values, i, ch->files);
    for (i = 0; rc == 0 && i < ch->nunset; i++)
        rc = unset_value(&problems, explicit_obj, removed, def, ch, i);
    return finish(p, rc, problems);
}

int pctl_params_resolve(char **out, planctl *p, const pctl_def *def,
                        const char *explicit_json)
{
    json_t *explicit_obj = json_loads(explicit_json, 0, NULL);
    json_t *snap = json_object();
    char *problems = NULL;
    size_t i;
    int rc = 0;

    *out = NULL;
    if (!explicit_obj || !snap) {
        json_decref(explicit_obj);
        json_decref(snap);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    for (i = 0; rc == 0 && i < def->nparams; i++) {
        const pctl_param_def *pd = &def->params[i];
        json_t *v = json_object_get(explicit_obj, pd->name);

        if (v) {
            if (json_object_set(snap, pd->name, v) < 0)
                rc = PLANCTL_ENOMEM;
        } else if (pd->default_json) {
            v = json_loads(pd->default_json, JSON_DECODE_ANY, NULL);
            if (!v || json_object_set_new(snap, pd->name, v) < 0)
                rc = PLANCTL_ENOMEM;
        } else if (pd->required) {
            rc = add_problem(&problems,
                             pctl_asprintf("parameter \"%s\" is required by "
                                           "%s@%s; set it with -p %s=VALUE",
                                           pd->name, def->name, def->version,
                                           pd->name));
        }
    }
    if (rc == 0 && !problems) {
        *out = json_dumps(snap, JSON_COMPACT);
        if (!*out)
            rc = PLANCTL_ENOMEM;
    }
    json_decref(explicit_obj);
    json_decref(snap);
    return finish(p, rc, problems);
}

/*
 * An upgrade keeps an immutable parameter's value: one that had a value
 * before (in snapshot before) and is not given now keeps that value as
 * an explicit one when the new version's default is another.
 */
static int pin_immutables(json_t *explicit_obj, const pctl_def *def,
                          const json_t *before)
{
    size_t i;

    for (i = 0; i < def->nparams; i++) {
        const pctl_param_def *pd = &def->params[i];
        json_t *bv = json_object_get(before, pd->name), *dv;
        int same;

        if (!pd->immutable || !bv || json_is_null(bv) ||
            json_object_get(explicit_obj, pd->name))
            continue;
        dv = pd->default_json
                 ? json_loads(pd->default_json, JSON_DECODE_ANY, NULL)
                 : NULL;
        if (pd->default_json && !dv)
            return PLANCTL_ENOMEM;
        same = dv && pctl_pvalue_equal(bv, dv);
        json_decref(dv);
        if (!same && json_object_set(explicit_obj, pd->name, bv) < 0)
            return PLANCTL_ENOMEM;
    }
    return 0;
}

int pctl_params_apply(char **explicit_text, char **snap, json_t *removed,
                      planctl *p, json_t *explicit_obj, const pctl_def *def,
                      const pctl_param_change *ch, const json_t *pin_from)
{
    char *first = NULL;
    int rc = merge_params(p, explicit_obj, removed, def, ch, pin_from != NULL);

    *explicit_text = *snap = NULL;
    if (rc == PLANCTL_EINVAL && !(first = pctl_strdup(planctl_errmsg(p))))
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc < 0 && rc != PLANCTL_EINVAL)
        return rc;
    if (pin_from && pin_immutables(explicit_obj, def, pin_from) < 0) {
        pctl_free(first);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (!(*explicit_text =
              json_dumps(explicit_obj, JSON_COMPACT | JSON_SORT_KEYS))) {
        pctl_free(first);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    rc = pctl_params_resolve(snap, p, def, *explicit_text);
    if (first) {
        if (rc == PLANCTL_EINVAL)
            rc =
                pctl_err(p, PLANCTL_EINVAL, "%s; %s", first, planctl_errmsg(p));
        else if (rc == 0)
            rc = pctl_err(p, PLANCTL_EINVAL, "%s", first);
        pctl_free(first);
    }
    return rc;
}

int pctl_params_changed(const char ***out, size_t *n, const pctl_def *def,
                        const json_t *before, const json_t *after,
                        const json_t *removed)
{
    const char **v = pctl_calloc(def->nparams + 1, sizeof *v);
    size_t i;

    *n = 0;
    *out = v;
    if (!v)
        return PLANCTL_ENOMEM;
    for (i = 0; i < def->nparams; i++) {
        const char *name = def->params[i].name;
        json_t *a = json_object_get(before, name);
        json_t *b = json_object_get(after, name);

        /* json_equal(NULL, NULL) is 0, so absence is compared apart; an
         * unset value is a change even when the default equals it. */
        if ((!a) != (!b) || (a && b && !json_equal(a, b)) ||
            json_object_get(removed, name))
            v[(*n)++] = name;
    }
    return 0;
}

int pctl_params_check_immutable(planctl *p, const pctl_def *def,
                                const json_t *before, const json_t *after,
                                const json_t *removed)
{
    char *problems = NULL;
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < def->nparams; i++) {
        const pctl_param_def *pd = &def->params[i];
        json_t *bv = json_object_get(before, pd->name);
        json_t *av = json_object_get(after, pd->name);

        if (!pd->immutable || !bv || json_is_null(bv))
            continue;
        if (json_object_get(removed, pd->name))
            rc = add_problem(&problems,
                             pctl_asprintf("parameter \"%s\" is immutable: "
                                           "once it has a value it keeps "
                                           "it, so it cannot be unset",
                                           pd->name));
        else if (!av || !pctl_pvalue_equal(bv, av))
            rc = add_problem(&problems,
                             pctl_asprintf("parameter \"%s\" is immutable: "
                                           "once it has a value it keeps "
                                           "it; create a new instance for "
                                           "another value",
                                           pd->name));
    }
    return finish(p, rc, problems);
}
