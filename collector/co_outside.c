/* co_outside: `recorderd run --sample` of a Lua 5.1 or 5.4 process: no hook, no
 * ring. The hello (outside, at the rate of LUATRACE_SAMPLE) asks recorderd
 * to sample this process from outside, as `recorderd record PID` does; its
 * ack comes once the sampler runs, so the program starts under it. A
 * sampler's price and a sampler's shares of time (no hook runs to weigh
 * on event-dense code), where an exact trace gives exact counts, stacks
 * and coverage (doc/tracing.md).
 *
 * The connection stays open while the state lives: recorderd ends the
 * recording when it closes (a sentinel's __gc closes it with the state),
 * or when the process exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "co_state.h"
#include "lr_layout.h"

#define CO_OUTSIDE_SENTINEL "luatrace.outside"

int co_outside_on; /* sampled from outside: the module's sampling() */

/* The main thread of L's state (the sampler reads from it): L, or the
 * global_State's (a require in a coroutine). */
static const void *main_state(lua_State *L)
{
    int is_main = lua_pushthread(L);
    lua_pop(L, 1);
#ifdef CO_LUA54 /* the registry holds it */
    if (is_main)
        return L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    const void *m = lua_tothread(L, -1);
    lua_pop(L, 1);
    return m;
#endif
    const void *g = is_main ? NULL : lr_ptr_at(L, LS_G);
    return is_main ? L : g ? lr_ptr_at(g, G_MAINTHREAD) : NULL;
}

static co_state g_out; /* the connection's, for the state sampled now */
static int g_tried;
static pid_t g_pid; /* the process that made the connection */

/* The state closes: its connection too, so that recorderd ends its
 * session (a host that makes a new state gets a new one). */
static int sentinel_gc(lua_State *L)
{
    (void)L;
    if (g_out.sock >= 0 && getpid() == g_pid) /* not a fork child's copy */
        close(g_out.sock);
    g_out.sock = -1;
    g_tried = co_outside_on = 0;
    return 0;
}

int co_outside_open(lua_State *L, int hz)
{
    co_state *s = &g_out;
    char err[512] = "";
    co_sample_table(L);
    if (g_tried++)
        return 1;
    if (hz < 0) {
        fprintf(stderr, "luatrace: LUATRACE_SAMPLE=%s: samples per second, from 1 to 1000; "
                        "running unsampled\n", getenv("LUATRACE_SAMPLE"));
        return 1;
    }
    memset(s, 0, sizeof *s);
    s->sock = -1;
    s->sample_hz = (unsigned)hz;
    s->outside = 1;
    s->outside_state = main_state(L);
    s->outside_tid = gettid(); /* the samples weigh this thread's CPU time */
    g_pid = getpid();
    /* a valid ring name for the hello, which no ring has: recorderd names
     * the session after the process's command line, as record does */
    snprintf(s->shm, sizeof s->shm, "outside");
    if (!getcwd(s->cwd0, sizeof s->cwd0))
        s->cwd0[0] = 0;
    if (co_conn_open(s, err, sizeof err)) {
        fprintf(stderr, "luatrace: %s; running unsampled\n", err[0] ? err : "no recorderd");
        return 1;
    }
    co_module_sentinel(L, CO_OUTSIDE_SENTINEL, sentinel_gc);
    co_outside_on = 1;
    return 1;
}
