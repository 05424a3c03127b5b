/* co_jitnone: co_jit.c's entry points in the Lua 5.4 build, where the host
 * is never LuaJIT (lib/lua/5.4 is lua5.4's): every LuaJIT path is off, and
 * the debug API is Lua's own. co_jit_lines is 5.4's own (co_lines54.c). */
#define CO_JIT_IMPL
#include <lauxlib.h>

#include "co_state.h"

lua_Debug *co_jit_ar;
int co_jit_slot;

int co_jit_getinfo(lua_State *L, const char *what, lua_Debug *ar)
{
    return lua_getinfo(L, what, ar);
}

const char *co_jit_getlocal(lua_State *L, const lua_Debug *ar, int n)
{
    return lua_getlocal(L, ar, n);
}

/* what identifies a C function: its address (5.4 has no fast functions) */
const void *co_cfunc_key(lua_State *L, int idx)
{
    lua_CFunction f = lua_tocfunction(L, idx);
    return f ? (const void *)f : lua_topointer(L, idx);
}

int co_jit_is(void) { return 0; }
void co_jit_prepare(lua_State *L) { (void)L; }
int co_jit_hooks_off(lua_State *L) { (void)L; return 0; }
const char *co_jit_no_hook_where(lua_State *L) { (void)L; return ""; }
void co_jit_listen(lua_State *L) { (void)L; }
int co_jit_suspend(lua_State *L) { (void)L; return 0; }
void co_jit_restore(lua_State *L) { (void)L; }
/* The closures' ids (CO_BY_CLOSURE), and the ids of the wraps of each
 * body closure, in registry tables with weak keys: a collected closure
 * leaves them, so a new one at its address is new. */
static int g_fref = LUA_NOREF, g_wref = LUA_NOREF;

int co_jit_begin(lua_State *L)
{
    co_jit_end(L);
    co_wcache_begin(L);
    g_fref = co_weak_table(L);
    g_wref = co_weak_table(L);
    return !co_wcache_on() && (g_fref == LUA_NOREF || g_wref == LUA_NOREF) ? -1 : 0;
}

void co_jit_end(lua_State *L)
{
    if (L && g_fref != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, g_fref);
    if (L && g_wref != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, g_wref);
    g_fref = g_wref = LUA_NOREF;
    co_wcache_end();
}

uint32_t co_jit_closure_fid(lua_State *L) { return co_weak_get(g_fref, CO_WC_CLOSURE, L); }
void co_jit_closure_set(lua_State *L, uint32_t fid) { co_weak_set(g_fref, CO_WC_CLOSURE, L, fid); }
uint32_t co_jit_wrap_fid(lua_State *L) { return co_weak_get(g_wref, CO_WC_WRAP, L); }
void co_jit_wrap_set(lua_State *L, uint32_t fid) { co_weak_set(g_wref, CO_WC_WRAP, L, fid); }
uint32_t co_jit_tag(lua_State *T) { (void)T; return 0; }
void co_jit_set_tag(lua_State *T, uint32_t id) { (void)T; (void)id; }
uint32_t co_jit_depth(lua_State *T) { (void)T; return 0; }
void co_jit_rebuild(uint32_t id, lua_State *T, int from, int fresh_top)
{
    (void)id, (void)T, (void)from, (void)fresh_top;
}
void co_jit_event(co_state *s, lua_State *L, lua_Debug *ar) { co_hook_traced(s, L, ar); }
