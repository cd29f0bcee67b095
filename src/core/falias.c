/* falias.c - the field names of other tools, with the field to write
 * instead (see falias.h). */
#include "falias.h"

#include <stdio.h>
#include <string.h>

#include "def.h"

static const pctl_falias aliases[] = {
    {"", "params", "parameters", NULL},
    {"parameters", "value", "default", NULL},
    {"parameters", "values", "enum", NULL},
    {"parameters", "options", "enum", NULL},
    {"parameters", "allowed", "enum", NULL},
    {"tasks", "type", "kind", NULL},
    {"tasks", "config", "spec", NULL},
    {"tasks.spec.shell", "cmd", "command", NULL},
    {"tasks.spec.shell", "script", "command", NULL},
    {"tasks.spec.shell", "run", "command", NULL},
    {"tasks.spec.shell", "args", "argv", NULL},
    {"tasks.spec.shell", "environment", "env", NULL},
    {"tasks.spec.shell", "workdir", "cwd", NULL},
    {"tasks.spec.shell", "workingDir", "cwd", NULL},
    {"tasks.spec.shell", "dir", "cwd", NULL},
    {"plans", "parallel", "strategy", "\"parallel\""},
    {"plans", "serial", "strategy", "\"serial\""},
    {"plans", "timeout", "deadline", NULL},
    {"plans", "steps", "phases", NULL},
    {"plans.phases", "parallel", "strategy", "\"parallel\""},
    {"plans.phases", "serial", "strategy", "\"serial\""},
    {"plans.phases.steps", "retries", "retry.attempts", NULL},
    {"plans.phases.steps", "max_retries", "retry.attempts", NULL},
    {"plans.phases.steps", "maxRetries", "retry.attempts", NULL},
    {"plans.phases.steps", "backoffLimit", "retry.attempts", NULL},
    {"plans.phases.steps", "attempts", "retry.attempts", NULL},
    {"plans.phases.steps", "backoff", "retry.backoff", NULL},
    {"plans.phases.steps", "command", "tasks", NULL},
    {"plans.phases.steps.retry", "retries", "attempts", NULL},
    {"plans.phases.steps.retry", "limit", "attempts", NULL},
    {"plans.phases.steps.retry", "delay", "backoff", NULL},
    {"plans.phases.steps.retry", "interval", "backoff", NULL},
    {"plans.phases.steps.retry", "factor", "multiplier", NULL},
};

const pctl_falias *pctl_faliases(size_t *n)
{
    *n = PCTL_COUNT(aliases);
    return aliases;
}

/* The value written, as JSON to show in the hint: a number, a boolean or
 * a short plain string; anything else is "...". */
static void show_value(char *buf, size_t size, const json_t *v)
{
    const char *s = json_string_value(v);

    if (json_is_integer(v))
        snprintf(buf, size, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, size, "%g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, size, "%s", json_is_true(v) ? "true" : "false");
    else if (s && strlen(s) <= 32 && pctl_name_valid(s)) /* nothing to escape */
        snprintf(buf, size, "\"%s\"", s);
    else
        snprintf(buf, size, "...");
}

const char *pctl_falias_hint(pctl_hbuf *h, const char *node, const char *word,
                             const json_t *value)
{
    for (size_t i = 0; node && i < PCTL_COUNT(aliases); i++) {
        const pctl_falias *a = &aliases[i];
        const char *dot = strchr(a->target, '.');
        char shown[48];

        if (strcmp(a->node, node) != 0 || strcmp(a->word, word) != 0)
            continue;
        if (a->value)
            snprintf(shown, sizeof shown, "%s", a->value);
        else
            show_value(shown, sizeof shown, value);
        if (dot)
            snprintf(h->s, sizeof h->s, "did you mean \"%.*s\": {\"%s\": %s}?",
                     (int)(dot - a->target), a->target, dot + 1, shown);
        else if (a->value)
            snprintf(h->s, sizeof h->s, "did you mean \"%s\": %s?", a->target,
                     shown);
        else
            snprintf(h->s, sizeof h->s, "did you mean \"%s\"?", a->target);
        return h->s;
    }
    return NULL;
}

const char *pctl_node_path(pctl_node node)
{
    switch (node) {
    case PCTL_NODE_ROOT:
        return "";
    case PCTL_NODE_PARAM:
        return "parameters";
    case PCTL_NODE_TASK:
        return "tasks";
    case PCTL_NODE_PLAN:
        return "plans";
    case PCTL_NODE_CHECK:
        return "plans.preflight";
    case PCTL_NODE_PHASE:
        return "plans.phases";
    case PCTL_NODE_STEP:
        return "plans.phases.steps";
    case PCTL_NODE_RETRY:
        return "plans.phases.steps.retry";
    case PCTL_NODE_STEP_TASK:
        break;
    }
    return NULL;
}
