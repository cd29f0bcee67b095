/*
 * main.c - planctl-bench: the benchmark programs of tools/bench, one
 * subcommand each.  tools/bench/run builds and runs them in order and
 * collects their summary lines.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "bench.h"
#include "delay.h"

/* The library versions the figures were taken with. */
static int info_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("planctl %s, SQLite %s, libuv %s, jansson %s\n",
           planctl_libversion(), sqlite3_libversion(), uv_version_string(),
           JANSSON_VERSION);
    return 0;
}

static const struct {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *what;
} commands[] = {
    {"baseline", bench_baseline_main, "raw SQLite transitions per second"},
    {"throughput", bench_throughput_main,
     "engine step completions per second against the baseline"},
    {"pg", bench_pg_main,
     "on PostgreSQL: engine step completions per second against raw libpq, "
     "and status/history on a large against a small history"},
    {"gen", bench_gen_main, "generate a database with a large history"},
    {"query", bench_query_main,
     "planctl status and history on a large against a small database"},
    {"scaling", bench_scaling_main,
     "engine pass cost and memory by active runs and history"},
    {"recovery", bench_recovery_main,
     "restart after SIGKILL with many active runs"},
    {"foreign", bench_foreign_main,
     "engine CPU per commit of another process, many against few active "
     "runs"},
    {"ips-setup", bench_ips_setup_main,
     "instructions per step: make the database"},
    {"ips-engine", bench_ips_engine_main,
     "instructions per step: the engine's run, its writes recorded"},
    {"ips-limit", bench_ips_limit_main,
     "instructions per step: the same writes with raw SQLite"},
    {"ips-check", bench_ips_check_main,
     "instructions per step: check both wrote the same, and sum up"},
    {"web", bench_web_main,
     "engine step completions per second with many live web pages open "
     "against none, and the pages' update delay"},
    {"delay", bench_delay_main,
     "a TCP forwarder adding a delay each way (a database further away)"},
    {"info", info_main, "library versions"},
};

int main(int argc, char **argv)
{
    size_t i;

    /* As `planctl run` does: SQLite's memory statistics off, for the
     * engine and the raw baseline alike (they share the process). */
    (void)planctl_process_init();
    if (argc >= 2)
        for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(argv[1], commands[i].name) == 0)
                return commands[i].main(argc - 1, argv + 1);
    fprintf(stderr, "usage: planctl-bench COMMAND [options]\n");
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(stderr, "  %-11s %s\n", commands[i].name, commands[i].what);
    return 2;
}
