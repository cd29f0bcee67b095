/*
 * def.h - the in-memory model of a definition (planctl-definition(5)) and the
 * pipeline that produces it: decode, defaults, validate, build (see def.c).
 *
 * The pipeline turns JSON text into a pctl_def, applying the defaults of
 * planctl-definition(5) to absent fields only, and collecting every error it
 * finds as a field error (path, type, message, hint) instead of stopping at the
 * first.  It is pure: no I/O, no globals.
 */
#ifndef PCTL_CORE_DEF_H
#define PCTL_CORE_DEF_H

#include <stddef.h>
#include <stdint.h>

#include "ferr.h"
#include "kinds.h"
#include "ptype.h"

/* Limits that keep hostile input bounded; documented in planctl-definition(5).
 */
#define PCTL_DEF_MAX_BYTES (4 * 1024 * 1024)
#define PCTL_NAME_MAX 63
#define PCTL_VERSION_MAX 64
#define PCTL_DEF_MAX_STRING (64 * 1024) /* any string but a task spec */

/* What a duration field given another type must be ("timeout": 30, a
 * number of no unit, is the common case). */
#define PCTL_DURATION_TYPE "a duration such as \"3s\""
#define PCTL_DEF_MAX_PARAMS 1000
#define PCTL_DEF_MAX_TASKS 1000
#define PCTL_DEF_MAX_PLANS 100
#define PCTL_DEF_MAX_PHASES 100     /* per plan */
#define PCTL_DEF_MAX_STEPS 1000     /* per phase */
#define PCTL_DEF_MAX_STEP_TASKS 100 /* per step */
#define PCTL_DEF_MAX_CHECKS 100     /* preflight checks per plan */
#define PCTL_DEF_MAX_ENUM 1000      /* allowed values per parameter */
#define PCTL_DEF_MAX_MAINTAINERS 100
#define PCTL_DEF_MAX_UPGRADABLE 1000 /* versions in upgradableFrom */
/* JSON nested deeper than this is refused before anything walks it. */
#define PCTL_DEF_MAX_DEPTH 64
/* The decoder stops recording after this many errors (and says so in one
 * last error), so a hostile document cannot make the list quadratic. */
#define PCTL_DEF_MAX_ERRORS 1000
/* The longest duration accepted: 100 years of 365 days. */
#define PCTL_DURATION_MAX_MS ((int64_t)100 * 365 * 24 * 60 * 60 * 1000)
/* The units of a duration, X(name, milliseconds, what follows the name in
 * the reference's list): the parser (duration.c) and the reference
 * (schema.c, pctl_def_schema_duration_text) both read this one list. */
#define PCTL_DURATION_UNITS(X)                                                 \
    X("ms", 1, ", ")                                                           \
    X("s", 1000, ", ")                                                         \
    X("m", 60 * 1000, ", ")                                                    \
    X("h", 60 * 60 * 1000, " or ")                                             \
    X("d", 24 * 60 * 60 * 1000, "")

/* What an attempt keeps of its output (its last bytes) unless its engine
 * says otherwise, in KiB, and the most an engine may keep: the engine
 * (engine/job.h) and the reference (schema.c) both read these. */
#define PCTL_OUTPUT_KEEP_KIB 64
#define PCTL_OUTPUT_KEEP_MAX_KIB 1024
#define PCTL_STR_(x) #x
#define PCTL_STR(x) PCTL_STR_(x)

typedef enum pctl_strategy {
    PCTL_STRATEGY_SERIAL = 0,
    PCTL_STRATEGY_PARALLEL = 1
} pctl_strategy;

/* "serial" / "parallel".  Can't fail. */
const char *pctl_strategy_name(pctl_strategy s);

typedef struct pctl_param_def {
    char *name;
    pctl_ptype type; /* default: string */
    /* The default as compact JSON of the parameter's type (a string
     * parameter's default written as a number or a boolean becomes that
     * text, as a JSON string); NULL when there is none or it is null. */
    char *default_json;
    int required;      /* only "required": true */
    int immutable;     /* the value set at create never changes */
    int secret;        /* the value is shown as "***", never in clear */
    char *enum_json;   /* the allowed values, a JSON array; NULL: any */
    char *trigger;     /* plan name, or NULL */
    char *description; /* or NULL */
} pctl_param_def;

/* A maintainer (KUDO's {name, email}). */
typedef struct pctl_maintainer {
    char *name;
    char *email; /* or NULL */
} pctl_maintainer;

typedef struct pctl_task_def {
    char *name;
    char *kind; /* "Dummy", "shell", or an embedder's kind */
    char *spec; /* the spec object re-encoded as compact JSON ("{}") */
} pctl_task_def;

typedef struct pctl_retry {
    int attempts;           /* total tries, >= 1; default 3 */
    int64_t backoff_ms;     /* default 1000 */
    double multiplier;      /* default 2 */
    int64_t max_backoff_ms; /* default 60000 */
} pctl_retry;

typedef struct pctl_step_def {
    char *name;
    size_t ntasks;
    size_t *tasks; /* indices into pctl_def.tasks */
    pctl_retry retry;
    int64_t timeout_ms; /* 0: none */
} pctl_step_def;

typedef struct pctl_phase_def {
    char *name;
    pctl_strategy strategy;
    size_t nsteps;
    pctl_step_def *steps;
} pctl_phase_def;

typedef struct pctl_check_def {
    char *name;
    size_t task; /* index into pctl_def.tasks */
} pctl_check_def;

typedef struct pctl_plan_def {
    char *name;
    pctl_strategy strategy;
    size_t nphases;
    pctl_phase_def *phases;
    size_t nchecks;
    pctl_check_def *preflight;
    int64_t deadline_ms; /* a run must end this long after it starts; 0 */
} pctl_plan_def;

typedef struct pctl_def {
    char *name;
    char *version;
    /* Metadata, each NULL (or none) when absent. */
    char *description;
    char *url;
    char *app_version;
    size_t nmaintainers;
    pctl_maintainer *maintainers;
    /* The versions an upgrade may start from; has_upgradable_from 0: any
     * version (the field is absent). */
    int has_upgradable_from;
    size_t nupgradable_from;
    char **upgradable_from;
    size_t nparams;
    pctl_param_def *params;
    size_t ntasks;
    pctl_task_def *tasks;
    size_t nplans;
    pctl_plan_def *plans; /* sorted by name */
} pctl_def;

typedef struct pctl_def_opts {
    /* The kinds an embedder registered.  Not NULL: a task's kind must be
     * one of them or a built-in ("Dummy", "shell"), its spec must be one
     * the kind accepts, and no two parameters may reach a task as one
     * variable.  NULL: those go unchecked, as when reading back a
     * definition registered earlier (perhaps before those rules). */
    const pctl_kinds *kinds;
    /* Threads the rules may run on; 0: 1, or 4 for a definition of 1 MiB
     * or more.  Results do not depend on it. */
    unsigned workers;
    /* The defaults and the rules to run; NULL: the built-in ones
     * (pctl_defaults_builtin(), pctl_rules()).  For tests, and for adding
     * to them. */
    const struct pctl_defaults *defaults;
    const struct pctl_validators *rules;
} pctl_def_opts;

#define PCTL_DEF_OPTS_INIT                                                     \
    {                                                                          \
        NULL, 0, NULL, NULL                                                    \
    }

/*
 * Decodes, defaults and validates text (len bytes, need not be
 * NUL-terminated) and builds *out from it.  origin names the source in
 * syntax errors ("zk.json:3:14: ..."; NULL: "<definition>").  opts may be
 * NULL for the defaults.
 *
 * Returns 0 and sets *out when the definition is valid.  Returns
 * PLANCTL_EDEFINITION when it is not: *out is NULL and errs holds every
 * error found, in the rules' order (a syntax error is one error whose path
 * is "" and whose message is "origin:line:col: text").  Returns
 * PLANCTL_ENOMEM on allocation failure, with *out NULL.  errs must be an
 * initialised list; errors are appended to it, a line it holds already is
 * not repeated.
 */
int pctl_def_parse(pctl_def **out, const char *text, size_t len,
                   const char *origin, const pctl_def_opts *opts,
                   pctl_ferr_list *errs);

/* pctl_def_parse() with kinds and specs unchecked: the structure alone. */
int pctl_def_decode(pctl_def **out, const char *text, size_t len,
                    const char *origin, pctl_ferr_list *errs);

/* Frees a definition.  NULL is allowed.  Can't fail. */
void pctl_def_free(pctl_def *d);

/* Lookups by name; NULL when absent.  Can't fail. */
const pctl_plan_def *pctl_def_plan(const pctl_def *d, const char *name);
const pctl_param_def *pctl_def_param(const pctl_def *d, const char *name);
const pctl_task_def *pctl_def_task(const pctl_def *d, const char *name);

/*
 * Parses a duration string ("500ms", "30s", "5m", "1h"; also compound
 * "1h30m" and "1.5s") into milliseconds.  Returns 0, or PLANCTL_EINVAL for
 * anything else (empty, negative, no unit, unknown unit, overflow).
 */
int pctl_duration_parse(int64_t *out, const char *text);

/* Formats milliseconds as a short human duration ("1m12s", "450ms",
 * "2h3m").  buf must hold at least 32 bytes.  Can't fail. */
void pctl_duration_format(char *buf, size_t size, int64_t ms);
/* A duration as people read one, to the unit that matters: "850ms",
 * "12s", "1m12s", "2h5m", "3d4h" (negative: "0ms").  Can't fail. */
void pctl_duration_coarse(char *buf, size_t size, int64_t ms);

/* Returns 1 if s is a valid name: 1..PCTL_NAME_MAX characters of
 * [A-Za-z0-9_.-], starting with a letter or digit.  Can't fail. */
int pctl_name_valid(const char *s);

/* Returns 1 if s is a valid version: 1..PCTL_VERSION_MAX characters of
 * [A-Za-z0-9.+_-].  Can't fail. */
int pctl_version_valid(const char *s);

#endif
