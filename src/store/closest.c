/*
 * closest.c - "did you mean" for names that are not found: the closest
 * registered instance, definition or plan name (by pctl_closest()'s edit
 * distance), worked into the not-found message.  Reading the names can
 * fail: then that error is returned instead of ENOTFOUND.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/ferr.h"
#include "store/store.h"

/* The name of query q's rows (column 0) closest to word, copied to buf
 * ("" when none is close).  A failure to read them is returned, never
 * swallowed: SQLite may have rolled the caller's transaction back (as it
 * does when memory runs out), and its later writes must not go on
 * outside it. */
static int closest_row(char *buf, size_t size, planctl *p, pctl_query q,
                       const char *word)
{
    pctl_stmt *st = pctl_q(p, q);
    char **names = NULL, **grown;
    const char *best;
    size_t n = 0, cap = 0, i;
    int step, rc = 0;

    buf[0] = '\0';
    if (!st)
        return pctl_q_err(p);
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        const char *name = pctl_col_text(st, 0);

        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            grown = pctl_realloc(names, cap * sizeof *names);
            if (!grown) {
                rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
                break;
            }
            names = grown;
        }
        if (!name || !(names[n] = pctl_strdup(name)))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        else
            n++;
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    best = rc == 0 ? pctl_closest(word, (const char *const *)names, n) : NULL;
    if (best)
        snprintf(buf, size, "%s", best);
    for (i = 0; i < n; i++)
        pctl_free(names[i]);
    pctl_free(names);
    return rc;
}

/* " (did you mean \"NAME\"?)" or "" into buf. */
static const char *hint_text(char *buf, size_t size, const char *best)
{
    if (best && best[0])
        snprintf(buf, size, " (did you mean \"%s\"?)", best);
    else
        buf[0] = '\0';
    return buf;
}

/* ENOTFOUND: "<what> \"<name>\" <state> (did you mean ...)", the hint
 * from the names query q gives.  How to fix it is the caller's to say, in
 * its own words (the CLI's hints.c). */
static int not_found(planctl *p, pctl_query q, const char *what,
                     const char *name, const char *state)
{
    char best[PCTL_NAME_MAX + 1], hint[PCTL_NAME_MAX + 32];
    int rc = closest_row(best, sizeof best, p, q, name);

    if (rc < 0)
        return rc;
    return pctl_err(p, PLANCTL_ENOTFOUND, "%s \"%s\" %s%s", what, name, state,
                    hint_text(hint, sizeof hint, best));
}

int pctl_err_no_instance(planctl *p, const char *name)
{
    return not_found(p, PCTL_Q_hint_instance_names, "instance", name,
                     "not found");
}

int pctl_err_no_definition(planctl *p, const char *name)
{
    return not_found(p, PCTL_Q_hint_definition_names, "definition", name,
                     "is not registered");
}

int pctl_err_no_plan(planctl *p, const pctl_def *def, const char *plan)
{
    const char *names[PCTL_DEF_MAX_PLANS];
    char hint[PCTL_NAME_MAX + 32], list[512] = "";
    size_t i,
        n = def->nplans < PCTL_DEF_MAX_PLANS ? def->nplans : PCTL_DEF_MAX_PLANS;

    for (i = 0; i < n; i++) {
        names[i] = def->plans[i].name;
        if (strlen(list) + strlen(names[i]) + 3 < sizeof list)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                     i ? ", " : "", names[i]);
    }
    return pctl_err(p, PLANCTL_ENOTFOUND,
                    "definition %s@%s has no plan \"%s\"%s; its plans: %s",
                    def->name, def->version, plan,
                    hint_text(hint, sizeof hint, pctl_closest(plan, names, n)),
                    list);
}

int pctl_err_no_version(planctl *p, const char *name, const char *version)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_hint_definition_versions);
    char list[512] = "";
    size_t len = 0, n = 0, more = 0;
    int step;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_text(st, 1, name);
    while ((step = pctl_step(st)) == PCTL_ROW) {
        const char *v = pctl_col_text(st, 0);
        size_t vlen = v ? strlen(v) : 0;

        /* Room for ", ..." after the last one listed. */
        if (!v || more || len + vlen + 2 + 6 >= sizeof list) {
            more++;
            continue;
        }
        snprintf(list + len, sizeof list - len, "%s%s", n ? ", " : "", v);
        len = strlen(list);
        n++;
    }
    if (step != PCTL_DONE) {
        int rc = pctl_q_fail(st, step);

        pctl_reset(st);
        return rc;
    }
    pctl_reset(st);
    if (n == 0)
        return pctl_err_no_definition(p, name);
    return pctl_err(p, PLANCTL_ENOTFOUND,
                    "definition %s@%s is not registered; its versions: %s%s",
                    name, version, list, more ? ", ..." : "");
}
