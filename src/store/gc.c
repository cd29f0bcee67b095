/*
 * gc.c - removing old terminal runs with their phases, steps, attempts and
 * events (planctl-engine(7), "DEBUGGING: EVENTS, REPLAY, VERIFY, GC").
 *
 * A run goes when it is terminal, when at least keep_last newer runs of the
 * same (instance, plan) exist (so the latest run of a plan always stays),
 * and, if older_than is given, when it finished longer ago than that.
 * Active and queued runs never go.  Removal runs in batches of `batch`
 * runs, one transaction each, so a running engine waits at most for one
 * batch; foreign keys take the children and events with each run, and
 * clear the retry_of of newer runs that retried it (replay reads such a
 * retry_of as none, so verify still agrees).  With an archive, each run
 * of a batch is handed to it as a bundle of its own before the batch
 * removes it, in the same transaction, so a run is never gone without
 * being archived (it may be archived twice if a batch fails after the
 * archive took it: importing the archive keeps one copy).
 */
#include <jansson.h>
#include <string.h>

#include "core/alloc.h"
#include "core/timefmt.h"
#include "store/store.h"

#define DEFAULT_KEEP 10
#define DEFAULT_BATCH 100
#define MAX_BATCH 1000

/* Archives the n runs of this batch (the last n of runs, with instance ids
 * iids) through opts->archive, then says the batch is about to commit. */
static int archive_batch(planctl *p, const planctl_gc_options *opts,
                         json_t *runs, const int64_t *iids, int n)
{
    size_t first = json_array_size(runs) - (size_t)n;
    int i, rc = 0;

    for (i = 0; rc == 0 && i < n; i++) {
        json_t *r = json_array_get(runs, first + (size_t)i);
        char *bundle = NULL;

        rc = pctl_bundle_run_json(
            &bundle, p, iids[i],
            json_string_value(json_object_get(r, "instance")),
            json_integer_value(json_object_get(r, "id")));
        if (rc == 0 &&
            opts->archive(opts->archive_data, bundle, strlen(bundle)) != 0)
            rc = pctl_err(
                p, PLANCTL_EIO,
                "writing run %lld to the archive failed; nothing "
                "of its batch was removed",
                (long long)json_integer_value(json_object_get(r, "id")));
        pctl_free(bundle);
    }
    if (rc == 0 && n > 0 && opts->archive(opts->archive_data, NULL, 0) != 0)
        rc = pctl_err(p, PLANCTL_EIO,
                      "finishing the archive's batch failed; nothing of the "
                      "batch was removed");
    return rc;
}

int planctl_gc(char **out, planctl *p, const planctl_gc_options *opts)
{
    planctl_gc_options defaults = PLANCTL_GC_OPTIONS_INIT;
    json_t *doc = NULL, *runs;
    int64_t last = 0, cutoff, removed = 0;
    int keep, batch, rc = 0, n = 0, step = PCTL_DONE, archive;
    pctl_stmt *st;

    if (!out || !p)
        return pctl_err_arg(p, !p ? "p" : "out");
    *out = NULL;
    if (!opts)
        opts = &defaults;
    if (opts->version < 1 || opts->version > PLANCTL_GC_OPTIONS_VERSION ||
        opts->keep_last < 0 || opts->older_than_ms < 0 || opts->batch < 0)
        return pctl_err(p, PLANCTL_EINVAL,
                        "gc options: version must be 1 or %d, keep_last, "
                        "older_than and batch must not be negative",
                        PLANCTL_GC_OPTIONS_VERSION);
    /* Only a version 2 struct has the archive fields. */
    archive = opts->version >= 2 && opts->archive && !opts->dry_run;
    keep = opts->keep_last ? opts->keep_last : DEFAULT_KEEP;
    batch = opts->batch ? opts->batch : DEFAULT_BATCH;
    if (batch > MAX_BATCH)
        batch = MAX_BATCH;
    cutoff = opts->older_than_ms ? pctl_now(p) - opts->older_than_ms : 0;
    doc = json_pack("{s:i, s:b, s:i, s:[]}", "schema", 1, "dry_run",
                    opts->dry_run != 0, "keep_last", keep, "runs");
    runs = doc ? json_object_get(doc, "runs") : NULL;
    if (!runs) {
        json_decref(doc);
        return pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    }
    do {
        int64_t ids[MAX_BATCH], iids[MAX_BATCH];
        int i;

        rc = opts->dry_run ? pctl_tx_read(p) : pctl_tx_begin(p);
        if (rc < 0)
            break;
        n = 0;
        st = pctl_q(p, PCTL_Q_gc_candidates);
        if (!st) {
            rc = pctl_q_err(p);
        } else {
            if (cutoff)
                pctl_bind_i64(st, 1, cutoff);
            pctl_bind_i64(st, 2, keep);
            pctl_bind_i64(st, 3, last);
            pctl_bind_i64(st, 4, batch);
            while (rc == 0 && (step = pctl_step(st)) == PCTL_ROW) {
                char when[PCTL_TIME_BUF];
                json_t *o;

                ids[n] = last = pctl_col_i64(st, 0);
                iids[n++] = pctl_col_i64(st, 5);
                pctl_time_rfc3339(when, pctl_col_i64(st, 4));
                o = json_pack("{s:I, s:s, s:s, s:s, s:s}", "id",
                              (json_int_t)last, "instance",
                              pctl_col_text(st, 1), "plan",
                              pctl_col_text(st, 2), "status",
                              pctl_col_text(st, 3), "finished_at", when);
                if (!o || json_array_append_new(runs, o) < 0)
                    rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
            }
            if (rc == 0 && step != PCTL_DONE)
                rc = pctl_q_fail(st, step);
            pctl_reset(st);
        }
        /* Archived first, in the same transaction: a run is removed only
         * once the archive has it. */
        if (rc == 0 && archive)
            rc = archive_batch(p, opts, runs, iids, n);
        for (i = 0; rc == 0 && !opts->dry_run && i < n; i++) {
            st = pctl_q(p, PCTL_Q_gc_delete_run);
            if (!st) {
                rc = pctl_q_err(p);
                break;
            }
            pctl_bind_i64(st, 1, ids[i]);
            rc = pctl_q_exec(st);
            removed += rc == 0;
        }
        if (opts->dry_run)
            pctl_tx_read_end(p);
        else
            rc = pctl_tx_end(p, rc);
    } while (rc == 0 && n == batch);
    if (rc == 0 &&
        json_object_set_new(doc, "removed",
                            json_integer(opts->dry_run ? 0 : removed)) == 0 &&
        !(*out = json_dumps(doc, JSON_COMPACT)))
        rc = pctl_err(p, PLANCTL_ENOMEM, "out of memory");
    json_decref(doc);
    return rc;
}
