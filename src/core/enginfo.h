/* enginfo.h - what a reader of the database says of the engine that holds
 * it: whether the lease's holder counts as alive, and the one line that
 * says so. */
#ifndef PCTL_CORE_ENGINFO_H
#define PCTL_CORE_ENGINFO_H

#include <stddef.h>
#include <stdint.h>

/* The lease TTL an engine uses unless told otherwise, and what a reader
 * judges a heartbeat's age by (the lease does not record the holder's). */
#define PCTL_LEASE_TTL_DEFAULT_MS 15000

/* The engine a lease names, as a reader sees it. */
typedef struct pctl_engine_seen {
    int64_t pid;
    const char *host;
    int64_t since_ms;     /* when it took the lease */
    int64_t last_seen_ms; /* its last heartbeat */
    int alive;
    /* Among several engines on a PostgreSQL database: its name, and
     * whether it holds the run in question; NULL and 0 otherwise. */
    const char *name;
    int holds;
} pctl_engine_seen;

/*
 * Whether a lease's holder counts as a running engine: its heartbeat is
 * younger than ttl_ms at now_ms, and, when it runs on this host, its
 * process still exists (pid_gone is 0).  A killed engine on this host is
 * thus seen at once, one elsewhere once its heartbeat is stale.  Can't
 * fail.
 */
int pctl_engine_alive(int same_host, int pid_gone, int64_t now_ms,
                      int64_t beat_ms, int64_t ttl_ms);

/*
 * The fair share of one of several engines: how many of the `wanting`
 * active runs it should hold when the n live engines whose capacities
 * are caps (0: no limit; in any order, its own among them) share them
 * evenly, each capped engine holding no more than its capacity and the
 * others sharing the rest.  Rounded up, so the shares together cover
 * every run.  my_cap is its own capacity (0: no limit).  0 when n is 0
 * or nothing is wanted.  Can't fail.
 */
int64_t pctl_fair_share(int64_t wanting, const int64_t *caps, size_t n,
                        int64_t my_cap);

/* "just now" for less than half a second, else "2s ago", "3m ago",
 * "1h5m ago", to the nearest second.  Can't fail. */
void pctl_ago(char *buf, size_t size, int64_t ms);

/*
 * The line for people, in buf (cut to size):
 *   e NULL:     no engine is running on DB; start one with 'planctl run'
 *   alive:      engine pid 1887 on vm since 14:03:05, last seen 2s ago
 *   not alive:  engine pid 1887 on vm stopped renewing 3m ago; start one
 *               with 'planctl run'
 * Times are local (pctl_time_local_short), ages measured to now_ms.
 * Can't fail.
 */
void pctl_engine_line(char *buf, size_t size, const char *db,
                      const pctl_engine_seen *e, int64_t now_ms);

#endif
