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
 * controls by class "f" and ids "fg" (the <svg>), "unzoom", "search",
 * "matched", "head": the page must not use them. */
int rd_flame_write_inline(const rd_model *m, const char *title, FILE *out);

/* A memory trace's flame graph for an HTML page, as rd_flame_write_inline
 * but weighed in bytes: which RD_FLAME_ALLOC, the bytes allocated at each
 * stack, or RD_FLAME_LIVE, those still live when tracing stopped; titles
 * say "label (N bytes, P%)". Its ids are those above with prefix before
 * them (and "fg" its <svg>'s), so that a page can hold several graphs. */
enum { RD_FLAME_ALLOC = 1, RD_FLAME_LIVE = 2 };
int rd_flame_write_mem(const rd_model *m, const char *title, int which, const char *prefix,
                       FILE *out);

#endif
