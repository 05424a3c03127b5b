/* co_outside: `recorderd run --sample` of a Lua 5.1 process: no hook, no
 * ring. The hello (outside, at the rate of LUATRACE_SAMPLE) asks recorderd
 * to sample this process from outside, as `recorderd record PID` does; its
 * ack comes once the sampler runs, so the program starts under it. A
 * sampler's price and a sampler's shares of time (no hook runs to weigh
 * on event-dense code), where an exact trace gives exact counts, stacks
 * and coverage (doc/tracing.md).
 *
 * The connection stays open until the process ends: recorderd ends the
 * recording when the process exits, as record does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "co_state.h"
#include "lr_layout.h"

int co_outside_on; /* sampled from outside: the module's sampling() */

/* The main thread of L's state (the sampler reads from it): L, or the
 * global_State's (a require in a coroutine). */
static const void *main_state(lua_State *L)
{
    int is_main = lua_pushthread(L);
    lua_pop(L, 1);
    const void *g = is_main ? NULL : lr_ptr_at(L, LS_G);
    return is_main ? L : g ? lr_ptr_at(g, G_MAINTHREAD) : NULL;
}

int co_outside_open(lua_State *L, int hz)
{
    static co_state s; /* the connection's: the module's lifetime */
    static int tried;
    char err[512] = "";
    co_sample_table(L);
    if (tried++)
        return 1;
    if (hz < 0) {
        fprintf(stderr, "luatrace: LUATRACE_SAMPLE=%s: samples per second, from 1 to 1000; "
                        "running unsampled\n", getenv("LUATRACE_SAMPLE"));
        return 1;
    }
    s.sock = -1;
    s.sample_hz = (unsigned)hz;
    s.outside = 1;
    s.outside_state = main_state(L);
    /* a valid ring name for the hello, which no ring has: recorderd names
     * the session after the process's command line, as record does */
    snprintf(s.shm, sizeof s.shm, "outside");
    if (!getcwd(s.cwd0, sizeof s.cwd0))
        s.cwd0[0] = 0;
    if (co_conn_open(&s, err, sizeof err)) {
        fprintf(stderr, "luatrace: %s; running unsampled\n", err[0] ? err : "no recorderd");
        return 1;
    }
    co_outside_on = 1;
    return 1;
}
