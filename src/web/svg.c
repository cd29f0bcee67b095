/*
 * svg.c - the timeline of one run as an SVG 1.1 Gantt chart, what
 * people look at instead of reading timestamps (`planctl history NAME
 * --svg FILE`, and the run page's picture).
 *
 * Top to bottom: a header naming the run with its times and message; a
 * time axis in UTC whose tick spacing is chosen from the run's span; a row
 * for the run; for each phase a row showing the phase's span, then one row
 * per step, where each attempt is a bar coloured by how it ended and the
 * wait between two attempts (the backoff) is a dashed line; a legend.
 * Every bar and line has a <title>, which browsers show as a tooltip.
 *
 * The picture is a pure function of the status document and now, so a
 * fixed clock (PLANCTL_NOW) gives the same bytes every time.  Numbers are
 * written with integer arithmetic in tenths of a pixel, so no locale can
 * change the decimal point.  Text from the database (names, messages) is
 * escaped, and characters XML 1.0 cannot carry are replaced.
 */
#include "web/svg_text.h"
#include "web/web.h"

#include <string.h>
#include <time.h>

/* The geometry, in pixels. */
enum {
    MARGIN = 16,     /* around everything */
    RIGHT = 48,      /* right of the chart: room for the last tick label */
    CHART_W = 760,   /* the time axis */
    ROW_H = 22,      /* one phase or step */
    BAR_H = 12,      /* an attempt */
    SPAN_H = 8,      /* the span of the run or a phase */
    INDENT = 14,     /* step labels under their phase's */
    CHAR_W = 8,      /* a generous average width of a 12px character */
    SMALL_W = 7,     /* ... and of an 11px one */
    LABEL_MIN = 140, /* the label column */
    LABEL_MAX = 440,
    TICK_GAP = 100, /* at least this far apart */
    MIN_BAR = 20,   /* tenths: even a 1 ms attempt shows */
    MSG_MAX = 160   /* characters of a message in the header */
};

typedef struct svg {
    wb *b;
    int64_t t0, t1; /* the times at the left and right ends of the axis */
    int64_t now;
    int finished; /* the run has ended: nothing reaches now */
    int x0;       /* the left end of the axis */
    int width;    /* of the picture */
    int label_chars;
    int top, bottom; /* of the rows */
    int row;         /* rows drawn so far */
} svg;

/* ---- geometry --------------------------------------------------------- */

/* The x of time t, clamped to the axis, in tenths of a pixel. */
static int64_t xat(const svg *s, int64_t t)
{
    if (t < s->t0)
        t = s->t0;
    if (t > s->t1)
        t = s->t1;
    return (int64_t)s->x0 * 10 + (t - s->t0) * CHART_W * 10 / (s->t1 - s->t0);
}

static int row_top(const svg *s)
{
    return s->top + s->row * ROW_H;
}

/* The end of something that started and has not finished: now, unless the
 * run ended (then its end; the picture never runs past it). */
static int64_t open_end(const svg *s)
{
    return s->finished ? s->t1 : s->now;
}

/* The span of the run: from its start (its creation, while it waits) to
 * its end or now, widened to every attempt and every retry due later. */
static void span(svg *s, const json_t *run)
{
    int64_t t0, t1, v;
    size_t i, j, k;
    const json_t *ph, *st, *at;

    if (!pctl_web_jtime(&t0, run, "started_at") &&
        !pctl_web_jtime(&t0, run, "created_at"))
        t0 = s->now;
    s->finished = pctl_web_jtime(&t1, run, "finished_at");
    if (!s->finished)
        t1 = s->now > t0 ? s->now : t0;
    json_array_foreach(json_object_get(run, "phases"), i, ph)
    {
        json_array_foreach(json_object_get(ph, "steps"), j, st)
        {
            if (!s->finished && pctl_web_jtime(&v, st, "next_attempt_at") &&
                v > t1)
                t1 = v;
            json_array_foreach(json_object_get(st, "attempts"), k, at)
            {
                if (pctl_web_jtime(&v, at, "started_at") && v < t0)
                    t0 = v;
                if (pctl_web_jtime(&v, at, "finished_at") && v > t1)
                    t1 = v;
            }
        }
    }
    if (t1 <= t0)
        t1 = t0 + 1000;
    s->t0 = t0;
    s->t1 = t1;
}

/* Characters of the longest row label. */
static int label_chars(const json_t *run)
{
    size_t i, j;
    const json_t *ph, *st;
    int64_t id = 0;
    char buf[64];
    size_t most;

    pctl_web_jint(&id, run, "id");
    most = (size_t)snprintf(buf, sizeof buf, "run %lld", (long long)id);
    json_array_foreach(json_object_get(run, "phases"), i, ph)
    {
        const char *name = pctl_web_jstr(ph, "name"),
                   *how = pctl_web_jstr(ph, "strategy");
        size_t n = strlen(name ? name : "") + strlen(how ? how : "") + 3;

        if (n > most)
            most = n;
        json_array_foreach(json_object_get(ph, "steps"), j, st)
        {
            const char *sn = pctl_web_jstr(st, "name");

            n = strlen(sn ? sn : "") + 2; /* the indent */
            if (n > most)
                most = n;
        }
    }
    return (int)most;
}

/* ---- elements --------------------------------------------------------- */

/* Opens <text> at (x, y) in pixels with extra attributes. */
static void text_open(svg *s, int x, int y, const char *attrs)
{
    pctl_wb_addf(s->b, "<text x=\"%d\" y=\"%d\"%s%s>", x, y,
                 attrs && *attrs ? " " : "", attrs ? attrs : "");
}

/* A row label: the text cut to the label column, with its <title>. */
static void label(svg *s, int indent, const char *text, const char *attrs,
                  const char *tip)
{
    size_t room = (size_t)(s->label_chars - indent / CHAR_W);
    wb b = WB_INIT;

    /* Cut by an estimate of the characters' width, and clipped to the
     * column in case the font is wider. */
    pctl_wb_add(&b, "clip-path=\"url(#labels)\"");
    if (attrs) {
        pctl_wb_add(&b, " ");
        pctl_wb_add(&b, attrs);
    }
    text_open(s, MARGIN + indent, row_top(s) + 15, wb_str(&b));
    pctl_wb_free(&b);
    pctl_wb_add(s->b, "<title>");
    pctl_svg_esc_tip(s->b, tip);
    pctl_wb_add(s->b, "</title>");
    pctl_svg_esc_max(s->b, text, strlen(text) > room ? room - 1 : 0, 0);
    pctl_wb_add(s->b, "</text>\n");
}

/* A bar from a to b on the current row, height h, with its class, status
 * and tooltip. */
static void bar(svg *s, const char *cls, const char *status, int64_t a,
                int64_t b, int h, const char *extra, const char *tip)
{
    int64_t x = xat(s, a), w = xat(s, b) - x;

    if (w < MIN_BAR)
        w = MIN_BAR;
    pctl_wb_addf(s->b, "<rect class=\"%s status-%s\" x=\"", cls,
                 pctl_svg_status_word(status));
    pctl_svg_px(s->b, x);
    pctl_wb_addf(s->b, "\" y=\"%d\" width=\"", row_top(s) + (ROW_H - h) / 2);
    pctl_svg_px(s->b, w);
    pctl_wb_addf(s->b, "\" height=\"%d\" fill=\"%s\"%s%s><title>", h,
                 pctl_svg_fill(status), extra ? " " : "", extra ? extra : "");
    pctl_svg_esc_tip(s->b, tip);
    pctl_wb_add(s->b, "</title></rect>\n");
}

/* A dashed line from a to b across the middle of the current row. */
static void wait_line(svg *s, const char *cls, int64_t a, int64_t b,
                      const char *tip)
{
    int y = row_top(s) + ROW_H / 2;

    pctl_wb_addf(s->b, "<line class=\"%s\" x1=\"", cls);
    pctl_svg_px(s->b, xat(s, a));
    pctl_wb_addf(s->b, "\" y1=\"%d\" x2=\"", y);
    pctl_svg_px(s->b, xat(s, b));
    pctl_wb_addf(s->b,
                 "\" y2=\"%d\" stroke=\"#495057\" stroke-width=\"1.5\" "
                 "stroke-dasharray=\"3,2\"><title>",
                 y);
    pctl_svg_esc_tip(s->b, tip);
    pctl_wb_add(s->b, "</title></line>\n");
}

/* A note in the chart area of the current row, for what has no bar. */
static void note(svg *s, const char *status, const char *message)
{
    text_open(s, s->x0 + 4, row_top(s) + 15,
              "fill=\"#868e96\" font-style=\"italic\"");
    pctl_svg_esc(s->b, status);
    if (message && *message) {
        pctl_wb_add(s->b, ": ");
        pctl_svg_esc_max(s->b, message, MSG_MAX, 0);
    }
    pctl_wb_add(s->b, "</text>\n");
}

/* Appends "started ..., finished ... (took D)" or "running for D" lines of
 * a tooltip for something from a to b (b 0: still going). */
static void tip_times(wb *t, const svg *s, int64_t a, int64_t b)
{
    char when[64], d[32];

    pctl_svg_utc_long(when, sizeof when, a);
    pctl_wb_addf(t, "\nstarted %s", when);
    if (b) {
        pctl_svg_utc_long(when, sizeof when, b);
        pctl_svg_duration(d, sizeof d, b - a);
        pctl_wb_addf(t, "\nfinished %s, took %s", when, d);
    } else {
        pctl_svg_duration(d, sizeof d, open_end(s) - a);
        pctl_wb_addf(t, "\nrunning, %s so far", d);
    }
}

static void tip_message(wb *t, const json_t *obj)
{
    const char *msg = pctl_web_jstr(obj, "message");

    if (msg && *msg) {
        pctl_wb_add(t, "\n");
        pctl_svg_add_text(t, msg);
    }
}

/* ---- the parts -------------------------------------------------------- */

static void header(svg *s, const char *instance, const json_t *run,
                   const char *msg)
{
    int64_t id = 0, a, b;
    const char *plan = pctl_web_jstr(run, "plan");
    const char *status = pctl_web_jstr(run, "status");
    char when[64], d[32];

    pctl_web_jint(&id, run, "id");
    text_open(s, MARGIN, 24, "font-size=\"15\" font-weight=\"bold\"");
    pctl_svg_esc(s->b, instance);
    pctl_wb_addf(s->b, ": run %lld, plan ", (long long)id);
    pctl_svg_esc(s->b, plan ? plan : "?");
    pctl_wb_add(s->b, " <tspan fill=\"");
    pctl_wb_add(s->b, pctl_svg_text_fill(status));
    pctl_wb_add(s->b, "\">");
    pctl_svg_esc(s->b, status ? status : "UNKNOWN");
    pctl_wb_add(s->b, "</tspan></text>\n");

    text_open(s, MARGIN, 44, "fill=\"#495057\"");
    if (pctl_web_jtime(&a, run, "started_at")) {
        pctl_svg_utc_long(when, sizeof when, a);
        pctl_wb_addf(s->b, "started %s", when);
        if (pctl_web_jtime(&b, run, "finished_at")) {
            pctl_svg_utc_long(when, sizeof when, b);
            pctl_svg_duration(d, sizeof d, b - a);
            pctl_wb_addf(s->b, ", finished %s, took %s", when, d);
        } else {
            pctl_svg_duration(d, sizeof d, s->now - a);
            pctl_wb_addf(s->b, ", running for %s", d);
        }
    } else if (pctl_web_jtime(&a, run, "created_at")) {
        pctl_svg_utc_long(when, sizeof when, a);
        pctl_wb_addf(s->b, "created %s, not started", when);
    }
    pctl_wb_add(s->b, "</text>\n");
    if (msg) {
        text_open(s, MARGIN, 64, "fill=\"#495057\"");
        pctl_svg_esc_max(s->b, msg, MSG_MAX, 0);
        pctl_wb_add(s->b, "</text>\n");
    }
}

/* The spacing of the ticks: the smallest of a list of round durations
 * that keeps them TICK_GAP apart, else whole days. */
static int64_t tick_step(int64_t span_ms)
{
    static const int64_t steps[] = {
        1,        2,        5,        10,        20,       50,
        100,      200,      500,      1000,      2000,     5000,
        10000,    15000,    30000,    60000,     120000,   300000,
        600000,   900000,   1800000,  3600000,   7200000,  10800000,
        21600000, 43200000, 86400000, 172800000, 604800000};
    int64_t most = CHART_W / TICK_GAP;
    size_t i;

    for (i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (span_ms <= steps[i] * most)
            return steps[i];
    return (span_ms / most / 86400000 + 1) * 86400000;
}

static void axis(svg *s)
{
    int64_t step = tick_step(s->t1 - s->t0), t;
    int same_day = s->t0 / 86400000 == s->t1 / 86400000;
    int y = s->top - 8;
    char buf[64];

    text_open(s, MARGIN, y, "fill=\"#495057\" font-size=\"11\"");
    pctl_wb_add(s->b, "time (UTC)</text>\n");
    /* The first multiple of step at or after t0: ticks fall on round
     * times of day (step divides a day) whatever the run's start. */
    t = s->t0 % step == 0 ? s->t0 : (s->t0 / step + 1) * step;
    for (; t <= s->t1; t += step) {
        if (step < 1000)
            pctl_svg_utc_format(buf, sizeof buf, t, SVG_T_SECONDS, 1);
        else if (step < 60000)
            pctl_svg_utc_format(buf, sizeof buf, t, SVG_T_SECONDS, 0);
        else if (step < 86400000)
            pctl_svg_utc_format(buf, sizeof buf, t,
                                same_day ? SVG_T_MINUTES : SVG_T_DAY_TIME, 0);
        else
            pctl_svg_utc_format(buf, sizeof buf, t, SVG_T_DATE, 0);
        pctl_wb_add(s->b, "<line class=\"tick\" x1=\"");
        pctl_svg_px(s->b, xat(s, t));
        pctl_wb_addf(s->b, "\" y1=\"%d\" x2=\"", s->top - 4);
        pctl_svg_px(s->b, xat(s, t));
        pctl_wb_addf(s->b, "\" y2=\"%d\" stroke=\"#dee2e6\"/>\n", s->bottom);
        pctl_wb_add(s->b, "<text class=\"tick-label\" x=\"");
        pctl_svg_px(s->b, xat(s, t));
        pctl_wb_addf(s->b,
                     "\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\" "
                     "fill=\"#495057\">%s</text>\n",
                     y, buf);
    }
}

/* The background of the phase rows, under the grid. */
static void stripes(svg *s, const json_t *phases)
{
    size_t i;
    const json_t *ph;
    int row = 1; /* under the run's */

    json_array_foreach(phases, i, ph)
    {
        pctl_wb_addf(s->b,
                     "<rect class=\"phase-row\" x=\"0\" y=\"%d\" "
                     "width=\"%d\" height=\"%d\" fill=\"#f1f3f5\"/>\n",
                     s->top + row * ROW_H, s->width, ROW_H);
        row += 1 + (int)json_array_size(json_object_get(ph, "steps"));
    }
}

static void run_row(svg *s, const json_t *run)
{
    wb tip = WB_INIT;
    const char *status = pctl_web_jstr(run, "status"),
               *plan = pctl_web_jstr(run, "plan");
    int64_t id = 0, a, b;
    char name[64];

    pctl_web_jint(&id, run, "id");
    snprintf(name, sizeof name, "run %lld", (long long)id);
    pctl_wb_addf(&tip, "run %lld of plan %s: %s", (long long)id,
                 plan ? plan : "?", status ? status : "UNKNOWN");
    if (pctl_web_jtime(&a, run, "started_at"))
        tip_times(&tip, s, a, pctl_web_jtime(&b, run, "finished_at") ? b : 0);
    tip_message(&tip, run);
    label(s, 0, name, "font-weight=\"bold\"", wb_str(&tip));
    if (pctl_web_jtime(&a, run, "started_at"))
        bar(s, "run", status, a,
            pctl_web_jtime(&b, run, "finished_at") ? b : open_end(s), SPAN_H,
            "fill-opacity=\"0.45\"", wb_str(&tip));
    else
        note(s, status ? status : "UNKNOWN", pctl_web_jstr(run, "message"));
    pctl_wb_free(&tip);
    s->row++;
}

static void phase_row(svg *s, const json_t *ph)
{
    wb tip = WB_INIT, name = WB_INIT;
    const char *status = pctl_web_jstr(ph, "status");
    const char *pname = pctl_web_jstr(ph, "name"),
               *how = pctl_web_jstr(ph, "strategy");
    int64_t a, b;
    int started = pctl_web_jtime(&a, ph, "started_at");
    int ended = pctl_web_jtime(&b, ph, "finished_at");

    pctl_wb_addf(&name, "%s (%s)", pname ? pname : "?", how ? how : "?");
    pctl_wb_addf(&tip, "phase %s: %s", wb_str(&name),
                 status ? status : "UNKNOWN");
    if (started)
        tip_times(&tip, s, a, ended ? b : 0);
    tip_message(&tip, ph);
    label(s, 0, wb_str(&name), "font-weight=\"bold\"", wb_str(&tip));
    /* A phase carried over from an earlier run ended before this one
     * started: it has no place on this axis. */
    if (started && (!ended || b >= s->t0))
        bar(s, "phase", status, a, ended ? b : open_end(s), SPAN_H,
            "fill-opacity=\"0.45\"", wb_str(&tip));
    else
        note(s, status ? status : "UNKNOWN", pctl_web_jstr(ph, "message"));
    pctl_wb_free(&tip);
    pctl_wb_free(&name);
    s->row++;
}

static void step_row(svg *s, const json_t *st)
{
    wb tip = WB_INIT;
    const char *name = pctl_web_jstr(st, "name"),
               *status = pctl_web_jstr(st, "status");
    const json_t *attempts = json_object_get(st, "attempts"), *at;
    int64_t max = 0, n = 0, prev_end = 0, a, b, due;
    size_t i;

    if (!name)
        name = "?";
    pctl_web_jint(&max, st, "max_attempts");
    pctl_web_jint(&n, st, "attempt");
    pctl_wb_addf(&tip, "step %s: %s", name, status ? status : "UNKNOWN");
    if (n > 0)
        pctl_wb_addf(&tip, ", attempt %lld/%lld", (long long)n, (long long)max);
    tip_message(&tip, st);
    label(s, INDENT, name, NULL, wb_str(&tip));
    pctl_wb_free(&tip);

    json_array_foreach(attempts, i, at)
    {
        const char *as = pctl_web_jstr(at, "status");
        int64_t number = (int64_t)i + 1, code;
        char d[32];
        int ended;

        if (!pctl_web_jtime(&a, at, "started_at"))
            continue;
        ended = pctl_web_jtime(&b, at, "finished_at");
        pctl_web_jint(&number, at, "number");
        if (prev_end) {
            wb tw = WB_INIT;

            pctl_svg_duration(d, sizeof d, a - prev_end);
            pctl_wb_addf(&tw, "%s: waited %s before attempt %lld", name, d,
                         (long long)number);
            wait_line(s, "backoff", prev_end, a, wb_str(&tw));
            pctl_wb_free(&tw);
        }
        pctl_wb_addf(&tip, "%s: attempt %lld of %lld, %s", name,
                     (long long)number, (long long)max, as ? as : "UNKNOWN");
        tip_times(&tip, s, a, ended ? b : 0);
        if (pctl_web_jint(&code, at, "exit_code"))
            pctl_wb_addf(&tip, "\nexit code %lld", (long long)code);
        tip_message(&tip, at);
        bar(s, "attempt", as, a, ended ? b : open_end(s), BAR_H, NULL,
            wb_str(&tip));
        pctl_wb_free(&tip);
        prev_end = ended ? b : 0;
    }
    /* A step waiting to be retried: the wait so far and still to come. */
    if (status && strcmp(status, "ERROR") == 0 && prev_end &&
        pctl_web_jtime(&due, st, "next_attempt_at")) {
        char d[32], when[64];

        pctl_svg_utc_long(when, sizeof when, due);
        pctl_svg_duration(d, sizeof d,
                          due > s->now ? due - s->now : s->now - due);
        pctl_wb_addf(&tip, "%s: attempt %lld due %s (%s %s)", name,
                     (long long)n + 1, when, due > s->now ? "in" : "late by",
                     d);
        wait_line(s, "backoff next", prev_end, due, wb_str(&tip));
        /* Where the next attempt will begin: an empty bar's outline. */
        pctl_wb_add(s->b, "<rect class=\"next-try\" x=\"");
        pctl_svg_px(s->b, xat(s, due));
        pctl_wb_addf(s->b,
                     "\" y=\"%d\" width=\"6\" height=\"%d\" fill=\"none\" "
                     "stroke=\"%s\" stroke-dasharray=\"2,1\"><title>",
                     row_top(s) + (ROW_H - BAR_H) / 2, BAR_H,
                     pctl_svg_fill("ERROR"));
        pctl_svg_esc_tip(s->b, wb_str(&tip));
        pctl_wb_add(s->b, "</title></rect>\n");
        pctl_wb_free(&tip);
    }
    if (json_array_size(attempts) == 0)
        note(s, status ? status : "UNKNOWN", pctl_web_jstr(st, "message"));
    s->row++;
}

static void now_line(svg *s)
{
    int64_t x = xat(s, s->now);

    if (s->finished || s->now < s->t0 || s->now > s->t1)
        return;
    pctl_wb_add(s->b, "<line class=\"now\" x1=\"");
    pctl_svg_px(s->b, x);
    pctl_wb_addf(s->b, "\" y1=\"%d\" x2=\"", s->top - 4);
    pctl_svg_px(s->b, x);
    pctl_wb_addf(s->b,
                 "\" y2=\"%d\" stroke=\"#1c7ed6\" stroke-dasharray=\"6,3\">"
                 "<title>now</title></line>\n",
                 s->bottom);
    pctl_wb_add(s->b, "<text class=\"now-label\" x=\"");
    pctl_svg_px(s->b, x);
    pctl_wb_addf(s->b,
                 "\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\" "
                 "fill=\"#1c7ed6\">now</text>\n",
                 s->bottom + 12);
}

static void legend(svg *s, int y)
{
    static const char *const items[][2] = {{"COMPLETE", "complete"},
                                           {"ERROR", "error, retried"},
                                           {"FATAL_ERROR", "fatal error"},
                                           {"CANCELLED", "cancelled"},
                                           {"IN_PROGRESS", "in progress"}};
    int x = MARGIN;
    size_t i;

    pctl_wb_add(s->b, "<g class=\"legend\" font-size=\"11\">\n");
    for (i = 0; i < sizeof items / sizeof items[0]; i++) {
        pctl_wb_addf(s->b,
                     "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" "
                     "fill=\"%s\"/>\n",
                     x, y - 10, pctl_svg_fill(items[i][0]));
        pctl_wb_addf(s->b, "<text x=\"%d\" y=\"%d\">%s</text>\n", x + 16, y,
                     items[i][1]);
        x += 16 + (int)strlen(items[i][1]) * SMALL_W + 16;
    }
    pctl_wb_addf(s->b,
                 "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                 "stroke=\"#495057\" stroke-width=\"1.5\" "
                 "stroke-dasharray=\"3,2\"/>\n",
                 x, y - 4, x + 24, y - 4);
    pctl_wb_addf(s->b,
                 "<text x=\"%d\" y=\"%d\">wait before the next attempt "
                 "(backoff)</text>\n",
                 x + 28, y);
    pctl_wb_add(s->b, "</g>\n");
}

void pctl_web_render_svg(wb *b, const char *instance, const json_t *run,
                         int64_t now)
{
    svg s;
    const json_t *phases = json_object_get(run, "phases"), *ph, *st;
    const char *msg = pctl_web_jstr(run, "message");
    size_t i, j, rows = 1;
    int64_t id = 0;
    int height;

    memset(&s, 0, sizeof s);
    s.b = b;
    s.now = now;
    span(&s, run);
    s.label_chars = label_chars(run);
    if (s.label_chars * CHAR_W < LABEL_MIN)
        s.label_chars = LABEL_MIN / CHAR_W;
    if (s.label_chars * CHAR_W > LABEL_MAX)
        s.label_chars = LABEL_MAX / CHAR_W;
    s.x0 = MARGIN + s.label_chars * CHAR_W + MARGIN;
    s.width = s.x0 + CHART_W + RIGHT;
    if (msg && !*msg)
        msg = NULL;
    s.top = (msg ? 64 : 44) + 34;
    json_array_foreach(phases, i, ph)
    {
        rows += 1 + json_array_size(json_object_get(ph, "steps"));
    }
    s.bottom = s.top + (int)rows * ROW_H;
    height = s.bottom + 52;
    pctl_web_jint(&id, run, "id");

    pctl_wb_add(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    pctl_wb_addf(b,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
                 "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                 "font-family=\"DejaVu Sans, Verdana, sans-serif\" "
                 "font-size=\"12\">\n",
                 s.width, height, s.width, height);
    pctl_wb_add(b, "<title>");
    pctl_svg_esc(b, instance);
    pctl_wb_addf(b, ": timeline of run %lld</title>\n", (long long)id);
    pctl_wb_addf(b,
                 "<defs><clipPath id=\"labels\"><rect x=\"0\" y=\"0\" "
                 "width=\"%d\" height=\"%d\"/></clipPath></defs>\n",
                 s.x0 - 6, height);
    pctl_wb_addf(b,
                 "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%d\" "
                 "height=\"%d\" fill=\"#ffffff\"/>\n",
                 s.width, height);
    stripes(&s, phases);
    header(&s, instance, run, msg);
    axis(&s);
    run_row(&s, run);
    json_array_foreach(phases, i, ph)
    {
        phase_row(&s, ph);
        json_array_foreach(json_object_get(ph, "steps"), j, st)
            step_row(&s, st);
    }
    now_line(&s);
    legend(&s, s.bottom + 36);
    pctl_wb_add(b, "</svg>\n");
}
