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
