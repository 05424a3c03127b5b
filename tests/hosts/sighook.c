/* sighook: Lua functions run on signals the way C libraries do it
 * (luaposix's posix.signal among them): the C handler sets a hook on the
 * main thread, call, return and count 1, and that hook takes every hook
 * off the thread before it calls the Lua function (collector.py, case
 * sighook). Not installed. Built for Lua 5.1 (sighook) and 5.4
 * (sighook54).
 *   local sh = require "sighook"
 *   sh.catch(signo, fn)   -- fn(signo) runs at the main thread's next event
 *   sh.raise(signo)
 */
#include <lauxlib.h>
#include <lua.h>
#include <signal.h>
#include <string.h>

static lua_State *g_main; /* the thread that loaded us, as luaposix keeps */
static volatile sig_atomic_t g_pending;
static char FUNCS; /* registry: {signo = function} */

static void run_caught(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0); /* what such libraries do: no hook is left */
    int sig = g_pending;
    g_pending = 0;
    lua_pushlightuserdata(L, &FUNCS);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_rawgeti(L, -1, sig);
    lua_pushinteger(L, sig);
    lua_pcall(L, 1, 0, 0);
    lua_pop(L, 1);
}

static void on_signal(int sig)
{
    g_pending = sig;
    lua_sethook(g_main, run_caught, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static int l_catch(lua_State *L)
{
    int sig = (int)luaL_checkinteger(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushlightuserdata(L, &FUNCS);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, 2);
    lua_rawseti(L, -2, sig);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);
    lua_pushboolean(L, sigaction(sig, &sa, NULL) == 0);
    return 1;
}

static int l_raise(lua_State *L)
{
    lua_pushboolean(L, raise((int)luaL_checkinteger(L, 1)) == 0);
    return 1;
}

static int sighook_open(lua_State *L)
{
    g_main = L;
    lua_pushlightuserdata(L, &FUNCS);
    lua_newtable(L);
    lua_rawset(L, LUA_REGISTRYINDEX);
    lua_newtable(L);
    lua_pushcfunction(L, l_catch);
    lua_setfield(L, -2, "catch");
    lua_pushcfunction(L, l_raise);
    lua_setfield(L, -2, "raise");
    return 1;
}

#ifdef SIGHOOK54
int luaopen_sighook54(lua_State *L)
#else
int luaopen_sighook(lua_State *L)
#endif
{
    return sighook_open(L);
}
