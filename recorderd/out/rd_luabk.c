/* rd_luabk: a user backend in Lua, fed by the stack rebuilder's listener.
 *
 * Design: FILE's table is read once; its functions (record, enter, leave,
 * line, thread, close) are kept at fixed slots of the state's stack, so an
 * event costs one lua_pcall per defined callback and nothing for the others.
 * Every call runs under debug.traceback as message handler; the first error
 * prints the traceback, is kept for finish(), and disables the backend (the
 * session and the other backends carry on). record() is derived here from
 * the listener: deferred time per line as luatrace's recorders expect, R/Y
 * from a mirror of the resume chain. Frame tables are cached per function.
 */
#include "rd_luabk.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "rd_outdir.h"
#include "rd_util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

/* Stack slots of the backend's state, set once at load. */
enum { S_TB = 1, S_TABLE, S_FRAMES, S_RECORD, S_ENTER, S_LEAVE, S_LINE, S_THREAD, S_CLOSE, S_N };
static const char *const CALLBACKS[] = {"record", "enter", "leave", "line", "thread", "close"};

typedef struct luabk {
    rd_backend b;
    lua_State *L;
    const rd_model *m;
    char spec[1024];   /* "lua:FILE", for messages */
    char has[S_N];     /* the slot holds a function */
    int dead;          /* disabled by an error */
    char err[256];     /* its first line, for finish() */
    double rate;       /* ns per tick, fixed at the first event; 0 = not yet */
    uint32_t pos_line; /* record(): line of the stretch running, 0 = none */
    uint64_t pos_t;    /* and when it began (ticks) */
    int pos_unwound;   /* it began when an error unwound the frame above */
    uint64_t *chain;   /* mirror of the resume chain, current last */
    uint32_t nchain, capchain;
    int restart; /* tracing stopped: the next thread begins a new chain */
} luabk;

/* ---- time ---- */

/* Ticks per ns of this machine's TSC, measured over ~10 ms. The trace's own
 * calibration has its second pair only at the end, too late for streaming. */
static double measure_tsc_rate(void)
{
#if HAVE_TSC
    struct timespec a, b, nap = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint64_t t0 = __rdtsc();
    nanosleep(&nap, NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    uint64_t t1 = __rdtsc();
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    if (t1 > t0 && ns > 0)
        return ns / (double)(t1 - t0);
#endif
    return 0;
}

static double rate(luabk *k)
{
    if (k->rate > 0)
        return k->rate;
    if (k->m->clk_tsc && k->m->clk_pairs < 2)
        k->rate = measure_tsc_rate();
    if (k->rate <= 0)
        k->rate = rd_model_ns_per_tick(k->m);
    return k->rate;
}

/* Traced time in whole ns: integers, so that differences add up exactly. */
static double ns(luabk *k, uint64_t t)
{
    return (double)(uint64_t)((double)t * rate(k));
}

/* ---- calling Lua ---- */

/* Message handler: the error and its Lua traceback (upvalue: the original
 * debug.traceback, safe from what the backend does to `debug`). */
static int traceback(lua_State *L)
{
    if (!lua_isstring(L, 1))
        lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    else
        lua_pushvalue(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    if (!lua_isfunction(L, -1))
        return lua_pop(L, 1), 1;
    lua_insert(L, -2);
    lua_pushinteger(L, 2);
    lua_call(L, 2, 1);
    return 1;
}

/* The callback and its nargs arguments are on top. */
static void call(luabk *k, int nargs)
{
    lua_State *L = k->L;
    if (!lua_pcall(L, nargs, 0, S_TB))
        return;
    const char *msg = lua_tostring(L, -1);
    msg = msg ? msg : "(error)";
    fprintf(stderr, "recorderd: backend %s: ", k->spec);
    rd_write_printable(stderr, msg, strlen(msg)); /* it may quote the program's names */
    fputc('\n', stderr);
    size_t n = strcspn(msg, "\n");
    snprintf(k->err, sizeof k->err, "%.*s", (int)(n < 200 ? n : 200), msg);
    k->dead = 1;
    lua_settop(L, S_N - 1);
}

/* Frame fields set without metamethods: the table is ours. */
static void set_str(lua_State *L, const char *key, const char *v)
{
    lua_pushstring(L, key);
    lua_pushstring(L, v);
    lua_rawset(L, -3);
}

static void set_num(lua_State *L, const char *key, double v)
{
    lua_pushstring(L, key);
    lua_pushnumber(L, v);
    lua_rawset(L, -3);
}

static const char *what_name(const rd_func *fn)
{
    if (!fn->known)
        return "?";
    return fn->what == LT_WHAT_C ? "C" : fn->what == LT_WHAT_MAIN ? "main" : "Lua";
}

/* Pushes a new frame table for fid and caches it. */
static void new_frame(luabk *k, uint32_t fid)
{
    lua_State *L = k->L;
    const rd_func *fn = rd_model_func(k->m, fid);
    char label[RD_LABEL_MAX];
    rd_model_label(k->m, fid, label, sizeof label);
    lua_createtable(L, 0, 10);
    set_num(L, "id", fid);
    set_str(L, "name", fn->known ? rd_model_string(k->m, fn->name_sid) : "?");
    set_str(L, "file", !fn->known ? "?" : fn->what == LT_WHAT_C ? "[C]"
                                                               : rd_model_string(k->m, fn->src_sid));
    set_num(L, "line", fn->what == LT_WHAT_C ? 0 : fn->linedefined);
    set_num(L, "lastline", fn->what == LT_WHAT_C ? 0 : fn->lastlinedefined);
    set_str(L, "what", what_name(fn));
    set_str(L, "label", label);
    lua_pushvalue(L, -1);
    lua_rawseti(L, S_FRAMES, (int)fid);
}

/* Pushes the cached frame table of fid. */
static void frame_table(luabk *k, uint32_t fid)
{
    lua_rawgeti(k->L, S_FRAMES, (int)fid);
    if (lua_isnil(k->L, -1)) {
        lua_pop(k->L, 1);
        new_frame(k, fid);
    }
}

/* Pushes the frame table of f, its depth and thread set for this call. */
static void push_frame(luabk *k, const rd_frame *f, uint32_t level, uint64_t th)
{
    lua_State *L = k->L;
    frame_table(k, f->fid);
    set_num(L, "depth", (double)level + 1);
    set_num(L, "thread", (double)th);
}

/* ---- record(): the original luatrace recorder API ---- */

/* Ends the stretch of time on one line: record(line, ns). Time while the
 * top has no line (a C function, a Lua call before its first line) is in
 * no stretch, as luatrace never timed C functions. */
static void rec_flush(luabk *k, uint64_t t)
{
    /* an error unwinds several frames at one instant: their callers do not
     * go on in between */
    int skip = k->pos_unwound && t == k->pos_t;
    k->pos_unwound = 0;
    if (k->pos_line && !k->dead && !skip) {
        lua_pushvalue(k->L, S_RECORD);
        lua_pushnumber(k->L, k->pos_line);
        lua_pushnumber(k->L, ns(k, t) - ns(k, k->pos_t));
        call(k, 2);
    }
    k->pos_line = 0;
    k->pos_t = t;
}

static void rec_simple(luabk *k, const char *kind)
{
    if (k->dead)
        return;
    lua_pushvalue(k->L, S_RECORD);
    lua_pushstring(k->L, kind);
    call(k, 1);
}

/* record(kind, file, linedefined, lastlinedefined) for S, > and T. */
static void rec_frame(luabk *k, const char *kind, const rd_frame *f)
{
    if (k->dead)
        return;
    lua_State *L = k->L;
    const rd_func *fn = rd_model_func(k->m, f->fid);
    lua_pushvalue(L, S_RECORD);
    lua_pushstring(L, kind);
    frame_table(k, f->fid);
    lua_pushstring(L, "file");
    lua_rawget(L, -2);
    lua_replace(L, -2);
    lua_pushnumber(L, fn->what == LT_WHAT_C ? 0 : fn->linedefined);
    lua_pushnumber(L, fn->what == LT_WHAT_C ? 0 : fn->lastlinedefined);
    call(k, 4);
}

static void rec_enter(luabk *k, const rd_frame *f, enum rd_how how, uint64_t t)
{
    rec_flush(k, t);
    if (how == RD_SNAP) {
        rec_frame(k, "S", f);
        k->pos_line = f->is_lua ? f->line : 0; /* a snapshot knows where it stands */
        return;
    }
    if (how == RD_TAIL)
        return rec_frame(k, "T", f);
    if (rd_model_func(k->m, f->fid)->flags & LT_FF_PCALL)
        rec_simple(k, "P");
    rec_frame(k, ">", f);
}

/* f is the top of its thread's frame array: f - 1 is its caller. */
static void rec_leave(luabk *k, uint64_t th, const rd_frame *f, uint32_t level, enum rd_how how,
                      uint64_t t)
{
    rec_flush(k, t);
    if (how == RD_TAIL)
        return; /* the T that follows says it */
    rec_simple(k, how == RD_UNWIND ? "E" : "<");
    if (how == RD_STOP)
        k->restart = 1;
    /* the caller goes on, unless tracing stopped or a dead coroutine's
     * frames are being cleared away */
    int goes_on = how != RD_STOP && level && f[-1].is_lua && k->nchain &&
                  k->chain[k->nchain - 1] == th;
    k->pos_line = goes_on ? f[-1].line : 0;
    k->pos_unwound = how == RD_UNWIND;
}

/* Mirrors the resume chain: returns "start", "resume", "yield", or NULL
 * when th already runs; emits R and Ys. */
static const char *chain_switch(luabk *k, uint64_t th, int emit)
{
    if (k->restart || !k->nchain) {
        k->restart = 0;
        k->nchain = 0;
    } else if (k->chain[k->nchain - 1] == th) {
        return NULL;
    } else {
        for (uint32_t i = k->nchain - 1; i-- > 0;)
            if (k->chain[i] == th) {
                for (; k->nchain > i + 1; k->nchain--)
                    if (emit)
                        rec_simple(k, "Y");
                return "yield";
            }
    }
    if (rd_grow((void **)&k->chain, &k->capchain, k->nchain, sizeof *k->chain))
        return NULL;
    k->chain[k->nchain++] = th;
    if (k->nchain == 1)
        return "start";
    if (emit && !k->dead) {
        lua_pushvalue(k->L, S_RECORD);
        lua_pushstring(k->L, "R");
        lua_pushnumber(k->L, (double)th);
        call(k, 2);
    }
    return "resume";
}

/* ---- the listener ---- */

static const char *const ENTER_HOW[] = {"call", "tail", "error", "start", "stop"};
static const char *const LEAVE_HOW[] = {"return", "tail", "error", "start", "stop"};

static void on_enter(void *ud, uint64_t th, const rd_frame *f, uint32_t level, enum rd_how how,
                     uint64_t t)
{
    luabk *k = ud;
    if (k->has[S_RECORD] && !k->dead)
        rec_enter(k, f, how, t);
    if (k->has[S_ENTER] && !k->dead) {
        lua_pushvalue(k->L, S_ENTER);
        push_frame(k, f, level, th);
        lua_pushstring(k->L, ENTER_HOW[how]);
        lua_pushnumber(k->L, ns(k, t));
        call(k, 3);
    }
}

static void on_leave(void *ud, uint64_t th, const rd_frame *f, uint32_t level, enum rd_how how,
                     uint64_t t)
{
    luabk *k = ud;
    if (k->has[S_RECORD] && !k->dead)
        rec_leave(k, th, f, level, how, t);
    else if (how == RD_STOP)
        k->restart = 1;
    if (k->has[S_LEAVE] && !k->dead) {
        lua_pushvalue(k->L, S_LEAVE);
        push_frame(k, f, level, th);
        lua_pushstring(k->L, LEAVE_HOW[how]);
        lua_pushnumber(k->L, ns(k, t));
        call(k, 3);
    }
}

static void on_line(void *ud, uint64_t th, const rd_frame *f, uint32_t level, uint64_t t)
{
    luabk *k = ud;
    if (k->has[S_RECORD] && !k->dead) {
        rec_flush(k, t);
        k->pos_line = f->line;
    }
    if (k->has[S_LINE] && !k->dead) {
        lua_pushvalue(k->L, S_LINE);
        push_frame(k, f, level, th);
        lua_pushnumber(k->L, f->line);
        lua_pushnumber(k->L, ns(k, t));
        call(k, 3);
    }
}

static void on_thread(void *ud, uint64_t th, uint64_t t)
{
    luabk *k = ud;
    if (k->dead)
        return;
    if (k->has[S_RECORD])
        rec_flush(k, t);
    const char *how = chain_switch(k, th, k->has[S_RECORD]);
    if (how && k->has[S_THREAD] && !k->dead) {
        lua_pushvalue(k->L, S_THREAD);
        lua_pushnumber(k->L, (double)th);
        lua_pushstring(k->L, how);
        lua_pushnumber(k->L, ns(k, t));
        call(k, 3);
    }
}

/* ---- finish ---- */

typedef struct text {
    const char *s;
    size_t n;
} text;

static int put_text(FILE *f, void *ud)
{
    const text *t = ud;
    fwrite(t->s, 1, t->n, f);
    return 0; /* rd_out_write asks the stream how it went */
}

/* info.write(name, text): the file name in info.dir, whole and 0600, made
 * through the session directory's open descriptor (rd_outdir.h): nothing
 * another user put in a shared --out is written through, as io.open
 * would. Returns true, or nil and the reason. */
static int lb_write(lua_State *L)
{
    char path[4096], err[4200];
    text t;
    const char *name = luaL_checkstring(L, 1);
    t.s = luaL_checklstring(L, 2, &t.n);
    int dirfd = (int)lua_tonumber(L, lua_upvalueindex(1));
    if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return luaL_error(L, "write: %s is not a file name", name);
    snprintf(path, sizeof path, "%s/%s", lua_tostring(L, lua_upvalueindex(2)), name);
    int e = dirfd >= 0 ? rd_out_write(dirfd, name, put_text, &t)
                       : rd_out_write_path(path, put_text, &t, err, sizeof err);
    if (!e) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushnil(L);
    lua_pushfstring(L, "cannot write %s: %s", path, strerror(-e));
    return 2;
}

/* close(info): where to write, and what the trace held. */
static void call_close(luabk *k, const rd_model *m, const char *dir, const char *file)
{
    lua_State *L = k->L;
    const rd_backend_info *info = k->b.info;
    lua_pushvalue(L, S_CLOSE);
    lua_createtable(L, 0, 7);
    set_str(L, "dir", dir ? dir : ".");
    lua_pushstring(L, "write");
    lua_pushnumber(L, info && info->dir && dir && !strcmp(info->dir, dir) ? info->dirfd : -1);
    lua_pushstring(L, dir ? dir : ".");
    lua_pushcclosure(L, lb_write, 2);
    lua_rawset(L, -3);
    if (file)
        set_str(L, "file", file);
    set_str(L, "script", k->spec + 4);
    set_num(L, "events", (double)m->events);
    set_num(L, "traced_ns", ns(k, m->ticks_total));
    set_num(L, "functions", m->nfunc ? m->nfunc - 1 : 0);
    call(k, 1);
}

static int lb_finish(rd_backend *b, const rd_model *m, const char *dir, const char *file,
                     char *err, size_t cap)
{
    luabk *k = (luabk *)b;
    if (k->has[S_RECORD] && !k->dead)
        rec_flush(k, m->ticks_total < k->pos_t ? k->pos_t : m->ticks_total);
    if (k->has[S_CLOSE] && !k->dead)
        call_close(k, m, dir, file);
    if (!k->dead)
        return 0;
    snprintf(err, cap, "disabled by an error (traceback on stderr): %s", k->err);
    return -EINVAL;
}

static void lb_destroy(rd_backend *b)
{
    luabk *k = (luabk *)b;
    if (!k)
        return;
    if (k->L)
        lua_close(k->L);
    free(k->chain);
    free(k);
}

/* ---- loading ---- */

#define REG_KEY "luatrace.backend"

/* Under lua_cpcall(path): runs FILE and leaves, in the registry, the
 * array of what the stack slots will hold. */
static int load(lua_State *L)
{
    const char *path = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_createtable(L, S_N - 1, 0); /* 1: the slots */
    lua_getglobal(L, "debug");
    lua_getfield(L, -1, "traceback");
    lua_pushcclosure(L, traceback, 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, 1, S_TB);
    if (luaL_loadfile(L, path))
        return lua_error(L);
    if (lua_pcall(L, 0, 1, 3))
        return lua_error(L);
    if (!lua_istable(L, -1))
        return luaL_error(L, "%s returned %s, not a table", path, luaL_typename(L, -1));
    lua_pushvalue(L, -1);
    lua_rawseti(L, 1, S_TABLE);
    lua_newtable(L);
    lua_rawseti(L, 1, S_FRAMES);
    for (int i = S_RECORD; i < S_N; i++) {
        lua_getfield(L, -1, CALLBACKS[i - S_RECORD]);
        if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
            return luaL_error(L, "%s: field %s is a %s, not a function", path,
                              CALLBACKS[i - S_RECORD], luaL_typename(L, -1));
        lua_rawseti(L, 1, i);
    }
    lua_pushvalue(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_KEY);
    return 0;
}

/* Lays the slots out on the (empty) stack. */
static void install(luabk *k)
{
    lua_State *L = k->L;
    lua_getfield(L, LUA_REGISTRYINDEX, REG_KEY);
    for (int i = 1; i < S_N; i++) {
        lua_rawgeti(L, 1, i);
        k->has[i] = (char)lua_isfunction(L, -1);
    }
    lua_remove(L, 1);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_KEY);
}

/* Listens only to what the callbacks need (record needs everything; the
 * thread callback needs leave for the stops that restart the chain). */
static void listen(luabk *k)
{
    int rec = k->has[S_RECORD], thr = k->has[S_THREAD];
    k->b.ls = (rd_listener){k, rec || k->has[S_ENTER] ? on_enter : NULL,
                            rec || thr || k->has[S_LEAVE] ? on_leave : NULL,
                            rec || k->has[S_LINE] ? on_line : NULL, rec || thr ? on_thread : NULL,
                            NULL};
}

rd_backend *rd_luabk_create(const char *arg, const rd_model *m, char *err, size_t cap)
{
    luabk *k = calloc(1, sizeof *k);
    if (!k || !(k->L = luaL_newstate()) || !lua_checkstack(k->L, 64)) {
        snprintf(err, cap, "out of memory");
        return lb_destroy((rd_backend *)k), NULL;
    }
    if (!arg[0]) {
        snprintf(err, cap, "give the backend's Lua file: lua:FILE.lua");
        return lb_destroy((rd_backend *)k), NULL;
    }
    snprintf(k->spec, sizeof k->spec, "lua:%s", arg);
    k->m = m;
    luaL_openlibs(k->L);
    if (lua_cpcall(k->L, load, (void *)arg)) {
        const char *msg = lua_tostring(k->L, -1);
        snprintf(err, cap, "%s", msg ? msg : "cannot load");
        return lb_destroy((rd_backend *)k), NULL;
    }
    install(k);
    k->b.name = k->spec;
    listen(k);
    k->b.finish = lb_finish;
    k->b.destroy = lb_destroy;
    return &k->b;
}

int rd_luabk_check(const char *arg, char *err, size_t cap)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        snprintf(err, cap, "out of memory");
        return -ENOMEM;
    }
    int bad = !arg[0] || luaL_loadfile(L, arg);
    if (bad)
        snprintf(err, cap, "%s",
                 !arg[0] ? "give the backend's Lua file: lua:FILE.lua" : lua_tostring(L, -1));
    lua_close(L);
    return bad ? -EINVAL : 0;
}
