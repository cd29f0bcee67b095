/*
 * args.c - the command-line parser: global and per-command flags in any
 * position, `--flag=value` and `--flag value`, repeatable flags, and
 * "did you mean" suggestions for mistyped commands and flags.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const cli_flag cli_global_flags[] = {
    {"db", 0, CLI_FLAG_VALUE, 0, "PATH",
     "database file, or a postgresql:// URI (env PLANCTL_DB, default "
     "./planctl.db)"},
    {"output", 'o', CLI_FLAG_VALUE, 0, "FORMAT",
     "output format: text (default), json or yaml"},
    {"no-color", 0, CLI_FLAG_BOOL, 0, NULL,
     "never colour the output (also env NO_COLOR)"},
    {"help", 'h', CLI_FLAG_BOOL, 0, NULL, "show help and exit"},
    {"version", 0, CLI_FLAG_BOOL, 0, NULL, "print the version and exit"},
    {NULL, 0, CLI_FLAG_BOOL, 0, NULL, NULL}};

/* Optimal string alignment distance: Levenshtein plus adjacent
 * transpositions, so "stauts" is one edit from "status". */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return (size_t)-1; /* not worth suggesting anything */
    size_t d[65][65];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

const char *cli_closest(const char *word, const char *const *candidates,
                        size_t n)
{
    size_t len = strlen(word);
    /* Short words are close to everything; allow fewer edits there. */
    size_t allowed = len <= 3 ? 1 : len < 8 ? 2 : 3;
    const char *best = NULL;
    size_t best_d = allowed + 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, candidates[i]);
        if (d < best_d) {
            best = candidates[i];
            best_d = d;
        }
    }
    if (best || len < 2)
        return best;
    /* An abbreviation ("defs") names a command when it is a prefix of
     * exactly one. */
    for (size_t i = 0; i < n; i++) {
        if (strncmp(candidates[i], word, len) == 0) {
            if (best)
                return NULL;
            best = candidates[i];
        }
    }
    return best;
}

static const cli_flag *find_flag(const cli_flag *flags, const char *name,
                                 size_t nlen, char short_name, size_t *index)
{
    if (!flags)
        return NULL;
    /* cli_args holds CLI_MAX_FLAGS slots; a table longer than that shows
     * its extra flags as unknown, which its author notices at once. */
    for (size_t i = 0; flags[i].name && i < CLI_MAX_FLAGS; i++) {
        int hit = short_name ? flags[i].short_name == short_name
                             : strlen(flags[i].name) == nlen &&
                                   strncmp(flags[i].name, name, nlen) == 0;
        if (hit) {
            *index = i;
            return &flags[i];
        }
    }
    return NULL;
}

/*
 * The words users of kubectl, argo, helm and git type, and the planctl
 * command that does what they mean.  Edit distance alone answers "get"
 * with "set", a write for a read; so a reflex is looked up first, and a
 * read word always maps to a command that only reads.  An entry whose
 * command is not in the table is skipped, so a stale entry never names a
 * command that does not exist.  say is what to suggest when the command
 * alone is not it (NULL: the command's name).
 */
static const struct {
    const char *word, *cmd, *say;
} reflexes[] = {
    {"get", "status", NULL},        {"describe", "status", NULL},
    {"show", "status", NULL},       {"inspect", "status", NULL},
    {"info", "status", NULL},       {"watch", "status", "status --watch"},
    {"list", "instances", NULL},    {"ls", "instances", NULL},
    {"ps", "instances", NULL},      {"tail", "logs", "logs --follow"},
    {"rm", "delete", NULL},         {"remove", "delete", NULL},
    {"destroy", "delete", NULL},    {"uninstall", "delete", NULL},
    {"install", "create", NULL},    {"new", "create", NULL},
    {"submit", "trigger", NULL},    {"stop", "cancel", NULL},
    {"kill", "cancel", NULL},       {"terminate", "cancel", NULL},
    {"abort", "cancel", NULL},      {"suspend", "pause", NULL},
    {"unpause", "resume", NULL},    {"continue", "resume", NULL},
    {"rerun", "retry", NULL},       {"restart", "retry", NULL},
    {"update", "set", NULL},        {"edit", "set", NULL},
    {"patch", "set", NULL},         {"lint", "validate", NULL},
    {"check", "validate", NULL},    {"dump", "export", NULL},
    {"restore", "import", NULL},    {"prune", "gc", NULL},
    {"docs", "explain", NULL},      {"schema", "explain", NULL},
    {"version", NULL, "--version"},
};

#define NREFLEXES (sizeof(reflexes) / sizeof(reflexes[0]))

static int has_command(const char *name, const cli_command *const *cmds,
                       size_t ncmds)
{
    for (size_t i = 0; i < ncmds; i++)
        if (strcmp(cmds[i]->name, name) == 0)
            return 1;
    return 0;
}

int cli_unknown_command(const char *word, const cli_command *const *cmds,
                        size_t ncmds)
{
    /* The commands first, so that a tie goes to one, then the reflexes
     * whose command exists. */
    const char *names[64 + NREFLEXES];
    const char *say[64 + NREFLEXES];
    size_t n = 0;
    for (size_t i = 0; i < ncmds && i < 64; i++) {
        names[n] = cmds[i]->name;
        say[n++] = cmds[i]->name;
    }
    for (size_t i = 0; i < NREFLEXES; i++) {
        const char *cmd = reflexes[i].cmd;
        if (cmd && !has_command(cmd, cmds, ncmds))
            continue;
        names[n] = reflexes[i].word;
        say[n++] = reflexes[i].say ? reflexes[i].say : cmd;
    }
    const char *hint = cli_closest(word, names, n);
    for (size_t i = 0; hint && i < n; i++) {
        if (names[i] == hint) {
            hint = say[i];
            break;
        }
    }
    if (hint)
        cli_errorf("unknown command \"%s\"; did you mean \"%s\"? "
                   "See 'planctl --help'.",
                   word, hint);
    else
        cli_errorf("unknown command \"%s\". See 'planctl --help'.", word);
    return CLI_EXIT_USAGE;
}

/*
 * The flags users of git, kubectl, helm, make and tail type, and the
 * planctl flag that does what they mean: edit distance cannot find
 * --limit from git's -n.  An entry applies to a command only when the
 * flag it names is one of the command's (or a global one), so one word
 * may map to different flags on different commands (-n is --limit for
 * history, --tail for logs); the first entry that applies wins.  say is
 * what to suggest when the flag alone is not it (NULL: "--flag").
 */
static const struct {
    const char *word, *flag, *say;
} flag_synonyms[] = {
    {"-n", "limit", NULL},
    {"-n", "tail", NULL},
    {"--max-count", "limit", NULL},
    {"--count", "limit", NULL},
    {"--tail", "limit", NULL},
    {"--lines", "tail", NULL},
    {"--limit", "tail", NULL},
    {"-f", "follow", NULL},
    {"-f", "watch", NULL},
    {"-w", "follow", NULL},
    {"--watch", "follow", NULL},
    {"--follow", "watch", NULL},
    {"--set", "param", "-p K=V"},
    {"--id", "run", NULL},
    {"--run-id", "run", NULL},
    {"-m", "reason", NULL},
    {"--message", "reason", NULL},
    {"-j", "concurrency", NULL},
    {"--jobs", "concurrency", NULL},
    {"--parallelism", "concurrency", NULL},
    {"-v", "log-level", "--log-level debug"},
    {"--verbose", "log-level", "--log-level debug"},
    {"-q", "log-level", "--log-level warn"},
    {"--quiet", "log-level", "--log-level warn"},
    {"--port", "listen", NULL},
    {"--addr", "listen", NULL},
    {"--address", "listen", NULL},
    {"--bind", "listen", NULL},
    {"--format", "output", "-o"},
    {"--json", "output", "-o json"},
    {"--yaml", "output", "-o yaml"},
    {"-v", "version", NULL},
    {"-V", "version", NULL},
};

#define NSYNONYMS (sizeof(flag_synonyms) / sizeof(flag_synonyms[0]))

/* The suggestion for a flag nobody has: a synonym's, else the closest
 * long name, else NULL.  word is what was typed, dashes included, up to
 * any '='. */
static const char *flag_hint(char *buf, size_t size, const char *word,
                             const char *const *names, size_t n)
{
    for (size_t i = 0; i < NSYNONYMS; i++) {
        if (strcmp(flag_synonyms[i].word, word) != 0)
            continue;
        for (size_t j = 0; j < n; j++) {
            if (strcmp(names[j], flag_synonyms[i].flag) != 0)
                continue;
            if (flag_synonyms[i].say)
                return flag_synonyms[i].say;
            snprintf(buf, size, "--%s", names[j]);
            return buf;
        }
    }
    /* Only long flags get a suggestion by spelling: every single letter is
     * one edit away from every other. */
    if (word[1] != '-' || !word[2])
        return NULL;
    const char *hint = cli_closest(word + 2, names, n);
    if (!hint)
        return NULL;
    snprintf(buf, size, "--%s", hint);
    return buf;
}

static int unknown_flag(const char *arg, size_t arglen, const cli_command *cmd)
{
    const char *names[CLI_MAX_FLAGS + 8];
    size_t n = 0;
    for (size_t i = 0; cli_global_flags[i].name; i++)
        names[n++] = cli_global_flags[i].name;
    for (size_t i = 0; cmd && cmd->flags[i].name && n < CLI_MAX_FLAGS + 8; i++)
        names[n++] = cmd->flags[i].name;

    /* A single dash takes one letter (-ojson, -pK=V, git's -n2), but a
     * long flag written with one dash (Go's -limit) is shown whole and
     * answered with its two dashes. */
    char word[67], hintbuf[80];
    const char *hint = NULL;
    size_t wl = arglen;
    if (arg[1] != '-') {
        size_t full = strcspn(arg, "=");
        if (full >= 5 && full <= 66) {
            memcpy(word, arg + 1, full - 1);
            word[full - 1] = '\0';
            const char *close = cli_closest(word, names, n);
            if (close) {
                snprintf(hintbuf, sizeof(hintbuf), "--%s", close);
                hint = hintbuf;
                wl = full;
            }
        }
    }
    if (wl > 66)
        wl = 66;
    memcpy(word, arg, wl);
    word[wl] = '\0';
    if (!hint)
        hint = flag_hint(hintbuf, sizeof(hintbuf), word, names, n);

    cli_buf msg = CLI_BUF_INIT;
    cli_buf_addf(&msg, "unknown flag \"%s\"", word);
    if (cmd)
        cli_buf_addf(&msg, " for \"%s\"", cmd->name);
    if (hint)
        cli_buf_addf(&msg, "; did you mean \"%s\"?", hint);
    else
        cli_buf_add(&msg, ".");
    if (cmd)
        cli_buf_addf(&msg, " See 'planctl %s --help'.", cmd->name);
    else
        cli_buf_add(&msg, " See 'planctl --help'.");
    cli_errorf("%s", cli_buf_str(&msg));
    cli_buf_free(&msg);
    return CLI_EXIT_USAGE;
}

static void set_global(cli_globals *g, const cli_flag *f, const char *val)
{
    if (strcmp(f->name, "db") == 0)
        g->db = val;
    else if (strcmp(f->name, "output") == 0)
        g->output = val;
    else if (strcmp(f->name, "no-color") == 0)
        g->no_color = 1;
    else if (strcmp(f->name, "help") == 0)
        g->help = 1;
    else if (strcmp(f->name, "version") == 0)
        g->version = 1;
}

static void add_value(cli_args *a, size_t idx, const char *val)
{
    const char **v =
        realloc((void *)a->values[idx], (a->count[idx] + 1) * sizeof(*v));
    if (!v)
        cli_oom();
    v[a->count[idx]] = val;
    a->values[idx] = v;
    a->count[idx]++;
}

/* Handles argv[*i], which starts with '-'; may consume argv[*i + 1]. */
static int parse_flag(cli_globals *g, cli_args *a, int argc, char **argv,
                      int *i)
{
    const char *arg = argv[*i];
    const char *name, *val = NULL;
    size_t nlen, arglen;
    char short_name = 0;

    if (arg[1] == '-') {
        name = arg + 2;
        const char *eq = strchr(name, '=');
        nlen = eq ? (size_t)(eq - name) : strlen(name);
        val = eq ? eq + 1 : NULL;
        arglen = nlen + 2;
    } else {
        name = arg + 1;
        short_name = arg[1];
        nlen = 1;
        arglen = 2;
        if (arg[2]) /* -ojson, -o=json, -pK=V */
            val = arg[2] == '=' ? arg + 3 : arg + 2;
    }

    /* After the command, its own flags come first: `upgrade --version V`
     * is the version to move to, not the global --version. */
    size_t idx = 0;
    int global = 0;
    const cli_flag *f =
        a->cmd ? find_flag(a->cmd->flags, name, nlen, short_name, &idx) : NULL;
    if (!f) {
        f = find_flag(cli_global_flags, name, nlen, short_name, &idx);
        global = 1;
    }
    if (!f)
        return unknown_flag(arg, arglen, a->cmd);

    if (f->kind == CLI_FLAG_BOOL) {
        if (val) {
            cli_errorf("flag %.*s does not take a value", (int)arglen, arg);
            return CLI_EXIT_USAGE;
        }
    } else if (!val) {
        if (*i + 1 >= argc) {
            cli_errorf("flag %.*s needs a value (%s)", (int)arglen, arg,
                       f->metavar);
            return CLI_EXIT_USAGE;
        }
        val = argv[++*i];
    }
    if (global)
        set_global(g, f, val);
    else
        add_value(a, idx, val ? val : "");
    return 0;
}

/* Whether cmd takes parameter values (-p K=V). */
static int takes_params(const cli_command *cmd)
{
    for (size_t i = 0; cmd->flags[i].name; i++)
        if (strcmp(cmd->flags[i].name, "param") == 0)
            return 1;
    return 0;
}

static size_t count_pos(const cli_command *cmd)
{
    size_t n = 0;
    while (cmd->pos && cmd->pos[n])
        n++;
    return n;
}

/* The name a required flag is shown by: the short form when it has one,
 * as the usage lines write it. */
static void flag_label(char *buf, size_t size, const cli_flag *f)
{
    if (f->short_name)
        snprintf(buf, size, "-%c %s", f->short_name, f->metavar);
    else if (f->metavar)
        snprintf(buf, size, "--%s %s", f->name, f->metavar);
    else
        snprintf(buf, size, "--%s", f->name);
}

static int check_required(const cli_args *a)
{
    const cli_command *cmd = a->cmd;
    size_t npos = count_pos(cmd);
    /* A positional written "[NAME]" is optional (events [NAME]). */
    if (a->npos < npos && cmd->pos[a->npos][0] != '[')
        return cli_usage_error(cmd, "missing %s", cmd->pos[a->npos]);
    for (size_t i = 0; cmd->flags[i].name; i++) {
        if (cmd->flags[i].required && a->count[i] == 0) {
            char label[64];
            flag_label(label, sizeof(label), &cmd->flags[i]);
            return cli_usage_error(cmd, "missing %s", label);
        }
    }
    return 0;
}

int cli_args_parse(cli_globals *g, cli_args *a, const cli_command *const *cmds,
                   size_t ncmds, int argc, char **argv)
{
    int dashdash = 0, rc;
    memset(g, 0, sizeof(*g));
    memset(a, 0, sizeof(*a));

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!dashdash && arg[0] == '-' && arg[1] != '\0') {
            if (strcmp(arg, "--") == 0) {
                dashdash = 1;
                continue;
            }
            rc = parse_flag(g, a, argc, argv, &i);
            if (rc)
                return rc;
        } else if (!a->cmd) {
            for (size_t c = 0; c < ncmds && !a->cmd; c++)
                if (strcmp(cmds[c]->name, arg) == 0)
                    a->cmd = cmds[c];
            if (!a->cmd)
                return cli_unknown_command(arg, cmds, ncmds);
        } else if (a->npos >= count_pos(a->cmd)) {
            /* "REPLICAS=3" meant as a parameter value (set, create). */
            if (takes_params(a->cmd) && arg[0] != '=' && strchr(arg, '='))
                return cli_usage_error(a->cmd,
                                       "unexpected argument \"%s\"; give a "
                                       "parameter value with -p: -p %s",
                                       arg, arg);
            return cli_usage_error(a->cmd, "unexpected argument \"%s\"", arg);
        } else {
            a->pos[a->npos++] = arg;
        }
    }
    if (g->help || g->version || !a->cmd)
        return 0;
    return check_required(a);
}

void cli_args_free(cli_args *a)
{
    for (size_t i = 0; i < CLI_MAX_FLAGS; i++) {
        free((void *)a->values[i]);
        a->values[i] = NULL;
        a->count[i] = 0;
    }
}

static int flag_index(const cli_args *a, const char *name, size_t *idx)
{
    for (size_t i = 0; a->cmd && a->cmd->flags[i].name; i++) {
        if (strcmp(a->cmd->flags[i].name, name) == 0) {
            *idx = i;
            return 1;
        }
    }
    return 0;
}

const char *cli_arg(const cli_args *a, const char *name)
{
    size_t i;
    if (!flag_index(a, name, &i) || a->count[i] == 0)
        return NULL;
    return a->values[i][a->count[i] - 1];
}

size_t cli_arg_count(const cli_args *a, const char *name)
{
    size_t i;
    return flag_index(a, name, &i) ? a->count[i] : 0;
}

const char *const *cli_arg_list(const cli_args *a, const char *name, size_t *n)
{
    size_t i;
    if (!flag_index(a, name, &i)) {
        *n = 0;
        return NULL;
    }
    *n = a->count[i];
    return a->values[i];
}

int cli_parse_id(int64_t *out, const char *flag, const char *text)
{
    char *end;
    errno = 0;
    long long v =
        text[0] >= '0' && text[0] <= '9' ? strtoll(text, &end, 10) : -1;
    if (v <= 0 || errno || *end) {
        cli_errorf("invalid %s \"%s\"; expected a run id (a positive "
                   "integer)",
                   flag, text);
        return CLI_EXIT_USAGE;
    }
    *out = (int64_t)v;
    return 0;
}

int cli_parse_params(planctl_param **out, char **storage,
                     const char *const *list, size_t n)
{
    size_t total = 0;
    *out = NULL;
    *storage = NULL;
    for (size_t i = 0; i < n; i++)
        total += strlen(list[i]) + 1;
    planctl_param *params = cli_xmalloc((n ? n : 1) * sizeof(*params));
    char *copy = cli_xmalloc(total ? total : 1);
    char *p = copy;
    /* An entry without '=' goes on as a name without a value: the library
     * reports its syntax together with unknown, repeated and missing
     * parameters, so one run of the command names every problem. */
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(list[i]);
        memcpy(p, list[i], len + 1);
        char *eq = strchr(p, '=');
        params[i].name = p;
        params[i].value = NULL;
        if (eq) {
            *eq = '\0';
            params[i].value = eq + 1;
        }
        p += len + 1;
    }
    *out = params;
    *storage = copy;
    return 0;
}
