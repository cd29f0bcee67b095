/*
 * shellspec.c - the shell kind's spec: the walk over the table of
 * shellspec.h that both validation and the executor read a spec with.
 *
 * Every check is written once, with both wordings side by side:
 * validation's (a type, a path, a message, maybe a hint) and the
 * executor's, which says one line per field.  For a value of the wrong
 * shape (a type, an empty value, a code out of range) the executor's line
 * is the table's "expected ..."; a few problems have words of their own
 * ("invalid duration"); and a few only validation refuses (spec.env
 * names that are legal to exec, see pctl_shell_mode).  Within one field
 * the executor names a wrong shape before anything else, as it always
 * has, so it reads the whole field it refuses before it stops.
 */
#include "shellspec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "def.h"
#include "envname.h"
#include "falias.h"
#include "planctl.h"

/* Room for one message of validation's: one quoted value and a rule. */
#define TEXT_MAX (sizeof(pctl_qbuf) + 256)
/* Room for the executor's own words about a problem. */
#define WORDS_MAX 128

/* fail()'s words for the executor: it says "expected <what>" ... */
#define EXPECTED NULL
/* ...or nothing, and runs the spec anyway. */
#define NOTHING ""

static const char ENV_NAME_RULE[] =
    "must be an environment variable name: letters, digits and '_', not "
    "starting with a digit";
static const char ENV_RESERVED_RULE[] =
    "names starting with " PCTL_ENV_RESERVED
    " are reserved for the variables the engine sets";

/* ---- the table ---------------------------------------------------------- */

typedef struct row {
    const char *name;
    pctl_ftype type;
    const char *expected;
    size_t offset; /* of its member in pctl_shell_spec */
} row;

#define ROW(name, type, expected)                                              \
    {#name, type, expected, offsetof(pctl_shell_spec, name)},
static const row rows[] = {PCTL_SHELL_SPEC(ROW)};
#undef ROW

#define NAME(name, type, expected) #name,
static const char *const names[] = {PCTL_SHELL_SPEC(NAME)};
#undef NAME

#define INDEX(name, type, expected) F_##name,
enum { PCTL_SHELL_SPEC(INDEX) NFIELDS };
#undef INDEX

/* Each member has the C type its row's decoder writes at its offset. */
#define CTYPE_PCTL_F_STRINGS const json_t *
#define CTYPE_PCTL_F_STRING const char *
#define CTYPE_PCTL_F_ENV const json_t *
#define CTYPE_PCTL_F_DURATION int64_t
#define CTYPE_PCTL_F_CODES unsigned char *
#define HAS_CTYPE(name, type, expected)                                        \
    _Static_assert(                                                            \
        _Generic(((pctl_shell_spec *)0)->name, CTYPE_##type : 1, default : 0), \
        "pctl_shell_spec." #name " is not what " #type " decodes to");
PCTL_SHELL_SPEC(HAS_CTYPE)
#undef HAS_CTYPE

/*
 * The one rule across fields: exactly one of argv and command.
 * Validation checks it as soon as its walk has passed both fields, which
 * puts its problem among theirs; the executor, once every member has
 * decoded.
 */
enum { ONE_OF_A = F_argv, ONE_OF_B = F_command };
enum { ONE_OF_AFTER = ONE_OF_A > ONE_OF_B ? ONE_OF_A : ONE_OF_B };

/* ---- reporting ---------------------------------------------------------- */

typedef struct walk {
    pctl_shell_spec *out;
    pctl_sink *s; /* NULL: problems are only counted */
    pctl_shell_mode mode;
    size_t problems;       /* found so far that the mode reports */
    const row *f;          /* the field being read; NULL: the spec */
    int shape;             /* the field's value is of the wrong shape */
    char words[WORDS_MAX]; /* else the executor's first own words */
} walk;

/* The sink's path, one step down (at key, or at index when key is NULL)
 * and back; no-ops without a sink.  step() returns 0 or PLANCTL_ENOMEM. */
static size_t mark(const walk *w)
{
    return w->s ? pctl_sink_mark(w->s) : 0;
}

static int step(walk *w, const char *key, size_t index)
{
    int rc = 0;

    if (w->s && key)
        rc = pctl_sink_key(w->s, key);
    else if (w->s)
        rc = pctl_sink_index(w->s, index);
    return rc;
}

static void back(walk *w, size_t m)
{
    if (w->s)
        pctl_sink_back(w->s, m);
}

/*
 * A problem at field (NULL: at the current path), in validation's words
 * (type, hint, fmt) and the executor's: EXPECTED, NOTHING, or words of
 * its own.  A problem only validation refuses is no problem to the
 * executor.  Returns 0 or PLANCTL_ENOMEM.
 */
static int fail(walk *w, const char *words, const char *field,
                pctl_ferr_type type, const char *hint, const char *fmt, ...)
    PCTL_PRINTF(6, 7);

static int fail(walk *w, const char *words, const char *field,
                pctl_ferr_type type, const char *hint, const char *fmt, ...)
{
    int refused = w->mode == PCTL_SHELL_VALIDATE || !words || *words;
    char text[TEXT_MAX];
    va_list ap;
    int rc = 0;

    if (refused)
        w->problems++;
    if (refused && words == EXPECTED)
        w->shape = 1;
    else if (refused && !w->words[0])
        snprintf(w->words, sizeof w->words, "%s", words);
    if (refused && w->s) {
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        rc = pctl_sink_fail(w->s, field, type, hint, "%s", text);
    }
    return rc;
}

/* The executor's line about what it refused (w->f and its problems). */
static void say(const walk *w, char *msg, size_t size)
{
    if (!w->f)
        snprintf(msg, size, "%s", w->words);
    else if (w->shape)
        snprintf(msg, size, "\"%s\": expected %s", w->f->name, w->f->expected);
    else
        snprintf(msg, size, "\"%s\": %s", w->f->name, w->words);
}

/* ---- the types ---------------------------------------------------------- */

/* Each reads a field's value (the sink's path at the field) and, when the
 * value has no problem, writes it at `at`.  Returns 0 or PLANCTL_ENOMEM. */

static int strings(walk *w, const json_t *v, void *at)
{
    size_t before = w->problems, i, m = mark(w);
    int rc = 0;

    if (!json_is_array(v))
        rc = fail(w, EXPECTED, NULL, PCTL_FERR_TYPE, NULL, "must be an array");
    else if (json_array_size(v) == 0)
        rc = fail(w, EXPECTED, NULL, PCTL_FERR_REQUIRED, NULL,
                  "must list at least the program");
    for (i = 0; !rc && json_is_array(v) && i < json_array_size(v); i++) {
        if (json_is_string(json_array_get(v, i)))
            continue;
        rc = step(w, NULL, i);
        if (!rc)
            rc = fail(w, EXPECTED, NULL, PCTL_FERR_TYPE, NULL,
                      "must be a string");
        back(w, m);
    }
    if (!rc && w->problems == before)
        *(const json_t **)at = v;
    return rc;
}

static int string(walk *w, const json_t *v, void *at)
{
    int rc = 0;

    if (!json_is_string(v))
        rc = fail(w, EXPECTED, NULL, PCTL_FERR_TYPE, NULL, "must be a string");
    else if (json_string_length(v) == 0)
        rc = fail(w, EXPECTED, NULL, PCTL_FERR_INVALID, NULL,
                  "\"\": must not be empty");
    else
        *(const char **)at = json_string_value(v);
    return rc;
}

/* A hint for a name that is not a variable name: the name with every
 * byte a variable name cannot hold made '_' (and a '_' before a leading
 * digit), when that makes one a definition may use.  Only the bytes a
 * message shows are looked at.  Returns h->s, or an example. */
static const char *env_name_hint(pctl_hbuf *h, const char *name)
{
    char fix[PCTL_ECHO_MAX + 3];
    size_t i = 0, w = 0;

    if (name[0] >= '0' && name[0] <= '9')
        fix[w++] = '_';
    for (; name[i] && w < sizeof(fix) - 1; i++) {
        char c = name[i];
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                   (c >= '0' && c <= '9');

        fix[w++] = keep ? c : '_';
    }
    fix[w] = '\0';
    if (!w || pctl_env_name_reserved(fix))
        return "for example \"MY_VAR\"";
    return pctl_did_you_mean(h, fix);
}

/* What to do instead of setting a name the engine sets. */
static const char *env_reserved_hint(char *buf, size_t size, const char *name)
{
    const char *rest = name + strlen(PCTL_ENV_RESERVED);
    pctl_qbuf q;

    if (strncmp(name, PCTL_ENV_PARAM, strlen(PCTL_ENV_PARAM)) == 0)
        return "declare a parameter instead: its value reaches the task "
               "as " PCTL_ENV_PARAM "<NAME>";
    if (!*rest || !pctl_env_name_valid(rest))
        return "rename it";
    snprintf(buf, size, "rename it, e.g. %s", pctl_quote(&q, rest));
    return buf;
}

/* A name that is not a variable name: the executor refuses only one that
 * would change what the child sees (empty, or holding '='). */
static int env_bad_name(walk *w, const char *name)
{
    char words[WORDS_MAX] = NOTHING;
    pctl_hbuf h;
    pctl_qbuf q;

    if (!*name || strchr(name, '='))
        snprintf(words, sizeof words, "invalid variable name \"%.64s\"", name);
    return fail(w, words, name, PCTL_FERR_INVALID, env_name_hint(&h, name),
                "%s: %s", pctl_quote(&q, name), ENV_NAME_RULE);
}

/*
 * Names a shell reads as variables, and none the engine sets itself
 * (PLANCTL_*): one of those would override the engine's own, such as
 * PLANCTL_RUN_UID, by which a restarted engine finds the processes of an
 * interrupted attempt, or a parameter's value.  The executor drops
 * PLANCTL_* names instead (engine/exec_shell.c).  Its shape comes before
 * its names to the executor: a value that is not a string is its line
 * about env whatever the names.
 */
static int env(walk *w, const json_t *v, void *at)
{
    size_t before = w->problems;
    void *it;
    int rc = 0;

    if (!json_is_object(v))
        rc = fail(w, EXPECTED, NULL, PCTL_FERR_TYPE, NULL, "must be an object");
    for (it = pctl_iter(v); !rc && it; it = pctl_iter_next(v, it)) {
        const char *name = json_object_iter_key(it);
        char hint[sizeof(pctl_qbuf) + 32];
        pctl_qbuf q;

        if (!pctl_env_name_valid(name))
            rc = env_bad_name(w, name);
        else if (pctl_env_name_reserved(name))
            rc = fail(w, NOTHING, name, PCTL_FERR_FORBIDDEN,
                      env_reserved_hint(hint, sizeof(hint), name), "%s: %s",
                      pctl_quote(&q, name), ENV_RESERVED_RULE);
        if (!rc && !json_is_string(json_object_iter_value(it)))
            rc = fail(w, EXPECTED, name, PCTL_FERR_TYPE, NULL,
                      "must be a string");
    }
    if (!rc && w->problems == before)
        *(const json_t **)at = v;
    return rc;
}

/* Spec strings have no length limit: the executor has none. */
static int duration(walk *w, const json_t *v, void *at)
{
    const char *text = json_string_value(v);
    char words[WORDS_MAX];
    pctl_qbuf q;
    int64_t ms;
    int rc = 0;

    if (!json_is_string(v)) {
        rc = fail(w, EXPECTED, NULL, PCTL_FERR_TYPE, NULL,
                  "must be " PCTL_DURATION_TYPE);
    } else if (pctl_duration_parse(&ms, text) < 0) {
        snprintf(words, sizeof words, "invalid duration \"%.64s\"", text);
        rc = fail(w, words, NULL, PCTL_FERR_INVALID, NULL, "%s: %s",
                  pctl_quote(&q, text), PCTL_DURATION_RULE);
    } else if (ms <= 0) {
        rc = fail(w, "must be more than 0s", NULL, PCTL_FERR_INVALID, NULL,
                  "%s: must be greater than zero", pctl_quote(&q, text));
    } else {
        *(int64_t *)at = ms;
    }
    return rc;
}

static int codes(walk *w, const json_t *v, void *at)
{
    unsigned char *fatal = at;
    size_t i, m = mark(w);
    int rc = 0;

    if (!json_is_array(v))
        rc = fail(w, EXPECTED, NULL, PCTL_FERR_TYPE, NULL, "must be an array");
    for (i = 0; !rc && json_is_array(v) && i < json_array_size(v); i++) {
        const json_t *c = json_array_get(v, i);
        json_int_t code = json_integer_value(c);

        rc = step(w, NULL, i);
        if (!rc && !json_is_integer(c))
            rc = fail(w, EXPECTED, NULL, PCTL_FERR_TYPE, NULL,
                      "must be an integer");
        else if (!rc && (code < 1 || code > 255))
            rc = fail(w, EXPECTED, NULL, PCTL_FERR_INVALID, NULL,
                      "%" JSON_INTEGER_FORMAT ": must be between 1 and 255",
                      code);
        else if (!rc)
            fatal[code] = 1;
        back(w, m);
    }
    return rc;
}

typedef int (*decode_fn)(walk *w, const json_t *v, void *at);

static const decode_fn decoders[] = {[PCTL_F_STRINGS] = strings,
                                     [PCTL_F_STRING] = string,
                                     [PCTL_F_ENV] = env,
                                     [PCTL_F_DURATION] = duration,
                                     [PCTL_F_CODES] = codes};

/* ---- the walk ----------------------------------------------------------- */

static const row *find(const char *name)
{
    size_t i;

    for (i = 0; i < NFIELDS && strcmp(rows[i].name, name) != 0; i++)
        ;
    return i < NFIELDS ? &rows[i] : NULL;
}

/* Reads field f's value v into its member.  Returns 0 or PLANCTL_ENOMEM. */
static int field(walk *w, const row *f, const json_t *v)
{
    size_t m = mark(w);
    int rc;

    w->f = f;
    w->shape = 0;
    w->words[0] = '\0';
    rc = step(w, f->name, 0);
    if (!rc)
        rc = decoders[f->type](w, v, (char *)w->out + f->offset);
    back(w, m);
    return rc;
}

static int unknown(walk *w, const char *key, const json_t *v)
{
    char words[WORDS_MAX];
    pctl_hbuf h;
    pctl_qbuf q;

    w->f = NULL;
    w->words[0] = '\0';
    snprintf(words, sizeof words, "unknown field \"%.64s\"", key);
    return fail(w, words, key, PCTL_FERR_FORBIDDEN,
                pctl_falias_hint(&h, "tasks.spec.shell", key, v)
                    ? h.s
                    : pctl_did_you_mean(&h, pctl_closest(key, names, NFIELDS)),
                "unknown field %s", pctl_quote(&q, key));
}

static int exactly_one(walk *w, const json_t *spec)
{
    const char *a = rows[ONE_OF_A].name, *b = rows[ONE_OF_B].name;
    int has_a = json_object_get(spec, a) != NULL;
    int has_b = json_object_get(spec, b) != NULL;
    char words[WORDS_MAX];
    int rc = 0;

    w->f = NULL;
    w->words[0] = '\0';
    snprintf(words, sizeof words,
             "exactly one of \"%s\" and \"%s\" is required", a, b);
    if (!has_a && !has_b)
        rc = fail(w, words, a, PCTL_FERR_REQUIRED, NULL,
                  "exactly one of \"%s\" and \"%s\"", a, b);
    else if (has_a && has_b)
        rc = fail(w, words, b, PCTL_FERR_FORBIDDEN, NULL,
                  "not allowed with \"%s\": exactly one of \"%s\" and \"%s\"",
                  a, a, b);
    return rc;
}

/* Validation's walk: every problem, in the order of pctl_shell_mode. */
static int every(walk *w, const json_t *spec)
{
    void *it;
    size_t i;
    int rc = 0;

    for (it = pctl_iter(spec); !rc && it; it = pctl_iter_next(spec, it))
        if (!find(json_object_iter_key(it)))
            rc = unknown(w, json_object_iter_key(it),
                         json_object_iter_value(it));
    for (i = 0; !rc && i < NFIELDS; i++) {
        const json_t *v = json_object_get(spec, rows[i].name);

        if (v)
            rc = field(w, &rows[i], v);
        if (!rc && i == ONE_OF_AFTER)
            rc = exactly_one(w, spec);
    }
    return rc;
}

/* The executor's walk: the members in order, up to the first refused. */
static int first(walk *w, const json_t *spec)
{
    void *it;
    int rc = 0;

    for (it = pctl_iter(spec); !rc && !w->problems && it;
         it = pctl_iter_next(spec, it)) {
        const char *key = json_object_iter_key(it);
        const row *f = find(key);

        rc = f ? field(w, f, json_object_iter_value(it))
               : unknown(w, key, json_object_iter_value(it));
    }
    if (!rc && !w->problems)
        rc = exactly_one(w, spec);
    return rc;
}

int pctl_shell_spec_decode(pctl_shell_spec *out, char *msg, size_t size,
                           pctl_sink *s, const json_t *spec,
                           pctl_shell_mode mode)
{
    walk w;
    int rc;

    memset(out, 0, sizeof *out);
    memset(&w, 0, sizeof w);
    w.out = out;
    w.s = s;
    w.mode = mode;
    rc = mode == PCTL_SHELL_EXECUTE ? first(&w, spec) : every(&w, spec);
    if (!rc && w.problems) {
        rc = PLANCTL_EINVAL;
        if (msg)
            say(&w, msg, size);
    }
    return rc;
}
