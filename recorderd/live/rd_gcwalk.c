/* rd_gcwalk: the threads of a Lua 5.1 state, found on its list of GC
 * objects (g->rootgc, through each object's next) while the process runs,
 * so that `dump` stops it only to read the stacks of the threads found.
 *
 * The list is as long as the heap (a table, a closure, a Proto, a closed
 * upvalue each): millions of objects. One process_vm_readv per object took
 * 2.5 to 4 us, so the walk copies the block of 64 KiB around an object and
 * reads its neighbours from there (objects made one after another lie
 * together, and the list runs from the newest to the oldest); a walk that
 * meets scattered objects reads them one by one. Read as the program runs,
 * the list changes under the walk: objects are added at its head (missed:
 * made after the walk began), and the collector unlinks and frees the dead
 * ones, so the walk may step into a freed block (its next and tag then
 * garbage) or, from a block copied earlier, back to where it was. A walk
 * that does not end at the main thread (the list's last thread: new
 * objects go before it, userdata after it) is tried again from the head
 * with no block kept; if every try fails, dump walks once more while the
 * process is stopped, when the list cannot change. Every walk is bounded by max_objects and the
 * deadline, and a list that loops is caught by Brent's check (the object
 * seen at the last power of two steps met again), which needs no memory. */
#include "rd_gcwalk.h"

#include <errno.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lr_layout.h"

enum {
    HDR = LS_MARKED + 1, /* next, tt, marked: a GC object's header */
    TRIES = 4,
    WINDOW = 1024, /* objects between checks of the clock and of the blocks' use */
    UPVAL_TT = LUA_TPROTO_ + 1
};

uint64_t rd_gcwalk_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

static int copy(pid_t pid, void *dst, uintptr_t at, size_t n, ssize_t *got)
{
    struct iovec l = {dst, n}, r = {(void *)at, n};
    *got = process_vm_readv(pid, &l, 1, &r, 1, 0);
    return *got == (ssize_t)n ? 0 : -1;
}

/* The walk's state within one try. */
typedef struct walk {
    size_t misses; /* blocks copied in this window */
    int direct;    /* windows left that read object by object */
    int backoff;   /* windows the next fall back to reading one by one lasts */
} walk;

/* The header of the object at o, from its block (copied now if not kept)
 * or, reading one by one, into h. NULL if it cannot be read. */
static const uint8_t *header(rd_gcwalk *w, walk *k, uintptr_t o, uint8_t *h, size_t *in_block)
{
    ssize_t got;
    *in_block = 0;
    if (!k->direct) {
        uintptr_t at = o & ~(uintptr_t)(RD_GCWALK_BLOCK - 1);
        unsigned b = (unsigned)(at / RD_GCWALK_BLOCK) % RD_GCWALK_BLOCKS;
        if (w->blk_at[b] != at) {
            k->misses++;
            copy(w->pid, w->blk[b], at, RD_GCWALK_BLOCK, &got); /* short at a mapping's end */
            w->blk_at[b] = at;
            w->blk_len[b] = got > 0 ? (size_t)got : 0;
        }
        if (o - at + HDR <= w->blk_len[b]) {
            *in_block = w->blk_len[b] - (o - at);
            return w->blk[b] + (o - at);
        }
    }
    return copy(w->pid, h, o, HDR, &got) ? NULL : h;
}

/* Every WINDOW objects: blocks that hold few neighbours (scattered
 * objects) cost more than one read per object, so the next windows read
 * object by object, for longer each time the blocks did not pay. */
static void next_window(walk *k)
{
    if (k->direct) {
        k->direct--;
    } else if (k->misses > WINDOW / 8) {
        k->backoff = k->backoff ? k->backoff * 2 : 1;
        k->direct = k->backoff < 64 ? k->backoff : 64;
    }
    k->misses = 0;
}

/* Whether thread o (its header at b: in a block, else read now) has a
 * stack a dump shows: suspended in a yield, or running (it resumed another,
 * or a C host resumed it). Finished coroutines, ones not started, and ones
 * dead of an error take no place (a program making many may have thousands
 * on the list, and MAX_THREADS are read). */
static int worth_reading(rd_gcwalk *w, uintptr_t o, const uint8_t *b, size_t in_block)
{
    uint8_t t[LS_BASE_CI + 8];
    ssize_t got;
    if (in_block < sizeof t) {
        if (copy(w->pid, t, o, sizeof t, &got))
            return 0;
        b = t;
    }
    return b[LS_STATUS] == LUA_YIELD ||
           (b[LS_STATUS] == 0 && lr_ptr_at(b, LS_CI) != lr_ptr_at(b, LS_BASE_CI));
}

static void keep_thread(rd_gcwalk *w, const void *o)
{
    for (size_t i = 0; i < w->nth; i++)
        if (w->th[i] == o)
            return;
    if (w->nth < RD_GCWALK_MAX_THREADS)
        w->th[w->nth++] = o;
}

/* One walk from the head of the list. Returns RD_GCWALK_*. */
static int walk_once(rd_gcwalk *w, const void *g, const void *main)
{
    uint8_t gh[G_ROOTGC + 8], h[HDR];
    walk k = {0, 0, 0};
    ssize_t got;
    memset(w->blk_len, 0, sizeof w->blk_len);
    memset(w->blk_at, 0xff, sizeof w->blk_at); /* no block kept from another moment */
    w->objects = 0;
    if (copy(w->pid, gh, (uintptr_t)g, sizeof gh, &got))
        return RD_GCWALK_BAD;
    unsigned otherwhite = (unsigned)(gh[G_CURWHITE] ^ 3) & 3;
    const void *o = lr_ptr_at(gh, G_ROOTGC), *seen = NULL;
    for (size_t power = 1; o != main; w->objects++) {
        if (w->objects % WINDOW == 0) {
            next_window(&k);
            if (w->objects && rd_gcwalk_now_us() >= w->deadline_us)
                return RD_GCWALK_TIME;
        }
        if (w->objects >= w->max_objects)
            return RD_GCWALK_COUNT;
        if (o == seen) /* Brent: back at the object kept at the last power of two */
            return RD_GCWALK_LOOP;
        if (w->objects + 1 == power) {
            seen = o;
            power *= 2;
        }
        size_t in_block;
        const uint8_t *b = o ? header(w, &k, (uintptr_t)o, h, &in_block) : NULL;
        if (!b || b[LS_TT] < LUA_TTABLE || b[LS_TT] > UPVAL_TT)
            return RD_GCWALK_BAD; /* the end of the list (NULL) before main too */
        if (b[LS_TT] == LUA_TTHREAD && !(b[LS_MARKED] & otherwhite) &&
            worth_reading(w, (uintptr_t)o, b, in_block))
            keep_thread(w, o);
        o = lr_ptr_at(b, 0);
    }
    return RD_GCWALK_END;
}

/* The walks tried as the process runs: LUATRACE_TEST_GCWALK_TRIES (tests
 * only; 0 makes dump walk only while the process is stopped), else TRIES. */
static int max_tries(void)
{
    const char *t = getenv("LUATRACE_TEST_GCWALK_TRIES");
    return t && *t >= '0' && *t <= '9' ? atoi(t) : TRIES;
}

int rd_gcwalk_threads(rd_gcwalk *w, const void *g, const void *main)
{
    int max = max_tries();
    w->nth = 0;
    w->end = max ? RD_GCWALK_TIME : RD_GCWALK_BAD; /* none tried: as if each failed */
    for (w->tries = 0; w->tries < max && rd_gcwalk_now_us() < w->deadline_us;) {
        w->tries++;
        w->end = walk_once(w, g, main);
        if (w->end != RD_GCWALK_LOOP && w->end != RD_GCWALK_BAD)
            break;
        usleep(1000); /* the collector's step that freed what the walk met ends */
    }
    return w->end;
}

int rd_gcwalk_threads_stopped(rd_gcwalk *w, const void *g, const void *main)
{
    w->nth = 0;
    w->tries++;
    w->end = walk_once(w, g, main);
    return w->end;
}

void rd_gcwalk_why(const rd_gcwalk *w, char *buf, size_t cap)
{
    static const char *const why[] = {
        [RD_GCWALK_LOOP] = "loops back on itself (memory corrupt, or not Lua 5.1's layout)",
        [RD_GCWALK_BAD] = "leads to an object that cannot be read (memory corrupt, or not Lua "
                          "5.1's layout)",
        [RD_GCWALK_TIME] = "was not walked to its end in time",
        [RD_GCWALK_COUNT] = "is longer than recorderd walks"};
    int e = w->end > RD_GCWALK_END && w->end <= RD_GCWALK_COUNT ? w->end : RD_GCWALK_BAD;
    snprintf(buf, cap, "the Lua state's list of objects %s, after %zu objects (%d tries): "
                       "suspended coroutines not shown, only the running ones",
             why[e], w->objects, w->tries);
}
