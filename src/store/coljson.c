/* coljson.c - a statement's column as a JSON value (null for SQL NULL):
 * what the views (views.c) and the other readers that build documents
 * (waits.c) share. */
#include <jansson.h>

#include "core/timefmt.h"
#include "store/store.h"

json_t *pctl_col_json_time(pctl_stmt *st, int col)
{
    char buf[PCTL_TIME_BUF];

    if (pctl_col_null(st, col))
        return json_null();
    pctl_time_rfc3339(buf, pctl_col_i64(st, col));
    return json_string(buf);
}

json_t *pctl_col_json_text(pctl_stmt *st, int col)
{
    if (pctl_col_null(st, col))
        return json_null();
    return json_string(pctl_col_text(st, col));
}

json_t *pctl_col_json_int(pctl_stmt *st, int col)
{
    if (pctl_col_null(st, col))
        return json_null();
    return json_integer(pctl_col_i64(st, col));
}
