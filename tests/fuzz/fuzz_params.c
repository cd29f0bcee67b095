/*
 * fuzz_params.c - the libFuzzer target for parameter values, from the
 * command line to the stored snapshot: `-p NAME=VALUE` split by
 * cli_parse_params(), then planctl_instance_create() and
 * planctl_instance_set() on a real database, whose answers are compared
 * with a reference written here from the rules of DESIGN §4 and the
 * planctl-definition(5):
 *
 *   - NAME=VALUE splits at the first '='; an entry without one goes on as
 *     a name without a value;
 *   - an entry without a value or a name, a name given twice, an unknown
 *     name, a missing required parameter or a value that is not valid
 *     UTF-8 is refused with PLANCTL_EINVAL, and nothing changes;
 *   - an accepted value is stored byte for byte, and the run's snapshot
 *     is the defaults overlaid with the values given;
 *   - set runs the plan the changed parameters' triggers name (those
 *     without a trigger add nothing; none has one: update), refuses a
 *     change whose triggers name two plans, and admits nothing when no
 *     value changes.
 *
 * The input is the list of -p values, separated by NUL bytes.  One
 * database in a temporary directory (on /dev/shm when there is one) serves
 * every input; each input creates its instances and removes them again.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "planctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The CLI's cli/main.c, its main() renamed, so that every CLI source links
 * whatever args.c comes to need (as in fuzz_cli_args.c). */
int planctl_cli_main(int argc, char **argv);
#define main planctl_cli_main
#include "cli/main.c"
#undef main

#define MAX_VALUES 16

/* The definition the values are given to.  REQ is required; the others
 * have defaults or are optional, and name the plan a change runs. */
static const char definition[] =
    "{\"name\":\"pz\",\"version\":\"1\","
    "\"parameters\":["
    "{\"name\":\"NODE_COUNT\",\"default\":\"3\",\"trigger\":\"update\"},"
    "{\"name\":\"BACKUP_NAME\",\"required\":false,\"trigger\":\"backup\"},"
    "{\"name\":\"REQ\",\"required\":true},"
    "{\"name\":\"x.y-z\",\"default\":\"\",\"trigger\":\"deploy\"}],"
    "\"tasks\":[{\"name\":\"t\",\"kind\":\"Dummy\",\"spec\":{}}],"
    "\"plans\":{"
    "\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\","
    "\"tasks\":[\"t\"]}]}]},"
    "\"update\":{\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\","
    "\"tasks\":[\"t\"]}]}]},"
    "\"backup\":{\"phases\":[{\"name\":\"p\",\"steps\":[{\"name\":\"s\","
    "\"tasks\":[\"t\"]}]}]}}}";

static const struct {
    const char *name, *def, *plan; /* def NULL: no default; plan NULL: no
                                      trigger */
} known[] = {{"NODE_COUNT", "3", "update"},
             {"BACKUP_NAME", NULL, "backup"},
             {"REQ", NULL, NULL},
             {"x.y-z", "", "deploy"}};
#define NKNOWN (sizeof known / sizeof known[0])

static char dir[256];
static char db_path[300];
static planctl *db;

static void require(int ok)
{
    if (!ok)
        abort();
}

static void cleanup(void)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-engine"};
    char path[400];
    size_t i;

    planctl_close(db);
    db = NULL;
    for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(path, sizeof path, "%s%s", db_path, suffixes[i]);
        unlink(path);
    }
    rmdir(dir);
}

static void setup(void)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

    snprintf(dir, sizeof dir, "%s/fuzz-params.XXXXXX", base);
    require(mkdtemp(dir) != NULL);
    snprintf(db_path, sizeof db_path, "%s/p.db", dir);
    require(planctl_open(&db, db_path, NULL) == 0);
    require(planctl_definition_apply(NULL, db, definition,
                                     sizeof definition - 1, "pz.json") == 0);
    atexit(cleanup);
}

/* RFC 3629 UTF-8, written apart from the library's: no overlong forms,
 * no surrogates, nothing past U+10FFFF. */
static int utf8_valid(const unsigned char *s)
{
    while (*s) {
        unsigned c = *s, cp, min;
        int n, i;

        if (c < 0x80) {
            s++;
            continue;
        }
        if ((c & 0xe0) == 0xc0)
            n = 1, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0)
            n = 2, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0)
            n = 3, cp = c & 0x07, min = 0x10000;
        else
            return 0;
        for (i = 1; i <= n; i++) {
            if ((s[i] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        s += n + 1;
    }
    return 1;
}

static int known_index(const char *name)
{
    size_t i;

    for (i = 0; i < NKNOWN; i++)
        if (strcmp(known[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* The values the library must accept: every entry NAME=VALUE with a
 * name, no name twice, every name known, every value valid UTF-8.
 * Returns 0 or PLANCTL_EINVAL. */
static int ref_values_ok(const planctl_param *params, size_t n)
{
    size_t i, j;

    for (i = 0; i < n; i++) {
        if (!params[i].value || !params[i].name[0] ||
            known_index(params[i].name) < 0 ||
            !utf8_valid((const unsigned char *)params[i].value))
            return PLANCTL_EINVAL;
        for (j = 0; j < i; j++)
            if (strcmp(params[i].name, params[j].name) == 0)
                return PLANCTL_EINVAL;
    }
    return 0;
}

/* The instance's exported runs, newest last, and its explicit params. */
static json_t *export_instance(const char *name)
{
    char *text = NULL;
    json_t *doc;

    require(planctl_export_json(&text, db, name) == 0);
    doc = json_loads(text, 0, NULL);
    planctl_free(text);
    require(doc != NULL);
    return doc;
}

/* A JSON column as stored: text in the bundle, or already an object. */
static json_t *column_object(json_t *row, const char *key)
{
    json_t *v = json_object_get(row, key);

    if (json_is_string(v))
        return json_loads(json_string_value(v), 0, NULL);
    return json_incref(v);
}

/* The last run of the exported instance must be a run of plan with
 * exactly the snapshot want (name -> value, NULL: absent). */
static void expect_last_run(const char *instance, const char *plan,
                            const char *const want[NKNOWN])
{
    json_t *doc = export_instance(instance);
    json_t *runs = json_object_get(doc, "runs");
    json_t *run = json_array_get(runs, json_array_size(runs) - 1);
    json_t *snap = column_object(run, "params");
    size_t i, present = 0;

    require(run && snap && json_is_object(snap));
    require(strcmp(json_string_value(json_object_get(run, "plan")), plan) == 0);
    for (i = 0; i < NKNOWN; i++) {
        json_t *v = json_object_get(snap, known[i].name);

        if (!want[i]) {
            require(v == NULL);
            continue;
        }
        require(json_is_string(v) &&
                strcmp(json_string_value(v), want[i]) == 0);
        present++;
    }
    require(json_object_size(snap) == present); /* nothing else */
    json_decref(snap);
    json_decref(doc);
}

static void remove_instance(const char *name)
{
    int64_t run = 0;
    int rc = planctl_run_cancel(&run, db, name, "fuzz");

    require(rc == 0 || rc == PLANCTL_ENOTFOUND);
    require(planctl_instance_delete(&run, db, name, 1) == 0);
}

/* create: the values straight as the deploy run's snapshot. */
static void check_create(const planctl_param *params, size_t n)
{
    const char *want[NKNOWN];
    int64_t run = 0;
    int rc, ref = ref_values_ok(params, n), have_req = 0;
    size_t i;

    for (i = 0; i < NKNOWN; i++)
        want[i] = known[i].def;
    for (i = 0; ref == 0 && i < n; i++) {
        int k = known_index(params[i].name);

        want[k] = params[i].value;
        have_req |= k == 2;
    }
    if (ref == 0 && !have_req)
        ref = PLANCTL_EINVAL;
    rc = planctl_instance_create(&run, db, "c", "pz", NULL, params, n);
    require(rc == ref);
    require(planctl_errmsg(db) != NULL);
    if (rc != 0) {
        char *text = NULL;

        /* Nothing was created. */
        require(planctl_status_json(&text, db, "c", NULL) == PLANCTL_ENOTFOUND);
        return;
    }
    require(run > 0);
    expect_last_run("c", "deploy", want);
    remove_instance("c");
}

/* set, after a create with REQ=r and its run cancelled: the changed
 * values select the plan. */
static void check_set(const planctl_param *params, size_t n)
{
    static const planctl_param base = {"REQ", "r"};
    const char *want[NKNOWN], *plan = NULL;
    int64_t run = 0, run2 = 0;
    int rc, ref = ref_values_ok(params, n), changed = 0;
    size_t i;

    for (i = 0; i < NKNOWN; i++)
        want[i] = known[i].def;
    want[2] = "r";
    require(planctl_instance_create(&run, db, "s", "pz", NULL, &base, 1) == 0);
    require(planctl_run_cancel(NULL, db, "s", NULL) == 0);
    for (i = 0; ref == 0 && i < n; i++) {
        int k = known_index(params[i].name);

        if (want[k] && strcmp(want[k], params[i].value) == 0)
            continue;
        want[k] = params[i].value;
        changed = 1;
        if (!known[k].plan)
            continue; /* no trigger: adds nothing beside one */
        if (plan && strcmp(plan, known[k].plan) != 0)
            ref = PLANCTL_EINVAL; /* two plans: refused */
        plan = known[k].plan;
    }
    if (!plan)
        plan = "update"; /* no changed parameter has a trigger */
    if (n == 0)
        ref = PLANCTL_EINVAL; /* nothing given */
    rc = planctl_instance_set(&run2, db, "s", params, n);
    require(rc == ref);
    if (rc == 0 && changed) {
        require(run2 > run);
        expect_last_run("s", plan, want);
    } else {
        /* Refused or nothing changed: no run, the instance as it was. */
        const char *orig[NKNOWN];

        require(run2 == 0);
        for (i = 0; i < NKNOWN; i++)
            orig[i] = known[i].def;
        orig[2] = "r";
        expect_last_run("s", "deploy", orig);
    }
    remove_instance("s");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf, *list[MAX_VALUES], *storage = NULL;
    planctl_param *params = NULL;
    size_t n = 0, i, start = 0;
    FILE *saved = stderr, *err;
    char *errtext = NULL;
    size_t errlen = 0;
    int rc;

    if (!db)
        setup();
    buf = malloc(size + 1);
    require(buf != NULL);
    memcpy(buf, data, size);
    buf[size] = '\0';
    for (i = 0; i <= size && n < MAX_VALUES; i++) {
        if (i == size || buf[i] == '\0') {
            if (i > start || i < size) /* a trailing NUL ends the list */
                list[n++] = buf + start;
            start = i + 1;
        }
    }

    /* The command line's split: never a complaint of its own (the
     * library reports bad entries with every other problem), NAME=VALUE
     * split at the first '=', an entry without one passed on as a name
     * without a value. */
    err = open_memstream(&errtext, &errlen);
    require(err != NULL);
    stderr = err;
    rc = cli_parse_params(&params, &storage, (const char *const *)list, n);
    stderr = saved;
    fclose(err);
    require(rc == 0 && errlen == 0);
    free(errtext);
    for (i = 0; i < n; i++) {
        const char *eq = strchr(list[i], '=');
        size_t nl = strlen(params[i].name);

        require(strchr(params[i].name, '=') == NULL);
        require(strncmp(list[i], params[i].name, nl) == 0);
        if (!eq)
            require(params[i].value == NULL && list[i][nl] == '\0');
        else
            require(list[i][nl] == '=' && params[i].value &&
                    strcmp(eq + 1, params[i].value) == 0);
    }

    check_create(params, n);
    check_set(params, n);
    free(params);
    free(storage);
    free(buf);
    return 0;
}
