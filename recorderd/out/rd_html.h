/* rd_html: report.html, one self-contained page per session: a summary,
 * the flame graph (rd_flame's SVG inline), the top functions, and each
 * source annotated with time, line events and coverage. Nothing is
 * fetched: no external URL, script or font. Runs on the thread that owns
 * the model. */
#ifndef RD_HTML_H
#define RD_HTML_H

#include <stdint.h>
#include <stdio.h>

#include "rd_cov.h"
#include "rd_model.h"

typedef struct rd_html_info {
    const char *title;  /* session name or trace path; NULL: none */
    const char *cmd;    /* the traced command, or NULL */
    const char *srcdir; /* relative sources resolve against it; NULL: cwd */
    uint64_t wall_ns;   /* the session's wall-clock duration; 0 unknown */
    const rd_cov *cov;  /* coverage of m (finished), or NULL: built here */
    int truncated;      /* with cov NULL: the trace was cut short */
} rd_html_info;

/* Writes the page. Everything taken from the trace (names, sources, the
 * command) is HTML-escaped. Returns 0, -ENOMEM or -EIO. */
int rd_html_write(const rd_model *m, const rd_html_info *info, FILE *out);

#endif
