/* rd_memtab: profile.txt's memory table (a trace with MEM records,
 * rd_mem.h): functions by the bytes allocated in them and their callees,
 * with what was freed there and what of it was still live at the end. */
#include "rd_report.h"

#include <errno.h>
#include <stdlib.h>

#include "rd_label.h"
#include "rd_util.h"

typedef struct mtot {
    rd_walker w;
    rd_memrow *fn;    /* per fid: callees included, recursion once */
    uint64_t *self;   /* per fid: bytes allocated in its own frames */
    rd_memrow *incl;  /* per node: its subtree */
    uint32_t *active; /* frames of fid on the current path */
} mtot;

static void add_row(rd_memrow *to, const rd_memrow *r)
{
    to->alloc_n += r->alloc_n;
    to->alloc_b += r->alloc_b;
    to->freed_b += r->freed_b;
    to->live_n += r->live_n;
    to->live_b += r->live_b;
}

static void mt_enter(rd_walker *w, uint32_t n)
{
    mtot *t = (mtot *)w;
    uint32_t fid = w->m->node[n].fid;
    if (t->active[fid]++ == 0)
        add_row(&t->fn[fid], &t->incl[n]);
}

static void mt_leave(rd_walker *w, uint32_t n)
{
    ((mtot *)w)->active[w->m->node[n].fid]--;
}

static const rd_memrow *g_sort_fn; /* qsort's context: fn rows */

static int by_alloc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t vx = g_sort_fn[x].alloc_b, vy = g_sort_fn[y].alloc_b;
    return vx < vy ? 1 : vx > vy ? -1 : x < y ? -1 : x > y;
}

static void rows(const rd_model *m, const mtot *t, uint32_t *ids, uint32_t n, unsigned top,
                 FILE *out)
{
    g_sort_fn = t->fn;
    qsort(ids, n, sizeof *ids, by_alloc);
    fprintf(out, "\nMemory by function (callees included, recursion once; bytes)\n");
    fprintf(out, "%10s %14s %14s %10s %14s %14s  %s\n", "objects", "allocated", "freed",
            "live objs", "live", "self alloc", "function");
    for (uint32_t i = 0; i < n && (!top || i < top); i++) {
        const rd_memrow *r = &t->fn[ids[i]];
        char label[RD_LABEL_MAX];
        rd_label_human(m, ids[i], 0, label, sizeof label);
        rd_printable(label, label, sizeof label);
        fprintf(out, "%10llu %14llu %14llu %10llu %14llu %14llu  %s\n",
                (unsigned long long)r->alloc_n, (unsigned long long)r->alloc_b,
                (unsigned long long)r->freed_b, (unsigned long long)r->live_n,
                (unsigned long long)r->live_b, (unsigned long long)t->self[ids[i]], label);
    }
    if (top && n > top)
        fprintf(out, "%10s  (%u more functions, each at most this)\n", "", n - top);
}

/* The whole trace's line: what every node holds. */
static void head(const rd_model *m, const rd_memrow *all, FILE *out)
{
    fprintf(out, "\nmemory: %llu allocator calls; allocated %llu bytes in %llu objects, freed "
                 "%llu, live at the end %llu bytes in %llu objects (doc/memory.md)\n",
            (unsigned long long)m->mem.records, (unsigned long long)all->alloc_b,
            (unsigned long long)all->alloc_n, (unsigned long long)all->freed_b,
            (unsigned long long)all->live_b, (unsigned long long)all->live_n);
    if (m->mem.after_end)
        fprintf(out, "as when the program's Lua code ended (an error it did not catch, Ctrl-C, "
                     "os.exit): %llu allocator calls after it left out\n",
                (unsigned long long)m->mem.after_end);
    if (m->mem.lost)
        fprintf(out, "LIVE BLOCKS NOT KEPT: %llu (recorderd out of memory): live bytes are low\n",
                (unsigned long long)m->mem.lost);
}

int rd_report_memory(const rd_model *m, unsigned top, FILE *out)
{
    mtot t = {{mt_enter, mt_leave, m}, calloc(m->nfunc + 1, sizeof(rd_memrow)),
              calloc(m->nfunc + 1, sizeof(uint64_t)), calloc(m->nnode, sizeof(rd_memrow)),
              calloc(m->nfunc + 1, sizeof(uint32_t))};
    uint32_t *ids = malloc((m->nfunc + 1) * sizeof *ids), n = 0;
    int e = 0;
    if (!t.fn || !t.self || !t.incl || !t.active || !ids) {
        e = -ENOMEM;
        goto out;
    }
    for (uint32_t k = m->nnode; k-- > 0;) { /* children come after their parent */
        const rd_memrow *r = rd_mem_row(&m->mem, k);
        add_row(&t.incl[k], r);
        if (k)
            add_row(&t.incl[m->node[k].parent], &t.incl[k]);
        t.self[m->node[k].fid] += k ? r->alloc_b : 0;
    }
    rd_model_walk(&t.w);
    for (uint32_t f = 0; f < m->nfunc; f++)
        if (t.fn[f].alloc_b || t.fn[f].freed_b || t.fn[f].live_b)
            ids[n++] = f;
    head(m, &t.incl[0], out);
    rows(m, &t, ids, n, top, out);
out:
    free(t.fn);
    free(t.self);
    free(t.incl);
    free(t.active);
    free(ids);
    return e;
}
