/* svg_text.h - text for the SVG timeline (svg_text.c): XML escaping,
 * lengths in tenths of a pixel, times in UTC, durations, and the colours
 * and words of a status.  Private to svg.c. */
#ifndef PCTL_WEB_SVG_TEXT_H
#define PCTL_WEB_SVG_TEXT_H

#include "web/web.h"

/* The shapes of a time in UTC. */
typedef enum svg_time_shape {
    SVG_T_FULL,     /* 2026-11-21 14:03:05 */
    SVG_T_SECONDS,  /* 14:03:05 */
    SVG_T_MINUTES,  /* 14:03 */
    SVG_T_DAY_TIME, /* 11-21 14:03 */
    SVG_T_DATE      /* 2026-11-21 */
} svg_time_shape;

/*
 * Appends s as XML character data (also fit for a quoted attribute): the
 * five special characters as entities; control characters (C0, DEL, C1)
 * as spaces, except newlines when keep_lines (a tooltip's lines); what
 * XML 1.0 cannot hold (U+FFFE, U+FFFF) and bytes that are not UTF-8 as
 * U+FFFD.  At most max characters (0: all), then an ellipsis.
 */
void pctl_svg_esc_max(wb *b, const char *text, size_t max, int keep_lines);

/* pctl_svg_esc_max() of all of text, on one line. */
void pctl_svg_esc(wb *b, const char *text);

/* A tooltip: its lines were built by the renderer, whose text from the
 * database went through pctl_svg_add_text(), so every newline is one of ours.
 */
void pctl_svg_esc_tip(wb *b, const char *text);

/* Appends text from the database to a tooltip, on one line. */
void pctl_svg_add_text(wb *t, const char *text);

/* Appends a length in tenths of a pixel as "12" or "12.5". */
void pctl_svg_px(wb *b, int64_t tenths);

/* A time in UTC in the given shape, then ".123" when with_ms. */
void pctl_svg_utc_format(char *buf, size_t size, int64_t ms,
                         svg_time_shape shape, int with_ms);

/* "2026-11-21 14:03:05.123 UTC" */
void pctl_svg_utc_long(char *buf, size_t size, int64_t ms);

/* "450ms", "1.25s", then the CLI's "1m12s", "2h3m". */
void pctl_svg_duration(char *buf, size_t size, int64_t ms);

/* The fill of a status: how an attempt, a step, a phase or the run ended
 * or stands. */
const char *pctl_svg_fill(const char *status);

/* The colour of a status word in text: waiting's is too pale there. */
const char *pctl_svg_text_fill(const char *status);

/* A status word safe in a class name. */
const char *pctl_svg_status_word(const char *status);

#endif
