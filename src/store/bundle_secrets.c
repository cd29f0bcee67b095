/*
 * bundle_secrets.c - importing a bundle that leaves the values of secret
 * parameters out (planctl-definition(5) "SECRET PARAMETERS"): the instance's
 * "withheld" names them, null stands for each value, and the importer gives
 * them again (planctl_import_options.params, the CLI's import -p NAME=VALUE).
 *
 * A value given is taken as the one the instance had: it goes back in
 * every place the export left out, the instance's values and
 * last_applied, each run's snapshot and its creation event, so replay and
 * verify agree with the rows and a retry of an imported run has it.
 */
#include <jansson.h>
#include <string.h>

#include "core/alloc.h"
#include "core/ptype.h"
#include "core/secrets.h"
#include "store/bundle.h"

/* The value given for name, or NULL. */
static const char *given(const planctl_import_options *opts, const char *name)
{
    size_t i;

    for (i = 0; opts->version >= 2 && i < opts->nparams; i++)
        if (opts->params[i].name && !strcmp(opts->params[i].name, name))
            return opts->params[i].value;
    return NULL;
}

/* The parameter name of the instance's definition (d), else of the first
 * of the bundle's definitions that has it. */
static const pctl_param_def *param_of(bundle_imp *m, const pctl_def *d,
                                      const char *name)
{
    const pctl_param_def *pd = d ? pctl_def_param(d, name) : NULL;
    size_t i;

    for (i = 0; !pd && i < m->ndefs; i++)
        if (m->defs[i].def)
            pd = pctl_def_param(m->defs[i].def, name);
    return pd;
}

/* The refusal naming the withheld names not given (missing), with the
 * flags that give them: "-p A=VALUE -p B=VALUE". */
static int missing_err(bundle_imp *m, const json_t *missing)
{
    char *names = pctl_strdup(""), *flags = pctl_strdup(""), *t;
    size_t i, n = json_array_size(missing);
    int rc;

    for (i = 0; names && flags && i < n; i++) {
        const char *name = json_string_value(json_array_get(missing, i));

        t = pctl_asprintf("%s%s\"%s\"", names, i ? ", " : "", name);
        pctl_free(names);
        names = t;
        t = pctl_asprintf("%s%s-p %s=VALUE", flags, i ? " " : "", name);
        pctl_free(flags);
        flags = t;
    }
    rc = !names || !flags
             ? pctl_err(m->p, PLANCTL_ENOMEM, "out of memory")
             : pctl_err(m->p, PLANCTL_EINVAL,
                        "the bundle leaves out the value%s of secret "
                        "parameter%s %s (exported without secrets); give %s "
                        "in the import's parameters",
                        n > 1 ? "s" : "", n > 1 ? "s" : "", names,
                        n > 1 ? "them" : "it");
    pctl_free(names);
    pctl_free(flags);
    return rc;
}

int pctl_bundle_secrets_take(bundle_imp *m, const json_t *in)
{
    const json_t *withheld = json_object_get(in, "withheld");
    const json_t *dref = json_object_get(in, "definition");
    bundle_row *d = pctl_bundle_find_def(
        m, json_string_value(json_object_get(dref, "name")),
        json_string_value(json_object_get(dref, "version")));
    json_t *missing = NULL;
    const json_t *nm;
    size_t i;
    int rc = 0;

    json_decref(m->secrets);
    m->secrets = NULL;
    /* A bundle of a planctl before secret parameters has none. */
    if (!withheld || json_is_null(withheld))
        return 0;
    if (!json_is_array(withheld))
        return pctl_bundle_bad(m, "instance: \"withheld\" must be an array "
                                  "of parameter names");
    if (!(m->secrets = json_object()) || !(missing = json_array()))
        rc = pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    json_array_foreach(withheld, i, nm)
    {
        const char *name = json_string_value(nm), *text;
        const pctl_param_def *pd;
        json_t *v = NULL;

        if (rc < 0)
            break;
        if (!name || !(pd = param_of(m, d ? d->def : NULL, name))) {
            rc = pctl_bundle_bad(m,
                                 "instance: \"withheld\" must name parameters "
                                 "of the bundle's definitions");
            break;
        }
        if (!(text = given(m->opts, name))) {
            if (json_array_append_new(missing, json_string(name)) < 0)
                rc = pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
            continue;
        }
        rc = pctl_ptype_parse(&v, pd->type, text);
        /* The value is not repeated: it is a secret. */
        if (rc == PLANCTL_EINVAL)
            rc = pctl_err(m->p, PLANCTL_EINVAL,
                          "parameter \"%s\" must be %s, not %s", name,
                          pctl_ptype_expect(pd->type), PCTL_SECRET_MASK);
        else if (rc == 0 && !pctl_enum_has(pd->enum_json, v)) {
            json_decref(v);
            rc = pctl_err(m->p, PLANCTL_EINVAL,
                          "parameter \"%s\" must be one of the values of "
                          "its enum, not %s",
                          name, PCTL_SECRET_MASK);
        } else if (rc < 0 || json_object_set_new(m->secrets, name, v) < 0 ||
                   json_array_append_new(m->used, json_string(name)) < 0)
            rc = pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && json_array_size(missing))
        rc = missing_err(m, missing);
    json_decref(missing);
    return rc;
}

int pctl_bundle_secrets_put(bundle_imp *m, json_t *params)
{
    int n = m->secrets ? pctl_secrets_restore(params, m->secrets) : 0;

    return n < 0 ? pctl_err(m->p, PLANCTL_ENOMEM, "out of memory") : n > 0;
}

int pctl_bundle_secrets_put_text(bundle_imp *m, json_t *o, const char *key,
                                 int in_member)
{
    const char *text = json_string_value(json_object_get(o, key));
    json_t *v;
    char *out = NULL;
    int rc;

    if (!text || !m->secrets || json_object_size(m->secrets) == 0 ||
        !(v = json_loads(text, 0, NULL)))
        return 0; /* nothing to put back, or what the checks refuse */
    rc = pctl_bundle_secrets_put(m,
                                 in_member ? json_object_get(v, "params") : v);
    if (rc == 1 && (!(out = json_dumps(v, JSON_COMPACT)) ||
                    json_object_set_new(o, key, json_string(out)) < 0))
        rc = pctl_err(m->p, PLANCTL_ENOMEM, "out of memory");
    pctl_free(out);
    json_decref(v);
    return rc;
}

int pctl_bundle_secrets_check_unused(planctl *p,
                                     const planctl_import_options *opts,
                                     const json_t *used)
{
    size_t i, j;

    for (i = 0; opts->version >= 2 && i < opts->nparams; i++) {
        const planctl_param *pv = &opts->params[i];
        const json_t *u;
        int found = 0;

        if (!pv->name || !pv->value || !pv->name[0])
            return pctl_err(p, PLANCTL_EINVAL,
                            "invalid parameter \"%s\"; expected NAME=VALUE",
                            pv->name ? pv->name : "");
        for (j = 0; j < i; j++)
            if (opts->params[j].name && !strcmp(opts->params[j].name, pv->name))
                return pctl_err(p, PLANCTL_EINVAL,
                                "parameter \"%s\" given twice", pv->name);
        json_array_foreach(used, j, u) found |=
            !strcmp(json_string_value(u), pv->name);
        if (!found)
            return pctl_err(p, PLANCTL_EINVAL,
                            "parameter \"%s\" is not a secret parameter whose "
                            "value the bundle leaves out: an import takes "
                            "values only for those; change other values "
                            "after the import",
                            pv->name);
    }
    return 0;
}
