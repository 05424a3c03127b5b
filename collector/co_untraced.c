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
 *   begins (untraced_L, untraced_id).
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
 */
#include "co_layout.h"
#include "co_state.h"

/* O's stack (START) before the switch records; its top's depth kept. */
static void send_stack(co_state *s, lua_State *o)
{
    lua_Debug ar;
    s->untraced_top = lua_getstack(o, 0, &ar) ? (uint32_t)ar.i_ci : 0;
    if (lua_checkstack(o, LUA_MINSTACK)) /* naming pushes onto o's stack */
        co_hook_snapshot(s, o, LT_R_HOOKED);
}

/* The thread of the episode still runs with hooks off, and is not L. */
static int still(const co_state *s, lua_State *L)
{
    int st;
    lua_State *o = s->untraced_L;
    return s->untraced_id && s->untraced_id < s->th.cap && s->th.t[s->untraced_id] == o &&
           o != L && co_hooks_off(o) && co_thread_resumed(s, o, &st);
}

/* The episode's thread O resumes L (id) after the last thread gave control
 * back (dead: it died): O's stack now, a YIELD to O, O's RESUME of L,
 * which takes dt (O's time). Returns 0 if a record could not be written. */
static int via_resumer(co_state *s, uint32_t id, uint32_t depth, uint64_t dt, int dead)
{
    send_stack(s, s->untraced_L);
    return co_hook_switch_record(s, 0, 0, s->untraced_id, s->untraced_top, dead) &&
           co_hook_switch_record(s, 1, dt, id, depth, 0);
}

int co_untraced_switch(co_state *s, lua_State *L, uint32_t id, uint32_t depth, uint64_t dt,
                       int resumed, int dead)
{
    if (resumed && co_hooks_off(s->cur_L) && co_thread_known(s, s->cur_L) == s->cur_id) {
        /* an episode begins (a thread the program's hook has alone, not
         * chained, is not traced meanwhile: its frames stay hidden) */
        s->untraced_L = s->cur_L;
        s->untraced_id = s->cur_id;
        send_stack(s, s->cur_L);
        return -1;
    }
    if (resumed) /* a traced resume: the episode, if any, goes on */
        return -1;
    if (still(s, L))
        return via_resumer(s, id, depth, dt, dead) ? 1 : 0;
    uint32_t top = s->untraced_top;
    int back = s->untraced_id && L == s->untraced_L && s->th.t[s->untraced_id] == L;
    s->untraced_id = 0; /* the episode is over */
    s->untraced_L = NULL;
    if (!back)
        return -1;
    /* O runs traced again: its resume returned, its time since is its own */
    if (!co_hook_switch_record(s, 0, 0, id, top, dead))
        return 0;
    return top > depth ? (co_hook_ret_record(s, top) ? 2 : 0) : 2;
}

int co_untraced_again(co_state *s, lua_State *L, const lua_Debug *ar, uint64_t dt)
{
    uint32_t d = s->yield_depth;
    s->yield_depth = 0;
    if (L != s->cur_L || ar->event != LUA_HOOKRET || (uint32_t)ar->i_ci != d || !still(s, L))
        return 0;
    co_hook_slow(s);
    uint32_t depth = (uint32_t)ar->i_ci; /* a return's: its frame's */
    return via_resumer(s, s->cur_id, depth, dt, 0);
}
