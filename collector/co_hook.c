/* co_hook: the debug hook, the collector's hot path. Per event: two clock
 * reads (one with LUATRACE_TIMING=fast, none with LUATRACE_TIMING=none: a
 * coverage run, every dt 0), a few stores into the ring; a call
 * adds a closure read and a cache lookup. No syscall, lock or allocation
 * unless the ring is full or a function is seen for the first time.
 *
 * Time between hooks is the program's; time inside them is not: dt of an
 * event runs from the end of the previous hook to the start of this one.
 * Reading the clock at the end of every hook costs about 4 ns per event
 * here. LUATRACE_TIMING=fast measures the end on one event in about
 * CO_SAMPLE_EVERY and on every hook that took a slow path (interning, a
 * full ring, a thread switch); the others end at their start plus a
 * running mean of the measured hook cost of their kind. The mean is right
 * on average but not per function: hooks that run cheaper than the mean
 * (tiny hot functions) lose a little time to the others, up to a fifth of
 * their self time on luacheck (doc/design.md), hence not the default.
 */
#include <stdatomic.h>

#include "co_clock.h"
#include "co_func.h"

/* The hook has no user pointer: one traced state per process. Never
 * NULL, so that the hook tests one flag (lean) first: g_dormant (all 0)
 * stands for none. */
static co_state g_dormant;
static co_state *g_state = &g_dormant;

#ifdef CO_LUA54
co_ci54 co_ci54_last;

/* co_ci54_depth's slow path: ci is not the last event's (co_state.h). */
uint32_t co_ci54_move(const void *ci)
{
    co_ci54 *c = &co_ci54_last;
    const void *prev = co_ci_prev(ci);
    uint32_t d, j = 0;
    int walk = !c->n || ++c->moves % CO_CI_CHECK == 0;
    while (!walk && j < c->n && ci != c->anc[j])
        j++;
    if (walk)
        d = co_ci_depth(ci);
    else if (j < c->n) /* a return to a caller, or a line in it */
        d = c->depth - j;
    else if (prev == c->anc[0]) /* a call from the last one */
        d = c->depth + 1;
    else
        d = co_ci_depth(ci);
    c->anc[0] = ci;
    for (j = 1; j < CO_CI_ANC && prev; j++, prev = co_ci_prev(prev))
        c->anc[j] = prev;
    c->n = j;
    c->depth = d;
    return d;
}
#endif

co_state *co_hook_state(void)
{
    return g_state == &g_dormant ? NULL : g_state;
}

void co_hook_set_state(co_state *s)
{
    g_state = s ? s : &g_dormant;
    co_ci54_forget();
}

#define CO_INLINE static inline __attribute__((always_inline))

void co_hook_flush_gap(co_state *s)
{
    (void)co_out_gap(s);
}

int co_hook_thread_record(co_state *s, uint32_t id, lua_State *T)
{
    uint8_t *p = co_out_hot(s);
    if (!p)
        return 0;
    uint8_t *q = lt_put_head(p, LT_EV_THREAD, 2);
    q = lt_put_uint(q, id);
    q = lt_put_uint(q, (uint64_t)(uintptr_t)T);
    co_out_hot_end(s, p, q);
    return 1;
}

/* A RESUME or YIELD record at p; depth: where thread id's next record is,
 * which it implies. */
CO_INLINE void put_switch(co_state *s, uint8_t *p, int resumed, uint64_t dt, uint32_t id,
                          uint32_t depth, int dead)
{
    uint8_t *q = lt_put_head(p, resumed ? LT_EV_RESUME : LT_EV_YIELD, resumed ? 3 : 4);
    q = lt_put_uint(q, dt);
    q = lt_put_uint(q, id);
    q = lt_put_uint(q, depth);
    if (!resumed)
        *q++ = (uint8_t)dead;
    s->depth = depth; /* as after a CALL, LINE or RET */
    s->depth_end = co_out_hot_end(s, p, q);
}

int co_hook_switch_record(co_state *s, int resumed, uint64_t dt, uint32_t id, uint32_t depth,
                          int dead)
{
    uint8_t *p = co_out_hot(s);
    if (p)
        put_switch(s, p, resumed, dt, id, depth, dead);
    return p != NULL;
}

int co_hook_ret_record(co_state *s, uint32_t depth)
{
    return co_hook_ret_record_dt(s, depth, 0);
}

int co_hook_ret_record_dt(co_state *s, uint32_t depth, uint64_t dt)
{
    uint8_t *p = co_out_hot(s);
    if (!p)
        return 0;
    uint8_t *q = lt_put_head(p, LT_EV_RET, 2);
    q = lt_put_uint(q, depth);
    q = lt_put_uint(q, dt);
    uint64_t pos = co_out_hot_end(s, p, q);
    s->depth = depth ? depth - 1 : 0; /* what it implies, as on_ret */
    s->depth_end = depth ? pos : UINT64_MAX;
    return 1;
}

/* The frame on top before the event ar: a call's caller. */
CO_INLINE uint32_t depth_before(const lua_Debug *ar)
{
    uint32_t d = CO_EV_DEPTH(ar);
    return d - (ar->event == LUA_HOOKCALL && d > 0);
}

static void stack_record(co_state *s, lua_State *L, uint32_t id, unsigned reason, int from);

/* A line (or count) hook called on a thread whose status is LUA_YIELD is
 * taken by Lua 5.1's VM for a hook that yielded: luaV_execute returns
 * with the function's frame left on the stack (5.4 throws LUA_YIELD). A
 * thread has that status while suspended, and C can still call Lua on it
 * (luv, required inside a coroutine under 5.1, keeps that thread and runs
 * its callbacks there): under the line hook those calls never returned
 * and the program broke (collector-suspendedcall). So such a thread runs
 * without the line hook, its calls and returns still traced, until it is
 * seen running (status 0: resumed for real), when the hook gets it back,
 * as do the coroutines it created meanwhile (they inherited its mask).
 * Not under LuaJIT, whose one hook is every thread's and which has no
 * such test. */
static void __attribute__((noinline)) lines_guard_slow(co_state *s, lua_State *L, int suspended)
{
    if (lua_gethook(L) != co_hook || (co_nchain && co_chain_find(L)))
        return; /* a chained thread's mask and count are the program's */
    int mask = lua_gethookmask(L);
    if (suspended && (mask & LUA_MASKLINE)) {
        lua_sethook(L, co_hook, mask & ~LUA_MASKLINE, lua_gethookcount(L)); /* its id */
        s->lines_off = 1;
    } else if (!suspended && !(mask & LUA_MASKLINE)) {
        lua_sethook(L, co_hook, mask | LUA_MASKLINE, lua_gethookcount(L));
    }
}

/* On a switch to L, of status st: lines_guard_slow where it may act. */
CO_INLINE void lines_guard(co_state *s, lua_State *L, unsigned st)
{
    if (__builtin_expect((st == LUA_YIELD || s->lines_off) && (CO_MASK & LUA_MASKLINE) &&
                             !s->jit,
                         0))
        lines_guard_slow(s, L, st == LUA_YIELD);
}

/* The thread of the last record may have resumed another where Lua runs
 * no hooks (co_untraced.c): the switch takes switch_slow. While such a
 * thread is known (nuntraced), slow_at is 0 (co_out.c): every event takes
 * any_event, which the fast paths' ring test sends there. */
CO_INLINE int maybe_untraced(const co_state *s)
{
    return s->nuntraced || lr_hooks_off(s->cur_L);
}

/* Whether L, a thread never seen, has frames below its event's (its
 * first event is not its body's call): it started where no hook is
 * called, and yielded. LuaJIT calls none in a __gc finalizer or a
 * jit.attach handler, whatever thread they resume. Its frames come from
 * its stack then, not as unknown ones. */
static int ran_unseen(lua_State *L, const lua_Debug *ar)
{
    lua_Debug below;
    return lua_getstack(L, ar->event == LUA_HOOKCALL, &below);
}

/* L runs now, another thread ran the previous event. R if that thread is
 * still running (it resumed L), Y if it yielded, finished or died; the
 * previous thread is alive (anchored), whatever the program did since.
 * Returns 0 if a record could not be written (drop mode, full ring): the
 * switch is then not taken, so the next event in L tries again rather than
 * landing on the wrong thread's stack. 1: dt went with the switch; 2: it
 * goes with the event (co_untraced_switch). */
static int __attribute__((noinline)) switch_slow(co_state *s, lua_State *L, const lua_Debug *ar,
                                                 uint64_t dt)
{
    co_hook_slow(s);
    /* LuaJIT's event looked L up already (co_jit_event); the entry is
     * checked again */
    uint32_t id = L == s->seen_L && s->th.t[s->seen_id] == L ? s->seen_id : co_thread_known(s, L);
    if (!id && (id = co_thread_revive(s, L))) {
        unsigned why = L == co_rehook_other ? LT_R_REHOOKED : LT_R_HOOKED;
        co_rehook_other = why == LT_R_REHOOKED ? NULL : co_rehook_other;
        stack_record(s, L, id, why, ar->event == LUA_HOOKCALL); /* not the callee */
    }
    if (!id && (id = co_thread_new(s, L)) && ran_unseen(L, ar))
        stack_record(s, L, id, LT_R_HOOKED, ar->event == LUA_HOOKCALL);
    if (!id)
        return 0;
    lines_guard(s, L, (unsigned)lua_status(L));
    int st;
    int resumed = co_thread_resumed(s, s->cur_L, &st);
    int r = s->thread_ok && maybe_untraced(s)
                ? co_untraced_switch(s, L, id, depth_before(ar), dt, resumed, st != LUA_YIELD)
                : -1;
    if (r < 0) { /* the switch as usual */
        uint8_t *p = co_out_hot(s);
        if (!p)
            return 0;
        put_switch(s, p, resumed, dt, id, depth_before(ar), st != LUA_YIELD);
        r = 1;
    }
    if (!r)
        return 0;
    if (!resumed && st != LUA_YIELD)
        co_thread_dead(s, s->cur_id);
    co_thread_anchor(s, L);
    s->cur_id = id;
    return r;
}

/* Thread id of L if the switch to L needs only reads of fields (the
 * layout is verified, L is known) and the ring's fast path, else 0. */
CO_INLINE uint32_t switch_fast_id(const co_state *s, lua_State *L)
{
    uint32_t id;
    if (!s->thread_ok) /* no 5.1 layout: not even a read of the count */
        return 0;
    uintptr_t e = co_tag_entry(&s->th, (uint32_t)lr_int_at(L, LS_HOOKCOUNT), &id);
    return e == (uintptr_t)L && s->ring.pos <= s->slow_at &&
                   !lr_hooks_off(s->cur_L)
               ? id
               : 0;
}

/* The switch to L (id: switch_fast_id's) on the fast path; depth: the
 * record's (depth_before). */
CO_INLINE void switch_fast(co_state *s, lua_State *L, uint32_t depth, uint64_t dt, uint32_t id)
{
    lines_guard(s, L, ((const uint8_t *)L)[LS_STATUS]);
    const char *o = (const char *)s->cur_L;
    unsigned st = (uint8_t)o[LS_STATUS];
    int resumed = st == 0 ? lr_ptr_at(o, LS_CI) > lr_ptr_at(o, LS_BASE_CI) ||
                                o == (const char *)s->th.main
                          : st == LUA_YIELD && co_func_top_resumes(s, s->cur_L);
    int dead = st != LUA_YIELD;
    put_switch(s, s->ring.data + (s->ring.pos & s->ring.mask), resumed, dt, id, depth, dead);
    if (!resumed && dead)
        co_thread_dead(s, s->cur_id);
    void *slot = (void *)lr_ptr_at(s->th.anchor, LS_BASE); /* co_thread_anchor */
    memcpy(slot, &L, sizeof L);
    s->cur_L = L;
    s->cur_id = id;
}

/* switch_slow's commonest case (switch_fast_id): a leaf function, so that
 * it saves few registers. Every other case goes there. */
static int __attribute__((noinline)) switch_thread(co_state *s, lua_State *L, const lua_Debug *ar,
                                                   uint64_t dt)
{
    uint32_t id = switch_fast_id(s, L);
    if (!id)
        return switch_slow(s, L, ar, dt);
    switch_fast(s, L, depth_before(ar), dt, id);
    co_hook_slow(s); /* LUATRACE_TIMING=fast: measure this hook's end */
    return 1;
}

void co_hook_resume_record(co_state *s, lua_State *co)
{
    lua_Debug ar;
    uint32_t id = co_thread_id(s, co);
    uint8_t *p = id ? co_out_hot(s) : NULL;
    if (p)
        put_switch(s, p, 1, 0, id,
                   s->jit ? co_jit_depth(co)
                   : lua_getstack(co, 0, &ar) ? CO_AR_DEPTH(&ar) : 0, 0);
}

/* The coroutine a resume call is about to run: its first argument. */
static lua_State *resume_arg(co_state *s, lua_State *L, lua_Debug *ar)
{
    lua_State *co = NULL;
    if (s->thread_ok) { /* at a C function's call hook, its arguments are base..top */
        const char *base = lr_ptr_at(L, LS_BASE), *top = lr_ptr_at(L, LS_TOP);
        if (top > base && lr_int_at(base, TV_TT) == LUA_TTHREAD)
            co = (lua_State *)lr_ptr_at(base, 0);
    } else if (lua_getlocal(L, ar, 1)) {
        co = lua_tothread(L, -1);
        lua_pop(L, 1);
    }
    return co;
}

static lua_Hook hook_of(const co_state *s, lua_State *co)
{
    if (!s->thread_ok)
        return lua_gethook(co);
    lua_Hook h;
    memcpy(&h, (const char *)co + LS_HOOK, sizeof h);
    return h;
}

/* The coroutine of the coroutine.wrap function of frame ar: its upvalue
 * (it stays alive: the running closure holds it). */
/* The thread in the first upvalue of closure cl (a wrap function's), or
 * NULL. */
CO_INLINE lua_State *closure_thread(const uint8_t *cl)
{
    return cl[CL_ISC] && lr_int_at(cl + CL_UPV0, TV_TT) == LUA_TTHREAD
               ? (lua_State *)lr_ptr_at(cl + CL_UPV0, 0)
               : NULL;
}

static lua_State *wrap_thread(co_state *s, lua_State *L, lua_Debug *ar)
{
    lua_State *co = NULL;
    if (s->state_ok) /* read from the CClosure: no API call on each resume */
        return closure_thread(co_func_closure(L, ar));
    lua_getinfo(L, "f", ar);
    if (lua_getupvalue(L, -1, 1)) {
        co = lua_tothread(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return co;
}

/* The coroutine a resume or wrap call is about to run (hooked if it had
 * no hook; one of the program's own stays, co_dbghook.c); a wrap call gets
 * its body's function id. */
static uint32_t __attribute__((noinline))
resume_target(co_state *s, lua_State *L, lua_Debug *ar, uint32_t flags, uint32_t fid)
{
    lua_State *co = flags & LT_FF_RESUME ? resume_arg(s, L, ar) : wrap_thread(s, L, ar);
    if (co && co != L && hook_of(s, co) == NULL)
        co_hook_attach_thread(s, L, co);
    if (!(flags & LT_FF_WRAP))
        return fid;
    uint32_t body = co_func_wrap_fast(s, co);
    return body ? body : co_func_wrap_id(s, L, ar, co, fid);
}

/* coroutine.close (5.4): the coroutine runs its pending __close
 * metamethods on its own thread, its frames already gone (the reset
 * unwinds it to its base first). One suspended since before an attach had
 * no hook, and those calls went unseen: hooked here as a thread that never
 * ran (no snapshot: none of its frames is left), as a resume hooks its
 * target. A thread traced from its start has its hook already. */
static uint32_t __attribute__((noinline))
close_target(co_state *s, lua_State *L, lua_Debug *ar, uint32_t fid)
{
    lua_State *co = resume_arg(s, L, ar);
    if (co && co != L && hook_of(s, co) == NULL)
        co_thread_hook(s, co);
    return fid;
}

/* Short forms (lt_event.h) apply while nothing was written since the
 * record that implies them (no other record, no GAP: the ring position is
 * still the one after it, read after co_out_hot) and the event fits. */
CO_INLINE void implies(co_state *s, uint64_t pos, uint32_t depth)
{
    s->depth = depth;
    s->depth_end = pos;
}

/* A call's record at p (the ring position), once its fid is known. */
CO_INLINE void put_call_at(co_state *s, uint8_t *p, const lua_Debug *ar, uint64_t dt, uint32_t fid)
{
    uint32_t depth = CO_EV_DEPTH(ar);
    uint8_t *q;
    if (s->ring.pos == s->depth_end && depth == s->depth + 1) {
        q = lt_put_short(p, LT_SHORT_CALL, dt);
    } else {
        q = lt_put_head(p, LT_EV_CALL, 3);
        q = lt_put_uint(q, depth);
        q = lt_put_uint(q, dt);
    }
    q = lt_put_uint(q, fid);
    implies(s, co_out_hot_end(s, p, q), depth);
}

CO_INLINE void put_call(co_state *s, lua_Debug *ar, uint64_t dt, uint32_t fid)
{
    uint8_t *p = co_out_hot(s);
    if (p)
        put_call_at(s, p, ar, dt, fid);
}

/* Whether the call ar (a Lua function's: a C function never takes its
 * caller's place) is a tail call: 5.4 says so (TAILCALL), LuaJIT's shadow
 * stack does (the call at its caller's slot), and under 5.1 the caller is
 * a Lua function whose last instruction is OP_TAILCALL (29: 5.1's
 * lopcodes.h; luaD_precall saved its pc before the hook). */
CO_INLINE int tail_call(const co_state *s, lua_State *L, const lua_Debug *ar)
{
    if (CO_EV_TAIL(ar) || s->jit_tail)
        return 1;
#ifdef CO_LUA54
    (void)L;
    return 0;
#else
    if (!s->state_ok || ar->i_ci < 2)
        return 0;
    /* the caller's pc first (a C function's CallInfo keeps a Lua one's pc,
     * copied by luaD_precall: a pointer into code, or NULL at the base) */
    const char *ci = (const char *)lr_ptr_at(L, LS_BASE_CI) + (ptrdiff_t)(ar->i_ci - 1) * CI_SIZE;
    const uint32_t *pc = lr_ptr_at(ci, CI_SAVEDPC);
    if (__builtin_expect(!pc || (pc[-1] & 0x3f) != 29, 1))
        return 0;
    const uint8_t *caller = lr_ptr_at(lr_ptr_at(ci, CI_FUNC), 0);
    return !caller[CL_ISC] && !co_func_closure(L, ar)[CL_ISC];
#endif
}

/* A tail call under lines by sample: recorderd learns where the callee
 * stands from its next record (one less deep: it took its caller's
 * place, rd_stack.c), and one that raised before any record of its own
 * stayed a call under its caller. A LINE of line 0 (no line, no hit) at
 * the caller's depth says it at once. */
static void __attribute__((noinline)) put_tail(co_state *s, uint32_t depth)
{
    uint8_t *p = co_out_hot(s);
    if (!p)
        return;
    uint8_t *q = lt_put_head(p, LT_EV_LINE, 3);
    q = lt_put_uint(q, depth);
    q = lt_put_uint(q, 0);
    q = lt_put_uint(q, 0);
    uint64_t pos = co_out_hot_end(s, p, q);
    s->line_prev = 0;
    s->line_end = pos;
    implies(s, pos, depth);
}

/* After the record of call ar, a Lua function's. */
CO_INLINE void after_call(co_state *s, lua_State *L, const lua_Debug *ar)
{
    if (__builtin_expect(s->lines_sampled, 1) && tail_call(s, L, ar) && CO_EV_DEPTH(ar) > 1)
        put_tail(s, CO_EV_DEPTH(ar) - 1);
}

CO_INLINE void on_call(co_state *s, lua_State *L, lua_Debug *ar, uint64_t dt)
{
    uint32_t flags = 0;
    uint32_t fid = co_func_id(s, L, ar, &flags);
    if (__builtin_expect(flags & (LT_FF_RESUME | LT_FF_WRAP | CO_FF_OWN), 0))
        fid = flags & CO_FF_BYARG   ? co_func_arg_id(s, L, ar, fid)
              : flags & CO_FF_CLOSE ? close_target(s, L, ar, fid)
                                    : resume_target(s, L, ar, flags, fid);
    if (fid)
        put_call(s, ar, dt, fid);
    if (fid)
        after_call(s, L, ar);
    if (__builtin_expect(flags & CO_FF_SIGS, 0)) /* it may set a signal's handler */
        co_sigwatch_after(s);
    /* a yield while a thread resumed with hooks off: co_untraced_again
     * looks at the next event (any_event, nuntraced: slow_at is 0) */
    if (__builtin_expect(s->nuntraced != 0, 0) && (flags & LT_FF_YIELD))
        s->yield_depth = CO_EV_DEPTH(ar);
}

/* p: where the record goes (co_out_hot) */
CO_INLINE void on_ret(co_state *s, lua_Debug *ar, uint64_t dt, uint8_t *p)
{
    uint32_t depth = CO_EV_DEPTH(ar);
    uint8_t *q;
    if (s->ring.pos == s->depth_end && depth == s->depth) {
        q = lt_put_short(p, LT_SHORT_RET, dt);
    } else {
        q = lt_put_head(p, LT_EV_RET, 2);
        q = lt_put_uint(q, depth);
        q = lt_put_uint(q, dt);
    }
    uint64_t pos = co_out_hot_end(s, p, q);
    if (depth > 0)
        implies(s, pos, depth - 1);
    else
        s->depth_end = UINT64_MAX;
}

CO_INLINE void on_line(co_state *s, lua_Debug *ar, uint64_t dt, uint8_t *p)
{
    uint32_t line = ar->currentline > 0 ? (uint32_t)ar->currentline : 0;
    uint32_t depth = CO_EV_DEPTH(ar);
    uint64_t pos = s->ring.pos;
    /* in [0, BIAS + MAX] when the change of line fits a step */
    uint64_t biased = (uint64_t)((int64_t)line - s->line_prev + LT_STEP_BIAS);
    uint8_t *q;
    if (pos == s->line_end && depth == s->depth && biased <= LT_STEP_BIAS + LT_STEP_MAX) {
        q = lt_put_step(p, (int)biased - LT_STEP_BIAS, dt);
    } else if (pos == s->depth_end && depth == s->depth) {
        q = lt_put_short(p, LT_SHORT_LINE, dt);
        q = lt_put_uint(q, line);
    } else {
        q = lt_put_head(p, LT_EV_LINE, 3);
        q = lt_put_uint(q, depth);
        q = lt_put_uint(q, dt);
        q = lt_put_uint(q, line);
    }
    s->line_prev = line;
    pos = co_out_hot_end(s, p, q);
    s->line_end = pos;
    implies(s, pos, depth);
}

/* A hook's own ticks, into the sums that HOOK and (a line's) LHOOK send:
 * the line hooks' scale the compensation. */
static inline void hook_spent(co_state *s, int ev, uint64_t ticks)
{
    s->hook_sum += ticks;
    if (ev == LUA_HOOKLINE) {
        s->hook_line += ticks;
        s->hook_nline++;
    }
}

/* The end of a measured hook: updates its kind's mean (x16, weight 1/8).
 * Slow paths and preemptions (over 2^16 ticks) are left out, and a sample
 * counts at most 4x the mean, so that one cache-miss storm does not eat
 * the program time of the events after it. The next measured hook is
 * 1/2..3/2 CO_SAMPLE_EVERY events away, at random: a fixed period would
 * see the same spot of a periodic program every time. */
static void __attribute__((noinline)) measure_end(co_state *s, uint64_t t0, int ev)
{
    uint64_t t1 = co_clock_ticks(s->use_tsc);
    uint64_t cost = co_preempt_off(s, t1 - t0);
    uint32_t est = s->hook_est[ev];
    if (!s->slow && cost < (1u << 16)) {
        hook_spent(s, ev, cost);
        if (est && cost * 16 > (uint64_t)est * 4)
            cost = est / 4;
        s->hook_est[ev] = est == 0 ? (uint32_t)cost * 16 : est - est / 8 + (uint32_t)cost * 2;
        s->hook_ticks[ev] = s->hook_est[ev] / 16;
    }
    s->slow = 0;
    s->rng ^= s->rng << 13; /* xorshift64 */
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    s->sample_left = s->sample_every / 2 + (uint32_t)(s->rng % s->sample_every);
    if (s->sample_every == 1 || s->hook_est[ev] == 0) /* nothing to estimate with yet */
        s->sample_left = 1;
    s->last = t1;
}

CO_INLINE void hook_end(co_state *s, uint64_t t0, int ev)
{
    if (s->sample_every == 1) { /* exact, the default; or no clock */
        s->last = co_now(s);
        (void)co_preempt_off(s, s->last - t0); /* a wait in here is nobody's */
        return;
    }
    if (__builtin_expect(--s->sample_left == 0, 0)) /* also after co_hook_slow */
        measure_end(s, t0, ev);
    else
        s->last = t0 + s->hook_ticks[ev];
}

/* Not tracing: serve an attach request, else unhook (troff, tracing lost
 * or detached: hooks left on threads go lazily). */
static void __attribute__((noinline)) inactive(lua_State *L, lua_Debug *ar)
{
    co_chain *c = co_nchain ? co_chain_find(L) : NULL;
    if (c) { /* the program's hook alone again, this event's included */
        co_chain given = *c;
        co_chain_release(co_hook_state(), L);
        co_chain_call(&given, L, ar);
        return;
    }
    if (co_attach_req || g_state->attached) {
        co_attach_serve(L, ar);
        return;
    }
    if (co_fork_pending) { /* a forked child: its own trace, from here */
        co_module_forked(L, ar);
        if (g_state->active)
            return;
    }
    lua_sethook(L, NULL, 0, lua_gethookcount(L)); /* its id, if tracing restarts */
    co_ci54_forget(); /* events stop here */
    if (co_attach_req) /* an attach signal landed meanwhile: keep its hook */
        lua_sethook(L, co_hook, CO_MASK, 0);
}

/* Records were dropped (drop mode): what recorderd holds of any stack may
 * be wrong, and depths alone cannot say how. Before this event's records:
 * the GAP, every thread stale (each sends its stack when it next runs,
 * the switch to L included), and the stack of the thread recorderd has as
 * running sent again. Returns 0 if the ring has no room for the GAP yet. */
static int __attribute__((noinline)) resync(co_state *s, lua_State *L, const lua_Debug *ar)
{
    co_hook_slow(s);
    if (!co_out_gap(s))
        return 0;
    co_thread_stale_all(s);
    lua_State *cur = s->cur_L;
    int running = cur == L;
    uint32_t id = cur && (running || lua_checkstack(cur, LUA_MINSTACK))
                      ? co_thread_revive(s, cur) : 0;
    if (id) /* a call's callee is not on the stack yet as recorderd sees it */
        stack_record(s, cur, id, LT_R_HOOKED, running && ar->event == LUA_HOOKCALL);
    return 1;
}

/* Every event the lean paths leave: a tail return, an event in another
 * thread than the last one, a record that needs the ring's slow path
 * (drops to resync after, too), a clock that is not the TSC. t0: when the
 * hook began. */
static void __attribute__((noinline))
any_event(co_state *s, lua_State *L, lua_Debug *ar, uint64_t t0)
{
    /* The lean paths leave the control word alone: it is read here, at
     * least once per LT_RING_BATCH bytes of records (the ring's publish).
     * relaxed: the word only asks for a detach; nothing else rides on it */
    if (__builtin_expect(atomic_load_explicit(&s->ring.hdr->control, memory_order_relaxed) != 0,
                         0)) {
        co_attach_control(s, L);
        if (!s->active)
            return;
    }
    if (__builtin_expect(s->flush_req, 0)) { /* top waits: the records so far */
        s->flush_req = 0;
        lt_ring_publish(&s->ring);
    }
    if (__builtin_expect(s->conn_check, 0)) { /* a request came: is our recorder there? */
        s->conn_check = 0;
        if (co_conn_gone(s)) {
            co_out_gone(s);
            return;
        }
    }
    if (ar->event >= LUA_HOOKCOUNT) {
        /* a tail return is implied by depths, a count event (a coroutine
         * that inherited a chained thread's mask) is no event of ours:
         * only keep this hook's time out of the next dt */
        s->last += co_now(s) - t0;
        return;
    }
    if (__builtin_expect(s->dropped != 0, 0) && !resync(s, L, ar)) {
        /* this event goes too: the GAP that found no room counted it
         * (co_out_drop); counting it again made a drop-mode session's
         * drops pass the events of a whole run */
        s->last = co_now(s);
        return;
    }
    /* an estimated end can pass the next start: no program time between */
    uint64_t dt = t0 > s->last ? co_preempt_off(s, t0 - s->last) : 0;
    if (__builtin_expect(s->yield_depth != 0, 0) && co_untraced_again(s, L, ar, dt))
        dt = 0;
    if (__builtin_expect(L != s->cur_L, 0)) {
        int r = switch_thread(s, L, ar, dt);
        if (!r) {
            s->last = co_now(s); /* this event is dropped too */
            return;
        }
        if (r == 1)
            dt = 0;
    }
    co_hook_emit(s, L, ar, dt);
    hook_end(s, t0, ar->event);
}

/* The event after a switch, the ring's slow path due: as any_event. */
static void __attribute__((noinline))
emit_end(co_state *s, lua_State *L, lua_Debug *ar, uint64_t t0)
{
    co_hook_emit(s, L, ar, 0);
    hook_end(s, t0, ar->event);
}

/* Every event when the clock is not the TSC. */
static void __attribute__((noinline)) mono_event(co_state *s, lua_State *L, lua_Debug *ar)
{
    any_event(s, L, ar, co_now(s));
}

/* The end of a hook on the lean paths where every end is read: the TSC,
 * or nothing at all (timed 0: LUATRACE_TIMING=none, where t0 is 0 and
 * every dt 0). timed is a constant in each copy of the paths. */
CO_INLINE void lean_stop(co_state *s, uint64_t t0, int timed)
{
    if (timed) {
        uint64_t t1 = co_clock_tsc();
        s->hook_sum += t1 - t0; /* HOOK: the hooks' cost, less waits (co_preempt_batch) */
        s->last = t1;
    }
}

/* lean_stop of a line's hook, which the line hooks' sum (LHOOK) counts
 * too: what recorderd scales the compensation by. */
CO_INLINE void lean_stop_line(co_state *s, uint64_t t0, int timed)
{
    if (timed) {
        uint64_t t1 = co_clock_tsc();
        hook_spent(s, LUA_HOOKLINE, t1 - t0);
        s->last = t1;
    }
}

CO_INLINE uint64_t lean_dt(const co_state *s, uint64_t t0, int timed)
{
    return timed && t0 > s->last ? t0 - s->last : 0;
}

/* A call that lean_call leaves, with no clock. */
static void __attribute__((noinline)) call_none(co_state *s, lua_State *L, lua_Debug *ar)
{
    on_call(s, L, ar, 0);
}

/* hook_end on the lean paths: the TSC known, measure_end a tail call. */
CO_INLINE void lean_end(co_state *s, uint64_t t0, int ev)
{
    if (__builtin_expect(s->sample_every == 1, 1)) {
        lean_stop(s, t0, 1);
        return;
    }
    if (__builtin_expect(--s->sample_left == 0, 0)) {
        measure_end(s, t0, ev);
        return;
    }
    hook_spent(s, ev, s->hook_ticks[ev]);
    s->last = t0 + s->hook_ticks[ev];
}

/* A call on co_hook's lean path: the same, with the function's lookup. */
static void __attribute__((noinline))
call_event(co_state *s, lua_State *L, lua_Debug *ar, uint64_t t0)
{
    uint64_t dt = t0 > s->last ? co_preempt_off(s, t0 - s->last) : 0;
    on_call(s, L, ar, dt);
    lean_end(s, t0, LUA_HOOKCALL);
}

/* resume_target's commonest case for the wrap function closure cl: its
 * coroutine hooked, its body known. Returns the body's wraps' id, or 0. */
CO_INLINE uint32_t lean_wrap(const co_state *s, lua_State *L, const uint8_t *cl)
{
    lua_State *co = s->thread_ok ? closure_thread(cl) : NULL;
    return co && co != L && hook_of(s, co) != NULL ? co_func_wrap_fast(s, co) : 0;
}

/* call_event's commonest case (exact timing: the hook's end is read; or
 * no clock), where the function is in its first slot (a wrap function:
 * its body too): a leaf, so that it saves few registers. Every other case
 * goes there. */
CO_INLINE void lean_call_at(co_state *s, lua_State *L, lua_Debug *ar, uint64_t t0, int timed)
{
    if (__builtin_expect(s->key_only, 1)) {
        const uint8_t *cl = co_func_closure(L, ar);
        const co_fent *e = co_ftab_first(&s->ft, lr_ptr_at(cl, CL_FP));
        uint32_t fid = e ? e->fid : 0;
        /* a wrap function: its body's; resume, require, a module's C
         * function (co_sigwatch.c): call_event's */
        if (fid && (e->flags & (LT_FF_RESUME | LT_FF_WRAP | CO_FF_OWN | CO_FF_SIGS)))
            fid = e->flags == LT_FF_WRAP ? lean_wrap(s, L, cl) : 0;
        /* a tail call under lines by sample takes the other path (put_tail:
         * this one stays a leaf) */
        if (__builtin_expect(fid != 0, 1) && !(s->lines_sampled && tail_call(s, L, ar))) {
            uint64_t dt = lean_dt(s, t0, timed);
            /* co_hook saw pos <= slow_at */
            put_call_at(s, s->ring.data + (s->ring.pos & s->ring.mask), ar, dt, fid);
            lean_stop(s, t0, timed);
            return;
        }
    }
    if (timed)
        call_event(s, L, ar, t0);
    else
        call_none(s, L, ar);
}

static void __attribute__((noinline))
lean_call(co_state *s, lua_State *L, lua_Debug *ar, uint64_t t0)
{
    lean_call_at(s, L, ar, t0, 1);
}

static void __attribute__((noinline)) lean_call_none(co_state *s, lua_State *L, lua_Debug *ar)
{
    lean_call_at(s, L, ar, 0, 0);
}

/* A call in another thread than the last event, on co_hook's lean path
 * otherwise (exact timing): mostly a new coroutine's first event, the call
 * of its body, which gets the thread's id here (THREAD, RESUME, CALL)
 * without switch_slow's lookups. Room for the first two records is
 * checked at once; a stale thread (its stack to send again), a switch
 * record the ring cannot take at once, or no id to be had go to
 * any_event. */
CO_INLINE void call_switch_at(co_state *s, lua_State *L, lua_Debug *ar, uint64_t t0, int timed)
{
    uint32_t id = 0;
    if (s->thread_ok && s->ring.pos + LT_EVENT_HOT_MAX <= s->slow_at && !lr_hooks_off(s->cur_L)) {
        uint32_t i;
        uintptr_t e = co_tag_entry(&s->th, (uint32_t)lr_int_at(L, LS_HOOKCOUNT), &i);
        if (e == (uintptr_t)L)
            id = i; /* known */
        else if ((e & ~CO_STALE) != (uintptr_t)L && !(co_nchain && co_chain_find(L)))
            id = co_thread_new(s, L); /* new: its THREAD fits. A chained thread's
                                         count is the program's: its id is in
                                         its entry (switch_slow) */
    }
    if (!id) {
        any_event(s, L, ar, t0);
        return;
    }
    /* the RESUME fits too: pos <= slow_at - LT_EVENT_HOT_MAX + THREAD's size */
    switch_fast(s, L, depth_before(ar), lean_dt(s, t0, timed), id);
    on_call(s, L, ar, 0);
    lean_stop(s, t0, timed);
}

/* A line or a return in another thread than the last event, on co_hook's
 * lean path otherwise (exact timing): the switch's fast path and the
 * event's record, a leaf. A call goes to call_switch; every other case (a
 * thread seen for the first time, a full ring) to any_event, whole. */
CO_INLINE void switch_event_at(co_state *s, lua_State *L, lua_Debug *ar, uint64_t t0, int timed)
{
    if (ar->event == LUA_HOOKCALL) {
        call_switch_at(s, L, ar, t0, timed);
        return;
    }
    uint32_t id = switch_fast_id(s, L);
    if (!id) {
        any_event(s, L, ar, t0);
        return;
    }
    /* a line or a return: depth_before is i_ci; exact timing: no
     * co_hook_slow */
    switch_fast(s, L, CO_EV_DEPTH(ar), lean_dt(s, t0, timed), id);
    if (__builtin_expect(s->ring.pos > s->slow_at, 0)) {
        emit_end(s, L, ar, t0);
        return;
    }
    uint8_t *p = s->ring.data + (s->ring.pos & s->ring.mask);
    if (ar->event == LUA_HOOKLINE)
        on_line(s, ar, 0, p);
    else
        on_ret(s, ar, 0, p);
    lean_stop(s, t0, timed);
}

static void __attribute__((noinline))
switch_event(co_state *s, lua_State *L, lua_Debug *ar, uint64_t t0)
{
    switch_event_at(s, L, ar, t0, 1);
}

static void __attribute__((noinline)) switch_event_none(co_state *s, lua_State *L, lua_Debug *ar)
{
    switch_event_at(s, L, ar, 0, 0);
}

/* The lean paths (exact: every hook's end is read, else
 * LUATRACE_TIMING=fast; timed 0: LUATRACE_TIMING=none, no clock, exact):
 * a line or a return, in the thread of the last event, with ring room
 * and a TSC (or no clock), makes no call, so that it saves few registers;
 * a call takes lean_call, a switch of threads switch_event (exact only),
 * every other case any_event, whole, as tail calls. */
CO_INLINE void lean_path(co_state *s, lua_State *L, lua_Debug *ar, int exact, int timed)
{
    uint64_t t0 = timed ? co_clock_tsc() : 0; /* the hook's own time begins */
    int ev = ar->event;
    /* a long dt (a wait for the CPU to take off, co_preempt.c) goes whole to
     * any_event too: a call here would cost every hook its registers */
    int waited = timed && (int64_t)(t0 - s->last) > (int64_t)s->pre_min;
    if (__builtin_expect(L != s->cur_L || ev >= LUA_HOOKCOUNT || s->ring.pos > s->slow_at || waited,
                         0)) {
        if (exact && !waited && L != s->cur_L && ev < LUA_HOOKCOUNT) {
            if (timed)
                switch_event(s, L, ar, t0);
            else
                switch_event_none(s, L, ar);
        } else {
            any_event(s, L, ar, t0);
        }
        return;
    }
    if (ev == LUA_HOOKCALL) {
        if (exact && timed)
            lean_call(s, L, ar, t0);
        else if (exact)
            lean_call_none(s, L, ar);
        else
            call_event(s, L, ar, t0);
        return;
    }
    uint64_t dt = lean_dt(s, t0, timed);
    uint8_t *p = s->ring.data + (s->ring.pos & s->ring.mask); /* pos <= slow_at */
    if (ev == LUA_HOOKLINE)
        on_line(s, ar, dt, p);
    else
        on_ret(s, ar, dt, p);
    if (exact && ev == LUA_HOOKLINE)
        lean_stop_line(s, t0, timed);
    else if (exact)
        lean_stop(s, t0, timed);
    else
        lean_end(s, t0, ev);
}

/* The hook with LUATRACE_TIMING=fast. */
static void __attribute__((noinline)) fast_hook(co_state *s, lua_State *L, lua_Debug *ar)
{
    lean_path(s, L, ar, 0, 1);
}

/* The hook with LUATRACE_TIMING=none: no clock read. */
static void __attribute__((noinline)) none_hook(co_state *s, lua_State *L, lua_Debug *ar)
{
    lean_path(s, L, ar, 1, 0);
}

/* The event on the path it would take with no thread chained. */
static void traced_event(co_state *s, lua_State *L, lua_Debug *ar)
{
    if (s->no_clock)
        none_hook(s, L, ar);
    else if (CO_HAVE_TSC && s->use_tsc)
        lean_path(s, L, ar, s->sample_every == 1, 1);
    else
        mono_event(s, L, ar);
}

/* The hook while some thread has a hook of the program's chained after
 * ours (co_dbghook.c): the event as usual (a count event is none of ours),
 * then, on such a thread, the program's hook, last, as it may raise. Its
 * time is the program's: it counts in the next event's dt. */
static void __attribute__((noinline)) chained_event(co_state *s, lua_State *L, lua_Debug *ar)
{
    lua_Debug given = *ar; /* as Lua gave it: our getinfo calls fill in ar */
    const co_chain *c = co_nchain ? co_chain_find(L) : NULL;
    co_chain was = c ? *c : (co_chain){0}; /* a detach in this event releases it */
    if (ar->event != LUA_HOOKCOUNT)
        traced_event(s, L, ar);
    /* found again after: naming a function allocates, and a chained thread
     * the GC frees meanwhile leaves the table, moving other entries */
    c = co_nchain ? co_chain_find(L) : NULL;
    if (c)
        co_chain_call(c, L, &given);
    else if (was.T == L && !s->active) /* detached meanwhile: the program's hook alone */
        co_chain_call(&was, L, &given);
}

void co_hook_traced(co_state *s, lua_State *L, lua_Debug *ar)
{
    if (co_nchain)
        chained_event(s, L, ar);
    else
        traced_event(s, L, ar);
}

/* The hook when not tracing, tracing without the TSC, with
 * LUATRACE_TIMING=fast, or while a thread is chained. */
static void __attribute__((noinline)) not_lean(co_state *s, lua_State *L, lua_Debug *ar)
{
    if (!s->active)
        inactive(L, ar);
    else if (s->jit)
        co_jit_event(s, L, ar);
    else if (co_nchain)
        chained_event(s, L, ar);
    else if (s->no_clock)
        none_hook(s, L, ar);
    else if (CO_HAVE_TSC && s->use_tsc)
        fast_hook(s, L, ar);
    else
        mono_event(s, L, ar);
}

/* The hook with sampled time (LUATRACE_TIMING=sample, co_tick.c): a tick
 * from here to the end is the hook's; the ticks since the last hook go
 * first, a TICK record where the last record left the stack (not after
 * drops: the resync's records come first). Then the event as with no
 * clock. */
static void tick_event(co_state *s, lua_State *L, lua_Debug *ar)
{
    if (s->lean == CO_LEAN_TICK)
        none_hook(s, L, ar);
    else
        not_lean(s, L, ar);
}

/* Lines by sample: the probe's count event is the line where the pending
 * ticks landed, a LINE record before their TICK (co_tick.c). */
static void __attribute__((noinline)) probe_line(co_state *s, lua_State *L, lua_Debug *ar)
{
    if (co_tick_pending && s->active && !s->dropped && lua_getinfo(L, "l", ar) &&
        ar->currentline > 0) {
        ar->event = LUA_HOOKLINE;
        tick_event(s, L, ar);
    }
    if (co_tick_pending && s->active && !s->dropped)
        co_tick_flush(s);
}

/* co_rehook.c put the hook back on the thread of the last record: unless
 * another thread runs now (the switch back sends it, stale), its stack
 * goes before this event's records and the ticks that came meanwhile,
 * as after drops (resync). */
static void __attribute__((noinline)) rehooked(co_state *s, lua_State *L, const lua_Debug *ar)
{
    uint32_t id;
    if (s->jit) /* co_jit_event sends it, its shadow stack with it */
        return;
    co_rehook_cur = 0;
    if (!s->active || L != s->cur_L || !(id = co_thread_revive(s, L)))
        return;
    co_hook_slow(s);
    stack_record(s, L, id, LT_R_REHOOKED, ar->event == LUA_HOOKCALL);
}

static void __attribute__((noinline)) tick_hook(co_state *s, lua_State *L, lua_Debug *ar)
{
    co_tick_in = 1;
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect(co_rehook_cur != 0, 0))
        rehooked(s, L, ar);
    if (s->lines_sampled && co_tick_unprobe(s, L, ar)) {
        probe_line(s, L, ar);
    } else {
        /* LuaJIT under lines by sample: co_jit_event sends them once the
         * frames LuaJIT closed unreported are closed (a C function's) */
        if (__builtin_expect(co_tick_pending != 0, 0) && s->active && !s->dropped &&
            !(s->jit && s->lines_sampled && ar->event != LUA_HOOKCOUNT))
            co_tick_flush(s);
        if (ar->event == LUA_HOOKCOUNT && s->lines_sampled && !co_nchain && !s->jit)
            lua_sethook(L, co_hook, CO_MASK, 0); /* a coroutine made as a probe was set
                                                   * inherited it: an id at its next event */
        tick_event(s, L, ar); /* a count event not the probe's: a chained hook's */
    }
    atomic_signal_fence(memory_order_seq_cst);
    co_tick_in = 0;
}

/* The hook while memory is traced (co_alloc.c): whatever it allocates
 * (naming a function, a thread's entry) is its own and sends no MEM
 * record, which would land inside the event's. Then the event as
 * without memory. */
static void __attribute__((noinline)) mem_hook(co_state *s, lua_State *L, lua_Debug *ar)
{
    co_mem_in++;
    co_alloc_defer(s, L); /* a GC step's frees in here go out after */
    if (s->gc_pending && s->active)
        co_alloc_gc_event(s, L, depth_before(ar), co_clock_tsc());
    if (s->tick_on)
        tick_hook(s, L, ar);
    else if (!s->active || s->jit || co_nchain || s->no_clock)
        not_lean(s, L, ar);
    else
        traced_event(s, L, ar);
    co_mem_in--;
    co_alloc_flush(s, L);
}

/* Where the unwinder looks above the hook's caller (co_tick.c): LuaJIT's
 * hook stubs; Lua 5.4's hook-only callers of luaD_hook. */
#if LUA_VERSION_NUM >= 504
#define CO_WALK_UP(s) 1
#define CO_WALK_COUNT(ar) ((ar)->event == LUA_HOOKCOUNT)
#else
#define CO_WALK_UP(s) ((s)->jit)
#define CO_WALK_COUNT(ar) 0
#endif

/* Sampled time and lines: the hook's caller learnt (a tick there is the
 * hook's), then the event; with no probe out, no tick to send and no
 * thread chained, straight to the clock-free path (nearly every event). */
static void __attribute__((noinline)) ticks_lines(co_state *s, lua_State *L, lua_Debug *ar,
                                                  uintptr_t ra)
{
    int count = CO_WALK_COUNT(ar); /* a probe: what checks each instruction is above */
    if (__builtin_expect(ra != co_tick_ra, 0) ||
        (CO_WALK_UP(s) && co_tick_walks < (count ? 2 : 1) * CO_TICK_WALKS))
        co_tick_caller_learn(ra, CO_WALK_UP(s), count);
    if (co_probe_L || co_tick_pending || ar->event == LUA_HOOKCOUNT || s->lean != CO_LEAN_TICK) {
        tick_hook(s, L, ar);
        return;
    }
    co_tick_in = 1;
    atomic_signal_fence(memory_order_seq_cst);
    lean_path(s, L, ar, 1, 0);
    atomic_signal_fence(memory_order_seq_cst);
    co_tick_in = 0;
}

int co_mask = CO_MASK_ALL;

/* The hook. Its lean path is the exact one; LUATRACE_TIMING=none's is
 * one compare away, sampled time's two. */
void co_hook(lua_State *L, lua_Debug *ar)
{
    co_state *s = g_state;
    co_ev_normalize(ar);
    if (__builtin_expect(s->lean != CO_LEAN_EXACT, 0)) {
        if (s->lean == CO_LEAN_NOCLOCK)
            none_hook(s, L, ar);
        else if (s->mem)
            mem_hook(s, L, ar);
        else if (s->tick_on && (s->lines_sampled || s->jit)) /* Lua's code that called us */
            ticks_lines(s, L, ar, (uintptr_t)__builtin_return_address(0));
        else if (s->tick_on)
            tick_hook(s, L, ar);
        else
            not_lean(s, L, ar);
        return;
    }
    lean_path(s, L, ar, 1, 1);
}

void co_hook_emit(co_state *s, lua_State *L, lua_Debug *ar, uint64_t dt)
{
    if (ar->event == LUA_HOOKCALL) {
        on_call(s, L, ar, dt);
        return;
    }
    uint8_t *p = co_out_hot(s);
    if (p && ar->event == LUA_HOOKLINE)
        on_line(s, ar, dt, p);
    else if (p && ar->event == LUA_HOOKRET)
        on_ret(s, ar, dt, p);
}

/* FRAME records for every frame of L from level from, top first.
 * Tail-call placeholders (i_ci 0) are skipped: the callee already stands in
 * its caller's place. bodies (while tracing, not as it begins: then no
 * call was seen): a coroutine.wrap function gets its body's id, as its
 * call did. */
static void snapshot_frames(co_state *s, lua_State *L, int from, int bodies)
{
    lua_Debug ar;
    /* LuaJIT: i_ci is a slot; the record's depth is the level's from the
     * bottom, and the API gets the slot back (co_jit_getinfo) */
    uint32_t n = s->jit ? co_jit_depth(L) : 0;
    lua_Debug *jit_ar = co_jit_ar;
    int jit_slot = co_jit_slot;
    for (int level = from; lua_getstack(L, level, &ar); level++) {
        if (s->jit) {
            co_jit_ar = &ar;
            co_jit_depth_in(&ar, n - (uint32_t)level);
        } else if (CO_AR_DEPTH(&ar) == 0) {
            continue;
        }
        uint32_t flags;
        lua_getinfo(L, "l", &ar);
        uint32_t fid = co_func_id(s, L, &ar, &flags);
        if (fid && (flags & LT_FF_WRAP) && bodies)
            fid = co_func_wrap_id(s, L, &ar, wrap_thread(s, L, &ar), fid);
        if (fid && (flags & CO_FF_BYARG))
            fid = co_func_arg_id(s, L, &ar, fid);
        uint8_t *p = fid ? co_out_hot(s) : NULL;
        if (!p)
            break;
        uint8_t *q = lt_put_head(p, LT_EV_FRAME, 3);
        q = lt_put_uint(q, s->jit ? (uint64_t)ar.i_ci : CO_AR_DEPTH(&ar));
        q = lt_put_uint(q, fid);
        q = lt_put_uint(q, ar.currentline > 0 ? (uint64_t)ar.currentline : 0);
        co_out_hot_end(s, p, q);
    }
    co_jit_ar = jit_ar;
    co_jit_slot = jit_slot;
}

/* START for thread id (L) and its frames from level from. */
static void stack_record(co_state *s, lua_State *L, uint32_t id, unsigned reason, int from)
{
    uint8_t *p = co_out_hot(s);
    if (!p)
        return;
    uint8_t *q = lt_put_head(p, LT_EV_START, 2);
    q = lt_put_uint(q, id);
    q = lt_put_uint(q, reason);
    co_out_hot_end(s, p, q);
    s->snapping = 1;
    snapshot_frames(s, L, from, s->active);
    s->snapping = 0;
    if (s->jit)
        co_jit_rebuild(id, L, from, 0);
}

void co_hook_snapshot(co_state *s, lua_State *L, unsigned reason)
{
    uint32_t id = co_thread_id(s, L);
    if (id)
        stack_record(s, L, id, reason, 0);
}

void co_hook_snapshot_caller(co_state *s, lua_State *L)
{
    uint32_t id = co_thread_id(s, L);
    if (id)
        stack_record(s, L, id, LT_R_BEGIN, 1);
}

void co_hook_snapshot_from(co_state *s, lua_State *L, int from, unsigned reason)
{
    uint32_t id = co_thread_id(s, L);
    if (id)
        stack_record(s, L, id, reason, from);
}

void co_hook_attach_thread(co_state *s, lua_State *L, lua_State *co)
{
    (void)L;
    lua_Debug ar;
    if (lua_status(co) > LUA_YIELD)
        return; /* died of an error: its frames stay, but it never runs again */
    /* naming a function pushes onto co's stack; a suspended thread has no
     * LUA_MINSTACK guarantee the way a running hook does */
    if (lua_getstack(co, 0, &ar) && lua_checkstack(co, LUA_MINSTACK))
        co_hook_snapshot(s, co, LT_R_HOOKED); /* an id, and the hook with it */
    else
        co_thread_hook(s, co); /* not started: an id at its first event */
}
