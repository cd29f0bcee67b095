/* controller.c - an example controller embedding libplanctl: its own libuv
 * loop with its own handles, a custom task kind, and the engine. */

/*
 * What it does.  The controller keeps a small static web site (the
 * definition site.json) in a directory: an instance "site" whose plans
 * write, rewrite and remove files through the File task kind
 * (file_kind.c).  It runs in one of two modes:
 *
 *   controller --dir DIR [--db FILE] [--definition FILE] [-p NAME=VALUE]...
 *       serves: creates the instance if it does not exist, then runs the
 *       engine until SIGTERM or SIGINT, logging each change of the
 *       instance's status.  Operators drive it with the planctl command on
 *       the same database (`planctl --db FILE set site -p TITLE=Hi`).
 *
 *   controller --dir DIR ... --scenario
 *       drives the instance through create, update and delete itself,
 *       checks the files after each run, and exits 0 if all was right.
 *
 * The loop.  The loop is the controller's: it creates, runs and closes
 * it.  Beside the engine's handles it has its own: a timer (the scenario's
 * driver, or the status watcher) and a signal handle for each of SIGTERM
 * and SIGINT.  The first signal stops the engine gracefully (running steps
 * get GRACE_MS to finish), a second one at once.  The engine's stopped
 * callback closes the controller's handles, so uv_run() returns, and the
 * loop closes with nothing left on it.
 *
 * Two database handles.  The engine takes the handle it is given and uses
 * it from the loop thread from then on; the controller opens a second one
 * for its own calls (create, set, delete, status), as the planctl command
 * in another process would.  The engine notices their commits within its
 * change poll (100 ms).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <jansson.h>
#include <planctl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "file_kind.h"

#define GRACE_MS 10000         /* for running steps after the first signal */
#define SCENARIO_TICK_MS 50    /* how often the scenario looks at its run */
#define WATCH_TICK_MS 250      /* how often the watcher looks at the site */
#define STAGE_TIMEOUT_MS 60000 /* a scenario run that takes longer fails */
#define MAX_PARAMS 32

enum stage {
    STAGE_CREATE,   /* create the instance: its deploy run starts */
    STAGE_DEPLOY,   /* wait for deploy, check the files */
    STAGE_UPDATE,   /* change TITLE: its update run starts */
    STAGE_UPDATING, /* wait for update, check the files */
    STAGE_DELETE,   /* delete the instance: its cleanup run starts */
    STAGE_CLEANUP,  /* wait until the instance is gone, check the files */
    STAGE_DONE
};

typedef struct controller {
    /* options */
    const char *db_path, *dir, *def_path, *instance;
    planctl_param params[MAX_PARAMS];
    size_t nparams;
    int scenario;

    /* the loop and the controller's own handles */
    uv_loop_t loop;
    uv_timer_t tick;
    uv_signal_t sigterm, sigint;
    int signals; /* stop signals received */

    planctl *engine_db; /* the engine's from planctl_engine_new() on */
    planctl *db;        /* the controller's own */
    planctl_engine *engine;
    file_kind *files;
    char *definition; /* the definition's name, as registered */

    /* the scenario */
    enum stage stage;
    int64_t run;       /* the run being waited for */
    uint64_t stage_at; /* uv_now() when it started */
    int failed;        /* the scenario failed, or was interrupted */
    char last[128];    /* the watcher: the last status logged */
} controller;

static void say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("controller: ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    fflush(stdout);
}

/* Reports a failure: the scenario fails, and the engine stops. */
static void fail(controller *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("controller: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    c->failed = 1;
    c->stage = STAGE_DONE;
    planctl_engine_stop(c->engine, GRACE_MS);
}

/* ---- reading the status document ----------------------------------------- */

/*
 * Looks up run `run` of the instance through the status document: copies
 * its status (and message, if any) into status and msg.  Returns 0, 1 if
 * the document does not show the run, PLANCTL_ENOTFOUND once the instance
 * is gone (a completed cleanup removes it), or another negative code.
 */
static int run_status(controller *c, int64_t run, char *status, size_t ns,
                      char *msg, size_t nm)
{
    planctl_status_options o = PLANCTL_STATUS_OPTIONS_INIT;
    json_t *doc, *plan;
    char *text = NULL;
    size_t i;
    int rc;

    o.run = run;
    rc = planctl_status_json(&text, c->db, c->instance, &o);
    if (rc < 0)
        return rc;
    doc = json_loads(text, 0, NULL);
    planctl_free(text);
    rc = 1; /* unless found below */
    json_array_foreach(json_object_get(doc, "plans"), i, plan)
    {
        json_t *r = json_object_get(plan, "run");
        const char *m;

        if (json_integer_value(json_object_get(r, "id")) != run)
            continue;
        snprintf(status, ns, "%s",
                 json_string_value(json_object_get(r, "status")));
        m = json_string_value(json_object_get(r, "message"));
        snprintf(msg, nm, "%s", m ? m : "");
        rc = 0;
    }
    json_decref(doc);
    return rc;
}

/* ---- the scenario -------------------------------------------------------- */

/* What the directory must hold after a stage: NULL content = absent. */
typedef struct expect {
    const char *path, *content;
} expect;

static const expect after_deploy[] = {
    {"index.html", "<h1>Hello</h1>\n"},
    {"about/index.html", "<p>Run by ops.</p>\n"},
    {"site.conf", "title=Hello\nowner=ops\n"},
    {NULL, NULL}};
static const expect after_update[] = {
    {"index.html", "<h1>Bonjour</h1>\n"},
    {"about/index.html", "<p>Run by ops.</p>\n"},
    {"site.conf", "title=Bonjour\nowner=ops\n"},
    {NULL, NULL}};
static const expect after_cleanup[] = {{"index.html", NULL},
                                       {"about/index.html", NULL},
                                       {"about", NULL},
                                       {"site.conf", NULL},
                                       {NULL, NULL}};

/* Compares the directory with the expectations; 0 or -1 (said why). */
static int check_files(controller *c, const expect *ex)
{
    char path[4096], got[4096];

    for (; ex->path; ex++) {
        FILE *f;
        size_t n;

        snprintf(path, sizeof path, "%s/%s", c->dir, ex->path);
        if (!ex->content) {
            struct stat st;

            if (lstat(path, &st) == 0) {
                fail(c, "%s should be gone but is still there", path);
                return -1;
            }
            continue;
        }
        f = fopen(path, "rb");
        if (!f) {
            fail(c, "%s should exist: %s", path, strerror(errno));
            return -1;
        }
        n = fread(got, 1, sizeof got - 1, f);
        fclose(f);
        got[n] = '\0';
        if (strcmp(got, ex->content) != 0) {
            fail(c, "%s holds \"%s\", expected \"%s\"", path, got, ex->content);
            return -1;
        }
    }
    return 0;
}

/* Waits for c->run; returns 1 once it is COMPLETE, 0 while it is not yet,
 * -1 when it failed (said why).  gone_ok: the instance disappearing is
 * the run's success (cleanup). */
static int wait_run(controller *c, int gone_ok)
{
    char status[32], msg[512];
    int rc = run_status(c, c->run, status, sizeof status, msg, sizeof msg);

    if (rc == PLANCTL_ENOTFOUND && gone_ok)
        return 1;
    if (rc != 0) {
        fail(c, "cannot read run %lld: %s", (long long)c->run,
             rc < 0 ? planctl_errmsg(c->db) : "not in the status document");
        return -1;
    }
    if (strcmp(status, "COMPLETE") == 0)
        return 1;
    if (strcmp(status, "FATAL_ERROR") == 0 ||
        strcmp(status, "CANCELLED") == 0) {
        fail(c, "run %lld ended %s: %s", (long long)c->run, status, msg);
        return -1;
    }
    if (uv_now(&c->loop) - c->stage_at > STAGE_TIMEOUT_MS) {
        fail(c, "run %lld is still %s after %d s", (long long)c->run, status,
             STAGE_TIMEOUT_MS / 1000);
        return -1;
    }
    return 0;
}

static void next_stage(controller *c, enum stage s)
{
    c->stage = s;
    c->stage_at = uv_now(&c->loop);
}

static void scenario_tick(controller *c)
{
    static const planctl_param create_params[] = {{"TITLE", "Hello"},
                                                  {"OWNER", "ops"}};
    static const planctl_param update_params[] = {{"TITLE", "Bonjour"}};
    int rc = 0;

    switch (c->stage) {
    case STAGE_CREATE:
        rc = planctl_instance_create(&c->run, c->db, c->instance, c->definition,
                                     NULL, create_params, 2);
        if (rc < 0)
            break;
        say("created %s: deploy is run %lld", c->instance, (long long)c->run);
        next_stage(c, STAGE_DEPLOY);
        break;
    case STAGE_DEPLOY:
        if (wait_run(c, 0) == 1 && check_files(c, after_deploy) == 0) {
            say("deploy COMPLETE: the three files are in place");
            next_stage(c, STAGE_UPDATE);
        }
        break;
    case STAGE_UPDATE:
        rc =
            planctl_instance_set(&c->run, c->db, c->instance, update_params, 1);
        if (rc < 0)
            break;
        say("set TITLE=Bonjour: update is run %lld", (long long)c->run);
        next_stage(c, STAGE_UPDATING);
        break;
    case STAGE_UPDATING:
        if (wait_run(c, 0) == 1 && check_files(c, after_update) == 0) {
            say("update COMPLETE: index.html and site.conf say Bonjour");
            next_stage(c, STAGE_DELETE);
        }
        break;
    case STAGE_DELETE:
        rc = planctl_instance_delete(&c->run, c->db, c->instance, 0);
        if (rc < 0)
            break;
        say("deleted %s: cleanup is run %lld", c->instance, (long long)c->run);
        next_stage(c, STAGE_CLEANUP);
        break;
    case STAGE_CLEANUP:
        if (wait_run(c, 1) == 1 && check_files(c, after_cleanup) == 0) {
            unsigned long w = file_kind_worker_reports(c->files);
            unsigned long l = file_kind_loop_reports(c->files);
            char *summary = NULL;

            say("cleanup COMPLETE: the files are gone, and so is %s",
                c->instance);
            say("File tasks reported: %lu from the worker thread, %lu "
                "from the loop thread",
                w, l);
            if (w == 0 || l == 0) {
                fail(c, "expected reports from both threads");
                return;
            }
            if (planctl_verify(&summary, c->db) < 0) {
                fail(c, "verify: %s", planctl_errmsg(c->db));
                return;
            }
            say("verify: %s", summary);
            planctl_free(summary);
            say("scenario passed");
            c->stage = STAGE_DONE;
            planctl_engine_stop(c->engine, GRACE_MS);
        }
        break;
    case STAGE_DONE:
        break;
    }
    if (rc < 0)
        fail(c, "%s", planctl_errmsg(c->db));
}

/* ---- the watcher (serve mode) -------------------------------------------- */

/* Logs the instance's latest run whenever it changes: a new run, or a new
 * status of the same one (runs the operator starts with the planctl
 * command included). */
static void watch_tick(controller *c)
{
    planctl_history_options o = PLANCTL_HISTORY_OPTIONS_INIT;
    char *text = NULL, now[sizeof c->last];
    json_t *doc, *run;
    int rc;

    o.limit = 1;
    rc = planctl_history_json(&text, c->db, c->instance, &o);
    if (rc == PLANCTL_ENOTFOUND) {
        snprintf(now, sizeof now, "%s is gone", c->instance);
    } else if (rc < 0) {
        return; /* a busy database, most likely: look again next tick */
    } else {
        doc = json_loads(text, 0, NULL);
        run = json_array_get(json_object_get(doc, "runs"), 0);
        if (run)
            snprintf(now, sizeof now, "%s: %s run %lld %s", c->instance,
                     json_string_value(json_object_get(run, "plan")),
                     (long long)json_integer_value(json_object_get(run, "id")),
                     json_string_value(json_object_get(run, "status")));
        else
            snprintf(now, sizeof now, "%s: no run yet", c->instance);
        json_decref(doc);
    }
    planctl_free(text);
    if (strcmp(now, c->last) != 0) {
        say("%s", now);
        snprintf(c->last, sizeof c->last, "%s", now);
    }
}

/* ---- handles and the engine's life --------------------------------------- */

static void on_tick(uv_timer_t *t)
{
    controller *c = t->data;

    if (c->signals > 0)
        return; /* stopping */
    if (c->scenario)
        scenario_tick(c);
    else
        watch_tick(c);
}

static void on_signal(uv_signal_t *h, int signum)
{
    controller *c = h->data;
    const char *name = signum == SIGTERM ? "SIGTERM" : "SIGINT";

    if (c->signals++ == 0) {
        say("%s: stopping; running steps have %d s to finish", name,
            GRACE_MS / 1000);
        if (c->scenario && c->stage != STAGE_DONE)
            c->failed = 1; /* interrupted */
        planctl_engine_stop(c->engine, GRACE_MS);
    } else {
        say("%s again: stopping now", name);
        planctl_engine_stop(c->engine, 0);
    }
}

/* The engine has stopped and closed its handles; ours go too, and then
 * uv_run() returns. */
static void on_stopped(planctl_engine *e, void *data)
{
    controller *c = data;

    say("engine stopped%s", planctl_engine_status(e) < 0 ? " on an error" : "");
    uv_close((uv_handle_t *)&c->tick, NULL);
    uv_close((uv_handle_t *)&c->sigterm, NULL);
    uv_close((uv_handle_t *)&c->sigint, NULL);
}

/* ---- setup --------------------------------------------------------------- */

static int usage(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("controller: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fputs("usage: controller --dir DIR [--db FILE] [--definition FILE] "
          "[--instance NAME]\n"
          "                  [-p NAME=VALUE]... [--scenario]\n",
          stderr);
    return 2;
}

static int parse_args(controller *c, int argc, char **argv)
{
    int i;

    c->db_path = "controller.db";
    c->def_path = "site.json";
    c->instance = "site";
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--scenario") == 0) {
            c->scenario = 1;
            continue;
        }
        if (strcmp(a, "--dir") && strcmp(a, "--db") &&
            strcmp(a, "--definition") && strcmp(a, "--instance") &&
            strcmp(a, "-p"))
            return usage("unknown option \"%s\"", a);
        if (!v)
            return usage("%s needs a value", a);
        i++;
        if (strcmp(a, "--dir") == 0) {
            c->dir = v;
        } else if (strcmp(a, "--db") == 0) {
            c->db_path = v;
        } else if (strcmp(a, "--definition") == 0) {
            c->def_path = v;
        } else if (strcmp(a, "--instance") == 0) {
            c->instance = v;
        } else {
            char *eq = strchr(v, '=');

            if (!eq || eq == v)
                return usage("-p takes NAME=VALUE, not \"%s\"", v);
            if (c->nparams == MAX_PARAMS)
                return usage("at most %d -p", MAX_PARAMS);
            *eq = '\0';
            c->params[c->nparams].name = v;
            c->params[c->nparams].value = eq + 1;
            c->nparams++;
        }
    }
    if (!c->dir)
        return usage("--dir is required");
    if (c->scenario && c->nparams)
        return usage("--scenario sets its own parameters; drop -p");
    return 0;
}

/* Reads a whole file into a new buffer; NULL (said why) on error. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;

    if (!f) {
        fprintf(stderr, "controller: cannot read %s: %s\n", path,
                strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)n + 1)) &&
        fread(s, 1, (size_t)n, f) == (size_t)n) {
        s[n] = '\0';
        *len = (size_t)n;
    } else {
        fprintf(stderr, "controller: cannot read %s\n", path);
        free(s);
        s = NULL;
    }
    fclose(f);
    return s;
}

/* Registers the File kind's spec check on the engine's handle and applies
 * the definition with it; keeps the definition's name.  The engine is not
 * running yet, so the handle is still ours to use. */
static int apply_definition(controller *c)
{
    char *json, *out = NULL;
    size_t len = 0;
    json_t *doc;
    int rc;

    if (!(json = slurp(c->def_path, &len)))
        return -1;
    rc =
        planctl_kind_register(c->engine_db, "File", file_kind_check_spec, NULL);
    if (rc == 0)
        rc = planctl_definition_apply(&out, c->engine_db, json, len,
                                      c->def_path);
    free(json);
    if (rc < 0) {
        fprintf(stderr, "controller: %s\n", planctl_errmsg(c->engine_db));
        return -1;
    }
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    c->definition = strdup(json_string_value(json_object_get(doc, "name")));
    say("definition %s@%s %s", c->definition,
        json_string_value(json_object_get(doc, "version")),
        json_is_true(json_object_get(doc, "created")) ? "registered"
                                                      : "already registered");
    json_decref(doc);
    return c->definition ? 0 : -1;
}

/* Serve mode: creates the instance unless it exists. */
static int ensure_instance(controller *c)
{
    char *text = NULL;
    int64_t run;
    int rc = planctl_status_json(&text, c->db, c->instance, NULL);

    planctl_free(text);
    if (rc == 0)
        return 0;
    if (rc == PLANCTL_ENOTFOUND)
        rc = planctl_instance_create(&run, c->db, c->instance, c->definition,
                                     NULL, c->params, c->nparams);
    if (rc < 0) {
        fprintf(stderr, "controller: %s\n", planctl_errmsg(c->db));
        return -1;
    }
    say("created %s: deploy is run %lld", c->instance, (long long)run);
    return 0;
}

static int open_db(planctl **out, const char *path)
{
    int rc = planctl_open(out, path, NULL);

    if (rc < 0) {
        fprintf(stderr, "controller: %s\n",
                *out ? planctl_errmsg(*out) : planctl_strerror(rc));
        planctl_close(*out);
        *out = NULL;
    }
    return rc;
}

int main(int argc, char **argv)
{
    planctl_engine_options eo = PLANCTL_ENGINE_OPTIONS_INIT;
    controller c;
    int rc, code = 1, status;

    /* First, before anything uses SQLite: nothing in this process reads
     * SQLite's memory statistics, and they cost the engine a global mutex
     * on every allocation. */
    (void)planctl_process_init();
    memset(&c, 0, sizeof c);
    if ((rc = parse_args(&c, argc, argv)) != 0)
        return rc;
    if (mkdir(c.dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "controller: cannot create %s: %s\n", c.dir,
                strerror(errno));
        return 1;
    }
    say("libplanctl %s (built against %s)", planctl_libversion(),
        PLANCTL_VERSION);
    if (uv_loop_init(&c.loop) != 0) {
        fprintf(stderr, "controller: cannot create an event loop\n");
        return 1;
    }

    /* 1. The task kind, the database handles and the definition. */
    if (file_kind_new(&c.files, c.dir) < 0 ||
        open_db(&c.engine_db, c.db_path) < 0 || open_db(&c.db, c.db_path) < 0 ||
        apply_definition(&c) < 0 || (!c.scenario && ensure_instance(&c) < 0))
        goto done;

    /* 2. The engine, on our loop, with our executor for File. */
    rc = planctl_engine_new(&c.engine, c.engine_db, &c.loop, &eo);
    if (rc == 0)
        rc = planctl_engine_register(c.engine, "File",
                                     file_kind_executor(c.files));
    if (rc == 0)
        rc = planctl_engine_start(c.engine, on_stopped, &c);
    if (rc < 0) {
        /* ECONFLICT: another engine (a `planctl run`, another controller)
         * holds this database; the message names it. */
        fprintf(stderr, "controller: %s\n", planctl_errmsg(c.engine_db));
        goto done;
    }

    /* 3. Our own handles, beside the engine's. */
    uv_timer_init(&c.loop, &c.tick);
    uv_signal_init(&c.loop, &c.sigterm);
    uv_signal_init(&c.loop, &c.sigint);
    c.tick.data = c.sigterm.data = c.sigint.data = &c;
    uv_signal_start(&c.sigterm, on_signal, SIGTERM);
    uv_signal_start(&c.sigint, on_signal, SIGINT);
    next_stage(&c, STAGE_CREATE);
    if (c.scenario) {
        uv_timer_start(&c.tick, on_tick, 0, SCENARIO_TICK_MS);
    } else {
        uv_timer_start(&c.tick, on_tick, 0, WATCH_TICK_MS);
        say("running (pid %ld): database %s, files in %s; SIGTERM or "
            "Ctrl-C stops",
            (long)getpid(), c.db_path, c.dir);
    }

    /* 4. Until the engine has stopped and every handle is closed. */
    uv_run(&c.loop, UV_RUN_DEFAULT);
    status = planctl_engine_status(c.engine);
    if (status < 0)
        fprintf(stderr, "controller: the engine stopped: %s\n",
                planctl_errmsg(c.engine_db));
    else if (!c.failed)
        code = 0;

done:
    planctl_engine_free(c.engine);
    file_kind_free(c.files); /* no job is left: the engine has stopped */
    planctl_close(c.db);
    planctl_close(c.engine_db);
    free(c.definition);
    if (uv_loop_close(&c.loop) != 0) {
        fprintf(stderr, "controller: the loop still had open handles\n");
        code = 1;
    } else if (code == 0) {
        say("stopped cleanly");
    }
    return code;
}
