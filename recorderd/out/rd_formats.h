/* rd_formats: the registry of reports. One row per format: its name (for
 * `--format`), its file in a session directory, whether it needs the
 * coverage, and its writer. A session's reports, `recorderd report
 * --format`, the usage text and the error for an unknown format all read
 * this table; adding a format is one row plus its writer's own file. */
#ifndef RD_FORMATS_H
#define RD_FORMATS_H

#define RD_FORMATS_MAX 32 /* rows of rd_formats, at most */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rd_cov.h"
#include "rd_model.h"
#include "rd_report.h"

/* What every writer may read: the finished model and what is known of the
 * traced program, from the live session or from a session.json. */
typedef struct rd_render {
    const rd_model *m;
    const rd_cov *cov;     /* finished coverage of m, or NULL (writers make their own) */
    const char *title;     /* the session's name or the trace's path; NULL: none */
    const char *cmd;       /* the traced command, or NULL */
    const char *srcdir;    /* relative sources resolve against it; NULL: ours */
    uint64_t wall_ns;      /* the session's wall-clock duration; 0 unknown */
    int64_t start_ns;      /* when tracing began, ns since the epoch; 0 unknown */
    int truncated;         /* the trace was cut short */
    enum rd_weight weight; /* of the folded stacks */
    int header;            /* profile.txt names the session and its command */
    /* Where a report that stopped at a bound says what it left out and
     * what holds it all, for stderr and session.json (NULL: nowhere). */
    char *cut;
    size_t cut_cap;
} rd_render;

enum {
    RD_FMT_COV = 1,   /* needs the coverage: a session skips it when that failed */
    RD_FMT_MERGE = 2, /* a coverage report: report's --merge, --include... apply */
    RD_FMT_NOFILE = 4, /* report only: no file in a session directory */
    RD_FMT_DEFAULT = 8, /* a session writes it unless told otherwise (--format) */
    RD_FMT_TIME = 16,   /* weighs by time only: not written for a trace with none */
    RD_FMT_BINARY = 32, /* not text: report refuses to write it to a terminal */
    RD_FMT_MEM = 64,    /* memory only: not written for a trace without (run --memory) */
    /* a session weighs it by time, as RD_FMT_TIME, though report's --weight
     * can weigh it otherwise: a session of a trace with no time leaves it
     * out rather than write it empty */
    RD_FMT_BYTIME = 128,
};

typedef struct rd_format {
    const char *name; /* --format NAME */
    const char *file; /* in a session directory ("annotate/": a directory); NULL: report only */
    unsigned flags;   /* RD_FMT_* */
    const char *what; /* one line for --help */
    int (*write)(FILE *f, const rd_render *r); /* 0 or a negative errno */
    /* a directory format: into the directory open at dirfd (dir: its path,
     * for messages); NULL for the others */
    int (*write_dir)(const rd_render *r, int dirfd, const char *dir, char *err, size_t cap);
} rd_format;

/* The table, in the order a session writes it; rd_nformats rows. */
extern const rd_format rd_formats[];
extern const unsigned rd_nformats;

/* The rows with every flag of flags, as a mask: bit i for rd_formats[i]. */
uint32_t rd_format_rows(unsigned flags);

/* The row of a format name, or NULL. */
const rd_format *rd_format_find(const char *name);

/* Why report f is not written from model m, as a session leaves it out
 * (no coverage of a sampled trace but report.html's; nothing by time of a
 * trace with none), or NULL. */
const char *rd_format_left_out(const rd_format *f, const rd_model *m);

/* Report f under its session file name in the directory open at dfd (dir:
 * its path, for messages), whole (rd_out_write); a directory format into
 * its subdirectory, made 0700 if absent. Returns 0 or a negative errno,
 * with a message in err for a directory format. */
int rd_format_write_at(const rd_format *f, const rd_render *r, int dfd, const char *dir, char *err,
                       size_t cap);

/* The names of the rows whose flags, masked with mask, equal want, joined
 * with sep, into buf. Returns buf. */
char *rd_format_names(char *buf, size_t cap, const char *sep, unsigned mask, unsigned want);

#endif
