/* outfile.c - a shell task's $PLANCTL_OUTPUT file (see outfile.h). */
#include "engine/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/def.h"
#include "core/outputs.h"

/* A file this long cannot hold outputs within the limit in any sensible
 * form; it is refused before it is read. */
#define FILE_MAX (4 * PCTL_OUTPUTS_MAX)

/* The start of every name pctl_outfile_make gives, and the length of
 * mkdtemp's part at its end. */
#define PREFIX "planctl-out-"
#define RANDOM_LEN 6
#define UID_LEN 32

static const char *tmp_dir(void)
{
    const char *tmp = getenv("TMPDIR");

    return tmp && *tmp ? tmp : "/tmp";
}

/* Whether s[0..len) is len lowercase hex digits (a run's uid). */
static int is_uid(const char *s, size_t len)
{
    size_t i;

    for (i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int pctl_outfile_make(pctl_outfile *f, const planctl_task_info *info)
{
    const char *tmp = tmp_dir();
    int fd, rc = 0;

    if (info && info->run > 0 && info->attempt > 0 && info->run_uid &&
        strlen(info->run_uid) == UID_LEN && is_uid(info->run_uid, UID_LEN) &&
        info->step && pctl_name_valid(info->step))
        f->dir = pctl_asprintf("%s/" PREFIX "%lld.%s.%d.%s.XXXXXX", tmp,
                               (long long)info->run, info->run_uid,
                               info->attempt, info->step);
    else
        f->dir = pctl_asprintf("%s/" PREFIX "XXXXXX", tmp);
    if (!f->dir)
        return UV_ENOMEM;
    if (!mkdtemp(f->dir)) {
        rc = uv_translate_sys_error(errno);
        pctl_free(f->dir);
        f->dir = NULL;
        return rc;
    }
    if (!(f->path = pctl_asprintf("%s/output", f->dir)))
        rc = UV_ENOMEM;
    else if ((fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                        0600)) < 0)
        rc = uv_translate_sys_error(errno);
    else
        close(fd);
    if (rc < 0)
        pctl_outfile_remove(f);
    return rc;
}

int pctl_outfile_read(const pctl_outfile *f, planctl_job *job, char **err)
{
    json_t *set = NULL, *v;
    const char *key;
    char msg[320], *text = NULL;
    size_t size = 0, got = 0;
    struct stat st;
    ssize_t n;
    int fd, rc = 0, secret;

    *err = NULL;
    /* A task that removed its file wrote nothing. */
    if ((fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
        return 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0;
    }
    if (st.st_size > FILE_MAX) {
        close(fd);
        *err = pctl_asprintf("PLANCTL_OUTPUT is %lld bytes; outputs are "
                             "limited to %d KiB per attempt",
                             (long long)st.st_size, PCTL_OUTPUTS_MAX / 1024);
        return *err ? PLANCTL_EINVAL : PLANCTL_ENOMEM;
    }
    if (!(text = pctl_malloc((size_t)st.st_size + 1))) {
        close(fd);
        return PLANCTL_ENOMEM;
    }
    while (got < (size_t)st.st_size &&
           ((n = read(fd, text + got, (size_t)st.st_size - got)) > 0 ||
            (n < 0 && errno == EINTR)))
        got += n > 0 ? (size_t)n : 0;
    close(fd);
    if (!(set = json_object()))
        rc = PLANCTL_ENOMEM;
    else if ((rc = pctl_outputs_parse(set, &size, msg, sizeof msg, text,
                                      got)) == PLANCTL_EINVAL)
        rc = (*err = pctl_strdup(msg)) ? PLANCTL_EINVAL : PLANCTL_ENOMEM;
    json_object_foreach(set, key, v)
    {
        const char *s = pctl_output_value(v, &secret);

        if (rc == 0)
            rc = planctl_job_add_output(job, key, s,
                                        secret ? PLANCTL_OUTPUT_SECRET : 0);
    }
    json_decref(set);
    pctl_free(text);
    return rc;
}

void pctl_outfile_remove(pctl_outfile *f)
{
    if (f->path)
        unlink(f->path);
    if (f->dir)
        rmdir(f->dir); /* fails, and is left, if the task put more there */
    pctl_free(f->path);
    pctl_free(f->dir);
    f->path = f->dir = NULL;
}

/* Reads a decimal number of 1 to max digits at *p, moving *p past it and
 * a '.' after it.  Returns 0 when there is no such number. */
static int number(const char **p, int max, long long *out)
{
    const char *q = *p;
    long long v = 0;

    while (*q >= '0' && *q <= '9' && q - *p < max)
        v = v * 10 + (*q++ - '0');
    if (q == *p || *q != '.')
        return 0;
    *out = v;
    *p = q + 1;
    return 1;
}

/* Parses name as pctl_outfile_make names an attempt's directory into d
 * (its path not set).  Returns 1 when it is one. */
static int parse_name(const char *name, pctl_outdir *d)
{
    const char *p = name, *tail;
    long long run, attempt;
    size_t len, i;

    if (strncmp(p, PREFIX, strlen(PREFIX)) != 0)
        return 0;
    p += strlen(PREFIX);
    if (!number(&p, 18, &run) || run <= 0)
        return 0;
    if (strlen(p) < UID_LEN + 1 || !is_uid(p, UID_LEN) || p[UID_LEN] != '.')
        return 0;
    memcpy(d->uid, p, UID_LEN);
    d->uid[UID_LEN] = '\0';
    p += UID_LEN + 1;
    if (!number(&p, 9, &attempt) || attempt <= 0)
        return 0;
    /* The step's name, then '.' and mkdtemp's letters and digits. */
    len = strlen(p);
    if (len < RANDOM_LEN + 2 || len - RANDOM_LEN - 1 >= sizeof d->step)
        return 0;
    tail = p + len - RANDOM_LEN;
    if (tail[-1] != '.')
        return 0;
    for (i = 0; i < RANDOM_LEN; i++)
        if (!((tail[i] >= '0' && tail[i] <= '9') ||
              (tail[i] >= 'a' && tail[i] <= 'z') ||
              (tail[i] >= 'A' && tail[i] <= 'Z')))
            return 0;
    memcpy(d->step, p, len - RANDOM_LEN - 1);
    d->step[len - RANDOM_LEN - 1] = '\0';
    if (!pctl_name_valid(d->step))
        return 0;
    d->run_id = run;
    d->attempt = (int)attempt;
    return 1;
}

/* Whether st is what pctl_outfile_make made: a directory of this user,
 * mode 0700 (mkdtemp's). */
static int ours(const struct stat *st)
{
    return S_ISDIR(st->st_mode) && st->st_uid == geteuid() &&
           (st->st_mode & 07777) == 0700;
}

int pctl_outdirs_find(pctl_outdir **out, size_t *n)
{
    const char *tmp = tmp_dir();
    pctl_outdir d, *nv;
    struct dirent *de;
    struct stat st;
    DIR *dir;
    int rc = 0;

    *out = NULL;
    *n = 0;
    if (!(dir = opendir(tmp)))
        return 0;
    while (rc == 0 && (de = readdir(dir)) != NULL) {
        memset(&d, 0, sizeof d);
        if (!parse_name(de->d_name, &d) ||
            fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !ours(&st))
            continue;
        if (!(d.path = pctl_asprintf("%s/%s", tmp, de->d_name)) ||
            !(nv = pctl_realloc(*out, (*n + 1) * sizeof *nv))) {
            pctl_free(d.path);
            rc = PLANCTL_ENOMEM;
            break;
        }
        *out = nv;
        nv[(*n)++] = d;
    }
    closedir(dir);
    if (rc < 0) {
        pctl_outdirs_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

void pctl_outdirs_free(pctl_outdir *d, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        pctl_free(d[i].path);
    pctl_free(d);
}

int pctl_outdir_remove(const pctl_outdir *d)
{
    struct stat st;
    int fd = open(d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return 0;
    if (fstat(fd, &st) != 0 || !ours(&st)) {
        close(fd);
        return 0;
    }
    (void)unlinkat(fd, "output", 0);
    close(fd);
    return rmdir(d->path) == 0;
}
