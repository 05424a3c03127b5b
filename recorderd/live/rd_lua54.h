/* rd_lua54: Lua 5.4's internal structures as recorderd reads them from
 * outside (LP64; lstate.h and lobject.h of 5.4.4, Debian 12's release, not
 * installed by liblua5.4-dev). rd_peek54_check verifies them against the
 * running library before anything else is read. */
#ifndef RD_LUA54_H
#define RD_LUA54_H

enum {
    /* lua_State: the main thread sits in lua_newstate's block (LG) after
     * LUA_EXTRASPACE bytes, its global_State right after it */
    L4_TT = 8,
    L4_MARKED = 9,
    L4_STATUS = 10,
    L4_TOP = 16,
    L4_G = 24,
    L4_CI = 32,
    L4_STACK = 48,
    L4_BASE_CI = 96, /* CallInfo base_ci: the C entry, no function of its own */
    L4_SIZE = 200,   /* sizeof(lua_State): l_G points this far past it */
    /* CallInfo */
    CI4_FUNC = 0,
    CI4_PREVIOUS = 16,
    CI4_NEXT = 24,
    CI4_SAVEDPC = 32,
    CI4_CALLSTATUS = 62,
    CI4_SIZE = 64,
    CI4_C = 1 << 1,    /* CIST_C: a C function */
    CI4_FRESH = 1 << 2,  /* CIST_FRESH: a Lua function called from C */
    CI4_HOOKED = 1 << 3, /* CIST_HOOKED: a debug hook runs */
    CI4_TAIL = 1 << 5,   /* CIST_TAIL: tail called */
    CI4_FIN = 1 << 7,    /* CIST_FIN: it "called" a finalizer */
    /* global_State */
    G4_TOTALBYTES = 16,
    G4_REGISTRY = 64, /* TValue */
    G4_CURWHITE = 100,
    G4_ALLGC = 112,
    G4_FINOBJ = 128,
    G4_TOBEFNZ = 176,
    G4_MAINTHREAD = 264,
    G4_MEMERRMSG = 272,
    G4_TMNAME = 280, /* TString *tmname[]: "__index" first */
    G4_READ = 288,
    /* TValue: value, then its tag (a byte) */
    TV4_TT = 8,
    TV4_SIZE = 16,
    /* tags as a TValue holds them (collectable ones with bit 6) */
    T4_NIL = 0x00,
    T4_TABLE = 0x45,
    T4_SHRSTR = 0x44,
    T4_LNGSTR = 0x54,
    T4_THREAD = 0x48,
    T4_LCL = 0x46, /* Lua closure */
    T4_LCF = 0x16, /* light C function: the value is the lua_CFunction */
    T4_CCL = 0x66, /* C closure */
    /* tags as an object's header holds them */
    O4_SHRSTR = 0x04,
    O4_LNGSTR = 0x14,
    O4_TABLE = 0x05,
    O4_LCL = 0x06,
    O4_CCL = 0x26,
    O4_THREAD = 0x08,
    O4_PROTO = 0x0a,
    /* Closure: LClosure.p, CClosure.f at 24; CClosure.upvalue[0] at 32 */
    CL4_NUPVALUES = 10,
    CL4_FP = 24,
    CL4_UPV0 = 32,
    CL4_READ = 48,
    /* Proto */
    PR4_SIZEUPV = 16,
    PR4_SIZEK = 20,
    PR4_SIZECODE = 24,
    PR4_SIZELOC = 36,
    PR4_SIZELINE = 28,
    PR4_SIZEABS = 40,
    PR4_LINEDEF = 44,
    PR4_LASTLINE = 48,
    PR4_K = 56,
    PR4_CODE = 64,
    PR4_UPVALUES = 80, /* Upvaldesc: its name first, 16 bytes each */
    PR4_LINEINFO = 88,
    PR4_ABS = 96, /* AbsLineInfo {int pc; int line;} */
    PR4_LOCVARS = 104, /* LocVar: varname, startpc, endpc; 16 bytes each */
    PR4_SOURCE = 112,
    PR4_READ = 120,
    LINE4_ABS = -0x80, /* lineinfo's mark: the line is in abslineinfo */
    /* TString: shrlen a byte, a long string's length at 16, bytes at 24 */
    TS4_SHRLEN = 11,
    TS4_LNGLEN = 16,
    TS4_CONTENTS = 24,
    /* Table and its Node (the value's TValue, then the key's tag, next and value) */
    TB4_LSIZENODE = 11,
    TB4_ALIMIT = 12,
    TB4_ARRAY = 16,
    TB4_NODE = 24,
    TB4_READ = 48,
    ND4_KEYTT = 9,
    ND4_KEY = 16,
    ND4_SIZE = 24,
    /* WHITE0BIT and WHITE1BIT of marked */
    W4_BITS = (1 << 3) | (1 << 4)
};

#endif
