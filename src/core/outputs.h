/*
 * outputs.h - task outputs (KUDO's Pipe tasks): what a task hands to the
 * later tasks of its run, as a set of KEY -> value strings.
 *
 * In memory and in the database a set is one JSON object: a plain value
 * is a string, a secret one an object {"secret": "value"} (whose value is
 * null once left out of an export).  Keys are variable names a shell
 * reads, [A-Za-z_][A-Za-z0-9_]*; values are UTF-8 without NUL bytes.  The
 * keys and values of one attempt together hold at most PCTL_OUTPUTS_MAX
 * bytes.
 *
 * The text a shell task writes to $PLANCTL_OUTPUT, one output at a time:
 *
 *   KEY=VALUE            the rest of the line is the value (may be empty)
 *   KEY<<DELIM           the lines up to one that is exactly DELIM are the
 *   ...                  value, joined by newlines, without a final one
 *   DELIM
 *   ::secret::KEY=VALUE  either form, marked secret: never printed
 *
 * Empty lines are skipped; a key written twice keeps its last value.
 * Anything else is refused, naming the line.  Pure logic, no I/O.
 */
#ifndef PCTL_CORE_OUTPUTS_H
#define PCTL_CORE_OUTPUTS_H

#include <jansson.h>
#include <stddef.h>

/* Bytes of keys and values one attempt may record. */
#define PCTL_OUTPUTS_MAX 65536
/* The prefix of a line that marks its output secret. */
#define PCTL_OUTPUT_SECRET_MARK "::secret::"
/* How planctl shows a secret value. */
#define PCTL_OUTPUT_MASK "***"

/* Sets key to value (vlen bytes) in the set o, secret or not, and keeps
 * *size (the set's bytes of keys and values) up to date.  Returns 0,
 * PLANCTL_EINVAL with a message in err (a bad key, a value that is not
 * UTF-8 or holds a NUL, or more than PCTL_OUTPUTS_MAX bytes in all: then
 * o is unchanged), or PLANCTL_ENOMEM. */
int pctl_outputs_put(json_t *o, size_t *size, char *err, size_t errsize,
                     const char *key, const char *value, size_t vlen,
                     int secret);

/* Parses len bytes of $PLANCTL_OUTPUT text into the set o (see above).
 * Returns 0, PLANCTL_EINVAL with a message naming the line in err, or
 * PLANCTL_ENOMEM. */
int pctl_outputs_parse(json_t *o, size_t *size, char *err, size_t errsize,
                       const char *text, size_t len);

/* Adds every output of src to dst, the later one winning, and updates
 * *size as pctl_outputs_put() does.  Returns 0, PLANCTL_EINVAL (beyond
 * the limit, message in err) or PLANCTL_ENOMEM. */
int pctl_outputs_merge(json_t *dst, size_t *size, char *err, size_t errsize,
                       const json_t *src);

/* The bytes of keys and values of a set.  Can't fail. */
size_t pctl_outputs_size(const json_t *o);

/* The value of one output of a set (NULL for a secret left out of an
 * export); *secret, if not NULL, says whether it is secret.  Can't fail. */
const char *pctl_output_value(const json_t *v, int *secret);

/* Makes set (a JSON object of outputs; anything else is left alone) as
 * planctl shows it: each secret's value "***".  0, or -1 when out of
 * memory (then some may be masked). */
int pctl_outputs_mask(json_t *set);

/* A set (JSON text; NULL: none) as planctl shows it: secrets as "***".
 * json null for NULL text or text that is not a set; NULL when out of
 * memory. */
json_t *pctl_outputs_masked(const char *text);

/* The set as an export without secrets holds it: each secret's value
 * null.  A new string (pctl_free), NULL when out of memory; *changed says
 * whether anything was left out (when not, the result is text again).
 * Text that is not a set comes back unchanged. */
char *pctl_outputs_scrubbed(const char *text, int *changed);

#endif
