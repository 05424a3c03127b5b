/* sigthread: a second OS thread in a lua5.1 process, which never blocks
 * signals, and a wait in C with the attach signal blocked on the thread
 * that runs Lua (attach_truth.py, case offthread). Not installed.
 *   local st = package.loadlib(SO, "luaopen_sigthread")()
 *   st.start()                          -- the thread: sleeps until stop
 *   local main, co = st.blocked_wait(co, ms)
 *   st.stop()                           -- before lua_close unloads us
 * blocked_wait blocks the attach signal (LUATRACE_ATTACH_SIGNAL, else
 * SIGRTMIN+7), writes "BLOCKED" on stdout, and waits until the main thread
 * has a hook (an attach request, which only the other thread can take) or
 * ms pass; it returns whether the main thread and co had a hook then, and
 * unblocks the signal. */
#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_t g_thread;
static volatile int g_stop;

static void *idle(void *arg)
{
    (void)arg;
    while (!g_stop) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return NULL;
}

static int l_start(lua_State *L)
{
    lua_pushboolean(L, pthread_create(&g_thread, NULL, idle, NULL) == 0);
    return 1;
}

static int l_stop(lua_State *L)
{
    (void)L;
    g_stop = 1;
    pthread_join(g_thread, NULL);
    return 0;
}

static int attach_signal(void)
{
    const char *v = getenv("LUATRACE_ATTACH_SIGNAL");
    int n = v && *v ? atoi(v) : 0;
    return n >= SIGRTMIN && n <= SIGRTMAX ? n : SIGRTMIN + 7;
}

static int l_blocked_wait(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTHREAD);
    lua_State *co = lua_tothread(L, 1);
    long ms = (long)luaL_checkinteger(L, 2);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, attach_signal());
    pthread_sigmask(SIG_BLOCK, &set, &old);
    fputs("BLOCKED\n", stdout);
    fflush(stdout);
    for (long i = 0; i < ms && !lua_gethook(L); i++) {
        struct timespec one = {0, 1000000};
        nanosleep(&one, NULL);
    }
    int main_hooked = lua_gethook(L) != NULL, co_hooked = lua_gethook(co) != NULL;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    lua_pushboolean(L, main_hooked);
    lua_pushboolean(L, co_hooked);
    return 2;
}

int luaopen_sigthread(lua_State *L);

int luaopen_sigthread(lua_State *L)
{
    static const luaL_Reg f[] = {{"start", l_start}, {"stop", l_stop},
                                 {"blocked_wait", l_blocked_wait}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, f);
    return 1;
}
