/* co_func: interning of functions and strings.
 *
 * A call event needs the called function's id. Asking Lua for the source
 * (lua_getinfo "S") costs ~100 ns, so the id is cached by the function's
 * identity: its Proto* for a Lua function (all closures of one function
 * share it), its lua_CFunction for a C function. Both sit at the same
 * offset of a Lua 5.1 closure; co_func_layout_check verifies that layout at
 * load time and, if it does not hold (another Lua), keys by closure
 * instead. A Proto address can be reused after the GC frees it: the
 * allocator reports the free (co_alloc.c) and the entry goes before the
 * next lookup (co_func_forget). Without that watch a hit is confirmed
 * against the Proto's source, linedefined and co_proto_shape.
 *
 * A new Proto whose code (what string.dump writes: source, linedefined, bytecode,
 * constants, debug info) equals that of a function already seen is that
 * function again: a chunk loaded twice, two identical closures on one line.
 * So ids follow the program text, not addresses (whether the GC reused one
 * does not matter), and a chunk loaded per request stays one function.
 *
 * Naming, at first sight (see doc/reports.md, "Frame labels"): "main chunk"; else the
 * shortest global or package.loaded path holding the function; else the
 * name the caller used; else "function". recorderd tells apart distinct
 * functions that end up with one label.
 */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "co_func.h"
#include "co_mem.h"

static int layout_probe(lua_State *L)
{
    return lua_gettop(L);
}

/* Lua 5.1's string hash (lstring.c), to check where a TString keeps it */
static uint32_t str_hash(const char *str, size_t l)
{
    uint32_t h = (uint32_t)l;
    size_t step = (l >> 5) + 1;
    for (size_t l1 = l; l1 >= step; l1 -= step)
        h = h ^ ((h << 5) + (h >> 2) + (unsigned char)str[l1 - 1]);
    return h;
}

int co_func_layout_check(lua_State *L)
{
#ifdef CO_LUA54 /* 5.1's closures and stack are not 5.4's: the API serves */
    (void)L;
    return 0;
#endif
    int top = lua_gettop(L), ok = 0;
    if (luaL_loadstring(L, "return function() end") == 0) {
        lua_pushvalue(L, -1);
        lua_call(L, 0, 1); /* chunk, A */
        lua_insert(L, -2);
        lua_call(L, 0, 1); /* A, B: two closures of one Proto */
        const uint8_t *a = lua_topointer(L, -2), *b = lua_topointer(L, -1);
        const void *pa = lr_ptr_at(a, CL_FP), *pb = lr_ptr_at(b, CL_FP);
        lua_Debug ar;
        lua_pushvalue(L, -1);
        lua_getinfo(L, ">S", &ar);
        const char *src = pa ? lr_ptr_at(pa, PR_SOURCE) : NULL;
        ok = a != b && a[8] == LUA_TFUNCTION && a[CL_ISC] == 0 && pa && pa == pb && src &&
             src + TS_SIZE == ar.source && lr_int_at(pa, PR_LINEDEF) == ar.linedefined &&
             lr_int_at(pa, PR_LASTLINE) == ar.lastlinedefined &&
             (uint32_t)lr_int_at(src, TS_HASH) == str_hash(ar.source, strlen(ar.source));
    }
    lua_pushcfunction(L, layout_probe);
    const uint8_t *c = lua_topointer(L, -1);
    ok = ok && c[CL_ISC] == 1 && lr_ptr_at(c, CL_FP) == (const void *)layout_probe;
    lua_settop(L, top);
    return ok;
}

int co_func_state_check(lua_State *L, lua_CFunction running)
{
    lua_Debug ar;
    if (!lua_getstack(L, 0, &ar))
        return 0;
    const char *base = lr_ptr_at(L, LS_BASE_CI), *ci = lr_ptr_at(L, LS_CI);
    if (!base || ci - base != (ptrdiff_t)CO_AR_DEPTH(&ar) * CI_SIZE)
        return 0;
    const void *tv = lr_ptr_at(ci, CI_FUNC);
    const uint8_t *cl = tv ? lr_ptr_at(tv, 0) : NULL;
    if (running == co_running_top) { /* in a hook: the function it reports */
        lua_getinfo(L, "f", &ar);
        const void *top = lua_topointer(L, -1);
        lua_pop(L, 1);
        return cl && lr_int_at(tv, TV_TT) == LUA_TFUNCTION && cl == top;
    }
    return cl && lr_int_at(tv, TV_TT) == LUA_TFUNCTION && cl[CL_ISC] == 1 &&
           lr_ptr_at(cl, CL_FP) == (const void *)running;
}

int co_running_top(lua_State *L)
{
    (void)L;
    return 0;
}

/* The closure running at ar's level, read from the CallInfo array: the
 * cost of lua_getinfo("f") without its option parsing and stack push. */

int co_func_init(co_state *s)
{
    s->ft.cap = 4096;
    s->ft.e = co_mem_calloc(s->ft.cap, sizeof *s->ft.e);
    s->ct.cap = 1024;
    s->ct.e = co_mem_calloc(s->ct.cap, sizeof *s->ct.e);
    s->st.cap = 1024;
    s->st.e = co_mem_calloc(s->st.cap, sizeof *s->st.e);
    s->freed_cap = 64;
    s->freed = co_mem_calloc(s->freed_cap, sizeof *s->freed);
    s->next_fid = 1;
    s->next_sid = 1;
    return s->ft.e && s->ct.e && s->st.e && s->freed ? 0 : -1;
}

void co_func_free(co_state *s)
{
    co_mem_free(s->srcdir);
    s->srcdir = NULL;
    s->srcdir_cap = 0;
    co_arena_free(&s->names);
    co_mem_free(s->st.e);
    co_mem_free(s->ft.e);
    co_mem_free(s->ct.e);
    co_mem_free(s->freed);
    s->freed = NULL;
    s->nfreed = 0;
    s->st.e = NULL;
    s->ft.e = NULL;
    s->ct.e = NULL;
}


static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

void co_func_source(const lua_Debug *ar, char *out)
{
    const char *src = ar->source[0] == '@' ? ar->source + 1 : ar->short_src;
    /* PATH_MAX - 1 bytes at most: a report's path buffers hold it whole */
    size_t n = strlen(src), max = LT_STR_MAX - 1, keep = max - 20; /* "...#", 16 digits */
    if (n <= max) {
        memcpy(out, src, n + 1);
        return;
    }
    memcpy(out, src, keep);
    snprintf(out + keep, 21, "...#%016llx", (unsigned long long)hash_bytes(src, n));
}

static int grow_strings(co_stab *t)
{
    uint32_t cap = t->cap * 2;
    co_sent *e = co_mem_calloc(cap, sizeof *e);
    if (!e)
        return -1;
    for (uint32_t i = 0; i < t->cap; i++) {
        if (!t->e[i].s)
            continue;
        uint32_t j = (uint32_t)t->e[i].hash & (cap - 1);
        while (e[j].s)
            j = (j + 1) & (cap - 1);
        e[j] = t->e[i];
    }
    co_mem_free(t->e);
    t->e = e;
    t->cap = cap;
    return 0;
}

/* Returns the sid of s[0..n), emitting a STR record the first time. */
static uint32_t intern_str(co_state *s, const char *str, size_t n)
{
    if (n > LT_STR_MAX)
        n = LT_STR_MAX;
    if ((s->st.n + 1) * 2 > s->st.cap && grow_strings(&s->st)) {
        co_out_drop(s); /* no memory: this event is lost, and says so */
        return 0;
    }
    uint64_t h = hash_bytes(str, n);
    uint32_t i = (uint32_t)h & (s->st.cap - 1);
    for (; s->st.e[i].s; i = (i + 1) & (s->st.cap - 1))
        if (s->st.e[i].hash == h && s->st.e[i].len == n && !memcmp(s->st.e[i].s, str, n))
            return s->st.e[i].sid;
    uint8_t *p = co_out_reserve(s, n + 16);
    if (!p)
        return 0; /* dropped (counted) or tracing lost */
    char *copy = co_arena_copy(&s->names, str, n);
    if (!copy) {
        co_out_drop(s);
        return 0;
    }
    s->st.e[i] = (co_sent){copy, (uint32_t)n, s->next_sid++, h};
    s->st.n++;
    uint8_t *q = lt_put_head(p, LT_EV_STR, 2);
    q = lt_put_uint(q, s->st.e[i].sid);
    q = lt_put_str(q, str, (uint32_t)n);
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
    return s->st.e[i].sid;
}

/* The directory of relative file source src_sid (an index of s->srcdir,
 * grown if need be), 0 if unknown. */
static uint32_t *srcdir_at(co_state *s, uint32_t src_sid)
{
    if (src_sid >= s->srcdir_cap) {
        uint32_t cap = s->srcdir_cap ? s->srcdir_cap : 256;
        while (cap <= src_sid)
            cap *= 2;
        uint32_t *g = co_mem_realloc(s->srcdir, s->srcdir_cap * sizeof *g, cap * sizeof *g);
        if (!g)
            return NULL;
        s->srcdir = g;
        s->srcdir_cap = cap;
    }
    return &s->srcdir[src_sid];
}

/* Sends DIR before the FUNC of a function of the relative file src_sid
 * when its directory is not the one the last DIR said (lt_event.h). A
 * file's directory is the working directory at its first sight, and again
 * at each of its main chunks: a chunk runs as it is loaded (dofile,
 * require), perhaps anew after a chdir. getcwd only here, at a function
 * seen for the first time (whose naming costs far more): no syscall on the
 * hook's path, and none to watch chdir, which the program may call from C. */
static void source_dir(co_state *s, uint32_t src_sid, int main_chunk)
{
    uint32_t *d = srcdir_at(s, src_sid);
    char cwd[PATH_MAX];
    if (!d)
        return; /* no memory: recorderd reads it in the last DIR's directory */
    if ((!*d || main_chunk) && getcwd(cwd, sizeof cwd)) {
        uint32_t sid = strcmp(cwd, s->cwd0) ? intern_str(s, cwd, strlen(cwd)) : 0;
        if (sid || !strcmp(cwd, s->cwd0))
            *d = sid + 1;
    }
    uint8_t *p = *d && *d - 1 != s->dir_sent ? co_out_reserve(s, LT_EVENT_HOT_MAX) : NULL;
    if (!p)
        return;
    uint8_t *q = lt_put_head(p, LT_EV_DIR, 1);
    q = lt_put_uint(q, *d - 1);
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
    s->dir_sent = *d - 1;
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

static uint32_t fflags(const co_state *s, const void *cf)
{
    if (cf == (const void *)s->cf_pcall || cf == (const void *)s->cf_xpcall)
        return LT_FF_PCALL;
    if (cf == (const void *)s->cf_resume)
        return LT_FF_RESUME;
    if (cf == (const void *)s->cf_wrap)
        return LT_FF_WRAP;
    if (cf == (const void *)s->cf_yield)
        return LT_FF_YIELD;
    if (s->cf_close && cf == (const void *)s->cf_close)
        return CO_FF_CLOSE;
    if (cf == co_cpath_shown_key((const void *)s->cf_require))
        return CO_FF_BYARG;
    for (int i = 0; i < 4; i++)
        if (s->cf_loader[i] && cf == (const void *)s->cf_loader[i])
            return CO_FF_BYARG;
    return co_sigwatch_foreign(cf) ? CO_FF_SIGS : 0;
}

/* 5.1's backward jump at pc k (JMP 22 or FORLOOP 31 with a negative sBx:
 * 18 bits from bit 14, less 2^17 - 1, from the next pc; lopcodes.h): its
 * target, else -1. */
static int back_target(uint32_t i, int k)
{
    int op = (int)(i & 0x3f), sbx = (int)(i >> 14) - 131071;
    return (op == 22 || op == 31) && sbx < 0 ? k + 1 + sbx : -1;
}

/* The CODE record of Lua closure cl: its instructions per line event,
 * x16, what a line event costs in traceexec beyond the event itself
 * (co_calib.c). A run of one line's instructions has one event, and so
 * does each turn of a loop within one run (a jump back into it: 5.1 calls
 * the line hook at every jump back), which runs only the loop's part:
 * counted by runs alone, a one-line loop in a longer function took its
 * function's instructions off each turn (cogen's loop over a table came
 * out light, the generator beside it 12 points heavy). */
static uint8_t *put_code(uint8_t *q, uint32_t fid, const void *cl)
{
    const uint8_t *pr = lr_ptr_at(cl, CL_FP);
    int n = lr_int_at(pr, PR_SIZECODE), nl = lr_int_at(pr, PR_SIZELINE);
    const int *li = lr_ptr_at(pr, PR_LINEINFO);
    const uint32_t *code = lr_ptr_at(pr, PR_CODE);
    if (n <= 0 || nl != n || !li || !code)
        return q;
    uint32_t events = 1;
    for (int k = 0, run = 0; k < n; k++) {
        if (k && li[k] != li[k - 1]) {
            events++;
            run = k;
        }
        int to = back_target(code[k], k);
        events += to >= run && to <= k; /* an empty loop jumps to itself */
    }
    q = lt_put_head(q, LT_EV_CODE, 2);
    q = lt_put_uint(q, fid);
    return lt_put_uint(q, (uint64_t)n * 16 / events);
}

static int is_main_thread(lua_State *L)
{
    int main = lua_pushthread(L);
    lua_pop(L, 1);
    return main;
}

/* The names Lua gives any function a generic for calls (5.1's, LuaJIT's):
 * no name a reader can look up. */
static int for_site(const char *name)
{
    return !strcmp(name, "(for generator)") || !strcmp(name, "for iterator");
}

/* Writes the FUNC record (and its strings) for the function at the top.
 * body: for a wrap function, its body's place (wrap_body_name); NULL for
 * any wrap function whose body is unknown. */
/* LuaJIT: whether the C function on top of L, called at ar, is the cdata
 * metatable's __call, through which the FFI makes every call of a C
 * function (one function to the debug API: named after its first call
 * site, every later FFI call took that name, abs shown as qsort). */
static int ffi_call(lua_State *L, lua_Debug *ar)
{
    int fn = lua_gettop(L), is = 0;
    if (!lua_checkstack(L, 3) || !lua_getlocal(L, ar, 1))
        return 0;
    if (lua_type(L, -1) == 10 /* LuaJIT's cdata */ && lua_getmetatable(L, -1)) {
        lua_pushliteral(L, "__call");
        lua_rawget(L, -2);
        is = lua_rawequal(L, -1, fn);
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    return is;
}

static uint32_t describe(co_state *s, lua_State *L, lua_Debug *ar, int isC, uint32_t flags,
                         const char *body, const char *arg)
{
    /* a file's whole path: two files must never share a cut one */
    char name[CO_NAME_MAX], src[LT_STR_MAX + 1];
    co_alloc_step_due(L); /* naming it may allocate: a step due runs before, seen */
    lua_getinfo(L, "S", ar);
    unsigned what = isC ? LT_WHAT_C : !strcmp(ar->what, "main") ? LT_WHAT_MAIN : LT_WHAT_LUA;
    lua_CFunction cf = isC ? lua_tocfunction(L, -1) : NULL;
    if (what == LT_WHAT_MAIN && is_main_thread(L))
        co_sigint_install(L); /* lua.c runs each chunk with its own Ctrl-C */
    if (what == LT_WHAT_MAIN)
        snprintf(name, sizeof name, "main chunk");
    else if (flags == LT_FF_WRAP && !body)
        /* stands for any wrap function whose body is unknown (snapshots):
         * no call site's name, which the first body would then lack */
        snprintf(name, sizeof name, "coroutine.wrap function");
    else if (cf == luaopen_luatrace || cf == luaopen_luatrace_profile)
        /* our own entry, under require at the start of a -lluatrace trace:
         * by its C name, so that it takes no one else's */
        snprintf(name, sizeof name, "%s",
                 cf == luaopen_luatrace ? "luaopen_luatrace" : "luaopen_luatrace_profile");
    else if (isC && s->jit && ffi_call(L, ar))
        snprintf(name, sizeof name, "ffi C call");
    else
        co_name_find(L, lua_gettop(L), s->table_ok, name, sizeof name);
    /* the call site's name only when needed: Lua finds it by re-running the
     * caller's bytecode symbolically, a cost that grows with the caller */
    /* Lua 5.1 names a call through a table with a key that is no constant
     * (handlers[token](s)) "?": no name, the function's own label then */
    if (!name[0] && lua_getinfo(L, "n", ar) && ar->name && strcmp(ar->name, "?") &&
        !(body && for_site(ar->name)))
        snprintf(name, sizeof name, "%s", ar->name);
    if (!name[0] && body) /* a generator: its body says which */
        snprintf(name, sizeof name, "%s", body);
    if (!name[0] && cf) /* a static C function called from C: lua.c's pmain */
        co_name_module(cf, name, sizeof name);
    if (!name[0])
        snprintf(name, sizeof name, "function");
    if (arg) { /* require "a.b" */
        size_t n = strlen(name);
        snprintf(name + n, sizeof name - n, " \"%s\"", arg);
    }
    int file = !isC && ar->source[0] == '@';
    if (isC)
        snprintf(src, sizeof src, "[C]");
    else
        co_func_source(ar, src);
    sanitize(name);
    if (!file)
        sanitize(src); /* a file's path goes whole: coverage opens it */
    uint32_t src_sid = intern_str(s, src, strlen(src));
    uint32_t name_sid = intern_str(s, name, strlen(name));
    if (file && src[0] != '/' && src_sid)
        source_dir(s, src_sid, what == LT_WHAT_MAIN);
    uint8_t *p = co_out_reserve(s, 64);
    if (!src_sid || !name_sid || !p)
        return 0;
    uint32_t fid = s->next_fid++;
    uint8_t *q = lt_put_func(p, fid, what, src_sid, name_sid, ar->linedefined,
                             ar->lastlinedefined, flags | (isC || file ? 0 : LT_FF_NOFILE));
    if (!isC && s->layout_ok) /* 64 bytes hold both records */
        q = put_code(q, fid, lua_topointer(L, -1));
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
    if (!isC && s->jit_lines) /* LuaJIT's or 5.4's executable lines: coverage's */
        co_jit_lines(s, fid, lua_topointer(L, -1));
    return fid;
}

static int dump_writer(lua_State *L, const void *p, size_t n, void *ud)
{
    (void)L;
    uint64_t *h = ud;
    for (size_t i = 0; i < n; i++)
        *h = (*h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
    return 0;
}

/* Hash of the code of the Lua function at the top (never 0): read from
 * its Proto where the layout is known, else from string.dump's bytes. */
static uint64_t code_hash(const co_state *s, lua_State *L)
{
    if (s->code_ok)
        return co_code_hash(lr_ptr_at(lua_topointer(L, -1), CL_FP));
    uint64_t h = 1469598103934665603ull;
    lua_dump(L, dump_writer, &h);
    return h ? h : 1;
}

/* The slot of hash in the code table (free if the code is new). */
static co_cent *code_slot(co_ctab *t, uint64_t hash)
{
    uint32_t i = (uint32_t)(hash >> 17) & (t->cap - 1);
    while (t->e[i].hash && t->e[i].hash != hash)
        i = (i + 1) & (t->cap - 1);
    return &t->e[i];
}

static int grow_codes(co_ctab *t)
{
    co_ctab g = {co_mem_calloc(t->cap * 2, sizeof *t->e), t->cap * 2, t->n};
    if (!g.e)
        return -1;
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->e[i].hash)
            *code_slot(&g, t->e[i].hash) = t->e[i];
    co_mem_free(t->e);
    *t = g;
    return 0;
}

/* The fid of a Lua function (at the top) with known code, else describes
 * it and remembers its code. */
static uint32_t lua_func_fid(co_state *s, lua_State *L, lua_Debug *ar)
{
    uint64_t h = code_hash(s, L);
    if ((s->ct.n + 1) * 2 > s->ct.cap && grow_codes(&s->ct))
        return describe(s, L, ar, 0, 0, NULL, NULL); /* correct id, code not remembered */
    co_cent *c = code_slot(&s->ct, h);
    if (c->hash)
        return c->fid;
    uint32_t fid = describe(s, L, ar, 0, 0, NULL, NULL);
    if (fid) {
        *c = (co_cent){h, fid};
        s->ct.n++;
    }
    return fid;
}

static uint32_t func_new(co_state *s, lua_State *L, lua_Debug *ar, co_fent k, int isC)
{
    k.flags = isC ? fflags(s, k.key) : 0;
    k.fid = isC ? describe(s, L, ar, isC, k.flags & ~(CO_FF_OWN | CO_FF_SIGS), NULL, NULL)
                : lua_func_fid(s, L, ar);
    if (!k.fid)
        return 0;
    if ((s->ft.n + 1) * 2 > s->ft.cap && co_ftab_grow(&s->ft))
        return k.fid; /* correct id, just not cached */
    co_ftab_insert(&s->ft, k);
    return k.fid;
}

/* More Protos freed between two lookups than this: forget them all. */
#define CO_FREED_MAX (1u << 16)

void co_func_freed(co_state *s, const void *pr)
{
    if (!pr || !s || !s->freed || !s->ft.n || s->forget_all)
        return;
    if (s->nfreed == s->freed_cap) {
        const void **g = s->freed_cap < CO_FREED_MAX
                             ? co_mem_realloc(s->freed, s->freed_cap * sizeof *g,
                                              2 * s->freed_cap * sizeof *g)
                             : NULL;
        if (!g) {
            s->forget_all = 1;
            s->nfreed = 0;
            s->key_only = 0;
            return;
        }
        s->freed = g;
        s->freed_cap *= 2;
    }
    s->freed[s->nfreed++] = pr;
    s->key_only = 0; /* every lookup takes the slow path, which forgets pr first */
}

/* Forgets the functions of the Protos in s->freed. */
static void co_func_forget(co_state *s)
{
    for (uint32_t i = 0; i < s->nfreed; i++) {
        co_ftab_remove(&s->ft, s->freed[i]);
        co_ftab_remove(&s->ft, (const char *)s->freed[i] + 1); /* its wraps' entry */
    }
    s->nfreed = 0;
    /* every Lua function's entry (src set); C functions are code, not heap.
     * An entry can move back into slot i: look at i again. */
    for (uint32_t i = 0; s->forget_all && i < s->ft.cap;)
        if (s->ft.e[i].key && s->ft.e[i].src)
            co_ftab_remove(&s->ft, s->ft.e[i].key);
        else
            i++;
    s->forget_all = 0;
    co_func_fast_path(s);
}

/* Pushes onto L the Lua function a coroutine runs (its deepest frame: the
 * body, or what the body tail-called; or the function waiting at its base
 * if it has not started); returns 0 and
 * pushes nothing if there is none. */
static int push_body(lua_State *L, lua_State *co)
{
    lua_Debug d;
    if (!lua_checkstack(co, 1) || !lua_checkstack(L, 1))
        return 0;
    if (!lua_getstack(co, 0, &d)) {
        if (lua_status(co) != 0 || lua_gettop(co) < 1)
            return 0;
        lua_pushvalue(co, 1);
    } else { /* the deepest level may be a tail call's (i_ci 0): no frame */
        int deepest = 0;
        for (int level = 0; lua_getstack(co, level, &d); level++)
            if (CO_AR_DEPTH(&d) != 0)
                deepest = level;
        lua_getstack(co, deepest, &d);
        lua_getinfo(co, "f", &d);
    }
    if (!lua_isfunction(co, -1) || lua_iscfunction(co, -1)) {
        lua_pop(co, 1);
        return 0;
    }
    lua_xmove(co, L, 1);
    return 1;
}

/* The function entry of the wraps of body Proto pr. */
static co_fent wrap_key(const void *pr)
{
    /* an odd address: no Proto or C function has one */
    return (co_fent){(const char *)pr + 1, lr_ptr_at(pr, PR_SOURCE), lr_int_at(pr, PR_LINEDEF),
                     co_proto_shape(pr), 0, LT_FF_WRAP};
}

/* A wrap function's name when its call site has none a reader can look up
 * (a generic for's, a call from C): coroutine.wrap(FILE:LINE), where its
 * body (at the top of L) is defined, FILE without its directory. */
static void wrap_body_name(lua_State *L, char *name, size_t size)
{
    lua_Debug b;
    lua_pushvalue(L, -1);
    lua_getinfo(L, ">S", &b);
    const char *file = b.source[0] == '@' ? b.source + 1 : b.short_src;
    const char *slash = b.source[0] == '@' ? strrchr(file, '/') : NULL;
    snprintf(name, size, "coroutine.wrap(%s:%d)", slash ? slash + 1 : file,
             b.linedefined > 0 ? b.linedefined : 0);
}

/* The id of the wraps of the body on top of L (ar: the wrap function's
 * frame), by the body's code, described if new; kept for the body
 * closure (co_jit_wrap_set) or, k given, under k (a Proto's key). */
static uint32_t wrap_new(co_state *s, lua_State *L, lua_Debug *ar, co_fent *k)
{
    co_hook_slow(s);
    uint64_t h = code_hash(s, L) ^ 0x77726170u; /* "wrap": not the body's own entry */
    char body[CO_NAME_MAX];
    wrap_body_name(L, body, sizeof body);
    int room = (s->ct.n + 1) * 2 <= s->ct.cap || !grow_codes(&s->ct);
    co_cent *c = room ? code_slot(&s->ct, h ? h : 1) : NULL;
    uint32_t fid;
    if (c && c->hash) {
        fid = c->fid;
    } else {
        lua_getinfo(L, "f", ar);
        fid = describe(s, L, ar, 1, LT_FF_WRAP, body, NULL);
        lua_pop(L, 1);
        if (c && fid) {
            *c = (co_cent){h ? h : 1, fid};
            s->ct.n++;
        }
    }
    if (fid && !k)
        co_jit_wrap_set(L, fid);
    else if (fid && ((s->ft.n + 1) * 2 <= s->ft.cap || !co_ftab_grow(&s->ft)))
        co_ftab_insert(&s->ft, (k->fid = fid, *k));
    return fid;
}

/* A wrap function is known by its body: by the body's Proto while it is
 * cached, else by the body's code, so that the wraps of one function to the
 * reader (a chunk loaded twice, string.dump + loadstring) share an id as
 * their bodies do. */
uint32_t co_func_wrap_id(co_state *s, lua_State *L, lua_Debug *ar, lua_State *co, uint32_t fid)
{
    if (s->nfreed | s->forget_all)
        co_func_forget(s);
    const uint8_t *cl = s->state_ok && co ? co_func_body(co) : NULL;
    co_fent k;
    const co_fent *e = cl ? co_ftab_find(&s->ft, (k = wrap_key(lr_ptr_at(cl, CL_FP)), &k)) : NULL;
    if (e) /* every resume of a known generator */
        return e->fid;
    if ((!s->layout_ok && !s->jit && !CO_BY_CLOSURE) || !co || !push_body(L, co))
        return fid;
    /* LuaJIT and 5.4: no Proto to key by, and a closure's address is a
     * new closure's once the GC freed it (two bodies on one line, one
     * after the other, shared an id): a table with weak keys */
    int by_closure = s->jit || CO_BY_CLOSURE;
    if (by_closure) {
        k.fid = co_jit_wrap_fid(L);
    } else {
        k = wrap_key(lr_ptr_at(lua_topointer(L, -1), CL_FP));
        e = co_ftab_find(&s->ft, &k);
        k.fid = e ? e->fid : 0;
    }
    if (!k.fid && lua_checkstack(L, 1))
        k.fid = wrap_new(s, L, ar, !by_closure ? &k : NULL);
    lua_pop(L, 1);
    return k.fid ? k.fid : fid;
}

enum { ARG_MAX = 200 }; /* longer: no module name */

/* An argument's id, from its entry or its code slot (a module's name
 * hashed with the function that loads it), else made now. */
static uint32_t arg_fid(co_state *s, lua_State *L, lua_Debug *ar, uint64_t h, const char *arg)
{
    int room = (s->ct.n + 1) * 2 <= s->ct.cap || !grow_codes(&s->ct);
    co_cent *c = room ? code_slot(&s->ct, h) : NULL;
    if (c && c->hash)
        return c->fid;
    lua_getinfo(L, "f", ar);
    uint32_t fid = describe(s, L, ar, 1, 0, NULL, arg);
    lua_pop(L, 1);
    if (c && fid) {
        *c = (co_cent){h, fid};
        s->ct.n++;
    }
    return fid;
}

uint32_t co_func_arg_id(co_state *s, lua_State *L, lua_Debug *ar, uint32_t fid)
{
    size_t len = 0;
    if (!lua_getlocal(L, ar, 1)) /* a C function's argument: "(*temporary)" */
        return fid;
    const char *arg = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
    if (!arg || !len || len > ARG_MAX || memchr(arg, 0, len)) {
        lua_pop(L, 1);
        return fid;
    }
    uint64_t h = 1469598103934665603ull ^ fid;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)arg[i]) * 1099511628211ull;
    h = h ? h : 1;
    /* keyed by the interned name's bytes + 3: no Proto (aligned), wrap key
     * (a Proto + 1) nor C function lies there; a name freed and another
     * made at its address differs in its hash */
    co_fent k = {arg + 3, &s->cf_require, (int)len, (uint32_t)(h >> 32), 0, 0};
    const co_fent *e = co_ftab_find(&s->ft, &k);
    if (e) {
        lua_pop(L, 1);
        return e->fid;
    }
    co_hook_slow(s);
    char name[ARG_MAX + 1];
    memcpy(name, arg, len);
    name[len] = 0;
    lua_pop(L, 1);
    k.fid = arg_fid(s, L, ar, h, name);
    if (k.fid && ((s->ft.n + 1) * 2 <= s->ft.cap || !co_ftab_grow(&s->ft)))
        co_ftab_insert(&s->ft, k);
    return k.fid ? k.fid : fid;
}

/* Under LuaJIT, the Lua function on top of L's stack (popped): by the
 * closure itself, in a table with weak keys (co_jit.c), as no free of it
 * is seen: a closure at a freed one's address is another key. (Not by
 * its prototype in C: one freed and another made at its address may
 * differ from it only in its chunk's name or its constants, as
 * protos_recycled.lua's do, and reading those costs what the table does.) */
static uint32_t jit_lua_fid(co_state *s, lua_State *L, lua_Debug *ar, uint32_t *flags)
{
    uint32_t fid = co_jit_closure_fid(L);
    *flags = 0;
    if (!fid) {
        co_hook_slow(s);
        fid = lua_func_fid(s, L, ar);
        if (fid)
            co_jit_closure_set(L, fid);
    }
    lua_pop(L, 1);
    return fid;
}

uint32_t co_func_id_slow(co_state *s, lua_State *L, lua_Debug *ar, uint32_t *flags)
{
    if (s->nfreed | s->forget_all)
        co_func_forget(s);
    const uint8_t *cl = NULL;
    if (s->state_ok) {
        cl = co_func_closure(L, ar);
    } else if (s->layout_ok) {
        lua_getinfo(L, "f", ar);
        cl = lua_topointer(L, -1);
        lua_pop(L, 1);
    }
    co_fent k = {0};
    int isC;
    if (s->layout_ok) {
        isC = cl[CL_ISC];
        k.key = lr_ptr_at(cl, CL_FP);
        if (isC) /* Lua's require, hidden: the global require's entry */
            k.key = co_cpath_shown_key(k.key);
        if (!isC) {
            k.src = lr_ptr_at(k.key, PR_SOURCE);
            k.line = lr_int_at(k.key, PR_LINEDEF);
            k.shape = co_proto_shape(k.key);
        }
    } else {
        lua_getinfo(L, "f", ar);
        isC = lua_iscfunction(L, -1);
        if ((s->jit || CO_BY_CLOSURE) && !isC)
            return jit_lua_fid(s, L, ar, flags);
        k.key = isC ? co_cpath_shown_key(co_cfunc_key(L, -1)) : lua_topointer(L, -1);
        lua_pop(L, 1);
    }
    const co_fent *e = co_ftab_find(&s->ft, &k);
    if (e) {
        *flags = e->flags;
        return e->fid;
    }
    co_hook_slow(s); /* interning costs microseconds: measure this hook's end */
    lua_getinfo(L, "f", ar); /* naming needs the function on the stack */
    uint32_t fid = func_new(s, L, ar, k, isC);
    lua_pop(L, 1);
    *flags = isC ? fflags(s, k.key) : 0;
    return fid;
}

uint32_t co_func_gc_id(co_state *s)
{
    if (s->gc_fid)
        return s->gc_fid;
    uint32_t src_sid = intern_str(s, "[C]", 3);
    uint32_t name_sid = intern_str(s, "(gc)", 4);
    uint8_t *p = src_sid && name_sid ? co_out_reserve(s, 64) : NULL;
    if (!p)
        return 0;
    uint32_t fid = s->next_fid++;
    uint8_t *q = lt_put_func(p, fid, LT_WHAT_C, src_sid, name_sid, 0, 0, 0);
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
    s->gc_fid = fid;
    return fid;
}
