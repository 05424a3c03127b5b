/* lt_event: the event records that cross the ring and fill trace files.
 *
 * Every record is one msgpack array: [kind, args...] where kind is a
 * positive fixint and each arg is an unsigned integer or (STR only) a
 * string. Any msgpack reader can parse the stream; the collector writes the
 * bytes of each record directly (msgpack-c's packer calls its sink once per
 * primitive, several times the cost of the hook itself).
 *
 * Times (dt) are in clock ticks of the producer; CLOCK records pair a tick
 * count with CLOCK_MONOTONIC nanoseconds so a reader converts ticks to ns.
 * dt is the program time since the previous event, hook time excluded; it
 * belongs to the state before the record (the frame and line running then).
 *
 * START is followed by one FRAME per frame of that thread, top first
 * (STR/FUNC/DIR records may come between them); the snapshot ends at the first
 * other record.
 *
 * Threads (the main thread and every coroutine) are named by small ids the
 * collector hands out: a THREAD record introduces an id before any other
 * record names it, with the lua_State address (for display only: what
 * tostring(co) shows). Ids are reused: a THREAD for an id seen before says
 * that the thread which had it is gone (it died, or the GC collected it
 * while suspended), so a reader ends that thread, its stack and its track,
 * and starts a new one. Ids start at 1; 0 names no thread.
 *
 * DIR says in which working directory the relative file sources (an SRC
 * of a file not starting with '/') of the FUNC records after it were read:
 * its sid names the absolute directory, 0 the one the process had when
 * tracing began (the recorder's hello, session.json's cwd) -- until the
 * first DIR, that one. The collector sends one only when it changes, so a
 * program that never changes directory has none. A function's directory is
 * the one current when its chunk was loaded, not when it was first called.
 *
 * LINES (LuaJIT and Lua 5.4) follow the FUNC of a Lua function: together
 * they list the lines that carry bytecode in it and in every function
 * nested in it, whether they ran or not, as that Lua compiled them: line + i for each
 * bit i (0-63) set in mask. A record covers 64 lines, so a function of n
 * lines sends at most n / 64 + 1 of them, right after its FUNC, in
 * increasing line order (a reader ignores one out of order). Coverage takes
 * them for the executable lines within the function's range (the whole
 * file for a main chunk) instead of what Lua 5.1's compiler gives.
 *
 * SBIAS (14; LuaJIT's sampled time, with LT_CLOCK_BIAS_AFTER) follows the
 * BIAS: what a coroutine switch costs the program beyond the C calls that
 * made it, in 1/16 ns, taken off the frame on top of the thread switched
 * to, after each RESUME and YIELD.
 *
 * WBIAS (15; Lua 5.4, every line hooked) follows the BIAS: what a step
 * of 5.4's walk through a function's line info costs a line event, in
 * BIAS's instr units (x16). 5.4 finds a line's number by walking the line
 * info from the last absolute line before it, a step an instruction (at
 * most 128): WALK, after a Lua function's FUNC, gives its line runs' mean
 * steps, x16; recorderd takes step16 x steps16 / 256 off each of its
 * LINEs, with BIAS's line and instructions.
 *
 * NEST (Lua 5.4) follows the LINES of a function: one per function nested
 * in it, at any depth, called or not, its linedefined and lastlinedefined
 * (a range twice if two such functions share it). Coverage lists every
 * function of a file with its calls (LCOV's FN); for a file Lua 5.1 cannot
 * compile (5.4's syntax), these give the functions never called.
 *
 * TICK attributes a quantity to where the thread of the last record is:
 * its top frame and that frame's line (n ticks of period_ns of sampled
 * time, LT_CLOCK_CPU or LT_CLOCK_WALL; such a trace's times, BIAS's
 * included, are in 1/16 ns). The collector writes it at the
 * start of a hook, before that event's records: nothing ran but the
 * program between the last hook and this one, so where the last record
 * left the stack is where every tick since then landed. hook counts the
 * ticks that landed inside the collector's own hook meanwhile, charged to
 * nobody. Records to come that attribute other quantities to the current
 * stack position (allocations: bytes and counts) take the same shape:
 * [kind, amount, ...], applied where the last record left the stack.
 *
 * MEM is such a record (LUATRACE_MEMORY=1, recorderd run --memory): one
 * call of the traced state's allocator that changed memory, made by the
 * program where the last record left the stack of its thread. size is
 * the block's new size (0: freed), osize its old one (0: a new block),
 * addr its new address (0 when freed), oaddr its old one (0 when new):
 *   [MEM, size, 0, addr, 0]      a new block;
 *   [MEM, 0, osize, 0, oaddr]    a free;
 *   [MEM, size, osize, addr, oaddr]  a reallocation (addr may be oaddr).
 * A reallocation whose sizes do not fit 32 bits comes as a free and a new
 * block (the record stays within LT_EVENT_HOT_MAX). The collector's own
 * allocations (its hook naming a function, tron) send none, nor does an
 * allocation while records are dropped (the GAP counts it).
 *
 * MEM short forms (12): an address written whole is a 9-byte uint that
 * zstd cannot shrink, four per record, and an allocation-heavy program
 * makes more MEM records than hook records. So the collector writes MEM
 * records as short forms whose addresses are deltas (lt_put_adelta) from
 * the base, the address of the previous MEM record (full or short: its
 * addr, or a free's oaddr; 0 at the start of a stream), which the
 * allocator mostly keeps near:
 *   LT_SHORT_MNEW   the byte, size, delta of addr: a new block;
 *   LT_SHORT_MFREE  the byte, osize, delta of oaddr: a free;
 *   LT_SHORT_MRE    the byte, size, osize, delta of oaddr, then addr's delta
 *                   from oaddr (0: in place): a reallocation.
 * They stand for the full MEM records above and, unlike every other record,
 * leave what is implied as it was: the LINE after an allocation may still be
 * a step. A delta the encoding cannot carry (two addresses 2^62 apart or
 * more) comes as the full record, which ends what is implied as before.
 *
 * GAP says how many events were dropped (drop mode, a full ring). The
 * collector writes it first thing in the hook after the drops, and a START
 * (reason HOOKED) of the thread the reader has as running follows at once;
 * every other thread is sent again (START) before its next record. A
 * reader therefore never has to guess a stack from depths after a gap.
 *
 * RESUME and YIELD switch threads: the thread of the previous record (the
 * old one) resumed the named one, or gave control back to it (yielded,
 * returned, or died: dead 1). The main thread never dies: when it runs no
 * Lua at all (a host calling lua_resume from C), it resumed the new one.
 * Their depth is the depth the record after them implies (below): the new
 * thread's top frame as its next record finds it, so that record may take
 * a short form.
 *
 * depth is the frame's CallInfo index (lua_Debug.i_ci) in its own thread:
 * exact and O(1); a reader resynchronises on it after unwinding nobody
 * announced (errors) and infers tail calls from it (Lua 5.1's hook has no
 * tail-call event). P, E and T of the luatrace vocabulary are therefore
 * reconstructed by recorderd, not sent.
 *
 * Short forms leave out what the record before implies, for the commonest
 * records. After a CALL, LINE or RET record (full or short) the implied
 * depth is the CALL's or LINE's depth, or the RET's minus one:
 *   step      a LINE right after a LINE at the same depth: one positive
 *             fixint, the change of line plus LT_STEP_BIAS, then dt;
 *   LT_SHORT_LINE  a LINE at the implied depth: the byte, dt, line;
 *   LT_SHORT_CALL  a CALL at the implied depth + 1: the byte, dt, fid;
 *   LT_SHORT_RET   a RET at the implied depth: the byte, dt.
 * Any other record in between, a GAP included, ends what is implied. The
 * short bytes are msgpack fixints and every field a msgpack uint, so the
 * stream stays a valid msgpack sequence; a reader keeps the implied depth
 * and line (lt_dec) to expand them.
 */
#ifndef LT_EVENT_H
#define LT_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LT_EVENT_VERSION 15u /* 2: short forms; 3: thread ids (THREAD), switch depths;
                              * 4: DIR (a version 3 stream is one without);
                              * 5: CLOCK's tsc may be LT_CLOCK_NONE;
                              * 6: BIAS, CODE, HOOK (a version 5 stream is one without);
                              * 7: LINES (a version 6 stream is one without);
                              * 8: WAIT (a version 7 stream is one without);
                              * 9: LBIAS, LHOOK (a version 8 stream is one without);
                              * 10: TICK, LT_CLOCK_CPU and LT_CLOCK_WALL (a version 9
                              *     stream is one without);
                              * 11: MEM (a version 10 stream is one without);
                              * 12: MEM short forms (a version 11 stream is one
                              *     without: its MEM records are all full), NEST;
                              *     CLOCK's LT_CLOCK_LINES_SAMPLED;
                              * 13: CLOCK's LT_CLOCK_BIAS_AFTER (a version 12
                              *     stream is one without);
                              * 14: SBIAS (a version 13 stream is one without);
                              * 15: WBIAS, WALK, CLOCK's LT_CLOCK_LINE_INSTR (a
                              *     version 14 stream is one without) */

/* CLOCK's third field: what the ticks are. LT_CLOCK_NONE: the producer
 * read no clock (LUATRACE_TIMING=none, a coverage run): ticks and ns are
 * 0, every dt is 0; the trace has counts, stacks and lines, no time. */
#define LT_CLOCK_MONO 0u
#define LT_CLOCK_TSC 1u
#define LT_CLOCK_NONE 2u
/* Sampled time (LUATRACE_TIMING=sample): the producer reads no clock per
 * event (every dt is 0, as LT_CLOCK_NONE) and a timer in the traced thread
 * counts ticks of its CPU time (LT_CLOCK_CPU) or of CLOCK_MONOTONIC
 * (LT_CLOCK_WALL), which TICK records attribute; ticks and ns are 0. */
#define LT_CLOCK_CPU 3u
#define LT_CLOCK_WALL 4u
/* Or'ed into LT_CLOCK_CPU or LT_CLOCK_WALL: lines by sample. The producer
 * set no line hook; a LINE record says only where the TICK after it
 * landed, so lines have times but no counts, and coverage is unknown. */
#define LT_CLOCK_LINES_SAMPLED 16u
/* Or'ed into LT_CLOCK_CPU or LT_CLOCK_WALL: BIAS's costs land after their
 * event, not before it. LuaJIT calls the return hook before the return
 * instruction runs and the call hook before the callee's first one, so
 * what a hook costs the program beyond its own ticks (the return's work
 * and the dispatch after the hook) runs once the event has moved the
 * stack: a Lua function's return (its call's cost with it) in the caller,
 * a C function's call in the C function. */
#define LT_CLOCK_BIAS_AFTER 32u
/* Or'ed into any kind but LT_CLOCK_NONE (record version 15): a LINE's
 * cost (BIAS's instr times CODE's ipl16) stands for its line's every
 * instruction, the calls in it included, and a CALL's and a RET's take
 * none (Lua 5.1 and 5.4). Without it (LuaJIT, older traces) half a line's
 * instructions come off each CALL and RET too. */
#define LT_CLOCK_LINE_INSTR 64u
#define LT_EVENT_MAX_ARGS 8
#define LT_EVENT_HOT_MAX 32 /* bytes: bound of any record without a string */
#define LT_STR_MAX 4096     /* longest interned string */

/* X(NAME, letter, nargs after kind, arg names) */
#define LT_EVENT_LIST(X)                                                                          \
    X(STR, 'N', 2, "sid str")                                                                     \
    X(FUNC, 'F', 7, "fid what src_sid name_sid linedefined lastlinedefined flags")               \
    X(CLOCK, 'K', 3, "ticks mono_ns tsc")                                                         \
    X(START, 'S', 2, "thread reason")                                                     \
    X(FRAME, 'f', 3, "depth fid line")                                                            \
    X(CALL, '>', 3, "depth dt fid")                                                               \
    X(RET, '<', 2, "depth dt")                                                                    \
    X(LINE, 'L', 3, "depth dt line")                                                              \
    X(RESUME, 'R', 3, "dt thread depth")                                                          \
    X(YIELD, 'Y', 4, "dt thread depth dead")                                                      \
    X(GAP, 'G', 1, "dropped")                                                                     \
    X(STOP, 'X', 2, "dt reason")                                                                  \
    X(THREAD, 'H', 2, "thread addr")                                                             \
    X(DIR, 'D', 1, "sid")                                                                         \
    X(BIAS, 'B', 5, "line lua c instr hook16")                                                   \
    X(CODE, 'c', 2, "fid ipl16")                                                                  \
    X(HOOK, 'h', 1, "ticks")                                                                     \
    X(LINES, 'l', 3, "fid line mask")                                                            \
    X(WAIT, 'w', 1, "ticks")                                                                     \
    X(LBIAS, 'J', 1, "hook16")                                                                   \
    X(LHOOK, 'j', 2, "ticks hooks")                                                               \
    X(TICK, 't', 3, "n hook period_ns")                                                          \
    X(MEM, 'm', 4, "size osize addr oaddr")                                                     \
    X(NEST, 'n', 3, "fid line lastline")                                                        \
    X(SBIAS, 'V', 1, "switch16")                                                                 \
    X(WBIAS, 'W', 1, "step16")                                                                   \
    X(WALK, 'k', 2, "fid steps16")

enum lt_kind {
#define LT_X_ENUM(name, letter, nargs, doc) LT_EV_##name,
    LT_EVENT_LIST(LT_X_ENUM)
#undef LT_X_ENUM
    LT_EV_COUNT
};

/* FUNC.what */
enum lt_what { LT_WHAT_LUA = 0, LT_WHAT_C = 1, LT_WHAT_MAIN = 2 };

/* FUNC.flags: functions the stack rebuilder treats specially */
enum lt_fflag {
    LT_FF_PCALL = 1,  /* pcall/xpcall: a protected call begins (P) */
    LT_FF_RESUME = 2, /* coroutine.resume */
    LT_FF_WRAP = 4,   /* a coroutine.wrap function */
    LT_FF_YIELD = 8,  /* coroutine.yield */
    LT_FF_NOFILE = 16, /* a Lua chunk not read from a file (its source did not
                        * begin with '@': a string, or a "=name"): SRC names
                        * no file, even where a file of that name exists */
};

/* START.reason / STOP.reason */
enum lt_reason {
    LT_R_BEGIN = 0,  /* START: tracing begins (tron, load) */
    LT_R_HOOKED = 1, /* START: snapshot of a coroutine hooked late */
    LT_R_REHOOKED = 2, /* START: snapshot of a thread whose hook C code took
                        * off and the collector put back: its events between
                        * were not traced (a reader that does not know
                        * this reason reads it as HOOKED) */
    LT_R_TROFF = 0,  /* STOP: troff() */
    LT_R_EXIT = 1,   /* STOP: process exit (os.exit, end of main) */
    LT_R_CLOSE = 2,  /* STOP: lua_close */
    LT_R_LOST = 3,   /* STOP: consumer gone, tracing abandoned */
    LT_R_DETACH = 4, /* STOP: recorderd detached (live attach) */
};

typedef struct lt_event {
    uint8_t kind;
    uint8_t nargs;
    uint64_t a[LT_EVENT_MAX_ARGS]; /* args after kind; a string arg reads 0 */
    const char *str;               /* STR: points into the input, not terminated */
    uint32_t slen;
} lt_event;

extern const char lt_event_letter[LT_EV_COUNT];
extern const char *const lt_event_name[LT_EV_COUNT];
extern const uint8_t lt_event_nargs[LT_EV_COUNT];

/* What a reader keeps between records to expand short forms. Zeroed at
 * the start of a stream. */
typedef struct lt_dec {
    uint64_t depth; /* implied, if depth_ok */
    uint64_t line;  /* of the record before, if line_ok (it was a LINE) */
    int depth_ok, line_ok;
    uint64_t mem_base; /* the last MEM record's address: the short MEMs' base */
} lt_dec;

/* Decodes the next record of a stream, short forms included (returned as
 * the full records they stand for). Returns as lt_event_decode; d changes
 * only when a whole record was decoded. */
int lt_dec_next(lt_dec *d, const uint8_t *p, size_t n, lt_event *ev);

/* Decodes one record from p[0..n), steps excepted. Returns the bytes used (> 0), 0 if the
 * record is incomplete, or -EPROTO if the bytes are not a valid record (the
 * input is untrusted: every length is checked, nothing is asserted).
 * ev->str points into p. Any thread. */
int lt_event_decode(const uint8_t *p, size_t n, lt_event *ev);

/* Formats ev as one text line, its letter, name and arguments (for
 * debugging: the unit tests and the fuzz target print records with it; no
 * report format uses it). Returns the length written, truncated to cap. */
int lt_event_format(const lt_event *ev, char *buf, size_t cap);

/* ---- encoding: inline, used on the collector's hot path ---- */

static inline uint8_t *lt_put_uint(uint8_t *p, uint64_t v)
{
    if (v < 128) {
        *p = (uint8_t)v;
        return p + 1;
    }
    if (v < 256) {
        p[0] = 0xcc;
        p[1] = (uint8_t)v;
        return p + 2;
    }
    if (v < 65536) {
        p[0] = 0xcd;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)v;
        return p + 3;
    }
    if (v <= 0xffffffffu) {
        uint32_t be = __builtin_bswap32((uint32_t)v);
        p[0] = 0xce;
        memcpy(p + 1, &be, 4);
        return p + 5;
    }
    uint64_t be = __builtin_bswap64(v);
    p[0] = 0xcf;
    memcpy(p + 1, &be, 8);
    return p + 9;
}

#define LT_STEP_BIAS 64 /* a step's byte is the change of line + 64 */
#define LT_STEP_MAX 63  /* steps cover changes in [-64, 63] */
enum { LT_SHORT_LINE = 0xe0, LT_SHORT_CALL = 0xe1, LT_SHORT_RET = 0xe2 };
enum { LT_SHORT_MNEW = 0xe3, LT_SHORT_MFREE = 0xe4, LT_SHORT_MRE = 0xe5 };

/* A LINE step (see above): delta is the change of line, in range. */
static inline uint8_t *lt_put_step(uint8_t *p, int delta, uint64_t dt)
{
    *p = (uint8_t)(delta + LT_STEP_BIAS);
    return lt_put_uint(p + 1, dt);
}

/* A short form (see above): LT_SHORT_*, dt, and the LINE's line or the
 * CALL's fid (none for a RET). */
static inline uint8_t *lt_put_short(uint8_t *p, unsigned form, uint64_t dt)
{
    *p = (uint8_t)form;
    return lt_put_uint(p + 1, dt);
}

/* A short MEM's address delta, a - base as a signed number: blocks are
 * mostly 16-byte aligned, so a multiple of 16 is written divided by 16.
 * The uint is zigzag(d / 16) * 2 for those, zigzag(d) * 2 + 1 for the
 * others: nearby blocks take one or two bytes. Returns NULL (nothing
 * written) where the delta does not fit, 2^62 or more either way. */
#define LT_ADELTA_SHIFT 4
static inline uint8_t *lt_put_adelta(uint8_t *p, uint64_t base, uint64_t a)
{
    int64_t d = (int64_t)(a - base);
    if (!(d & ((1 << LT_ADELTA_SHIFT) - 1))) {
        int64_t s = d >> LT_ADELTA_SHIFT;
        return lt_put_uint(p, ((uint64_t)s << 1 ^ (uint64_t)(s >> 63)) << 1);
    }
    if (d >= (INT64_C(1) << 62) || d < -(INT64_C(1) << 62))
        return NULL;
    return lt_put_uint(p, ((uint64_t)d << 1 ^ (uint64_t)(d >> 63)) << 1 | 1);
}

/* The address a delta v (lt_put_adelta) from base stands for. Any v. */
static inline uint64_t lt_adelta_apply(uint64_t base, uint64_t v)
{
    uint64_t z = v >> 1, d = (z >> 1) ^ (0 - (z & 1)); /* zigzag undone, two's complement */
    return base + (v & 1 ? d : d << LT_ADELTA_SHIFT);
}

/* Starts a record of `kind` with n args; returns where the args go. */
static inline uint8_t *lt_put_head(uint8_t *p, enum lt_kind kind, unsigned n)
{
    p[0] = (uint8_t)(0x90 | (n + 1));
    p[1] = (uint8_t)kind;
    return p + 2;
}

/* A FUNC record (at most LT_EVENT_HOT_MAX bytes); a negative or unknown
 * linedefined or lastlinedefined is written 0, and so is a main chunk's
 * lastlinedefined: Lua 5.1 says 0, LuaJIT its line count + 1, and the
 * same chunk must be one function to coverage whichever ran it. */
static inline uint8_t *lt_put_func(uint8_t *p, uint32_t fid, unsigned what, uint32_t src_sid,
                                   uint32_t name_sid, int linedef, int lastline, uint32_t flags)
{
    p = lt_put_head(p, LT_EV_FUNC, 7);
    p = lt_put_uint(p, fid);
    p = lt_put_uint(p, what);
    p = lt_put_uint(p, src_sid);
    p = lt_put_uint(p, name_sid);
    p = lt_put_uint(p, linedef > 0 ? (uint64_t)linedef : 0);
    p = lt_put_uint(p, lastline > 0 && what != LT_WHAT_MAIN ? (uint64_t)lastline : 0);
    return lt_put_uint(p, flags);
}

static inline uint8_t *lt_put_str(uint8_t *p, const char *s, uint32_t len)
{
    if (len < 32) {
        *p++ = (uint8_t)(0xa0 | len);
    } else if (len < 256) {
        *p++ = 0xd9;
        *p++ = (uint8_t)len;
    } else {
        *p++ = 0xda;
        *p++ = (uint8_t)(len >> 8);
        *p++ = (uint8_t)len;
    }
    memcpy(p, s, len);
    return p + len;
}

/* ---- decoding the hot records inline: a reader's inner loop ---- */

/* A step or short form decoded without an lt_event (lt_dec_hot). */
typedef struct lt_hot {
    uint64_t depth, dt;
    uint64_t x;   /* the LINE's line, the CALL's fid; 0 for a RET */
    uint8_t kind; /* LT_EV_LINE, LT_EV_CALL or LT_EV_RET */
} lt_hot;

#define LT_HOT_SPAN 19 /* bytes: the longest step or short form */

/* One msgpack uint at p, which has at least 9 bytes: bytes used, or 0 if
 * it is something else. */
static inline int lt_get_uint9(const uint8_t *p, uint64_t *v)
{
    uint8_t b = p[0];
    if (b < 0x80) {
        *v = b;
        return 1;
    }
    if (b == 0xcc) {
        *v = p[1];
        return 2;
    }
    if (b == 0xcd) {
        *v = (uint64_t)p[1] << 8 | p[2];
        return 3;
    }
    if (b == 0xce) {
        uint32_t be;
        memcpy(&be, p + 1, 4);
        *v = __builtin_bswap32(be);
        return 5;
    }
    if (b == 0xcf) {
        uint64_t be;
        memcpy(&be, p + 1, 8);
        *v = __builtin_bswap64(be);
        return 9;
    }
    return 0;
}

/* The record at p (which has at least LT_HOT_SPAN bytes) if it is a step or
 * a short form: what lt_dec_next makes of it, into h, and d as lt_dec_next
 * leaves it. Returns the bytes used, or 0 for any other record and for
 * bytes lt_dec_next refuses, d untouched: the caller then asks
 * lt_dec_next. Inline: a replay decodes tens of millions a second. */
static inline int lt_dec_hot(lt_dec *d, const uint8_t *p, lt_hot *h)
{
    uint8_t b = p[0];
    int k, k2 = 0;
    if (b < 0x80) { /* a step */
        int64_t line = (int64_t)d->line + (int64_t)b - LT_STEP_BIAS;
        if (!d->line_ok || line < 0 || !(k = lt_get_uint9(p + 1, &h->dt)))
            return 0;
        h->kind = LT_EV_LINE;
        h->depth = d->depth;
        h->x = d->line = (uint64_t)line;
        return 1 + k;
    }
    if (b < LT_SHORT_LINE || b > LT_SHORT_RET || !d->depth_ok ||
        !(k = lt_get_uint9(p + 1, &h->dt)))
        return 0;
    h->x = 0;
    if (b != LT_SHORT_RET && !(k2 = lt_get_uint9(p + 1 + k, &h->x)))
        return 0;
    if (b == LT_SHORT_LINE) {
        h->kind = LT_EV_LINE;
        h->depth = d->depth;
        d->line_ok = 1;
        d->line = h->x;
    } else if (b == LT_SHORT_CALL) {
        h->kind = LT_EV_CALL;
        h->depth = ++d->depth;
        d->line_ok = 0;
    } else {
        h->kind = LT_EV_RET;
        h->depth = d->depth;
        d->line_ok = 0;
        d->depth_ok = d->depth > 0;
        d->depth--;
    }
    return 1 + k + k2;
}

#endif
