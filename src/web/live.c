/*
 * live.c - what a server needs to keep the pages of planctl_web_respond()
 * live: the page a stream asks for (/stream?path=PAGE), and which open
 * pages a change touches, read from the event log.  The program's
 * server calls these as an embedder's own server does.
 */
#include <string.h>

#include "core/alloc.h"
#include "web/web.h"

/* Events read in one look; more than that and every page is touched. */
#define CHANGES_READ 2000

struct planctl_web_changes {
    int none;      /* no page is touched (the first look) */
    int all;       /* every page is touched */
    json_t *names; /* else the instances the events named */
};

/* Whether s[0..n) encodes a NUL. */
static int encodes_nul(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i + 2 < n; i++)
        if (s[i] == '%' && s[i + 1] == '0' && s[i + 2] == '0')
            return 1;
    return 0;
}

int planctl_web_stream_page(char **out, const char *target)
{
    const char *v;
    char *page;
    size_t n;

    if (!out)
        return PLANCTL_EINVAL;
    *out = NULL;
    if (!target || strncmp(target, "/stream?", 8) != 0)
        return PLANCTL_EINVAL;
    for (v = target + 7; v && strncmp(v + 1, "path=", 5) != 0;
         v = strchr(v + 1, '&'))
        ;
    if (!v)
        return PLANCTL_EINVAL;
    v += 6;
    n = strcspn(v, "&");
    if (!(page = pctl_web_decode(v, n, 1)))
        return encodes_nul(v, n) ? PLANCTL_EINVAL : PLANCTL_ENOMEM;
    if (page[0] != '/' || !strncmp(page, "/stream", 7) ||
        !strncmp(page, "/api/", 5) || !strncmp(page, "/assets/", 8) ||
        strstr(page, "part=")) {
        pctl_free(page);
        return PLANCTL_EINVAL;
    }
    *out = page;
    return 0;
}

int planctl_web_changes_read(planctl_web_changes **out, planctl *p,
                             int64_t *seq)
{
    planctl_events_options o = PLANCTL_EVENTS_OPTIONS_INIT;
    planctl_web_changes *c;
    char *text = NULL;
    json_t *doc, *events, *e;
    json_int_t last;
    size_t i, n;
    int rc;

    if (!out)
        return PLANCTL_EINVAL;
    *out = NULL;
    if (!p || !seq || *seq < PLANCTL_WEB_SINCE_NOW)
        return PLANCTL_EINVAL;
    if (*seq == PLANCTL_WEB_SINCE_NOW)
        o.tail = 1;
    else {
        o.since = *seq;
        o.limit = CHANGES_READ;
    }
    if ((rc = planctl_events_json(&text, p, &o)) < 0)
        return rc;
    doc = json_loads(text, 0, NULL);
    planctl_free(text);
    if (!doc)
        return PLANCTL_ENOMEM;
    if (!(c = pctl_calloc(1, sizeof *c)) || !(c->names = json_object())) {
        pctl_free(c);
        json_decref(doc);
        return PLANCTL_ENOMEM;
    }
    last = json_integer_value(json_object_get(doc, "last_seq"));
    events = json_object_get(doc, "events");
    n = json_array_size(events);
    c->none = *seq == PLANCTL_WEB_SINCE_NOW;
    if (!c->none) {
        /* None: a change the log does not name (an instance deleted, a
         * heartbeat); too many to look at: every page. */
        c->all = n == 0 || n >= CHANGES_READ;
        json_array_foreach(events, i, e)
        {
            const char *name =
                json_string_value(json_object_get(e, "instance"));

            if (!c->all && name &&
                json_object_set_new(c->names, name, json_true()) < 0)
                c->all = 1;
        }
    }
    if (last > *seq)
        *seq = last;
    json_decref(doc);
    *out = c;
    return 0;
}

int planctl_web_changes_touch(const planctl_web_changes *c, const char *page)
{
    char *name;
    int hit;

    if (!c || !page || c->none)
        return 0;
    /* The other pages (the instances, the engines) show every instance. */
    if (c->all || strncmp(page, "/instances/", 11) != 0)
        return 1;
    /* An instance's page changes with its own events only. */
    if (!(name = pctl_web_decode(page + 11, strcspn(page + 11, "/?"), 0)))
        return 1;
    hit = json_object_get(c->names, name) != NULL;
    pctl_free(name);
    return hit;
}

void planctl_web_changes_free(planctl_web_changes *c)
{
    if (!c)
        return;
    json_decref(c->names);
    pctl_free(c);
}
