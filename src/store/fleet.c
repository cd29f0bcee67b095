/*
 * fleet.c - several engines on one PostgreSQL database: each joins (a row
 * of `engines`), heartbeats on the database's clock, and holds the active
 * runs it claimed (`claims`); only those are in its cache (the active_*
 * statements take its id) and only those does it advance.
 *
 * Fencing.  Every write of planctl takes the schema's write lock (the
 * backend's BEGIN): an engine's shared with the other engines', any other
 * alone.  An engine's transaction first checks, under that lock, that its
 * row is still in `engines`
 * (pctl_fleet_fence); a run changes hands only when its engine released
 * it or was declared dead, and declaring an engine dead deletes its row
 * in the same transaction that releases its runs (claims.engine_id ON
 * DELETE SET NULL), alone under the lock, so never beside that engine's
 * pass.  So an engine that lost a run writes nothing for it:
 * it lost every run at once and its next transaction fails (ESTALE)
 * before it writes.  Each claim also moves the run's claim token, which
 * `claims` keeps.
 *
 * Death.  An engine is declared dead when its heartbeat is older than its
 * TTL on the database's clock, or at once when it ran on this host and
 * its process is gone (its pid and the start time of that process, so a
 * pid given to another process does not pass for it).  The engine that
 * notices deletes the row, which releases the runs, records an event, and
 * wakes the other engines (a notification), which claim them.  The one
 * that claims a run turns its steps IN_PROGRESS without a job of its own
 * into ERROR (engine/pass.c), as after a crash.
 *
 * An engine that cannot renew its heartbeat in time stops its tasks
 * itself before anyone may declare it dead (engine/keeper.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/enginfo.h"
#include "core/timefmt.h"
#include "store/store.h"

int pctl_fleet_supported(const planctl *p)
{
    return p->conn && p->conn->m->fleet;
}

static void wake_others(planctl *p)
{
    if (p->conn->m->wake)
        p->conn->m->wake(p->conn);
}

void pctl_host_name(char *buf, size_t size)
{
    if (gethostname(buf, size) != 0)
        snprintf(buf, size, "unknown");
    buf[size - 1] = '\0';
}

/* The start time of process pid (clock ticks after boot), 0 if unknown;
 * *zombie 1 when it has exited and waits for its parent to reap it. */
static int64_t process_stat(int64_t pid, int *zombie)
{
    char path[64], buf[1024], *s;
    FILE *f;
    size_t n;
    int field;

    *zombie = 0;
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* Field 2 is the command in parentheses, which may hold anything:
     * count from the last ')'.  Field 3 is the state, 22 the start. */
    if (!(s = strrchr(buf, ')')))
        return 0;
    *zombie = s[1] == ' ' && s[2] == 'Z';
    for (field = 2; *s && field < 22; s++)
        if (*s == ' ')
            field++;
    return field == 22 ? strtoll(s, NULL, 10) : 0;
}

int pctl_process_gone(int64_t pid, int64_t pid_start)
{
    int64_t start;
    int zombie;

    if (pid <= 0 || pid == (int64_t)getpid())
        return 0;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 1;
    start = process_stat(pid, &zombie);
    return zombie || (pid_start > 0 && start > 0 && start != pid_start);
}

/* One row's first column as an integer: *out, or PLANCTL_E*. */
static int one_i64(int64_t *out, pctl_stmt *st)
{
    int rc = pctl_step(st);

    if (rc == PCTL_ROW)
        *out = pctl_col_i64(st, 0);
    pctl_reset(st);
    if (rc != PCTL_ROW && rc != PCTL_DONE)
        return pctl_q_fail(st, rc);
    return rc == PCTL_ROW ? 1 : 0;
}

/* An engine event saying msg (taken; NULL when out of memory), by this
 * handle's engine. */
static int engine_said(planctl *p, char *msg)
{
    int rc =
        msg ? pctl_event_admin(p, 0, "engine", msg,
                               p->fleet_name ? p->fleet_name : "planctl", NULL)
            : pctl_err(p, PLANCTL_ENOMEM, "out of memory");

    pctl_free(msg);
    return rc;
}

/* Appends msg to *said ("; " between two), for the engine's log.  Out of
 * memory, *said is left as it was: the event log has the message. */
static void say_also(char **said, const char *msg)
{
    char *s;

    if (!said || !msg)
        return;
    s = *said ? pctl_asprintf("%s; %s", *said, msg) : pctl_strdup(msg);
    if (s) {
        pctl_free(*said);
        *said = s;
    }
}

/* How many run ids a "declared dead" message lists before "and N more". */
#define DEAD_RUNS_SHOWN 5

/* What declaring an engine dead released, from fleet_held's rows (bound):
 * "no active run released", "active run 4 released", "active runs 4, 7
 * released", or past DEAD_RUNS_SHOWN "active runs 4, 7, 9, 10, 11 and 12
 * more released".  *text is a new string (NULL when out of memory). */
static int held_runs_text(char **text, pctl_stmt *st)
{
    char list[DEAD_RUNS_SHOWN * 24];
    size_t len = 0;
    int64_t n = 0;
    int rc;

    *text = NULL;
    list[0] = '\0';
    while ((rc = pctl_step(st)) == PCTL_ROW) {
        if (n < DEAD_RUNS_SHOWN)
            len +=
                (size_t)snprintf(list + len, sizeof list - len, "%s%lld",
                                 n ? ", " : "", (long long)pctl_col_i64(st, 0));
        n++;
    }
    pctl_reset(st);
    if (rc != PCTL_DONE)
        return pctl_q_fail(st, rc);
    if (n == 0)
        *text = pctl_strdup("no active run released");
    else if (n <= DEAD_RUNS_SHOWN)
        *text =
            pctl_asprintf("active run%s %s released", n == 1 ? "" : "s", list);
    else
        *text = pctl_asprintf("active runs %s and %lld more released", list,
                              (long long)(n - DEAD_RUNS_SHOWN));
    return 0;
}

/* Declares engine id dead: its row goes, its runs with it go back to
 * nobody, and an event says why and which runs (appended to *said too).
 * Inside a write.  Declared dead for its heartbeat (stale), it is so only
 * if its heartbeat is still stale now: heartbeats do not wait for the
 * write lock (pctl_fleet_beat), and one may have come since it was
 * read.  1 when declared dead, 0 when not (declared so by another
 * meanwhile, or it beat meanwhile), or an error. */
static int declare_dead(planctl *p, int64_t id, const char *name,
                        const char *why, int stale, char **said)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_fleet_held);
    char *held = NULL;
    int rc;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, id);
    if ((rc = held_runs_text(&held, st)) < 0)
        return rc;
    if (!held)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if (!(st =
              pctl_q(p, stale ? PCTL_Q_fleet_drop_stale : PCTL_Q_fleet_drop))) {
        pctl_free(held);
        return pctl_q_err(p);
    }
    pctl_bind_i64(st, 1, id);
    if ((rc = pctl_q_exec(st)) < 0 || pctl_changes(st) != 1) {
        pctl_free(held);
        /* 0: declared dead by another meanwhile, or beat meanwhile. */
        return rc < 0 ? rc : 0;
    }
    wake_others(p);
    char *msg =
        pctl_asprintf("engine %s declared dead (%s); %s", name, why, held);
    pctl_free(held);
    say_also(said, msg);
    rc = engine_said(p, msg);
    return rc < 0 ? rc : 1;
}

/*
 * Declares dead every other engine whose heartbeat is older than its TTL,
 * and those of this host whose process is gone.  Inside a write.  *n
 * receives how many, *said (when not NULL) what was said of each.  With
 * declare 0, only finds how many there are (in any transaction): whether
 * a write is needed at all.
 */
static int reap(planctl *p, int declare, int *n, char **said)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_fleet_suspects);
    char host[256];
    struct dead {
        int64_t id;
        char *name, *why;
        int stale;
    } *dead = NULL;
    size_t ndead = 0, cap = 0, i;
    int rc, step, declared = 0;

    *n = 0;
    if (!st)
        return pctl_q_err(p);
    pctl_host_name(host, sizeof host);
    pctl_bind_i64(st, 1, p->fleet_id);
    pctl_bind_text(st, 2, host);
    p->nfleet_peers = 0;
    /* Columns: 0 id, 1 name, 2 host, 3 pid, 4 pid_start, 5 heartbeat_at,
     * 6 ttl_ms, 7 now. */
    rc = 0;
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        int64_t beat = pctl_col_i64(st, 5), ttl = pctl_col_i64(st, 6),
                now = pctl_col_i64(st, 7);
        char *why = NULL;

        if (beat < now - ttl)
            why = pctl_asprintf("no heartbeat for %.1f s, its TTL is %.1f s",
                                (double)(now - beat) / 1000.0,
                                (double)ttl / 1000.0);
        else if (strcmp(pctl_col_text(st, 2), host) == 0 &&
                 pctl_process_gone(pctl_col_i64(st, 3), pctl_col_i64(st, 4)))
            why = pctl_asprintf("its process %lld on this host is gone",
                                (long long)pctl_col_i64(st, 3));
        else {
            /* Alive on this host: watched between heartbeats. */
            if (strcmp(pctl_col_text(st, 2), host) == 0 &&
                (pctl_push_id(&p->fleet_peers, &p->nfleet_peers,
                              &p->capfleet_peers, pctl_col_i64(st, 3)) < 0 ||
                 pctl_push_id(&p->fleet_peers, &p->nfleet_peers,
                              &p->capfleet_peers, pctl_col_i64(st, 4)) < 0))
                p->nfleet_peers = 0; /* out of memory: the TTL will do */
            continue;
        }
        if (!why || pctl_grow((void **)&dead, ndead, &cap, sizeof *dead) < 0) {
            pctl_free(why);
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        dead[ndead].id = pctl_col_i64(st, 0);
        dead[ndead].why = why;
        dead[ndead].stale = beat < now - ttl;
        if (!(dead[ndead].name = pctl_strdup(pctl_col_text(st, 1)))) {
            pctl_free(why);
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
        ndead++;
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    for (i = 0; declare && rc == 0 && i < ndead; i++)
        if ((rc = declare_dead(p, dead[i].id, dead[i].name, dead[i].why,
                               dead[i].stale, said)) == 1) {
            declared++;
            rc = 0;
        }
    if (rc == 0)
        *n = declare ? declared : (int)ndead;
    for (i = 0; i < ndead; i++) {
        pctl_free(dead[i].name);
        pctl_free(dead[i].why);
    }
    pctl_free(dead);
    return rc;
}

/* An engine event with data (taken; NULL when json_pack failed). */
static int engine_event(planctl *p, const char *message, json_t *data)
{
    char *text = data ? json_dumps(data, JSON_COMPACT) : NULL;
    int rc = text ? pctl_event_admin(p, 0, "engine", message, "engine", text)
                  : pctl_err(p, PLANCTL_ENOMEM, "out of memory");

    free(text);
    json_decref(data);
    return rc;
}

int pctl_fleet_join(planctl *p, const char *name, int64_t ttl_ms,
                    int64_t capacity, char **said)
{
    pctl_stmt *st;
    char host[256], *own = NULL;
    int64_t id = 0;
    int rc, reaped, zombie;

    *said = NULL;
    if (!pctl_fleet_supported(p))
        return pctl_err(p, PLANCTL_EINVAL, "%s keeps one engine per database",
                        p->path);
    pctl_host_name(host, sizeof host);
    if (!name || !*name)
        name = own = pctl_asprintf("%s:%ld", host, (long)getpid());
    if (!name)
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    if ((rc = pctl_tx_begin(p)) < 0)
        goto out;
    /* A dead engine of this host goes first: a restart after kill -9
     * gets its runs at once. */
    p->fleet_id = 0;
    rc = reap(p, 1, &reaped, said);
    if (rc == 0 && !(st = pctl_q(p, PCTL_Q_fleet_join)))
        rc = pctl_q_err(p);
    if (rc == 0) {
        pctl_bind_text(st, 1, name);
        pctl_bind_text(st, 2, host);
        pctl_bind_i64(st, 3, (int64_t)getpid());
        pctl_bind_i64(st, 4, process_stat((int64_t)getpid(), &zombie));
        pctl_bind_i64(st, 5, ttl_ms);
        pctl_bind_i64(st, 6, capacity);
        if ((rc = one_i64(&id, st)) == 0)
            rc = pctl_err(p, PLANCTL_EIO, "engines: no id given");
        else if (rc == 1)
            rc = 0;
    }
    /* The same event as one engine's lease (lease.c); who, in its data. */
    if (rc == 0)
        rc = engine_event(p, "engine started",
                          json_pack("{s:s, s:s, s:I, s:I, s:I}", "name", name,
                                    "host", host, "pid", (json_int_t)getpid(),
                                    "ttl_ms", (json_int_t)ttl_ms, "capacity",
                                    (json_int_t)capacity));
    rc = pctl_tx_end(p, rc);
    if (rc < 0) { /* rolled back: nobody was declared dead */
        pctl_free(*said);
        *said = NULL;
    }
    if (rc == 0) {
        pctl_free(p->fleet_name);
        if (!(p->fleet_name = pctl_strdup(name))) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        } else {
            p->fleet_id = id;
            if (p->conn->m->quiet)
                p->conn->m->quiet(p->conn, 1);
            /* Stopped inside a transaction (SIGSTOP, a debugger), it would
             * hold the write lock and every other engine with it: the
             * server ends such a session after a quarter of the TTL, and
             * the engine finds itself declared dead when it continues.
             * Its heartbeat is due every third of the TTL and late at
             * half of it (engine.c), and a pass waiting for a lock
             * delays it: a wait gives up after half that slack, a
             * twelfth of the TTL, and the pass is tried again later. */
            if (p->conn->m->engine_session &&
                (rc = p->conn->m->engine_session(p->conn, ttl_ms / 4,
                                                 ttl_ms / 12)) < 0)
                pctl_fleet_forget(p); /* its row goes stale: declared dead */
        }
    }
out:
    pctl_free(own);
    return rc;
}

int pctl_fleet_fence(planctl *p)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_fleet_fence);
    int64_t id = 0;
    int rc;

    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, p->fleet_id);
    if ((rc = one_i64(&id, st)) < 0)
        return rc;
    if (rc == 0)
        return pctl_err(p, PLANCTL_ESTALE,
                        "engine %s was declared dead on %s (its heartbeat "
                        "stopped for longer than its TTL) and its runs were "
                        "given to other engines; it stops",
                        p->fleet_name ? p->fleet_name : "?", p->path);
    return 0;
}

/*
 * The heartbeat writes the engine's own row only, which no other engine
 * writes but to declare it dead: it takes no write lock, so a writer
 * stuck inside its transaction, or a long one, never makes the engines
 * miss their heartbeats.  Declaring others dead writes their runs and
 * an event: a write, taken only when the heartbeat's look at the others
 * found one to declare.
 */
int pctl_fleet_beat(planctl *p, int *reaped, char **said)
{
    pctl_stmt *st;
    int64_t at = 0;
    int rc, dead = 0;

    *reaped = 0;
    *said = NULL;
    if ((rc = pctl_tx_begin_rows(p)) < 0)
        return rc;
    if (!(st = pctl_q(p, PCTL_Q_fleet_beat)))
        return pctl_tx_end(p, pctl_q_err(p));
    pctl_bind_i64(st, 1, p->fleet_id);
    if ((rc = one_i64(&at, st)) == 0)
        rc = pctl_fleet_fence(p); /* gone: says so */
    else if (rc == 1)
        rc = reap(p, 0, &dead, NULL);
    if ((rc = pctl_tx_end(p, rc)) < 0 || dead == 0)
        return rc;
    if ((rc = pctl_tx_begin(p)) < 0)
        return rc;
    rc = pctl_tx_end(p, reap(p, 1, reaped, said));
    if (rc < 0) { /* rolled back: nobody was declared dead */
        pctl_free(*said);
        *said = NULL;
    }
    return rc;
}

int pctl_fleet_claim(planctl *p, int64_t room, int64_t after, int64_t **ids,
                     size_t *n)
{
    pctl_stmt *st =
        pctl_q(p, after > 0 ? PCTL_Q_fleet_claim_after : PCTL_Q_fleet_claim);
    size_t cap = 0;
    int rc = 0, step;

    *ids = NULL;
    *n = 0;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, p->fleet_id);
    pctl_bind_i64(st, 2, room);
    if (after > 0)
        pctl_bind_i64(st, 3, after);
    while ((step = pctl_step(st)) == PCTL_ROW)
        if (pctl_push_id(ids, n, &cap, pctl_col_i64(st, 0)) < 0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    /* No event: claiming new work is routine (the events of the runs it
     * takes over say so: their steps in flight become ERROR). */
    if (rc < 0) {
        pctl_free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}

int pctl_fleet_hold(planctl *p, int64_t run_id)
{
    pctl_stmt *st;

    if (!p->fleet_id)
        return 0;
    if (!(st = pctl_q(p, PCTL_Q_fleet_hold)))
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, p->fleet_id);
    pctl_bind_i64(st, 2, run_id);
    return pctl_q_exec(st);
}

int pctl_fleet_release(planctl *p, const int64_t *ids, size_t n)
{
    pctl_stmt *st;
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < n; i++) {
        if (!(st = pctl_q(p, PCTL_Q_fleet_release)))
            return pctl_q_err(p);
        pctl_bind_i64(st, 1, ids[i]);
        pctl_bind_i64(st, 2, p->fleet_id);
        /* In a pass, gathered and sent as one (its set form). */
        rc = pctl_q_exec_later(st, -1);
    }
    if (rc < 0 || n == 0)
        return rc;
    wake_others(p);
    return engine_said(p, pctl_asprintf("engine %s gave back %zu run%s for "
                                        "other engines",
                                        p->fleet_name, n, n == 1 ? "" : "s"));
}

void pctl_fleet_ask(planctl *p)
{
    wake_others(p);
}

int pctl_fleet_share(planctl *p, int64_t capacity, int64_t *share,
                     int64_t *unheld)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_fleet_share);
    int64_t *caps = NULL, wanting = 0;
    size_t n = 0, cap = 0;
    int rc = 0, step;

    *share = *unheld = 0;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, p->fleet_id);
    /* Columns: 0 a live engine's capacity, 1 active runs, 2 those nobody
     * holds. */
    while ((step = pctl_step(st)) == PCTL_ROW) {
        wanting = pctl_col_i64(st, 1);
        *unheld = pctl_col_i64(st, 2);
        if (pctl_push_id(&caps, &n, &cap, pctl_col_i64(st, 0)) < 0) {
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    if (rc == 0)
        *share = pctl_fair_share(wanting, caps, n, capacity);
    pctl_free(caps);
    return rc;
}

int pctl_fleet_leave(planctl *p)
{
    pctl_stmt *st;
    int rc;

    if (!p->fleet_id)
        return 0;
    if ((rc = pctl_tx_begin(p)) < 0)
        return rc;
    if ((rc = pctl_fleet_fence(p)) == 0) {
        if (!(st = pctl_q(p, PCTL_Q_fleet_drop))) {
            rc = pctl_q_err(p);
        } else {
            pctl_bind_i64(st, 1, p->fleet_id);
            rc = pctl_q_exec(st);
        }
    }
    if (rc == 0) {
        rc = engine_event(p, "engine stopped",
                          json_pack("{s:s}", "name", p->fleet_name));
        wake_others(p);
    }
    rc = pctl_tx_end(p, rc);
    pctl_fleet_forget(p);
    return rc;
}

int pctl_fleet_peer_gone(const planctl *p)
{
    size_t i;

    for (i = 0; i + 1 < p->nfleet_peers; i += 2)
        if (pctl_process_gone(p->fleet_peers[i], p->fleet_peers[i + 1]))
            return 1;
    return 0;
}

void pctl_fleet_forget(planctl *p)
{
    p->fleet_id = 0;
    pctl_free(p->fleet_name);
    p->fleet_name = NULL;
    pctl_free(p->fleet_peers);
    p->fleet_peers = NULL;
    p->nfleet_peers = p->capfleet_peers = 0;
    if (p->conn && p->conn->m->quiet)
        p->conn->m->quiet(p->conn, 0);
    if (p->conn && p->conn->m->engine_session)
        (void)p->conn->m->engine_session(p->conn, 0, 0);
}

int pctl_fleet_json(json_t **out, planctl *p)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_fleet_list);
    char host[256], since[PCTL_TIME_BUF], seen[PCTL_TIME_BUF];
    int rc = 0, step;

    *out = NULL;
    if (!st)
        return pctl_q_err(p);
    if (!(*out = json_array()))
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    pctl_host_name(host, sizeof host);
    /* Columns: 0 id, 1 name, 2 host, 3 pid, 4 started_at, 5 heartbeat_at,
     * 6 ttl_ms, 7 capacity, 8 now, 9 runs held, 10 pid_start. */
    while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
        const char *h = pctl_col_text(st, 2);
        int64_t pid = pctl_col_i64(st, 3), beat = pctl_col_i64(st, 5);
        int same = strcmp(h, host) == 0;
        int alive = pctl_engine_alive(
            same, same && pctl_process_gone(pid, pctl_col_i64(st, 10)),
            pctl_col_i64(st, 8), beat, pctl_col_i64(st, 6));
        json_t *e;

        pctl_time_rfc3339(since, pctl_col_i64(st, 4));
        pctl_time_rfc3339(seen, beat);
        /* age_ms: measured on the database's clock, which a reader's own
         * clock may not agree with. */
        /* token: the lease's, which engines sharing a database have none of
         * (each run's claim has its own): null, never left out. */
        e = json_pack("{s:s, s:I, s:s, s:s, s:s, s:I, s:b, s:n, s:I, s:I, "
                      "s:I, s:I}",
                      "name", pctl_col_text(st, 1), "pid", (json_int_t)pid,
                      "host", h, "since", since, "last_seen", seen, "age_ms",
                      (json_int_t)(pctl_col_i64(st, 8) - beat), "alive", alive,
                      "token", "runs", (json_int_t)pctl_col_i64(st, 9),
                      "capacity", (json_int_t)pctl_col_i64(st, 7), "ttl_ms",
                      (json_int_t)pctl_col_i64(st, 6), "id",
                      (json_int_t)pctl_col_i64(st, 0));
        if (!e || json_array_append_new(*out, e) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    if (rc == 0 && step != PCTL_DONE)
        rc = pctl_q_fail(st, step);
    pctl_reset(st);
    if (rc < 0) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

int pctl_fleet_engine_json(json_t **out, planctl *p, int64_t run_id)
{
    pctl_stmt *st = pctl_q(p, PCTL_Q_run_holder);
    json_t *list = NULL, *e, *pick = NULL;
    int64_t holder = 0;
    size_t i;
    int rc, holds = 0;

    *out = NULL;
    if (!st)
        return pctl_q_err(p);
    pctl_bind_i64(st, 1, run_id);
    if ((rc = one_i64(&holder, st)) < 0 || (rc = pctl_fleet_json(&list, p)) < 0)
        return rc;
    json_array_foreach(list, i, e)
    {
        json_int_t id = json_integer_value(json_object_get(e, "id"));

        if (holder && id == holder) {
            pick = e;
            holds = 1;
            break;
        }
        if (!pick && json_is_true(json_object_get(e, "alive")))
            pick = e;
    }
    if (pick) {
        json_incref(pick);
        if (json_object_set_new(pick, "holds", json_boolean(holds)) < 0)
            rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
        *out = pick;
    } else if (!(*out = json_null())) {
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    json_decref(list);
    return rc;
}
