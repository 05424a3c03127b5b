/* co_sigdump: `recorderd dump` of a process blocked in C, answered by the
 * signal handler itself (LT_ATTACH_DUMP_NOW; the rendezvous is in
 * proto/lt_attach.h).
 *
 * A process blocked in C (poll, read, sleep) runs no Lua event that could
 * serve its dump; but its Lua state is then quiescent, so its stacks can be
 * read without the Lua API, by lr_stackread on our own pid. A state caught
 * mid-update (the process ran Lua after all, or another thread of the host
 * does) gives at worst a wrong frame, never a crash. The records (the
 * collector's thread ids are not the handler's to read, so the message
 * numbers its threads itself) go to a static buffer, then after an lt_ctl
 * dump head to recorderd's socket. Async-signal-safe: no allocation, no
 * stdio, no Lua API. The layout (Lua 5.1, LP64) is checked when listening
 * against the debug API's view of a known stack (co_sigdump_check).
 */
#include <errno.h>
#include <lauxlib.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "lr_stackread.h"
#include "co_state.h"
#include "lt_attach.h"
#include "lt_ctl.h"

static lr_sr g_sd; /* one handler at a time: the signal is blocked while it runs */

static int send_all(int fd, const uint8_t *p, size_t n)
{
    for (unsigned tries = 0; n && tries < 1000; tries++) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno != EINTR)
            return -1;
        if (k > 0) {
            p += k;
            n -= (size_t)k;
        }
    }
    return n ? -1 : 0;
}

int co_sigdump_send(lua_State *main, int walk_ok, const char *sock)
{
    lr_sr *d = &g_sd;
    d->pid = getpid();
    lr_sr_collect(d, main, walk_ok);
    if (!d->nth)
        return -1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(sock);
    if (n >= sizeof a.sun_path)
        return -1;
    memcpy(a.sun_path, sock, n + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {2, 0}; /* recorderd reads at once; never hang the host */
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    uint8_t head[LT_CTL_DUMP_HEAD_MAX];
    size_t hn = lt_ctl_dump_head(head, (uint32_t)getpid(), (uint32_t)d->nout, d->flags);
    struct ucred cr;
    socklen_t crl = sizeof cr;
    /* the stacks go to a listener of this user only (lt_trust.h) */
    int e = connect(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0 || cr.uid != geteuid() ||
            send_all(fd, head, hn) || send_all(fd, d->out, d->nout);
    close(fd);
    return e ? -1 : 0;
}

/* {====== the check at listen */

static int check_probe(lua_State *L);

/* Compares the reader's view of L's stack with lua_getstack/lua_getinfo. */
static int same_as_debug_api(lua_State *L, const lr_sr *d)
{
    const lr_sr_thread *t = NULL;
    for (uint32_t i = 0; i < d->nth; i++)
        if (d->th[i].L == L)
            t = &d->th[i];
    lua_Debug ar;
    int level = 0, k = 0;
    if (!t || !t->active || !t->top_c)
        return 0;
    for (; lua_getstack(L, level, &ar); level++) {
        if (CO_AR_DEPTH(&ar) == 0)
            continue; /* a lost tail call: no CallInfo */
        lua_getinfo(L, "Sln", &ar);
        if ((uint32_t)k >= t->n)
            return 0;
        const lr_sr_frame *fr = &d->fr[t->first + k++];
        const lr_sr_func *f = &d->fn[fr->fn];
        if (fr->depth != CO_AR_DEPTH(&ar) || f->isC != (ar.what[0] == 'C'))
            return 0;
        if (!f->isC && (f->linedef != ar.linedefined || (int)fr->line != ar.currentline))
            return 0;
        if (level <= 1 && (!ar.name || strcmp(ar.name, f->call)))
            return 0; /* the probe and its caller are named at their call sites */
    }
    return (uint32_t)k == t->n && level >= 3 &&
           d->fn[d->fr[t->first].fn].key == (const void *)check_probe;
}

static int g_check_ok;

static int check_probe(lua_State *L)
{
    lr_sr *d = &g_sd;
    lr_sr_collect(d, L, 0);
    g_check_ok = same_as_debug_api(L, d);
    /* names from tables: the argument, coroutine.yield, is found under
     * package.loaded.coroutine */
    lr_sr_func *f = &d->fn[0];
    memset(f, 0, sizeof *f);
    d->nfn = 1;
    f->key = d->cf[4];
    f->cl = lua_topointer(L, 1);
    f->isC = 1;
    lr_sr_name_functions(d, L);
    g_check_ok = g_check_ok && !strcmp(f->name, "coroutine.yield");
    return 0;
}

/* The main program's mapped range and file name, found when listening:
 * lua.c's pmain, a static function, is named after it in a dump, as the
 * collector names it when tracing (co_name_module). */
static uintptr_t g_exe_lo, g_exe_hi;
static char g_exe[64];

static int exe_range(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    (void)ud;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type != PT_LOAD)
            continue;
        g_exe_lo = !g_exe_lo || lo < g_exe_lo ? lo : g_exe_lo;
        g_exe_hi = hi > g_exe_hi ? hi : g_exe_hi;
    }
    return 1; /* the first object is the main program */
}

static int exe_module(const lr_sr *d, const void *cf, char *out, size_t cap)
{
    (void)d;
    size_t n = strlen(g_exe);
    if (!n || (uintptr_t)cf < g_exe_lo || (uintptr_t)cf >= g_exe_hi || n >= cap)
        return 0;
    memcpy(out, g_exe, n + 1);
    return 1;
}

static void find_exe(void)
{
    g_exe_lo = g_exe_hi = 0;
    if (co_name_exe(g_exe, sizeof g_exe)) {
        g_exe[0] = 0;
        return;
    }
    dl_iterate_phdr(exe_range, NULL);
}

int co_sigdump_check(lua_State *L)
{
    static const char chunk[] = "local probe, yield = ...\n"
                                "local function callee(x)\n"
                                "  local y = probe(yield)\n"
                                "  return y\n"
                                "end\n"
                                "local r = callee(1)\n"
                                "return r\n";
    co_state s;
    memset(&s, 0, sizeof s);
    co_module_special_functions(&s, L);
    lr_sr *d = &g_sd;
    d->pid = getpid();
    d->self_fn = (const void *)luaopen_luatrace;
    d->cf[0] = (const void *)s.cf_pcall;
    d->cf[1] = (const void *)s.cf_xpcall;
    d->cf[2] = (const void *)s.cf_resume;
    d->cf[3] = (const void *)s.cf_wrap;
    d->cf[4] = (const void *)s.cf_yield;
    find_exe();
    d->c_module = exe_module;
    g_check_ok = 0;
    int top = lua_gettop(L);
    if (luaL_loadbuffer(L, chunk, sizeof chunk - 1, "=luatrace-sigdump-check") == 0) {
        lua_pushcfunction(L, check_probe);
        if (s.cf_yield) /* a closure of coroutine.yield's C function */
            lua_pushcfunction(L, s.cf_yield);
        else
            lua_pushnil(L);
        if (lua_pcall(L, 2, 0, 0))
            g_check_ok = 0;
    }
    lua_settop(L, top);
    return g_check_ok && d->cf[4];
}

/* }====== */
