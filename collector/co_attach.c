/* co_attach: live attach (the rendezvous is in proto/lt_attach.h).
 *
 * Dormant, the collector is a marker file and a signal handler. The
 * handler only calls lua_sethook (safe from a signal handler: lua.c does it
 * for Ctrl-C), on the main thread and on every thread of the GC list, as
 * the running one may be any coroutine and Lua 5.1 does not say which. The
 * hook's next event, in whatever thread runs Lua next, opens the trace:
 * ring, hello, a snapshot of the running thread, then the hook and a
 * snapshot on every other coroutine, so recorderd's stacks are exact from
 * the first event. Detach removes the hook from every thread again.
 *
 * Walking the list from a signal handler: the handler may interrupt the
 * GC, but Lua links and unlinks an object with one pointer store, and
 * frees it only once unlinked, so the walk sees a consistent list. That
 * holds when the handler interrupts the thread that runs Lua. recorderd
 * signals the process, which the kernel may give to any thread that does
 * not block the signal, one calling malloc while the Lua thread's GC frees
 * the objects a walk would read. So the handler touches Lua's memory only
 * on the Lua thread (g_lua_tid: the one that called listen, or that served
 * the last request); elsewhere it sends the same signal and value on to
 * that thread and returns (a Lua thread that blocks the signal takes it
 * when it unblocks it). Not known (injected into a threaded process,
 * before its first served request) or gone, the main thread alone is
 * hooked: its lua_State lives until lua_close, which waits for any handler
 * under way (co_attach_closing). An
 * object being linked may not have its type set yet: a thread is only
 * touched if its type and its global_State pointer both match. lua_close
 * frees the list after the finalizers ran: the module's sentinel closes
 * the door first (co_attach_closing).
 *
 * Every coroutine is found by walking the Lua 5.1 GC object list, whose
 * layout (global_State) is verified when listening; without it, threads
 * are hooked when resumed through coroutine.resume/wrap and unhook at their
 * next event. The walk runs with the GC held (no step can free a thread we
 * hold) and skips objects the GC has already found dead.
 *
 * LuaJIT: its hook is the VM's, not a thread's, so the handler hooks the
 * main thread only and never walks the GC list (its layout is not 5.1's);
 * the trace begins with the running thread's stack (lua_getstack) and its
 * resumers' from the main thread on (jit_chain), others are met as they
 * run (co_jit.c). Compiled code calls no hook: the attach
 * waits until the program runs interpreted code (leaves a compiled loop).
 * The hook that serves it turns the JIT off and flushes (co_jit_suspend);
 * the detach turns it on again if it was. No layout reader is armed: a
 * dump is answered from the hook, never by the handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "co_clock.h"
#include "lr_layout.h"
#include "co_state.h"
#include "lt_attach.h"

enum {
    WALK_MAX = 1 << 28 /* objects: a bound against a corrupt list */
};

volatile int co_attach_req;
static lua_State *g_main;
static int g_walk_ok; /* the GC list layout held when listening */
static int g_state_ok; /* lua_State/CallInfo layout held when listening */
static int g_sigdump_ok; /* the handler's stack reader saw what the debug API sees */
static char g_marker[256];
static char g_sock[108]; /* where recorderd listens: for the handler, made in advance */
static pid_t g_pid;
static int g_injected; /* loaded by recorderd (co_attach_inject): checks wait for a hook */
static volatile pid_t g_lua_tid; /* the thread that runs g_main; 0: not known */
static int g_in_handler; /* handlers under way (atomic): lua_close waits for them */

static pid_t self_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}
static int g_jit_restore; /* LuaJIT: the attach turned its compiler off */

static void *rd_ptr(const void *base, int off)
{
    void *v;
    memcpy(&v, (const char *)base + off, sizeof v);
    return v;
}

static size_t rd_size(const void *base, int off)
{
    size_t v;
    memcpy(&v, (const char *)base + off, sizeof v);
    return v;
}

static void wr_size(void *base, int off, size_t v)
{
    memcpy((char *)base + off, &v, sizeof v);
}

/* Calls fn with every live thread but L. GC steps are held off meanwhile. */
static void each_thread(lua_State *L, void (*fn)(lua_State **t, size_t n, void *ud), void *ud)
{
    char *g = rd_ptr(L, LS_G);
    size_t threshold = rd_size(g, G_THRESHOLD);
    wr_size(g, G_THRESHOLD, (size_t)-3); /* Lua 5.1's MAX_LUMEM: no GC step */
    unsigned otherwhite = (unsigned)(((const uint8_t *)g)[G_CURWHITE] ^ 3) & 3;
    size_t n = 0, cap = 64;
    lua_State **t = malloc(cap * sizeof *t);
    for (char *o = rd_ptr(g, G_ROOTGC); t && o && n < WALK_MAX; o = rd_ptr(o, 0)) {
        if (o[LS_TT] != LUA_TTHREAD || (lua_State *)o == L || (o[LS_MARKED] & otherwhite))
            continue;
        if (n == cap) {
            lua_State **u = realloc(t, 2 * cap * sizeof *t);
            if (!u)
                break;
            t = u;
            cap *= 2;
        }
        t[n++] = (lua_State *)o;
    }
    if (t) /* fn may allocate: not while walking */
        fn(t, n, ud);
    free(t);
    wr_size(g, G_THRESHOLD, threshold);
}

/* Checks the global_State fields each_thread uses: main is the state's
 * main thread, L (main or another) runs. */
static int walk_check(lua_State *main, lua_State *L)
{
    char *g = rd_ptr(L, LS_G);
    if (!g || rd_ptr(g, G_MAINTHREAD) != (void *)main || rd_ptr(g, G_REGISTRY) !=
        lua_topointer(L, LUA_REGISTRYINDEX) || *(const int *)(g + G_REGISTRY + 8) != LUA_TTABLE)
        return 0;
    size_t total = ((size_t)lua_gc(L, LUA_GCCOUNT, 0) << 10) + (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
    if (rd_size(g, G_TOTALBYTES) != total)
        return 0;
    lua_State *co = lua_newthread(L); /* must be found on the list */
    int found_co = 0, found_main = 0;
    size_t n = 0;
    for (char *o = rd_ptr(g, G_ROOTGC); o && n < WALK_MAX; o = rd_ptr(o, 0), n++) {
        if ((uint8_t)o[LS_TT] > LUA_TTHREAD + 2) /* proto, upval */
            break;
        found_co |= (lua_State *)o == co && o[LS_TT] == LUA_TTHREAD;
        found_main |= (lua_State *)o == main && o[LS_TT] == LUA_TTHREAD;
    }
    lua_pop(L, 1);
    return found_co && found_main;
}

static volatile int g_closing; /* lua_close has begun: no more walks */

/* On the Lua thread: a handler on another thread may be hooking the main
 * thread (lua_sethook), which lua_close is about to free. A handler that
 * interrupted this thread here sees g_closing and returns at once. */
void co_attach_closing(void)
{
    __atomic_store_n(&g_closing, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&g_in_handler, __ATOMIC_SEQ_CST))
        sched_yield();
}

static void remove_marker(void);

void co_attach_closed(void)
{
    co_module_state()->attached = 0;
    g_main = NULL; /* freed: requests stay ignored (g_closing) until arm() */
    g_walk_ok = 0;
    g_injected = 0;
    g_jit_restore = 0;
    co_attach_req = 0;
    remove_marker(); /* else an attach would wait for good, not inject anew */
}

void co_attach_forked(void)
{
    g_lua_tid = self_tid(); /* the child's only thread: Lua runs on it if at all */
}

/* Sets T's hook unless T has one of the program's own (debug.sethook,
 * co_dbghook.c): attach and detach never replace nor remove those. */
static void set_if_ours(lua_State *T, lua_Hook h, int mask)
{
    if (co_hook_ours(T))
        lua_sethook(T, h, mask, 0);
}

void co_attach_rearm(lua_State *T)
{
    if (co_attach_req && g_main)
        set_if_ours(T, co_hook, CO_MASK);
}

#ifdef CO_LUA54
/* Lua 5.4 (5.4.0 to 5.4.7, LP64; recorderd's rd_lua54.h reads the same
 * from outside): what the handler reads to follow main's resumes, beside
 * lua_State's and CallInfo's offsets (co_state.h). */
enum {
    TV54_TT = 8,
    TV54_SIZE = 16,
    T54_LCF = 0x16,    /* a light C function's tag: coroutine.resume */
    T54_CCL = 0x66,    /* a C closure's: a wrap function */
    T54_THREAD = 0x48, /* a thread's, in a TValue */
    O54_THREAD = 0x08, /* and in its own header */
    CL54_F = 24,
    CL54_UPV0 = 32,
    RESUMED_MAX = 256
};
static const void *g_cf_resume, *g_cf_wrap; /* set when listening, if layout54_ok */
static const void *g_cf_close; /* coroutine.close: its thread runs __close */

/* The offsets and tags above, on L as it runs (lua_gettop is L->top less
 * its frame's function and one slot, whatever the frame), on a thread
 * made for it and on values pushed: a Lua 5.4 whose layout differs has
 * its resumers left unhooked rather than read wrong in a signal handler. */
static int layout54_ok(lua_State *L)
{
    const char *T = (const char *)L, *ci = rd_ptr(T, L54_CI), *stack = rd_ptr(T, L54_STACK);
    const char *func = ci ? rd_ptr(ci, CI54_FUNC) : NULL, *top;
    if ((uint8_t)T[L54_TT] != O54_THREAD || T[L54_STATUS] != 0 || !stack || func < stack ||
        !lua_checkstack(L, 2))
        return 0;
    lua_State *x = lua_newthread(L);
    lua_pushthread(L);
    top = rd_ptr(T, L54_TOP);
    int ok = top == func + TV54_SIZE * (1 + lua_gettop(L)) &&
             (uint8_t)top[-TV54_SIZE + TV54_TT] == T54_THREAD && rd_ptr(top - TV54_SIZE, 0) == T &&
             (uint8_t)((const char *)x)[L54_TT] == O54_THREAD && rd_ptr(x, L54_G) == rd_ptr(T, L54_G);
    lua_pop(L, 2);
    return ok;
}

/* The thread T runs in its top frame, a coroutine.resume or a wrap call
 * (its argument, or the wrap's upvalue), or a coroutine.close that runs
 * the thread's __close metamethods (its argument), else NULL. Only slots below T's
 * top are read, which the GC keeps alive (a frame in the middle of being
 * pushed may name a stale function: whatever it names there is live);
 * the thread must look like one of this state's, not yet dead. */
static lua_State *resumed54(const char *T, const char *g)
{
    if (!g_cf_resume && !g_cf_wrap) /* not listening, or not this layout */
        return NULL;
    const char *ci = rd_ptr(T, L54_CI), *stack = rd_ptr(T, L54_STACK);
    const char *top = rd_ptr(T, L54_TOP), *func, *arg;
    if (!ci || ci == T + L54_BASE_CI || !stack)
        return NULL;
    func = rd_ptr(ci, CI54_FUNC);
    if (func < stack || func + TV54_SIZE > top)
        return NULL;
    uint8_t tt = (uint8_t)func[TV54_TT];
    const void *cf = tt == T54_LCF ? rd_ptr(func, 0) : NULL;
    if (cf && (cf == g_cf_resume || cf == g_cf_close) && func + 2 * TV54_SIZE <= top)
        arg = func + TV54_SIZE;
    else if (tt == T54_CCL && g_cf_wrap && rd_ptr(rd_ptr(func, 0), CL54_F) == g_cf_wrap)
        arg = (const char *)rd_ptr(func, 0) + CL54_UPV0;
    else
        return NULL;
    const char *x = (uint8_t)arg[TV54_TT] == T54_THREAD ? rd_ptr(arg, 0) : NULL;
    if (!x || x == T || (uint8_t)x[L54_TT] != O54_THREAD || rd_ptr(x, L54_G) != g ||
        x[L54_STATUS] != 0)
        return NULL;
    return (lua_State *)x;
}

/* Lua 5.4's hooks are per thread and its thread list is not walked: with
 * main alone hooked, a program running a coroutine (main waiting in
 * coroutine.resume) had no event until it yielded back to main, and an
 * attach gave up after its timeout. The threads main resumes, each the
 * next's resumer, get the hook too. Async-signal-safe as below. */
static void hook_resumed54(lua_Hook h, int mask)
{
    const char *T = (const char *)g_main, *g = rd_ptr(T, L54_G);
    lua_State *x;
    for (int n = 0; n < RESUMED_MAX && (x = resumed54(T, g)); n++) {
        set_if_ours(x, h, mask);
        T = (const char *)x;
    }
}
#endif

/* Async-signal-safe: no allocation, no Lua API but lua_gethook and
 * lua_sethook. */
static void hook_every_thread(lua_Hook h, int mask)
{
    set_if_ours(g_main, h, mask);
#ifdef CO_LUA54
    hook_resumed54(h, mask);
#endif
    if (!g_walk_ok)
        return;
    char *g = rd_ptr(g_main, LS_G);
    size_t n = 0;
    for (char *o = rd_ptr(g, G_ROOTGC); o && n < WALK_MAX; o = rd_ptr(o, 0), n++)
        if (o[LS_TT] == LUA_TTHREAD && rd_ptr(o, LS_G) == g)
            set_if_ours((lua_State *)o, h, mask);
}

void co_attach_serve_pending(void)
{
    if (co_attach_req && g_main)
        hook_every_thread(co_hook, CO_MASK);
}

/* A DUMP no Lua event served yet: the process is likely blocked in C.
 * Take the request (a hook starting now finds none), send the stacks read
 * from here, and leave no hook; if that fails, the request stays for the
 * next Lua event. */
static void dump_now(void)
{
    int expect = LT_ATTACH_DUMP, saved = errno;
    if (!g_sigdump_ok ||
        !__atomic_compare_exchange_n(&co_attach_req, &expect, 0, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST))
        return; /* served already, or never asked */
    if (co_sigdump_send(g_main, g_walk_ok, g_sock) == 0)
        hook_every_thread(NULL, 0);
    else
        co_attach_req = LT_ATTACH_DUMP;
    errno = saved;
}

/* Whether the signal came while the thread waited in a system call (x86-64:
 * the instruction before its pc is syscall), outside any hook and
 * allocation of ours (sampled time marks the hook's whole run): no record
 * is half written then. */
static int idle_in_syscall(const co_state *s, const void *ctx)
{
#if defined(__x86_64__)
    const ucontext_t *u = ctx;
    const uint8_t *pc = (const uint8_t *)u->uc_mcontext.gregs[REG_RIP];
    if (!s->tick_on || co_tick_in || co_mem_in || !pc)
        return 0;
    /* at it: a call the kernel restarts (SA_RESTART) is rewound to it. Only
     * bytes of pc's own page are read (it is mapped; its neighbours, at
     * the edge of LuaJIT's machine code say, may not be) */
    uintptr_t in = (uintptr_t)pc & 4095;
    return (in >= 2 && pc[-2] == 0x0f && pc[-1] == 0x05) ||
           (in <= 4094 && pc[0] == 0x0f && pc[1] == 0x05);
#else
    (void)s, (void)ctx;
    return 0;
#endif
}

/* The handler on the thread that runs Lua: it walks, or reads the stack.
 * A detach or a flush asked of a process waiting in C (a server between
 * requests) publishes the records so far at once: else those since the
 * last LT_RING_BATCH bytes waited for its next Lua event, and a detach
 * ended its session after recorderd's grace with none of them (attach -d
 * of a server that served a request, then waited). */
static void on_lua_thread(int v, const void *ctx)
{
    co_state *s = co_module_state();
    if ((v == LT_ATTACH_DETACH || v == LT_ATTACH_FLUSH) && s->active && s->ring.hdr &&
        s->attached && idle_in_syscall(s, ctx))
        lt_ring_publish(&s->ring);
    if (v == LT_ATTACH_DETACH) {
        /* the control word is read on the slow path: the next event takes
         * it (as after a drop; co_out_hot_slow sets slow_at again). Where
         * it was read only once per LT_RING_BATCH bytes, a program running
         * a few events a second (a server waiting for requests) ended its
         * trace minutes later: recorderd gave up after its grace, with no
         * event published, and every attach meanwhile waited in vain */
        if (s->active && s->ring.hdr)
            s->slow_at = 0;
        return;
    }
    if (v == LT_ATTACH_FLUSH) { /* top of a program running few events */
        if (s->active && s->ring.hdr && s->attached) {
            s->flush_req = 1;
            s->slow_at = 0;
        }
        return;
    }
    if (v == LT_ATTACH_DUMP_NOW && !s->active && !s->ring.hdr) /* a ring open: the hook serves */
        dump_now();
    if (v != LT_ATTACH_TRACE && v != LT_ATTACH_DUMP)
        return;
    co_attach_req = v;
    if (!s->active) /* else served once that trace ends (detach re-hooks) */
        hook_every_thread(co_hook, CO_MASK);
    else if (s->attached && s->ring.hdr) {
        /* a recorderd asks while another's trace runs: that one was killed
         * (its socket bound, a second one is refused before it asks). The
         * next event looks (any_event): the program found it gone only
         * once the ring filled, hours later for a server waiting for
         * requests, and answered no attach or dump meanwhile */
        s->conn_check = 1;
        s->slow_at = 0;
    }
}

/* The handler on a thread that does not run Lua (the rule at the top):
 * the request goes on to the Lua thread, unchanged (its sender, code and
 * value). If that thread is not known or gone, the main thread is hooked
 * (no walk, no stack read): its first event serves the request. */
static void elsewhere(int sig, siginfo_t *si, int v)
{
    int saved = errno;
    pid_t lua = g_lua_tid;
    if (!lua || syscall(SYS_rt_tgsigqueueinfo, getpid(), lua, sig, si) < 0) {
        if (v == LT_ATTACH_TRACE || v == LT_ATTACH_DUMP) {
            co_attach_req = v;
            if (!co_module_state()->active)
                set_if_ours(g_main, co_hook, CO_MASK);
        }
    }
    errno = saved;
}

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
    int v = si->si_code == SI_QUEUE ? si->si_value.sival_int : 0;
    if (v != LT_ATTACH_TRACE && v != LT_ATTACH_DUMP && v != LT_ATTACH_DUMP_NOW &&
        v != LT_ATTACH_DETACH && v != LT_ATTACH_FLUSH)
        return; /* not from recorderd */
    __atomic_add_fetch(&g_in_handler, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&g_closing, __ATOMIC_SEQ_CST)) { /* else too late */
        if (g_lua_tid == self_tid())
            on_lua_thread(v, ctx);
        else
            elsewhere(sig, si, v);
    }
    __atomic_sub_fetch(&g_in_handler, 1, __ATOMIC_SEQ_CST);
}

static void remove_marker(void)
{
    if (g_marker[0] && getpid() == g_pid)
        unlink(g_marker);
}

static int install_handler(int signo, char *err, size_t cap)
{
    struct sigaction sa = {0}, old;
    if (sigaction(signo, NULL, &old) == 0 && old.sa_handler != SIG_DFL &&
        old.sa_handler != SIG_IGN && old.sa_sigaction != on_signal) {
        snprintf(err, cap, "signal %d is in use by the program; choose another with "
                           "LUATRACE_ATTACH_SIGNAL", signo);
        return -EBUSY;
    }
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask);
    if (sigaction(signo, &sa, NULL) < 0) {
        snprintf(err, cap, "cannot handle signal %d: %s", signo, strerror(errno));
        return -errno;
    }
    return 0;
}

static int arm(const lt_attach_marker *m, char *err, size_t cap);
static void lua_checks(lua_State *L);

int co_attach_signal(void)
{
    const char *v = getenv("LUATRACE_ATTACH_SIGNAL");
    int n = v && *v ? atoi(v) : 0;
    return n >= SIGRTMIN && n <= SIGRTMAX ? n : SIGRTMIN + 7;
}

/* Verifies, from inside a C function, the layout that lets the hook read
 * the called closure without lua_getinfo. */
static int state_probe(lua_State *L)
{
    g_state_ok = co_func_layout_check(L) && co_func_state_check(L, state_probe);
    return 0;
}

int co_attach_listen(lua_State *L, char *err, size_t cap)
{
    if (!lua_pushthread(L)) {
        lua_pop(L, 1);
        snprintf(err, cap, "listen() must be called from the main thread");
        return -EINVAL;
    }
    lua_pop(L, 1);
    if (!co_module_claim(L)) {
        snprintf(err, cap, "this process traces or listens on another Lua state");
        return -EBUSY;
    }
    if (g_main == L) { /* listening already: from the thread that runs it now */
        g_lua_tid = self_tid();
        return 0;
    }
    if (g_main) {
        snprintf(err, cap, "this process listens for attach on another Lua state");
        return -EBUSY;
    }
    if (co_jit_is() && co_jit_hooks_off(L)) { /* the calibration's flush: as tron() */
        snprintf(err, cap, "LuaJIT runs no hook %s: call listen() from other code",
                 co_jit_no_hook_where(L));
        return -EINVAL;
    }
    lt_attach_marker m = {getpid(), lt_attach_start_time(getpid()), co_attach_signal()};
    int e = lt_attach_make_dir(getuid());
    if (e) {
        snprintf(err, cap, "cannot use /tmp/luatrace-%u/attach: %s", (unsigned)getuid(),
                 strerror(-e));
        return e;
    }
    g_main = L;
    g_lua_tid = self_tid(); /* listen runs Lua: this thread is the Lua thread */
    lua_checks(L);
    co_calib_run_state(L, g_state_ok); /* before any request can come */
    if ((e = arm(&m, err, cap)))
        return e;
    co_module_keep_globals(L);
    co_module_once(L);
    return 0;
}

/* The handler and the marker: what makes the process dormant, once g_main
 * and the checks are set. No Lua API. */
static int arm(const lt_attach_marker *m, char *err, size_t cap)
{
    int e;
    lt_attach_socket_path(getuid(), m->pid, g_sock, sizeof g_sock);
    if ((e = install_handler(m->signo, err, cap))) {
        g_main = NULL;
        return e;
    }
    g_pid = m->pid;
    lt_attach_marker_path(getuid(), m->pid, g_marker, sizeof g_marker);
    if ((e = lt_attach_marker_write(g_marker, m))) {
        snprintf(err, cap, "cannot write %s: %s", g_marker, strerror(-e));
        g_marker[0] = 0;
        return e;
    }
    static int at_exit_set;
    if (!at_exit_set++)
        atexit(remove_marker);
    /* a state made after a closed one: requests are served again */
    __atomic_store_n(&g_closing, 0, __ATOMIC_SEQ_CST);
    return 0;
}

/* The layout checks that need the Lua API (they allocate and call): at
 * listen, or for an injected collector at its first hook event, where the
 * state is consistent. */
static void lua_checks(lua_State *L)
{
    if (co_jit_is()) { /* none of the 5.1 layout reads: all stay 0 */
        co_jit_listen(L);
        return;
    }
#ifdef CO_LUA54
    /* nor under 5.4: its global_State is not 5.1's, and reading 5.1's
     * offsets read past the end of its blocks (AddressSanitizer said so);
     * the handler follows main's resumes by these two (hook_resumed54) */
    co_state s;
    memset(&s, 0, sizeof s);
    co_module_special_functions(&s, L);
    if (!layout54_ok(L))
        return;
    g_cf_resume = (const void *)s.cf_resume;
    g_cf_wrap = (const void *)s.cf_wrap;
    g_cf_close = (const void *)s.cf_close;
    return;
#endif
    g_walk_ok = walk_check(g_main, L);
    lua_pushcfunction(L, state_probe);
    lua_call(L, 0, 0);
    g_sigdump_ok = g_state_ok && co_sigdump_check(L);
}

/* Whether g->rootgc can be walked, read only (no Lua API: L may be in the
 * middle of an instruction): L is its global_State's main thread, the
 * registry a table, and the walk meets L within its bound. */
static int walk_check_passive(lua_State *L)
{
    char *g = rd_ptr(L, LS_G);
    if (!g || rd_ptr(g, G_MAINTHREAD) != (void *)L ||
        *(const int *)(g + G_REGISTRY + 8) != LUA_TTABLE)
        return 0;
    size_t n = 0;
    for (char *o = rd_ptr(g, G_ROOTGC); o && n < WALK_MAX; o = rd_ptr(o, 0), n++)
        if ((lua_State *)o == L)
            return o[LS_TT] == LUA_TTHREAD;
    return 0;
}

/* Whether this process has one thread (Threads: 1 in /proc/self/status),
 * read with no stdio and no allocation (co_attach_inject's rule). */
static int one_thread(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    const char *t = strstr(buf, "\nThreads:\t");
    return t && t[10] == '1' && t[11] == '\n';
}

/* Made dormant from outside (recorderd attach, rd_inject.c): called by
 * recorderd through ptrace in a thread stopped where no lock of the C
 * library is held, Lua maybe in the middle of an instruction. So, as the
 * signal handler: no Lua API but reads and lua_sethook (by the handler,
 * later); no stdio. */
int co_attach_inject(lua_State *L)
{
    char err[256];
#ifdef CO_LUA54 /* injection finds the state by 5.1's layout: not 5.4's yet */
    (void)err;
    return -ENOSYS;
#else
    if (!lua_sethook || !lua_gethook || !lua_topointer || !lua_call || co_jit_is())
        return -ENOSYS; /* no Lua 5.1 API in the process (LuaJIT: its layout differs) */
#endif
    if (g_main && g_main != L)
        return -EBUSY;
    lt_attach_marker m = {getpid(), lt_attach_start_time(getpid()), co_attach_signal()};
    int e = lt_attach_make_dir(getuid());
    if (e)
        return e;
    if (g_main == L) /* dormant already (injected, or listen()): its marker may be gone */
        return g_marker[0] ? lt_attach_marker_write(g_marker, &m) : 0;
    if (!co_module_claim(L))
        return -EBUSY;
    g_walk_ok = walk_check_passive(L); /* the full checks wait for a hook event */
    g_lua_tid = one_thread() ? self_tid() : 0; /* recorderd may call from any thread */
    g_injected = 1;
    g_main = L;
    e = arm(&m, err, sizeof err);
    return e == -EBUSY ? -EADDRINUSE : e; /* the program handles the attach signal */
}

/* A thread that resumed another: running (status 0) with frames. */
static int resumer(lua_State *T)
{
    lua_Debug ar;
    return lua_status(T) == 0 && lua_getstack(T, 0, &ar);
}

/* The thread resumer T is resuming: coroutine.resume's first argument, or
 * the thread of the coroutine.wrap function it called, or coroutine.close's
 * argument (5.4: running its __close metamethods); NULL if none (a C
 * function that called lua_resume). */
static lua_State *resumes(const co_state *s, lua_State *T)
{
    lua_Debug ar;
    lua_State *co = NULL;
    if (!lua_getstack(T, 0, &ar) || !lua_checkstack(T, 2) || !lua_getinfo(T, "f", &ar))
        return NULL;
    const void *f = co_cfunc_key(T, -1); /* LuaJIT's fast functions too */
    int by_arg = f && (f == (const void *)s->cf_resume ||
                       (s->cf_close && f == (const void *)s->cf_close));
    if (by_arg && lua_getlocal(T, &ar, 1)) {
        co = lua_tothread(T, -1);
        lua_pop(T, 1);
    } else if (f && f == (const void *)s->cf_wrap && lua_getupvalue(T, -1, 1)) {
        co = lua_tothread(T, -1);
        lua_pop(T, 1);
    }
    lua_pop(T, 1);
    return co;
}

/* Moves the resumers of t (with stack room for naming: they are not in a
 * hook, which would have reserved it) to its front, in the order they
 * resumed one another: the main thread, else one no other resumes, first.
 * Lua 5.1 keeps no resumer, and the GC list is in creation order, so each
 * one's next is the thread its coroutine.resume or wrap call names.
 * Returns how many there are. */
static size_t order_resumers(const co_state *s, lua_State **t, size_t n, lua_State *main)
{
    size_t r = 0;
    for (size_t i = 0; i < n; i++)
        if (resumer(t[i]) && lua_checkstack(t[i], LUA_MINSTACK)) {
            lua_State *x = t[r];
            t[r++] = t[i];
            t[i] = x;
        }
    lua_State **to = r ? malloc(r * sizeof *to) : NULL;
    if (!to)
        return r; /* the walk's order */
    for (size_t i = 0; i < r; i++)
        to[i] = resumes(s, t[i]);
    size_t root = r;
    for (size_t i = 0; i < r && root == r; i++)
        root = t[i] == main ? i : r;
    for (size_t i = 0; i < r && root == r; i++) {
        size_t j = 0;
        while (j < r && to[j] != t[i])
            j++;
        root = j == r ? i : r;
    }
    for (size_t p = 0, at = root < r ? root : 0; p < r; p++) { /* t[at] goes to p */
        lua_State *x = t[p], *y = to[p];
        t[p] = t[at], to[p] = to[at];
        t[at] = x, to[at] = y;
        for (at = p + 1; at < r && t[at] != to[p]; at++)
            ;
        if (at == r)
            at = p + 1; /* the chain breaks: the rest in the walk's order */
    }
    free(to);
    return r;
}

typedef struct begin_ctx {
    co_state *s;
    lua_State *L;
    int attach; /* hook every thread (attach), else the resumers (tron) */
    int from;   /* L's stack from this level (1: a call event's callee left out) */
} begin_ctx;

/* The stacks a trace begins with, when L is not the main thread or may
 * not be. The threads that resumed L go first, each resuming the next
 * (order_resumers), so that L's stack hangs under its resumer's as it
 * would have had tracing begun earlier; then, at attach, every other
 * thread, hooked. With no Lua resumer, a coroutine runs because a host
 * resumed it from C, its main thread idle: the main thread (no frames)
 * goes first all the same, so that it is the trace's first thread,
 * `main`. */
static void begin_all(lua_State **t, size_t n, void *ud)
{
    begin_ctx *c = ud;
    co_state *s = c->s;
    lua_State *L = c->L, *main = s->th.main ? s->th.main : g_main, *first = NULL;
    size_t r = order_resumers(s, t, n, main);
    if (r)
        first = t[0];
    else if (L != main && main && lua_status(main) == 0 && lua_checkstack(main, LUA_MINSTACK))
        first = main;
    if (first)
        co_hook_snapshot(s, first, LT_R_BEGIN);
    else
        co_hook_snapshot_from(s, L, c->from, LT_R_BEGIN);
    for (size_t i = 1; i < r; i++) {
        co_hook_snapshot(s, t[i], LT_R_HOOKED);
        co_hook_resume_record(s, t[i]);
    }
    if (first) {
        co_hook_snapshot_from(s, L, c->from, LT_R_HOOKED);
        co_hook_resume_record(s, L);
    }
    if (!c->attach) { /* tron: others are met when resumed (co_hook.c) */
        for (size_t i = 0; i < r; i++)
            if (co_hook_ours(t[i]))
                co_thread_hook(s, t[i]);
        if (first && !r && co_hook_ours(first))
            co_thread_hook(s, first);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (!co_hook_ours(t[i]))
            continue; /* the program's own hook stays (co_dbghook.c) */
        if (i < r)
            co_thread_hook(s, t[i]);
        else
            co_hook_attach_thread(s, NULL, t[i]);
    }
}

/* Whether the thread list can be walked: verified when listening, else
 * (tron() without listen) at the first need. Never under Lua 5.4: the
 * walk and its check read 5.1's global_State, past the end of 5.4's
 * blocks; its resumers are found through the API (api_chain). */
static int walk_ok(co_state *s, lua_State *L)
{
    static int checked, ok;
#ifdef CO_LUA54
    (void)s, (void)L, (void)checked, (void)ok;
    return 0;
#endif
    if (g_main)
        return g_walk_ok;
    if (!checked && s->th.main) {
        checked = 1;
        ok = walk_check(s->th.main, L);
    }
    return ok;
}

enum { CHAIN_MAX = 256 };

/* LuaJIT and Lua 5.4, no thread list: the threads from the main one to
 * L, each resuming the next (coroutine.resume, a wrap function), so that
 * L's stack hangs under theirs; or the main thread alone if it runs no
 * frame (a host resumed L from C). Returns how many, 0 if neither (L's
 * stack alone). */
#ifdef CO_LUA54
#define CO_API_CHAIN(s) 1
#else
#define CO_API_CHAIN(s) ((s)->jit)
#endif

static size_t api_chain(co_state *s, lua_State *L, lua_State **t)
{
    lua_State *main = s->th.main ? s->th.main : g_main, *x = main;
    lua_Debug ar;
    size_t n = 0;
    if (!main || L == main)
        return 0;
    while (x && x != L && n < CHAIN_MAX && resumer(x) && lua_checkstack(x, LUA_MINSTACK)) {
        t[n++] = x;
        x = resumes(s, x);
    }
    if (x == L && n)
        return n;
    t[0] = main;
    return lua_status(main) == 0 && !lua_getstack(main, 0, &ar) ? 1 : 0;
}

void co_attach_begin_from(co_state *s, lua_State *L, int attach, int from)
{
    begin_ctx c = {s, L, attach, from};
    lua_State *chain[CHAIN_MAX];
    size_t n;
    if ((attach || L != s->th.main) && walk_ok(s, L))
        each_thread(L, begin_all, &c);
    else if (CO_API_CHAIN(s) && (n = api_chain(s, L, chain)))
        begin_all(chain, n, &c);
    else
        co_hook_snapshot_from(s, L, from, LT_R_BEGIN);
}

void co_attach_begin(co_state *s, lua_State *L, int attach)
{
    co_attach_begin_from(s, L, attach, 0);
}

static void unhook_all(lua_State **t, size_t n, void *ud)
{
    (void)ud;
    for (size_t i = 0; i < n; i++)
        set_if_ours(t[i], NULL, 0);
}

/* Ends an attached trace and unhooks every thread: dormant again. */
static void detach(co_state *s, lua_State *L)
{
    if (g_jit_restore) /* from a hook: safe as co_jit_suspend is */
        co_jit_restore(L);
    g_jit_restore = 0;
    co_thread_free(s, L);
    co_module_finish(s, LT_R_DETACH);
    co_set_active(s, 0);
    co_tick_release(s); /* sampled time's timer: no descriptor left behind */
    co_mask = CO_MASK_ALL; /* dormant as before: the next trace asks anew */
    s->attached = 0;
    if (!co_chain_release(s, L)) /* else the program's hook stays, alone */
        lua_sethook(L, NULL, 0, 0);
    if (g_main)
        set_if_ours(g_main, NULL, 0);
    if (g_walk_ok)
        each_thread(L, unhook_all, NULL);
    /* a request that came while this trace ended (the recorder saw it end
     * and asked again at once) found it active, or lost its hooks above */
    if (co_attach_req)
        hook_every_thread(co_hook, CO_MASK);
}

void co_attach_serve(lua_State *L, lua_Debug *ar)
{
    /* one exchange: the handler's dump_now takes the request or we do */
    int req = __atomic_exchange_n(&co_attach_req, 0, __ATOMIC_SEQ_CST);
    co_state *s = co_module_state();
    if (req) /* a hook event: this thread runs Lua now (a state can change threads) */
        g_lua_tid = self_tid();
    char sock[108], name[32], err[256];
    if (s->attached && s->ring.hdr) /* recorderd went away: close, unhook all */
        detach(s, L);
    if (g_injected == 1 && req) { /* the first served event of an injected collector */
        g_injected = 2;
        lua_checks(L);
        co_module_keep_globals(L);
        co_module_once(L);
    }
    if (!req || s->ring.hdr) { /* nothing asked, or a trace begun by tron is open */
        lua_sethook(L, NULL, 0, 0);
        if (co_attach_req) /* a request landed meanwhile: keep its hook */
            lua_sethook(L, co_hook, CO_MASK, 0);
        return;
    }
    lt_attach_socket_path(getuid(), getpid(), sock, sizeof sock);
    lt_attach_ring_name(getpid(), name, sizeof name);
    /* a name of our pid is ours, left by a request served after its
     * client went away: it would make this ring's creation fail */
    lt_ring_unlink(name);
    s->private_summary = 0;
    if (co_module_begin(s, L, name, sock, NULL, err, sizeof err)) {
        lua_sethook(L, NULL, 0, 0); /* recorderd gave up waiting: stay dormant, */
        if (g_walk_ok)              /* say nothing, leave no hook */
            each_thread(L, unhook_all, NULL);
        /* but a request that came meanwhile (its recorderd asked again after
         * this one's was killed) keeps its hooks, else it waits for good */
        co_attach_serve_pending();
        return;
    }
    s->attached = 1;
    s->state_ok = s->layout_ok && g_state_ok;
    co_func_fast_path(s);
    co_hook_set_state(s);
    s->cur_L = L;
    if (s->jit && req == LT_ATTACH_TRACE) /* compiled code would run unseen */
        g_jit_restore = co_jit_suspend(L);
    co_attach_begin(s, L, 1); /* the running thread's stack includes this event */
    co_thread_current(s, L);
    co_set_active(s, 1);
    co_thread_hook(s, L);
    /* and the main thread, as the signal handler hooks it: a request that
     * came while a trace whose recorderd was gone still ran is served
     * here after its detach unhooked main, maybe on a coroutine about to
     * die; with no walk of every thread (Lua 5.4) nothing else ran the
     * trace's hook again, and the process answered no attach for good.
     * Only a main thread with no hook: ours carries its id in its count */
    if (g_main && g_main != L && !s->jit && !lua_gethook(g_main))
        lua_sethook(g_main, co_hook, CO_MASK, 0);
    if (req == LT_ATTACH_DUMP) {
        co_set_active(s, 0); /* no STOP: the stacks are the whole message */
        detach(s, L);
        return;
    }
    /* a call is in the snapshot already; a line or a return is not */
    if (ar->event == LUA_HOOKLINE || ar->event == LUA_HOOKRET)
        co_hook_emit(s, L, ar, 0);
    co_preempt_begin(s);
    s->last = co_now(s);
}

void co_attach_control(co_state *s, lua_State *L)
{
    if (s->attached)
        detach(s, L);
    else /* a ring of a non-attached trace carries no control: ignore it */
        atomic_store_explicit(&s->ring.hdr->control, LT_CONTROL_NONE, memory_order_relaxed);
}
