/* file_kind.c - the File task kind: apply and delete files under one
 * directory, applies on a worker thread, deletes on the loop thread. */

/*
 * Threads.  The engine calls start() and cancel() on the loop thread, and
 * neither may block.  An apply writes and fsyncs, which can block for
 * long on a busy disk, so start() only queues it; one worker thread
 * (enough for a demo; a pool works the same way) takes jobs from the
 * queue and reports each with planctl_step_finish(), the one engine call
 * that is safe from any thread.  A delete is a single unlink(), done at
 * once in start() and reported from there.
 *
 * Cancel.  The engine cancels a job on a run's cancel, a step's timeout
 * or shutdown, and then still expects exactly one report.  A job still in
 * the queue is taken out and reported "cancelled" by cancel() itself; the
 * job the worker is on is flagged, and the worker reports it when it gets
 * to a safe point (the outcome of a cancelled job is ignored anyway).  A
 * job that was already reported is in neither place, and cancel() does
 * nothing: the engine may cancel a job whose report is on its way.  The
 * queue and the worker's current job are guarded by one mutex, so cancel()
 * never touches a job after its report.
 */
#define _POSIX_C_SOURCE 200809L

#include "file_kind.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REL_PATH_MAX 200  /* bytes of a spec's path */
#define PARAM_NAME_MAX 63 /* as planctl's parameter names */

enum action { ACTION_APPLY, ACTION_DELETE };

typedef struct spec {
    enum action action;
    char *path;    /* relative to the directory */
    char *content; /* the template; NULL for a delete */
} spec;

/* One apply, from start() to its report. */
typedef struct work {
    struct work *next;
    planctl_job *job;
    char *rel;     /* the spec's path, for messages */
    char *path;    /* the full path */
    char *content; /* rendered */
    int cancelled; /* under the lock */
} work;

struct file_kind {
    planctl_executor ex;
    char *dir;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    work *head, *tail; /* queued, not started */
    work *current;     /* the worker's job, or NULL */
    int stop;
    unsigned long worker_reports; /* under the lock */
    unsigned long loop_reports;   /* loop thread only */
};

/* Writes a message into err (n bytes) and returns PLANCTL_EINVAL. */
static int invalid(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return PLANCTL_EINVAL;
}

static const char *errtext(int e, char *buf, size_t n)
{
    if (strerror_r(e, buf, n) != 0)
        snprintf(buf, n, "error %d", e);
    return buf;
}

/* ---- specs and templates ----------------------------------------------- */

/* Finds the next "{{ NAME }}" at or after s.  Returns 1 with *start and
 * *end around it and the name in name (NUL-terminated), 0 when there is
 * none, or PLANCTL_EINVAL with a message in err. */
static int next_ref(const char *s, const char **start, const char **end,
                    char name[PARAM_NAME_MAX + 1], char *err, size_t n)
{
    const char *open = strstr(s, "{{"), *p, *close;
    size_t len;

    if (!open)
        return 0;
    close = strstr(open + 2, "}}");
    if (!close)
        return invalid(err, n, "content: \"{{\" is not closed by \"}}\"");
    for (p = open + 2; *p == ' '; p++)
        ;
    for (len = 0; p + len < close && p[len] != ' '; len++) {
        char ch = p[len];

        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
              (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.'))
            break;
    }
    if (len == 0 || len > PARAM_NAME_MAX)
        return invalid(err, n,
                       "content: \"%.*s\" does not name a parameter; write "
                       "\"{{ NAME }}\"",
                       (int)(close + 2 - open), open);
    memcpy(name, p, len);
    name[len] = '\0';
    for (p += len; *p == ' '; p++)
        ;
    if (p != close)
        return invalid(err, n,
                       "content: \"%.*s\" does not name a parameter; write "
                       "\"{{ NAME }}\"",
                       (int)(close + 2 - open), open);
    *start = open;
    *end = close + 2;
    return 1;
}

/* A path must stay inside the directory: relative, no "." or ".."
 * component, no empty component. */
static int check_path(const char *rel, char *err, size_t n)
{
    const char *c = rel;

    if (!*rel)
        return invalid(err, n, "\"path\" must not be empty");
    if (strlen(rel) > REL_PATH_MAX)
        return invalid(err, n, "\"path\" is longer than %d bytes",
                       REL_PATH_MAX);
    if (*rel == '/')
        return invalid(err, n,
                       "\"path\" must be relative to the controller's "
                       "directory, not \"%s\"",
                       rel);
    while (*c) {
        size_t len = strcspn(c, "/");

        if (len == 0 || (len == 1 && c[0] == '.') ||
            (len == 2 && c[0] == '.' && c[1] == '.'))
            return invalid(err, n,
                           "\"path\" must not have empty, \".\" or \"..\" "
                           "components: \"%s\"",
                           rel);
        c += len;
        if (*c == '/')
            c++;
    }
    if (rel[strlen(rel) - 1] == '/')
        return invalid(err, n, "\"path\" must name a file, not \"%s\"", rel);
    return 0;
}

static void spec_free(spec *sp)
{
    free(sp->path);
    free(sp->content);
}

/* A string field without NUL bytes, copied; *out stays NULL on error. */
static int take_string(char **out, json_t *v, const char *key, char *err,
                       size_t n)
{
    if (!json_is_string(v))
        return invalid(err, n, "\"%s\" must be a string", key);
    if (strlen(json_string_value(v)) != json_string_length(v))
        return invalid(err, n, "\"%s\" must not contain NUL characters", key);
    *out = strdup(json_string_value(v));
    return *out ? 0 : PLANCTL_ENOMEM;
}

/* Decodes and checks a File spec.  Returns 0, PLANCTL_EINVAL with a
 * message in err, or PLANCTL_ENOMEM; *out is the caller's to free with
 * spec_free() either way. */
static int parse_spec(spec *out, const char *text, char *err, size_t n)
{
    json_error_t jerr;
    json_t *root, *v;
    const char *key;
    int rc = 0;

    memset(out, 0, sizeof *out);
    root = json_loads(text ? text : "{}", JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return invalid(err, n, "invalid JSON: %s", jerr.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return invalid(err, n, "expected a JSON object");
    }
    json_object_foreach(root, key, v)
    {
        if (rc < 0)
            break;
        if (strcmp(key, "path") == 0) {
            rc = take_string(&out->path, v, key, err, n);
        } else if (strcmp(key, "content") == 0) {
            rc = take_string(&out->content, v, key, err, n);
        } else if (strcmp(key, "action") == 0) {
            const char *a = json_string_value(v);

            if (a && strcmp(a, "apply") == 0)
                out->action = ACTION_APPLY;
            else if (a && strcmp(a, "delete") == 0)
                out->action = ACTION_DELETE;
            else
                rc = invalid(err, n,
                             "\"action\" must be \"apply\" or \"delete\"");
        } else {
            rc = invalid(err, n,
                         "unknown field \"%s\" (a File spec has path, "
                         "content and action)",
                         key);
        }
    }
    json_decref(root);
    if (rc < 0)
        return rc;
    if (!out->path)
        return invalid(err, n, "\"path\" is required");
    if ((rc = check_path(out->path, err, n)) < 0)
        return rc;
    if (out->action == ACTION_APPLY && !out->content)
        return invalid(err, n, "\"content\" is required to apply a file");
    if (out->action == ACTION_DELETE && out->content)
        return invalid(err, n, "\"content\" has no meaning for a delete");
    if (out->content) {
        char name[PARAM_NAME_MAX + 1];
        const char *s = out->content, *a, *b;

        while ((rc = next_ref(s, &a, &b, name, err, n)) == 1)
            s = b;
    }
    return rc;
}

int file_kind_check_spec(const char *spec_json, char *err, size_t err_size,
                         void *data)
{
    spec sp;
    int rc;

    (void)data;
    rc = parse_spec(&sp, spec_json, err, err_size);
    spec_free(&sp);
    return rc;
}

/* A growing string. */
typedef struct buf {
    char *s;
    size_t len, cap;
} buf;

static int buf_add(buf *b, const char *s, size_t len)
{
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        char *ns;

        while (cap < b->len + len + 1)
            cap *= 2;
        ns = realloc(b->s, cap);
        if (!ns)
            return PLANCTL_ENOMEM;
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, len);
    b->len += len;
    b->s[b->len] = '\0';
    return 0;
}

/* Replaces each "{{ NAME }}" of tmpl by the parameter's value in params
 * (the run's snapshot, a JSON object).  Returns 0 with *out (the caller's
 * to free), PLANCTL_EINVAL with a message in err, or PLANCTL_ENOMEM. */
static int render(char **out, const char *tmpl, const char *params, char *err,
                  size_t n)
{
    char name[PARAM_NAME_MAX + 1];
    const char *s = tmpl, *a, *b;
    json_error_t jerr;
    json_t *obj;
    buf o = {NULL, 0, 0};
    int rc;

    *out = NULL;
    obj = json_loads(params ? params : "{}", 0, &jerr);
    if (!json_is_object(obj)) {
        json_decref(obj);
        return invalid(err, n, "the run's parameters are not a JSON object");
    }
    while ((rc = next_ref(s, &a, &b, name, err, n)) == 1) {
        json_t *v = json_object_get(obj, name);
        const char *val = json_is_string(v) ? json_string_value(v) : "";

        if (!v || (!json_is_string(v) && !json_is_null(v))) {
            rc = invalid(err, n,
                         "content: the definition has no parameter \"%s\"",
                         name);
            break;
        }
        if ((rc = buf_add(&o, s, (size_t)(a - s))) < 0 ||
            (rc = buf_add(&o, val, strlen(val))) < 0)
            break;
        s = b;
    }
    if (rc == 0)
        rc = buf_add(&o, s, strlen(s));
    json_decref(obj);
    if (rc < 0) {
        free(o.s);
        return rc;
    }
    *out = o.s;
    return 0;
}

/* ---- the file system ---------------------------------------------------- */

static char *join(const char *dir, const char *rel)
{
    size_t a = strlen(dir), b = strlen(rel);
    char *s = malloc(a + b + 2);

    if (s) {
        memcpy(s, dir, a);
        s[a] = '/';
        memcpy(s + a + 1, rel, b + 1);
    }
    return s;
}

/* 1 if path holds exactly content, 0 if it does not or is absent, -1 with
 * errno on an error. */
static int holds(const char *path, const char *content)
{
    size_t len = strlen(content), got = 0;
    struct stat st;
    char chunk[4096];
    int fd = open(path, O_RDONLY), same = 1;

    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    if (fstat(fd, &st) < 0) {
        int e = errno;

        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st.st_mode) || (size_t)st.st_size != len) {
        close(fd);
        return 0;
    }
    while (same) {
        ssize_t r = read(fd, chunk, sizeof chunk);

        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;

            close(fd);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        if (got + (size_t)r > len || memcmp(chunk, content + got, (size_t)r))
            same = 0;
        got += (size_t)r;
    }
    close(fd);
    return same && got == len;
}

/* Creates the directories of path below dir (mkdir -p).  -1 with errno. */
static int make_parents(const char *path, size_t dirlen)
{
    char *p = strdup(path), *slash;

    if (!p)
        return -1;
    for (slash = strchr(p + dirlen + 1, '/'); slash;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST) {
            int e = errno;

            free(p);
            errno = e;
            return -1;
        }
        *slash = '/';
    }
    free(p);
    return 0;
}

/* Removes the directories of path below dir that are now empty, deepest
 * first; stops at the first that is not. */
static void prune_parents(const char *path, size_t dirlen)
{
    char *p = strdup(path), *slash;

    if (!p)
        return; /* best effort: an empty directory left behind is harmless */
    while ((slash = strrchr(p, '/')) && (size_t)(slash - p) > dirlen) {
        *slash = '\0';
        if (rmdir(p) < 0)
            break;
    }
    free(p);
}

/* Makes a rename durable: fsync of the directory that holds path. */
static int sync_parent(const char *path)
{
    char *p = strdup(path), *slash;
    int fd, rc = 0;

    if (!p)
        return -1;
    slash = strrchr(p, '/');
    if (slash)
        *slash = '\0';
    fd = open(slash ? p : ".", O_RDONLY | O_DIRECTORY);
    if (fd < 0 || fsync(fd) < 0)
        rc = -1;
    if (fd >= 0) {
        int e = errno;

        close(fd);
        errno = e;
    }
    free(p);
    return rc;
}

/* Writes content to tmp and fsyncs it.  -1 with errno. */
static int write_file(const char *tmp, const char *content)
{
    size_t len = strlen(content), done = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644), e;

    if (fd < 0)
        return -1;
    while (done < len) {
        ssize_t w = write(fd, content + done, len - done);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            goto fail;
        done += (size_t)w;
    }
    if (fsync(fd) < 0)
        goto fail;
    return close(fd);
fail:
    e = errno;
    close(fd);
    errno = e;
    return -1;
}

static int cancelled(file_kind *fk, work *w)
{
    int c;

    pthread_mutex_lock(&fk->lock);
    c = w->cancelled;
    pthread_mutex_unlock(&fk->lock);
    return c;
}

/* Apply, on the worker thread: leave a healthy file alone, else write it
 * next to its place, fsync, rename over it (readers see the old or the new
 * file, never half of one) and check it. */
static planctl_outcome apply(file_kind *fk, work *w, char *msg, size_t n)
{
    char *tmp = NULL, e[128];
    int h = holds(w->path, w->content);

    if (h == 1) {
        snprintf(msg, n, "%s: up to date", w->rel);
        return PLANCTL_OUTCOME_DONE;
    }
    if (h < 0) {
        snprintf(msg, n, "cannot read %s: %s", w->rel,
                 errtext(errno, e, sizeof e));
        return PLANCTL_OUTCOME_ERROR;
    }
    if (make_parents(w->path, strlen(fk->dir)) < 0) {
        snprintf(msg, n, "cannot create the directories of %s: %s", w->rel,
                 errtext(errno, e, sizeof e));
        return PLANCTL_OUTCOME_ERROR;
    }
    tmp = malloc(strlen(w->path) + sizeof ".tmp");
    if (!tmp) {
        snprintf(msg, n, "out of memory");
        return PLANCTL_OUTCOME_ERROR;
    }
    strcpy(tmp, w->path);
    strcat(tmp, ".tmp");
    if (write_file(tmp, w->content) < 0) {
        snprintf(msg, n, "cannot write %s: %s", w->rel,
                 errtext(errno, e, sizeof e));
        unlink(tmp);
        free(tmp);
        return PLANCTL_OUTCOME_ERROR;
    }
    if (cancelled(fk, w)) { /* the last moment to leave things as they were */
        unlink(tmp);
        free(tmp);
        snprintf(msg, n, "cancelled");
        return PLANCTL_OUTCOME_ERROR;
    }
    if (rename(tmp, w->path) < 0 || sync_parent(w->path) < 0) {
        snprintf(msg, n, "cannot replace %s: %s", w->rel,
                 errtext(errno, e, sizeof e));
        unlink(tmp);
        free(tmp);
        return PLANCTL_OUTCOME_ERROR;
    }
    free(tmp);
    /* Health: the file must now hold what the spec says.  Something else
     * writing it at the same time could make it differ; then the engine
     * starts the task again after its poll interval. */
    h = holds(w->path, w->content);
    if (h == 1) {
        snprintf(msg, n, "%s: written, %zu bytes", w->rel, strlen(w->content));
        return PLANCTL_OUTCOME_DONE;
    }
    if (h < 0) {
        snprintf(msg, n, "cannot read %s back: %s", w->rel,
                 errtext(errno, e, sizeof e));
        return PLANCTL_OUTCOME_ERROR;
    }
    snprintf(msg, n, "%s: not healthy yet (its content differs)", w->rel);
    return PLANCTL_OUTCOME_NOT_DONE;
}

/* Delete, on the loop thread: unlink, prune empty directories, and report
 * DONE once the file is gone. */
static planctl_outcome delete_file(file_kind *fk, const char *rel,
                                   const char *path, char *msg, size_t n)
{
    struct stat st;
    char e[128];
    int removed = 0;

    if (unlink(path) == 0) {
        removed = 1;
    } else if (errno != ENOENT) {
        snprintf(msg, n, "cannot remove %s: %s", rel,
                 errtext(errno, e, sizeof e));
        return PLANCTL_OUTCOME_ERROR;
    }
    prune_parents(path, strlen(fk->dir));
    if (lstat(path, &st) == 0) {
        snprintf(msg, n, "%s: still present", rel);
        return PLANCTL_OUTCOME_NOT_DONE;
    }
    snprintf(msg, n, "%s: %s", rel, removed ? "removed" : "already absent");
    return PLANCTL_OUTCOME_DONE;
}

/* ---- the executor ------------------------------------------------------ */

static void work_free(work *w)
{
    if (!w)
        return;
    free(w->rel);
    free(w->path);
    free(w->content);
    free(w);
}

/* Reports a job from the loop thread. */
static void report(file_kind *fk, planctl_job *job, planctl_outcome o,
                   const char *msg)
{
    fk->loop_reports++;
    planctl_step_finish(job, o, msg);
}

static int file_start(planctl_job *job, const planctl_task_info *info,
                      void *data)
{
    file_kind *fk = data;
    char err[512];
    work *w = NULL;
    spec sp;
    int rc;

    rc = parse_spec(&sp, info->spec, err, sizeof err);
    if (rc == 0 && sp.action == ACTION_DELETE) {
        char *path = join(fk->dir, sp.path);
        planctl_outcome o;

        if (!path) {
            spec_free(&sp);
            return PLANCTL_ENOMEM; /* the step fails ERROR and is retried */
        }
        o = delete_file(fk, sp.path, path, err, sizeof err);
        free(path);
        spec_free(&sp);
        report(fk, job, o, err);
        return 0;
    }
    if (rc == 0 && !(w = calloc(1, sizeof *w)))
        rc = PLANCTL_ENOMEM;
    if (rc == 0)
        rc = render(&w->content, sp.content, info->params, err, sizeof err);
    if (rc == 0) {
        w->job = job;
        w->rel = sp.path;
        sp.path = NULL;
        if (!(w->path = join(fk->dir, w->rel)))
            rc = PLANCTL_ENOMEM;
    }
    spec_free(&sp);
    if (rc == PLANCTL_EINVAL) {
        /* A bad spec or template does not get better by retrying. */
        work_free(w);
        report(fk, job, PLANCTL_OUTCOME_FATAL, err);
        return 0;
    }
    if (rc < 0) {
        work_free(w);
        return rc;
    }
    pthread_mutex_lock(&fk->lock);
    if (fk->tail)
        fk->tail->next = w;
    else
        fk->head = w;
    fk->tail = w;
    pthread_cond_signal(&fk->wake);
    pthread_mutex_unlock(&fk->lock);
    return 0;
}

static void file_cancel(planctl_job *job, void *data)
{
    file_kind *fk = data;
    work *w, *prev = NULL;

    pthread_mutex_lock(&fk->lock);
    if (fk->current && fk->current->job == job) {
        fk->current->cancelled = 1;
        pthread_mutex_unlock(&fk->lock);
        return;
    }
    for (w = fk->head; w && w->job != job; w = w->next)
        prev = w;
    if (w) {
        if (prev)
            prev->next = w->next;
        else
            fk->head = w->next;
        if (fk->tail == w)
            fk->tail = prev;
    }
    pthread_mutex_unlock(&fk->lock);
    if (w) {
        report(fk, job, PLANCTL_OUTCOME_ERROR, "cancelled before it started");
        work_free(w);
    }
    /* Otherwise the job was reported already: nothing to do. */
}

static void *worker(void *arg)
{
    file_kind *fk = arg;
    char msg[512];

    pthread_mutex_lock(&fk->lock);
    for (;;) {
        planctl_outcome o;
        work *w;

        while (!fk->head && !fk->stop)
            pthread_cond_wait(&fk->wake, &fk->lock);
        if (!fk->head)
            break; /* asked to stop, and nothing is queued */
        w = fk->head;
        fk->head = w->next;
        if (!fk->head)
            fk->tail = NULL;
        fk->current = w;
        pthread_mutex_unlock(&fk->lock);

        o = apply(fk, w, msg, sizeof msg);

        pthread_mutex_lock(&fk->lock);
        fk->current = NULL; /* from here cancel() cannot find it */
        fk->worker_reports++;
        pthread_mutex_unlock(&fk->lock);
        planctl_step_finish(w->job, o, msg);
        work_free(w);
        pthread_mutex_lock(&fk->lock);
    }
    pthread_mutex_unlock(&fk->lock);
    return NULL;
}

int file_kind_new(file_kind **out, const char *dir)
{
    sigset_t all, old;
    file_kind *fk;
    int rc;

    *out = NULL;
    fk = calloc(1, sizeof *fk);
    if (!fk)
        return PLANCTL_ENOMEM;
    fk->dir = strdup(dir);
    if (!fk->dir) {
        free(fk);
        return PLANCTL_ENOMEM;
    }
    fk->ex.version = PLANCTL_EXECUTOR_VERSION;
    fk->ex.start = file_start;
    fk->ex.cancel = file_cancel;
    fk->ex.data = fk;
    pthread_mutex_init(&fk->lock, NULL);
    pthread_cond_init(&fk->wake, NULL);
    /* The worker blocks every signal, so SIGTERM and SIGINT reach the
     * loop's signal handles, never interrupt a write. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&fk->thread, NULL, worker, fk);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&fk->wake);
        pthread_mutex_destroy(&fk->lock);
        free(fk->dir);
        free(fk);
        return PLANCTL_ERROR;
    }
    *out = fk;
    return 0;
}

const planctl_executor *file_kind_executor(const file_kind *fk)
{
    return &fk->ex;
}

unsigned long file_kind_worker_reports(file_kind *fk)
{
    unsigned long n;

    pthread_mutex_lock(&fk->lock);
    n = fk->worker_reports;
    pthread_mutex_unlock(&fk->lock);
    return n;
}

unsigned long file_kind_loop_reports(const file_kind *fk)
{
    return fk->loop_reports;
}

void file_kind_free(file_kind *fk)
{
    if (!fk)
        return;
    pthread_mutex_lock(&fk->lock);
    fk->stop = 1;
    pthread_cond_signal(&fk->wake);
    pthread_mutex_unlock(&fk->lock);
    pthread_join(fk->thread, NULL);
    pthread_cond_destroy(&fk->wake);
    pthread_mutex_destroy(&fk->lock);
    free(fk->dir);
    free(fk);
}
