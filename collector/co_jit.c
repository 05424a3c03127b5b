/* co_jit: tracing under LuaJIT 2.1. Its hook differs from Lua 5.1's in
 * what the stack rebuild rests on (doc/design.md):
 *  - compiled traces call no hook: the JIT goes off and its traces are
 *    flushed before tracing begins (co_jit_prepare, outside any hook);
 *  - ar.i_ci is the frame's stack slot, not a CallInfo index;
 *  - C and fast functions get a call event but no return event;
 *  - a tail call is a call at the caller's own slot, with no tail return;
 *  - the hook and its count are the VM's, not a thread's.
 * So the collector keeps, per traced thread, the slots of its open frames
 * (a shadow stack, by thread id) and turns each event into what Lua 5.1
 * would have reported: its depth (the frame's index + 1) in i_ci, a RET
 * for each C frame that returned unreported, a tail call of a Lua function
 * as a call one deeper (rule 4), one of a C function as its caller's
 * return then a call in its place (LuaJIT's real stack has it so). A
 * Lua frame closed with no return event was unwound by an error: no RET
 * for it nor for what was above it (rule 2). Thread ids live in a table
 * with weak keys {thread = id} (the count cannot carry them). Where the
 * shadow stack is not known (a switch to a thread not known, or stale, a
 * resync) the depth is the number of the thread's levels, and the shadow
 * stack is read again from its frames. So it is on a switch to a thread
 * whose frame at the event's slot is not the function the shadow stack
 * has there: LuaJIT calls no hook in a __gc finalizer or a jit.attach
 * handler, and a coroutine one resumes may yield from other frames.
 *
 * Everything else goes through the debug API: none of the 5.1 layout
 * reads apply (s->layout_ok and the rest stay 0). */
#define CO_JIT_IMPL /* the real lua_getinfo and lua_getlocal */
#include <dlfcn.h>
#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "co_mem.h"
#include "co_state.h"

/* luajit.h's, not installed with Debian's luajit package */
#define CO_LUAJIT_MODE_ENGINE 0
#define CO_LUAJIT_MODE_OFF 0x0000
#define CO_LUAJIT_MODE_ON 0x0100
#define CO_LUAJIT_MODE_FLUSH 0x0200

typedef int (*co_setmode_fn)(lua_State *L, int idx, int mode);

lua_Debug *co_jit_ar;
int co_jit_slot;

int co_jit_getinfo(lua_State *L, const char *what, lua_Debug *ar)
{
    if (ar != co_jit_ar || !ar)
        return lua_getinfo(L, what, ar);
    int depth = ar->i_ci, r;
    ar->i_ci = co_jit_slot;
    r = lua_getinfo(L, what, ar);
    ar->i_ci = depth;
    return r;
}

const char *co_jit_getlocal(lua_State *L, const lua_Debug *ar, int n)
{
    if (ar != co_jit_ar || !ar)
        return lua_getlocal(L, ar, n);
    lua_Debug a = *ar;
    a.i_ci = co_jit_slot;
    return lua_getlocal(L, &a, n);
}

static const char g_wrap_key; /* stands for LuaJIT's wrap functions */

const void *co_cfunc_key(lua_State *L, int idx)
{
    lua_CFunction f = lua_tocfunction(L, idx);
    if (f || !lua_iscfunction(L, idx))
        return (const void *)f;
    /* a fast function: a wrap function is the one with a thread upvalue */
    if (lua_getupvalue(L, idx, 1)) {
        int wrap = lua_type(L, -1) == LUA_TTHREAD;
        lua_pop(L, 1);
        if (wrap)
            return &g_wrap_key;
    }
    return lua_topointer(L, idx);
}

int co_jit_is(void)
{
    static int known = -1;
    if (known < 0)
        known = dlsym(RTLD_DEFAULT, "luaJIT_setmode") != NULL;
    return known;
}

static int g_probe_ran;

static void probe_hook(lua_State *L, lua_Debug *ar)
{
    (void)L, (void)ar;
    g_probe_ran = 1;
}

/* Whether LuaJIT calls no hook here: a __gc finalizer, a jit.attach
 * handler, a hook (not a jit.profile callback: LuaJIT clears the hooks
 * there without marking a hook active, and puts its saved ones back after
 * it, so a trace begun there loses its hook; not told apart through the
 * API). tron() must not begin there:
 * it could not trace what runs, and it cannot turn the compiler off
 * (co_jit_prepare, the calibration's co_jit_suspend): LuaJIT's setmode
 * raises in a finalizer ("bad action while in __gc metamethod") and a
 * flush in a trace event's handler crashes it. A call hook set for one
 * call of an empty chunk tells: it runs unless hooks are off. The
 * program's hook, mask and count are put back. */
int co_jit_hooks_off(lua_State *L)
{
    lua_Hook h = lua_gethook(L);
    int mask = lua_gethookmask(L), count = lua_gethookcount(L);
    if (!lua_checkstack(L, 2) || luaL_loadbuffer(L, "", 0, "=luatrace") != 0)
        return 0; /* no room, or no memory (its message on the stack: tron's result) */
    g_probe_ran = 0;
    lua_sethook(L, probe_hook, LUA_MASKCALL, 0);
    int r = lua_pcall(L, 0, 0, 0);
    lua_sethook(L, h, mask, count);
    if (r)
        lua_pop(L, 1);
    return !g_probe_ran;
}

const char *co_jit_no_hook_where(lua_State *L)
{
    /* hooks off and the program's own hook set: most likely inside it */
    return co_hook_ours(L) ? "here (a __gc finalizer, a jit.attach handler)"
                           : "inside a debug hook (the program's own, debug.sethook)";
}

/* 1: the JIT-off note is still to be said, at the first event (co_jit_event):
 * said as the module loads, it came before luajit's "cannot open x.lua". */
static int g_note;

void co_jit_prepare(lua_State *L)
{
    static int said;
    co_setmode_fn setmode = (co_setmode_fn)dlsym(RTLD_DEFAULT, "luaJIT_setmode");
    if (!setmode)
        return;
    setmode(L, 0, CO_LUAJIT_MODE_ENGINE | CO_LUAJIT_MODE_OFF);
    setmode(L, 0, CO_LUAJIT_MODE_ENGINE | CO_LUAJIT_MODE_FLUSH);
    const char *quiet = getenv("LUATRACE_QUIET"); /* recorderd run -q */
    if (!said++ && !(quiet && !strcmp(quiet, "1")))
        g_note = 1;
}

static void __attribute__((noinline)) say_note(void)
{
    g_note = 0;
    fprintf(stderr, "luatrace: LuaJIT: the JIT compiler is off while tracing (compiled "
                    "code flushed), so Lua code runs interpreted, as with luajit -joff: "
                    "often several times slower (doc/tracing.md)\n");
}

/* {====== live attach (co_attach.c) */

static int g_status_ref = LUA_NOREF; /* registry: jit.status as listen() saw it */

void co_jit_listen(lua_State *L)
{
    if (g_status_ref != LUA_NOREF)
        return;
    lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "jit");
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "status");
            if (lua_isfunction(L, -1)) {
                g_status_ref = luaL_ref(L, LUA_REGISTRYINDEX);
                lua_pushnil(L);
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* Whether the compiler is on: jit.status()'s first result. Off if the jit
 * library was not there to ask: LuaJIT turns its compiler on when that
 * library opens (luaopen_jit, which also detects the CPU), so a host
 * without it runs interpreted, and an "on" restored after the calibration
 * or a detach would switch on a compiler the host never set up (and trace
 * with it on: compiled code calls no hook). A sandbox that dropped
 * package.loaded.jit of a compiler that was on leaves it off after us. */
static int jit_on(lua_State *L)
{
    if (g_status_ref == LUA_NOREF || !lua_checkstack(L, 2))
        return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, g_status_ref);
    if (lua_pcall(L, 0, 1, 0)) {
        lua_pop(L, 1);
        return 0;
    }
    int on = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return on;
}

/* From the attach hook. luaJIT_setmode is safe there, as it is from a C
 * function Lua calls (jit.off(), jit.flush()): a hook runs in the
 * interpreter (lj_dispatch_ins, lj_dispatch_call), never with compiled
 * code on the C stack (traces call no hook; Lua code under an FFI call
 * made by a trace is refused, "bad callback"); it is never called during
 * a finalizer (LuaJIT masks hooks there, where setmode would raise); the
 * flush aborts a recording, unpatches the bytecodes traces began at, and
 * the interpreter reads the instruction again once the hook returns
 * (vm_inshook re-dispatches from PC, lj_dispatch_call reads pc[-1] after
 * the hook). Says nothing: an attach leaves the program's output alone. */
int co_jit_suspend(lua_State *L)
{
    co_setmode_fn setmode = (co_setmode_fn)dlsym(RTLD_DEFAULT, "luaJIT_setmode");
    if (!setmode)
        return 0;
    int was_on = jit_on(L);
    setmode(L, 0, CO_LUAJIT_MODE_ENGINE | CO_LUAJIT_MODE_OFF);
    setmode(L, 0, CO_LUAJIT_MODE_ENGINE | CO_LUAJIT_MODE_FLUSH);
    return was_on;
}

void co_jit_restore(lua_State *L)
{
    co_setmode_fn setmode = (co_setmode_fn)dlsym(RTLD_DEFAULT, "luaJIT_setmode");
    if (setmode)
        setmode(L, 0, CO_LUAJIT_MODE_ENGINE | CO_LUAJIT_MODE_ON);
}

/* }====== */

/* {====== shadow stacks, by thread id */

enum { JF_LUA, JF_C,
       JF_FRESH /* a Lua frame called, with no event of its own yet: a vararg
                   function's frame moves up past its arguments after its call
                   event, so its first own event may come at a higher slot */ };

typedef struct co_jframe {
    uint32_t slot;
    uint32_t kind;
    const void *fn; /* the function it runs (lua_topointer), NULL: not known */
} co_jframe;

typedef struct co_jstack {
    co_jframe *f;
    uint32_t n, cap;
} co_jstack;

static co_jstack *g_js; /* by thread id */
static uint32_t g_js_cap;
/* registry tables with weak keys (not co_wcache.c's map: co_jit_begin
 * says why): {thread = id}, {Lua closure = fid}, {wrap body closure = its
 * wraps' fid} */
static int g_ref = LUA_NOREF, g_fref = LUA_NOREF, g_wref = LUA_NOREF;

static co_jstack *jstack(uint32_t id)
{
    if (id >= g_js_cap) {
        uint32_t cap = g_js_cap ? g_js_cap : 64;
        while (cap <= id)
            cap *= 2;
        co_jstack *g = co_mem_realloc(g_js, g_js_cap * sizeof *g, cap * sizeof *g);
        if (!g)
            return NULL;
        memset(g + g_js_cap, 0, (cap - g_js_cap) * sizeof *g);
        g_js = g;
        g_js_cap = cap;
    }
    return &g_js[id];
}

/* Room for one more frame at index i. */
static int room(co_jstack *js, uint32_t i)
{
    if (i < js->cap)
        return 1;
    uint32_t cap = js->cap ? js->cap * 2 : 64;
    co_jframe *f = co_mem_realloc(js->f, js->cap * sizeof *f, cap * sizeof *f);
    if (!f)
        return 0;
    js->f = f;
    js->cap = cap;
    return 1;
}

int co_jit_begin(lua_State *L)
{
    co_jit_end(L);
    /* LuaJIT keeps the registry tables (co_wcache.c's map stays off): with
     * the map the hook left less on the program than the calibration's
     * debit assumes (co_calib.c measures a hook that only counts), and
     * tiny Lua calls came out 13 points light (bench/RESULTS.md) */
    g_ref = co_weak_table(L);
    g_fref = co_weak_table(L);
    g_wref = co_weak_table(L);
    return g_ref == LUA_NOREF || g_fref == LUA_NOREF || g_wref == LUA_NOREF ? -1 : 0;
}

void co_jit_end(lua_State *L)
{
    if (L && g_ref != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, g_ref);
    if (L && g_fref != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, g_fref);
    if (L && g_wref != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, g_wref);
    g_ref = g_fref = g_wref = LUA_NOREF;
    for (uint32_t i = 0; i < g_js_cap; i++)
        co_mem_free(g_js[i].f);
    co_mem_free(g_js);
    g_js = NULL;
    g_js_cap = 0;
}

uint32_t co_jit_tag(lua_State *T)
{
    if (g_ref == LUA_NOREF || !lua_checkstack(T, 2))
        return 0;
    lua_rawgeti(T, LUA_REGISTRYINDEX, g_ref);
    lua_pushthread(T);
    lua_rawget(T, -2);
    uint32_t id = (uint32_t)lua_tointeger(T, -1);
    lua_pop(T, 2);
    return id;
}

void co_jit_set_tag(lua_State *T, uint32_t id)
{
    co_jstack *js = jstack(id);
    if (js)
        js->n = 0; /* a new thread's: its frames come with its events */
    if (g_ref == LUA_NOREF || !lua_checkstack(T, 3))
        return;
    lua_rawgeti(T, LUA_REGISTRYINDEX, g_ref);
    lua_pushthread(T);
    lua_pushinteger(T, (lua_Integer)id);
    lua_rawset(T, -3);
    lua_pop(T, 1);
}

uint32_t co_jit_closure_fid(lua_State *L)
{
    return co_weak_get(g_fref, CO_WC_CLOSURE, L);
}

void co_jit_closure_set(lua_State *L, uint32_t fid)
{
    co_weak_set(g_fref, CO_WC_CLOSURE, L, fid);
}

uint32_t co_jit_wrap_fid(lua_State *L)
{
    return co_weak_get(g_wref, CO_WC_WRAP, L);
}

void co_jit_wrap_set(lua_State *L, uint32_t fid)
{
    co_weak_set(g_wref, CO_WC_WRAP, L, fid);
}

/* The number of T's frames. */
static uint32_t levels(lua_State *T)
{
    lua_Debug ar;
    uint32_t n = 0;
    while (lua_getstack(T, (int)n, &ar))
        n++;
    return n;
}

uint32_t co_jit_depth(lua_State *T)
{
    return levels(T);
}

void co_jit_rebuild(uint32_t id, lua_State *T, int from, int fresh_top)
{
    co_jstack *js = jstack(id);
    if (!js)
        return;
    uint32_t n = levels(T), k = 0;
    js->n = 0;
    for (int level = (int)n - 1; level >= from; level--, k++) {
        lua_Debug ar;
        if (!room(js, k) || !lua_getstack(T, level, &ar) || !lua_getinfo(T, "Sf", &ar))
            return;
        const void *fn = lua_topointer(T, -1);
        lua_pop(T, 1);
        uint32_t kind = ar.what[0] == 'C' ? JF_C : fresh_top && level == 0 ? JF_FRESH : JF_LUA;
        js->f[k] = (co_jframe){(uint32_t)ar.i_ci & 0xffff, kind, fn};
        js->n = k + 1;
    }
}

/* }====== */

/* RETs of the frames [k, n) that returned unreported: below the lowest
 * Lua frame closed with no return event (an error unwound it and what
 * was above it: rule 2 pops those), or all. */
static void close_frames(co_state *s, lua_State *L, const co_jstack *js, uint32_t k)
{
    uint32_t top = js->n;
    for (uint32_t i = k; i < js->n; i++)
        if (js->f[i].kind == JF_LUA || js->f[i].kind == JF_FRESH) {
            top = i;
            break;
        }
    for (uint32_t i = top; i > k && s->active; i--) {
        lua_Debug ret = {0};
        ret.event = LUA_HOOKRET;
        ret.i_ci = (int)i;
        co_hook_traced(s, L, &ret);
    }
}

/* Whether the callee of a call is a C function; fn: the callee. */
static int is_cfunction(lua_State *L, lua_Debug *ar, const void **fn)
{
    *fn = NULL;
    if (!lua_getinfo(L, "f", ar))
        return 0;
    int c = lua_iscfunction(L, -1);
    *fn = lua_topointer(L, -1);
    lua_pop(L, 1);
    return c;
}

/* A call at slot from the frame at cslot (level 1; -1: none): the frames
 * [k', k) that are no longer there, k' the result. A C frame at the
 * callee's slot returned; unless the callee takes a Lua frame's slot (a
 * tail call), so did every frame above its caller (level 1): a C function
 * returns unreported, and a call after it may come at a higher slot than
 * its frame, or the callback of one still running (pcall's, a
 * __tostring's) at a higher slot too. */
static uint32_t call_closes(const co_jframe *f, uint32_t k, uint32_t slot, int64_t cslot)
{
    if (k && f[k - 1].slot == slot) {
        /* a tail call's caller (level 1) is the frame below the one it
         * replaces; a call from further down takes the slot of a Lua frame
         * an error unwound (no line event in between to say so) */
        if (f[k - 1].kind != JF_C && (k == 1 || (int64_t)f[k - 2].slot <= cslot))
            return k; /* a tail call */
        k--;
    }
    while (k && (int64_t)f[k - 1].slot > cslot)
        k--;
    return k;
}

/* The event's depth from the shadow stack js of L, which it updates;
 * cslot: a call's caller's slot (caller_slot). */
static uint32_t shadow_depth(co_state *s, lua_State *L, lua_Debug *ar, uint32_t id, int64_t cslot)
{
    co_jstack *js = jstack(id);
    uint32_t slot = (uint32_t)ar->i_ci, k = js->n;
    co_jframe *f = js->f;
    if (k && f[k - 1].kind == JF_FRESH) { /* its first own event */
        uint32_t own = slot; /* varargs move a frame up after its call */
        if (ar->event == LUA_HOOKCALL) /* it called: it is the caller */
            own = cslot >= 0 ? (uint32_t)cslot : 0;
        if (own > f[k - 1].slot)
            f[k - 1].slot = own;
        f[k - 1].kind = JF_LUA;
    }
    while (k && f[k - 1].slot > slot)
        k--;
    if (ar->event == LUA_HOOKCALL)
        k = call_closes(f, k, slot, cslot);
    if (k < js->n) {
        close_frames(s, L, js, k);
        /* a RET may end the trace (a detach read in any_event, the recorder
         * gone): the shadow stacks went with it */
        if (!s->active)
            return k;
        js = jstack(id); /* where it is now */
        if (!js)
            return k;
        f = js->f;
    }
    js->n = k;
    int same = k && f[k - 1].slot == slot, c = 0;
    const void *fn = NULL;
    if (ar->event == LUA_HOOKCALL) {
        c = is_cfunction(L, ar, &fn);
        if (same && !c) { /* a tail call: one deeper, then its caller's place */
            f[k - 1].kind = JF_FRESH;
            f[k - 1].fn = fn;
            s->jit_tail = 1; /* co_hook.c: put_tail */
            return k + 1;
        }
        if (same) { /* a tail call into C: it takes its caller's place, which
                       returned (no event: rule 4 applies to Lua callees) */
            lua_Debug ret = {0};
            ret.event = LUA_HOOKRET;
            ret.i_ci = (int)k;
            co_hook_traced(s, L, &ret);
            js = s->active ? jstack(id) : NULL; /* the trace may have ended */
            if (!js)
                return k;
            js->f[k - 1] = (co_jframe){slot, JF_C, fn};
            js->n = k;
            return k;
        }
    } else if (same) {
        if (ar->event == LUA_HOOKRET)
            js->n = k - 1;
        return k;
    } else if (ar->event == LUA_HOOKRET) {
        return k + 1; /* a frame never seen */
    }
    if (room(js, k)) { /* a call, or a line of a frame never seen */
        f = js->f;
        f[k] = (co_jframe){slot, c ? JF_C : ar->event == LUA_HOOKCALL ? JF_FRESH : JF_LUA, fn};
        js->n = k + 1;
    }
    return k + 1;
}

/* The level from which L's stack must be sent before the event because
 * the shadow stack js never saw a frame of it (1: the caller of a call; 0:
 * the function running a line), or -1. LuaJIT runs a __gc finalizer with
 * its hooks off, and they may come back on inside it (after a coroutine it
 * resumed died): its next event is a call from, or a line of, a function
 * that had no call event. A frame whose varargs moved it up after its call
 * keeps its old slot when its first own event was a call: it is known,
 * and takes its slot now. */
static int unseen_from(lua_State *L, const lua_Debug *ar, co_jstack *js, int64_t cslot)
{
    uint32_t k = js->n, slot = (uint32_t)ar->i_ci;
    co_jframe *f = js->f;
    int level = ar->event == LUA_HOOKCALL;
    if (ar->event == LUA_HOOKRET || (k && f[k - 1].kind == JF_FRESH))
        return -1; /* a RET's frame is below; a fresh one's first event */
    if (level) {
        if (cslot < 0)
            return -1;
        slot = (uint32_t)cslot;
    }
    while (k && f[k - 1].slot > slot)
        k--;
    if (k && f[k - 1].slot == slot)
        return -1;
    if (levels(L) - (uint32_t)level > k)
        return level;
    if (k && k == js->n && f[k - 1].kind == JF_LUA)
        f[k - 1].slot = slot;
    return -1;
}

/* On a switch to a known thread: the level from which its stack must be
 * sent again because it ran where LuaJIT calls no hook (a __gc finalizer
 * or a jit.attach handler resumed it) and yielded from other frames: the
 * frame of the event (the caller's, for a call) is at a slot where the
 * shadow stack has none, or runs another function than it saw there. A
 * thread switched to is resumed (a yield returned, no vararg frame still
 * to move), or new (no frame yet, or a caller nowhere: -1). */
static int stale_from(lua_State *L, const lua_Debug *ar, const co_jstack *js, int64_t cslot)
{
    int level = ar->event == LUA_HOOKCALL;
    if ((level && cslot < 0) || !js->n || js->f[js->n - 1].kind == JF_FRESH)
        return -1;
    uint32_t slot = level ? (uint32_t)cslot : (uint32_t)ar->i_ci, k = js->n;
    while (k && js->f[k - 1].slot > slot)
        k--;
    if (!k || js->f[k - 1].slot != slot)
        return level; /* a frame never seen */
    if (!js->f[k - 1].fn)
        return -1;
    lua_Debug at;
    if (!lua_getstack(L, level, &at) || !lua_getinfo(L, "f", &at))
        return -1;
    int other = lua_topointer(L, -1) != js->f[k - 1].fn;
    lua_pop(L, 1);
    return other ? level : -1;
}

/* A call's caller (level 1): its slot, or -1 (none); -1 for other events.
 * Read once an event: the frames do not move while the hook runs. */
static int64_t caller_slot(lua_State *L, const lua_Debug *ar)
{
    lua_Debug caller;
    if (ar->event != LUA_HOOKCALL || !lua_getstack(L, 1, &caller))
        return -1;
    return (int64_t)(caller.i_ci & 0xffff);
}

static void jit_event(co_state *s, lua_State *L, lua_Debug *ar)
{
    if (ar->event != LUA_HOOKCALL && ar->event != LUA_HOOKRET && ar->event != LUA_HOOKLINE) {
        co_hook_traced(s, L, ar);
        return;
    }
    int slot = ar->i_ci & 0xffff;
    ar->i_ci = slot;
    uint32_t id = L == s->cur_L ? s->cur_id : co_thread_known(s, L);
    if (id && L != s->cur_L)
        s->seen_L = L, s->seen_id = id;
    co_jstack *js = id && !s->dropped ? jstack(id) : NULL;
    /* ticks in C code while a C function is on top are its own: charged
     * before this event closes it (LuaJIT reports no C return) */
    if (__builtin_expect(co_tick_pending_c != 0, 0) && js && js->n &&
        js->f[js->n - 1].kind == JF_C && s->active)
        co_tick_flush_c(s);
    int64_t cslot = js ? caller_slot(L, ar) : -1;
    int from = js ? unseen_from(L, ar, js, cslot) : -1;
    if (from < 0 && js && L != s->cur_L)
        from = stale_from(L, ar, js, cslot);
    unsigned why = LT_R_HOOKED;
    if (__builtin_expect(co_rehook_cur != 0, 0)) { /* co_rehook.c: events were missed */
        co_rehook_cur = 0;
        from = js ? ar->event == LUA_HOOKCALL : -1; /* a call's callee comes with it */
        why = LT_R_REHOOKED;
    }
    if (from >= 0) {
        co_hook_snapshot_from(s, L, from, why);
        if (!s->active)
            return;
        js = jstack(id);
    }
    uint32_t depth = js ? shadow_depth(s, L, ar, id, cslot) : levels(L);
    if (!s->active)
        return;
    co_jit_ar = ar;
    co_jit_slot = slot;
    ar->i_ci = (int)depth;
    /* lines by sample: the rest of the pending ticks where the program was,
     * the frames closed, before the event's record (tick_hook left them;
     * a probe's LINE goes first, probe_line sends them after it) */
    if (__builtin_expect(co_tick_pending != 0, 0) && s->lines_sampled &&
        ar->event != LUA_HOOKLINE && s->active && !s->dropped)
        co_tick_flush(s);
    co_hook_traced(s, L, ar);
    ar->i_ci = slot;
    co_jit_ar = NULL;
    if (!js && s->active && s->cur_L == L && s->cur_id)
        co_jit_rebuild(s->cur_id, L, ar->event == LUA_HOOKRET, ar->event == LUA_HOOKCALL);
}

void co_jit_event(co_state *s, lua_State *L, lua_Debug *ar)
{
    if (__builtin_expect(g_note, 0) && !s->calib) /* the program's first event */
        say_note();
    jit_event(s, L, ar);
    s->jit_tail = 0;
    s->seen_L = NULL; /* this event's: the GC may free L, and a thread take its place */
}
