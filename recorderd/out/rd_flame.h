/* rd_flame: flamegraph.svg, an interactive flame graph of the call tree,
 * written by recorderd itself: self-contained SVG (no external fetch), a
 * small script to zoom into a frame and to search. Runs on the thread that
 * owns the model. */
#ifndef RD_FLAME_H
#define RD_FLAME_H

#include <stdint.h>
#include <stdio.h>

#include "rd_model.h"

/* Writes the flame graph of m to out: one frame per call-tree node, width
 * proportional to inclusive time, the root at the bottom. Nodes without
 * time, or narrower than 0.1 px, are left out. title may be NULL.
 * Returns 0, -ENOMEM or -EIO. */
int rd_flame_write_svg(const rd_model *m, const char *title, FILE *out);

/* The same <svg> element for an HTML page: no XML prolog, no namespace
 * (the HTML parser puts it in SVG's). Its script finds its frames and
 * controls by class "f" and ids "unzoom", "search", "matched": the page
 * must not use them. */
int rd_flame_write_inline(const rd_model *m, const char *title, FILE *out);

#endif
