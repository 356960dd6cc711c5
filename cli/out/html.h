/* `wss report --html OUT PROFILE...` (docs/report.md): one self-contained
 * HTML page of one or more profiles.  html.c loads them and writes the
 * page, html_data.c symbolises them and writes their data for it; the page
 * itself (markup, style and the script that draws it) is in cli/out/html/,
 * compiled into the command as the strings below by cli/out/html/embed.awk
 * (html_assets.c, generated). */
#ifndef WSS_CLI_HTML_H
#define WSS_CLI_HTML_H

#include <stdbool.h>
#include <stddef.h>

/* cli/out/html/report.html, report.css and report.js, NUL-terminated.  The
 * template holds the markers @@CSS@@, @@JS@@ and @@DATA@@. */
extern const char wss_html_report_html[];
extern const char wss_html_report_css[];
extern const char wss_html_report_js[];

/* Writes the page of the profiles at paths[0 .. n) (n >= 1), and of the
 * session's other processes that the first of them notes, to out_path:
 * a temporary file beside it, renamed over it when complete.  Returns the
 * command's exit status: 0; 2 when a profile named in paths is not a
 * readable profile (the loader's line on stderr) or the output cannot be
 * written ("wss: OUT_PATH: why"); 1 when out of memory.  raw_stacks: no
 * runtime's interpreter frames folded (cli/model/fold.h). */
int wss_html_report(const char *out_path, char *const *paths, size_t n, bool raw_stacks);

#endif
