/* rd_site54: the name a Lua 5.4 function was called by, read from its
 * caller's code (rd_peek54.h): what 5.4's funcnamefromcode and getobjname
 * find for a call, OP_CALL or OP_TAILCALL, whose function register was
 * last set by a local's declaration, a global or field read, a method
 * lookup (OP_SELF), an upvalue or a constant. The instruction formats and
 * which opcodes set register A are facts of 5.4.4's lopcodes.h and .c. */
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
    OP_GETFIELD = 14,
    OP_SELF = 20,
    OP_JMP = 56,
    OP_CALL = 68,
    OP_TAILCALL = 69,
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
        ok = (op_of(s.code[pc]) == OP_CALL || op_of(s.code[pc]) == OP_TAILCALL) &&
             obj_name(&s, pc, a_of(s.code[pc]), out, cap, 0);
    free(s.code);
    if (ok != 1)
        out[0] = 0;
    return d->late ? -1 : ok; /* out of time part way: the name may be missing */
}
