/*
 * test_faults.c - I/O faults injected under SQLite: a test VFS layered
 * over the default one fails the Nth write, sync, read or lock with
 * SQLITE_IOERR, SQLITE_FULL or SQLITE_BUSY, across a workload of store
 * calls and engine passes, for every N up to the workload's total.
 *
 * For each kind of fault, a dry run counts the workload's operations of
 * that kind; then for every N (or every Kth, see below) the workload runs
 * again from the same template with the Nth operation failing - once
 * (a transient fault), or, in the "outage" runs, that one and the next
 * OUTAGE-1 of its kind.  Then the fault is gone and the workload goes on:
 *   - every call returns 0 or a negative code, never crashes (ASan and
 *     UBSan watch the rest, LeakSanitizer the leaks);
 *   - the process keeps working: the calls after the fault behave as in a
 *     run without it, as far as the earlier results allow, and the engine
 *     that met the fault in a pass backs off, passes again and finishes
 *     every run by itself (an engine that could not even start is started
 *     again, as an embedder would);
 *   - reopened with the normal VFS, the database passes planctl_verify()
 *     and PRAGMA integrity_check, every call that returned 0 left its
 *     change and its event, and no call that failed left either.
 *
 * Every N of the transient faults is tried (PLANCTL_FAULT_STRIDE=K: every
 * Kth, which tests/faults/CMakeLists.txt sets for sanitized builds).  An
 * outage costs the engine several backed-off passes (50 ms, 100 ms, ...),
 * so those runs try every 6th N (PLANCTL_FAULT_OUTAGE_STRIDE); 6 is prime
 * to nothing in the workload, and the transient runs cover every N.
 * PLANCTL_FAULT_VERBOSE=1 prints each run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>
#include <uv.h>

#include "planctl.h"
#include "store/sqlite/sqlite.h" /* the handle's sqlite3, for the checkpoint size */
#include "testutil.h"

#define OUTAGE 4 /* operations that fail in a row in an outage run */

/* ---- the fault VFS ---- */

typedef enum fop { OP_WRITE, OP_SYNC, OP_READ, OP_LOCK, OP__COUNT } fop;

static const char *const op_names[] = {"write", "sync", "read", "lock"};

static struct {
    int counting;   /* count operations (and fail them when due) */
    fop op;         /* the kind that fails */
    long countdown; /* operations of that kind before the first fault */
    int code;       /* what the failing operation returns */
    int left;       /* faults still to inject; 0: none (cleared) */
    long counts[OP__COUNT];
    long injected;
} F;

typedef struct ffile {
    sqlite3_file base;
    sqlite3_file *real; /* the default VFS's file, allocated right after */
} ffile;

static sqlite3_vfs *real_vfs;
static sqlite3_vfs fault_vfs;
static sqlite3_io_methods fault_methods;

/* Counts an operation of kind op; returns the error to inject, or 0. */
static int fault(fop op)
{
    if (!F.counting)
        return 0;
    F.counts[op]++;
    if (op != F.op || F.left == 0)
        return 0;
    if (F.countdown > 0) {
        F.countdown--;
        return 0;
    }
    F.left--;
    F.injected++;
    return F.code;
}

static sqlite3_file *real_of(sqlite3_file *f)
{
    return ((ffile *)f)->real;
}

static int f_close(sqlite3_file *f)
{
    sqlite3_file *r = real_of(f);
    int rc = r->pMethods ? r->pMethods->xClose(r) : SQLITE_OK;

    f->pMethods = NULL;
    return rc;
}

static int f_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    sqlite3_file *r = real_of(f);
    int rc = fault(OP_READ);

    return rc ? rc : r->pMethods->xRead(r, buf, n, off);
}

static int f_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
    sqlite3_file *r = real_of(f);
    int rc = fault(OP_WRITE);

    return rc ? rc : r->pMethods->xWrite(r, buf, n, off);
}

static int f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    sqlite3_file *r = real_of(f);

    return r->pMethods->xTruncate(r, size);
}

static int f_sync(sqlite3_file *f, int flags)
{
    sqlite3_file *r = real_of(f);
    int rc = fault(OP_SYNC);

    return rc ? rc : r->pMethods->xSync(r, flags);
}

static int f_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
    sqlite3_file *r = real_of(f);

    return r->pMethods->xFileSize(r, size);
}

static int f_lock(sqlite3_file *f, int level)
{
    sqlite3_file *r = real_of(f);
    int rc = fault(OP_LOCK);

    return rc ? rc : r->pMethods->xLock(r, level);
}

/* Unlocking never fails here: the faults are about getting a lock. */
static int f_unlock(sqlite3_file *f, int level)
{
    sqlite3_file *r = real_of(f);

    return r->pMethods->xUnlock(r, level);
}

static int f_check_reserved(sqlite3_file *f, int *out)
{
    sqlite3_file *r = real_of(f);

    return r->pMethods->xCheckReservedLock(r, out);
}

static int f_file_control(sqlite3_file *f, int op, void *arg)
{
    sqlite3_file *r = real_of(f);

    return r->pMethods->xFileControl(r, op, arg);
}

static int f_sector_size(sqlite3_file *f)
{
    sqlite3_file *r = real_of(f);

    return r->pMethods->xSectorSize(r);
}

static int f_device_characteristics(sqlite3_file *f)
{
    sqlite3_file *r = real_of(f);

    return r->pMethods->xDeviceCharacteristics(r);
}

static int f_shm_map(sqlite3_file *f, int page, int size, int extend,
                     void volatile **out)
{
    sqlite3_file *r = real_of(f);

    return r->pMethods->xShmMap(r, page, size, extend, out);
}

/* The WAL's locks live in the shared memory: taking one counts as a lock
 * (releasing does not). */
static int f_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
    sqlite3_file *r = real_of(f);
    int rc = (flags & SQLITE_SHM_LOCK) ? fault(OP_LOCK) : 0;

    return rc ? rc : r->pMethods->xShmLock(r, offset, n, flags);
}

static void f_shm_barrier(sqlite3_file *f)
{
    sqlite3_file *r = real_of(f);

    r->pMethods->xShmBarrier(r);
}

static int f_shm_unmap(sqlite3_file *f, int delete_flag)
{
    sqlite3_file *r = real_of(f);

    return r->pMethods->xShmUnmap(r, delete_flag);
}

static int f_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **out)
{
    sqlite3_file *r = real_of(f);

    return r->pMethods->xFetch(r, off, n, out);
}

static int f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    sqlite3_file *r = real_of(f);

    return r->pMethods->xUnfetch(r, off, p);
}

static int f_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file,
                  int flags, int *out_flags)
{
    ffile *ff = (ffile *)file;
    int rc;

    (void)vfs;
    ff->real = (sqlite3_file *)(ff + 1);
    ff->real->pMethods = NULL;
    rc = real_vfs->xOpen(real_vfs, name, ff->real, flags, out_flags);
    file->pMethods = ff->real->pMethods ? &fault_methods : NULL;
    return rc;
}

static int v_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
    (void)vfs;
    return real_vfs->xDelete(real_vfs, name, sync_dir);
}

static int v_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    (void)vfs;
    return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int v_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
    (void)vfs;
    return real_vfs->xFullPathname(real_vfs, name, n, out);
}

static void *v_dlopen(sqlite3_vfs *vfs, const char *name)
{
    (void)vfs;
    return real_vfs->xDlOpen(real_vfs, name);
}

static void v_dlerror(sqlite3_vfs *vfs, int n, char *out)
{
    (void)vfs;
    real_vfs->xDlError(real_vfs, n, out);
}

static void (*v_dlsym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
    (void)vfs;
    return real_vfs->xDlSym(real_vfs, h, sym);
}

static void v_dlclose(sqlite3_vfs *vfs, void *h)
{
    (void)vfs;
    real_vfs->xDlClose(real_vfs, h);
}

static int v_randomness(sqlite3_vfs *vfs, int n, char *out)
{
    (void)vfs;
    return real_vfs->xRandomness(real_vfs, n, out);
}

static int v_sleep(sqlite3_vfs *vfs, int us)
{
    (void)vfs;
    return real_vfs->xSleep(real_vfs, us);
}

static int v_current_time(sqlite3_vfs *vfs, double *out)
{
    (void)vfs;
    return real_vfs->xCurrentTime(real_vfs, out);
}

static int v_last_error(sqlite3_vfs *vfs, int n, char *out)
{
    (void)vfs;
    return real_vfs->xGetLastError(real_vfs, n, out);
}

static int v_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
    (void)vfs;
    return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

/* Makes the fault VFS the default (what planctl_open uses) or gives the
 * default back to the real one. */
static void use_fault_vfs(int on)
{
    assert_int_equal(sqlite3_vfs_register(on ? &fault_vfs : real_vfs, 1),
                     SQLITE_OK);
}

static void fault_vfs_init(void)
{
    static const sqlite3_io_methods m = {
        3,
        f_close,
        f_read,
        f_write,
        f_truncate,
        f_sync,
        f_file_size,
        f_lock,
        f_unlock,
        f_check_reserved,
        f_file_control,
        f_sector_size,
        f_device_characteristics,
        f_shm_map,
        f_shm_lock,
        f_shm_barrier,
        f_shm_unmap,
        f_fetch,
        f_unfetch,
    };

    real_vfs = sqlite3_vfs_find(NULL);
    assert_non_null(real_vfs);
    fault_methods = m;
    memset(&fault_vfs, 0, sizeof fault_vfs);
    fault_vfs.iVersion = 2;
    fault_vfs.szOsFile = (int)sizeof(ffile) + real_vfs->szOsFile;
    fault_vfs.mxPathname = real_vfs->mxPathname;
    fault_vfs.zName = "planctl-faults";
    fault_vfs.xOpen = f_open;
    fault_vfs.xDelete = v_delete;
    fault_vfs.xAccess = v_access;
    fault_vfs.xFullPathname = v_full_pathname;
    fault_vfs.xDlOpen = v_dlopen;
    fault_vfs.xDlError = v_dlerror;
    fault_vfs.xDlSym = v_dlsym;
    fault_vfs.xDlClose = v_dlclose;
    fault_vfs.xRandomness = v_randomness;
    fault_vfs.xSleep = v_sleep;
    fault_vfs.xCurrentTime = v_current_time;
    fault_vfs.xGetLastError = v_last_error;
    fault_vfs.xCurrentTimeInt64 = v_current_time64;
}

/* ---- the workload ---- */

/* Dummy tasks only: the engine's part is quick and needs no process. */
#define FZ(version)                                                            \
    "{\"name\": \"fz\", \"version\": \"" version "\","                         \
    " \"parameters\": [{\"name\": \"MODE\", \"default\": \"a\"}],"             \
    " \"tasks\": [{\"name\": \"quick\", \"kind\": \"Dummy\"},"                 \
    "   {\"name\": \"flaky\", \"kind\": \"Dummy\","                            \
    "    \"spec\": {\"failTimes\": 1}}],"                                      \
    " \"plans\": {"                                                            \
    "   \"deploy\": {\"phases\": ["                                            \
    "     {\"name\": \"p\", \"strategy\": \"parallel\", \"steps\": ["          \
    "       {\"name\": \"s1\", \"tasks\": [\"quick\"]},"                       \
    "       {\"name\": \"s2\", \"tasks\": [\"flaky\", \"quick\"],"             \
    "        \"retry\": {\"attempts\": 3, \"backoff\": \"1ms\"}}]},"           \
    "     {\"name\": \"q\", \"steps\": ["                                      \
    "       {\"name\": \"s3\", \"tasks\": [\"quick\"]}]}]},"                   \
    "   \"update\": {\"phases\": [{\"name\": \"u\", \"steps\": ["              \
    "     {\"name\": \"s\", \"tasks\": [\"quick\"]}]}]},"                      \
    "   \"backup\": {\"phases\": [{\"name\": \"b\", \"steps\": ["              \
    "     {\"name\": \"s\", \"tasks\": [\"flaky\"],"                           \
    "      \"retry\": {\"attempts\": 2, \"backoff\": \"1ms\"}}]}]}}}"

#define SIMPLE_DEF                                                             \
    "{\"name\": \"simple\", \"version\": \"1\","                               \
    " \"tasks\": [{\"name\": \"t\", \"kind\": \"Dummy\"}],"                    \
    " \"plans\": {\"deploy\": {\"phases\": [{\"name\": \"p\", \"steps\": ["    \
    "   {\"name\": \"s\", \"tasks\": [\"t\"]}]}]}}}"

enum {
    W_OPEN,
    W_APPLY,
    W_CREATE,
    W_TRIGGER,
    W_SET,
    W_PAUSE,
    W_RESUME,
    W_CANCEL,
    W_RETRY,
    W_DELETE,
    W_VIEWS,
    W_ENGINE_STARTS, /* engines that could not start */
    W__COUNT
};

static const char *const w_names[] = {
    "open",   "apply",  "create", "trigger", "set",   "pause",
    "resume", "cancel", "retry",  "delete",  "views", "engine starts"};

typedef struct outcome {
    int rc[W__COUNT];
    int engine_status;  /* why the last engine stopped */
    int engine_done;    /* the last engine ran until idle */
    long engine_faults; /* faults injected while the engine ran */
} outcome;

static char *dir, *tmpl;
static int verbose;

static void copy_file(const char *from, const char *to)
{
    size_t n;
    char *data = tu_read_file(from, &n);

    assert_non_null(data);
    assert_int_equal(tu_write_file(to, data, n), 0);
    free(data);
}

/* The template: fz@1 and simple@1; instances a and b idle (their deploy
 * cancelled), c with its deploy IN_PROGRESS (set through the gate, no
 * engine), d of simple, idle. */
static void make_template(void)
{
    planctl *p;
    int64_t r;
    char *doc = NULL;

    tmpl = tu_fmt("%s/template.db", dir);
    assert_int_equal(planctl_open(&p, tmpl, NULL), 0);
    assert_int_equal(
        planctl_definition_apply(NULL, p, FZ("1"), strlen(FZ("1")), "fz.json"),
        0);
    assert_int_equal(planctl_definition_apply(NULL, p, SIMPLE_DEF,
                                              strlen(SIMPLE_DEF), "s.json"),
                     0);
    assert_int_equal(planctl_instance_create(&r, p, "a", "fz", NULL, NULL, 0),
                     0);
    assert_int_equal(planctl_run_cancel(NULL, p, "a", NULL), 0);
    assert_int_equal(planctl_instance_create(&r, p, "b", "fz", NULL, NULL, 0),
                     0);
    assert_int_equal(planctl_run_cancel(NULL, p, "b", NULL), 0);
    assert_int_equal(planctl_instance_create(&r, p, "c", "fz", NULL, NULL, 0),
                     0);
    assert_int_equal(
        planctl_transition(p, PLANCTL_ENTITY_RUN, r, PLANCTL_STATUS_PENDING,
                           PLANCTL_STATUS_IN_PROGRESS, NULL, "engine"),
        0);
    assert_int_equal(
        planctl_instance_create(&r, p, "d", "simple", NULL, NULL, 0), 0);
    assert_int_equal(planctl_run_cancel(NULL, p, "d", NULL), 0);
    assert_int_equal(planctl_verify(&doc, p), 0);
    planctl_free(doc);
    planctl_close(p); /* the last close checkpoints and removes the WAL */
}

static void engine_stopped(planctl_engine *e, void *data)
{
    (void)e;
    *(int *)data = 1;
}

/* An engine until idle, started again if it could not start, at most a
 * few times (a fault is gone after OUTAGE operations).  A watchdog fails
 * the test if it does not finish. */
static void run_engine(planctl *p, outcome *o)
{
    int tries;

    for (tries = 0; tries < 2 * OUTAGE + 2; tries++) {
        planctl_engine_options eo = PLANCTL_ENGINE_OPTIONS_INIT;
        planctl_engine *e = NULL;
        uv_loop_t loop;
        int stopped = 0, rc;
        uint64_t deadline = uv_hrtime() / 1000000 + 60000;

        eo.until_idle = 1;
        eo.change_poll_ms = 1000;
        assert_int_equal(uv_loop_init(&loop), 0);
        rc = planctl_engine_new(&e, p, &loop, &eo);
        assert_int_equal(rc, 0);
        rc = planctl_engine_start(e, engine_stopped, &stopped);
        if (rc < 0) {
            assert_true(rc == PLANCTL_EIO || rc == PLANCTL_EBUSY ||
                        rc == PLANCTL_ENOMEM);
            o->rc[W_ENGINE_STARTS]++;
            planctl_engine_free(e);
            assert_int_equal(uv_loop_close(&loop), 0);
            continue;
        }
        while (!stopped && uv_run(&loop, UV_RUN_ONCE))
            if (uv_hrtime() / 1000000 > deadline)
                fail_msg("the engine did not finish within 60s after a %s "
                         "fault",
                         op_names[F.op]);
        assert_true(stopped);
        o->engine_status = planctl_engine_status(e);
        o->engine_done = 1;
        planctl_engine_free(e);
        assert_int_equal(uv_loop_close(&loop), 0);
        return;
    }
    fail_msg("the engine could not start %d times in a row",
             o->rc[W_ENGINE_STARTS]);
}

/* Every view; each returns 0 or a code, and a document with 0. */
static int views(planctl *p)
{
    planctl_events_options eo = PLANCTL_EVENTS_OPTIONS_INIT;
    char *doc = NULL;
    int rc, worst = 0;

#define VIEW(call)                                                             \
    do {                                                                       \
        doc = NULL;                                                            \
        rc = (call);                                                           \
        if (rc == 0)                                                           \
            assert_non_null(doc);                                              \
        else                                                                   \
            assert_true(rc < 0);                                               \
        planctl_free(doc);                                                     \
        if (rc < 0)                                                            \
            worst = rc;                                                        \
    } while (0)
    VIEW(planctl_status_json(&doc, p, "c", NULL));
    VIEW(planctl_history_json(&doc, p, "a", NULL));
    VIEW(planctl_instances_json(&doc, p));
    VIEW(planctl_events_json(&doc, p, &eo));
#undef VIEW
    return worst;
}

/* The workload: every call's result goes into o.  Calls that depend on an
 * earlier one (resume after pause) just report what they report. */
static void workload(const char *path, planctl_durability durability,
                     int busy_ms, outcome *o)
{
    planctl_open_options oo = PLANCTL_OPEN_OPTIONS_INIT;
    planctl_param mode = {"MODE", "b"};
    planctl_trigger_options to = PLANCTL_TRIGGER_OPTIONS_INIT;
    planctl *p = NULL;
    int64_t r = 0;
    int tries;

    oo.durability = durability;
    oo.busy_timeout_ms = busy_ms;
    for (tries = 0;; tries++) {
        o->rc[W_OPEN] = planctl_open(&p, path, &oo);
        if (o->rc[W_OPEN] == 0)
            break;
        assert_true(o->rc[W_OPEN] < 0);
        planctl_close(p);
        p = NULL;
        assert_true(tries < 2 * OUTAGE);
    }
    /* Checkpoint often, so checkpoints meet the faults too. */
    sqlite3_wal_autocheckpoint(pctl_sqlite_db(p), 8);

    o->rc[W_APPLY] =
        planctl_definition_apply(NULL, p, FZ("2"), strlen(FZ("2")), "fz2");
    o->rc[W_CREATE] = planctl_instance_create(&r, p, "n1", "fz", "2", NULL, 0);
    to.reason = "faults";
    o->rc[W_TRIGGER] = planctl_plan_trigger(&r, p, "a", "backup", &to);
    o->rc[W_SET] = planctl_instance_set(&r, p, "b", &mode, 1);
    o->rc[W_PAUSE] = planctl_run_pause(&r, p, "c");
    o->rc[W_RESUME] = planctl_run_resume(&r, p, "c");
    o->rc[W_CANCEL] = planctl_run_cancel(&r, p, "c", "faults");
    o->rc[W_RETRY] = planctl_run_retry(&r, p, "c", 0);
    o->rc[W_DELETE] = planctl_instance_delete(&r, p, "d", 0);
    o->rc[W_VIEWS] = views(p);

    /* Only the engine remains.  A run the calls above left PAUSED (pause
     * went through, resume did not) would keep it from ever being idle:
     * the operator resumes it, with the fault gone or not. */
    for (tries = 0; tries < 2 * OUTAGE + 2; tries++) {
        int rc = planctl_run_resume(&r, p, "c");

        if (rc == 0 || rc == PLANCTL_EINVAL || rc == PLANCTL_ENOTFOUND)
            break;
    }
    o->engine_faults = F.injected;
    run_engine(p, o);
    o->engine_faults = F.injected - o->engine_faults;
    planctl_close(p);
}

/* ---- the checks ---- */

static int64_t count(sqlite3 *db, const char *sql)
{
    return tu_scalar(db, "%s", sql);
}

/* A call that returned 0 left its change (and the event that records
 * it); one that failed left neither. */
static void expect_effect(sqlite3 *db, const outcome *o, int w, const char *sql)
{
    int64_t n = count(db, sql);
    int want = o->rc[w] == 0;

    if ((n > 0) != want)
        fail_msg("%s returned %d (%s) but the database %s its change "
                 "(%s: %lld)",
                 w_names[w], o->rc[w], planctl_errname(o->rc[w]),
                 want ? "lacks" : "has", sql, (long long)n);
}

static void check(const char *path, const outcome *o)
{
    planctl *p;
    sqlite3 *db;
    char *doc = NULL, *ic;
    int rc;

    /* Reopened with the normal VFS: the tables agree with the log. */
    assert_int_equal(planctl_open(&p, path, NULL), 0);
    rc = planctl_verify(&doc, p);
    if (rc != 0)
        fail_msg("verify: %s", planctl_errmsg(p));
    planctl_free(doc);
    planctl_close(p);

    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL),
                     SQLITE_OK);
    ic = tu_text(db, "PRAGMA integrity_check");
    assert_non_null(ic);
    assert_string_equal(ic, "ok");
    free(ic);
    assert_int_equal(count(db, "SELECT count(*) FROM pragma_foreign_key_check"),
                     0);

    expect_effect(db, o, W_APPLY,
                  "SELECT count(*) FROM definitions WHERE name = 'fz' AND "
                  "version = '2'");
    expect_effect(db, o, W_CREATE,
                  "SELECT count(*) FROM instances i JOIN runs r ON "
                  "r.instance_id = i.id JOIN events e ON e.run_id = r.id "
                  "AND e.entity = 'run' AND e.from_status IS NULL WHERE "
                  "i.name = 'n1' AND r.trigger = 'create'");
    expect_effect(db, o, W_TRIGGER,
                  "SELECT count(*) FROM runs r JOIN instances i ON i.id = "
                  "r.instance_id JOIN events e ON e.run_id = r.id AND "
                  "e.entity = 'run' AND e.from_status IS NULL WHERE i.name "
                  "= 'a' AND r.plan = 'backup' AND r.reason = 'faults'");
    expect_effect(db, o, W_SET,
                  "SELECT count(*) FROM runs r JOIN instances i ON i.id = "
                  "r.instance_id WHERE i.name = 'b' AND r.trigger = 'set' "
                  "AND i.params LIKE '%\"MODE\":\"b\"%'");
    expect_effect(db, o, W_PAUSE,
                  "SELECT count(*) FROM events e JOIN instances i ON i.id = "
                  "e.instance_id WHERE i.name = 'c' AND e.entity = 'run' "
                  "AND e.to_status = 'PAUSED'");
    /* Resume: the workload's call, or the operator's after it. */
    if (o->rc[W_RESUME] == 0)
        expect_effect(db, o, W_RESUME,
                      "SELECT count(*) FROM events e JOIN instances i ON "
                      "i.id = e.instance_id WHERE i.name = 'c' AND "
                      "e.entity = 'run' AND e.from_status = 'PAUSED'");
    expect_effect(db, o, W_CANCEL,
                  "SELECT count(*) FROM events e JOIN instances i ON i.id = "
                  "e.instance_id WHERE i.name = 'c' AND e.entity = 'run' "
                  "AND e.to_status = 'CANCELLED' AND e.actor = 'user'");
    expect_effect(db, o, W_RETRY,
                  "SELECT count(*) FROM runs r JOIN instances i ON i.id = "
                  "r.instance_id WHERE i.name = 'c' AND r.trigger = "
                  "'retry'");
    /* Delete removes d at once (no cleanup plan): present iff it failed. */
    if ((count(db, "SELECT count(*) FROM instances WHERE name = 'd'") == 0) !=
        (o->rc[W_DELETE] == 0))
        fail_msg("delete returned %d but d is %s", o->rc[W_DELETE],
                 o->rc[W_DELETE] == 0 ? "still there" : "gone");

    /* The engine finished everything by itself, once the fault was gone. */
    assert_true(o->engine_done);
    if (o->engine_status != 0)
        fail_msg("the engine stopped with %s",
                 planctl_errname(o->engine_status));
    assert_int_equal(count(db, "SELECT count(*) FROM runs WHERE status NOT "
                               "IN ('COMPLETE', 'FATAL_ERROR', 'CANCELLED')"),
                     0);
    assert_int_equal(
        count(db, "SELECT count(*) FROM attempts WHERE finished_at IS NULL"),
        0);
    sqlite3_close(db);
}

/* ---- the loop over N ---- */

typedef struct kind {
    fop op;
    int code;
    const char *code_name;
    int outage;
    int busy_ms; /* the handle's busy timeout */
} kind;

/* One run of the workload with the Nth operation of k failing (n < 0: a
 * dry run that only counts).  Returns the faults injected. */
static long one_run(const kind *k, long n, outcome *o)
{
    /* A file per kind: a failed sweep leaves nothing in the next one's
     * way. */
    char *path =
        tu_fmt("%s/%s-%d-%d.db", dir, op_names[k->op], k->code, k->outage);
    char *wal = tu_fmt("%s-wal", path), *shm = tu_fmt("%s-shm", path);
    char *lock = tu_fmt("%s-engine", path);
    planctl_durability dur =
        k->op == OP_SYNC ? PLANCTL_DURABILITY_FULL : PLANCTL_DURABILITY_NORMAL;

    memset(o, 0, sizeof *o);
    remove(wal);
    remove(shm);
    remove(lock);
    copy_file(tmpl, path);
    memset(&F, 0, sizeof F);
    F.op = k->op;
    F.code = k->code;
    F.countdown = n < 0 ? 0 : n;
    F.left = n < 0 ? 0 : k->outage;
    F.counting = 1;
    use_fault_vfs(1);
    workload(path, dur, k->busy_ms, o);
    use_fault_vfs(0);
    F.counting = 0;
    check(path, o);
    if (verbose) {
        int w;

        print_message("%s %s%s n=%ld injected=%ld:", op_names[k->op],
                      k->code_name, k->outage > 1 ? " outage" : "", n,
                      F.injected);
        for (w = 0; w < W__COUNT; w++)
            if (o->rc[w])
                print_message(" %s=%d", w_names[w], o->rc[w]);
        print_message("\n");
    }
    free(path);
    free(wal);
    free(shm);
    free(lock);
    return F.injected;
}

static void sweep(const kind *k, long stride)
{
    outcome o;
    long total, n, runs = 0, hit = 0, failed_calls = 0, engine_hit = 0;
    uint64_t t0 = uv_hrtime();
    int w;

    one_run(k, -1, &o);
    total = F.counts[k->op];
    assert_true(total > 0);
    for (n = 0;; n += stride) {
        long injected = one_run(k, n, &o);

        runs++;
        if (injected == 0 && n >= total)
            break; /* past the last operation of the workload */
        if (injected) {
            hit++;
            engine_hit += o.engine_faults > 0;
            for (w = 0; w < W__COUNT; w++)
                failed_calls += o.rc[w] != 0;
        }
        assert_true(n < 4 * total + 100); /* the count is near the truth */
    }
    print_message("%-5s %-18s%s: %ld operations, %ld runs (stride %ld), "
                  "%ld with the fault (%ld in an engine pass), %ld calls "
                  "refused, %.1fs\n",
                  op_names[k->op], k->code_name,
                  k->outage > 1 ? " outage" : "       ", total, runs, stride,
                  hit, engine_hit, failed_calls,
                  (double)(uv_hrtime() - t0) / 1e9);
    /* Writes happen in every engine pass: some faults met the engine,
     * which backed off, passed again and finished. */
    if (k->op == OP_WRITE)
        assert_true(engine_hit > 0);
    /* The faults did reach the calls: some of them failed (a busy
     * handler waits a BUSY out). */
    if (k->code != SQLITE_BUSY || k->busy_ms == 0)
        assert_true(failed_calls > 0);
}

static long stride_for(const kind *k)
{
    const char *env = getenv(k->outage > 1 ? "PLANCTL_FAULT_OUTAGE_STRIDE"
                                           : "PLANCTL_FAULT_STRIDE");
    long s = env ? atol(env) : k->outage > 1 ? 6 : 1;

    return s < 1 ? 1 : s;
}

static const kind kinds[] = {
    {OP_WRITE, SQLITE_IOERR_WRITE, "SQLITE_IOERR_WRITE", 1, 100},
    {OP_SYNC, SQLITE_IOERR_FSYNC, "SQLITE_IOERR_FSYNC", 1, 100},
    {OP_READ, SQLITE_IOERR_READ, "SQLITE_IOERR_READ", 1, 100},
    /* No busy timeout: the BUSY reaches the caller (EBUSY). */
    {OP_LOCK, SQLITE_BUSY, "SQLITE_BUSY", 1, 0},
    {OP_LOCK, SQLITE_IOERR_LOCK, "SQLITE_IOERR_LOCK", 1, 100},
    {OP_WRITE, SQLITE_FULL, "SQLITE_FULL", OUTAGE, 100},
    {OP_SYNC, SQLITE_IOERR_FSYNC, "SQLITE_IOERR_FSYNC", OUTAGE, 100},
    {OP_READ, SQLITE_IOERR_READ, "SQLITE_IOERR_READ", OUTAGE, 100},
    /* With one: the busy handler waits the outage out. */
    {OP_LOCK, SQLITE_BUSY, "SQLITE_BUSY", OUTAGE, 100},
};

static void test_sweep(void **state)
{
    const kind *k = *state;

    sweep(k, stride_for(k));
}

/* The fault VFS is transparent: a run without a fault checks out, and the
 * dry run saw operations of every kind. */
static void test_vfs_transparent(void **state)
{
    kind k = {OP_WRITE, SQLITE_IOERR_WRITE, "none", 1, 100};
    outcome o;
    int w;

    (void)state;
    one_run(&k, -1, &o);
    for (w = 0; w < W__COUNT; w++)
        assert_int_equal(o.rc[w], 0);
    for (w = 0; w < OP__COUNT; w++)
        assert_true(F.counts[w] > 0);
    print_message("one clean run: %ld writes, %ld syncs, %ld reads, %ld "
                  "locks\n",
                  F.counts[OP_WRITE], F.counts[OP_SYNC], F.counts[OP_READ],
                  F.counts[OP_LOCK]);
}

int main(void)
{
    struct CMUnitTest tests[1 + sizeof kinds / sizeof kinds[0]];
    size_t i;
    int rc;

    tests[0] = (struct CMUnitTest)cmocka_unit_test(test_vfs_transparent);
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        tests[i + 1] = (struct CMUnitTest)cmocka_unit_test_prestate(
            test_sweep, (void *)&kinds[i]);
        tests[i + 1].name =
            tu_fmt("%s %s%s", op_names[kinds[i].op], kinds[i].code_name,
                   kinds[i].outage > 1 ? " outage" : "");
    }
    verbose = getenv("PLANCTL_FAULT_VERBOSE") != NULL;
    fault_vfs_init();
    /* Thousands of small databases: keep them in memory when we can. */
    if (!getenv("TMPDIR") && access("/dev/shm", W_OK) == 0)
        setenv("TMPDIR", "/dev/shm", 1);
    dir = tu_mkdtemp();
    make_template();
    rc = _cmocka_run_group_tests("faults", tests,
                                 sizeof tests / sizeof tests[0], NULL, NULL);
    for (i = 1; i < sizeof tests / sizeof tests[0]; i++)
        free((char *)tests[i].name);
    tu_rmtree(dir);
    free(dir);
    free(tmpl);
    return rc;
}
