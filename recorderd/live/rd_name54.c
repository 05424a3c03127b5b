/* rd_name54: the names of a Lua 5.4 dump's functions and its records
 * (rd_peek54.h). A function is named by where the program keeps it, as
 * the collector (co_name) and the 5.1 reader name it: the shortest of a
 * global (fib) and a field of a module in package.loaded (io.read,
 * mod.f); a main chunk is "main chunk"; else by its call (rd_site54.c); a
 * C function with none of these by the file that defines it (lua5.4 for
 * lua.c's pmain). The records are those of lr_stackread, so
 * dump prints them as it prints 5.1's. */
#include <stdio.h>
#include <string.h>

#include "lt_event.h"
#include "rd_elf.h"
#include "rd_lua54.h"
#include "rd_peek54.h"

enum { NODES_MAX = 1 << 16, CHUNK_NODES = 64, LUA_IDSIZE_ = 60 };

int r54_tstring(r54 *d, uintptr_t ts, char *out, size_t cap)
{
    uint8_t h[TS4_CONTENTS];
    size_t n;
    if (!ts || r54_peek(d, ts, h, sizeof h))
        return -1;
    if (h[8] == O4_SHRSTR)
        n = h[TS4_SHRLEN];
    else if (h[8] == O4_LNGSTR)
        n = (size_t)r54_ptr_at(h, TS4_LNGLEN);
    else
        return -1;
    if (n > cap - 1)
        n = cap - 1;
    if (r54_peek(d, ts + TS4_CONTENTS, out, n))
        return -1;
    out[n] = 0;
    return (int)n;
}

/* {====== names */

/* How a table's nodes name functions: its prefix (NULL for the globals)
 * joined to each string key (W_NAMES); the registry: its _LOADED only
 * (W_REGISTRY); _LOADED: each module, a table under a string key but _G
 * (the globals, however set), searched with its key as prefix. */
enum { W_NAMES, W_REGISTRY, W_LOADED };
typedef struct walk {
    int how;
    const char *prefix;
} walk;

/* The functions the value tv (a TValue) is: the next index from i of
 * d->fn, or -1 (one C function may sit in several d->fn entries: a light
 * one and closures of it). */
static int which(const r54 *d, const uint8_t *tv, uint32_t i)
{
    uintptr_t v = r54_ptr_at(tv, 0);
    for (; i < d->nfn; i++) {
        const r54_fn *f = &d->fn[i];
        if ((tv[TV4_TT] == T4_LCF && !f->cl && f->key == v) ||
            ((tv[TV4_TT] == T4_LCL || tv[TV4_TT] == T4_CCL) && f->cl == v))
            return (int)i;
    }
    return -1;
}

static void names_in(r54 *d, uintptr_t t, const walk *w);

/* Offers name (prefix.key, cut to fit) to function f: kept if shorter
 * than the one it has, or as long and smaller in bytes, as the
 * collector's co_name keeps the shortest path. */
static void offer(r54_fn *f, const char *prefix, const char *key)
{
    char cand[R54_NAME];
    size_t n = prefix ? strlen(prefix) : 0, k = strlen(key);
    n = n > R54_NAME - 2 ? R54_NAME - 2 : n;
    memcpy(cand, prefix ? prefix : "", n);
    if (prefix)
        cand[n++] = '.';
    k = k > R54_NAME - 1 - n ? R54_NAME - 1 - n : k;
    memcpy(cand + n, key, k);
    cand[n + k] = 0;
    size_t cl = n + k, bl = strlen(f->name);
    if (!f->name[0] || cl < bl || (cl == bl && strcmp(cand, f->name) < 0))
        memcpy(f->name, cand, cl + 1);
}

/* One node of a table being searched: names the functions its value is,
 * by its string key; in the registry and _LOADED, the tables to search. */
static void visit(r54 *d, const uint8_t *nd, const walk *w)
{
    char key[R54_NAME];
    uint8_t ktt = nd[ND4_KEYTT];
    if ((ktt != T4_SHRSTR && ktt != T4_LNGSTR) || (w->how != W_NAMES && nd[TV4_TT] != T4_TABLE) ||
        r54_tstring(d, r54_ptr_at(nd, ND4_KEY), key, sizeof key) < 0)
        return;
    if (w->how == W_REGISTRY && !strcmp(key, "_LOADED")) {
        walk in = {W_LOADED, NULL};
        names_in(d, r54_ptr_at(nd, 0), &in);
    } else if (w->how == W_LOADED && strcmp(key, "_G")) {
        walk in = {W_NAMES, key};
        names_in(d, r54_ptr_at(nd, 0), &in);
    } else if (w->how == W_NAMES) {
        for (int f = which(d, nd, 0); f >= 0; f = which(d, nd, (uint32_t)f + 1))
            offer(&d->fn[f], w->prefix, key);
    }
}

/* Names the functions kept in table t's hash part (its array part has no
 * string keys). */
static void names_in(r54 *d, uintptr_t t, const walk *w)
{
    uint8_t tb[TB4_READ], nd[CHUNK_NODES * ND4_SIZE];
    if (r54_peek(d, t, tb, sizeof tb) || tb[8] != O4_TABLE || tb[TB4_LSIZENODE] > 26)
        return;
    uint32_t size = 1u << tb[TB4_LSIZENODE];
    uintptr_t node = r54_ptr_at(tb, TB4_NODE);
    for (uint32_t i = 0; i < size && i < NODES_MAX; i += CHUNK_NODES) {
        uint32_t m = size - i < CHUNK_NODES ? size - i : CHUNK_NODES;
        if (r54_peek(d, node + (uintptr_t)i * ND4_SIZE, nd, (size_t)m * ND4_SIZE))
            return;
        for (uint32_t j = 0; j < m; j++)
            visit(d, nd + j * ND4_SIZE, w);
    }
}

/* The globals table (the registry's LUA_RIDX_GLOBALS), or 0. */
static uintptr_t globals(r54 *d, uintptr_t *registry)
{
    uint8_t g[G4_READ], tb[TB4_READ], tv[2 * TV4_SIZE];
    if (r54_peek(d, d->g, g, sizeof g) || g[G4_REGISTRY + TV4_TT] != T4_TABLE)
        return 0;
    uintptr_t reg = r54_ptr_at(g, G4_REGISTRY);
    if (r54_peek(d, reg, tb, sizeof tb) || r54_peek(d, r54_ptr_at(tb, TB4_ARRAY), tv, sizeof tv) ||
        tv[TV4_SIZE + TV4_TT] != T4_TABLE)
        return 0;
    if (registry)
        *registry = reg;
    return r54_ptr_at(tv, TV4_SIZE);
}

/* The value under string key name in table t's hash part, into tv: 0, or
 * -1 if there is none (or t does not read as a table). */
static int field(r54 *d, uintptr_t t, const char *name, uint8_t tv[TV4_SIZE])
{
    uint8_t tb[TB4_READ], nd[CHUNK_NODES * ND4_SIZE];
    char key[R54_NAME];
    if (!t || r54_peek(d, t, tb, sizeof tb) || tb[8] != O4_TABLE || tb[TB4_LSIZENODE] > 26)
        return -1;
    uint32_t size = 1u << tb[TB4_LSIZENODE];
    uintptr_t node = r54_ptr_at(tb, TB4_NODE);
    for (uint32_t i = 0; i < size && i < NODES_MAX; i += CHUNK_NODES) {
        uint32_t m = size - i < CHUNK_NODES ? size - i : CHUNK_NODES;
        if (r54_peek(d, node + (uintptr_t)i * ND4_SIZE, nd, (size_t)m * ND4_SIZE))
            return -1;
        for (uint32_t j = 0; j < m; j++) {
            const uint8_t *e = nd + j * ND4_SIZE;
            if ((e[ND4_KEYTT] == T4_SHRSTR || e[ND4_KEYTT] == T4_LNGSTR) && e[TV4_TT] != T4_NIL &&
                r54_tstring(d, r54_ptr_at(e, ND4_KEY), key, sizeof key) >= 0 && !strcmp(key, name)) {
                memcpy(tv, e, TV4_SIZE);
                return 0;
            }
        }
    }
    return -1;
}

/* The C function of C closure tv (a TValue), or 0. */
static uintptr_t cfn_of(r54 *d, const uint8_t *tv)
{
    uint8_t cl[CL4_READ];
    return tv[TV4_TT] == T4_CCL && !r54_peek(d, r54_ptr_at(tv, 0), cl, sizeof cl) && cl[8] == O4_CCL
               ? r54_ptr_at(cl, CL4_FP)
               : 0;
}

void r54_find_loaders(r54 *d)
{
    uint8_t tv[TV4_SIZE], tb[TB4_READ], arr[R54_SEARCHERS * TV4_SIZE];
    uintptr_t reg, g = globals(d, &reg);
    d->require_looked = 1;
    if (!g)
        return;
    if (!field(d, g, "require", tv))
        d->cf_require = cfn_of(d, tv);
    /* package.searchers, as the collector finds it: _LOADED.package's */
    if (field(d, reg, "_LOADED", tv) || tv[TV4_TT] != T4_TABLE ||
        field(d, r54_ptr_at(tv, 0), "package", tv) || tv[TV4_TT] != T4_TABLE ||
        field(d, r54_ptr_at(tv, 0), "searchers", tv) || tv[TV4_TT] != T4_TABLE ||
        r54_peek(d, r54_ptr_at(tv, 0), tb, sizeof tb))
        return;
    unsigned n = (unsigned)r54_int_at(tb, TB4_ALIMIT);
    n = n < R54_SEARCHERS ? n : R54_SEARCHERS;
    if (!n || r54_peek(d, r54_ptr_at(tb, TB4_ARRAY), arr, n * TV4_SIZE))
        return;
    for (unsigned i = 0; i < n; i++)
        d->cf_searcher[i] = cfn_of(d, arr + i * TV4_SIZE);
}

/* As the collector names a function (co_name_find): the shortest of its
 * global names (the globals' own keys, not their tables': a global alias
 * of a module, J = require "json", named it J.encode where the trace has
 * json.encode) and MOD.key for each module of package.loaded; ties to
 * the smaller bytes. The globals are the registry's array slot
 * LUA_RIDX_GLOBALS, package.loaded its "_LOADED". */
void r54_name_functions(r54 *d)
{
    uintptr_t reg, g = globals(d, &reg);
    if (!g)
        return;
    walk in_globals = {W_NAMES, NULL}, in_registry = {W_REGISTRY, NULL};
    names_in(d, g, &in_globals);
    names_in(d, reg, &in_registry);
}

/* }====== */

/* {====== records */

static uint8_t *room(r54 *d, size_t n)
{
    return d->nout + n <= OUT54_CAP ? d->out + d->nout : NULL;
}

static uint32_t put_str(r54 *d, const char *s)
{
    size_t n = strlen(s);
    uint8_t *p = room(d, n + 16);
    if (!p)
        return 0;
    uint32_t sid = ++d->next_sid;
    uint8_t *q = lt_put_head(p, LT_EV_STR, 2);
    q = lt_put_uint(q, sid);
    q = lt_put_str(q, s, (uint32_t)n);
    d->nout += (size_t)(q - p);
    return sid;
}

/* The source as Lua's short_src shows it: "@file" and "=name" without
 * their mark, else [string "its first line..."]. */
static void source_label(r54 *d, uintptr_t ts, char *out, size_t cap)
{
    static char raw[LT_STR_MAX + 1];
    if (r54_tstring(d, ts, raw, sizeof raw) < 0)
        snprintf(out, cap, "?");
    else if (raw[0] == '@' || raw[0] == '=')
        snprintf(out, cap, "%s", raw + 1);
    else {
        size_t n = strcspn(raw, "\n"), room_ = LUA_IDSIZE_ - 15; /* [string "..."] and NUL */
        int cut = raw[n] || n > room_;
        snprintf(out, cap, "[string \"%.*s%s\"]", (int)(n > room_ ? room_ : n), raw,
                 cut ? "..." : "");
    }
    for (char *c = out; *c; c++) /* the records' separators */
        *c = *c == ';' ? ',' : *c == '\n' || *c == '\r' ? ' ' : *c;
}

/* A C function with no name: the file that defines it, else "function". */
static const char *c_name(r54 *d, const r54_fn *f, char *buf, size_t cap)
{
    char file[4096];
    if (rd_elf_range(d->pid, f->key, file, sizeof file) || !file[0])
        return "function";
    const char *base = strrchr(file, '/');
    snprintf(buf, cap, "%.*s", (int)cap - 1, base ? base + 1 : file);
    return buf;
}

/* Whether C function cf is defined in the file of the Lua library (that
 * of the global require's C function). */
static int in_lua_lib(r54 *d, uintptr_t cf)
{
    char a[4096], b[4096];
    if (!d->require_looked)
        r54_find_loaders(d);
    return d->cf_require && !rd_elf_range(d->pid, cf, a, sizeof a) &&
           !rd_elf_range(d->pid, d->cf_require, b, sizeof b) && a[0] && !strcmp(a, b);
}

/* The standard library's iterators, named as the collector names them
 * (co_name_iterators: it calls ipairs, string.gmatch and io.lines to
 * learn their C functions, which no table holds): C functions of the Lua
 * library told by what 5.4.4 gives them. string.gmatch's, a closure of
 * three upvalues: the subject and pattern strings and its state, a
 * userdata; io.lines's (and a file's lines), a closure of 3 + n: the file
 * (a userdata), n (an integer), whether to close it (a boolean) and n
 * formats; ipairs's, a light C function a generic for calls whose state
 * is no string (utf8.codes's, the library's other light iterator, has
 * its subject string for a state). NULL if none. */
static const char *lib_iterator(r54 *d, const r54_fn *f)
{
    enum { T4_USERDATA = 0x47, T4_INT = 0x03, T4_FALSE = 0x01, T4_TRUE = 0x11 };
    uint8_t cl[CL4_UPV0 + 3 * TV4_SIZE];
    if (!f->isC || f->argfn || f->body_src)
        return NULL;
    if (!f->cl) /* a light C function */
        return f->for_state && f->for_state - 1 != T4_SHRSTR && f->for_state - 1 != T4_LNGSTR &&
                       in_lua_lib(d, f->key)
                   ? "ipairs iterator"
                   : NULL;
    if (r54_peek(d, f->cl, cl, sizeof cl) || cl[8] != O4_CCL)
        return NULL;
    int n = cl[CL4_NUPVALUES];
    const uint8_t *u = cl + CL4_UPV0;
    int str0 = u[TV4_TT] == T4_SHRSTR || u[TV4_TT] == T4_LNGSTR;
    int str1 = u[TV4_SIZE + TV4_TT] == T4_SHRSTR || u[TV4_SIZE + TV4_TT] == T4_LNGSTR;
    uint8_t t2 = u[2 * TV4_SIZE + TV4_TT];
    if (n == 3 && str0 && str1 && t2 == T4_USERDATA)
        return in_lua_lib(d, f->key) ? "string.gmatch iterator" : NULL;
    if (n >= 3 && u[TV4_TT] == T4_USERDATA && u[TV4_SIZE + TV4_TT] == T4_INT &&
        (t2 == T4_FALSE || t2 == T4_TRUE) && (int64_t)r54_ptr_at(u, TV4_SIZE) == n - 3)
        return in_lua_lib(d, f->key) ? "io.lines iterator" : NULL;
    return NULL;
}

/* A wrap function's name, as the collector gives it: coroutine.wrap(FILE:
 * LINE), where its body is defined, FILE without its directory. */
static const char *wrap_name(r54 *d, const r54_fn *f, char *buf, size_t cap)
{
    static char raw[LT_STR_MAX + 1];
    if (r54_tstring(d, f->body_src, raw, sizeof raw) < 0)
        raw[0] = 0;
    const char *file = raw[0] == '@' || raw[0] == '=' ? raw + 1 : "?";
    if (raw[0] == '@' && strrchr(file, '/'))
        file = strrchr(file, '/') + 1;
    snprintf(buf, cap, "coroutine.wrap(%.200s:%d)", file, f->body_line);
    return buf;
}

const char *r54_func_name(r54 *d, const r54_fn *f, char *buf, size_t cap)
{
    if (f->argfn && f->searcher) { /* package.searchers[2] "a.b" */
        snprintf(buf, cap, "package.searchers[%d] \"%s\"", f->searcher, f->arg);
        return buf;
    }
    if (f->argfn) { /* require "a.b", as the collector names each module's */
        snprintf(buf, cap, "%.100s \"%s\"", f->name[0] ? f->name : "require", f->arg);
        return buf;
    }
    const char *iter;
    return !f->isC && f->linedef == 0 ? "main chunk"
           : f->name[0]               ? f->name
           : (iter = lib_iterator(d, f)) ? iter
           : f->call[0] && !(f->body_src && !strcmp(f->call, "for iterator")) ? f->call
           : f->body_src              ? wrap_name(d, f, buf, cap)
           : f->isC                   ? c_name(d, f, buf, cap)
                                      : "function";
}

int r54_func_named(const r54_fn *f)
{
    return (!f->isC && f->linedef == 0) || f->name[0] || f->argfn ||
           (f->call[0] && !(f->body_src && !strcmp(f->call, "for iterator")));
}

void r54_func_source(r54 *d, const r54_fn *f, char *out, size_t cap)
{
    if (f->isC)
        snprintf(out, cap, "[C]");
    else
        source_label(d, f->src, out, cap);
}

static void put_funcs(r54 *d)
{
    static char src[LT_STR_MAX + 64];
    char nb[256];
    for (uint32_t i = 0; i < d->nfn; i++) {
        r54_fn *f = &d->fn[i];
        int main = !f->isC && f->linedef == 0;
        r54_func_source(d, f, src, sizeof src);
        uint32_t src_sid = put_str(d, src);
        uint32_t name_sid = put_str(d, r54_func_name(d, f, nb, sizeof nb));
        uint8_t *p = room(d, 64);
        if (!p || !src_sid || !name_sid)
            return;
        uint8_t *q = lt_put_func(p, i + 1, f->isC ? LT_WHAT_C : main ? LT_WHAT_MAIN : LT_WHAT_LUA,
                                 src_sid, name_sid, f->linedef, f->lastline, 0);
        d->nout += (size_t)(q - p);
    }
}

/* THREAD, START, its FRAMEs and, resumed by the thread before it, RESUME:
 * as lr_stackread writes them. A thread's id is its place in d->th + 1. */
static void put_thread(r54 *d, const r54_thread *t, unsigned reason, int resume)
{
    uint32_t id = (uint32_t)(t - d->th) + 1;
    uint8_t *p = room(d, 2 * LT_EVENT_HOT_MAX), *q;
    if (!p)
        return;
    q = lt_put_head(p, LT_EV_THREAD, 2);
    q = lt_put_uint(q, id);
    q = lt_put_uint(q, (uint64_t)t->L);
    q = lt_put_head(q, LT_EV_START, 2);
    q = lt_put_uint(q, id);
    q = lt_put_uint(q, reason);
    d->nout += (size_t)(q - p);
    for (uint32_t i = 0; i < t->n && (p = room(d, LT_EVENT_HOT_MAX)); i++) {
        const r54_frame *f = &d->fr[t->first + i];
        q = lt_put_head(p, LT_EV_FRAME, 3);
        q = lt_put_uint(q, f->depth);
        q = lt_put_uint(q, f->fn + 1);
        q = lt_put_uint(q, f->line > 0 ? (uint64_t)f->line : 0);
        d->nout += (size_t)(q - p);
    }
    if (resume && (p = room(d, LT_EVENT_HOT_MAX))) {
        q = lt_put_head(p, LT_EV_RESUME, 3);
        q = lt_put_uint(q, 0);
        q = lt_put_uint(q, id);
        q = lt_put_uint(q, t->n ? d->fr[t->first].depth : 0);
        d->nout += (size_t)(q - p);
    }
}

/* The thread of d->th that is L and runs, or -1. */
static int running(const r54 *d, uintptr_t L)
{
    for (uint32_t i = 0; L && i < d->nth; i++)
        if (d->th[i].L == L && d->th[i].active && !d->th[i].in_chain)
            return (int)i;
    return -1;
}

void r54_chain(r54 *d)
{
    d->nchain = 0;
    int c = d->nth ? 0 : -1; /* main */
    while (c >= 0 && d->nchain < R54_THREADS) {
        d->th[c].in_chain = 1;
        d->chain[d->nchain++] = (uint32_t)c;
        c = running(d, d->th[c].target);
    }
}

void r54_records(r54 *d)
{
    if (!d->nth)
        return;
    r54_name_functions(d);
    put_funcs(d);
    r54_chain(d);
    for (uint32_t k = 0; k < d->nchain; k++)
        put_thread(d, &d->th[d->chain[k]], k ? LT_R_HOOKED : LT_R_BEGIN, k > 0);
    for (uint32_t i = 1; i < d->nth; i++) /* suspended: not those that died of an error */
        if (!d->th[i].in_chain && d->th[i].n && d->th[i].status <= 1)
            put_thread(d, &d->th[i], LT_R_HOOKED, 0);
}

/* }====== */
