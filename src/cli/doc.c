/*
 * doc.c - the man page and the bash completion script, printed by the hidden
 * commands `planctl __man` and `planctl __bash-completion` from the command
 * table and the flag tables the help and the parser use, so that none of the
 * three can drift from what planctl accepts.
 *
 * The build runs both and installs their output (CMakeLists.txt); nothing
 * generated here is committed.
 */
#include "cli.h"

#include <ctype.h>
#include <string.h>

/* ---- roff ---------------------------------------------------------------- */

/* Whether the word starting at s (up to a space, or up to a space outside
 * brackets in a usage line) holds a hyphen. */
static int hyphen_ahead(const char *s, int usage)
{
    for (int depth = 0; *s && *s != '\n' && (*s != ' ' || depth > 0); s++) {
        if (*s == '-')
            return 1;
        if (usage && *s == '[')
            depth++;
        else if (usage && *s == ']' && depth > 0)
            depth--;
    }
    return 0;
}

/*
 * Writes s as roff text: backslashes and hyphens escaped (a hyphen in an
 * option must stay an ASCII minus when copied from the page), and a line
 * that would start with a control character ('.' or '\'') guarded by \&.
 * A word holding a hyphen (a flag) is never hyphenated.  An empty
 * line becomes a paragraph break.  usage: s is a usage line or a
 * metavariable, whose runs of capitals (NAME, K=V, D[@V]) are set in
 * italics and whose optional parts ("[--timeout D]") are not broken across
 * lines.
 */
static void roff(FILE *f, const char *s, int usage)
{
    int bol = 1, italic = 0, depth = 0;

    for (const char *start = s; *s; s++) {
        unsigned char c = (unsigned char)*s;
        int word_start = s == start || s[-1] == '\n' ||
                         (s[-1] == ' ' && (!usage || depth == 0));
        int cap = usage && (isupper(c) || (italic && (c == '_' || isdigit(c))));

        if (italic && !cap) {
            fputs("\\fR", f);
            italic = 0;
        }
        if (c == '\n') {
            fputs(bol ? ".PP\n" : "\n", f);
            bol = 1;
            continue;
        }
        if (bol && (c == '.' || c == '\''))
            fputs("\\&", f);
        bol = 0;
        if (word_start && c != ' ' && hyphen_ahead(s, usage))
            fputs("\\%", f);
        if (cap && !italic) {
            fputs("\\fI", f);
            italic = 1;
        }
        if (usage && c == '[')
            depth++;
        else if (usage && c == ']' && depth > 0)
            depth--;
        if (c == '\\')
            fputs("\\e", f);
        else if (c == '-')
            fputs("\\-", f);
        else if (c == ' ' && depth > 0)
            fputs("\\ ", f);
        else
            fputc(c, f);
    }
    if (italic)
        fputs("\\fR", f);
}

/* "\fBplanctl create\fR \fINAME\fR \-\-definition ..." on one line. */
static void man_usage(FILE *f, const cli_command *cmd)
{
    fputs("\\fBplanctl ", f);
    roff(f, cmd->name, 0);
    fputs("\\fR", f);
    if (cmd->usage[0]) {
        fputc(' ', f);
        roff(f, cmd->usage, 1);
    }
    fputc('\n', f);
}

/* "--name" in bold, as one word that is never hyphenated. */
static void man_long(FILE *f, const char *name)
{
    char buf[80];

    snprintf(buf, sizeof(buf), "--%s", name);
    fputs("\\fB", f);
    roff(f, buf, 0);
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
        roff(f, fl->metavar, 1);
    }
    fputc('\n', f);
    roff(f, fl->help, 0);
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
    roff(f, cmd->summary, 0);
    fputs(".\n.PP\n", f);
    roff(f, cmd->description, 0);
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
            roff(f, cmd->examples[i], 0);
            fputc('\n', f);
        }
        fputs(".fi\n.RE\n", f);
    }
}

/* The exit codes of DESIGN §8, all of them, whichever commands use them
 * today. */
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
    "Not found: the database, an instance, a plan, a run or a definition",
    "A run waited for ended FATAL_ERROR or CANCELLED",
    "Timed out waiting for a run",
};

static const char man_description[] =
    "planctl runs the plans of instances and shows what they did.  A plan is\n"
    "made of phases, a phase of steps, a step of tasks.  Every run, phase\n"
    "and step is a row in an SQLite database, and every status change is\n"
    "one transaction that also appends an event, so status and history\n"
    "read the same rows and a past state can be replayed.\n"
    "\n"
    "A definition (a versioned JSON document with parameters, tasks and\n"
    "plans) is registered with apply.  create makes an instance of it and\n"
    "admits its deploy plan; set, upgrade and delete admit the plans the\n"
    "change selects; trigger admits any other plan.  An instance has at most\n"
    "one active run (PENDING, IN_PROGRESS or PAUSED): another is refused\n"
    "with exit status 3, naming the active run, or queued with trigger\n"
    "--queue.  Runs advance only while an engine runs: planctl run, or a\n"
    "controller that embeds libplanctl; there is one engine per database.\n"
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
    "command takes -h.  Text output uses colour and box drawing only on a\n"
    "terminal.  With -o json each command prints a JSON document with\n"
    "\"schema\": 1, times in RFC 3339 UTC and absent values as null; these\n"
    "documents are a stable contract for scripts.";

static const struct {
    const char *name, *text;
} man_env[] = {
    {"PLANCTL_DB", "The database file when --db is not given.  The default "
                   "is ./planctl.db."},
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
    {"PLANCTL_OUTPUT",
     "Set by planctl run for each shell task: the file (new and empty) "
     "where the task may write its outputs for the later tasks of its run, "
     "one per line: KEY=VALUE, or KEY<<DELIM followed by the value's lines "
     "and a line DELIM; ::secret:: before either marks a secret, shown as "
     "*** by status and left out of export unless --include-secrets.  A "
     "malformed line fails the attempt, naming the line; the outputs of "
     "one attempt hold at most 64 KiB."},
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
     "apply creates a database (mode 0600); the other commands report a "
     "missing one (exit status 4)."},
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
    roff(f, man_description, 0);
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
        roff(f, man_env[i].text, 0);
        fputc('\n', f);
    }
    fputs(".SH EXIT STATUS\n", f);
    for (size_t i = 0; i < sizeof(exit_codes) / sizeof(exit_codes[0]); i++) {
        fprintf(f, ".TP\n\\fB%zu\\fR\n", i);
        roff(f, exit_codes[i], 0);
        fputs(".\n", f);
    }
    fputs(".TP\n\\fB130\\fR, \\fB143\\fR\n", f);
    roff(f,
         "Interrupted by SIGINT or SIGTERM (128 + the signal, as shells "
         "report it) while status --watch, events --follow or --wait waited; "
         "the run goes on",
         0);
    fputs(".\n", f);
    fputs(".SH FILES\n", f);
    for (size_t i = 0; i < sizeof(man_files) / sizeof(man_files[0]); i++) {
        fputs(".TP\n\\fI", f);
        roff(f, man_files[i].name, 0);
        fputs("\\fR\n", f);
        roff(f, man_files[i].text, 0);
        fputc('\n', f);
    }
    fputs(".SH SEE ALSO\n"
          ".BR sqlite3 (1),\n"
          ".BR flock (2)\n",
          f);
    return CLI_EXIT_OK;
}

/* ---- bash completion ----------------------------------------------------- */

/* s in single quotes, for the shell. */
static void sh_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    }
    fputc('\'', f);
}

#define FILE_NAMES                                                             \
    "compopt -o filenames 2>/dev/null\n"                                       \
    "        mapfile -t COMPREPLY < <(compgen -f -- \"$2\")"

/* How the value of a flag or positional is completed, chosen by its
 * metavariable: a new flag or argument named FILE completes file names
 * with no change here. */
static const struct {
    const char *metavar;
    const char *action; /* bash, with $2 the word being completed */
} value_kinds[] = {
    /* The global -o, which main.c checks; a command that knows more
     * formats has its own -o and spells them in its usage line
     * ("-o text|json|jsonl"), which usage_choices() finds. */
    {"FORMAT", "mapfile -t COMPREPLY < <(compgen -W 'text json' -- \"$2\")"},
    {"FILE", FILE_NAMES},
    {"PATH", FILE_NAMES},
    {"NAME", "mapfile -t COMPREPLY < <(compgen -W \"$(_planctl_instances "
             "\"$3\" \"$4\")\" -- \"$2\")"},
};

/* The flags of cmd as completion words: its own, then the global ones it
 * does not shadow.  cmd NULL: the global flags alone. */
static void bash_flag_words(FILE *f, const cli_command *cmd)
{
    const cli_flag *own = cmd ? cmd->flags : NULL;
    const char *sep = "";

    for (int pass = 0; pass < 2; pass++) {
        const cli_flag *flags = pass == 0 ? own : cli_global_flags;
        for (size_t i = 0; flags && flags[i].name; i++) {
            if (pass == 1 && cli_flag_shadowed(&flags[i], own))
                continue;
            if (flags[i].short_name) {
                fprintf(f, "%s-%c", sep, flags[i].short_name);
                sep = " ";
            }
            fprintf(f, "%s--%s", sep, flags[i].name);
            sep = " ";
        }
    }
}

/* The values cmd's usage line spells for fl, as in "-o text|json|jsonl",
 * copied to buf; NULL when it spells none. */
static const char *usage_choices(char *buf, size_t size, const cli_command *cmd,
                                 const cli_flag *fl)
{
    char spelling[2][72];

    snprintf(spelling[0], sizeof(spelling[0]), "--%s ", fl->name);
    snprintf(spelling[1], sizeof(spelling[1]), "-%c ", fl->short_name);
    for (int i = 0; cmd && i < (fl->short_name ? 2 : 1); i++) {
        for (const char *p = cmd->usage; (p = strstr(p, spelling[i])); p++) {
            if (p > cmd->usage && p[-1] != ' ' && p[-1] != '[')
                continue;
            const char *v = p + strlen(spelling[i]);
            size_t len = strcspn(v, " ]");
            if (memchr(v, '|', len) && len < size) {
                memcpy(buf, v, len);
                buf[len] = '\0';
                return buf;
            }
        }
    }
    return NULL;
}

/* The case arm of _planctl_takes for fl: `'status --plan')`, or
 * `*' -o' | *' --output')` for a global flag (cmd NULL), which matches
 * after any command or none.  A boolean flag's arm fails, so that it also
 * hides a global flag of the same name that takes a value. */
static void bash_takes_arm(FILE *f, const cli_command *cmd, const cli_flag *fl)
{
    const char *name = cmd ? cmd->name : "";
    char arm[96], choices[96];

    fputs("    ", f);
    if (fl->short_name) {
        snprintf(arm, sizeof(arm), "%s -%c", name, fl->short_name);
        fputs(cmd ? "" : "*", f);
        sh_quote(f, arm);
        fputs(" | ", f);
    }
    snprintf(arm, sizeof(arm), "%s --%s", name, fl->name);
    fputs(cmd ? "" : "*", f);
    sh_quote(f, arm);
    if (fl->kind == CLI_FLAG_BOOL) {
        fputs(") return 1 ;;\n", f);
    } else {
        const char *c = usage_choices(choices, sizeof(choices), cmd, fl);
        fputs(") meta=", f);
        sh_quote(f, c ? c : fl->metavar);
        fputs(" ;;\n", f);
    }
}

static const char bash_main[] =
    "# _planctl_instances PROG DB: the instance names, from `PROG instances\n"
    "# -o json` on the same database; plain tr, grep and sed, no jq.\n"
    "_planctl_instances() {\n"
    "    local prog=$1 db=$2\n"
    "    [[ $prog == \\~/* ]] && prog=$HOME/${prog#\\~/}\n"
    "    [[ $db == \\~/* ]] && db=$HOME/${db#\\~/}\n"
    "    \"$prog\" ${db:+--db \"$db\"} instances -o json 2>/dev/null |\n"
    "        tr -d ' \\t\\n' | grep -o '{\"name\":\"[^\"]*\",\"definition\":' "
    "|\n"
    "        sed 's/^{\"name\":\"//; s/\".*//'\n"
    "}\n"
    "\n"
    "_planctl() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} end=$COMP_CWORD\n"
    "    local prog=${COMP_WORDS[0]} cmd='' meta='' valmeta=''\n"
    "    local flag='' prefix='' db='' w\n"
    "    local i npos=0 dashdash=0\n"
    "    COMPREPLY=()\n"
    "\n"
    "    # With '=' in COMP_WORDBREAKS (the default) bash splits --db=x into\n"
    "    # \"--db\" \"=\" \"x\"; without it, --db=x is one word.\n"
    "    if [[ $cur == = ]]; then\n"
    "        cur='' end=$((COMP_CWORD - 1)) flag=${COMP_WORDS[COMP_CWORD - "
    "1]}\n"
    "    elif ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[COMP_CWORD - 1]} == = ]]; "
    "then\n"
    "        end=$((COMP_CWORD - 2)) flag=${COMP_WORDS[COMP_CWORD - 2]}\n"
    "    elif [[ $cur == --*=* ]]; then\n"
    "        flag=${cur%%=*} prefix=${cur%%=*}= cur=${cur#*=}\n"
    "    fi\n"
    "\n"
    "    # The database the command would use, for instance names.\n"
    "    for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do\n"
    "        ((i == COMP_CWORD)) && continue\n"
    "        w=${COMP_WORDS[i]}\n"
    "        if [[ $w == --db=* ]]; then\n"
    "            db=${w#--db=}\n"
    "        elif [[ $w == --db && ${COMP_WORDS[i + 1]} == = ]]; then\n"
    "            ((i + 2 != COMP_CWORD)) && db=${COMP_WORDS[i + 2]}\n"
    "        elif [[ $w == --db ]]; then\n"
    "            ((i + 1 != COMP_CWORD)) && db=${COMP_WORDS[i + 1]}\n"
    "        fi\n"
    "    done\n"
    "\n"
    "    # The command, how many positionals precede the word, and whether\n"
    "    # the word is a flag's value.\n"
    "    for ((i = 1; i < end; i++)); do\n"
    "        w=${COMP_WORDS[i]}\n"
    "        if ((!dashdash)) && [[ $w == -?* ]]; then\n"
    "            if [[ $w == -- ]]; then\n"
    "                dashdash=1\n"
    "            elif [[ ${COMP_WORDS[i + 1]} == = ]]; then\n"
    "                ((i += 2))\n"
    "            elif [[ $w == --*=* || ($w != --* && ${#w} -gt 2) ]]; then\n"
    "                : # --flag=value, -ojson\n"
    "            elif _planctl_takes \"$cmd\" \"$w\"; then\n"
    "                if ((i + 1 == end)); then\n"
    "                    valmeta=$meta\n"
    "                    break\n"
    "                fi\n"
    "                ((i++))\n"
    "            fi\n"
    "        elif [[ -z $cmd ]]; then\n"
    "            cmd=$w\n"
    "        else\n"
    "            ((npos++))\n"
    "        fi\n"
    "    done\n"
    "    if [[ -n $flag ]]; then\n"
    "        _planctl_takes \"$cmd\" \"$flag\" || return 0\n"
    "        valmeta=$meta\n"
    "    fi\n"
    "\n"
    "    if [[ -n $valmeta ]]; then\n"
    "        _planctl_values \"$valmeta\" \"$cur\" \"$prog\" \"$db\"\n"
    "    elif ((!dashdash)) && [[ $cur == -* ]]; then\n"
    "        mapfile -t COMPREPLY < <(compgen -W \"$(_planctl_flags "
    "\"$cmd\")\" -- \"$cur\")\n"
    "    elif [[ -z $cmd ]]; then\n"
    "        mapfile -t COMPREPLY < <(compgen -W \"$_planctl_commands\" -- "
    "\"$cur\")\n"
    "    elif _planctl_positional \"$cmd\" \"$npos\"; then\n"
    "        _planctl_values \"$meta\" \"$cur\" \"$prog\" \"$db\"\n"
    "    fi\n"
    "    if [[ -n $prefix ]]; then\n"
    "        COMPREPLY=(\"${COMPREPLY[@]/#/$prefix}\")\n"
    "    fi\n"
    "    return 0\n"
    "}\n"
    "\n"
    "complete -F _planctl planctl\n";

static int print_bash(FILE *f, const cli_command *const *cmds, size_t ncmds)
{
    fputs("# bash completion for planctl(1): commands, flags, output formats,"
          "\n# file names and instance names.\n"
          "# Generated by 'planctl __bash-completion' from the command table;"
          " do not edit.\n\n",
          f);

    fputs("_planctl_commands=", f);
    fputc('\'', f);
    for (size_t i = 0; i < ncmds; i++)
        fprintf(f, "%s%s", i ? " " : "", cmds[i]->name);
    fputs("'\n\n", f);

    fputs("# _planctl_flags CMD: the flags CMD takes, its own and the "
          "global ones.\n"
          "_planctl_flags() {\n    case $1 in\n",
          f);
    for (size_t i = 0; i < ncmds; i++) {
        fprintf(f, "    %s) echo '", cmds[i]->name);
        bash_flag_words(f, cmds[i]);
        fputs("' ;;\n", f);
    }
    fputs("    *) echo '", f);
    bash_flag_words(f, NULL);
    fputs("' ;;\n    esac\n}\n\n", f);

    /* A command's own flags come first: the parser looks them up before
     * the global ones (`upgrade --version V`). */
    fputs("# _planctl_takes CMD FLAG: succeeds, with the metavariable in $meta,"
          "\n# when FLAG takes a value after CMD (CMD empty: before any "
          "command).\n"
          "_planctl_takes() {\n    case \"$1 $2\" in\n",
          f);
    for (size_t i = 0; i < ncmds; i++)
        for (size_t j = 0; cmds[i]->flags[j].name; j++)
            bash_takes_arm(f, cmds[i], &cmds[i]->flags[j]);
    for (size_t j = 0; cli_global_flags[j].name; j++)
        if (cli_global_flags[j].kind != CLI_FLAG_BOOL)
            bash_takes_arm(f, NULL, &cli_global_flags[j]);
    fputs("    *) return 1 ;;\n    esac\n}\n\n", f);

    fputs("# _planctl_positional CMD N: succeeds, with the metavariable in "
          "$meta,\n# when CMD takes an Nth positional argument (from 0).\n"
          "_planctl_positional() {\n    case \"$1 $2\" in\n",
          f);
    for (size_t i = 0; i < ncmds; i++) {
        for (size_t j = 0; cmds[i]->pos && cmds[i]->pos[j]; j++) {
            char arm[96];
            snprintf(arm, sizeof(arm), "%s %zu", cmds[i]->name, j);
            fputs("    ", f);
            sh_quote(f, arm);
            fputs(") meta=", f);
            /* "[NAME]" is an optional NAME, completed the same way. */
            const char *pos = cmds[i]->pos[j];
            char metavar[64];
            if (pos[0] == '[')
                pos++;
            snprintf(metavar, sizeof(metavar), "%.*s", (int)strcspn(pos, "]"),
                     pos);
            sh_quote(f, metavar);
            fputs(" ;;\n", f);
        }
    }
    fputs("    *) return 1 ;;\n    esac\n}\n\n", f);

    fputs("# _planctl_values METAVAR WORD PROG DB: fills COMPREPLY with the "
          "values\n# a METAVAR (or a list such as text|json) may take that "
          "start with WORD.\n"
          "_planctl_values() {\n    case $1 in\n",
          f);
    size_t nkinds = sizeof(value_kinds) / sizeof(value_kinds[0]);
    for (size_t i = 0; i < nkinds; i++) {
        size_t j = 0;
        while (strcmp(value_kinds[j].action, value_kinds[i].action) != 0)
            j++;
        if (j < i)
            continue; /* listed with the first one of the same action */
        fputs("    ", f);
        for (j = i; j < nkinds; j++)
            if (strcmp(value_kinds[j].action, value_kinds[i].action) == 0)
                fprintf(f, "%s%s", j > i ? " | " : "", value_kinds[j].metavar);
        fprintf(f, ")\n        %s\n        ;;\n", value_kinds[i].action);
    }
    fputs(
        "    *'|'*)\n"
        "        mapfile -t COMPREPLY < <(compgen -W \"${1//|/ }\" -- \"$2\")\n"
        "        ;;\n    esac\n}\n\n",
        f);

    fputs(bash_main, f);
    return CLI_EXIT_OK;
}

/* ---- dispatch ------------------------------------------------------------ */

int cli_doc_command(int argc, char **argv, const cli_command *const *cmds,
                    size_t ncmds)
{
    int (*print)(FILE *, const cli_command *const *, size_t);

    if (argc < 2)
        return -1;
    if (strcmp(argv[1], "__man") == 0)
        print = print_man;
    else if (strcmp(argv[1], "__bash-completion") == 0)
        print = print_bash;
    else
        return -1;
    if (argc > 2) {
        cli_errorf("%s takes no arguments", argv[1]);
        return CLI_EXIT_USAGE;
    }
    return print(stdout, cmds, ncmds);
}
