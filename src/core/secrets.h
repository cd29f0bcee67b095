/*
 * secrets.h - a secret parameter's value ("secret": true) everywhere but
 * in a task's environment: shown as "***", or left out of a bundle.
 *
 * Every path by which a parameter value leaves planctl (status, replay,
 * export, error messages) goes through these, so there is one rule: a
 * name that the definition marks secret never shows its value.  Pure
 * logic on jansson values, no I/O.
 */
#ifndef PCTL_CORE_SECRETS_H
#define PCTL_CORE_SECRETS_H

#include <jansson.h>

#include "core/def.h"

/* Whether a[0..la) equals the NUL-terminated secret b, compared without
 * an early exit, so that the time taken tells nothing of how much of a
 * guess was right (the web server's token and form token).  Can't fail. */
int pctl_secret_equal(const char *a, size_t la, const char *b);

/* How planctl shows a secret parameter's value (as a secret output's). */
#define PCTL_SECRET_MASK "***"

/* Sets the value of each of def's secret parameters that params (a JSON
 * object of name -> value; anything else is left alone) holds to
 * "***".  Returns how many it masked, or -1 when out of memory (then
 * some may be masked). */
int pctl_secrets_mask(json_t *params, const pctl_def *def);

/* Adds name to names (a JSON array of strings, kept sorted and without
 * duplicates).  Returns 0, or -1 when out of memory. */
int pctl_secrets_add_name(json_t *names, const char *name);

/* Sets the value of each name of names (a JSON array of strings) that
 * params holds to null: a value a bundle leaves out.  When found is not
 * NULL, each name withheld is added to it (pctl_secrets_add_name()).
 * Returns how many it withheld, or -1 when out of memory. */
int pctl_secrets_withhold(json_t *params, const json_t *names, json_t *found);

/* Puts back what pctl_secrets_withhold() left out: each name of values
 * (an object of name -> value) whose value in params is null takes its
 * value from values.  Returns how many it put back, or -1 when out of
 * memory. */
int pctl_secrets_restore(json_t *params, const json_t *values);

#endif
