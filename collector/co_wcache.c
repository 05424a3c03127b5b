/* co_wcache: the collector's tables with weak keys (LuaJIT: thread ids;
 * LuaJIT and Lua 5.4: Lua closures' ids and coroutine.wrap bodies' ids),
 * read through a direct-mapped copy in C.
 *
 * A lookup in such a table is a few API calls, a few hundred
 * instructions, made on every coroutine switch and every Lua call: the
 * costliest part of the hook where no Proto can be read. An entry leaves
 * a table with weak keys only when its object is collected, and Lua
 * frees a collected object through the state's allocator, at its
 * address. With the allocator watched (co_alloc_watch_frees), the copy is
 * therefore exactly the table: co_wcache_freed drops the copies at a
 * freed address before the address can be given to a new object. Without
 * the watch (LUATRACE_ALLOC=plain) the tables alone answer. */
#include <lauxlib.h>
#include <string.h>

#include "co_state.h"

enum { WC_SIZE = 256 };

typedef struct wc_entry {
    const void *key;
    uint32_t val;
} wc_entry;

static wc_entry g_wc[CO_WC_N][WC_SIZE];
static int g_on;

static unsigned slot(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    return (unsigned)((a >> 4) ^ (a >> 12)) & (WC_SIZE - 1);
}

void co_wcache_begin(lua_State *L)
{
    memset(g_wc, 0, sizeof g_wc);
    g_on = co_alloc_watch_frees(L);
}

void co_wcache_end(void)
{
    g_on = 0;
    memset(g_wc, 0, sizeof g_wc);
}

void co_wcache_freed(const void *p)
{
    unsigned i = slot(p);
    for (int t = 0; t < CO_WC_N; t++)
        if (g_wc[t][i].key == p)
            g_wc[t][i].key = NULL;
}

uint32_t co_wcache_get(int t, const void *key)
{
    const wc_entry *e = &g_wc[t][slot(key)];
    return g_on && key && e->key == key ? e->val : 0;
}

void co_wcache_put(int t, const void *key, uint32_t val)
{
    if (g_on && key)
        g_wc[t][slot(key)] = (wc_entry){val ? key : NULL, val};
}

uint32_t co_weak_get(int ref, int t, lua_State *L)
{
    const void *o = lua_topointer(L, -1);
    uint32_t v = co_wcache_get(t, o);
    if (v || ref == LUA_NOREF || !lua_checkstack(L, 2))
        return v;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lua_pushvalue(L, -2);
    lua_rawget(L, -2);
    v = (uint32_t)lua_tointeger(L, -1);
    lua_pop(L, 2);
    if (v)
        co_wcache_put(t, o, v);
    return v;
}

void co_weak_set(int ref, int t, lua_State *L, uint32_t v)
{
    if (ref == LUA_NOREF || !lua_checkstack(L, 3))
        return;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lua_pushvalue(L, -2);
    lua_pushinteger(L, (lua_Integer)v);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    co_wcache_put(t, lua_topointer(L, -1), v);
}

int co_weak_table(lua_State *L)
{
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return ref == LUA_REFNIL ? LUA_NOREF : ref;
}
