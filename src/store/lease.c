/*
 * lease.c - one engine per database: the lease row, the engine's lock, and
 * the fencing token every engine write checks.
 *
 * This is SQLite's rule; on PostgreSQL several engines share the
 * database (fleet.c).  The lease row (engine_lease, id 1) names the holder
 * (pid, host, since) and carries a token that grows with every
 * acquisition.  Beside it, the engine holds the backend's engine lock
 * (sql.h), an flock() beside the file, which is released the moment the
 * holder dies, however it dies:
 *   - the lock is taken: a live engine holds it -> refused, naming it;
 *   - the lock is free and the row names this host: its holder is dead ->
 *     taken over at once, without waiting for the lease to expire.
 * A row from another host (a shared file system) is taken over only once
 * its heartbeat is older than the TTL.  Every engine transaction
 * first checks that the row still holds its token (pctl_fence), so an
 * engine that lost its lease can never write again: its writes are fenced
 * off.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/enginfo.h"
#include "core/timefmt.h"
#include "store/store.h"

/* Takes the engine's lock; 1 if another process holds it, 0 when taken. */
static int os_lock(planctl *p)
{
    return p->conn->m->engine_lock(p->conn);
}

static void os_unlock(planctl *p)
{
    if (p->conn)
        p->conn->m->engine_unlock(p->conn);
}

/* "pid 123 on host "h", since 14:03:05, heartbeat 2s ago" */
static int describe_holder(planctl *p, pctl_stmt *st, int64_t now,
                           const char *why)
{
    char since[PCTL_TIME_BUF];

    pctl_time_local_short(since, pctl_col_i64(st, 3), now);
    return pctl_err(p, PLANCTL_ECONFLICT,
                    "an engine is already running on %s (pid %lld on host "
                    "\"%s\", since %s%s); stop it first",
                    p->path, (long long)pctl_col_i64(st, 1),
                    pctl_col_text(st, 0), since, why);
}

/*
 * Whether the lease names an engine on this host whose process is gone.
 * Its lock can then still be held for a moment by a child it forked and
 * had not yet exec'd when it died (the lock fd closes at exec): a restart
 * right after kill -9 waits that moment out rather than refusing.
 */
static int holder_gone(planctl *p, const char *host)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_lease_get);
    int gone = 0;

    if (!st)
        return 0;
    if (pctl_step(st) == PCTL_ROW && strcmp(pctl_col_text(st, 0), host) == 0) {
        pid_t pid = (pid_t)pctl_col_i64(st, 1);

        gone = pctl_process_gone(pid, 0);
    }
    pctl_reset(st);
    return gone;
}

int pctl_lease_acquire(int64_t *token, planctl *p, int64_t ttl_ms)
{
    pctl_stmt *st;
    char host[256];
    int64_t now = pctl_now(p), old_token = 0;
    int rc, locked_elsewhere, have_row = 0;

    *token = 0;
    if (pctl_fleet_supported(p))
        return pctl_err(p, PLANCTL_EINVAL,
                        "engines share %s: an engine joins them instead",
                        p->path);
    pctl_host_name(host, sizeof host);
    if ((locked_elsewhere = os_lock(p)) < 0)
        return locked_elsewhere;
    for (int i = 0; locked_elsewhere == 1 && i < 40 && holder_gone(p, host);
         i++) {
        struct timespec pause = {0, 25 * 1000 * 1000};

        nanosleep(&pause, NULL);
        if ((locked_elsewhere = os_lock(p)) < 0)
            return locked_elsewhere;
    }
    if ((rc = pctl_tx_begin(p)) < 0)
        goto out;
    st = pctl_q(p, PCTL_Q_lease_get);
    if (!st) {
        rc = pctl_q_err(p);
        goto end;
    }
    /* Columns: 0 host, 1 pid, 2 token, 3 acquired_at, 4 heartbeat_at. */
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        /* Whether our lock covers the holder: it was on this host. */
        int covered = strcmp(pctl_col_text(st, 0), host) == 0;
        int64_t beat = pctl_col_i64(st, 4);

        have_row = 1;
        old_token = pctl_col_i64(st, 2);
        if (locked_elsewhere)
            rc = describe_holder(p, st, now, "");
        else if (!covered && now - beat < ttl_ms)
            rc = describe_holder(p, st, now,
                                 "; its lease is fresh: it expires after "
                                 "the heartbeat stops");
        else
            rc = 0; /* its lock free where it covers, or stale: take over */
    } else if (rc == PCTL_DONE) {
        rc = locked_elsewhere
                 ? pctl_err(p, PLANCTL_ECONFLICT,
                            "an engine is starting on %s; try again", p->path)
                 : 0;
    } else {
        rc = pctl_q_fail(st, rc);
    }
    pctl_reset(st);
    if (rc == 0) {
        st = pctl_q(p, PCTL_Q_lease_put);
        if (!st) {
            rc = pctl_q_err(p);
        } else {
            char *owner = pctl_asprintf("%s:%ld", host, (long)getpid());

            if (!owner) {
                rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            } else {
                pctl_bind_text(st, 1, owner);
                pctl_bind_text(st, 2, host);
                pctl_bind_i64(st, 3, (int64_t)getpid());
                pctl_bind_i64(st, 4, old_token + 1);
                pctl_bind_i64(st, 5, now);
                rc = pctl_q_exec(st);
                pctl_free(owner);
            }
        }
    }
    if (rc == 0)
        rc = pctl_event_admin(p, 0, "engine",
                              have_row ? "engine started, lease taken over"
                                       : "engine started",
                              "engine", NULL);
end:
    rc = pctl_tx_end(p, rc);
out:
    if (rc < 0) {
        if (!locked_elsewhere)
            os_unlock(p);
        return rc;
    }
    *token = old_token + 1;
    return 0;
}

int pctl_fence(planctl *p, int64_t token)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_lease_token);
    int rc;
    int64_t held = 0;

    if (!st)
        return pctl_q_err(p);
    rc = pctl_step(st);
    if (rc == PCTL_ROW)
        held = pctl_col_i64(st, 0);
    pctl_reset(st);
    if (rc != PCTL_ROW && rc != PCTL_DONE)
        return pctl_q_fail(st, rc);
    if (held != token)
        return pctl_err(p, PLANCTL_ESTALE,
                        "this engine lost its lease on %s (token %lld, now "
                        "%lld); another engine took over",
                        p->path, (long long)token, (long long)held);
    return 0;
}

static int engine_open(planctl *p, int64_t at)
{
    return p->fleet_id ? pctl_tx_begin_engine(p, at) : pctl_tx_begin_at(p, at);
}

/* One of several engines: its row in engines is its fence (fleet.c),
 * checked under the write lock, which declaring it dead takes alone. */
static int engine_fence(planctl *p, int64_t token)
{
    int rc = p->fleet_id ? pctl_fleet_fence(p) : pctl_fence(p, token);

    if (rc < 0)
        pctl_tx_rollback(p);
    return rc;
}

static int engine_begin(planctl *p, int64_t token, int64_t at)
{
    int rc = engine_open(p, at);

    return rc < 0 ? rc : engine_fence(p, token);
}

int pctl_engine_tx_begin(planctl *p, int64_t token)
{
    return engine_begin(p, token, 0);
}

int pctl_engine_pass_open(planctl *p, int64_t at)
{
    return engine_open(p, at);
}

int pctl_engine_pass_fenced(planctl *p, int64_t token)
{
    int rc = engine_fence(p, token);

    if (rc == 0 && (rc = pctl_events_defer(p, 1)) < 0)
        pctl_tx_rollback(p);
    /* The pass's writes that nobody reads back are sent without waiting
     * (pctl_q_exec_later): a pass costs its reads' round trips and its
     * commit's, not one a write.  The pass checks their counts at the
     * end, and a wrong one rolls it back whole, cache and all. */
    if (rc == 0)
        p->tx_later = 1;
    return rc;
}

int pctl_engine_pass_begin(planctl *p, int64_t token, int64_t at)
{
    int rc = pctl_engine_pass_open(p, at);

    return rc < 0 ? rc : pctl_engine_pass_fenced(p, token);
}

int pctl_engine_pass_end(planctl *p, int rc)
{
    rc = pctl_tx_end(p, rc);
    pctl_events_defer(p, 0);
    return rc;
}

int pctl_lease_heartbeat(planctl *p, int64_t token)
{
    pctl_stmt *st;
    int rc = pctl_engine_tx_begin(p, token);

    if (rc < 0)
        return rc;
    st = pctl_q(p, PCTL_Q_lease_beat);
    if (!st)
        return pctl_tx_end(p, pctl_q_err(p));
    pctl_bind_i64(st, 1, token);
    pctl_bind_i64(st, 2, pctl_now(p));
    return pctl_tx_end(p, pctl_q_exec(st));
}

int pctl_lease_release(planctl *p, int64_t token)
{
    pctl_stmt *st;
    int rc = pctl_engine_tx_begin(p, token);

    if (rc == 0) {
        st = pctl_q(p, PCTL_Q_lease_drop);
        if (!st)
            rc = pctl_q_err(p);
        else {
            pctl_bind_i64(st, 1, token);
            rc = pctl_q_exec(st);
        }
        if (rc == 0)
            rc = pctl_event_admin(p, 0, "engine", "engine stopped", "engine",
                                  NULL);
        rc = pctl_tx_end(p, rc);
    }
    os_unlock(p);
    return rc;
}

void pctl_lease_abandon(planctl *p)
{
    os_unlock(p);
}

int pctl_lease_json(json_t **out, planctl *p, int with_token)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_lease_get);
    char host[256], since[PCTL_TIME_BUF], seen[PCTL_TIME_BUF];
    int rc;

    *out = NULL;
    if (!st)
        return pctl_q_err(p);
    pctl_host_name(host, sizeof host);
    /* Columns: 0 host, 1 pid, 2 token, 3 acquired_at, 4 heartbeat_at. */
    rc = pctl_step(st);
    if (rc == PCTL_ROW) {
        const char *holder = pctl_col_text(st, 0);
        int64_t pid = pctl_col_i64(st, 1), beat = pctl_col_i64(st, 4);
        int same = strcmp(holder, host) == 0;
        int alive =
            pctl_engine_alive(same, same && pctl_process_gone(pid, 0),
                              pctl_now(p), beat, PCTL_LEASE_TTL_DEFAULT_MS);

        pctl_time_rfc3339(since, pctl_col_i64(st, 3));
        pctl_time_rfc3339(seen, beat);
        *out = json_pack("{s:I, s:s, s:s, s:s, s:b}", "pid", (json_int_t)pid,
                         "host", holder, "since", since, "last_seen", seen,
                         "alive", alive);
        if (*out && with_token &&
            json_object_set_new(*out, "token",
                                json_integer(pctl_col_i64(st, 2))) < 0) {
            json_decref(*out);
            *out = NULL;
        }
        rc = *out ? 0 : pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    } else if (rc == PCTL_DONE) {
        *out = json_null();
        rc = 0;
    } else {
        rc = pctl_q_fail(st, rc);
    }
    pctl_reset(st);
    return rc;
}

int planctl_engines_json(char **out, planctl *p)
{
    json_t *doc = NULL, *engine = NULL;
    int rc;

    if (!out || !p)
        return pctl_err_arg(p, !p ? "p" : "out");
    *out = NULL;
    if ((rc = pctl_tx_read(p)) < 0)
        return rc;
    /* Several engines share a PostgreSQL database (fleet.c). */
    if (pctl_fleet_supported(p)) {
        json_t *list = NULL;

        rc = pctl_fleet_json(&list, p);
        pctl_tx_read_end(p);
        if (rc == 0 &&
            !(doc = json_pack("{s:i, s:o}", "schema", 1, "engines", list)))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        json_decref(doc);
        return rc;
    }
    rc = pctl_lease_json(&engine, p, 1);
    pctl_tx_read_end(p);
    if (rc == 0 && !(doc = json_pack("{s:i, s:[]}", "schema", 1, "engines")))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0 && json_is_object(engine) &&
        json_array_append(json_object_get(doc, "engines"), engine) < 0)
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (rc == 0 && !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(engine);
    json_decref(doc);
    return rc;
}
