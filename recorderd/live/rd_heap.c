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
    int up;         /* the nearest kept table above it (its index in the kept), or -1 */
    int link;       /* the first link of a chain (its .next holds a .next): shown by
                       what holds it */
    int root;       /* a root (_G, the registry): holds everything */
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

/* Whether the n bytes at s are a Lua name (not a keyword): .NAME */
static int is_name(const char *s, size_t n)
{
    static const char *const kw[] = {"and", "break", "do", "else", "elseif", "end", "false",
                                     "for", "function", "if", "in", "local", "nil", "not",
                                     "or", "repeat", "return", "then", "true", "until",
                                     "while"};
    if (!n || isdigit((unsigned char)*s))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return 0;
    for (size_t k = 0; k < sizeof kw / sizeof *kw; k++)
        if (strlen(kw[k]) == n && !memcmp(kw[k], s, n))
            return 0;
    return 1;
}

/* A string key as Lua would write it: .name, else ["..."] with escapes,
 * "..." after the quote when it goes on past KEY_MAX bytes. */
static void key_label(const rd_heapwalk *w, uintptr_t ts, char *out, size_t cap)
{
    enum { KEY_MAX = 40 };
    char s[KEY_MAX + 1], q[KEY_MAX * 4 + 1];
    size_t len = rd_heapwalk_string(w, ts, s, sizeof s), n = len < KEY_MAX ? len : KEY_MAX, k = 0;
    if (len <= KEY_MAX && is_name(s, n)) {
        snprintf(out, cap, ".%s", s);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            k += (size_t)snprintf(q + k, sizeof q - k, "\\%c", ch);
        else if (ch == '\n')
            k += (size_t)snprintf(q + k, sizeof q - k, "\\n");
        else if (isprint(ch))
            q[k++] = (char)ch;
        else
            k += (size_t)snprintf(q + k, sizeof q - k, "\\%u", ch);
    }
    q[k] = 0;
    snprintf(out, cap, "[\"%s\"%s]", q, len > KEY_MAX ? "..." : "");
}

/* The label of object i's edge from its parent, appended to out. */
static void edge_label(const rd_heapwalk *w, const rd_hobj *o, char *out, size_t cap)
{
    static const char *const roots[] = {"_G", "registry", "main thread"};
    char s[64];
    double d;
    switch (o->edge) {
    case HE_ROOT: snprintf(out, cap, "%s", roots[o->key < 3 ? o->key : 0]); break;
    case HE_FIELD: key_label(w, (uintptr_t)o->key, out, cap); break;
    case HE_NUMKEY:
        memcpy(&d, &o->key, sizeof d);
        snprintf(out, cap, "[%.14g]", d);
        break;
    case HE_INDEX: snprintf(out, cap, "[%llu]", (unsigned long long)o->key); break;
    case HE_OTHERKEY: /* what it is: a boolean's value, else its type */
        snprintf(out, cap, "[%s]", (o->key & 255) == LUA_TBOOLEAN ? (o->key & 256 ? "true"
                                                                                  : "false")
                                   : (o->key & 255) == LUA_TLIGHTUSERDATA ? "lightuserdata"
                                   : (o->key & 255) == LUA_TFUNCTION      ? "a function"
                                   : (o->key & 255) == LUA_TTABLE         ? "a table"
                                   : (o->key & 255) == LUA_TUSERDATA      ? "a userdata"
                                   : (o->key & 255) == LUA_TTHREAD        ? "a thread"
                                                                          : "?");
        break;
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

/* Whether object i is reached through the same key as its parent was (a
 * linked list's .next.next: a link of a chain). */
static int is_link(const rd_heapwalk *w, uint32_t i)
{
    const rd_hobj *o = &w->o[i], *p = o->parent == UINT32_MAX ? NULL : &w->o[o->parent];
    return p && o->edge == p->edge && o->key == p->key &&
           (o->edge == HE_FIELD || o->edge == HE_NUMKEY || o->edge == HE_INDEX);
}

/* Whether object i starts a chain: a child of it is a link (its .next
 * holds the next .next). The chain is shown by what holds i. */
static int starts_chain(const rd_heapwalk *w, uint32_t i, const uint32_t *first)
{
    for (uint32_t k = first[i]; k < w->n && w->o[k].parent == i; k++)
        if (is_link(w, k))
            return 1;
    return 0;
}

/* Each kept table's nearest kept ancestor (rank: object -> kept index + 1). */
static void link_up(const rd_heapwalk *w, held *h, size_t nh, const uint32_t *idx,
                    const uint16_t *rank)
{
    for (size_t k = 0; k < nh; k++) {
        h[k].up = -1;
        for (uint32_t a = w->o[idx[k]].parent; a != UINT32_MAX; a = w->o[a].parent)
            if (rank[a]) {
                h[k].up = rank[a] - 1;
                break;
            }
    }
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
    for (size_t i = 0; i < w->n; i++) /* a chain's links never show: they are not kept */
        if (w->o[i].type == LUA_TTABLE && !is_link(w, (uint32_t)i))
            idx[m++] = (uint32_t)i;
    qsort_r(idx, m, sizeof *idx, by_sub, w->o);
    s->nh = m < KEPT ? m : KEPT;
    s->h = calloc(s->nh ? s->nh : 1, sizeof *s->h);
    if (!s->h)
        return free(idx), free(first), -ENOMEM;
    uint16_t *rank = calloc(w->n + 1, sizeof *rank);
    if (!rank)
        return free(idx), free(first), -ENOMEM;
    for (size_t k = 0; k < s->nh; k++) {
        held *h = &s->h[k];
        const rd_hobj *o = &w->o[idx[k]];
        path_of(w, idx[k], h->path, sizeof h->path);
        h->sub = o->sub;
        h->size = o->size;
        h->nsub = o->nsub;
        h->link = starts_chain(w, idx[k], first);
        h->root = o->edge == HE_ROOT;
        entries_of(w, idx[k], first, h);
        rank[idx[k]] = (uint16_t)(k + 1);
    }
    link_up(w, s->h, s->nh, idx, rank);
    free(rank);
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
    /* gone by the end of the read: its heap may have been read as
     * lua_close freed it (a third of it counted, no error), or the read
     * failed for that (said "cannot be read") */
    for (int k = 0; e && e != -ENOMEM && e != -ESRCH && k < 30 && !rd_peek_gone(o->pid); k++)
        usleep(10000); /* a read that failed: the process may be on its way out */
    if (e == -ESRCH || (e != -ENOMEM && rd_peek_gone(o->pid)))
        return snprintf(err, cap, "process %d exited during the read", (int)o->pid), -ESRCH;
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
    if (!s->w.cut && s->w.totalbytes > seen && s->w.totalbytes - seen > s->w.totalbytes / 20) {
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

/* Which kept tables to show for an amount each holds (its bytes, or its
 * growth): not a root nor a link of a chain (its head is shown), at least
 * a thousandth of total, and not explained by a deeper table shown, one
 * holding 80% of it or more. The kept are in descending subtrees, so a
 * table's descendants come after it: decided from the last up. */
static void pick(const held *h, size_t nh, const int64_t *amount, int64_t total, char *shown)
{
    char *covered = calloc(nh ? nh : 1, 1);
    for (size_t k = nh; k-- > 0;) {
        shown[k] = !h[k].root && !h[k].link && amount[k] > 0 && amount[k] * 1000 >= total &&
                   !(covered && covered[k]);
        for (int a = h[k].up; shown[k] && covered && a >= 0; a = h[a].up)
            if (amount[k] * 10 >= amount[a] * 8)
                covered[a] = 1;
    }
    free(covered);
}

static void holders(const rd_heap_opts *o, const snap *s, FILE *out)
{
    char b[32], *show = calloc(s->nh ? s->nh : 1, 1);
    int64_t *amount = calloc(s->nh ? s->nh : 1, sizeof *amount);
    unsigned shown = 0;
    if (!show || !amount)
        return free(show), free(amount), (void)fprintf(stderr, "recorderd: out of memory\n");
    for (size_t k = 0; k < s->nh; k++)
        amount[k] = (int64_t)s->h[k].sub;
    pick(s->h, s->nh, amount, (int64_t)s->bytes, show);
    fprintf(out, "\nWhat keeps the most alive (bytes first reached through each table, by "
                 "its shortest path)\n  %11s %6s %10s  path (entries)\n", "bytes", "share",
            "objects");
    for (size_t k = 0; k < s->nh && shown < o->top; k++) {
        const held *h = &s->h[k];
        if (!show[k])
            continue;
        human(h->sub, b, sizeof b);
        fprintf(out, "  %11s %5.1f%% %10u  %s", b, 100.0 * (double)h->sub / (double)s->bytes,
                h->nsub, h->path);
        if (h->entries)
            fprintf(out, " (%u entr%s, mostly %s)", h->entries, h->entries == 1 ? "y" : "ies",
                    type_name(h->entry_type));
        fputc('\n', out);
        shown++;
    }
    free(show);
    free(amount);
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

static void diff(const rd_heap_opts *o, const snap *s1, const snap *s2, FILE *out)
{
    char a[32], b[32];
    size_t n = s2->nh ? s2->nh : 1;
    int64_t *by = calloc(n, sizeof *by), *objs = calloc(n, sizeof *objs);
    char *show = calloc(n, 1);
    if (!by || !objs || !show) {
        free(by), free(objs), free(show);
        return (void)fprintf(stderr, "recorderd: out of memory\n");
    }
    for (size_t k = 0; k < s2->nh; k++) { /* against the same path then, if it was kept */
        by[k] = (int64_t)s2->h[k].sub;
        objs[k] = s2->h[k].nsub;
        for (size_t j = 0; j < s1->nh; j++)
            if (!strcmp(s1->h[j].path, s2->h[k].path)) {
                by[k] -= (int64_t)s1->h[j].sub;
                objs[k] -= s1->h[j].nsub;
                break;
            }
    }
    pick(s2->h, s2->nh, by, (int64_t)s2->bytes, show);
    int64_t all = (int64_t)s2->bytes - (int64_t)s1->bytes;
    human(all < 0 ? (uint64_t)-all : (uint64_t)all, a, sizeof a);
    fprintf(out, "\nWhat grew in %u s (reached: %s%s; by table, bytes first reached through "
                 "it)\n  %11s %11s %10s  path\n", o->diff_s, all < 0 ? "-" : "+", a, "grew",
            "now", "objects");
    unsigned shown = 0;
    for (unsigned round = 0; round < o->top; round++) { /* the largest growth first */
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < s2->nh; k++)
            if (show[k] && (best == SIZE_MAX || by[k] > by[best]))
                best = k;
        if (best == SIZE_MAX)
            break;
        char grew[40];
        show[best] = 0;
        human((uint64_t)by[best], a, sizeof a);
        human(s2->h[best].sub, b, sizeof b);
        snprintf(grew, sizeof grew, "+%s", a);
        fprintf(out, "  %11s %11s %+10lld  %s\n", grew, b, (long long)objs[best],
                s2->h[best].path);
        shown++;
    }
    if (!shown)
        fprintf(out, "  (no table grew by more than a thousandth of the heap)\n");
    free(by), free(objs), free(show);
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
    } else if (!rd_peek_other_lua(pid, err, cap)) {
        rd_peek_init(d, pid);
        int n = rd_peek_find_running(d, found, stop);
        if (n < 0)
            rd_peek_refusal_msg(pid, n, err, cap);
        else if (!n && rd_peek_gone(pid)) /* exited as its state was looked for */
            snprintf(err, cap, "process %d exited", (int)pid);
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
