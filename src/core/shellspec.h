/*
 * shellspec.h - the built-in shell kind's spec as one table of fields,
 * read both by validation (specs.c) and by the shell executor
 * (engine/exec_shell.c).
 *
 * The rules used to be written twice, once for each, and kept in step by
 * hand.  Now one function walks the table: validation asks it for every
 * problem, each with its path; the executor asks for the first, in the
 * words it has always used.  What a definition is promised when it
 * validates is therefore what the executor does with it.
 */
#ifndef PCTL_CORE_SHELLSPEC_H
#define PCTL_CORE_SHELLSPEC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "walk.h"

/* What a duration in a spec must look like; the Dummy's sleep too. */
#define PCTL_DURATION_RULE                                                     \
    "must be a duration such as \"500ms\", \"30s\", \"5m\" or \"1h\""

/* How a field's value is read, and the member type it is decoded into. */
typedef enum pctl_ftype {
    PCTL_F_STRINGS,  /* a non-empty array of strings: const json_t * */
    PCTL_F_STRING,   /* a non-empty string: const char * */
    PCTL_F_ENV,      /* an object of strings, under variable names the
                        engine does not set: const json_t * */
    PCTL_F_DURATION, /* a duration more than 0s: int64_t, in ms */
    PCTL_F_CODES     /* integers 1 to 255: unsigned char[256], 1 at each */
} pctl_ftype;

/*
 * X(name, type, expected): the fields, in the order validation reports
 * their problems (after unknown fields).  expected is how the executor
 * words a value of the wrong shape ("\"argv\": expected a non-empty
 * array of strings").  Beside the table, one rule across fields: exactly
 * one of argv and command (shellspec.c).
 */
#define PCTL_SHELL_SPEC(X)                                                     \
    X(argv, PCTL_F_STRINGS, "a non-empty array of strings")                    \
    X(command, PCTL_F_STRING, "a non-empty string")                            \
    X(env, PCTL_F_ENV, "an object of strings")                                 \
    X(cwd, PCTL_F_STRING, "a non-empty string")                                \
    X(timeout, PCTL_F_DURATION, "a duration string")                           \
    X(fatal_exit_codes, PCTL_F_CODES, "an array of integers from 1 to 255")    \
    X(retry_exit_codes, PCTL_F_CODES, "an array of integers from 1 to 255")

/* A decoded spec: one member per field, named as the field and of its
 * type's C type (checked at compile time in shellspec.c); zero when the
 * field is absent.  Pointers are borrowed from the spec's JSON. */
typedef struct pctl_shell_spec {
    const json_t *argv;
    const char *command;
    const json_t *env;
    const char *cwd;
    int64_t timeout; /* ms; 0: none */
    unsigned char fatal_exit_codes[256];
    unsigned char retry_exit_codes[256];
} pctl_shell_spec;

/* Exit codes that are fatal unless retry_exit_codes lists them: the shell's
 * "found but not executable" and "not found", which no retry mends. */
#define PCTL_SHELL_NOEXEC 126
#define PCTL_SHELL_NOTFOUND 127

/* Who reads the spec, which decides what is reported. */
typedef enum pctl_shell_mode {
    /* Validation: every problem, unknown fields first, then the fields
     * in the table's order, the rule across fields after the last field
     * it reads. */
    PCTL_SHELL_VALIDATE,
    /* The executor: the spec's members in their own order, up to the
     * first it refuses (an unknown one, or a field with a problem), then
     * the rule across fields.  It lets through the spec.env names only
     * validation refuses, as a definition stored before those rules still
     * runs: it drops PLANCTL_* names (engine/exec_shell.c) and refuses
     * only names that would change what the child sees, empty or holding
     * '='. */
    PCTL_SHELL_EXECUTE
} pctl_shell_mode;

/* Room for the executor's one line about a spec. */
#define PCTL_SHELL_MSG_MAX 256

/*
 * Decodes spec (a JSON object) into *out, reporting each problem the mode
 * reports into s (NULL: none wanted), under s's current path and in
 * validation's words.  With PCTL_SHELL_EXECUTE, msg (size bytes; NULL
 * with PCTL_SHELL_VALIDATE) receives the executor's line about the field
 * it refused, e.g. "\"timeout\": must be more than 0s".
 *
 * Returns 0 when the mode found no problem (*out is the spec),
 * PLANCTL_EINVAL when it found some (*out is not to be used), or
 * PLANCTL_ENOMEM when s could not record one.
 */
int pctl_shell_spec_decode(pctl_shell_spec *out, char *msg, size_t size,
                           pctl_sink *s, const json_t *spec,
                           pctl_shell_mode mode);

#endif
