/*
 * db.c - databases for the benchmarks: opened, and a definition applied,
 * or the benchmark dies.  Filling them fast is the fixture's
 * (tests/fixture/fill.c).
 */
#include <string.h>

#include "bench.h"

planctl *bench_open(const char *path, planctl_durability durability)
{
    planctl_open_options o = PLANCTL_OPEN_OPTIONS_INIT;
    planctl *p;

    o.durability = durability;
    o.busy_timeout_ms = 30000;
    if (planctl_open(&p, path, &o) < 0)
        bench_die("open %s: %s", path, planctl_errmsg(p));
    return p;
}

void bench_apply(planctl *p, const char *json)
{
    if (planctl_definition_apply(NULL, p, json, strlen(json), "bench.json") < 0)
        bench_die("apply: %s", planctl_errmsg(p));
}
