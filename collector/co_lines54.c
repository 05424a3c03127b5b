/* co_lines54: Lua 5.4's executable lines, the LINES records (lt_event.h),
 * in the 5.4 build: co_jitlines.c's entry points for PUC Lua 5.4.
 *
 * recorderd compiles a source with its own Lua 5.1 for coverage's
 * executable lines; for a 5.4 program that is wrong (5.4's syntax fails to
 * compile, and 5.4 puts code on other lines: a loop's end, <close>, a
 * multi-line assignment). So, as under LuaJIT, when describe (co_func.c)
 * writes the FUNC of a Lua function, the lines of its prototype and of
 * every prototype nested in it follow: a function never called still has
 * its lines counted (lua_getinfo's "L" gives a function's own lines only,
 * and only for a closure, which an uncalled nested function has not).
 *
 * They are read from 5.4's Proto (lobject.h, not installed by
 * liblua5.4-dev): lineinfo, a signed byte delta per instruction, or
 * ABSLINEINFO where abslineinfo holds the line; p, the nested prototypes.
 * co_jit_lines_check, at load, reads a probe chunk and its nested function
 * and compares every line with what lua_getinfo's "L" (activelines) says
 * of both, which also settles 5.4.4's rule (a vararg function's first
 * instruction, VARARGPREP, has no line) against 5.4.0's. Any mismatch
 * (another layout, a 32-bit build): no LINES at all, as before. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "co_mem.h"
#include "co_state.h"

/* Offsets in LClosure and Proto on a 64-bit build, 5.4.0 to 5.4.7. */
#define L54_CL_P 24       /* LClosure's p */
#define L54_VARARG 11     /* Proto's is_vararg */
#define L54_SIZELINE 28   /* sizelineinfo */
#define L54_SIZEP 32      /* sizep */
#define L54_SIZEABS 40    /* sizeabslineinfo */
#define L54_LINEDEF 44    /* linedefined */
#define L54_LASTLINE 48   /* lastlinedefined */
#define L54_P 72          /* p */
#define L54_SIZECODE 24   /* sizecode */
#define L54_CODE 64       /* code */
#define L54_LINEINFO 88   /* lineinfo */
#define L54_ABS 96        /* abslineinfo: {int pc; int line;} */
#define L54_VLCL 6        /* tt of a Lua closure: LUA_VLCL */
#define L54_VPROTO 10     /* of a prototype: LUA_VPROTO */
#define L54_ABSLINE (-0x80) /* lineinfo's mark of an absolute line */
/* opcodes (lopcodes.h, 5.4.0 to 5.4.7) */
#define L54_OP_MMBIN 46    /* OP_MMBIN, MMBINI, MMBINK: 46 to 48 */
#define L54_OP_JMP 56
#define L54_OP_FORLOOP 73
#define L54_OP_TFORLOOP 77
#define L54_DEPTH 256     /* nesting walked at most (5.4's parser: 200) */
#define L54_MAX (1 << 24) /* a prototype claiming more is not read */

static int g_ok;        /* the layout verified */
static int g_skip_prep; /* 5.4.4 on: a vararg function's pc 0 has no line */

static int i32_at(const uint8_t *p)
{
    int v;
    memcpy(&v, p, sizeof v);
    return v;
}

static const uint8_t *ptr_at(const uint8_t *p)
{
    const uint8_t *v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The prototype of the Lua closure fn, or NULL. */
static const uint8_t *proto_of(const uint8_t *fn)
{
    const uint8_t *pt = fn && fn[L54_TT] == L54_VLCL ? ptr_at(fn + L54_CL_P) : NULL;
    return pt && pt[L54_TT] == L54_VPROTO ? pt : NULL;
}

/* A growing list of lines. */
typedef struct l54_set {
    uint32_t *v;
    size_t n, cap;
    int oom;
} l54_set;

static void set_add(l54_set *s, int line)
{
    if (line < 0 || s->oom)
        return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        uint32_t *v = co_mem_realloc(s->v, s->cap * sizeof *v, cap * sizeof *v);
        if (!v) {
            s->oom = 1;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (uint32_t)line;
}

/* The lines of pt's own instructions, as 5.4's collectvalidlines walks
 * them: from linedefined, a delta each, or an absolute line. */
static void own_lines(const uint8_t *pt, int skip_prep, l54_set *out)
{
    const int8_t *li = (const int8_t *)ptr_at(pt + L54_LINEINFO);
    const uint8_t *abs = ptr_at(pt + L54_ABS);
    int n = i32_at(pt + L54_SIZELINE), nabs = i32_at(pt + L54_SIZEABS);
    int line = i32_at(pt + L54_LINEDEF), k = 0;
    if (!li || n <= 0 || n > L54_MAX || nabs < 0 || nabs > L54_MAX)
        return;
    for (int pc = 0; pc < n; pc++) {
        if (li[pc] != L54_ABSLINE) {
            line += li[pc];
        } else {
            while (k < nabs && i32_at(abs + 8 * k) < pc)
                k++;
            if (k >= nabs || i32_at(abs + 8 * k) != pc)
                return; /* no absolute line where the mark says: not ours */
            line = i32_at(abs + 8 * k + 4);
        }
        if (!(pc == 0 && skip_prep && pt[L54_VARARG]))
            set_add(out, line);
    }
}

/* The lines of pt and of the prototypes nested in it; their ranges
 * (linedefined, lastlinedefined) into nest, two entries each. */
static void all_lines(const uint8_t *pt, l54_set *out, l54_set *nest, int depth)
{
    own_lines(pt, g_skip_prep, out);
    const uint8_t *p = ptr_at(pt + L54_P);
    int n = i32_at(pt + L54_SIZEP);
    for (int i = 0; p && depth < L54_DEPTH && i >= 0 && i < n && i < L54_MAX; i++) {
        const uint8_t *c = ptr_at(p + i * sizeof(void *));
        if (!c || c[L54_TT] != L54_VPROTO)
            continue;
        set_add(nest, i32_at(c + L54_LINEDEF));
        set_add(nest, i32_at(c + L54_LASTLINE));
        all_lines(c, out, nest, depth + 1);
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void set_sort(l54_set *s)
{
    size_t w = 0;
    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, cmp_u32);
    for (size_t i = 0; i < s->n; i++)
        if (!w || s->v[w - 1] != s->v[i])
            s->v[w++] = s->v[i];
    s->n = w;
}

/* {====== the check, at load: what we read against activelines */

/* Whether the closure at the top has, by own_lines, exactly the lines
 * lua_getinfo's "L" gives; pops it. */
static int same_lines(lua_State *L, int skip_prep)
{
    const uint8_t *pt = proto_of(lua_topointer(L, -1));
    l54_set mine = {0};
    lua_Debug ar;
    int ok = 0;
    if (pt)
        own_lines(pt, skip_prep, &mine);
    set_sort(&mine);
    if (lua_getinfo(L, ">L", &ar) && lua_istable(L, -1) && pt && !mine.oom) {
        size_t n = 0;
        ok = 1;
        for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1), n++)
            ok = ok && lua_isinteger(L, -2) &&
                 bsearch(&(uint32_t){(uint32_t)lua_tointeger(L, -2)}, mine.v, mine.n,
                         sizeof *mine.v, cmp_u32);
        ok = ok && n == mine.n && n > 0;
    }
    lua_pop(L, 1);
    co_mem_free(mine.v);
    return ok;
}

/* Blank first line: VARARGPREP's line 1 has no other code, so the two
 * rules differ on it. */
static const char g_probe[] = "\n"
                              "local a = 1\n"
                              "local function f(x)\n"
                              "  if x then\n"
                              "    return x\n"
                              "  end\n"
                              "  return a\n"
                              "end\n"
                              "\n"
                              "return f\n";

/* The probe's nested function, at the top, is its one child? */
static int same_child(lua_State *L, const uint8_t *main)
{
    const uint8_t *p = ptr_at(main + L54_P);
    return i32_at(main + L54_SIZEP) == 1 && p && ptr_at(p) == proto_of(lua_topointer(L, -1)) &&
           i32_at(ptr_at(p) + L54_LINEDEF) == 3 && i32_at(ptr_at(p) + L54_LASTLINE) == 8;
}

int co_jit_lines_check(lua_State *L)
{
    static int done;
    if (done++)
        return g_ok;
    int top = lua_gettop(L);
    if (sizeof(void *) == 8 && lua_checkstack(L, 8) && luaL_loadstring(L, g_probe) == 0) {
        const uint8_t *main = proto_of(lua_topointer(L, -1));
        lua_pushvalue(L, -1);
        if (main && lua_pcall(L, 0, 1, 0) == 0 && lua_isfunction(L, -1) && same_child(L, main)) {
            for (int skip = 1; !g_ok && skip >= 0; skip--) {
                lua_pushvalue(L, -2);
                lua_pushvalue(L, -2);
                int child = same_lines(L, skip), chunk = same_lines(L, skip);
                g_ok = child && chunk;
                g_skip_prep = skip;
            }
        }
    }
    lua_settop(L, top);
    return g_ok;
}

/* }====== */

/* Writes the LINES records of fid, lines sorted and unique: a record's 64
 * lines start at the first line not sent yet. */
static void put_lines(co_state *s, uint32_t fid, const l54_set *set)
{
    for (size_t i = 0; i < set->n;) {
        uint32_t first = set->v[i];
        uint64_t mask = 0;
        for (; i < set->n && set->v[i] - first < 64; i++)
            mask |= 1ull << (set->v[i] - first);
        uint8_t *p = co_out_reserve(s, LT_EVENT_HOT_MAX);
        if (!p)
            return; /* dropped (a GAP says so) or tracing lost */
        uint8_t *q = lt_put_head(p, LT_EV_LINES, 3);
        q = lt_put_uint(q, fid);
        q = lt_put_uint(q, first);
        q = lt_put_uint(q, mask);
        lt_ring_commit(&s->ring, (uint64_t)(q - p));
    }
}

/* The NEST records of fid: the ranges of the functions nested in it, in
 * pairs (nest), each as often as it comes. */
static void put_nest(co_state *s, uint32_t fid, const l54_set *nest)
{
    for (size_t i = 0; i + 1 < nest->n; i += 2) {
        uint8_t *p = co_out_reserve(s, LT_EVENT_HOT_MAX);
        if (!p)
            return;
        uint8_t *q = lt_put_head(p, LT_EV_NEST, 3);
        q = lt_put_uint(q, fid);
        q = lt_put_uint(q, nest->v[i]);
        q = lt_put_uint(q, nest->v[i + 1]);
        lt_ring_commit(&s->ring, (uint64_t)(q - p));
    }
}

/* The pc a backward jump at pc goes to (JMP, FORLOOP, TFORLOOP), else -1
 * (lopcodes.h: JMP's sJ, 25 bits from bit 7 less 2^24 - 1, from the next
 * pc; the loops' Bx, 17 bits from bit 15, back from the next pc). */
static int back_target(uint32_t i, int pc)
{
    int op = (int)(i & 0x7f);
    if (op == L54_OP_JMP)
        return (int)(i >> 7) - 16777215 < 0 ? pc + 1 + ((int)(i >> 7) - 16777215) : -1;
    if (op == L54_OP_FORLOOP || op == L54_OP_TFORLOOP)
        return pc + 1 - (int)(i >> 15);
    return -1;
}

/* What a line event costs in fid (prototype pt) beyond the event itself
 * (co_calib.c), as two records:
 * - CODE: its instructions per run of one line, x16: luaG_traceexec runs
 *   at every instruction while a line hook is set (as 5.1's traceexec,
 *   co_func.c). An MMBIN after an arithmetic instruction is not counted:
 *   it runs only when a metamethod is called.
 * - WALK: the mean steps, x16, of the walk through lineinfo that finds a
 *   new line's number, from the last absolute line at or before its first
 *   instruction, else from the function's start (5.4's getbaseline).
 * Per line event: a run of one line's instructions has one, and so does
 * each turn of a loop within one run (a jump back into it: a loop on one
 * line), which runs only the loop's part of the run.
 * Without them recorderd took no instruction's cost off, and code of
 * short lines came out 25 to 33 points heavy under --time exact. */
static void put_code(co_state *s, uint32_t fid, const uint8_t *pt)
{
    const int8_t *li = (const int8_t *)ptr_at(pt + L54_LINEINFO);
    const uint32_t *code = (const uint32_t *)ptr_at(pt + L54_CODE);
    int n = i32_at(pt + L54_SIZELINE), first = g_skip_prep && pt[L54_VARARG];
    int prev = -1, base = -1, run = 0;
    uint64_t runs = 0, steps = 0, ins = 0;
    l54_set own = {0}; /* the line of each pc from first on */
    if (!li || !code || n != i32_at(pt + L54_SIZECODE))
        return;
    own_lines(pt, g_skip_prep, &own);
    for (int pc = 0; !own.oom && own.n == (size_t)(n - first) && pc < n; pc++) {
        base = li[pc] == L54_ABSLINE ? pc : base; /* its absolute line */
        if (pc < first)
            continue; /* VARARGPREP: no line */
        int line = (int)own.v[pc - first];
        if (line != prev) {
            runs++;
            steps += (uint64_t)(pc - base);
            run = pc;
        }
        prev = line;
        ins += (code[pc] & 0x7f) - L54_OP_MMBIN >= 3u;
        int to = back_target(code[pc], pc);
        if (to >= run && to <= pc) { /* a loop within this run (or a jump to itself) */
            runs++;
            steps += (uint64_t)(to >= base ? to - base : pc - base);
        }
    }
    co_mem_free(own.v);
    uint8_t *p = runs ? co_out_reserve(s, LT_EVENT_HOT_MAX) : NULL;
    if (!p)
        return;
    uint8_t *q = lt_put_head(p, LT_EV_CODE, 2);
    q = lt_put_uint(q, fid);
    q = lt_put_uint(q, ins * 16 / runs);
    q = lt_put_head(q, LT_EV_WALK, 2);
    q = lt_put_uint(q, fid);
    q = lt_put_uint(q, steps * 16 / runs);
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
}

void co_jit_lines(co_state *s, uint32_t fid, const void *fn)
{
    const uint8_t *pt = g_ok ? proto_of(fn) : NULL;
    l54_set set = {0}, nest = {0};
    if (!pt)
        return;
    put_code(s, fid, pt);
    all_lines(pt, &set, &nest, 0);
    set_sort(&set);
    if (!set.oom)
        put_lines(s, fid, &set);
    if (!nest.oom)
        put_nest(s, fid, &nest);
    co_mem_free(set.v);
    co_mem_free(nest.v);
}
