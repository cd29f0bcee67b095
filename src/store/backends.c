/*
 * backends.c - the database backends this build has, and which of them a
 * database's name is for.  Backends are listed here, and only here, under
 * the build's options; the handle asks the list and names none of them.
 */
#include "core/alloc.h"
#include "store/sql.h"
#ifdef PLANCTL_WITH_POSTGRES
#include "store/postgres/pg.h"
#endif
#include "store/store.h"

/* In the order they are asked: the first that accepts a name serves it,
 * and the last accepts every name (a file). */
static const pctl_db_methods *const backends[] = {
#ifdef PLANCTL_WITH_POSTGRES
    &pctl_db_postgres,
#endif
    &pctl_db_sqlite,
};

const pctl_db_methods *pctl_backend_for(const char *name)
{
    size_t n = sizeof backends / sizeof backends[0];

    for (size_t i = 0; i + 1 < n; i++)
        if (backends[i]->accepts(name))
            return backends[i];
    return backends[n - 1];
}

char *pctl_uri_shown(const char *name)
{
    const pctl_db_methods *m = pctl_backend_for(name);

    if (m->shown)
        return m->shown(name);
    return pctl_strdup(name ? name : "");
}
