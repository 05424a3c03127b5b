/* lr_stackread: a Lua 5.1 state's stacks read from raw memory (see
 * lr_stackread.h). Functions are named as co_func names them: main chunk;
 * the shortest global or package.loaded path; the name at the call site
 * (read from the caller's bytecode, as Lua's getfuncname does, by a
 * backward scan); "function". */
#include "lr_stackread.h"

#include <lua.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lt_attach.h"
#include "lt_event.h"

/* {====== reading memory that may be anything */

/* The process read by the call in progress, and when its reads must end:
 * lr_sr_collect and the other entry points set them from their lr_sr (one
 * reader at a time: the collector's handler blocks its signal, recorderd
 * reads from one thread). */
static pid_t g_pid;
static uint64_t g_deadline_us; /* 0: none */
static uint32_t g_reads;
static uint8_t g_late; /* the deadline passed: every read fails */

static void begin(lr_sr *d)
{
    g_pid = d->pid;
    g_deadline_us = d->deadline_us;
    g_reads = 0;
    g_late = 0;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Every read of memory that may be anything passes here: memory laid out
 * to make the walks long (a forged state, a list that loops) ends them at
 * the caller's deadline, checked every 64 reads (a few tens of us). */
static int copy_in(struct iovec *l, unsigned long n, struct iovec *r)
{
    if (g_deadline_us && ++g_reads % 64 == 0 && !g_late)
        g_late = now_ns() / 1000 >= g_deadline_us;
    return g_late ? -1 : (int)process_vm_readv(g_pid, l, n, r, n, 0);
}

static int peek(const void *addr, void *dst, size_t n)
{
    if (!addr)
        return -1;
    struct iovec l = {dst, n}, r = {(void *)addr, n};
    return copy_in(&l, 1, &r) == (ssize_t)n ? 0 : -1;
}

int lr_sr_peek(const lr_sr *d, const void *addr, void *dst, size_t n)
{
    g_pid = d->pid;
    return peek(addr, dst, n);
}

/* Copies the TString ts into out (NUL-terminated, at most cap - 1 bytes; a
 * longer one is cut if cut, else refused). Returns its length or -1. */
static int tstring(const void *ts, char *out, size_t cap, int cut)
{
    uint8_t h[TS_SIZE];
    if (peek(ts, h, sizeof h) || h[TS_TT] != LUA_TSTRING)
        return -1;
    size_t len;
    memcpy(&len, h + TS_LEN, sizeof len);
    if (len >= cap && !cut)
        return -1;
    if (len >= cap)
        len = cap - 1;
    if (len && peek((const char *)ts + TS_SIZE, out, len))
        return -1;
    out[len] = 0;
    return (int)len;
}

static size_t slen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

/* dst = a "." b (or just b), if it fits. */
static int join(char *dst, size_t cap, const char *a, const char *b)
{
    size_t na = slen(a), nb = slen(b), n = na ? na + 1 + nb : nb;
    if (n >= cap)
        return -1;
    memcpy(dst, a, na);
    if (na)
        dst[na++] = '.';
    memcpy(dst + na, b, nb + 1);
    return 0;
}

/* }====== */

/* {====== names at the call site (approximating ldebug.c's getobjname) */

static int op_of(uint32_t i)
{
    return (int)(i & 63);
}
static int a_of(uint32_t i)
{
    return (int)((i >> 6) & 255);
}
static int b_of(uint32_t i)
{
    return (int)((i >> 23) & 511);
}
static int c_of(uint32_t i)
{
    return (int)((i >> 14) & 511);
}
static int bx_of(uint32_t i)
{
    return (int)((i >> 14) & 0x3ffff);
}

/* Whether instruction i may set register reg. */
static int writes(uint32_t i, int reg)
{
    int a = a_of(i);
    switch (op_of(i)) {
    case OP_LOADNIL:
        return reg >= a && reg <= b_of(i);
    case OP_SELF:
        return reg == a || reg == a + 1;
    case OP_CALL:
    case OP_TFORLOOP:
    case OP_VARARG:
        return reg >= a;
    case OP_FORLOOP:
    case OP_FORPREP:
        return reg >= a && reg <= a + 3;
    case OP_SETGLOBAL:
    case OP_SETUPVAL:
    case OP_SETTABLE:
    case OP_JMP:
    case OP_EQ:
    case OP_LT:
    case OP_LE:
    case OP_TEST:
    case OP_SETLIST:
    case OP_CLOSE:
        return 0;
    default:
        return reg == a;
    }
}

/* The last instruction before pc that set reg, scanning back (no flow
 * analysis: an approximation of symbexec, right in straight-line code):
 * its pc, or -1. */
static int writer_pc(const uint8_t *pr, int pc, int reg, uint32_t *out)
{
    uint32_t code[BACK_MAX];
    int lo = pc > BACK_MAX ? pc - BACK_MAX : 0;
    if (pc <= 0 ||
        peek((const uint32_t *)lr_ptr_at(pr, PR_CODE) + lo, code, (size_t)(pc - lo) * sizeof code[0]))
        return -1;
    for (int k = pc - lo; k-- > 0;) {
        int op = op_of(code[k]);
        if (op == OP_RETURN || op == OP_TAILCALL)
            return -1;
        if (writes(code[k], reg)) {
            *out = code[k];
            return lo + k;
        }
    }
    return -1;
}

static int writer(const uint8_t *pr, int pc, int reg, uint32_t *out)
{
    return writer_pc(pr, pc, reg, out) >= 0;
}

/* The name of local number n (from 1) active at pc (lfunc.c's rule). */
static int local_name(const uint8_t *pr, int n, int pc, char *out, size_t cap)
{
    uint8_t lv[32 * LV_SIZE];
    int size = lr_int_at(pr, PR_SIZELOC);
    const uint8_t *vars = lr_ptr_at(pr, PR_LOCVARS);
    for (int i = 0; i < size && i < SCAN_MAX; i += 32) {
        int m = size - i < 32 ? size - i : 32;
        if (peek(vars + (size_t)i * LV_SIZE, lv, (size_t)m * LV_SIZE))
            return 0;
        for (int j = 0; j < m; j++) {
            if (lr_int_at(lv, j * LV_SIZE + 8) > pc)
                return 0;
            if (pc < lr_int_at(lv, j * LV_SIZE + 12) && --n == 0)
                return tstring(lr_ptr_at(lv, j * LV_SIZE), out, cap, 0) > 0;
        }
    }
    return 0;
}

/* Constant k of Proto pr, if a string. */
static int kname(const uint8_t *pr, int k, char *out, size_t cap)
{
    uint8_t tv[TV_SIZE];
    if (k < 0 || k >= lr_int_at(pr, PR_SIZEK) ||
        peek((const uint8_t *)lr_ptr_at(pr, PR_K) + (size_t)k * TV_SIZE, tv, sizeof tv) ||
        lr_int_at(tv, TV_TT) != LUA_TSTRING)
        return 0;
    return tstring(lr_ptr_at(tv, 0), out, cap, 0) > 0;
}

static int obj_name(const uint8_t *pr, int pc, int reg, char *out, size_t cap, int depth)
{
    uint32_t i;
    if (local_name(pr, reg + 1, pc, out, cap))
        return 1;
    if (!writer(pr, pc, reg, &i))
        return 0;
    switch (op_of(i)) {
    case OP_GETGLOBAL:
        return kname(pr, bx_of(i), out, cap);
    case OP_MOVE:
        return b_of(i) < a_of(i) && depth < 8 && obj_name(pr, pc, b_of(i), out, cap, depth + 1);
    case OP_GETTABLE:
    case OP_SELF:
        return (c_of(i) & 256) && kname(pr, c_of(i) & 255, out, cap);
    case OP_GETUPVAL: {
        const void *ts;
        int u = b_of(i);
        return u < lr_int_at(pr, PR_SIZEUPV) &&
               !peek((const void *const *)lr_ptr_at(pr, PR_UPVALUES) + u, &ts, sizeof ts) &&
               tstring(ts, out, cap, 0) > 0;
    }
    default:
        return 0;
    }
}

/* The register call instruction i calls (a generic for's generator is
 * called in A + 3), or -1 if i is no call. */
static int call_reg(uint32_t i)
{
    int op = op_of(i);
    return op == OP_CALL || op == OP_TAILCALL ? a_of(i) : op == OP_TFORLOOP ? a_of(i) + 3 : -1;
}

static int raw_find(lr_sr *d, const void *t, const char *want, uint8_t tv[TV_SIZE]);
static int read_slot(const lr_sr *d, const void *addr, uint8_t *tv);

/* A call being named: the caller's frame (its Proto copied in pr) and
 * what its callee is. */
typedef struct site_ctx {
    lr_sr *d;
    const uint8_t *pr;
    const void *cl, *env;
    const char *base, *func;
    const void *callee;
    const uint8_t *arg1, *self_tb; /* lr_sr_site's */
} site_ctx;

/* t[ts] (ts an interned string: its key is that TString) into tv, through
 * __index tables as Lua's gettable goes, t's header (its hash part, its
 * metatable) as copied in tb0 if not NULL: an object made for one call may
 * be freed by the time the call is named, its class not. 0, or -1 if it
 * cannot be told (a read fails, an __index function, a chain too long). */
static int lookup(site_ctx *x, const void *t, const uint8_t *tb0, const void *ts, uint8_t *tv)
{
    uint8_t h[TS_SIZE], tb[TB_READ], nd[ND_SIZE], ix[TV_SIZE];
    if (peek(ts, h, sizeof h) || h[TS_TT] != LUA_TSTRING)
        return -1;
    unsigned hash = (unsigned)lr_int_at(h, TS_HASH);
    for (int depth = 0; depth < 8; depth++) {
        if (depth == 0 && tb0)
            memcpy(tb, tb0, sizeof tb);
        else if (peek(t, tb, sizeof tb))
            return -1;
        if (tb[TB_TT] != LUA_TTABLE || tb[TB_LSIZENODE] > 26)
            return -1;
        const uint8_t *n = lr_ptr_at(tb, TB_NODE);
        n = n ? n + (size_t)(hash & ((1u << tb[TB_LSIZENODE]) - 1)) * ND_SIZE : NULL;
        for (int k = 0; n && k < 64; k++, n = lr_ptr_at(nd, ND_NEXT)) {
            if (peek(n, nd, sizeof nd))
                return -1;
            if (lr_int_at(nd, ND_KEYTT) == LUA_TSTRING && lr_ptr_at(nd, ND_KEY) == ts) {
                if (lr_int_at(nd, TV_TT) == LUA_TNIL)
                    break;
                memcpy(tv, nd, TV_SIZE);
                return 0;
            }
        }
        const void *mt = lr_ptr_at(tb, TB_METATABLE);
        int got = mt ? raw_find(x->d, mt, "__index", ix) : 0;
        if (!got || (got == 1 && lr_int_at(ix, TV_TT) == LUA_TNIL)) { /* absent: nil */
            memset(tv, 0, TV_SIZE);
            return 0;
        }
        if (got < 0 || lr_int_at(ix, TV_TT) != LUA_TTABLE)
            return -1;
        t = lr_ptr_at(ix, 0);
    }
    return -1;
}

/* What a call of value tv calls: 1 the callee, -1 not the callee (another
 * function, or nil), 0 cannot be told (a table or userdata may have a
 * __call). */
static int calls_value(const site_ctx *x, const uint8_t *tv)
{
    int tt = lr_int_at(tv, TV_TT);
    return tt == LUA_TFUNCTION ? (lr_ptr_at(tv, 0) == x->callee ? 1 : -1) : tt == LUA_TNIL ? -1 : 0;
}

/* Field k (constant k of the caller, a string) of value t, a table (its
 * header copied in tb0, if not NULL), into tv: 0, or -1 if it cannot be
 * told. */
static int field(site_ctx *x, const uint8_t *t, const uint8_t *tb0, int k, uint8_t *tv)
{
    uint8_t kv[TV_SIZE];
    return lr_int_at(t, TV_TT) == LUA_TTABLE && k >= 0 && k < lr_int_at(x->pr, PR_SIZEK) &&
                   !peek((const uint8_t *)lr_ptr_at(x->pr, PR_K) + (size_t)k * TV_SIZE, kv, sizeof kv) &&
                   lr_int_at(kv, TV_TT) == LUA_TSTRING
               ? lookup(x, lr_ptr_at(t, 0), tb0, lr_ptr_at(kv, 0), tv)
               : -1;
}

/* Upvalue u of the caller into tv: 0, or -1. */
static int upvalue(const site_ctx *x, int u, uint8_t *tv)
{
    uint8_t c[CL_READ], uv[UV_READ];
    const void *p;
    return x->cl && u >= 0 && !peek(x->cl, c, sizeof c) && !c[CL_ISC] && u < c[CL_NUPVALUES] &&
                   !peek((const char *)x->cl + CL_UPVALS + (size_t)u * sizeof p, &p, sizeof p) &&
                   !peek(p, uv, sizeof uv) && uv[UV_TT] == LUA_TUPVAL_
               ? peek(lr_ptr_at(uv, UV_V), tv, TV_SIZE)
               : -1;
}

/* Table t as a value. */
static void table_value(const void *t, uint8_t *tv)
{
    int tt = LUA_TTABLE;
    memcpy(tv, &t, sizeof t);
    memcpy(tv + TV_TT, &tt, sizeof tt);
}

/* The value register r held at pc, before a call in register reg: a
 * register below reg as the caller holds it now (while the callee runs,
 * as at the call), else as the code before pc computed it from those, the
 * globals, its upvalues and tables' fields. 0, or -1 if it cannot be
 * told. */
static int value_at(site_ctx *x, int pc, int r, int reg, uint8_t *tv, int depth)
{
    uint32_t w;
    uint8_t t[TV_SIZE];
    if (r < reg)
        return read_slot(x->d, x->base + (size_t)r * TV_SIZE, tv);
    int at = depth > 8 ? -1 : writer_pc(x->pr, pc, r, &w);
    if (at < 0)
        return -1;
    switch (op_of(w)) {
    case OP_MOVE:
        return value_at(x, at, b_of(w), reg, tv, depth + 1);
    case OP_GETUPVAL:
        return upvalue(x, b_of(w), tv);
    case OP_GETGLOBAL:
        table_value(x->env, t);
        return x->env ? field(x, t, NULL, bx_of(w), tv) : -1;
    case OP_GETTABLE:
        return (c_of(w) & 256) && !value_at(x, at, b_of(w), reg, t, depth + 1)
                   ? field(x, t, NULL, c_of(w) & 255, tv)
                   : -1;
    default:
        return -1;
    }
}

/* Whether the callee's first argument is still above its slot: a C
 * function's, a Lua function's but a vararg one's (moved up, nil left). */
static int fixed_args(const site_ctx *x)
{
    uint8_t c[CL_READ], v = 1;
    const uint8_t *p;
    return !peek(x->callee, c, sizeof c) &&
           (c[CL_ISC] || ((p = lr_ptr_at(c, CL_FP)) && !peek(p + PR_ISVARARG, &v, 1) && !v));
}

/* What the call instruction at pc (calling register reg) calls, from what
 * the caller holds now (a local, a global, an upvalue, a table's field,
 * the method of the object the callee has for self): 1 the callee, -1
 * another function (it cannot have called the callee), 0 cannot be told. */
static int site_calls(site_ctx *x, int pc, int reg)
{
    uint32_t w;
    uint8_t tv[TV_SIZE], f[TV_SIZE];
    if (writer_pc(x->pr, pc, reg, &w) >= 0 && op_of(w) == OP_SELF && a_of(w) == reg) {
        /* self: the callee's first argument, had it been called here; a
         * nil, boolean or number has no methods (no metatable) */
        if (!(c_of(w) & 256) || !fixed_args(x))
            return 0;
        memcpy(tv, x->arg1, TV_SIZE);
        int tt = lr_int_at(tv, TV_TT);
        if (tt == LUA_TNIL || tt == LUA_TBOOLEAN || tt == LUA_TNUMBER)
            return -1;
        return field(x, tv, tt == LUA_TTABLE ? x->self_tb : NULL, c_of(w) & 255, f) ? 0 : calls_value(x, f);
    }
    return value_at(x, pc, reg, reg, tv, 0) ? 0 : calls_value(x, tv);
}

/* Goes through the call sites of the caller's code that call register
 * reg (at most SITE_MAX): with find, copies into name the name of the
 * first one known to call the callee and answers 1 (0: none); else answers
 * whether every one names it name, but those known to call another
 * function when one of them is known to call the callee. */
static int sites(site_ctx *x, int reg, char *name, int find)
{
    uint32_t code[BACK_MAX];
    char other[NAME_MAX_];
    int size = lr_int_at(x->pr, PR_SIZECODE), n = 0, known = 0, passed = 0;
    if (size > SITE_CODE)
        return 0;
    for (int lo = 0; lo < size; lo += BACK_MAX) {
        int m = size - lo < BACK_MAX ? size - lo : BACK_MAX;
        if (peek((const uint32_t *)lr_ptr_at(x->pr, PR_CODE) + lo, code, (size_t)m * sizeof code[0]))
            return 0;
        for (int k = 0; k < m; k++) {
            if (call_reg(code[k]) != reg)
                continue;
            if (++n > SITE_MAX)
                return 0;
            other[0] = 0;
            int named = obj_name(x->pr, lo + k, a_of(code[k]), other, sizeof other, 0);
            if (find && named && site_calls(x, lo + k, reg) > 0)
                return memcpy(name, other, sizeof other), 1;
            if (find)
                continue;
            if (named && !strcmp(other, name))
                known = known || site_calls(x, lo + k, reg) > 0;
            else if (site_calls(x, lo + k, reg) < 0)
                passed = 1; /* it cannot have called the callee */
            else
                return 0;
        }
    }
    return !find && (known || !passed);
}

/* The name the caller (a Lua frame at st->pc, its Proto copied in pr)
 * called its callee, as Lua's getfuncname gives it: from the call
 * instruction at pc, which must call the callee's slot. Read as the process
 * runs, the saved pc may be another call's, of a moment before or after
 * the callee's (the lua_State, the CallInfos and the slots are copied one
 * after the other): then the name is that of a call site in the same
 * register known to call the callee (else the saved pc's), given only
 * when every call site in that register gives it or, if one of those is
 * known to call the callee, is known to call another function; else none
 * ("function"). */
static void call_name(lr_sr *d, const lr_sr_site *st, const uint8_t *pr, char *out, size_t cap)
{
    uint32_t i;
    site_ctx x = {d, pr, st->cl, st->env, st->base, st->func, st->callee, st->arg1, st->self_tb};
    int pc = st->pc, reg = (int)((st->func - st->base) / TV_SIZE);
    out[0] = 0;
    if (pc < 0 || pc >= lr_int_at(pr, PR_SIZECODE) || st->func < st->base ||
        (st->func - st->base) % TV_SIZE ||
        peek((const uint32_t *)lr_ptr_at(pr, PR_CODE) + pc, &i, sizeof i) || call_reg(i) != reg ||
        !obj_name(pr, pc, a_of(i), out, cap, 0))
        out[0] = 0;
    else if (d->running && (cap < NAME_MAX_ || (sites(&x, reg, out, 1), !sites(&x, reg, out, 0))))
        out[0] = 0;
}

/* }====== */

/* {====== stacks */

/* The flags of C closure c (copied) whose function is cf. A process that
 * could not run Lua for us has no known wrap function: a C closure whose
 * one upvalue is a thread is taken for one (lbaselib's auxwrap). */
static uint32_t func_flags(const lr_sr *d, const void *cf, const uint8_t *c)
{
    static const uint32_t f[5] = {LT_FF_PCALL, LT_FF_PCALL, LT_FF_RESUME, LT_FF_WRAP, LT_FF_YIELD};
    for (int i = 0; i < 5; i++)
        if (cf && cf == d->cf[i])
            return f[i];
    if (!d->cf[3] && c[CL_NUPVALUES] == 1 && lr_int_at(c, CL_UPV0 + TV_TT) == LUA_TTHREAD)
        return LT_FF_WRAP;
    return 0;
}

/* The Proto of the body of the coroutine that wrap function c (copied)
 * runs, read into bpr, as co_func_body finds it in-process: the bottom
 * frame's function of a started coroutine, the first slot of one not
 * started. NULL: none, or a C one. */
static const void *wrap_body(const uint8_t *c, uint8_t *bpr)
{
    uint8_t ls[LS_READ], ci[CI_SIZE], tv[TV_SIZE], cl[CL_READ];
    const void *slot;
    if (lr_int_at(c, CL_UPV0 + TV_TT) != LUA_TTHREAD ||
        peek(lr_ptr_at(c, CL_UPV0), ls, sizeof ls) || ls[LS_TT] != LUA_TTHREAD)
        return NULL;
    const char *base_ci = lr_ptr_at(ls, LS_BASE_CI);
    if ((const char *)lr_ptr_at(ls, LS_CI) > base_ci) {
        if (peek(base_ci + CI_SIZE, ci, sizeof ci))
            return NULL;
        slot = lr_ptr_at(ci, CI_FUNC);
    } else if (ls[LS_STATUS] == 0 && lr_ptr_at(ls, LS_TOP) > lr_ptr_at(ls, LS_BASE)) {
        slot = lr_ptr_at(ls, LS_BASE);
    } else {
        return NULL;
    }
    if (peek(slot, tv, sizeof tv) || lr_int_at(tv, TV_TT) != LUA_TFUNCTION ||
        peek(lr_ptr_at(tv, 0), cl, sizeof cl) || cl[CL_TT] != LUA_TFUNCTION || cl[CL_ISC] ||
        peek(lr_ptr_at(cl, CL_FP), bpr, PR_READ) || bpr[PR_TT] != LUA_TPROTO_)
        return NULL;
    return lr_ptr_at(cl, CL_FP);
}

/* Whether Lua function f is the one of Proto pr (copied): a Proto freed
 * leaves its address to the next one made, a chunk loaded later say, so
 * an address alone names it only while it lives. */
static int same_proto(const lr_sr_func *f, const uint8_t *pr)
{
    return !f->isC && f->src == lr_ptr_at(pr, PR_SOURCE) && f->linedef == lr_int_at(pr, PR_LINEDEF) &&
           f->lastline == lr_int_at(pr, PR_LASTLINE);
}

/* The function of closure cl (copied in c), found or added. A wrap
 * function is known by its body's Proto (one past it, never a Lua
 * function's key), as the collector knows it, so that each generator has
 * its own name. */
static lr_sr_func *func_of(lr_sr *d, const void *cl, const uint8_t *c, const uint8_t *pr)
{
    const void *key = lr_ptr_at(c, CL_FP), *body = NULL;
    uint8_t bpr[PR_READ];
    uint32_t flags = c[CL_ISC] ? func_flags(d, key, c) : 0;
    if (flags == LT_FF_WRAP && (body = wrap_body(c, bpr)))
        key = (const char *)body + 1;
    for (uint32_t i = 0; i < d->nfn; i++)
        if (d->fn[i].key == key && (c[CL_ISC] || same_proto(&d->fn[i], pr)))
            return &d->fn[i];
    if (d->nfn == MAX_FUNCS)
        return NULL;
    lr_sr_func *f = &d->fn[d->nfn++];
    memset(f, 0, sizeof *f);
    f->key = key;
    f->cl = cl;
    f->isC = c[CL_ISC] != 0;
    f->fid = d->nfn;
    if (f->isC) {
        f->flags = flags;
        f->body_src = body ? lr_ptr_at(bpr, PR_SOURCE) : NULL;
        f->body_line = body ? lr_int_at(bpr, PR_LINEDEF) : 0;
    } else {
        f->src = lr_ptr_at(pr, PR_SOURCE);
        f->linedef = lr_int_at(pr, PR_LINEDEF);
        f->lastline = lr_int_at(pr, PR_LASTLINE);
        f->main = f->linedef == 0;
    }
    return f;
}

/* pc (instruction index) of a Lua frame whose saved pc is savedpc. */
static int pc_of(const uint8_t *pr, const void *savedpc)
{
    ptrdiff_t k = ((const char *)savedpc - (const char *)lr_ptr_at(pr, PR_CODE)) / 4 - 1;
    return k >= 0 && k < 0x7fffffff ? (int)k : -1;
}

static uint32_t line_of(const uint8_t *pr, int pc)
{
    int line;
    if (pc < 0 || pc >= lr_int_at(pr, PR_SIZELINE) ||
        peek((const int *)lr_ptr_at(pr, PR_LINEINFO) + pc, &line, sizeof line))
        return 0;
    return line > 0 ? (uint32_t)line : 0;
}

/* The stack slot at addr (a TValue) into tv: from the snapshot if it
 * holds it, else read now. */
static int read_slot(const lr_sr *d, const void *addr, uint8_t *tv)
{
    uintptr_t off = (uintptr_t)addr - (uintptr_t)d->sn_tv;
    if (d->sn_ntv && off < d->sn_ntv * TV_SIZE && off % TV_SIZE == 0) {
        memcpy(tv, d->sn_tvs + off, TV_SIZE);
        return 0;
    }
    return peek(addr, tv, TV_SIZE);
}

/* Whether the thread's blocks (stack, CallInfos) and state are those of
 * ls: a second copy of its lua_State that says otherwise was made after a
 * stack grew (the old blocks freed) or the thread was freed. */
static int same_blocks(const uint8_t *ls2, const uint8_t *ls)
{
    return ls2[LS_TT] == LUA_TTHREAD && !memcmp(ls2 + LS_G, ls + LS_G, sizeof(void *)) &&
           !memcmp(ls2 + LS_STACK, ls + LS_STACK, sizeof(void *)) &&
           !memcmp(ls2 + LS_BASE_CI, ls + LS_BASE_CI, sizeof(void *)) &&
           lr_int_at(ls2, LS_SIZE_CI) == lr_int_at(ls, LS_SIZE_CI) &&
           lr_int_at(ls2, LS_STACKSIZE) == lr_int_at(ls, LS_STACKSIZE);
}

/* Copies, by one process_vm_readv, thread L's lua_State into ls2, its
 * CallInfos [ci_lo, ci_hi) and its stack slots [tv_lo, tv_hi) into the
 * window (d->sn_*), as the blocks of ls place them. 0, or -1 (nothing kept)
 * if a read fails or the blocks moved. */
static int window(lr_sr *d, const void *L, const uint8_t *ls, size_t ci_lo, size_t ci_hi,
                  size_t tv_lo, size_t tv_hi, const void *far, uint8_t *ls2)
{
    const char *base = lr_ptr_at(ls, LS_BASE_CI), *stack = lr_ptr_at(ls, LS_STACK);
    struct iovec l[4] = {{ls2, LS_READ},
                         {d->sn_cis, (ci_hi - ci_lo) * CI_SIZE},
                         {d->sn_tvs, (tv_hi - tv_lo) * TV_SIZE},
                         {d->sn_far_tv, TV_SIZE}};
    struct iovec r[4] = {{(void *)L, LS_READ},
                         {(void *)(base + ci_lo * CI_SIZE), l[1].iov_len},
                         {(void *)(stack + tv_lo * TV_SIZE), l[2].iov_len},
                         {(void *)far, TV_SIZE}};
    int k = far ? 4 : 3;
    ssize_t want = (ssize_t)(l[0].iov_len + l[1].iov_len + l[2].iov_len + (far ? TV_SIZE : 0));
    d->sn_nci = d->sn_ntv = 0;
    d->sn_far = far;
    uint64_t t0 = now_ns();
    ssize_t got = copy_in(l, (unsigned long)k, r);
    d->sn_quick = now_ns() - t0 <= SNAP_QUICK_US * 1000u; /* next_window clears it */
    if (got != want || !same_blocks(ls2, ls))
        return -1;
    d->sn_ci = base + ci_lo * CI_SIZE;
    d->sn_nci = ci_hi - ci_lo;
    d->sn_tv = stack + tv_lo * TV_SIZE;
    d->sn_ntv = tv_hi - tv_lo;
    return 0;
}

/* Whether ls's ci and top are in the window. */
static int holds_top(const lr_sr *d, const uint8_t *ls)
{
    const char *ci = lr_ptr_at(ls, LS_CI), *top = lr_ptr_at(ls, LS_TOP);
    return d->sn_nci && ci >= d->sn_ci && (size_t)(ci - d->sn_ci) < d->sn_nci * CI_SIZE &&
           top >= d->sn_tv && (size_t)(top - d->sn_tv) / TV_SIZE < d->sn_ntv;
}

/* Copies thread L's lua_State (ls: read once already) again, with its
 * CallInfos up to a few past its ci and its stack slots up to a few past
 * its top, by one window: a running thread's frames then come from about
 * one moment (1.4 us on average here: a recursion as fast as fib still
 * moves under it, see fn_by_code). Read frame by frame (about 20 us), a
 * low frame whose function returned meanwhile, and another called in its
 * slot, joined callees read before it (io.open calling fib). Tried again,
 * from the newer copy, when the thread grew past the window or its stack
 * moved (reallocated) since ls was read. Returns 0 (ls the copy's), or -1. */
static int snapshot(lr_sr *d, const void *L, uint8_t *ls)
{
    uint8_t ls2[LS_READ];
    for (int k = 0; k < 4; k++) {
        const char *base = lr_ptr_at(ls, LS_BASE_CI), *stack = lr_ptr_at(ls, LS_STACK);
        const char *top = lr_ptr_at(ls, LS_TOP), *ci = lr_ptr_at(ls, LS_CI);
        size_t size_ci = (size_t)lr_int_at(ls, LS_SIZE_CI), size_tv = (size_t)lr_int_at(ls, LS_STACKSIZE);
        if (!base || !stack || ci < base || (size_t)(ci - base) % CI_SIZE || size_ci > CI_MAX ||
            (size_t)(ci - base) / CI_SIZE >= size_ci || top < stack ||
            (size_t)(top - stack) / TV_SIZE >= size_tv || size_tv > (1u << 26))
            return -1;
        size_t n = (size_t)(ci - base) / CI_SIZE;
        size_t ci_hi = n + 16 < size_ci ? n + 16 : size_ci, ci_lo = ci_hi > SNAP_CI ? ci_hi - SNAP_CI : 0;
        size_t tv_hi = (size_t)(top - stack) / TV_SIZE + 64;
        tv_hi = tv_hi < size_tv ? tv_hi : size_tv;
        int e = window(d, L, ls, ci_lo, ci_hi, tv_hi > SNAP_TV ? tv_hi - SNAP_TV : 0, tv_hi, NULL, ls2);
        if (!e && holds_top(d, ls2)) {
            memcpy(ls, ls2, LS_READ);
            return 0;
        }
        d->sn_nci = d->sn_ntv = 0;
        if (peek(L, ls2, LS_READ) || ls2[LS_TT] != LUA_TTHREAD ||
            memcmp(ls2 + LS_G, ls + LS_G, sizeof(void *)))
            return -1;
        memcpy(ls, ls2, LS_READ); /* moved or grew: from where it is now */
    }
    return -1;
}

/* The walk has gone below the window, at CallInfo i (up: the CallInfo
 * above it, and the slot of its function, as the walk used them): the
 * next window, CallInfos and slots below up's and up's own, by one copy.
 * up must be as it was: else the stack changed at that level between the
 * two copies, and frames above and below would join two moments. */
static int next_window(lr_sr *d, const void *L, const uint8_t *ls, uint32_t i, const uint8_t *up,
                       const uint8_t *up_tv, const void *far)
{
    const char *stack = lr_ptr_at(ls, LS_STACK), *f = lr_ptr_at(up, CI_FUNC);
    uint8_t ls2[LS_READ];
    if (f < stack || (size_t)(f - stack) % TV_SIZE)
        return -1;
    size_t ci_hi = (size_t)i + 2, tv_hi = (size_t)(f - stack) / TV_SIZE + 1;
    int e = window(d, L, ls, ci_hi > SNAP_CI ? ci_hi - SNAP_CI : 0, ci_hi,
                   tv_hi > SNAP_TV ? tv_hi - SNAP_TV : 0, tv_hi, far, ls2);
    d->sn_quick = 0; /* copied after the frames above: not of their moment */
    if (e ||
        (const char *)lr_ptr_at(ls2, LS_CI) < d->sn_ci + (d->sn_nci - 1) * CI_SIZE)
        return -1;
    const uint8_t *c = d->sn_cis + (d->sn_nci - 1) * CI_SIZE; /* up, copied again */
    return memcmp(c, up, CI_FUNC + 8) || memcmp(c + CI_SAVEDPC, up + CI_SAVEDPC, CI_SIZE - CI_SAVEDPC) ||
                   memcmp(d->sn_tvs + (d->sn_ntv - 1) * TV_SIZE, up_tv, TV_SIZE)
               ? -1
               : 0;
}

/* CallInfo i of the thread whose base_ci is base, and the slot of its
 * function in tv, from the window; the next window if they are below it
 * (the slot of a function far below the frame above, under its varargs,
 * copied with it). NULL if they cannot be read as of one moment. */
static const uint8_t *ci_at(lr_sr *d, const void *L, const uint8_t *ls, uint32_t i,
                            const uint8_t *up, const uint8_t *up_tv, uint8_t *tv)
{
    const char *base = lr_ptr_at(ls, LS_BASE_CI);
    const void *far = NULL;
    for (int k = 0; k < 3; k++) {
        uintptr_t off = (uintptr_t)(base + (size_t)i * CI_SIZE) - (uintptr_t)d->sn_ci;
        if (d->sn_nci && off < d->sn_nci * CI_SIZE) {
            const uint8_t *c = d->sn_cis + off;
            const void *func = lr_ptr_at(c, CI_FUNC);
            uintptr_t t = (uintptr_t)func - (uintptr_t)d->sn_tv;
            if (d->sn_ntv && t < d->sn_ntv * TV_SIZE && t % TV_SIZE == 0) {
                memcpy(tv, d->sn_tvs + t, TV_SIZE);
                return c;
            }
            if (d->sn_far && func == d->sn_far) {
                memcpy(tv, d->sn_far_tv, TV_SIZE);
                return c;
            }
            far = up && !d->sn_far ? func : NULL; /* once */
        }
        if (!k && !up) { /* the top frame's slot, below its huge varargs */
            const uint8_t *c = d->sn_nci && off < d->sn_nci * CI_SIZE ? d->sn_cis + off : NULL;
            return c && !peek(lr_ptr_at(c, CI_FUNC), tv, TV_SIZE) ? c : NULL;
        }
        if (k == 2 || (k && !far) || next_window(d, L, ls, i, up, up_tv, far))
            return NULL;
    }
    return NULL;
}

/* The thread a resume (its first argument) or wrap (its upvalue) runs. */
static const void *resumed(lr_sr *d, const uint8_t *ci, const uint8_t *c, const lr_sr_func *f)
{
    uint8_t tv[TV_SIZE];
    if (f->flags == LT_FF_RESUME && !read_slot(d, lr_ptr_at(ci, CI_BASE), tv) &&
        lr_int_at(tv, TV_TT) == LUA_TTHREAD)
        return lr_ptr_at(tv, 0);
    if (f->flags == LT_FF_WRAP && lr_int_at(c, CL_UPV0 + TV_TT) == LUA_TTHREAD)
        return lr_ptr_at(c, CL_UPV0);
    return NULL;
}

/* Copies closure clp (and its Proto, if Lua) into d->k_c (d->k_p). */
static int read_closure(lr_sr *d, const void *clp)
{
    unsigned h = (unsigned)((uintptr_t)clp >> 4) % CL_CACHE;
    if (clp == d->k_cl)
        return 0;
    d->k_cl = NULL;
    if (clp && clp == d->kc[h].cl) { /* a recursion through a few functions */
        memcpy(d->k_c, d->kc[h].c, CL_READ);
        memcpy(d->k_p, d->kc[h].p, PR_READ);
        d->k_cl = clp;
        return 0;
    }
    if (peek(clp, d->k_c, CL_READ) || d->k_c[CL_TT] != LUA_TFUNCTION)
        return -1;
    if (!d->k_c[CL_ISC] &&
        (peek(lr_ptr_at(d->k_c, CL_FP), d->k_p, PR_READ) || d->k_p[PR_TT] != LUA_TPROTO_))
        return -1;
    d->k_cl = d->kc[h].cl = clp;
    memcpy(d->kc[h].c, d->k_c, CL_READ);
    memcpy(d->kc[h].p, d->k_p, PR_READ);
    return 0;
}

static uint32_t cached_line(lr_sr *d, const uint8_t *pr, int pc)
{
    const void *p = lr_ptr_at(d->k_c, CL_FP);
    unsigned h = (unsigned)(((uintptr_t)p >> 4) + (unsigned)pc) % CL_CACHE;
    if (d->kl[h].pr != p || d->kl[h].pc != pc) {
        d->kl[h].pr = p;
        d->kl[h].pc = pc;
        d->kl[h].line = line_of(pr, pc);
    }
    return d->kl[h].line;
}

/* Whether savedpc is a pc of Proto pr's code: past its first instruction
 * in a frame below the top (it called), at it or past it on top. A copy
 * that joins a frame's CallInfo to another function in its slot, or a
 * frame caught mid-call (a tail call moving its callee down), fails. */
static int pc_in(const uint8_t *pr, const void *savedpc, int top)
{
    ptrdiff_t off = (const char *)savedpc - (const char *)lr_ptr_at(pr, PR_CODE);
    return off % 4 == 0 && off >= (top ? 0 : 4) && off / 4 <= lr_int_at(pr, PR_SIZECODE);
}

/* The walk of one thread's frames, top first: what each frame is checked
 * against, and names the frame above by. */
typedef struct walk {
    uint32_t n;   /* L->ci's index: the frame L->savedpc is of, if a Lua one */
    uint32_t top; /* the top frame read: n, or n - 1 if n was caught moving */
    uint8_t up[CI_SIZE], up_tv[TV_SIZE], tv[TV_SIZE], pr[PR_READ];
    lr_sr_func *callee; /* the function of the frame above, NULL on top */
    const void *cpc;    /* c_agrees's */
    int tail;           /* the frame above has lost tail calls */
    uint8_t by_code, up_by_code; /* this frame, the one above, told by its pc */
} walk;

/* CallInfo i of the thread whose lua_State is ls, if in the window. */
static const uint8_t *ci_copied(const lr_sr *d, const uint8_t *ls, uint32_t i)
{
    const char *ci = (const char *)lr_ptr_at(ls, LS_BASE_CI) + (size_t)i * CI_SIZE;
    uintptr_t off = (uintptr_t)ci - (uintptr_t)d->sn_ci;
    return d->sn_nci && off < d->sn_nci * CI_SIZE ? d->sn_cis + off : NULL;
}

/* Frame i's function by its slot (w->tv), into d->k_c (d->k_p), and the
 * saved pc its line is at into *spc: 0, or -1 if the slot holds no
 * function, or a Lua one whose code that pc is not in. L->ci's frame is
 * at L->savedpc; read running, at its CallInfo's saved pc if not there:
 * it has called since the lua_State was copied, or is returning. */
static int fn_by_slot(lr_sr *d, const uint8_t *ls, const uint8_t *c, walk *w, uint32_t i,
                      const void **spc)
{
    int at_l = i == w->n;
    if (lr_int_at(w->tv, TV_TT) != LUA_TFUNCTION || read_closure(d, lr_ptr_at(w->tv, 0)))
        return -1;
    *spc = at_l ? lr_ptr_at(ls, LS_SAVEDPC) : lr_ptr_at(c, CI_SAVEDPC);
    if (d->k_c[CL_ISC] || pc_in(d->k_p, *spc, at_l))
        return 0;
    *spc = lr_ptr_at(c, CI_SAVEDPC);
    return at_l && d->running && pc_in(d->k_p, *spc, 0) ? 0 : -1;
}

/* Frame i's function by its saved pc, among the functions seen before
 * whose Proto still holds that code, into d->k_c (d->k_p): 0, or -1. Read
 * running only: the copy of a thread spans a microsecond or more, and a
 * recursion as fast as fib calls and returns under it, so a frame's slot
 * often holds its callee's result by then (up to nine reads of fib in ten
 * were dropped so). Only a frame whose slot holds no function (it
 * returned: the result is there), in the top window copied within
 * SNAP_QUICK_US: its CallInfo is of a frame that ran in that time. A slot
 * holding another function is a frame made since, not yet called through
 * (its saved pc still its last occupant's): told by that pc, the x
 * recursion outsiderecorddeep ends read above the y one it begins. L->ci's
 * pc is L->savedpc, unless that is its caller's call (a C function runs,
 * or a call is half made: its function is not known). */
static int fn_by_code(lr_sr *d, const uint8_t *ls, const uint8_t *c, walk *w, uint32_t i,
                      const void **spc)
{
    int at_l = i == w->n;
    const uint8_t *below = at_l ? ci_copied(d, ls, i - 1) : NULL;
    const lr_code_fn *f;
    *spc = at_l ? lr_ptr_at(ls, LS_SAVEDPC) : lr_ptr_at(c, CI_SAVEDPC);
    if (!d->running || !d->sn_quick || lr_int_at(w->tv, TV_TT) == LUA_TFUNCTION ||
        (at_l && (!below || lr_ptr_at(below, CI_SAVEDPC) == *spc)))
        return -1;
    for (uint32_t at = 0; (f = lr_code_find(&d->code, *spc, &at)); at++)
        if (!read_closure(d, f->cl) && !d->k_c[CL_ISC] && lr_ptr_at(d->k_c, CL_FP) == f->pr &&
            lr_ptr_at(d->k_p, PR_CODE) == f->code && pc_in(d->k_p, *spc, at_l))
            return 0;
    return -1;
}

/* Frame i, of CallInfo c (copied; its function's slot in w->tv): its
 * function and line onto d->fr, its Proto and pc (if Lua) into w->pr and
 * *pc for naming the frame above. Returns -1 if the frame cannot be read
 * or is not a frame of its function, else 1 if it has lost tail calls. */
static int read_frame(lr_sr *d, lr_sr_thread *t, const uint8_t *ls, const uint8_t *c, walk *w,
                      uint32_t i, lr_sr_func **fo, int *pc)
{
    const void *spc;
    w->by_code = 0;
    if (fn_by_slot(d, ls, c, w, i, &spc) && (w->by_code = 1, fn_by_code(d, ls, c, w, i, &spc)))
        return -1;
    const uint8_t *cl = d->k_c;
    const void *clp = d->k_cl;
    *pc = -1;
    if (!cl[CL_ISC]) {
        memcpy(w->pr, d->k_p, PR_READ);
        if (d->running) /* fn_by_code's, which a stopped read never asks */
            lr_code_note(&d->code, clp, lr_ptr_at(cl, CL_FP), w->pr);
    }
    lr_sr_func *f = func_of(d, clp, cl, w->pr);
    if (!f || d->nfr == MAX_FRAMES) {
        d->flags |= LT_DUMP_TRUNCATED;
        return -1;
    }
    if (!cl[CL_ISC])
        *pc = pc_of(w->pr, spc);
    if (i == w->top) {
        t->top_c = cl[CL_ISC];
        t->target = resumed(d, c, cl, f);
    }
    d->fr[d->nfr++] =
        (lr_sr_frame){(uint32_t)(f - d->fn), cl[CL_ISC] ? 0 : cached_line(d, w->pr, *pc), 0};
    *fo = f;
    /* a Lua frame with lost tail calls was not called by the frame below */
    return !cl[CL_ISC] && lr_int_at(c, CI_TAILCALLS) > 0;
}

/* Whether CallInfo c can be the caller of up (the frame above it): up's
 * function lies in c's frame, above its base. */
static int calls(const uint8_t *c, const uint8_t *up)
{
    const char *func = lr_ptr_at(c, CI_FUNC), *b = lr_ptr_at(c, CI_BASE);
    return func < b && (!up || (const char *)lr_ptr_at(up, CI_FUNC) >= b);
}

/* Whether a running thread's top CallInfo c is its frame: L->base is
 * c's base but while a call (luaD_precall) or a return (luaD_poscall) is
 * half done, c still a returned frame's or c's function not yet its base's
 * (a yielded thread's base is its yield's values). Asked of a process held
 * stopped only: read as it runs, c is copied a moment after L->base. */
static int settled(const uint8_t *c, const uint8_t *ls)
{
    return ls[LS_STATUS] != 0 || lr_ptr_at(c, CI_BASE) == lr_ptr_at(ls, LS_BASE);
}

/* A C function runs, and calls, with L->savedpc what the Lua frame below
 * it saved when it called in: C frames (which save it when they call;
 * L->savedpc for the top one) down to that Lua frame agree on it. A C
 * function called in the slot of a Lua frame that returned, or of one
 * that ran when the lua_State was copied, does not. *cpc: the C frames'
 * since the last Lua frame (NULL: none). */
static int c_agrees(const uint8_t *c, const uint8_t *ls, int isC, int top, const void **cpc)
{
    /* on top, L->savedpc: copied with c, where its slot was copied after */
    const void *spc = lr_ptr_at(top ? ls : c, top ? LS_SAVEDPC : CI_SAVEDPC);
    if (!isC && top)
        return 1;
    if (*cpc && spc != *cpc)
        return 0;
    *cpc = isC ? spc : NULL;
    return 1;
}

/* Whether a Lua frame whose saved pc is savedpc is in a tail call: its
 * callee, a Lua function, is about to be moved down into its place (a
 * stack of both never was). The opcodes looked up are kept (a recursion
 * through a few call sites reads each once). */
static int in_tailcall(lr_sr *d, const void *savedpc)
{
    unsigned h = (unsigned)((uintptr_t)savedpc >> 2) % OP_CACHE;
    if (savedpc != d->op_key[h]) {
        uint32_t i;
        if (peek((const uint32_t *)savedpc - 1, &i, sizeof i))
            return 1;
        d->op_key[h] = savedpc;
        d->op_val[h] = (uint8_t)op_of(i);
    }
    return d->op_val[h] == OP_TAILCALL;
}

/* Names the frame above (w->callee) by the call of Lua frame f (CallInfo
 * c, at pc): at once if the process is held stopped, else its call site
 * kept, named once the read is over. Not where either frame was told by
 * its pc: its slot holds no closure of that call. */
static void name_callee(lr_sr *d, walk *w, const uint8_t *c, const lr_sr_func *f, int pc)
{
    lr_sr_func *callee = w->callee;
    if (!callee || w->tail || callee->call[0] || callee->site.pr || f->isC || w->by_code ||
        w->up_by_code)
        return;
    lr_sr_site st = {.pr = lr_ptr_at(d->k_c, CL_FP), .cl = lr_ptr_at(w->tv, 0),
                     .env = lr_ptr_at(d->k_c, CL_ENV), .base = lr_ptr_at(c, CI_BASE), .pc = pc,
                     .func = lr_ptr_at(w->up, CI_FUNC), .callee = lr_ptr_at(w->up_tv, 0)};
    if (!d->running)
        call_name(d, &st, w->pr, callee->call, sizeof callee->call);
    else if (!read_slot(d, st.func + TV_SIZE, st.arg1)) /* self, in the window */
        callee->site = st; /* named later, if needed: checking other sites costs */
}

/* Frame i of thread t onto d->fr, checked against the frame above it:
 * 0, or -1 if the two cannot be read as of one moment. */
static int walk_frame(lr_sr *d, lr_sr_thread *t, const uint8_t *ls, walk *w, uint32_t i)
{
    lr_sr_func *f;
    int pc;
    const uint8_t *up = i < w->top ? w->up : NULL;
    const uint8_t *c = ci_at(d, t->L, ls, i, up, w->up_tv, w->tv);
    /* L->base tells a call half made only in a process held stopped: read
     * running, its lua_State and CallInfos are copied moments apart */
    int k = c && calls(c, up) && (i < w->n || d->running || settled(c, ls))
                ? read_frame(d, t, ls, c, w, i, &f, &pc)
                : -1;
    /* a C function below a frame told by its pc: most likely called in
     * the slot of that frame's caller, which returned under the copy (its
     * slot copied after the CallInfos): io.open "calling" fib's stale
     * frames, 1 run in 13 of attach-outsiderecordlivec. A C function has
     * no saved pc to tell it apart from one that did call Lua: refused */
    if (k >= 0 && (!c_agrees(c, ls, f->isC, i == w->n, &w->cpc) || (w->up_by_code && f->isC) ||
                   (w->callee && !w->callee->isC && !f->isC &&
                    in_tailcall(d, lr_ptr_at(c, CI_SAVEDPC))))) {
        d->nfr--;
        k = -1;
    }
    if (k < 0)
        return -1;
    d->fr[d->nfr - 1].depth = i;
    t->n++;
    name_callee(d, w, c, f, pc);
    w->callee = f;
    w->tail = k;
    w->up_by_code = w->by_code;
    memcpy(w->up, c, CI_SIZE);
    memcpy(w->up_tv, w->tv, TV_SIZE);
    return 0;
}

/* Every frame of thread L, top first; names callees from their callers.
 * Copied window by window (one process_vm_readv each, the top one first:
 * snapshot, next_window), each frame checked against the one above it.
 * Read running, a top frame caught moving (a C function returning, a
 * call half made, or one that returned before its CallInfo was copied) is
 * left out and its caller is the top: dropped, such reads left top with
 * a fifth to three quarters of fib's share. */
static void read_thread(lr_sr *d, const void *L)
{
    uint8_t ls[LS_READ];
    walk w;
    if (d->nth == MAX_THREADS)
        d->flags |= LT_DUMP_TRUNCATED;
    if (d->nth == MAX_THREADS || peek(L, ls, sizeof ls) || ls[LS_TT] != LUA_TTHREAD ||
        lr_ptr_at(ls, LS_G) != d->g)
        return;
    lr_sr_thread *t = &d->th[d->nth++];
    *t = (lr_sr_thread){.L = L, .first = d->nfr};
    if (snapshot(d, L, ls)) {
        t->torn = 1;
        return;
    }
    memset(&w, 0, sizeof w);
    w.n = w.top = (uint32_t)(((const char *)lr_ptr_at(ls, LS_CI) -
                              (const char *)lr_ptr_at(ls, LS_BASE_CI)) / CI_SIZE);
    uint32_t i;
    for (i = w.n; i >= 1; i--) {
        if (!walk_frame(d, t, ls, &w, i))
            continue;
        if (i != w.n || i < 2 || !d->running)
            break;
        w.top = i - 1; /* caught moving: its caller on top */
    }
    t->torn = i >= 1 && d->nfr < MAX_FRAMES;
    d->sn_nci = d->sn_ntv = d->sn_quick = 0;
    d->sn_far = NULL;
    t->active = ls[LS_STATUS] == 0 && t->n > 0;
    t->dead = ls[LS_STATUS] > LUA_YIELD;
}

/* }====== */

/* {====== names from the globals and package.loaded */

/* Calls visit(d, node, ud) on the nodes of table t's hash part, copied 16
 * at a time, until it answers nonzero; with budgeted, while d->budget
 * lasts (the naming's bound on what it reads). Returns that answer, 0 at
 * the end, -1 when t is no table or a read fails. */
static int each_node(lr_sr *d, int budgeted, const void *t,
                     int (*visit)(lr_sr *d, const uint8_t *node, void *ud), void *ud)
{
    uint8_t tb[TB_READ], nd[16 * ND_SIZE];
    if (peek(t, tb, sizeof tb) || tb[TB_TT] != LUA_TTABLE || tb[TB_LSIZENODE] > 26)
        return -1;
    uint32_t size = 1u << tb[TB_LSIZENODE];
    const uint8_t *node = lr_ptr_at(tb, TB_NODE);
    for (uint32_t i = 0; i < size && i < SCAN_MAX && (!budgeted || d->budget >= 16); i += 16) {
        uint32_t m = size - i < 16 ? size - i : 16;
        d->budget -= budgeted ? 16 : 0;
        if (peek(node + (size_t)i * ND_SIZE, nd, (size_t)m * ND_SIZE))
            return -1;
        for (uint32_t j = 0; j < m; j++) {
            int k = visit(d, nd + j * ND_SIZE, ud);
            if (k)
                return k;
        }
    }
    return 0;
}

typedef struct get_ctx {
    const char *want;
    uint8_t *tv;
} get_ctx;

static int get_visit(lr_sr *d, const uint8_t *e, void *ud)
{
    get_ctx *g = ud;
    char key[NAME_MAX_];
    (void)d;
    if (lr_int_at(e, ND_KEYTT) != LUA_TSTRING ||
        tstring(lr_ptr_at(e, ND_KEY), key, sizeof key, 0) < 0 || strcmp(key, g->want))
        return 0;
    memcpy(g->tv, e, TV_SIZE);
    return 1;
}

/* The value under string key want in table t's hash part, copied to tv:
 * 1, 0 if there is none, -1 if t cannot be read. */
static int raw_find(lr_sr *d, const void *t, const char *want, uint8_t tv[TV_SIZE])
{
    get_ctx g = {want, tv};
    return each_node(d, 0, t, get_visit, &g);
}

/* The same: 0 if found, else -1. */
static int raw_get(lr_sr *d, const void *t, const char *want, uint8_t tv[TV_SIZE])
{
    return raw_find(d, t, want, tv) == 1 ? 0 : -1;
}

/* Offers "prefix.key" for node e if its value is a function of ours;
 * keeps the shortest (ties: smaller bytes), as co_func's scan_table. */
static int name_visit(lr_sr *d, const uint8_t *e, void *ud)
{
    const char *prefix = ud;
    if (lr_int_at(e, TV_TT) != LUA_TFUNCTION || lr_int_at(e, ND_KEYTT) != LUA_TSTRING)
        return 0;
    const void *cl = lr_ptr_at(e, 0);
    uint8_t c[CL_READ];
    int have_c = 0;
    for (uint32_t k = 0; k < d->nfn; k++) {
        lr_sr_func *f = &d->fn[k];
        if (f->isC && !have_c)
            have_c = peek(cl, c, sizeof c) ? -1 : 1;
        if (f->isC ? have_c < 0 || !c[CL_ISC] || lr_ptr_at(c, CL_FP) != f->key : cl != f->cl)
            continue;
        char key[NAME_MAX_], cand[NAME_MAX_];
        if (tstring(lr_ptr_at(e, ND_KEY), key, sizeof key, 0) < 0 ||
            join(cand, sizeof cand, prefix, key))
            continue;
        size_t cl_ = slen(cand), bl = slen(f->name);
        if (!f->name[0] || cl_ < bl || (cl_ == bl && strcmp(cand, f->name) < 0))
            memcpy(f->name, cand, cl_ + 1);
    }
    return 0;
}

/* Names the functions of every table value of package.loaded (node e)
 * under a string key but "_G". */
static int module_visit(lr_sr *d, const uint8_t *e, void *ud)
{
    char key[NAME_MAX_];
    (void)ud;
    if (lr_int_at(e, TV_TT) == LUA_TTABLE && lr_int_at(e, ND_KEYTT) == LUA_TSTRING &&
        tstring(lr_ptr_at(e, ND_KEY), key, sizeof key, 0) >= 0 && strcmp(key, "_G"))
        each_node(d, 1, lr_ptr_at(e, 0), name_visit, key);
    return 0;
}

/* Names d's functions by the globals and package.loaded of main. */
static void name_from_tables(lr_sr *d, const void *main)
{
    uint8_t ls[LS_READ], reg[TV_SIZE];
    d->budget = SCAN_TOTAL;
    if (peek(main, ls, sizeof ls))
        return;
    if (lr_int_at(ls, LS_GT + TV_TT) == LUA_TTABLE)
        each_node(d, 1, lr_ptr_at(ls, LS_GT), name_visit, (void *)"");
    if (peek((const char *)d->g + G_REGISTRY, reg, sizeof reg) || lr_int_at(reg, TV_TT) != LUA_TTABLE)
        return;
    uint8_t loaded[TV_SIZE];
    if (!raw_get(d, lr_ptr_at(reg, 0), "_LOADED", loaded) && lr_int_at(loaded, TV_TT) == LUA_TTABLE)
        each_node(d, 1, lr_ptr_at(loaded, 0), module_visit, NULL);
}

/* Copies the header of each call site's self, if a table, once the walk
 * is over (a read made running): an object made for one call may be freed
 * soon after, before the site is named. */
static void copy_selves(lr_sr *d)
{
    for (uint32_t i = 0; i < d->nfn; i++) {
        lr_sr_site *st = &d->fn[i].site;
        if (st->pr && lr_int_at(st->arg1, TV_TT) == LUA_TTABLE &&
            peek(lr_ptr_at(st->arg1, 0), st->self_tb, TB_READ))
            memset(st->arg1, 0xff, TV_SIZE); /* no type: not known */
    }
}

/* Names the functions of a read made running that have no other name by
 * the call site they were first seen called from. */
static void name_at_sites(lr_sr *d)
{
    uint8_t pr[PR_READ];
    for (uint32_t i = 0; i < d->nfn; i++) {
        lr_sr_func *f = &d->fn[i];
        if (f->site.pr && !f->name[0] && !f->call[0] && !f->main &&
            !peek(f->site.pr, pr, sizeof pr) && pr[PR_TT] == LUA_TPROTO_)
            call_name(d, &f->site, pr, f->call, sizeof f->call);
        f->site.pr = NULL;
    }
}

void lr_sr_name_functions(lr_sr *d, const void *main)
{
    begin(d);
    name_at_sites(d); /* first: what the read saw changes as the process runs */
    name_from_tables(d, main);
}

/* }====== */

/* {====== records */

static uint8_t *room(lr_sr *d, size_t n)
{
    if (d->nout + n > sizeof d->out) {
        d->flags |= LT_DUMP_TRUNCATED;
        return NULL;
    }
    return d->out + d->nout;
}

static uint32_t put_str(lr_sr *d, const char *s, size_t n)
{
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

static void sanitize(char *s)
{
    for (; *s; s++)
        if (*s == ';')
            *s = ',';
        else if (*s == '\n' || *s == '\r')
            *s = ' ';
}

/* The source as co_func shows it: "@file" -> file, else Lua's short_src. */
static size_t source_label(const void *ts, char *out, size_t cap)
{
    static char raw[LT_STR_MAX + 1];
    int n = tstring(ts, raw, sizeof raw, 1);
    if (n < 0)
        n = 0, raw[0] = 0;
    size_t k = 0;
    if (raw[0] == '@' || raw[0] == '=') { /* '=': LUA_IDSIZE - 1 bytes at most */
        size_t lim = raw[0] == '=' ? LUA_IDSIZE - 1 : cap - 1;
        for (int i = 1; i < n && k < lim && k < cap - 1; i++)
            out[k++] = raw[i];
    } else { /* [string "first line..."], as luaO_chunkid */
        const char *pre = "[string \"";
        size_t line = 0, lim = LUA_IDSIZE - 17;
        while (line < (size_t)n && raw[line] != '\n' && raw[line] != '\r')
            line++;
        int cut = line > lim || line < (size_t)n;
        if (line > lim)
            line = lim;
        for (; *pre; pre++)
            out[k++] = *pre;
        for (size_t i = 0; i < line; i++)
            out[k++] = raw[i];
        for (const char *s = cut ? "...\"]" : "\"]"; *s; s++)
            out[k++] = *s;
    }
    out[k] = 0;
    return k;
}

/* A generator's name, as the collector gives it (co_func.c's
 * wrap_body_name): coroutine.wrap(FILE:LINE), where its body is defined,
 * FILE without its directory. */
static const char *wrap_name(const lr_sr_func *f, char *buf, size_t cap)
{
    static char src[LT_STR_MAX + 64];
    char num[12];
    size_t k = 0, n = 0;
    char at[2] = {0};
    source_label(f->body_src, src, sizeof src);
    tstring(f->body_src, at, sizeof at, 1); /* '@': a file, named without its directory */
    const char *file = at[0] == '@' && strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
    unsigned line = f->body_line > 0 ? (unsigned)f->body_line : 0;
    do /* no stdio: the signal handler names frames too */
        num[n++] = (char)('0' + line % 10);
    while ((line /= 10) && n < sizeof num);
    const char *part[] = {"coroutine.wrap(", file, ":"};
    for (size_t i = 0; i < 3; i++)
        for (const char *c = part[i]; *c && k + 1 < cap; c++)
            buf[k++] = *c;
    while (n && k + 1 < cap)
        buf[k++] = num[--n];
    if (k + 1 < cap)
        buf[k++] = ')';
    buf[k] = 0;
    return buf;
}

/* Lua's name for a function a generic for calls: none a reader looks up. */
static int for_site(const char *name)
{
    return !strcmp(name, "(for generator)");
}

const char *lr_sr_func_name(const lr_sr *d, const lr_sr_func *f, char *buf, size_t cap)
{
    g_pid = d->pid;
    return f->main                            ? "main chunk"
           : f->key && f->key == d->self_fn ? "luaopen_luatrace"
           : f->name[0]                       ? f->name
           : f->call[0] && !(f->body_src && for_site(f->call)) ? f->call
           : f->body_src                      ? wrap_name(f, buf, cap)
           : f->isC && d->c_module && d->c_module(d, f->key, buf, cap) ? buf
                                                                       : "function";
}

size_t lr_sr_func_source(const lr_sr *d, const lr_sr_func *f, char *out, size_t cap)
{
    g_pid = d->pid;
    if (f->isC) {
        memcpy(out, "[C]", 4);
        return 3;
    }
    return source_label(f->src, out, cap);
}

static void put_funcs(lr_sr *d)
{
    static char src[LT_STR_MAX + 64], nb[256];
    for (uint32_t i = 0; i < d->nfn; i++) {
        lr_sr_func *f = &d->fn[i];
        for (uint32_t j = 0; j < i && !f->src_sid; j++)
            if (!f->isC && d->fn[j].src == f->src && !d->fn[j].isC)
                f->src_sid = d->fn[j].src_sid;
        if (!f->src_sid) {
            size_t n = f->isC ? (memcpy(src, "[C]", 4), 3) : source_label(f->src, src, 4096);
            sanitize(src);
            f->src_sid = put_str(d, src, n);
        }
        const char *name = lr_sr_func_name(d, f, nb, sizeof nb);
        memcpy(src, name, slen(name) + 1);
        sanitize(src);
        uint32_t name_sid = put_str(d, src, slen(src));
        uint8_t *p = room(d, 64);
        if (!p || !f->src_sid || !name_sid)
            return;
        uint8_t *q = lt_put_func(p, f->fid, f->isC ? LT_WHAT_C : f->main ? LT_WHAT_MAIN : LT_WHAT_LUA,
                                 f->src_sid, name_sid, f->linedef, f->lastline, f->flags);
        d->nout += (size_t)(q - p);
    }
}

/* THREAD, START, the thread's FRAMEs, and a RESUME if it was resumed by
 * the previous one: as co_attach's attach_all sends them. A thread's id is
 * its place in d->th, plus one: ids are the message's own. */
static void put_thread(lr_sr *d, const lr_sr_thread *t, unsigned reason, int resume)
{
    uint32_t id = (uint32_t)(t - d->th) + 1;
    uint8_t *p = room(d, 2 * LT_EVENT_HOT_MAX);
    if (!p)
        return;
    uint8_t *q = lt_put_head(p, LT_EV_THREAD, 2);
    q = lt_put_uint(q, id);
    q = lt_put_uint(q, (uint64_t)(uintptr_t)t->L);
    q = lt_put_head(q, LT_EV_START, 2);
    q = lt_put_uint(q, id);
    q = lt_put_uint(q, reason);
    d->nout += (size_t)(q - p);
    for (uint32_t i = 0; i < t->n; i++) {
        const lr_sr_frame *f = &d->fr[t->first + i];
        if (!(p = room(d, LT_EVENT_HOT_MAX)))
            return;
        q = lt_put_head(p, LT_EV_FRAME, 3);
        q = lt_put_uint(q, f->depth);
        q = lt_put_uint(q, d->fn[f->fn].fid);
        q = lt_put_uint(q, f->line);
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

/* The running threads in resume order: main (or another running one),
 * then the thread each resumes; running threads resumed from C follow. */
static void make_chain(lr_sr *d, const void *main)
{
    int cur = -1;
    for (uint32_t i = 0; i < d->nth; i++)
        if (d->th[i].active && (cur < 0 || d->th[i].L == main))
            cur = (int)i;
    while (cur >= 0 && d->nchain < MAX_THREADS) {
        d->th[cur].in_chain = 1;
        d->chain[d->nchain++] = (uint32_t)cur;
        int next = -1;
        for (uint32_t i = 0; i < d->nth; i++)
            if (d->th[i].active && !d->th[i].in_chain &&
                (next < 0 || d->th[i].L == d->th[cur].target))
                next = (int)i;
        cur = next;
    }
}

/* }====== */

/* Reads the stack of every thread on the GC list but main. In our own
 * process the list is read in place, as co_attach's handler does; another
 * process's is copied a header at a time (recorderd walks it with
 * rd_gcwalk instead, while the process runs). At most WALK_MAX objects,
 * and a list that loops is left at once: Brent's check, the object kept at
 * each power of two steps met again. */
static void walk_threads(lr_sr *d, const void *main)
{
    uint8_t g[G_ROOTGC + 8], h[LS_MARKED + 1];
    int local = d->pid == getpid();
    if (local)
        memcpy(g, d->g, sizeof g);
    else if (peek(d->g, g, sizeof g))
        return;
    unsigned otherwhite = (unsigned)(g[G_CURWHITE] ^ 3) & 3;
    const void *seen = NULL;
    size_t n = 0, power = 1;
    for (const uint8_t *o = lr_ptr_at(g, G_ROOTGC); o && o != seen && n < WALK_MAX; n++) {
        if (n + 1 == power) {
            seen = o;
            power *= 2;
        }
        if (local)
            memcpy(h, o, sizeof h);
        else if (peek(o, h, sizeof h))
            return;
        if (h[LS_TT] == LUA_TTHREAD && o != main && !(h[LS_MARKED] & otherwhite))
            read_thread(d, o);
        o = lr_ptr_at(h, 0);
    }
}

/* Whether thread L was read already. */
static int known(const lr_sr *d, const void *L)
{
    for (uint32_t j = 0; j < d->nth; j++)
        if (d->th[j].L == L)
            return 1;
    return 0;
}

/* Reads the threads that the threads read so far resume, in turn: the
 * running chain, without the GC list. */
static void follow_resumed(lr_sr *d)
{
    for (uint32_t i = 0; i < d->nth; i++)
        if (d->th[i].target && !known(d, d->th[i].target))
            read_thread(d, d->th[i].target);
}

/* Reads main's stack: 0, or -1 if main is no thread. */
static int read_start(lr_sr *d, const void *main)
{
    uint8_t ls[LS_READ];
    begin(d);
    d->nth = d->nfn = d->nfr = d->nchain = 0;
    d->k_cl = NULL; /* nothing cached from another read */
    memset(d->kc, 0, sizeof d->kc);
    memset(d->kl, 0, sizeof d->kl);
    memset(d->op_key, 0, sizeof d->op_key);
    d->nout = 0;
    d->next_sid = 0;
    d->flags = 0;
    d->late = 0;
    if (peek(main, ls, sizeof ls) || !(d->g = lr_ptr_at(ls, LS_G)))
        return -1;
    read_thread(d, main);
    return 0;
}

void lr_sr_read(lr_sr *d, const void *main, int walk_ok)
{
    if (!read_start(d, main)) {
        if (walk_ok)
            walk_threads(d, main);
        else
            follow_resumed(d);
        make_chain(d, main);
        copy_selves(d);
    }
    d->late = g_late;
}

/* Whether thread L (found earlier) is still one of the state's, not a
 * dead one the collector is about to free (white of the other kind). */
static int still_live(const lr_sr *d, const void *L, unsigned otherwhite)
{
    uint8_t h[LS_G + 8];
    return !peek(L, h, sizeof h) && h[LS_TT] == LUA_TTHREAD && lr_ptr_at(h, LS_G) == d->g &&
           !(h[LS_MARKED] & otherwhite);
}

void lr_sr_read_threads(lr_sr *d, const void *main, const void *const *th, size_t n)
{
    uint8_t g[G_CURWHITE + 1];
    if (!read_start(d, main) && !peek(d->g, g, sizeof g)) {
        unsigned otherwhite = (unsigned)(g[G_CURWHITE] ^ 3) & 3;
        follow_resumed(d); /* the running chain first: it may be new since th was found */
        for (size_t i = 0; i < n; i++)
            if (th[i] != main && still_live(d, th[i], otherwhite) && !known(d, th[i]))
                read_thread(d, th[i]);
        follow_resumed(d); /* a chain that a thread resumed from C runs */
        make_chain(d, main);
        copy_selves(d);
    }
    d->late = g_late;
}

static void lr_sr_records(lr_sr *d, const void *main)
{
    begin(d);
    g_deadline_us = 0; /* a few reads a function: the names, late or not, are written */
    const lr_sr_thread *run = d->nchain ? &d->th[d->chain[d->nchain - 1]] : NULL;
    if (!run || run->top_c)
        d->flags |= LT_DUMP_IN_C;
    if (!d->nth)
        return;
    put_funcs(d);
    if (!d->nchain) /* no Lua running at all: an empty main thread */
        put_thread(d, &d->th[0], LT_R_BEGIN, 0);
    for (uint32_t c = 0; c < d->nchain; c++)
        put_thread(d, &d->th[d->chain[c]], c ? LT_R_HOOKED : LT_R_BEGIN, c > 0);
    for (uint32_t i = 0; i < d->nth; i++)
        if (!d->th[i].in_chain && d->th[i].n && d->th[i].L != main && !d->th[i].dead)
            put_thread(d, &d->th[i], LT_R_HOOKED, 0);
}

void lr_sr_finish(lr_sr *d, const void *main)
{
    if (!d->nth)
        return;
    lr_sr_name_functions(d, main);
    lr_sr_records(d, main);
}

void lr_sr_collect(lr_sr *d, const void *main, int walk_ok)
{
    lr_sr_read(d, main, walk_ok);
    lr_sr_finish(d, main);
}

/* {====== the special functions, read from the globals */

/* The lua_CFunction of t[key], if a C function. */
static const void *c_function(lr_sr *d, const void *t, const char *key)
{
    uint8_t tv[TV_SIZE], c[CL_READ];
    if (raw_get(d, t, key, tv) || lr_int_at(tv, TV_TT) != LUA_TFUNCTION ||
        peek(lr_ptr_at(tv, 0), c, sizeof c) || c[CL_TT] != LUA_TFUNCTION || !c[CL_ISC])
        return NULL;
    return lr_ptr_at(c, CL_FP);
}

void lr_sr_find_specials(lr_sr *d, const void *main)
{
    uint8_t ls[LS_READ], tv[TV_SIZE];
    begin(d);
    memset(d->cf, 0, sizeof d->cf);
    if (peek(main, ls, sizeof ls) || lr_int_at(ls, LS_GT + TV_TT) != LUA_TTABLE)
        return;
    const void *gt = lr_ptr_at(ls, LS_GT);
    d->cf[0] = c_function(d, gt, "pcall");
    d->cf[1] = c_function(d, gt, "xpcall");
    if (raw_get(d, gt, "coroutine", tv) || lr_int_at(tv, TV_TT) != LUA_TTABLE)
        return;
    d->cf[2] = c_function(d, lr_ptr_at(tv, 0), "resume");
    d->cf[4] = c_function(d, lr_ptr_at(tv, 0), "yield");
}

/* }====== */
