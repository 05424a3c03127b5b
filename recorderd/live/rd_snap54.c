/* rd_snap54: a sample's copy of a Lua 5.4 thread, read as it runs
 * (rd_peek54.h). Read frame by frame, a thread took some ten system calls
 * a frame, and a fast recursion (fib) called and returned under the walk:
 * up to 4 of its reads in 5 were torn and dropped, and top gave it a fifth
 * to two fifths of its share. So the memory a walk reads most, the thread's
 * lua_State (base_ci in it), the top of its stack and the pages that held
 * its CallInfos at the samples before, is copied by one process_vm_readv
 * of several windows, and r54_peek serves what falls in them from the
 * copy: one moment of the thread, a few microseconds long. A CallInfo
 * found outside the copy is read live, as before, and its page is copied
 * from the next sample on (CallInfos are allocated one by one, as the
 * stack first grows, and stay: a thread's few pages are learnt at once). */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "rd_lua54.h"
#include "rd_peek54.h"

enum {
    PAGE = 4096,
    THREADS = 16,        /* threads whose pages are kept (the running chain) */
    PAGES = 256,         /* pages kept a thread: 2,048 CallInfos of 80 bytes take 40 */
    STACK_MAX = 1 << 18, /* bytes of a stack copied, below its top */
    WINDOWS = PAGES + 2  /* the lua_State, the stack, the pages */
};

/* The pages that held a thread's CallInfos, sorted. */
typedef struct pages {
    uintptr_t L;
    uintptr_t at[PAGES];
    uint32_t n;
} pages;

typedef struct window {
    uintptr_t addr;
    size_t len;
    uint8_t *copy;
} window;

struct r54_snap {
    pages th[THREADS];
    uint32_t next; /* the entry th[] gives up next */
    pages *cur;    /* the thread being read, NULL between reads */
    window w[WINDOWS];
    uint32_t nw, npw; /* windows copied; of which pages (after w[0], w[1]) */
    uint8_t buf[L4_SIZE + STACK_MAX + PAGES * PAGE];
};

int r54_snap_open(r54 *d)
{
    d->snap = calloc(1, sizeof *d->snap);
    return d->snap ? 0 : -1;
}

void r54_snap_close(r54 *d)
{
    free(d->snap);
    d->snap = NULL;
}

/* Thread L's pages, a new entry (an old one given up) if none. */
static pages *pages_of(r54_snap *s, uintptr_t L)
{
    for (uint32_t i = 0; i < THREADS; i++)
        if (s->th[i].L == L)
            return &s->th[i];
    pages *p = &s->th[s->next++ % THREADS];
    p->L = L;
    p->n = 0;
    return p;
}

/* The windows to copy: the lua_State, the stack's top STACK_MAX bytes
 * (every frame's function slot is below L->top) and the pages, adjacent
 * ones as one. */
static void plan(r54_snap *s, uintptr_t L, const uint8_t *ls)
{
    uintptr_t stack = r54_ptr_at(ls, L4_STACK), top = r54_ptr_at(ls, L4_TOP) + 2 * TV4_SIZE;
    uintptr_t lo = top - stack > STACK_MAX ? top - STACK_MAX : stack;
    uint8_t *b = s->buf;
    s->w[0] = (window){L, L4_SIZE, b};
    b += L4_SIZE;
    s->w[1] = (window){lo, stack && top > lo ? top - lo : 0, b};
    b += s->w[1].len;
    s->nw = 2;
    for (uint32_t i = 0; i < s->cur->n; i++) {
        window *last = &s->w[s->nw - 1];
        if (s->nw > 2 && last->addr + last->len == s->cur->at[i])
            last->len += PAGE;
        else
            s->w[s->nw++] = (window){s->cur->at[i], PAGE, b};
        b += PAGE;
    }
    s->npw = s->nw - 2;
}

void r54_snap_take(r54 *d, uintptr_t L)
{
    r54_snap *s = d->snap;
    uint8_t ls[L4_SIZE];
    struct iovec l[WINDOWS], r[WINDOWS];
    if (!s)
        return;
    s->cur = NULL;
    s->nw = 0;
    if (r54_peek(d, L, ls, sizeof ls)) /* where the stack is, to copy it */
        return;
    s->cur = pages_of(s, L);
    plan(s, L, ls);
    for (uint32_t i = 0; i < s->nw; i++) {
        l[i] = (struct iovec){s->w[i].copy, s->w[i].len};
        r[i] = (struct iovec){(void *)s->w[i].addr, s->w[i].len};
    }
    ssize_t got = process_vm_readv(d->pid, l, s->nw, r, s->nw, 0);
    /* a window cut short (a page freed since) ends the copy: those after
     * it are not served, and the pages are learnt again */
    size_t sum = 0;
    uint32_t whole = 0;
    while (whole < s->nw && got >= 0 && sum + s->w[whole].len <= (size_t)got)
        sum += s->w[whole++].len;
    if (whole < s->nw && s->nw > 2)
        s->cur->n = 0;
    s->nw = whole;
}

void r54_snap_end(r54 *d)
{
    if (d->snap)
        d->snap->cur = NULL, d->snap->nw = 0;
}

int r54_snap_read(r54 *d, uintptr_t addr, void *dst, size_t n)
{
    r54_snap *s = d->snap;
    for (uint32_t i = 0; s && i < s->nw; i++) {
        const window *w = &s->w[i];
        if (addr >= w->addr && addr - w->addr <= w->len && n <= w->len - (addr - w->addr)) {
            memcpy(dst, w->copy + (addr - w->addr), n);
            return 1;
        }
    }
    return 0;
}

/* Adds page a to the thread's, kept sorted; a full list takes no more. */
static void learn(pages *p, uintptr_t a)
{
    uint32_t i = 0;
    while (i < p->n && p->at[i] < a)
        i++;
    if ((i < p->n && p->at[i] == a) || p->n == PAGES)
        return;
    memmove(&p->at[i + 1], &p->at[i], (p->n - i) * sizeof p->at[0]);
    p->at[i] = a;
    p->n++;
}

void r54_snap_note(r54 *d, uintptr_t ci)
{
    r54_snap *s = d->snap;
    uint8_t b[CI4_SIZE];
    if (!s || !s->cur || r54_snap_read(d, ci, b, sizeof b))
        return;
    learn(s->cur, ci & ~(uintptr_t)(PAGE - 1));
    learn(s->cur, (ci + CI4_SIZE - 1) & ~(uintptr_t)(PAGE - 1));
}
