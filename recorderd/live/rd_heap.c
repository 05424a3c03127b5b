/* rd_heap: `recorderd heap PID`, the report of rd_heapwalk's tree: the
 * objects by type, what keeps the most memory alive (the tables whose
 * subtrees hold the most, each by its shortest path from a root, e.g.
 * _G.cache.sessions, with its entries), the biggest tables; with --diff,
 * two snapshots and what grew between them, by path. */
#include "rd_heap.h"

#include <ctype.h>
#include <errno.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rd_gcwalk.h"
#include "rd_heapslot.h"
#include "rd_heapwalk.h"
#include "rd_peek.h"

enum { PATH_MAX_EDGES = 24, PATH_CAP = 512, KEPT = 500 };

/* A table kept for the report and the diff: its path and figures. */
typedef struct held {
    char path[PATH_CAP];
    uint64_t sub, size;
    uint32_t nsub, entries;
    int entry_type; /* the type most of its entries are, -1 none */
} held;

typedef struct snap {
    rd_heapwalk w;
    held *h;
    size_t nh;
    uint64_t type_bytes[HT_NTYPES], type_objs[HT_NTYPES];
    uint64_t bytes; /* reached */
    double secs;
} snap;

static const char *type_name(int t)
{
    static const char *const n[HT_NTYPES] = {
        [LUA_TSTRING] = "string",       [LUA_TTABLE] = "table",
        [LUA_TFUNCTION] = "function (Lua)", [LUA_TUSERDATA] = "userdata",
        [LUA_TTHREAD] = "thread",       [HT_PROTO] = "prototype",
        [HT_UPVAL] = "upvalue",         [HT_CFUNC] = "function (C)"};
    return t >= 0 && t < HT_NTYPES && n[t] ? n[t] : "?";
}

static void human(uint64_t b, char *buf, size_t cap)
{
    if (b >= 10u << 20)
        snprintf(buf, cap, "%.1f MB", (double)b / (1 << 20));
    else if (b >= 10u << 10)
        snprintf(buf, cap, "%.1f kB", (double)b / (1 << 10));
    else
        snprintf(buf, cap, "%llu B", (unsigned long long)b);
}

/* {====== paths */

static int is_name(const char *s)
{
    if (!*s || isdigit((unsigned char)*s))
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* The label of object i's edge from its parent, appended to out. */
static void edge_label(const rd_heapwalk *w, const rd_hobj *o, char *out, size_t cap)
{
    static const char *const roots[] = {"_G", "registry", "main thread"};
    char s[64];
    double d;
    switch (o->edge) {
    case HE_ROOT: snprintf(out, cap, "%s", roots[o->key < 3 ? o->key : 0]); break;
    case HE_FIELD:
        rd_heapwalk_string(w, (uintptr_t)o->key, s, sizeof s);
        if (is_name(s))
            snprintf(out, cap, ".%s", s);
        else {
            for (char *p = s; *p; p++)
                *p = isprint((unsigned char)*p) && *p != '"' && *p != '\\' ? *p : '?';
            snprintf(out, cap, "[\"%s\"]", s);
        }
        break;
    case HE_NUMKEY:
        memcpy(&d, &o->key, sizeof d);
        snprintf(out, cap, "[%.14g]", d);
        break;
    case HE_INDEX: snprintf(out, cap, "[%llu]", (unsigned long long)o->key); break;
    case HE_OTHERKEY: snprintf(out, cap, "[?]"); break;
    case HE_KEY: snprintf(out, cap, "(a key)"); break;
    case HE_META: snprintf(out, cap, "(metatable)"); break;
    case HE_ENV: snprintf(out, cap, "(env)"); break;
    case HE_UPVAL:
        if (o->type == HT_UPVAL || !o->key) { /* an upvalue's value: its name is above */
            rd_heapwalk_string(w, (uintptr_t)o->key, s, sizeof s);
            snprintf(out, cap, o->type == HT_UPVAL ? "(upvalue %s)" : "", s[0] ? s : "?");
        } else {
            snprintf(out, cap, "(upvalue)");
        }
        break;
    case HE_PROTO: snprintf(out, cap, "(prototype)"); break;
    case HE_CONST: snprintf(out, cap, "(constant)"); break;
    case HE_STACK:
        rd_heapslot_name(w->pid, w->o[o->parent].addr, (size_t)o->key, out, cap);
        break;
    case HE_GLOBALS: snprintf(out, cap, "(globals)"); break;
    default: snprintf(out, cap, "?");
    }
}

/* Object i's path from its root: the root's name, then each edge. */
static void path_of(const rd_heapwalk *w, uint32_t i, char *out, size_t cap)
{
    uint32_t chain[PATH_MAX_EDGES];
    int n = 0, cut = 0;
    for (uint32_t k = i; k != UINT32_MAX; k = w->o[k].parent) {
        if (n == PATH_MAX_EDGES) { /* the root's end is cut: the leaf's matters more */
            cut = 1;
            break;
        }
        chain[n++] = k;
    }
    size_t len = (size_t)snprintf(out, cap, "%s", cut ? "..." : "");
    for (int k = n; k-- > 0 && len < cap;) {
        edge_label(w, &w->o[chain[k]], out + len, cap - len);
        len += strlen(out + len);
    }
}

/* }====== */

/* {====== one snapshot */

static int by_sub(const void *a, const void *b, void *ud)
{
    const rd_hobj *o = ud;
    uint64_t x = o[*(const uint32_t *)a].sub, y = o[*(const uint32_t *)b].sub;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Table i's entries (its values under keys and indices): how many, and
 * the type most are. */
static void entries_of(const rd_heapwalk *w, uint32_t i, const uint32_t *first, held *h)
{
    uint32_t count[HT_NTYPES] = {0};
    h->entries = 0;
    for (uint32_t k = first[i]; k < w->n && w->o[k].parent == i; k++)
        if (w->o[k].edge >= HE_FIELD && w->o[k].edge <= HE_OTHERKEY) {
            h->entries++;
            count[w->o[k].type]++;
        }
    h->entry_type = -1;
    for (int t = 0; t < HT_NTYPES; t++)
        if (count[t] && (h->entry_type < 0 || count[t] > count[h->entry_type]))
            h->entry_type = t;
}

/* The tables kept: the KEPT whose subtrees hold the most, each with its
 * path (read now: the diff compares paths of two moments). */
static int keep_tables(snap *s)
{
    rd_heapwalk *w = &s->w;
    uint32_t *idx = malloc((w->n + 1) * sizeof *idx), *first = malloc((w->n + 1) * sizeof *first);
    size_t m = 0;
    if (!idx || !first)
        return free(idx), free(first), -ENOMEM;
    for (size_t i = 0; i < w->n; i++)
        first[i] = UINT32_MAX;
    for (size_t i = w->n; i-- > 0;) /* breadth first: an object's children lie together */
        if (w->o[i].parent != UINT32_MAX)
            first[w->o[i].parent] = (uint32_t)i;
    for (size_t i = 0; i < w->n; i++)
        if (w->o[i].type == LUA_TTABLE)
            idx[m++] = (uint32_t)i;
    qsort_r(idx, m, sizeof *idx, by_sub, w->o);
    s->nh = m < KEPT ? m : KEPT;
    s->h = calloc(s->nh ? s->nh : 1, sizeof *s->h);
    if (!s->h)
        return free(idx), free(first), -ENOMEM;
    for (size_t k = 0; k < s->nh; k++) {
        held *h = &s->h[k];
        const rd_hobj *o = &w->o[idx[k]];
        path_of(w, idx[k], h->path, sizeof h->path);
        h->sub = o->sub;
        h->size = o->size;
        h->nsub = o->nsub;
        entries_of(w, idx[k], first, h);
    }
    free(idx);
    free(first);
    return 0;
}

static int snapshot(const rd_heap_opts *o, const void *main, snap *s, char *err, size_t cap)
{
    rd_peek_stop stop;
    memset(s, 0, sizeof *s);
    s->w.pid = o->pid;
    s->w.main = main;
    s->w.max_objects = o->max_objects;
    uint64_t t0 = rd_gcwalk_now_us();
    s->w.deadline_us = t0 + (uint64_t)o->timeout_s * 1000000u;
    int e = o->stop ? rd_peek_stop_all(o->pid, &stop) : 0;
    if (e)
        return rd_peek_refusal_msg(o->pid, e, err, cap), e;
    e = rd_heapwalk_run(&s->w);
    if (o->stop)
        rd_peek_let_go(&stop);
    s->secs = (double)(rd_gcwalk_now_us() - t0) / 1e6;
    if (e == -ENOMEM)
        return snprintf(err, cap, "out of memory for %lu objects (--max-objects)",
                        o->max_objects), e;
    if (e)
        return snprintf(err, cap, "process %d: its Lua state cannot be read (exited, or not "
                                  "Lua 5.1's layout)", (int)o->pid), e;
    for (size_t i = 0; i < s->w.n; i++) {
        s->type_bytes[s->w.o[i].type] += s->w.o[i].size;
        s->type_objs[s->w.o[i].type]++;
        s->bytes += s->w.o[i].size;
    }
    if ((e = keep_tables(s)))
        snprintf(err, cap, "out of memory");
    return e;
}

static void snap_free(snap *s)
{
    rd_heapwalk_free(&s->w);
    free(s->h);
}

/* }====== */

/* {====== the report */

static void header(const rd_heap_opts *o, const snap *s, FILE *out)
{
    char cmd[512], a[32], b[32], c[32];
    rd_peek_cmdline(o->pid, cmd, sizeof cmd);
    human(s->w.totalbytes, a, sizeof a);
    human(s->bytes, b, sizeof b);
    human(s->w.internal, c, sizeof c);
    fprintf(out, "recorderd heap %d: %s\n", (int)o->pid, cmd);
    fprintf(out, "Lua heap: %s (the state's own count)\n  reached from its roots: %s in %zu "
                 "objects; the state's own: %s (its string table, its buffer)\n  read in "
                 "%.2f s %s\n", a, b, s->w.n, c, s->secs,
            o->stop ? "with the process stopped" : "as the process ran");
    uint64_t seen = s->bytes + s->w.internal;
    if (s->w.totalbytes > seen && s->w.totalbytes - seen > s->w.totalbytes / 20) {
        human(s->w.totalbytes - seen, a, sizeof a);
        fprintf(out, "  the other %s: garbage the collector has not freed yet (or what "
                     "changed under the read)\n", a);
    }
    if (s->w.bad)
        fprintf(out, "%zu values changed under the read or could not be read: left out%s\n",
                s->w.bad, o->stop ? "" : " (--stop holds the process still)");
    if (s->w.cut == 1)
        fprintf(out, "CUT: stopped at %zu objects (--max-objects); the rest is not counted\n",
                s->w.n);
    else if (s->w.cut == 2)
        fprintf(out, "CUT: out of time after %zu objects (--timeout); the rest is not "
                     "counted\n", s->w.n);
}

static void by_type(const snap *s, FILE *out)
{
    static const int order[] = {LUA_TTABLE, LUA_TSTRING, LUA_TFUNCTION, HT_CFUNC, HT_UPVAL,
                                HT_PROTO, LUA_TUSERDATA, LUA_TTHREAD};
    char b[32];
    fprintf(out, "\nBy type\n  %10s %11s  type\n", "objects", "bytes");
    for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
        human(s->type_bytes[order[k]], b, sizeof b);
        fprintf(out, "  %10llu %11s  %s\n", (unsigned long long)s->type_objs[order[k]], b,
                type_name(order[k]));
    }
}

/* Whether kept table k is explained by a deeper one: a table under it
 * holding most of what it holds. */
static int explained(const held *h, size_t nh, size_t k)
{
    size_t len = strlen(h[k].path);
    for (size_t j = 0; j < nh; j++)
        if (j != k && !strncmp(h[j].path, h[k].path, len) && h[j].path[len] &&
            strchr(".[(", h[j].path[len]) && h[j].sub * 10 >= h[k].sub * 8)
            return 1;
    return 0;
}

static void holders(const rd_heap_opts *o, const snap *s, FILE *out)
{
    char b[32];
    unsigned shown = 0;
    fprintf(out, "\nWhat keeps the most alive (bytes first reached through each table, by "
                 "its shortest path)\n  %11s %6s %10s  path (entries)\n", "bytes", "share",
            "objects");
    for (size_t k = 0; k < s->nh && shown < o->top; k++) {
        const held *h = &s->h[k];
        if (!strpbrk(h->path, ".[(") || /* a root: it holds everything */
            explained(s->h, s->nh, k) || h->sub * 1000 < s->bytes)
            continue;
        human(h->sub, b, sizeof b);
        fprintf(out, "  %11s %5.1f%% %10u  %s", b, 100.0 * (double)h->sub / (double)s->bytes,
                h->nsub, h->path);
        if (h->entries)
            fprintf(out, " (%u entries, mostly %s)", h->entries, type_name(h->entry_type));
        fputc('\n', out);
        shown++;
    }
}

static void biggest(const rd_heap_opts *o, const snap *s, FILE *out)
{
    uint32_t top[64];
    unsigned n = 0, want = o->top < 64 ? o->top : 64;
    const rd_hobj *ob = s->w.o;
    for (size_t i = 0; i < s->w.n; i++) { /* the largest, by insertion */
        if (ob[i].type != LUA_TTABLE || (n == want && ob[i].size <= ob[top[n - 1]].size))
            continue;
        unsigned k = n < want ? n++ : n - 1;
        for (; k > 0 && ob[top[k - 1]].size < ob[i].size; k--)
            top[k] = top[k - 1];
        top[k] = (uint32_t)i;
    }
    fprintf(out, "\nBiggest tables (their own bytes: the array and hash parts)\n"
                 "  %11s %9s %9s  path\n", "bytes", "array", "hash");
    for (unsigned k = 0; k < n; k++) {
        char b[32], path[PATH_CAP];
        uint64_t hash = ob[top[k]].extra ? 1ull << (ob[top[k]].extra - 1) : 0;
        uint64_t arr = (ob[top[k]].size - 64 - hash * 40) / 16;
        human(ob[top[k]].size, b, sizeof b);
        path_of(&s->w, top[k], path, sizeof path);
        fprintf(out, "  %11s %9llu %9llu  %s\n", b, (unsigned long long)arr,
                (unsigned long long)hash, path);
    }
}

/* }====== */

/* {====== --diff */

typedef struct grew {
    held h;       /* the later snapshot's (path, sub: now) */
    int64_t by;   /* bytes more than in the first */
    int64_t objs; /* objects more */
} grew;

static int by_growth(const void *a, const void *b)
{
    int64_t x = ((const grew *)a)->by, y = ((const grew *)b)->by;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void diff(const rd_heap_opts *o, const snap *s1, const snap *s2, FILE *out)
{
    char a[32], b[32];
    grew *g = calloc(s2->nh ? s2->nh : 1, sizeof *g);
    if (!g)
        return (void)fprintf(stderr, "recorderd: out of memory\n");
    for (size_t k = 0; k < s2->nh; k++) {
        g[k].h = s2->h[k];
        g[k].by = (int64_t)s2->h[k].sub;
        g[k].objs = s2->h[k].nsub;
        for (size_t j = 0; j < s1->nh; j++)
            if (!strcmp(s1->h[j].path, s2->h[k].path)) {
                g[k].by -= (int64_t)s1->h[j].sub;
                g[k].objs -= s1->h[j].nsub;
                break;
            }
    }
    qsort(g, s2->nh, sizeof *g, by_growth);
    int64_t all = (int64_t)s2->bytes - (int64_t)s1->bytes;
    human(all < 0 ? (uint64_t)-all : (uint64_t)all, a, sizeof a);
    fprintf(out, "\nWhat grew in %u s (reached: %s%s; by table, bytes first reached through "
                 "it)\n  %11s %11s %10s  path\n", o->diff_s, all < 0 ? "-" : "+", a, "grew",
            "now", "objects");
    unsigned shown = 0;
    for (size_t k = 0; k < s2->nh && shown < o->top && g[k].by > 0; k++) {
        if (g[k].by * 1000 < (int64_t)s2->bytes)
            continue;
        int deeper = 0; /* a table whose growth is a deeper one's: that one is shown */
        size_t len = strlen(g[k].h.path);
        for (size_t j = 0; j < s2->nh && !deeper; j++)
            deeper = j != k && !strncmp(g[j].h.path, g[k].h.path, len) &&
                     g[j].h.path[len] && strchr(".[(", g[j].h.path[len]) &&
                     g[j].by * 10 >= g[k].by * 8;
        if (deeper)
            continue;
        char by[40];
        human((uint64_t)g[k].by, a, sizeof a);
        human(g[k].h.sub, b, sizeof b);
        snprintf(by, sizeof by, "+%s", a);
        fprintf(out, "  %11s %11s %+10lld  %s\n", by, b, (long long)g[k].objs, g[k].h.path);
        shown++;
    }
    if (!shown)
        fprintf(out, "  (no table grew by more than a thousandth of the heap)\n");
    free(g);
}

/* }====== */

/* The main thread of pid's Lua state, found as top and record find it. */
static const void *find_main(pid_t pid, char *err, size_t cap)
{
    lr_sr *d = calloc(1, sizeof *d);
    rd_peek_stop *stop = calloc(1, sizeof *stop);
    const void *found[RD_PEEK_MAX_STATES], *main = NULL;
    if (!d || !stop) {
        snprintf(err, cap, "out of memory");
    } else if (!rd_peek_luajit(pid, err, cap)) {
        rd_peek_init(d, pid);
        int n = rd_peek_find_running(d, found, stop);
        if (n < 0)
            rd_peek_refusal_msg(pid, n, err, cap);
        else if (!n)
            snprintf(err, cap, "process %d has no Lua 5.1 state that recorderd can find",
                     (int)pid);
        else
            main = found[0];
    }
    free(d);
    free(stop);
    return main;
}

int rd_heap(const rd_heap_opts *o, FILE *out)
{
    char err[1024] = "";
    snap s1, s2;
    const void *main = find_main(o->pid, err, sizeof err);
    if (!main)
        return fprintf(stderr, "recorderd: %s\n", err), 1;
    if (snapshot(o, main, &s1, err, sizeof err))
        return snap_free(&s1), fprintf(stderr, "recorderd: %s\n", err), 1;
    header(o, &s1, out);
    by_type(&s1, out);
    holders(o, &s1, out);
    biggest(o, &s1, out);
    if (o->diff_s) {
        fflush(out);
        sleep(o->diff_s);
        if (snapshot(o, main, &s2, err, sizeof err)) {
            snap_free(&s1);
            snap_free(&s2);
            return fprintf(stderr, "recorderd: the second snapshot: %s\n", err), 1;
        }
        diff(o, &s1, &s2, out);
        snap_free(&s2);
    }
    snap_free(&s1);
    return 0;
}
