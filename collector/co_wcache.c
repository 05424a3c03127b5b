/* co_wcache: what the collector knows of a Lua object by its address
 * where no Proto or thread can be read (Lua 5.4: Lua closures' ids,
 * coroutine.wrap bodies' ids, threads' ids; LuaJIT keeps the registry
 * tables, co_jit_begin says why).
 *
 * An address alone could name a collected object's successor. So either
 * the state's allocator is watched (co_alloc_watch_frees: Lua frees a
 * collected object through it, at its address), and a map in C forgets an
 * address as it is freed, before the address can be given to a new
 * object; or (LUATRACE_ALLOC=plain) registry tables with weak keys hold
 * them, which the GC empties of collected keys. The map costs a hash
 * probe where a table lookup is a few hundred instructions of API calls
 * (on every switch and every Lua call), and it allocates nothing in the
 * program's heap: the program's collectgarbage("count") stays its own. */
#include <lauxlib.h>
#include <string.h>

#include "co_mem.h"
#include "co_state.h"

typedef struct wc_entry {
    const void *key;
    uint32_t val[CO_WC_N];
} wc_entry;

static wc_entry *g_e; /* open addressing, linear probes, at most half full */
static uint32_t g_cap, g_n;
static int g_on;

static uint32_t hash(const void *p)
{
    uint64_t a = (uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(a >> 32);
}

static wc_entry *find(const void *key)
{
    if (!g_cap || !key)
        return NULL;
    uint32_t m = g_cap - 1;
    for (uint32_t i = hash(key) & m;; i = (i + 1) & m)
        if (g_e[i].key == key)
            return &g_e[i];
        else if (!g_e[i].key)
            return NULL;
}

static int grow(void)
{
    uint32_t cap = g_cap ? g_cap * 2 : 256;
    wc_entry *e = co_mem_calloc(cap, sizeof *e), *old = g_e;
    if (!e)
        return -1;
    for (uint32_t j = 0; j < g_cap; j++) {
        if (!old[j].key)
            continue;
        uint32_t i = hash(old[j].key) & (cap - 1);
        while (e[i].key)
            i = (i + 1) & (cap - 1);
        e[i] = old[j];
    }
    g_e = e;
    g_cap = cap;
    co_mem_free(old);
    return 0;
}

void co_wcache_begin(lua_State *L)
{
    co_wcache_end();
    g_on = co_alloc_watch_frees(L);
}

void co_wcache_end(void)
{
    g_on = 0;
    co_mem_free(g_e);
    g_e = NULL;
    g_cap = g_n = 0;
}

int co_wcache_on(void)
{
    return g_on;
}

/* Called by the allocator at any free, also inside the hook: it only
 * removes (a backward shift, no allocation), and nothing holds an entry
 * across a call that may allocate. */
void co_wcache_freed(const void *p)
{
    /* a thread the program hooked (co_dbghook.c); not a NULL "free", which
     * would find the chain table's first empty slot */
    if (g_on && co_nchain && p)
        co_chain_forget(p);
    wc_entry *e = g_on ? find(p) : NULL;
    if (!e)
        return;
    if (e->val[CO_WC_THREAD]) /* a thread the GC collected: its id is free */
        co_thread_freed_id(p, e->val[CO_WC_THREAD]);
    uint32_t m = g_cap - 1, i = (uint32_t)(e - g_e);
    for (uint32_t j = i;;) { /* slot i is the hole */
        g_e[i] = (wc_entry){0};
        uint32_t home;
        do {
            j = (j + 1) & m;
            if (!g_e[j].key) {
                g_n--;
                return;
            }
            home = hash(g_e[j].key) & m;
        } while (((j - home) & m) < ((j - i) & m)); /* home in (i, j]: it stays */
        g_e[i] = g_e[j];
        i = j;
    }
}

uint32_t co_wcache_get(int t, const void *key)
{
    const wc_entry *e = find(key);
    return e ? e->val[t] : 0;
}

void co_wcache_put(int t, const void *key, uint32_t val)
{
    wc_entry *e = find(key);
    if (!e && key && ((g_n + 1) * 2 <= g_cap || !grow())) {
        uint32_t i = hash(key) & (g_cap - 1);
        while (g_e[i].key)
            i = (i + 1) & (g_cap - 1);
        e = &g_e[i];
        e->key = key;
        g_n++;
    }
    if (e)
        e->val[t] = val;
}

uint32_t co_weak_get(int ref, int t, lua_State *L)
{
    if (g_on)
        return co_wcache_get(t, lua_topointer(L, -1));
    if (ref == LUA_NOREF || !lua_checkstack(L, 2))
        return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lua_pushvalue(L, -2);
    lua_rawget(L, -2);
    uint32_t v = (uint32_t)lua_tointeger(L, -1);
    lua_pop(L, 2);
    return v;
}

void co_weak_set(int ref, int t, lua_State *L, uint32_t v)
{
    if (g_on) {
        co_wcache_put(t, lua_topointer(L, -1), v);
        return;
    }
    if (ref == LUA_NOREF || !lua_checkstack(L, 3))
        return;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lua_pushvalue(L, -2);
    lua_pushinteger(L, (lua_Integer)v);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

int co_weak_table(lua_State *L)
{
    if (g_on) /* the map answers */
        return LUA_NOREF;
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return ref == LUA_REFNIL ? LUA_NOREF : ref;
}
