/* thread_host: a C host that runs Lua 5.1 on its main thread and, beside
 * it, a thread that allocates and frees without pause and never blocks a
 * signal: the thread the kernel gives recorderd's attach signal to while
 * the Lua thread blocks it (attach_truth.py, cases otherthread and
 * otherthreaddump). It listens with luatrace_listen(L) when
 * LUATRACE_ATTACH=1.
 *
 *     thread_host SCRIPT
 *
 * host.blocked(co [, wait]) blocks the attach signal (LUATRACE_ATTACH_SIGNAL,
 * else SIGRTMIN+7) on the Lua thread, writes "BLOCKED" on stdout and waits
 * until either the signal is pending for this thread alone (sent to it, not
 * to the process: SigPnd of /proc/thread-self/status) or the main thread or
 * co has a hook (a handler elsewhere hooked them); not listening, it does
 * not wait. It returns those three
 * facts as taken then, unblocks the signal (a pending one is taken there)
 * and, with wait, waits in C for a line of stdin before it returns. */
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lualib.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "luatrace.h"

enum { GUARD_MS = 60000 }; /* a wait that sees neither: the test fails, no hang */

static atomic_int g_stop;
static int g_listening; /* else nothing comes: host.blocked does not wait */

/* Allocations of varied sizes, kept a while and freed, until told to stop. */
static void *churn(void *arg)
{
    void *keep[64] = {0};
    (void)arg;
    for (unsigned i = 0; !atomic_load(&g_stop); i++) {
        free(keep[i % 64]);
        keep[i % 64] = malloc(16 + (i * 37) % 4096);
    }
    for (int i = 0; i < 64; i++)
        free(keep[i]);
    return NULL;
}

static int attach_signal(void)
{
    const char *v = getenv("LUATRACE_ATTACH_SIGNAL");
    int n = v && *v ? atoi(v) : 0;
    return n >= SIGRTMIN && n <= SIGRTMAX ? n : SIGRTMIN + 7;
}

/* Whether sig is pending for this thread alone (not for the process). */
static int thread_pending(int sig)
{
    char buf[4096];
    int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = 0;
    const char *p = strstr(buf, "\nSigPnd:\t");
    return p && (strtoull(p + 9, NULL, 16) >> (sig - 1) & 1);
}

/* One line of stdin, read in C; EINTR (a handler ran) is retried. */
static void wait_line(void)
{
    char c;
    for (;;) {
        struct pollfd p = {.fd = 0, .events = POLLIN};
        if (poll(&p, 1, -1) < 0 && errno != EINTR)
            return;
        ssize_t n = read(0, &c, 1);
        if (n == 0 || (n == 1 && c == '\n') || (n < 0 && errno != EINTR && errno != EAGAIN))
            return;
    }
}

static int l_blocked(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTHREAD);
    lua_State *co = lua_tothread(L, 1);
    int wait = lua_toboolean(L, 2), sig = attach_signal(), pending = 0;
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    fputs("BLOCKED\n", stdout);
    fflush(stdout);
    for (int ms = g_listening ? 0 : GUARD_MS; ms < GUARD_MS && !lua_gethook(L) && !lua_gethook(co); ms++) {
        if ((pending = thread_pending(sig)))
            break;
        struct timespec one = {0, 1000000};
        nanosleep(&one, NULL);
    }
    lua_pushboolean(L, pending);
    lua_pushboolean(L, lua_gethook(L) != NULL);
    lua_pushboolean(L, lua_gethook(co) != NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (wait)
        wait_line();
    return 3;
}

static const luaL_Reg host_funcs[] = {{"blocked", l_blocked}, {NULL, NULL}};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: thread_host SCRIPT\n");
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, churn, NULL))
        return 1;
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    luaL_register(L, "host", host_funcs);
    lua_pop(L, 1);
    const char *attach = getenv("LUATRACE_ATTACH");
    g_listening = attach && !strcmp(attach, "1");
    int st = g_listening && luatrace_listen(L);
    if (!st && (st = luaL_dofile(L, argv[1])))
        fprintf(stderr, "thread_host: %s\n", lua_tostring(L, -1));
    lua_close(L);
    atomic_store(&g_stop, 1);
    pthread_join(t, NULL);
    return st ? 1 : 0;
}
