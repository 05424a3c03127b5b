/* luatrace.h: for C programs that embed Lua 5.1 and want to be traceable
 * on demand with `recorderd attach PID`, `recorderd dump PID` and
 * `recorderd top PID`.
 *
 *     #include <luatrace.h>
 *     lua_State *L = luaL_newstate();
 *     luaL_openlibs(L);
 *     luatrace_listen(L);   // dormant: no hook, no thread
 *
 * Link with luatrace.so (it is also the Lua module `require "luatrace"`),
 * e.g. cc host.c -I... /usr/local/lib/lua/5.1/luatrace.so
 *      -Wl,-rpath,/usr/local/lib/lua/5.1 -llua5.1
 *
 * Call it from the thread that runs L, with L's main thread, once. One Lua
 * state per process can listen. The collector takes one real-time signal
 * (SIGRTMIN+7 unless LUATRACE_ATTACH_SIGNAL names another) and refuses to
 * replace a handler the program installed for it.
 */
#ifndef LUATRACE_H
#define LUATRACE_H

#include <lua.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns 0, or a negative errno after printing why on stderr. */
int luatrace_listen(lua_State *L);

#ifdef __cplusplus
}
#endif

#endif
