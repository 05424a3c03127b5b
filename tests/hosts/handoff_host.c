/* handoff_host: a C host that hands its one Lua state from thread to
 * thread, as a server's worker pool does (one thread runs it at a time):
 *
 *     handoff_host SCRIPT
 *
 * runs SCRIPT on the main thread (it requires luatrace: tracing begins
 * there), then calls its global work() on a second thread, the main
 * thread waiting in pthread_join, then its global finish() on the main
 * thread again (tests/integration/preempt.py, case handoff). */
#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdio.h>

static int call(lua_State *L, const char *name)
{
    lua_getglobal(L, name);
    if (lua_pcall(L, 0, 0, 0)) {
        fprintf(stderr, "handoff_host: %s: %s\n", name, lua_tostring(L, -1));
        return 1;
    }
    return 0;
}

static void *worker(void *arg)
{
    static int failed;
    failed = call(arg, "work");
    return &failed;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: handoff_host SCRIPT\n");
        return 2;
    }
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    if (luaL_dofile(L, argv[1])) {
        fprintf(stderr, "handoff_host: %s\n", lua_tostring(L, -1));
        return 1;
    }
    pthread_t t;
    void *failed = NULL;
    if (pthread_create(&t, NULL, worker, L) || pthread_join(t, &failed) || *(int *)failed)
        return 1;
    int r = call(L, "finish");
    lua_close(L);
    return r;
}
