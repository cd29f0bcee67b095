/* walk.c - the field-error sink with its path, guarded reads of a
 * definition's JSON, the walk every stage shares, and the name index. */
#include "walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "def.h"
#include "falias.h"
#include "planctl.h"

/* ---- messages ------------------------------------------------------------ */

const char *pctl_quote(pctl_qbuf *q, const char *s)
{
    size_t n = strlen(s), cut = n, i, w = 0;

    if (n > PCTL_ECHO_MAX) {
        cut = PCTL_ECHO_MAX;
        while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
            cut--;
    }
    q->s[w++] = '"';
    for (i = 0; i < cut; i++) {
        unsigned char ch = (unsigned char)s[i];

        if (ch == '"' || ch == '\\') {
            q->s[w++] = '\\';
            q->s[w++] = (char)ch;
        } else if (ch < 0x20 || ch == 0x7f) {
            snprintf(q->s + w, sizeof(q->s) - w, "\\u%04x", ch);
            w += 6;
        } else {
            q->s[w++] = (char)ch;
        }
    }
    q->s[w++] = '"';
    if (cut < n) {
        memcpy(q->s + w, "...", 3);
        w += 3;
    }
    q->s[w] = '\0';
    return q->s;
}

const char *pctl_did_you_mean(pctl_hbuf *h, const char *candidate)
{
    pctl_qbuf q;

    if (!candidate)
        return NULL;
    snprintf(h->s, sizeof(h->s), "did you mean %s?", pctl_quote(&q, candidate));
    return h->s;
}

/* ---- the sink ------------------------------------------------------------ */

void pctl_sink_clear(pctl_sink *s)
{
    pctl_ferr_list_clear(&s->errs);
    pctl_free(s->segs);
    pctl_free(s->buf);
    memset(s, 0, sizeof(*s));
}

/* The steps, in fixed until they outgrow it. */
static pctl_seg *segs_of(pctl_sink *s)
{
    return s->segs ? s->segs : s->fixed;
}

static int push(pctl_sink *s, const char *key, size_t index)
{
    size_t cap = s->segs ? s->capsegs : PCTL_SINK_SEGS;
    pctl_seg *v = segs_of(s);

    if (s->nsegs == cap) {
        v = pctl_realloc(s->segs, cap * 2 * sizeof(*v));
        if (!v)
            return PLANCTL_ENOMEM;
        if (!s->segs)
            memcpy(v, s->fixed, sizeof(s->fixed));
        s->segs = v;
        s->capsegs = cap * 2;
    }
    v[s->nsegs].key = key;
    v[s->nsegs].index = index;
    s->nsegs++;
    return 0;
}

int pctl_sink_key(pctl_sink *s, const char *key)
{
    return push(s, key, 0);
}

int pctl_sink_index(pctl_sink *s, size_t i)
{
    return push(s, NULL, i);
}

size_t pctl_sink_mark(const pctl_sink *s)
{
    return s->nsegs;
}

void pctl_sink_back(pctl_sink *s, size_t mark)
{
    s->nsegs = mark;
}

/* Appends n bytes of p to the path being rendered at *len. */
static int put(pctl_sink *s, size_t *len, const char *p, size_t n)
{
    if (*len + n + 1 > s->bufcap) {
        size_t cap = s->bufcap ? s->bufcap : 128;
        char *b;

        while (cap < *len + n + 1)
            cap *= 2;
        b = pctl_realloc(s->buf, cap);
        if (!b)
            return PLANCTL_ENOMEM;
        s->buf = b;
        s->bufcap = cap;
    }
    memcpy(s->buf + *len, p, n);
    *len += n;
    s->buf[*len] = '\0';
    return 0;
}

/* The current path, rendered into s->buf: ".key", or ["key"] (JSON-quoted)
 * when key is not a plain name, so a path with a strange plan name in it
 * still reads unambiguously; "[i]" for an index. */
static int render_path(pctl_sink *s)
{
    size_t len = 0, i;

    PCTL_CHECK(put(s, &len, "", 0));
    for (i = 0; i < s->nsegs; i++) {
        const char *key = segs_of(s)[i].key;
        char b[32];
        pctl_qbuf q;

        if (!key) {
            int n = snprintf(b, sizeof(b), "[%zu]", segs_of(s)[i].index);

            PCTL_CHECK(put(s, &len, b, (size_t)n));
        } else if (pctl_name_valid(key)) {
            if (len)
                PCTL_CHECK(put(s, &len, ".", 1));
            PCTL_CHECK(put(s, &len, key, strlen(key)));
        } else {
            pctl_quote(&q, key);
            PCTL_CHECK(put(s, &len, "[", 1));
            PCTL_CHECK(put(s, &len, q.s, strlen(q.s)));
            PCTL_CHECK(put(s, &len, "]", 1));
        }
    }
    return 0;
}

int pctl_sink_fail(pctl_sink *s, const char *field, pctl_ferr_type type,
                   const char *hint, const char *fmt, ...)
{
    size_t mark = s->nsegs;
    va_list ap;
    int rc;

    s->nerrs++;
    if (s->errs.n >= PCTL_DEF_MAX_ERRORS) {
        s->nlost++;
        return 0;
    }
    if (field)
        PCTL_CHECK(pctl_sink_key(s, field));
    rc = render_path(s);
    pctl_sink_back(s, mark);
    if (rc < 0)
        return rc;
    va_start(ap, fmt);
    rc = pctl_ferr_addv(&s->errs, s->buf, type, hint, fmt, ap);
    va_end(ap);
    return rc;
}

int pctl_sink_not_found(pctl_sink *s, const char *field, const char *name,
                        const char *const *candidates, size_t n)
{
    const char *hint = NULL;
    pctl_hbuf h;
    pctl_qbuf q;

    /* Bounding how many suggestions are searched for bounds the work a
     * hostile document can cause (1000 references against 1000 long task
     * names took seconds). */
    if (s->errs.n < PCTL_DEF_MAX_ERRORS && s->nhints < PCTL_MAX_HINTS) {
        s->nhints++;
        hint = pctl_did_you_mean(&h, pctl_closest(name, candidates, n));
    }
    return pctl_sink_fail(s, field, PCTL_FERR_NOT_FOUND, hint, "%s",
                          pctl_quote(&q, name));
}

int pctl_sink_unknown(pctl_sink *s, const char *node, const json_t *o,
                      const char *const *known, size_t n)
{
    void *it;

    for (it = pctl_iter(o); it; it = pctl_iter_next(o, it)) {
        const char *key = json_object_iter_key(it), *hint;
        size_t i;
        pctl_hbuf h;
        pctl_qbuf q;

        for (i = 0; i < n && strcmp(key, known[i]) != 0; i++)
            ;
        if (i < n)
            continue;
        /* Another tool's name for a field first: edit distance would
         * answer "cmd" with "cwd". */
        hint = pctl_falias_hint(&h, node, key, json_object_iter_value(it));
        if (!hint)
            hint = pctl_did_you_mean(&h, pctl_closest(key, known, n));
        PCTL_CHECK(pctl_sink_fail(s, key, PCTL_FERR_FORBIDDEN, hint,
                                  "unknown field %s", pctl_quote(&q, key)));
    }
    return 0;
}

/* ---- reading values ------------------------------------------------------ */

const char *pctl_string(const json_t *v)
{
    if (!json_is_string(v) || json_string_length(v) > PCTL_DEF_MAX_STRING)
        return NULL;
    return json_string_value(v);
}

const char *pctl_get_string(const json_t *o, const char *key)
{
    return pctl_string(json_object_get(o, key));
}

const json_t *pctl_get_array(const json_t *o, const char *key, size_t max)
{
    const json_t *v = json_object_get(o, key);

    return json_is_array(v) && json_array_size(v) <= max ? v : NULL;
}

const json_t *pctl_get_object(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    return json_is_object(v) ? v : NULL;
}

int pctl_get_duration(const json_t *o, const char *key, int64_t *ms,
                      const char **text)
{
    const char *s = pctl_get_string(o, key);

    if (text)
        *text = s;
    if (!s)
        return 0;
    return pctl_duration_parse(ms, s) == 0 ? 1 : -1;
}

void *pctl_iter(const json_t *o)
{
    return json_is_object(o) ? json_object_iter((json_t *)o) : NULL;
}

void *pctl_iter_next(const json_t *o, void *it)
{
    return json_object_iter_next((json_t *)o, it);
}

const json_t *pctl_get_plans(const json_t *doc)
{
    const json_t *plans = json_object_get(doc, "plans");

    if (!json_is_object(plans) || json_object_size(plans) > PCTL_DEF_MAX_PLANS)
        return NULL;
    return plans;
}

/* ---- the walk ------------------------------------------------------------ */

typedef struct walker {
    pctl_sink *s;
    const pctl_visitor *vis;
    void *data;
} walker;

static int visit(walker *w, pctl_node node, const json_t *value,
                 const char *key, const json_t *list, size_t index)
{
    pctl_visit v;

    if (!w->vis->node)
        return 0;
    v.node = node;
    v.value = value;
    v.key = key;
    v.list = list;
    v.index = index;
    return w->vis->node(w->s, &v, w->data);
}

static int walk_step(walker *w, const json_t *step);

/* The list parent.field of elements of kind elem, each visited (and, for
 * steps, descended into) with the path at "field[i]". */
static int walk_list(walker *w, const json_t *parent, const char *field,
                     size_t max, pctl_node elem)
{
    const json_t *list = pctl_get_array(parent, field, max);
    size_t mark = pctl_sink_mark(w->s), i;

    if (!list)
        return 0;
    PCTL_CHECK(pctl_sink_key(w->s, field));
    if (w->vis->list)
        PCTL_CHECK(w->vis->list(w->s, elem, list, w->data));
    for (i = 0; i < json_array_size(list); i++) {
        const json_t *e = json_array_get(list, i);
        size_t m = pctl_sink_mark(w->s);

        PCTL_CHECK(pctl_sink_index(w->s, i));
        PCTL_CHECK(visit(w, elem, e, NULL, list, i));
        if (json_is_object(e)) {
            if (elem == PCTL_NODE_PHASE)
                PCTL_CHECK(walk_list(w, e, "steps", PCTL_DEF_MAX_STEPS,
                                     PCTL_NODE_STEP));
            else if (elem == PCTL_NODE_STEP)
                PCTL_CHECK(walk_step(w, e));
        }
        pctl_sink_back(w->s, m);
    }
    pctl_sink_back(w->s, mark);
    return 0;
}

static int walk_step(walker *w, const json_t *step)
{
    const json_t *retry = json_object_get(step, "retry");

    PCTL_CHECK(walk_list(w, step, "tasks", PCTL_DEF_MAX_STEP_TASKS,
                         PCTL_NODE_STEP_TASK));
    if (retry) {
        size_t mark = pctl_sink_mark(w->s);

        PCTL_CHECK(pctl_sink_key(w->s, "retry"));
        PCTL_CHECK(visit(w, PCTL_NODE_RETRY, retry, NULL, NULL, 0));
        pctl_sink_back(w->s, mark);
    }
    return 0;
}

int pctl_walk(const json_t *doc, pctl_sink *s, const pctl_visitor *vis,
              void *data)
{
    walker w;
    const json_t *plans;
    void *it;

    w.s = s;
    w.vis = vis;
    w.data = data;
    pctl_sink_back(s, 0);
    PCTL_CHECK(visit(&w, PCTL_NODE_ROOT, doc, NULL, NULL, 0));
    if (!json_is_object(doc))
        return 0;
    PCTL_CHECK(
        walk_list(&w, doc, "parameters", PCTL_DEF_MAX_PARAMS, PCTL_NODE_PARAM));
    PCTL_CHECK(walk_list(&w, doc, "tasks", PCTL_DEF_MAX_TASKS, PCTL_NODE_TASK));
    plans = pctl_get_plans(doc);
    if (!plans)
        return 0;
    PCTL_CHECK(pctl_sink_key(s, "plans"));
    for (it = pctl_iter(plans); it; it = pctl_iter_next(plans, it)) {
        const char *key = json_object_iter_key(it);
        const json_t *plan = json_object_iter_value(it);
        size_t mark = pctl_sink_mark(s);

        PCTL_CHECK(pctl_sink_key(s, key));
        PCTL_CHECK(visit(&w, PCTL_NODE_PLAN, plan, key, NULL, 0));
        if (json_is_object(plan)) {
            PCTL_CHECK(walk_list(&w, plan, "preflight", PCTL_DEF_MAX_CHECKS,
                                 PCTL_NODE_CHECK));
            PCTL_CHECK(walk_list(&w, plan, "phases", PCTL_DEF_MAX_PHASES,
                                 PCTL_NODE_PHASE));
        }
        pctl_sink_back(s, mark);
    }
    pctl_sink_back(s, 0);
    return 0;
}

/* ---- names --------------------------------------------------------------- */

/* qsort has no context argument; the comparison reads the names through
 * this pair, built for the sort alone. */
typedef struct entry {
    const char *name;
    size_t index;
} entry;

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

int pctl_names_build(pctl_names *out, const json_t *doc, int plans)
{
    const json_t *list;
    entry *tmp = NULL;
    size_t i;

    memset(out, 0, sizeof(*out));
    if (plans) {
        list = json_object_get(doc, "plans");
        if (!list) {
            out->known = 1;
            return 0;
        }
        if (!(list = pctl_get_plans(doc)))
            return 0;
        out->n = json_object_size(list);
    } else {
        list = json_object_get(doc, "tasks");
        if (!list) {
            out->known = 1;
            return 0;
        }
        if (!(list = pctl_get_array(doc, "tasks", PCTL_DEF_MAX_TASKS)))
            return 0;
        out->n = json_array_size(list);
    }
    out->known = 1;
    if (out->n == 0)
        return 0;
    out->v = pctl_calloc(out->n, sizeof(*out->v));
    out->sorted = pctl_calloc(out->n, sizeof(*out->sorted));
    tmp = pctl_calloc(out->n, sizeof(*tmp));
    if (!out->v || !out->sorted || !tmp) {
        pctl_free(tmp);
        pctl_names_free(out);
        return PLANCTL_ENOMEM;
    }
    if (plans) {
        void *it;

        i = 0;
        for (it = pctl_iter(list); it; it = pctl_iter_next(list, it))
            out->v[i++] = json_object_iter_key(it);
    } else {
        for (i = 0; i < out->n; i++)
            out->v[i] = json_string_value(
                json_object_get(json_array_get(list, i), "name"));
    }
    for (i = 0; i < out->n; i++) {
        if (out->v[i]) {
            tmp[out->nsorted].name = out->v[i];
            tmp[out->nsorted++].index = i;
        }
    }
    qsort(tmp, out->nsorted, sizeof(*tmp), entry_cmp);
    for (i = 0; i < out->nsorted; i++)
        out->sorted[i] = tmp[i].index;
    pctl_free(tmp);
    return 0;
}

int pctl_names_find(const pctl_names *ns, const char *name, size_t *at)
{
    size_t lo = 0, hi = ns->nsorted;

    /* The lowest position whose name is not less than name: among equal
     * names the sort put the first in the document first. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (strcmp(ns->v[ns->sorted[mid]], name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == ns->nsorted || strcmp(ns->v[ns->sorted[lo]], name) != 0)
        return 0;
    if (at)
        *at = ns->sorted[lo];
    return 1;
}

void pctl_names_free(pctl_names *ns)
{
    pctl_free(ns->v);
    pctl_free(ns->sorted);
    memset(ns, 0, sizeof(*ns));
}
