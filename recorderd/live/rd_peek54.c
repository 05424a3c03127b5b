/* rd_peek54: `recorderd dump PID` of a Lua 5.4 process that never loaded
 * the collector (rd_peek54.h). As for 5.1 (rd_peekdump.c), what takes
 * time is done while the process runs: finding its main thread (a scan of
 * its heap: lua_newstate's block holds the main thread and, right after
 * it, the global_State, whose mainthread points back), checking that the
 * library is laid out as rd_lua54.h says, and walking its GC lists for the
 * coroutines. The process is stopped only to copy the stacks. The names
 * are read after, the process running. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "rd_attach.h"
#include "rd_gcwalk.h"
#include "rd_lua54.h"
#include "rd_peek.h"
#include "rd_peek54.h"

enum {
    CHUNK = 1 << 20,
    PER_MAP = 256u << 20, /* bytes scanned from the start of one mapping */
    FIND_MS = 6000,       /* the scan and the walk, the process running */
    STOP_MS = 1000,       /* the read, the process stopped */
    LIST_MAX = 1 << 26,   /* objects walked per list */
    SAMPLE_LEAF = 2048    /* a sample's frames from the top (leaf_max) */
};

int r54_peek(r54 *d, uintptr_t addr, void *dst, size_t n)
{
    if (d->deadline_us && rd_gcwalk_now_us() >= d->deadline_us) {
        d->late = 1;
        return -1;
    }
    if (d->snap && r54_snap_read(d, addr, dst, n)) /* a sample's thread, copied at once */
        return 0;
    struct iovec l = {dst, n}, r = {(void *)addr, n};
    return n && (!addr || process_vm_readv(d->pid, &l, 1, &r, 1, 0) != (ssize_t)n) ? -1 : 0;
}

/* {====== the main thread */

/* Whether the thread-tagged object at addr is a main thread: l_G just
 * past it, the global_State's mainthread back at it. */
static int is_main(r54 *d, uintptr_t addr, const uint8_t *b)
{
    uintptr_t mt;
    return r54_ptr_at(b, L4_G) == addr + L4_SIZE &&
           !r54_peek(d, addr + L4_SIZE + G4_MAINTHREAD, &mt, sizeof mt) && mt == addr;
}

static uintptr_t scan_range(r54 *d, uintptr_t lo, uintptr_t hi, uint8_t *buf)
{
    for (uintptr_t a = lo; a < hi; a += CHUNK) {
        size_t len = hi - a < CHUNK + 64 ? hi - a : CHUNK + 64; /* 64: one across the cut */
        struct iovec l = {buf, len}, r = {(void *)a, len};
        ssize_t got = process_vm_readv(d->pid, &l, 1, &r, 1, 0);
        for (ssize_t o = 0; o + L4_G + 8 <= got && o < CHUNK; o += 8)
            if (buf[o + 8] == O4_THREAD && is_main(d, a + (uintptr_t)o, buf + o))
                return a + (uintptr_t)o;
        if (d->late || (d->deadline_us && rd_gcwalk_now_us() >= d->deadline_us))
            break;
    }
    return 0;
}

/* The first main thread in pid's heap and anonymous private writable
 * mappings, or 0. */
static uintptr_t find_main(r54 *d)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)d->pid);
    FILE *f = fopen(path, "r");
    uint8_t *buf = malloc(CHUNK + 64);
    uintptr_t L = 0;
    while (f && buf && !L && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8], name[256] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perm, name) < 3 ||
            strcmp(perm, "rw-p") || (name[0] && strcmp(name, "[heap]")) || hi - lo > (1ul << 40))
            continue;
        L = scan_range(d, lo, hi - lo > PER_MAP ? lo + PER_MAP : hi, buf);
    }
    free(buf);
    if (f)
        fclose(f);
    return L;
}

/* }====== */

/* Why a Lua 5.4 process cannot be read, into buf. */
static void misfit(pid_t pid, const char *lib, const char *why, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "process %d runs Lua 5.4 (%s), but %s: recorderd reads Lua 5.4.4's layout from "
             "outside and this library's differs. Start it with LUATRACE_ATTACH=1 lua5.4 "
             "-lluatrace ... (or have it call require(\"luatrace\").listen()) and dump and "
             "top work on it",
             (int)pid, lib, why);
}

static int refuse(pid_t pid, const char *lib, const char *why)
{
    char msg[1024];
    misfit(pid, lib, why, msg, sizeof msg);
    fprintf(stderr, "recorderd: %s\n", msg);
    return 1;
}

/* {====== the layout check */

/* Whether string ts reads as the short string want. */
static int is_string(r54 *d, uintptr_t ts, const char *want)
{
    uint8_t h[TS4_CONTENTS + 32];
    size_t n = strlen(want);
    return !r54_peek(d, ts, h, TS4_CONTENTS + n) && h[8] == O4_SHRSTR && h[TS4_SHRLEN] == n &&
           !memcmp(h + TS4_CONTENTS, want, n);
}

/* NULL when the state at d->L is laid out as rd_lua54.h says: known
 * values read where they must be. Else what did not fit. */
static const char *check(r54 *d)
{
    uint8_t g[G4_READ], ls[L4_SIZE], tb[TB4_READ], tv[2 * TV4_SIZE];
    uintptr_t base_func;
    if (r54_peek(d, d->g, g, sizeof g) || r54_peek(d, d->L, ls, sizeof ls))
        return "its state cannot be read";
    if (!is_string(d, r54_ptr_at(g, G4_MEMERRMSG), "not enough memory"))
        return "no memory-error message where 5.4.4 keeps it";
    if (!is_string(d, r54_ptr_at(g, G4_TMNAME), "__index"))
        return "no \"__index\" where 5.4.4 keeps the metamethod names";
    if (g[G4_REGISTRY + TV4_TT] != T4_TABLE || r54_peek(d, r54_ptr_at(g, G4_REGISTRY), tb, sizeof tb) ||
        r54_peek(d, r54_ptr_at(tb, TB4_ARRAY), tv, sizeof tv) || tv[TV4_TT] != T4_THREAD ||
        r54_ptr_at(tv, 0) != d->L || tv[TV4_SIZE + TV4_TT] != T4_TABLE)
        return "its registry does not hold the main thread and the globals";
    if (r54_peek(d, d->L + L4_BASE_CI + CI4_FUNC, &base_func, sizeof base_func) ||
        base_func != r54_ptr_at(ls, L4_STACK) || !r54_ptr_at(ls, L4_CI))
        return "its main thread's CallInfo is not where 5.4.4 keeps it";
    return NULL;
}

/* }====== */

/* {====== the coroutines: the GC lists */

typedef struct found {
    uintptr_t *th;
    size_t n, cap;
    int bad; /* a read failed: the list was changing, or is not one */
} found;

static void keep(found *f, uintptr_t o)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        uintptr_t *t = realloc(f->th, cap * sizeof *t);
        if (!t) {
            f->bad = 1;
            return;
        }
        f->th = t;
        f->cap = cap;
    }
    f->th[f->n++] = o;
}

/* The threads of the list from o, but main. A list that loops is left at
 * once (Brent's check: the object kept at each power of two steps). */
static void walk_list(r54 *d, uintptr_t o, found *f)
{
    uint8_t h[10];
    uintptr_t seen = 0;
    for (size_t n = 0, power = 1; o && o != seen && n < LIST_MAX; n++) {
        if (n + 1 == power) {
            seen = o;
            power *= 2;
        }
        if (r54_peek(d, o, h, sizeof h)) {
            f->bad = 1;
            return;
        }
        if (h[8] == O4_THREAD && o != d->L)
            keep(f, o);
        o = r54_ptr_at(h, 0);
    }
}

/* allgc (the generational lists are parts of it), finobj and tobefnz. */
static void walk_threads(r54 *d, found *f)
{
    uint8_t g[G4_READ];
    f->n = 0;
    f->bad = r54_peek(d, d->g, g, sizeof g);
    const int list[] = {G4_ALLGC, G4_FINOBJ, G4_TOBEFNZ};
    for (int i = 0; i < 3 && !f->bad; i++)
        walk_list(d, r54_ptr_at(g, list[i]), f);
}

/* Whether thread L, found earlier, is a live thread of the state still
 * (not one the collector is sweeping: white of the other kind). */
static int still_live(r54 *d, uintptr_t L, unsigned otherwhite)
{
    uint8_t h[L4_G + 8];
    return !r54_peek(d, L, h, sizeof h) && h[8] == O4_THREAD && r54_ptr_at(h, L4_G) == d->g &&
           !(h[9] & otherwhite & W4_BITS);
}

/* }====== */

/* Whether thread L was read already. */
static int known(const r54 *d, uintptr_t L)
{
    for (uint32_t i = 0; i < d->nth; i++)
        if (d->th[i].L == L)
            return 1;
    return 0;
}

/* The threads the threads read so far resume, in turn (the running chain:
 * it may be newer than the walk). */
static void follow(r54 *d)
{
    for (uint32_t i = 0; i < d->nth; i++)
        if (d->th[i].target && !known(d, d->th[i].target))
            r54_read_thread(d, d->th[i].target);
}

/* The stacks, the process stopped: main's, the running chain's, then each
 * thread the walk found (walked again now if the walk as it ran failed).
 * Returns 0, or rd_peek_stop_all's -errno. */
static int read_stopped(r54 *d, found *f, uint64_t *stopped_us)
{
    rd_peek_stop *stop = calloc(1, sizeof *stop);
    uint8_t g[G4_READ];
    if (!stop)
        return -ENOMEM;
    uint64_t t0 = rd_gcwalk_now_us();
    int e = rd_peek_stop_all(d->pid, stop);
    if (!e) {
        d->deadline_us = t0 + STOP_MS * 1000;
        if (f->bad)
            walk_threads(d, f);
        unsigned otherwhite = r54_peek(d, d->g, g, sizeof g) ? 0 : g[G4_CURWHITE] ^ W4_BITS;
        r54_read_thread(d, d->L);
        follow(d);
        for (size_t i = 0; i < f->n; i++)
            if (still_live(d, f->th[i], otherwhite) && !known(d, f->th[i]))
                r54_read_thread(d, f->th[i]);
        follow(d);
        rd_peek_let_go(stop);
        *stopped_us = rd_gcwalk_now_us() - t0;
    }
    free(stop);
    return e;
}


static int print(r54 *d, uint64_t stopped_us, FILE *out)
{
    char cmd[4096], note[256];
    d->deadline_us = rd_gcwalk_now_us() + STOP_MS * 1000;
    r54_records(d);
    rd_peek_cmdline(d->pid, cmd, sizeof cmd);
    snprintf(note, sizeof note, "read from outside, the process stopped %.1f ms for it%s%s",
             (double)stopped_us / 1000.0, d->truncated ? "; too many threads or frames, cut short" : "",
             d->late ? "; cut short: the read took too long" : "");
    rd_attach_print_records(out, d->pid, cmd, d->out, d->nout, note);
    return 0;
}

static int run(r54 *d, const char *lib, FILE *out)
{
    found f = {0};
    uint64_t stopped_us = 0;
    d->deadline_us = rd_gcwalk_now_us() + FIND_MS * 1000;
    if (!(d->L = find_main(d)) && rd_peek_gone(d->pid))
        return rd_peek_refusal(d->pid, -ESRCH);
    if (!d->L)
        return refuse(d->pid, lib, "no Lua 5.4 state was found in its memory");
    d->g = d->L + L4_SIZE;
    const char *why = check(d);
    if (why)
        return refuse(d->pid, lib, why);
    walk_threads(d, &f);
    int e = read_stopped(d, &f, &stopped_us);
    free(f.th);
    if (e)
        return e == -ENOMEM ? (fprintf(stderr, "recorderd: out of memory\n"), 1)
                            : rd_peek_refusal(d->pid, e);
    return print(d, stopped_us, out);
}

int rd_peek54_dump(pid_t pid, const char *lib, FILE *out)
{
    r54 *d = calloc(1, sizeof *d);
    uint8_t *buf = malloc(OUT54_CAP);
    int rc = 1;
    if (!d || !buf) {
        fprintf(stderr, "recorderd: out of memory\n");
    } else {
        d->pid = pid;
        d->out = buf;
        rc = run(d, lib, out);
    }
    free(buf);
    free(d);
    return rc;
}

/* {====== top's samples */

int r54_find(pid_t pid, const char *lib, rd_peek_stop *s, r54 **out, char *err, size_t cap)
{
    int e = s ? rd_peek_stop_all(pid, s) : 0; /* may recorderd read it? a moment's stop says */
    if (e)
        return rd_peek_refusal_msg(pid, e, err, cap), e;
    if (s)
        rd_peek_let_go(s);
    r54 *d = calloc(1, sizeof *d);
    if (!d || r54_snap_open(d)) {
        free(d);
        return snprintf(err, cap, "out of memory"), -ENOMEM;
    }
    d->pid = pid;
    d->deadline_us = rd_gcwalk_now_us() + FIND_MS * 1000;
    const char *why = (d->L = find_main(d)) ? (d->g = d->L + L4_SIZE, check(d)) : NULL;
    d->deadline_us = 0;
    if (!d->L && rd_peek_gone(pid))
        e = -ESRCH, rd_peek_refusal_msg(pid, e, err, cap);
    else if (!d->L || why)
        e = -ENOEXEC, misfit(pid, lib, why ? why : "no Lua 5.4 state was found in its memory",
                             err, cap);
    if (e)
        r54_close(d);
    else
        *out = d;
    return e;
}

int r54_open(pid_t pid, const char *lib, rd_peek_stop *s, r54 **out)
{
    char msg[1024];
    if (!r54_find(pid, lib, s, out, msg, sizeof msg))
        return 0;
    fprintf(stderr, "recorderd: %s\n", msg);
    return 1;
}

void r54_close(r54 *d)
{
    if (d)
        r54_snap_close(d);
    free(d);
}

int r54_sample(r54 *d, rd_peek_stop *s, int stop, uint64_t *stopped_us)
{
    uint64_t t0 = rd_gcwalk_now_us();
    int e = stop ? rd_peek_stop_all(d->pid, s) : 0;
    if (e)
        return e;
    d->nth = d->nfr = d->nchain = 0;
    d->late = d->truncated = 0;
    d->deadline_us = t0 + 200 * 1000; /* a forged chain: held no longer */
    d->leaf_max = SAMPLE_LEAF;
    r54_read_thread(d, d->L);
    follow(d);
    d->deadline_us = 0;
    if (stop) {
        rd_peek_let_go(s);
        *stopped_us += rd_gcwalk_now_us() - t0;
    }
    for (uint32_t i = 0; i < d->nth; i++)
        if (d->th[i].torn)
            return -EAGAIN; /* read as it ran, a frame changed under the walk */
    if (d->late)
        return -EAGAIN;
    if (!d->nth)
        return rd_peek_gone(d->pid) || stop ? -ESRCH : -EAGAIN;
    r54_chain(d);
    return 0;
}

/* }====== */
