/*
 * fuzz_bundle.c - the libFuzzer target for planctl_import_json(): any
 * bytes, imported into a fresh planctl database (a real SQLite file in a
 * temporary directory, on /dev/shm when there is one).
 *
 * Properties, whatever the input:
 *   - the answer is 0 or one of the documented refusals (EINVAL, ETOONEW,
 *     ECONFLICT), never an internal error, with a one-line message;
 *   - a refusal imports nothing: no instance, definition or event;
 *   - an accepted bundle leaves a database that agrees with itself:
 *     planctl_verify() passes, status, history and replay answer for the
 *     instance, and its export imports again under another name, after
 *     which verify still passes.
 *
 * Each input starts from the same empty, migrated database: its bytes are
 * made once and written back before every input, so an input's outcome
 * never depends on the ones before it.
 */
#include <fcntl.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256];
static char db_path[300];
static unsigned char *blank; /* an empty, migrated database file */
static size_t blank_len;

static void require(int ok)
{
    if (!ok)
        abort();
}

static void remove_db(void)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal",
                                           "-engine"};
    char path[400];
    size_t i;

    for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(path, sizeof path, "%s%s", db_path, suffixes[i]);
        unlink(path);
    }
}

static void cleanup(void)
{
    remove_db();
    rmdir(dir);
    free(blank);
}

static void write_all(const char *path, const unsigned char *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    require(fd >= 0);
    while (len > 0) {
        ssize_t n = write(fd, buf, len);

        require(n > 0);
        buf += n;
        len -= (size_t)n;
    }
    require(close(fd) == 0);
}

static void setup(void)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    planctl *p = NULL;
    FILE *f;
    long len;

    snprintf(dir, sizeof dir, "%s/fuzz-bundle.XXXXXX", base);
    require(mkdtemp(dir) != NULL);
    snprintf(db_path, sizeof db_path, "%s/b.db", dir);
    /* Closing the last connection checkpoints the WAL into the file. */
    if (planctl_open(&p, db_path, NULL) != 0) {
        fprintf(stderr, "open %s: %s\n", db_path, planctl_errmsg(p));
        abort();
    }
    planctl_close(p);
    f = fopen(db_path, "rb");
    require(f != NULL);
    require(fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0);
    rewind(f);
    blank = malloc((size_t)len);
    require(blank != NULL);
    require(fread(blank, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    blank_len = (size_t)len;
    atexit(cleanup);
}

static void one_line(const planctl *p)
{
    const char *msg = planctl_errmsg(p);

    require(msg[0] != '\0' && strchr(msg, '\n') == NULL);
}

/* The number of entries of array key in the document a call returned
 * (rc and text are what the call gave). */
static size_t count(planctl *p, int rc, char *text, const char *key)
{
    json_t *doc;
    size_t n;

    if (rc != 0) {
        fprintf(stderr, "reading %s: %s: %s\n", key, planctl_errname(rc),
                planctl_errmsg(p));
        abort();
    }
    doc = json_loads(text, 0, NULL);
    planctl_free(text);
    require(doc != NULL && json_is_array(json_object_get(doc, key)));
    n = json_array_size(json_object_get(doc, key));
    json_decref(doc);
    return n;
}

static void expect_empty(planctl *p)
{
    char *text = NULL;
    int rc;

    rc = planctl_instances_json(&text, p);
    require(count(p, rc, text, "instances") == 0);
    rc = planctl_definitions_json(&text, p);
    require(count(p, rc, text, "definitions") == 0);
    rc = planctl_events_json(&text, p, NULL);
    require(count(p, rc, text, "events") == 0);
}

static void expect_consistent(planctl *p, const char *name)
{
    char *text = NULL;

    if (planctl_verify(&text, p) != 0) {
        fprintf(stderr, "verify: %s\n", planctl_errmsg(p));
        abort();
    }
    planctl_free(text);
    require(planctl_status_json(&text, p, name, NULL) == 0);
    planctl_free(text);
    require(planctl_history_json(&text, p, name, NULL) == 0);
    planctl_free(text);
    require(planctl_replay_json(&text, p, name, NULL) == 0);
    planctl_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    planctl *p = NULL;
    char *out = NULL, *bundle = NULL, *name = NULL;
    json_t *doc;
    int rc;

    if (!blank)
        setup();
    remove_db();
    write_all(db_path, blank, blank_len);
    require(planctl_open(&p, db_path, NULL) == 0);

    /* data is not NUL-terminated: the length is the whole input. */
    rc = planctl_import_json(&out, p, (const char *)data, size, NULL);
    if (rc != 0) {
        if (rc != PLANCTL_EINVAL && rc != PLANCTL_ETOONEW &&
            rc != PLANCTL_ECONFLICT) {
            fprintf(stderr, "import: %s: %s\n", planctl_errname(rc),
                    planctl_errmsg(p));
            abort();
        }
        require(out == NULL);
        one_line(p);
        expect_empty(p);
        planctl_close(p);
        return 0;
    }

    /* {"schema":1,"instance":NAME,"runs":N,"events":N} */
    doc = json_loads(out, 0, NULL);
    planctl_free(out);
    require(doc != NULL && json_is_string(json_object_get(doc, "instance")));
    name = strdup(json_string_value(json_object_get(doc, "instance")));
    json_decref(doc);
    require(name != NULL);
    expect_consistent(p, name);

    /* What was imported exports, and the export imports again. */
    require(planctl_export_json(&bundle, p, name) == 0);
    rc = planctl_import_json(NULL, p, bundle, strlen(bundle), "fuzz-copy");
    if (rc != 0 && strcmp(name, "fuzz-copy") != 0) {
        fprintf(stderr, "re-import: %s: %s\n", planctl_errname(rc),
                planctl_errmsg(p));
        abort();
    }
    if (rc == 0)
        expect_consistent(p, "fuzz-copy");
    planctl_free(bundle);
    free(name);
    planctl_close(p);
    return 0;
}
