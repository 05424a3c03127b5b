/* rd_report: the report writers over a finished rd_model. All run on the
 * thread that owns the model (a session's drainer, or `report`). */
#ifndef RD_REPORT_H
#define RD_REPORT_H

#include <stdio.h>

#include "rd_model.h"

enum rd_weight { RD_W_TIME, RD_W_LINES, RD_W_CALLS };

typedef struct rd_fstat {
    uint64_t calls, self, total; /* self/total in ticks; recursion counted once */
} rd_fstat;

/* Per-function totals, indexed by fid (m->nfunc entries). Caller frees. */
rd_fstat *rd_report_fstats(const rd_model *m);

/* Folded stacks "root;...;leaf COUNT", one line per stack with a nonzero
 * weight (time in integer ns). Returns 0 or -EIO. */
int rd_report_folded(const rd_model *m, enum rd_weight w, FILE *out);

/* profile.txt: functions by self time and by total time. `top` limits each
 * table (0 = all). title/cmd may be NULL. */
int rd_report_profile(const rd_model *m, const char *title, const char *cmd, unsigned top,
                      FILE *out);

/* annotate/: one file per traced source in dir (created), lines with hits
 * and time. Sources are read relative to srcdir (NULL = cwd). Returns 0,
 * or the negative errno of the first file it could not write (-ENOSPC when
 * the disk is full) with a message in err; stops there. */
int rd_report_annotate(const rd_model *m, const char *dir, const char *srcdir, char *err,
                       size_t cap);

/* Same listing for every file, on one stream. */
int rd_report_annotate_stream(const rd_model *m, const char *srcdir, FILE *out);

#endif
