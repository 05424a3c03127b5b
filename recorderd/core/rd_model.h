/* rd_model: what recorderd knows about one traced process: its interned
 * strings and functions, its clock calibration, and the calling-context
 * tree (CCT) that the stack rebuilder fills: one node per distinct stack,
 * holding self time, line events and calls of that stack's leaf, and each
 * coroutine's share of it (for pprof's coroutine labels). Memory grows with
 * distinct functions, lines and stacks, and with coroutines alive at once
 * (a track each, a share per stack it ran; ended ones are folded, see
 * rd_track), never with events.
 * One model is used by one thread at a time. */
#ifndef RD_MODEL_H
#define RD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "lt_event.h"
#include "rd_mem.h"

typedef struct rd_func {
    uint32_t name_sid, src_sid;
    uint32_t linedefined, lastlinedefined;
    uint8_t what;  /* LT_WHAT_* */
    uint8_t flags; /* LT_FF_* */
    uint8_t known; /* a FUNC record defined it */
    uint32_t dup;  /* 2, 3...: the Nth function with this label; else 0 */
    uint64_t calls;
    uint32_t dsrc; /* a relative file read in another directory (DIR): its
                      rd_dsrc + 1; else 0 */
    uint32_t ipl16; /* CODE: its instructions per run of a line, x16 */
    uint32_t walk16; /* WALK (Lua 5.4): a new line's steps through its line info, x16 */
    uint32_t jl_first, jl_n; /* LINES: its rd_jlines, [jl_first, jl_first + jl_n) */
} rd_func;

/* A LINES record (LuaJIT): the lines line + i, for each bit i of mask,
 * carry bytecode in function fid or in one nested in it. */
typedef struct rd_jlines {
    uint64_t mask;
    uint32_t fid, line;
} rd_jlines;

/* A NEST record (Lua 5.4): a function nested in fid's spans lines
 * [line, last], called or not. */
typedef struct rd_nest {
    uint32_t fid, line, last;
} rd_nest;

/* A relative file source and the directory (DIR) it was read in. */
typedef struct rd_dsrc {
    uint32_t src_sid, dir_sid;
} rd_dsrc;

typedef struct rd_node {
    uint32_t parent; /* node index; 0 is the root (no function) */
    uint32_t fid;
    uint32_t first_child, next_sibling;
    uint32_t hot_fid, hot_child; /* last child looked up: loops call the same one */
    uint64_t self; /* ticks */
    uint64_t lines;
    uint64_t calls;
    /* caller's line at the node's first call; 0 unknown, as under lines by
     * sample, where a frame's line is the one its last tick found, often
     * not the call's (callgrind put a table.concat after a loop on the loop) */
    uint32_t call_line;
    uint32_t hot_tn, hot_track; /* last rd_tnode of this node looked up + 1, its track */
    uint32_t first_tn; /* its first rd_tnode + 1 (not in the hash); 0 none */
} rd_node;

/* A (parent, fid) -> child entry, of the children's hash and of its cache
 * of recent lookups (a loop calling several functions in turn defeats
 * rd_node's hot child, not the cache). The key is in the entry: a probe
 * reads no node. */
typedef struct rd_childc {
    uint32_t parent, fid, node; /* node 0: empty (a child is never the root) */
} rd_childc;

#define RD_CHILDC_BITS 12

typedef struct rd_line {
    uint32_t fid, line; /* fid 0 = free slot (past nline) */
    uint64_t hits;
    uint64_t ticks;
} rd_line;

/* The share of one coroutine (track) in a call-tree node: code in a
 * coroutine is charged under its resumer's stack, so one node may hold the
 * time of several coroutines. The first share of a node other than the
 * root (rd_node.first_tn) is implied: its self and lines are the node's
 * less the other shares' (rd_stack does not charge it, so a program of one
 * coroutine never touches its shares); the fields it holds mean nothing.
 * The other shares' sums never exceed the node's own self and lines. */
typedef struct rd_tnode {
    uint32_t node, track;
    uint64_t self; /* ticks */
    uint64_t lines;
} rd_tnode;

/* A coroutine's life: a thread id seen again after the coroutine died (Lua
 * reuses addresses) is a new track. The first thread seen is numbered 0.
 * Past RD_TRACKS_KEPT ended coroutines, an ended one is folded (rd_share.c)
 * into the aggregate track of the function it started in, and its slot is
 * reused: a coroutine-per-request program keeps a bounded model. */
typedef struct rd_track {
    uint64_t thread;    /* 0: an aggregate or a free slot */
    uint64_t serial;    /* order of first run, from 0; never reused */
    uint32_t first_fid; /* the first function pushed on it, for its name; a
                           free slot: the next free one + 1 */
    uint32_t nshare;    /* its shares (rd_tnode) */
    uint8_t named;      /* first_fid is set */
    uint8_t dead;
    uint8_t fold; /* ended past the kept ones: to be folded */
    uint8_t agg;  /* the aggregate of folded coroutines of first_fid */
} rd_track;

#define RD_TRACKS_KEPT 1000
#define RD_FOLD_MIN 4096 /* below this many shares to fold, folding waits */

/* A function's lines, straight to their slots: nearly every line event
 * moves to another line, and a hash probe per event costs more than the
 * rest of the event. */
typedef struct rd_lcache {
    uint32_t *ix; /* line - lo -> line slot + 1; 0: not cached */
    uint32_t lo, n;
} rd_lcache;

typedef struct rd_model {
    char **str; /* sid -> NUL-terminated copy */
    uint32_t nstr, capstr;
    uint32_t cur_dir; /* the last DIR's sid; 0: the session's directory */
    rd_dsrc *dsrc;    /* the (source, directory) pairs of rd_func.dsrc */
    uint32_t ndsrc, capdsrc;
    uint32_t *dsrc_ix; /* hash of a pair -> its index + 1 */
    uint32_t capdsrc_ix;
    rd_func *func; /* fid -> function; fid 0 is "?" */
    uint32_t nfunc, capfunc;
    rd_jlines *jl; /* LINES records, each function's together */
    uint32_t njl, capjl;
    rd_nest *nest; /* NEST records, as they came */
    uint32_t nnest, capnest;
    rd_node *node;
    uint32_t nnode, capnode;
    rd_childc *child_ix; /* hash (parent, fid) -> node, open addressing */
    uint32_t capchild;
    rd_childc *childc; /* 1 << RD_CHILDC_BITS recent lookups, direct-mapped */
    struct rd_labent *lab; /* every label given (number_label) */
    uint32_t nlab, caplab;
    rd_line *line; /* [0, nline) in order of first use: a slot never moves */
    uint32_t nline, capline;
    uint32_t *line_ix; /* hash (fid, line) -> slot + 1 */
    uint32_t capline_ix;
    rd_lcache *lcache; /* by fid */
    uint32_t caplcache;
    uint64_t lcache_cells; /* bounded by the lines there are (no event makes it grow alone) */
    uint64_t str_bytes;    /* held by str */
    /* clock: first and last (ticks, ns) pairs */
    uint64_t clk_t0, clk_n0, clk_t1, clk_n1;
    int clk_pairs, clk_tsc;
    int untimed; /* a CLOCK said LT_CLOCK_NONE: no time (a coverage run), counts only */
    /* a CLOCK said LT_CLOCK_CPU or LT_CLOCK_WALL: the time is TICK records'
     * (that kind), every dt 0; else 0: each event's dt (exact) */
    unsigned tick_clock;
    /* and LT_CLOCK_LINES_SAMPLED: a LINE only places the next TICK; lines
     * have times, no counts, and the trace says nothing of coverage */
    uint64_t ticks_ns, ticks_hook_ns; /* the TICKs' time, the program's and the hooks' */
    int lines_sampled;
    uint64_t ticks_n, ticks_hook; /* TICK records: ticks charged, and the hook's */
    /* TICK records charged: the samples (a signal's ticks, the expirations
     * since the kernel last looked, come in one; so do the signals that
     * land in one C call), what a share's precision rests on */
    uint64_t ticks_samples;
    uint64_t tick_ns;             /* their period (the last TICK's) */
    unsigned sampled_hz; /* a sampled session (record): times are samples, calls entries seen */
    int sampled_cpu;     /* a sample weighs its thread's CPU time since the last (LuaJIT's
                            profiler, run --sample from outside), not the time between */
    int sampled_jit;     /* sampled by LuaJIT's profiler in the process (its hello said so),
                            not from outside: times are CPU time */
    uint64_t sampled_dropped; /* samples read from outside and dropped after their tries
                                 (stacks caught moving): record's, run --sample's */
    uint64_t events, ticks_total;
    uint64_t dropped; /* events the producer dropped (GAP records) */
    uint64_t rehooked; /* times C code took the collector's hook off a thread
                          and the collector put it back (START LT_R_REHOOKED):
                          the events between are missing */
    /* BIAS: ticks taken off each event's dt, what a hook costs the program
     * beyond its measured time: a line; a Lua call or return; a C call or
     * return; x16, a Lua instruction run under the line hook (doc/design.md,
     * "Hook overhead compensation") */
    uint64_t bias[4];
    int has_bias;
    /* sampled time whose CLOCK said LT_CLOCK_BIAS_AFTER (LuaJIT): BIAS's
     * costs come off after their event: a Lua return's pair (call and
     * return) from the caller, a C call's from the C function */
    int bias_after;
    /* CLOCK said LT_CLOCK_LINE_INSTR: a LINE's cost takes off its line's
     * instructions, a CALL's and a RET's none (rd_stack.c) */
    int line_instr;
    /* bias[] is the BIAS record's (bias_base) times the hook's measured
     * cost an event in the last batch (its HOOK record) over what it was
     * during the calibration (bias_hook16, x16), within [1/2, 3]: the
     * unmeasured cost moves with the measured one (a larger program, a
     * slower moment of the machine). Where the trace has them (LBIAS,
     * LHOOK), the line hooks' costs alone: bias_hook16_line */
    uint64_t bias_base[4], bias_hook16, bias_hook16_line;
    uint64_t line_ticks, line_hooks; /* LHOOK's since the last scaling */
    uint64_t bias_floor; /* a nanosecond in ticks: no dt goes below it */
    uint64_t bias_switch; /* SBIAS: a coroutine switch's cost, off after it (bias_after) */
    /* WBIAS (Lua 5.4): x16 as bias[3], a step of a line's lookup, times a
     * LINE's function's walk16; scaled as bias[] (bias_step_base) */
    uint64_t bias_step, bias_step_base;
    /* hooked: LINE, CALL and RET records, one a hook; a RESUME or YIELD
     * rides in the hook of the event after it, the other records in none */
    uint64_t hooked;
    uint64_t lines_run; /* LINE records applied: Lua code ran (rd_mem_end) */
    uint64_t hook_events, hook_ticks; /* since the last scaling: hooked at its
                                         start, HOOK ticks */
    uint64_t waited_ticks; /* WAIT records: what the program waited for a CPU,
                              already off the dts (not in ticks_total) */
    rd_tnode *tnode; /* per-coroutine shares of the nodes, in creation order */
    uint32_t ntnode, captnode;
    uint32_t *tnode_ix; /* hash (track, node) -> tnode index + 1, but a node's first */
    uint32_t captnode_ix, ntnode_ix;
    rd_track *track;
    uint32_t ntrack, captrack;
    uint32_t *track_ix; /* hash thread id -> its latest track + 1 */
    uint32_t captrack_ix, ntrack_ix;
    uint64_t nserial;     /* tracks made */
    uint32_t free_track;  /* first free track slot + 1 */
    uint32_t nkept;       /* ended tracks kept apart */
    uint64_t fold_shares; /* shares of tracks to fold */
    uint32_t *agg_ix;     /* hash fid -> its aggregate track + 1 */
    uint32_t capagg_ix, nagg_ix;
    uint64_t folded;      /* tracks folded so far */
    uint32_t keep_tracks; /* ended tracks kept apart: RD_TRACKS_KEPT */
    uint32_t fold_min;    /* shares to fold before a fold is due: RD_FOLD_MIN;
                             the fuzzer sets both small to fold often */
    rd_mem mem;  /* MEM records: memory per node, live blocks (rd_mem.h) */
    int has_mem; /* a MEM record came: the trace has memory (LUATRACE_MEMORY=1) */
    char *cwd; /* the program's working directory, for labels (rd_label.h); NULL: none */
    struct rd_label_names *label_names; /* rd_label's: each source's short name */
} rd_model;

/* Hash of a thread id (rd_stack's, rd_timeline's and the model's thread
 * tables). */
static inline uint32_t rd_model_hash_id(uint64_t id)
{
    return (uint32_t)(id * 0x9E3779B97F4A7C15ull >> 32);
}

static inline uint32_t rd_model_hash2(uint32_t a, uint32_t b)
{
    uint64_t x = ((uint64_t)a << 32 | b) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 32);
}

/* Makes the array *p (capacity *cap elements of elem bytes) hold index
 * need, doubling it and zero-filling the new part. Returns 0 or -ENOMEM. */
int rd_grow(void **p, uint32_t *cap, uint32_t need, size_t elem);

int rd_model_init(rd_model *m);
void rd_model_free(rd_model *m);

/* About the bytes the model holds on the heap (its tables at their
 * capacity, the strings): what rd_replay's memory bound counts. */
uint64_t rd_model_bytes(const rd_model *m);

/* STR / FUNC records. Return 0 or -EPROTO for ids out of range (ids are
 * dense from 1; a sender cannot make us allocate more than it declared). */
int rd_model_add_str(rd_model *m, uint64_t sid, const char *s, uint32_t len);
int rd_model_add_func(rd_model *m, const lt_event *ev);
/* DIR record: the directory of the relative file sources of the FUNC
 * records after it. */
void rd_model_add_dir(rd_model *m, uint64_t sid);
/* LINES record: kept when it names a Lua function known, follows that
 * function's last one (none of another function in between) 64 lines or
 * more further, and reaches into its range; else ignored. Returns 0 or
 * -ENOMEM. */
int rd_model_add_lines(rd_model *m, const lt_event *ev);
/* A NEST record; one outside its function's range, of a C or unknown
 * function, or past RD_MAX_NEST of them, is ignored. 0 or -ENOMEM. */
#define RD_MAX_NEST (1u << 22)
int rd_model_add_nest(rd_model *m, const lt_event *ev);
void rd_model_add_clock(rd_model *m, uint64_t ticks, uint64_t ns, uint64_t kind);
/* Whether the trace counts every line run (its coverage): not a sampled
 * session's, nor one with lines by sample. */
int rd_model_lines_counted(const rd_model *m);

/* Returns the function fid, or the unknown function 0 for bad ids. */
static inline const rd_func *rd_model_func(const rd_model *m, uint32_t fid)
{
    return fid < m->nfunc && m->func[fid].known ? &m->func[fid] : &m->func[0];
}
/* Room for any label rd_model_label writes: NAME (and #N) @ SRC : LINE,
 * each string up to LT_STR_MAX bytes. */
#define RD_LABEL_MAX (2 * LT_STR_MAX + 32)

/* A label's bytes, as the collector makes a name's: ';' separates folded
 * frames, a line break ends a line. A file's path comes whole (coverage
 * opens it); its label is cleaned here. */
void rd_label_clean(char *s);

const char *rd_model_string(const rd_model *m, uint32_t sid);

/* The source slot of fid: 2 * src_sid for a Lua function read from a
 * file, 2 * src_sid + 1 for one whose chunk is a string or a "=name"
 * (LT_FF_NOFILE); 2 * (nstr + k) for a relative file read in another
 * directory (rd_dsrc k: one name in two directories is two files);
 * UINT32_MAX for C and unknown functions. Lua's short_src of "=m.lua" and
 * "@m.lua" is the same "m.lua", one string id: the slot keeps the string
 * chunk's lines out of the file's. Slots are below RD_SLOTS(m). */
#define RD_SLOTS(m) (2 * ((m)->nstr + (m)->ndsrc))
#define RD_SLOT_NOFILE(slot) ((slot) & 1)
uint32_t rd_model_src_slot(const rd_model *m, uint32_t fid);

/* A slot's source as traced, and the absolute directory a relative file
 * of it was read in, or NULL for the session's (no DIR said otherwise). */
const char *rd_model_slot_src(const rd_model *m, uint32_t slot);
const char *rd_model_slot_dir(const rd_model *m, uint32_t slot);

/* The name of fid into buf: its NAME, with "#N" added when it is the Nth
 * distinct function (in order of definition) whose label would otherwise
 * be the same as an earlier one's. */
void rd_model_name(const rd_model *m, uint32_t fid, char *buf, size_t cap);

/* Label "NAME@SRC:LINEDEFINED" or "NAME@[C]" into buf, NAME as given by
 * rd_model_name: two functions never share a label. */
void rd_model_label(const rd_model *m, uint32_t fid, char *buf, size_t cap);

uint32_t rd_model_child_find(rd_model *m, uint32_t parent, uint32_t fid);

/* A depth-first walk of w->m's call tree below the root: enter(w, n)
 * before node n's children, leave(w, n) after them. A writer embeds the
 * walker first in a struct of its own for its state. */
typedef struct rd_walker {
    void (*enter)(struct rd_walker *, uint32_t);
    void (*leave)(struct rd_walker *, uint32_t);
    const rd_model *m;
} rd_walker;

void rd_model_walk(rd_walker *w);

static inline uint32_t rd_model_childc_slot(uint32_t parent, uint32_t fid)
{
    return (parent * 0x9E3779B1u + fid * 0x85EBCA77u) >> (32 - RD_CHILDC_BITS);
}

/* The child of parent for fid if a cache has it (no side effects), else 0. */
static inline uint32_t rd_model_child_cached(const rd_model *m, uint32_t parent, uint32_t fid)
{
    const rd_node *p = &m->node[parent];
    if (p->hot_child && p->hot_fid == fid)
        return p->hot_child;
    const rd_childc *c = &m->childc[rd_model_childc_slot(parent, fid)];
    return c->parent == parent && c->fid == fid ? c->node : 0;
}

/* The child of parent for fid, created on first use. Returns its index, or
 * 0 (the root) if memory ran out. Inline: a call from a loop asks for the
 * child it got last time. */
static inline uint32_t rd_model_child(rd_model *m, uint32_t parent, uint32_t fid)
{
    uint32_t k = rd_model_child_cached(m, parent, fid);
    return k ? k : rd_model_child_find(m, parent, fid);
}

/* Stats of (fid, line), created on first use; NULL if memory ran out or
 * fid is 0. */
rd_line *rd_model_line(rd_model *m, uint32_t fid, uint32_t line);

/* The number of distinct stacks: call-tree nodes that ran (a call, time,
 * a line) or have children. A tail call leaves an empty node where the
 * callee first stood; it is not counted. */
uint32_t rd_model_stacks(const rd_model *m);

/* {======================================================================
 * per-coroutine shares (rd_share.c) */

/* The live track of thread id, made on first use (a new one if the
 * thread's last track is dead). Returns its index + 1, 0 if memory ran
 * out. A live track's index never changes. */
uint32_t rd_model_track(rd_model *m, uint64_t thread);

/* The coroutine of thread's live track died. Returns that track's serial,
 * UINT64_MAX if there was no live track. */
uint64_t rd_model_track_end(rd_model *m, uint64_t thread);

/* The name of track k: "main" for the first thread seen, else
 * "coroutine N (LABEL)", N its serial and LABEL the label of its first
 * function (as rd_timeline names its tracks); an aggregate is
 * "coroutine * (LABEL)". */
void rd_model_track_name(const rd_model *m, uint32_t k, char *buf, size_t cap);

/* The share of track in node, made on first use. Returns its index + 1
 * (stable until the next rd_model_fold), 0 if memory ran out. */
uint32_t rd_model_tnode(rd_model *m, uint32_t track, uint32_t node);

/* Folding is due: the shares of tracks to fold are half of all shares
 * (so each fold, O(shares + nodes), frees at least as much as it walks). */
int rd_model_fold_due(const rd_model *m);

/* Folds every track marked to fold into its aggregate and frees its slot;
 * the shares move. *remap (caller frees) maps each old share index + 1 to
 * its new one + 1, for the indexes the caller holds (live tracks' shares
 * all stay). Returns 0 or -ENOMEM (nothing changed). */
int rd_model_fold(rd_model *m, uint32_t **remap, uint32_t *nremap);

uint32_t rd_model_line_find(rd_model *m, uint32_t fid, uint32_t line);

/* The slot + 1 of (fid, line) if the line cache has it, else 0. */
static inline uint32_t rd_model_line_cached(const rd_model *m, uint32_t fid, uint32_t line)
{
    if (fid >= m->caplcache)
        return 0;
    const rd_lcache *c = &m->lcache[fid];
    uint32_t k = line - c->lo;
    return k < c->n ? c->ix[k] : 0;
}

/* rd_model_line as a slot + 1 in m->line (valid while the model lives), 0
 * for NULL. The cached case inline: every line event asks. */
static inline uint32_t rd_model_line_slot(rd_model *m, uint32_t fid, uint32_t line)
{
    uint32_t ix = rd_model_line_cached(m, fid, line);
    return ix ? ix : rd_model_line_find(m, fid, line);
}

/* Nanoseconds per tick from the calibration records (1.0 without TSC). */
double rd_model_ns_per_tick(const rd_model *m);
/* The time source as one line into buf (cap bytes): sampled CPU or wall
 * time (the ticks, their period, those the hooks took), each event's
 * clock (exact), or none; returns buf. Its name alone: rd_model_time_name. */
const char *rd_model_time_source(const rd_model *m, char *buf, size_t cap);
/* Sampled time with fewer samples where the program was than RD_FEW_SAMPLES:
 * a function's share is rough (its samples' count varies by about its
 * square root from run to run), which the reports say. */
#define RD_FEW_SAMPLES 100
#define RD_FEW_SAMPLES_SAID "few samples, times rough: run it longer, or use --time exact"
int rd_model_few_samples(const rd_model *m);
/* "sample" (--time sample), "exact", "none", or "sampled" (a sampled session) */
const char *rd_model_time_name(const rd_model *m);

/* }====================================================================== */

#endif
