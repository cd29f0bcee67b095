/*
 * doc.c - the man pages, printed by the hidden command `planctl __man` from
 * the command table and the flag tables the help and the parser use (and,
 * for planctl-definition(5) and planctl-json(7), the reference and the
 * transition table), so that none can drift from what planctl accepts.
 *
 * The build runs it and installs the pages (CMakeLists.txt); nothing
 * generated here is committed.
 */
#include "cli/cli.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "core/def.h"
#include "core/schema.h"
#include "core/status.h"

/* The written part of page name (src/cli/doc/man/NAME.md), as roff; nothing
 * when it has none. */
static void man_written(FILE *f, const char *name)
{
    for (size_t i = 0; i < cli_man_ntexts; i++)
        if (strcmp(cli_man_texts[i].name, name) == 0)
            cli_markup_roff(f, cli_man_texts[i].text);
}

/* "\fBplanctl create\fR \fINAME\fR \-\-definition ..." on one line. */
static void man_usage(FILE *f, const cli_command *cmd)
{
    fputs("\\fBplanctl ", f);
    cli_roff(f, cmd->name, 0);
    fputs("\\fR", f);
    if (cmd->usage[0]) {
        fputc(' ', f);
        cli_roff(f, cmd->usage, 1);
    }
    fputc('\n', f);
}

/* "--name" in bold, as one word that is never hyphenated. */
static void man_long(FILE *f, const char *name)
{
    char buf[80];

    snprintf(buf, sizeof(buf), "--%s", name);
    fputs("\\fB", f);
    cli_roff(f, buf, 0);
    fputs("\\fR", f);
}

/* One flag as a tagged paragraph: "-p, --param K=V", then its help. */
static void man_flag(FILE *f, const cli_flag *fl)
{
    fputs(".TP\n", f);
    if (fl->short_name)
        fprintf(f, "\\fB\\-%c\\fR, ", fl->short_name);
    man_long(f, fl->name);
    if (fl->metavar) {
        fputc(' ', f);
        cli_roff(f, fl->metavar, 1);
    }
    fputc('\n', f);
    cli_roff(f, fl->help, 0);
    if (fl->kind == CLI_FLAG_LIST || fl->required)
        fprintf(f, " (%s%s%s)", fl->kind == CLI_FLAG_LIST ? "repeatable" : "",
                fl->kind == CLI_FLAG_LIST && fl->required ? ", " : "",
                fl->required ? "required" : "");
    fputc('\n', f);
}

static void man_command(FILE *f, const cli_command *cmd)
{
    fputs(".SS\n", f);
    man_usage(f, cmd);
    cli_roff(f, cmd->summary, 0);
    fputs(".\n.PP\n", f);
    cli_roff(f, cmd->description, 0);
    fputc('\n', f);
    for (size_t i = 0; cmd->flags[i].name; i++)
        man_flag(f, &cmd->flags[i]);
    /* The parser looks a flag given after the command up in the
     * command's own table first (`upgrade --version V`). */
    for (size_t i = 0; cli_global_flags[i].name; i++) {
        const cli_flag *g = &cli_global_flags[i];
        if (!cli_flag_shadowed(g, cmd->flags))
            continue;
        fputs(".PP\nAfter the command, ", f);
        man_long(f, g->name);
        fputs(" is the command's own flag; give the global one before "
              "the command.\n",
              f);
    }
    if (cmd->examples && cmd->examples[0]) {
        fputs(".PP\nExamples:\n.RS 4\n.nf\n", f);
        for (size_t i = 0; cmd->examples[i]; i++) {
            cli_roff(f, cmd->examples[i], 0);
            fputc('\n', f);
        }
        fputs(".fi\n.RE\n", f);
    }
}

/* The exit codes, all of them, whichever commands use them today. */
static const char *const exit_codes[] = {
    "Success",
    "An internal or I/O error: the database cannot be read or written, is "
    "not a planctl database, or has a newer schema than this planctl; or a "
    "preflight check could not run or timed out (even if others failed)",
    "A usage error or invalid input: an unknown command or flag, a missing "
    "or malformed argument, an invalid definition or parameter; or a "
    "preflight check failed",
    "Refused by a conflict with the current state: the instance has an "
    "active run, an engine is already running, a name is taken, the run "
    "is already paused, is not paused, or did not fail (retry)",
    "Not found: the database, an instance, a plan, a run, a definition, or "
    "a step or attempt (logs)",
    "A run waited for ended FATAL_ERROR or CANCELLED (logs --follow: the "
    "run, step or attempt it followed did not end COMPLETE)",
    "Timed out waiting for a run",
};

static void man_exit_codes(FILE *f)
{
    for (size_t i = 0; i < sizeof(exit_codes) / sizeof(exit_codes[0]); i++) {
        fprintf(f, ".TP\n\\fB%zu\\fR\n", i);
        cli_roff(f, exit_codes[i], 0);
        fputs(".\n", f);
    }
    fputs(".TP\n\\fB130\\fR, \\fB143\\fR\n", f);
    cli_roff(
        f,
        "Interrupted by SIGINT or SIGTERM (128 + the signal, as shells "
        "report it) while status --watch, events --follow, logs --follow or "
        "--wait waited; "
        "the run goes on",
        0);
    fputs(".\n", f);
}

static const char man_description[] =
    "planctl runs the plans of instances and shows what they did.  A plan is\n"
    "made of phases, a phase of steps, a step of tasks.  Every run, phase\n"
    "and step is a row in an SQLite database, and every status change is\n"
    "one transaction that also appends an event, so status and history\n"
    "read the same rows and a past state can be replayed.\n"
    "\n"
    "A definition (a versioned JSON or YAML document with parameters, tasks\n"
    "and plans; planctl-definition(5) lists every field, and planctl explain\n"
    "FIELD shows one) is registered with apply.  create makes an instance\n"
    "of it and admits its deploy plan; set, upgrade and delete admit the\n"
    "plans the change selects; trigger admits any other plan.  An instance\n"
    "has at most one active run (PENDING, IN_PROGRESS or PAUSED): another\n"
    "is refused with exit status 3, naming the active run, or queued with\n"
    "trigger --queue.  Runs advance only while an engine runs: planctl run,\n"
    "or a controller that embeds libplanctl; there is one engine per\n"
    "database.\n"
    "\n"
    "Parameters have a type (string, the default, integer, number, boolean,\n"
    "array or map): -p K=V parses V by it, an array or a map as JSON or\n"
    "from a file with K=@FILE.  A parameter may list its allowed values\n"
    "(enum), be immutable (once it has a value it keeps it), and is\n"
    "required only when it says so; one with no value reaches no task.\n"
    "set --unset K removes an explicit value, so the default applies again.\n"
    "Tasks get scalars as text and arrays and maps as compact JSON in\n"
    "PLANCTL_PARAM_<NAME>.\n"
    "\n"
    "Statuses: NEVER_RUN (a plan with no run), QUEUED, PENDING, IN_PROGRESS,\n"
    "PAUSED, ERROR (a step that failed and will be retried), and the\n"
    "terminal COMPLETE, FATAL_ERROR and CANCELLED.\n"
    "\n"
    "Global flags are accepted before or after the command, and every\n"
    "command takes -h (planctl help COMMAND prints the same).  An unknown\n"
    "command is a usage error naming the closest command, or the one that\n"
    "does what the word means to users of kubectl, argo or git: get,\n"
    "describe and show are status, list and ls instances, rm delete, stop\n"
    "cancel; a word that reads never gets a command that writes.  Text output "
    "uses colour and box drawing only on a\n"
    "terminal.  With -o json each command prints a JSON document with\n"
    "\"schema\": 1, times in RFC 3339 UTC and absent values as null; these\n"
    "documents are a stable contract for scripts: planctl-json(7) lists\n"
    "their fields, the statuses and their transitions.  -o yaml prints the "
    "same\n"
    "document as YAML 1.2 (block style, keys in the same order, a string\n"
    "quoted whenever it could read as anything else; documents after the\n"
    "first of one command, as status --watch prints them, follow a ---\n"
    "line).\n"
    "\n"
    "Definitions are read as YAML when the file name ends in .yaml or .yml,\n"
    "as JSON when it ends in .json, and otherwise (standard input included)\n"
    "by the content: JSON when it starts with { or [, YAML otherwise.  YAML\n"
    "follows the YAML 1.2 core schema: a plain true, false, null, ~, an\n"
    "integer or a float is that value, anything quoted is text, and yes, no,\n"
    "on and off are text.  Anchors and aliases are supported; merge keys\n"
    "(<<), duplicate keys, keys that are not text, tags other than the\n"
    "standard ones, a second document and aliases adding more than 100000\n"
    "values are refused with the line.  A YAML definition is registered as\n"
    "the same JSON a JSON file with that content registers, and its errors\n"
    "start with FILE:LINE.";

static const struct {
    const char *name, *text;
} man_env[] = {
    {"PLANCTL_DB",
     "The database when --db is not given: a SQLite file, or a PostgreSQL "
     "URI (postgres:// or postgresql://, libpq's syntax and environment "
     "(PGHOST, PGUSER, PGPASSWORD, ~/.pgpass), plus schema=NAME, the schema "
     "holding the tables, default planctl; a password is never shown).  "
     "The default is ./planctl.db."},
    {"PLANCTL_NOW",
     "Fixes the clock: a time as planctl prints one (2026-11-21T14:03:05Z, "
     "or \"2026-11-21 14:03:05\", local unless it names a zone) or "
     "milliseconds since the epoch.  "
     "planctl records it as the time of every change and measures "
     "durations to it, for reproducible output in tests and documentation.  "
     "planctl run starts its clock at it and advances it by the monotonic "
     "clock, so the engine's retries and timeouts still pass."},
    {"PLANCTL_DURABILITY",
     "normal (the default) or full: full syncs every commit to disk; with "
     "normal a power failure or an OS crash may lose the last commits, "
     "never consistency.  planctl run --durability overrides it."},
    {"PLANCTL_CHECK_CACHE",
     "1 turns on the engine's self-check, for tests and for debugging the "
     "engine: where its cache spares reading a changed row back, the row "
     "is read anyway, and a disagreement fails the engine's pass with an "
     "error naming the row.  Slower; the test suite's sanitizer run sets "
     "it."},
    {"PLANCTL_ENGINE_WARN_AFTER",
     "How long --wait and status --watch follow a run while no engine runs "
     "before they warn on stderr: a duration such as 5s (the default), 1m, "
     "or 0 to warn at once.  Anything else keeps the default."},
    {"PLANCTL_OUTPUT",
     "Set by planctl run for each shell task: the file (new and empty) "
     "where the task may write its outputs for the later tasks of its run, "
     "one per line: KEY=VALUE, or KEY<<DELIM followed by the value's lines "
     "and a line DELIM; ::secret:: before either marks a secret, shown as "
     "*** by status and left out of export unless --include-secrets.  A "
     "malformed line fails the attempt, naming the line; the outputs of "
     "one attempt hold at most 64 KiB.  The file's private directory goes "
     "when the task ends; one left by an engine that was killed goes when "
     "the next engine recovers the attempt."},
    {"PLANCTL_OUTPUT_<STEP>_<KEY>",
     "Set by planctl run for each shell task: output KEY of step STEP of "
     "the same run, once that step has completed (and of the earlier tasks "
     "of the task's own step).  STEP is the step's name upper-cased, "
     "characters other than letters and digits made _: gen-cert gives "
     "PLANCTL_OUTPUT_GEN_CERT_PEM.  status --run ID -o json shows them as "
     "\"outputs\"."},
    {"NO_COLOR", "When set and not empty, the output is never coloured, as "
                 "with --no-color."},
    {"TZ", "The time zone of times in text output.  JSON output is always "
           "UTC."},
};

static const struct {
    const char *name, *text;
} man_files[] = {
    {"./planctl.db",
     "The database used when neither --db nor PLANCTL_DB names one.  Only "
     "apply and import create a database (mode 0600; its directory must "
     "exist); the other commands report a missing one (exit status 4)."},
    {"DB-wal, DB-shm",
     "SQLite's write-ahead log and its index, next to the database DB.  "
     "They are part of the database while it is in use: copy or move the "
     "three together, and never delete them on their own."},
    {"DB-engine",
     "The lock file of the engine: planctl run (or an embedding "
     "controller) holds an flock(2) on it while it runs, so a second "
     "engine is refused and a crashed one is noticed at once."},
};

static int print_man(FILE *f, const cli_command *const *cmds, size_t ncmds)
{
    /* No date: the page must come out the same on every build. */
    fprintf(f,
            ".\\\" planctl.1 - generated by 'planctl __man' from the command "
            "table; do not edit.\n"
            ".TH PLANCTL 1 \"\" \"planctl %s\" \"User Commands\"\n"
            /* Ragged right: justified usage lines and headings open wide
             * gaps (DocBook's man pages do the same). */
            ".ad l\n"
            ".SH NAME\n"
            "planctl \\- run the plans of instances and inspect them\n"
            ".SH SYNOPSIS\n"
            "\\fBplanctl\\fR [\\fIflags\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR] "
            "[\\fIflags\\fR]\n"
            ".PP\n"
            ".in +4n\n",
            PLANCTL_VERSION);
    /* One command a line, continued lines indented. */
    for (size_t i = 0; i < ncmds; i++) {
        fputs(".ti -4n\n", f);
        man_usage(f, cmds[i]);
    }
    fputs(".in -4n\n", f);
    fputs(".SH DESCRIPTION\n", f);
    cli_roff(f, man_description, 0);
    fputs("\n.SH COMMANDS\n", f);
    for (size_t i = 0; i < ncmds; i++)
        man_command(f, cmds[i]);
    fputs(".SH GLOBAL OPTIONS\n"
          "Accepted before or after the command.\n",
          f);
    for (size_t i = 0; cli_global_flags[i].name; i++)
        man_flag(f, &cli_global_flags[i]);
    fputs(".SH ENVIRONMENT\n", f);
    for (size_t i = 0; i < sizeof(man_env) / sizeof(man_env[0]); i++) {
        fprintf(f, ".TP\n\\fB%s\\fR\n", man_env[i].name);
        cli_roff(f, man_env[i].text, 0);
        fputc('\n', f);
    }
    fputs(".SH EXIT STATUS\n", f);
    man_exit_codes(f);
    fputs(".SH FILES\n", f);
    for (size_t i = 0; i < sizeof(man_files) / sizeof(man_files[0]); i++) {
        fputs(".TP\n\\fI", f);
        cli_roff(f, man_files[i].name, 0);
        fputs("\\fR\n", f);
        cli_roff(f, man_files[i].text, 0);
        fputc('\n', f);
    }
    man_written(f, "planctl.1");
    fputs(".SH SEE ALSO\n"
          ".BR planctl-definition (5),\n"
          ".BR planctl-json (7),\n"
          ".BR planctl-engine (7),\n"
          ".BR planctl (3),\n"
          ".BR sqlite3 (1),\n"
          ".BR flock (2)\n",
          f);
    return CLI_EXIT_OK;
}

/* ---- planctl-definition(5) ---------------------------------------------- */

/* The header of a page: generated, no date (the same on every build). */
static void man_head(FILE *f, const char *file, const char *title, int sec,
                     const char *manual, const char *name_line)
{
    fprintf(f,
            ".\\\" %s - generated by 'planctl __man %s'; do not edit.\n"
            ".TH %s %d \"\" \"planctl %s\" \"%s\"\n"
            ".ad l\n"
            ".SH NAME\n%s\n",
            file, file, title, sec, PLANCTL_VERSION, manual, name_line);
}

static void man_text(FILE *f, const char *s)
{
    cli_roff(f, s, 0);
    fputc('\n', f);
}

/* A tagged paragraph: name in bold, then what it is. */
static void man_tagged(FILE *f, const char *name, const char *text)
{
    fputs(".TP\n\\fB", f);
    cli_roff(f, name, 0);
    fputs("\\fR\n", f);
    man_text(f, text);
}

/* One field as a tagged paragraph: "name (type, required, default D, at
 * most N)", then what it is. */
static void man_schema_field(FILE *f, const pctl_schema_field *fl)
{
    char extra[96] = "";

    fputs(".TP\n\\fB", f);
    cli_roff(f, fl->name, 0);
    fputs("\\fR (", f);
    cli_roff(f, fl->type, 0);
    fputs(fl->required ? ", required" : ", optional", f);
    if (fl->def) {
        fputs(", default ", f);
        cli_roff(f, fl->def, 0);
    }
    if (fl->max)
        snprintf(extra, sizeof extra, ", at most %zu", fl->max);
    fprintf(f, "%s)\n", extra);
    cli_roff(f, fl->description, 0);
    fputs(".", f);
    if (fl->details) {
        fputs("  ", f);
        cli_roff(f, fl->details, 0);
    }
    if (fl->child) {
        fputs("  See \\fB", f);
        cli_roff(f, fl->child, 0);
        fputs("\\fR below.", f);
    }
    fputc('\n', f);
}

static const struct {
    const char *name, *text;
} task_env[] = {
    {"PLANCTL_PARAM_<NAME>",
     "Each parameter that has a value: NAME upper-cased, characters other "
     "than letters and digits made _.  A string as it is, an integer in "
     "decimal, a number as the shortest decimal that reads back as the same "
     "double, a boolean as true or false, an array or a map as compact JSON "
     "with sorted keys.  A parameter with no value leaves it unset."},
    {"PLANCTL_INSTANCE, PLANCTL_PLAN, PLANCTL_PHASE, PLANCTL_STEP, "
     "PLANCTL_TASK",
     "The names of the instance, plan, phase, step and task."},
    {"PLANCTL_RUN, PLANCTL_RUN_UID, PLANCTL_ATTEMPT",
     "The run's id and its random uid, and the step's attempt number (from "
     "1)."},
    {"PLANCTL_OUTPUT",
     "A new empty file where the task may write outputs for the later "
     "tasks of its run, one per line: KEY=VALUE, or KEY<<DELIM, the value's "
     "lines, then a line DELIM; ::secret:: before either marks a secret.  "
     "KEY is letters, digits and _, not starting with a digit.  A malformed "
     "line fails the attempt; the outputs of one attempt hold at most 64 "
     "KiB.  Its private directory goes when the task ends, or, when its "
     "engine was killed, when the next engine recovers the attempt."},
    {"PLANCTL_OUTPUT_<STEP>_<KEY>",
     "Output KEY of step STEP of the same run, once that step has "
     "completed (and of the earlier tasks of the task's own step).  STEP is "
     "the step's name mapped as a parameter's: gen-cert gives "
     "PLANCTL_OUTPUT_GEN_CERT_PEM."},
};

static int print_man_definition(FILE *f, const cli_command *const *cmds,
                                size_t ncmds)
{
    size_t n;
    const pctl_schema_node *nodes = pctl_def_schema_nodes(&n);
    const pctl_schema_field *fl;

    (void)cmds;
    (void)ncmds;
    man_head(f, "planctl-definition.5", "PLANCTL-DEFINITION", 5, "File Formats",
             "planctl-definition \\- the format of a planctl definition");
    fputs(".SH SYNOPSIS\n.nf\n"
          "{\"name\": \\fINAME\\fR, \"version\": \\fIVERSION\\fR,\n"
          " \"parameters\": [...], \"tasks\": [...],\n"
          " \"plans\": {\"deploy\": {\"phases\": [{\"name\": ..., \"steps\": "
          "[...]}]}}}\n"
          ".fi\n.SH DESCRIPTION\n",
          f);
    man_text(f, nodes[0].description);
    man_text(f, "\nThis page is generated from the tables the validator's "
                "are tied to: it lists every field planctl accepts.  "
                "planctl explain FIELD prints one object or field of it, "
                "such as planctl explain plans.phases.steps.retry.  A path "
                "leaves out the names of plans and the positions of list "
                "entries.  Where a field has a default, the document is "
                "validated and run as if it held it; a default in "
                "parentheses is described rather than written.  The "
                "document is JSON, at most 4 MiB, nested at most 64 "
                "deep.");
    fputs(".SH FIELDS\n", f);
    for (size_t i = 0; i < n; i++) {
        fputs(".SS ", f);
        cli_roff(f, nodes[i].path[0] ? nodes[i].path : "(the definition)", 0);
        fputs("\n", f);
        cli_roff(f, nodes[i].title, 0);
        fputs(" (", f);
        cli_roff(f, nodes[i].type, 0);
        fputs(").  ", f);
        /* The definition's own is the DESCRIPTION above. */
        man_text(f, i > 0 ? nodes[i].description : "");
        if (nodes[i].src == PCTL_SCHEMA_SRC_KINDS)
            fputs(".PP\nThe built-in kinds:\n", f);
        for (size_t j = 0; (fl = pctl_def_schema_field(&nodes[i], j)); j++)
            man_schema_field(f, fl);
    }
    fputs(".SH DURATIONS\n", f);
    man_text(f, pctl_def_schema_duration_text);
    man_text(f, "\nThe durations: plans.deadline, plans.phases.steps.timeout, "
                "plans.phases.steps.retry.backoff and max_backoff, "
                "tasks.spec.shell.timeout and tasks.spec.Dummy.sleep.");
    fputs(".SH NAMES\n", f);
    man_text(f, "The names of the definition, parameters, tasks, plans, "
                "preflight checks, phases and steps are 1-63 characters of "
                "letters, digits, '_', '.' and '-', starting with a letter "
                "or digit, and unique among their siblings.  A version is "
                "1-64 characters of letters, digits, '.', '+', '_' and "
                "'-'.");
    fputs(".SH PARAMETER TYPES\n", f);
    fputs(".TP\n\\fBstring\\fR\nText (the default type).\n"
          ".TP\n\\fBinteger\\fR\nA JSON integer (3, \\-2).\n"
          ".TP\n\\fBnumber\\fR\nA JSON number (2.5, 1e3).\n"
          ".TP\n\\fBboolean\\fR\ntrue or false.\n"
          ".TP\n\\fBarray\\fR\nA JSON array ([\"a\", \"b\"]).\n"
          ".TP\n\\fBmap\\fR\nA JSON object ({\"k\": \"v\"}).\n",
          f);
    fputs(".SH LIMITS\n", f);
    fprintf(f,
            "A definition holds at most %d parameters, %d tasks and %d "
            "plans; a plan at most %d phases and %d preflight checks; a "
            "phase at most %d steps; a step at most %d tasks; a parameter's "
            "enum at most %d values; maintainers at most %d; upgradableFrom "
            "at most %d versions.  A string other than in a task's spec "
            "holds at most %d bytes.  Validation reports at most %d "
            "errors.\n",
            PCTL_DEF_MAX_PARAMS, PCTL_DEF_MAX_TASKS, PCTL_DEF_MAX_PLANS,
            PCTL_DEF_MAX_PHASES, PCTL_DEF_MAX_CHECKS, PCTL_DEF_MAX_STEPS,
            PCTL_DEF_MAX_STEP_TASKS, PCTL_DEF_MAX_ENUM,
            PCTL_DEF_MAX_MAINTAINERS, PCTL_DEF_MAX_UPGRADABLE,
            PCTL_DEF_MAX_STRING, PCTL_DEF_MAX_ERRORS);
    fputs(".SH ENVIRONMENT OF A TASK\n", f);
    man_text(f, "A shell task's process gets its parameters, the engine's "
                "variables and the run's outputs in its environment, set "
                "after spec.env.  There are no templates: a definition's "
                "strings are passed as they are written, and a task reads "
                "values from its environment.  An embedder's executor gets "
                "the same as planctl_task_info.");
    for (size_t i = 0; i < sizeof(task_env) / sizeof(task_env[0]); i++) {
        man_tagged(f, task_env[i].name, task_env[i].text);
    }
    fputs(".SH EXAMPLE\n.nf\n", f);
    man_text(f, pctl_def_schema_example);
    fputs(".fi\n", f);
    man_written(f, "planctl-definition.5");
    fputs(".SH SEE ALSO\n"
          ".BR planctl (1),\n"
          ".BR planctl-json (7),\n"
          ".BR planctl-engine (7),\n"
          ".BR planctl (3)\n",
          f);
    return CLI_EXIT_OK;
}

/* The documents of /api/v1 (src/web/api.c), for planctl-json(7). */
static const struct {
    const char *path, *text;
} api_paths[] = {
    {"GET /api/v1/instances", "instances -o json."},
    {"GET /api/v1/instances/NAME",
     "status NAME -o json; ?plan=P and ?run=ID as --plan and --run."},
    {"GET /api/v1/instances/NAME/history",
     "history NAME -o json; ?plan=, ?limit=, ?before= as the flags."},
    {"GET /api/v1/instances/NAME/events",
     "events NAME -o json; ?run=, ?since=, ?limit=, ?tail= as the flags."},
    {"GET /api/v1/instances/NAME/logs",
     "logs NAME -o json; ?run=, ?step=, ?attempt= as the flags."},
    {"GET /api/v1/engines", "engines -o json."},
    {"GET /api/v1/definitions", "definitions -o json."},
    {"POST /api/v1/instances/NAME/ACTION",
     "ACTION is trigger, cancel, pause, resume or retry, only on a server "
     "started with --allow-actions.  The body is a JSON object with "
     "Content-Type application/json (which no other site's form can "
     "send): {\"plan\", \"reason\", \"queue\"} for trigger, "
     "{\"reason\"} for cancel, {\"run\"} for retry (the latest failed "
     "run without it).  The same admission as the command, the same "
     "messages; the events record the actor \"web ADDRESS\"."},
};

/* ---- planctl-json(7) ----------------------------------------------------- */

/* What each status means, by planctl_status. */
static const struct {
    planctl_status status;
    const char *text;
} status_text[] = {
    {PLANCTL_STATUS_NEVER_RUN, "A plan with no run yet (status only)."},
    {PLANCTL_STATUS_QUEUED, "A run waiting behind the instance's active run "
                            "(trigger --queue)."},
    {PLANCTL_STATUS_PENDING,
     "Admitted, not started by an engine yet.  Active."},
    {PLANCTL_STATUS_IN_PROGRESS, "Running.  Active."},
    {PLANCTL_STATUS_PAUSED,
     "A run paused: running steps finish, nothing new starts.  Active."},
    {PLANCTL_STATUS_ERROR,
     "A step whose attempt failed and that will be tried again."},
    {PLANCTL_STATUS_COMPLETE, "Done.  Terminal."},
    {PLANCTL_STATUS_FATAL_ERROR,
     "Failed for good: a fatal failure, no attempt left, a timeout or a "
     "deadline.  Terminal."},
    {PLANCTL_STATUS_CANCELLED, "Cancelled.  Terminal."},
};

typedef struct jfield {
    const char *name, *text;
} jfield;

/* Field lists of the JSON documents, by hand; the CLI case docs_json
 * checks that every key the commands print is listed under its
 * document. */
static const jfield run_ref[] = {
    {"schema", "1"},
    {"run", "the id of the run the command admitted or acted on, or null "
            "when none was (set with nothing to run)"},
    {"dry_run", "delete only: true with --dry-run (nothing was deleted)"},
    {NULL, NULL}};
static const jfield validate_doc[] = {
    {"schema", "1"},
    {"valid", "true or false"},
    {"errors", "each problem: {path, line, type, message, hint}"},
    {"path", "where, such as plans.deploy.phases[0].steps[1].retry"},
    {"line", "the line of a YAML file it is on, or null (a JSON file, or "
             "the whole file)"},
    {"type", "Required value, Invalid type, Unsupported value, ..."},
    {"message", "what is wrong"},
    {"hint", "how to fix it (did you mean ...), or null"},
    {NULL, NULL}};
static const jfield apply_doc[] = {
    {"schema", "1"},
    {"name", "the definition's name"},
    {"version", "its version"},
    {"created", "false when the same version was registered already"},
    {NULL, NULL}};
static const jfield definitions_doc[] = {
    {"schema", "1"},
    {"definitions", "every registered version, each with the fields below"},
    {"name", "the definition's name"},
    {"version", "its version"},
    {"created_at", "when it was registered"},
    {"plans", "its plan names"},
    {"description", "metadata, null when the definition has none"},
    {"appVersion", "metadata, or null"},
    {"url", "metadata, or null"},
    {"maintainers", "metadata, [{name, email}], or null"},
    {"email", "a maintainer's email, or null"},
    {"upgradableFrom", "metadata, or null (any version may upgrade)"},
    {NULL, NULL}};
/* definitions NAME prints the definition itself: no fields of its own. */
static const jfield definition_doc[] = {{NULL, NULL}};
static const jfield instances_doc[] = {
    {"schema", "1"},
    {"instances", "each instance, by name"},
    {"name", "the instance's name; definition.name the definition's"},
    {"definition", "{name, version}"},
    {"version", "the definition's version"},
    {"status", "the status of its active or latest run, or NEVER_RUN"},
    {"active_run", "the active run's id, or null"},
    {"created_at", "when it was created"},
    {"deleting", "true once delete has begun"},
    {NULL, NULL}};
static const jfield status_doc[] = {
    {"schema", "1"},
    {"instance", "the instance's name"},
    {"definition", "{name, version}"},
    {"name", "of the definition, a plan, a phase or a step"},
    {"version", "the definition's version"},
    {"active_run", "the active run's id, or null"},
    {"queued", "the ids of the queued runs, in order"},
    {"plans", "every plan of the definition: {name, strategy, status, "
              "run}.  Each plan shows its active run when it has one, else "
              "its latest run: a run queued behind the active run of the "
              "same plan does not take its place (it is in queued, with "
              "every queued run); --run ID shows that run in its plan's "
              "place"},
    {"strategy", "serial or parallel, of a plan or a phase"},
    {"status", "of a plan (its shown run's), run, phase, step or attempt"},
    {"run", "the plan's active run when it has one, else its latest run "
            "(QUEUED when that is queued), or null: the fields below; in "
            "waiting, the id of the run that waits"},
    {"id", "the run's id"},
    {"uid", "the run's random uid"},
    {"plan", "the run's plan"},
    {"definition_version", "the definition version the run executes (a "
                           "retry: the retried run's)"},
    {"trigger", "what admitted it: create, set, upgrade, delete, trigger, "
                "retry"},
    {"reason", "the --reason given, or null"},
    {"retry_of", "the run this one retries, or null"},
    {"created_at", "when the run was admitted"},
    {"started_at", "when it (a phase, a step, an attempt) started, or null"},
    {"finished_at", "when it ended, or null"},
    {"duration_ms", "how long it ran, or null"},
    {"message", "the last message (why it failed), or null"},
    {"params", "the run's parameter snapshot: name to typed value, a "
               "secret as \"***\""},
    {"phases", "{name, strategy, status, started_at, finished_at, message, "
               "steps}"},
    {"steps", "{name, status, attempt, max_attempts, next_attempt_at, "
              "started_at, finished_at, message}"},
    {"attempt", "the step's current attempt number"},
    {"max_attempts", "its retry attempts"},
    {"next_attempt_at", "when the next attempt starts (an ERROR step), or "
                        "null"},
    {"attempts", "with --run ID: each attempt {number, status, started_at, "
                 "finished_at, exit_code, message, outputs}"},
    {"number", "the attempt's number"},
    {"exit_code", "a shell task's exit status, or null"},
    {"output", "with --run ID: the last part of what the attempt's tasks "
               "printed (see logs), or null until it ended"},
    {"outputs", "with --run ID: the step's or attempt's outputs, KEY to "
                "value, a secret as \"***\""},
    {"parameters", "the instance's parameters in definition order (with "
                   "--run ID, the run's snapshot), each {name, value, "
                   "default, secret}; null in replay"},
    {"value", "the parameter's value (typed), \"***\" for a secret, or "
              "null when it has none"},
    {"default", "true when the value is the definition's default"},
    {"secret", "true for a parameter marked secret"},
    {"engine", "the engine holding the database, {pid, host, since, "
               "last_seen, alive}, or null (always null in replay); on "
               "PostgreSQL, where several engines share the database, the "
               "one that holds the active run (else one alive), with also "
               "{name, holds, age_ms, runs, capacity, ttl_ms, id}"},
    {"waiting",
     "why the active run waits, as the engine that holds it "
     "recorded it (on PostgreSQL, for a run no engine holds, as the "
     "engines' rows say): {run, cause, kind, concurrency, since}, or "
     "null when it does not wait or no live engine holds the database "
     "(always null in replay)"},
    {"cause", "executor: for an engine with an executor of task kind kind, "
              "which the engine that holds it has not; slot: for a free slot "
              "of the engine's concurrency, every one being taken by a "
              "running step; capacity (PostgreSQL): no engine holds the run "
              "and every engine holds as many active runs as its --capacity, "
              "so none can claim it (kind, concurrency and since null)"},
    {"kind", "with cause executor, the task kind; else null"},
    {"concurrency", "with cause slot, how many steps the engine runs at "
                    "once (planctl run --concurrency); else null"},
    {"pid", "the engine's process id"},
    {"host", "the host it runs on"},
    {"since", "when it took the database; in waiting, since when the run "
              "waits (null with cause capacity)"},
    {"last_seen", "its last heartbeat"},
    {"alive", "false once its heartbeat is older than 15 s (its TTL on "
              "PostgreSQL) or, on this host, its process is gone"},
    {"name", "PostgreSQL: the engine's name (planctl run --name)"},
    {"holds", "PostgreSQL: true when this engine holds the active run"},
    {"age_ms", "PostgreSQL: how old its last heartbeat is, on the "
               "database's clock"},
    {"runs", "PostgreSQL: how many active runs the engine holds"},
    {"capacity", "PostgreSQL: its --capacity, or null for no limit"},
    {"ttl_ms", "PostgreSQL: its lease's TTL"},
    {"token", "PostgreSQL: its lease's fencing token, or null"},
    {NULL, NULL}};
static const jfield logs_doc[] = {
    {"schema", "1"},
    {"instance", "the instance's name"},
    {"run", "the run shown: {id, plan, status}"},
    {"id", "the run's id"},
    {"plan", "the run's plan"},
    {"status", "of the run or an attempt"},
    {"step", "the --step asked for, {phase, name, status}, or null"},
    {"name", "the step's name"},
    {"attempts", "in definition order (phase, step, attempt), each {run, "
                 "phase, step, attempt, status, exit_code, started_at, "
                 "finished_at, message, output, output_bytes}"},
    {"phase", "the attempt's phase"},
    {"attempt", "the attempt's number"},
    {"exit_code", "a shell task's exit status, or null"},
    {"started_at", "when the attempt started, or null"},
    {"finished_at", "when it ended, or null"},
    {"message", "its message (why it failed), or null"},
    {"output", "the last part of what its tasks printed (--tail: the last "
               "lines of it), or null"},
    {"output_bytes", "how many bytes its tasks printed in all, kept or not, "
                     "or null (an imported attempt)"},
    {NULL, NULL}};
static const jfield engines_doc[] = {
    {"schema", "1"},
    {"engines", "the engines holding the database, each {pid, host, since, "
                "last_seen, alive, token} as in status, and token the "
                "lease's fencing token; [] when none"},
    {"pid", NULL},
    {"host", NULL},
    {"since", NULL},
    {"last_seen", NULL},
    {"alive", NULL},
    {"token", "the lease's fencing token, or null (PostgreSQL)"},
    {"name", NULL},
    {"holds", NULL},
    {"age_ms", NULL},
    {"runs", "PostgreSQL: how many active runs it holds"},
    {"capacity", "PostgreSQL: its --capacity, or null for no limit"},
    {"ttl_ms", "PostgreSQL: its lease's TTL"},
    {"id", "PostgreSQL: its lease's id"},
    {NULL, NULL}};
static const jfield history_doc[] = {
    {"schema", "1"},
    {"instance", "the instance's name"},
    {"runs", "newest first, each {id, uid, plan, status, trigger, reason, "
             "retry_of, created_at, started_at, finished_at, duration_ms, "
             "message}, as in status"},
    {"id", NULL},
    {"uid", NULL},
    {"plan", NULL},
    {"definition_version", NULL},
    {"status", NULL},
    {"trigger", NULL},
    {"reason", NULL},
    {"retry_of", NULL},
    {"created_at", NULL},
    {"started_at", NULL},
    {"finished_at", NULL},
    {"duration_ms", NULL},
    {"message", NULL},
    {NULL, NULL}};
static const jfield events_doc[] = {
    {"schema", "1 (not in -o jsonl, which prints one event a line)"},
    {"events", "oldest first, each with the fields below"},
    {"last_seq", "the last event's seq, for --since"},
    {"seq", "the event's number, increasing over the database"},
    {"at", "when"},
    {"instance", "the instance's name, or null (an engine's event)"},
    {"run", "the run's id, or null"},
    {"entity", "run, phase, step, instance or engine"},
    {"phase", "the phase's name, or null"},
    {"step", "the step's name, or null"},
    {"attempt", "the step's attempt, or null"},
    {"from", "the status before, or null"},
    {"to", "the status after, or null"},
    {"actor", "who: user (a command), web (the page and the API, or the "
              "user a proxy in front of them names), engine, or planctl "
              "(the rows an admission made); an embedder names its own"},
    {"message", "what happened"},
    {"data", "more, as an object, or null; what replay rebuilds from. Its "
             "fields depend on the event, as below; secret parameters and "
             "secret task outputs show as \"***\", as in status"},
    {"uid", "a run's creation: the run's uid"},
    {"definition", "a run's or an instance's creation, set or upgrade: "
                   "{name, version} of the definition"},
    {"name", "a phase's or step's creation: its name; an engine's event: "
             "the engine's name"},
    {"version", "of definition"},
    {"plan", "a run's creation: its plan"},
    {"trigger", "a run's creation: what admitted it: create, set, "
                "upgrade, delete, manual (trigger) or retry"},
    {"reason", "a run's creation: the reason given, or null"},
    {"retry_of", "a run's creation: the run it retries, or null"},
    {"params", "a run's creation: its parameters"},
    {"index", "a phase's or step's creation: its place in the plan, from 0"},
    {"strategy", "a phase's creation: serial or parallel"},
    {"max_attempts", "a step's creation: its retry attempts"},
    {"started_at", "a phase or step carried over by a retry: when it "
                   "started (epoch milliseconds)"},
    {"finished_at", "the same: when it finished"},
    {"outputs", "a step's change or a carried step: the task outputs"},
    {"deadline_at", "a step that starts with a timeout: when it times out "
                    "(epoch milliseconds)"},
    {"next_attempt_at", "a step waiting to be tried again: when (epoch "
                        "milliseconds)"},
    {"exit_code", "a try that ended: its exit code"},
    {"output", "a try that ended: the last of its output"},
    {"grant_attempt", "a step given one more try by a retry"},
    {"clock_shift_ms", "the wall clock jumped: by how much"},
    {"host", "an engine's start: its host"},
    {"pid", "an engine's start: its process id"},
    {"ttl_ms", "an engine's start: its TTL"},
    {"capacity", "an engine's start: its --capacity, or 0"},
    {"outcome", "preflight checks that ran for an admission: their report, "
                "as create -o json prints it (outcome, checks, warnings)"},
    {"checks", "of the report: each check's {name, status, message}"},
    {"status", "of a check: passed, failed, error or skipped"},
    {"warnings", "of the report: the checks skipped"},
    {NULL, NULL}};
static const jfield replay_doc[] = {
    {"schema", "1"},
    {"until_seq", "the last event applied"},
    {"instances", "each instance as of then: {instance, status, history}"},
    {"instance", "the instance's name"},
    {"status", "its status document as of then (see status)"},
    {"history", "its history document as of then (see history)"},
    {NULL, NULL}};
static const jfield verify_doc[] = {
    {"schema", "1"},
    {"ok", "true (a difference exits 1 with no document)"},
    {"summary", "what was compared"},
    {NULL, NULL}};
static const jfield import_doc[] = {
    {"schema", "1"},
    {"instance", "the instance imported, or null for several"},
    {"instances", "how many instances"},
    {"runs", "how many runs"},
    {"events", "how many events"},
    {"paused", "how many active runs were imported PAUSED"},
    {NULL, NULL}};
static const jfield gc_doc[] = {
    {"schema", "1"},
    {"dry_run", "true with --dry-run: nothing was removed"},
    {"keep_last", "the --keep-last given, or null"},
    {"removed", "how many runs were (or would be) removed"},
    {"runs", "each removed run: {instance, id, plan, status, finished_at}"},
    {"instance", "the run's instance"},
    {"id", "the run's id"},
    {"plan", "its plan"},
    {"status", "its status"},
    {"finished_at", "when it ended"},
    {NULL, NULL}};
static const jfield preflight_doc[] = {
    {"schema", "1"},
    {"plan", "the plan whose checks ran"},
    {"outcome", "failed, or error when any check could not run"},
    {"checks", "every check in order: {name, status, message}"},
    {"name", "the check's name"},
    {"status", "passed, failed, error or skipped"},
    {"message", "its cause, or null"},
    {"warnings", "the checks skipped"},
    {NULL, NULL}};
static const jfield wait_doc[] = {
    {"schema", "1"},
    {"run", "the run as it ended: its object of status (id, plan, status, "
            "phases...)"},
    {NULL, NULL}};
static const jfield explain_doc[] = {
    {"schema", "1"},
    {"name", "the field's name (\"\" for the definition)"},
    {"path", "its path"},
    {"title", "what an object is, or null for a field of no object"},
    {"type", "string, integer, duration, []object, map[string]object, ..."},
    {"required", "true or false"},
    {"default", "as JSON text, or words in parentheses, or null"},
    {"max", "the most entries of a list or map, or null"},
    {"description", "what it is"},
    {"node", "the path of the object it holds, or null"},
    {"fields", "the object's fields, each alike; null for a field of no "
               "object"},
    {NULL, NULL}};
static const jfield bundle_doc[] = {
    {"format", "\"planctl-bundle\""},
    {"version", "1; and a definition's version"},
    {"exported_at", "when"},
    {"instance", "{id, name, params, last_applied, deleting, created_at, "
                 "updated_at, definition, withheld}"},
    {"withheld", "the secret parameters whose values the bundle leaves out "
                 "(null in their place), sorted; [] with --include-secrets. "
                 "import needs them again: -p NAME=VALUE"},
    {"definitions", "each definition version named: {id, name, version, "
                    "body, created_at}"},
    {"runs", "the rows of the tables runs, phases, steps, attempts and "
             "events, every column under its name, times in epoch "
             "milliseconds"},
    {"phases", NULL},
    {"steps", NULL},
    {"attempts", NULL},
    {"events", NULL},
    {"actor", NULL},
    {"at", NULL},
    {"attempt", NULL},
    {"body", NULL},
    {"created_at", NULL},
    {"data", NULL},
    {"deadline_at", NULL},
    {"definition", NULL},
    {"definition_id", NULL},
    {"deleting", NULL},
    {"entity", NULL},
    {"exit_code", NULL},
    {"finished_at", NULL},
    {"from_status", NULL},
    {"id", NULL},
    {"idx", NULL},
    {"instance_id", NULL},
    {"last_applied", NULL},
    {"max_attempts", NULL},
    {"message", NULL},
    {"name", NULL},
    {"next_attempt_at", NULL},
    {"number", NULL},
    {"output", NULL},
    {"output_bytes", NULL},
    {"outputs", NULL},
    {"params", NULL},
    {"phase_id", NULL},
    {"plan", NULL},
    {"reason", NULL},
    {"retry_of", NULL},
    {"run_id", NULL},
    {"seq", NULL},
    {"started_at", NULL},
    {"status", NULL},
    {"step_id", NULL},
    {"strategy", NULL},
    {"task_index", NULL},
    {"to_status", NULL},
    {"trigger", NULL},
    {"uid", NULL},
    {"updated_at", NULL},
    {NULL, NULL}};

static const struct {
    const char *title;    /* the section */
    const char *commands; /* who prints it */
    const jfield *fields;
    const char *other; /* the text of a field listed without one */
    const char *shape; /* its types and nesting, for __schema (below) */
} json_docs[] = {
    {"validate", "validate -o json", validate_doc, NULL,
     "{schema:1 valid:b errors:[{path:s line:i? type:s message:s "
     "hint:s?}]}"},
    {"apply", "apply -o json", apply_doc, NULL,
     "{schema:1 name:s version:s created:b}"},
    {"definitions", "definitions -o json", definitions_doc, NULL,
     "{schema:1 definitions:[{name:s version:s created_at:t plans:[s] "
     "description:s? appVersion:s? url:s? maintainers:[{name:s "
     "email:s?}]? upgradableFrom:[s]?}]}"},
    {"definition",
     "definitions NAME -o json: the definition version itself, as "
     "registered, with its keys sorted, the fields planctl-definition(5) "
     "describes and no schema",
     definition_doc, NULL, "o"},
    {"instances", "instances -o json", instances_doc, NULL,
     "{schema:1 instances:[{name:s definition:{name:s version:s} "
     "status:s active_run:i? deleting:b created_at:t}]}"},
    {"run",
     "create, set, upgrade, delete, trigger, retry, cancel, pause and "
     "resume with -o json",
     run_ref, NULL, "{schema:1 run:i? ~dry_run:b}"},
    {"preflight",
     "a command that admits a run, -o json, when preflight "
     "checks refuse it (on stdout, beside the error on stderr)",
     preflight_doc, NULL,
     "{schema:1 plan:s outcome:s checks:[{name:s status:s message:s?}] "
     "warnings:[s]}"},
    {"wait", "trigger and retry with --wait, -o json", wait_doc, NULL,
     "{schema:1 run:@status.plans.run}"},
    {"status",
     "status -o json (--run ID adds attempts and outputs; --watch prints "
     "one on every change)",
     status_doc, NULL,
     "{schema:1 instance:s definition:{name:s version:s} active_run:i? "
     "queued:[i] engine:{pid:i host:s since:t last_seen:t alive:b "
     "~name:s ~holds:b ~age_ms:i ~runs:i ~capacity:i? ~ttl_ms:i ~id:i "
     "~token:i?}? "
     "waiting:{run:i cause:s kind:s? concurrency:i? since:t?}? "
     "parameters:[{name:s value:* default:b secret:b}]? plans:[{name:s "
     "strategy:s status:s run:{id:i uid:s plan:s status:s trigger:s "
     "reason:s? retry_of:i? created_at:t started_at:t? finished_at:t? "
     "duration_ms:i? message:s? definition_version:s params:<*> "
     "phases:[{name:s strategy:s status:s started_at:t? finished_at:t? "
     "message:s? steps:[{name:s status:s attempt:i max_attempts:i "
     "next_attempt_at:t? started_at:t? finished_at:t? message:s? "
     "~outputs:<*>? ~attempts:[{number:i status:s started_at:t? "
     "finished_at:t? exit_code:i? message:s? output:s? "
     "outputs:<*>?}]}]}]}?}]}"},
    {"logs", "logs -o json", logs_doc, NULL,
     "{schema:1 instance:s run:{id:i plan:s status:s} "
     "step:{phase:s name:s status:s}? "
     "attempts:[{run:i phase:s step:s attempt:i status:s exit_code:i? "
     "started_at:t? finished_at:t? message:s? output:s? "
     "output_bytes:i?}]}"},
    {"engines", "engines -o json", engines_doc, NULL,
     "{schema:1 engines:[{pid:i host:s since:t last_seen:t alive:b "
     "token:i? ~name:s ~holds:b ~age_ms:i ~runs:i ~capacity:i? ~ttl_ms:i "
     "~id:i}]}"},
    {"history", "history -o json", history_doc, NULL,
     "{schema:1 instance:s runs:[{id:i uid:s plan:s status:s trigger:s "
     "reason:s? retry_of:i? created_at:t started_at:t? finished_at:t? "
     "duration_ms:i? message:s? definition_version:s}]}"},
    {"events", "events -o json, events -o jsonl (one event a line)", events_doc,
     NULL,
     "{schema:1 events:[{seq:i at:t instance:s? run:i? entity:s phase:s? "
     "step:s? attempt:i? from:s? to:s? actor:s message:s? data:{~uid:s "
     "~definition:{name:s version:s} ~name:s ~plan:s ~trigger:s ~reason:s? "
     "~retry_of:i? ~params:<*> ~index:i ~strategy:s ~max_attempts:i "
     "~started_at:i ~finished_at:i ~outputs:<*> ~deadline_at:i "
     "~next_attempt_at:i ~exit_code:i ~output:s ~grant_attempt:i "
     "~clock_shift_ms:i ~host:s ~pid:i ~ttl_ms:i ~capacity:i ~schema:1 "
     "~outcome:s ~checks:[{name:s status:s message:s?}] ~warnings:[s]}?}] "
     "last_seq:i?}"},
    {"replay", "replay -o json", replay_doc, NULL,
     "{schema:1 until_seq:i instances:[{instance:s status:@status "
     "history:@history}]}"},
    {"verify", "verify -o json", verify_doc, NULL, "{schema:1 ok:b summary:s}"},
    {"import", "import -o json", import_doc, NULL,
     "{schema:1 instance:s? instances:[{instance:s runs:i events:i "
     "paused:i?}] runs:i events:i}"},
    {"gc", "gc -o json", gc_doc, NULL,
     "{schema:1 dry_run:b keep_last:i? removed:i runs:[{instance:s id:i "
     "plan:s status:s finished_at:t?}]}"},
    {"explain", "explain -o json", explain_doc, NULL,
     "{schema:1 name:s path:s title:s? type:s required:b default:s? "
     "max:i? description:s fields:[{name:s path:s type:s required:b "
     "default:s? max:i? description:s node:s?}]?}"},
    {"bundle", "export (the file), gc --archive (each file)", bundle_doc,
     "A table's column, or a field of instance or definitions.",
     "{format:s version:1 exported_at:t instance:{id:i name:s params:<*> "
     "last_applied:<*>? deleting:b created_at:i updated_at:i "
     "definition:{name:s version:s} withheld:[s]} definitions:[{id:i "
     "name:s version:s body:s created_at:i}] runs:[{id:i uid:s "
     "instance_id:i definition_id:i plan:s status:s trigger:s reason:s? "
     "retry_of:i? params:s created_at:i started_at:i? finished_at:i? "
     "deadline_at:i? message:s?}] phases:[{id:i run_id:i idx:i name:s "
     "strategy:s status:s started_at:i? finished_at:i? message:s?}] "
     "steps:[{id:i run_id:i phase_id:i idx:i name:s status:s attempt:i "
     "max_attempts:i task_index:i next_attempt_at:i? deadline_at:i? "
     "started_at:i? finished_at:i? message:s? outputs:s?}] "
     "attempts:[{id:i step_id:i number:i status:s started_at:i? "
     "finished_at:i? exit_code:i? message:s? output:s? outputs:s? "
     "output_bytes:i?}] events:[{seq:i at:i instance_id:i run_id:i? "
     "phase_id:i? step_id:i? entity:s from_status:s? to_status:s? "
     "attempt:i? message:s? actor:s data:s?}]}"},
};

static int print_man_json(FILE *f, const cli_command *const *cmds, size_t ncmds)
{
    (void)cmds;
    (void)ncmds;
    man_head(f, "planctl-json.7", "PLANCTL-JSON", 7, "Miscellaneous",
             "planctl-json \\- statuses, transitions, exit codes and JSON "
             "documents of planctl");
    fputs(".SH DESCRIPTION\n", f);
    man_text(f, "What scripts may rely on: the statuses of runs, phases and "
                "steps and the transitions between them, the exit codes of "
                "planctl(1), and the JSON documents its commands print with "
                "-o json.  The statuses, the transitions and the exit codes "
                "are generated from the tables planctl runs on.");
    fputs(".SH STATUSES\n", f);
    for (size_t i = 0; i < sizeof(status_text) / sizeof(status_text[0]); i++) {
        fprintf(f, ".TP\n\\fB%s\\fR\n",
                planctl_status_name(status_text[i].status));
        man_text(f, status_text[i].text);
    }
    fputs(".SH TRANSITIONS\n", f);
    man_text(f, "Every status change is one of these, checked by the "
                "database; (new) is a row being created.  No edge leaves a "
                "terminal status.");
    for (int e = PLANCTL_ENTITY_RUN; e <= PLANCTL_ENTITY_STEP; e++) {
        fprintf(f, ".TP\n\\fB%s\\fR\n", pctl_entity_name((planctl_entity)e));
        for (int i = 0; i < pctl_edges_count; i++) {
            const pctl_edge *ed = &pctl_edges[i];
            if ((int)ed->entity != e)
                continue;
            fprintf(f, "%s \\(-> %s\n.br\n",
                    ed->from == PCTL_NEW ? "(new)"
                                         : planctl_status_name(ed->from),
                    planctl_status_name(ed->to));
        }
    }
    fputs(".SH EXIT STATUS\n", f);
    man_exit_codes(f);
    fputs(".SH JSON DOCUMENTS\n", f);
    man_text(f,
             "Each document has a JSON Schema (draft 2020-12), made "
             "from the same tables as this page and installed as "
             "share/planctl/schema/NAME.json under planctl's installation "
             "prefix (/usr/local by default), NAME being the title of its "
             "section below (status.json, events.json, ...; events.json "
             "describes a line of -o jsonl as its items of events).  "
             "Every object in a schema takes only the fields listed here, "
             "with their types, and null where a field may be null; the "
             "objects of user data (params, outputs, data) and the "
             "definition take any keys.  A planctl that adds fields installs "
             "schemas that have them: validate a document against the "
             "schemas of the planctl that printed it.");
    fputs(".PP\n", f);
    man_text(f, "Every document has \"schema\": 1 (a bundle: \"format\" and "
                "\"version\"), which changes only when a document changes "
                "incompatibly; new fields may be added.  Times are RFC 3339 "
                "in UTC with milliseconds (a bundle's are epoch "
                "milliseconds), absent values are null, never left out.  "
                "The fields of each document, nested objects included:");
    for (size_t i = 0; i < sizeof(json_docs) / sizeof(json_docs[0]); i++) {
        fputs(".SS ", f);
        cli_roff(f, json_docs[i].title, 0);
        fputs("\n", f);
        cli_roff(f, "Printed by ", 0);
        cli_roff(f, json_docs[i].commands, 0);
        fputs(".\n", f);
        for (const jfield *jf = json_docs[i].fields; jf->name; jf++) {
            man_tagged(f, jf->name,
                       jf->text             ? jf->text
                       : json_docs[i].other ? json_docs[i].other
                                            : "As in status.");
        }
    }
    fputs(".SH HTTP API\n", f);
    man_text(f, "planctl serve (and planctl run --ui) answers the same "
                "documents over HTTP under /api/v1, with Content-Type "
                "application/json; each equals what the command prints with "
                "-o json:");
    for (size_t i = 0; i < sizeof(api_paths) / sizeof(api_paths[0]); i++) {
        man_tagged(f, api_paths[i].path, api_paths[i].text);
    }
    man_text(f, "An error is {\"schema\":1, \"error\":{\"code\", "
                "\"message\"}} with code the library's error name "
                "(PLANCTL_ENOTFOUND, PLANCTL_ECONFLICT, ...), every code "
                "starting with PLANCTL_, and the message the command would "
                "print, in the API's words where the command's names a flag "
                "(set \"queue\": true, where the command says --queue); the "
                "HTTP "
                "status is 400 for invalid input, 401 without the token (code "
                "PLANCTL_EUNAUTHORIZED), 403 for an action the server does not "
                "allow (code PLANCTL_EFORBIDDEN; these two only the server "
                "gives), 404 not found, 409 a conflict with the current "
                "state, 415 a body of the wrong type, 503 a busy database.  "
                "An action answers {\"schema\":1, \"instance\", \"action\", "
                "\"run\", \"queue_position\"}, run being the run it "
                "admitted or acted on, queue_position that run's place in "
                "the queue (1 starts next) when a trigger queued it, else "
                "null.");
    man_written(f, "planctl-json.7");
    fputs(".SH SEE ALSO\n"
          ".BR planctl (1),\n"
          ".BR planctl-definition (5),\n"
          ".BR planctl-engine (7),\n"
          ".BR planctl (3)\n",
          f);
    return CLI_EXIT_OK;
}

/* ---- JSON Schema of each document: `planctl __schema DIR` ----------------
 *
 * Each document's shape (the last column of json_docs) gives its types and
 * nesting in a small notation; the field names in it are those of the
 * document's table, whose texts become the descriptions, so the schemas
 * and planctl-json(7) come from one table.  A key of a shape its table
 * does not list is left out of the schema (whose objects take no other
 * key, so a document holding it does not validate), and a field a table
 * lists that no shape uses is refused here, so that neither side can drift.
 *
 *   s string   i integer   b boolean   t time (RFC 3339 string)
 *   * any value   o any object   1 the constant 1
 *   {k:T ...} an object of exactly these keys (~k: a key that may be absent)
 *   [T] an array of T   <T> an object of any keys with values T
 *   @doc.key.key the value at that path of another document's shape
 *   T? T or null
 */
typedef struct shape_ctx {
    size_t doc;      /* the json_docs entry being parsed */
    unsigned *used;  /* bitmap of its table's fields a shape names */
    const char *bad; /* why parsing failed */
} shape_ctx;

/* The first field of doc's table named name, or NULL; every field of that
 * name (a table may list one twice, for two objects) is marked used. */
static const jfield *shape_field(shape_ctx *c, const char *name)
{
    const jfield *first = NULL;
    size_t i = 0;

    for (const jfield *jf = json_docs[c->doc].fields; jf->name; jf++, i++)
        if (strcmp(jf->name, name) == 0) {
            c->used[i / 32] |= 1u << (i % 32);
            if (!first)
                first = jf;
        }
    return first;
}

static json_t *shape_parse(shape_ctx *c, const char **p);

/* The value of shape doc at the path of keys (dot-separated) from *p;
 * arrays and nullable values are gone through. */
static json_t *shape_ref(shape_ctx *c, const char **p)
{
    const char *s = *p, *e = s;
    size_t doc;
    json_t *v;

    while (*e && *e != '.' && *e != ' ' && *e != '}' && *e != ']' &&
           *e != '>' && *e != '?')
        e++;
    for (doc = 0; doc < sizeof(json_docs) / sizeof(json_docs[0]); doc++)
        if (strlen(json_docs[doc].title) == (size_t)(e - s) &&
            strncmp(json_docs[doc].title, s, (size_t)(e - s)) == 0)
            break;
    if (doc == sizeof(json_docs) / sizeof(json_docs[0])) {
        c->bad = "a reference names no document";
        return NULL;
    }
    {
        /* The referred document's fields are checked against its own
         * table, as when it is written itself. */
        shape_ctx rc = {doc, NULL, NULL};
        unsigned scratch[4] = {0};
        const char *q = json_docs[doc].shape;

        rc.used = scratch;
        v = shape_parse(&rc, &q);
        if (!v) {
            c->bad = rc.bad;
            return NULL;
        }
    }
    while (*e == '.') {
        const char *k = ++e;
        json_t *in = v, *props;

        while (*e && *e != '.' && *e != ' ' && *e != '}' && *e != ']' &&
               *e != '>' && *e != '?')
            e++;
        while (json_object_get(in, "items"))
            in = json_object_get(in, "items");
        props = json_object_get(in, "properties");
        {
            char key[64];
            json_t *next;

            snprintf(key, sizeof(key), "%.*s", (int)(e - k), k);
            next = props ? json_object_get(props, key) : NULL;
            if (!next) {
                json_decref(v);
                c->bad = "a reference's path names no key";
                return NULL;
            }
            json_incref(next);
            json_decref(v);
            v = next;
        }
    }
    *p = e;
    return v;
}

/* Makes schema v also accept null. */
static void shape_nullable(json_t *v)
{
    json_t *t = json_object_get(v, "type");

    if (json_is_string(t)) {
        json_t *both = json_pack("[s,s]", json_string_value(t), "null");
        json_object_set_new(v, "type", both);
    } else if (json_is_array(t)) {
        json_array_append_new(t, json_string("null"));
    } else {
        json_t *any = json_deep_copy(v);
        json_object_clear(v);
        json_object_set_new(v, "anyOf",
                            json_pack("[o,{s:s}]", any, "type", "null"));
    }
}

static json_t *shape_parse(shape_ctx *c, const char **p)
{
    const char *s = *p;
    json_t *v = NULL;

    switch (*s++) {
    case 's':
        v = json_pack("{s:s}", "type", "string");
        break;
    case 't':
        v = json_pack("{s:s,s:s}", "type", "string", "format", "date-time");
        break;
    case 'i':
        v = json_pack("{s:s}", "type", "integer");
        break;
    case 'b':
        v = json_pack("{s:s}", "type", "boolean");
        break;
    case 'o':
        v = json_pack("{s:s}", "type", "object");
        break;
    case '1':
        v = json_pack("{s:i}", "const", 1);
        break;
    case '*':
        v = json_object();
        break;
    case '@':
        v = shape_ref(c, &s);
        break;
    case '[':
    case '<': {
        char close = s[-1] == '[' ? ']' : '>';
        json_t *item = shape_parse(c, &s);

        if (!item)
            return NULL;
        if (*s++ != close) {
            json_decref(item);
            c->bad = "an unclosed [ or <";
            return NULL;
        }
        if (close == ']')
            v = json_pack("{s:s,s:o}", "type", "array", "items", item);
        else
            v = json_pack("{s:s,s:o}", "type", "object", "additionalProperties",
                          item);
        break;
    }
    case '{': {
        json_t *props = json_object(), *req = json_array();

        while (*s && *s != '}') {
            int optional = 0;
            const char *k;
            const jfield *jf;
            json_t *fv;
            char key[64];

            while (*s == ' ')
                s++;
            if (*s == '~')
                optional = 1, s++;
            k = s;
            while (*s && *s != ':')
                s++;
            if (*s++ != ':' || (size_t)(s - k) > sizeof(key)) {
                c->bad = "a key without ':'";
                json_decref(props), json_decref(req);
                return NULL;
            }
            snprintf(key, sizeof(key), "%.*s", (int)(s - 1 - k), k);
            fv = shape_parse(c, &s);
            if (!fv) {
                json_decref(props), json_decref(req);
                return NULL;
            }
            jf = shape_field(c, key);
            if (!jf) {
                /* Not in the table, so not in planctl-json(7): left out. */
                json_decref(fv);
            } else {
                if (jf->text && !json_object_get(fv, "description") &&
                    strcmp(key, "schema") != 0)
                    json_object_set_new(fv, "description",
                                        json_string(jf->text));
                json_object_set_new(props, key, fv);
                if (!optional)
                    json_array_append_new(req, json_string(key));
            }
            while (*s == ' ')
                s++;
        }
        if (*s++ != '}') {
            c->bad = "an unclosed {";
            json_decref(props), json_decref(req);
            return NULL;
        }
        v = json_pack("{s:s,s:o,s:o,s:b}", "type", "object", "properties",
                      props, "required", req, "additionalProperties", 0);
        break;
    }
    default:
        c->bad = "an unknown type letter";
        return NULL;
    }
    if (v && *s == '?') {
        shape_nullable(v);
        s++;
    }
    *p = s;
    return v;
}

/* Writes DIR/NAME.json for every document (DIR made when it is not
 * there); 0, or an exit code. */
static int print_schemas(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        cli_errorf("__schema: cannot create directory %s: %s; give a "
                   "directory whose parent exists",
                   dir, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    for (size_t i = 0; i < sizeof(json_docs) / sizeof(json_docs[0]); i++) {
        unsigned used[4] = {0};
        shape_ctx c = {i, used, NULL};
        const char *p = json_docs[i].shape;
        json_t *body = shape_parse(&c, &p), *doc;
        char path[4096], title[256], id[256];
        size_t index = 0;

        if (body && *p) {
            json_decref(body);
            body = NULL;
            c.bad = "text after the shape";
        }
        if (!body) {
            cli_errorf("__schema: the shape of document %s is not valid: %s "
                       "(src/cli/doc/doc.c)",
                       json_docs[i].title, c.bad);
            return CLI_EXIT_ERROR;
        }
        for (const jfield *jf = json_docs[i].fields; jf->name; jf++, index++)
            if (!(used[index / 32] & (1u << (index % 32)))) {
                json_decref(body);
                cli_errorf("__schema: field %s of document %s is in no place "
                           "of its shape; add it there (src/cli/doc/doc.c)",
                           jf->name, json_docs[i].title);
                return CLI_EXIT_ERROR;
            }
        snprintf(title, sizeof(title), "%s (planctl-json(7))",
                 json_docs[i].title);
        snprintf(id, sizeof(id), "%s.json", json_docs[i].title);
        doc =
            json_pack("{s:s,s:s,s:s,s:s}", "$schema",
                      "https://json-schema.org/draft/2020-12/schema", "$id", id,
                      "title", title, "description", json_docs[i].commands);
        json_object_update(doc, body);
        json_decref(body);
        snprintf(path, sizeof(path), "%s/%s.json", dir, json_docs[i].title);
        if (json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) !=
            0) {
            json_decref(doc);
            cli_errorf("__schema: cannot write %s; check that directory %s "
                       "exists and is writable",
                       path, dir);
            return CLI_EXIT_ERROR;
        }
        json_decref(doc);
    }
    return CLI_EXIT_OK;
}

/* ---- the written pages: planctl(3), planctl-engine(7) -------------------- */

static int print_man_api(FILE *f, const cli_command *const *cmds, size_t ncmds)
{
    (void)cmds, (void)ncmds;
    man_head(f, "planctl.3", "PLANCTL", 3, "Library Functions",
             "planctl \\- embed the plan execution engine in a C program");
    man_written(f, "planctl.3");
    return CLI_EXIT_OK;
}

static int print_man_engine(FILE *f, const cli_command *const *cmds,
                            size_t ncmds)
{
    (void)cmds, (void)ncmds;
    man_head(f, "planctl-engine.7", "PLANCTL-ENGINE", 7, "Miscellaneous",
             "planctl-engine \\- operating planctl engines: SQLite and "
             "PostgreSQL, fleets, metrics, logs, the web page, debugging");
    man_written(f, "planctl-engine.7");
    return CLI_EXIT_OK;
}

/* ---- dispatch ------------------------------------------------------------ */

int cli_doc_command(int argc, char **argv, const cli_command *const *cmds,
                    size_t ncmds)
{
    static const struct {
        const char *page;
        int (*print)(FILE *, const cli_command *const *, size_t);
    } pages[] = {{"planctl.1", print_man},
                 {"planctl-definition.5", print_man_definition},
                 {"planctl-json.7", print_man_json},
                 {"planctl.3", print_man_api},
                 {"planctl-engine.7", print_man_engine}};

    if (argc < 2)
        return -1;
    if (strcmp(argv[1], "__man") == 0) {
        /* `__man` alone is planctl.1; `__man PAGE` any page. */
        for (size_t i = 0; argc == 3 && i < sizeof(pages) / sizeof(pages[0]);
             i++)
            if (strcmp(argv[2], pages[i].page) == 0)
                return pages[i].print(stdout, cmds, ncmds);
        if (argc == 2)
            return print_man(stdout, cmds, ncmds);
        cli_errorf("__man takes no arguments, or one of planctl.1, "
                   "planctl-definition.5, planctl-json.7, planctl.3, "
                   "planctl-engine.7");
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "__schema") == 0) {
        /* `__schema DIR`: the JSON Schema of every document, DIR/NAME.json. */
        if (argc != 3) {
            cli_errorf("__schema takes one argument: the directory to write "
                       "the schemas to");
            return CLI_EXIT_USAGE;
        }
        return print_schemas(argv[2]);
    }
    return -1;
}
