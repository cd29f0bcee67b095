/* test_shellspec.c - the shell spec's one table (core/shellspec.c):
 * validation and the shell executor accept and refuse the same specs. */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/def.h"
#include "core/kinds.h"
#include "core/shellspec.h"
#include "engine/executors.h"
#include "engine/job.h"
#include "testutil.h"

/* One task t of kind shell with a spec, in a definition that is
 * otherwise valid. */
#define DEFINITION                                                             \
    "{\"name\":\"zk\",\"version\":\"1\",\"tasks\":[{\"name\":\"t\","           \
    "\"kind\":\"shell\",\"spec\":%s}],\"plans\":{\"deploy\":{\"phases\":[{"    \
    "\"name\":\"p\",\"steps\":[{\"name\":\"s\",\"tasks\":[\"t\"]}]}]}}}"

/* Where both readers' lines are: the spec of the definition's task. */
#define AT "tasks[0].spec"

/* The spec.env rules only validation applies: the executor still runs
 * definitions stored before them. */
static const char *const strict_only[] = {
    ": must be an environment variable name: ",
    ": names starting with PLANCTL_ are reserved for the variables the "
    "engine sets"};

/* ---- the readers -------------------------------------------------------- */

/* Appends every error of l to text (a new string), a line each. */
static char *lines_of(const pctl_ferr_list *l)
{
    char *text = strdup("");
    size_t i;

    for (i = 0; i < l->n; i++) {
        char *line = pctl_ferr_render(&l->items[i]);
        char *more = tu_fmt("%s%s\n", text, line);

        pctl_free(line);
        free(text);
        text = more;
    }
    return text;
}

/* Validation's lines about spec (JSON text), "" when it is valid. */
static char *validation(const char *spec)
{
    char *json = tu_fmt(DEFINITION, spec), *text;
    pctl_kinds kinds = PCTL_KINDS_INIT;
    pctl_def_opts opts = PCTL_DEF_OPTS_INIT;
    pctl_ferr_list l = PCTL_FERR_LIST_INIT;
    pctl_def *d = NULL;
    int rc;

    opts.kinds = &kinds;
    rc = pctl_def_parse(&d, json, strlen(json), NULL, &opts, &l);
    assert_int_equal(rc, l.n ? PLANCTL_EDEFINITION : 0);
    text = lines_of(&l);
    pctl_def_free(d);
    pctl_ferr_list_clear(&l);
    pctl_kinds_clear(&kinds);
    free(json);
    return text;
}

/* The executor's walk over spec: its lines (what validation would say of
 * the problems it stops at) in *lines, and its message in msg ("" when it
 * accepts the spec).  Returns its result, 0 or PLANCTL_EINVAL. */
static int executor_walk(char **lines, char msg[PCTL_SHELL_MSG_MAX],
                         const char *spec)
{
    json_t *root = json_loads(spec, JSON_REJECT_DUPLICATES, NULL);
    pctl_sink s = PCTL_SINK_INIT;
    pctl_shell_spec out;
    int rc;

    assert_true(json_is_object(root));
    assert_int_equal(pctl_sink_key(&s, "tasks"), 0);
    assert_int_equal(pctl_sink_index(&s, 0), 0);
    assert_int_equal(pctl_sink_key(&s, "spec"), 0);
    msg[0] = '\0';
    rc = pctl_shell_spec_decode(&out, msg, PCTL_SHELL_MSG_MAX, &s, root,
                                PCTL_SHELL_EXECUTE);
    *lines = lines_of(&s.errs);
    pctl_sink_clear(&s);
    json_decref(root);
    return rc;
}

typedef struct report {
    int finished;
    planctl_outcome outcome;
    char *message;
} report;

static void on_finish(planctl_job *job, void *owner)
{
    report *r = owner;

    r->finished++;
    r->outcome = job->outcome;
    r->message = job->message ? strdup(job->message) : NULL;
    pctl_hub_close(job->hub, NULL, NULL);
    pctl_job_free(job);
}

/* The shell executor itself on spec, on a real loop, to its end (a spec
 * it accepts runs: they run only `true`).  Returns its message, or NULL. */
static char *executor(const char *spec, planctl_outcome *outcome)
{
    const planctl_executor *ex = pctl_executor_shell();
    planctl_task_info info = {"zk", "deploy", "p", "s", "t",    "shell", spec,
                              "{}", 1,        1,   0,   "0123", NULL};
    report r = {0, PLANCTL_OUTCOME_DONE, NULL};
    planctl_job *job;
    uv_loop_t loop;
    pctl_hub hub;

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(pctl_hub_init(&hub, &loop), 0);
    assert_non_null(job = pctl_job_new(&hub, on_finish, &r));
    assert_int_equal(ex->start(job, &info, ex->data), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(r.finished, 1);
    *outcome = r.outcome;
    return r.message;
}

/* ---- the property ------------------------------------------------------- */

/* 1 if line (with its '\n') is one of text's lines. */
static int has_line(const char *text, const char *line, size_t len)
{
    const char *p;

    for (p = text; *p; p = strchr(p, '\n') + 1)
        if (strncmp(p, line, len) == 0)
            return 1;
    return 0;
}

/* 1 if line is one of the rules only validation applies. */
static int strict(const char *line, size_t len)
{
    char *s = tu_fmt("%.*s", (int)len, line);
    int yes = strncmp(s, AT ".env", strlen(AT ".env")) == 0 &&
              (strstr(s, strict_only[0]) || strstr(s, strict_only[1]));

    free(s);
    return yes;
}

/*
 * Validation and the executor agree about spec: validation accepts it
 * only if the executor does; when the executor refuses it, validation
 * does too, and every problem the executor stops at is one of
 * validation's errors (so is the executor's first); when only validation
 * refuses it, it is for the spec.env names the executor lets through.
 * With run set, the executor itself (not only its walk) runs it, and
 * must say what its walk says.  Returns whether the executor accepted it.
 */
static int check_same(const char *spec, int run)
{
    char msg[PCTL_SHELL_MSG_MAX], *lines, *valid = validation(spec);
    int rc = executor_walk(&lines, msg, spec);
    const char *p, *end;

    if (rc != 0 && rc != PLANCTL_EINVAL)
        fail_msg("%s: the executor's walk returned %d", spec, rc);
    if (!*valid && rc)
        fail_msg("%s: valid, but the executor refuses it: %s", spec, msg);
    if (rc && !*lines)
        fail_msg("%s: the executor refuses it (%s) for nothing validation "
                 "says",
                 spec, msg);
    for (p = lines; *p; p = end + 1) {
        end = strchr(p, '\n');
        if (!has_line(valid, p, (size_t)(end - p + 1)))
            fail_msg("%s: the executor stops at\n%.*s\nwhich validation "
                     "does not say; it says:\n%s",
                     spec, (int)(end - p), p, valid);
    }
    for (p = valid; !rc && *p; p = end + 1) {
        end = strchr(p, '\n');
        if (!strict(p, (size_t)(end - p)))
            fail_msg("%s: the executor accepts it, validation refuses it "
                     "for\n%.*s",
                     spec, (int)(end - p), p);
    }
    if (run || rc) {
        planctl_outcome o;
        char *said = executor(spec, &o);
        char *want = tu_fmt("shell spec: %s", msg);
        int refused = said && strncmp(said, "shell spec: ", 12) == 0;

        if (rc && (o != PLANCTL_OUTCOME_FATAL || !said || strcmp(said, want)))
            fail_msg("%s: the executor says \"%s\", its walk \"%s\"", spec,
                     said ? said : "(null)", want);
        if (!rc && refused)
            fail_msg("%s: the executor refuses it: %s", spec, said);
        free(want);
        free(said);
    }
    free(lines);
    free(valid);
    return rc == 0;
}

/* ---- tests -------------------------------------------------------------- */

/* Specs written to mean something, each with what both should say. */
static void test_same_verdicts(void **state)
{
    static const struct {
        const char *spec;
        int valid, runs;
    } cases[] = {
        {"{\"argv\":[\"true\"]}", 1, 1},
        {"{\"argv\":[\"true\",\"\"],\"env\":{\"A\":\"1\",\"_b2\":\"\"},"
         "\"cwd\":\"/\",\"timeout\":\"5s\",\"fatal_exit_codes\":[1,255]}",
         1, 1},
        {"{\"command\":\"true\",\"fatal_exit_codes\":[]}", 1, 1},
        {"{\"command\":\"true\",\"cwd\":\"/no/such/dir\"}", 1, 1},
        /* The rule across fields. */
        {"{}", 0, 0},
        {"{\"env\":{}}", 0, 0},
        {"{\"argv\":[\"true\"],\"command\":\"true\"}", 0, 0},
        /* Each field, wrongly. */
        {"{\"argv\":[]}", 0, 0},
        {"{\"argv\":\"true\"}", 0, 0},
        {"{\"argv\":[\"true\",1,null]}", 0, 0},
        {"{\"command\":\"\"}", 0, 0},
        {"{\"command\":7}", 0, 0},
        {"{\"command\":null}", 0, 0},
        {"{\"command\":\"true\",\"cwd\":\"\"}", 0, 0},
        {"{\"command\":\"true\",\"cwd\":1}", 0, 0},
        {"{\"command\":\"true\",\"timeout\":\"soon\"}", 0, 0},
        {"{\"command\":\"true\",\"timeout\":\"0s\"}", 0, 0},
        {"{\"command\":\"true\",\"timeout\":\"-1s\"}", 0, 0},
        {"{\"command\":\"true\",\"timeout\":5}", 0, 0},
        {"{\"command\":\"true\",\"fatal_exit_codes\":[0]}", 0, 0},
        {"{\"command\":\"true\",\"fatal_exit_codes\":[256]}", 0, 0},
        {"{\"command\":\"true\",\"fatal_exit_codes\":[\"1\",1.0]}", 0, 0},
        {"{\"command\":\"true\",\"fatal_exit_codes\":{}}", 0, 0},
        {"{\"command\":\"true\",\"env\":[]}", 0, 0},
        {"{\"command\":\"true\",\"env\":{\"A\":1}}", 0, 0},
        {"{\"command\":\"true\",\"env\":{\"A=B\":\"1\"}}", 0, 0},
        {"{\"command\":\"true\",\"env\":{\"\":\"1\"}}", 0, 0},
        /* A wrong shape is the executor's line even after a bad name. */
        {"{\"command\":\"true\",\"env\":{\"A=B\":\"1\",\"C\":2}}", 0, 0},
        {"{\"command\":\"true\",\"shell\":\"bash\"}", 0, 0},
        {"{\"argvv\":[\"true\"]}", 0, 0},
        /* Many problems: the executor stops at the first member, in the
         * spec's order; validation says them all. */
        {"{\"timeout\":\"0s\",\"argvv\":1,\"cwd\":\"\",\"command\":7}", 0, 0},
        {"{\"cwd\":\"\",\"timeout\":\"0s\",\"argv\":[],\"command\":\"x\"}", 0,
         0},
        /* Names only validation refuses: definitions stored before the
         * rule still run. */
        {"{\"command\":\"true\",\"env\":{\"PLANCTL_X\":\"1\"}}", 0, 1},
        {"{\"command\":\"true\",\"env\":{\"A-B\":\"1\",\"1A\":\"2\","
         "\"PLANCTL_PARAM_A\":\"3\"}}",
         0, 1},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *valid = validation(cases[i].spec);

        if ((*valid == 0) != cases[i].valid)
            fail_msg("%s: validation says \"%s\"", cases[i].spec, valid);
        free(valid);
        if (check_same(cases[i].spec, 1) != cases[i].runs)
            fail_msg("%s: the executor should %s it", cases[i].spec,
                     cases[i].runs ? "run" : "refuse");
    }
}

/* Every spec made of these values (each field absent or one of them),
 * odd ones with their members in reverse order: the same property, the
 * executor itself run only where it refuses (where nothing is spawned). */
static void test_same_verdicts_combined(void **state)
{
    static const char *const argv[] = {NULL, "[\"true\"]", "[]", "[\"a\",1]",
                                       "\"a\""};
    static const char *const command[] = {NULL, "\"true\"", "\"\"", "7"};
    static const char *const env[] = {NULL,
                                      "{\"A\":\"1\"}",
                                      "{\"A=B\":\"1\"}",
                                      "{\"A\":1}",
                                      "{\"PLANCTL_X\":\"1\",\"a-b\":\"\"}",
                                      "{\"A=B\":1}",
                                      "[]"};
    static const char *const cwd[] = {NULL, "\"/\"", "\"\"", "1"};
    static const char *const timeout[] = {NULL, "\"1s\"", "\"0s\"", "\"soon\"",
                                          "5"};
    static const char *const codes[] = {NULL, "[1,255]", "[0]", "[\"1\"]",
                                        "{}"};
    static const char *const argvv[] = {NULL, "1"};
    static const struct {
        const char *name;
        const char *const *values;
        size_t n;
    } fields[] = {{"argv", argv, 5},       {"command", command, 4},
                  {"env", env, 7},         {"cwd", cwd, 4},
                  {"timeout", timeout, 5}, {"fatal_exit_codes", codes, 5},
                  {"argvv", argvv, 2}};
    size_t n = 1, k, f, accepted = 0;

    (void)state;
    for (f = 0; f < PCTL_COUNT(fields); f++)
        n *= fields[f].n;
    for (k = 0; k < n; k++) {
        const char *v[PCTL_COUNT(fields)];
        char spec[512] = "{";
        size_t rest = k, len = 1, j;

        for (j = 0; j < PCTL_COUNT(fields); j++) {
            v[j] = fields[j].values[rest % fields[j].n];
            rest /= fields[j].n;
        }
        for (j = 0; j < PCTL_COUNT(fields); j++) {
            size_t at = k % 2 ? PCTL_COUNT(fields) - 1 - j : j;

            if (v[at])
                len += (size_t)snprintf(spec + len, sizeof spec - len,
                                        "%s\"%s\":%s", len > 1 ? "," : "",
                                        fields[at].name, v[at]);
        }
        snprintf(spec + len, sizeof spec - len, "}");
        accepted += (size_t)check_same(spec, 0);
    }
    assert_true(accepted > 0 && accepted < n);
}

/* What the executor is given: the members' values, the same whichever
 * reader decodes. */
static void test_decoded(void **state)
{
    json_t *spec = json_loads(
        "{\"argv\":[\"a\",\"b\"],\"env\":{\"A\":\"1\"},\"cwd\":\"/tmp\","
        "\"timeout\":\"1m30s\",\"fatal_exit_codes\":[3,255,3]}",
        0, NULL);
    pctl_shell_spec out, v;
    char msg[PCTL_SHELL_MSG_MAX] = "";
    int i;

    (void)state;
    assert_int_equal(pctl_shell_spec_decode(&out, msg, sizeof msg, NULL, spec,
                                            PCTL_SHELL_EXECUTE),
                     0);
    assert_string_equal(msg, "");
    assert_ptr_equal(out.argv, json_object_get(spec, "argv"));
    assert_null(out.command);
    assert_ptr_equal(out.env, json_object_get(spec, "env"));
    assert_string_equal(out.cwd, "/tmp");
    assert_int_equal(out.timeout, 90000);
    for (i = 0; i < 256; i++)
        assert_int_equal(out.fatal_exit_codes[i], i == 3 || i == 255);
    assert_int_equal(
        pctl_shell_spec_decode(&v, NULL, 0, NULL, spec, PCTL_SHELL_VALIDATE),
        0);
    assert_memory_equal(&v, &out, sizeof v);
    json_decref(spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_verdicts),
        cmocka_unit_test(test_same_verdicts_combined),
        cmocka_unit_test(test_decoded),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
