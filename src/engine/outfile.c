/* outfile.c - a shell task's $PLANCTL_OUTPUT file (see outfile.h). */
#include "engine/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/outputs.h"

/* A file this long cannot hold outputs within the limit in any sensible
 * form; it is refused before it is read. */
#define FILE_MAX (4 * PCTL_OUTPUTS_MAX)

int pctl_outfile_make(pctl_outfile *f)
{
    const char *tmp = getenv("TMPDIR");
    int fd, rc = 0;

    f->dir = pctl_asprintf("%s/planctl-out-XXXXXX", tmp && *tmp ? tmp : "/tmp");
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
