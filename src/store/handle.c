/*
 * handle.c - the planctl handle: opening it on a database (the backend
 * does the database's part: sql.h; backends.c says which), its limits.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/dbname.h"
#include "core/error.h"
#include "store/embed.h"
#include "store/sql.h"
#include "store/store.h"

int planctl_process_init(void)
{
    struct rlimit rl;

    /* Every shell task holds descriptors (its output pipes): as many as
     * the process may have, rather than the shell's default soft limit. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (pctl_db_sqlite.process_init &&
        pctl_db_sqlite.process_init() == PLANCTL_EBUSY)
        return pctl_thread_err(PLANCTL_EBUSY,
                               "SQLite is already initialised in this "
                               "process: its memory statistics stay on");
    return 0;
}

int planctl_set_event_limits(planctl *p, int64_t warn_at, int64_t max)
{
    if (!p)
        return pctl_err_arg(p, "p");
    if (warn_at < 0 || max < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "event limits must not be negative (0 keeps the "
                        "default)");
    p->run_events_warn = warn_at ? warn_at : PLANCTL_RUN_EVENTS_WARN;
    p->run_events_max = max ? max : PLANCTL_RUN_EVENTS_MAX;
    return 0;
}

int planctl_schema_version(const planctl *p)
{
    return p ? p->schema_version : 0;
}

int planctl_schema_version_supported(void)
{
    return pctl_migrations_count;
}

int planctl_open(planctl **out, const char *path,
                 const planctl_open_options *opts)
{
    planctl_open_options defaults = PLANCTL_OPEN_OPTIONS_INIT;
    const planctl_open_options *o = opts ? opts : &defaults;
    const pctl_db_methods *m;
    planctl *p;
    int rc;

    if (!out)
        return pctl_err_arg(NULL, "out");
    *out = NULL;
    p = pctl_calloc(1, sizeof *p);
    if (!p)
        return pctl_thread_err(PLANCTL_ENOMEM, "out of memory");
    if (pthread_mutex_init(&p->intr_lock, NULL) != 0) {
        pctl_free(p);
        return pctl_thread_err(PLANCTL_ENOMEM, "out of memory");
    }
    *out = p;
    planctl_set_clock(p, NULL, NULL);
    p->run_events_warn = PLANCTL_RUN_EVENTS_WARN;
    p->run_events_max = PLANCTL_RUN_EVENTS_MAX;
    if (!path || !*path)
        return pctl_err(p, PLANCTL_EINVAL, "database path is empty");
    m = pctl_backend_for(path);
    /* A server's URI is not a file name: say so rather than create a file
     * called "postgres:" (no password is in the message). */
    if (m == &pctl_db_sqlite && pctl_is_server_uri(path))
        return pctl_err(p, PLANCTL_EINVAL,
                        "this planctl was built without PostgreSQL; give a "
                        "SQLite file path, or build with "
                        "-DPLANCTL_WITH_POSTGRES=ON");
    if (o->version != PLANCTL_OPEN_OPTIONS_VERSION)
        return pctl_err(p, PLANCTL_EINVAL,
                        "planctl_open_options version %u is not supported",
                        o->version);
    /* Messages name the database without its password. */
    p->path = m->shown ? m->shown(path) : pctl_strdup(path);
    if (!p->path) {
        planctl_close(p);
        *out = NULL;
        return PLANCTL_ENOMEM;
    }
    p->readonly = (o->flags & PLANCTL_OPEN_READONLY) != 0;
    p->check_cache = (o->flags & PLANCTL_OPEN_CHECK_CACHE) != 0;

    p->open_target = path;
    rc = m->open(&p->conn, p, o);
    p->open_target = NULL;
    return rc < 0 ? rc : 0;
}

void planctl_close(planctl *p)
{
    if (!p)
        return;
    if (p->conn) {
        pctl_q_finalize_all(p);
        p->conn->m->close(p->conn);
    }
    pctl_events_free(p); /* the room a queue kept (journal.c) */
    pctl_kinds_free(p->kinds);
    pctl_free(p->fleet_name);
    pctl_free(p->ended_runs);
    pctl_free(p->fleet_peers);
    pctl_free(p->actor);
    pctl_free(p->path);
    pctl_free(p->errmsg);
    pthread_mutex_destroy(&p->intr_lock);
    pctl_free(p);
}

int planctl_interrupt(planctl *p)
{
    if (!p)
        return pctl_err_arg(NULL, "p");
    pthread_mutex_lock(&p->intr_lock);
    if (p->intr_sections > 0) {
        atomic_store(&p->intr, 1);
        if (p->conn && p->conn->m->interrupt)
            p->conn->m->interrupt(p->conn);
    }
    pthread_mutex_unlock(&p->intr_lock);
    return 0;
}

int planctl_data_version(int64_t *out, planctl *p)
{
    if (!out || !p)
        return pctl_err_arg(p, !p ? "p" : "out");
    return pctl_data_version(out, p);
}

int planctl_set_actor(planctl *p, const char *actor)
{
    char *copy = NULL;
    size_t i;

    if (!p)
        return pctl_err_arg(p, "p");
    if (actor) {
        if (!*actor || strlen(actor) > 128)
            return pctl_err(p, PLANCTL_EINVAL,
                            "an actor is 1 to 128 bytes of printable text");
        for (i = 0; actor[i]; i++)
            if ((unsigned char)actor[i] < 0x20 || actor[i] == 0x7f)
                return pctl_err(p, PLANCTL_EINVAL,
                                "an actor is 1 to 128 bytes of printable text");
        if (!(copy = pctl_strdup(actor)))
            return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    pctl_free(p->actor);
    p->actor = copy;
    return 0;
}
