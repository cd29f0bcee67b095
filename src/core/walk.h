/*
 * walk.h - what the defaults, the validators and the model builder share:
 * a sink for field errors with its path, the guarded walk over a
 * definition's JSON, and the index of task and plan names.
 *
 * Every stage reads the document through the same walk, so they agree on
 * what they look at: an element of a list longer than its limit, a string
 * longer than PCTL_DEF_MAX_STRING or a value of the wrong type is reported
 * once, by the rule that owns it, and every other stage skips it.
 */
#ifndef PCTL_CORE_WALK_H
#define PCTL_CORE_WALK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ferr.h"

#ifdef __GNUC__
#define PCTL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PCTL_PRINTF(f, a)
#endif

#define PCTL_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Passes a failure up unchanged (libgit2's GIT_ERROR_CHECK). */
#define PCTL_CHECK(expr)                                                       \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ < 0)                                                           \
            return rc_;                                                        \
    } while (0)

/* Values echoed into messages are cut to this many bytes, so one hostile
 * 64 KiB string cannot make every message 64 KiB. */
#define PCTL_ECHO_MAX 64

/* Not-found references get a "did you mean" only for the first this many
 * in one sink: a suggestion compares the name with every candidate. */
#define PCTL_MAX_HINTS 100

/* A quoted value: two quotes, every byte escaped as \u00XX at worst, and
 * a trailing "..." when cut. */
typedef struct pctl_qbuf {
    char s[2 + PCTL_ECHO_MAX * 6 + 3 + 1];
} pctl_qbuf;

/* A "did you mean" hint around one quoted name. */
typedef struct pctl_hbuf {
    char s[sizeof(pctl_qbuf) + 16];
} pctl_hbuf;

/* s as a JSON string literal, cut at PCTL_ECHO_MAX bytes (on a UTF-8
 * boundary) with "..." after the closing quote when cut.  Returns q->s.
 * Can't fail. */
const char *pctl_quote(pctl_qbuf *q, const char *s);

/* "did you mean \"candidate\"?" in h, or NULL when candidate is NULL.
 * Can't fail. */
const char *pctl_did_you_mean(pctl_hbuf *h, const char *candidate);

/* ---- the sink ------------------------------------------------------------ */

/* One step of a path: a key (borrowed; it must outlive the step) or,
 * when key is NULL, an index. */
typedef struct pctl_seg {
    const char *key;
    size_t index;
} pctl_seg;

/* Steps a sink holds without allocating: more than any path of the
 * schema has (a step's retry field is eight steps down). */
#define PCTL_SINK_SEGS 16

/*
 * Where one stage reports: its own list and path, so stages running at the
 * same time share nothing.  Once the list holds PCTL_DEF_MAX_ERRORS
 * errors, further ones are only counted.  Every function returns 0 or
 * PLANCTL_ENOMEM: errors in the document are entries in the list, not
 * failures.
 */
typedef struct pctl_sink {
    pctl_ferr_list errs;
    size_t nerrs;   /* every error found, including those not recorded */
    size_t nlost;   /* errors not recorded: the list was full */
    size_t nhints;  /* suggestions searched for */
    pctl_seg *segs; /* the current path (NULL: in fixed), rendered only for
                       an error */
    size_t nsegs, capsegs;
    pctl_seg fixed[PCTL_SINK_SEGS];
    char *buf; /* where a path is rendered */
    size_t bufcap;
} pctl_sink;

#define PCTL_SINK_INIT                                                         \
    {                                                                          \
        PCTL_FERR_LIST_INIT, 0, 0, 0, NULL, 0, 0, {{NULL, 0}}, NULL, 0         \
    }

/* Frees what the sink holds; it is empty and reusable.  Can't fail. */
void pctl_sink_clear(pctl_sink *s);

/* Path steps: ".key" (or ["key"], JSON-quoted, when key is not a plain
 * name; key is borrowed until the step is taken back), "[i]";
 * pctl_sink_mark() and pctl_sink_back() return to an earlier path.  A walk
 * visits far more nodes than it reports errors, so the steps are kept as
 * they are and the path is rendered only for an error. */
int pctl_sink_key(pctl_sink *s, const char *key);
int pctl_sink_index(pctl_sink *s, size_t i);
size_t pctl_sink_mark(const pctl_sink *s);
void pctl_sink_back(pctl_sink *s, size_t mark);

/* Records an error at the current path, or at its field when field is not
 * NULL; the message is printf-formatted. */
int pctl_sink_fail(pctl_sink *s, const char *field, pctl_ferr_type type,
                   const char *hint, const char *fmt, ...) PCTL_PRINTF(5, 6);

/* "Not found: \"name\"", with the closest of candidates as a hint for the
 * first PCTL_MAX_HINTS of them. */
int pctl_sink_not_found(pctl_sink *s, const char *field, const char *name,
                        const char *const *candidates, size_t n);

/* Forbidden: unknown field, for every key of the object o not in
 * known[0..n), with a hint: the field to write instead when the key is
 * another tool's name for one in the object at node (a path of the
 * reference, falias.h; NULL: none), else the closest of known. */
int pctl_sink_unknown(pctl_sink *s, const char *node, const json_t *o,
                      const char *const *known, size_t n);

/* ---- reading values ------------------------------------------------------ */

/* o.key as a string of at most PCTL_DEF_MAX_STRING bytes, else NULL (also
 * when o is not an object).  Can't fail. */
const char *pctl_get_string(const json_t *o, const char *key);

/* v itself under the same rule.  Can't fail. */
const char *pctl_string(const json_t *v);

/* o.key as an array of at most max elements, else NULL.  Can't fail. */
const json_t *pctl_get_array(const json_t *o, const char *key, size_t max);

/* o.key as an object, else NULL.  Can't fail. */
const json_t *pctl_get_object(const json_t *o, const char *key);

/* o.key as a valid duration: 1 and *ms set, 0 when absent or not a
 * string the walk reads, -1 when it is a string but not a duration.  *text
 * (if not NULL) receives the string.  Can't fail. */
int pctl_get_duration(const json_t *o, const char *key, int64_t *ms,
                      const char **text);

/* Iteration over a const object.  jansson's iterator functions take a
 * non-const object but only read it. */
void *pctl_iter(const json_t *o);
void *pctl_iter_next(const json_t *o, void *it);

/* The plans object the walk descends into: an object of at most
 * PCTL_DEF_MAX_PLANS members, else NULL.  Can't fail. */
const json_t *pctl_get_plans(const json_t *doc);

/* ---- the walk ------------------------------------------------------------ */

typedef enum pctl_node {
    PCTL_NODE_ROOT,
    PCTL_NODE_PARAM,     /* parameters[i] */
    PCTL_NODE_TASK,      /* tasks[i] */
    PCTL_NODE_PLAN,      /* plans.<name> */
    PCTL_NODE_CHECK,     /* plans.<name>.preflight[i] */
    PCTL_NODE_PHASE,     /* plans.<name>.phases[i] */
    PCTL_NODE_STEP,      /* ...phases[i].steps[j] */
    PCTL_NODE_STEP_TASK, /* ...steps[j].tasks[k] */
    PCTL_NODE_RETRY      /* ...steps[j].retry */
} pctl_node;

typedef struct pctl_visit {
    pctl_node node;
    const json_t *value; /* the node: of any JSON type */
    const char *key;     /* a plan's name; NULL otherwise */
    const json_t *list;  /* an element's list; NULL otherwise */
    size_t index;        /* an element's index in its list */
} pctl_visit;

/*
 * The walk calls node() for every node, in document order, with the sink's
 * path at the node, and list() for every list of elements (of kind elem)
 * before its elements, with the path at the list.  It descends only into
 * objects and into lists within their limits.  Either callback may be NULL;
 * a negative return stops the walk and is returned.
 */
typedef struct pctl_visitor {
    int (*node)(pctl_sink *s, const pctl_visit *v, void *data);
    int (*list)(pctl_sink *s, pctl_node elem, const json_t *list, void *data);
} pctl_visitor;

int pctl_walk(const json_t *doc, pctl_sink *s, const pctl_visitor *vis,
              void *data);

/* ---- names --------------------------------------------------------------- */

/*
 * The names of the tasks (or the plans) as written, in document order, with
 * an index sorted by name for lookups.  known is 0 when the list itself is
 * unreadable (its own error is the only one reported, and references to it
 * go unchecked); an absent list is known and empty.
 */
typedef struct pctl_names {
    const char **v; /* borrowed from the document; NULL where unnamed */
    size_t n;
    size_t *sorted; /* indices of the named entries, by (name, index) */
    size_t nsorted;
    int known;
} pctl_names;

/* Builds the index of the task names (plans: 0) or the plan names (1).
 * Returns 0 or PLANCTL_ENOMEM. */
int pctl_names_build(pctl_names *out, const json_t *doc, int plans);

/* The first entry named name: 1 and *at set, or 0.  Can't fail. */
int pctl_names_find(const pctl_names *ns, const char *name, size_t *at);

void pctl_names_free(pctl_names *ns);

#endif
