/* rd_site54: the name a Lua 5.4 function was called by, read from its
 * caller's code (rd_peek54.h): what 5.4's funcnamefromcode and getobjname
 * find for a call, OP_CALL or OP_TAILCALL, whose function register was
 * last set by a local's declaration, a global or field read, a method
 * lookup (OP_SELF), an upvalue or a constant; "for iterator" for a generic
 * for's call (OP_TFORCALL); and for a metamethod, the event its
 * instruction raises without its "__" (index, newindex, add, lt, close,
 * ...), as debug.getinfo's name gives it and the collector then names the
 * function. The instruction formats and which opcodes set register A are
 * facts of 5.4.4's lopcodes.h and .c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rd_lua54.h"
#include "rd_peek54.h"

enum {
    OP_MOVE = 0,
    OP_LOADK = 3,
    OP_LOADNIL = 8,
    OP_GETUPVAL = 9,
    OP_GETTABUP = 11,
    OP_GETTABLE = 12,
    OP_GETI = 13,
    OP_GETFIELD = 14,
    OP_SETTABUP = 15,
    OP_SETTABLE = 16,
    OP_SETI = 17,
    OP_SETFIELD = 18,
    OP_SELF = 20,
    OP_MMBIN = 46,
    OP_MMBINI = 47,
    OP_MMBINK = 48,
    OP_UNM = 49,
    OP_BNOT = 50,
    OP_LEN = 52,
    OP_CONCAT = 53,
    OP_CLOSE = 54,
    OP_JMP = 56,
    OP_EQ = 57,
    OP_LT = 58,
    OP_LE = 59,
    OP_LTI = 62,
    OP_LEI = 63,
    OP_GTI = 64,
    OP_GEI = 65,
    OP_CALL = 68,
    OP_TAILCALL = 69,
    OP_RETURN = 70,
    OP_TFORCALL = 76,
    NUM_OPS = 83,
    CODE_MAX = 1 << 16, /* a caller longer is not read */
    DEPTH_MAX = 8
};

/* testAMode and testMMMode of 5.4.4's luaP_opmodes, a bit per opcode */
static const uint64_t SETS_A[2] = {0x3e3ffffff87bffull, 0x3a638ull};
static const uint64_t MM_OP = 0x1c00000000000ull; /* MMBIN, MMBINI, MMBINK */

static int op_of(uint32_t i) { return (int)(i & 0x7f); }
static int a_of(uint32_t i) { return (int)((i >> 7) & 0xff); }
static int k_of(uint32_t i) { return (int)((i >> 15) & 1); }
static int b_of(uint32_t i) { return (int)((i >> 16) & 0xff); }
static int c_of(uint32_t i) { return (int)((i >> 24) & 0xff); }
static int bx_of(uint32_t i) { return (int)(i >> 15); }
static int sj_of(uint32_t i) { return (int)(i >> 7) - 0xffffff; }

static int sets_a(int op)
{
    return op >= 0 && op < NUM_OPS && (SETS_A[op / 64] >> (op % 64)) & 1;
}

/* The caller being named: its Proto (copied) and code up to the call. */
typedef struct site {
    r54 *d;
    uint8_t pr[PR4_READ];
    uint32_t *code;
} site;

/* The name of the n-th local (1 first) active at pc (luaF_getlocalname). */
static int local_name(site *s, int n, int pc, char *out, size_t cap)
{
    uint8_t lv[16];
    uintptr_t at = r54_ptr_at(s->pr, PR4_LOCVARS);
    int size = r54_int_at(s->pr, PR4_SIZELOC);
    for (int i = 0; i < size && i < CODE_MAX; i++) {
        if (r54_peek(s->d, at + 16 * (uintptr_t)i, lv, sizeof lv) || r54_int_at(lv, 8) > pc)
            return 0;
        if (pc < r54_int_at(lv, 12) && --n == 0)
            return r54_tstring(s->d, r54_ptr_at(lv, 0), out, cap) > 0;
    }
    return 0;
}

/* Constant k, if a string. */
static int kname(site *s, int k, char *out, size_t cap)
{
    uint8_t tv[TV4_SIZE];
    if (k < 0 || k >= r54_int_at(s->pr, PR4_SIZEK) ||
        r54_peek(s->d, r54_ptr_at(s->pr, PR4_K) + (uintptr_t)k * TV4_SIZE, tv, sizeof tv) ||
        (tv[TV4_TT] != T4_SHRSTR && tv[TV4_TT] != T4_LNGSTR))
        return 0;
    return r54_tstring(s->d, r54_ptr_at(tv, 0), out, cap) > 0;
}

static int upvalue_name(site *s, int u, char *out, size_t cap)
{
    uintptr_t name;
    return u < r54_int_at(s->pr, PR4_SIZEUPV) &&
           !r54_peek(s->d, r54_ptr_at(s->pr, PR4_UPVALUES) + 16 * (uintptr_t)u, &name, sizeof name) &&
           r54_tstring(s->d, name, out, cap) > 0;
}

/* The last instruction before lastpc that set reg, or -1 (findsetreg: one
 * inside a jump's reach cannot be known). */
static int setter(const site *s, int lastpc, int reg)
{
    int set = -1, jmptarget = 0;
    if (op_of(s->code[lastpc]) < 64 && (MM_OP >> op_of(s->code[lastpc])) & 1)
        lastpc--; /* the instruction before it was not run */
    for (int pc = 0; pc < lastpc; pc++) {
        uint32_t i = s->code[pc];
        int op = op_of(i), a = a_of(i), change;
        if (op == OP_LOADNIL)
            change = a <= reg && reg <= a + b_of(i);
        else if (op == OP_TFORCALL)
            change = reg >= a + 2;
        else if (op == OP_CALL || op == OP_TAILCALL)
            change = reg >= a;
        else if (op == OP_JMP) {
            int dest = pc + 1 + sj_of(i);
            if (dest <= lastpc && dest > jmptarget)
                jmptarget = dest;
            change = 0;
        } else
            change = sets_a(op) && reg == a;
        if (change)
            set = pc < jmptarget ? -1 : pc;
    }
    return set;
}

static int obj_name(site *s, int pc, int reg, char *out, size_t cap, int depth)
{
    if (local_name(s, reg + 1, pc, out, cap))
        return 1;
    int at = setter(s, pc, reg);
    if (at < 0)
        return 0;
    uint32_t i = s->code[at];
    switch (op_of(i)) {
    case OP_MOVE:
        return b_of(i) < a_of(i) && depth < DEPTH_MAX &&
               obj_name(s, at, b_of(i), out, cap, depth + 1);
    case OP_GETTABUP:
    case OP_GETFIELD:
        return kname(s, c_of(i), out, cap);
    case OP_SELF:
        return k_of(i) && kname(s, c_of(i), out, cap);
    case OP_GETUPVAL:
        return upvalue_name(s, b_of(i), out, cap);
    case OP_LOADK:
        return kname(s, bx_of(i), out, cap);
    default:
        return 0;
    }
}

/* The events of 5.4.4's ltm.h (TMS), in its order, without their "__":
 * what funcnamefromcode calls the metamethod an instruction runs. */
static const char *const EVENT[] = {"index", "newindex", "gc",  "mode", "len",    "eq",   "add",
                                    "sub",   "mul",      "mod", "pow",  "div",    "idiv", "band",
                                    "bor",   "bxor",     "shl", "shr",  "unm",    "bnot", "lt",
                                    "le",    "concat",   "call", "close"};
enum { TM_INDEX = 0, TM_NEWINDEX = 1, TM_LEN = 4, TM_EQ = 5, TM_UNM = 18, TM_BNOT = 19,
       TM_LT = 20, TM_LE = 21, TM_CONCAT = 22, TM_CLOSE = 24, TM_N = 25 };

/* The metamethod instruction i runs (funcnamefromcode's switch), or -1. */
static int event_of(uint32_t i)
{
    switch (op_of(i)) {
    case OP_SELF: case OP_GETTABUP: case OP_GETTABLE: case OP_GETI: case OP_GETFIELD:
        return TM_INDEX;
    case OP_SETTABUP: case OP_SETTABLE: case OP_SETI: case OP_SETFIELD:
        return TM_NEWINDEX;
    case OP_MMBIN: case OP_MMBINI: case OP_MMBINK:
        return c_of(i) < TM_N ? c_of(i) : -1;
    case OP_UNM: return TM_UNM;
    case OP_BNOT: return TM_BNOT;
    case OP_LEN: return TM_LEN;
    case OP_CONCAT: return TM_CONCAT;
    case OP_EQ: return TM_EQ; /* OP_EQK, OP_EQI call none */
    case OP_LT: case OP_LTI: case OP_GTI: return TM_LT;
    case OP_LE: case OP_LEI: case OP_GEI: return TM_LE;
    case OP_CLOSE: case OP_RETURN: return TM_CLOSE;
    default: return -1;
    }
}

/* A name that is no call's: the generic for's, or a metamethod's. */
static int other_name(uint32_t i, char *out, size_t cap)
{
    int tm = event_of(i);
    const char *name = op_of(i) == OP_TFORCALL ? "for iterator" : tm >= 0 ? EVENT[tm] : NULL;
    if (!name)
        return 0;
    snprintf(out, cap, "%s", name);
    return 1;
}

int r54_call_name(r54 *d, uintptr_t pr, int pc, char *out, size_t cap)
{
    site s = {.d = d};
    int ok = -1;
    out[0] = 0;
    if (r54_peek(d, pr, s.pr, sizeof s.pr))
        return -1;
    if (pc < 0 || pc >= r54_int_at(s.pr, PR4_SIZECODE) || pc >= CODE_MAX)
        return 0;
    if (!(s.code = malloc(((size_t)pc + 1) * 4)))
        return -1;
    if (!r54_peek(d, r54_ptr_at(s.pr, PR4_CODE), s.code, ((size_t)pc + 1) * 4))
        ok = op_of(s.code[pc]) == OP_CALL || op_of(s.code[pc]) == OP_TAILCALL
                 ? obj_name(&s, pc, a_of(s.code[pc]), out, cap, 0)
                 : other_name(s.code[pc], out, cap);
    free(s.code);
    if (ok != 1)
        out[0] = 0;
    return d->late ? -1 : ok; /* out of time part way: the name may be missing */
}
