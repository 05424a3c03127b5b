/* co_name: the name a function is known by (README "Frame labels"): the
 * shortest global or package.loaded path holding it, found by scanning
 * those tables when the function is first seen.
 *
 * A scan through lua_next costs about 4000 instructions per table, 200 000
 * per new function on a program with a few dozen modules: most of what
 * the collector spends on a short run. So where co_name_layout_check finds
 * Lua 5.1's Table, Node and TString layout, the tables are read directly
 * (a few instructions per entry, array part skipped: its keys are numbers),
 * visiting the entries in lua_next's order so that both ways name alike.
 */
#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "co_layout.h"
#include "co_state.h"

#define CO_SCAN_MAX 20000 /* entries looked at per table */

/* What is looked for: the closure (a Lua function), or any closure of the
 * C function cf (Lua makes several closures of one C function, e.g. _G.next
 * and the iterator pairs returns). */
typedef struct target {
    const void *cl;
    lua_CFunction cf;
    char *best; /* the shortest "prefix.key" so far (ties: smaller bytes) */
    size_t cap;
} target;

/* Lua 5.1's compatibility aliases (LUA_COMPAT_GFIND, LUA_COMPAT_MOD):
 * the same C function as string.gmatch and math.fmod, whose names people
 * write and look for. */
static int compat_alias(const char *name)
{
    return !strcmp(name, "string.gfind") || !strcmp(name, "math.mod");
}

/* Is a a better name than b: not an alias when b is, else shorter, else
 * smaller bytes. */
static int better(const char *a, const char *b)
{
    if (compat_alias(a) != compat_alias(b))
        return compat_alias(b);
    size_t al = strlen(a), bl = strlen(b);
    return al < bl || (al == bl && strcmp(a, b) < 0);
}

static void consider(target *t, const char *prefix, const char *key)
{
    char cand[CO_NAME_MAX];
    snprintf(cand, sizeof cand, "%s%s%s", prefix, *prefix ? "." : "", key);
    if (!*t->best || better(cand, t->best))
        snprintf(t->best, t->cap, "%s", cand);
}

/* The table at idx, through lua_next (layouts not verified). */
static void scan_api(lua_State *L, int idx, const char *prefix, target *t)
{
    unsigned budget = CO_SCAN_MAX; /* a huge table must not stall the program */
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (!--budget) {
            lua_pop(L, 2);
            return;
        }
        if (lua_type(L, -2) == LUA_TSTRING &&
            (t->cf ? lua_tocfunction(L, -1) == t->cf : lua_topointer(L, -1) == t->cl))
            consider(t, prefix, lua_tostring(L, -2));
        lua_pop(L, 1);
    }
}

static int same(const target *t, const uint8_t *node)
{
    if (co_int_at(node, TV_TT) != LUA_TFUNCTION)
        return 0;
    const uint8_t *cl = co_ptr_at(node, 0);
    return t->cf ? cl[CL_ISC] && co_ptr_at(cl, CL_FP) == (const void *)t->cf : cl == t->cl;
}

/* The Table tb read directly, entries counted against the budget as
 * lua_next visits them: non-nil array slots, then non-nil nodes. */
static void scan_direct(const uint8_t *tb, const char *prefix, target *t)
{
    unsigned budget = CO_SCAN_MAX;
    const uint8_t *arr = co_ptr_at(tb, TB_ARRAY);
    for (int i = 0, n = co_int_at(tb, TB_SIZEARRAY); i < n; i++)
        if (co_int_at(arr + (size_t)i * TV_SIZE, TV_TT) != LUA_TNIL && !--budget)
            return;
    const uint8_t *node = co_ptr_at(tb, TB_NODE);
    for (size_t i = 0, n = (size_t)1 << tb[TB_LSIZENODE]; i < n; i++, node += ND_SIZE) {
        if (co_int_at(node, TV_TT) == LUA_TNIL)
            continue;
        if (!--budget)
            return;
        if (co_int_at(node, ND_KEYTT) == LUA_TSTRING && same(t, node))
            consider(t, prefix, (const char *)co_ptr_at(node, ND_KEY) + TS_SIZE);
    }
}

static void scan(lua_State *L, int idx, const char *prefix, target *t, int direct)
{
    if (direct)
        scan_direct(lua_topointer(L, idx), prefix, t);
    else
        scan_api(L, idx, prefix, t);
}

/* The globals are the program's (package.loaded._G, as the base library
 * registered them), not those of the running thread: setfenv(0, t) gives a
 * coroutine (and those it creates) a table of its own. */
void co_name_find(lua_State *L, int fi, int direct, char *best, size_t cap)
{
    target t = {lua_topointer(L, fi), lua_tocfunction(L, fi), best, cap};
    best[0] = 0;
    lua_pushliteral(L, "_LOADED");
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_type(L, -1) != LUA_TTABLE) {
        lua_pop(L, 1);
        scan(L, LUA_GLOBALSINDEX, "", &t, direct);
        return;
    }
    int loaded = lua_gettop(L);
    lua_getfield(L, loaded, "_G");
    scan(L, lua_istable(L, -1) ? lua_gettop(L) : LUA_GLOBALSINDEX, "", &t, direct);
    lua_pop(L, 1);
    lua_pushnil(L);
    while (lua_next(L, loaded)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE &&
            strcmp(lua_tostring(L, -2), "_G") != 0)
            scan(L, lua_gettop(L), lua_tostring(L, -2), &t, direct);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* {====== layout check */

static int probe_a(lua_State *L)
{
    return lua_gettop(L);
}

static int probe_b(lua_State *L)
{
    return lua_gettop(L) + 1;
}

/* Both ways name f (at fi) alike in the table at t. */
static int agree(lua_State *L, int t, int fi)
{
    char a[256], b[256];
    target ta = {lua_topointer(L, fi), lua_tocfunction(L, fi), a, sizeof a};
    target tb = ta;
    tb.best = b;
    a[0] = b[0] = 0;
    scan_api(L, t, "m", &ta);
    scan_direct(lua_topointer(L, t), "m", &tb);
    return a[0] && !strcmp(a, b);
}

int co_name_layout_check(lua_State *L)
{
    static const char *const keys[] = {"alpha", "b", "gamma_long_key", "d", "e", "zz"};
    int top = lua_gettop(L), ok = 1;
    lua_newtable(L);
    int t = lua_gettop(L);
    for (int i = 1; i <= 40; i++) { /* an array part, and numbers in the nodes */
        lua_pushinteger(L, i);
        lua_rawseti(L, t, i * (i % 3 ? 1 : 1000));
    }
    lua_pushcfunction(L, probe_a); /* one C function under several names */
    int fa = lua_gettop(L);
    lua_pushcfunction(L, probe_b);
    int fb = lua_gettop(L);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        lua_pushvalue(L, i % 3 == 2 ? fb : fa);
        lua_setfield(L, t, keys[i]);
    }
    ok = luaL_loadstring(L, "return 1") == 0;
    lua_pushvalue(L, -1);
    lua_setfield(L, t, "lua_fn");
    /* the header first: a wrong layout must fail before nodes are read */
    const uint8_t *tb = lua_topointer(L, t);
    ok = ok && tb[8] == LUA_TTABLE && tb[TB_LSIZENODE] >= 3 && tb[TB_LSIZENODE] <= 6 &&
         co_int_at(tb, TB_SIZEARRAY) >= 8 && co_int_at(tb, TB_SIZEARRAY) <= 64;
    ok = ok && agree(L, t, fa) && agree(L, t, fb) && agree(L, t, lua_gettop(L));
    lua_settop(L, top);
    return ok;
}

/* }====== */
