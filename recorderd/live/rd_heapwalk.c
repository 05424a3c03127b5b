/* rd_heapwalk: a Lua 5.1 state's reachable objects, read from outside,
 * breadth first from its roots (the main thread's globals, the registry,
 * the main thread itself): each object is kept once, with its own size as
 * Lua allocated it and the edge it was first reached by, so that the tree
 * of first edges gives every object its shortest path from a root and
 * every subtree the bytes reached only through its root first.
 *
 * Read as the process runs (or stopped, rd_heap.c's --stop), an object
 * may change under the walk: every read is checked (an object's tag is
 * the type its reference said, sizes are bounded, addresses aligned), and
 * what fails is counted in w->bad and left out, never followed. The walk
 * is bounded by max_objects (memory: an rd_hobj and two set slots each)
 * and by the deadline. Weak tables are walked as Lua 5.1's collector
 * keeps what they hold: a weak value that is not a string is not
 * followed, nor a weak key that is not a string, whose entry's value is
 * (5.1 marks it). A key the walk did not reach is dead: the walk is made
 * again without its entries, until no more die (as collections do, one
 * each: a value that holds its own key keeps the entry for good, 5.1's
 * leak). Before, weak tables were walked as strong ones, and a weak
 * cache showed as keeping what only it referenced.
 *
 * Small reads go through a cache of blocks copied whole (objects made
 * together lie together); a table's parts are read in chunks. */
#include "rd_heapwalk.h"

#include <errno.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "lr_layout.h"
#include "rd_gcwalk.h"

enum {
    BLOCK = 1 << 14,
    NBLOCKS = 256,
    CHUNK = 4096,        /* TValues or Nodes read at once */
    TABLE_SIZE = 64,     /* sizeof(Table) */
    CLOSURE_SIZE = 40,   /* sizeof(Closure) without its upvalues */
    UPVAL_SIZE = 40,
    PROTO_SIZE = 120,
    UDATA_SIZE = 40,
    PR_P = 32,
    PR_SIZEP = 88,
    UD_METATABLE = 16,
    UD_ENV = 24,
    UD_LEN = 32,
    SANE_COUNT = 1 << 28, /* elements of an array or a hash part, at most */
    G_STRT_SIZE = 12,     /* global_State.strt.size: the string table's slots */
    G_BUFFSIZE = 104      /* global_State.buff.buffsize */
};

typedef struct cache {
    uintptr_t at[NBLOCKS];
    size_t len[NBLOCKS];
    uint8_t blk[NBLOCKS][BLOCK];
    uint8_t chunk[CHUNK * ND_SIZE];
} cache;

/* {====== reading the process */

int rd_heapwalk_copy(pid_t pid, void *dst, uintptr_t at, size_t n)
{
    struct iovec l = {dst, n}, r = {(void *)at, n};
    if (!at)
        return errno = EFAULT, -1;
    return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* A read of the walk: one that finds the process gone ends the walk. */
static int copy(rd_heapwalk *w, void *dst, uintptr_t at, size_t n)
{
    if (!rd_heapwalk_copy(w->pid, dst, at, n))
        return 0;
    if (errno == ESRCH)
        w->gone = 1;
    return -1;
}

/* n bytes at at, through the blocks when they fit in one. 0 or -1. */
static int rd(rd_heapwalk *w, uintptr_t at, void *dst, size_t n)
{
    cache *c = w->cache;
    uintptr_t b0 = at & ~(uintptr_t)(BLOCK - 1);
    if (!at || at + n < at)
        return -1;
    if (at - b0 + n > BLOCK)
        return copy(w, dst, at, n);
    unsigned k = (unsigned)(b0 / BLOCK) % NBLOCKS;
    if (c->at[k] != b0) {
        struct iovec l = {c->blk[k], BLOCK}, r = {(void *)b0, BLOCK};
        ssize_t got = process_vm_readv(w->pid, &l, 1, &r, 1, 0); /* short at a mapping's end */
        if (got < 0 && errno == ESRCH)
            w->gone = 1;
        c->at[k] = b0;
        c->len[k] = got > 0 ? (size_t)got : 0;
    }
    if (at - b0 + n > c->len[k])
        return copy(w, dst, at, n);
    memcpy(dst, c->blk[k] + (at - b0), n);
    return 0;
}

static uintptr_t ptr_at(const uint8_t *b, int off)
{
    return (uintptr_t)lr_ptr_at(b, off);
}

/* }====== */

/* {====== the set of objects seen, and adding one */

static uint32_t *slot(rd_heapwalk *w, uintptr_t addr);

/* Room for one more object: o and the set grown, doubling (the set kept
 * at most half full), up to max_objects. 0, or -1 (out of memory: the walk
 * is cut there, as at max_objects). */
static int room(rd_heapwalk *w)
{
    size_t cap = w->cap * 2 < w->max_objects ? w->cap * 2 : w->max_objects;
    rd_hobj *o = cap > w->cap ? realloc(w->o, cap * sizeof *o) : NULL;
    uint32_t *set = o ? calloc(2 * w->set_cap, sizeof *set) : NULL;
    if (o)
        w->o = o;
    if (!set)
        return -1;
    free(w->set);
    w->set = set;
    w->set_cap *= 2;
    w->cap = cap;
    for (size_t i = 0; i < w->n; i++) /* the set again, in its new size */
        *slot(w, w->o[i].addr) = (uint32_t)i + 1;
    return 0;
}

static uint32_t *slot(rd_heapwalk *w, uintptr_t addr)
{
    size_t mask = w->set_cap - 1, h = (size_t)((addr >> 3) * 0x9E3779B97F4A7C15ull) & mask;
    while (w->set[h] && w->o[w->set[h] - 1].addr != addr)
        h = (h + 1) & mask;
    return &w->set[h];
}

/* Adds the object at addr of type t, held by parent through edge and key,
 * unless it was seen. */
static void add(rd_heapwalk *w, uint32_t parent, int edge, uint64_t key, uintptr_t addr, int t)
{
    if (!addr || (addr & 7)) {
        w->bad++;
        return;
    }
    uint32_t *s = slot(w, addr);
    if (*s)
        return;
    if (w->n >= w->max_objects || (w->n == w->cap && room(w))) {
        w->cut = w->cut ? w->cut : 1;
        return;
    }
    s = slot(w, addr); /* where it goes in the set, grown or not */
    w->o[w->n] = (rd_hobj){addr, key, 0, 0, parent, 0, (uint8_t)t, (uint8_t)edge, 0};
    *s = (uint32_t)++w->n;
}

/* The value of a TValue at b, if it is an object. */
static void add_value(rd_heapwalk *w, uint32_t parent, int edge, uint64_t key, const uint8_t *b)
{
    int tt = lr_int_at(b, TV_TT);
    if (tt >= LUA_TSTRING && tt <= LUA_TTHREAD)
        add(w, parent, edge, key, ptr_at(b, 0), tt);
    else if (tt < LUA_TNIL || tt > LUA_TTHREAD)
        w->bad++;
}

/* An object larger than the whole state says it has allocated: its header
 * was read mid-change, or is forged. Not followed. */
static int too_big(rd_heapwalk *w, uint64_t size)
{
    return w->totalbytes && size > w->totalbytes;
}

/* }====== */

/* {====== each type's size and references */

/* Whether the walk is out of time (checked per chunk too: a part may be
 * long, or say it is). */
static int late(rd_heapwalk *w)
{
    if (w->cut != 2 && rd_gcwalk_now_us() >= w->deadline_us)
        w->cut = 2;
    return w->cut == 2;
}

/* An element of an array object i holds: the k-th (from 0), at e. */
typedef void (*each_fn)(rd_heapwalk *w, uint32_t i, size_t k, const uint8_t *e);

/* fn for each of the n elements of stride bytes at at, read a chunk at a
 * time (the walk's time checked at each). An unreadable chunk is counted
 * and ends it. */
static void each(rd_heapwalk *w, uint32_t i, uintptr_t at, size_t n, size_t stride, each_fn fn)
{
    cache *c = w->cache;
    size_t per = sizeof c->chunk / stride;
    for (size_t k = 0; k < n && !late(w); k += per) {
        size_t m = n - k < per ? n - k : per;
        if (rd(w, at + k * stride, c->chunk, m * stride)) {
            w->bad++;
            return;
        }
        for (size_t j = 0; j < m; j++)
            fn(w, i, k + j, c->chunk + j * stride);
    }
}

/* {====== weak tables */

enum { WEAK_K = 1, WEAK_V = 2, MODE_NODES = 1024, MAX_WALKS = 32 };

/* A collectable value that is not a string: what weakness lets go. */
static int weak_kind(int tt)
{
    return tt > LUA_TSTRING && tt <= LUA_TTHREAD;
}

/* The string at ts is s (n bytes). */
static int string_is(rd_heapwalk *w, uintptr_t ts, const char *s, size_t n)
{
    uint8_t h[TS_SIZE];
    char buf[8];
    uint64_t len;
    if (n > sizeof buf || rd(w, ts, h, sizeof h) || h[LS_TT] != LUA_TSTRING)
        return 0;
    memcpy(&len, h + TS_LEN, sizeof len);
    return len == n && !rd(w, ts + TS_SIZE, buf, n) && !memcmp(buf, s, n);
}

/* WEAK_K and WEAK_V of the metatable at mt's __mode (as Lua's collector
 * reads it: a string holding 'k', 'v'); 0 if none, or unreadable. */
static int weak_mode(rd_heapwalk *w, uintptr_t mt)
{
    uint8_t b[TABLE_SIZE], nd[ND_SIZE], h[TS_SIZE];
    if (!mt || rd(w, mt, b, sizeof b) || b[LS_TT] != LUA_TTABLE || b[TB_LSIZENODE] > 28)
        return 0;
    size_t nh = (size_t)1 << b[TB_LSIZENODE];
    for (size_t k = 0; k < nh && k < MODE_NODES; k++) {
        if (rd(w, ptr_at(b, TB_NODE) + k * ND_SIZE, nd, sizeof nd))
            return 0;
        if (lr_int_at(nd, ND_KEYTT) != LUA_TSTRING || lr_int_at(nd, TV_TT) != LUA_TSTRING ||
            !string_is(w, ptr_at(nd, ND_KEY), "__mode", 6))
            continue;
        uint64_t len;
        char mode[8] = {0};
        uintptr_t v = ptr_at(nd, 0);
        if (rd(w, v, h, sizeof h))
            return 0;
        memcpy(&len, h + TS_LEN, sizeof len);
        if (rd(w, v + TS_SIZE, mode, len < sizeof mode - 1 ? (size_t)len : sizeof mode - 1))
            return 0;
        return (strchr(mode, 'k') ? WEAK_K : 0) | (strchr(mode, 'v') ? WEAK_V : 0);
    }
    return 0;
}

/* Keys of weak-key entries: sets of addresses, open addressing, at most
 * half full. Where key is in set (cap slots), or the empty slot for it. */
static uintptr_t *key_slot(uintptr_t *set, size_t cap, uintptr_t key)
{
    size_t h = (size_t)((key >> 3) * 0x9E3779B97F4A7C15ull);
    while (set[h & (cap - 1)] && set[h & (cap - 1)] != key)
        h++;
    return &set[h & (cap - 1)];
}

/* Adds key to the set. 0, or -1 (out of memory). */
static int key_put(uintptr_t **set, size_t *cap, size_t *n, uintptr_t key)
{
    if (2 * (*n + 1) > *cap) {
        size_t ncap = *cap ? *cap * 2 : 1024;
        uintptr_t *t = calloc(ncap, sizeof *t);
        if (!t)
            return -1;
        for (size_t k = 0; k < *cap; k++)
            if ((*set)[k])
                *key_slot(t, ncap, (*set)[k]) = (*set)[k];
        free(*set);
        *set = t;
        *cap = ncap;
    }
    uintptr_t *at = key_slot(*set, *cap, key);
    *n += !*at;
    *at = key;
    return 0;
}

static int key_has(uintptr_t *set, size_t cap, uintptr_t key)
{
    return cap && *key_slot(set, cap, key) == key;
}

/* After a walk: the weak keys it met that it did not reach are dead (a
 * collection clears their entries); returns how many more there are. A
 * key once dead stays so: a walk without its entries reaches less. */
static size_t kill_unreached(rd_heapwalk *w)
{
    size_t before = w->ndead;
    for (size_t k = 0; k < w->capwk; k++)
        if (w->wk[k] && !*slot(w, w->wk[k]) &&
            key_put(&w->dead, &w->capdead, &w->ndead, w->wk[k]))
            return 0; /* out of memory: this walk's figures stand */
    return w->ndead - before;
}

/* }====== */

static void array_elem(rd_heapwalk *w, uint32_t i, size_t k, const uint8_t *e)
{
    if ((w->weak & WEAK_V) && weak_kind(lr_int_at(e, TV_TT)))
        return;
    add_value(w, i, HE_INDEX, k + 1, e);
}

static void stack_elem(rd_heapwalk *w, uint32_t i, size_t k, const uint8_t *e)
{
    add_value(w, i, HE_STACK, k, e);
}

static void const_elem(rd_heapwalk *w, uint32_t i, size_t k, const uint8_t *e)
{
    (void)k;
    add_value(w, i, HE_CONST, 0, e);
}

static void node_elem(rd_heapwalk *w, uint32_t i, size_t k, const uint8_t *nd)
{
    (void)k;
    if (lr_int_at(nd, TV_TT) == LUA_TNIL) /* a free node */
        return;
    int ktt = lr_int_at(nd, ND_KEYTT);
    uint64_t key;
    memcpy(&key, nd + ND_KEY, sizeof key);
    int weak_key = (w->weak & WEAK_K) && weak_kind(ktt);
    if (weak_key && key_has(w->dead, w->capdead, (uintptr_t)key))
        return; /* its key is dead: a collection clears the entry */
    if (!((w->weak & WEAK_V) && weak_kind(lr_int_at(nd, TV_TT)))) {
        if (ktt == LUA_TSTRING)
            add_value(w, i, HE_FIELD, key, nd);
        else if (ktt == LUA_TNUMBER)
            add_value(w, i, HE_NUMKEY, key, nd);
        else /* what the key is, for the path: its type, a boolean's value */
            add_value(w, i, HE_OTHERKEY, (uint64_t)ktt | (ktt == LUA_TBOOLEAN && key ? 256 : 0),
                      nd);
    }
    if (weak_key) { /* not followed: reached otherwise, or dead (kill_unreached) */
        if (key_put(&w->wk, &w->capwk, &w->nwk, (uintptr_t)key))
            add(w, i, HE_KEY, 0, (uintptr_t)key, ktt); /* no memory: as a strong one */
    } else if (ktt >= LUA_TSTRING && ktt <= LUA_TTHREAD) {
        add(w, i, HE_KEY, 0, (uintptr_t)key, ktt);
    }
}

static int table(rd_heapwalk *w, uint32_t i, const uint8_t *b)
{
    unsigned lsize = b[TB_LSIZENODE];
    int na = lr_int_at(b, TB_SIZEARRAY);
    if (lsize > 28 || na < 0 || na > SANE_COUNT)
        return -1;
    size_t nh = (size_t)1 << lsize;
    uintptr_t nodes = ptr_at(b, TB_NODE);
    uint8_t first[ND_SIZE];
    /* an empty hash part is Lua's shared dummy node: no bytes of the table's */
    int dummy = !lsize && (rd(w, nodes, first, sizeof first) ||
                           (lr_int_at(first, TV_TT) == LUA_TNIL &&
                            lr_int_at(first, ND_KEYTT) == LUA_TNIL));
    w->o[i].size = TABLE_SIZE + (uint64_t)na * TV_SIZE + (dummy ? 0 : nh * ND_SIZE);
    if (too_big(w, w->o[i].size))
        return -1;
    w->o[i].extra = (uint16_t)(dummy ? 0 : lsize + 1);
    if (ptr_at(b, TB_METATABLE))
        add(w, i, HE_META, 0, ptr_at(b, TB_METATABLE), LUA_TTABLE);
    w->weak = weak_mode(w, ptr_at(b, TB_METATABLE));
    each(w, i, ptr_at(b, TB_ARRAY), (size_t)na, TV_SIZE, array_elem);
    if (!dummy)
        each(w, i, nodes, nh, ND_SIZE, node_elem);
    w->weak = 0;
    return 0;
}

/* A Lua closure's upvalues, named after its prototype's names. */
static void lua_upvalues(rd_heapwalk *w, uint32_t i, const uint8_t *b, unsigned nup)
{
    uintptr_t up[256], names[256] = {0};
    uint8_t p[PROTO_SIZE];
    uintptr_t proto = ptr_at(b, CL_FP);
    if (nup && rd(w, CL_UPVALS + (uintptr_t)w->o[i].addr, up, nup * sizeof up[0])) {
        w->bad++;
        return;
    }
    if (!rd(w, proto, p, sizeof p) && (unsigned)lr_int_at(p, PR_SIZEUPV) >= nup && nup)
        rd(w, ptr_at(p, PR_UPVALUES), names, nup * sizeof names[0]);
    add(w, i, HE_PROTO, 0, proto, HT_PROTO);
    for (unsigned k = 0; k < nup; k++)
        add(w, i, HE_UPVAL, names[k], up[k], HT_UPVAL);
}

static int closure(rd_heapwalk *w, uint32_t i, const uint8_t *b)
{
    unsigned nup = b[CL_NUPVALUES];
    if (ptr_at(b, CL_ENV))
        add(w, i, HE_ENV, 0, ptr_at(b, CL_ENV), LUA_TTABLE);
    if (!b[CL_ISC]) {
        w->o[i].size = CLOSURE_SIZE + 8u * nup;
        lua_upvalues(w, i, b, nup);
        return 0;
    }
    uint8_t tv[256 * TV_SIZE];
    w->o[i].type = HT_CFUNC;
    w->o[i].size = CLOSURE_SIZE + (uint64_t)TV_SIZE * nup;
    if (nup && rd(w, w->o[i].addr + CL_UPV0, tv, nup * TV_SIZE))
        return -1;
    for (unsigned k = 0; k < nup; k++)
        add_value(w, i, HE_UPVAL, 0, tv + k * TV_SIZE);
    return 0;
}

/* A prototype's arrays of pointers to objects of type t (n of them). */
static void pointers(rd_heapwalk *w, uint32_t i, uintptr_t at, int n, int edge, int t, int stride)
{
    cache *c = w->cache;
    if (n <= 0 || (size_t)n * (size_t)stride > sizeof c->chunk) /* a bad size: said, not read */
        return (void)(n ? w->bad++ : 0);
    if (copy(w, c->chunk, at, (size_t)n * (size_t)stride))
        return (void)w->bad++;
    for (int k = 0; k < n; k++) /* add reads nothing: the chunk stays */
        if (ptr_at(c->chunk, k * stride))
            add(w, i, edge, 0, ptr_at(c->chunk, k * stride), t);
}

static int proto(rd_heapwalk *w, uint32_t i, const uint8_t *b)
{
    int nk = lr_int_at(b, PR_SIZEK), ncode = lr_int_at(b, PR_SIZECODE),
        nline = lr_int_at(b, PR_SIZELINE), np = lr_int_at(b, PR_SIZEP),
        nloc = lr_int_at(b, PR_SIZELOC), nup = lr_int_at(b, PR_SIZEUPV);
    if ((nk | ncode | nline | np | nloc | nup) < 0 || nk > SANE_COUNT || ncode > SANE_COUNT ||
        nline > SANE_COUNT || np > SANE_COUNT || nloc > SANE_COUNT || nup > 255)
        return -1;
    w->o[i].size = PROTO_SIZE + 4ull * (unsigned)ncode + 16ull * (unsigned)nk +
                   8ull * (unsigned)np + 4ull * (unsigned)nline + 16ull * (unsigned)nloc +
                   8ull * (unsigned)nup;
    if (too_big(w, w->o[i].size))
        return -1;
    if (ptr_at(b, PR_SOURCE))
        add(w, i, HE_CONST, 0, ptr_at(b, PR_SOURCE), LUA_TSTRING);
    pointers(w, i, ptr_at(b, PR_P), np, HE_PROTO, HT_PROTO, 8);
    pointers(w, i, ptr_at(b, PR_UPVALUES), nup, HE_CONST, LUA_TSTRING, 8);
    pointers(w, i, ptr_at(b, PR_LOCVARS), nloc, HE_CONST, LUA_TSTRING, LV_SIZE);
    each(w, i, ptr_at(b, PR_K), (size_t)nk, TV_SIZE, const_elem);
    return 0;
}

static int upval(rd_heapwalk *w, uint32_t i, const uint8_t *b)
{
    uint8_t tv[TV_SIZE];
    w->o[i].size = UPVAL_SIZE;
    if (rd(w, ptr_at(b, UV_V), tv, sizeof tv))
        return -1;
    add_value(w, i, HE_UPVAL, 0, tv);
    return 0;
}

static int udata(rd_heapwalk *w, uint32_t i, const uint8_t *b)
{
    uint64_t len;
    memcpy(&len, b + UD_LEN, sizeof len);
    if (len >> 40 || too_big(w, UDATA_SIZE + len))
        return -1;
    w->o[i].size = UDATA_SIZE + len;
    if (ptr_at(b, UD_METATABLE))
        add(w, i, HE_META, 0, ptr_at(b, UD_METATABLE), LUA_TTABLE);
    if (ptr_at(b, UD_ENV))
        add(w, i, HE_ENV, 0, ptr_at(b, UD_ENV), LUA_TTABLE);
    return 0;
}

static int thread(rd_heapwalk *w, uint32_t i, const uint8_t *b)
{
    int nstack = lr_int_at(b, LS_STACKSIZE), nci = lr_int_at(b, LS_SIZE_CI);
    uintptr_t stack = ptr_at(b, LS_STACK), top = ptr_at(b, LS_TOP);
    if (nstack < 0 || nstack > SANE_COUNT || nci < 0 || nci > SANE_COUNT || top < stack ||
        (top - stack) / TV_SIZE > (size_t)nstack)
        return -1;
    w->o[i].size = LS_SIZE + (uint64_t)nstack * TV_SIZE + (uint64_t)nci * CI_SIZE;
    if (too_big(w, w->o[i].size))
        return -1;
    add_value(w, i, HE_GLOBALS, 0, b + LS_GT);
    each(w, i, stack, (top - stack) / TV_SIZE, TV_SIZE, stack_elem);
    return 0;
}

static int string(rd_heapwalk *w, uint32_t i, const uint8_t *b)
{
    uint64_t len;
    memcpy(&len, b + TS_LEN, sizeof len);
    if (len >> 40 || too_big(w, TS_SIZE + len + 1))
        return -1;
    w->o[i].size = TS_SIZE + len + 1;
    return 0;
}

/* Object i: its size, and what it references added. */
static void expand(rd_heapwalk *w, uint32_t i)
{
    uint8_t b[LS_SIZE];
    int t = w->o[i].type, tag = t == HT_CFUNC ? LUA_TFUNCTION : t;
    size_t need = t == LUA_TTHREAD   ? LS_SIZE
                  : t == HT_PROTO    ? PROTO_SIZE
                  : t == LUA_TTABLE  ? TABLE_SIZE
                  : t == LUA_TSTRING ? TS_SIZE
                                     : CLOSURE_SIZE; /* a closure's, an upvalue's, a userdata's */
    int e = rd(w, w->o[i].addr, b, need);
    if (!e && b[LS_TT] != tag)
        e = -1; /* freed and reused since it was referenced, or not an object */
    if (!e) {
        switch (t) {
        case LUA_TTABLE: e = table(w, i, b); break;
        case LUA_TFUNCTION: e = closure(w, i, b); break;
        case HT_PROTO: e = proto(w, i, b); break;
        case HT_UPVAL: e = upval(w, i, b); break;
        case LUA_TUSERDATA: e = udata(w, i, b); break;
        case LUA_TTHREAD: e = thread(w, i, b); break;
        case LUA_TSTRING: e = string(w, i, b); break;
        default: e = -1;
        }
    }
    if (e) { /* not what it said: nothing of it counted */
        w->bad++;
        w->o[i].size = 0;
    }
}

/* }====== */

/* The roots, in order: each is walked to its end before the next is
 * added, so that an object reached from the globals has its path there,
 * not through a stack slot that held it a moment (what a person looks
 * for is _G.cache.sessions). 0, or -EFAULT: the state cannot be read. */
static int root(rd_heapwalk *w, int k)
{
    uint8_t l[LS_SIZE], g[G_MAINTHREAD + 8];
    if (rd(w, (uintptr_t)w->main, l, sizeof l) || l[LS_TT] != LUA_TTHREAD ||
        rd(w, ptr_at(l, LS_G), g, sizeof g) || ptr_at(g, G_MAINTHREAD) != (uintptr_t)w->main)
        return -EFAULT;
    if (k == HR_GLOBALS) {
        uint64_t buffsize;
        memcpy(&w->totalbytes, g + G_TOTALBYTES, sizeof w->totalbytes);
        memcpy(&buffsize, g + G_BUFFSIZE, sizeof buffsize);
        /* the string table's slots, the state's block past its main thread, its buffer */
        w->internal = 8ull * (unsigned)lr_int_at(g, G_STRT_SIZE) + (LG_SIZE - LS_SIZE) +
                      (buffsize >> 40 ? 0 : buffsize);
        add_value(w, UINT32_MAX, HE_ROOT, HR_GLOBALS, l + LS_GT);
    } else if (k == HR_REGISTRY) {
        add_value(w, UINT32_MAX, HE_ROOT, HR_REGISTRY, g + G_REGISTRY);
    } else {
        add(w, UINT32_MAX, HE_ROOT, HR_MAIN, (uintptr_t)w->main, LUA_TTHREAD);
    }
    return 0;
}

/* One walk from the roots, the dead keys' entries left out. */
static int walk(rd_heapwalk *w)
{
    int e = 0;
    size_t i = 0;
    w->n = w->bad = 0;
    w->cut = 0;
    memset(w->set, 0, w->set_cap * sizeof *w->set);
    if (w->wk) /* none until a weak key is met */
        memset(w->wk, 0, w->capwk * sizeof *w->wk);
    w->nwk = 0;
    for (int r = HR_GLOBALS; r <= HR_MAIN && w->cut != 2; r++) {
        if (root(w, r)) { /* the state cannot be read: at once, a failure; later, a change */
            e = r == HR_GLOBALS ? -EFAULT : (w->bad++, 0);
            break;
        }
        for (; i < w->n; i++) {
            if (w->gone)
                return -ESRCH;
            if ((i % 256 == 0 && late(w)) || w->cut == 2) {
                w->n = i; /* what was not read is not counted */
                break;
            }
            expand(w, (uint32_t)i);
        }
    }
    return e;
}

int rd_heapwalk_run(rd_heapwalk *w)
{
    w->cap = w->max_objects < 65536 ? w->max_objects : 65536;
    w->o = malloc(w->cap * sizeof *w->o);
    for (w->set_cap = 16; w->set_cap < 2 * w->cap;)
        w->set_cap *= 2;
    w->set = calloc(w->set_cap, sizeof *w->set);
    w->cache = calloc(1, sizeof(cache));
    w->gone = 0;
    w->ndead = 0;
    if (w->dead)
        memset(w->dead, 0, w->capdead * sizeof *w->dead);
    if (!w->o || !w->set || !w->cache)
        return -ENOMEM;
    memset(((cache *)w->cache)->at, 0xff, sizeof ((cache *)w->cache)->at);
    int e;
    /* again while weak keys die, as many walks as collections would take
     * (a chain of them one at a time: up to MAX_WALKS, then what the last
     * walk had stands, as a walk cut short does) */
    for (int k = 1; !(e = walk(w)) && !w->cut && k < MAX_WALKS && kill_unreached(w); k++)
        ;
    for (size_t i = 0; i < w->n; i++)
        w->o[i].sub = w->o[i].size, w->o[i].nsub = 1;
    for (size_t i = w->n; i-- > 0;) /* children come after their parents */
        if (w->o[i].parent != UINT32_MAX && w->o[i].parent < i) {
            w->o[w->o[i].parent].sub += w->o[i].sub;
            w->o[w->o[i].parent].nsub += w->o[i].nsub;
        }
    return e;
}

void rd_heapwalk_free(rd_heapwalk *w)
{
    free(w->o);
    free(w->set);
    free(w->cache);
    free(w->wk);
    free(w->dead);
    w->o = NULL;
    w->set = NULL;
    w->cache = NULL;
    w->wk = w->dead = NULL;
    w->nwk = w->capwk = w->ndead = w->capdead = 0;
}

size_t rd_heapwalk_string(const rd_heapwalk *w, uintptr_t ts, char *buf, size_t cap)
{
    uint8_t h[TS_SIZE];
    uint64_t len = 0;
    buf[0] = 0;
    if (!ts || rd_heapwalk_copy(w->pid, h, ts, sizeof h) || h[TS_TT] != LUA_TSTRING)
        return 0;
    memcpy(&len, h + TS_LEN, sizeof len);
    size_t n = len < cap - 1 ? (size_t)len : cap - 1;
    if (rd_heapwalk_copy(w->pid, buf, ts + TS_SIZE, n))
        n = 0;
    buf[n] = 0;
    return (size_t)len;
}
