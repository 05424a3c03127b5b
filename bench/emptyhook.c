/* emptyhook: a Lua module whose debug hook does nothing, on call, return
 * and line. `lua5.1 -lemptyhook app.lua` measures the floor that any
 * hook-based tracer pays; scripts/bench compares the collector with it. */
#include <lua.h>

static void empty_hook(lua_State *L, lua_Debug *ar)
{
    (void)L;
    (void)ar;
}

__attribute__((visibility("default"))) int luaopen_emptyhook(lua_State *L)
{
    lua_sethook(L, empty_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE, 0);
    lua_pushboolean(L, 1);
    return 1;
}
