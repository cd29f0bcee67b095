/* log.h - the structured log of `planctl run`: the engine's events (and
 * the command's own) as text or JSON lines on stderr. */
#ifndef PLANCTL_CLI_LOG_H
#define PLANCTL_CLI_LOG_H

#include <stdio.h>

#include "planctl.h"

typedef struct cli_log {
    FILE *f;
    int json;              /* --log-format json */
    planctl_log_level min; /* --log-level */
} cli_log;

/* Sets up l from the --log-format and --log-level values (NULL: text,
 * info).  Returns 0, or -1 with *bad naming the flag whose value is not
 * known. */
int cli_log_init(cli_log *l, FILE *f, const char *format, const char *level,
                 const char **bad);

/* The engine's logger (planctl_engine_set_logger): data is a cli_log. */
void cli_log_record(const planctl_log_record *rec, void *data);

/* A line of the command's own (no run context).  detail may be NULL. */
void cli_log_event(cli_log *l, planctl_log_level level, const char *msg,
                   const char *detail);

#endif
