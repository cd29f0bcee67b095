/*
 * complete.c - shell completion.  `planctl completion bash|zsh|fish` prints
 * a small script for the shell; on every TAB it runs the hidden
 * `planctl __complete CWORD WORD...` with the words of the command line
 * (WORD 0 the program, CWORD the index of the word being completed), which
 * answers from the command and flag tables the parser and the help use,
 * and from the database the line names: a new command, flag or value kind
 * completes in every shell with no change here.
 *
 * The answer is one candidate a line, "word" or "word<TAB>description"
 * (fish and zsh show the description; bash drops it), or the single line
 * ":files" when the word is a file name, which the shell completes itself.
 * A value completed inside "--flag=value" comes back with "--flag=" in
 * front, unless bash split the word at '=' (it gives "--flag" "=" "value",
 * and replaces only "value").  Nothing is ever printed on stderr: a
 * missing database or instance completes nothing.
 */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

/* ---- what the line says -------------------------------------------------- */

typedef struct line {
    const char *words[64]; /* the program, then the words before the one
                              completed; "--db" "=" "x" joined */
    char *joined[64];      /* the "--flag=value" strings made here */
    size_t n, njoined;
    const char *cur;        /* the word completed (after '=' if it has one) */
    const char *prefix;     /* what goes before each candidate: "--db=" or "" */
    const char *value_flag; /* "--db" when cur is the value of --db=... */
    const char *db;         /* --db on the line, anywhere but in cur */
    char flag_buf[72], prefix_buf[72];
    const cli_command *const *cmds; /* the command table (cli/main.c) */
    size_t ncmds;
} line;

static void line_free(line *l)
{
    for (size_t i = 0; i < l->njoined; i++)
        free(l->joined[i]);
}

static const char *join(line *l, const char *flag, const char *value)
{
    size_t len = strlen(flag) + strlen(value) + 2;
    char *s;

    if (l->njoined == sizeof(l->joined) / sizeof(l->joined[0]))
        return flag;
    s = cli_xmalloc(len);
    snprintf(s, len, "%s=%s", flag, value);
    l->joined[l->njoined++] = s;
    return s;
}

/*
 * Reads words[0..nwords) with the cursor on words[cword].  bash splits
 * "--db=x" into "--db" "=" "x" (with '=' in COMP_WORDBREAKS, its default),
 * so a lone "=" joins its neighbours again; zsh and fish give "--db=x".
 */
static void line_read(line *l, int cword, int nwords, char **words)
{
    int end = cword; /* words[1..end) come before what is completed */
    const char *eq;

    memset(l, 0, sizeof(*l));
    l->cur = words[cword];
    l->prefix = "";
    if (strcmp(l->cur, "=") == 0 && words[cword - 1][0] == '-') {
        l->value_flag = words[cword - 1];
        l->cur = "";
        end = cword - 1;
    } else if (cword >= 3 && strcmp(words[cword - 1], "=") == 0 &&
               words[cword - 2][0] == '-') {
        l->value_flag = words[cword - 2];
        end = cword - 2;
    } else if (strncmp(l->cur, "--", 2) == 0 && (eq = strchr(l->cur, '=')) &&
               (size_t)(eq - l->cur) + 2 <= sizeof(l->flag_buf)) {
        int len = (int)(eq - l->cur);
        snprintf(l->flag_buf, sizeof l->flag_buf, "%.*s", len, l->cur);
        snprintf(l->prefix_buf, sizeof l->prefix_buf, "%.*s", len + 1, l->cur);
        l->value_flag = l->flag_buf;
        l->prefix = l->prefix_buf;
        l->cur = eq + 1;
    }
    l->words[l->n++] = words[0];
    for (int i = 1; i < nwords; i++) {
        int at = i;
        const char *w = words[i];

        if (i >= end && i <= cword)
            continue;
        if (w[0] == '-' && i + 1 < nwords && strcmp(words[i + 1], "=") == 0) {
            w = join(l, w, i + 2 < nwords ? words[i + 2] : "");
            i += i + 2 < nwords ? 2 : 1;
        }
        if (strncmp(w, "--db=", 5) == 0)
            l->db = w + 5;
        else if (strcmp(w, "--db") == 0 && i + 1 < nwords &&
                 !(i + 1 >= end && i + 1 <= cword))
            l->db = words[i + 1];
        if (at < end && l->n < sizeof(l->words) / sizeof(l->words[0]))
            l->words[l->n++] = w;
    }
}

/* ---- the tables -------------------------------------------------------- */

static const cli_command *find_command(const line *l, const char *name)
{
    for (size_t i = 0; i < l->ncmds; i++)
        if (strcmp(l->cmds[i]->name, name) == 0)
            return l->cmds[i];
    return NULL;
}

/* The flag w ("--plan", "-p") means after cmd (NULL: before any): the
 * command's own first, as the parser looks them up. */
static const cli_flag *find_flag(const cli_command *cmd, const char *w)
{
    for (int pass = 0; pass < 2; pass++) {
        const cli_flag *f = pass == 0 && cmd ? cmd->flags
                            : pass == 0      ? NULL
                                             : cli_global_flags;
        for (size_t i = 0; f && f[i].name; i++) {
            if (w[1] == '-' ? strcmp(w + 2, f[i].name) == 0
                            : w[1] && w[1] == f[i].short_name && !w[2])
                return &f[i];
        }
    }
    return NULL;
}

/* The values the usage line of cmd spells for fl ("-o text|json|jsonl"),
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

/* ---- answers --------------------------------------------------------- */

/* Prints word (and its description) when it starts with the word
 * completed. */
static void say(const line *l, const char *word, const char *desc)
{
    if (strncmp(word, l->cur, strlen(l->cur)) != 0)
        return;
    if (desc)
        printf("%s%s\t%s\n", l->prefix, word, desc);
    else
        printf("%s%s\n", l->prefix, word);
}

static void say_flags(const line *l, const cli_command *cmd)
{
    const cli_flag *own = cmd ? cmd->flags : NULL;

    for (int pass = 0; pass < 2; pass++) {
        const cli_flag *f = pass == 0 ? own : cli_global_flags;
        for (size_t i = 0; f && f[i].name; i++) {
            char w[72];
            if (pass == 1 && cli_flag_shadowed(&f[i], own))
                continue;
            if (f[i].short_name) {
                snprintf(w, sizeof w, "-%c", f[i].short_name);
                say(l, w, f[i].help);
            }
            snprintf(w, sizeof w, "--%s", f[i].name);
            say(l, w, f[i].help);
        }
    }
}

/* The words of a space- or '|'-separated list. */
static void say_list(const line *l, const char *list)
{
    while (*list) {
        size_t len = strcspn(list, " |");
        char w[128];

        if (len && len < sizeof w) {
            memcpy(w, list, len);
            w[len] = '\0';
            say(l, w, NULL);
        }
        list += len;
        list += *list != '\0';
    }
}

/* The database the command would use, opened only to read; NULL (saying
 * nothing) when there is none. */
static planctl *open_db(const line *l)
{
    const char *env = getenv("PLANCTL_DB");
    const char *path = l->db ? l->db : env && env[0] ? env : "./planctl.db";
    const char *home = getenv("HOME");
    planctl_open_options opts = PLANCTL_OPEN_OPTIONS_INIT;
    char buf[4096];
    planctl *p = NULL;

    /* The shell leaves a "~/" on the line as it is. */
    if (strncmp(path, "~/", 2) == 0 && home) {
        snprintf(buf, sizeof buf, "%s/%s", home, path + 2);
        path = buf;
    }
    opts.flags |= PLANCTL_OPEN_NOCREATE;
    if (planctl_open(&p, path, &opts) < 0) {
        planctl_close(p);
        return NULL;
    }
    return p;
}

/* The document a call returned in *text (freed here), or NULL.  text is
 * a pointer, read after the call: doc_of(f(&t), t) would pass t before f
 * may have set it. */
static json_t *doc_of(int rc, char **text)
{
    json_t *doc = rc < 0 || !*text ? NULL : json_loads(*text, 0, NULL);

    planctl_free(*text);
    *text = NULL;
    return doc;
}

/* Prints field key of each object of doc's array list, as text. */
static void say_each(const line *l, const json_t *doc, const char *list,
                     const char *key)
{
    size_t i;
    json_t *item;

    json_array_foreach(json_object_get(doc, list), i, item)
    {
        const json_t *v = json_object_get(item, key);
        char w[32];

        if (json_is_string(v)) {
            say(l, json_string_value(v), NULL);
        } else if (json_is_integer(v)) {
            snprintf(w, sizeof w, "%lld", (long long)json_integer_value(v));
            say(l, w, NULL);
        }
    }
}

/* The definition name of instance, copied to buf; NULL when unknown. */
static const char *definition_of(char *buf, size_t size, planctl *p,
                                 const char *instance)
{
    char *text = NULL;
    json_t *doc = doc_of(planctl_instances_json(&text, p), &text), *item;
    const char *found = NULL;
    size_t i;

    json_array_foreach(json_object_get(doc, "instances"), i, item)
    {
        const char *d = cli_jstr(json_object_get(item, "definition"), "name");
        if (d && strcmp(cli_jstr(item, "name") ? cli_jstr(item, "name") : "",
                        instance) == 0) {
            snprintf(buf, size, "%s", d);
            found = buf;
        }
    }
    json_decref(doc);
    return found;
}

/* Definition names, or name@version once the word has an '@'; versions
 * alone (for --version) of the definition named def when versions is
 * set. */
static void say_definitions(const line *l, planctl *p, int versions,
                            const char *def)
{
    char *text = NULL, w[256], last[128] = "";
    json_t *doc = doc_of(planctl_definitions_json(&text, p), &text), *item;
    int at = strchr(l->cur, '@') != NULL;
    size_t i;

    json_array_foreach(json_object_get(doc, "definitions"), i, item)
    {
        const char *name = cli_jstr(item, "name");
        const char *version = cli_jstr(item, "version");

        if (!name || !version)
            continue;
        if (versions) {
            if (!def || strcmp(def, name) == 0)
                say(l, version, NULL);
        } else if (at) {
            snprintf(w, sizeof w, "%s@%s", name, version);
            say(l, w, NULL);
        } else if (strcmp(last, name) != 0) {
            say(l, name, NULL); /* sorted by name: each once */
        }
        snprintf(last, sizeof last, "%s", name);
    }
    json_decref(doc);
}

/* The run ids of instance (NULL: of every instance), newest first. */
static void say_runs(const line *l, planctl *p, const char *instance)
{
    planctl_history_options o = PLANCTL_HISTORY_OPTIONS_INIT;
    char *text = NULL;
    json_t *doc, *item;
    size_t i;

    o.limit = 50;
    if (instance) {
        doc = doc_of(planctl_history_json(&text, p, instance, &o), &text);
        say_each(l, doc, "runs", "id");
        json_decref(doc);
        return;
    }
    doc = doc_of(planctl_instances_json(&text, p), &text);
    json_array_foreach(json_object_get(doc, "instances"), i, item)
    {
        if (cli_jstr(item, "name"))
            say_runs(l, p, cli_jstr(item, "name"));
    }
    json_decref(doc);
}

static void say_instances(const line *l, planctl *p, const char *name)
{
    char *text = NULL;
    json_t *doc = doc_of(planctl_instances_json(&text, p), &text);

    (void)name;
    say_each(l, doc, "instances", "name");
    json_decref(doc);
}

static void say_plans(const line *l, planctl *p, const char *name)
{
    char *text = NULL;
    json_t *doc;

    if (!name)
        return;
    doc = doc_of(planctl_status_json(&text, p, name, NULL), &text);
    say_each(l, doc, "plans", "name");
    json_decref(doc);
}

static void say_names(const line *l, planctl *p, const char *name)
{
    (void)name;
    say_definitions(l, p, 0, NULL);
}

static void say_versions(const line *l, planctl *p, const char *name)
{
    char def[128];

    say_definitions(l, p, 1,
                    name ? definition_of(def, sizeof def, p, name) : NULL);
}

/* The values read from the database, by metavariable; name is the
 * instance the line names.  A flag's NAME is not among them: it names
 * something new (import --as) or no instance (--kind). */
static const struct {
    const char *meta;
    void (*say)(const line *l, planctl *p, const char *name);
} from_db[] = {
    {"NAME", say_instances}, {"PLAN", say_plans},       {"P", say_plans},
    {"D[@V]", say_names},    {"DEFINITION", say_names}, {"V", say_versions},
    {"ID", say_runs},
};

/* The values of a flag or positional named meta (its metavariable, or a
 * list such as "text|json").  positional: meta names a positional.  name:
 * the instance the line names (the command's first positional NAME), or
 * NULL. */
static void say_values(const line *l, const char *meta, int positional,
                       const char *name)
{
    if (strchr(meta, '|')) {
        say_list(l, meta);
    } else if (strcmp(meta, "FORMAT") == 0) {
        /* The global -o, which cli/main.c checks; a command that knows more
         * formats spells them in its usage line. */
        say_list(l, "text json yaml");
    } else if (strcmp(meta, "FILE") == 0 || strcmp(meta, "PATH") == 0) {
        printf(":files\n");
    } else if (strcmp(meta, "COMMAND") == 0) {
        for (size_t i = 0; i < l->ncmds; i++)
            say(l, l->cmds[i]->name, l->cmds[i]->summary);
    } else if (strcmp(meta, "SHELL") == 0) {
        say_list(l, "bash zsh fish");
    } else if (strcmp(meta, "FIELD") == 0) {
        cli_buf paths = CLI_BUF_INIT;
        cli_explain_paths(&paths);
        say_list(l, cli_buf_str(&paths));
        cli_buf_free(&paths);
    }
    for (size_t i = 0; i < sizeof(from_db) / sizeof(from_db[0]); i++) {
        planctl *p;
        if (strcmp(meta, from_db[i].meta) != 0 ||
            (!positional && strcmp(meta, "NAME") == 0))
            continue;
        if ((p = open_db(l))) {
            from_db[i].say(l, p, name);
            planctl_close(p);
        }
        break;
    }
}

/* "[NAME]" is an optional NAME. */
static const char *bare(char *buf, size_t size, const char *pos)
{
    if (pos[0] == '[')
        pos++;
    snprintf(buf, size, "%.*s", (int)strcspn(pos, "]"), pos);
    return buf;
}

static void complete(const line *l)
{
    const cli_command *cmd = NULL;
    const char *cmd_word = NULL, *pos[CLI_MAX_POS + 1] = {NULL};
    const cli_flag *value_of = NULL;
    size_t npos = 0;
    int dashdash = 0;
    char buf[96];

    for (size_t i = 1; i < l->n; i++) {
        const char *w = l->words[i];
        if (!dashdash && w[0] == '-' && w[1]) {
            const cli_flag *f;
            if (strcmp(w, "--") == 0) {
                dashdash = 1;
            } else if ((w[1] == '-' && strchr(w, '=')) ||
                       (w[1] != '-' && w[2])) {
                /* --flag=value, -ojson */
            } else if ((f = find_flag(cmd, w)) && f->kind != CLI_FLAG_BOOL) {
                if (i + 1 == l->n) {
                    value_of = f;
                    break;
                }
                i++;
            }
        } else if (!cmd_word) {
            cmd_word = w;
            cmd = find_command(l, w);
        } else if (npos < CLI_MAX_POS) {
            pos[npos++] = w;
        } else {
            npos++;
        }
    }
    if (l->value_flag) {
        value_of = find_flag(cmd, l->value_flag);
        if (!value_of || value_of->kind == CLI_FLAG_BOOL)
            return;
    }
    /* The instance the line names, for its plans, versions and runs. */
    const char *name =
        cmd && cmd->pos && cmd->pos[0] &&
                strcmp(bare(buf, sizeof buf, cmd->pos[0]), "NAME") == 0
            ? pos[0]
            : NULL;
    if (value_of) {
        char choices[96];
        const char *c = usage_choices(choices, sizeof choices, cmd, value_of);
        say_values(l, c ? c : value_of->metavar, 0, name);
    } else if (!dashdash && l->cur[0] == '-') {
        say_flags(l, cmd);
    } else if (!cmd_word) {
        for (size_t i = 0; i < l->ncmds; i++)
            say(l, l->cmds[i]->name, l->cmds[i]->summary);
    } else if (cmd) {
        for (size_t i = 0; cmd->pos && cmd->pos[i]; i++) {
            if (i == npos) {
                say_values(l, bare(buf, sizeof buf, cmd->pos[i]), 1, name);
                break;
            }
        }
    }
}

int cli_complete_command(int argc, char **argv, const cli_command *const *cmds,
                         size_t ncmds)
{
    line l;
    char *end;
    long cword;

    if (argc < 2 || strcmp(argv[1], "__complete") != 0)
        return -1;
    if (argc < 4)
        return CLI_EXIT_USAGE;
    /* argv[3..argc) are the words, the program first: the cursor is on
     * one of them, never past the last. */
    cword = strtol(argv[2], &end, 10);
    if (*end || cword < 1 || cword > argc - 4)
        return CLI_EXIT_USAGE;
    line_read(&l, (int)cword, argc - 3, argv + 3);
    l.cmds = cmds;
    l.ncmds = ncmds;
    complete(&l);
    line_free(&l);
    return CLI_EXIT_OK;
}

/* ---- the scripts --------------------------------------------------------- */

static const char bash_script[] =
    "# bash completion for planctl(1): commands, flags, their fixed values,\n"
    "# file names, and instance, plan and definition names, versions and run\n"
    "# ids from the database the line names.  Printed by 'planctl completion\n"
    "# bash'; every TAB asks 'planctl __complete', which answers from the\n"
    "# command table, so the script never changes with the commands.\n"
    "_planctl() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]}\n"
    "    local prefix='' line\n"
    "    local -a out\n"
    "    COMPREPLY=()\n"
    "    [[ $prog == \\~/* ]] && prog=$HOME/${prog#\\~/}\n"
    "    mapfile -t out < <(\"$prog\" __complete \"$COMP_CWORD\" "
    "\"${COMP_WORDS[@]}\" 2>/dev/null)\n"
    "    if [[ ${out[0]-} == :files ]]; then\n"
    "        [[ $cur == = ]] && cur=''\n"
    "        if [[ $cur == --*=* ]]; then\n"
    "            prefix=${cur%%=*}= cur=${cur#*=}\n"
    "        fi\n"
    "        compopt -o filenames 2>/dev/null\n"
    "        mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
    "        ((${#COMPREPLY[@]})) && "
    "COMPREPLY=(\"${COMPREPLY[@]/#/$prefix}\")\n"
    "        return 0\n"
    "    fi\n"
    "    for line in \"${out[@]}\"; do\n"
    "        COMPREPLY+=(\"${line%%$'\\t'*}\")\n"
    "    done\n"
    "    return 0\n"
    "}\n"
    "\n"
    "complete -F _planctl planctl\n";

static const char zsh_script[] =
    "#compdef planctl\n"
    "# zsh completion for planctl(1): commands, flags, their fixed values,\n"
    "# file names, and instance, plan and definition names, versions and run\n"
    "# ids from the database the line names.  Printed by 'planctl completion\n"
    "# zsh'; every TAB asks 'planctl __complete', which answers from the\n"
    "# command table.\n"
    "_planctl() {\n"
    "    local line prog=${words[1]}\n"
    "    local -a out described\n"
    "    [[ $prog == \\~/* ]] && prog=$HOME/${prog#\\~/}\n"
    "    out=(\"${(@f)$(\"$prog\" __complete $((CURRENT - 1)) \"${words[@]}\" "
    "2>/dev/null)}\")\n"
    "    if [[ ${out[1]-} == :files ]]; then\n"
    "        [[ $PREFIX == --*=* ]] && compset -P '*='\n"
    "        _files\n"
    "        return\n"
    "    fi\n"
    "    for line in $out; do\n"
    "        [[ -z $line ]] && continue\n"
    "        if [[ $line == *$'\\t'* ]]; then\n"
    "            "
    "described+=(\"${${line%%$'\\t'*}//:/\\\\:}:${line#*$'\\t'}\")\n"
    "        else\n"
    "            described+=(\"${line//:/\\\\:}\")\n"
    "        fi\n"
    "    done\n"
    "    _describe -t values planctl described\n"
    "}\n"
    "\n"
    "if [[ ${zsh_eval_context[-1]-} == loadautofunc ]]; then\n"
    "    _planctl \"$@\"\n"
    "else\n"
    "    compdef _planctl planctl\n"
    "fi\n";

static const char fish_script[] =
    "# fish completion for planctl(1): commands, flags, their fixed values,\n"
    "# file names, and instance, plan and definition names, versions and run\n"
    "# ids from the database the line names.  Printed by 'planctl completion\n"
    "# fish'; every TAB asks 'planctl __complete', which answers from the\n"
    "# command table.\n"
    "function __planctl_complete\n"
    "    set -l tokens (commandline -opc)\n"
    "    set -l cur (commandline -ct)\n"
    "    set -l prog $tokens[1]\n"
    "    set -l out ($prog __complete (count $tokens) $tokens \"$cur\" "
    "2>/dev/null)\n"
    "    if test \"$out[1]\" = :files\n"
    "        set -l value (string replace -r -- '^--[^=]*=' '' \"$cur\")\n"
    "        set -l prefix (string replace -- \"$value\" '' \"$cur\")\n"
    "        for path in (__fish_complete_path \"$value\")\n"
    "            echo \"$prefix$path\"\n"
    "        end\n"
    "        return\n"
    "    end\n"
    "    printf '%s\\n' $out\n"
    "end\n"
    "\n"
    "complete -c planctl -f -a '(__planctl_complete)'\n";

int cli_completion_script(FILE *f, const char *shell)
{
    if (strcmp(shell, "bash") == 0)
        fputs(bash_script, f);
    else if (strcmp(shell, "zsh") == 0)
        fputs(zsh_script, f);
    else if (strcmp(shell, "fish") == 0)
        fputs(fish_script, f);
    else
        return -1;
    return 0;
}
