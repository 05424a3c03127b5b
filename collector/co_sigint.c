/* co_sigint: lua.c's Ctrl-C, traced on.
 *
 * lua5.1 runs each chunk with SIGINT caught (laction): the handler puts
 * lua.c's own hook, lstop, on the main thread in place of whatever hook is
 * there (call, return and count 1), and lstop removes it at the next
 * event and raises "interrupted!". The collector's hook went with it: a
 * program that catches that error (pcall around a work loop, a REPL) ran
 * on untraced, and its session still said complete.
 *
 * So, in the main thread of lua.c, the collector's handler takes SIGINT
 * in front of lua.c's (co_sigint_install): it runs
 * lua.c's, and when that replaced the collector's hook on the main thread
 * with lstop's signature it puts co_interrupt there instead, with the
 * same mask and count. co_interrupt fires at the event lstop would have
 * fired at, gives the thread the collector's hook back as it was (its id
 * is the hook count), lets the collector see that event, and raises the
 * error lstop raises, in the same place, so the program sees what it sees
 * untraced. laction itself sets SIGINT back to the default action, so a
 * second Ctrl-C still kills, as untraced. A main thread with the
 * program's own hook chained after the collector's (co_dbghook.c) loses
 * that hook, as lstop takes it off, and stays traced. Tracing off, or a
 * handler that is not lua.c's: nothing changes. LuaJIT (co_jit.c hooks differently): not taken.
 * Lua 5.4's lua.c does the same with the line mask added (LSTOP_MASK). */
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "co_state.h"

/* laction's hook: lua_sethook(L, lstop, CALL | RET | COUNT, 1); Lua
 * 5.4's lua.c asks for line events too (a mask it did not know, the
 * handler left lstop in place: a 5.4 program that caught the error ran on
 * untraced) */
#if LUA_VERSION_NUM >= 504
#define LSTOP_MASK (LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT)
#else
#define LSTOP_MASK (LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT)
#endif

static struct sigaction g_old;    /* lua.c's handler */
static lua_State *volatile g_main; /* NULL: not installed, or closing */
static int g_closed;               /* lua_close has begun: never again */
static lua_Hook g_hook;            /* the main thread's hook before the signal */
static int g_mask, g_count;
static int g_chained; /* the program's hook was chained after ours */

static void co_interrupt(lua_State *L, lua_Debug *ar)
{
    if (g_chained) { /* lstop would take the program's hook off too */
        lua_sethook(L, NULL, 0, 0);
        co_chain_interrupted(L);
    } else {
        lua_sethook(L, g_hook, g_mask, g_count);
    }
    /* the collector's event too; a line only if it counts lines (5.4's
     * lstop fires at any event of its mask, which the collector's may
     * lack) */
    if (ar->event != LUA_HOOKCOUNT && lua_gethook(L) == co_hook &&
        (ar->event != LUA_HOOKLINE || (g_mask & LUA_MASKLINE)))
        co_hook(L, ar);
    luaL_error(L, "interrupted!"); /* lstop's words, at lstop's event */
}

static void run_old(int sig, siginfo_t *si, void *uc)
{
    if (g_old.sa_flags & SA_SIGINFO)
        g_old.sa_sigaction(sig, si, uc);
    else if (g_old.sa_handler != SIG_DFL && g_old.sa_handler != SIG_IGN)
        g_old.sa_handler(sig);
}

/* Async-signal-safe: lua_gethook*, lua_sethook (as laction itself) and a
 * scan of the chain table (co_hook_ours). */
static void on_sigint(int sig, siginfo_t *si, void *uc)
{
    lua_State *L = g_main;
    if (!L) {
        run_old(sig, si, uc);
        return;
    }
    lua_Hook h = lua_gethook(L);
    int mask = lua_gethookmask(L), count = lua_gethookcount(L);
    /* chained (co_dbghook.c): read only here, as co_interrupt looks again */
    int chained = h == co_hook && co_nchain && co_chain_find(L);
    int ours = h == co_hook && (chained || co_hook_ours(L));
    run_old(sig, si, uc);
    lua_Hook now = lua_gethook(L);
    if (!ours || now == co_hook || now == NULL || now == co_interrupt ||
        lua_gethookmask(L) != LSTOP_MASK || lua_gethookcount(L) != 1)
        return;
    g_hook = h;
    g_chained = chained;
    g_mask = mask;
    g_count = count;
    lua_sethook(L, co_interrupt, LSTOP_MASK, 1);
}

static int is_ours(const struct sigaction *a)
{
    return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == on_sigint;
}

/* Called on lua.c's main thread at its first traced call and at the
 * first sight of each main chunk (a syscall there only): lua.c catches
 * SIGINT anew for each chunk it runs (-e, -l, the script), and a chunk
 * that runs is met first as a main chunk. */
void co_sigint_install(lua_State *L)
{
    struct sigaction sa, old;
    if (g_closed || co_jit_is() || sigaction(SIGINT, NULL, &old) || is_ours(&old))
        return;
    if (old.sa_flags & SA_SIGINFO ? !old.sa_sigaction
                                  : old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN)
        return; /* not lua.c's catch */
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigint;
    sa.sa_flags = SA_SIGINFO | (old.sa_flags & SA_RESTART);
    sa.sa_mask = old.sa_mask;
    g_old = old; /* on_sigint cannot run now: the handler is lua.c's */
    g_main = L;
    if (sigaction(SIGINT, &sa, NULL))
        g_main = NULL;
}

/* lua_close is near: the main thread is about to be freed. */
void co_sigint_closing(void)
{
    struct sigaction cur;
    g_closed = 1;
    if (!g_main)
        return;
    g_main = NULL;
    if (!sigaction(SIGINT, NULL, &cur) && is_ours(&cur))
        sigaction(SIGINT, &g_old, NULL);
}
