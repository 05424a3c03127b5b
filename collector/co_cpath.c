/* co_cpath: the program keeps its own package.cpath under recorderd run.
 *
 * run puts the collector's directory in front of LUA_CPATH so that its
 * LUA_INIT finds luatrace.so (and so do the Lua processes the program
 * starts). Lua builds package.cpath from it, so the program saw another
 * cpath than untraced: printed, and in every "module 'x' not found"
 * message (one line more per name tried), a traced program's output
 * changed. run says in LUATRACE_RUN_CPATH what it put in front, and, with
 * LUATRACE_RUN_CPATH_TAIL=1, that LUA_CPATH was unset (its ";;" then adds
 * Lua's default and one ';' after it). When tracing starts, the collector
 * takes both off package.cpath again.
 *
 * The program's own require "luatrace" (and "luatrace.*") must still find
 * the collector: the global require becomes a C function that, for those
 * names alone, puts run's directory in front for the time of the search.
 * Every other name goes straight to Lua's require, as a C call inside this
 * one (no frame of its own: the same stacks, the same messages). Lua 5.1
 * and LuaJIT keep the package table in require's environment, 5.4 in its
 * upvalue (co_lua54.h's LUA_ENVIRONINDEX): ours has it there too, so Lua's
 * require, called inside ours, finds it where it looks. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "co_state.h"

/* What run put in front of the cpath this Lua reads; 5.4's ";;" adds no
 * ';' after Lua's default, so LUATRACE_RUN_CPATH_TAIL is 5.1's alone. */
#ifdef CO_LUA54
#define CO_RUN_CPATH "LUATRACE_RUN_CPATH_5_4"
#define CO_LUA54_BUILD 1
#else
#define CO_RUN_CPATH "LUATRACE_RUN_CPATH"
#define CO_LUA54_BUILD 0
#endif

static lua_CFunction g_require; /* Lua's own */

static int ours(const char *name)
{
    return name && !strncmp(name, "luatrace", 8) && (!name[8] || name[8] == '.');
}

/* C function f with the package table at t where require keeps it: its
 * environment (5.1, LuaJIT), its upvalue (5.4) */
static void push_require(lua_State *L, lua_CFunction f, int t)
{
#ifdef CO_LUA54
    lua_pushvalue(L, t);
    lua_pushcclosure(L, f, 1);
#else
    lua_pushcfunction(L, f);
    lua_pushvalue(L, t);
    lua_setfenv(L, -2);
#endif
}

/* package.cpath = text, in the package table at t */
static void set_cpath(lua_State *L, int t, const char *text, size_t n)
{
    lua_pushliteral(L, "cpath");
    lua_pushlstring(L, text, n);
    lua_rawset(L, t);
}

static int co_require(lua_State *L)
{
    const char *add = getenv(CO_RUN_CPATH);
    if (!ours(lua_tostring(L, 1)) || !add || lua_gettop(L) != 1)
        return g_require(L);
    lua_pushvalue(L, LUA_ENVIRONINDEX); /* the package table, as require's */
    int t = lua_gettop(L);
    lua_pushliteral(L, "cpath");
    lua_rawget(L, t);
    size_t n;
    const char *was = lua_tolstring(L, -1, &n);
    lua_pushstring(L, add);
    lua_pushvalue(L, -2);
    lua_concat(L, 2);
    set_cpath(L, t, lua_tostring(L, -1), lua_objlen(L, -1));
    lua_pop(L, 1);
    push_require(L, g_require, t); /* a frame here: only for luatrace */
    lua_pushvalue(L, 1);
    int e = lua_pcall(L, 1, 1, 0);
    set_cpath(L, t, was ? was : "", was ? n : 0);
    if (e)
        lua_error(L);
    return 1;
}

lua_CFunction co_cpath_shown(lua_CFunction cf)
{
    return cf && cf == g_require ? co_require : cf;
}

const void *co_cpath_shown_key(const void *key)
{
    return key && key == (const void *)g_require ? (const void *)co_require : key;
}

/* Takes run's part off package.cpath (package table at t). */
static void strip(lua_State *L, int t, const char *add)
{
    size_t n, k = strlen(add);
    lua_pushliteral(L, "cpath");
    lua_rawget(L, t);
    const char *c = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
    if (c && n >= k && !memcmp(c, add, k)) {
        const char *tail = getenv("LUATRACE_RUN_CPATH_TAIL");
        size_t end = n;
        if (!CO_LUA54_BUILD && tail && !strcmp(tail, "1") && end > k && c[end - 1] == ';')
            end--;
        set_cpath(L, t, c + k, end - k);
    }
    lua_pop(L, 1);
}

/* At the first traced call of a start-up load on the main thread. */
void co_cpath_hide(lua_State *L)
{
    const char *add = getenv(CO_RUN_CPATH);
    if (!add || !*add || g_require)
        return;
    co_module_push_globals(L);
    int g = lua_gettop(L);
    lua_pushliteral(L, "require");
    lua_rawget(L, g);
    lua_CFunction req = lua_tocfunction(L, -1);
    lua_getfenv(L, -1); /* require's environment: the package table */
    int t = lua_gettop(L);
    if (req && lua_istable(L, t)) {
        strip(L, t, add);
        g_require = req;
        push_require(L, co_require, t);
        lua_pushliteral(L, "require");
        lua_insert(L, -2);
        lua_rawset(L, g);
    }
    lua_settop(L, g - 1);
}
