/* host_wait: the host.wait() that block_host and inject_host give their
 * scripts: the next line of stdin (without its newline), or nil at its end,
 * read a byte at a time by the host's own next_byte (which decides how it
 * blocks: poll, read, EINTR counted or not). */
#ifndef HOST_WAIT_H
#define HOST_WAIT_H

#include <errno.h>
#include <lauxlib.h>
#include <string.h>

static inline int host_wait(lua_State *L, int (*next_byte)(char *), const char *host)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    char c;
    int r, any = 0;
    while ((r = next_byte(&c)) == 1 && c != '\n') {
        luaL_addchar(&b, c);
        any = 1;
    }
    if (r < 0)
        return luaL_error(L, "%s: reading stdin: %s", host, strerror(errno));
    luaL_pushresult(&b);
    if (r == 0 && !any)
        lua_pushnil(L);
    return 1;
}

#endif
