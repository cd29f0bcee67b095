/* enginfo.c - whether a lease's holder counts as alive, and the line that
 * tells a reader of the database about it. */
#include "core/enginfo.h"

#include <stdio.h>

#include "core/def.h"
#include "core/timefmt.h"

int pctl_engine_alive(int same_host, int pid_gone, int64_t now_ms,
                      int64_t beat_ms, int64_t ttl_ms)
{
    if (same_host && pid_gone)
        return 0;
    return now_ms - beat_ms < ttl_ms;
}

/* Water-filling: the engines capped below the level hold their capacity
 * and the others share the rest.  Each engine found capped below the
 * level leaves more to the others, so the level only rises and the set
 * of capped engines only grows: at most n rounds settle it. */
int64_t pctl_fair_share(int64_t wanting, const int64_t *caps, size_t n,
                        int64_t my_cap)
{
    int64_t level, rest, next;
    size_t i, k, round;

    if (n == 0 || wanting <= 0)
        return 0;
    level = (wanting + (int64_t)n - 1) / (int64_t)n;
    for (round = 0; round < n; round++) {
        rest = wanting;
        k = n;
        for (i = 0; i < n; i++)
            if (caps[i] > 0 && caps[i] < level) {
                rest -= caps[i];
                k--;
            }
        if (k == 0) /* every engine capped below the level: its capacity */
            return my_cap;
        next = rest > 0 ? (rest + (int64_t)k - 1) / (int64_t)k : 0;
        if (next <= level)
            break;
        level = next;
    }
    return my_cap > 0 && my_cap < level ? my_cap : level;
}

void pctl_ago(char *buf, size_t size, int64_t ms)
{
    char d[32];

    if (ms < 500) {
        snprintf(buf, size, "just now");
        return;
    }
    /* Whole seconds: "2s ago", never "1.998s ago". */
    pctl_duration_format(d, sizeof d, (ms + 500) / 1000 * 1000);
    snprintf(buf, size, "%s ago", d);
}

void pctl_engine_line(char *buf, size_t size, const char *db,
                      const pctl_engine_seen *e, int64_t now_ms)
{
    char since[PCTL_TIME_BUF], ago[48];

    if (!e) {
        snprintf(buf, size, "no engine is running on %s", db);
        return;
    }
    pctl_ago(ago, sizeof ago, now_ms - e->last_seen_ms);
    if (e->name) {
        snprintf(buf, size, "engine %s (pid %lld on %s) %s%s %s%s", e->name,
                 (long long)e->pid, e->host ? e->host : "?",
                 e->holds ? "holds the run" : "is running",
                 e->alive   ? ", last seen"
                 : e->holds ? " but stopped renewing"
                            : " stopped renewing",
                 ago,
                 e->alive ? ""
                 : e->holds
                     ? "; another engine takes it over once its TTL has passed"
                     : "");
        return;
    }
    if (e->alive) {
        pctl_time_local_short(since, e->since_ms, now_ms);
        snprintf(buf, size, "engine pid %lld on %s since %s, last seen %s",
                 (long long)e->pid, e->host ? e->host : "?", since, ago);
    } else {
        snprintf(buf, size, "engine pid %lld on %s stopped renewing %s",
                 (long long)e->pid, e->host ? e->host : "?", ago);
    }
}
