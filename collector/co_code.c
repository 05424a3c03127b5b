/* co_code: the hash that tells a new Proto is a function already seen
 * (co_func.c: a chunk loaded twice keeps its ids). It covers what
 * string.dump writes: source, lines defined, parameters, code, constants,
 * line info, the names of locals and upvalues, and the functions it
 * defines. It is read from the Proto where co_code_layout_check passed:
 * string.dump calls its writer once per field, about 14 000 instructions
 * per new function on luacheck, a twentieth of a coverage run's collector
 * work at the bench's small scale. */
#include <lauxlib.h>
#include <string.h>

#include "lr_layout.h"
#include "co_state.h"

enum {
    PR_P = 32,
    PR_SIZEP = 88,
    PR_NUPS = 112, /* nups, numparams, is_vararg, maxstacksize: 4 bytes */
    OP_RETURN_ = 30
};

#define FNV_PRIME 1099511628211ull

/* One 64-bit word: FNV-1a's step, then the high half folded down. A
 * product's bits depend only on the bits below them, so without the fold
 * a word's high bytes reached only the hash's high bits: functions whose
 * constants differ there alone (numbers 1438 and 2972, the 8th byte of a
 * string) collided by the hundred, and shared one id. */
static uint64_t mix_u64(uint64_t h, uint64_t v)
{
    h = (h ^ v) * FNV_PRIME;
    return h ^ (h >> 32);
}

/* 8 bytes at a time, the tail byte by byte (FNV-1a). */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (; n >= 8; b += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h = mix_u64(h, w);
    }
    for (; n; b++, n--)
        h = (h ^ *b) * FNV_PRIME;
    return h;
}

static uint64_t mix_str(uint64_t h, const void *ts)
{
    if (!ts) return mix_u64(h, 0);
    size_t n;
    memcpy(&n, (const char *)ts + TS_LEN, sizeof n);
    return mix((mix_u64(h, n + 1)), (const char *)ts + TS_SIZE, n);
}

/* A constant by its type and value: a string by its bytes, never its
 * address, and never a TValue's padding. */
static uint64_t mix_const(uint64_t h, const uint8_t *tv)
{
    int tt = lr_int_at(tv, TV_TT);
    h = mix_u64(h, (uint64_t)(unsigned)tt);
    if (tt == LUA_TSTRING) return mix_str(h, lr_ptr_at(tv, 0));
    if (tt == LUA_TNUMBER) return mix(h, tv, sizeof(lua_Number));
    if (tt == LUA_TBOOLEAN) return mix_u64(h, (uint64_t)(unsigned)lr_int_at(tv, 0));
    return h;
}

/* A Proto and, depth first, the functions it defines. */
static uint64_t mix_proto(uint64_t h, const void *pr)
{
    h = mix_str(h, lr_ptr_at(pr, PR_SOURCE));
    /* the sizes, linedefined and lastlinedefined: ints, PR_SIZEUPV on */
    h = mix(h, (const char *)pr + PR_SIZEUPV, PR_LASTLINE + 4 - PR_SIZEUPV);
    h = mix(h, (const char *)pr + PR_NUPS, 4);
    int ncode = lr_int_at(pr, PR_SIZECODE), nline = lr_int_at(pr, PR_SIZELINE);
    if (ncode > 0) h = mix(h, lr_ptr_at(pr, PR_CODE), (size_t)ncode * 4);
    if (nline > 0) h = mix(h, lr_ptr_at(pr, PR_LINEINFO), (size_t)nline * sizeof(int));
    const uint8_t *k = lr_ptr_at(pr, PR_K);
    for (int i = 0, n = lr_int_at(pr, PR_SIZEK); i < n; i++)
        h = mix_const(h, k + (size_t)i * TV_SIZE);
    const uint8_t *lv = lr_ptr_at(pr, PR_LOCVARS);
    for (int i = 0, n = lr_int_at(pr, PR_SIZELOC); i < n; i++) {
        h = mix_str(h, lr_ptr_at(lv + (size_t)i * LV_SIZE, 0));
        h = mix(h, lv + (size_t)i * LV_SIZE + 8, 8); /* startpc, endpc */
    }
    const void *const *uv = lr_ptr_at(pr, PR_UPVALUES);
    for (int i = 0, n = lr_int_at(pr, PR_SIZEUPV); uv && i < n; i++)
        h = mix_str(h, uv[i]);
    const void *const *sub = lr_ptr_at(pr, PR_P);
    for (int i = 0, n = lr_int_at(pr, PR_SIZEP); sub && i < n; i++)
        h = mix_proto(h, sub[i]); /* Lua's parser bounds the nesting: 200 */
    return h;
}

uint64_t co_code_hash(const void *pr)
{
    uint64_t h = mix_proto(1469598103934665603ull, pr);
    return h ? h : 1;
}

static int ts_is(const void *ts, const char *lit)
{
    return ts && lr_int_at(ts, TS_LEN) == (int)strlen(lit) &&
           !memcmp((const char *)ts + TS_SIZE, lit, strlen(lit) + 1);
}

/* The probe's constants: 1.5 and 'xy'. */
static int consts_ok(const void *pr)
{
    const uint8_t *k = lr_ptr_at(pr, PR_K);
    lua_Number num = 0;
    if (k) memcpy(&num, k, sizeof num);
    return k && lr_int_at(pr, PR_SIZEK) == 2 && lr_int_at(k, TV_TT) == LUA_TNUMBER && num == 1.5 &&
           lr_int_at(k + TV_SIZE, TV_TT) == LUA_TSTRING && ts_is(lr_ptr_at(k + TV_SIZE, 0), "xy");
}

/* The probe's code ends in RETURN 0 1, a line per instruction; it has one
 * upvalue, two parameters, no varargs. */
static int code_ok(const void *pr)
{
    const uint32_t *code = lr_ptr_at(pr, PR_CODE);
    int n = lr_int_at(pr, PR_SIZECODE);
    const uint8_t *b = (const uint8_t *)pr + PR_NUPS;
    return code && n > 1 && lr_int_at(pr, PR_SIZELINE) == n &&
           code[n - 1] == (OP_RETURN_ | 1u << 23) && b[0] == 1 && b[1] == 2 && b[2] == 0;
}

/* The probe's names (locals x, y, f; upvalue a) and nested function. */
static int names_ok(const void *pr)
{
    const uint8_t *lv = lr_ptr_at(pr, PR_LOCVARS);
    const void *const *uv = lr_ptr_at(pr, PR_UPVALUES);
    const void *const *sub = lr_ptr_at(pr, PR_P);
    return lv && lr_int_at(pr, PR_SIZELOC) == 3 && ts_is(lr_ptr_at(lv, 0), "x") &&
           ts_is(lr_ptr_at(lv + 2 * LV_SIZE, 0), "f") && uv && lr_int_at(pr, PR_SIZEUPV) == 1 &&
           ts_is(uv[0], "a") && sub && lr_int_at(pr, PR_SIZEP) == 1 &&
           ((const uint8_t *)sub[0])[PR_TT] == LUA_TPROTO_ && lr_int_at(sub[0], PR_LINEDEF) == 3;
}

/* Every field co_code_hash reads, on a function of known shape. */
int co_code_layout_check(lua_State *L)
{
    int top = lua_gettop(L), ok = 0;
    static const char probe[] = "local a = ...\n"
                                "return function(x, y)\n"
                                "  local f = function() end\n"
                                "  return x + 1.5, 'xy', a, f\n"
                                "end\n";
    if (luaL_loadstring(L, probe) == 0 && lua_pcall(L, 0, 1, 0) == 0 && lua_isfunction(L, -1)) {
        const void *pr = lr_ptr_at(lua_topointer(L, -1), CL_FP);
        ok = pr && consts_ok(pr) && code_ok(pr) && names_ok(pr);
    }
    lua_settop(L, top);
    return ok;
}
