/* rd_callgrind: callgrind.out, the call graph with self and inclusive
 * costs for KCachegrind and callgrind_annotate (valgrind's callgrind format;
 * what we write and why: doc/reports.md, "callgrind").
 * Runs on the thread that owns the model. */
#ifndef RD_CALLGRIND_H
#define RD_CALLGRIND_H

#include <stdio.h>

#include "rd_model.h"

/* Writes m as a callgrind profile with two events, ns (wall time) and
 * lines (line events). cmd (may be NULL) goes to the `cmd:` header; the
 * Lua sources are named by absolute path when they resolve against srcdir
 * (NULL = the current directory). Returns 0, -ENOMEM or -EIO. */
int rd_callgrind_write(const rd_model *m, const char *cmd, const char *srcdir, FILE *out);

#endif
