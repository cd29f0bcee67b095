/*
 * schema.c - the reference of a definition's format (see schema.h): one
 * table of fields per object, in the order of the validator's tables.
 */
#include "schema.h"

#include <string.h>

#include "def.h"
#include "rules.h"
#include "shellspec.h"
#include "walk.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the definition ------------------------------------------------------ */

static const pctl_schema_field root_fields[] = {
    {"name", "string", 1, NULL, 0,
     "The definition's name: create --definition NAME refers to it",
     "1-63 characters of letters, digits, '_', '.' and '-', starting with a "
     "letter or digit.",
     NULL},
    {"version", "string", 1, NULL, 0,
     "The definition's version: apply registers each version once",
     "1-64 characters of letters, digits, '.', '+', '_' and '-'.  "
     "Registering a name and version again with other content is refused; "
     "create --definition NAME@VERSION picks one, NAME alone the latest.",
     NULL},
    {"description", "string", 0, NULL, 0, "What the definition is (text)", NULL,
     NULL},
    {"appVersion", "string", 0, NULL, 0,
     "The version of the software the definition runs (text)", NULL, NULL},
    {"url", "string", 0, NULL, 0, "Where to read more (text)", NULL, NULL},
    {"maintainers", "[]object", 0, NULL, PCTL_DEF_MAX_MAINTAINERS,
     "Who maintains the definition", NULL, "maintainers"},
    {"upgradableFrom", "[]string", 0, "(any version)", PCTL_DEF_MAX_UPGRADABLE,
     "The versions an instance may be upgraded from to this one",
     "Absent: any version; []: none.  upgrade from a version not listed is "
     "refused with exit status 2.  Each entry is a version (as \"version\").",
     NULL},
    {"parameters", "[]object", 0, NULL, PCTL_DEF_MAX_PARAMS,
     "The parameters an instance sets with -p NAME=VALUE", NULL, "parameters"},
    {"tasks", "[]object", 0, NULL, PCTL_DEF_MAX_TASKS,
     "The tasks the steps of the plans run, by name", NULL, "tasks"},
    {"plans", "map[string]object", 1, NULL, PCTL_DEF_MAX_PLANS,
     "The plans, by name; \"deploy\" is required",
     "A map from plan name (a name as \"name\") to plan.  create runs "
     "deploy; a parameter change runs the trigger of the changed parameters, "
     "else update if there is one, else deploy; delete runs cleanup if there "
     "is one; trigger runs any plan.",
     "plans"},
};

static const pctl_schema_field maintainer_fields[] = {
    {"name", "string", 1, NULL, 0, "The maintainer's name (text)", NULL, NULL},
    {"email", "string", 0, NULL, 0, "The maintainer's e-mail address (text)",
     NULL, NULL},
};

/* ---- parameters ---------------------------------------------------------- */

static const pctl_schema_field param_fields[] = {
    {"name", "string", 1, NULL, 0,
     "The parameter's name, unique in the definition",
     "A name (1-63 characters of letters, digits, '_', '.' and '-', starting "
     "with a letter or digit).  A task sees it as PLANCTL_PARAM_<NAME>: the "
     "name upper-cased, other characters than letters and digits made '_'; "
     "two names that would give one variable (A_B and a-b) are refused.",
     NULL},
    {"type", "string", 0, "(string)", 0,
     "string, integer, number, boolean, array or map",
     "What the values are.  -p NAME=VALUE parses VALUE by it: a string as it "
     "is; an integer, a number or a boolean as exactly a JSON literal of "
     "that type; an array or a map as JSON text, or from a file with "
     "NAME=@FILE.",
     NULL},
    {"default", "any", 0, NULL, 0,
     "The value when the instance sets none, of the parameter's type",
     "null or absent: none.  A string parameter's default may be written as "
     "a number or a boolean and is then that text (3 is \"3\").  Must be one "
     "of enum when enum is given.",
     NULL},
    {"required", "boolean", 0, "false", 0,
     "true: create must give a value unless there is a default",
     "Only true makes a parameter required; one without a default that is "
     "not required simply has no value, and its variable is not set.",
     NULL},
    {"enum", "[]any", 0, NULL, PCTL_DEF_MAX_ENUM,
     "The allowed values, each of the parameter's type",
     "At least one value, no value twice.", NULL},
    {"immutable", "boolean", 0, "(false)", 0,
     "true: once the parameter has a value it keeps it",
     "set and upgrade giving it another value are refused (exit status 2), "
     "and set --unset of an explicit value too.",
     NULL},
    /* Lands with the parameter's secret form; not shown before the
     * validator accepts it. */
    {"secret", "boolean", 0, "(false)", 0,
     "true: the value is shown as *** everywhere and left out of exports "
     "unless --include-secrets",
     NULL, NULL},
    {"trigger", "string", 0, NULL, 0, "The plan a change of the parameter runs",
     "A plan of the definition.  A change of parameters with triggers runs "
     "their plan (two different plans are refused); one of parameters "
     "without a trigger runs update if the definition has it, else deploy.",
     NULL},
    {"description", "string", 0, NULL, 0, "What the parameter is for (text)",
     NULL, NULL},
    {"displayName", "string", 0, NULL, 0,
     "Accepted for KUDO's params.yaml, not kept", NULL, NULL},
};

/* ---- tasks --------------------------------------------------------------- */

static const pctl_schema_field task_fields[] = {
    {"name", "string", 1, NULL, 0,
     "The task's name, unique in the definition; steps list tasks by it", NULL,
     NULL},
    {"kind", "string", 1, NULL, 0,
     "Dummy, shell, or a kind the embedder registered",
     "What runs the task: the built-in Dummy and shell, or a kind an "
     "embedding program registered (planctl_kind_register, "
     "planctl_engine_register).",
     NULL},
    {"spec", "object", 0, "{}", 0,
     "What the task does; its fields depend on "
     "kind (explain tasks.spec)",
     NULL, "tasks.spec"},
};

static const pctl_schema_field kind_fields[] = {
    {"Dummy", "object", 0, NULL, 0,
     "A task that only pretends: for trying plans out and for tests", NULL,
     "tasks.spec.Dummy"},
    {"shell", "object", 0, NULL, 0, "A process, run by the engine", NULL,
     "tasks.spec.shell"},
};

static const pctl_schema_field dummy_fields[] = {
    {"done", "boolean", 0, "true", 0,
     "false: report not done yet, so the step is polled again", NULL, NULL},
    {"wantErr", "boolean", 0, "false", 0,
     "true: fail the attempt (the step is retried by its policy)", NULL, NULL},
    {"fatal", "boolean", 0, "false", 0,
     "true with wantErr: fail fatally, with no retry",
     "As in KUDO, fatal alone is no error: {\"fatal\": true} completes.", NULL},
    {"sleep", "duration", 0, NULL, 0, "How long the task takes", NULL, NULL},
    {"failTimes", "integer", 0, "0", 0,
     "The first N attempts fail, the next succeed (0 or more)", NULL, NULL},
};

static const pctl_schema_field shell_fields[] = {
    {"argv", "[]string", 0, NULL, 0,
     "The program and its arguments, run without a shell",
     "Exactly one of argv and command.  Not empty.", NULL},
    {"command", "string", 0, NULL, 0, "A command line, run by /bin/sh -c",
     "Exactly one of argv and command.  Not empty.", NULL},
    {"env", "map[string]string", 0, NULL, 0,
     "More environment variables for the process",
     "Names are [A-Za-z_][A-Za-z0-9_]* and must not start with PLANCTL_: the "
     "engine sets those after env (see ENVIRONMENT OF A TASK in "
     "planctl-definition(5)).",
     NULL},
    {"cwd", "string", 0, "(the engine's directory)", 0,
     "The directory the process starts in", NULL, NULL},
    {"timeout", "duration", 0, NULL, 0,
     "The longest one run of the process may take (more than 0s)",
     "Then its process group gets SIGTERM, and SIGKILL 5s later, and the "
     "attempt fails.",
     NULL},
    {"fatal_exit_codes", "[]integer", 0, NULL, 0,
     "Exit statuses (1 to 255) that fail the step with no retry",
     "Exit status 0 is done; a listed status is fatal; any other is an "
     "error, retried by the step's policy, except 126 and 127 (see "
     "retry_exit_codes).",
     NULL},
    {"retry_exit_codes", "[]integer", 0, NULL, 0,
     "Exit statuses 126 and 127 to retry as errors",
     "126 (not executable) and 127 (not found), and a program that cannot "
     "be started at all, are fatal by default: a retry does not mend them.  "
     "Listing 126 or 127 here makes it an error retried by the step's "
     "policy; a status in both lists is fatal.",
     NULL},
};

/* ---- plans --------------------------------------------------------------- */

static const pctl_schema_field plan_fields[] = {
    {"strategy", "string", 0, "\"serial\"", 0,
     "serial: one phase after another; parallel: all phases at once", NULL,
     NULL},
    {"deadline", "duration", 0, NULL, 0,
     "A run must end this long after it starts, or fails (more than 0s)", NULL,
     NULL},
    {"preflight", "[]object", 0, NULL, PCTL_DEF_MAX_CHECKS,
     "Checks that must pass before a run of the plan is admitted",
     "They run together, for 10s at most, when create, set, upgrade, trigger "
     "or retry would admit a run; any failure refuses the run.  "
     "--skip-preflight skips them.",
     "plans.preflight"},
    {"phases", "[]object", 1, NULL, PCTL_DEF_MAX_PHASES,
     "The phases of the plan (at least one)", NULL, "plans.phases"},
};

static const pctl_schema_field check_fields[] = {
    {"name", "string", 1, NULL, 0,
     "The check's name, unique in the plan; --skip-preflight NAME skips it",
     NULL, NULL},
    {"task", "string", 1, NULL, 0, "The task the check runs, by name",
     "A shell check passes with exit status 0 and fails with 1 (its cause "
     "the last line of its output); any other status is an internal error.  "
     "Other kinds: DONE passes, FATAL fails.",
     NULL},
};

static const pctl_schema_field phase_fields[] = {
    {"name", "string", 1, NULL, 0, "The phase's name, unique in the plan", NULL,
     NULL},
    {"strategy", "string", 0, "\"serial\"", 0,
     "serial: one step after another; parallel: all steps at once", NULL, NULL},
    {"steps", "[]object", 1, NULL, PCTL_DEF_MAX_STEPS,
     "The steps of the phase (at least one)", NULL, "plans.phases.steps"},
};

static const pctl_schema_field step_fields[] = {
    {"name", "string", 1, NULL, 0, "The step's name, unique in the phase",
     "Later tasks of the run see its outputs as PLANCTL_OUTPUT_<STEP>_<KEY>, "
     "<STEP> being the name mapped as a parameter's; two steps of one plan "
     "whose names map to one <STEP> are refused.",
     NULL},
    {"tasks", "[]string", 1, NULL, PCTL_DEF_MAX_STEP_TASKS,
     "The tasks the step runs, by name, one after another (at least one)", NULL,
     NULL},
    {"retry", "object", 0, "(each field's default)", 0,
     "How often a failed step is tried again, and when", NULL,
     "plans.phases.steps.retry"},
    {"timeout", "duration", 0, NULL, 0,
     "The longest one attempt may take; then it fails (more than 0s)", NULL,
     NULL},
};

static const pctl_schema_field retry_fields[] = {
    {"attempts", "integer", 0, "3", 0,
     "How many times the step is tried in all, the first included (1-100)",
     NULL, NULL},
    {"backoff", "duration", 0, "\"1s\"", 0,
     "The wait before the second attempt",
     "The wait before attempt n is backoff * multiplier^(n-2), at most "
     "max_backoff.",
     NULL},
    {"multiplier", "number", 0, "2", 0,
     "How much longer each wait is than the one before (1-100)", NULL, NULL},
    {"max_backoff", "duration", 0, "(the larger of \"1m\" and backoff)", 0,
     "The longest wait between attempts; not less than backoff", NULL, NULL},
};

/* ---- the nodes ----------------------------------------------------------- */

#define FIELDS(t) t, N(t)

static const pctl_schema_node nodes[] = {
    {"", "object", "A definition",
     "A definition is a JSON document that describes what an instance can\n"
     "run: its parameters, its tasks and its plans.  apply registers it\n"
     "under its name and version; validate checks it without a database.\n"
     "A plan is made of phases, a phase of steps, a step of tasks.  An\n"
     "unknown field anywhere is refused, with the closest known name, or\n"
     "the field meant when it is another tool's name for one (retries on a\n"
     "step: retry.attempts; parallel on a phase: strategy; cmd in a shell\n"
     "spec: command).\n",
     PCTL_SCHEMA_SRC_SHAPE, PCTL_NODE_ROOT, FIELDS(root_fields)},
    {"maintainers", "[]object", "A maintainer",
     "Who maintains the definition.\n", PCTL_SCHEMA_SRC_MAINTAINER, 0,
     FIELDS(maintainer_fields)},
    {"parameters", "[]object", "A parameter",
     "A value an instance gives with -p NAME=VALUE (create, set, upgrade),\n"
     "as KUDO's params.yaml.  Tasks get it in PLANCTL_PARAM_<NAME>: a\n"
     "string as it is, other scalars as JSON text, an array or a map as\n"
     "compact JSON; a parameter with no value leaves its variable unset.\n",
     PCTL_SCHEMA_SRC_SHAPE, PCTL_NODE_PARAM, FIELDS(param_fields)},
    {"tasks", "[]object", "A task",
     "A unit of work, run by the executor of its kind.  Steps and preflight\n"
     "checks refer to tasks by name; one task may serve many steps.\n",
     PCTL_SCHEMA_SRC_SHAPE, PCTL_NODE_TASK, FIELDS(task_fields)},
    {"tasks.spec", "object", "A task's spec",
     "What the task does.  Its fields depend on the task's kind; those of\n"
     "the built-in kinds are listed below (explain tasks.spec.KIND).  An\n"
     "embedder's kind checks its spec with its own function; without one\n"
     "any object is accepted.  Strings in a spec have no length limit.\n",
     PCTL_SCHEMA_SRC_KINDS, 0, FIELDS(kind_fields)},
    {"tasks.spec.Dummy", "object", "The spec of a Dummy task",
     "A Dummy task does nothing but what its spec says: complete, fail,\n"
     "fail fatally, take time or fail its first attempts.  Outputs are\n"
     "neither given to it nor read from it.\n",
     PCTL_SCHEMA_SRC_DUMMY, 0, FIELDS(dummy_fields)},
    {"tasks.spec.shell", "object", "The spec of a shell task",
     "A shell task runs a process in its own session.  Exit status 0 is\n"
     "done.  Its output (stdout and stderr) is kept as the attempt's "
     "last\n" PCTL_STR(
         PCTL_OUTPUT_KEEP_KIB) " KiB, and its last line is added to the "
                               "step's message.  Cancel\n"
                               "and timeout send SIGTERM to its process group, "
                               "SIGKILL 5s later.\n"
                               "It gets the parameters, the run's outputs and "
                               "the engine's variables\n"
                               "in its environment, and may write outputs to "
                               "$PLANCTL_OUTPUT.\n",
     PCTL_SCHEMA_SRC_SHELL, 0, FIELDS(shell_fields)},
    {"plans", "map[string]object", "A plan",
     "What a run does: phases, one after another (serial) or all at once\n"
     "(parallel).  An instance runs at most one plan at a time; a run\n"
     "fails when a step fails fatally or runs out of attempts.\n",
     PCTL_SCHEMA_SRC_SHAPE, PCTL_NODE_PLAN, FIELDS(plan_fields)},
    {"plans.preflight", "[]object", "A preflight check",
     "A task run as a check before a run of the plan is admitted.\n",
     PCTL_SCHEMA_SRC_SHAPE, PCTL_NODE_CHECK, FIELDS(check_fields)},
    {"plans.phases", "[]object", "A phase",
     "A group of steps, run one after another (serial) or all at once\n"
     "(parallel).  A phase fails when one of its steps fails.\n",
     PCTL_SCHEMA_SRC_SHAPE, PCTL_NODE_PHASE, FIELDS(phase_fields)},
    {"plans.phases.steps", "[]object", "A step",
     "A list of tasks, run one after another, tried again as a whole by its\n"
     "retry policy when one fails (from the task that failed).\n",
     PCTL_SCHEMA_SRC_SHAPE, PCTL_NODE_STEP, FIELDS(step_fields)},
    {"plans.phases.steps.retry", "object", "A step's retry policy",
     "How often a failed step is tried again, and how long it waits first.\n"
     "A fatal failure is never retried.  Given in part, the fields not\n"
     "given take their defaults.\n",
     PCTL_SCHEMA_SRC_SHAPE, PCTL_NODE_RETRY, FIELDS(retry_fields)},
};

const pctl_schema_node *pctl_def_schema_nodes(size_t *n)
{
    *n = N(nodes);
    return nodes;
}

const pctl_schema_node *pctl_def_schema_node(const char *path)
{
    size_t i;

    for (i = 0; path && i < N(nodes); i++)
        if (strcmp(nodes[i].path, path) == 0)
            return &nodes[i];
    return NULL;
}

/* Whether the validator accepts field name of node. */
static int accepted(const pctl_schema_node *node, const char *name)
{
    pctl_shape_field sf;
    size_t i;

    switch (node->src) {
    case PCTL_SCHEMA_SRC_SHAPE:
        for (i = 0; pctl_shape_field_at((pctl_node)node->shape, i, &sf); i++)
            if (strcmp(sf.name, name) == 0)
                return 1;
        return 0;
    case PCTL_SCHEMA_SRC_MAINTAINER:
        for (i = 0; i < N(pctl_maintainer_fields); i++)
            if (strcmp(pctl_maintainer_fields[i], name) == 0)
                return 1;
        return 0;
    case PCTL_SCHEMA_SRC_DUMMY:
        for (i = 0; i < N(pctl_dummy_spec_fields); i++)
            if (strcmp(pctl_dummy_spec_fields[i], name) == 0)
                return 1;
        return 0;
    case PCTL_SCHEMA_SRC_SHELL:
#define IS(fname, type, expected)                                              \
    if (strcmp(#fname, name) == 0)                                             \
        return 1;
        PCTL_SHELL_SPEC(IS)
#undef IS
        return 0;
    case PCTL_SCHEMA_SRC_KINDS:
        return pctl_kind_is_builtin(name);
    }
    return 0;
}

const pctl_schema_field *pctl_def_schema_field(const pctl_schema_node *node,
                                               size_t i)
{
    size_t k;

    for (k = 0; node && k < node->nfields; k++)
        if (accepted(node, node->fields[k].name) && i-- == 0)
            return &node->fields[k];
    return NULL;
}

int pctl_def_schema_resolve(const char *path, const pctl_schema_node **node,
                            const pctl_schema_field **field, size_t *bad_at)
{
    const pctl_schema_node *at = &nodes[0];
    const char *p = path ? path : "";

    *field = NULL;
    *bad_at = 0;
    *node = at;
    if (!*p)
        return 1;
    for (;;) {
        size_t len = strcspn(p, "."), i;
        const pctl_schema_field *f = NULL;

        /* Nothing lies below a field that holds no object. */
        for (i = 0; !*field && (f = pctl_def_schema_field(at, i)); i++)
            if (strlen(f->name) == len && memcmp(f->name, p, len) == 0)
                break;
        if (!f) {
            *node = at;
            *bad_at = (size_t)(p - path);
            return 0;
        }
        if (f->child)
            at = pctl_def_schema_node(f->child);
        else
            *field = f;
        p += len;
        if (!*p)
            break;
        p++; /* the dot; an empty segment after it matches no field */
    }
    *node = at;
    return 1;
}

#define UNIT_LISTED(name, ms, sep) name sep
const char pctl_def_schema_duration_text[] =
    "A duration is a string of one or more numbers, each with a "
    "unit: " PCTL_DURATION_UNITS(
        UNIT_LISTED) " (24h), such as \"500ms\", \"30s\", \"1.5s\", \"5m\" or "
                     "\"1h30m\"; "
                     "no sign, no spaces, and a bare \"0\" is refused (\"0s\" "
                     "is not).  "
                     "Fractions below a millisecond are dropped; the longest "
                     "is 100 years "
                     "(876000h).";

const char pctl_def_schema_example[] =
    "{\n"
    "  \"name\": \"kafka\",\n"
    "  \"version\": \"1.0.0\",\n"
    "  \"description\": \"A message broker\",\n"
    "  \"appVersion\": \"3.7.0\",\n"
    "  \"maintainers\": [{\"name\": \"Ops\", \"email\": "
    "\"ops@example.com\"}],\n"
    "  \"upgradableFrom\": [\"0.9.0\"],\n"
    "  \"parameters\": [\n"
    "    {\"name\": \"BROKERS\", \"type\": \"integer\", \"default\": 3},\n"
    "    {\"name\": \"ZONES\", \"type\": \"array\", \"default\": [\"a\", "
    "\"b\"]},\n"
    "    {\"name\": \"TIER\", \"enum\": [\"gold\", \"silver\"], "
    "\"default\": \"gold\"},\n"
    "    {\"name\": \"STORAGE\", \"default\": \"10Gi\", \"immutable\": true},\n"
    "    {\"name\": \"BACKUP_NAME\", \"trigger\": \"backup\"}\n"
    "  ],\n"
    "  \"tasks\": [\n"
    "    {\"name\": \"disk-space\", \"kind\": \"shell\",\n"
    "     \"spec\": {\"command\": \"test $(df --output=avail -k . | tail -1) "
    "-gt 1048576\"}},\n"
    "    {\"name\": \"gen-cert\", \"kind\": \"shell\",\n"
    "     \"spec\": {\"command\": \"echo PEM=$(date +%s) >> "
    "\\\"$PLANCTL_OUTPUT\\\"\"}},\n"
    "    {\"name\": \"start\", \"kind\": \"shell\",\n"
    "     \"spec\": {\"argv\": [\"sh\", \"-c\", \"echo broker $PLANCTL_STEP "
    "cert $PLANCTL_OUTPUT_GEN_CERT_PEM\"],\n"
    "              \"env\": {\"LOG_LEVEL\": \"info\"}, \"timeout\": "
    "\"5m\",\n"
    "              \"fatal_exit_codes\": [3]}},\n"
    "    {\"name\": \"snapshot\", \"kind\": \"Dummy\", \"spec\": {\"sleep\": "
    "\"2s\"}}\n"
    "  ],\n"
    "  \"plans\": {\n"
    "    \"deploy\": {\n"
    "      \"deadline\": \"1h\",\n"
    "      \"preflight\": [{\"name\": \"DiskSpace\", \"task\": "
    "\"disk-space\"}],\n"
    "      \"phases\": [\n"
    "        {\"name\": \"certs\", \"steps\": [{\"name\": \"gen-cert\", "
    "\"tasks\": [\"gen-cert\"]}]},\n"
    "        {\"name\": \"brokers\", \"strategy\": \"parallel\", \"steps\": [\n"
    "          {\"name\": \"broker-0\", \"tasks\": [\"start\"], \"timeout\": "
    "\"10m\",\n"
    "           \"retry\": {\"attempts\": 5, \"backoff\": \"10s\", "
    "\"multiplier\": 1.5, \"max_backoff\": \"2m\"}},\n"
    "          {\"name\": \"broker-1\", \"tasks\": [\"start\"]}\n"
    "        ]}\n"
    "      ]\n"
    "    },\n"
    "    \"backup\": {\n"
    "      \"phases\": [{\"name\": \"dump\", \"steps\": [{\"name\": "
    "\"snapshot\", \"tasks\": [\"snapshot\"]}]}]\n"
    "    }\n"
    "  }\n"
    "}\n";
