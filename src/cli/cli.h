/*
 * cli.h - what the files of the planctl command-line tool share: the command
 * table entry, parsed arguments, the run context, and the output, JSON and
 * rendering helpers.
 *
 * The CLI talks to the library only through planctl.h.  Every view is
 * rendered from the JSON document the library returns, so `-o json` and the
 * text output can never disagree (planctl-json(7)).
 */
#ifndef PLANCTL_CLI_H
#define PLANCTL_CLI_H

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "planctl.h"

/* Exit codes (planctl-json(7)). */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_ERROR = 1,
    CLI_EXIT_USAGE = 2,
    CLI_EXIT_CONFLICT = 3,
    CLI_EXIT_NOTFOUND = 4
};

/* Exit codes (planctl-json(7)) for the commands that wait for a run (--wait,
 * status --watch). */
enum {
    CLI_EXIT_RUN_FAILED = 5, /* it ended FATAL_ERROR or CANCELLED */
    CLI_EXIT_TIMEOUT = 6     /* --timeout elapsed first; the run goes on */
};

/* ---- the command table -------------------------------------------------- */

typedef enum cli_flag_kind {
    CLI_FLAG_BOOL,  /* --force */
    CLI_FLAG_VALUE, /* --plan P; given twice, the last one wins */
    CLI_FLAG_LIST   /* -p K=V, repeatable; every value is kept */
} cli_flag_kind;

typedef struct cli_flag {
    const char *name;    /* long name without dashes: "plan" */
    char short_name;     /* 'p', or 0 for none */
    cli_flag_kind kind;  /* how it takes values */
    int required;        /* the command refuses to run without it */
    const char *metavar; /* "PLAN" in the help; NULL for booleans */
    const char *help;    /* one line */
} cli_flag;

/* How a command needs the database opened (see cli_open_db()). */
typedef enum cli_db_mode {
    CLI_DB_NONE,     /* never opened (validate) */
    CLI_DB_EXISTING, /* must exist: a mistyped --db is reported, not created */
    CLI_DB_CREATE    /* created on first use (apply) */
} cli_db_mode;

/* The most flags a command may have besides the global ones, and the most
 * positional arguments. */
#define CLI_MAX_FLAGS 12
#define CLI_MAX_POS 4

struct cli_ctx;
struct cli_args;

typedef struct cli_command {
    const char *name;
    const char *summary;         /* one line for 'planctl --help' */
    const char *usage;           /* what follows the name in a usage line */
    const char *description;     /* a short paragraph for its --help */
    const char *const *pos;      /* required positionals, NULL-terminated */
    const cli_flag *flags;       /* terminated by an entry with name NULL */
    const char *const *examples; /* NULL-terminated, one command each */
    int (*run)(struct cli_ctx *ctx, const struct cli_args *args);
} cli_command;

/* ---- arguments -------------------------------------------------------- */

/* The global flags' table, for parsing and help. */
extern const cli_flag cli_global_flags[];

/* The global flags, accepted before or after the command. */
typedef struct cli_globals {
    const char *db;     /* --db, or NULL */
    const char *output; /* -o, or NULL */
    int no_color;
    int help;
    int version;
} cli_globals;

typedef struct cli_args {
    const cli_command *cmd; /* NULL when no command was given */
    const char *pos[CLI_MAX_POS];
    size_t npos;
    size_t count[CLI_MAX_FLAGS];        /* how often each flag was given */
    const char **values[CLI_MAX_FLAGS]; /* its values, in order */
} cli_args;

/*
 * Parses argv against the global flags and the command table.  Returns 0,
 * or prints one line on stderr and returns CLI_EXIT_USAGE.  On success
 * required arguments are present unless g->help or g->version is set.
 * Free with cli_args_free() in either case.
 */
int cli_args_parse(cli_globals *g, cli_args *a, const cli_command *const *cmds,
                   size_t ncmds, int argc, char **argv);
void cli_args_free(cli_args *a);

/* The flag's last value, or NULL when it was not given.  name is its long
 * name.  Can't fail. */
const char *cli_arg(const cli_args *a, const char *name);
/* How often the flag was given (for booleans: whether it was).  Can't fail. */
size_t cli_arg_count(const cli_args *a, const char *name);
/* The flag's values in order; *n receives their number.  Can't fail. */
const char *const *cli_arg_list(const cli_args *a, const char *name, size_t *n);

/* Parses a positive run id ("12") for flag (named in the message).  Prints
 * the error and returns CLI_EXIT_USAGE on anything else. */
int cli_parse_id(int64_t *out, const char *flag, const char *text);

/*
 * Splits -p K=V values into an array of planctl_param pointing into copies
 * of the strings of list (kept in *storage).  An entry without '=' becomes
 * a name with a NULL value: the library reports it, an empty name and a
 * name given twice with the unknown and missing parameters, all in one
 * message.  Returns 0.  Free *out and *storage with free().
 */
int cli_parse_params(planctl_param **out, char **storage,
                     const char *const *list, size_t n);

/* The closest of candidates[0..n) to word, or NULL when none is close
 * enough to be worth suggesting.  Can't fail. */
const char *cli_closest(const char *word, const char *const *candidates,
                        size_t n);

/* Prints "planctl: unknown command ..." with the closest command, or the
 * one that does what a word of another tool means ("get": status), and
 * returns CLI_EXIT_USAGE. */
int cli_unknown_command(const char *word, const cli_command *const *cmds,
                        size_t ncmds);

/* The command table (main.c), in the order of --help. */

/* ---- help ------------------------------------------------------------- */

void cli_help_global(FILE *f, const cli_command *const *cmds, size_t ncmds);
void cli_help_command(FILE *f, const cli_command *cmd);

/* Whether fl is shadowed by one of the flags of by (a command's own flags,
 * which the parser looks up before the global ones): same long name or
 * same short letter.  by may be NULL.  Can't fail. */
int cli_flag_shadowed(const cli_flag *fl, const cli_flag *by);

/* ---- generated documentation (doc.c) ------------------------------------ */

/*
 * The hidden command `planctl __man [PAGE]`, not listed in --help: prints
 * a man page (roff), generated from cmds and cli_global_flags, like the
 * help, so a new command or flag shows up in both.  Returns -1 when
 * argv[1] is no such command (main then parses as usual), else the exit
 * code.
 */
int cli_doc_command(int argc, char **argv, const cli_command *const *cmds,
                    size_t ncmds);

/*
 * Writes s as roff text (roff.c): backslashes and hyphens escaped, a line
 * that would start with '.' or '\'' guarded, an empty line a paragraph
 * break.  usage: s is a usage line or a metavariable, whose capitals are
 * set in italics and whose optional parts are not broken across lines.
 */
void cli_roff(FILE *f, const char *s, int usage);

/*
 * Writes the body of a written page (markup.c), src, as roff: the small
 * markup of src/cli/doc/man/README.  Can't fail (what it cannot read is
 * printed as text).
 */
void cli_markup_roff(FILE *f, const char *src);

/* The written sources of the man pages, src/cli/doc/man/NAME.md, embedded at
 * build time by cmake/embed_man.cmake: name ("planctl.3") and text. */
typedef struct cli_man_text {
    const char *name, *text;
} cli_man_text;
extern const cli_man_text cli_man_texts[];
extern const size_t cli_man_ntexts;

/* ---- shell completion (complete.c) -------------------------------------- */

/* The hidden command `planctl __complete CWORD WORD...`: the candidates
 * for WORD number CWORD of a command line (WORD 0 the program), one a
 * line.  Returns -1 when argv[1] is not __complete, else the exit code;
 * never prints on stderr. */
int cli_complete_command(int argc, char **argv, const cli_command *const *cmds,
                         size_t ncmds);

/* Writes the completion script for shell ("bash", "zsh", "fish") to f.
 * Returns 0, or -1 for another shell. */
int cli_completion_script(FILE *f, const char *shell);

struct cli_buf;
/* Appends every path `planctl explain` knows, separated by spaces, for
 * the completion (cmd_explain.c). */
void cli_explain_paths(struct cli_buf *b);

/* ---- the run context ---------------------------------------------------- */

/* What the output may use: decided once from isatty, NO_COLOR and the
 * locale. */
typedef struct cli_term {
    int tty;     /* stdout is a terminal */
    int color;   /* ANSI colour allowed */
    int unicode; /* box drawing and the ellipsis allowed */
    int width;   /* columns to cut lines at; 0: never cut */
} cli_term;

typedef struct cli_ctx {
    /* The database as given (--db, PLANCTL_DB), for planctl_open() only,
     * and as it may be shown: a PostgreSQL URI without its password. */
    const char *db_target;
    const char *db_path;
    int json;           /* -o json or -o yaml: the document */
    const char *output; /* the global -o, for a command with its own */
    cli_term term;
    int64_t now_ms;      /* PLANCTL_NOW, or the time the command started */
    int fixed_now;       /* PLANCTL_NOW was set */
    int signal;          /* the signal that interrupted a poll (wait.c), or 0 */
    int durability_full; /* PLANCTL_DURABILITY=full, or run --durability */
    int all_steps;       /* status --all: big phases not summarised */
    planctl *db;         /* open when the command's db mode asks for it */
    /* The command table (main.c), for help to list and search. */
    const cli_command *const *commands;
    size_t ncommands;
    const char *command; /* the command running, for its hints (hints.c) */
} cli_ctx;

/* Opens ctx->db_path as mode asks (a no-op for CLI_DB_NONE or when it is
 * open already) and installs the PLANCTL_NOW clock.  Prints the library's
 * message and returns the exit code on failure, 0 on success.  Commands
 * call it once their arguments are checked, so a usage error is reported
 * as such and never touches the database. */
int cli_open_db(cli_ctx *ctx, cli_db_mode mode);

/* ---- errors ----------------------------------------------------------- */

/* Appends msg, a library message that came with code rc, to out with the
 * CLI's advice for it, in the CLI's words (hints.c): "instance \"zk\" not
 * found" becomes "instance \"zk\" not found; see 'planctl instances'".
 * A message without advice is appended as it is.  Can't fail. */
void cli_hint(struct cli_buf *out, const char *command, int rc,
              const char *msg);

/* The exit code (planctl-json(7)) for a PLANCTL_E* code.  Can't fail. */
int cli_exit_code(int rc);

/* Prints "planctl: <message>" on stderr. */
void cli_errorf(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Prints the library's message for a failed call (planctl_errmsg(), or the
 * code's text when the handle has none) and returns the exit code. */
int cli_fail(const cli_ctx *ctx, int rc);

/* Prints "planctl: <message>; usage: planctl CMD USAGE" on stderr and
 * returns CLI_EXIT_USAGE. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints "planctl: out of memory" and exits 1.  The CLI is a short-lived
 * process, so running out of memory ends it rather than every caller
 * unwinding. */
#ifdef __GNUC__
__attribute__((noreturn))
#endif
void cli_oom(void);

/* ---- strings ---------------------------------------------------------- */

/* A growable NUL-terminated string.  Appends never fail (see cli_oom). */
typedef struct cli_buf {
    char *s;
    size_t len, cap;
} cli_buf;

#define CLI_BUF_INIT                                                           \
    {                                                                          \
        NULL, 0, 0                                                             \
    }

void cli_buf_add(cli_buf *b, const char *s);
void cli_buf_addn(cli_buf *b, const char *s, size_t n);
void cli_buf_addf(cli_buf *b, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends s with control characters (newlines, tabs, escapes) and the
 * bidirectional controls (U+202E and the like) turned into spaces, so a
 * message stays on one line, cannot drive the terminal, and reads in the
 * order it is written. */
void cli_buf_add_clean(cli_buf *b, const char *s);
void cli_buf_free(cli_buf *b);
/* The string so far ("" when empty).  Can't fail. */
const char *cli_buf_str(const cli_buf *b);

void *cli_xmalloc(size_t n);
char *cli_xstrdup(const char *s);

/* Columns s takes on a terminal: one per code point, which is right for
 * the box drawing, the ellipsis and most text.  Can't fail. */
size_t cli_text_width(const char *s, size_t len);

/* ---- output ----------------------------------------------------------- */

/* Decides what stdout allows.  no_color: --no-color was given. */
void cli_term_detect(cli_term *t, int no_color);

/*
 * A line of output: plain text plus a few coloured ranges.  cli_line_emit()
 * cuts it at the terminal width with an ellipsis and writes the colours
 * only when the terminal takes them.
 */
#define CLI_LINE_MAX_COLORS 4
typedef struct cli_line {
    cli_buf text;
    size_t ncolors;
    struct {
        size_t start, end;
        const char *sgr; /* "32" */
    } colors[CLI_LINE_MAX_COLORS];
} cli_line;

#define CLI_LINE_INIT                                                          \
    {                                                                          \
        CLI_BUF_INIT, 0,                                                       \
        {                                                                      \
            {                                                                  \
                0, 0, NULL                                                     \
            }                                                                  \
        }                                                                      \
    }

/* Appends s coloured with sgr (NULL: plain). */
void cli_line_add_color(cli_line *l, const char *s, const char *sgr);
/* Writes the line and a newline to f, then empties it. */
void cli_line_emit(cli_line *l, FILE *f, const cli_term *t);
void cli_line_free(cli_line *l);

/* The SGR colour for a status word (NULL when it has none).  Can't fail. */
const char *cli_status_sgr(const char *status);

/* ---- times ------------------------------------------------------------ */

/* Parses RFC 3339 ("2026-11-21T14:03:05.000Z", any offset).  Returns 0, or
 * -1 for anything else. */
int cli_time_parse(int64_t *out_ms, const char *text);
/* Reads a time a user gave: every form the CLI prints (RFC 3339, the text
 * form "2026-11-21 14:03:05" with or without a zone, zone-less meaning
 * local), "now", and "2h" or "2h ago" before ctx->now_ms
 * (pctl_time_read()).  Returns 0, or -1 for anything else. */
int cli_time_read(int64_t *out_ms, const cli_ctx *ctx, const char *text);
/* When text (refused by cli_time_read()) is a time with a zone
 * abbreviation other than the local zone's ("... 14:03:05 EST"), prints
 * why that is refused and how to write it, naming flag, and returns 1;
 * else 0 (nothing printed). */
int cli_time_zone_refusal(const char *flag, const char *text);
/* The message part naming what cli_time_read() takes. */
#define CLI_TIME_FORMS                                                         \
    "a time such as \"2026-11-21 14:03:05\" (local; add Z, UTC or +01:00 "     \
    "for another zone), \"2026-11-21T14:03:05Z\", \"14:03\" (today), "         \
    "\"2h ago\" or \"1d\""
/* "2026-11-21 14:03:05" in local time.  buf holds at least 32 bytes. */
void cli_time_format(char *buf, size_t size, int64_t ms);
/* The same with the zone's abbreviation: "2026-11-21 14:03:05 UTC", which
 * cli_time_read() reads back.  buf holds at least 48 bytes. */
void cli_time_format_zone(char *buf, size_t size, int64_t ms);
/* "450ms", "12s", "1m12s", "2h3m", "3d4h".  buf holds at least 32 bytes. */
void cli_duration_format(char *buf, size_t size, int64_t ms);

/* ---- JSON ------------------------------------------------------------- */

/* Parses a document the library returned.  NULL (after printing why) if it
 * is not JSON, which would be a library bug. */
json_t *cli_json_parse(const char *text);
/* Prints a document indented by two spaces (as YAML after
 * cli_output_yaml()). */
int cli_json_print(const char *text);
/* Prints a document built by the CLI itself, then frees it. */
int cli_json_print_obj(json_t *doc);
/* -o yaml: from now on documents are printed as YAML. */
void cli_output_yaml(void);

/* Field accessors that tolerate absent and null fields.  Can't fail. */
const char *cli_jstr(const json_t *obj, const char *key);
int cli_jint(int64_t *out, const json_t *obj, const char *key);
int cli_jtime(int64_t *out, const json_t *obj, const char *key);

/* ---- renderers: pure functions of a document, testable alone ----------- */

/*
 * The status tree of planctl(1).  The document names runs outside the plans
 * it shows by id only; extra, if not NULL, gives their plans where the
 * caller looked them up.  now is the time durations of unfinished runs are
 * measured to.
 */
typedef struct cli_status_extra {
    const char *active_plan;         /* the active run's plan, or NULL */
    const char *const *queued_plans; /* per "queued" entry, NULL: unknown */
    int all_steps; /* every step of a big phase, not the summary */
} cli_status_extra;

/* A phase with more steps than this is summarised in the tree: counts by
 * status and its steps that are not COMPLETE, up to CLI_BIG_PHASE_LIST. */
#define CLI_BIG_PHASE 20
#define CLI_BIG_PHASE_LIST 10

void cli_render_status(FILE *f, const json_t *doc, const cli_term *t,
                       int64_t now, const cli_status_extra *extra);
void cli_render_instances(FILE *f, const json_t *doc, const cli_term *t);
void cli_render_definitions(FILE *f, const json_t *doc, const cli_term *t);
/* limit: the limit the history was asked with, for the "(more: ...)"
 * hint. */
void cli_render_history(FILE *f, const json_t *doc, const cli_term *t,
                        int64_t now, int limit);
/* Each error of a validate document as "path: Type: message (hint)",
 * after "origin:line: " when the error has a line.  Returns the number
 * of errors. */
size_t cli_render_validate(FILE *f, const json_t *doc, const char *origin);

/* An aligned table with a header row, like kubectl's. */
typedef struct cli_table cli_table;

cli_table *cli_table_new(const char *const *headers, size_t ncols);
/* Adds a row of ncols cells (NULL shows as "-").  sgr colours one cell
 * (color_col), or none when sgr is NULL. */
void cli_table_row(cli_table *tb, const char *const *cells, size_t color_col,
                   const char *sgr);
void cli_table_print(cli_table *tb, FILE *f, const cli_term *t);
void cli_table_free(cli_table *tb);

/* ---- shared command helpers --------------------------------------------- */

/* What the library knows of one run, from its history document. */
typedef struct cli_run_info {
    char plan[128];
    char status[32];
    int64_t retry_of; /* 0 when none */
    int position;     /* 1-based place in the queue, 0 when not queued */
} cli_run_info;

/* Looks up run id of instance.  Returns 0, or -1 when it cannot be found
 * (the caller then prints less detail; nothing is printed here). */
int cli_run_lookup(cli_run_info *out, cli_ctx *ctx, const char *instance,
                   int64_t id);

/* ---- the engine (engine_note.c) ----------------------------------------- */

/* Appends the line that says which engine holds the database, from a
 * status document's "engine" (JSON null or absent: none), e.g. "no engine
 * is running on ./planctl.db; start one with 'planctl run'".  Can't
 * fail. */
void cli_engine_line(cli_buf *b, const cli_ctx *ctx, const json_t *engine);

/* Whether a command that follows a run has warned that no engine moves
 * it. */
typedef struct cli_engine_watch {
    int64_t after_ms;   /* PLANCTL_ENGINE_WARN_AFTER, default 5s */
    int64_t down_since; /* monotonic ms since no live engine, or -1 */
    int warned;         /* the warning is out, and no engine came since */
} cli_engine_watch;

/* Reads PLANCTL_ENGINE_WARN_AFTER (a duration; "0" warns at once).  Can't
 * fail. */
void cli_engine_watch_init(cli_engine_watch *w);

/*
 * Looks at the "engine" of a status document read while following run:
 * once no live engine held the database for w->after_ms, appends to msg
 * the one warning to print ("warning: run 12 is waiting for an engine: no
 * engine is running on ..."); when an engine turns up after a warning,
 * one line saying so, and the next absence warns again.  Returns 1 when
 * msg has a line for cli_errorf(), else 0.  Can't fail.
 */
int cli_engine_watch_check(cli_engine_watch *w, cli_buf *msg,
                           const cli_ctx *ctx, const json_t *doc, int64_t run);

/* Prints the outcome of a command that admitted or acted on a run: the
 * document {"schema":1,"run":ID|null} with -o json, or text that the
 * caller formats from the run info. */
int cli_print_run_json(int64_t run);

/* Appends what an admission did, from what the call handed back: 'plan
 * "deploy" admitted as run 1' or 'plan "update" queued as run 3 (position
 * 2)'. */
void cli_admitted_say(cli_buf *b, const planctl_admitted *a);

/* The same for a run known only by its id (delete's cleanup run), read
 * back; just 'run 1 admitted' when it cannot be. */
void cli_admitted_phrase(cli_buf *b, cli_ctx *ctx, const char *instance,
                         int64_t run);

/* Appends 'run 3 of plan "deploy"' (just 'run 3' when it cannot be
 * looked up) and fills *ri (zeroed then). */
void cli_run_phrase(cli_buf *b, cli_run_info *ri, cli_ctx *ctx,
                    const char *instance, int64_t run);

/* The ending shared by cancel, pause and resume: with -o json the run
 * document, else one line 'run 3 of plan "deploy" <what>'.  Returns the
 * exit code. */
int cli_report_run(cli_ctx *ctx, const char *instance, int64_t run,
                   const char *what);

/* The ending shared by the read-only views: prints the document the
 * library returned as JSON with -o json, or renders it as text.  Takes
 * ownership of text (freed with planctl_free).  Returns the exit code. */
int cli_print_doc(cli_ctx *ctx, char *text,
                  void (*render)(FILE *f, const json_t *doc,
                                 const cli_term *t));

/* The archive file: bundles are appended as they come; at the end of
 * each batch (before it commits) they are synced.  A failed write cuts
 * the file back to the end of the last complete batch, so the file only
 * ever holds whole lines. */
typedef struct cli_archive {
    const char *path;
    int fd;
    off_t good;  /* the size after the last synced batch */
    int err;     /* the errno of the failure, 0 if none */
    size_t runs; /* lines written */
} cli_archive;

/* Opens path for appending bundles (created 0600).  Prints the error and
 * returns CLI_EXIT_ERROR when it cannot, or when it is not a regular
 * file.  Close ar->fd when done. */
int cli_archive_open(cli_archive *ar, const char *path);
/* What gc and delete do before writing: refuses path if it is the
 * database (cli_outfile_check()), opens the database, then the archive
 * (path NULL: none; ar->fd stays -1).  Returns 0 or the exit code after
 * printing the error. */
int cli_archive_begin(cli_archive *ar, cli_ctx *ctx, const char *path);
/* The archive callback of planctl_gc_options and planctl_delete_options
 * (data: the cli_archive): a bundle appends a line, NULL syncs.  Returns 0,
 * or -1 with ar->err set after cutting the file back to its last synced
 * size. */
int cli_archive_write(void *data, const char *bundle, size_t len);

/* Reads a whole file, or stdin for "-".  Prints the error and returns
 * CLI_EXIT_ERROR when it cannot.  Free *out with free(). */
int cli_read_input(char **out, size_t *len, const char *path);

/* A definition file as read: JSON handed on as it is, YAML as the same
 * value in JSON with each node's line; YAML that cannot be read becomes
 * the validate document saying why (refusal; json is then NULL). */
typedef struct cli_definition {
    char *json; /* what the library takes, len bytes */
    size_t len;
    const char *origin; /* the path, or "<stdin>" */
    json_t *lines;      /* YAML: path -> line (cli_yaml_line()) */
    json_t *refusal;
    char *yaml; /* YAML: the text as read, for the hints of errors */
} cli_definition;

/* Reads the definition at path ("-": stdin).  YAML by the name (.yaml,
 * .yml), JSON by the name (.json), any other by the content (JSON when it
 * starts with '{' or '[').  Returns 0 or, having printed why, the exit
 * code.  Free d with cli_definition_free() either way. */
int cli_definition_read(cli_definition *d, const char *path);
void cli_definition_free(cli_definition *d);

/* The validate document of d (planctl_definition_check()'s, or the
 * refusal), every error with its "line" in a YAML file (null when it has
 * none).  NULL with the library's code in *rc when the check failed.
 * kinds as planctl_definition_check() takes them. */
json_t *cli_definition_check(int *rc, const cli_definition *d,
                             const char *const *kinds);

/* Refuses, as a usage error, a file a command would write (flag names it
 * in the message) that is the database ctx->db_path or its -wal, -shm or
 * -journal: writing would destroy it, and even a close() of a descriptor
 * on it drops this process's locks on the database.  Only stat()s.
 * Returns 0, or CLI_EXIT_USAGE with the message printed. */
int cli_outfile_check(const cli_ctx *ctx, const char *flag, const char *path);

/* The task kinds of validate and apply's --kind, then PLANCTL_KINDS split
 * at commas (empty entries skipped), as a NULL-terminated array pointing
 * into *storage.  Free both with free(). */
const char **cli_extra_kinds(const cli_args *a, char **storage);

/* The --skip-preflight flag of the commands that admit a run (create, set,
 * upgrade, trigger, retry). */
#define CLI_SKIP_PREFLIGHT_FLAG                                                \
    {                                                                          \
        "skip-preflight", 0, CLI_FLAG_VALUE, 0, "LIST",                        \
            "skip these preflight checks (A,B; all alone skips every one)"     \
    }

/* The paragraph on preflight checks in the help of the commands that
 * admit a run: one text, so that the five cannot drift apart. */
#define CLI_PREFLIGHT_HELP                                                     \
    "The plan's preflight checks, if any, run first, together, for 10 s at\n"  \
    "most.  If any fails, or cannot run or times out (an internal error),\n"   \
    "the run is refused with every cause on one line, in the plan's order:\n"  \
    "'preflight checks failed: Sleepy: internal error: timed out after 10s;\n" \
    "DiskSpace: only 1 GiB free'.  The exit status is 1 if any cause is an\n"  \
    "internal error, else 2.  With -o json a refusal also prints the report\n" \
    "on stdout: {\"schema\":1, \"plan\", \"outcome\" (failed or error),\n"     \
    "\"checks\":[{\"name\", \"status\", \"message\"}], \"warnings\"}, every "  \
    "check in\n"                                                               \
    "order with its status passed, failed, error (internal) or skipped.\n"     \
    "--skip-preflight skips checks, with a warning on stderr for each."

/* Opens the database for a command that admits a run, and fills *o, the
 * admission's options, from --skip-preflight.  Returns 0 or an exit
 * code. */
int cli_open_admit(planctl_admit_options *o, cli_ctx *ctx, const cli_args *a);

/* Prints what the admission's preflight has to show, from its report
 * (ad->preflight_report, freed here): the warnings (skipped checks) on
 * stderr, one line each, and with -o json, when the checks refused the
 * run, the report on stdout (the caller then reports the refusal with
 * cli_fail()). */
void cli_preflight_print(cli_ctx *ctx, planctl_admitted *ad);

#endif
