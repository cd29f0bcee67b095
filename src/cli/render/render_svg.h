/* render_svg.h - the timeline of one run as an SVG picture, drawn by
 * `planctl history NAME --svg FILE` (render_svg.c). */
#ifndef PLANCTL_CLI_RENDER_SVG_H
#define PLANCTL_CLI_RENDER_SVG_H

#include "cli/cli.h"

/*
 * Appends to b a standalone SVG 1.1 document: a Gantt chart of run, a run
 * object of the status document whose steps carry their "attempts" (what
 * planctl_status_json() gives the run chosen with opts.run), of instance
 * instance.  One row per phase (its span) and per step, one bar per
 * attempt coloured by how it ended (an unfinished one reaches now), the
 * waits between attempts as dashed lines, a time axis in UTC, a <title>
 * tooltip on everything and a legend.  No script, no external resource.
 * A pure function of its arguments: the same document and now give the
 * same bytes.  Can't fail (cli_buf ends the process when memory runs
 * out).
 */
void cli_render_svg(cli_buf *b, const char *instance, const json_t *run,
                    int64_t now);

#endif
