/* co_dbghook: the traced program's own debug hooks.
 *
 * Lua 5.1 has one hook per thread, and the collector's is on every traced
 * thread. A program that calls debug.sethook (a coverage tool, a timeout
 * by instruction count) would replace it for good, and debug.gethook would
 * show the collector's hook and the thread id in its count. So the
 * collector's module wraps both in the debug table:
 *
 * - debug.sethook(T, f, ...) lets the library hook T, then chains it:
 *   the collector's hook goes back on T with the program's count, traces
 *   each event and then calls the library's hook for the events the
 *   program's mask names, so T stays traced and the program's hook runs
 *   exactly as without tracing. T's id, which its count held, is kept in
 *   the chain table. Where T cannot be chained (not tracing, the table
 *   full, freed threads not reported), T is the program's alone and not
 *   traced meanwhile (its calls show in its caller's time); its id tag is
 *   kept in a registry table with weak keys.
 * - debug.sethook(T) (removing the program's hook) unchains T, or gives
 *   an unchained T back: the id returns to the count; a running T sends
 *   its stack at once (START), a
 *   suspended one when it is next resumed (it is stale, co_thread.c). The
 *   stretch T ran untraced is not charged to any function.
 * - debug.gethook(T) answers what it would without tracing: the program's
 *   hook, else nil, "", 0.
 *
 * The program's hook sees the events it would see untraced: the wrapper
 * stands where the debug library's function stood, and calls that
 * function as plain C (call_original).
 */
#include <lauxlib.h>
#include <string.h>

#include "co_clock.h"
#include "lr_layout.h"
#include "co_state.h"

/* Registry keys of two tables with weak keys: {thread = its id tag} for
 * the threads the program hooked, whose ids the collector keeps, and
 * {thread = the program's hook function}, what debug.gethook answers. */
static char TAGS_KEY, FUNCS_KEY;

/* The lua_Hook the debug library installs for the program's hooks, once
 * seen (the same for every thread and state). */
static lua_Hook g_lib_hook;

/* {====== chained threads: the program's hook runs after the collector's */

/* Chained threads by their lua_State, open addressing with linear
 * probing (a coroutine scheduler under a coverage tool that hooks each
 * coroutine has hundreds at once, and the hook looks its thread up at
 * every event). Static: the signal handlers read it (co_sigint.c). */
#define CO_CHAIN_SLOTS 8192u                /* a power of two */
#define CO_CHAIN_MAX (CO_CHAIN_SLOTS / 2) /* more threads hooked at once are not traced meanwhile */

static co_chain g_chain[CO_CHAIN_SLOTS]; /* T NULL: a free slot */
unsigned co_nchain;

static unsigned chain_home(const lua_State *T)
{
    return (unsigned)(((uint64_t)(uintptr_t)T * 0x9E3779B97F4A7C15ull) >> 51) & (CO_CHAIN_SLOTS - 1);
}

co_chain *co_chain_find(const lua_State *T)
{
    for (unsigned i = chain_home(T); co_nchain; i = (i + 1) & (CO_CHAIN_SLOTS - 1)) {
        if (g_chain[i].T == T)
            return &g_chain[i];
        if (!g_chain[i].T)
            return NULL; /* the table is never more than half full */
    }
    return NULL;
}

static co_chain *chain_add(lua_State *T)
{
    unsigned i = chain_home(T);
    while (g_chain[i].T)
        i = (i + 1) & (CO_CHAIN_SLOTS - 1);
    co_nchain++;
    g_chain[i] = (co_chain){T, 0, 0, 0};
    return &g_chain[i];
}

/* Removes c, moving back the entries after it that probed past its slot
 * (no tombstones). Entries move: a co_chain pointer is good until the next
 * removal. */
static void chain_remove(co_state *s, co_chain *c)
{
    const unsigned m = CO_CHAIN_SLOTS - 1;
    unsigned hole = (unsigned)(c - g_chain);
    for (unsigned j = (hole + 1) & m; g_chain[j].T; j = (j + 1) & m)
        if (((j - chain_home(g_chain[j].T)) & m) >= ((j - hole) & m)) {
            g_chain[hole] = g_chain[j];
            hole = j;
        }
    g_chain[hole].T = NULL;
    co_nchain--;
    if (s)
        co_set_active(s, s->active); /* lean again once none is left */
}

void co_chain_forget(const lua_State *T)
{
    co_chain *c = co_nchain ? co_chain_find(T) : NULL;
    if (c)
        chain_remove(co_hook_state(), c);
}

void co_chain_forget_all(void)
{
    for (unsigned i = 0; co_nchain && i < CO_CHAIN_SLOTS; i++)
        if (g_chain[i].T) {
            g_chain[i].T = NULL;
            co_nchain--;
        }
}

/* Lua 5.1's traceexec reads the hook mask once, then runs the count hook,
 * then the line hook: a count hook that asks for line events gets none at
 * that instruction. The mask at the last count event, and where it was. */
static struct {
    const lua_State *L;
    const void *pc;
    int mask;
} g_count;

void co_chain_call(const co_chain *c, lua_State *L, lua_Debug *ar)
{
#ifdef CO_LUA54
    if (ar->event == LUA_HOOKCALL && ar->istailcall) /* co_ev_normalize's */
        ar->event = LUA_HOOKTAILCALL;
    int bit = ar->event == LUA_HOOKTAILCALL ? LUA_MASKCALL : 1 << ar->event;
    /* 5.4's luaG_traceexec has the same order, its instruction in the
     * running CallInfo's savedpc (a C frame's: not a count or line event) */
    const void *pc = ar->i_ci ? lr_ptr_at(ar->i_ci, CI54_SAVEDPC) : NULL;
#else
    int bit = ar->event == LUA_HOOKTAILRET ? LUA_MASKRET : 1 << ar->event;
    const void *pc = lr_ptr_at(L, LS_SAVEDPC);
#endif
    int mask = ar->event == LUA_HOOKLINE && g_count.L == L && g_count.pc == pc ? g_count.mask
                                                                               : c->mask;
    g_count.L = ar->event == LUA_HOOKCOUNT ? L : NULL;
    g_count.pc = pc;
    g_count.mask = c->mask;
    if ((mask & bit) && g_lib_hook)
        g_lib_hook(L, ar);
}

int co_chain_release(co_state *s, lua_State *L)
{
    co_chain *c = co_nchain ? co_chain_find(L) : NULL;
    if (!c)
        return 0;
#ifdef CO_LUA54
    /* lua_sethook restarts the count: under 5.4, whose hookcount is not
     * read (no layout of its lua_State is checked), it starts again */
    lua_sethook(L, g_lib_hook, c->mask, c->count);
#else
    /* lua_sethook restarts the count: the program's goes on where it was
     * (chained threads are of a state whose layout was verified) */
    int left;
    memcpy(&left, (const char *)L + LS_HOOKLEFT, sizeof left);
    lua_sethook(L, g_lib_hook, c->mask, c->count);
    memcpy((char *)L + LS_HOOKLEFT, &left, sizeof left);
#endif
    chain_remove(s, c);
    return 1;
}

/* Whether freed threads are reported, so that an entry cannot outlive its
 * thread: Lua 5.1's allocator watch reads them (its layout verified);
 * 5.4's map of co_wcache.c sees every free (co_wcache_freed forgets the
 * entry), unless LUATRACE_ALLOC=plain left the allocator alone. */
static int frees_seen(const co_state *s)
{
#ifdef CO_LUA54
    (void)s;
    return co_wcache_on();
#else
    return s->thread_ok && (s->watched & CO_WATCH_THREADS);
#endif
}

/* Whether T, about to get the program's hook, can stay traced: while
 * tracing, where freed threads are reported and the table has room. */
static int can_chain(const co_state *s, const lua_State *T)
{
    return s && s->active && frees_seen(s) && (co_chain_find(T) || co_nchain < CO_CHAIN_MAX);
}

/* The library has just hooked T for the program: the collector's hook goes
 * back in front of it, with the program's count (and count mask). id: T's
 * thread id, which its count held. */
static void chain(co_state *s, lua_State *T, uint32_t id)
{
    co_chain *c = co_chain_find(T);
    if (!c) {
        c = chain_add(T);
        c->id = id;
    }
    c->mask = lua_gethookmask(T);
    c->count = lua_gethookcount(T);
    /* a program hooking lines: every thread's line hook back for the rest
     * of the trace (its coroutines inherit ours; its hook must see them) */
    if ((c->mask & LUA_MASKLINE) && s->lines_sampled)
        co_tick_lines_exact(s);
    /* and the program's line mask: with lines by sample CO_MASK has none */
    lua_sethook(T, co_hook, CO_MASK | (c->mask & (LUA_MASKCOUNT | LUA_MASKLINE)), c->count);
    co_set_active(s, s->active); /* not lean while a thread is chained */
}

/* The program removed its hook from chained T (the library left T with
 * none): the collector's alone again, T's id back in its count. T was
 * traced all along: no stack to send again. */
static void unchain(co_state *s, lua_State *T, co_chain *c)
{
    uint32_t id = c->id;
    chain_remove(s, c);
    if (s && s->active)
        lua_sethook(T, co_hook, CO_MASK, id ? CO_TAG(&s->th, id) : 0);
}

/* Untraced, lstop leaves T with no hook at all, and the debug library's
 * hook table keeps the program's function: debug.gethook then answers
 * it, "", 0, as l_gethook does for an unchained T from FUNCS_KEY. */
void co_chain_interrupted(lua_State *T)
{
    co_chain *c = co_nchain ? co_chain_find(T) : NULL;
    if (c)
        unchain(co_hook_state(), T, c);
}

/* }====== */

static void push_table(lua_State *L, const char *key)
{
    lua_pushlightuserdata(L, (void *)key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_istable(L, -1))
        return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushlightuserdata(L, (void *)key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

/* table[T] = the value on top (popped). */
static void table_set(lua_State *L, const char *key, lua_State *T)
{
    push_table(L, key);
    lua_pushthread(T);
    lua_xmove(T, L, 1);
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_pop(L, 2);
}

/* Pushes table[T]. */
static void table_get(lua_State *L, const char *key, lua_State *T)
{
    push_table(L, key);
    lua_pushthread(T);
    lua_xmove(T, L, 1);
    lua_rawget(L, -2);
    lua_remove(L, -2);
}

/* The thread a debug.sethook/gethook call is about (argument 1 or L) and
 * the number of the argument before its others. */
static lua_State *target(lua_State *L, int *arg)
{
    *arg = lua_isthread(L, 1);
    return *arg ? lua_tothread(L, 1) : L;
}

/* Runs upvalue 1 (the debug library's sethook) on the arguments as a
 * plain C call: it has no call or return event of its own, so the
 * program's hooks see the wrapper's, where the library function's would
 * be, and a traced stack has no frame for it. Its argument errors name
 * the wrapper's call, as they would name the library function's. */
static void call_original(lua_State *L)
{
    int top = lua_gettop(L);
    lua_tocfunction(L, lua_upvalueindex(1))(L);
    lua_settop(L, top);
}

/* T, about to get the program's hook: keep its id tag if it has one. */
static void save_tag(co_state *s, lua_State *L, lua_State *T)
{
    int tag = lua_gethookcount(T);
    if (!s || !co_hook_ours(T) || !co_thread_tagged(s, T))
        return; /* no id (a new coroutine has its creator's count) */
    lua_pushinteger(L, tag);
    table_set(L, &TAGS_KEY, T);
}

/* T's kept id tag, removed from the table; 0 if none. */
static int take_tag(lua_State *L, lua_State *T)
{
    table_get(L, &TAGS_KEY, T);
    int tag = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    lua_pushnil(L);
    table_set(L, &TAGS_KEY, T);
    return tag;
}

/* The program removed its hook from T: T is traced again. */
static void give_back(co_state *s, lua_State *L, lua_State *T, int tag)
{
    lua_sethook(T, NULL, 0, tag); /* the id travels in the count again */
    if (!s || !s->active)
        return; /* tron() finds it by its tag */
    if (T != L) {
        co_thread_mark_stale(s, T); /* its stack goes with its next resume */
        return;
    }
    co_hook_snapshot(s, T, LT_R_HOOKED); /* this call's frame on top, as at tron() */
    co_thread_hook(s, T);
    s->last = co_now(s);
}

static int l_sethook(lua_State *L)
{
    int arg;
    lua_State *T = target(L, &arg);
    int removing = lua_isnoneornil(L, arg + 1);
    int owned = co_module_owns(L); /* else another Lua state of the host's */
    co_state *s = owned ? co_hook_state() : NULL;
    co_chain *c = co_nchain ? co_chain_find(T) : NULL;
    if (removing && !c && co_hook_ours(T)) {
        lua_pushnil(L); /* no hook of the program's to remove; its function goes */
        table_set(L, &FUNCS_KEY, T);
        return 0;
    }
    int valid = removing || (lua_type(L, arg + 1) == LUA_TFUNCTION && lua_isstring(L, arg + 2));
    int chaining = valid && !removing && can_chain(s, T);
    if (chaining && !c && !co_hook_ours(T)) /* the program's alone so far, untraced */
        give_back(s, L, T, take_tag(L, T)); /* its id back, its stack sent again */
    /* T's id, read before the library's count replaces its tag */
    uint32_t id = chaining ? (c ? c->id : co_thread_tagged(s, T)) : 0;
    if (valid && !removing && !chaining)
        save_tag(s, L, T);
    if (valid) {
        lua_pushvalue(L, arg + 1);
        table_set(L, &FUNCS_KEY, T);
    }
    call_original(L); /* raises the library's error on bad arguments */
    /* the tables above allocate: a collected chained thread's removal
     * may have moved T's entry */
    c = co_nchain ? co_chain_find(T) : NULL;
    if (lua_gethook(T)) {
        g_lib_hook = lua_gethook(T);
        if (chaining)
            chain(s, T, id);
        else if (c)
            chain_remove(s, c); /* not tracing: the program's hook alone */
        return 0;
    }
    if (c) {
        unchain(s, T, c);
        return 0;
    }
    /* removed, or a mask that installs nothing. A thread with no id of its
     * own (hooked by the program before its first resume) gets one now if
     * it is running; a suspended one gets one when it is next resumed. */
    int tag = take_tag(L, T);
    if (tag || T == L)
        give_back(s, L, T, tag);
    if (owned && (!s || !s->active))
        co_attach_rearm(T);
    return 0;
}

/* What the debug library says of T's hook, from what it holds. */
static int l_gethook(lua_State *L)
{
    int arg;
    lua_State *T = target(L, &arg);
    const co_chain *c = co_nchain ? co_chain_find(T) : NULL;
    if (!c && co_hook_ours(T)) {
#if LUA_VERSION_NUM >= 504
        lua_pushnil(L); /* no hook of the program's: Lua 5.4 says fail alone */
        return 1;
#else
        /* no hook of the program's: what Lua 5.1 says untraced, the
         * function of a sethook whose mask installed nothing included */
        table_get(L, &FUNCS_KEY, T);
        lua_pushliteral(L, "");
        lua_pushinteger(L, 0);
        return 3;
#endif
    }
    lua_Hook h = c ? g_lib_hook : lua_gethook(T);
    if (h == g_lib_hook)
        table_get(L, &FUNCS_KEY, T); /* nil for a thread that inherited it */
    else
        lua_pushliteral(L, "external hook");
    int mask = c ? c->mask : lua_gethookmask(T);
    char smask[4], *q = smask;
    if (mask & LUA_MASKCALL)
        *q++ = 'c';
    if (mask & LUA_MASKRET)
        *q++ = 'r';
    if (mask & LUA_MASKLINE)
        *q++ = 'l';
    *q = '\0';
    lua_pushstring(L, smask);
    lua_pushinteger(L, c ? c->count : lua_gethookcount(T));
    return 3;
}

/* Replaces debug.NAME, if it is the library's C function, by f with it as
 * upvalue. */
static void wrap(lua_State *L, const char *name, lua_CFunction f)
{
    lua_pushstring(L, name);
    lua_rawget(L, -2);
    lua_CFunction was = lua_tocfunction(L, -1);
    if (!was || was == f) {
        lua_pop(L, 1); /* the program's own, or wrapped already */
        return;
    }
    lua_pushcclosure(L, f, 1);
    lua_pushstring(L, name);
    lua_insert(L, -2);
    lua_rawset(L, -3);
}

void co_dbghook_install(lua_State *L)
{
    co_module_push_globals(L);
    lua_pushliteral(L, "debug");
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (lua_istable(L, -1)) {
        wrap(L, "sethook", l_sethook);
        wrap(L, "gethook", l_gethook);
    }
    lua_pop(L, 1);
}
