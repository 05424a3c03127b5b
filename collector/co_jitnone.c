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
void co_jit_listen(lua_State *L) { (void)L; }
int co_jit_suspend(lua_State *L) { (void)L; return 0; }
void co_jit_restore(lua_State *L) { (void)L; }
/* The closures' ids (CO_BY_CLOSURE), and the ids of the wraps of each
 * body closure, in registry tables with weak keys: a collected closure
 * leaves them, so a new one at its address is new. */
static int g_fref = LUA_NOREF, g_wref = LUA_NOREF;

static int weak_keys(lua_State *L)
{
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return ref == LUA_REFNIL ? LUA_NOREF : ref;
}

int co_jit_begin(lua_State *L)
{
    co_jit_end(L);
    g_fref = weak_keys(L);
    g_wref = weak_keys(L);
    return g_fref == LUA_NOREF || g_wref == LUA_NOREF ? -1 : 0;
}

void co_jit_end(lua_State *L)
{
    if (L && g_fref != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, g_fref);
    if (L && g_wref != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, g_wref);
    g_fref = g_wref = LUA_NOREF;
}

/* The value of the object on top of L in the weak table ref (0: none). */
static uint32_t weak_get(int ref, lua_State *L)
{
    if (ref == LUA_NOREF || !lua_checkstack(L, 2))
        return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lua_pushvalue(L, -2);
    lua_rawget(L, -2);
    uint32_t v = (uint32_t)lua_tointeger(L, -1);
    lua_pop(L, 2);
    return v;
}

static void weak_set(int ref, lua_State *L, uint32_t v)
{
    if (ref == LUA_NOREF || !lua_checkstack(L, 3))
        return;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lua_pushvalue(L, -2);
    lua_pushinteger(L, (lua_Integer)v);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

uint32_t co_jit_closure_fid(lua_State *L) { return weak_get(g_fref, L); }
void co_jit_closure_set(lua_State *L, uint32_t fid) { weak_set(g_fref, L, fid); }
uint32_t co_jit_wrap_fid(lua_State *L) { return weak_get(g_wref, L); }
void co_jit_wrap_set(lua_State *L, uint32_t fid) { weak_set(g_wref, L, fid); }
void co_jit_freed(const void *p) { (void)p; }
uint32_t co_jit_tag(lua_State *T) { (void)T; return 0; }
void co_jit_set_tag(lua_State *T, uint32_t id) { (void)T; (void)id; }
uint32_t co_jit_depth(lua_State *T) { (void)T; return 0; }
void co_jit_rebuild(uint32_t id, lua_State *T, int from, int fresh_top)
{
    (void)id, (void)T, (void)from, (void)fresh_top;
}
void co_jit_event(co_state *s, lua_State *L, lua_Debug *ar) { co_hook_traced(s, L, ar); }
