/* rd_peek54: `recorderd dump PID` of a Lua 5.4 process that never loaded
 * the collector, read from outside as rd_peek reads Lua 5.1 (ptrace stop,
 * process_vm_readv, nothing written to it). rd_peek54.c finds the state and
 * checks the layout (rd_lua54.h) against it; rd_stack54.c reads the
 * threads' stacks and names the functions; rd_snap54.c copies a sample's
 * thread at one moment for them. */
#ifndef RD_PEEK54_H
#define RD_PEEK54_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* A pointer and an int at off in a copy of 5.4's memory (unaligned). */
static inline uintptr_t r54_ptr_at(const uint8_t *b, int off)
{
    uintptr_t v;
    memcpy(&v, b + off, sizeof v);
    return v;
}

static inline int r54_int_at(const uint8_t *b, int off)
{
    int v;
    memcpy(&v, b + off, sizeof v);
    return v;
}

struct rd_peek_stop; /* rd_peek.h's */
typedef struct r54_snap r54_snap; /* rd_snap54.c's */

enum {
    R54_THREADS = 1024,
    R54_FUNCS = 1024,
    R54_FRAMES = 16384,
    R54_ROOT = 100, /* bottom frames a sample keeps of a stack cut (leaf_max) */
    R54_NAME = 128,
    R54_ARG = 200,     /* a longer module name: require's calls not told apart (co_func's ARG_MAX) */
    R54_ARGKEY = 0x10, /* keys of require's calls: below any address of code or data */
    R54_SEARCHERS = 4, /* package.searchers told by their argument, as the collector's first four */
    OUT54_CAP = 1 << 18 /* bytes of a dump's records */
};

typedef struct r54_fn {
    uintptr_t key; /* Proto* of a Lua function, else the lua_CFunction */
    uintptr_t cl;  /* a closure seen running it (0: a light C function) */
    uintptr_t src; /* Proto.source (TString*) */
    uintptr_t code, ncode; /* a Lua function's Proto.code and its size in bytes */
    int linedef, lastline;
    uint8_t isC;
    char name[R54_NAME]; /* a table path from the globals, or empty */
    char call[R54_NAME]; /* the name it was called by, or empty */
    uint8_t call_read;   /* its call was read for a name (once) */
    uintptr_t body_src;  /* a coroutine.wrap function's: its body's source, */
    int body_line;       /* and linedefined (its key: the body's Proto + 1) */
    /* require called with arg, as the collector tells its calls apart
     * (require "a.b"): argfn its C function, key R54_ARGKEY + its index */
    uintptr_t argfn;
    uint8_t searcher; /* package.searchers[N]'s N, 0 for require */
    char arg[R54_ARG + 1];
    uint8_t for_state; /* called by a generic for: its state's tag + 1 (0: not seen) */
} r54_fn;

typedef struct r54_frame {
    uint32_t fn, depth;
    int line;
    uintptr_t pr; /* a Lua function's Proto, and */
    int pc;       /* the instruction it is on */
    uint16_t cs;  /* CallInfo.callstatus */
    uintptr_t slot, val; /* its function's stack slot, and the value read there */
    uint8_t tt;
    uint8_t call_ok; /* still running once its caller was read: that caller's pc is its call */
} r54_frame;

typedef struct r54_thread {
    uintptr_t L;
    uint32_t first, n;  /* frames[first..first+n), top first */
    uintptr_t target;   /* the thread its top frame (a C function) resumes */
    uint8_t status, active, in_chain;
    uint8_t torn; /* its walk ended short of base_ci: a stack read as it moved */
    uint32_t gap; /* frames [first, first+gap) are its top ones, those after
                     its bottom ones, and frames between them were left out
                     (leaf_max); 0: none left out */
} r54_thread;

typedef struct r54 {
    pid_t pid;
    uintptr_t L, g;       /* the main thread, its global_State */
    uint64_t deadline_us; /* reads fail after it (CLOCK_MONOTONIC; 0: never) */
    /* frames read from a thread's top at most, then R54_ROOT from its
     * bottom (a sample's: a deep stack read whole each time took longer
     * than the sampling period); 0: up to R54_FRAMES from the top (dump) */
    uint32_t leaf_max;
    uint8_t late, truncated;
    r54_thread th[R54_THREADS];
    uint32_t nth;
    r54_fn fn[R54_FUNCS];
    uint32_t nfn;
    r54_frame fr[R54_FRAMES];
    uint32_t nfr;
    uint32_t chain[R54_THREADS], nchain; /* the running threads: main, then each one resumed */
    uint8_t *out; /* the dump's records (lt_event.h), OUT54_CAP bytes */
    size_t nout;
    uint32_t next_sid;
    r54_snap *snap; /* a sample's copy of the thread read (rd_snap54.c); NULL: all read live */
    uintptr_t cf_require; /* the C function of the global require, once looked up, */
    uintptr_t cf_searcher[R54_SEARCHERS]; /* and those of package.searchers[1..4] */
    uint8_t require_looked;
} r54;

/* `recorderd dump PID` of a Lua 5.4 process (lib: the file defining
 * lua_ident): its stacks to out, or a one-line refusal on stderr when its
 * state is not found or not laid out as rd_lua54.h says. Exit code. */
int rd_peek54_dump(pid_t pid, const char *lib, FILE *out);

/* top's: the state of process pid (lib: the file defining lua_ident)
 * found, the process running, and its layout checked. Returns 0 with *out
 * set (r54_close frees it), or the exit code after a one-line refusal on
 * stderr. */
int r54_open(pid_t pid, const char *lib, struct rd_peek_stop *s, r54 **out);
/* The same, the refusal's message in err: 0, or -errno (-ESRCH: it
 * exited; -ENOEXEC: no state, or laid out otherwise). s NULL: without the
 * first moment's stop (run --sample: the process waits for recorderd's
 * ack, and recorderd, its parent, must not take its child's stop). */
int r54_find(pid_t pid, const char *lib, struct rd_peek_stop *s, r54 **out, char *err,
             size_t cap);
void r54_close(r54 *d);

/* One sample of the running chain (main, then the threads it resumes, in
 * turn) into d->th, d->fr and d->chain, d->fn kept from sample to sample.
 * With stop, the process is held stopped for the read and *stopped_us
 * grows by how long; without, it is read running. 0, or -errno: -ESRCH,
 * the process or its state is gone; -EAGAIN, a stack caught moving. */
int r54_sample(r54 *d, struct rd_peek_stop *s, int stop, uint64_t *stopped_us);

/* Fills d->chain from d->th (main first). */
void r54_chain(r54 *d);

/* Looks up, once, the C functions named by their first argument: the
 * global require's and those of package.searchers[1..4]. */
void r54_find_loaders(r54 *d);

/* Names d's unnamed functions from the globals and package.loaded. */
void r54_name_functions(r54 *d);

/* Function f's name as dump gives it (into buf if made there), and its
 * source as short_src ("[C]" for a C function) into out. */
const char *r54_func_name(r54 *d, const r54_fn *f, char *buf, size_t cap);
void r54_func_source(r54 *d, const r54_fn *f, char *out, size_t cap);
/* Whether f's name is one it keeps: a main chunk's, a global or module
 * name, or its call's. Else (a fallback: "function", a wrap function's
 * body, a C function's file) a later sample may read its call, and a
 * sampled view names it again then. */
int r54_func_named(const r54_fn *f);

/* Copies n bytes at addr of d->pid: 0, or -1 (also past the deadline). */
int r54_peek(r54 *d, uintptr_t addr, void *dst, size_t n);

/* Reads thread L's stack into d (the process stopped). */
void r54_read_thread(r54 *d, uintptr_t L);

/* A sample's thread copied at one moment (rd_snap54.c), for r54_peek to
 * serve its reads from: r54_snap_open makes d->snap (0, or -1 out of
 * memory), r54_snap_close frees it. r54_snap_take copies thread L (its
 * lua_State, its stack's top, the pages its CallInfos were found in),
 * r54_snap_end stops serving the copy. r54_snap_read: 1 with n bytes at
 * addr from the copy, 0 if they are not all in it. r54_snap_note: the
 * CallInfo at ci, read live, has its page copied from the next sample
 * on. All do nothing without d->snap. */
int r54_snap_open(r54 *d);
void r54_snap_close(r54 *d);
void r54_snap_take(r54 *d, uintptr_t L);
void r54_snap_end(r54 *d);
int r54_snap_read(r54 *d, uintptr_t addr, void *dst, size_t n);
void r54_snap_note(r54 *d, uintptr_t ci);

/* String ts's bytes into out (NUL-terminated, cut at cap - 1): its
 * length, or -1 if it does not read as a string. */
int r54_tstring(r54 *d, uintptr_t ts, char *out, size_t cap);

/* The name, as the call in Proto pr at pc gives it to the function it
 * calls (a local, global, field, method or upvalue name, as 5.4's
 * getobjname finds it), into out: 1, or 0 if none; -1 if the code could
 * not be read (or the read ran out of time), to be tried again. */
int r54_call_name(r54 *d, uintptr_t pr, int pc, char *out, size_t cap);

/* Names d's functions from the globals and package.loaded, then writes
 * the records of every thread (the running chain first) to d->out. */
void r54_records(r54 *d);

#endif
