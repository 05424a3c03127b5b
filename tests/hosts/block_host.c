/* block_host: a test program that embeds Lua 5.1 and blocks in C for as
 * long as nothing arrives, the way a server waits for a request: the script
 * calls host.wait(), which poll()s stdin with no timeout. It listens for
 * `recorderd attach|dump` with luatrace_listen(L) when LUATRACE_ATTACH=1.
 * tests/integration/attach_truth.py (case dumphost) dumps it while it
 * waits.
 *
 *     block_host SCRIPT
 *
 * host.wait() returns the next line of stdin, or nil at its end. poll()
 * fails with EINTR whenever a signal handler ran, SA_RESTART or not: wait
 * then polls again and counts it; host.eintr() returns the count (it
 * depends on the signals received, not on the input).
 */
#include <errno.h>
#include <lauxlib.h>
#include <lualib.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_wait.h"

#include "luatrace.h"

static unsigned g_eintr;

/* One byte of fd 0: 1, 0 at its end, -1 on error. Waits in poll. */
static int next_byte(char *c)
{
    for (;;) {
        struct pollfd p = {.fd = 0, .events = POLLIN};
        if (poll(&p, 1, -1) < 0) {
            if (errno != EINTR)
                return -1;
            g_eintr++;
            continue;
        }
        ssize_t n = read(0, c, 1);
        if (n >= 0)
            return (int)n;
        if (errno != EINTR)
            return -1;
        g_eintr++;
    }
}

/* host.wait(): the next line of stdin (without its newline), or nil. */
static int l_wait(lua_State *L)
{
    return host_wait(L, next_byte, "block_host");
}

/* host.eintr(): how many times poll or read was interrupted. */
static int l_eintr(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)g_eintr);
    return 1;
}

static const luaL_Reg host_funcs[] = {{"wait", l_wait}, {"eintr", l_eintr}, {NULL, NULL}};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: block_host SCRIPT\n");
        return 2;
    }
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    luaL_register(L, "host", host_funcs);
    lua_pop(L, 1);
    const char *attach = getenv("LUATRACE_ATTACH");
    if (attach && !strcmp(attach, "1") && luatrace_listen(L))
        return 1;
    int st = luaL_dofile(L, argv[1]);
    if (st)
        fprintf(stderr, "block_host: %s\n", lua_tostring(L, -1));
    lua_close(L);
    return st ? 1 : 0;
}
