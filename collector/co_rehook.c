/* co_rehook: the collector's hook put back where C code took it off.
 *
 * A C library may set a hook of its own from a signal handler to run Lua
 * code at the next safe point, and remove every hook when it has: luaposix's
 * posix.signal does, at each signal it handles (its hook ends with
 * lua_sethook(L, NULL, 0, 0)). The thread then ran on untraced for good,
 * and the session still said complete.
 *
 * So, with sampled time, each tick that lands in the program looks at the
 * thread of the last record and at the main thread (where such libraries
 * set their hook): one with no hook, no mask and no count (what only such a
 * removal leaves: the collector's own removals keep the thread's id in the
 * count) gets the collector's hook back with its id, and is marked stale.
 * Its next event sends its stack again (a START of reason
 * LT_R_REHOOKED, which recorderd counts and reports): the events between the
 * removal and the tick are missing, and the session says so. A thread
 * with the program's hook chained after ours (co_dbghook.c) is left alone.
 * LuaJIT has one hook for the whole state (co_jit.c): it goes back on, and
 * the next event, in whatever thread, sends that thread's stack (its
 * shadow stack rebuilt with it); other threads heal as after a finalizer
 * (unseen_from, stale_from). Exact time has no tick: there the hook stays
 * off, as doc/tracing.md says. */
#include "co_state.h"

volatile int co_rehook_cur; /* the thread of the last record was re-hooked */
lua_State *volatile co_rehook_other; /* another thread was: its START's reason */

/* T's id in th, by a scan (its count, which held it, is 0 now); 0 if T
 * has none. */
static uint32_t id_by_scan(const co_threads *th, const lua_State *T)
{
    for (uint32_t id = 1; id < th->next; id++)
        if (((uintptr_t)th->t[id] & ~CO_STALE) == (uintptr_t)T)
            return id;
    return 0;
}

/* T has no hook, no mask and no count: what only such a removal leaves */
static int hooks_gone(lua_State *T)
{
    return T && !lua_gethook(T) && !lua_gethookmask(T) && !lua_gethookcount(T);
}

static void rehook_one(co_state *s, lua_State *T, int cur)
{
    if (!hooks_gone(T))
        return;
    if (co_nchain && co_chain_find(T))
        return;
    /* cur_id may be 0: an attach begins in a thread whose count holds no
     * id yet (the attach signal's hook has count 0), and keeps 0 there
     * until a switch of threads; then by a scan too */
    uint32_t id = cur && s->cur_id ? s->cur_id : id_by_scan(&s->th, T);
    if (!id || ((uintptr_t)s->th.t[id] & ~CO_STALE) != (uintptr_t)T)
        return;
    if (co_probe_L == T) /* the removal took the probe with it */
        co_probe_L = NULL;
    s->th.t[id] = (lua_State *)((uintptr_t)T | CO_STALE);
    atomic_signal_fence(memory_order_seq_cst);
    lua_sethook(T, co_hook, CO_MASK, CO_TAG(&s->th, id));
    if (cur)
        co_rehook_cur = 1; /* its next hook, tick_hook (a tick is pending), sends it */
    else
        co_rehook_other = T; /* the switch to it sends it (stale) */
}

/* A fork child begins its own trace at its first Lua event
 * (co_module_forked), which a child forked between such a removal and the
 * parent's next tick never had: no timer is inherited, so nothing put the
 * hook back, and the child ran untraced to its end (a server's worker
 * forked from a SIGCHLD handler's stretch, say). Under exact time, where
 * no tick heals the parent, every child forked after the removal did. So
 * the child hooks the thread of the last record and the main thread if
 * they have no hook at all; the child's trace starts from every thread's
 * stack and sets the hooks again. Async-signal-safe (pthread_atfork's
 * child handler): lua_sethook, as from a signal handler. */
void co_rehook_forked(co_state *s)
{
    lua_State *T[2] = {s->cur_L, s->th.main};
    for (int i = 0; i < 2; i++)
        if (T[i] && !lua_gethook(T[i]) && !lua_gethookmask(T[i]) && !lua_gethookcount(T[i]))
            lua_sethook(T[i], co_hook, CO_MASK, 0);
}

/* From the tick's signal handler, outside the hook and the collector's
 * code: lua_sethook is what lua.c's (and luajit.c's) own handler calls
 * there. */
void co_rehook_check(co_state *s)
{
    if (!s || !s->active || !s->tick_on)
        return;
    lua_State *cur = s->cur_L;
    if (s->jit) {
        if (hooks_gone(cur)) {
            co_probe_L = NULL;
            lua_sethook(cur, co_hook, CO_MASK, 0);
            co_rehook_cur = 1;
        }
        return;
    }
    rehook_one(s, cur, 1);
    if (s->th.main != cur)
        rehook_one(s, s->th.main, 0);
}
