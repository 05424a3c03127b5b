/* co_module: the Lua module luatrace.so. Entry points luaopen_luatrace
 * (require "luatrace": tron/troff; traces from load when LUATRACE_SHM is
 * set) and luaopen_luatrace_profile (lua -lluatrace.profile: trace the whole
 * run, print a profile summary at exit). Lua errors are raised only here. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "co_clock.h"
#include "co_state.h"

#define CO_EXPORT __attribute__((visibility("default")))
#define CO_SENTINEL "luatrace.sentinel"

int co_module_lines_sampled(void)
{
    const char *lines = getenv("LUATRACE_LINES");
    return lines && !strcmp(lines, "sample");
}

void co_module_sampled_time(co_state *s, const char *clock)
{
    s->no_clock = 1;
    s->use_tsc = 0;
    s->sample_every = 1;
    s->tick_mode = clock && !strcmp(clock, "wall") ? CO_TICK_WALL : CO_TICK_CPU;
    s->tick_ns = co_tick_start_ns(&s->tick_fine);
}

void co_module_lines_by_sample(co_state *s)
{
    s->lines_sampled = 1;
    co_mask = LUA_MASKCALL | LUA_MASKRET;
}

static void emit_stop(co_state *s, unsigned reason)
{
    if (s->tick_on) /* the ticks up to here, where they landed */
        co_tick_flush(s);
    uint64_t t0 = co_now(s);
    uint64_t dt = t0 > s->last ? co_preempt_off(s, t0 - s->last) : 0;
    co_out_waited(s);
    uint8_t *p = co_out_reserve(s, LT_EVENT_HOT_MAX);
    if (!p)
        return;
    uint8_t *q = lt_put_head(p, LT_EV_STOP, 2);
    q = lt_put_uint(q, dt);
    q = lt_put_uint(q, reason);
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
    co_out_clock(s);
    lt_ring_publish(&s->ring);
}

/* Ends the trace: last records, producer DONE, wait for a private
 * recorder to write its reports. Idempotent (lua_close, then atexit). */
void co_module_finish(co_state *s, unsigned reason)
{
    if (!s || !s->ring.hdr)
        return;
    /* The last records are worth a wait even in drop mode: without them the
     * trace would not say how it ended, nor what it lost. Not after a wait
     * reached LUATRACE_WAIT_MAX: recorderd is not reading. */
    s->drop_mode = s->stalled;
    s->mem_off = 0; /* the state's close frees everything: none of it sent */
    if (s->active) {
        co_hook_flush_gap(s);
        emit_stop(s, reason);
    }
    co_set_active(s, 0);
    lt_ring_publish(&s->ring);
    /* release: every record is visible before DONE */
    atomic_store_explicit(&s->ring.hdr->prod_state, LT_PROD_DONE, memory_order_release);
    co_conn_close(s);
    co_preempt_end(s);
    /* No unlink here: recorderd removed the name when it mapped the ring,
     * and by now the name may belong to another process's ring. */
    lt_ring_close(&s->ring);
    co_func_free(s);
    co_thread_free(s, NULL);
    s->ring.hdr = NULL;
}

static void at_exit(void)
{
    co_mem_in++; /* the collector's allocations from here */
    co_module_finish(co_hook_state(), LT_R_EXIT);
}

volatile int co_fork_pending;

/* A child of fork() shares its parent's ring (MAP_SHARED) and connection:
 * it must never write into either. Only async-signal-safe calls here (a
 * child of a threaded parent); the child's own trace begins at its next
 * Lua event (co_module_forked), so a fork that execs or _exits costs
 * nothing. An attached trace is its parent's pid's alone: the child runs
 * untraced. */
static void in_forked_child(void)
{
    co_attach_forked();
    co_tick_forked();
    co_state *s = co_hook_state();
    if (!s)
        return;
    co_fork_pending = s->active && !s->attached && !s->lost;
    if (co_fork_pending)
        co_rehook_forked(s);
    co_set_active(s, 0);
    s->lost = 1;
    if (co_conn_ours(s)) /* else the program closed it, and the number is its own */
        close(s->sock); /* the parent's connection ends with the parent */
    s->sock = -1;
    s->wait_bye = 0;
    lt_ring_close(&s->ring);
}

static void setup_failed(const char *err);

void co_module_forked(lua_State *L, lua_Debug *ar)
{
    co_state *s = co_module_state();
    char name[LT_RING_NAME_MAX + 1], err[512];
    int state_ok = s->state_ok;
    co_fork_pending = 0;
    /* NAME.PID: 40 bytes of the parent's ring name at most, as a taken name */
    snprintf(name, sizeof name, "%.40s.%d", s->shm, (int)getpid());
    co_thread_free(s, L); /* the parent's tables: memory only, nothing written */
    co_func_free(s);
    if (co_module_begin(s, L, name, NULL, NULL, err, sizeof err)) {
        setup_failed(err);
        return;
    }
    /* the layout was verified in the parent: the same code and memory */
    s->state_ok = s->layout_ok && state_ok;
    co_func_fast_path(s);
    co_hook_set_state(s);
    /* as an attach begins: every thread's stack, suspended coroutines too
     * (the parent traced them; the child's new tables know none) */
    s->cur_L = L;
    /* a call's callee is left out and the call sent: the child made it
     * (LuaJIT's first event after fork(), which reports no C return: the
     * child's first call went uncounted) */
    int call = ar->event == LUA_HOOKCALL;
    co_attach_begin_from(s, L, 1, call);
    co_thread_current(s, L);
    co_set_active(s, 1);
    co_thread_hook(s, L);
    if (call || ar->event == LUA_HOOKLINE || ar->event == LUA_HOOKRET)
        co_hook_emit(s, L, ar, 0);
    co_preempt_begin(s);
    s->last = co_now(s);
}

/* The claimed state's registry (co_module_claim). */
static _Atomic(const void *) g_owner;

int co_module_claim(lua_State *L)
{
    const void *none = NULL, *r = lua_topointer(L, LUA_REGISTRYINDEX);
    /* seq_cst: two states' first loads may race on two OS threads */
    atomic_compare_exchange_strong(&g_owner, &none, r);
    return atomic_load(&g_owner) == r;
}

int co_module_owns(lua_State *L)
{
    return atomic_load(&g_owner) == lua_topointer(L, LUA_REGISTRYINDEX);
}

/* A Lua state that is not the claimed one runs untraced: say so. */
static void not_claimed(const char *what)
{
    fprintf(stderr, "luatrace: %s: this process traces another Lua state; this one runs "
                    "untraced\n", what);
}

/* A start-up load waiting for its first call (start_later). */
static struct {
    int on;
    int base_ci; /* a call at this CallInfo index or below is the program's */
    int private_summary;
    char name[256];
} g_pending;

static int sentinel_gc(lua_State *L)
{
    const void *mine = lua_topointer(L, LUA_REGISTRYINDEX);
    co_mem_in++; /* lua_close: the end's records are the collector's */
    co_attach_closing();
    co_sigint_closing();
    co_module_finish(co_hook_state(), LT_R_CLOSE);
    co_chain_forget_all();
    g_pending.on = 0; /* closed before its first call */
    co_attach_closed();
    /* a state made after this one may trace (tron) */
    atomic_compare_exchange_strong(&g_owner, &mine, NULL);
    co_alloc_memory(NULL, L);
    co_mem_in--;
    return 0;
}

/* This process's arguments, from /proc/self/cmdline (under lua5.1
 * -lluatrace, Lua has not set arg yet): argc, argv into cmd. */
static int read_args(char *cmd, size_t cap, char **argv, int max)
{
    int argc = 0, fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, cmd, cap - 1) : -1;
    if (fd >= 0)
        close(fd);
    n = n > 0 ? n : 0;
    cmd[n] = 0;
    for (char *p = cmd; p < cmd + n && argc < max; p += strlen(p) + 1)
        argv[argc++] = p;
    return argc;
}

/* LT_RING_NAME_SCRIPT: a ring named after this process's script. */
static void script_ring_name(char *buf, size_t cap)
{
    char cmd[4096], *argv[64];
    int argc = read_args(cmd, sizeof cmd, argv, 64);
    lt_ring_name_of_args(argc, argv, buf, cap);
}

/* lua5.1 -lluatrace (or -l luatrace) before the script. */
static int loaded_by_option(void)
{
    char cmd[4096], *argv[64];
    int argc = read_args(cmd, sizeof cmd, argv, 64);
    return lt_args_loads(argc, argv, "luatrace");
}

int co_module_create_ring(co_state *s, const char *name, uint64_t size, int own_size, char *err,
                          size_t cap)
{
    char own[LT_RING_NAME_MAX + 1];
    if (!strcmp(name, LT_RING_NAME_SCRIPT)) {
        script_ring_name(own, sizeof own);
        name = own;
    }
    const char *size_s = getenv("LUATRACE_RING");
    if (!own_size && size_s && *size_s && lt_ring_parse_size(size_s, &size)) {
        snprintf(err, cap, "LUATRACE_RING=%s: expected a power of two from 64K to 1G", size_s);
        return -EINVAL;
    }
    if (lt_ring_name_check(name)) {
        snprintf(err, cap, "LUATRACE_SHM=%s: use 1-%d of [A-Za-z0-9._-], not starting with '.'",
                 name, LT_RING_NAME_MAX);
        return -EINVAL;
    }
    int e = -EEXIST;
    for (int i = 0; i < 100 && e == -EEXIST; i++) {
        if (i == 0)
            snprintf(s->shm, sizeof s->shm, "%s", name);
        else
            snprintf(s->shm, sizeof s->shm, "%.40s.%d%s%.0d", name, (int)getpid(), i > 1 ? "." : "", i > 1 ? i : 0);
        e = lt_ring_create(&s->ring, s->shm, size);
        if (e == -EEXIST && !lt_ring_reclaim(s->shm)) /* a killed program's */
            e = lt_ring_create(&s->ring, s->shm, size);
    }
    if (e)
        snprintf(err, cap, "cannot create ring /dev/shm%s%s: %s", LT_RING_PREFIX, s->shm, strerror(-e));
    return e;
}
/* The globals table as the program's chunks see it at start-up. */
static void co_push_globaltable(lua_State *L)
{
#ifdef CO_LUA54
    lua_pushglobaltable(L);
#else
    lua_pushvalue(L, LUA_GLOBALSINDEX);
#endif
}


#define CO_GLOBALS "luatrace.globals"

void co_module_keep_globals(lua_State *L)
{
    lua_pushliteral(L, CO_GLOBALS);
    lua_rawget(L, LUA_REGISTRYINDEX);
    int kept = lua_istable(L, -1);
    lua_pop(L, 1);
    if (kept)
        return;
    lua_pushliteral(L, CO_GLOBALS);
    co_push_globaltable(L);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

void co_module_push_globals(lua_State *L)
{
    lua_pushliteral(L, CO_GLOBALS);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_istable(L, -1))
        return;
    lua_pop(L, 1);
    lua_pushliteral(L, "_LOADED");
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_istable(L, -1)) {
        lua_pushliteral(L, "_G");
        lua_rawget(L, -2);
        lua_remove(L, -2);
        if (lua_istable(L, -1))
            return;
    }
    lua_pop(L, 1);
    co_push_globaltable(L);
}

/* t[k], raw: a metamethod would run the program's code here. t is an
 * absolute index. */
static void raw_field(lua_State *L, int t, const char *k)
{
    lua_pushstring(L, k);
    lua_rawget(L, t);
}

static lua_CFunction field_cfunction(lua_State *L, int t, const char *k)
{
    raw_field(L, t, k);
    lua_CFunction f = (lua_CFunction)co_cfunc_key(L, -1); /* a fast function's closure */
    lua_pop(L, 1);
    return f;
}

/* The C functions the stack rebuilder needs to know by identity. */
void co_module_special_functions(co_state *s, lua_State *L)
{
    co_module_push_globals(L);
    int g = lua_gettop(L);
    s->cf_pcall = field_cfunction(L, g, "pcall");
    s->cf_xpcall = field_cfunction(L, g, "xpcall");
    raw_field(L, g, "coroutine");
    if (lua_istable(L, -1)) {
        int co = lua_gettop(L);
        s->cf_resume = field_cfunction(L, co, "resume");
        s->cf_yield = field_cfunction(L, co, "yield");
        s->cf_close = field_cfunction(L, co, "close"); /* 5.4's; else NULL */
        raw_field(L, co, "wrap");
        /* wrap takes Lua functions only: an empty chunk (on any failure
         * an error message replaces wrap on the stack). A Lua function in
         * its place is the program's: never called */
        if (lua_iscfunction(L, -1) && luaL_loadbuffer(L, "", 0, "=luatrace") == 0 &&
            lua_pcall(L, 1, 1, 0) == 0)
            s->cf_wrap = (lua_CFunction)co_cfunc_key(L, -1);
    }
    lua_settop(L, g);
    s->cf_require = field_cfunction(L, g, "require");
    raw_field(L, g, "package");
    if (lua_istable(L, -1)) {
        int pk = lua_gettop(L);
        raw_field(L, pk, "loaders"); /* Lua 5.1, LuaJIT */
        if (!lua_istable(L, -1))
            raw_field(L, pk, "searchers"); /* Lua 5.4 */
        for (int i = 0; i < 4 && lua_istable(L, -1); i++) {
            lua_rawgeti(L, -1, i + 1);
            s->cf_loader[i] = (lua_CFunction)co_cfunc_key(L, -1);
            lua_pop(L, 1);
        }
    }
    lua_settop(L, g - 1);
}

void co_module_sentinel(lua_State *L, const char *name, lua_CFunction gc)
{
    lua_newuserdata(L, 1);
    luaL_newmetatable(L, name);
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, name);
}

static co_state g_co; /* one traced Lua state per process */
static int g_tron_memory; /* tron{memory=true} asked for memory */

/* LUATRACE_MEMORY=1 (or tron{memory=true}): the allocator's calls are
 * traced where the allocator is ours; else said in a line, and the trace
 * has no memory (never a wrong profile). */
static void memory_begin(co_state *s, lua_State *L, int calib)
{
    const char *env = getenv("LUATRACE_MEMORY");
    s->mem = !calib && (s->mem || (env && !strcmp(env, "1")) || g_tron_memory); /* or the ack's */
    if (s->mem && s->jit && co_sample_hz() > 0) { /* its profiler's records come from no hook */
        fprintf(stderr, "luatrace: memory: not with LuaJIT's sampling (run --sample); the "
                        "trace has no memory profile\n");
        s->mem = 0;
    } else if (s->mem && co_alloc_memory(s, L)) {
        fprintf(stderr, "luatrace: memory: the state's allocator could not be wrapped "
                        "(LUATRACE_ALLOC=plain, or lua_setallocf did not take); the trace "
                        "has no memory profile\n");
        s->mem = 0;
    }
    if (!s->mem)
        co_alloc_memory(NULL, L);
    co_alloc_gc(s, L);
}

/* Opens a trace into a fresh ring registered with a recorder (sock_path,
 * else the usual search), or, for the calibration (calib), a ring of its
 * own that nobody reads. Fills s from the environment; keeps nothing of a
 * previous trace. Returns 0 or -1 with a message in err. */
static int begin(co_state *s, lua_State *L, const char *name, const char *sock_path,
                 lua_CFunction running, int calib, char *err, size_t cap)
{
    int private_summary = s->private_summary;
    uint32_t epoch = s->th.epoch; /* the next trace's differs */
    memset(s, 0, sizeof *s);
    s->th.epoch = epoch;
    s->sock = -1;
    s->line_end = s->depth_end = UINT64_MAX; /* nothing implied yet */
    s->pre_min = CO_PREEMPT_NEVER; /* armed as tracing starts (co_preempt_begin) */
    const char *timing = getenv("LUATRACE_TIMING");
    s->sample_every = timing && !strcmp(timing, "fast") ? CO_SAMPLE_EVERY : 1;
    s->sample_left = 1;
    s->rng = 0x9E3779B97F4A7C15ull;
    s->private_summary = private_summary;
    s->no_clock = timing && !strcmp(timing, "none"); /* or the ack's (co_conn.c) */
    if (timing && !strcmp(timing, "sample") && !calib) /* events as with none, time ticks */
        co_module_sampled_time(s, getenv("LUATRACE_TICK_CLOCK"));
    co_mask = CO_MASK_ALL;
    if (s->tick_mode && co_module_lines_sampled()) /* no line hook (co_tick.c) */
        co_module_lines_by_sample(s);
    s->use_tsc = !s->no_clock && co_clock_tsc_ok();
    snprintf(s->sock_path, sizeof s->sock_path, "%s", sock_path ? sock_path : "");
    const char *mode = getenv("LUATRACE_MODE");
    s->drop_mode = mode && !strcmp(mode, "drop");
    const char *wait_max = getenv("LUATRACE_WAIT_MAX");
    char *end = NULL;
    long wait_s = wait_max && *wait_max ? strtol(wait_max, &end, 10) : CO_WAIT_MAX_S;
    if (end && (*end || wait_s < 1 || wait_s > 86400)) {
        snprintf(err, cap, "LUATRACE_WAIT_MAX=%s: whole seconds from 1 to 86400", wait_max);
        return -1;
    }
    s->wait_max_ns = (uint64_t)wait_s * 1000000000ull;
    if (!getcwd(s->cwd0, sizeof s->cwd0))
        s->cwd0[0] = 0;
    const char *sink = getenv("LUATRACE_SINK");
    s->discard = calib || (sink && !strcmp(sink, "discard"));
    s->calib = calib;
    /* the calibration's few records: a big ring costs its setup */
    if (co_module_create_ring(s, name, calib ? 1u << 20 : LT_RING_DEFAULT_SIZE, calib, err, cap))
        return -1;
    if (co_func_init(s)) {
        snprintf(err, cap, "out of memory");
        goto fail_ring;
    }
    if (s->discard)
        lt_ring_unlink(s->shm); /* nobody will map it */
    else if (co_conn_open(s, err, cap))
        goto fail_func;
    /* LuaJIT: none of the 5.1 layout reads (co_jit.c) */
    s->jit = co_jit_is();
#ifdef CO_LUA54
    s->jit_lines = co_jit_lines_check(L); /* 5.4's own lines (co_lines54.c) */
#else
    s->jit_lines = s->jit && co_jit_lines_check(L);
#endif
    s->layout_ok = !s->jit && co_func_layout_check(L);
    s->state_ok = s->layout_ok && running && co_func_state_check(L, running);
    s->table_ok = s->layout_ok && co_name_layout_check(L);
    s->code_ok = s->layout_ok && co_code_layout_check(L);
    s->watched = s->layout_ok ? co_alloc_watch(L) : 0;
    memory_begin(s, L, calib);
    co_func_fast_path(s);
    co_module_special_functions(s, L);
    co_name_iterators(L);
    if (co_thread_init(s, L)) {
        snprintf(err, cap, "out of memory");
        goto fail_conn;
    }
    co_out_clock(s);
    if (!calib)
        co_out_bias(s);
    return 0;
fail_conn:
    if (s->sock >= 0)
        close(s->sock);
    s->sock = -1;
fail_func:
    co_func_free(s);
fail_ring:
    lt_ring_unlink(s->shm);
    lt_ring_close(&s->ring);
    s->ring.hdr = NULL;
    return -1;
}

int co_module_begin(co_state *s, lua_State *L, const char *name, const char *sock_path,
                    lua_CFunction running, char *err, size_t cap)
{
    return begin(s, L, name, sock_path, running, 0, err, cap);
}

int co_module_begin_calib(co_state *s, lua_State *L, lua_CFunction running, char *err, size_t cap)
{
    return begin(s, L, "calibration", NULL, running, 1, err, cap);
}

/* The claimed state's sentinel (one per state: a host that closes its
 * state and makes another claims that one next), and the process-wide
 * hooks of the module, installed once. */
void co_module_once(lua_State *L)
{
    static int done;
    lua_getfield(L, LUA_REGISTRYINDEX, CO_SENTINEL);
    int has = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!has)
        co_module_sentinel(L, CO_SENTINEL, sentinel_gc);
    if (done)
        return;
    done = 1;
    atexit(at_exit);
    pthread_atfork(NULL, NULL, in_forked_child);
}

co_state *co_module_state(void)
{
    return &g_co;
}

static void setup_failed(const char *err)
{
    fprintf(stderr, "luatrace: %s; running untraced\n", err);
}

/* Creates the state, the ring, and registers with a recorder. Returns the
 * state, or NULL after printing why tracing is off. */
static co_state *setup(lua_State *L, const char *name, int private_summary, lua_CFunction running)
{
    co_state *s = &g_co;
    char err[512];
    s->private_summary = private_summary;
    if (co_module_begin(s, L, name, NULL, running, err, sizeof err)) {
        setup_failed(err);
        return NULL;
    }
    co_module_once(L);
    co_hook_set_state(s);
    return s;
}

/* A start-up load (LUA_INIT, lua5.1 -lluatrace, a host's require from C)
 * traces from the first call made once the collector's frames are gone:
 * they (the LUA_INIT chunk, require, luaopen_*) are never in a profile,
 * and a script that never runs (missing, a syntax error) leaves no trace.
 * Until then a call hook on the main thread waits; the ring and the
 * recorder come with the first traced call. */
static int frame_is(lua_State *L, int level, const char *what, lua_Debug *ar)
{
    return lua_getstack(L, level, ar) && lua_getinfo(L, "S", ar) && !strcmp(ar->what, what);
}

/* Is luaopen (level 0) loaded at start-up: below it require (or any C
 * function), then perhaps the LUA_INIT chunk, then C frames only (lua.c's
 * pmain)? Sets *base to the CallInfo index of the lowest collector frame. */
static int startup_load(lua_State *L, int *base)
{
    lua_Debug ar;
    int level = 1;
    if (!lua_getstack(L, 0, &ar))
        return 0;
    *base = CO_AR_SLOT(&ar); /* LuaJIT's: the slot, as its hook's (co_jit.c) */
    if (frame_is(L, level, "C", &ar)) {
        *base = CO_AR_SLOT(&ar);
        level++;
        if (frame_is(L, level, "main", &ar) && !strcmp(ar.source, "=LUA_INIT")) {
            *base = CO_AR_SLOT(&ar);
            level++;
        }
    }
    for (; lua_getstack(L, level, &ar); level++)
        if (!frame_is(L, level, "C", &ar))
            return 0;
    return 1;
}

/* Is the call a hook reports require "luatrace" (lua5.1 -lluatrace under
 * run's LUA_INIT): the collector again, not the program? Its arguments
 * are the callee's stack. */
static int requires_us(lua_State *L, lua_Debug *ar)
{
    size_t n;
    const char *name = lua_gettop(L) >= 1 && lua_type(L, 1) == LUA_TSTRING
                           ? lua_tolstring(L, 1, &n) : NULL;
    if (!name || strncmp(name, "luatrace", 8) || (name[8] && name[8] != '.'))
        return 0;
    lua_getinfo(L, "f", ar);
    co_module_push_globals(L);
    raw_field(L, lua_gettop(L), "require");
    int r = lua_tocfunction(L, -1) && lua_tocfunction(L, -1) == lua_tocfunction(L, -3);
    lua_pop(L, 3);
    return r;
}

static void pending_body(lua_State *L, lua_Debug *ar);

/* While the collector begins, what it allocates is its own (co_mem_in). */
static void pending_hook(lua_State *L, lua_Debug *ar)
{
    co_mem_in++;
    pending_body(L, ar);
    co_mem_in--;
}

static void pending_body(lua_State *L, lua_Debug *ar)
{
    co_state *s = co_hook_state();
    if (!g_pending.on) { /* a thread made while waiting (lua_newthread copies hooks) */
        lua_sethook(L, NULL, 0, 0);
        if (s && s->active && co_module_owns(L)) {
            co_thread_hook(s, L);
            co_hook(L, ar);
        }
        return;
    }
    int main = lua_pushthread(L);
    lua_pop(L, 1);
    /* not co_hook: 5.4's ar is not normalized (co_ev_normalize), its
     * istailcall unset; a plain call's depth is CO_AR_DEPTH */
    if (ar->event != LUA_HOOKCALL || (main && (int)CO_AR_DEPTH(ar) > g_pending.base_ci) ||
        requires_us(L, ar))
        return; /* still inside LUA_INIT or require */
    co_ev_normalize(ar); /* a plain call: its records' depth (CO_EV_DEPTH) */
    g_pending.on = 0;
    lua_sethook(L, NULL, 0, 0);
    s = setup(L, g_pending.name, g_pending.private_summary, co_running_top);
    if (!s || s->active || s->lost)
        return;
    co_thread_stale_all(s);
    co_hook_snapshot_caller(s, L); /* the callee comes with this call's record */
    co_thread_current(s, L);
    co_set_active(s, 1);
    co_thread_hook(s, L);
    if (main) {
        co_sigint_install(L);
        co_cpath_hide(L);
    }
    co_preempt_begin(s);
    s->last = co_now(s);
    co_hook(L, ar); /* this call: the first traced event */
}

/* Traces L as a start-up load would, if it is one. Returns 1 if so. */
static int start_later(lua_State *L, const char *name, int private_summary)
{
    int base;
    if (g_pending.on || !startup_load(L, &base) || lua_gethook(L))
        return 0;
    co_module_once(L); /* the sentinel: a lua_close before the first call ends the wait */
    g_pending.on = 1;
    g_pending.base_ci = base;
    g_pending.private_summary = private_summary;
    snprintf(g_pending.name, sizeof g_pending.name, "%s", name);
    lua_sethook(L, pending_hook, LUA_MASKCALL, 0);
    return 1;
}

/* Starts (or restarts after troff) tracing L from its current stack. */
static void start(co_state *s, lua_State *L)
{
    if (s->active || s->lost)
        return;
    co_thread_stale_all(s); /* tracing restarts: recorderd forgot their stacks */
    s->mem_off = 0;
    /* tron() in a coroutine: its resumers, main first, are traced from here */
    co_attach_begin(s, L, 0);
    co_thread_current(s, L);
    co_set_active(s, 1);
    co_thread_hook(s, L);
    co_preempt_begin(s);
    s->last = co_now(s);
}

static int tron_body(lua_State *L);

/* tron's settings (argument 1) say memory = true. */
static int asks_memory(lua_State *L)
{
    if (!lua_istable(L, 1))
        return 0;
    lua_getfield(L, 1, "memory");
    int on = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return on;
}

/* tron{memory = true} in a trace that began without memory (recorderd run
 * without --memory traces from the start): said once, not ignored
 * silently (a user took the trace for a memory profile's). */
static void memory_too_late(void)
{
    static int said;
    if (said++)
        return;
    fprintf(stderr, "luatrace: tron: memory = true: this trace began without memory and stays "
                    "so (recorderd run --memory, or LUATRACE_MEMORY=1, traces memory from the "
                    "start)\n");
}

/* tron and troff: what they allocate is the collector's (co_mem_in). */
static int l_tron(lua_State *L)
{
    co_mem_in++;
    int r = tron_body(L);
    co_mem_in--;
    return r;
}

static int tron_body(lua_State *L)
{
    co_state *s = co_hook_state();
    if (co_jit_is() && !(s && s->active) && co_jit_hooks_off(L)) {
        /* nothing here would be traced, and turning the compiler off
         * would raise (a finalizer) or crash LuaJIT (a trace event) */
        fprintf(stderr, "luatrace: tron: LuaJIT runs no hook %s; tracing not begun\n",
                co_jit_no_hook_where(L));
        lua_pushboolean(L, 0);
        return 1;
    }
    if (!co_module_claim(L)) {
        not_claimed("tron");
        s = NULL;
    } else if (s && s->attached) {
        fprintf(stderr, "luatrace: tron: recorderd attach is tracing this process\n");
        s = NULL;
    } else if (!s || !s->ring.hdr) { /* never traced, or detached since */
        if (g_pending.on) { /* a host's tron before its first call: from here */
            g_pending.on = 0;
            lua_sethook(L, NULL, 0, 0);
        }
        co_calib_run(L, l_tron);
        const char *name = getenv("LUATRACE_SHM");
        if (lua_istable(L, 1)) {
            lua_getfield(L, 1, "shm");
            name = lua_isstring(L, -1) ? lua_tostring(L, -1) : name;
            lua_getfield(L, 1, "memory");
            g_tron_memory = lua_toboolean(L, -1);
        }
        s = setup(L, name && *name ? name : LT_RING_NAME_SCRIPT, 0, l_tron);
    } else if (!s->mem && asks_memory(L)) {
        memory_too_late();
    }
    if (s && co_jit_is() && !s->active)
        co_jit_prepare(L);
    if (s && !co_hook_ours(L)) {
        fprintf(stderr, "luatrace: tron: this thread has the program's own debug hook"
                        " (debug.sethook); remove it first\n");
        s = NULL;
    }
    if (s)
        start(s, L);
    lua_pushboolean(L, s && s->active);
    return 1;
}

static int l_troff(lua_State *L)
{
    co_state *s = co_module_owns(L) ? co_hook_state() : NULL;
    if (s && s->active && !s->attached) {
        co_mem_in++;
        emit_stop(s, LT_R_TROFF);
        co_set_active(s, 0); /* other threads unhook at their next event */
        s->mem_off = s->mem; /* until tron: frees still sent (co_alloc.c) */
        if (!co_chain_release(s, L)) /* else the program's hook stays, alone */
            lua_sethook(L, NULL, 0, lua_gethookcount(L)); /* its id, if tracing restarts */
        co_mem_in--;
    }
    return 0;
}

static int l_tracing(lua_State *L)
{
    co_state *s = co_module_owns(L) ? co_hook_state() : NULL;
    lua_pushboolean(L, s && s->active);
    return 1;
}

CO_EXPORT int luaopen_luatrace(lua_State *L);
CO_EXPORT int luaopen_luatrace_profile(lua_State *L);
CO_EXPORT int luatrace_listen(lua_State *L);
CO_EXPORT int luatrace_inject(lua_State *L);

/* Called by recorderd through ptrace after it loaded this library into a
 * process that never did (recorderd/live/rd_inject.c): dormant, as after
 * listen, without the Lua API. Writes nothing on stdout or stderr. */
int luatrace_inject(lua_State *L)
{
    return co_attach_inject(L);
}

int luatrace_listen(lua_State *L)
{
    char err[512];
    int e = co_attach_listen(L, err, sizeof err);
    if (e)
        fprintf(stderr, "luatrace: listen: %s\n", err);
    return e;
}

/* listen(): dormant until `recorderd attach PID`. true, or nil and why. */
static int l_listen(lua_State *L)
{
    char err[512];
    if (co_attach_listen(L, err, sizeof err)) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static const luaL_Reg co_funcs[] = {{"tron", l_tron},
                                    {"troff", l_troff},
                                    {"tracing", l_tracing},
                                    {"listen", l_listen},
                                    {NULL, NULL}};

static void open_table(lua_State *L)
{
    co_module_keep_globals(L);
    co_dbghook_install(L);
    lua_newtable(L);
    luaL_register(L, NULL, co_funcs);
    lua_pushliteral(L, "0.1.0");
    lua_setfield(L, -2, "version");
}

static void open_traced(lua_State *L, const char *name, int private_summary,
                        lua_CFunction running)
{
    open_table(L);
    if (co_jit_is() && !co_hook_state() && co_jit_hooks_off(L)) {
        /* a require in a __gc finalizer, a jit.attach handler or the
         * program's own hook: nothing there is traced, and in the first
         * two the compiler cannot be turned off (as in tron_body) */
        fprintf(stderr, "luatrace: require: LuaJIT runs no hook %s; running untraced\n",
                co_jit_no_hook_where(L));
        return;
    }
    if (co_jit_is() && co_module_claim(L) && !co_hook_state())
        co_jit_prepare(L); /* here, outside any hook */
    if (!co_module_claim(L))
        not_claimed("require");
    else if (g_pending.on) /* LUA_INIT's, then -lluatrace's: the first call begins */
        return;
    else if (!co_hook_state()) {
        co_calib_run(L, running);
        if (!start_later(L, name, private_summary)) {
            co_state *s = setup(L, name, private_summary, running);
            if (s)
                start(s, L);
        }
    }
}

#ifndef CO_LUA54
/* Lua 5.4 loaded the 5.1 build: a LUA_CPATH set by hand, which every Lua
 * reads unless LUA_CPATH_5_4 is set. The refusal says where 5.4's build
 * is: beside ours where it is there (lib/lua/5.1 and lib/lua/5.4 once
 * installed, collector/ and collector/lua54/ in a build tree). */
static const char *build_5_1(void)
{
    static char why[PATH_MAX + 256];
    char dir[PATH_MAX] = "", its[PATH_MAX + 32] = "";
    Dl_info in;
    if (dladdr((void *)build_5_1, &in) && in.dli_fname && strlen(in.dli_fname) < sizeof dir) {
        strcpy(dir, in.dli_fname);
        char *slash = strrchr(dir, '/');
        *(slash ? slash : dir) = 0;
        size_t n = strlen(dir);
        if (n > 4 && !strcmp(dir + n - 4, "/5.1"))
            snprintf(its, sizeof its, "%.*s/5.4", (int)(n - 4), dir);
        else
            snprintf(its, sizeof its, "%s/lua54", dir);
        char so[sizeof its + 16];
        snprintf(so, sizeof so, "%s/luatrace.so", its);
        if (access(so, R_OK))
            its[0] = 0;
    }
    if (its[0])
        snprintf(why, sizeof why, "\1this luatrace.so is built for Lua 5.1 and LuaJIT; Lua 5.4's is "
                 "%s/luatrace.so: LUA_CPATH_5_4='%s/?.so;;' lua5.4 ..., or recorderd run", its, its);
    else
        snprintf(why, sizeof why, "\1this luatrace.so is built for Lua 5.1 and LuaJIT; Lua 5.4 "
                 "loads the one built for it (lib/lua/5.4/luatrace.so) from LUA_CPATH_5_4, or use "
                 "recorderd run");
    return why;
}
#endif

/* Which Lua loaded us, if not Lua 5.1: by the symbols it exports (our own
 * references to the API are weak, co_weak.h, so that we got this far).
 * NULL for Lua 5.1. A text starting with \1 is the whole reason. */
static const char *other_lua(void)
{
#ifdef CO_LUA54
    /* the 5.4 build (lib/lua/5.4): only lua5.4 finds it there (another
     * Lua led to it by hand fails to load it: its references are strong) */
    return dlsym(RTLD_DEFAULT, "lua_newuserdatauv") && dlsym(RTLD_DEFAULT, "lua_setcstacklimit")
               ? NULL : "this Lua (a luatrace.so built for Lua 5.4)";
#else
    if (dlsym(RTLD_DEFAULT, "luaJIT_setmode"))
        return NULL; /* LuaJIT 2.1: co_jit.c */
    if (lua_tointeger && luaL_register && lua_getfield && !dlsym(RTLD_DEFAULT, "lua_callk"))
        return NULL;
    return dlsym(RTLD_DEFAULT, "lua_newuserdatauv") && dlsym(RTLD_DEFAULT, "lua_setcstacklimit")
               ? build_5_1()
           : dlsym(RTLD_DEFAULT, "lua_newuserdatauv") ? "Lua 5.4"
           : dlsym(RTLD_DEFAULT, "lua_rotate")      ? "Lua 5.3"
           : dlsym(RTLD_DEFAULT, "lua_callk")       ? "Lua 5.2"
                                                    : "this Lua";
#endif
}

/* Raises the refusal of another Lua: lua_pushstring and lua_error are in
 * every Lua, with the same calling convention. */
static int refuse_other_lua(lua_State *L, const char *which)
{
    char msg[PATH_MAX + 320];
    if (which[0] == '\1')
        snprintf(msg, sizeof msg, "luatrace: %s", which + 1);
    else
        snprintf(msg, sizeof msg, "luatrace: %s is not supported (Lua 5.1, 5.4 and LuaJIT 2.1 are)",
                 which);
    lua_pushstring(L, msg);
    return lua_error(L);
}

/* LUATRACE_SAMPLE=HZ: LuaJIT samples with its own profiler (co_sample.c,
 * which refuses a bad HZ without an error: run's LUA_INIT loads us); Lua
 * 5.1 and 5.4 have none, and are sampled from outside by recorderd
 * (co_outside.c), except with a private recorder (luatrace.profile),
 * which as the process's child may not read it (ptrace's rule): traced
 * exactly, said once. */
static int sample_mode(int private_summary)
{
    static int said;
    if (!co_sample_hz())
        return 0;
    if (co_jit_is() || !private_summary)
        return 1;
    if (!said++)
        fprintf(stderr, "luatrace: sampling (LUATRACE_SAMPLE) needs recorderd run --sample or "
                        "listen; luatrace.profile traces exactly\n");
    return 0;
}

CO_EXPORT int luaopen_luatrace(lua_State *L)
{
    const char *other = other_lua();
    if (other)
        return refuse_other_lua(L, other);
    co_thread_note_main(L); /* loaded on LuaJIT's main thread: tron() in a coroutine finds it */
    if (sample_mode(0))
        return co_jit_is() ? co_sample_open(L, co_sample_hz(), 0)
                           : co_outside_open(L, co_sample_hz());
    const char *shm = getenv("LUATRACE_SHM");
    const char *attach = getenv("LUATRACE_ATTACH");
    int dormant = attach && !strcmp(attach, "1");
    if (shm && *shm)
        open_traced(L, shm, 0, luaopen_luatrace);
    else if (!dormant && loaded_by_option()) /* lua5.1 -lluatrace app.lua, as people type it */
        open_traced(L, LT_RING_NAME_SCRIPT, 0, luaopen_luatrace);
    else
        open_table(L);
    if (dormant)
        luatrace_listen(L);
    return 1;
}

/* The original luatrace habit: trace the whole run, summary at exit, from a
 * private recorder so no daemon or environment is needed. */
CO_EXPORT int luaopen_luatrace_profile(lua_State *L)
{
    const char *other = other_lua();
    if (other)
        return refuse_other_lua(L, other);
    if (sample_mode(1))
        return co_sample_open(L, co_sample_hz(), 1);
    const char *shm = getenv("LUATRACE_SHM");
    open_traced(L, shm && *shm ? shm : LT_RING_NAME_SCRIPT, 1, luaopen_luatrace_profile);
    return 1;
}
