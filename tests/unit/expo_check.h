/*
 * expo_check.h - a checker of Prometheus text exposition (format 0.0.4),
 * shared by test_metrics.c and tests/metrics/scrape.c.
 *
 * expo_check(text, err, n) returns 0 when
 *   - every line is a comment ("# HELP name text", "# TYPE name kind") or
 *     a sample: name, optional {label="value",...} with escapes \\ \" \n
 *     only, a space, and a float value (or +Inf, -Inf, NaN);
 *   - every metric has exactly one HELP and one TYPE, both before its
 *     first sample, and its samples are together;
 *   - a histogram's _bucket samples have increasing le bounds and
 *     cumulative (non-decreasing) counts ending with le="+Inf", and its
 *     _count equals the +Inf bucket, with a _sum;
 *   - a counter's value is not negative.
 * Otherwise -1 with the first problem and its line number in err.
 * expo_value() reads one sample's value (by its full series text, e.g.
 * "planctl_attempts_total" or "planctl_transitions_total{entity=\"run\",
 * to=\"COMPLETE\"}").
 */
#ifndef PCTL_EXPO_CHECK_H
#define PCTL_EXPO_CHECK_H

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPO_MAX_METRICS 64

typedef struct expo_metric {
    char name[128];
    char type[16];
    int help, done; /* HELP seen; a later family started */
    int nsamples;
    /* histograms */
    double last_le, last_bucket, inf_bucket, count;
    int has_inf, has_sum, has_count;
} expo_metric;

static int expo_name_char(int c, int first)
{
    return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

/* Parses a metric name at *p; returns its length or 0. */
static size_t expo_name(const char *p)
{
    size_t n = 0;

    while (p[n] && expo_name_char((unsigned char)p[n], n == 0))
        n++;
    return n;
}

static expo_metric *expo_find(expo_metric *m, int n, const char *name,
                              size_t len)
{
    int i;

    for (i = 0; i < n; i++)
        if (strlen(m[i].name) == len && strncmp(m[i].name, name, len) == 0)
            return &m[i];
    return NULL;
}

static int expo_float(double *out, const char *s)
{
    char *end;

    if (strcmp(s, "+Inf") == 0) {
        *out = INFINITY;
        return 0;
    }
    if (strcmp(s, "-Inf") == 0) {
        *out = -INFINITY;
        return 0;
    }
    if (strcmp(s, "NaN") == 0) {
        *out = NAN;
        return 0;
    }
    if (!*s)
        return -1;
    *out = strtod(s, &end);
    return *end ? -1 : 0;
}

#define EXPO_FAIL(...)                                                         \
    do {                                                                       \
        char m_[256];                                                          \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                  \
        snprintf(err, errsize, "line %d: %s", lineno, m_);                     \
        free(copy);                                                            \
        return -1;                                                             \
    } while (0)

static int expo_check(const char *text, char *err, size_t errsize)
{
    expo_metric ms[EXPO_MAX_METRICS];
    int nm = 0, lineno = 0, i;
    char *copy = strdup(text), *line, *save = NULL;
    expo_metric *cur = NULL;

    memset(ms, 0, sizeof ms);
    if (!copy) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    if (!*text || text[strlen(text) - 1] != '\n') {
        lineno = 0;
        EXPO_FAIL("the text must end with a newline");
    }
    for (line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        if (line[0] == '#') {
            char kw[8], name[128];
            int off = 0;
            expo_metric *m;

            if (sscanf(line, "# %7s %127s %n", kw, name, &off) < 2)
                EXPO_FAIL("malformed comment");
            if (strcmp(kw, "HELP") != 0 && strcmp(kw, "TYPE") != 0)
                continue; /* other comments are allowed */
            if (expo_name(name) != strlen(name))
                EXPO_FAIL("bad metric name \"%s\"", name);
            m = expo_find(ms, nm, name, strlen(name));
            if (!m) {
                if (nm == EXPO_MAX_METRICS)
                    EXPO_FAIL("too many metrics");
                if (cur)
                    cur->done = 1;
                m = &ms[nm++];
                snprintf(m->name, sizeof m->name, "%s", name);
                cur = m;
            } else if (m->done || m->nsamples > 0) {
                EXPO_FAIL("%s of %s after its samples", kw, name);
            }
            if (strcmp(kw, "HELP") == 0) {
                if (m->help++)
                    EXPO_FAIL("second HELP for %s", name);
            } else {
                const char *t = line + off;

                if (m->type[0])
                    EXPO_FAIL("second TYPE for %s", name);
                if (strcmp(t, "counter") != 0 && strcmp(t, "gauge") != 0 &&
                    strcmp(t, "histogram") != 0 && strcmp(t, "summary") != 0 &&
                    strcmp(t, "untyped") != 0)
                    EXPO_FAIL("unknown type \"%s\"", t);
                snprintf(m->type, sizeof m->type, "%s", t);
            }
            continue;
        }
        {
            size_t nl = expo_name(line), base_len = nl;
            const char *p = line + nl, *suffix = "";
            char le[256] = "";
            double v;
            expo_metric *m;

            if (nl == 0)
                EXPO_FAIL("a sample must start with a metric name");
            if (*p == '{') {
                p++;
                while (*p != '}') {
                    size_t ln = expo_name(p);
                    char lname[64], val[256];
                    size_t vl = 0;

                    if (ln == 0 || ln >= sizeof lname)
                        EXPO_FAIL("bad label name");
                    memcpy(lname, p, ln);
                    lname[ln] = '\0';
                    p += ln;
                    if (p[0] != '=' || p[1] != '"')
                        EXPO_FAIL("label %s needs =\"value\"", lname);
                    p += 2;
                    while (*p != '"') {
                        char c = *p;

                        if (!c)
                            EXPO_FAIL("unterminated label value");
                        if (c == '\\') {
                            p++;
                            if (*p == 'n')
                                c = '\n';
                            else if (*p == '\\' || *p == '"')
                                c = *p;
                            else
                                EXPO_FAIL("bad escape in label value");
                        }
                        if (vl + 1 < sizeof val)
                            val[vl++] = c;
                        p++;
                    }
                    val[vl] = '\0';
                    p++;
                    if (strcmp(lname, "le") == 0)
                        snprintf(le, sizeof le, "%s", val);
                    if (*p == ',')
                        p++;
                    else if (*p != '}')
                        EXPO_FAIL("expected , or } after a label");
                }
                p++;
            }
            if (*p != ' ')
                EXPO_FAIL("expected a space before the value");
            p++;
            {
                char vs[64];
                int vn = 0;

                if (sscanf(p, "%63s%n", vs, &vn) != 1)
                    EXPO_FAIL("missing value");
                if (p[vn] != '\0') {
                    /* an optional integer timestamp */
                    const char *ts = p + vn;

                    if (*ts != ' ' || !ts[1])
                        EXPO_FAIL("junk after the value");
                    for (ts++; *ts; ts++)
                        if (!isdigit((unsigned char)*ts) && *ts != '-')
                            EXPO_FAIL("bad timestamp");
                }
                if (expo_float(&v, vs) < 0)
                    EXPO_FAIL("bad value \"%s\"", vs);
            }
            m = expo_find(ms, nm, line, nl);
            if (!m) {
                static const char *const sfx[] = {"_bucket", "_sum", "_count"};
                size_t k;

                for (k = 0; k < 3 && !m; k++) {
                    size_t sl = strlen(sfx[k]);

                    if (nl > sl && strncmp(line + nl - sl, sfx[k], sl) == 0) {
                        m = expo_find(ms, nm, line, nl - sl);
                        if (m && strcmp(m->type, "histogram") != 0 &&
                            strcmp(m->type, "summary") != 0)
                            m = NULL;
                        if (m) {
                            suffix = sfx[k];
                            base_len = nl - sl;
                        }
                    }
                }
            }
            (void)base_len;
            if (!m || !m->help || !m->type[0])
                EXPO_FAIL("sample %.*s without HELP and TYPE before it",
                          (int)nl, line);
            if (m->done || m != cur)
                EXPO_FAIL("samples of %s are not together", m->name);
            m->nsamples++;
            if (strcmp(m->type, "counter") == 0 && !(v >= 0))
                EXPO_FAIL("counter %s is negative", m->name);
            if (strcmp(m->type, "histogram") == 0) {
                if (!*suffix)
                    EXPO_FAIL("histogram %s sample without a suffix", m->name);
                if (strcmp(suffix, "_bucket") == 0) {
                    double b;

                    if (!le[0] || expo_float(&b, le) < 0)
                        EXPO_FAIL("bucket of %s without a valid le", m->name);
                    if (m->has_inf)
                        EXPO_FAIL("bucket of %s after le=\"+Inf\"", m->name);
                    if (m->nsamples > 1 && !(b > m->last_le))
                        EXPO_FAIL("le of %s not increasing", m->name);
                    if (m->nsamples > 1 && v < m->last_bucket)
                        EXPO_FAIL("buckets of %s not cumulative", m->name);
                    if (m->has_sum || m->has_count)
                        EXPO_FAIL("bucket of %s after _sum/_count", m->name);
                    m->last_le = b;
                    m->last_bucket = v;
                    if (isinf(b) && b > 0) {
                        m->has_inf = 1;
                        m->inf_bucket = v;
                    }
                } else if (strcmp(suffix, "_sum") == 0) {
                    m->has_sum = 1;
                } else {
                    m->has_count = 1;
                    m->count = v;
                }
            }
        }
    }
    for (i = 0; i < nm; i++) {
        lineno = 0;
        if (!ms[i].help || !ms[i].type[0])
            EXPO_FAIL("%s lacks HELP or TYPE", ms[i].name);
        if (strcmp(ms[i].type, "histogram") == 0) {
            if (!ms[i].has_inf)
                EXPO_FAIL("histogram %s does not end with le=\"+Inf\"",
                          ms[i].name);
            if (!ms[i].has_sum || !ms[i].has_count)
                EXPO_FAIL("histogram %s lacks _sum or _count", ms[i].name);
            if (ms[i].count != ms[i].inf_bucket)
                EXPO_FAIL("histogram %s: _count %g != +Inf bucket %g",
                          ms[i].name, ms[i].count, ms[i].inf_bucket);
        }
    }
    free(copy);
    return 0;
}

/* The value of the sample whose series (name and labels, as written) is
 * series, or -1 when there is none. */
static double expo_value(const char *text, const char *series)
{
    size_t n = strlen(series);
    const char *p = text;

    while ((p = strstr(p, series)) != NULL) {
        if ((p == text || p[-1] == '\n') && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p += n;
    }
    return -1;
}

#endif
