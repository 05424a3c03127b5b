/* co_alloc: the traced state's allocator, watched for freed Protos and
 * threads, and with LUATRACE_MEMORY=1 traced (MEM records).
 *
 * The function cache (co_func.c) keys a Lua function by its Proto's
 * address. When the GC frees a Proto, a later one can get its address
 * (often with its chunk name's string too), and a cache hit would then name
 * the new function after the old one. So the state's allocator is wrapped:
 * a free of a Proto-sized block is passed on to the cache, which forgets
 * that address before its next lookup (co_func_freed, co_func_forget).
 * A free of a lua_State-sized block is passed on to the thread ids
 * (co_thread_freed): a coroutine the GC collected while suspended frees
 * its id then, with no weak table to keep it in.
 * Every allocation of the program goes through one more call; only frees
 * of those two sizes do any work.
 *
 * Memory tracing (LUATRACE_MEMORY=1, recorderd run --memory): every call
 * that changes memory is a MEM record, written at once into the ring, so
 * recorderd applies it where the last record left the stack (lt_event.h),
 * as a TICK. The allocator is called from inside the collector too (its
 * hook's lua_getinfo, tron, the end of a trace) and from the GC at any
 * moment: a record is written only while no other is being written,
 * which co_mem_in says (set around the hook and the module's entry
 * points). The collector's own allocations thus send nothing: their
 * blocks are unknown to recorderd, and so are their frees, which it
 * ignores. No lock, no syscall on the way: a reserve in the ring, as the
 * hook's.
 *
 * LUATRACE_ALLOC=plain leaves the allocator alone (co_func.c and
 * co_thread.c then do without).
 *
 * The wrapper must outlive the state (lua_close frees through it, and
 * Lua 5.1 unloads C modules while closing), so the module pins itself in
 * memory once it is installed. */
#include <dlfcn.h>
#include <errno.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "lr_layout.h"
#include "co_state.h"

/* What a wrapped allocator forwards to. Never freed: a state closed
 * without its finalizers may still free through it. */
typedef struct co_watch {
    lua_Alloc f;
    void *ud;
    int frees; /* FREES_51: Protos' and threads' frees are watched (Lua
                  5.1's layout verified); FREES_ALL: every free goes to
                  co_wcache_freed (LuaJIT, Lua 5.4); 0: memory only */
} co_watch;

enum { FREES_51 = 1, FREES_ALL = 2 };

static void *__attribute__((noinline)) watch_free(const co_watch *w, void *ptr, size_t osize)
{
    co_state *s = co_hook_state();
    /* the type byte tells a Proto or a thread from other blocks of its
     * size (a 95-byte string, a closure of 10 upvalues) */
    uint8_t tt = ptr ? ((const uint8_t *)ptr)[PR_TT] : 0;
    if (osize == PR_SIZE && tt == LUA_TPROTO_)
        co_func_freed(s, ptr);
    else if (osize == LS_SIZE && tt == LUA_TTHREAD)
        co_thread_freed(s, ptr);
    return w->f(w->ud, ptr, osize, 0);
}

static void *watch_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/* Keeps this module loaded for good. */
static int pin_module(void)
{
    Dl_info info;
    if (!dladdr((void *)watch_alloc, &info) || !info.dli_fname)
        return 0;
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != NULL;
}

volatile int co_mem_in;
static co_state *g_mem; /* memory is traced into its ring; NULL: not */
/* the time is exact (the TSC read at every event): a wait for room in
 * the ring while an allocation is sent comes off the program's time
 * (co_out_wait), and (gc) frames are timed */
int co_alloc_timed, co_alloc_sending;
static const char *g_gc; /* its global_State, for (gc) frames; NULL: none */
static const char *g_due; /* the same for co_alloc_step_due, whatever the time */

/* The short MEM of one call at p (lt_event.h): its end, or NULL where a
 * delta does not fit. */
static uint8_t *put_short_mem(co_state *s, uint8_t *p, uint64_t size, uint64_t osize,
                              uint64_t addr, uint64_t oaddr)
{
    uint8_t *q;
    if (!oaddr) {
        *p = LT_SHORT_MNEW;
        q = lt_put_adelta(lt_put_uint(p + 1, size), s->mem_base, addr);
    } else if (!addr) {
        *p = LT_SHORT_MFREE;
        q = lt_put_adelta(lt_put_uint(p + 1, osize), s->mem_base, oaddr);
    } else {
        *p = LT_SHORT_MRE;
        q = lt_put_adelta(lt_put_uint(lt_put_uint(p + 1, size), osize), s->mem_base, oaddr);
        q = q ? lt_put_adelta(q, oaddr, addr) : NULL;
    }
    return q;
}

/* The MEM record of one call (lt_event.h), sizes below 2^32: short, so
 * what the last hook record implies still holds after it; else full. */
static void put_mem(co_state *s, uint64_t size, uint64_t osize, const void *addr,
                    const void *oaddr)
{
    uint8_t *p = co_out_hot(s), *q;
    if (!p)
        return;
    uint64_t at = s->ring.pos;
    if ((q = put_short_mem(s, p, size, osize, (uintptr_t)addr, (uintptr_t)oaddr))) {
        uint64_t end = co_out_hot_end(s, p, q);
        s->depth_end = s->depth_end == at ? end : s->depth_end;
        s->line_end = s->line_end == at ? end : s->line_end;
    } else {
        q = lt_put_head(p, LT_EV_MEM, 4);
        q = lt_put_uint(q, size);
        q = lt_put_uint(q, osize);
        q = lt_put_uint(q, (uintptr_t)addr);
        q = lt_put_uint(q, (uintptr_t)oaddr);
        co_out_hot_end(s, p, q);
    }
    s->mem_base = addr ? (uintptr_t)addr : (uintptr_t)oaddr;
}

/* (gc) frames. Lua 5.1 counts the state's bytes after each allocator
 * call (totalbytes) and runs a GC step at the next check once they reach
 * GCthreshold (5.4: once its debt is positive): the VM checks right after its allocations (a table, a
 * concatenation, a closure), the API before its own (lua_pushstring ...).
 * No hook runs inside a step (__gc finalizers run with hooks off), so
 * the allocation that reaches the threshold is noted with the time, and
 * the next hook, if the step has run meanwhile (the threshold moved),
 * charges the time from that allocation to a (gc) frame under the frame
 * on top: the step's, with the rest of the allocating line's after it
 * (or, when a C function allocated, its work up to its next
 * allocation's step). Frees the step made went out as it made them,
 * under the allocating frame. */
static size_t g_size(const char *g, int off)
{
    size_t v;
    memcpy(&v, g + off, sizeof v);
    return v;
}

#ifdef CO_LUA54
/* Lua 5.4 (5.4.0 to 5.4.7, 64-bit): global_State's
 * totalbytes and GCdebt. A step runs at the next check once the debt is
 * positive, and ends setting a debt of zero or less: the debt back there
 * says a step ran (or, rarely, that frees outside the collector brought
 * it down). totalbytes moves with it only when the bytes in use change,
 * not in a steady state. */
#define G54_TOTAL 16
#define G54_DEBT 24
static size_t gc_mark(void)
{
    return 0;
}

static int gc_ran(const co_state *s)
{
    (void)s;
    return (int64_t)g_size(g_gc, G54_DEBT) <= 0;
}

static int gc_due_in(const char *g, size_t osize, size_t nsize)
{
    return (int64_t)g_size(g, G54_DEBT) + (int64_t)nsize - (int64_t)osize > 0;
}
#else
/* Lua 5.1: GCthreshold, which a step sets anew, is the mark. */
static size_t gc_mark(void)
{
    return g_size(g_gc, G_THRESHOLD);
}

static int gc_due_in(const char *g, size_t osize, size_t nsize)
{
    return g_size(g, G_TOTALBYTES) - osize + nsize >= g_size(g, G_THRESHOLD);
}

static int gc_ran(const co_state *s)
{
    return gc_mark() != s->gc_thr;
}
#endif

/* Called before Lua counts this call's bytes: the clock is read only
 * when a step becomes due. */
static void gc_reached(co_state *s, size_t osize, size_t nsize)
{
    if (gc_due_in(g_gc, osize, nsize)) {
        uint64_t t = co_clock_tsc();
        s->gc_pending = 1;
        s->gc_thr = gc_mark();
        s->gc_p0 = t > s->last ? t - s->last : 0;
    }
}

/* Frees made inside the hook by a GC step that the collector's own API
 * calls ran (a step brought due partway through the hook, or due as it
 * began while it sends a stack): the program's blocks, with the
 * collector's garbage, which recorderd ignores as blocks it never saw
 * made. A record then would land inside the event's, so they wait here
 * and go out once the hook's records are written (co_alloc_flush), as
 * frees the program made right after the hook. Only if a step may have
 * run (a GC check would have run one: due as the hook began or after one
 * of its allocator calls); else they are the collector's own (a string
 * table grown) and stay unrecorded, as do more than fit. */
#define DEFER_MAX 4096
static struct {
    void *ptr;
    size_t osize;
} g_defer[DEFER_MAX];
static unsigned g_ndefer;
static int g_was_due;
int co_alloc_deferring;

static int due_in(const co_state *s, size_t osize, size_t nsize);
static int step_due(const co_state *s, lua_State *L);

void co_alloc_defer(co_state *s, lua_State *L)
{
    co_alloc_deferring = 1;
    g_was_due = g_due && step_due(s, L);
}

/* In the hook: what the allocator did (ptr, osize bytes, became nsize). */
static void deferred(const co_state *s, void *ptr, size_t osize, size_t nsize)
{
    g_was_due |= g_due && due_in(s, osize, nsize);
    if (co_mem_in && ptr && !nsize && g_ndefer < DEFER_MAX) {
        g_defer[g_ndefer].ptr = ptr;
        g_defer[g_ndefer++].osize = osize;
    }
}

void co_alloc_flush(co_state *s, lua_State *L)
{
    co_alloc_deferring = 0;
    /* none while another record is being written (a hook inside tron) */
    int ran = g_ndefer && g_was_due && !co_mem_in;
#ifdef CO_LUA54 /* its debt grows while the program stopped the GC */
    ran = ran && lua_gc(L, LUA_GCISRUNNING, 0);
#else
    (void)L;
#endif
    co_mem_in++; /* no allocation comes of it; nor any other record */
    for (unsigned i = 0; i < g_ndefer && ran && s->active && g_mem == s; i++)
        put_mem(s, 0, g_defer[i].osize, NULL, g_defer[i].ptr);
    g_ndefer = 0;
    co_mem_in--;
}

/* The record(s) of one call: ptr (osize bytes) became q (nsize). */
static void send_mem(co_state *s, void *q, void *ptr, size_t osize, size_t nsize)
{
    if (!ptr)
        osize = 0; /* Lua 5.1 passes 0, another host may pass a type */
    if ((uint64_t)nsize >> 32 || (uint64_t)osize >> 32) { /* a free, then a new block */
        if (ptr)
            put_mem(s, 0, osize, NULL, ptr);
        if (nsize)
            put_mem(s, nsize, 0, q, NULL);
    } else {
        put_mem(s, nsize, osize, q, ptr);
    }
}

/* Between troff and tron: a free or reallocation may be of a block made
 * while traced. Sent all the same, after the STOP: recorderd counts none
 * of it, but if tracing restarts, the blocks it freed are no longer live
 * (else a block made in one region and freed between two stayed live at
 * the end, and its address taken again looked like a lost free). A new
 * block is none of the trace's: not sent. */
static void mem_note_off(co_state *s, void *q, void *ptr, size_t osize, size_t nsize)
{
    if (!ptr || !s->mem_off || s->lost)
        return;
    co_mem_in = 1;
    send_mem(s, q, ptr, osize, nsize);
    co_mem_in = 0;
}

/* The allocator changed memory: ptr (osize bytes) became q (nsize). */
static void __attribute__((noinline))
mem_note(co_state *s, void *q, void *ptr, size_t osize, size_t nsize)
{
    if (co_alloc_deferring)
        deferred(s, ptr, ptr ? osize : 0, nsize);
    if (co_mem_in || (!ptr && !nsize))
        return;
    if (!s->active) {
        mem_note_off(s, q, ptr, osize, nsize);
        return;
    }
    co_mem_in = 1;
    /* a step due or running (its frees): the records' time is not its own,
     * nor the program's; else only a wait for room is left out (co_out_wait) */
    uint64_t t0 = s->gc_pending ? co_clock_tsc() : 0;
    co_alloc_sending = !t0;
    if (!ptr)
        osize = 0;
    send_mem(s, q, ptr, osize, nsize);
    co_alloc_sending = 0;
    if (t0)
        s->last += co_clock_tsc() - t0;
    if (g_gc && !s->gc_pending)
        gc_reached(s, osize, nsize);
    co_mem_in = 0;
}

/* Lean: a few compares and a tail call for every other allocation. */
static void *watch_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    const co_watch *w = ud;
    if (nsize == 0 && w->frees == FREES_ALL)
        co_wcache_freed(ptr); /* before the address can be handed out again */
    if (__builtin_expect(g_mem != NULL, 0)) {
        void *q = nsize == 0 && (osize == PR_SIZE || osize == LS_SIZE) && w->frees == FREES_51
                      ? watch_free(w, ptr, osize)
                      : w->f(w->ud, ptr, osize, nsize);
        if (q || !nsize) /* a failed allocation changed nothing */
            mem_note(g_mem, q, ptr, osize, nsize);
        return q;
    }
    if (__builtin_expect(nsize == 0 && (osize == PR_SIZE || osize == LS_SIZE), 0) &&
        w->frees == FREES_51)
        return watch_free(w, ptr, osize);
    return w->f(w->ud, ptr, osize, nsize);
}

/* Wraps L's allocator for memory alone (LuaJIT, Lua 5.4: no Lua 5.1
 * layout to watch frees by). Returns 0 or -ENOTSUP. */
static int wrap_memory_only(lua_State *L)
{
    void *ud;
    const char *how = getenv("LUATRACE_ALLOC");
    if ((how && !strcmp(how, "plain")) || !pin_module())
        return -ENOTSUP;
    co_watch *w = malloc(sizeof *w);
    if (!w)
        return -ENOTSUP;
    w->f = lua_getallocf(L, &w->ud);
    w->frees = 0;
    lua_setallocf(L, watch_alloc, w);
    return lua_getallocf(L, &ud) == watch_alloc ? 0 : -ENOTSUP;
}

int co_alloc_watch_frees(lua_State *L)
{
    void *ud;
    if (lua_getallocf(L, &ud) == watch_alloc) { /* memory tracing's, or an earlier trace's */
        ((co_watch *)ud)->frees = FREES_ALL;
        return 1;
    }
    if (wrap_memory_only(L))
        return 0;
    lua_getallocf(L, &ud);
    ((co_watch *)ud)->frees = FREES_ALL;
    return 1;
}

int co_alloc_memory(co_state *s, lua_State *L)
{
    void *ud;
    g_ndefer = 0; /* an earlier trace's frees are not this one's */
    if (!s) {
        g_mem = NULL;
        co_alloc_timed = 0;
        g_gc = g_due = NULL;
        return 0;
    }
#ifdef CO_LUA54
    int own = 1; /* no 5.1 layout: memory only, as LuaJIT */
#else
    int own = s->jit;
#endif
    if (lua_getallocf(L, &ud) != watch_alloc && (!own || wrap_memory_only(L)))
        return -ENOTSUP;
    g_mem = s;
    return 0;
}

#ifndef CO_LUA54
/* LuaJIT 2.1 with 64-bit refs (co_jit_gc64): lua_State's glref, and its
 * global_State's allocf, allocd, then GCState's total and threshold. */
#define LJ_L_G 16
#define LJ_G_ALLOCD 8
#define LJ_G_TOTAL 16
#define LJ_G_THRESHOLD 24

/* LuaJIT's global_State, checked by our allocator in it and its bytes
 * in use; NULL if not. */
static const char *verified_jit_g(lua_State *L, size_t total)
{
    void *ud;
    const char *g = co_jit_gc64() ? lr_ptr_at(L, LJ_L_G) : NULL;
    if (g && lua_getallocf(L, &ud) == watch_alloc && lr_ptr_at(g, 0) == (void *)watch_alloc &&
        lr_ptr_at(g, LJ_G_ALLOCD) == ud && g_size(g, LJ_G_TOTAL) == total &&
        g_size(g, LJ_G_THRESHOLD) > 0)
        return g;
    return NULL;
}
#endif

/* The state's global_State, its layout verified against what lua_gc
 * says (5.1: the registry too); NULL if not. */
static const char *verified_g(co_state *s, lua_State *L)
{
    size_t total = ((size_t)lua_gc(L, LUA_GCCOUNT, 0) << 10) + (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
#ifndef CO_LUA54 /* 5.1's global_State */
    if (s->jit)
        return verified_jit_g(L, total);
    const char *g = s->layout_ok ? lr_ptr_at(L, LS_G) : NULL;
    if (g && lr_ptr_at(g, G_REGISTRY) == lua_topointer(L, LUA_REGISTRYINDEX) &&
        g_size(g, G_TOTALBYTES) == total && g_size(g, G_THRESHOLD) > 0)
        return g;
#else /* 5.4's: its bytes in use are totalbytes + GCdebt */
    (void)s;
    const char *g = sizeof(void *) == 8 ? lr_ptr_at(L, L54_G) : NULL;
    if (g && g_size(g, G54_TOTAL) + g_size(g, G54_DEBT) == total && total > 0)
        return g;
#endif
    return NULL;
}

void co_alloc_gc(co_state *s, lua_State *L)
{
    g_gc = g_due = NULL;
    s->gc_pending = 0;
    co_alloc_timed = CO_HAVE_TSC && s->use_tsc && s->sample_every == 1 && !s->no_clock &&
              !s->tick_mode && !s->jit && s->mem && g_mem == s;
    if (s->mem && g_mem == s)
        g_due = verified_g(s, L);
    if (co_alloc_timed)
        g_gc = g_due;
}

/* Whether the GC's next check would run a step once an allocator call
 * (osize bytes became nsize) is counted (g_due verified for s; under Lua
 * 5.4 the debt grows while the program stopped the GC too, and no step
 * runs then). */
static int due_in(const co_state *s, size_t osize, size_t nsize)
{
#ifndef CO_LUA54
    if (s->jit) /* lj_gc_check's test */
        return g_size(g_due, LJ_G_TOTAL) - osize + nsize >= g_size(g_due, LJ_G_THRESHOLD);
#else
    (void)s;
#endif
    return gc_due_in(g_due, osize, nsize);
}

/* Whether the GC's next check runs a step (g_due verified for s). */
static int step_due(const co_state *s, lua_State *L)
{
#ifndef CO_LUA54
    (void)L;
    return due_in(s, 0, 0);
#else
    /* its debt grows while the program stopped the GC: no step is due
     * then, and LUA_GCSTEP would force one */
    return due_in(s, 0, 0) && lua_gc(L, LUA_GCISRUNNING, 0);
#endif
}

/* A GC step the collector's own API call would run (a step due when its
 * hook names a new function: lua_pushstring checks the GC) frees the
 * program's blocks while co_mem_in hides them: their records would be
 * lost, the blocks live to the end for recorderd. So such a step runs
 * here first, before any record of the event is begun, its frees
 * recorded under the frame on top, as where the program's own check
 * would have run it. Lua 5.1, 5.4 and LuaJIT with 64-bit refs (a
 * global_State verified). Not while a stack is being sent (a function
 * first met in it): a free's MEM between its START and FRAMEs would
 * end it for recorderd, its frames taken for bad records; that step
 * runs inside the API call then, its frees sent after the hook
 * (co_alloc_flush), as those of a step that the hook's own allocations
 * bring due partway through. */
void co_alloc_step_due(lua_State *L)
{
    if (!g_due || !g_mem || !g_mem->active || g_mem->snapping || !step_due(g_mem, L))
        return;
    int in = co_mem_in;
    co_mem_in = 0;
    lua_gc(L, LUA_GCSTEP, 0);
    co_mem_in = in;
}

void co_alloc_gc_event(co_state *s, lua_State *L, uint32_t depth, uint64_t t)
{
    if (!gc_ran(s)) {
        s->gc_p0 = 0; /* no step yet: it comes with a check after this event */
        return;
    }
    s->gc_pending = 0;
    if (L != s->cur_L || s->dropped || t < s->last)
        return; /* another thread's, or records lost: its time stays where it lands */
    uint64_t dt = t - s->last, before = s->gc_p0 < dt ? s->gc_p0 : dt;
    uint32_t fid = co_func_gc_id(s);
    uint8_t *p = fid ? co_out_hot(s) : NULL;
    if (!p)
        return;
    uint8_t *q = lt_put_head(p, LT_EV_CALL, 3);
    q = lt_put_uint(q, depth + 1);
    q = lt_put_uint(q, before);
    q = lt_put_uint(q, fid);
    co_out_hot_end(s, p, q);
    if (co_hook_ret_record_dt(s, depth + 1, dt - before))
        s->last = t; /* the event's own dt starts here */
}

/* The size check's allocator: notes how the probe's Proto and thread are
 * freed (1: as expected, -1: with another size or type byte). */
static const void *g_probe_proto, *g_probe_thread;
static int g_proto_seen, g_thread_seen;

static void *probe_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    const uint8_t *o = ptr;
    if (o && o == g_probe_proto && nsize == 0)
        g_proto_seen = osize == PR_SIZE && o[PR_TT] == LUA_TPROTO_ ? 1 : -1;
    if (o && o == g_probe_thread && nsize == 0)
        g_thread_seen = osize == LS_SIZE && o[LS_TT] == LUA_TTHREAD ? 1 : -1;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

/* What this Lua frees as one block at its address, its type byte still
 * in place: a Proto of PR_SIZE bytes (CO_WATCH_PROTOS), a thread of
 * LS_SIZE (CO_WATCH_THREADS). Asked
 * of a state of our own, so that the traced one needs no full collection. */
static int free_sizes_check(void)
{
    lua_State *P = lua_newstate(probe_alloc, NULL);
    if (!P)
        return 0;
    g_proto_seen = g_thread_seen = 0;
    g_probe_proto = g_probe_thread = NULL;
    if (luaL_loadstring(P, "local a = ... return a") == 0 && co_func_layout_check(P)) {
        const uint8_t *cl = lua_topointer(P, -1);
        g_probe_proto = lr_ptr_at(cl, CL_FP);
    }
    g_probe_thread = lua_newthread(P);
    lua_settop(P, 0);
    lua_close(P); /* frees the chunk's Proto and the thread */
    int mask = (g_probe_proto && g_proto_seen == 1 ? CO_WATCH_PROTOS : 0) |
               (g_probe_thread && g_thread_seen == 1 ? CO_WATCH_THREADS : 0);
    g_probe_proto = g_probe_thread = NULL;
    return mask;
}

int co_alloc_watch(lua_State *L)
{
    static int checked, mask;
    void *ud;
    const char *how = getenv("LUATRACE_ALLOC");
    if (how && !strcmp(how, "plain") && lua_getallocf(L, &ud) != watch_alloc)
        return 0; /* the host's allocator stays as it is */
    if (!checked) {
        checked = 1;
        mask = pin_module() ? free_sizes_check() : 0;
    }
    if (!mask || lua_getallocf(L, &ud) == watch_alloc)
        return mask; /* none, or a trace before this one installed it */
    co_watch *w = malloc(sizeof *w);
    if (!w)
        return 0;
    w->f = lua_getallocf(L, &w->ud);
    w->frees = FREES_51;
    lua_setallocf(L, watch_alloc, w);
    return mask;
}
