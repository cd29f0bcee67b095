/*
 * ptype.h - the types of a parameter's value (KUDO's params.yaml `type`):
 * their names, what a value of each is, how text given on a command line
 * becomes one, and how a task receives one.
 *
 * A value is JSON: a string, an integer, a number, a boolean, an array or
 * an object (a "map").  The rules (rules_params.c) check a definition's
 * defaults and enums with these, the store parses -p values with them,
 * and the shell executor turns a value into a variable's text with
 * pctl_ptype_text(), so every layer agrees on what a value is.
 */
#ifndef PCTL_CORE_PTYPE_H
#define PCTL_CORE_PTYPE_H

#include <jansson.h>

typedef enum pctl_ptype {
    PCTL_PTYPE_STRING = 0, /* the default */
    PCTL_PTYPE_INTEGER,
    PCTL_PTYPE_NUMBER,
    PCTL_PTYPE_BOOLEAN,
    PCTL_PTYPE_ARRAY,
    PCTL_PTYPE_MAP
} pctl_ptype;

#define PCTL_PTYPE_COUNT 6

/* "string", "integer", "number", "boolean", "array", "map".  Can't
 * fail. */
const char *pctl_ptype_name(pctl_ptype t);

/* The type named name: 1 and *out set, or 0.  Can't fail. */
int pctl_ptype_find(pctl_ptype *out, const char *name);

/* The names, in the enum's order, for "did you mean".  Can't fail. */
const char *const *pctl_ptype_names(void);

/* "an integer (such as 3)" and the like: what a value of t looks like,
 * for messages.  Can't fail. */
const char *pctl_ptype_expect(pctl_ptype t);

/* 1 if v (not NULL, not null) is a value of type t: any JSON number is a
 * number, only a JSON integer an integer.  Can't fail. */
int pctl_ptype_is(pctl_ptype t, const json_t *v);

/*
 * text given for a parameter of type t (the value of -p K=V) as a value:
 * a string is taken as it is; an integer, a number or a boolean must be
 * exactly a JSON literal of that type (no spaces, no "+", no leading
 * zeros; true or false); an array or a map must be JSON text of one.
 * Returns a new reference in *out and 0, PLANCTL_EINVAL when text is not
 * a value of t (*out NULL), or PLANCTL_ENOMEM.
 */
int pctl_ptype_parse(json_t **out, pctl_ptype t, const char *text);

/*
 * A definition's default for a parameter of type t as a value of that
 * type: a string parameter's default may be written as a number or a
 * boolean, and is then that text (as it always was: "default": 3 is
 * "3"); anything else is def itself.  Returns a new reference, or NULL
 * on allocation failure.
 */
json_t *pctl_ptype_default(pctl_ptype t, const json_t *def);

/* 1 if a and b are the same value: numbers compare by value (3 and 3.0
 * are equal), anything else as json_equal().  Can't fail. */
int pctl_pvalue_equal(const json_t *a, const json_t *b);

/* 1 if v is one of the values of list (a JSON array).  Can't fail. */
int pctl_pvalue_in(const json_t *list, const json_t *v);

/* 1 if v is one of the values of an enum kept as JSON text (a
 * parameter's enum_json; NULL: no enum, any value).  Can't fail: an
 * enum that does not read admits nothing. */
int pctl_enum_has(const char *enum_json, const json_t *v);

/*
 * v as a task receives it, in a new string (pctl_free): a string as it
 * is, an integer in decimal, a number as the shortest decimal that reads
 * back as the same double ("0.1", "2.5", "3", "1e+21"), a boolean as true
 * or false, an array or a map as compact JSON with sorted keys.  NULL on
 * allocation failure (and for a JSON null, which has no text).
 */
char *pctl_ptype_text(const json_t *v);

#endif
