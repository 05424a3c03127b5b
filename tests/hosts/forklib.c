/* forklib: fork() and waitpid() for Lua 5.1, which has neither: a
 * pre-forking server's shape (secconn.py, case fork). Not installed.
 *   local forklib = require "forklib"
 *   local pid = forklib.fork()        -- 0 in the child
 *   local status = forklib.wait(pid)  -- the child's exit status
 *   forklib.exit(n)                   -- _exit(n): no atexit handlers
 *   forklib.closefrom(n)              -- closes every descriptor from n on,
 *                                        as a daemon does (co_preempt.c)
 *   forklib.exec(path, arg1, ...)     -- execv(path, {path, arg1, ...}): a
 *                                        launcher that becomes its server;
 *                                        returns only on failure */
#include <lauxlib.h>
#include <lua.h>
#include <sys/wait.h>
#include <unistd.h>

static int l_fork(lua_State *L)
{
    lua_pushinteger(L, fork());
    return 1;
}

static int l_wait(lua_State *L)
{
    int st = 0;
    pid_t pid = (pid_t)luaL_checkinteger(L, 1);
    while (waitpid(pid, &st, 0) < 0)
        ;
    lua_pushinteger(L, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 1;
}

static int l_exit(lua_State *L)
{
    _exit((int)luaL_optinteger(L, 1, 0));
}

static int l_closefrom(lua_State *L)
{
    long max = sysconf(_SC_OPEN_MAX);
    for (int fd = (int)luaL_checkinteger(L, 1); fd < (max > 0 ? max : 1024); fd++)
        close(fd);
    return 0;
}

static int l_exec(lua_State *L)
{
    int n = lua_gettop(L);
    const char *argv[16];
    if (n > 15)
        n = 15;
    for (int i = 0; i < n; i++)
        argv[i] = luaL_checkstring(L, i + 1);
    argv[n] = NULL;
    execv(argv[0], (char *const *)argv);
    return luaL_error(L, "execv %s failed", argv[0]);
}

int luaopen_forklib(lua_State *L);

int luaopen_forklib(lua_State *L)
{
    static const luaL_Reg f[] = {{"fork", l_fork}, {"wait", l_wait}, {"exit", l_exit},
                                  {"closefrom", l_closefrom}, {"exec", l_exec},
                                  {NULL, NULL}};
    luaL_register(L, "forklib", f);
    return 1;
}
