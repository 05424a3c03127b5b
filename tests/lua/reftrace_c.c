/* reftrace_c: what tests/lua/reftrace.lua cannot do in plain Lua 5.1:
 * read an upvalue of a C function, and name a C function by its exported
 * symbol (csym: luaopen_lfs, which require calls and no table holds). debug.getupvalue refuses C
 * functions in 5.1, and a coroutine.wrap closure keeps its coroutine in its
 * first upvalue; the reference tracer needs that coroutine to hook it.
 * require "reftrace_c" returns a table with cupvalue(f, n), cfid(f),
 * cbase(co) and csym(f). */

#include <dlfcn.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>

/* cupvalue(f, n): the value of upvalue n of function f, or nothing. */
static int cupvalue(lua_State *L)
{
  int n = (int)luaL_checkinteger(L, 2); /* 5.1 and 5.4 alike */
  luaL_checktype(L, 1, LUA_TFUNCTION);
  if (lua_getupvalue(L, 1, n) == NULL)
    return 0;
  return 1;
}

#if defined(__GNUC__)
#define RT_EXPORT __attribute__((visibility("default")))
#else
#define RT_EXPORT
#endif

/* cbase(co): the function waiting at the base of a coroutine that has not
 * started, or nothing. */
static int cbase(lua_State *L)
{
  lua_State *co = lua_tothread(L, 1);
  if (!co || co == L || lua_status(co) != 0 || lua_gettop(co) < 1 || !lua_isfunction(co, 1))
    return 0;
  lua_pushvalue(co, 1);
  lua_xmove(co, L, 1);
  return 1;
}

RT_EXPORT int luaopen_reftrace_c(lua_State *L);

/* cfid(f): the C function behind f as a light userdata (Lua makes several
 * closures of one C function: _G.next and the iterator pairs returns), or
 * nothing for a Lua function. Under LuaJIT, a fast function's closure. */
static int cfid(lua_State *L)
{
  static const char wrap_key;
  lua_CFunction f = lua_tocfunction(L, 1);
  if (!f && !lua_iscfunction(L, 1))
    return 0;
  /* LuaJIT's fast functions (pairs, tostring) have no lua_CFunction: one
   * closure each, which stands for it; but every wrap function (the fast
   * function with a thread upvalue) is one */
  if (!f && lua_getupvalue(L, 1, 1) && lua_type(L, -1) == LUA_TTHREAD) {
    lua_pushlightuserdata(L, (void *)&wrap_key);
    return 1;
  }
  lua_settop(L, 1);
  lua_pushlightuserdata(L, f ? (void *)f : (void *)lua_topointer(L, 1));
  return 1;
}

/* csym(f): the exported symbol exactly at C function f's address, or
 * nothing (a static function, a Lua function). */
static int csym(lua_State *L)
{
  lua_CFunction f = lua_tocfunction(L, 1);
  Dl_info dl;
  if (!f || !dladdr((void *)f, &dl) || !dl.dli_sname || dl.dli_saddr != (void *)f)
    return 0;
  lua_pushstring(L, dl.dli_sname);
  return 1;
}

/* cmod(f): the basename of the file that defines C function f, or
 * nothing. */
static int cmod(lua_State *L)
{
  lua_CFunction f = lua_tocfunction(L, 1);
  Dl_info dl;
  if (!f || !dladdr((void *)f, &dl) || !dl.dli_fname || !dl.dli_fname[0])
    return 0;
  const char *base = strrchr(dl.dli_fname, '/');
  lua_pushstring(L, base ? base + 1 : dl.dli_fname);
  return 1;
}

RT_EXPORT int luaopen_reftrace_c(lua_State *L)
{
  lua_newtable(L);
  lua_pushcfunction(L, cupvalue);
  lua_setfield(L, -2, "cupvalue");
  lua_pushcfunction(L, cfid);
  lua_setfield(L, -2, "cfid");
  lua_pushcfunction(L, cbase);
  lua_setfield(L, -2, "cbase");
  lua_pushcfunction(L, csym);
  lua_setfield(L, -2, "csym");
  lua_pushcfunction(L, cmod);
  lua_setfield(L, -2, "cmod");
  return 1;
}
