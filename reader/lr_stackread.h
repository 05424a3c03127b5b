/* lr_stackread: reads every Lua thread's stack of a Lua 5.1 state from
 * memory that may be anything, into dump records (STR, FUNC, THREAD, START,
 * FRAME, RESUME; proto/lt_event.h). Used by the collector's signal handler
 * (co_sigdump.c, on its own pid) and by recorderd (rd_peek.c, on another
 * process that never loaded the collector): so it uses no Lua API, no
 * allocation and no stdio; every object is copied with process_vm_readv,
 * which fails on a bad address instead of faulting, every loop and length
 * is bounded, every type tag checked, and the reads end at the caller's
 * deadline (d->deadline_us). The layout is lr_layout.h's. */
#ifndef LR_STACKREAD_H
#define LR_STACKREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lr_code.h"
#include "lr_layout.h"

enum {
    OP_MOVE = 0,
    OP_LOADNIL = 3,
    OP_GETUPVAL = 4,
    OP_GETGLOBAL = 5,
    OP_GETTABLE = 6,
    OP_SETGLOBAL = 7,
    OP_SETUPVAL = 8,
    OP_SETTABLE = 9,
    OP_SELF = 11,
    OP_JMP = 22,
    OP_EQ = 23,
    OP_LT = 24,
    OP_LE = 25,
    OP_TEST = 26,
    OP_CALL = 28,
    OP_TAILCALL = 29,
    OP_RETURN = 30,
    OP_FORLOOP = 31,
    OP_FORPREP = 32,
    OP_TFORLOOP = 33,
    OP_SETLIST = 34,
    OP_CLOSE = 35,
    OP_VARARG = 37
};

enum {
    MAX_THREADS = 1024,
    MAX_FUNCS = 1024,
    MAX_FRAMES = 16384,
    CI_MAX = 20000,
    WALK_MAX = 1 << 28,
    SCAN_MAX = 20000,    /* nodes read per table when naming */
    SCAN_TOTAL = 200000, /* and in all */
    BACK_MAX = 256,
    SITE_CODE = 8192, /* instructions, and */
    SITE_MAX = 256,   /* call sites, a call site's name is checked against */
    NAME_MAX_ = 128,
    OUT_CAP = 1 << 18,
    SNAP_CI = 512,  /* CallInfos, */
    SNAP_TV = 2048, /* and stack slots, a thread's snapshot copies at most */
    SNAP_QUICK_US = 10, /* a copy longer than this was held up: frames told by pc refused */
    OP_CACHE = 64,
    CL_CACHE = 16
};

/* The call that a frame read as the process ran was called by: named
 * once the read is over (lr_sr_name_functions), and only if needed. */
typedef struct lr_sr_site {
    const void *pr;     /* the caller's Proto (NULL: none), */
    const void *cl;     /* closure, */
    const void *env;    /* globals, */
    const char *base;   /* base, */
    int pc;             /* and pc: its call */
    const char *func;   /* the callee's slot, */
    const void *callee; /* the closure in it, */
    uint8_t arg1[TV_SIZE]; /* the slot above it (self), as read, */
    uint8_t self_tb[TB_READ]; /* and its header if a table */
} lr_sr_site;

typedef struct lr_sr_func {
    const void *key; /* Proto* of a Lua function, else the lua_CFunction */
    const void *cl;  /* the closure first seen running it */
    const void *src; /* Proto.source (TString*), for sharing its STR */
    uint32_t fid, flags, src_sid;
    int linedef, lastline;
    uint8_t isC, main;
    char name[NAME_MAX_]; /* best table path so far */
    char call[NAME_MAX_]; /* the name at a call site */
    lr_sr_site site;      /* read running: the call site to name it by */
    const void *body_src; /* a wrap function's: its body's Proto.source, */
    int body_line;        /* and linedefined */
} lr_sr_func;

typedef struct lr_sr_frame {
    uint32_t fn, line, depth;
} lr_sr_frame;

typedef struct lr_sr_thread {
    const void *L;
    uint32_t first, n;  /* frames[first..first+n), top first */
    const void *target; /* the thread its top frame resumes, or NULL */
    uint8_t active, top_c, in_chain;
    uint8_t dead; /* died of an error: its frames stay, but it never runs again */
    uint8_t torn; /* its walk stopped short of the base: a read of a moving stack */
} lr_sr_thread;

typedef struct lr_sr {
    pid_t pid;             /* whose memory */
    const void *cf[5];     /* pcall, xpcall, resume, wrap, yield: lua_CFunction */
    const void *self_fn;   /* luaopen_luatrace, named so */
    /* optional: the file (basename) that defines C function cf into out,
     * nonzero if known; names a C function that has no other name */
    int (*c_module)(const struct lr_sr *d, const void *cf, char *out, size_t cap);
    const void *g;
    /* the process runs while it is read (the caller's to set): a name at
     * a call site is given only where no other call site can have given
     * another (the caller's saved pc may be another call's); a frame whose
     * slot holds something else by the time it is copied is told by its
     * saved pc (code, below), and a top frame caught halfway through a
     * call or a return is left out, its caller the top */
    uint8_t running;
    lr_sr_thread th[MAX_THREADS];
    uint32_t nth;
    lr_sr_func fn[MAX_FUNCS];
    uint32_t nfn;
    lr_sr_frame fr[MAX_FRAMES];
    uint32_t nfr;
    uint32_t chain[MAX_THREADS], nchain;
    uint8_t out[OUT_CAP];
    size_t nout;
    uint32_t next_sid, flags;
    uint32_t budget; /* table nodes the naming may still read */
    /* the last closure read (and its Proto), copied in k_c (k_p); the
     * closures and lines read so far: a recursion reads each once */
    const void *k_cl;
    uint8_t k_c[CL_READ], k_p[PR_READ];
    struct {
        const void *cl;
        uint8_t c[CL_READ], p[PR_READ];
    } kc[CL_CACHE];
    struct {
        const void *pr;
        int pc;
        uint32_t line;
    } kl[CL_CACHE];
    const void *op_key[OP_CACHE]; /* saved pcs whose instruction was read, */
    uint8_t op_val[OP_CACHE];     /* and its opcode */
    /* the thread being read: its CallInfos and stack slots near its top,
     * copied at one moment (n of each; none outside read_thread) */
    const char *sn_ci, *sn_tv;
    size_t sn_nci, sn_ntv;
    uint8_t sn_cis[SNAP_CI * CI_SIZE], sn_tvs[SNAP_TV * TV_SIZE];
    const void *sn_far; /* and one slot below them, if not NULL */
    uint8_t sn_far_tv[TV_SIZE];
    uint8_t sn_quick; /* the window is the top one, copied within SNAP_QUICK_US */
    /* the Lua functions seen running, kept from read to read: a frame
     * whose slot no longer holds its function (read running) is told by
     * its saved pc */
    lr_code code;
    /* when reads must end (CLOCK_MONOTONIC, us; 0: never), the caller's to
     * set; late: a read ended so, its threads or names may be missing */
    uint64_t deadline_us;
    uint8_t late;
} lr_sr;


/* Reads every stack of the state whose main thread is main (an address in
 * d->pid) into d->out; with walk_ok, the coroutines on the GC list too.
 * d->pid, d->cf, d->self_fn and d->deadline_us are the caller's to set
 * first: every entry point's reads fail once the deadline has passed. */
void lr_sr_collect(lr_sr *d, const void *main, int walk_ok);

/* The three steps of lr_sr_collect. lr_sr_read copies the stacks: of main
 * and, with walk_ok, every coroutine on the GC list, else of the threads
 * main resumes in turn (the running chain); the only step that needs the
 * state to hold still. lr_sr_records writes d->out from what was read and
 * named (reading the sources' names). */
void lr_sr_read(lr_sr *d, const void *main, int walk_ok);

/* lr_sr_read for a process read from outside: main's stack and the
 * threads it resumes in turn (the running chain, which may have been made
 * since th was found), then the threads th (found on the GC list earlier,
 * the process running: each checked to be a live thread of the state
 * still) and those they resume. d->late: the deadline cut the read. */
void lr_sr_read_threads(lr_sr *d, const void *main, const void *const *th, size_t n);

/* The steps of lr_sr_collect after lr_sr_read: naming and the records. */
void lr_sr_finish(lr_sr *d, const void *main);

/* Names d's functions from the globals and package.loaded of main, and,
 * after a read made running, those with no such name by the call they
 * were first seen called from (at most SITE_MAX call sites of its caller
 * are read to check it). */
void lr_sr_name_functions(lr_sr *d, const void *main);

/* Copies n bytes at addr of d->pid into dst. Returns 0, or -1 if any of
 * them cannot be read. */
int lr_sr_peek(const lr_sr *d, const void *addr, void *dst, size_t n);

/* Function f's name as the records give it (main chunk, a table path,
 * the name at a call site, a C function's file by d->c_module (in buf),
 * or "function"), and its source as Lua's short_src shows it ("[C]" for a
 * C function) in out. */
const char *lr_sr_func_name(const lr_sr *d, const lr_sr_func *f, char *buf, size_t cap);
size_t lr_sr_func_source(const lr_sr *d, const lr_sr_func *f, char *out, size_t cap);

/* Sets d->cf from the globals of main (pcall, xpcall, coroutine.resume,
 * coroutine.yield; wrap's function stays unknown and is recognised as a C
 * closure whose one upvalue is a thread). For a process that cannot run
 * Lua for us. */
void lr_sr_find_specials(lr_sr *d, const void *main);

#endif
