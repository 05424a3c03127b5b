/* co_lua54: what the collector's Lua 5.1 API calls are in Lua 5.4, for
 * the 5.4 build (collector/lua54/meson.build includes it in every file,
 * before co_weak.h). The few differences in meaning (tail calls, depth)
 * are in the files that meet them, under CO_LUA54. */
#ifndef CO_LUA54_H
#define CO_LUA54_H

#include <lua.h>
#include <lauxlib.h>

#if LUA_VERSION_NUM != 504
#error "co_lua54.h is for the Lua 5.4 build (its headers first on the include path)"
#endif

/* the one form the collector uses: into the table on top */
#define luaL_register(L, n, l) luaL_setfuncs((L), (l), 0)
#define lua_objlen(L, i) lua_rawlen((L), (i))
/* 5.4 has no globals pseudo-index: the registry's slot holds them */
#define LUA_GLOBALSINDEX_PUSH(L) lua_pushglobaltable(L)
/* a coroutine resumed from C, as 5.1's lua_resume(co, n) */
static inline int co_lua_resume(lua_State *co, int n)
{
    int nres;
    return lua_resume(co, NULL, n, &nres);
}
#define lua_resume(co, n) co_lua_resume((co), (n))
/* with its debug information: the hash of a function's code (co_func.c) */
#define lua_dump(L, w, d) lua_dump((L), (w), (d), 0)

/* require's package table: 5.1 keeps it in require's environment, 5.4 in
 * its first upvalue (co_cpath.c's wrapper of require, a closure with it) */
#define LUA_ENVIRONINDEX lua_upvalueindex(1)
#define lua_getfenv(L, i) ((void)lua_getupvalue((L), (i), 1))

#endif
