/* co_untraced: coroutines resumed where Lua runs no hooks.
 *
 * Lua 5.1 turns a thread's hooks off (L->allowhook) while a hook runs on
 * it and while it runs a __gc finalizer. A coroutine that such code
 * resumes (the program's own hook, co_dbghook.c, or a finalizer calls
 * coroutine.resume or a wrap function) runs with its own hook: its events
 * are traced, but its resumer O made no record of the hook or finalizer
 * function, nor of the resume. So, on the switch path (switch_slow):
 *
 * - O resumed L with its hooks off: O's stack goes first (START), so that
 *   recorderd hangs L under O's real stack, then the RESUME. O's episode
 *   begins (co_state.untraced; L may begin one of its own inside it).
 * - L runs after a thread that yielded or died, while O still runs with
 *   hooks off: L came back to O unseen and O resumed another. The records
 *   say so: O's stack as it is now, a YIELD to O, O's RESUME of L.
 * - L, which yielded meanwhile (to O, unseen), has its next event in L
 *   itself, the yield's return: O resumed L again (co_untraced_again), the
 *   same three records.
 * - O runs traced again: the switch to it carries no time, O's resume
 *   returns (a RET), and the time since L's last record goes to what O ran
 *   meanwhile (the hook or finalizer function, with the event); O's next
 *   record unwinds the rest of those frames by depth. The episode ends.
 *
 * Without this, L hung under O's last traced frame, a second finalizer's
 * resume of L stayed under the first one's, and the rest of the hook's
 * time went to L's coroutine.yield.
 *
 * While an episode is open every event takes any_event (slow_at 0,
 * co_out.c), so that the hot paths test nothing more than the allowhook
 * byte of the last record's thread at a switch. Only a thread the
 * collector traces (its id known: not one the program's hook has alone)
 * begins one. Limits: a coroutine with no hook (created or run while
 * tracing was off) that such code resumes is not traced at all (no event
 * hooks it); the hook or finalizer function leaves as unwound (E), by
 * depth, whether it returned or raised (no record tells which).
 */
#include "lr_layout.h"
#include "co_state.h"

/* The innermost episode, NULL if none. */
static co_episode *top_episode(co_state *s)
{
    return s->nuntraced ? &s->untraced[s->nuntraced - 1] : NULL;
}

/* e's thread still has its id (it did not die since). */
static int alive(const co_state *s, const co_episode *e)
{
    return e->id < s->th.cap && s->th.t[e->id] == e->L;
}

/* e's thread still runs with hooks off, and is not L. */
static int still(const co_state *s, const co_episode *e, lua_State *L)
{
    int st;
    return alive(s, e) && e->L != L && lr_hooks_off(e->L) && co_thread_resumed(s, e->L, &st);
}

/* e's stack (START) before the switch records; its top's depth kept. */
static void send_stack(co_state *s, co_episode *e)
{
    lua_Debug ar;
    e->top = lua_getstack(e->L, 0, &ar) ? CO_AR_DEPTH(&ar) : 0;
    if (lua_checkstack(e->L, LUA_MINSTACK)) /* naming pushes onto its stack */
        co_hook_snapshot(s, e->L, LT_R_HOOKED);
}

/* The thread of the last record begins an episode (inside the one on top,
 * if any; the innermost replaces it when CO_EPISODES are open). */
static void begin(co_state *s)
{
    co_episode *e = top_episode(s);
    if (!e || (e->L != s->cur_L && s->nuntraced < CO_EPISODES))
        e = &s->untraced[s->nuntraced++];
    *e = (co_episode){s->cur_L, s->cur_id, 0};
    s->slow_at = 0; /* co_out.c keeps it so while any is open */
    send_stack(s, e);
}

/* Episode e's thread resumes L (id) after the last thread gave control
 * back (dead: it died): its stack now, a YIELD to it, its RESUME of L,
 * which takes dt (its time). Returns 0 if a record could not be written. */
static int via_resumer(co_state *s, co_episode *e, uint32_t id, uint32_t depth, uint64_t dt,
                       int dead)
{
    send_stack(s, e);
    return co_hook_switch_record(s, 0, 0, e->id, e->top, dead) &&
           co_hook_switch_record(s, 1, dt, id, depth, 0);
}

int co_untraced_switch(co_state *s, lua_State *L, uint32_t id, uint32_t depth, uint64_t dt,
                       int resumed, int dead)
{
    if (resumed && lr_hooks_off(s->cur_L) && co_thread_known(s, s->cur_L) == s->cur_id) {
        /* an episode begins (a thread the program's hook has alone, not
         * chained, is not traced meanwhile: its frames stay hidden) */
        begin(s);
        return -1;
    }
    if (resumed) /* a traced resume: the episodes go on */
        return -1;
    for (co_episode *e; (e = top_episode(s)); s->nuntraced--) {
        if (still(s, e, L))
            return via_resumer(s, e, id, depth, dt, dead) ? 1 : 0;
        if (e->L == L && alive(s, e)) { /* it runs traced again */
            uint32_t top = e->top;
            s->nuntraced--;
            /* its resume returned, its time since is its own */
            if (!co_hook_switch_record(s, 0, 0, id, top, dead))
                return 0;
            return top > depth ? (co_hook_ret_record(s, top) ? 2 : 0) : 2;
        }
    } /* the episodes whose threads ended or run traced are over */
    return -1;
}

int co_untraced_again(co_state *s, lua_State *L, const lua_Debug *ar, uint64_t dt)
{
    uint32_t d = s->yield_depth;
    co_episode *e = top_episode(s);
    s->yield_depth = 0;
    if (!e || L != s->cur_L || ar->event != LUA_HOOKRET || CO_EV_DEPTH(ar) != d ||
        !still(s, e, L))
        return 0;
    co_hook_slow(s);
    uint32_t depth = CO_EV_DEPTH(ar); /* a return's: its frame's */
    return via_resumer(s, e, s->cur_id, depth, dt, 0);
}
