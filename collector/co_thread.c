/* co_thread: small ids for the traced threads (the main thread and every
 * coroutine), and the anchor that keeps the current thread alive.
 *
 * A record names a thread by an id of one or two bytes, not by its 8-byte
 * address. The id travels with the thread itself: lua_sethook's count,
 * which Lua ignores without LUA_MASKCOUNT, holds the id and this trace's
 * epoch (CO_TAG), and a hooked thread is known when the table's entry for
 * that id is this very thread. A coroutine inherits its creator's hook and
 * count, so a new one fails the test (the entry holds its creator) and
 * gets an id of its own at its first event: a THREAD record, its count
 * set. A count from an earlier trace has another epoch.
 *
 * Ids are reused, so they stay small: a thread that died (a YIELD with
 * dead 1) frees its id at once; one the GC collected while suspended frees
 * it when the allocator sees the thread freed (co_alloc.c), or, where that
 * watch is not in place, when a sweep of a table of the threads with weak
 * values (when the ids in use double) finds it gone. A reused id is introduced by a new
 * THREAD record, which tells recorderd that the thread that had it is gone:
 * a coroutine at a recycled address is never mistaken for the dead one.
 *
 * The switch path reads a few lua_State fields (status, CallInfo,
 * basehookcount, hook, stack) where co_thread_layout_check found Lua 5.1's
 * layout, and goes through the API otherwise.
 */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "lr_layout.h"
#include "co_func.h"
#include "co_mem.h"
#include "co_state.h"

/* {====== layout check */

/* allowhook as probe_hook saw it (-1: it did not run) */
static int g_probe_allow = -1;

static void probe_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    g_probe_allow = ((const uint8_t *)L)[LS_ALLOWHOOK];
}

static int probe_yield(lua_State *L)
{
    return lua_yield(L, 0);
}

/* Called with (a thread, nil): its arguments as the hook of a C call sees
 * them (base, top). */
static int probe_args(lua_State *L)
{
    const char *base = lr_ptr_at(L, LS_BASE), *top = lr_ptr_at(L, LS_TOP);
    lua_pushboolean(L, base && top - base == 2 * TV_SIZE &&
                           lr_int_at(base, TV_TT) == LUA_TTHREAD &&
                           lr_ptr_at(base, 0) == (const void *)lua_tothread(L, 1));
    return 1;
}

/* allowhook reads 1 on co, 0 inside co's hook (a call hook on a chunk
 * co runs). */
static int allow_check(lua_State *co)
{
    int ok = ((const uint8_t *)co)[LS_ALLOWHOOK] == 1 && luaL_loadstring(co, "return") == 0;
    g_probe_allow = -1;
    lua_sethook(co, probe_hook, LUA_MASKCALL, 0);
    ok = ok && lua_pcall(co, 0, 0, 0) == 0 && g_probe_allow == 0 &&
         ((const uint8_t *)co)[LS_ALLOWHOOK] == 1;
    lua_sethook(co, NULL, 0, 0);
    lua_settop(co, 0);
    return ok;
}

static int check_status(lua_State *L)
{
    lua_State *co = lua_newthread(L);
    lua_sethook(co, probe_hook, LUA_MASKCALL | LUA_MASKLINE, 0x1234567);
    int ok = lr_int_at(co, LS_HOOKCOUNT) == 0x1234567 && lua_gethookcount(co) == 0x1234567 &&
             lr_ptr_at(co, LS_HOOK) == (const void *)probe_hook &&
             ((const uint8_t *)co)[LS_HOOKMASK] == (LUA_MASKCALL | LUA_MASKLINE) &&
             lr_int_at(co, LS_HOOKLEFT) == 0x1234567;
    lua_sethook(co, NULL, 0, 0);
    ok = ok && allow_check(co);
    lua_Debug ar;
    ok = ok && ((const uint8_t *)co)[LS_STATUS] == 0 && !lua_getstack(co, 0, &ar) &&
         lr_ptr_at(co, LS_CI) == lr_ptr_at(co, LS_BASE_CI);
    /* a Lua function calling one that yields: resumed, the call returns */
    ok = ok && luaL_loadstring(co, "local y = ... y()") == 0;
    lua_pushcfunction(co, probe_yield);
    ok = ok && lua_resume(co, 1) == LUA_YIELD && lua_status(co) == LUA_YIELD &&
         ((const uint8_t *)co)[LS_STATUS] == LUA_YIELD && lua_getstack(co, 0, &ar) &&
         (const char *)lr_ptr_at(co, LS_CI) > (const char *)lr_ptr_at(co, LS_BASE_CI);
    if (lua_status(co) == LUA_YIELD)
        lua_resume(co, 0); /* ends it: a dump shows no probe suspended */
    lua_pop(L, 1);
    return ok;
}

static int check_args(lua_State *L)
{
    lua_pushcfunction(L, probe_args);
    lua_newthread(L);
    lua_pushnil(L);
    lua_call(L, 2, 1);
    int ok = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return ok;
}

/* Checks the lua_State fields the switch path reads (lr_layout.h). */
static int co_thread_layout_check(lua_State *L)
{
    int top = lua_gettop(L);
    int ok = check_status(L) && check_args(L);
    lua_settop(L, top);
    return ok;
}

/* }====== */

/* The registry's key of the main thread as the collector saw it run
 * (co_thread_note_main). */
static const char g_main_key;

/* LuaJIT keeps its main thread where only its own layout reaches (no
 * LUA_RIDX_MAINTHREAD, no 5.1 global_State), so the collector notes it in
 * the registry whenever it runs there: the module's load (a program's
 * require at its top, -lluatrace) and every trace begun on it. Without it
 * tron() in a coroutine had no main thread to follow the resumers from
 * (api_chain), and the trace began with that coroutine's stack alone.
 * Lua 5.1 and 5.4 have theirs (below): nothing noted. */
void co_thread_note_main(lua_State *L)
{
    if (!co_jit_is() || !lua_checkstack(L, 2))
        return;
    if (!lua_pushthread(L)) {
        lua_pop(L, 1);
        return;
    }
    lua_pushlightuserdata(L, (void *)&g_main_key);
    lua_insert(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

#ifndef CO_LUA54
/* The main thread as co_thread_note_main saw it, else NULL. */
static lua_State *noted_main(lua_State *L)
{
    if (!lua_checkstack(L, 1))
        return NULL;
    lua_pushlightuserdata(L, (void *)&g_main_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_State *m = lua_tothread(L, -1);
    lua_pop(L, 1);
    return m;
}
#endif

/* The main thread of L's state: L itself if lua_pushthread says so, else
 * (Lua 5.4) the registry's, else global_State's mainthread where the
 * layout is verified, else (LuaJIT) the one the collector saw run. */
static lua_State *main_thread(lua_State *L, int thread_ok)
{
    int is_main = lua_pushthread(L);
    lua_pop(L, 1);
    if (is_main) {
        co_thread_note_main(L);
        return L;
    }
#ifdef CO_LUA54 /* tron() in a coroutine: its resumers are found from main */
    (void)thread_ok;
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    lua_State *m = lua_tothread(L, -1);
    lua_pop(L, 1);
    return m;
#else
    const void *g = thread_ok ? lr_ptr_at(L, LS_G) : NULL;
    const uint8_t *m = g ? lr_ptr_at(g, G_MAINTHREAD) : NULL;
    if (!g)
        return noted_main(L);
    return m && m[LS_TT] == LUA_TTHREAD && lr_ptr_at(m, LS_G) == g ? (lua_State *)m : NULL;
#endif
}

int co_thread_init(co_state *s, lua_State *L)
{
    co_threads *th = &s->th;
    uint32_t epoch = th->epoch % CO_EPOCHS + 1;
    memset(th, 0, sizeof *th);
    th->epoch = epoch;
    th->cap = 64;
    th->sweep_at = 64;
    th->t = co_mem_calloc(th->cap, sizeof *th->t);
    th->freed = co_mem_calloc(th->cap, sizeof *th->freed);
    th->next = 1;
    th->weak_ref = th->anchor_ref = LUA_NOREF;
    if (!th->t || !th->freed)
        goto fail;
    lua_newtable(L); /* {id = thread}, weak values */
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    th->weak_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    th->anchor = lua_newthread(L);
    th->anchor_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_sethook(th->anchor, NULL, 0, 0);
    lua_pushthread(L); /* slot 1 of the anchor's stack holds the current thread */
    lua_xmove(L, th->anchor, 1);
    s->thread_ok = s->layout_ok && co_thread_layout_check(L); /* Lua 5.1: read the fields */
    const char *slot = s->thread_ok ? lr_ptr_at(th->anchor, LS_BASE) : NULL;
    const char *top = s->thread_ok ? lr_ptr_at(th->anchor, LS_TOP) : NULL;
    s->thread_ok = slot && top - slot == TV_SIZE && lr_int_at(slot, TV_TT) == LUA_TTHREAD &&
                   lr_ptr_at(slot, 0) == (const void *)L;
    th->main = main_thread(L, s->thread_ok);
    if ((s->jit || CO_BY_CLOSURE) && co_jit_begin(L))
        goto fail;
    return 0;
fail:
    co_mem_free(th->t);
    co_mem_free(th->freed);
    th->t = NULL;
    th->freed = NULL;
    return -1;
}

void co_thread_free(co_state *s, lua_State *L)
{
    co_threads *th = &s->th;
    if (L && th->weak_ref != LUA_NOREF) {
        luaL_unref(L, LUA_REGISTRYINDEX, th->weak_ref);
        luaL_unref(L, LUA_REGISTRYINDEX, th->anchor_ref);
    }
    th->weak_ref = th->anchor_ref = LUA_NOREF;
    th->anchor = NULL;
    if (s->jit || CO_BY_CLOSURE)
        co_jit_end(L);
    co_mem_free(th->t);
    co_mem_free(th->freed);
    th->t = NULL;
    th->freed = NULL;
    th->cap = 0;
}

void co_thread_anchor(co_state *s, lua_State *L)
{
    co_threads *th = &s->th;
    if (s->thread_ok) { /* a stack slot: a thread's stack is scanned at every
                           GC cycle's end, so its stores need no barrier */
        char *slot = (char *)lr_ptr_at(th->anchor, LS_BASE);
        memcpy(slot, &L, sizeof L);
    } else if (th->anchor) {
        lua_pushthread(L);
        lua_xmove(L, th->anchor, 1);
        lua_replace(th->anchor, 1);
    }
    s->cur_L = L;
}

void co_thread_current(co_state *s, lua_State *L)
{
    co_thread_anchor(s, L);
    s->cur_id = co_thread_known(s, L);
}

/* Frees the ids of threads the GC collected (their weak entries are gone).
 * On T's stack. */
static void sweep(co_state *s, lua_State *T)
{
    co_threads *th = &s->th;
    lua_rawgeti(T, LUA_REGISTRYINDEX, th->weak_ref);
    for (uint32_t id = 1; id < th->next && lua_istable(T, -1); id++) {
        if (!th->t[id] || id == s->cur_id)
            continue;
        lua_rawgeti(T, -1, (int)id);
        if ((uintptr_t)lua_tothread(T, -1) != ((uintptr_t)th->t[id] & ~CO_STALE))
            co_thread_free_id(th, id);
        lua_pop(T, 1);
    }
    lua_pop(T, 1);
    th->sweep_at = th->live * 2 > 64 ? th->live * 2 : 64;
}

static int grow(co_threads *th)
{
    uint32_t cap = th->cap * 2;
    lua_State **t = co_mem_realloc(th->t, th->cap * sizeof *t, cap * sizeof *t);
    if (t)
        th->t = t; /* zeroed past the old end */
    uint32_t *f = t ? co_mem_realloc(th->freed, th->cap * sizeof *f, cap * sizeof *f) : NULL;
    if (!f)
        return -1;
    th->freed = f;
    th->cap = cap;
    return 0;
}

/* Hooks T with id's tag, unless T has the program's own hook
 * (co_dbghook.c). A new coroutine has inherited our hook from its creator:
 * then only the count changes, written where the layout is verified. */
static void tag_thread(co_state *s, lua_State *T, uint32_t id)
{
    int was = co_tick_enter(), tag = CO_TAG(&s->th, id);
    co_chain *ch = co_nchain ? co_chain_find(T) : NULL;
    if (s->jit) /* LuaJIT: one hook and count for the VM; the id in a table */
        co_jit_set_tag(T, id);
    if (ch)
        ch->id = id; /* chained: the count stays the program's */
    else if (s->thread_ok && lr_ptr_at(T, LS_HOOK) == (const void *)co_hook &&
             ((const uint8_t *)T)[LS_HOOKMASK] == CO_MASK)
        memcpy((char *)T + LS_HOOKCOUNT, &tag, sizeof tag); /* Lua ignores it: no count mask */
    else if (co_hook_ours(T)) /* also the count mask a chained creator passed on */
        lua_sethook(T, co_hook, CO_MASK, tag);
    co_tick_leave(was);
}

/* Freed threads reach co_thread_freed (Lua 5.1's layout) or, through the
 * map of co_wcache.c, co_thread_freed_id: no weak table, no sweeps. */
static int gc_watched(const co_state *s)
{
    return ((s->watched & CO_WATCH_THREADS) && s->thread_ok) || co_wcache_on();
}

/* No id for a new thread (no memory, or CO_ID_MAX threads alive): its
 * event is lost, and counted as a drop (co_out_drop). */
static uint32_t no_id(co_state *s)
{
    if (s->ring.hdr)
        co_out_drop(s);
    return 0;
}

uint32_t co_thread_new(co_state *s, lua_State *T)
{
    co_threads *th = &s->th;
    int weak = !gc_watched(s);
    if (!th->t || (weak && !lua_checkstack(T, 3)))
        return no_id(s);
    co_hook_slow(s);
    if (weak && !th->nfree && th->live >= th->sweep_at)
        sweep(s, T);
    if (!th->nfree && th->next == th->cap && (th->cap >= CO_ID_MAX || grow(th)))
        return no_id(s);
    uint32_t id = th->nfree ? th->freed[th->nfree - 1] : th->next;
    if (!co_hook_thread_record(s, id, T))
        return 0;
    if (th->nfree)
        th->nfree--;
    else
        th->next++;
    th->t[id] = T;
    th->live++;
    if (co_wcache_on())
        co_wcache_put(CO_WC_THREAD, T, id);
    if (weak) { /* freed threads not watched: the sweep finds them here */
        lua_rawgeti(T, LUA_REGISTRYINDEX, th->weak_ref);
        if (lua_istable(T, -1)) {
            lua_pushthread(T);
            lua_rawseti(T, -2, (int)id);
        }
        lua_pop(T, 1);
    }
    tag_thread(s, T, id);
    return id;
}

uint32_t co_thread_id(co_state *s, lua_State *T)
{
    uint32_t id = co_thread_known(s, T);
    if (!id)
        id = co_thread_revive(s, T);
    return id ? id : co_thread_new(s, T);
}

static lua_State *stale(lua_State *T)
{
    return (lua_State *)((uintptr_t)T | CO_STALE);
}

/* The id T's hook count names in this trace's table (whose entry may or
 * may not be T), else 0. */
static uint32_t tag_id(co_state *s, lua_State *T)
{
    const co_chain *ch = co_nchain ? co_chain_find(T) : NULL;
    if (ch) /* its count is the program's */
        return ch->id;
    if (s->jit)
        return co_jit_tag(T);
    int c = s->thread_ok ? lr_int_at(T, LS_HOOKCOUNT) : lua_gethookcount(T);
    uint32_t id;
    (void)co_tag_entry(&s->th, (uint32_t)co_tick_count(T, c), &id); /* a probe's 1 is no id */
    return id;
}

void co_thread_stale_all(co_state *s)
{
    co_threads *th = &s->th;
    for (uint32_t id = 1; id < th->next; id++)
        if (th->t[id])
            th->t[id] = stale(th->t[id]);
}

void co_thread_mark_stale(co_state *s, lua_State *T)
{
    uint32_t id = co_thread_known(s, T);
    if (id)
        s->th.t[id] = stale(T);
}

uint32_t co_thread_tagged(co_state *s, lua_State *T)
{
    uint32_t id = tag_id(s, T);
    return id && (s->th.t[id] == T || s->th.t[id] == stale(T)) ? id : 0;
}

uint32_t co_thread_revive(co_state *s, lua_State *T)
{
    co_threads *th = &s->th;
    uint32_t id = tag_id(s, T);
    if (!id || th->t[id] != stale(T))
        return 0;
    th->t[id] = T;
    if (co_hook_ours(T)) { /* unhooked if it ran untraced; the program's stays */
        co_ci54_forget(); /* it ran with no events */
        lua_sethook(T, co_hook, CO_MASK, CO_TAG(th, id));
    }
    return id;
}

void co_thread_hook(co_state *s, lua_State *T)
{
    int was = co_tick_enter();
    uint32_t id = co_thread_known(s, T);
    if (co_hook_ours(T)) { /* else the program's own (co_dbghook.c) stays */
        co_ci54_forget(); /* it may have run with no events */
        lua_sethook(T, co_hook, CO_MASK, id ? CO_TAG(&s->th, id) : 0);
    }
    co_tick_leave(was);
}

void co_thread_freed(co_state *s, lua_State *T)
{
    co_tick_freed(T);
    if (co_nchain)
        co_chain_forget(T);
    if (!s || !s->th.t || !gc_watched(s))
        return;
    uint32_t id = tag_id(s, T); /* T's fields are intact until the free */
    if (id && ((uintptr_t)s->th.t[id] & ~CO_STALE) == (uintptr_t)T)
        co_thread_free_id(&s->th, id);
}

void co_thread_freed_id(const void *T, uint32_t id)
{
    co_state *s = co_hook_state();
    if (s && s->th.t && id < s->th.cap && ((uintptr_t)s->th.t[id] & ~CO_STALE) == (uintptr_t)T)
        co_thread_free_id(&s->th, id);
}

uint32_t co_thread_known(co_state *s, lua_State *T)
{
    uint32_t id = tag_id(s, T);
    return id && s->th.t[id] == T ? id : 0;
}

int co_thread_resumed(const co_state *s, lua_State *T, int *status)
{
    if (s->thread_ok) {
        *status = ((const uint8_t *)T)[LS_STATUS];
        if (*status == LUA_YIELD) /* suspended, yet it may run what C called */
            return co_func_top_resumes(s, T);
        return *status == 0 &&
               ((const char *)lr_ptr_at(T, LS_CI) > (const char *)lr_ptr_at(T, LS_BASE_CI) ||
                T == s->th.main);
    }
    lua_Debug ar;
    *status = lua_status(T);
    /* LuaJIT runs an error handler with the thread's status LUA_ERRERR
     * (lj_err_run): a handler that resumes a coroutine leaves a thread
     * running, not dead (only a handler's own error throws ERRERR, and
     * xpcall catches it, so no coroutine dies with it) */
    if (s->jit && *status == LUA_ERRERR)
        *status = 0;
    return *status == 0 && (lua_getstack(T, 0, &ar) || T == s->th.main);
}
