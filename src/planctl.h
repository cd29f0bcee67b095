/*
 * planctl.h - the public interface of libplanctl, an embeddable plan
 * execution engine that keeps every run, phase and step in a database:
 * a SQLite file on one machine, or a schema of a PostgreSQL database that
 * several engines share (planctl_open() takes a file path or a
 * postgresql:// URI).  It also answers the web page and its JSON API as
 * a function of a request (planctl_web_respond()).
 *
 * Building against it: `pkg-config --cflags --libs planctl` (add --static
 * for libplanctl.a), or in CMake find_package(planctl) and link
 * planctl::planctl (or planctl::planctl_static).  Only planctl_* symbols
 * are exported.  tools/examples/controller/ is a complete embedder.
 *
 * Conventions:
 *   - Functions return 0 on success or a negative PLANCTL_E* code, and
 *     every such return leaves a one-line message naming the thing and
 *     its state ("missing argument: instance is NULL", "instance \"zk\"
 *     not found").  It is planctl_errmsg() of the handle the call was
 *     given; the engine calls' go on the handle the engine was made with
 *     (planctl_engine_new()); a call that has no handle to carry it (a
 *     NULL handle or engine, the job calls, planctl_status_parse(),
 *     planctl_process_init(), planctl_definition_check()) leaves it in
 *     planctl_thread_errmsg().  A function documented "Can't fail" has no
 *     error return.
 *   - Messages say what is wrong, not which command or flag of a program
 *     to use: `planctl` adds its own advice, an embedder its own.
 *   - Out-parameters come first and are named out.  Unless a function says
 *     it may be NULL, out is required (NULL is PLANCTL_EINVAL).  On failure
 *     a char **out is set to NULL and an int64_t *out to 0.
 *   - Ownership: what comes back through a char **out is the caller's and
 *     is freed with planctl_free().  A returned const char * is borrowed:
 *     each function says for how long.  Strings and arrays passed in are
 *     only read during the call (copied when kept), unless said otherwise.
 *   - Options structs carry a version and have an _INIT macro; pass NULL
 *     for the defaults, or start from the macro and change fields.  The
 *     version tells the library which fields the caller knows; open,
 *     engine, admission and gc options of a version it does not know are
 *     refused with PLANCTL_EINVAL.
 *   - JSON crosses this interface as UTF-8 text; jansson, libuv and SQLite
 *     types never appear here, so the ABI does not depend on them.
 *   - The library never prints, exits or aborts on bad input.
 *
 * Threads:
 *   - A planctl handle owns one connection to its database (a SQLite
 *     connection opened without SQLite's own mutexes, or one PostgreSQL
 *     session) and must be used by one thread at a time; the caller
 *     serialises.
 *     Different handles, even on one database, are independent and may
 *     be used from different threads at once.
 *   - An engine (planctl_engine_*) and the handle it was given belong to
 *     the thread that runs its libuv loop; call the engine functions on
 *     that thread (or before the loop runs).  Keep a second handle for
 *     your own calls while the engine runs.  Three engine functions are
 *     safe from any thread, from planctl_engine_new() until
 *     planctl_engine_free(): planctl_engine_request_stop(),
 *     planctl_engine_metrics_snapshot() and planctl_engine_healthy() (a
 *     binding's /metrics and /healthz handlers, or its context's
 *     cancellation, on threads of their own).  An engine made with no
 *     loop (NULL) has one of its own, run by planctl_engine_run() on the
 *     calling thread, which is then its loop thread: the embedder needs
 *     no libuv at all.
 *   - Any number of handles in one process may be open on one database.
 *     While one is, do not open() and close() the database file (or its
 *     -wal or -shm) yourself: closing any descriptor on a file drops every
 *     POSIX lock the process holds on it, the handles' included, and
 *     another process may then delete the -wal under them (SQLite's "How
 *     To Corrupt An SQLite Database File", 2.2).
 *   - planctl_step_finish() and planctl_job_set_output() may be called from
 *     any thread; executors' start(), cancel() and release() run on the
 *     loop thread.
 *   - planctl_interrupt(p) may be called from any thread while another
 *     uses p: the call in progress on p returns PLANCTL_EINTR.
 *   - Functions taking no handle (planctl_strerror(), planctl_errname(),
 *     planctl_status_*(), planctl_transition_legal(), planctl_libversion(),
 *     planctl_definition_check()) are safe from any thread.
 *
 * Signals (for a host whose runtime owns signals, as Go's does):
 *   - planctl installs, blocks and ignores no signal.  The built-in shell
 *     kind (an engine's shell tasks, and shell preflight checks run inside
 *     an admission, on a private loop on the caller's thread) starts its
 *     processes with posix_spawn() and learns of their exit from a pidfd
 *     (Linux 5.3 and later), not from SIGCHLD: SIGCHLD stays whatever the
 *     host made it, at every instant, and the host's own handler (Go's,
 *     signal.Notify) hears those children exit too.  Where there is no
 *     pidfd (a kernel before 5.3, or valgrind), a thread of planctl's,
 *     with every signal blocked, waits for each child by its pid in
 *     waitid() instead: still no handler.  A host that reaps children it
 *     did not start (waitpid(-1)) takes their exit status: such a task
 *     fails with "exit status unknown".
 *   - Where the process ignores SIGCHLD (SIG_IGN or SA_NOCLDWAIT, which
 *     would let the kernel reap the children first), shell spawns with
 *     libuv, which needs its
 *     own SIGCHLD handler, installed without SA_ONSTACK: planctl then
 *     starts a SIGCHLD watcher before the loop's first spawn, installs
 *     libuv's handler again with SA_ONSTACK added (which Go requires of
 *     every handler C code installs), and keeps it until the engine has
 *     stopped (or the preflight ended); when the last of them is done,
 *     what SIGCHLD was before (handler, flags and mask) is put back,
 *     unless libuv still watches SIGCHLD for someone else in the process
 *     (the host's own uv_spawn).  That way leaves an instant, at the
 *     first spawn of the process, when libuv's handler is there without
 *     the flag.
 *   - An engine created with planctl_engine_options.no_shell never spawns;
 *     nor does an admission whose plan has no shell preflight check (or
 *     skips them: preflight_skip).
 *   - The keeper an engine forks on PostgreSQL (planctl_engine_start) is
 *     forked with every signal blocked and resets them all to their
 *     defaults, unblocked, before anything else: no handler of the host's
 *     runs in it.  The parent's dispositions and mask are left as they were.
 */
#ifndef PLANCTL_H
#define PLANCTL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PLANCTL_BUILDING) && defined(__GNUC__)
#define PLANCTL_API __attribute__((visibility("default")))
#else
#define PLANCTL_API
#endif

/* The version of this header (as SQLite's SQLITE_VERSION and
 * SQLITE_VERSION_NUMBER): "MAJOR.MINOR.PATCH" and MAJOR * 1000000 +
 * MINOR * 1000 + PATCH, for #if PLANCTL_VERSION_NUMBER >= 1000.  The shared
 * library's SONAME carries MAJOR. */
#define PLANCTL_VERSION_MAJOR 0
#define PLANCTL_VERSION_MINOR 1
#define PLANCTL_VERSION_PATCH 0
#define PLANCTL_VERSION "0.1.0"
#define PLANCTL_VERSION_NUMBER 1000

/* The version of the library actually linked, e.g. "0.1.0"; compare it with
 * PLANCTL_VERSION to detect a header/library mismatch.  Static storage.
 * Can't fail. */
PLANCTL_API const char *planctl_libversion(void);

/*
 * Error codes, generated from one list.  Each entry is (NAME, value, text).
 * The CLI maps them to exit codes: EINVAL, EDEFINITION and EPREFLIGHT -> 2
 * (a preflight check failed; one that could not run is PLANCTL_ERROR),
 * ECONFLICT, EBUSY and ESTALE -> 3, ENOTFOUND -> 4, everything else -> 1
 * (EINTR too: the CLI never interrupts a call, and "internal or I/O error"
 * is the closest of its documented codes for an embedder's).
 */
#define PLANCTL_ERRNO_MAP(X)                                                   \
    X(ERROR, -1, "internal error")                                             \
    X(ENOMEM, -2, "out of memory")                                             \
    X(EINVAL, -3, "invalid argument")                                          \
    X(EIO, -4, "I/O error")                                                    \
    X(ENOTFOUND, -5, "not found")                                              \
    X(ECONFLICT, -6, "conflict")                                               \
    X(ETRANSITION, -7, "illegal status transition")                            \
    X(ESTALE, -8, "status changed concurrently")                               \
    X(ENOTDB, -9, "not a planctl database")                                    \
    X(ETOONEW, -10, "database schema is newer than this program")              \
    X(EBUSY, -11, "database is busy")                                          \
    X(EDEFINITION, -12, "invalid definition")                                  \
    X(EREADONLY, -13, "database is read-only")                                 \
    X(EPREFLIGHT, -14, "preflight checks failed")                              \
    X(EMISMATCH, -15, "the tables and the event log disagree")                 \
    X(EINTR, -16, "interrupted")

enum {
#define PLANCTL_X_(name, value, text) PLANCTL_##name = value,
    PLANCTL_ERRNO_MAP(PLANCTL_X_)
#undef PLANCTL_X_
        PLANCTL_OK = 0
};

/* A static description of an error code ("not found").  Can't fail: an
 * unknown code gives "unknown error". */
PLANCTL_API const char *planctl_strerror(int code);

/* The symbolic name of an error code ("PLANCTL_ENOTFOUND"), or "PLANCTL_OK"
 * for 0, or "PLANCTL_UNKNOWN".  Can't fail. */
PLANCTL_API const char *planctl_errname(int code);

/* Releases memory returned by this library through a char **out.  NULL is
 * allowed.  Any thread.  Can't fail. */
PLANCTL_API void planctl_free(void *ptr);

/* ---- statuses ---------------------------------------------------------- */

/* The exact status strings of planctl-json(7), also stored in the database. */
#define PLANCTL_STATUS_MAP(X)                                                  \
    X(NEVER_RUN)                                                               \
    X(QUEUED)                                                                  \
    X(PENDING)                                                                 \
    X(IN_PROGRESS)                                                             \
    X(PAUSED)                                                                  \
    X(ERROR)                                                                   \
    X(COMPLETE)                                                                \
    X(FATAL_ERROR)                                                             \
    X(CANCELLED)

typedef enum planctl_status {
#define PLANCTL_X_(name) PLANCTL_STATUS_##name,
    PLANCTL_STATUS_MAP(PLANCTL_X_)
#undef PLANCTL_X_
        PLANCTL_STATUS__COUNT
} planctl_status;

/* The entities whose status is tracked. */
typedef enum planctl_entity {
    PLANCTL_ENTITY_RUN,
    PLANCTL_ENTITY_PHASE,
    PLANCTL_ENTITY_STEP,
    PLANCTL_ENTITY__COUNT
} planctl_entity;

/* "COMPLETE" for PLANCTL_STATUS_COMPLETE (static storage); NULL for an
 * out-of-range value.  Can't fail otherwise. */
PLANCTL_API const char *planctl_status_name(planctl_status s);

/* Parses an exact status string.  Returns 0 and sets *out, or
 * PLANCTL_EINVAL for anything else (case matters). */
PLANCTL_API int planctl_status_parse(planctl_status *out, const char *text);

/* Returns 1 if (from -> to) is a legal transition of entity per
 * planctl-json(7), 0 otherwise.  from == PLANCTL_STATUS__COUNT stands for
 * "(new)", a row being created.  Can't fail. */
PLANCTL_API int planctl_transition_legal(planctl_entity entity,
                                         planctl_status from,
                                         planctl_status to);

/* ---- the handle -------------------------------------------------------- */

typedef struct planctl planctl;

typedef enum planctl_durability {
    PLANCTL_DURABILITY_NORMAL = 0, /* synchronous=NORMAL (the default) */
    PLANCTL_DURABILITY_FULL = 1    /* synchronous=FULL */
} planctl_durability;

/* Flags for planctl_open_options.flags. */
#define PLANCTL_OPEN_READONLY 0x1 /* never write or migrate; fail if absent */
#define PLANCTL_OPEN_NOCREATE                                                  \
    0x2 /* fail with ENOTFOUND if the file is absent */
/* A self-check for tests and for debugging the engine: inside an engine's
 * pass, where the engine's cache spares the store reading a changed row
 * back, read it anyway and fail the pass (PLANCTL_EIO, naming the row)
 * where the two differ.  Slower; `planctl` sets it when PLANCTL_CHECK_CACHE=1
 * is in its environment. */
#define PLANCTL_OPEN_CHECK_CACHE 0x4

typedef struct planctl_open_options {
    unsigned int version; /* PLANCTL_OPEN_OPTIONS_VERSION */
    planctl_durability durability;
    int busy_timeout_ms; /* how long a writer waits for the lock */
    unsigned int flags;
} planctl_open_options;

#define PLANCTL_OPEN_OPTIONS_VERSION 1
#define PLANCTL_OPEN_OPTIONS_INIT                                              \
    {                                                                          \
        PLANCTL_OPEN_OPTIONS_VERSION, PLANCTL_DURABILITY_NORMAL, 5000, 0       \
    }

/*
 * Optional tuning for a process that runs an engine, once, before anything
 * in the process uses SQLite (planctl or not): raises the soft limit on
 * open descriptors to the hard limit (every shell task holds some), and
 * turns SQLite's memory statistics off.  They take a global mutex on every
 * allocation SQLite makes, about 7% of the engine's CPU per step
 * (tools/bench/RESULTS.md); SQLite's memory figures (its memory_used and
 * status calls) then report 0. `planctl run` does this.  A library cannot know
 * whether its host reads those figures, so planctl_open() never does it on its
 * own. Returns 0, or EBUSY when SQLite is already initialised in the process
 * (its statistics stay on; harmless).  Not while another thread uses
 * SQLite.
 */
PLANCTL_API int planctl_process_init(void);

/*
 * Opens (creating it with mode 0600 if absent) the database at path and
 * applies pending migrations, one transaction each.  opts may be NULL for
 * the defaults.  *out is the caller's, closed with planctl_close().
 *
 * On failure *out is still set to a handle that carries the message (read it
 * with planctl_errmsg(), then planctl_close() it), unless the failure is
 * ENOMEM (or out is NULL), in which case *out is NULL.  A file that is not
 * SQLite, a SQLite database that is not planctl's (ENOTDB) or one newer
 * than this program (ETOONEW) is refused and left byte-for-byte untouched.
 *
 * A path that starts with postgres:// or postgresql:// is a PostgreSQL
 * database instead (libpq's URI, its environment and ~/.pgpass; plus
 * planctl's own parameter schema=NAME, default planctl): the schema is
 * created and migrated on first use; a schema holding tables that are not
 * planctl's (ENOTDB) or newer ones (ETOONEW) is refused untouched; a server
 * that cannot be reached is EIO.  Messages show the URI without its
 * password.  Durability is then the server's synchronous_commit.
 * Errors: EINVAL (empty path, a directory, an unknown options version, a
 * bad schema name),
 * ENOTFOUND (absent with READONLY or NOCREATE), ENOTDB, ETOONEW, EREADONLY
 * (a READONLY open of a database that needs migrating), EBUSY, EIO, ENOMEM.
 */
PLANCTL_API int planctl_open(planctl **out, const char *path,
                             const planctl_open_options *opts);

/* Closes the handle and frees everything it owns.  NULL is allowed.  An
 * engine using the handle must be stopped and freed first.  Can't fail. */
PLANCTL_API void planctl_close(planctl *p);

/* The detail of the last failure on this handle, one line, borrowed:
 * valid until the next call on the handle.  Never NULL ("" when there is
 * none, "out of memory" for a NULL handle, as planctl_open() leaves when
 * it cannot allocate one).  Can't fail. */
PLANCTL_API const char *planctl_errmsg(const planctl *p);

/* The message of the calling thread's last refusal that had no handle to
 * carry it, as dlerror() keeps its own: a NULL handle ("missing argument:
 * p is NULL"), a NULL engine, planctl_step_finish(), planctl_job_add_output()
 * and planctl_job_set_output() (called from any thread, so never on the
 * engine's handle), planctl_status_parse(), planctl_process_init() and
 * planctl_definition_check().  Borrowed: valid until the thread's next
 * refusal of that kind (a fixed buffer of the thread, cut to 255 bytes);
 * "" when there was none.  Any thread.  Can't fail. */
PLANCTL_API const char *planctl_thread_errmsg(void);

/*
 * Interrupts the call in progress on p from another thread (a binding's
 * context cancellation): a wait for the database's write lock (SQLite's
 * busy timeout, PostgreSQL's lock_timeout), a statement running, or the
 * preflight checks of an admission (cancelled as at their deadline: a
 * shell check's processes get SIGTERM).  The call then returns
 * PLANCTL_EINTR soon (within about 20 ms, or a shell check's exit),
 * having changed nothing (its transaction rolled back; an interrupted
 * admission records no preflight report), with a message saying what was
 * interrupted.  It stops a transaction or the checks in progress; with
 * none (no call, or a call between two of its transactions) it does
 * nothing and the next one is not affected, so call it again until the
 * call returns (a binding does, every few milliseconds, while its context
 * is done).  p must stay open meanwhile (do not planctl_close() it
 * concurrently).  Not meant for an engine's handle.  Any thread.
 * Returns 0, or PLANCTL_EINVAL for a NULL handle (message in
 * planctl_thread_errmsg()).
 */
PLANCTL_API int planctl_interrupt(planctl *p);

/* The schema version the database is at (PRAGMA user_version; 0 for a
 * NULL handle) and the one this library writes.  Can't fail. */
PLANCTL_API int planctl_schema_version(const planctl *p);
PLANCTL_API int planctl_schema_version_supported(void);

/*
 * Replaces the clock used for every time the library records or compares
 * (milliseconds since the Unix epoch, UTC): now_ms(data) is called on the
 * handle's thread, during calls on the handle.  NULL restores the system
 * clock.  Meant for tests and reproducible output.  A NULL handle is
 * ignored.  Can't fail.
 *
 * An engine reads its handle's clock once, when it starts, and from then
 * on advances that time by the monotonic clock: backoffs, timeouts,
 * deadlines and polls are durations, so a wall clock set forward or back
 * while it runs does not shorten or stretch them.  While the engine runs,
 * that advancing clock is the handle's (everything recorded through the
 * handle shares it); the clock set here is put back when the engine has
 * stopped.  Under a fixed clock an engine thus starts at the fixed time
 * and moves on from it.
 */
PLANCTL_API void planctl_set_clock(planctl *p, int64_t (*now_ms)(void *data),
                                   void *data);

/*
 * The safety net on events per run (planctl-engine(7), "DEBUGGING"), which
 * counts every event of a run in runs.event_count.  When a run's
 * count reaches warn_at, the writer appends a note to the log (entity
 * "instance", the run's id, actor "planctl") naming the threshold.  When it
 * reaches max, an engine ends the run at its next pass: FATAL_ERROR, "reached
 * the limit of N events per run", its open phases and steps closed (which still
 * adds their events).  0 keeps a default: PLANCTL_RUN_EVENTS_WARN and
 * PLANCTL_RUN_EVENTS_MAX.  The settings belong to the handle (the warning
 * is written by whichever handle writes the event; the limit is applied by
 * the engine of this handle).  Errors: EINVAL (negative).
 */
#define PLANCTL_RUN_EVENTS_WARN 10000
#define PLANCTL_RUN_EVENTS_MAX 1000000
PLANCTL_API int planctl_set_event_limits(planctl *p, int64_t warn_at,
                                         int64_t max);

/* ---- definitions ------------------------------------------------------- */

/*
 * Decodes and checks a definition (planctl-definition(5)) and registers it
 * under its (name, version).  Task kinds must be built-in ("Dummy", "shell") or
 * registered in this process (planctl_kind_register(), or an engine's
 * planctl_engine_register(), on this handle or any other: a process-wide
 * list of names, kept for the life of the process, under a mutex), and
 * every spec one its kind accepts (checked by the spec check registered on
 * this handle; a kind known only from another handle accepts any spec
 * object).  The list is the process's, not the database's: the same rule
 * on SQLite and PostgreSQL, with no engine needed to be running, and a
 * definition stays valid whatever engines come and go (a run of a kind no
 * live engine has waits for one).  origin names the source for messages
 * ("zk.json"); NULL means "<definition>".  Registering the same content again
 * is a no-op; different content under an existing (name, version) is ECONFLICT.
 *
 * json is len bytes of UTF-8 and need not be NUL-terminated.
 *
 * out, if not NULL, receives {"schema":1,"name":..,"version":..,
 * "created":true|false}.  Errors: EINVAL (NULL handle or json),
 * EDEFINITION with the first problem in planctl_errmsg() (use
 * planctl_definition_check() for all of them), ECONFLICT, EREADONLY,
 * EBUSY, EIO, ENOMEM.
 */
PLANCTL_API int planctl_definition_apply(char **out, planctl *p,
                                         const char *json, size_t len,
                                         const char *origin);

/*
 * Checks a definition without touching any database (no handle: safe from
 * any thread).  Returns 0 and, in *out, the validate document
 * {"schema":1,"valid":true|false,"errors":[{"path","type","message",
 * "hint"}]} - also when the definition is invalid.
 * Every error is listed, in a fixed order, each once.  Task kinds must be
 * built-in ("Dummy", "shell") or named in extra_kinds (NULL-terminated; may
 * be NULL), whose specs are not checked.  Only ENOMEM or EINVAL (NULL
 * arguments, an empty or over-long kind) are returned as codes.
 */
PLANCTL_API int planctl_definition_check(char **out, const char *json,
                                         size_t len, const char *origin,
                                         const char *const *extra_kinds);

/*
 * Registers a task kind on the handle: planctl_definition_apply() on it,
 * and on every other handle of the process, then accepts tasks of that
 * kind (the spec check only on this handle).  check_spec, if not NULL, judges a
 * task's spec, given as compact JSON with sorted keys (as the executor
 * receives it): it returns 0 when the spec is valid, or a negative code
 * with a one-line message written into err (err_size bytes,
 * NUL-terminated), reported as "tasks[N].spec: Invalid value: <message>".
 * It is called during planctl_definition_apply(), possibly on a thread of
 * the library's, never twice at once.  Registering a kind again replaces
 * its check and data.  A built-in kind registered with a check gets that
 * check instead of the built-in rules; without one it keeps them.
 * Errors: EINVAL (NULL handle or kind, kind empty or over 255 bytes),
 * ENOMEM.
 */
PLANCTL_API int
planctl_kind_register(planctl *p, const char *kind,
                      int (*check_spec)(const char *spec_json, char *err,
                                        size_t err_size, void *data),
                      void *data);

/* Every registered definition version: {"schema":1,"definitions":[{"name",
 * "version","created_at","plans":[..]}]} sorted by name, then registration
 * order.  Each definition also has its metadata, null where it has none
 * (absent values are null, never left out): "description", "appVersion",
 * "url" (strings), "maintainers" ([{"name", "email"}], email null when
 * not given) and "upgradableFrom" (a list of versions; null: any version
 * may upgrade to it, []: none).  Errors: EINVAL, EBUSY, EIO, ENOMEM. */
PLANCTL_API int planctl_definitions_json(char **out, planctl *p);

/* The body of definition name@version (version NULL: the version
 * registered last) as it is stored: the document registered, as compact
 * JSON with its keys sorted.  Free *out with planctl_free().  Errors:
 * EINVAL, ENOTFOUND (the message names the registered versions of name,
 * or the closest registered name), EBUSY, EIO, ENOMEM. */
PLANCTL_API int planctl_definition_body(char **out, planctl *p,
                                        const char *name, const char *version);

/* ---- instances and runs ------------------------------------------------ */

/* One parameter value (both strings are copied by the call).  A NULL
 * value or an empty name is how a front end passes on an entry it could
 * not split (say "-p NODES"): admission reports it as invalid syntax
 * together with unknown, repeated and missing parameters (EINVAL).
 *
 * value is text, parsed by the parameter's type (its definition's
 * "type"): a string is taken as it is; an integer ("3", "-2"), a number
 * ("2.5", "1e3") and a boolean ("true", "false") must be exactly a JSON
 * literal of that type; an array or a map must be JSON text of one
 * ("[\"a\",\"b\"]").  A value that is not of the type, or not one of the
 * parameter's enum, is refused (EINVAL) naming the parameter, its type or
 * its allowed values, and what was given.  Values are stored, snapshot
 * and handed to executors (planctl_task_info.params) as JSON of their
 * type; a parameter with no value is absent from the snapshot. */
typedef struct planctl_param {
    const char *name;
    const char *value;
} planctl_param;

/*
 * Admission (create, set, upgrade, trigger, retry): one active run per
 * instance, and the plan's preflight checks, if it has any, run first
 * inside the call, which then blocks up to their deadline (see "preflight
 * checks" below).  params points to nparams values (NULL when nparams is
 * 0).  Besides the errors each function lists, any of them can return
 * EPREFLIGHT (a check failed), ERROR (a check could not run or missed the
 * deadline; planctl_errmsg() then lists every cause), EBUSY, EIO,
 * EREADONLY and ENOMEM; nothing is admitted then.
 */

/*
 * How one admission runs (planctl_admit_* below; NULL: the defaults).
 * Nothing of it stays on the handle: each call says it again.
 */
typedef struct planctl_admit_options {
    unsigned int version; /* PLANCTL_ADMIT_OPTIONS_VERSION */
    /* Trigger only (the other calls ignore them): queue behind an active
     * run instead of being refused, and free text recorded on the run
     * (NULL: none). */
    int queue;
    const char *reason;
    /* The preflight checks: all of them together have this long, 0:
     * 10000 ms; and the checks to skip, "DiskSpace,Quorum"
     * (case-insensitive, trimmed, empty entries ignored) or "all" alone
     * for every check (NULL: none). */
    int64_t preflight_deadline_ms;
    const char *preflight_skip;
    /* Since version 2 (a version 1 struct ends above, and is still
     * taken).  Set and upgrade only (the other calls ignore them): the
     * parameters whose explicit values are removed, so that their
     * defaults apply again (`planctl set --unset NAME`): unset[0..nunset),
     * NULL when nunset is 0.  A name with no explicit value is nothing to
     * do; unsetting one that has one is a change of it for plan selection
     * even when its default equals it.  Refused (EINVAL, with the other
     * parameter problems): an unknown name, a name given twice or also
     * given a value, a required parameter without a default, and an
     * immutable one that has a value. */
    const char *const *unset;
    size_t nunset;
    /* Since version 2.  Create, set and upgrade: a value "@PATH" of an
     * array or map parameter is read as JSON from the file PATH (the
     * CLI's -p K=@FILE); 0: every value is taken as written. */
    int param_files;
} planctl_admit_options;

#define PLANCTL_ADMIT_OPTIONS_VERSION 2
#define PLANCTL_ADMIT_OPTIONS_INIT                                             \
    {                                                                          \
        PLANCTL_ADMIT_OPTIONS_VERSION, 0, NULL, 0, NULL, NULL, 0, 0            \
    }

/*
 * What an admission did, handed back whole: the caller need not read the
 * run back to say what happened.  Filled by the planctl_admit_* calls
 * below; on error every field is zero but preflight_report, which is set
 * when the checks ran and refused the admission.  Always release it with
 * planctl_admitted_clear().
 */
typedef struct planctl_admitted {
    int64_t run;           /* the run admitted; 0: none (a set that changed
                              no value) */
    planctl_status status; /* PENDING, or QUEUED behind the active run */
    int queue_position;    /* QUEUED: its 1-based place among the
                              instance's queued runs (1 starts next);
                              else 0 */
    int64_t retry_of;      /* a retry: the run it retries; else 0 */
    char plan[64];         /* the plan admitted; "" when none */
    /* The report of this admission's preflight checks, compact JSON, or
     * NULL when none ran (the plan has none, the admission was refused
     * before they ran, or preflight itself failed: out of memory, no
     * loop).  The caller's: planctl_admitted_clear() frees it.
     *     {"schema":1, "plan":"backup",
     *      "outcome":"passed|failed|error|skipped",
     *      "checks":[{"name":"Sleepy", "status":"error",
     *                 "message":"timed out after 10s"}, ...],
     *      "warnings":["preflight check Quorum skipped", ...]}
     * "checks" has every check of the plan in declaration order, each
     * with "status" "passed", "failed", "error" (it could not run or
     * missed the deadline) or "skipped", and "message" its cause (null
     * when it passed or was skipped).  "outcome" is "error" when any
     * check is "error", else "failed" when any failed, else "skipped"
     * when every check was skipped, else "passed".
     * "warnings" has one line per skipped check. */
    char *preflight_report;
} planctl_admitted;

/* Frees what *a owns and zeroes it.  NULL is allowed.  Can't fail. */
PLANCTL_API void planctl_admitted_clear(planctl_admitted *a);

/*
 * Creates instance name from definition (version NULL: the most recently
 * registered version) with the given parameter values, and admits its
 * deploy run.  *out receives the new run id.
 * Errors: EINVAL (bad name, unknown or missing required parameters, all
 * listed), ENOTFOUND (definition), ECONFLICT (name taken).
 */
PLANCTL_API int
planctl_instance_create(int64_t *out, planctl *p, const char *name,
                        const char *definition, const char *version,
                        const planctl_param *params, size_t nparams);

/*
 * Changes parameter values and admits the plan they select (planctl-engine(7),
 * "Plan for a parameter change"). *out receives the run id, or 0 when no value
 * actually changed (nothing is admitted then, whether or not a run is active).
 * Errors: EINVAL (unknown parameter, a value not of its type or enum, an
 * immutable parameter that has a value given another, or changed parameters
 * naming different trigger plans), ENOTFOUND, ECONFLICT (an active run, named
 * in the message; it comes before EINVAL).  To remove
 * values, use planctl_admit_set() with planctl_admit_options.unset.
 */
PLANCTL_API int planctl_instance_set(int64_t *out, planctl *p, const char *name,
                                     const planctl_param *params,
                                     size_t nparams);

/* Moves the instance to another registered version of its definition,
 * optionally changing parameter values at the same time (a new version may
 * require new parameters), and admits upgrade, update or deploy, the first
 * that exists.  Values the new version does not define are dropped; an
 * immutable parameter that has a value keeps it (when the new version's
 * default differs, the value is kept as an explicit one).  *out receives
 * the run id.  Errors: ENOTFOUND, ECONFLICT, EINVAL (same version, a
 * version the new one's upgradableFrom does not list, unknown or missing
 * parameters, an immutable parameter given another value). */
PLANCTL_API int planctl_instance_upgrade(int64_t *out, planctl *p,
                                         const char *name, const char *version,
                                         const planctl_param *params,
                                         size_t nparams);

/*
 * Deletes the instance: admits its cleanup run if the definition has one
 * (*out receives its id; the instance is removed when the run completes),
 * otherwise removes it at once (*out = 0).  force removes it at once in any
 * case but an active run.  On PostgreSQL it commits beside the engines,
 * under the instance's row lock.  Errors: ENOTFOUND, ECONFLICT, EBUSY (the
 * row stayed locked past the busy timeout).
 */
PLANCTL_API int planctl_instance_delete(int64_t *out, planctl *p,
                                        const char *name, int force);

/*
 * What planctl_instance_delete_opts() does beyond the plain delete.
 * dry_run: every check and every write as they would be, then rolled
 * back, so *out and the errors say what the delete would do and nothing
 * changes.  archive (when not NULL, and not on a dry run): the instance
 * is about to be removed at once, so archive(archive_data, bundle, len)
 * gets its whole history first, as the one-line bundle of
 * planctl_export_json() (what gc's archive holds of one run, for the
 * whole instance), inside the delete's transaction, once its rows are
 * removed (read before); then once with NULL and 0 just before the commit
 * (make it durable then).  Called once a delete, even when the server
 * broke a deadlock and the delete was made again.  A nonzero return
 * removes nothing (EIO).  An instance that would run its cleanup plan is
 * not removed by this call, so archive is refused there (EINVAL: use
 * force, or export it after cleanup).
 */
typedef struct planctl_delete_options {
    unsigned int version; /* PLANCTL_DELETE_OPTIONS_VERSION */
    int force;            /* as planctl_instance_delete()'s */
    int dry_run;
    int (*archive)(void *data, const char *bundle, size_t len);
    void *archive_data;
} planctl_delete_options;

#define PLANCTL_DELETE_OPTIONS_VERSION 1
#define PLANCTL_DELETE_OPTIONS_INIT                                            \
    {                                                                          \
        PLANCTL_DELETE_OPTIONS_VERSION, 0, 0, NULL, NULL                       \
    }

/* planctl_instance_delete() with options (NULL: the defaults).  Errors:
 * its own, EINVAL (unknown version, archive where cleanup would run), EIO
 * (archive() refused). */
PLANCTL_API int
planctl_instance_delete_opts(int64_t *out, planctl *p, const char *name,
                             const planctl_delete_options *opts);

/* {"schema":1,"instances":[{"name","definition":{"name","version"},
 * "status","active_run","deleting","created_at"}]} sorted by name; status
 * is the active run's, else the latest finished run's, else the latest
 * run's, else NEVER_RUN.  Errors: EINVAL, ENOMEM, EIO. */
PLANCTL_API int planctl_instances_json(char **out, planctl *p);

typedef struct planctl_trigger_options {
    unsigned int version; /* PLANCTL_TRIGGER_OPTIONS_VERSION */
    int queue;            /* queue behind an active run instead of refusing */
    const char *reason;   /* free text recorded on the run, or NULL */
} planctl_trigger_options;

#define PLANCTL_TRIGGER_OPTIONS_VERSION 1
#define PLANCTL_TRIGGER_OPTIONS_INIT                                           \
    {                                                                          \
        PLANCTL_TRIGGER_OPTIONS_VERSION, 0, NULL                               \
    }

/* Admits a run of plan for the instance (any plan but cleanup).  *out
 * receives the run id.  Errors: ENOTFOUND (instance or plan), EINVAL
 * (cleanup), ECONFLICT (an active run, and opts->queue is 0). */
PLANCTL_API int planctl_plan_trigger(int64_t *out, planctl *p,
                                     const char *instance, const char *plan,
                                     const planctl_trigger_options *opts);

/*
 * Admits a retry of run_id (0: the instance's latest run): a new run of the
 * same plan with the same parameter snapshot whose retry_of is run_id, with
 * the phases and steps that were COMPLETE there carried over as COMPLETE.
 * Only a FATAL_ERROR or CANCELLED run can be retried.  *out receives the new
 * run id.  Errors: ENOTFOUND, ECONFLICT (the run did not fail, so it
 * cannot be retried now; or the instance has an active run).
 */
PLANCTL_API int planctl_run_retry(int64_t *out, planctl *p,
                                  const char *instance, int64_t run_id);

/*
 * The admission calls above with what they admitted handed back whole
 * (planctl_admitted) and options for the call (opts; NULL: the
 * defaults): same arguments, same errors, and EINVAL for options of an
 * unknown version or a negative deadline.  planctl_instance_create() and
 * the others are these with the default options, only the run id kept.
 */
PLANCTL_API int planctl_admit_create(planctl_admitted *out, planctl *p,
                                     const char *name, const char *definition,
                                     const char *version,
                                     const planctl_param *params,
                                     size_t nparams,
                                     const planctl_admit_options *opts);
PLANCTL_API int planctl_admit_set(planctl_admitted *out, planctl *p,
                                  const char *name, const planctl_param *params,
                                  size_t nparams,
                                  const planctl_admit_options *opts);
PLANCTL_API int planctl_admit_upgrade(planctl_admitted *out, planctl *p,
                                      const char *name, const char *version,
                                      const planctl_param *params,
                                      size_t nparams,
                                      const planctl_admit_options *opts);
PLANCTL_API int planctl_admit_trigger(planctl_admitted *out, planctl *p,
                                      const char *instance, const char *plan,
                                      const planctl_admit_options *opts);
PLANCTL_API int planctl_admit_retry(planctl_admitted *out, planctl *p,
                                    const char *instance, int64_t run_id,
                                    const planctl_admit_options *opts);

/*
 * Names who acts through p: the actor of the events that its admissions
 * (create, set, upgrade, trigger, retry, delete) and its cancel, pause and
 * resume record, in place of "user" (NULL: "user" again).  A server that
 * acts for others sets it per request ("web 127.0.0.1:51234").  1 to 128
 * bytes without control characters.  Errors: EINVAL, ENOMEM.
 */
PLANCTL_API int planctl_set_actor(planctl *p, const char *actor);

/*
 * Cancels the instance's active run (its queued runs are left alone):
 * every non-terminal phase and step becomes CANCELLED, then the run, in one
 * transaction; an engine stops the tasks it was running for it.  Needs no
 * engine.  reason may be NULL.  out may be NULL; else *out receives the
 * run id.  Errors: EINVAL, ENOTFOUND (instance, or no active run),
 * ECONFLICT, EBUSY, EIO.
 */
PLANCTL_API int planctl_run_cancel(int64_t *out, planctl *p,
                                   const char *instance, const char *reason);

typedef struct planctl_cancel_options {
    unsigned int version; /* PLANCTL_CANCEL_OPTIONS_VERSION */
    const char *reason;   /* why, recorded with the cancellation, or NULL */
    int64_t run;          /* this run of the instance, or 0: its active run */
} planctl_cancel_options;

#define PLANCTL_CANCEL_OPTIONS_VERSION 1
#define PLANCTL_CANCEL_OPTIONS_INIT                                            \
    {                                                                          \
        PLANCTL_CANCEL_OPTIONS_VERSION, NULL, 0                                \
    }

/*
 * planctl_run_cancel() with options (NULL: the defaults, which it is).
 * With opts->run, that run of the instance: the active run is cancelled
 * as above; a QUEUED run becomes CANCELLED with its phases and steps, in
 * one transaction, and never starts (the other queued runs keep their
 * order; the active run goes on).  The events name the actor
 * (planctl_set_actor).  Errors: those of planctl_run_cancel(), EINVAL
 * for an unknown version or a negative run, ENOTFOUND for a run the
 * instance does not have, and ECONFLICT for a run that has ended
 * (COMPLETE, FATAL_ERROR or CANCELLED), its message naming the run and
 * its status.
 */
PLANCTL_API int planctl_run_cancel_opts(int64_t *out, planctl *p,
                                        const char *instance,
                                        const planctl_cancel_options *opts);

/* Pauses the instance's IN_PROGRESS run (running steps finish, nothing new
 * starts) or resumes a PAUSED one.  out may be NULL; else *out receives the
 * run id.  Errors: ENOTFOUND, ECONFLICT (the run is not in a status that
 * can be paused or resumed: a conflict with the current state, not bad
 * input), EBUSY, EIO. */
PLANCTL_API int planctl_run_pause(int64_t *out, planctl *p,
                                  const char *instance);
PLANCTL_API int planctl_run_resume(int64_t *out, planctl *p,
                                   const char *instance);

/*
 * The generic gate: changes the status of one run, phase or step from
 * `from` to `to` as one compare-and-set transaction that also appends an
 * event (actor and message may be NULL).  For runs that end, queued runs
 * of the instance are promoted in the same transaction.  Meant for tools
 * and tests: the engine and the functions above already keep the rows
 * consistent.  On PostgreSQL it locks the row's run first, so it commits
 * beside engines that do not hold the run, and waits (then EBUSY) for one
 * whose pass is changing it.  Errors: EINVAL (an unknown status),
 * ETRANSITION (not a legal transition), ESTALE (the row is not in status
 * `from` any more), ENOTFOUND, EBUSY, EIO.
 */
PLANCTL_API int planctl_transition(planctl *p, planctl_entity entity,
                                   int64_t id, planctl_status from,
                                   planctl_status to, const char *message,
                                   const char *actor);

/* ---- views ------------------------------------------------------------- */

typedef struct planctl_status_options {
    unsigned int version; /* PLANCTL_STATUS_OPTIONS_VERSION */
    const char *plan;     /* only this plan, or NULL for every plan */
    int64_t run;          /* show this run in its plan's place, or 0 */
} planctl_status_options;

#define PLANCTL_STATUS_OPTIONS_VERSION 1
#define PLANCTL_STATUS_OPTIONS_INIT                                            \
    {                                                                          \
        PLANCTL_STATUS_OPTIONS_VERSION, NULL, 0                                \
    }

/* The status document of planctl-json(7) for one instance, read from one
 * snapshot.  opts may be NULL.  The run chosen with opts->run also gives
 * each of its steps "attempts":[{"number","status","started_at",
 * "finished_at","exit_code","message"}], oldest first.  "engine" is the
 * engine that holds the database, as in planctl_engines_json() but without
 * "token", or null when none does.  Each plan shows its active run when
 * it has one, else its latest.  "waiting" is why the active run waits, as
 * the engine that holds it recorded it ({"run","cause","kind",
 * "concurrency","since"}, cause "executor" or "slot"), or null (also when
 * no live engine holds the database).  Errors: EINVAL, ENOTFOUND (instance,
 * plan or run), ENOMEM, EIO. */
PLANCTL_API int planctl_status_json(char **out, planctl *p,
                                    const char *instance,
                                    const planctl_status_options *opts);

/* {"schema":1,"engines":[{"pid","host","since","last_seen","alive",
 * "token"}]}: the engines that hold the database (on SQLite at most one,
 * the lease's holder; [] when none does).  "since" is when it took the
 * lease, "last_seen" its last heartbeat, "token" its fencing token.
 * "alive" is false for a holder that no longer counts as running: on this
 * host, its process is gone; anywhere, its heartbeat is older than 15 s
 * (the default lease TTL).  On PostgreSQL, where several engines share
 * the database, every engine that joined and was not declared dead:
 * {"name","pid","host","since","last_seen","age_ms","alive","token",
 * "runs","capacity","ttl_ms","id"} ("token" null; "age_ms" the heartbeat's age
 * on the database's clock, "alive" judged by the engine's own TTL, "runs"
 * the active runs it holds).  Errors: EINVAL, ENOMEM, EIO. */
PLANCTL_API int planctl_engines_json(char **out, planctl *p);

typedef struct planctl_history_options {
    unsigned int version; /* PLANCTL_HISTORY_OPTIONS_VERSION */
    const char *plan;     /* only runs of this plan, or NULL */
    int limit;            /* at most this many runs; 0 means 20 */
    int64_t before;       /* only runs with a smaller id, or 0 */
} planctl_history_options;

#define PLANCTL_HISTORY_OPTIONS_VERSION 1
#define PLANCTL_HISTORY_OPTIONS_INIT                                           \
    {                                                                          \
        PLANCTL_HISTORY_OPTIONS_VERSION, NULL, 0, 0                            \
    }

/* The history document of planctl-json(7), newest run first.  opts may be NULL.
 * Errors: ENOTFOUND, EINVAL (negative limit), ENOMEM, EIO. */
PLANCTL_API int planctl_history_json(char **out, planctl *p,
                                     const char *instance,
                                     const planctl_history_options *opts);

typedef struct planctl_logs_options {
    unsigned int version; /* PLANCTL_LOGS_OPTIONS_VERSION */
    int64_t run;      /* this run of the instance, or 0: its active run, else
                         its latest that started, else its latest */
    const char *step; /* only this step, "STEP" or "PHASE/STEP"; NULL: all */
    int attempt;      /* with step: only this try of it; 0: every try */
} planctl_logs_options;

#define PLANCTL_LOGS_OPTIONS_VERSION 1
#define PLANCTL_LOGS_OPTIONS_INIT                                              \
    {                                                                          \
        PLANCTL_LOGS_OPTIONS_VERSION, 0, NULL, 0                               \
    }

/*
 * The output of the attempts of one run (`planctl logs`), read from one
 * snapshot: {"schema":1, "instance", "run":{"id","plan","status"},
 * "step": null or {"phase","name","status"} (the step opts->step chose),
 * "attempts":[{"run","phase","step","attempt","status","exit_code",
 * "started_at","finished_at","message","output","output_bytes"}]} in
 * definition order (phase, step, then attempt number).  output is what
 * the attempt keeps (its last bytes, the engine's output_size; written
 * while the attempt runs, at most once a second), output_bytes how many
 * it wrote in all; absent values are null.  opts may be NULL.  Errors:
 * ENOTFOUND (the instance, a run, a step or an attempt it does not have,
 * the message listing what it has), EINVAL (a step name two phases share,
 * an attempt without a step, bad options), EBUSY, EIO, ENOMEM.
 */
PLANCTL_API int planctl_logs_json(char **out, planctl *p, const char *instance,
                                  const planctl_logs_options *opts);

typedef struct planctl_events_options {
    unsigned int version; /* PLANCTL_EVENTS_OPTIONS_VERSION */
    const char *instance; /* only this instance's events, or NULL for all */
    int64_t run;          /* only this run's events, or 0 */
    int64_t since;        /* only events with a larger seq, or 0 */
    int limit;            /* at most this many; 0 means 1000 */
    /* Version 2: only the last this many of the events the fields above
     * select (after since), read from the first of them on; 0: from the
     * first event after since. */
    int tail;
} planctl_events_options;

#define PLANCTL_EVENTS_OPTIONS_VERSION 2
#define PLANCTL_EVENTS_OPTIONS_INIT                                            \
    {                                                                          \
        PLANCTL_EVENTS_OPTIONS_VERSION, NULL, 0, 0, 0, 0                       \
    }

/*
 * The event log, oldest first: {"schema":1,"events":[{seq, at, instance,
 * run, phase, step, entity, from, to, attempt, message, actor}],
 * "last_seq":N} where last_seq is the seq of the last event returned (or
 * opts->since when none), for asking again with since = last_seq.
 * Events come in seq order.  On PostgreSQL numbers are drawn before
 * commit, so a transaction may hold a lower one open while later ones
 * commit: only the events below the lowest number still open come, and
 * asking again with since = last_seq skips none.
 * instance, phase and step are names; run is the run id.  opts may be
 * NULL (every event, up to the default limit).  A caller built with
 * version 1 of the options (no tail) keeps working.  Errors: ENOTFOUND
 * (instance or run), EINVAL (a negative number, an unknown options
 * version), ENOMEM, EIO.
 */
PLANCTL_API int planctl_events_json(char **out, planctl *p,
                                    const planctl_events_options *opts);

/*
 * A number that changes whenever another connection (another process, or
 * another handle) commits to the database; for noticing changes by
 * polling cheaply (SQLite's PRAGMA data_version; on PostgreSQL the
 * notifications of other planctl writers, read without a round trip);
 * this handle's own commits do not change it.  Errors: EINVAL, EIO,
 * EBUSY.
 */
PLANCTL_API int planctl_data_version(int64_t *out, planctl *p);

/* ---- the web page and /api/v1 ------------------------------------------ */

/*
 * planctl's web page (instances, one instance, one run, the engines) and
 * its JSON API under /api/v1, as one function from an HTTP request to a
 * response, without sockets: `planctl serve` calls it, and an embedder
 * mounts it in its own HTTP server the way it mounts
 * planctl_engine_metrics().  The pages work without JavaScript; the
 * script they load keeps them live by asking again for the page with
 * ?part=live (conditional, answered 304 while nothing changed) every
 * second, or, when opts->stream says the server offers it, by an
 * EventSource on /stream?path=PATH (which planctl serve answers; this
 * function does not).
 *
 * Every answer carries a Content-Security-Policy that allows no inline
 * script and no other origin, nosniff, no referrer to other sites and no
 * framing (PLANCTL_WEB_SECURITY_HEADERS); every
 * value from the database is escaped; secret parameters never appear.
 * Actions (trigger, cancel, pause, resume, retry) are POSTs, refused
 * (403) unless opts->allow_actions; a form's must carry opts->csrf, an
 * API call's must be Content-Type application/json, and a request whose
 * Origin header names another origin than its Host is refused.  Their
 * events carry opts->actor (planctl_set_actor()).  Authentication (a
 * token) and limits on connections and sizes are the server's.
 */
/* The headers every answer of planctl_web_respond() carries, for the
 * answers a server makes itself (a 401) to carry them too: scripts,
 * styles and images from the server only and no inline script, no
 * sniffing, no referrer to other sites, no framing. */
#define PLANCTL_WEB_SECURITY_HEADERS                                           \
    "Content-Security-Policy: default-src 'none'; script-src 'self'; "         \
    "style-src 'self'; img-src 'self'; connect-src 'self'; "                   \
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'\r\n"          \
    "X-Content-Type-Options: nosniff\r\n"                                      \
    "Referrer-Policy: same-origin\r\n"                                         \
    "X-Frame-Options: DENY\r\n"

typedef struct planctl_web_request {
    unsigned int version;      /* PLANCTL_WEB_REQUEST_VERSION */
    const char *method;        /* "GET", "HEAD", "POST", ... */
    const char *target;        /* the path and query: "/instances/zk?x=1" */
    const char *host;          /* the Host header, or NULL */
    const char *origin;        /* the Origin header, or NULL */
    const char *content_type;  /* of the body, or NULL */
    const char *if_none_match; /* the If-None-Match header, or NULL */
    const char *body;          /* POST: the body (need not end in NUL) */
    size_t body_len;
} planctl_web_request;

#define PLANCTL_WEB_REQUEST_VERSION 1
#define PLANCTL_WEB_REQUEST_INIT                                               \
    {                                                                          \
        PLANCTL_WEB_REQUEST_VERSION, "GET", "/", NULL, NULL, NULL, NULL, NULL, \
            0                                                                  \
    }

typedef struct planctl_web_options {
    unsigned int version; /* PLANCTL_WEB_OPTIONS_VERSION */
    int allow_actions;    /* 0: read-only, every action refused (403) */
    const char *csrf;     /* the secret every form carries and every form
                             POST must return (at least 16 characters);
                             NULL: no action from a form is taken */
    const char *actor;    /* who acts, on the events of actions; NULL:
                             "web" */
    int stream;           /* 1: the pages open /stream?path=PATH */
} planctl_web_options;

#define PLANCTL_WEB_OPTIONS_VERSION 1
#define PLANCTL_WEB_OPTIONS_INIT                                               \
    {                                                                          \
        PLANCTL_WEB_OPTIONS_VERSION, 0, NULL, NULL, 0                          \
    }

typedef struct planctl_web_response {
    int status;               /* 200, 303, 304, 400, 403, 404, ... */
    const char *content_type; /* static */
    char *headers;            /* the other headers, "Name: value\r\n" each */
    char *body;               /* body_len bytes (and a NUL) */
    size_t body_len;
} planctl_web_response;

/*
 * Answers req into *out (release it with planctl_web_response_clear()).
 * Returns 0 whatever the HTTP status (a page not found is a 404, not an
 * error), or EINVAL (a bad argument or version) or ENOMEM, with *out
 * empty.  Reads p and, for actions, writes through it; like every call
 * on p, one at a time.  opts NULL: read-only, no stream.
 */
PLANCTL_API int planctl_web_respond(planctl_web_response *out, planctl *p,
                                    const planctl_web_request *req,
                                    const planctl_web_options *opts);
PLANCTL_API void planctl_web_response_clear(planctl_web_response *r);

/*
 * Live pages.  With opts->stream, a page's script opens
 * /stream?path=PAGE; a server that answers it with Server-Sent Events
 * sends PAGE's live part (?part=live added) at once, then renders it
 * again when the database changed and sends it when its ETag moved,
 * each as "event: update" with one "data:" line per line.  The first
 * event shows what changed between the page's load and its stream.
 * These two calls are what it needs besides planctl_web_respond();
 * `planctl serve` uses them as an embedder does.
 *
 * planctl_web_stream_page() takes a request target ("/stream?path=%2F")
 * and gives the page it asks for, decoded ("/"), into *out (free it with
 * planctl_free()).  Errors: EINVAL when the target is not a stream or
 * names no page that streams (not a path; /stream, /api/, /assets/; a
 * part=; an encoded NUL), ENOMEM.
 */
PLANCTL_API int planctl_web_stream_page(char **out, const char *target);

/*
 * Which open pages a change touches.  Call planctl_web_changes_read()
 * when planctl_data_version() moved: it reads the events after *seq and
 * moves *seq past them; planctl_web_changes_touch() then says whether a
 * page (as planctl_web_stream_page() gives it) shows any of what they
 * changed: an instance's pages those of its own events, the other pages
 * any.  A change the event log does not name (an instance deleted, an
 * engine's heartbeat), or more events than one look reads (2,000),
 * touches every page.  Start with *seq = PLANCTL_WEB_SINCE_NOW: *seq
 * becomes the latest event's seq and nothing is touched.  Free the
 * result with planctl_web_changes_free() (NULL: nothing).  Touch of a
 * NULL result or page is 0.  Errors: EINVAL, and those of
 * planctl_events_json() (the message on p).
 */
typedef struct planctl_web_changes planctl_web_changes;
#define PLANCTL_WEB_SINCE_NOW (-1)
PLANCTL_API int planctl_web_changes_read(planctl_web_changes **out, planctl *p,
                                         int64_t *seq);
PLANCTL_API int planctl_web_changes_touch(const planctl_web_changes *c,
                                          const char *page);
PLANCTL_API void planctl_web_changes_free(planctl_web_changes *c);

/* ---- preflight checks ------------------------------------------------- */

/*
 * A plan's preflight checks run before a run of it is admitted by
 * create, set, upgrade, trigger and retry, concurrently on a private
 * loop, under one deadline (planctl_admit_options; 10 s by default); a
 * check still running then is cancelled and counts as an internal error,
 * "timed out after 10s" (the deadline as a duration), while the others'
 * results still come back.
 *
 * When every check passed or was skipped, the run is admitted.  Otherwise
 * it is refused, and planctl_errmsg() lists every cause in declaration
 * order, whatever order the checks finished in, "; " between them: a
 * failed check as "Name: message", one that could not run or missed the
 * deadline as "Name: internal error: message".  For example
 *     preflight checks failed: Sleepy: internal error: timed out after
 *     10s; DiskSpace: only 1 GiB free
 * (one line).  The code is PLANCTL_ERROR when any cause is an internal
 * error, else PLANCTL_EPREFLIGHT: internal errors take precedence for the
 * code only, they hide no failure.  The same message, with the report
 * (planctl_admitted.preflight_report), is recorded in the instance's
 * event log (not for a refused create: it leaves no instance).
 */

/* ---- replay and verify ------------------------------------------------ */

typedef struct planctl_replay_options {
    unsigned int version; /* PLANCTL_REPLAY_OPTIONS_VERSION */
    int64_t until_seq;    /* replay events up to this seq; 0: all */
    int64_t at_ms;        /* ...and up to this time; 0: no bound */
} planctl_replay_options;

#define PLANCTL_REPLAY_OPTIONS_VERSION 1
#define PLANCTL_REPLAY_OPTIONS_INIT                                            \
    {                                                                          \
        PLANCTL_REPLAY_OPTIONS_VERSION, 0, 0                                   \
    }

/*
 * Rebuilds runs, phases, steps and attempts from the event log alone (not
 * from the tables), as they were after event until_seq (or at time at_ms),
 * for one instance or all (NULL), and returns them in the shapes of the
 * status and history documents:
 * {"schema":1,"until_seq":N,"instances":[{"instance","status":{...},
 * "history":{...}}]}.  At the last event, each status and history equals
 * what planctl_status_json() and planctl_history_json() (without a limit)
 * return.  instance NULL means every instance; opts may be NULL (all
 * events).  Errors: ENOTFOUND, EINVAL, EMISMATCH (an event the replay
 * cannot apply), ENOMEM, EIO.
 */
PLANCTL_API int planctl_replay_json(char **out, planctl *p,
                                    const char *instance,
                                    const planctl_replay_options *opts);

/*
 * Replays every event and compares the result with the tables, run by run,
 * field by field (statuses, attempts, times, messages, exit codes,
 * output), and runs SQLite's integrity and foreign key checks (on
 * PostgreSQL, which enforces foreign keys itself but for the events' own,
 * checked here, the summary says that its pages are not checked).  Returns 0
 * with a one-line summary in *out when all agree; PLANCTL_EMISMATCH with
 * the first difference as the message ("run 12 step node-1: tables say
 * COMPLETE, events say IN_PROGRESS (last event 5521)") otherwise.  Other
 * errors: EINVAL, ENOMEM, EIO.
 */
PLANCTL_API int planctl_verify(char **out, planctl *p);

/* ---- retention --------------------------------------------------------- */

typedef struct planctl_gc_options {
    unsigned int version;  /* PLANCTL_GC_OPTIONS_VERSION */
    int keep_last;         /* newest runs kept per (instance, plan); 0: 10 */
    int64_t older_than_ms; /* only runs that finished longer ago; 0: any */
    int dry_run;           /* only say what would go */
    int batch;             /* runs per transaction; 0: 100 (at most 1000) */
    /* Version 2: the archive.  When not NULL, archive() is called with each
     * run about to go, as a bundle of that run alone (one line of JSON
     * without a newline: the format of planctl_export_json(), with the
     * instance, that run's rows and events and the definitions they name;
     * planctl_import_json() reads such lines, one after another), inside
     * the batch's transaction and before its rows are removed; then once
     * with bundle NULL and len 0 just before the batch commits (make what
     * was written durable then).  A nonzero return stops gc: the batch is
     * rolled back and planctl_gc() returns PLANCTL_EIO.  Not called on a
     * dry run. */
    int (*archive)(void *data, const char *bundle, size_t len);
    void *archive_data;
} planctl_gc_options;

#define PLANCTL_GC_OPTIONS_VERSION 2
#define PLANCTL_GC_OPTIONS_INIT                                                \
    {                                                                          \
        PLANCTL_GC_OPTIONS_VERSION, 0, 0, 0, 0, NULL, NULL                     \
    }

/*
 * Removes terminal runs beyond the retention policy with their phases,
 * steps, attempts and events, in batched transactions: never an active or
 * queued run, never the latest run of a plan.  *out receives {"schema":1,
 * "dry_run":b,"keep_last":N,"runs":[{"id","instance","plan","status",
 * "finished_at"}],"removed":N}.  opts may be NULL (the defaults) or of
 * version 1 (no archive) or 2.  Errors: EINVAL, EBUSY, EIO (also when
 * archive() refused), ENOMEM; runs of batches already committed stay
 * removed (and archived).
 */
PLANCTL_API int planctl_gc(char **out, planctl *p,
                           const planctl_gc_options *opts);

/* ---- export and import ------------------------------------------------ */

/* The bundle format: "format" is always this string, "version" the layout
 * (this library writes PLANCTL_BUNDLE_VERSION and reads up to it). */
#define PLANCTL_BUNDLE_FORMAT "planctl-bundle"
#define PLANCTL_BUNDLE_VERSION 1

/*
 * Exports one instance with its definition versions, runs, phases, steps,
 * attempts and events as one JSON bundle, read from one snapshot:
 * {"format":"planctl-bundle","version":1,"exported_at":RFC3339,
 * "instance":{"id","name","params":{..},"last_applied":{..}|null,
 * "deleting":bool,"created_at","updated_at","definition":{"name",
 * "version"},"withheld":[..]},"definitions":[{"id","name","version","body","created_at"}],
 * "runs":[..],"phases":[..],"steps":[..],"attempts":[..],"events":[..]}.
 * Each row holds every column of its table under the column's name, as
 * stored: original ids, times as integer milliseconds, JSON columns as
 * text; events (the instance's) in seq order.  The definitions are every
 * version the instance, its runs or its events name, body as stored.
 * Errors: EINVAL (NULL argument), ENOTFOUND (instance), EIO, ENOMEM.
 */
PLANCTL_API int planctl_export_json(char **out, planctl *p,
                                    const char *instance);

/*
 * Where a streamed bundle goes: write() takes the next len bytes and
 * returns 0, or -1 to stop (the export then fails with EIO).
 */
typedef int (*planctl_write_fn)(void *data, const char *buf, size_t len);

/*
 * planctl_export_json() as a stream: the same bytes (without a final
 * newline) handed to write(data, ...) in pieces as the rows are read, so
 * memory stays small whatever the instance's size.  A bundle is written
 * only whole or not at all as far as the library goes: after an error,
 * what write() already took is a truncated bundle, which import refuses.
 * One row longer than 64 MiB (a huge parameter value) is refused
 * (EINVAL), as import would refuse it.  Errors: those of
 * planctl_export_json(), EIO when write() stopped it.
 */
PLANCTL_API int planctl_export_stream(planctl *p, const char *instance,
                                      planctl_write_fn write, void *data);

/*
 * What an export writes beyond the default.  include_secrets: the values
 * of secret task outputs (planctl_job_add_output() with
 * PLANCTL_OUTPUT_SECRET, "::secret::" in $PLANCTL_OUTPUT) in clear, as
 * {"secret": "value"}, in the rows' "outputs" and the events' data; by
 * default they are left out ({"secret": null}), so a bundle attached to a
 * bug report gives none away.  Import takes either: an imported secret
 * without a value has no variable in later tasks.  The values of secret
 * parameters ("secret": true) are left out too: null in the instance's
 * "params" and "last_applied", in each run's "params" and in the data of
 * its creation event, their names listed in the instance's "withheld"
 * (always there, [] when nothing is left out); importing such a bundle
 * needs them again (planctl_import_options.params).  A secret's default
 * is part of its definition, which a bundle carries as it is.
 */
typedef struct planctl_export_options {
    unsigned int version; /* PLANCTL_EXPORT_OPTIONS_VERSION */
    int include_secrets;  /* secret outputs and parameters in clear */
} planctl_export_options;

#define PLANCTL_EXPORT_OPTIONS_VERSION 1
#define PLANCTL_EXPORT_OPTIONS_INIT                                            \
    {                                                                          \
        PLANCTL_EXPORT_OPTIONS_VERSION, 0                                      \
    }

/* planctl_export_json() and planctl_export_stream() with options (NULL:
 * the defaults, which they are).  Errors: theirs, and EINVAL for an
 * unknown version. */
PLANCTL_API int planctl_export(char **out, planctl *p, const char *instance,
                               const planctl_export_options *opts);
PLANCTL_API int planctl_export_stream_opts(planctl *p, const char *instance,
                                           const planctl_export_options *opts,
                                           planctl_write_fn write, void *data);

/*
 * Loads a bundle of planctl_export_json() (len bytes, need not be
 * NUL-terminated) into the database in one transaction, as instance
 * as_name (NULL: the bundle's name).  Ids are remapped (runs.retry_of of a
 * run outside the bundle becomes NULL); a run keeps its uid unless the
 * database has it already.  Definitions identical to registered ones are
 * reused, others registered.  Rows are rebuilt by replaying the bundle's
 * status events through the database's transition guards, so afterwards
 * status, history, replay and verify answer as they did where the bundle
 * came from.  The text may hold several bundles one after another (the
 * lines of a gc archive): those of one instance are merged (rows repeated
 * by id taken once) and all are imported in the one transaction; as_name
 * then needs them all to be of one instance.  out, if not NULL, receives
 * {"schema":1,"instance":NAME (null when several),"runs":N,"events":N,
 * "instances":[{"instance","runs","events","paused"}]}.  An active run is
 * imported paused (see planctl_import()).
 * Errors, with nothing imported: EINVAL (not JSON, not a bundle, a bad
 * name, a malformed or inconsistent bundle: a reference that does not
 * resolve, an illegal or out-of-order status event, rows that disagree
 * with the events; the message names the row), ETOONEW (a newer bundle format),
 * ECONFLICT (the instance name is taken, or a (name, version) is registered
 * with another body), EBUSY, EIO, ENOMEM.
 */
PLANCTL_API int planctl_import_json(char **out, planctl *p, const char *bundle,
                                    size_t len, const char *as_name);

/*
 * planctl_import_json() with options.  An instance whose bundle has an
 * active run (PENDING or IN_PROGRESS) would have it advanced by the next
 * engine on this database, its tasks run here: so that run is paused (a
 * PENDING one by way of IN_PROGRESS, no step started), recorded in the
 * event log with actor "planctl", and its id given as "paused" (null when
 * none) in each entry of "instances" of the answer; 'planctl resume NAME'
 * runs it.  keep_active leaves it as it was.  planctl_import_json() is
 * this with PLANCTL_IMPORT_OPTIONS_INIT and as_name.  Errors: those of
 * planctl_import_json(), and EINVAL for NULL opts or an unknown version.
 */
typedef struct planctl_import_options {
    unsigned int version; /* PLANCTL_IMPORT_OPTIONS_VERSION */
    const char *as_name;  /* import under this name (one instance), or NULL */
    int keep_active;      /* leave active runs active */
    /* Since version 2: the values of the secret parameters the bundle
     * leaves out (its instance's "withheld"), as -p NAME=VALUE gives them
     * (parsed by the parameter's type).  Each withheld name needs one
     * (else EINVAL, naming them), and only those may be given (else
     * EINVAL).  The value takes the place of every null the bundle put
     * for it: in the instance's values and last_applied, each run's
     * snapshot and its creation event, so a retry of an imported run has
     * it too. */
    const planctl_param *params;
    size_t nparams;
} planctl_import_options;

#define PLANCTL_IMPORT_OPTIONS_VERSION 2
#define PLANCTL_IMPORT_OPTIONS_INIT                                            \
    {                                                                          \
        PLANCTL_IMPORT_OPTIONS_VERSION, NULL, 0, NULL, 0                       \
    }

PLANCTL_API int planctl_import(char **out, planctl *p, const char *bundle,
                               size_t len, const planctl_import_options *opts);

/*
 * Where a streamed bundle comes from: read() puts up to cap bytes in buf
 * and their number in *len (0 at the end) and returns 0, or -1 on an
 * error (the import then fails with EIO, nothing imported).
 */
typedef int (*planctl_read_fn)(void *data, char *buf, size_t cap, size_t *len);

/*
 * planctl_import() reading the text from read(data, ...), in memory
 * bounded by the largest single row (at most 64 MiB of text; a longer one
 * is EINVAL), never by the bundle: the rows are staged in a temporary
 * SQLite file (in $SQLITE_TMPDIR, $TMPDIR or /tmp, about the bundle's size
 * while the import runs, removed after) and replayed from there.  Errors:
 * those of planctl_import(); EIO also when read() failed or the temporary
 * file cannot be written.
 */
PLANCTL_API int planctl_import_stream(char **out, planctl *p,
                                      const planctl_import_options *opts,
                                      planctl_read_fn read, void *data);

/* ---- the engine -------------------------------------------------------- */

/*
 * The engine advances the active runs of one database on a libuv loop
 * (planctl-engine(7), "THE ENGINE").  Its life:
 *
 *   planctl_engine_new(&e, p, loop, NULL);      p: a handle for the engine
 *   planctl_engine_register(e, "File", &ex);    your task kinds
 *   planctl_engine_start(e, stopped, data);     takes the database's lease
 *   uv_run(loop, UV_RUN_DEFAULT);               ... planctl_engine_stop(e, ms)
 *   (stopped(e, data) runs: every engine handle is closed)
 *   planctl_engine_free(e); planctl_close(p);   then uv_loop_close(loop) == 0
 *
 * or, with no libuv in the embedder (the engine's own loop):
 *
 *   planctl_engine_new(&e, p, NULL, NULL);      then register your kinds
 *   planctl_engine_run(e);                      returns once it stopped:
 *                                               planctl_engine_request_stop()
 *                                               from another thread
 *   planctl_engine_free(e); planctl_close(p);
 *
 * Threads: every planctl_engine_* call, and every use of the handle given
 * to planctl_engine_new(), happens on the thread that runs the loop (or
 * before it runs), but for planctl_engine_request_stop(),
 * planctl_engine_metrics_snapshot() and planctl_engine_healthy(), which
 * any thread may call.  Use a second handle, opened on the same database, for
 * your own calls (create, set, status...): the engine notices their
 * commits within change_poll_ms.  Executors' start() and cancel() are
 * called on the loop thread; a job may be reported from any thread.
 *
 * Messages: an engine call's refusal leaves its message on the handle the
 * engine was made with (planctl_errmsg(p) of planctl_engine_new()), which
 * belongs to the loop thread as the engine does; with a NULL engine (or
 * a planctl_engine_new() given no handle) in planctl_thread_errmsg().
 * The job calls (planctl_step_finish(), planctl_job_add_output(),
 * planctl_job_set_output()) may run on any thread, so theirs is always
 * in planctl_thread_errmsg() of the thread that called.
 */
struct uv_loop_s; /* libuv's loop; uv.h stays out of this header */

typedef struct planctl_engine planctl_engine;

/* One execution of one task of a step, owned by the engine.  An executor
 * receives it in start() and must report on it exactly once with
 * planctl_step_finish() (also after a cancel, and also from inside
 * start()), after which it must not touch it again: the engine frees it. */
typedef struct planctl_job planctl_job;

/* What a task reports. */
typedef enum planctl_outcome {
    PLANCTL_OUTCOME_DONE = 0,     /* finished: the step goes on */
    PLANCTL_OUTCOME_NOT_DONE = 1, /* not yet: started again after the poll
                                     interval (KUDO's "not done") */
    PLANCTL_OUTCOME_ERROR = 2,    /* transient: the step is retried */
    PLANCTL_OUTCOME_FATAL = 3     /* permanent: the step ends FATAL_ERROR */
} planctl_outcome;

/* What an executor is told about a task.  Borrowed: valid only during
 * start(); copy what you keep. */
typedef struct planctl_task_info {
    const char *instance, *plan, *phase, *step;
    const char *task; /* the task's name */
    const char *kind;
    const char *spec; /* the task's spec, a JSON object */
    /* The run's parameter snapshot, a JSON object of values of each
     * parameter's type ("BROKERS": 3, "ZONES": ["a"]; strings for values
     * stored before parameters had types); a parameter with no value is
     * absent. */
    const char *params;
    int64_t run;
    int attempt;         /* 1-based try of the step */
    int64_t deadline_ms; /* the step's timeout as an absolute time, or 0 */
    const char *run_uid; /* the run's random uid, unique across databases */
    /* The outputs this task may use (added last, with task outputs: an
     * executor reading it needs a library with planctl_job_add_output),
     * a JSON object {"STEP": {"KEY": "value", ...}, ...} of the steps of
     * the run that completed with outputs (carried-over ones included,
     * in definition order), and of the tasks before this one in this
     * attempt of its own step, under its own name.  Secret values are
     * given as they are.  NULL when there are none, and always for the
     * built-in Dummy kind, which has no use for them. */
    const char *outputs;
} planctl_task_info;

/*
 * An executor performs the tasks of one kind.  Both functions are called
 * on the loop thread, with the executor's data, and must not block: do
 * slow work on your own handles (planctl_job_loop()) or threads.  Tasks
 * run at least once (a crash re-runs them), so make them idempotent.
 *   start:  begins the job.  Returns 0, or a negative code: the job then
 *           counts as failed (ERROR) and planctl_step_finish must not be
 *           called for it.  It must not call other planctl functions on
 *           the engine's handle.
 *   cancel: asks a started job to stop (cancel, timeout, shutdown).  The
 *           executor still calls planctl_step_finish once it has stopped;
 *           the outcome it reports is then ignored.  It may come after
 *           the job was reported but before the engine saw the report: it
 *           must then do nothing.
 *   release (version 2; may be NULL): the job is done with.  Called once
 *           for every job start() was called for, on the loop thread, when
 *           the engine frees it: after its report was consumed and after
 *           any cancel(), so no call on the job can follow.  Also for a
 *           job whose start() failed, and for the jobs of an engine that
 *           stops or is freed while they run (their reports consumed by
 *           the stop).  The place to free what planctl_job_set_data()
 *           attached (planctl_job_data(job) still returns it); it must
 *           not report the job or call the engine.
 * The struct is copied by planctl_engine_register(); data must stay valid
 * until the engine is freed.  A version 1 struct (no release) is still
 * accepted.
 */
typedef struct planctl_executor {
    unsigned int version; /* PLANCTL_EXECUTOR_VERSION */
    int (*start)(planctl_job *job, const planctl_task_info *info, void *data);
    void (*cancel)(planctl_job *job, void *data);
    void *data;
    void (*release)(planctl_job *job, void *data); /* version 2 */
} planctl_executor;

#define PLANCTL_EXECUTOR_VERSION 2

/*
 * Reports the job's outcome; callable from any thread (it only queues the
 * report and wakes the loop), exactly once per job.  message (may be NULL)
 * is copied and becomes the step's message.  The job is the engine's again
 * on return.  Returns 0, or PLANCTL_EINVAL for a NULL job or a second
 * report.
 */
PLANCTL_API int planctl_step_finish(planctl_job *job, planctl_outcome outcome,
                                    const char *message);

/*
 * Task outputs (KUDO's Pipe tasks): adds one output of job, a value handed
 * to the later tasks of its run (a certificate one step generates and a
 * later one installs).
 *
 * job:   the job of a running task, before planctl_step_finish(); from
 *        the thread that will call it (as planctl_job_set_output()).
 * key:   letters, digits and _, not starting with a digit; case counts.
 *        Copied.  A key added twice (by this task or an earlier task of
 *        the same attempt) keeps the last value.
 * value: UTF-8 without NUL bytes, possibly empty or multi-line.  Copied.
 * flags: 0, or PLANCTL_OUTPUT_SECRET for a value planctl never prints:
 *        "***" in status, {"secret": null} in export unless
 *        planctl_export_options.include_secrets, never printed by
 *        events or history.  The database holds it in clear.
 *
 * Who sees it: every task of the run that starts after the step has
 * completed, in planctl_task_info.outputs (JSON {"STEP": {"KEY": "value",
 * "SECRET": {"secret": "value"}}}) and, for a shell task, as the variable
 * PLANCTL_OUTPUT_<STEP>_<KEY> (STEP the step's name upper-cased, other
 * characters than letters and digits made _); the later tasks of the same
 * step and attempt see it at once, under their own step's name.  The
 * built-in Dummy kind is given none.
 *
 * Where it is kept: with the attempt, whatever its outcome, in the
 * transaction that ends it (and, for a step of several tasks, as it moves
 * to its next task, so a retry after a crash resumes with it); with the
 * step when that attempt completes it; in the step's event, so replay,
 * verify, export and import carry it.  A retry resuming at a later task
 * starts from what the previous attempt recorded; planctl_run_retry()
 * carries the outputs of the steps it carries over.
 *
 * The keys and values of one attempt (all its tasks) hold at most 64 KiB.
 *
 * Returns 0; PLANCTL_EINVAL for a NULL argument, a job already reported,
 * a bad key or value, or an attempt past 64 KiB: that output is not added,
 * and (but for a NULL argument or a job already reported) the attempt
 * then fails ERROR (retried by its policy) with a message saying why, even
 * if the job reports DONE, so that an executor which does not check the
 * return cannot lose an output silently; PLANCTL_ENOMEM.
 */
#define PLANCTL_OUTPUT_SECRET 1u
PLANCTL_API int planctl_job_add_output(planctl_job *job, const char *key,
                                       const char *value, unsigned int flags);

/* Records an exit code and the tail of the task's output with the job's
 * attempt (shell does); call before planctl_step_finish, from the thread
 * that will call it.  output (may be NULL) is copied, keeping its last
 * bytes (the engine's output_size, 64 KiB by default) from a character
 * boundary; its whole length is recorded as the bytes the attempt wrote
 * (what `planctl logs` reports of output not kept).  Returns 0, PLANCTL_EINVAL
 * (NULL job, or already reported) or PLANCTL_ENOMEM. */
PLANCTL_API int planctl_job_set_output(planctl_job *job, int exit_code,
                                       const char *output);

/* The loop the job runs on, for the executor's own handles (loop thread
 * only, as libuv requires).  Can't fail. */
PLANCTL_API struct uv_loop_s *planctl_job_loop(const planctl_job *job);

/* A pointer the executor may attach to the job (NULL until set), e.g. for
 * cancel() to find its state.  Plain accessors with no locking: an
 * executor using them from several threads synchronises itself.  Can't
 * fail. */
PLANCTL_API void planctl_job_set_data(planctl_job *job, void *data);
PLANCTL_API void *planctl_job_data(const planctl_job *job);

typedef struct planctl_engine_options {
    unsigned int version;   /* PLANCTL_ENGINE_OPTIONS_VERSION */
    int concurrency;        /* steps running at once; 0: 64 */
    int64_t change_poll_ms; /* how often commits of other processes are
                               looked for; 0: 100 */
    int64_t task_poll_ms;   /* restart of a NOT_DONE task; 0: 1000 */
    int64_t lease_ttl_ms;   /* a lease older than this is stale; 0: 15000 */
    int until_idle;         /* stop by itself when nothing is left to do */
    /* Since version 2 (a version 1 struct ends above, and is still
     * taken): the bytes of output kept with each attempt (its last ones,
     * from a character boundary: planctl_job_set_output, the shell's
     * stdout and stderr); 0: 65536 (64 KiB); at most 1048576 (1 MiB).
     * A shell task's failure message takes the last line of its output
     * whatever this keeps. */
    int64_t output_size;
    /* Since version 3, for engines that share a PostgreSQL database (on
     * SQLite one engine runs per database and these are not used): the
     * engine's name, as `planctl engines` and status show it (copied;
     * NULL or "": host:pid), and how many active runs it holds at most
     * (0: no limit).  Its lease_ttl_ms is also how long the others wait
     * after its last heartbeat before they take its runs over. */
    const char *name;
    int64_t capacity;
    /* Since version 4: non-zero leaves the built-in shell kind out.  The
     * engine then never spawns a process, so SIGCHLD stays as the host
     * set it (see "Signals" at the top); its runs whose plan uses shell
     * wait, as for any kind it has no executor for. */
    int no_shell;
} planctl_engine_options;

#define PLANCTL_ENGINE_OPTIONS_VERSION 4
#define PLANCTL_ENGINE_OPTIONS_INIT                                            \
    {                                                                          \
        PLANCTL_ENGINE_OPTIONS_VERSION, 0, 0, 0, 0, 0, 0, NULL, 0, 0           \
    }

/*
 * Creates an engine that will run on loop (the embedder's, borrowed: the
 * engine never runs or closes it) with the open handle p, which it uses
 * from the loop thread from then on; both must outlive the engine.  loop
 * NULL gives the engine a loop of its own instead, which
 * planctl_engine_run() runs (and planctl_engine_free() closes).  Dummy
 * and shell (unless opts->no_shell) are registered.  opts may be NULL.  *out is
 * freed with planctl_engine_free().  Errors: EINVAL (NULL argument, bad
 * options), ENOMEM.
 */
PLANCTL_API int planctl_engine_new(planctl_engine **out, planctl *p,
                                   struct uv_loop_s *loop,
                                   const planctl_engine_options *opts);

/* Registers (or replaces) the executor of a task kind, before start.  ex
 * is copied.  The kind also becomes known to the engine's handle
 * (planctl_kind_register() without a spec check, unless one is registered
 * already), so definitions using it can be applied on that handle, and
 * preflight checks started through that handle run with it.  Freeing the
 * engine forgets its executors; the kinds stay known.
 * Errors: EINVAL (bad kind, NULL start or cancel, unknown version),
 * ENOMEM. */
PLANCTL_API int planctl_engine_register(planctl_engine *e, const char *kind,
                                        const planctl_executor *ex);

/*
 * Takes the database's engine lease and begins: attempts a dead engine
 * left IN_PROGRESS become ERROR ("interrupted: engine stopped", with the
 * last line of the output they stored) and are retried by policy, and the
 * private $PLANCTL_OUTPUT directories of their shell tasks are removed;
 * then passes run on the loop.  On PostgreSQL the
 * engine instead joins the engines of the database, which share the
 * active runs: it claims runs nobody holds and advances only those, takes
 * over the runs of engines declared dead (heartbeat older than their TTL,
 * or their process gone on this host), and forks a small keeper process
 * that kills its shell tasks should it fail to renew its heartbeat (it
 * stops by itself then, with PLANCTL_ESTALE).  stopped(e, data), if not
 * NULL, is called on the loop thread once the engine has stopped and
 * closed every handle, whether it was asked to (planctl_engine_stop) or
 * stopped by itself (until_idle, or a lost lease: see
 * planctl_engine_status()).  Errors: ECONFLICT (another engine holds the
 * lease; the message names it), EINVAL (already started, or an engine
 * with a loop of its own, which planctl_engine_run() starts), EIO, ENOMEM.
 */
PLANCTL_API int planctl_engine_start(planctl_engine *e,
                                     void (*stopped)(planctl_engine *e,
                                                     void *data),
                                     void *data);

/*
 * Stops: nothing new starts, running steps get grace_ms to finish, then
 * are cancelled (their attempts end ERROR and are retried at the next
 * start); everything is committed, the lease released and every handle
 * closed, then the stopped callback runs.  Calling stop again with a
 * shorter grace cuts it short (0: cancel now).  A database that keeps
 * failing once no task runs (a server gone) does not hold the stop up:
 * after a few failed passes the engine stops without committing them
 * (the next engine recovers its steps, as after a crash) and
 * planctl_engine_status() is that error.  Returns 0, or PLANCTL_EINVAL
 * when the engine was never started.
 */
PLANCTL_API int planctl_engine_stop(planctl_engine *e, int64_t grace_ms);

/*
 * Any thread (see Threads at the top): asks the engine to stop, as
 * planctl_engine_stop(e, grace_ms) does, which its loop thread then runs
 * at its next turn.  Several requests: the shortest grace wins.  Asked
 * before the engine started, the stop is kept, and the engine stops as
 * soon as it has started; after it stopped, there is nothing to do.
 * Returns 0, or PLANCTL_EINVAL for a NULL engine.
 */
PLANCTL_API int planctl_engine_request_stop(planctl_engine *e,
                                            int64_t grace_ms);

/*
 * Starts an engine created with no loop (loop NULL) and runs its own loop
 * on the calling thread until the engine has stopped: stopped by
 * planctl_engine_request_stop() from another thread, by itself
 * (until_idle), or by a lost lease.  The calling thread is the engine's
 * loop thread meanwhile: executors' start() and cancel() and the logger
 * run on it.  Handles an executor left on that loop are closed before it
 * returns.  Returns what planctl_engine_start() would (nothing ran), or
 * once the engine has stopped planctl_engine_status(); free the engine
 * with planctl_engine_free() after.  PLANCTL_EINVAL: a NULL engine, one
 * on the embedder's loop, or one already started.
 */
PLANCTL_API int planctl_engine_run(planctl_engine *e);

/* Why a stopped engine stopped: 0 for a requested stop or until_idle (and
 * while it runs), else the error that stopped it, PLANCTL_ESTALE when
 * another engine took the lease over.  Its message is set again as the
 * handle's planctl_errmsg, as it was when the engine stopped (what failed
 * while it closed does not replace it).  PLANCTL_EINVAL for a NULL
 * engine. */
PLANCTL_API int planctl_engine_status(const planctl_engine *e);

/* Frees a stopped (or never started) engine: call it after the stopped
 * callback, not from inside it.  An engine still running is left alone
 * (not freed), as freeing it would leave libuv with dangling handles.  NULL
 * is allowed.  Can't fail. */
PLANCTL_API void planctl_engine_free(planctl_engine *e);

/* ---- metrics, health and the engine's log ------------------------------ */

/*
 * The engine's metrics as Prometheus text (exposition format 0.0.4), for
 * an embedder's own /metrics endpoint (`planctl run --metrics-addr` serves
 * it over HTTP).  Counters count since planctl_engine_new(), and only what
 * was committed (a rolled-back pass counts nothing):
 *   planctl_transitions_total{entity,to}  status changes the engine made
 *   planctl_attempts_total       step attempts started (-> IN_PROGRESS)
 *   planctl_retries_total        attempts that were retries (ERROR ->)
 *   planctl_fatal_errors_total   steps that ended FATAL_ERROR
 *   planctl_pass_failures_total  passes rolled back (busy or failing disk)
 * three counters of the work passes did, committed or not:
 *   planctl_cache_full_reads_total   every active run read anew (at
 *                                    start, after a rollback, or when the
 *                                    event log cannot tell what changed)
 *   planctl_cache_runs_reread_total  runs read again after another
 *                                    writer's commit changed them
 *   planctl_runs_decided_total       runs a pass decided: those that
 *                                    changed, whose time came, or that
 *                                    took a free slot (never every
 *                                    active run)
 * gauges read when called (from the database, which also sees runs other
 * processes queued): planctl_queue_depth (QUEUED runs),
 * planctl_active_runs (PENDING, IN_PROGRESS or PAUSED runs),
 * planctl_running_steps (steps the engine runs now), planctl_lease_held
 * (1 while planctl_engine_healthy() says so); and histograms of passes that
 * committed: planctl_pass_seconds, planctl_commit_seconds (the COMMIT
 * alone) and planctl_commit_batch_transitions (status changes per commit).
 * On the loop thread; works on an engine in any state (gauges read 0 when
 * the database cannot be read).  *out is freed with planctl_free().
 * Errors: EINVAL (NULL argument), ENOMEM.
 */
PLANCTL_API int planctl_engine_metrics(char **out, planctl_engine *e);

/*
 * The same text from any thread: asks the loop thread for it (rendered
 * there by planctl_engine_metrics() at its next turn) and waits up to
 * wait_ms for it.  Should the loop not answer by then (busy in a long
 * pass, or not being run), or with wait_ms 0, it gives the last text the
 * engine published instead: before start, every counter at 0 and no
 * gauge read; once the engine has stopped, the text of its end.
 * *out is freed with planctl_free().  Errors: EINVAL (NULL argument,
 * wait_ms negative), ENOMEM.
 */
PLANCTL_API int planctl_engine_metrics_snapshot(char **out, planctl_engine *e,
                                                int64_t wait_ms);

/* 1 when the engine runs and holds its lease (started, not stopping, not
 * fenced off by another engine, and its last heartbeat is younger than the
 * lease TTL, on the monotonic clock), else 0 (also for NULL).  For a
 * health check; any thread.  Can't fail. */
PLANCTL_API int planctl_engine_healthy(const planctl_engine *e);

typedef enum planctl_log_level {
    PLANCTL_LOG_DEBUG = 0,
    PLANCTL_LOG_INFO = 1,
    PLANCTL_LOG_WARN = 2,
    PLANCTL_LOG_ERROR = 3
} planctl_log_level;

/* One event of the engine, borrowed: valid only during the callback.
 * Absent context is NULL (strings) or 0 (numbers). */
typedef struct planctl_log_record {
    planctl_log_level level;
    int64_t ts_ms;        /* wall clock, ms since the Unix epoch, UTC */
    const char *msg;      /* what happened: "run started", "step failed" */
    const char *instance; /* context: the instance's name */
    int64_t run;          /* the run's id */
    const char *plan;
    const char *step;
    int attempt;        /* the step's attempt */
    const char *status; /* the status it went to */
    const char *detail; /* the step's or run's message, an error */
    /* Records grow only at their end; the library fills them, so a
     * callback built before a field existed reads what it knows. */
    const char *phase; /* a phase's change: the phase's name */
    const char *actor; /* a change another writer made (the CLI, another
                          handle): its event's actor ("user", "planctl");
                          NULL for the engine's own */
} planctl_log_record;

/*
 * Has the engine tell cb about its events at level min and above: started
 * (with the lease taken), run started, paused, resumed, ended (COMPLETE at
 * info, CANCELLED at warn, FATAL_ERROR at error), promoted from the queue,
 * step failed and retrying (warn) or failed for good (error), step
 * started/completed and phase changes (debug), a pass failed and backing
 * off (warn), a run waiting because its plan uses a task kind this engine
 * has no executor for ("run waits for a task kind", warn, once per run;
 * such a run is left as it is, never failed), lease lost (error),
 * stopping, stopped.  The library never
 * prints: cb formats and writes.  Status changes are reported once
 * committed; those other writers committed (another handle, the CLI) when
 * the engine reads them from the event log at its next pass, with
 * rec->actor set (at most 64 per pass one by one, then one line with the
 * count).  cb runs on the loop thread and must not call the engine.
 * cb NULL turns the log off.  Errors: EINVAL (NULL engine, bad level).
 */
PLANCTL_API int
planctl_engine_set_logger(planctl_engine *e, planctl_log_level min,
                          void (*cb)(const planctl_log_record *rec, void *data),
                          void *data);

/* "debug", "info", "warn", "error" (static); NULL for an unknown level.
 * Can't fail. */
PLANCTL_API const char *planctl_log_level_name(planctl_log_level level);

#ifdef __cplusplus
}
#endif

#endif /* PLANCTL_H */
