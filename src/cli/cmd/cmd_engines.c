/* cmd_engines.c - `planctl engines`: the engines that hold the database
 * (on SQLite at most one, the lease's holder), as a table. */
#include "cli/cli.h"

#include "core/enginfo.h"

static const cli_flag flags[] = {{NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {"planctl engines",
                                       "planctl engines -o json", NULL};

/* Several engines on a PostgreSQL database: each with its name, the
 * active runs it holds and its capacity. */
static void render_fleet(cli_ctx *ctx, const json_t *list)
{
    static const char *const headers[] = {"NAME",  "PID",       "HOST",
                                          "SINCE", "LAST SEEN", "ALIVE",
                                          "RUNS",  "CAPACITY"};
    cli_table *tb = cli_table_new(headers, 8);
    const json_t *e;
    size_t i;

    json_array_foreach(list, i, e)
    {
        char pid[32], since[32], seen[48], runs[32], cap[32];
        int64_t v = 0, at;
        int alive = json_is_true(json_object_get(e, "alive"));

        cli_jint(&v, e, "pid");
        snprintf(pid, sizeof pid, "%lld", (long long)v);
        v = 0;
        cli_jint(&v, e, "runs");
        snprintf(runs, sizeof runs, "%lld", (long long)v);
        v = 0;
        cli_jint(&v, e, "capacity");
        if (v)
            snprintf(cap, sizeof cap, "%lld", (long long)v);
        else
            snprintf(cap, sizeof cap, "no limit");
        if (cli_jtime(&at, e, "since"))
            cli_time_format(since, sizeof since, at);
        else
            snprintf(since, sizeof since, "-");
        v = 0;
        cli_jint(&v, e, "age_ms"); /* on the database's clock */
        pctl_ago(seen, sizeof seen, v);
        const char *cells[8] = {cli_jstr(e, "name"),
                                pid,
                                cli_jstr(e, "host"),
                                since,
                                seen,
                                alive ? "yes" : "no",
                                runs,
                                cap};
        cli_table_row(tb, cells, 6, alive ? NULL : cli_status_sgr("ERROR"));
    }
    cli_table_print(tb, stdout, &ctx->term);
    cli_table_free(tb);
}

static void render(cli_ctx *ctx, const json_t *doc)
{
    static const char *const headers[] = {"PID",       "HOST",  "SINCE",
                                          "LAST SEEN", "ALIVE", "TOKEN"};
    const json_t *list = json_object_get(doc, "engines");
    size_t i;
    const json_t *e;

    if (json_array_size(list) == 0) {
        cli_buf b = CLI_BUF_INIT;
        cli_engine_line(&b, ctx, NULL);
        printf("%s\n", cli_buf_str(&b));
        cli_buf_free(&b);
        return;
    }
    if (json_object_get(json_array_get(list, 0), "name")) {
        render_fleet(ctx, list);
        return;
    }
    cli_table *tb = cli_table_new(headers, 6);
    json_array_foreach(list, i, e)
    {
        char pid[32], since[32], seen[48], token[32];
        int64_t v = 0, at;
        int alive = json_is_true(json_object_get(e, "alive"));

        cli_jint(&v, e, "pid");
        snprintf(pid, sizeof pid, "%lld", (long long)v);
        v = 0;
        cli_jint(&v, e, "token");
        snprintf(token, sizeof token, "%lld", (long long)v);
        if (cli_jtime(&at, e, "since"))
            cli_time_format(since, sizeof since, at);
        else
            snprintf(since, sizeof since, "-");
        if (cli_jtime(&at, e, "last_seen"))
            pctl_ago(seen, sizeof seen, ctx->now_ms - at);
        else
            snprintf(seen, sizeof seen, "-");
        const char *cells[6] = {pid,  cli_jstr(e, "host"),  since,
                                seen, alive ? "yes" : "no", token};
        cli_table_row(tb, cells, 4, alive ? NULL : cli_status_sgr("ERROR"));
    }
    cli_table_print(tb, stdout, &ctx->term);
    cli_table_free(tb);
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    char *out = NULL;
    (void)a;
    int rc = cli_open_db(ctx, CLI_DB_EXISTING);
    if (rc)
        return rc;
    rc = planctl_engines_json(&out, ctx->db);
    if (rc < 0)
        return cli_fail(ctx, rc);
    if (ctx->json) {
        rc = cli_json_print(out);
    } else {
        json_t *doc = cli_json_parse(out);
        rc = doc ? CLI_EXIT_OK : CLI_EXIT_ERROR;
        if (doc)
            render(ctx, doc);
        json_decref(doc);
    }
    planctl_free(out);
    return rc;
}

const cli_command cli_cmd_engines = {
    "engines",
    "List the engines that hold the database",
    "",
    "Lists the engine that holds the database (one at most: the holder of\n"
    "its lease) with its pid, host, when it took the lease (SINCE), its\n"
    "last heartbeat (LAST SEEN), whether it counts as running (ALIVE) and\n"
    "its fencing token; or says that no engine is running.  ALIVE is \"no\"\n"
    "for an engine whose process is gone (on this host) or whose heartbeat\n"
    "is older than 15s: its lease is left behind, and the next 'planctl\n"
    "run' takes it over.  With -o json: {\"schema\": 1, \"engines\": "
    "[{\"pid\",\n"
    "\"host\", \"since\", \"last_seen\", \"alive\", \"token\"}]}, [] when "
    "none.\n"
    "On PostgreSQL, where several engines share the database, every engine\n"
    "that joined is listed with its NAME, the active RUNS it holds and its\n"
    "CAPACITY; ALIVE is \"no\" for one whose heartbeat is older than its\n"
    "TTL (or whose process on this host is gone): the next engine to\n"
    "notice declares it dead and its runs are taken over.  JSON: {\"name\",\n"
    "\"pid\", \"host\", \"since\", \"last_seen\", \"age_ms\" (of the "
    "heartbeat,\n"
    "on the database's clock), \"alive\", \"token\" (null), \"runs\",\n"
    "\"capacity\" (0: no limit), \"ttl_ms\", \"id\"}.",
    NULL,
    flags,
    examples,
    run};
