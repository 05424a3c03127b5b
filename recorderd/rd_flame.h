/* rd_flame: flamegraph.svg, an interactive flame graph of the call tree,
 * written by recorderd itself: self-contained SVG (no external fetch), a
 * small script to zoom into a frame and to search. Runs on the thread that
 * owns the model. */
#ifndef RD_FLAME_H
#define RD_FLAME_H

#include <stdio.h>

#include "rd_model.h"

/* Writes the flame graph of m to out: one frame per call-tree node, width
 * proportional to inclusive time, the root at the bottom. Nodes without
 * time, or narrower than 0.1 px, are left out. title may be NULL.
 * Returns 0, -ENOMEM or -EIO. */
int rd_flame_write_svg(const rd_model *m, const char *title, FILE *out);

/* Length (1-4) of the valid UTF-8 sequence at s, or 0 if s starts with a
 * byte that XML and JSON text cannot hold as is (invalid UTF-8, surrogates,
 * U+FFFE/U+FFFF). */
int rd_utf8_seq(const char *s);

#endif
