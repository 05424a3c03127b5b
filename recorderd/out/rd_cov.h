/* rd_cov: line and function coverage from finished models, and its
 * writers: LCOV tracefile, luacov stats, a text summary with annotated
 * listings, and Cobertura XML (rd_cobertura.c).
 *
 * Hits are the model's line events (rd_line.hits), summed over every
 * function of a source. The executable lines of a source file are the
 * lines that carry bytecode in any of its prototypes (rd_lines), so lines
 * of functions that never ran count as missed. Sources are grouped by the
 * file they name (device and inode), so one file reached as `./m.lua` and
 * `m.lua`, or traced by several processes, is one entry whose counts add
 * up. A source that is not a readable file (loadstring chunks, `=name`,
 * files removed since) keeps its hit lines but has no executable lines: it
 * appears in the text report only, with a note. A trace from LuaJIT says
 * which lines carry LuaJIT's bytecode (LINES records, rd_jlines): within
 * the range of each function they came for (the whole file for a main
 * chunk), they are the executable lines instead of Lua 5.1's.
 *
 * One rd_cov is used by one thread; it owns a private lua_State that only
 * compiles. */
#ifndef RD_COV_H
#define RD_COV_H

#include <stdint.h>
#include <stdio.h>

#include "rd_model.h"

typedef struct rd_cov_opts {
    const char *const *include; /* shell patterns; none: every source */
    unsigned ninclude;
    const char *const *exclude;
    unsigned nexclude;
} rd_cov_opts;

typedef struct rd_cov_line {
    uint32_t line;
    uint8_t exec; /* carries bytecode (until rd_cov_finish: 1 in Lua 5.1's
                     compilation, 2 in LuaJIT's, from the trace) */
    uint64_t hits;
} rd_cov_line;

typedef struct rd_cov_span {
    uint32_t line, last;
} rd_cov_span;

typedef struct rd_cov_fn {
    uint32_t line, last; /* linedefined, lastlinedefined; 0, 0: main chunk */
    uint32_t model;      /* the last model (rd_cov.nmodels) that gave it a
                            function: one prototype per traced function */
    uint64_t calls;
    char *name; /* as traced or NULL (never ran); after rd_cov_finish the
                   label in reports, unique in its file */
} rd_cov_fn;

typedef struct rd_cov_file {
    char *key;        /* "f:DEV:INO" for files, "s:NAME" for chunks that are no
                         file (rd_model_src_slot), "c:NAME" for files not found */
    char *name;       /* the source as traced (first seen), or as found */
    char *path;       /* absolute path of the file, or NULL */
    char *note;       /* why executable lines are unknown, or NULL */
    int exact;        /* executable lines known: in LCOV and luacov stats */
    int chunk;        /* loaded from a string or named with '=': no source exists */
    uint32_t changed; /* hit lines without bytecode: source changed? */
    rd_cov_line *ln;  /* sorted by line after rd_cov_finish */
    uint32_t nln, capln;
    rd_cov_fn *fn; /* sorted by line after rd_cov_finish */
    uint32_t nfn, capfn;
    rd_cov_span *jit; /* ranges of functions whose LuaJIT lines came (LINES) */
    uint32_t njit, capjit;
    int jit_all; /* a main chunk's came: LuaJIT's lines of the whole file */
} rd_cov_file;

typedef struct rd_cov {
    rd_cov_file *f;
    uint32_t nf, capf;
    uint32_t *ix; /* hash of key -> file index + 1 */
    uint32_t capix;
    void *L; /* lua_State, created on first use */
    char *basedir;      /* the working directory of the first model added
                           with one (Cobertura's first source), or NULL */
    uint32_t nmodels;   /* models added so far */
    uint32_t truncated; /* of them, traces cut short (the program killed):
                           their counts stop where the trace does. Set by
                           rd_cov_add_trace, or by the caller */
    rd_cov_opts opts;
} rd_cov;

/* opts may be NULL; its arrays must outlive c. Returns 0 or -ENOMEM. */
int rd_cov_init(rd_cov *c, const rd_cov_opts *opts);
void rd_cov_free(rd_cov *c);

/* Adds the line and call counts of a finished model. Relative sources are
 * resolved against basedir (the traced program's working directory; NULL:
 * ours). Returns 0 or -ENOMEM. */
int rd_cov_add_model(rd_cov *c, const rd_model *m, const char *basedir);

/* Adds every *.lua file under dir (recursively, symlinks not followed) that
 * is not covered yet, with zero hits. Returns 0, or a negative errno with
 * a message in err. */
int rd_cov_add_untested(rd_cov *c, const char *dir, char *err, size_t cap);

/* Sorts lines and functions, merges duplicates and makes function names
 * unique per file. Call once, after the last add, before writing. */
void rd_cov_finish(rd_cov *c);

/* For each source slot of m (rd_model_src_slot), the index + 1 of the
 * file of c it was counted in, resolved as rd_cov_add_model did (same
 * basedir), 0 for none (C, left out, not added). c is finished. Returns
 * RD_SLOTS(m) + 1 entries the caller frees, or NULL without memory. */
uint32_t *rd_cov_files_of(const rd_cov *c, const rd_model *m, const char *basedir);

/* Totals over exact files (what LCOV holds). */
typedef struct rd_cov_total {
    uint64_t lines, hit, fns, fns_hit;
} rd_cov_total;
rd_cov_total rd_cov_file_total(const rd_cov_file *f);
rd_cov_total rd_cov_total_of(const rd_cov *c);

/* When some of c's traces were cut short, a sentence saying so (for the
 * header of every report), into buf; else "". Returns buf. */
const char *rd_cov_truncated_note(const rd_cov *c, char *buf, size_t cap);

/* Writers. Each returns 0 or -EIO. A cut trace is said in coverage.txt's
 * header, as a "#" comment heading coverage.lcov (lcov and genhtml skip
 * it) and as an XML comment in coverage.xml. */
int rd_cov_write_lcov(const rd_cov *c, FILE *out);
int rd_cov_write_luacov(const rd_cov *c, FILE *out);
int rd_cov_write_text(const rd_cov *c, const char *title, FILE *out);
/* Cobertura XML (rd_cobertura.c); version names the writer, timestamp_ms
 * is when the report was made. The first <source> is c->basedir (NULL:
 * our working directory), files under it relative to it; files elsewhere
 * are relative to a second <source>, the deepest directory holding them.
 * Also -ENOMEM. */
int rd_cov_write_cobertura(const rd_cov *c, const char *version, int64_t timestamp_ms, FILE *out);

#endif
