/* lr_layout: Lua 5.1's internal structures as the collector reads them
 * (LP64). Each reader checks the layout it relies on before using it:
 * co_func_layout_check, co_func_state_check, co_name_layout_check,
 * co_sigdump_check, co_thread_layout_check, and co_attach.c's check of
 * the GC list when listening. */
#ifndef LR_LAYOUT_H
#define LR_LAYOUT_H

#include <lua.h>
#include <string.h>

/* Lua 5.1 on LP64: field offsets, and how many bytes are copied of each
 * structure (the _READ values) */
enum {
    /* lua_State */
    LS_TT = 8,
    LS_MARKED = 9,
    LS_STATUS = 10,
    LS_TOP = 16,  /* StkId */
    LS_BASE = 24, /* StkId */
    LS_G = 32,
    LS_CI = 40,
    LS_SAVEDPC = 48,
    LS_STACK = 64, /* StkId */
    LS_BASE_CI = 80,
    LS_STACKSIZE = 88, /* TValues in the stack's block */
    LS_SIZE_CI = 92,
    LS_HOOKMASK = 100,  /* hookmask (a byte) */
    LS_ALLOWHOOK = 101, /* allowhook (a byte): 0 inside a hook or a __gc finalizer */
    LS_HOOKCOUNT = 104, /* basehookcount */
    LS_HOOKLEFT = 108,  /* hookcount: instructions to the next count event */
    LS_HOOK = 112,
    LS_GT = 120, /* l_gt: the globals (TValue) */
    LS_READ = 136,
    LS_SIZE = 184, /* sizeof(lua_State): the size Lua frees it with (co_alloc.c) */
    /* global_State */
    G_CURWHITE = 32,
    G_ROOTGC = 40,
    G_THRESHOLD = 112,  /* GCthreshold */
    G_TOTALBYTES = 120, /* totalbytes */
    G_REGISTRY = 160,   /* l_registry (TValue) */
    G_MAINTHREAD = 176,
    LG_SIZE = 616, /* sizeof(LG): lua_newstate's block, its main thread and global_State */
    /* CallInfo */
    CI_BASE = 0,
    CI_FUNC = 8,
    CI_SAVEDPC = 24,
    CI_TAILCALLS = 36,
    CI_SIZE = 40,
    /* TValue */
    TV_TT = 8,
    TV_SIZE = 16,
    /* Closure (CClosure and LClosure) */
    CL_TT = 8,
    CL_ISC = 10,
    CL_NUPVALUES = 11,
    CL_ENV = 24,  /* Closure.env (Table*) */
    CL_FP = 32,   /* LClosure.p / CClosure.f */
    CL_UPV0 = 40, /* CClosure.upvalue[0] (TValue) */
    CL_UPVALS = 40, /* LClosure.upvals (UpVal *[]) */
    CL_READ = 56,
    /* Proto */
    PR_TT = 8,
    PR_K = 16,
    PR_CODE = 24,
    PR_LINEINFO = 40,
    PR_LOCVARS = 48,
    PR_UPVALUES = 56,
    PR_SOURCE = 64,
    PR_SIZEUPV = 72,
    PR_SIZEK = 76,
    PR_SIZECODE = 80,
    PR_SIZELINE = 84,
    PR_SIZELOC = 92,
    PR_LINEDEF = 96,
    PR_LASTLINE = 100,
    PR_READ = 104,
    PR_ISVARARG = 114, /* is_vararg (a byte) */
    PR_SIZE = 120, /* sizeof(Proto): the size Lua frees it with (co_alloc.c) */
    /* LocVar: varname, startpc (8), endpc (12) */
    LV_SIZE = 16,
    /* TString: the bytes follow the header */
    TS_TT = 8,
    TS_HASH = 12,
    TS_LEN = 16,
    TS_SIZE = 24,
    /* Table */
    TB_TT = 8,
    TB_LSIZENODE = 11,
    TB_METATABLE = 16,
    TB_ARRAY = 24, /* TValue* */
    TB_NODE = 32,
    TB_SIZEARRAY = 56,
    TB_READ = 40,
    /* Node: i_val (TValue), then i_key */
    ND_KEY = 16,
    ND_KEYTT = 24,
    ND_NEXT = 32, /* the next node of its chain */
    ND_SIZE = 40,
    /* UpVal: v, the TValue it stands for */
    UV_TT = 8,
    UV_V = 16,
    UV_READ = 24,
    LUA_TPROTO_ = LUA_TTHREAD + 1,
    LUA_TUPVAL_ = LUA_TTHREAD + 2
};


/* A field of a structure at base (any alignment). */
static inline const void *lr_ptr_at(const void *base, int off)
{
    const void *v;
    memcpy(&v, (const char *)base + off, sizeof v);
    return v;
}

static inline int lr_int_at(const void *base, int off)
{
    int v;
    memcpy(&v, (const char *)base + off, sizeof v);
    return v;
}

/* Lua runs no hooks in T now: T is in a hook or a __gc finalizer
 * (allowhook; read where the lua_State layout was verified). */
static inline int lr_hooks_off(const lua_State *T)
{
    return ((const unsigned char *)T)[LS_ALLOWHOOK] == 0;
}

#endif
