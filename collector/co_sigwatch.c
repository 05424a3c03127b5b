/* co_sigwatch: the tick's signal kept where the program's C code reset it.
 *
 * Sampled time's ticks come as a real-time signal whose handler is ours
 * (co_tick.c). A program may set every signal's handler back to the
 * default (a daemon's start, a library that cleans up before it runs a
 * child's code: for n = 1, 64 do signal(n, SIG_DFL) end), or to one of its
 * own. At the next tick the kernel then took the default action of a
 * real-time signal and ended the process (status 128 + 40); a handler of
 * the program's got a tick 1000 times a second.
 *
 * No notice comes of a new handler, so the collector looks after each call
 * of a C function that is not Lua's own and whose object calls one of
 * libc's functions that set one (its relocations name sigaction, signal
 * and the like: posix.signal's functions, not lpeg's, whose calls cost
 * nothing more), learnt once per object: the call marks the state (co_sigwatch_after) and
 * the next record, which takes the ring's slow path, asks the kernel for
 * the handler (one sigaction, a fraction of a microsecond; only while the
 * ticks run). Found gone, the tick moves to a signal whose handler is the
 * default (the same one where the program set the default back: its own
 * raise of it is then dropped, as before the trace began), and the program
 * keeps the handler it set. A tick that came between the program's reset
 * and the end of its C function still meets the default: the window is
 * that function's remaining instructions. C functions of the Lua core's
 * own object (the interpreter, liblua: the standard library) are not
 * looked at: they set no handler (lua.c's SIGINT is set outside any call
 * event); nor is a handler that a module sets through another library
 * (the calls are that library's), or LuaJIT's FFI (its calls are
 * LuaJIT's). */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "co_state.h"

#if __ELF_NATIVE_CLASS == 64
#define CO_R_SYM ELF64_R_SYM
#else
#define CO_R_SYM ELF32_R_SYM
#endif

static const void *g_core; /* the base of the object holding Lua's API */
static const void *g_self; /* the collector's */
static int g_bases;        /* 1: both known (0: not looked, -1: not found) */

/* The verdicts on the objects met so far: whether it calls one of libc's
 * functions that set a handler. Past CO_SIG_OBJS objects, every further
 * one is looked at each time (a dl_iterate_phdr). */
#define CO_SIG_OBJS 64
static struct {
    const void *base;
    int sets;
} g_obj[CO_SIG_OBJS];
static int g_nobj;

static const char *const g_setters[] = {"sigaction", "signal", "sigset", "bsd_signal",
                                        "sysv_signal", "__sysv_signal", "sigvec", NULL};

static int is_setter(const char *name)
{
    for (int i = 0; g_setters[i]; i++)
        if (!strcmp(name, g_setters[i]))
            return 1;
    return 0;
}

/* d_ptr of a dynamic entry as an address: ld.so relocates most in place,
 * not all (a read-only dynamic section, the vDSO's) */
static uintptr_t dyn_addr(uintptr_t base, uintptr_t v)
{
    return v < base ? v + base : v;
}

struct find {
    uintptr_t fbase; /* dladdr's dli_fbase of the function */
    int sets;        /* out: the object imports a setter (-1: not found) */
};

/* The object at fbase: whether its relocations (PLT and others) name one
 * of g_setters: the calls a module makes into libc go through them. */
static int scan_obj(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    struct find *f = ud;
    const ElfW(Dyn) *dyn = NULL;
    int here = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && f->fbase - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz)
            here = 1;
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
    }
    if (!here)
        return 0;
    f->sets = 0;
    if (!dyn)
        return 1;
    uintptr_t b = info->dlpi_addr, sym = 0, str = 0, jmp = 0, rela = 0;
    size_t jmpsz = 0, relasz = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: sym = dyn_addr(b, dyn->d_un.d_ptr); break;
        case DT_STRTAB: str = dyn_addr(b, dyn->d_un.d_ptr); break;
        case DT_JMPREL: jmp = dyn_addr(b, dyn->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmpsz = dyn->d_un.d_val; break;
        case DT_RELA: rela = dyn_addr(b, dyn->d_un.d_ptr); break;
        case DT_RELASZ: relasz = dyn->d_un.d_val; break;
        default: break;
        }
    }
    if (!sym || !str)
        return 1;
    const struct {
        uintptr_t at;
        size_t n;
    } part[2] = {{jmp, jmp ? jmpsz / sizeof(ElfW(Rela)) : 0},
                 {rela, rela ? relasz / sizeof(ElfW(Rela)) : 0}};
    for (int k = 0; k < 2 && !f->sets; k++) {
        const ElfW(Rela) *r = (const ElfW(Rela) *)part[k].at;
        for (size_t i = 0; i < part[k].n; i++) {
            size_t si = CO_R_SYM(r[i].r_info);
            const ElfW(Sym) *s = (const ElfW(Sym) *)sym + si;
            if (si && s->st_shndx == SHN_UNDEF && is_setter((const char *)str + s->st_name)) {
                f->sets = 1;
                break;
            }
        }
    }
    return 1;
}

static int obj_sets(const void *fbase)
{
    for (int i = 0; i < g_nobj; i++)
        if (g_obj[i].base == fbase)
            return g_obj[i].sets;
    struct find f = {(uintptr_t)fbase, -1};
    dl_iterate_phdr(scan_obj, &f);
    int sets = f.sets != 0; /* not found: looked at, to be safe */
    if (g_nobj < CO_SIG_OBJS) {
        g_obj[g_nobj].base = fbase;
        g_obj[g_nobj].sets = sets;
        g_nobj++;
    }
    return sets;
}

int co_sigwatch_foreign(const void *cf)
{
    Dl_info in;
    if (!g_bases) {
        g_bases = -1;
        if (dladdr((void *)lua_gettop, &in) && in.dli_fbase) {
            g_core = in.dli_fbase;
            if (dladdr((void *)co_sigwatch_foreign, &in) && in.dli_fbase) {
                g_self = in.dli_fbase;
                g_bases = 1;
            }
        }
    }
    /* a LuaJIT fast function's key is its closure, in no object: Lua's */
    return g_bases == 1 && cf && dladdr((void *)cf, &in) && in.dli_fbase &&
           in.dli_fbase != g_core && in.dli_fbase != g_self && obj_sets(in.dli_fbase);
}

void co_sigwatch_check(co_state *s)
{
    s->sig_check = 0;
    if (s->tick_on)
        co_tick_retake(s);
}
