/* co_state: the collector's per-process state, shared by its files. One
 * co_state traces one lua_State (and its coroutines) into one ring. */
#ifndef CO_STATE_H
#define CO_STATE_H

#include <limits.h>
#include <lua.h>
#include <stdint.h>
#include <sys/types.h>

#include "lt_event.h"
#include "lt_ring.h"
#include "co_clock.h"
#include "co_ftab.h"
#include "co_mem.h"


/* Lua functions by code: a hash of string.dump's bytes (source,
 * linedefined, bytecode, constants, debug info) -> fid. */
typedef struct co_cent {
    uint64_t hash; /* 0: free slot */
    uint32_t fid;
} co_cent;

typedef struct co_ctab {
    co_cent *e;
    uint32_t cap; /* power of two */
    uint32_t n;
} co_ctab;

typedef struct co_sent {
    char *s;
    uint32_t len;
    uint32_t sid;
    uint64_t hash;
} co_sent;

typedef struct co_stab {
    co_sent *e;
    uint32_t cap;
    uint32_t n;
} co_stab;

/* The longest function name kept (longer global paths are cut). */
#define CO_NAME_MAX 1024

/* Thread ids (co_thread.c). A hooked thread's hook count is CO_TAG: the
 * trace's epoch above its id. */
#define CO_ID_BITS 24
#define CO_ID_MAX (1u << CO_ID_BITS)
#define CO_EPOCHS 127 /* epochs 1..127: the tag stays a positive int */
#define CO_TAG(th, id) ((int)((th)->epoch << CO_ID_BITS | (id)))

/* A thread whose stack recorderd no longer knows (tracing stopped and
 * restarted, co_thread_stale_all; or the program's own hook had it,
 * co_thread_mark_stale) is kept in co_threads.t with this bit set until
 * its stack is sent again. */
#define CO_STALE ((uintptr_t)1)

typedef struct co_threads {
    lua_State **t;     /* by id: the thread that has it (| CO_STALE); NULL: free */
    uint32_t cap;      /* ids are 1..cap-1 */
    uint32_t next;     /* the lowest id never handed out */
    uint32_t *freed;   /* ids to reuse, the last freed first */
    uint32_t nfree;
    uint32_t live;     /* ids in use */
    uint32_t sweep_at; /* look for collected threads when live reaches it */
    uint32_t epoch;    /* 1..CO_EPOCHS, one more at each trace */
    int weak_ref;      /* registry: {id = thread}, weak values */
    lua_State *anchor; /* slot 1 of its stack keeps cur_L alive */
    int anchor_ref;    /* registry: the anchor thread */
    lua_State *main;   /* the state's main thread, NULL if not known */
} co_threads;

/* The id a thread's hook count c names in th (this trace's epoch, in
 * range), in *id, and its entry (that thread or another, | CO_STALE);
 * else *id 0 and NULL. */
static inline uintptr_t co_tag_entry(const co_threads *th, uint32_t c, uint32_t *id)
{
    uint32_t i = c & (CO_ID_MAX - 1);
    if (c >> CO_ID_BITS != th->epoch || i >= th->cap) {
        *id = 0;
        return 0;
    }
    *id = i;
    return (uintptr_t)th->t[i];
}

/* What the state's allocator reports (co_alloc.c): */
#define CO_WATCH_PROTOS 1  /* freed Protos reach co_func_freed */
#define CO_WATCH_THREADS 2 /* freed threads reach co_thread_freed */
/* LUATRACE_TIMING=fast: one hook in about this many has its end measured
 * (co_hook.c). */
#define CO_SAMPLE_EVERY 16

/* The events the collector's hook asks for: every line's too, unless
 * lines are sampled (LUATRACE_LINES=sample, co_tick.c). */
#define CO_MASK_ALL (LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE)
extern int co_mask;
#define CO_MASK co_mask

/* A thread that has a hook of the program's (debug.sethook) which the
 * collector's hook runs after its own ("chained", co_dbghook.c): the
 * thread stays traced, its count is the program's, its id is kept here. */
typedef struct co_chain {
    lua_State *T;
    int mask, count; /* the program's, as given to debug.sethook */
    uint32_t id;     /* T's thread id, 0 before its first event */
} co_chain;
extern unsigned co_nchain; /* chained threads: while any, co_hook is not lean */

#define CO_WAIT_MAX_S 30 /* LUATRACE_WAIT_MAX's default */

/* A thread that resumed another with its hooks off (co_untraced.c); one
 * resumed so may do the same, up to CO_EPISODES deep. */
#define CO_EPISODES 8
typedef struct co_episode {
    lua_State *L;
    uint32_t id, top;
} co_episode;

typedef struct co_state {
    lt_ring ring;
    int active;    /* hooks emit events (set with co_set_active) */
    /* a stack is being sent (START, then its FRAMEs): no MEM record may
     * come between them, which would end it for recorderd */
    int snapping;
    int lean;      /* CO_LEAN_*: which of co_hook's lean paths apply */
    int lost;      /* the recorder went away: tracing abandoned for good */
    int use_tsc;   /* ticks are TSC, else CLOCK_MONOTONIC ns */
    int no_clock;  /* LUATRACE_TIMING=none: no clock is ever read, every dt is 0 */
    int jit;       /* LuaJIT 2.1 (co_jit.c): no 5.1 layout read, events translated */
    int jit_lines; /* LuaJIT's GCproto (5.4's Proto) layout verified: LINES records (co_jitlines.c, co_lines54.c) */
    int layout_ok; /* Lua 5.1 closure layout verified: key by Proto* */
    int state_ok;  /* lua_State/CallInfo layout verified: no getinfo("f") */
    int table_ok;  /* Table layout verified: names found by reading tables */
    int code_ok;   /* Proto layout verified: code hashed from it (co_code.c) */
    int thread_ok; /* lua_State layout verified for the switch path (co_thread.c) */
    int watched;   /* CO_WATCH_*: what the state's allocator reports (co_alloc.c) */
    int mem;       /* LUATRACE_MEMORY=1: the allocator's calls are traced (MEM) */
    /* troff with memory traced, until tron: frees and reallocations still
     * go as MEM records (recorderd takes the blocks they free out of the
     * live ones if tracing restarts: co_alloc.c mem_note_off) */
    int mem_off;
    /* (gc) frames (co_alloc.c): an allocation brought the state's bytes to
     * its GC threshold gc_p0 ticks of program time after the last hook (0:
     * before this interval); a step runs at the next check */
    int gc_pending;
    uint64_t gc_p0;
    size_t gc_thr;     /* the threshold it reached: a step sets another */
    uint32_t gc_fid;   /* the (gc) function's id, once described */
    uint64_t mem_base; /* the last MEM record's address: the short MEMs' base */
    int key_only;  /* state_ok and watched: a cache hit on the key alone is exact */
    int drop_mode; /* LUATRACE_MODE=drop: never wait for space */
    int discard;   /* LUATRACE_SINK=discard: nobody reads; for scripts/bench */
    int calib;     /* the calibration's trace (co_calib.c): not the program's events */
    lua_State *cur_L;  /* the thread of the last record (kept alive by th.anchor) */
    uint32_t cur_id;   /* its id */
    lua_State *seen_L; /* LuaJIT: the thread co_jit_event just looked up, and */
    uint32_t seen_id;  /* its id, for switch_slow in the same event (not 0) */
    /* threads that resumed another from where Lua runs no hooks (a hook,
     * a finalizer: co_untraced.c), innermost last, until each runs traced
     * again: the thread, its id, the depth of its top frame as last sent */
    co_episode untraced[CO_EPISODES];
    uint32_t nuntraced;
    uint32_t yield_depth; /* meanwhile cur_L called coroutine.yield there: its
                             next event may follow a resume seen by no hook */
    uint64_t last;    /* ticks when the previous hook returned (measured or estimated) */
    uint64_t hook_sum; /* ticks inside the lean paths' hooks since the last HOOK record */
    /* the same for the lean path's line hooks in the thread of the last
     * event, and their count, since the last LHOOK record: the hooks most
     * alike from program to program, which scale the compensation */
    uint64_t hook_line, hook_nline;
    /* co_preempt.c: what the thread waited for a CPU comes off long intervals */
    uint64_t pre_min;   /* an interval over this many ticks is checked */
    uint64_t pre_delay; /* the kernel's run_delay (ns) at the last read */
    uint64_t pre_read;  /* ticks at the last read */
    uint64_t pre_sum;   /* ticks taken off so far */
    double pre_tpn;     /* ticks a ns */
    uint32_t hook_est[LUA_HOOKLINE + 1]; /* a hook's own ticks per event kind, x16 */
    uint32_t hook_ticks[LUA_HOOKLINE + 1]; /* the same / 16 */
    uint32_t sample_left; /* events until the next measured hook end */
    uint32_t sample_every; /* 1: every hook end measured (the default), else
                              CO_SAMPLE_EVERY (LUATRACE_TIMING=fast) */
    uint64_t rng;     /* xorshift state: which hook ends are measured */
    int slow;         /* this hook took a slow path: measure its end (co_hook_slow) */
    uint64_t dropped; /* events dropped since the last GAP record */
    int gap_ok;       /* co_out_gap is writing the GAP (the resync's first record) */
    uint64_t slow_at; /* ring position past which a hot record takes co_out_hot_slow */
    /* short forms (lt_event.h): what the last record implies, while the ring
     * position is still the one right after it */
    uint64_t line_end; /* after the last LINE: a step may follow */
    uint32_t line_prev; /* that LINE's line */
    uint64_t depth_end; /* after the last CALL, LINE or RET */
    uint32_t depth;     /* the depth it implies */
    co_ftab ft;
    const void **freed; /* Protos freed since the last lookup (co_func_freed) */
    uint32_t nfreed, freed_cap;
    int forget_all;     /* freed could not grow: forget every Lua function */
    co_ctab ct;
    co_stab st;
    co_arena names; /* the bytes of st's strings */
    uint32_t next_fid;
    uint32_t next_sid;
    int sock;       /* connection to recorderd; -1 if none */
    dev_t sock_dev; /* its socket, as connected (co_conn_ours) */
    ino_t sock_ino;
    co_threads th;
    lua_CFunction cf_pcall, cf_xpcall, cf_resume, cf_wrap, cf_yield;
    lua_CFunction cf_close; /* coroutine.close (5.4): its coroutine runs __close */
    lua_CFunction cf_require, cf_loader[4]; /* named by the module they load */
    pid_t recorder_pid; /* private recorder we spawned, or 0 */
    int wait_bye;       /* at exit, wait until the recorder closes */
    int private_summary; /* -lluatrace.profile: own recorder, summary at exit */
    int outside;        /* co_outside.c: the hello asks to be sampled from outside */
    const void *outside_state; /* and says where its lua_State is */
    pid_t outside_tid;         /* and which thread runs it */
    int attached;       /* started by `recorderd attach`: end silently */
    volatile int conn_check; /* an attach request came while attached: is the
                                recorder of this trace still there? (any_event) */
    volatile int flush_req; /* recorderd top saw nothing for a second: publish
                               what is written at the next event (any_event) */
    char sock_path[108]; /* the recorder to register with, "" = search */
    char shm[LT_RING_NAME_MAX + 1];
    uint64_t wait_max_ns; /* LUATRACE_WAIT_MAX: longest wait on a ring nobody reads */
    int stall_warned;     /* said that recorderd is not draining */
    int stalled;          /* a wait reached wait_max: drop mode from then on */
    /* Where relative file sources were read (co_func_source_dir): */
    char cwd0[PATH_MAX]; /* the directory as tracing began (hello's), or "" */
    uint32_t dir_sent;   /* what the last DIR said (sid; 0: cwd0) */
    uint32_t *srcdir;    /* src sid -> its directory's sid + 1 (1: cwd0); 0 unknown */
    uint32_t srcdir_cap;
    unsigned sample_hz;  /* a sampled trace (co_sample.c): its rate, for the hello; else 0 */
    int tick_mode;       /* CO_TICK_*: sampled time (LUATRACE_TIMING=sample, co_tick.c) */
    int tick_on;         /* its timer is armed */
    uint64_t tick_ns;    /* its period */
    uint32_t tick_fine;  /* ticks left at the short first period (co_tick_start_ns) */
    int lines_sampled;   /* no line hook: a tick's line by a probe (co_tick.c) */
    int lines_off;       /* a thread ran with its line hook taken off
                            (co_hook.c's lines_guard): switches check */
    int sig_check;       /* a module's C function was called: co_sigwatch_check */
    int jit_tail;        /* LuaJIT: the call being recorded takes its caller's
                            place (co_jit.c's shadow stack says so) */
} co_state;

/* co_tick.c: sampled time. tick_mode: */
#define CO_TICK_CPU 1  /* the traced thread's CPU time */
#define CO_TICK_WALL 2 /* CLOCK_MONOTONIC */
extern volatile uint64_t co_tick_pending; /* ticks since the last TICK record */
/* of co_tick_pending: those that landed outside LuaJIT's interpreter (in a
 * C function, or C code the interpreter called), once it is known */
extern volatile uint64_t co_tick_pending_c;
extern volatile int co_tick_in;           /* set while the hook runs */
/* Collector work that may also run outside a hook (a TICK record's
 * flush; a thread's hook and count set as tracing begins): a tick there
 * is the collector's and sets no probe, which would land between a
 * count's read and its write (co_tick_count). Returns what co_tick_in
 * was, for co_tick_leave. */
static inline int co_tick_enter(void)
{
    int was = co_tick_in;
    co_tick_in = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return was;
}
static inline void co_tick_leave(int was)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    co_tick_in = was;
}
extern lua_State *volatile co_probe_L;     /* the thread a tick probes, or NULL */
extern uintptr_t co_tick_ra;               /* a known return address of the hook's caller */
extern unsigned co_tick_walks;             /* LuaJIT, Lua 5.4: events whose callers were looked for */
#define CO_TICK_WALKS 64
/* Arms (on) or disarms the timer, creating it in this thread the first
 * time (a message and no time if it cannot). Traced thread only. */
void co_tick_arm(co_state *s, int on);
/* The period: LUATRACE_TICK_US (100 to 1000000), else 1 ms. */
uint64_t co_tick_period_ns(void);
/* The first period: 0.1 ms for *fine ticks, then co_tick_period_ns's;
 * with LUATRACE_TICK_US, that one from the start (*fine 0). */
uint64_t co_tick_start_ns(uint32_t *fine);
/* Writes the pending ticks as a TICK record, if any and the ring takes it. */
void co_tick_flush(co_state *s);
/* LuaJIT: writes co_tick_pending_c alone (a C function on top: LuaJIT
 * reports no C return, so its time must be charged before the next
 * event closes it). */
void co_tick_flush_c(co_state *s);
/* The signal the ticks come on, 0 before the first timer. */
int co_tick_signal(void);
/* The handler on the tick's signal is no longer ours (the program set its
 * own, or the default): the ticks move to another signal (co_sigwatch.c). */
void co_tick_retake(co_state *s);

/* co_sigwatch.c: whether C function cf is outside Lua's core (a module's),
 * so that a call of it may have reset the tick's signal. */
int co_sigwatch_foreign(const void *cf);
/* After such a call, at the next record's slow path: the handler checked. */
void co_sigwatch_check(co_state *s);
/* Such a call is made: the next record takes the ring's slow path, which
 * checks (only while ticks run). */
static inline void co_sigwatch_after(co_state *s)
{
    if (s->tick_on) {
        s->sig_check = 1;
        s->slow_at = 0;
    }
}
/* Any hook, first, while lines are sampled: takes a tick's probe off
 * again; 1 if ar is the probe's count event, whose line is the tick's. */
int co_tick_unprobe(co_state *s, lua_State *L, const lua_Debug *ar);
/* The count T had before a probe was set on it, if c, what T's count
 * reads, is the probe's (1); else c. A tick may probe the current thread
 * wherever the collector runs outside a hook (co_tick_in is 0), as
 * tracing begins: read there, the probe's 1 named no id, and the id
 * written back (co_thread_hook) was none. */
int co_tick_count(const lua_State *T, int c);
/* Lines by sample no more (a program hooking lines itself): the line hook
 * for every thread hooked from now on. */
void co_tick_lines_exact(co_state *s);
/* T is freed: no probe of it to take off. */
void co_tick_freed(lua_State *T);
/* ra called the hook: a tick in that function is Lua's work for the hook;
 * up (LuaJIT): in the function one frame further up too, and in the
 * interpreter's stub above that; (Lua 5.4) in luaD_hook's caller where it
 * is a hook's only, count: above a probe's count event (co_tick.c). */
void co_tick_caller_learn(uintptr_t ra, int up, int count);
/* The timer off and gone (its descriptor closed), its handler left in
 * place: an attached trace's detach leaves no descriptor behind. */
void co_tick_release(co_state *s);
/* In a fork child (async-signal-safe): no timer of its own yet. */
void co_tick_forked(void);
/* co_module.c: sampled time of the clock named (cpu, the default, or
 * wall), no clock read per event. */
void co_module_sampled_time(co_state *s, const char *clock);
/* With sampled time: lines by sample, no line hook (co_mask). */
void co_module_lines_by_sample(co_state *s);
/* LUATRACE_LINES=sample, where this Lua allows it: lines by sample. */
int co_module_lines_sampled(void);
/* co_attach.c: the real-time signal a dormant collector listens on. */
int co_attach_signal(void);

/* ---- co_module.c: the module's entry points ---- */
int luaopen_luatrace(lua_State *L);
int luaopen_luatrace_profile(lua_State *L);

/* co_hook's lean paths: exact timing with the TSC, or no clock at all
 * (LUATRACE_TIMING=none); 0: neither (not tracing, CLOCK_MONOTONIC,
 * LUATRACE_TIMING=fast, a chained thread). */
#define CO_LEAN_EXACT 1
#define CO_LEAN_NOCLOCK 2
#define CO_LEAN_TICK 3 /* LUATRACE_TIMING=sample: no clock, TICK records */
#define CO_LEAN_MEM 4  /* memory traced: every hook sets co_mem_in */

/* Starts or stops emitting events (and the ticks of sampled time). */
static inline void co_set_active(co_state *s, int on)
{
    s->active = on;
    s->lean = !on || co_nchain || s->jit ? 0
              : s->mem                   ? CO_LEAN_MEM
              : s->tick_mode             ? CO_LEAN_TICK
              : s->no_clock              ? CO_LEAN_NOCLOCK
              : s->use_tsc && s->sample_every == 1 ? CO_LEAN_EXACT
                                         : 0;
    if (s->tick_mode)
        co_tick_arm(s, on && !s->lost);
}

/* The trace's clock: ticks, or 0 with LUATRACE_TIMING=none, which reads
 * none (a coverage run: counts, stacks and lines only). */
static inline uint64_t co_now(const co_state *s)
{
    return s->no_clock ? 0 : co_clock_ticks(s->use_tsc);
}
/* This hook took a slow path: its end is measured, not estimated. */
static inline void co_hook_slow(co_state *s)
{
    s->slow = 1;
    s->sample_left = 1;
}

/* ---- co_out.c: writing records (traced thread only) ---- */

/* Returns space for n bytes, waiting for the consumer if the ring is full
 * (lossless mode) or NULL if the event must be dropped or tracing is lost. */
uint8_t *co_out_wait(co_state *s, size_t n);

static inline uint8_t *co_out_reserve(co_state *s, size_t n)
{
    uint8_t *p = lt_ring_reserve(&s->ring, n);
    return p ? p : co_out_wait(s, n);
}

/* Space for a hot record (at most LT_EVENT_HOT_MAX bytes) at the ring
 * position, or NULL as co_out_wait. One compare on the fast path: past
 * slow_at the cached free space may not do, a publish is due, or a GAP
 * record is pending (slow_at 0). The record ends with co_out_hot_end. */
uint8_t *co_out_hot_slow(co_state *s);

static inline uint8_t *co_out_hot(co_state *s)
{
    if (__builtin_expect(s->ring.pos <= s->slow_at, 1))
        return s->ring.data + (s->ring.pos & s->ring.mask);
    return co_out_hot_slow(s);
}

/* Ends a hot record begun at p and ending at q; returns the new position.
 * Publishing waits for the next co_out_hot past slow_at. */
static inline uint64_t co_out_hot_end(co_state *s, const uint8_t *p, const uint8_t *q)
{
    return s->ring.pos += (uint64_t)(q - p);
}

/* Emits a WAIT record of what co_preempt.c took off since the last, if any. */
void co_out_waited(co_state *s);

/* Emits a CLOCK record. */
void co_out_clock(co_state *s);

/* The event being traced is lost for a reason of the collector's own (no
 * memory for a new function's or thread's entry): counted as a drop, so
 * that the next hook writes the GAP and sends the stacks again, and the
 * session reports it, as drop mode's full ring does. */
void co_out_drop(co_state *s);

/* ---- co_func.c: function and string interning (cold path) ---- */

int co_func_init(co_state *s);
void co_func_free(co_state *s);

/* Checks the Lua 5.1 closure layout co_func_key relies on. */
int co_func_layout_check(lua_State *L);

/* co_code.c: the hash of a Proto's code (what string.dump writes of the
 * function itself), where co_code_layout_check passed. */
uint64_t co_code_hash(const void *pr);
int co_code_layout_check(lua_State *L);

/* Checks the lua_State and CallInfo layout closure lookups rely on, from
 * inside the C function `running`. */
int co_func_state_check(lua_State *L, lua_CFunction running);
/* As `running`: whatever function runs at level 0 (a hook's). Never called. */
int co_running_top(lua_State *L);

/* co_func_id (co_func.h, inline): the function running at ar's level (a
 * hook's ar or one from lua_getstack): returns its fid, interning it
 * (FUNC/STR records, naming) on first sight. Sets *flags to its LT_FF_*
 * flags. Returns 0 if the record could not be written. */

/* A function cache entry's flag of the collector's own, never sent: the
 * function is named by its first argument (co_func_arg_id). */
#define CO_FF_BYARG (1u << 30)
/* Another, never sent: coroutine.close, whose coroutine may run __close
 * metamethods (co_hook.c's close_target). */
#define CO_FF_CLOSE (1u << 29)
#define CO_FF_OWN (CO_FF_BYARG | CO_FF_CLOSE)
/* Another: a C function of no Lua core's, which may set a signal's handler
 * (co_sigwatch.c). */
#define CO_FF_SIGS (1u << 28)
/* A call of require or of a package loader (fid): its own id per module
 * name, its first argument ("require \"a.b\""), so that a profile says
 * which module's loading takes the time. Returns fid when the argument is
 * no module name. */
uint32_t co_func_arg_id(co_state *s, lua_State *L, lua_Debug *ar, uint32_t fid);
/* The id of the pseudo C function "(gc)" (co_alloc.c), described once; 0
 * if its FUNC could not be written. */
uint32_t co_func_gc_id(co_state *s);

/* The GC freed the Proto at pr (or a block of its size): the cache
 * forgets pr before its next lookup. Called from the allocator, at any
 * allocation, so it only notes pr; co_func_id does the rest. */
void co_func_freed(co_state *s, const void *pr);
/* Sets s->key_only once state_ok and watched are known. */
static inline void co_func_fast_path(co_state *s)
{
    s->key_only = s->state_ok && (s->watched & CO_WATCH_PROTOS);
}
/* A call of a coroutine.wrap function (fid): its own id per coroutine body
 * (co's function), named by the call site that first ran one, as every
 * wrap function is one C function. Returns fid when co's body is unknown. */
uint32_t co_func_wrap_id(co_state *s, lua_State *L, lua_Debug *ar, lua_State *co, uint32_t fid);

/* The source of a function as traced, into out (LT_STR_MAX + 1 bytes):
 * "@file" -> file, whole; one of LT_STR_MAX bytes or more (only a chunk
 * name given to load: open() takes no path that long) is cut to
 * LT_STR_MAX - 1 bytes ending in "...#" and 16 hex digits of the whole
 * name's hash, so two long names sharing a prefix stay two sources. Else
 * Lua's short_src. */
void co_func_source(const lua_Debug *ar, char *out);

/* ---- co_alloc.c: watching the state's allocator ---- */
/* Wraps L's allocator (once per state; the module is pinned in memory from
 * then on). Returns what L's frees report: CO_WATCH_* bits, 0 if none. */
int co_alloc_watch(lua_State *L);
/* LuaJIT and Lua 5.4: wraps L's allocator (or reuses the wrapper memory
 * tracing installed) so that every free reaches co_wcache_freed. 1 if it
 * does, 0 if the allocator is not ours (LUATRACE_ALLOC=plain, no
 * pinning). */
int co_alloc_watch_frees(lua_State *L);
/* Memory tracing (LUATRACE_MEMORY=1): the allocator co_alloc_watch
 * installed (under LuaJIT, one installed here, which watches no frees)
 * sends a MEM record for each call that changes memory while s is active
 * and co_mem_in is 0; s NULL: no longer. Returns 0, or -ENOTSUP where the
 * allocator is not ours (a Lua 5.1 layout not verified,
 * LUATRACE_ALLOC=plain). Traced thread only. */
int co_alloc_memory(co_state *s, lua_State *L);
/* (gc) frames: GC steps that allocations bring about are timed where
 * the time is exact (the TSC read at every event) and the state's
 * global_State layout verified; else none. After co_alloc_memory. */
void co_alloc_gc(co_state *s, lua_State *L);
/* In the hook (co_mem_in set), before the collector calls the Lua API
 * where it may allocate: runs a GC step already due, its frees recorded
 * (memory traced, the global_State verified; else nothing). */
void co_alloc_step_due(lua_State *L);
/* In the hook of event ar of thread L (co_mem_in set): if a step ran
 * since an allocation reached the threshold, a CALL and a RET of (gc)
 * under the frame on top take its time (from that allocation to t). */
void co_alloc_gc_event(co_state *s, lua_State *L, uint32_t depth, uint64_t t);
/* Non-zero while the collector itself runs (its hook, tron, troff, the
 * end of a trace): an allocation then is the collector's, and sends no
 * record (it could land inside one being written). */
extern volatile int co_mem_in;
/* Memory is traced with exact time: co_out_wait takes a wait that an
 * allocation's record made (co_mem_in 1, no hook running) off the
 * program's time. */
extern int co_alloc_timed;
extern int co_alloc_sending; /* mem_note is writing its records */
/* The hook while memory is traced: from co_alloc_defer (co_mem_in set)
 * the allocator's frees wait; co_alloc_flush, once the hook's records are
 * written (co_mem_in 0 again), sends them if a GC step may have run
 * meanwhile (the state was due as the hook began or after one of its
 * allocator calls), else drops them (the collector's own). */
extern int co_alloc_deferring;
void co_alloc_defer(co_state *s, lua_State *L);
void co_alloc_flush(co_state *s, lua_State *L);

/* co_calib.c: what each hook costs the program beyond the hook's own
 * measured time, per event: ticks of a line, of a Lua function's call or
 * return, of a C function's, and x16 of each Lua instruction run while
 * the line hook is set (doc/design.md, "Hook overhead compensation"). */
typedef struct co_bias {
    uint64_t tick[4];
    uint64_t hook16; /* x16, the hook's measured ticks an event meanwhile */
    uint64_t hook16_line; /* the same for the lean path's line hooks only */
    uint64_t switch16;    /* LuaJIT, sampled time: a coroutine switch's cost, 1/16 ns */
    uint64_t step16;      /* Lua 5.4: a step of a line's lookup, x16 as tick[3] */
    int in16;             /* tick[] are in 1/16 ns (measured for sampled time), not ticks */
    int done, ok;
} co_bias;
/* Measures it once per process, in L outside any hook, before tracing
 * begins; running is the C function running in L (co_func_state_check).
 * LUATRACE_COMPENSATE=0 turns it off. */
void co_calib_run(lua_State *L, lua_CFunction running);
/* The same for a trace that an attach will begin, with its state_ok. */
void co_calib_run_state(lua_State *L, int state_ok);
const co_bias *co_calib_bias(void);
/* co_calhist.c: LuaJIT's sampled-time figures b, kept with the user's
 * last hour's; b takes the cheaper quarter's if it is dearer by a fifth
 * (a call's: or cheaper by half). */
void co_calhist_apply(co_bias *b);
/* The BIAS record, after the CLOCK at a trace's start. */
void co_out_bias(co_state *s);
/* ---- co_preempt.c: time spent preempted is nobody's ---- */
/* pre_min disarmed: also a signed compare's largest (co_hook's lean path) */
#define CO_PREEMPT_NEVER ((uint64_t)INT64_MAX)
/* Reads the thread's wait so far and arms the check (pre_min), unless
 * there is no clock, LUATRACE_COMPENSATE=0, or no schedstat. At every
 * start of tracing; co_module_begin leaves it disarmed. */
void co_preempt_begin(co_state *s);
/* At a trace's end: disarmed, its file closed (none kept while dormant). */
void co_preempt_end(co_state *s);
/* ticks less what the thread waited for a CPU since the last read. */
uint64_t co_preempt_take(co_state *s, uint64_t ticks);
/* Once per ring batch while armed, before its HOOK record: a wait inside
 * the batch's hooks off their sum; the baseline, once a ms at most. */
void co_preempt_batch(co_state *s);
/* An interval of the clock's, preemption off when it is long. */
static inline uint64_t co_preempt_off(co_state *s, uint64_t ticks)
{
    return __builtin_expect(ticks > s->pre_min, 0) ? co_preempt_take(s, ticks) : ticks;
}

/* ---- co_hook.c ---- */

void co_hook(lua_State *L, lua_Debug *ar);

/* T's entry, or NULL. Async-signal-safe (a scan of a static table). */
co_chain *co_chain_find(const lua_State *T);

/* T's hook is the collector's or none (not the program's, co_dbghook.c,
 * even chained): the collector may hook T. */
static inline int co_hook_ours(lua_State *T)
{
    lua_Hook h = lua_gethook(T);
    return h == NULL || (h == co_hook && !(co_nchain && co_chain_find(T)));
}
co_state *co_hook_state(void);
void co_hook_set_state(co_state *s);

/* Writes the GAP record of events dropped since the last one, if any. */
void co_hook_flush_gap(co_state *s);

/* The recorder went away: tracing stops for good (attached: silently). */
void co_out_gone(co_state *s);

/* Writes the pending GAP record (co_out_gap); returns 1 if none is left. */
int co_out_gap(co_state *s);

/* Emits START + FRAME records describing L's whole stack. */
void co_hook_snapshot(co_state *s, lua_State *L, unsigned reason);
/* START (LT_R_BEGIN) + FRAME records of L's stack below the function a call
 * hook reports: that call is the first traced event. */
void co_hook_snapshot_caller(co_state *s, lua_State *L);
/* START (LT_R_HOOKED) + FRAME records of L's stack from level from: frames
 * the hooks did not report (LuaJIT: co_jit.c). */
void co_hook_snapshot_from(co_state *s, lua_State *L, int from, unsigned reason);

/* Installs the hook on L (and records its stack if it already has one). */
void co_hook_attach_thread(co_state *s, lua_State *L, lua_State *co);

/* Writes a RESUME of co (dt 0): at attach, the resume chain. */
void co_hook_resume_record(co_state *s, lua_State *co);

/* Records one hook event (the hook's work once it knows it traces). */
void co_hook_emit(co_state *s, lua_State *L, lua_Debug *ar, uint64_t dt);

/* Writes a RESUME (resumed) or YIELD record, as the switch path does; a
 * RET of the frame at depth, dt 0. Return 0 if it could not be written. */
int co_hook_switch_record(co_state *s, int resumed, uint64_t dt, uint32_t id, uint32_t depth,
                          int dead);
int co_hook_ret_record(co_state *s, uint32_t depth);
/* The same with dt. */
int co_hook_ret_record_dt(co_state *s, uint32_t depth, uint64_t dt);

/* Writes a THREAD record: T gets id. Returns 0 if it could not be written. */
int co_hook_thread_record(co_state *s, uint32_t id, lua_State *T);

/* ---- co_untraced.c: coroutines resumed where Lua runs no hooks ---- */

/* The switch to L (id; depth: its next record's) from the last record's
 * thread, which resumed L (resumed) or gave control back (dead: it died),
 * while that thread runs with hooks off or one did (nuntraced).
 * Returns -1 if the switch is the usual record (written by the caller),
 * else as switch_slow: 0 not written, 1 dt went with it, 2 dt goes with
 * the event. Layout verified only. */
int co_untraced_switch(co_state *s, lua_State *L, uint32_t id, uint32_t depth, uint64_t dt,
                       int resumed, int dead);

/* The event ar of cur_L after it called coroutine.yield while a thread ran
 * with hooks off (yield_depth set): if it is that yield's return, that
 * thread resumed cur_L again unseen, and the records say so. Returns 1 if
 * it wrote them (dt went with them). */
int co_untraced_again(co_state *s, lua_State *L, const lua_Debug *ar, uint64_t dt);

/* ---- co_thread.c: thread ids (traced thread only) ---- */

/* A fresh id table for a new trace (a new epoch), its weak table and the
 * anchor thread in L's registry; sets s->thread_ok. Returns 0 or -1. */
int co_thread_init(co_state *s, lua_State *L);
void co_thread_note_main(lua_State *L);

/* Frees the table; releases the registry entries if L is given. */
void co_thread_free(co_state *s, lua_State *L);

/* L is current: anchors it (until the next switch) and sets s->cur_L. */
void co_thread_anchor(co_state *s, lua_State *L);

/* L is current (tracing starts in it): anchored, cur_L and cur_id set. */
void co_thread_current(co_state *s, lua_State *L);

/* Tracing restarts: every known thread keeps its id (and recorderd its
 * track), but its stack must be sent again before its next record, as
 * recorderd forgot the stacks when tracing stopped. Marks them stale. */
void co_thread_stale_all(co_state *s);

/* T's id if T is stale (its count and the table agree but for CO_STALE),
 * which it no longer is, hooked again; else 0. The caller sends T's stack. */
uint32_t co_thread_revive(co_state *s, lua_State *T);

/* The id T's hook count (or chain entry) names if it is T's own (known
 * or stale), not one inherited from the thread that created it; else 0. */
uint32_t co_thread_tagged(co_state *s, lua_State *T);

/* T (not running) is stale if it is known: its stack goes with its next
 * resume (the program's hook had it; co_dbghook.c). */
void co_thread_mark_stale(co_state *s, lua_State *T);

/* The GC frees T (co_alloc.c): if T has an id, the id is free again.
 * Called from the allocator; no Lua allocation happens while the id
 * table is mid-change (co_thread_new makes none when threads are watched),
 * so it acts at once. */
void co_thread_freed(co_state *s, lua_State *T);
/* T's id if T is known (its count and the table agree), else 0. */
uint32_t co_thread_known(co_state *s, lua_State *T);

/* A new id for T (not known): a THREAD record, T hooked with its tag.
 * Uses T's stack. Returns 0 if the record could not be written. */
uint32_t co_thread_new(co_state *s, lua_State *T);

/* T's id, new if T is not known (see co_thread_new); a stale id is
 * revived: callers send T's stack (START). */
uint32_t co_thread_id(co_state *s, lua_State *T);

/* Hooks T, with its tag if it has an id. */
void co_thread_hook(co_state *s, lua_State *T);

/* ---- co_jit.c: LuaJIT 2.1 ---- */

/* The C function at idx as the cache keys it: its lua_CFunction, or, for
 * a LuaJIT fast function (none: pcall, tostring, coroutine.resume), its
 * one closure; every wrap function one key. NULL for a Lua function. */
const void *co_cfunc_key(lua_State *L, int idx);

/* 1 if the Lua that loaded us is LuaJIT. */
int co_jit_is(void);
/* Turns LuaJIT's compiler off and flushes its compiled code (outside any
 * hook: compiled code calls no hook); says so once on stderr. */
void co_jit_prepare(lua_State *L);
int co_jit_hooks_off(lua_State *L);
/* Where co_jit_hooks_off's L may be, after "LuaJIT runs no hook ": in
 * the program's own hook if it has one. */
const char *co_jit_no_hook_where(lua_State *L);
/* Live attach: listen() keeps jit.status (outside any hook); the attach
 * hook turns the compiler off and flushes (returns 1 if it was on), the
 * detach turns it on again (only if it was). */
void co_jit_listen(lua_State *L);
int co_jit_suspend(lua_State *L);
void co_jit_restore(lua_State *L);
/* The thread-id table (weak keys) and shadow stacks of a new trace. */
int co_jit_begin(lua_State *L);
void co_jit_end(lua_State *L);
/* T's id as co_thread_new gave it (what the hook count holds under 5.1). */
uint32_t co_jit_tag(lua_State *T);
void co_jit_set_tag(lua_State *T, uint32_t id);
/* The fid of the Lua closure on top of L's stack (0: not known yet), and
 * its setting: a table with weak keys, so a collected closure leaves it. */
uint32_t co_jit_closure_fid(lua_State *L);
void co_jit_closure_set(lua_State *L, uint32_t fid);
/* The same for the wraps of the body closure on top of L: their fid (a
 * Proto's address cannot tell them apart here, and a closure's can be a
 * new closure's once the GC freed it). */
uint32_t co_jit_wrap_fid(lua_State *L);
void co_jit_wrap_set(lua_State *L, uint32_t fid);

/* ---- co_wcache.c: values by an object's address, forgotten as it is freed ---- */
enum { CO_WC_THREAD, CO_WC_CLOSURE, CO_WC_WRAP, CO_WC_N }; /* what is kept */
/* A trace's map begins (used if frees are watched: co_alloc_watch_frees;
 * else the tables below) and ends. co_wcache_on: the map is in use. */
void co_wcache_begin(lua_State *L);
void co_wcache_end(void);
int co_wcache_on(void);
/* A new table with weak keys in the registry: its ref, or LUA_NOREF
 * (also when the map is in use: none needed). After co_wcache_begin. */
int co_weak_table(lua_State *L);
/* Value t (0: none) of the object on top of L, and its setting: the map,
 * or the table ref. */
uint32_t co_weak_get(int ref, int t, lua_State *L);
void co_weak_set(int ref, int t, lua_State *L, uint32_t v);
/* The map's value t for key (0: none), and its setting. */
uint32_t co_wcache_get(int t, const void *key);
void co_wcache_put(int t, const void *key, uint32_t val);
/* The allocator freed the block at p: the map forgets p. Any thread; no
 * allocation. */
void co_wcache_freed(const void *p);
/* The map's thread T (id) was freed: the id is free (co_thread.c). */
void co_thread_freed_id(const void *T, uint32_t id);
/* T's depth (its number of frames), and its shadow stack read again from
 * its frames from level `from`. */
uint32_t co_jit_depth(lua_State *T);
void co_jit_rebuild(uint32_t id, lua_State *T, int from, int fresh_top);
/* The hook's event under LuaJIT: translated as Lua 5.1 would report it,
 * then co_hook_traced. */
void co_jit_event(co_state *s, lua_State *L, lua_Debug *ar);
/* The hook's work on an event while tracing (co_hook.c). */
void co_hook_traced(co_state *s, lua_State *L, lua_Debug *ar);

/* co_jitlines.c (co_lines54.c in the 5.4 build): 1 if LuaJIT's (5.4's)
 * prototypes can be read (checked once, at load: runs Lua, never from a
 * hook). */
int co_jit_lines_check(lua_State *L);
/* LuaJIT: co_jit_lines_check found its 64-bit refs (LJ_GC64); else 0. */
int co_jit_gc64(void);
/* The LINES records of fid, the Lua function fn (lua_topointer), after its
 * FUNC: the lines of its bytecode and of the functions nested in it. */
void co_jit_lines(co_state *s, uint32_t fid, const void *fn);

/* co_jit_event hands on ar with the depth in i_ci: the debug API's calls
 * on it get the frame's slot back. */
extern lua_Debug *co_jit_ar;
extern int co_jit_slot;
int co_jit_getinfo(lua_State *L, const char *what, lua_Debug *ar);
const char *co_jit_getlocal(lua_State *L, const lua_Debug *ar, int n);
/* A frame's depth as the records carry it: its CallInfo's place above
 * the thread's base (the C level, 0). Lua 5.1 and LuaJIT's hook give it
 * in i_ci (LuaJIT's as co_jit_event translated it); Lua 5.4's i_ci is the
 * CallInfo itself, whose chain of previous links ends at the base: the
 * walk costs a load per frame, the layout is 5.4's from 5.4.0 to 5.4.7
 * (func, top, previous). CO_AR_SLOT: LuaJIT's frame slot (co_jit.c). */
#ifdef CO_LUA54
/* Offsets in Lua 5.4's objects, 5.4.0 to 5.4.7 on LP64, for the few reads
 * of them: any object's header tag (CommonHeader's tt); lua_State's
 * status, top, l_G, ci, stack and base_ci; CallInfo's func and previous. */
enum {
    L54_TT = 8,
    L54_STATUS = 10,
    L54_TOP = 16,
    L54_G = 24,
    L54_CI = 32,
    L54_STACK = 48,
    L54_BASE_CI = 96,
    CI54_FUNC = 0,
    CI54_PREVIOUS = 2 * sizeof(void *),
    CI54_SAVEDPC = 4 * sizeof(void *) /* u.l.savedpc, past next */
};
static inline const void *co_ci_prev(const void *ci)
{
    const void *prev;
    memcpy(&prev, (const char *)ci + CI54_PREVIOUS, sizeof prev);
    return prev;
}
static inline uint32_t co_ci_depth(const void *ci)
{
    uint32_t n = 0;
    while ((ci = co_ci_prev(ci)))
        n++;
    return n;
}
#define CO_AR_DEPTH(ar) co_ci_depth((ar)->i_ci)
/* A hook event's depth without walking the whole chain at every event (a
 * recursion 100 000 deep took 24 s, not 0.2; one caught by pcall at the
 * stack's limit, 487 s): the last event's CallInfo and its nearest
 * ancestors are kept with its depth, and the next event's is most often
 * one of them (a line, a return, a tail call) or just above the last (a
 * call).
 * A match is the same frame at the same depth: a CallInfo moves
 * (luaE_shrinkCI relinks the free ones past L->ci + 1) or is freed only
 * while no frame uses it, and the push that uses it again is an event
 * that names it; the first event after an error unwound frames is at most
 * one above the frame that caught it, which never moved. Frames pushed
 * while no hook of ours is set break that: co_ci54_forget where co_hook is
 * set again, and every CO_CI_CHECK-th move is a whole walk anyway. */
enum { CO_CI_ANC = 4, CO_CI_CHECK = 4096 };
typedef struct co_ci54 {
    const void *anc[CO_CI_ANC]; /* the last event's CallInfo, then its callers */
    uint32_t n, depth;          /* anc's entries (0: none known), anc[0]'s depth */
    uint32_t moves;
} co_ci54;
extern co_ci54 co_ci54_last;
uint32_t co_ci54_move(const void *ci);
static inline uint32_t co_ci54_depth(const void *ci)
{
    if (ci == co_ci54_last.anc[0] && co_ci54_last.n)
        return co_ci54_last.depth;
    return co_ci54_move(ci);
}
static inline void co_ci54_forget(void)
{
    co_ci54_last.n = 0;
}
/* Lua functions known by their closure, in a table with weak keys, as
 * under LuaJIT: no free of a closure is seen (co_alloc.c reads 5.1's), so
 * an address alone could be a collected closure's (co_jitnone.c) */
#define CO_BY_CLOSURE 1
#define CO_LUA_NAME "Lua 5.4"
#define CO_AR_SLOT(ar) CO_AR_DEPTH(ar)
/* 5.4 reports a tail call (TAILCALL) in its caller's CallInfo, 5.1 as a
 * CALL one deeper, its frame then falling into the caller's place (the
 * callee's next record, one less deep, tells recorderd it was a tail
 * call, rd_stack.c). co_hook takes a TAILCALL for such a CALL, marked in
 * istailcall (which Lua's hook leaves unset), and CO_EV_DEPTH, a hook
 * event's depth, adds its one; co_chain_call gives a program's hook the
 * event as Lua reported it. */
static inline void co_ev_normalize(lua_Debug *ar)
{
    ar->istailcall = ar->event == LUA_HOOKTAILCALL;
    if (ar->istailcall)
        ar->event = LUA_HOOKCALL;
}
#define CO_EV_DEPTH(ar) (co_ci54_depth((ar)->i_ci) + (uint32_t)((ar)->istailcall != 0))
#define CO_EV_TAIL(ar) ((ar)->istailcall != 0)
static inline void co_jit_depth_in(lua_Debug *ar, uint32_t depth) { (void)ar, (void)depth; }
#else
#define CO_AR_DEPTH(ar) ((uint32_t)(ar)->i_ci)
#define CO_BY_CLOSURE 0
#define CO_LUA_NAME "Lua 5.1"
#define CO_AR_SLOT(ar) ((ar)->i_ci & 0xffff)
#define co_ev_normalize(ar) ((void)0)
#define CO_EV_DEPTH(ar) CO_AR_DEPTH(ar)
#define CO_EV_TAIL(ar) 0 /* 5.1 reports a tail call as a call (co_hook.c: tail_call) */
#define co_ci54_forget() ((void)0)
/* LuaJIT: the level's depth in i_ci, its slot kept for the debug API */
static inline void co_jit_depth_in(lua_Debug *ar, uint32_t depth)
{
    co_jit_slot = ar->i_ci;
    ar->i_ci = (int)depth;
}
#endif

#ifndef CO_JIT_IMPL
#define lua_getinfo co_jit_getinfo
#define lua_getlocal co_jit_getlocal
#endif

static inline void co_thread_free_id(co_threads *th, uint32_t id)
{
    if (id && id < th->cap && th->t[id]) {
        th->t[id] = NULL;
        th->freed[th->nfree++] = id;
        th->live--;
    }
}

/* The thread with id died: its id may be reused (after a THREAD record). */
static inline void co_thread_dead(co_state *s, uint32_t id)
{
    co_thread_free_id(&s->th, id);
}

/* 1 if T resumed another thread (it runs, with a frame; or T is the main
 * thread, which a host's lua_resume from C leaves with none, and which
 * never dies; or, 5.1's layout read, T is suspended but runs Lua C called
 * on it, which is resuming: co_func_top_resumes): else it yielded,
 * returned or died. *status is lua_status(T). */
int co_thread_resumed(const co_state *s, lua_State *T, int *status);

/* ---- co_dbghook.c ---- */

/* Wraps debug.sethook and debug.gethook in L's debug table, so that the
 * program's own hooks work as without tracing (the file's comment). */
void co_dbghook_install(lua_State *L);

/* Runs the program's hook of chained thread L for the event ar (as Lua
 * gave it) if its mask asks for it. It may raise: call it last. */
void co_chain_call(const co_chain *c, lua_State *L, lua_Debug *ar);

/* Tracing stopped: chained L gets the library's hook back, with the
 * program's mask and count, and leaves the table. Returns 1, or 0 if L
 * was not chained (nothing done). */
int co_chain_release(co_state *s, lua_State *L);

/* lua.c's Ctrl-C (co_sigint.c) took chained T's hooks off, the program's
 * with them: T is the collector's alone again (if tracing), its entry
 * gone. */
void co_chain_interrupted(lua_State *T);

/* T is freed (co_alloc.c): its entry, if any, goes. */
void co_chain_forget(const lua_State *T);

/* The traced state closes: every entry goes (its threads with it). */
void co_chain_forget_all(void);

/* ---- co_module.c ---- */

/* Opens a trace: ring, recorder (sock_path, or the usual search), function
 * tables, layout checks. Resets s first. Returns 0 or -1 with err. */
int co_module_begin(co_state *s, lua_State *L, const char *name, const char *sock_path,
                    lua_CFunction running, char *err, size_t cap);
/* The same for co_calib.c: a small ring nobody reads, no BIAS record. */
int co_module_begin_calib(co_state *s, lua_State *L, lua_CFunction running, char *err, size_t cap);

/* Ends the trace: STOP, producer DONE, connection and ring closed. */
void co_module_finish(co_state *s, unsigned reason);

/* The atexit/fork/lua_close handlers, installed once per process. */
void co_module_once(lua_State *L);

/* The process's one collector state (dormant, tracing or done). */
co_state *co_module_state(void);

/* Set in a child of fork() whose parent was tracing: the child's next Lua
 * event (co_hook.c inactive) calls co_module_forked. */
extern volatile int co_fork_pending;

/* In the child, at its first Lua event: a trace of its own, a ring and a
 * session named after the parent's ring and the child's pid (NAME.PID),
 * begun from the running thread's stack as tron() does. */
void co_module_forked(lua_State *L, lua_Debug *ar);

/* The Lua state a process traces or listens on is the first to ask: a C
 * host may run several, on several OS threads, but the hook and the ring
 * serve one. co_module_claim makes L's state that one if none is yet;
 * both return 1 if L belongs to it. Any thread may call them. */
int co_module_claim(lua_State *L);
int co_module_owns(lua_State *L);

/* Sets s->cf_* (pcall, xpcall, resume, wrap, yield) from the globals. */
void co_module_special_functions(co_state *s, lua_State *L);

/* Creates s's ring named name (LT_RING_NAME_SCRIPT: after the script) of
 * LUATRACE_RING's size, else (or with own_size) size; s->shm gets the name
 * used. 0 or -errno with a message in err. */
int co_module_create_ring(co_state *s, const char *name, uint64_t size, int own_size, char *err,
                          size_t cap);

/* ---- co_sample.c: LuaJIT's sampled mode ---- */
/* LUATRACE_SAMPLE: samples per second (1..1000), 0 if unset, -1 if bad. */
int co_sample_hz(void);
/* luaopen_luatrace (private_summary 0) or luaopen_luatrace_profile (1: a
 * private recorder, the summary at exit) under LuaJIT with LUATRACE_SAMPLE
 * (hz: co_sample_hz; -1 is said and runs unsampled): starts LuaJIT's
 * profiler into a sampled session (once), pushes the module's table. */
int co_sample_open(lua_State *L, int hz, int private_summary);
/* Pushes the module's table of a sampled process: tron and troff do
 * nothing, tracing() is false, sampling() true while it is sampled. */
void co_sample_table(lua_State *L);

/* ---- co_outside.c: Lua 5.1's run --sample, sampled from outside ---- */
extern int co_outside_on; /* the hello was acked: recorderd samples us */
/* luaopen_luatrace under Lua 5.1 with LUATRACE_SAMPLE (hz as
 * co_sample_hz): asks recorderd to sample the process from outside (once),
 * installs no hook, pushes the module's table. */
int co_outside_open(lua_State *L, int hz);

/* Keeps L's globals as the program's, unless some are kept already (the
 * collector's first loading: luaopen, or a host's luatrace_listen). */
void co_module_keep_globals(lua_State *L);

/* Anchors in L's registry, under name, a userdata whose __gc is gc: the
 * trace ends when lua_close collects it (the traced and the sampled mode
 * each keep one). */
void co_module_sentinel(lua_State *L, const char *name, lua_CFunction gc);

/* Pushes the program's globals: those kept, else package.loaded._G,
 * else the running thread's. Raw accesses only. */
void co_module_push_globals(lua_State *L);

/* ---- co_name.c: naming functions (cold path) ---- */

/* Sets best to the shortest global or package.loaded path holding the
 * function at fi, or "" if none (a NUL of a key shows as a space).
 * direct: read the tables (only where co_name_layout_check passed), else
 * use lua_next. Traced thread only. */
void co_name_find(lua_State *L, int fi, int direct, char *best, size_t cap);

/* Finds the standard library's iterators (ipairs', string.gmatch's,
 * io.lines'), which co_name_find then names "ipairs iterator" and so on.
 * Lua 5.1, at load, outside any hook. */
void co_name_iterators(lua_State *L);

/* The file that defines C function cf (its basename: "lua5.1" for lua.c's
 * pmain, "lfs.so"), or "" if none is known: the name of a C function that
 * has no other. */
void co_name_module(lua_CFunction cf, char *best, size_t cap);
/* The executable's file name, by its real path; -1 if unknown or over cap. */
int co_name_exe(char *out, size_t cap);

/* Checks the Lua 5.1 Table layout co_name_find's direct scan relies on:
 * both ways must name functions alike in a probe table. */
int co_name_layout_check(lua_State *L);

/* ---- co_attach.c: live attach ---- */

/* Starts listening for `recorderd attach`. Returns 0 or -errno with err. */
int co_attach_listen(lua_State *L, char *err, size_t cap);
/* Dormant from outside: luatrace_inject (recorderd attach, through ptrace).
 * No Lua API but reads; the checks that need it run at the first served
 * hook event. 0 or -errno (-ENOSYS: no Lua 5.1 API, -EBUSY: another state
 * listens or traces, -EADDRINUSE: the program has a handler for the attach
 * signal). */
int co_attach_inject(lua_State *L);

/* Under recorderd run (LUATRACE_RUN_CPATH): package.cpath as the program
 * would have it, the global require finding luatrace still (co_cpath.c).
 * At the first traced call of a start-up load, on the main thread. */
void co_cpath_hide(lua_State *L);
/* The function that stands for cf: Lua's own require once the global
 * require is ours (a call fetched before, lua5.1 -lmod's from lua.c, is
 * the program's require all the same: one function, one name), else cf. */
lua_CFunction co_cpath_shown(lua_CFunction cf);
/* The same for a function table key (a C function's address). */
const void *co_cpath_shown_key(const void *key);

/* lua.c's Ctrl-C keeps the main thread traced (co_sigint.c): install at
 * the first traced call of a start-up load, in lua.c's main thread; undo
 * when lua_close begins. */
void co_sigint_install(lua_State *L);
void co_sigint_closing(void);

/* A C library took the collector's hook off a thread (co_rehook.c): from
 * the tick's handler, the thread of the last record and the main thread
 * get it back. co_rehook_cur: the first was; its next hook sends its
 * stack. co_rehook_other: the main thread was, its START's reason. */
void co_rehook_check(co_state *s);
extern volatile int co_rehook_cur;
/* In a fork child that will trace itself: the same threads given a hook
 * where such a removal left none, so that its first Lua event comes. */
void co_rehook_forked(co_state *s);
extern lua_State *volatile co_rehook_other;

/* lua_close has begun (the sentinel's finalizer): requests are ignored;
 * returns once no handler is under way. */
void co_attach_closing(void);
/* After the claimed state's close (its sentinel): no state listens, the
 * marker is gone; the next state may listen or be injected into. */
void co_attach_closed(void);

/* In a forked child (async-signal-safe): its one thread is the Lua thread. */
void co_attach_forked(void);

/* An attach request arrived (signal) and waits for a Lua event. */
extern volatile int co_attach_req;

/* From the hook, not tracing: serves a pending request on this event. */
void co_attach_serve(lua_State *L, lua_Debug *ar);

/* From the hook, tracing: the ring's control word is set. */
void co_attach_control(co_state *s, lua_State *L);

/* T just lost the program's own hook (co_dbghook.c): an attach request
 * the signal handler could not hook T for waits for T's next event. Only
 * while dormant (the hook's count would replace T's id). */
void co_attach_rearm(lua_State *T);
/* Hooks every thread for an attach request that is waiting (one that came
 * while another trace, the calibration's, was active). Outside any hook. */
void co_attach_serve_pending(void);

/* Sends the stacks a trace that begins in L starts from: L's and, if L is
 * a coroutine, its resumers' first, main outermost, in the order they
 * resumed one another (when the thread list can be walked). attach: hook
 * every other thread too (else they are hooked when resumed). */
void co_attach_begin(co_state *s, lua_State *L, int attach);
/* The same, L's stack from level from (1: without a call event's callee,
 * whose call then goes as a call). */
void co_attach_begin_from(co_state *s, lua_State *L, int attach, int from);

/* ---- co_sigdump.c: dump read by the signal handler ---- */

/* Checks, from the main thread when listening, that the reader sees L's
 * stack as the debug API does (the Lua 5.1 layout it relies on). Also
 * learns the special functions. Returns 1 if it does. */
int co_sigdump_check(lua_State *L);

/* Reads every thread of main's Lua state (the thread list is walked only
 * if walk_ok) and sends the dump message to the unix socket sock. Returns
 * 0 or -1. Async-signal-safe; not reentrant (one signal handler). */
int co_sigdump_send(lua_State *main, int walk_ok, const char *sock);

/* ---- co_conn.c: the control connection ---- */

/* Connects to recorderd (LUATRACE_SOCKET, else the default socket, else a
 * private recorder it spawns) and registers the ring. Returns 0 or -errno
 * with a message in err. */
int co_conn_open(co_state *s, char *err, size_t cap);

/* 1 if the recorder closed the connection. No blocking. */
int co_conn_gone(co_state *s);

/* At exit: waits (bounded) until the recorder has written the reports. */
void co_conn_close(co_state *s);

/* A descriptor's file, by device and inode: a program may close our
 * descriptor and open a file of its own under its number (a daemon closes
 * every one). co_fd_id: 0, or -1 if fd cannot be read. co_fd_is: 1 if fd
 * (>= 0) still holds that file. Both async-signal-safe (fstat). */
int co_fd_id(int fd, dev_t *dev, ino_t *ino);
int co_fd_is(int fd, dev_t dev, ino_t ino);

/* fd moved above the standard descriptors: a program started with stdin,
 * stdout or stderr closed (`lua5.1 app.lua <&-`) would otherwise find a
 * descriptor the collector keeps (the socket, schedstat) under 0, 1 or 2,
 * and read it or write into it as its own (a read of stdin would wait on
 * recorderd's socket for ever). Returns the new descriptor (O_CLOEXEC; fd
 * closed), fd itself when it is 3 or more, or -errno (fd closed). */
int co_fd_above_std(int fd);

/* 1 if s->sock is still the socket connected: a program may have closed
 * it and opened a file of its own under its number (a daemon closes every
 * descriptor). Async-signal-safe (fstat): a child of fork calls it. */
int co_conn_ours(const co_state *s);

#endif
