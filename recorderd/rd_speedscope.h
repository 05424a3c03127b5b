/* rd_speedscope: profile.speedscope.json, the call tree as one sampled
 * profile in speedscope's file format. Runs on the thread that owns the
 * model. */
#ifndef RD_SPEEDSCOPE_H
#define RD_SPEEDSCOPE_H

#include <stdio.h>

#include "rd_model.h"

/* Writes m to out: one shared frame per function ({name, file, line} for
 * Lua functions, "name [C]" for C ones), and a sampled profile named name
 * (NULL: "luatrace") whose samples are the call-tree paths, root first,
 * weighted by their self time in integer nanoseconds (the weights of
 * `--format folded --weight time`; zero weights left out).
 * Returns 0, -ENOMEM or -EIO. */
int rd_speedscope_write(const rd_model *m, const char *name, FILE *out);

#endif
