/* co_calib: what each hook costs the program outside the hook's own clock
 * reads, measured once before tracing begins (doc/design.md, "Hook
 * overhead compensation").
 *
 * The hook's time is left out of the program's (co_hook.c), but not the
 * part of each event that Lua spends before the hook's first clock read
 * and after its last (traceexec, luaD_callhook, the call and the return)
 * nor the caches the hook displaces. On a loop of short lines that was
 * about 30 ns an event where this was written, as much as the lines: a
 * function with many events looked several times heavier than a C
 * function of the same cost. Lua's traceexec also runs at every
 * instruction while the line hook is set, so a line of many instructions
 * costs more than its event. So four small loops (short lines; long
 * lines; calls of a Lua function; calls of a C function) are run here,
 * traced by the real hook into a ring of its own that nobody reads, and
 * what tracing added per event of each kind and per instruction is sent
 * in a BIAS record: recorderd takes it off every event's time
 * (rd_stack.c). Each loop runs plain and at once traced, CALIB_ROUNDS
 * times, and the median of what tracing added counts, so that a run the
 * OS preempted does not. It takes 18 million instructions (5-10 ms), once per
 * process.
 */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "co_clock.h"
#include "co_state.h"

#define CALIB_N 250    /* iterations per loop */
#define CALIB_ROUNDS 7 /* each loop's median counts: a preempted run does not */
#define CALIB_MAX 4000 /* ticks: a bias above this is no measurement */

/* Four loops; instructions and events an iteration, as luac5.1 -l lists
 * them: short lines (ADD, FORLOOP: 2; 2 lines); long lines (32 ADD,
 * FORLOOP: 33; 2 lines), whose difference is 31 instructions and no event;
 * calls of a Lua function (GETUPVAL, CALL, its RETURN, FORLOOP: 4; 3 lines,
 * a call, a return); calls of a C function (3; 2 lines, a call, a return).
 * Then a wrap generator's (LuaJIT) and the far loop (Lua 5.4): the short
 * loop after 100 instructions it skips (FAR_PAD, ten LOADIs a line). */
#define FAR_PAD "    d = 1 d = 2 d = 3 d = 4 d = 5 d = 6 d = 7 d = 8 d = 9 d = 10\n"
static const char calib_src[] =
    "local nop, wrap, yield = ...\n"
    "local function short(n)\n"
    "  local x = 0\n"
    "  for i = 1, n do\n"
    "    x = x + i\n"
    "  end\n"
    "  return x\n"
    "end\n"
    "local function long(n)\n"
    "  local x = 0\n"
    "  for i = 1, n do\n"
    "    x = x + i + i + i + i + i + i + i + i + i + i + i + i + i + i + i + i"
    " + i + i + i + i + i + i + i + i + i + i + i + i + i + i + i + i\n"
    "  end\n"
    "  return x\n"
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
    "local gen\n"
    "local function wraps(n)\n"
    "  gen = gen or wrap(function() while true do yield() end end)\n"
    "  for _ = 1, n do\n"
    "    gen()\n"
    "  end\n"
    "end\n"
    "local function far(n)\n"
    "  local x, d = 0, 0\n"
    "  if n < 0 then\n"
    FAR_PAD FAR_PAD FAR_PAD FAR_PAD FAR_PAD FAR_PAD FAR_PAD FAR_PAD FAR_PAD FAR_PAD
    "  end\n"
    "  for i = 1, n do\n"
    "    x = x + i\n"
    "  end\n"
    "  return x + d\n"
    "end\n"
    "return short, long, luacalls, ccalls, wrap and yield and wraps, far\n";
/* L_WRAP: a wrap generator resumed n times (LuaJIT's switch_cost only),
 * made once, at its first run (a new one in each run made the GC's steps
 * land in some runs: the plain run of 125 iterations took 16 to 68 ns an
 * iteration), by the library's wrap and yield (calib_loops), never the
 * program's: nil where the program replaced them before loading us */
enum { L_SHORT, L_LONG, L_LUA, L_C, NLOOP, L_WRAP = NLOOP, L_FAR };
static const double loop_instr[NLOOP] = {2, 33, 4, 3};
/* L_FAR: the short loop 103 instructions further into its function (100
 * of them skipped), for Lua 5.4's cost of a line's steps (step_cost) */
#ifdef CO_LUA54
#define CO_STEPS 1
#else
#define CO_STEPS 0
#endif

static co_bias g_bias;

const co_bias *co_calib_bias(void)
{
    return &g_bias;
}

static int calib_nop(lua_State *L)
{
    (void)L;
    return 0;
}

/* One loop's rounds: ticks tracing added an iteration, the hook's own
 * ticks (HOOK), its line hooks' ticks and count (LHOOK), and its events. */
typedef struct loop {
    double added[CALIB_ROUNDS], hook[CALIB_ROUNDS], hline[CALIB_ROUNDS], nline[CALIB_ROUNDS];
    uint64_t n[3]; /* LINE, CALL, RET events of a traced run */
} loop;

/* What the HOOK and LHOOK records of a run add up to. */
typedef struct hooks {
    uint64_t ticks, line_ticks, lines;
} hooks;

/* The ring read so far: short records are read with what the records
 * before them imply, so the stream is read in order from its start; each
 * run is read before the next, so that it never wraps over unread ones. */
static lt_dec g_dec;
static uint64_t g_read;

/* The events in s's ring from byte from on: their dt summed, and counted
 * by kind; the HOOK and LHOOK records' figures added to *h. Returns -1 if
 * they cannot be read. */
static int sum_events(co_state *s, uint64_t from, uint64_t *dt, uint64_t n[3], hooks *h)
{
    lt_event ev;
    *dt = 0;
    memset(n, 0, 3 * sizeof *n);
    if (s->ring.pos - g_read > s->ring.size || g_read > from)
        return -1;
    while (g_read < s->ring.pos) {
        const uint8_t *at = s->ring.data + (g_read & s->ring.mask); /* mirrored */
        int k = lt_dec_next(&g_dec, at, s->ring.pos - g_read, &ev);
        if (k <= 0)
            return -1;
        if (g_read >= from &&
            (ev.kind == LT_EV_LINE || ev.kind == LT_EV_CALL || ev.kind == LT_EV_RET)) {
            *dt += ev.a[1];
            n[ev.kind == LT_EV_LINE ? 0 : ev.kind == LT_EV_CALL ? 1 : 2]++;
        } else if (g_read >= from && ev.kind == LT_EV_HOOK) {
            h->ticks += ev.a[0];
        } else if (g_read >= from && ev.kind == LT_EV_LHOOK) {
            h->line_ticks += ev.a[0];
            h->lines += ev.a[1];
        }
        g_read += (uint64_t)k;
    }
    return 0;
}

/* Runs the function at fn with CALIB_N, plain then at once traced, and
 * keeps what tracing added as lp's round r. Returns -1 on an error. */
static int run_loop(co_state *s, lua_State *L, int fn, loop *lp, int r)
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
    uint64_t from = s->ring.pos, dt;
    hooks h = {0, 0, 0};
    s->hook_sum = s->hook_line = s->hook_nline = 0;
    s->last = co_clock_ticks(s->use_tsc);
    e = lua_pcall(L, 1, 0, 0);
    lua_sethook(L, NULL, 0, 0);
    if (e || s->lost || sum_events(s, from, &dt, lp->n, &h))
        return -1;
    lp->added[r] = ((double)dt - (double)plain) / CALIB_N;
    lp->hook[r] = (double)(h.ticks + s->hook_sum);
    lp->hline[r] = (double)(h.line_ticks + s->hook_line);
    lp->nline[r] = (double)(h.lines + s->hook_nline);
    s->hook_sum = s->hook_line = s->hook_nline = 0;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* Each loop's added ticks an iteration are events x their cost + Lua
 * instructions x traceexec's: the long and short lines differ by
 * instructions only, which gives an instruction's cost, then the short
 * lines a line event's, the call loops a call's with its return. A cost
 * that is not a plausible number means no measurement: no BIAS at all
 * rather than a wrong one. */
static int solve(loop lp[NLOOP], int no_lines)
{
    double m[NLOOP];
    for (int k = 0; k < NLOOP; k++)
        m[k] = median(lp[k].added, CALIB_ROUNDS);
    double instr = (m[L_LONG] - m[L_SHORT]) / (loop_instr[L_LONG] - loop_instr[L_SHORT]);
    if (instr < 0 || no_lines)
        instr = 0;
    double cost[3];
    cost[0] = no_lines ? 0 : (m[L_SHORT] - loop_instr[L_SHORT] * instr) / 2;
    for (int k = L_LUA; k <= L_C; k++) { /* a call and a return an iteration */
        double lines = (double)lp[k].n[0] / CALIB_N;
        cost[k - 1] = (m[k] - lines * cost[0] - loop_instr[k] * instr) / 2;
    }
    for (int k = no_lines; k < 3; k++)
        if (!(cost[k] > 0 && cost[k] < CALIB_MAX))
            return -1;
    if (instr * 16 >= CALIB_MAX)
        return -1;
    double per_round[CALIB_ROUNDS], per_line[CALIB_ROUNDS], events = 0;
    for (int k = 0; k < NLOOP; k++)
        events += (double)(lp[k].n[0] + lp[k].n[1] + lp[k].n[2]);
    for (int r = 0; r < CALIB_ROUNDS; r++) {
        double line = 0, lines = 0;
        per_round[r] = 0;
        for (int k = 0; k < NLOOP; k++) {
            per_round[r] += lp[k].hook[r];
            line += lp[k].hline[r];
            lines += lp[k].nline[r];
        }
        per_round[r] /= events;
        per_line[r] = lines > 0 ? line / lines : 0;
    }
    g_bias.hook16 = (uint64_t)(median(per_round, CALIB_ROUNDS) * 16);
    g_bias.hook16_line = (uint64_t)(median(per_line, CALIB_ROUNDS) * 16);
    for (int k = 0; k < 3; k++)
        g_bias.tick[k] = (uint64_t)cost[k];
    g_bias.tick[3] = (uint64_t)(instr * 16); /* per instruction, x16 as CODE's ipl16 */
    return 0;
}

/* coroutine[k] if the library's (a C function), else nil, read raw
 * from the globals at g: the program's own would run its code. */
static void push_co_cfunction(lua_State *L, int g, const char *k)
{
    lua_pushliteral(L, "coroutine");
    lua_rawget(L, g);
    if (lua_istable(L, -1)) {
        lua_pushstring(L, k);
        lua_rawget(L, -2);
        lua_remove(L, -2);
    }
    if (!lua_iscfunction(L, -1)) {
        lua_pop(L, 1);
        lua_pushnil(L);
    }
}

/* The calibration's loops (NLOOP, then L_WRAP: nil without the library's
 * wrap and yield), made and left on L's stack: 0 or -1. */
static int calib_loops(lua_State *L)
{
    if (luaL_loadbuffer(L, calib_src, sizeof calib_src - 1, "=(luatrace calibration)"))
        return -1;
    lua_pushcfunction(L, calib_nop);
    co_module_push_globals(L);
    int g = lua_gettop(L);
    push_co_cfunction(L, g, "wrap");
    push_co_cfunction(L, g, "yield");
    lua_remove(L, g);
    if (lua_pcall(L, 3, NLOOP + 2, 0))
        return -1;
    return 0;
}

/* s, begun as a discarding trace of L (no recorder), traces L from here
 * as start() does. */
static void trace_here(co_state *s, lua_State *L)
{
    co_attach_begin(s, L, 0);
    co_thread_current(s, L);
    co_set_active(s, 1);
}

/* Lua 5.4 finds a line event's line by walking its function's lineinfo,
 * a step an instruction, from the last absolute line before it (one each
 * 128 instructions at most) or from the function's start: a line far
 * into a function cost 47 ns a hook where the short loop's cost 10.
 * That is what the far loop adds over the short one an iteration, over
 * its line events' extra steps (FAR_STEPS each), in the units of tick[]
 * x16; recorderd takes it off each line times its function's mean steps
 * (WALK, co_lines54.c). */
#define FAR_STEPS 103 /* the far loop's pcs past the short loop's (luac5.4 -l) */
static void step_cost(const loop *shortl, const loop *far)
{
    double d[CALIB_ROUNDS], lines = (double)far->n[0] / CALIB_N;
    for (int r = 0; r < CALIB_ROUNDS; r++)
        d[r] = far->added[r] - shortl->added[r];
    double step = lines > 0 ? median(d, CALIB_ROUNDS) / (lines * FAR_STEPS) : 0;
    g_bias.step16 = step > 0 && step * 16 < CALIB_MAX ? (uint64_t)(step * 16) : 0;
}

/* The loops, in s begun as a discarding trace of L (no recorder). */
static int measure(co_state *s, lua_State *L)
{
    int top = lua_gettop(L);
    if (calib_loops(L))
        return -1;
    loop lp[NLOOP];
    memset(lp, 0, sizeof lp);
    memset(&g_dec, 0, sizeof g_dec);
    g_read = 0;
    trace_here(s, L);
    loop far;
    memset(&far, 0, sizeof far);
    for (int r = -1; r < CALIB_ROUNDS; r++) { /* round -1 warms the caches up */
        for (int k = 0; k < NLOOP; k++)
            if (run_loop(s, L, top + 1 + k, &lp[k], r < 0 ? 0 : r))
                return -1;
        if (CO_STEPS && run_loop(s, L, top + 1 + L_FAR, &far, r < 0 ? 0 : r))
            return -1;
    }
    lua_settop(L, top);
    if (CO_STEPS)
        step_cost(&lp[L_SHORT], &far);
    return solve(lp, 0);
}

/* {====== sampled time: what Lua's own dispatch of a hook costs ======
 * A sampled trace (LUATRACE_TIMING=sample) counts the ticks that land in
 * the collector's hook as the hook's, but not those in Lua's own work for
 * a hook: luaD_callhook around it, and traceexec at every instruction
 * while the line hook is set. Those are what the same loops cost with a
 * hook that only counts its events, over their plain cost: whole loops
 * timed by the thread's CPU clock (a preemption is not counted), no clock
 * read per event, the fastest of CALIB_SROUNDS runs of each (a run that
 * an interrupt hit is slower, never faster), in 1/16 ns: a sampled
 * trace's unit. solve() then gives a line's, a call's with its return and an
 * instruction's cost, which recorderd takes off where each event ran. */
#define CALIB_SN (CALIB_N * 8) /* iterations a run */
/* a wrap generator's run: our hook at a switch is some 0.5 us, so that
 * CALIB_SN of them in every round would add 25 ms to each LuaJIT start */
#define CALIB_WN (CALIB_N * 2)
static int g_iters = CALIB_SN; /* of time_loop's runs */
#define CALIB_SROUNDS 11

static uint64_t g_nev[3]; /* LINE, CALL, RET */
static uint64_t g_hook_tsc; /* the timed hooks' own TSC ticks in a run */

static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)L;
    if (ar->event <= LUA_HOOKLINE)
        g_nev[ar->event == LUA_HOOKLINE ? 0 : ar->event == LUA_HOOKCALL ? 1 : 2]++;
}

/* The counting hook and ours, each between two TSC reads: what runs
 * between them is what the hook's flag (or the collector's own code)
 * makes the hook's under sampled time; the rest is what it costs the
 * program. */
static void timed_count(lua_State *L, lua_Debug *ar)
{
    uint64_t t0 = co_clock_tsc();
    count_hook(L, ar);
    g_hook_tsc += co_clock_tsc() - t0;
}

static void timed_real(lua_State *L, lua_Debug *ar)
{
    uint64_t t0 = co_clock_tsc();
    co_hook(L, ar);
    g_hook_tsc += co_clock_tsc() - t0;
}

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* {------ LuaJIT: its hook dispatch alone ------
 * The loop run from inside a hook (inactive_hook): LuaJIT then calls no
 * hook (callhook returns at once while one runs), but its dispatch stays
 * in hook mode: every call and return goes through the hook stubs and
 * lj_dispatch_call, and the interpreter's handlers after them run slower
 * (the indirect branches that hook mode adds). That slowdown is the most
 * of what the hooks leave on the program's own ticks; the call of the
 * hook itself (callhook's state, lua_Debug, our function), which a
 * counting hook's figure holds too, lands in ticks that are the hook's
 * already (co_tick.c keeps callhook, lj_dispatch_call and the stubs as the
 * hook's). Debited whole, a counting hook's figure took that off twice:
 * tiny calls came out 14 to 24 points light on a machine where it was 9
 * ns an event (measure_dispatch takes the middle of the two). */
static int g_inactive_ref = LUA_NOREF; /* the loop to run, in the registry */
static int g_in_hook; /* the calibration ran inside a hook: its figures are not a start's */
static uint64_t g_inactive_t;          /* its CPU time, 1/16 ns; UINT64_MAX: failed */

static void inactive_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    int ref = g_inactive_ref;
    if (ref == LUA_NOREF)
        return;
    g_inactive_ref = LUA_NOREF; /* once */
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lua_pushinteger(L, g_iters);
    uint64_t t0 = cpu_ns();
    int e = lua_pcall(L, 1, 0, 0);
    uint64_t t = cpu_ns() - t0;
    if (e)
        lua_pop(L, 1);
    g_inactive_t = e ? UINT64_MAX : t * 16;
}

/* CPU time of one run of the loop at fn under LuaJIT's hook dispatch with
 * no hook called (mask: call and return), in 1/16 ns; UINT64_MAX on an
 * error. The hook is entered by the call of calib_nop. */
static uint64_t time_inactive(lua_State *L, int fn, int mask)
{
    lua_pushvalue(L, fn);
    g_inactive_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    int ref = g_inactive_ref;
    g_inactive_t = UINT64_MAX;
    lua_sethook(L, inactive_hook, mask, 0);
    lua_pushcfunction(L, calib_nop);
    int e = lua_pcall(L, 0, 0, 0);
    /* no hook ran: this runs inside one (an attach begins in our hook),
     * where the loop runs in that same dispatch, the hook set and none
     * called */
    if (!e && g_inactive_ref != LUA_NOREF) {
        inactive_hook(L, NULL);
        g_in_hook = 1;
    }
    lua_sethook(L, NULL, 0, 0);
    if (e)
        lua_pop(L, 1);
    luaL_unref(L, LUA_REGISTRYINDEX, ref);
    g_inactive_ref = LUA_NOREF;
    return e ? UINT64_MAX : g_inactive_t;
}
/* }------ */

/* CPU time of one run of the loop at fn, with hook on mask or none (0),
 * in 1/16 ns; UINT64_MAX on an error. */
static uint64_t time_loop(lua_State *L, int fn, lua_Hook hook, int mask)
{
    lua_sethook(L, mask ? hook : NULL, mask, 0);
    lua_pushvalue(L, fn);
    lua_pushinteger(L, g_iters);
    g_hook_tsc = 0;
    uint64_t t0 = cpu_ns();
    int e = lua_pcall(L, 1, 0, 0);
    uint64_t t = cpu_ns() - t0;
    lua_sethook(L, NULL, 0, 0);
    return e ? UINT64_MAX : t * 16;
}

/* Every run of best_runs' last call: its time (1/16 ns) and its timed
 * hooks' TSC ticks, by hook and round. */
#define CALIB_HOOKS 4
typedef struct runs {
    uint64_t t[CALIB_HOOKS][CALIB_SROUNDS], tsc[CALIB_HOOKS][CALIB_SROUNDS];
} runs;
static runs g_runs;

/* The median of what hook a left outside its TSC reads beyond what hook b
 * did, the two side by side in each round of rn, per iteration of n, in
 * 1/16 ns (ns16: a TSC tick in 1/16 ns). Side by side, because the
 * machine's speed moves between rounds: the fastest run of each, one
 * against the other, moved 3 ns a Lua call from one start to the next,
 * these medians 1. */
static double residue_median(const runs *rn, int a, int b, int n, double ns16)
{
    double d[CALIB_SROUNDS];
    for (int r = 0; r < CALIB_SROUNDS; r++)
        d[r] = ((double)rn->t[a][r] - (double)rn->tsc[a][r] * ns16) -
               ((double)rn->t[b][r] - (double)rn->tsc[b][r] * ns16);
    return median(d, CALIB_SROUNDS) / n;
}

/* The fastest of CALIB_SROUNDS runs of the loop at fn under each of n
 * (<= CALIB_HOOKS) hooks (NULL: plain), in 1/16 ns, and the timed hooks'
 * TSC ticks in that run. Returns -1 on an error. */
static int best_runs(lua_State *L, int fn, const lua_Hook *hooks, int n, int mask,
                     uint64_t *best, uint64_t *tsc)
{
    for (int h = 0; h < n; h++)
        best[h] = UINT64_MAX;
    for (int r = -1; r < CALIB_SROUNDS; r++) /* round -1 warms the caches up */
        for (int h = 0; h < n; h++) {
            memset(g_nev, 0, sizeof g_nev);
            uint64_t t = hooks[h] == inactive_hook ? time_inactive(L, fn, mask)
                                                   : time_loop(L, fn, hooks[h], hooks[h] ? mask : 0);
            if (t == UINT64_MAX)
                return -1;
            if (r < 0)
                continue;
            g_runs.t[h][r] = t;
            g_runs.tsc[h][r] = g_hook_tsc;
            if (t < best[h]) {
                best[h] = t;
                tsc[h] = g_hook_tsc;
            }
        }
    return 0;
}

/* LuaJIT: what a coroutine switch costs the program beyond the C calls
 * that make it (the wrap's and yield's, c_call each as recorderd debits
 * them), per switch in 1/16 ns, from rn: a wrap generator's loop (two
 * switches an iteration) run plain (hook 0), under the counting hook (1:
 * what LuaJIT's dispatch of a hook adds), and under ours (2) and the
 * counting hook (3) each between TSC reads (ns16: a TSC tick in 1/16
 * ns): the difference of those two outside their reads is what ours
 * leaves beyond the counting hook's. Our hook does more at a switch (the
 * threads' ids) and displaces more of the caches than at a call; left
 * on the program, a wrap generator's part of a pair came out 10 to 12
 * points heavy. The medians of each round's differences, the hooks side
 * by side (residue_median). 0 if nothing plausible was measured. */
static uint64_t switch_cost(const runs *rn, double calls, double c_call, double ns16)
{
    double added[CALIB_SROUNDS];
    for (int r = 0; r < CALIB_SROUNDS; r++)
        added[r] = (double)rn->t[1][r] - (double)rn->t[0][r];
    double sw = (median(added, CALIB_SROUNDS) / CALIB_WN + residue_median(rn, 2, 3, CALIB_WN, ns16) -
                 calls * c_call) / 2;
    return sw > 0 && sw < 4 * c_call ? (uint64_t)sw : 0;
}

/* LuaJIT: what our hook leaves on the program beyond what the counting
 * hook does, per iteration of the loops at first + k (1/16 ns), added to
 * theirs. A hook of ours displaces more of the interpreter's caches than
 * one that only counts (a C call: about 1 ns more here). Both hooks are
 * timed between TSC reads and their time inside taken out: the
 * difference is our hook's extra (residue_median). Then a switch's cost
 * (switch_cost).
 * Runs our hook in s, a discarding trace. Where it measures nothing, lp
 * stays as it was: the counting hook's alone. */
static void real_residue(co_state *s, lua_State *L, int first, loop lp[NLOOP])
{
    int no_clock = s->no_clock, use_tsc = s->use_tsc;
    s->no_clock = 1; /* as sampled time's events: no clock read */
    s->use_tsc = 0;
    s->lines_sampled = 1;
    trace_here(s, L);
    uint64_t a0, n0, a1, n1;
    co_clock_pair(1, &a0, &n0);
    static const lua_Hook hooks[2] = {timed_count, timed_real};
    static const lua_Hook wrap_hooks[CALIB_HOOKS] = {NULL, count_hook, timed_real, timed_count};
    uint64_t best[CALIB_HOOKS], tsc[CALIB_HOOKS];
    static runs rn[NLOOP + 1]; /* by loop */
    int e = 0;
    for (int k = L_LUA; k <= L_C && !e; k++) {
        e = best_runs(L, first + k, hooks, 2, LUA_MASKCALL | LUA_MASKRET, best, tsc);
        rn[k] = g_runs;
    }
    g_iters = CALIB_WN;
    int we = e || lua_isnil(L, first + L_WRAP) ||
             best_runs(L, first + L_WRAP, wrap_hooks, CALIB_HOOKS,
                       LUA_MASKCALL | LUA_MASKRET, best, tsc);
    rn[L_WRAP] = g_runs;
    g_iters = CALIB_SN;
    double wcalls = (double)g_nev[1] / CALIB_WN; /* timed_count's, the last run */
    co_clock_pair(1, &a1, &n1);
    co_set_active(s, 0);
    s->no_clock = no_clock;
    s->use_tsc = use_tsc;
    if (e || a1 <= a0 || n1 <= n0)
        return;
    double ns16 = 16.0 * (double)(n1 - n0) / (double)(a1 - a0); /* a TSC tick */
    for (int k = L_LUA; k <= L_C; k++) {
        double d = residue_median(&rn[k], 1, 0, CALIB_SN, ns16);
        /* a small correction (about 1 ns a C call, a tenth of the loop's
         * figure): one as large as half the figure is a run the machine
         * disturbed, and the counting hook's figure stands alone */
        if (d > 0.5 * lp[k].added[0] || d < -0.5 * lp[k].added[0])
            continue;
        for (int r = 0; r < CALIB_ROUNDS; r++)
            lp[k].added[r] += d;
    }
    if (!we) /* a C call's debit: its loop's whole figure (no return event) */
        g_bias.switch16 = switch_cost(&rn[L_WRAP], wcalls, lp[L_C].added[0], ns16);
}

static int measure_dispatch(co_state *s, lua_State *L)
{
    int top = lua_gettop(L);
    if (calib_loops(L))
        return -1;
    loop lp[NLOOP];
    memset(lp, 0, sizeof lp);
    int no_lines = co_module_lines_sampled(); /* no line hook: the calls only */
    int mask = no_lines ? LUA_MASKCALL | LUA_MASKRET : CO_MASK_ALL;
    /* LuaJIT's calls: its hook dispatch alone too (inactive_hook), the
     * counting hook last (its events counted) */
    int jit_calls = co_jit_is() && no_lines;
    static const lua_Hook hooks[3] = {NULL, inactive_hook, count_hook};
    int nh = jit_calls ? 3 : 2;
    const lua_Hook *hk = jit_calls ? hooks : (const lua_Hook[2]){NULL, count_hook};
    double dispatch[NLOOP] = {0};
    loop far;
    int nloop = CO_STEPS && !no_lines ? L_FAR + 1 : NLOOP;
    for (int k = no_lines ? L_LUA : 0; k < nloop; k++) {
        uint64_t best[3], tsc[3];
        loop *l = k == L_FAR ? &far : k < NLOOP ? &lp[k] : NULL;
        if (!l)
            continue;
        if (best_runs(L, top + 1 + k, hk, nh, mask, best, tsc))
            return -1;
        for (int r = 0; r < CALIB_ROUNDS; r++)
            l->added[r] = ((double)best[nh - 1] - (double)best[0]) / CALIB_SN;
        if (jit_calls && k < NLOOP)
            dispatch[k] = ((double)best[1] - (double)best[0]) / CALIB_SN;
        for (int e = 0; e < 3; e++) /* as a run of CALIB_N iterations counts them */
            l->n[e] = g_nev[e] * CALIB_N / CALIB_SN;
    }
    if (nloop > NLOOP)
        step_cost(&lp[L_SHORT], &far);
    double counting[NLOOP];
    for (int k = 0; k < NLOOP; k++)
        counting[k] = lp[k].added[0];
    if (co_jit_is() && no_lines && s->use_tsc)
        real_residue(s, L, top + 1, lp); /* on the counting hook's figures */
    /* The program's share lies between the two figures: the dispatch's
     * alone is too little (a hook that runs displaces more of the caches
     * and branch predictors the handlers use than none does: 5 to 6.5 ns
     * an event left on the program of 32 M calls, against 3.5), the
     * counting hook's too much (its call, whose ticks are the hook's: 9.3).
     * The middle of the two is off by half their gap at most, either way
     * (what our hook leaves beyond the counting hook, real_residue's, is
     * kept on top). A dispatch dearer than the dispatch and the hook
     * together is no measurement: the counting hook's figure stands. */
    for (int k = L_LUA; jit_calls && k <= L_C; k++)
        if (dispatch[k] > 0 && dispatch[k] < counting[k])
            for (int r = 0; r < CALIB_ROUNDS; r++)
                lp[k].added[r] -= (counting[k] - dispatch[k]) / 2;
    lua_settop(L, top);
    g_bias.in16 = 1;
    return solve(lp, no_lines);
}
/* }====================================================================== */

/* A process whose rdtsc raises SIGSEGV (PR_SET_TSC, which the vDSO's
 * clocks read too) may still be traced without a clock: recorderd listen
 * --coverage says so only once the trace begins, after this ran. */
static int tsc_forbidden(void)
{
    int mode = 0;
    return prctl(PR_GET_TSC, &mode, 0, 0, 0) == 0 && mode == PR_TSC_SIGSEGV;
}

/* state_ok: the attach's verdict on the fast path, or -1 to verify it
 * from running, as a trace begun by tron or at load does. */
static void calibrate_now(lua_State *L, lua_CFunction running, int state_ok, int sampled)
{
    g_bias.done = 1;
    co_state *s = co_module_state(), *was = co_hook_state();
    char err[256];
    int top = lua_gettop(L);
    if (lua_gethook(L))
        return;
    if (co_module_begin_calib(s, L, running, err, sizeof err))
        return;
    if (state_ok >= 0) { /* as co_attach.c begins a trace */
        s->state_ok = s->layout_ok && state_ok;
        co_func_fast_path(s);
    }
    co_hook_set_state(s);
    if (!s->no_clock && (sampled ? measure_dispatch(s, L) : measure(s, L)) == 0) {
        g_bias.ok = 1;
        /* a dear moment's figures: the user's cheaper ones; not those of a
         * calibration inside a hook (an attach's), measured otherwise */
        if (sampled && co_jit_is() && co_module_lines_sampled() && !g_in_hook)
            co_calhist_apply(&g_bias);
    } else
        memset(g_bias.tick, 0, sizeof g_bias.tick);
    lua_sethook(L, NULL, 0, 0);
    lua_settop(L, top);
    co_thread_free(s, L); /* its registry entries */
    co_module_finish(s, LT_R_TROFF);
    co_hook_set_state(was);
    co_attach_serve_pending(); /* a request that came meanwhile found s active */
}

/* Lines by sample under Lua 5.1: no line hook, and ticks in Lua's code
 * that calls the hook are the hook's (co_tick.c): nothing to estimate.
 * LuaJIT: the JIT off for the loops, plain and traced alike, as it is
 * while tracing; then as the program had it (a listening process is not
 * traced yet), silently. */
static void calibrate(lua_State *L, lua_CFunction running, int state_ok)
{
    const char *env = getenv("LUATRACE_COMPENSATE"), *timing = getenv("LUATRACE_TIMING");
    int sampled = timing && !strcmp(timing, "sample");
    if (sampled && co_module_lines_sampled() && !co_jit_is())
        return;
    if (g_bias.done || (env && !strcmp(env, "0")) || tsc_forbidden())
        return;
    if (co_jit_is())
        co_jit_listen(L); /* jit.status, for co_jit_suspend to ask */
    int jit_was_on = co_jit_is() && co_jit_suspend(L);
    calibrate_now(L, running, state_ok, sampled);
    if (jit_was_on)
        co_jit_restore(L);
}

void co_calib_run(lua_State *L, lua_CFunction running)
{
    calibrate(L, running, -1);
}

void co_calib_run_state(lua_State *L, int state_ok)
{
    calibrate(L, NULL, state_ok);
}
