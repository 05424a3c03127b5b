/* co_name: the name a function is known by (doc/reports.md, "Frame labels"): the
 * shortest global or package.loaded path holding it, found by scanning
 * those tables when the function is first seen. A C function none of them
 * holds (a file method, require's loaders, a module's luaopen_) is named
 * as a person looks it up: package.loaders[N], a method of a registry
 * metatable (FILE*:read), else its exported C symbol (luaopen_lfs). The
 * globals are the table the collector was loaded with
 * (co_module_push_globals), not the running thread's: setfenv(0, t) gives
 * a coroutine (and those it creates) its own.
 *
 * A scan through lua_next costs about 4000 instructions per table, 200 000
 * per new function on a program with a few dozen modules: most of what
 * the collector spends on a short run. So where co_name_layout_check finds
 * Lua 5.1's Table, Node and TString layout, the tables are read directly
 * (a few instructions per entry, array part skipped: its keys are numbers),
 * visiting the entries in lua_next's order so that both ways name alike
 * (but for a table of over CO_WALK_MAX entries with an array part).
 */
#include <dlfcn.h>
#include <link.h>
#include <lauxlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lr_layout.h"
#include "co_state.h"

/* Per table: string-keyed entries looked at (only they can name), and
 * entries walked whatever their keys, so that a huge table of numbers
 * cannot stall the program (the direct scan skips the array part, which
 * costs it nothing). */
#define CO_SCAN_MAX 20000
#define CO_WALK_MAX (1u << 20)

/* What is looked for: the closure (a Lua function), or any closure of the
 * C function cf (Lua makes several closures of one C function, e.g. _G.next
 * and the iterator pairs returns). Names are bytes with a length: a key
 * may hold a NUL. */
typedef struct target {
    const void *cl;
    lua_CFunction cf;
    char *best; /* the shortest "module.key" so far (ties: smaller bytes) */
    size_t cap, len, full; /* best's length, and before the cut at cap - 1 */
} target;

static int is(const char *s, size_t n, const char *lit)
{
    return n == strlen(lit) && !memcmp(s, lit, n);
}

/* Lua 5.1's compatibility aliases (LUA_COMPAT_GFIND, LUA_COMPAT_MOD):
 * the same C function as string.gmatch and math.fmod, whose names people
 * write and look for. */
static int compat_alias(const char *name, size_t n)
{
    return is(name, n, "string.gfind") || is(name, n, "math.mod");
}

/* Is a (al bytes, cut from af) a better name than b: not an alias when b
 * is, else shorter before the cut, else smaller bytes. */
static int better(const char *a, size_t al, size_t af, const char *b, size_t bl, size_t bf)
{
    if (compat_alias(a, al) != compat_alias(b, bl))
        return compat_alias(b, bl);
    return af < bf || (af == bf && memcmp(a, b, al < bl ? al : bl) < 0);
}

/* A name found: key in the globals (mod NULL) or mod SEP key, SEP "."
 * when sep is NULL (":" for a metatable's methods). */
typedef struct where {
    const char *mod;
    size_t mlen;
    const char *sep;
} where;

static size_t put(char *to, size_t at, size_t cap, const char *s, size_t n)
{
    n = n < cap - at ? n : cap - at;
    memcpy(to + at, s, n);
    return at + n;
}

static void consider(target *t, const where *w, const char *key, size_t klen)
{
    char cand[CO_NAME_MAX];
    size_t n = 0, cap = (t->cap < sizeof cand ? t->cap : sizeof cand) - 1;
    const char *sep = w->sep ? w->sep : ".";
    if (w->mod) {
        n = put(cand, n, cap, w->mod, w->mlen);
        n = put(cand, n, cap, sep, strlen(sep));
    }
    n = put(cand, n, cap, key, klen);
    size_t full = (w->mod ? w->mlen + strlen(sep) : 0) + klen;
    if (!t->len || better(cand, n, full, t->best, t->len, t->full)) {
        memcpy(t->best, cand, n);
        t->best[n] = 0;
        t->len = n;
        t->full = full;
    }
}

/* The table at idx, through lua_next (layouts not verified). */
static void scan_api(lua_State *L, int idx, const where *w, target *t)
{
    unsigned budget = CO_SCAN_MAX, walk = CO_WALK_MAX;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int named = lua_type(L, -2) == LUA_TSTRING;
        if ((named && !--budget) || !--walk) {
            lua_pop(L, 2);
            return;
        }
        if (named && (t->cf ? lua_tocfunction(L, -1) == t->cf : lua_topointer(L, -1) == t->cl)) {
            size_t klen;
            const char *key = lua_tolstring(L, -2, &klen);
            consider(t, w, key, klen);
        }
        lua_pop(L, 1);
    }
}

static int same(const target *t, const uint8_t *node)
{
    if (lr_int_at(node, TV_TT) != LUA_TFUNCTION)
        return 0;
    const uint8_t *cl = lr_ptr_at(node, 0);
    return t->cf ? cl[CL_ISC] && lr_ptr_at(cl, CL_FP) == (const void *)t->cf : cl == t->cl;
}

/* The Table tb read directly, string keys counted against the budget as
 * lua_next visits them; the array part (keys are numbers) is skipped. */
static void scan_direct(const uint8_t *tb, const where *w, target *t)
{
    unsigned budget = CO_SCAN_MAX, walk = CO_WALK_MAX;
    const uint8_t *node = lr_ptr_at(tb, TB_NODE);
    for (size_t i = 0, n = (size_t)1 << tb[TB_LSIZENODE]; i < n; i++, node += ND_SIZE) {
        if (lr_int_at(node, TV_TT) == LUA_TNIL)
            continue;
        int named = lr_int_at(node, ND_KEYTT) == LUA_TSTRING;
        if ((named && !--budget) || !--walk)
            return;
        if (named && same(t, node)) {
            const uint8_t *ts = lr_ptr_at(node, ND_KEY);
            size_t klen;
            memcpy(&klen, ts + TS_LEN, sizeof klen);
            consider(t, w, (const char *)ts + TS_SIZE, klen);
        }
    }
}

static void scan(lua_State *L, int idx, const where *w, target *t, int direct)
{
    if (direct)
        scan_direct(lua_topointer(L, idx), w, t);
    else
        scan_api(L, idx, w, t);
}

/* Replaces the table on top with its field k (raw), or nil when it is no
 * table: a program may have replaced package or package.loaders. */
static void field(lua_State *L, const char *k)
{
    if (lua_type(L, -1) == LUA_TTABLE) {
        lua_pushstring(L, k);
        lua_rawget(L, -2);
    } else {
        lua_pushnil(L);
    }
    lua_remove(L, -2);
}

/* package.loaders[N] (package.searchers[N] in Lua 5.4): require's
 * searchers, a list no name reaches. */
static void scan_loaders(lua_State *L, target *t)
{
    lua_pushvalue(L, LUA_REGISTRYINDEX);
    field(L, "_LOADED");
    field(L, "package");
#ifdef CO_LUA54
    field(L, "searchers");
    const where w = {"package.searchers", 17, ""};
#else
    field(L, "loaders");
    const where w = {"package.loaders", 15, ""};
#endif
    for (int i = 1; i <= 64 && lua_type(L, -1) == LUA_TTABLE; i++) {
        lua_rawgeti(L, -1, i);
        int stop = lua_isnil(L, -1), hit = lua_tocfunction(L, -1) == t->cf;
        lua_pop(L, 1);
        if (stop)
            break;
        if (hit) {
            char key[16];
            consider(t, &w, key, (size_t)snprintf(key, sizeof key, "[%d]", i));
        }
    }
    lua_pop(L, 1);
}

/* KEY:method for each registry entry KEY (a string) holding a table: a
 * metatable of luaL_newmetatable, its methods in it or in its __index
 * table (FILE*:read, "directory metatable:next" of lfs). _LOADED holds
 * the modules, already searched. */
static void scan_metatables(lua_State *L, target *t, int direct)
{
    unsigned walk = CO_WALK_MAX;
    lua_pushnil(L);
    while (lua_next(L, LUA_REGISTRYINDEX) && --walk) {
        where w = {NULL, 0, ":"};
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE)
            w.mod = lua_tolstring(L, -2, &w.mlen);
        if (w.mod && !is(w.mod, w.mlen, "_LOADED")) {
            int mt = lua_gettop(L);
            scan(L, mt, &w, t, direct);
            lua_pushliteral(L, "__index");
            lua_rawget(L, mt);
            if (lua_type(L, -1) == LUA_TTABLE && !lua_rawequal(L, -1, mt))
                scan(L, lua_gettop(L), &w, t, direct);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    if (!walk)
        lua_pop(L, 2);
}

/* KEY (upvalue N) for each global C function KEY holding the target as
 * its upvalue N: the iterator ipairs returns is ipairs's upvalue 1, a
 * static function no symbol names. Cost: only for a C function nothing
 * else names, once. */
static void scan_upvalues(lua_State *L, target *t)
{
    unsigned walk = CO_WALK_MAX;
    const where w = {NULL, 0, NULL};
    co_module_push_globals(L);
    int g = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, g) && --walk) {
        for (int i = 1; i <= 8 && lua_type(L, -2) == LUA_TSTRING && lua_iscfunction(L, -1); i++) {
            if (!lua_getupvalue(L, -1, i))
                break;
            /* by its C function, or the closure itself (LuaJIT's fast
             * functions have none) */
            int hit = t->cf ? lua_tocfunction(L, -1) == t->cf : lua_topointer(L, -1) == t->cl;
            lua_pop(L, 1);
            if (hit) {
                char key[CO_NAME_MAX];
                size_t klen;
                const char *k = lua_tolstring(L, -2, &klen);
                int n = snprintf(key, sizeof key, "%.*s (upvalue %d)", (int)klen, k, i);
                if (n > 0 && (size_t)n < sizeof key)
                    consider(t, &w, key, (size_t)n);
            }
        }
        lua_pop(L, 1);
    }
    lua_settop(L, g - 1);
}

/* The standard library's iterators: static C functions that only the
 * closure a factory returns holds, called by generic for loops (where
 * Lua's own name is "(for generator)"). Found once, at load: by their C
 * function, or under LuaJIT, for a fast function that has none
 * (ipairs's), by its one closure. */
static struct {
    lua_CFunction cf;
    const void *cl;
    const char *name;
} g_iters[3];

/* What lib.fn (of the globals at g; lib NULL: a global) returns when
 * called with args ('t' an empty table, 's' ""), into it: its C function,
 * else a C function's closure (LuaJIT's fast functions); nothing if
 * neither. Only a C function is called: a Lua one is the program's own. */
static void iterator_of(lua_State *L, int g, const char *lib, const char *fn, const char *args,
                        size_t i)
{
    int top = lua_gettop(L);
    lua_pushvalue(L, g);
    if (lib)
        field(L, lib);
    field(L, fn);
    if (lua_iscfunction(L, -1)) {
        for (const char *a = args; *a; a++)
            if (*a == 't')
                lua_newtable(L);
            else
                lua_pushliteral(L, "");
        if (lua_pcall(L, (int)strlen(args), 1, 0) == 0 && lua_iscfunction(L, -1)) {
            g_iters[i].cf = lua_tocfunction(L, -1);
            g_iters[i].cl = g_iters[i].cf ? NULL : lua_topointer(L, -1);
        }
    }
    lua_settop(L, top);
}

void co_name_iterators(lua_State *L)
{
    static const struct {
        const char *lib, *fn, *args, *name;
    } probe[] = {{NULL, "ipairs", "t", "ipairs iterator"},
                 {"string", "gmatch", "ss", "string.gmatch iterator"},
                 {"io", "lines", "", "io.lines iterator"}};
    co_module_push_globals(L);
    int g = lua_gettop(L);
    for (size_t i = 0; i < sizeof probe / sizeof probe[0]; i++) {
        iterator_of(L, g, probe[i].lib, probe[i].fn, probe[i].args, i);
        g_iters[i].name = probe[i].name;
    }
    lua_pop(L, 1);
}

static int name_iterator(target *t)
{
    const where w = {NULL, 0, NULL};
    for (size_t i = 0; i < sizeof g_iters / sizeof g_iters[0]; i++)
        if (g_iters[i].cf ? g_iters[i].cf == t->cf : g_iters[i].cl && g_iters[i].cl == t->cl) {
            consider(t, &w, g_iters[i].name, strlen(g_iters[i].name));
            return 1;
        }
    return 0;
}

/* A C function no global or module reaches: a library iterator, else
 * package.loaders[N] or a metatable's method (the shortest), else a
 * global's upvalue, else its exported symbol, exactly at its address (a
 * static function has none: the call site names it, else its file). */
static void name_c(lua_State *L, target *t, int direct)
{
    if (name_iterator(t))
        return;
    scan_loaders(L, t);
    scan_metatables(L, t, direct);
    if (!t->len)
        scan_upvalues(L, t);
    Dl_info dl;
    if (!t->len && dladdr((void *)t->cf, &dl) && dl.dli_sname && dl.dli_saddr == (void *)t->cf) {
        const where w = {NULL, 0, NULL};
        consider(t, &w, dl.dli_sname, strlen(dl.dli_sname));
    }
}

/* The executable's file name (no directory) as /proc/PID/maps shows it,
 * its real path, not argv[0]'s (a symlink's name, or bare). -1 when it
 * cannot be read or does not fit in cap. */
int co_name_exe(char *out, size_t cap)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return -1;
    path[n] = 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strlen(base) >= cap)
        return -1;
    memcpy(out, base, strlen(base) + 1);
    return 0;
}

/* The main program's file is the head of the link map, which dladdr names
 * by argv[0]: co_name_exe's name instead, as recorderd reads it from
 * outside (rd_peek_init). */
void co_name_module(lua_CFunction cf, char *best, size_t cap)
{
    Dl_info dl;
    struct link_map *lm = NULL;
    best[0] = 0;
    if (!cf || !dladdr1((void *)cf, &dl, (void **)&lm, RTLD_DL_LINKMAP) || !dl.dli_fname)
        return;
    if (lm && !lm->l_prev) {
        if (co_name_exe(best, cap))
            best[0] = 0;
        return;
    }
    const char *base = strrchr(dl.dli_fname, '/');
    snprintf(best, cap, "%s", base ? base + 1 : dl.dli_fname);
}

/* Every access is raw: a metamethod of package.loaded or of a module
 * would run the program's code inside the hook. */
void co_name_find(lua_State *L, int fi, int direct, char *best, size_t cap)
{
    target t = {lua_topointer(L, fi), co_cpath_shown(lua_tocfunction(L, fi)), best, cap, 0, 0};
    const where globals = {NULL, 0, NULL};
    best[0] = 0;
    co_module_push_globals(L);
    scan(L, lua_gettop(L), &globals, &t, direct);
    lua_pop(L, 1);
    lua_pushliteral(L, "_LOADED");
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_type(L, -1) == LUA_TTABLE) {
        int loaded = lua_gettop(L);
        lua_pushnil(L);
        while (lua_next(L, loaded)) {
            where m = {NULL, 0, NULL};
            if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE)
                m.mod = lua_tolstring(L, -2, &m.mlen);
            if (m.mod && !is(m.mod, m.mlen, "_G")) /* the globals, however set */
                scan(L, lua_gettop(L), &m, &t, direct);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    if (!t.len && t.cf)
        name_c(L, &t, direct);
    else if (!t.len && lua_iscfunction(L, fi) && !name_iterator(&t)) /* LuaJIT's fast one */
        scan_upvalues(L, &t);
    for (size_t i = 0; i < t.len; i++) /* chosen by whole keys, shown as a C string */
        if (!best[i])
            best[i] = ' ';
}

/* {====== layout check */

static int probe_a(lua_State *L)
{
    return lua_gettop(L);
}

static int probe_b(lua_State *L)
{
    return lua_gettop(L) + 1;
}

/* Both ways name f (at fi) alike in the table at t. */
static int agree(lua_State *L, int t, int fi)
{
    char a[256], b[256];
    target ta = {lua_topointer(L, fi), lua_tocfunction(L, fi), a, sizeof a, 0, 0};
    target tb = ta;
    tb.best = b;
    const where m = {"m", 1, NULL};
    scan_api(L, t, &m, &ta);
    scan_direct(lua_topointer(L, t), &m, &tb);
    return ta.len && ta.len == tb.len && !memcmp(a, b, ta.len);
}

int co_name_layout_check(lua_State *L)
{
    static const char *const keys[] = {"alpha", "b", "gamma_long_key", "d", "e", "zz"};
    int top = lua_gettop(L), ok = 1;
    lua_newtable(L);
    int t = lua_gettop(L);
    for (int i = 1; i <= 40; i++) { /* an array part, and numbers in the nodes */
        lua_pushinteger(L, i);
        lua_rawseti(L, t, i * (i % 3 ? 1 : 1000));
    }
    lua_pushcfunction(L, probe_a); /* one C function under several names */
    int fa = lua_gettop(L);
    lua_pushcfunction(L, probe_b);
    int fb = lua_gettop(L);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        lua_pushvalue(L, i % 3 == 2 ? fb : fa);
        lua_setfield(L, t, keys[i]);
    }
    lua_pushlstring(L, "z\0", 2); /* the key's length is read, not up to a NUL */
    lua_pushvalue(L, fb);
    lua_rawset(L, t);
    ok = luaL_loadstring(L, "return 1") == 0;
    lua_pushvalue(L, -1);
    lua_setfield(L, t, "lua_fn");
    /* the header first: a wrong layout must fail before nodes are read */
    const uint8_t *tb = lua_topointer(L, t);
    ok = ok && tb[8] == LUA_TTABLE && tb[TB_LSIZENODE] >= 3 && tb[TB_LSIZENODE] <= 6 &&
         lr_int_at(tb, TB_SIZEARRAY) >= 8 && lr_int_at(tb, TB_SIZEARRAY) <= 64;
    ok = ok && agree(L, t, fa) && agree(L, t, fb) && agree(L, t, lua_gettop(L));
    lua_settop(L, top);
    return ok;
}

/* }====== */
