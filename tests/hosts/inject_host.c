/* inject_host: a C host linking liblua5.1 and never luatrace, for
 * `recorderd attach` by injection (tests/integration/inject.py).
 *
 *     inject_host MODE SCRIPT [ARG]
 *
 * MODE poll:   the script runs on the main thread; host.wait() poll()s
 *              stdin and returns its next line (nil at its end).
 *      thread: the script runs on a second thread; the main thread waits
 *              for it in pthread_join.
 *      malloc: the script runs on the main thread while a second thread
 *              calls malloc and free without pause until the script ends.
 * The script gets ARG as its `...`; the exit status is 0 once it ran.
 * SIGRTMIN+1 is counted (a handler with SA_RESTART), and the count printed
 * on stderr at the end: "SIGNALS N" (inject.py, case signals: none lost),
 * and "RESENT M" if M of them did not come as kill() sent them (si_code
 * not SI_USER: sent again by someone else, a tracer).
 * INJECT_HOST_SIGNAL=N: signal N is handled so too (luatrace's attach
 * signal taken: inject.py, case refuse).
 * host.park() waits in futex(2) until a SIGRTMIN+1 comes: with MODE thread,
 * no thread is then at a point where recorderd may call into the process
 * (inject.py, case refuse: it gives up). */
#include <errno.h>
#include <lauxlib.h>
#include <linux/futex.h>
#include <lualib.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host_wait.h"

static const char *g_script, *g_arg;
static atomic_int g_done;
static int g_status = 1;
static volatile sig_atomic_t g_signals;
static int g_wake; /* a futex word: 1 once a SIGRTMIN+1 came */

static volatile sig_atomic_t g_resent; /* not as sent: not from kill() (SI_USER) */

static void on_rt(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    int saved = errno;
    g_signals++;
    g_resent += si->si_code != SI_USER;
    __atomic_store_n(&g_wake, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &g_wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); /* any thread runs this */
    errno = saved;
}

static int l_park(lua_State *L)
{
    while (!__atomic_load_n(&g_wake, __ATOMIC_SEQ_CST)) /* the handler's store ends the wait */
        syscall(SYS_futex, &g_wake, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    (void)L;
    return 0;
}

/* One byte of fd 0: 1, 0 at its end, -1 on error; waits in poll, which a
 * signal handler interrupts whatever SA_RESTART: poll again. */
static int next_byte(char *c)
{
    for (;;) {
        struct pollfd p = {.fd = 0, .events = POLLIN};
        if (poll(&p, 1, -1) < 0 && errno != EINTR)
            return -1;
        if (!(p.revents & (POLLIN | POLLHUP)))
            continue;
        ssize_t n = read(0, c, 1);
        if (n >= 0 || errno != EINTR)
            return (int)n;
    }
}

static int l_wait(lua_State *L)
{
    return host_wait(L, next_byte, "inject_host");
}

static void *run_script(void *unused)
{
    (void)unused;
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    lua_newtable(L);
    lua_pushcfunction(L, l_wait);
    lua_setfield(L, -2, "wait");
    lua_pushcfunction(L, l_park);
    lua_setfield(L, -2, "park");
    lua_setglobal(L, "host");
    if (luaL_loadfile(L, g_script) || (lua_pushstring(L, g_arg), lua_pcall(L, 1, 0, 0))) {
        fprintf(stderr, "inject_host: %s\n", lua_tostring(L, -1));
    } else {
        g_status = 0;
    }
    lua_close(L);
    atomic_store(&g_done, 1);
    return NULL;
}

/* malloc and free of varied sizes, as fast as it can, until the script
 * ends: the C library's allocator locks taken and released all the time. */
static void *churn(void *unused)
{
    (void)unused;
    void *keep[64] = {0};
    for (unsigned i = 0; !atomic_load_explicit(&g_done, memory_order_relaxed); i++) {
        unsigned k = i % 64;
        free(keep[k]);
        keep[k] = malloc(16 + (i * 7919u) % 70000);
    }
    for (unsigned k = 0; k < 64; k++)
        free(keep[k]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: inject_host poll|thread|malloc SCRIPT [ARG]\n");
        return 2;
    }
    struct sigaction sa = {.sa_sigaction = on_rt, .sa_flags = SA_RESTART | SA_SIGINFO};
    sigaction(SIGRTMIN + 1, &sa, NULL);
    if (getenv("INJECT_HOST_SIGNAL")) /* a program of its own on luatrace's attach signal */
        sigaction(atoi(getenv("INJECT_HOST_SIGNAL")), &sa, NULL);
    g_script = argv[2];
    g_arg = argc > 3 ? argv[3] : "";
    pthread_t t;
    if (!strcmp(argv[1], "thread")) {
        if (pthread_create(&t, NULL, run_script, NULL))
            return 1;
        pthread_join(t, NULL);
    } else if (!strcmp(argv[1], "malloc")) {
        if (pthread_create(&t, NULL, churn, NULL))
            return 1;
        run_script(NULL);
        pthread_join(t, NULL);
    } else {
        run_script(NULL);
    }
    fprintf(stderr, "SIGNALS %d\n", (int)g_signals);
    if (g_resent)
        fprintf(stderr, "RESENT %d\n", (int)g_resent);
    return g_status;
}
