/*
 * render_svg.c - the timeline of `planctl history NAME --svg FILE`: the
 * library's picture (src/web/svg.c, which the run page shows too).
 */
#include "cli/render/render_svg.h"

#include "web/web.h"

void cli_render_svg(cli_buf *b, const char *instance, const json_t *run,
                    int64_t now)
{
    wb w = WB_INIT;

    pctl_web_render_svg(&w, instance, run, now);
    if (w.oom)
        cli_oom();
    cli_buf_add(b, wb_str(&w));
    pctl_wb_free(&w);
}
