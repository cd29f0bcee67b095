/*
 * cmd_serve.c - `planctl serve`: the web page and /api/v1 over HTTP
 * (the program's server, src/serve/server.c, with its page handler,
 * src/serve/page.c, serving the library's planctl_web_respond()), until
 * SIGINT, SIGTERM or SIGHUP.
 */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/listen.h"

extern const cli_command cli_cmd_serve;

static const cli_flag flags[] = {
    {"listen", 0, CLI_FLAG_VALUE, 0, "ADDR",
     "the address to serve on, [HOST]:PORT (default 127.0.0.1:8080; a port "
     "alone is loopback; another host needs --token-file)"},
    {"allow-actions", 0, CLI_FLAG_BOOL, 0, NULL,
     "let the page and the API trigger, cancel, pause, resume and retry "
     "(read-only without it)"},
    {"token-file", 0, CLI_FLAG_VALUE, 0, "FILE",
     "a file holding the token every request must carry (at least 16 "
     "characters)"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

static const char *const examples[] = {
    "planctl serve", "planctl serve --listen 127.0.0.1:9000 --allow-actions",
    "planctl serve --listen 0.0.0.0:8080 --token-file /etc/planctl/token",
    NULL};

typedef struct server {
    uv_loop_t loop;
    uv_signal_t sig[3];
    serve_server *web;
} server;

static void on_signal(uv_signal_t *h, int signum)
{
    server *s = h->data;
    int i;

    (void)signum;
    for (i = 0; i < 3; i++)
        uv_close((uv_handle_t *)&s->sig[i], NULL);
    serve_close(s->web, NULL, NULL);
    s->web = NULL;
}

/* Reads the token: the file's first line, trimmed.  Returns 0, or the
 * exit code after printing why not. */
static int read_token(char **out, const char *path)
{
    char *text = NULL;
    size_t len = 0, i;

    *out = NULL;
    if (cli_read_input(&text, &len, path) != 0)
        return CLI_EXIT_ERROR;
    for (i = 0; i < len && text[i] != '\n' && text[i] != '\r'; i++)
        ;
    text[i] = '\0';
    while (i > 0 && isspace((unsigned char)text[i - 1]))
        text[--i] = '\0';
    if (i < 16) {
        free(text);
        return cli_usage_error(&cli_cmd_serve,
                               "--token-file %s: the token must be at least 16 "
                               "characters (e.g. 'head -c 24 /dev/urandom | "
                               "base64 > %s')",
                               path, path);
    }
    for (len = 0; len < i; len++)
        if (!isgraph((unsigned char)text[len]) || text[len] == ';' ||
            text[len] == '&') {
            free(text);
            return cli_usage_error(&cli_cmd_serve,
                                   "--token-file %s: the token must be "
                                   "printable ASCII without spaces, ';' or '&'",
                                   path);
        }
    *out = text;
    return 0;
}

static int run(cli_ctx *ctx, const cli_args *a)
{
    const char *listen = cli_arg(a, "listen"),
               *tfile = cli_arg(a, "token-file");
    struct sockaddr_storage addr;
    serve_page_config cfg;
    char why[160], url[128];
    char *token = NULL;
    server s;
    int rc, i;
    static const int signals[3] = {SIGINT, SIGTERM, SIGHUP};

    if (!listen)
        listen = "127.0.0.1:8080";
    if (cli_parse_addr(&addr, listen, why, sizeof why) < 0)
        return cli_usage_error(&cli_cmd_serve,
                               "--listen \"%s\": %s (e.g. \"127.0.0.1:8080\")",
                               listen, why);
    if (!tfile && !serve_is_loopback((struct sockaddr *)&addr))
        return cli_usage_error(&cli_cmd_serve,
                               "--listen %s is reachable from other machines: "
                               "give --token-file FILE, or listen on "
                               "127.0.0.1",
                               listen);
    if (tfile && (rc = read_token(&token, tfile)) != 0)
        return rc;
    if ((rc = cli_open_db(ctx, CLI_DB_EXISTING)) != 0) {
        free(token);
        return rc;
    }
    /* A client gone while an answer is written is an error for that write
     * (EPIPE), not the end of the server. */
    signal(SIGPIPE, SIG_IGN);
    memset(&s, 0, sizeof s);
    uv_loop_init(&s.loop);
    cfg.db = ctx->db;
    cfg.allow_actions = cli_arg_count(a, "allow-actions") > 0;
    cfg.token = token;
    if (cli_listen_page(&s.web, &s.loop, (struct sockaddr *)&addr, &cfg, url,
                        sizeof url, why, sizeof why) < 0) {
        cli_errorf("%s", why);
        serve_close(s.web, NULL, NULL);
        uv_run(&s.loop, UV_RUN_DEFAULT);
        uv_loop_close(&s.loop);
        free(token);
        return CLI_EXIT_ERROR;
    }
    free(token);
    for (i = 0; i < 3; i++) {
        uv_signal_init(&s.loop, &s.sig[i]);
        s.sig[i].data = &s;
        uv_signal_start(&s.sig[i], on_signal, signals[i]);
    }
    fprintf(stderr, "planctl: serving %s (%s)\n", url,
            cfg.allow_actions ? "actions allowed" : "read-only");
    fflush(stderr);
    uv_run(&s.loop, UV_RUN_DEFAULT);
    uv_loop_close(&s.loop);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_serve = {
    "serve",
    "Serve the web page and the JSON API",
    "[--listen ADDR] [--allow-actions] [--token-file FILE]",
    "Serves a web page for the runs: the instances (filter, sort, pages),\n"
    "one instance's plans, parameters (secrets masked), queue and history,\n"
    "one run's attempts with their output, its events and its timeline,\n"
    "and the engines.  Open pages update within a second of any change,\n"
    "whoever makes it, without a reload.  /api/v1/ answers the documents of\n"
    "-o json: /api/v1/instances, /api/v1/instances/NAME (status),\n"
    ".../history, .../events, .../logs, /api/v1/engines,\n"
    "/api/v1/definitions.\n"
    "\n"
    "Read-only unless --allow-actions: then the page's forms and POST\n"
    "/api/v1/instances/NAME/{trigger,cancel,pause,resume,retry} (a JSON\n"
    "body) act through the same admission as the commands, recorded in\n"
    "the events with actor \"web ADDRESS\".\n"
    "\n"
    "Listens on loopback (127.0.0.1:8080) by default.  Another address\n"
    "needs --token-file: every request must then carry the token, as\n"
    "'Authorization: Bearer TOKEN' or through /login?token=TOKEN, which\n"
    "sets a cookie for the browser.  Runs until SIGINT, SIGTERM or SIGHUP.",
    NULL,
    flags,
    examples,
    run};
