/* file_kind.h - the File task kind: an executor whose tasks write, check
 * and remove files under one directory, with KUDO's Apply and Delete
 * semantics. */
#ifndef FILE_KIND_H
#define FILE_KIND_H

#include <stddef.h>

#include <planctl.h>

/*
 * A task of kind File has the spec
 *
 *   {"path": "about/index.html", "content": "<p>{{ OWNER }}</p>\n"}
 *   {"path": "about/index.html", "action": "delete"}
 *
 * path is relative to the controller's directory (no "..", no absolute
 * path).  action is "apply" (the default) or "delete".
 *
 *   apply:  makes the file hold content, where "{{ NAME }}" is replaced by
 *           the run's value of parameter NAME (an unset optional parameter
 *           gives ""); reports DONE once the file is healthy (it exists
 *           with exactly that content), NOT_DONE while it is not yet.  A
 *           file that is already healthy is left alone.  Runs on the
 *           worker thread, because writing durably (fsync) blocks.
 *   delete: removes the file and then any directories it leaves empty;
 *           reports DONE once the file is gone (also when it never
 *           existed).  Runs on the loop thread: unlink does not block.
 *
 * An I/O error (a full disk, a permission) is ERROR, retried by the step's
 * policy; a spec or template problem is FATAL, since retrying cannot fix
 * it.  Both are idempotent, as the engine's at-least-once execution needs.
 */
typedef struct file_kind file_kind;

/* Creates the kind for directory dir (which must exist) and starts its
 * worker thread.  Returns 0, or a negative PLANCTL_E* code. */
int file_kind_new(file_kind **out, const char *dir);

/* The executor to register with planctl_engine_register(e, "File", ..).
 * Valid while fk lives. */
const planctl_executor *file_kind_executor(const file_kind *fk);

/* The spec check to register with planctl_kind_register(p, "File", ..):
 * a definition whose File specs are wrong is refused when applied, with
 * the message this writes into err.  Pure: safe on any thread. */
int file_kind_check_spec(const char *spec_json, char *err, size_t err_size,
                         void *data);

/* How many jobs were reported from the worker thread and from the loop
 * thread so far. */
unsigned long file_kind_worker_reports(file_kind *fk);
unsigned long file_kind_loop_reports(const file_kind *fk);

/* Stops and joins the worker thread and frees fk.  Call only once the
 * engine has stopped (its stopped callback ran), when no job is left.
 * NULL is allowed. */
void file_kind_free(file_kind *fk);

#endif /* FILE_KIND_H */
