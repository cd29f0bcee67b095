/*
 * envname.h - the names of a shell task's environment variables: which
 * names a definition's spec.env may set, and the variable a parameter
 * reaches a task as.
 *
 * The rules (shellspec.c, rules_values.c) and the shell executor
 * (engine/exec_shell.c) both use these, so what validation promises is
 * what the executor does: a parameter name the rules let through has a
 * variable of its own, and no spec.env name the rules let through is one
 * the engine sets.
 */
#ifndef PCTL_CORE_ENVNAME_H
#define PCTL_CORE_ENVNAME_H

/* The engine sets every variable whose name starts with this (PLANCTL_RUN,
 * PLANCTL_RUN_UID, PLANCTL_PARAM_<NAME>, ...); a definition sets none. */
#define PCTL_ENV_RESERVED "PLANCTL_"
/* A parameter's variable is this and its mapped name. */
#define PCTL_ENV_PARAM "PLANCTL_PARAM_"

/* 1 if name is a variable name a shell reads, [A-Za-z_][A-Za-z0-9_]*,
 * else 0.  Can't fail. */
int pctl_env_name_valid(const char *name);

/* 1 if name starts with PCTL_ENV_RESERVED, else 0.  Can't fail. */
int pctl_env_name_reserved(const char *name);

/*
 * The variable parameter name reaches a shell task as: PCTL_ENV_PARAM,
 * then name with a-z upper-cased and every other byte but A-Z, 0-9 and
 * '_' made '_' ("my-param.x": PLANCTL_PARAM_MY_PARAM_X).  So names that
 * differ only in case or in '-', '.' and '_' share one variable, which is
 * why a definition may not have two of them.  In a new string (pctl_free),
 * or NULL when out of memory.
 */
char *pctl_env_param_name(const char *name);

/* A step's outputs reach the later tasks of its run as this, the step's
 * name mapped as a parameter's, '_' and the output's key as written. */
#define PCTL_ENV_OUTPUT "PLANCTL_OUTPUT_"
/* The file a shell task writes its outputs to is named by this. */
#define PCTL_ENV_OUTPUT_FILE "PLANCTL_OUTPUT"

/* PCTL_ENV_OUTPUT and step's name mapped as pctl_env_param_name() maps
 * a parameter's ("gen-cert": PLANCTL_OUTPUT_GEN_CERT): two steps of a plan
 * with different names may not share it (rules_values.c).  In a new
 * string, or NULL when out of memory. */
char *pctl_env_step_name(const char *step);

/* The variable output key of step reaches later tasks as:
 * pctl_env_step_name(step), '_', key ("gen-cert", "PEM":
 * PLANCTL_OUTPUT_GEN_CERT_PEM).  In a new string, or NULL when out of
 * memory. */
char *pctl_env_output_name(const char *step, const char *key);

#endif
