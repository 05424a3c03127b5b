/* rd_report: the report writers over a finished rd_model. All run on the
 * thread that owns the model (a session's drainer, or `report`). */
#ifndef RD_REPORT_H
#define RD_REPORT_H

#include <stdio.h>

#include "rd_model.h"

/* What a folded stack weighs: time (ns), line events, calls; and with a
 * memory trace (rd_mem.h) bytes allocated, objects allocated, bytes live
 * at the end. */
enum rd_weight { RD_W_TIME, RD_W_LINES, RD_W_CALLS, RD_W_BYTES, RD_W_OBJECTS, RD_W_LIVE };

typedef struct rd_fstat {
    uint64_t calls, self, total; /* self/total in ticks; recursion counted once */
} rd_fstat;

/* Per-function totals, indexed by fid (m->nfunc entries). Caller frees. */
rd_fstat *rd_report_fstats(const rd_model *m);

/* What stacks.folded may hold. A stack is cut to RD_PATH_MAX frames
 * (rd_path.h), and a line to RD_FOLD_LINE_MAX bytes: past it, the frames
 * in the middle become one frame RD_PATH_CUT_LABEL ("[...]"), the
 * root-most quarter and the leaf-most rest kept. The file stops at
 * rd_report_fold_max bytes: the weight of every stack left out goes on a
 * last line "[...] COUNT", so the weights still add up. */
#define RD_FOLD_LINE_MAX (64u << 10)
#define RD_FOLD_MAX (64ull << 20)
#define RD_FOLD_PER_STACK (2u << 10)

/* RD_FOLD_MAX plus RD_FOLD_PER_STACK per distinct stack of m (its call
 * tree's nodes). A real program's lines average well under that: luacheck
 * over Penlight, 246 625 stacks 40 frames deep on average, writes 390 MB,
 * whole; a forged trace, whose stacks grow longer per record, is cut: a
 * chain of 20 000 distinct functions (a 1 MB trace) would write 436 MB. */
uint64_t rd_report_fold_max(const rd_model *m);

/* Folded stacks "root;...;leaf COUNT", one line per stack with a nonzero
 * weight (time in integer ns), bounded as above. Returns 0, -EIO or
 * -ENOMEM; *cut (unless NULL) is the share of the weight on the last line
 * (0: the file holds every stack). */
int rd_report_folded(const rd_model *m, enum rd_weight w, FILE *out, double *cut);

/* profile.txt: functions by self time and by total time. `top` limits each
 * table (0 = all), the rows past it summed up in one line. title/cmd may
 * be NULL. */
/* profile.txt's rows per table: 200 000 loadstring chunks made a 49 MB
 * file (every function twice) that no one reads past its top; callgrind.out
 * and profile.pb.gz keep every function. */
#define RD_PROFILE_ROWS 2000

/* profile.txt's memory table (rd_memtab.c), for a trace with MEM
 * records: the totals, then functions by bytes allocated, callees
 * included. Returns 0 or -ENOMEM. */
int rd_report_memory(const rd_model *m, unsigned top, FILE *out);

/* What profile.txt and run's summary say of a trace cut short (its
 * process killed, its ring lost): said where people look, not only in
 * session.json's status. */
#define RD_REPORT_CUT_SHORT                                                                       \
    "INCOMPLETE: the trace ended early (the process was killed or exec'd another program, "    \
    "waited in C past an attach's end, or its trace broke off): "                               \
    "these are its events until then"

/* cut_short: the trace ended early (RD_REPORT_CUT_SHORT after the head). */
int rd_report_profile(const rd_model *m, const char *title, const char *cmd, unsigned top,
                      int cut_short, FILE *out);

/* The summary `run` prints on stderr: traced time and events, the top 10
 * functions by self time, and the page to open: DIR/report.html (DIR/
 * when it is not there), relative to our working directory when under
 * it. Returns 0 or -ENOMEM / -EIO. */
int rd_report_summary(const rd_model *m, const char *dir, FILE *out);

/* A source line's stats, summed over the functions that share it. */
typedef struct rd_fline {
    uint32_t line;
    uint32_t group; /* its group in rd_flines */
    uint64_t hits, ticks;
    uint64_t bytes; /* allocated on the line itself (a memory trace) */
} rd_fline;

/* The model's lines grouped by their function's source, built once so that
 * a writer going through every source never scans all the lines per
 * source (quadratic in the sources: 100k loadstring chunks took minutes).
 * Group k's lines, one per line number in increasing order, are
 * line[first[k]] up to line[first[k + 1]]. */
typedef struct rd_flines {
    rd_fline *line;
    uint32_t *first; /* ngroup + 1 entries */
    uint32_t ngroup;
} rd_flines;

/* Groups the lines of m: those of a function whose source slot
 * (rd_model_src_slot) is slot go to group group_of[slot] - 1
 * (group_of[slot] 0: to none), or, with group_of NULL, to group slot.
 * group_of has RD_SLOTS(m) entries; groups past ngroup are left out. O(lines log lines + ngroup). Returns 0 or -ENOMEM. */
int rd_report_flines_init(rd_flines *fl, const rd_model *m, const uint32_t *group_of,
                          uint32_t ngroup);
void rd_report_flines_close(rd_flines *fl);

/* Group k's lines (valid while fl lives), *n of them; none past ngroup. */
const rd_fline *rd_report_flines_of(const rd_flines *fl, uint32_t k, uint32_t *n);

#endif
