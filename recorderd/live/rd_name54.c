/* rd_name54: the names of a Lua 5.4 dump's functions and its records
 * (rd_peek54.h). A function is named by where the program keeps it, as
 * the 5.1 reader names it: a global (fib), a field of a global table
 * (io.read) or of a module in package.loaded (mod.f); a main chunk is
 * "main chunk"; a C function with no such name by the file that defines it
 * (lua5.4 for lua.c's pmain). The records are those of lr_stackread, so
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

typedef struct walk {
    const char *prefix; /* the table's own name, or NULL at the top */
    int depth;          /* 0: look into the tables found too */
    const char *only;   /* look into this key's table only (the registry's) */
} walk;

/* The unnamed function the value tv (a TValue) is, or -1. */
static int which(const r54 *d, const uint8_t *tv)
{
    uintptr_t v = r54_ptr_at(tv, 0);
    for (uint32_t i = 0; i < d->nfn; i++) {
        const r54_fn *f = &d->fn[i];
        if (!f->name[0] && ((tv[TV4_TT] == T4_LCF && !f->cl && f->key == v) ||
                            ((tv[TV4_TT] == T4_LCL || tv[TV4_TT] == T4_CCL) && f->cl == v)))
            return (int)i;
    }
    return -1;
}

static void names_in(r54 *d, uintptr_t t, const walk *w);

/* One node of a table being searched: names the function its value is,
 * by its string key; looks into a table one level down. */
static void visit(r54 *d, const uint8_t *nd, const walk *w)
{
    char key[R54_NAME];
    int f = which(d, nd);
    uint8_t ktt = nd[ND4_KEYTT];
    if (w->only) {
        walk in = {0};
        if ((ktt == T4_SHRSTR || ktt == T4_LNGSTR) && nd[TV4_TT] == T4_TABLE &&
            r54_tstring(d, r54_ptr_at(nd, ND4_KEY), key, sizeof key) >= 0 && !strcmp(key, w->only))
            names_in(d, r54_ptr_at(nd, 0), &in);
        return;
    }
    if ((f < 0 && !(nd[TV4_TT] == T4_TABLE && w->depth == 0)) ||
        (ktt != T4_SHRSTR && ktt != T4_LNGSTR) ||
        r54_tstring(d, r54_ptr_at(nd, ND4_KEY), key, sizeof key) < 0)
        return;
    if (f >= 0) {
        char *name = d->fn[f].name; /* prefix.key, cut to fit */
        size_t n = w->prefix ? strlen(w->prefix) : 0, k = strlen(key);
        n = n > R54_NAME - 2 ? R54_NAME - 2 : n;
        memcpy(name, w->prefix ? w->prefix : "", n);
        if (w->prefix)
            name[n++] = '.';
        k = k > R54_NAME - 1 - n ? R54_NAME - 1 - n : k;
        memcpy(name + n, key, k);
        name[n + k] = 0;
    } else if (strcmp(key, "_G") && strcmp(key, "package") && strcmp(key, "_LOADED")) {
        walk in = {.prefix = key, .depth = 1};
        names_in(d, r54_ptr_at(nd, 0), &in);
    }
}

/* Names the functions kept in table t's hash part (and, at depth 0, in
 * the tables it holds). */
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

/* The registry's globals (array slot LUA_RIDX_GLOBALS) and package.loaded
 * (its "_LOADED", found as a table field of it). */
void r54_name_functions(r54 *d)
{
    uint8_t g[G4_READ], tb[TB4_READ], tv[2 * TV4_SIZE];
    if (r54_peek(d, d->g, g, sizeof g) || g[G4_REGISTRY + TV4_TT] != T4_TABLE)
        return;
    uintptr_t reg = r54_ptr_at(g, G4_REGISTRY);
    if (r54_peek(d, reg, tb, sizeof tb) || r54_peek(d, r54_ptr_at(tb, TB4_ARRAY), tv, sizeof tv) ||
        tv[TV4_SIZE + TV4_TT] != T4_TABLE)
        return;
    walk top = {0};
    names_in(d, r54_ptr_at(tv, TV4_SIZE), &top); /* globals, and their tables' fields */
    walk loaded = {.only = "_LOADED"};
    names_in(d, reg, &loaded); /* package.loaded's modules: MOD.f */
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
    return !f->isC && f->linedef == 0 ? "main chunk"
           : f->name[0]               ? f->name
           : f->call[0]               ? f->call
           : f->body_src              ? wrap_name(d, f, buf, cap)
           : f->isC                   ? c_name(d, f, buf, cap)
                                      : "function";
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
