/* reload_host: a C host that closes its Lua state and makes a new one, as
 * a server reloading its scripts does (attach_truth.py, case reload):
 *
 *     reload_host SCRIPT ROUNDS
 *
 * Each round makes a fresh state, sets the global ROUND (0, 1, ...), runs
 * SCRIPT and closes the state. Built twice: reload_host calls
 * luatrace_listen(L) on every state when LUATRACE_ATTACH=1 (RELOAD_LISTEN);
 * reload_plain never links luatrace (attach loads it). */
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef RELOAD_LISTEN
#include "luatrace.h"
#endif

static int listen_on(lua_State *L)
{
#ifdef RELOAD_LISTEN
    const char *attach = getenv("LUATRACE_ATTACH");
    if (attach && !strcmp(attach, "1"))
        return luatrace_listen(L);
#endif
    (void)L;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: reload_host SCRIPT ROUNDS\n");
        return 2;
    }
    for (int i = 0; i < atoi(argv[2]); i++) {
        lua_State *L = luaL_newstate();
        luaL_openlibs(L);
        if (listen_on(L))
            return 1;
        lua_pushinteger(L, i);
        lua_setglobal(L, "ROUND");
        if (luaL_dofile(L, argv[1])) {
            fprintf(stderr, "reload_host: %s\n", lua_tostring(L, -1));
            return 1;
        }
        lua_close(L);
    }
    return 0;
}
