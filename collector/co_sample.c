/* co_sample: LuaJIT's sampled mode (LUATRACE_SAMPLE=HZ, `recorderd run
 * --sample`). The JIT stays on: LuaJIT's own profiler (lj_profile.c, what
 * `luajit -jp` uses, in its "f" mode so that compiled code checks for a
 * sample at each function change) calls on_sample at the next safe point
 * after each tick of process CPU time. It reads the running coroutine's
 * stack with the debug API and writes what a collector would have sent had
 * the program moved from the last sample's stack to this one: RET and CALL
 * for the frames that changed, a LINE for the top frame, the samples' time
 * (ticks x period) in the first record; the hello says the session is
 * sampled and at what rate, so recorderd writes the sampled reports
 * (profile.txt, flame graph, folded, speedscope, pprof; no coverage).
 * Nothing runs between samples: no debug hook is set. */
#include <dlfcn.h>
#include <errno.h>
#include <lauxlib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "co_state.h"

#define CO_SAMPLE_DEPTH 256 /* frames read per sample, from the top */
/* The ring's size unless LUATRACE_RING says: a sample is tens of bytes, a
 * thousand a second at most, and the ring's memory is reserved (zeroed)
 * when it is made: 8 MiB of it cost the program about a millisecond. */
#define CO_SAMPLE_RING (256u << 10)
#define CO_SAMPLE_SENTINEL "luatrace.sample.sentinel"

typedef void (*prof_cb)(void *data, lua_State *L, int samples, int vmstate);
typedef void (*prof_start_fn)(lua_State *L, const char *mode, prof_cb cb, void *data);
typedef void (*prof_stop_fn)(lua_State *L);

/* A function seen in a sample: Lua ones by source and first line (the
 * source's bytes are compared too: its address may be reused once freed),
 * C ones by their C function. */
typedef struct fent {
    const void *key;
    long line;
    const char *src; /* a copy, for Lua functions */
    uint32_t fid;    /* 0: free slot */
} fent;

typedef struct smp {
    co_state s; /* the ring and the connection (co_conn, co_out) */
    prof_stop_fn stop;
    lua_State *L;
    pid_t pid;
    unsigned hz;
    uint64_t pending; /* the last sample's time, charged to its stack by the next record */
    uint64_t cpu;     /* the Lua thread's CPU time at the last sample (ns) */
    int on, started;
    fent *fn;
    uint32_t cap, nfn;
    co_arena srcs;
    uint32_t fid[CO_SAMPLE_DEPTH], line[CO_SAMPLE_DEPTH], n; /* last sample, bottom first */
    uint32_t cfid[CO_SAMPLE_DEPTH], cline[CO_SAMPLE_DEPTH], cn;
    uint8_t cisC[CO_SAMPLE_DEPTH];
} smp;

static smp g_smp;

int co_sample_hz(void)
{
    const char *v = getenv("LUATRACE_SAMPLE");
    char *end;
    if (!v || !*v)
        return 0;
    long hz = strtol(v, &end, 10);
    return *end || hz < 1 || hz > 1000 ? -1 : (int)hz;
}

/* {====== records */

static int put(smp *p, unsigned k, int nargs, uint64_t a0, uint64_t a1, uint64_t a2)
{
    uint8_t *b = co_out_reserve(&p->s, LT_EVENT_HOT_MAX);
    if (!b)
        return -ENOSPC;
    uint8_t *q = lt_put_head(b, k, (uint32_t)nargs);
    uint64_t a[3] = {a0, a1, a2};
    for (int i = 0; i < nargs; i++)
        q = lt_put_uint(q, a[i]);
    lt_ring_commit(&p->s.ring, (uint64_t)(q - b));
    return 0;
}

static uint32_t put_str(smp *p, const char *str)
{
    size_t n = strnlen(str, LT_STR_MAX);
    uint8_t *b = co_out_reserve(&p->s, n + 16);
    if (!b)
        return 0;
    uint8_t *q = lt_put_head(b, LT_EV_STR, 2);
    q = lt_put_uint(q, ++p->s.next_sid);
    q = lt_put_str(q, str, (uint32_t)n);
    lt_ring_commit(&p->s.ring, (uint64_t)(q - b));
    return p->s.next_sid;
}

/* A label's bytes: ';' separates frames, a line break ends a line. */
static void sanitize(char *s)
{
    for (; *s; s++)
        if (*s == ';')
            *s = ',';
        else if (*s == '\n' || *s == '\r')
            *s = ' ';
}

/* The FUNC record of the function at the top of L's stack (ar: its "S"). */
static uint32_t describe(smp *p, lua_State *L, lua_Debug *ar, uint32_t fid)
{
    char name[CO_NAME_MAX], src[LT_STR_MAX + 1];
    int isC = ar->what[0] == 'C', file = !isC && ar->source[0] == '@';
    unsigned what = isC ? LT_WHAT_C : !strcmp(ar->what, "main") ? LT_WHAT_MAIN : LT_WHAT_LUA;
    if (what == LT_WHAT_MAIN)
        snprintf(name, sizeof name, "main chunk");
    else
        co_name_find(L, lua_gettop(L), 0, name, sizeof name);
    /* the call site's name, for a function no table holds */
    ar->name = NULL;
    if (!name[0] && what != LT_WHAT_MAIN)
        lua_getinfo(L, "n", ar);
    if (!name[0])
        snprintf(name, sizeof name, "%s", ar->name ? ar->name : "function");
    if (isC)
        snprintf(src, sizeof src, "[C]");
    else
        co_func_source(ar, src);
    sanitize(name);
    if (!file)
        sanitize(src);
    uint32_t src_sid = put_str(p, src), name_sid = put_str(p, name);
    if (!src_sid || !name_sid)
        return 0;
    uint8_t *b = co_out_reserve(&p->s, 64);
    if (!b)
        return 0;
    uint8_t *q = lt_put_func(b, fid, what, src_sid, name_sid, ar->linedefined,
                             ar->lastlinedefined, isC || file ? 0 : LT_FF_NOFILE);
    lt_ring_commit(&p->s.ring, (uint64_t)(q - b));
    return fid;
}

/* }====== */

/* {====== functions by key */

static uint32_t slot_of(const smp *p, const void *key, long line)
{
    uint64_t h = ((uint64_t)(uintptr_t)key ^ (uint64_t)line * 0x9E3779B97F4A7C15ull) *
                 0xff51afd7ed558ccdull;
    return (uint32_t)(h >> 32) & (p->cap - 1);
}

static int grow(smp *p)
{
    uint32_t cap = p->cap ? p->cap * 2 : 1024;
    fent *n = co_mem_calloc(cap, sizeof *n), *old = p->fn;
    if (!n)
        return -ENOMEM;
    uint32_t oldcap = p->cap;
    p->fn = n;
    p->cap = cap;
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i].fid) {
            uint32_t k = slot_of(p, old[i].key, old[i].line);
            while (n[k].fid)
                k = (k + 1) & (cap - 1);
            n[k] = old[i];
        }
    co_mem_free(old);
    return 0;
}

/* The fid of the function at level lv (ar: its "Sl"), its FUNC written
 * if it is new; 0 if out of memory or room. */
static uint32_t fid_at(smp *p, lua_State *L, lua_Debug *ar)
{
    int isC = ar->what[0] == 'C';
    const void *key = ar->source;
    if (isC) { /* which C function: only the function itself says */
        lua_getinfo(L, "f", ar);
        key = (const void *)lua_tocfunction(L, -1);
    }
    uint32_t k = slot_of(p, key, ar->linedefined);
    for (; p->fn[k].fid; k = (k + 1) & (p->cap - 1))
        if (p->fn[k].key == key && p->fn[k].line == ar->linedefined &&
            (isC || !strcmp(p->fn[k].src, ar->source))) {
            if (isC)
                lua_pop(L, 1);
            return p->fn[k].fid;
        }
    if (!isC)
        lua_getinfo(L, "f", ar);
    uint32_t fid = 0;
    const char *src = isC ? "" : co_arena_copy(&p->srcs, ar->source, strlen(ar->source));
    if (src && (p->nfn + 1) * 2 <= p->cap)
        fid = describe(p, L, ar, p->nfn + 1);
    lua_pop(L, 1);
    if (!fid)
        return 0;
    p->fn[k] = (fent){key, ar->linedefined, src, fid};
    p->nfn++;
    if (p->nfn * 2 >= p->cap)
        (void)grow(p); /* else full at half: new functions are left out of samples */
    return fid;
}

/* }====== */

/* The running coroutine's stack, bottom first, into cfid/cline. */
static void read_stack(smp *p, lua_State *L)
{
    lua_Debug ar;
    uint32_t n = 0;
    for (int lv = 0; n < CO_SAMPLE_DEPTH && lua_getstack(L, lv, &ar); lv++) {
        if (!lua_getinfo(L, "Sl", &ar))
            continue;
        uint32_t fid = fid_at(p, L, &ar);
        if (!fid)
            continue;
        p->cisC[n] = ar.what[0] == 'C';
        p->cfid[n] = fid;
        p->cline[n++] = ar.currentline > 0 ? (uint32_t)ar.currentline : 0;
    }
    /* the host's C frames below the first Lua one (luajit's pmain) are not
     * the program's: a trace of lua5.1 begins at the main chunk too */
    while (n && p->cisC[n - 1])
        n--;
    for (uint32_t i = 0; i < n / 2; i++) { /* top first -> bottom first */
        uint32_t f = p->cfid[i], l = p->cline[i];
        p->cfid[i] = p->cfid[n - 1 - i];
        p->cline[i] = p->cline[n - 1 - i];
        p->cfid[n - 1 - i] = f;
        p->cline[n - 1 - i] = l;
    }
    p->cn = n;
}

/* From the last sample's stack to this one: RET for the frames gone, CALL
 * for the new ones, a LINE for the top one; dt (the last sample's time,
 * charged to its stack) in the first record. */
static int step(smp *p, uint64_t dt)
{
    uint32_t k = 0, m = p->cn;
    int e = 0;
    while (k < p->n && k < m && p->fid[k] == p->cfid[k])
        k++;
    for (uint32_t i = p->n; !e && i-- > k; dt = 0)
        e = put(p, LT_EV_RET, 2, i + 1, dt, 0);
    for (uint32_t i = k; !e && i < m; i++, dt = 0)
        e = put(p, LT_EV_CALL, 3, i + 1, dt, p->cfid[i]);
    if (!e && m)
        e = put(p, LT_EV_LINE, 3, m, dt, p->cline[m - 1]);
    memcpy(p->fid, p->cfid, m * sizeof p->fid[0]);
    memcpy(p->line, p->cline, m * sizeof p->line[0]);
    p->n = m;
    return e;
}

static uint64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* LuaJIT's profiler callback: at a safe point of the VM, hooks off. */
static void on_sample(void *data, lua_State *L, int samples, int vmstate)
{
    smp *p = data;
    (void)vmstate;
    if (!p->on || p->s.lost || getpid() != p->pid)
        return;
    int top = lua_gettop(L);
    read_stack(p, L);
    lua_settop(L, top);
    /* the ticks were counted at this stack: their time is its own, written
     * with the record that leaves it */
    uint64_t dt = p->pending, now = cpu_ns();
    /* a sample's weight is the CPU time since the one before, not the
     * ticks LuaJIT counted: the kernel delivers at most one timer signal a
     * clock tick (often 4 ms), however many periods it took */
    (void)samples;
    p->pending = now > p->cpu ? now - p->cpu : 0;
    p->cpu = now;
    if (step(p, dt)) {
        p->on = 0; /* the ring is lost or full past the wait: no more samples */
        return;
    }
    lt_ring_publish(&p->s.ring);
}

/* The trace's end: STOP, the producer done, the connection closed. Once,
 * in the process that started it (not in a child of fork). */
static void finish(smp *p, unsigned reason)
{
    if (!p->s.ring.hdr || getpid() != p->pid)
        return;
    p->on = 0;
    if (!p->s.lost) {
        put(p, LT_EV_STOP, 2, p->pending, reason, 0);
        co_out_clock(&p->s);
    }
    lt_ring_publish(&p->s.ring);
    atomic_store_explicit(&p->s.ring.hdr->prod_state, LT_PROD_DONE, memory_order_release);
    co_conn_close(&p->s);
    lt_ring_close(&p->s.ring);
    p->s.ring.hdr = NULL;
}

static void at_exit(void)
{
    finish(&g_smp, LT_R_EXIT);
}

static int sentinel_gc(lua_State *L)
{
    smp *p = &g_smp;
    if (p->started && p->stop && getpid() == p->pid)
        p->stop(L); /* the timer and the profile hook go with the state */
    finish(p, LT_R_CLOSE);
    return 0;
}

/* The ring, the hello (sampled, at hz) and the first records. */
static int begin(smp *p, lua_State *L, char *err, size_t cap)
{
    const char *shm = getenv("LUATRACE_SHM");
    co_state *s = &p->s;
    int private_summary = s->private_summary;
    memset(s, 0, sizeof *s);
    s->private_summary = private_summary;
    s->sock = -1;
    s->wait_max_ns = (uint64_t)CO_WAIT_MAX_S * 1000000000ull;
    s->sample_hz = 1000 / (1000 / p->hz); /* LuaJIT's interval is whole ms */
    if (!getcwd(s->cwd0, sizeof s->cwd0))
        s->cwd0[0] = 0;
    if (co_module_create_ring(s, shm && *shm ? shm : LT_RING_NAME_SCRIPT, CO_SAMPLE_RING, 0, err, cap))
        return -1;
    if (grow(p) || co_conn_open(s, err, cap)) {
        if (!err[0])
            snprintf(err, cap, "out of memory");
        lt_ring_unlink(s->shm);
        lt_ring_close(&s->ring);
        s->ring.hdr = NULL;
        return -1;
    }
    co_out_clock(s);
    put(p, LT_EV_THREAD, 2, 1, (uint64_t)(uintptr_t)L, 0);
    put(p, LT_EV_START, 2, 1, LT_R_BEGIN, 0);
    return 0;
}

static int l_false(lua_State *L)
{
    lua_pushboolean(L, 0);
    return 1;
}

/* The module's table in sampled mode: tron and troff do nothing (the whole
 * run is sampled), tracing() is false (no exact trace), sampling() true. */
static int l_sampling(lua_State *L)
{
    lua_pushboolean(L, g_smp.on || co_outside_on);
    return 1;
}

void co_sample_table(lua_State *L)
{
    static const luaL_Reg f[] = {{"tron", l_false},         {"troff", l_false},
                                 {"tracing", l_false},      {"sampling", l_sampling},
                                 {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, f);
    lua_pushliteral(L, "0.1.0");
    lua_setfield(L, -2, "version");
}

int co_sample_open(lua_State *L, int hz, int private_summary)
{
    smp *p = &g_smp;
    char err[512] = "";
    prof_start_fn start = (prof_start_fn)dlsym(RTLD_DEFAULT, "luaJIT_profile_start");
    co_sample_table(L);
    if (p->started)
        return 1;
    p->started = 1;
    if (hz < 0) {
        fprintf(stderr, "luatrace: LUATRACE_SAMPLE=%s: samples per second, from 1 to 1000; "
                        "running unsampled\n", getenv("LUATRACE_SAMPLE"));
        return 1;
    }
    p->stop = (prof_stop_fn)dlsym(RTLD_DEFAULT, "luaJIT_profile_stop");
    if (!start || !p->stop) {
        fprintf(stderr, "luatrace: this LuaJIT has no profiler (jit.profile); running unsampled\n");
        return 1;
    }
    p->hz = (unsigned)hz;
    p->s.private_summary = private_summary;
    p->L = L;
    p->pid = getpid();
    if (begin(p, L, err, sizeof err)) {
        fprintf(stderr, "luatrace: %s; running unsampled\n", err);
        return 1;
    }
    co_module_keep_globals(L);
    co_module_sentinel(L, CO_SAMPLE_SENTINEL, sentinel_gc);
    atexit(at_exit);
    char mode[16];
    snprintf(mode, sizeof mode, "fi%d", 1000 / hz);
    p->on = 1;
    p->cpu = cpu_ns();
    start(L, mode, on_sample, p);
    return 1;
}
