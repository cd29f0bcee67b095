/* backend.c - pctl_db_postgres, the PostgreSQL backend's table: the
 * connection's entries (conn.c) and the statements' (stmt.c) put
 * together here, so that neither file names the other's functions but
 * the statements may still ask the connection to come back (stmt.c ->
 * conn.c, one way). */
#include "core/dbname.h"
#include "store/embed.h"
#include "store/postgres/pg.h"

static int open_conn(pctl_conn **out, planctl *p, const planctl_open_options *o)
{
    return pctl_pg_open(out, p, o, &pctl_db_postgres);
}

const pctl_db_methods pctl_db_postgres = {
    .name = "postgres",
    .queries = pctl_queries_postgres,
    .verify_says = "foreign keys hold (the events' checked by planctl, the "
                   "others enforced by PostgreSQL); its pages are not "
                   "checked by planctl (use the server's amcheck)",
    .process_init = NULL,
    .accepts = pctl_is_server_uri,
    .shown = pctl_pg_uri_redact,
    .open = open_conn,
    .close = pctl_pg_close,
    .prepare = pctl_pg_prepare,
    .finalize = pctl_pg_finalize,
    .reset = pctl_pg_reset,
    .bind_i64 = pctl_pg_bind_i64,
    .bind_text = pctl_pg_bind_text,
    .step = pctl_pg_step,
    .step_later = pctl_pg_step_later,
    .gathers = 1,
    .send = pctl_pg_send_read,
    .col_type = pctl_pg_col_type,
    .col_i64 = pctl_pg_col_i64,
    .col_real = pctl_pg_col_real,
    .col_text = pctl_pg_col_text,
    .col_bytes = pctl_pg_col_bytes,
    .ncols = pctl_pg_ncols,
    .col_name = pctl_pg_col_name,
    .changes = pctl_pg_changes,
    .begin = pctl_pg_begin,
    .commit = pctl_pg_commit,
    .rollback = pctl_pg_rollback,
    .token = pctl_pg_token,
    .fleet = 1,
    .rows_at_once = 1,
    .counted = pctl_pg_counted,
    .quiet = pctl_pg_quiet,
    .wake = pctl_pg_wake,
    .engine_session = pctl_pg_engine_session,
    .interrupt = pctl_pg_interrupt,
};
