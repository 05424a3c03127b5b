/* forged_host: a C host whose Lua 5.1 state is made hostile to a reader
 * from outside, for tests/integration/outside_stop.py:
 *
 *     forged_host MODE
 *
 * Its script makes a few suspended coroutines and tables, then calls
 * host.forge(MODE) from a Lua function, which corrupts the state and never
 * returns to Lua: it writes READY, then answers ALIVE to each line of
 * stdin, and exits (_exit, the state left as it is) at its end. MODE:
 *   cycle  the GC list loops: its 50th object's next is its 10th
 *   chain  4 M forged objects (tagged tables, 16 bytes each) spliced into
 *          the GC list after its 50th object, the last one's next NULL
 *   ci     the main thread's ci points past its CallInfos: no read of its
 *          stack can succeed
 *   table  the global table host says its array part has 2^27 slots, and
 *          that it starts at its hash part: a reader of the heap meets
 *          whatever lies past it (tests/integration/heap.py)
 * The layout is lr_layout.h's (Lua 5.1, LP64). */
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lr_layout.h"

enum { FORGED = 4 << 20 };

static const char *const SCRIPT =
    "local cos, keep = {}, {}\n"
    "for i = 1, 4 do\n"
    "  cos[i] = coroutine.create(function() local function wait() coroutine.yield() end wait() end)\n"
    "  coroutine.resume(cos[i])\n"
    "end\n"
    "for i = 1, 1000 do keep[i] = {} end\n"
    "local function serve(mode) return host.forge(mode) end\n"
    "serve(...)\n";

static void *next_of(void *o)
{
    void *n;
    memcpy(&n, o, sizeof n);
    return n;
}

static void set_next(void *o, void *n)
{
    memcpy(o, &n, sizeof n);
}

/* The k-th object of L's GC list (from 0). */
static void *object(lua_State *L, int k)
{
    void *g = (void *)lr_ptr_at(L, LS_G), *o = (void *)lr_ptr_at(g, G_ROOTGC);
    while (k-- > 0 && o)
        o = next_of(o);
    return o;
}

static int forge(lua_State *L, const char *mode)
{
    if (!strcmp(mode, "cycle")) {
        set_next(object(L, 50), object(L, 10));
    } else if (!strcmp(mode, "chain")) {
        unsigned char *f = calloc(FORGED, 16);
        if (!f)
            return -1;
        for (size_t i = 0; i < FORGED; i++) {
            set_next(f + i * 16, i + 1 < FORGED ? f + (i + 1) * 16 : NULL);
            f[i * 16 + LS_TT] = LUA_TTABLE;
        }
        set_next(object(L, 50), f);
    } else if (!strcmp(mode, "table")) {
        lua_getglobal(L, "host");
        char *t = (char *)lua_topointer(L, -1);
        int huge = 1 << 27;
        memcpy(t + TB_ARRAY, t + TB_NODE, sizeof(void *));
        memcpy(t + TB_SIZEARRAY, &huge, sizeof huge);
    } else if (!strcmp(mode, "ci")) {
        char *base = (char *)lr_ptr_at(L, LS_BASE_CI);
        void *past = base + (size_t)(lr_int_at(L, LS_SIZE_CI) + 8) * CI_SIZE;
        memcpy((char *)L + LS_CI, &past, sizeof past);
    } else {
        return -1;
    }
    return 0;
}

/* host.forge(MODE): never returns. */
static int l_forge(lua_State *L)
{
    char line[256];
    if (forge(L, luaL_checkstring(L, 1)))
        _exit(2);
    fputs("READY\n", stdout);
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        fputs("ALIVE\n", stdout);
        fflush(stdout);
    }
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: forged_host cycle|chain|ci|table\n");
        return 2;
    }
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    lua_register(L, "host_forge", l_forge);
    if (luaL_dostring(L, "host = {forge = host_forge}"))
        return 1;
    if (luaL_loadstring(L, SCRIPT))
        return 1;
    lua_pushstring(L, argv[1]);
    lua_call(L, 1, 0);
    return 1;
}
