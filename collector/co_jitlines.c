/* co_jitlines: LuaJIT's executable lines, the LINES records (lt_event.h).
 *
 * Coverage must count as executable the lines that carry LuaJIT's
 * bytecode, which are not always Lua 5.1's (a `local x` with no value
 * has no instruction in LuaJIT; the lines of a call spread over several
 * lines differ). So when describe (co_func.c) writes the FUNC of a Lua
 * function, the lines of its prototype and of every prototype nested in it
 * follow, read from LuaJIT's GCproto in C: its compressed line map
 * (lineinfo: a delta from firstline per instruction, 1, 2 or 4 bytes wide
 * as numline needs) and its children (the prototypes among its collectable
 * constants). No Lua code runs in the hook for it.
 *
 * Those structures are LuaJIT's private ones: co_jit_lines_check, at
 * load, finds which of the two layouts of LuaJIT 2.1 (64-bit GC refs, the
 * default on x64 and arm64 since 2.1, or 32-bit ones) this LuaJIT has by
 * comparing what it reads of a probe chunk, line for line, with what
 * jit.util.funcinfo and jit.util.funck say of it. Any mismatch (another
 * LuaJIT, no jit.util): no LINES at all, and recorderd uses Lua 5.1's lines
 * as before. */
#include <lauxlib.h>
#include <string.h>

#include "co_mem.h"
#include "co_state.h"

/* Offsets in GCfuncL and GCproto (lj_obj.h), and their sizes. */
typedef struct jl_layout {
    unsigned ref;                        /* bytes of a GCRef / MRef */
    unsigned gct, ffid, fn_pc;           /* GC header's type; GCfuncL's */
    unsigned pt_size, sizebc, k, sizekgc; /* GCproto's */
    unsigned firstline, numline, lineinfo;
} jl_layout;

/* The smaller first: its reads stay within a closure of the larger. */
static const jl_layout g_layouts[] = {
    {4, 5, 6, 16, 64, 8, 16, 24, 44, 48, 52},    /* 32-bit refs */
    {8, 9, 10, 32, 104, 12, 32, 48, 72, 76, 80}, /* LJ_GC64 */
};
#define JL_TFUNC 8  /* gct of a function: ~LJ_TFUNC */
#define JL_TPROTO 7 /* of a prototype: ~LJ_TPROTO */
#define JL_DEPTH 256 /* nesting walked at most (LuaJIT's parser allows ~200) */
#define JL_LINES (1u << 24) /* a prototype claiming more lines is not read */

static const jl_layout *g_lay; /* the verified layout, or NULL */
static uint8_t g_back[256];    /* the ops that jump back (learn_back), by number */

static const uint8_t *ref_at(const jl_layout *y, const uint8_t *p)
{
    uint64_t v = 0;
    if (y->ref == 8) {
        memcpy(&v, p, 8);
    } else {
        uint32_t v4;
        memcpy(&v4, p, 4);
        v = v4;
    }
    return (const uint8_t *)(uintptr_t)v;
}

static uint32_t u32_at(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Where the prototype of Lua function fn is (its bytecode follows it),
 * read from fn's header only; 0 if fn is no Lua function. */
static uintptr_t proto_addr(const jl_layout *y, const uint8_t *fn)
{
    uintptr_t pc = fn && fn[y->gct] == JL_TFUNC && fn[y->ffid] == 0
                       ? (uintptr_t)ref_at(y, fn + y->fn_pc) : 0;
    return pc > y->pt_size ? pc - y->pt_size : 0;
}

/* The prototype of Lua function fn, or NULL. */
static const uint8_t *proto_of(const jl_layout *y, const uint8_t *fn)
{
    const uint8_t *pt = (const uint8_t *)proto_addr(y, fn);
    return pt && pt[y->gct] == JL_TPROTO ? pt : NULL;
}

/* The line of instruction pc (1 to sizebc - 1) of pt, as lj_debug_line
 * reads it; 0 if pt has no line map (stripped bytecode). */
static uint32_t pc_line(const jl_layout *y, const uint8_t *pt, uint32_t pc)
{
    const uint8_t *li = ref_at(y, pt + y->lineinfo);
    uint32_t first = u32_at(pt + y->firstline), n = u32_at(pt + y->numline), d;
    if (!li)
        return 0;
    if (n < 256) {
        d = li[pc - 1];
    } else if (n < 65536) {
        uint16_t d2;
        memcpy(&d2, li + 2 * (pc - 1), 2);
        d = d2;
    } else {
        d = u32_at(li + 4 * (pc - 1));
    }
    return first + d;
}

/* Instruction pc of pt (its bytecode follows the GCproto). */
static uint32_t bc_at(const jl_layout *y, const uint8_t *pt, uint32_t pc)
{
    return u32_at(pt + y->pt_size + 4 * (size_t)pc);
}

/* The next child of pt: the first prototype among its collectable
 * constants from the *from-th on (*from then moves past it), or NULL. */
static const uint8_t *child(const jl_layout *y, const uint8_t *pt, uint32_t *from)
{
    const uint8_t *k = ref_at(y, pt + y->k);
    uint32_t n = u32_at(pt + y->sizekgc);
    for (; k && *from < n; (*from)++) {
        const uint8_t *o = ref_at(y, k - (size_t)(*from + 1) * y->ref);
        if (o && o[y->gct] == JL_TPROTO) {
            (*from)++;
            return o;
        }
    }
    return NULL;
}

/* {====== the check, at load: what we read against jit.util */

/* Pushes jit.util.funcinfo(f, pc)[field] (nil if it fails); f at index
 * fi, jit.util at util. */
static void push_info(lua_State *L, int util, int fi, int pc, const char *field)
{
    lua_getfield(L, util, "funcinfo");
    lua_pushvalue(L, fi);
    lua_pushinteger(L, pc);
    if (lua_pcall(L, 2, 1, 0) == 0 && lua_istable(L, -1))
        lua_getfield(L, -1, field);
    else
        lua_pushnil(L);
    lua_remove(L, -2);
}

/* jit.util.funcinfo(f, pc)[field] as a number, or -1. */
static long info_line(lua_State *L, int util, int fi, int pc, const char *field)
{
    push_info(L, util, fi, pc, field);
    long v = lua_isnumber(L, -1) ? (long)lua_tointeger(L, -1) : -1;
    lua_pop(L, 1);
    return v;
}

/* Every line of pt against jit.util's of the function or prototype at fi. */
static int same_lines(lua_State *L, const jl_layout *y, int util, int fi, const uint8_t *pt)
{
    uint32_t n = u32_at(pt + y->sizebc);
    if (n < 2 || (long)n != info_line(L, util, fi, 0, "bytecodes") ||
        (long)u32_at(pt + y->firstline) != info_line(L, util, fi, 0, "linedefined"))
        return 0;
    for (uint32_t pc = 1; pc < n; pc++)
        if ((long)pc_line(y, pt, pc) != info_line(L, util, fi, (int)pc, "currentline"))
            return 0;
    return 1;
}

/* The probe's one child, as jit.util.funck finds it, against ours. */
static int same_child(lua_State *L, const jl_layout *y, int util, int fi, const uint8_t *pt)
{
    uint32_t from = 0;
    const uint8_t *c = child(y, pt, &from), *none = child(y, pt, &from);
    int ok = 0, top = lua_gettop(L);
    for (int i = -1; c && !none && !ok && i >= -16; i--) {
        lua_settop(L, top);
        lua_getfield(L, util, "funck");
        lua_pushvalue(L, fi);
        lua_pushinteger(L, i);
        if (lua_pcall(L, 2, 1, 0) || lua_isnil(L, -1))
            break;
        if (lua_topointer(L, -1) == (const void *)c)
            ok = same_lines(L, y, util, lua_gettop(L), c);
    }
    lua_settop(L, top);
    return ok;
}

static const char g_probe[] = "local a = 1\n"
                              "local function f(x)\n"
                              "  if x then\n"
                              "    return x\n"
                              "  end\n"
                              "  return a\n"
                              "end\n"
                              "\n"
                              "return f(a)\n";

/* Pushes jit.util: package.loaded's, else a fresh one from its loader in
 * package.preload, called directly so that the program's package.loaded
 * stays as it was; nil if there is none. */
static void push_util(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
    if (!lua_istable(L, -1))
        return;
    lua_getfield(L, -1, "jit.util");
    if (lua_istable(L, -1) || (lua_pop(L, 1), lua_getfield(L, -1, "package"), !lua_istable(L, -1)))
        return;
    lua_getfield(L, -1, "preload");
    if (!lua_istable(L, -1))
        return;
    lua_getfield(L, -1, "jit.util");
    lua_pushliteral(L, "jit.util");
    if (!lua_isfunction(L, -2) || lua_pcall(L, 1, 1, 0))
        lua_pushnil(L);
}

/* The loops of g_loops jump back with FORL, ITERL and JMP, in this order. */
static const char g_loops[] = "local t = ...\n"
                              "for i = 1, 2 do end\n"
                              "for k in t do end\n"
                              "while t do end\n";

/* Learns the numbers of the ops that jump back (they differ between LuaJIT
 * versions) from g_loops' bytecode as we read it, each instruction checked
 * against jit.util.funcbc's and taken where its mode says its D is a jump
 * (BCMjump, 13) that goes back. A blacklisted loop's FORL and ITERL
 * become IFORL and IITERL, the next ops (lj_bc.h's order). Anything else
 * than the three expected: none learned, and CODE counts no loop turn. */
static void learn_back(lua_State *L, const jl_layout *y, int util)
{
    int top = lua_gettop(L), found[3], nf = 0, ok = 1;
    const uint8_t *pt = NULL;
    if (luaL_loadstring(L, g_loops) == 0)
        pt = proto_of(y, lua_topointer(L, -1));
    for (uint32_t pc = 1; pt && ok && pc < u32_at(pt + y->sizebc); pc++) {
        lua_settop(L, top + 1);
        lua_getfield(L, util, "funcbc");
        lua_pushvalue(L, top + 1);
        lua_pushinteger(L, (lua_Integer)pc);
        if (lua_pcall(L, 2, 2, 0) || !lua_isnumber(L, -2) || !lua_isnumber(L, -1))
            break;
        uint32_t ins = bc_at(y, pt, pc), mode = (uint32_t)lua_tointeger(L, -1);
        ok = (uint32_t)lua_tointeger(L, -2) == ins;
        if (ok && (mode >> 7 & 15) == 13 && ins >> 16 < 0x8000)
            ok = nf < 3 ? (found[nf++] = (int)(ins & 0xff), 1) : 0;
    }
    lua_settop(L, top);
    if (!ok || nf != 3 || found[0] == found[1] || found[1] == found[2] || found[0] == found[2])
        return;
    for (int i = 0; i < 3; i++)
        g_back[found[i]] = 1;
    g_back[(found[0] + 1) & 0xff] = g_back[(found[1] + 1) & 0xff] = 1;
}

int co_jit_lines_check(lua_State *L)
{
    static int done;
    if (done++)
        return g_lay != NULL;
    int top = lua_gettop(L);
    push_util(L);
    int util = lua_gettop(L);
    if (lua_istable(L, util) && luaL_loadstring(L, g_probe) == 0) {
        int fi = lua_gettop(L);
        push_info(L, util, fi, 0, "proto"); /* its GCproto: nothing read before it matches */
        const void *want = lua_topointer(L, -1);
        for (size_t i = 0; want && !g_lay && i < sizeof g_layouts / sizeof *g_layouts; i++) {
            const jl_layout *y = &g_layouts[i];
            const uint8_t *pt = (const uint8_t *)proto_addr(y, lua_topointer(L, fi));
            if (pt == want && same_lines(L, y, util, fi, pt) && same_child(L, y, util, fi, pt))
                g_lay = y;
        }
        if (g_lay)
            learn_back(L, g_lay, util);
    }
    lua_settop(L, top);
    return g_lay != NULL;
}

/* }====== */

/* Sets in bits (lines first .. first + 64 * nw - 1) the lines of pt and
 * of the prototypes nested in it. */
static void mark(const uint8_t *pt, uint32_t first, uint64_t *bits, uint32_t nw, int depth)
{
    const jl_layout *y = g_lay;
    uint32_t n = ref_at(y, pt + y->lineinfo) ? u32_at(pt + y->sizebc) : 0, from = 0;
    for (uint32_t pc = 1; pc < n; pc++) {
        uint32_t l = pc_line(y, pt, pc) - first;
        if (l < 64 * nw)
            bits[l / 64] |= 1ull << (l % 64);
    }
    for (const uint8_t *c; depth < JL_DEPTH && (c = child(y, pt, &from));)
        mark(c, first, bits, nw, depth + 1);
}

/* Writes the LINES records of fid: bit i of bits is line first + i; a
 * record's 64 lines start at the first line set not sent yet. */
static void put_bits(co_state *s, uint32_t fid, uint32_t first, const uint64_t *bits,
                     uint32_t nw)
{
    for (uint64_t at = 0; at < 64ull * nw; at++) {
        if (!(bits[at / 64] >> (at % 64) & 1))
            continue;
        uint64_t mask = bits[at / 64] >> (at % 64);
        if (at % 64 && at / 64 + 1 < nw)
            mask |= bits[at / 64 + 1] << (64 - at % 64);
        uint8_t *p = co_out_reserve(s, LT_EVENT_HOT_MAX);
        if (!p)
            return; /* dropped (a GAP says so) or tracing lost */
        uint8_t *q = lt_put_head(p, LT_EV_LINES, 3);
        q = lt_put_uint(q, fid);
        q = lt_put_uint(q, first + at);
        q = lt_put_uint(q, mask);
        lt_ring_commit(&s->ring, (uint64_t)(q - p));
        at += 63;
    }
}

/* The CODE record of fid (prototype pt): its instructions per line
 * event, x16, what a line event costs in the instruction hook beyond the
 * event itself (co_calib.c); as Lua 5.1's (co_func.c), less the function
 * header (pc 0), which LuaJIT dispatches as a call, not an instruction.
 * Each turn of a loop within one run of a line is a line event too
 * (lj_dispatch_ins calls the hook at every jump back). */
static void put_code(co_state *s, uint32_t fid, const uint8_t *pt)
{
    uint32_t n = u32_at(pt + g_lay->sizebc), runs = 1;
    if (n < 2 || n >= JL_LINES)
        return;
    for (uint32_t pc = 1, run = 1, last = pc_line(g_lay, pt, 1); pc < n; pc++) {
        uint32_t line = pc_line(g_lay, pt, pc), ins = bc_at(g_lay, pt, pc);
        if (line != last) {
            runs++;
            run = pc;
        }
        last = line;
        int64_t to = (int64_t)pc + 1 + (int64_t)(ins >> 16) - 0x8000;
        runs += g_back[ins & 0xff] && to >= run && to <= pc;
    }
    uint8_t *p = co_out_reserve(s, LT_EVENT_HOT_MAX);
    if (!p)
        return;
    uint8_t *q = lt_put_head(p, LT_EV_CODE, 2);
    q = lt_put_uint(q, fid);
    q = lt_put_uint(q, (uint64_t)(n - 1) * 16 / runs);
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
}

void co_jit_lines(co_state *s, uint32_t fid, const void *fn)
{
    const uint8_t *pt = g_lay ? proto_of(g_lay, fn) : NULL;
    if (!pt || !ref_at(g_lay, pt + g_lay->lineinfo))
        return;
    uint32_t first = u32_at(pt + g_lay->firstline), n = u32_at(pt + g_lay->numline);
    if (n >= JL_LINES)
        return;
    put_code(s, fid, pt);
    uint32_t nw = n / 64 + 1;
    uint64_t *bits = co_mem_calloc(nw, sizeof *bits);
    if (!bits)
        return;
    mark(pt, first, bits, nw, 0);
    put_bits(s, fid, first, bits, nw);
    co_mem_free(bits);
}

int co_jit_gc64(void)
{
    return g_lay && g_lay->ref == 8;
}
