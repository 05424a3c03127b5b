/* co_calib: what each hook costs the program outside the hook's own clock
 * reads, measured once before tracing begins (doc/design.md, "Hook
 * overhead compensation").
 *
 * The hook's time is left out of the program's (co_hook.c), but not the
 * part of each event that Lua spends before the hook's first clock read
 * and after its last (traceexec, luaD_callhook, the call and the return)
 * nor the caches the hook displaces. On a loop of short lines that is
 * about 100 TSC ticks an event, as much as the lines themselves: a
 * function with many events looked several times heavier than a C
 * function of the same cost. So three small loops (lines; calls of a Lua
 * function; calls of a C function) are run here, each plain and then
 * traced by the real hook into a ring of its own that nobody reads, and
 * what tracing added per event of each kind is sent in a BIAS record:
 * recorderd takes it off every event's time (rd_stack.c). Each loop is
 * run CALIB_REPS times and the fastest run of each counts, so a run that
 * the OS preempted does not.
 */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "co_clock.h"
#include "co_state.h"

#define CALIB_N 1000   /* iterations per loop */
#define CALIB_REPS 4
#define CALIB_MAX 4000 /* ticks: a bias above this is no measurement */

/* Four loops; instructions and events an iteration, as luac5.1 -l lists
 * them: short lines (ADD, FORLOOP: 2 and 2 lines), table lines (9 and 3
 * lines), calls of a Lua function (GETUPVAL, CALL, its RETURN, FORLOOP: 4;
 * 3 lines, a call, a return), calls of a C function (3; 2 lines, a call,
 * a return). */
static const char calib_src[] =
    "local nop = ...\n"
    "local function short(n)\n"
    "  local x = 0\n"
    "  for i = 1, n do\n"
    "    x = x + i\n"
    "  end\n"
    "  return x\n"
    "end\n"
    "local function lines(n)\n"
    "  local t = {a = 0, b = 1}\n"
    "  for i = 1, n do\n"
    "    t.a = t.b + i * 2\n"
    "    t.b = t.a % 7 - i\n"
    "  end\n"
    "  return t.a\n"
    "end\n"
    "local function f() end\n"
    "local function luacalls(n)\n"
    "  for _ = 1, n do\n"
    "    f()\n"
    "  end\n"
    "end\n"
    "local function ccalls(n)\n"
    "  for _ = 1, n do\n"
    "    nop()\n"
    "  end\n"
    "end\n"
    "return short, lines, luacalls, ccalls\n";
enum { NLOOP = 4 };
static const double loop_instr[NLOOP] = {2, 9, 4, 3};

static co_bias g_bias;
int co_calib_discard;

const co_bias *co_calib_bias(void)
{
    return &g_bias;
}

static int calib_nop(lua_State *L)
{
    (void)L;
    return 0;
}

/* One loop's fastest runs: plain ticks, and traced ticks and events. */
typedef struct loop {
    uint64_t plain, traced;
    uint64_t n[3]; /* LINE, CALL, RET events of the fastest traced run */
} loop;

/* The ring read so far: short records are read with what the records
 * before them imply, so the stream is read in order from its start (the
 * calibration's few records never wrap the ring). */
static lt_dec g_dec;
static uint64_t g_read;

/* The events in s's ring from byte from on: their dt summed, and counted
 * by kind. Returns -1 if they cannot be read. */
static int sum_events(co_state *s, uint64_t from, uint64_t *dt, uint64_t n[3])
{
    lt_event ev;
    *dt = 0;
    memset(n, 0, 3 * sizeof *n);
    if (s->ring.pos > s->ring.size || g_read > from)
        return -1;
    while (g_read < s->ring.pos) {
        int k = lt_dec_next(&g_dec, s->ring.data + g_read, s->ring.pos - g_read, &ev);
        if (k <= 0)
            return -1;
        if (g_read >= from &&
            (ev.kind == LT_EV_LINE || ev.kind == LT_EV_CALL || ev.kind == LT_EV_RET)) {
            *dt += ev.a[1];
            n[ev.kind == LT_EV_LINE ? 0 : ev.kind == LT_EV_CALL ? 1 : 2]++;
        }
        g_read += (uint64_t)k;
    }
    return 0;
}

/* Runs the function at fn with CALIB_N, plain then traced, once; keeps
 * the fastest of each in lp. Returns -1 on an error. */
static int run_loop(co_state *s, lua_State *L, int fn, loop *lp)
{
    lua_sethook(L, NULL, 0, 0);
    lua_pushvalue(L, fn);
    lua_pushinteger(L, CALIB_N);
    uint64_t t0 = co_clock_ticks(s->use_tsc);
    int e = lua_pcall(L, 1, 0, 0);
    uint64_t plain = co_clock_ticks(s->use_tsc) - t0;
    co_thread_hook(s, L);
    if (e)
        return -1;
    lua_pushvalue(L, fn);
    lua_pushinteger(L, CALIB_N);
    lt_ring_publish(&s->ring);
    uint64_t from = s->ring.pos, dt, n[3];
    s->last = co_clock_ticks(s->use_tsc);
    e = lua_pcall(L, 1, 0, 0);
    lua_sethook(L, NULL, 0, 0);
    if (e || s->lost || sum_events(s, from, &dt, n))
        return -1;
    if (!lp->plain || plain < lp->plain)
        lp->plain = plain;
    if (!lp->traced || dt < lp->traced) {
        lp->traced = dt;
        memcpy(lp->n, n, sizeof n);
    }
    return 0;
}

/* Ticks, clamped to [0, CALIB_MAX]. */
static uint64_t ticks(double r)
{
    return r <= 0 ? 0 : r > CALIB_MAX ? CALIB_MAX : (uint64_t)r;
}

/* Each loop's added ticks an iteration are events x their cost + Lua
 * instructions x traceexec's: the two line loops give a line event's and
 * an instruction's, the call loops then a call's with its return. */
static void solve(const loop lp[NLOOP])
{
    double per[NLOOP];
    for (int k = 0; k < NLOOP; k++)
        per[k] = ((double)lp[k].traced - (double)lp[k].plain) / CALIB_N;
    /* short: 2 lines + 2 instr; lines: 3 lines + 9 instr */
    double instr = (per[1] - 1.5 * per[0]) / 6, line;
    if (instr < 0)
        instr = 0;
    line = per[0] / 2 - instr;
    if (line < 0)
        line = 0;
    g_bias.tick[0] = ticks(line);
    g_bias.tick[3] = ticks(instr * 16); /* per instruction, x16 as CODE's ipl16 */
    for (int k = 2; k < NLOOP; k++) { /* 2 calls: a call and a return each */
        double lines = (double)lp[k].n[0] / CALIB_N;
        g_bias.tick[k - 1] = ticks((per[k] - lines * line - loop_instr[k] * instr) / 2);
    }
}

/* The loops, in s begun as a discarding trace of L (no recorder). */
static int measure(co_state *s, lua_State *L)
{
    int top = lua_gettop(L);
    if (luaL_loadbuffer(L, calib_src, sizeof calib_src - 1, "=(luatrace calibration)"))
        return -1;
    lua_pushcfunction(L, calib_nop);
    if (lua_pcall(L, 1, NLOOP, 0))
        return -1;
    loop lp[NLOOP] = {{0}};
    memset(&g_dec, 0, sizeof g_dec);
    g_read = 0;
    co_attach_begin(s, L, 0); /* as start() does */
    co_thread_current(s, L);
    co_set_active(s, 1);
    for (int rep = 0; rep < CALIB_REPS; rep++)
        for (int k = 0; k < NLOOP; k++)
            if (run_loop(s, L, top + 1 + k, &lp[k]))
                return -1;
    solve(lp);
    lua_settop(L, top);
    return 0;
}

void co_calib_run(lua_State *L, lua_CFunction running)
{
    const char *env = getenv("LUATRACE_COMPENSATE");
    if (g_bias.done || (env && !strcmp(env, "0")))
        return;
    g_bias.done = 1;
    co_state *s = co_module_state(), *was = co_hook_state();
    char err[256];
    int top = lua_gettop(L);
    if (lua_gethook(L))
        return;
    co_calib_discard = 1;
    int e = co_module_begin(s, L, "calibration", NULL, running, err, sizeof err);
    co_calib_discard = 0;
    if (e)
        return;
    co_hook_set_state(s);
    if (measure(s, L) == 0)
        g_bias.ok = 1;
    else
        memset(g_bias.tick, 0, sizeof g_bias.tick);
    lua_sethook(L, NULL, 0, 0);
    lua_settop(L, top);
    co_thread_free(s, L); /* its registry entries */
    co_module_finish(s, LT_R_TROFF);
    co_hook_set_state(was);
}
