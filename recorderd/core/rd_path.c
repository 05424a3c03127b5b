/* rd_path: bounded stacks for the path writers (see rd_path.h).
 *
 * One depth-first walk keeps the path from the root to the current node
 * and, per depth, two polynomial prefix hashes of its frames: the hash of
 * a deep node's RD_PATH_LEAF leaf-most frames is then the difference of
 * two prefixes, O(1) per node. Deep nodes with the same root-side frames
 * (the same node at depth RD_PATH_ROOT) and the same 128-bit leaf hash
 * print alike; the first one met stands for them. */
#include "rd_path.h"

#include <errno.h>
#include <stdlib.h>

#define B1 0x100000001B3ull
#define B2 0x9E3779B97F4A7C15ull

typedef struct deep_key {
    uint32_t anc, rep; /* rep + 1; 0: empty slot */
    uint64_t h1, h2;
} deep_key;

typedef struct walk_state {
    const rd_model *m;
    rd_paths *p;
    int lines;
    uint32_t *path;      /* path[d]: the node at depth d (1 = a root child) */
    uint64_t *ph1, *ph2; /* prefix hashes over path[1..d] */
    uint64_t pow1, pow2; /* B^RD_PATH_LEAF */
    deep_key *tab;
    uint32_t cap, ntab;
} walk_state;

static uint64_t frame_value(const walk_state *w, uint32_t n)
{
    const rd_node *nd = &w->m->node[n];
    uint64_t v = (uint64_t)nd->fid + 1;
    return w->lines ? v << 32 ^ nd->call_line : v;
}

static int grow_tab(walk_state *w)
{
    uint32_t cap = w->cap ? w->cap * 2 : 1024;
    deep_key *t = calloc(cap, sizeof *t);
    if (!t) return -ENOMEM;
    for (uint32_t i = 0; i < w->cap; i++) {
        if (!w->tab[i].rep) continue;
        uint32_t j = (uint32_t)(w->tab[i].h1 ^ w->tab[i].anc * B2 >> 32) & (cap - 1);
        while (t[j].rep)
            j = (j + 1) & (cap - 1);
        t[j] = w->tab[i];
    }
    free(w->tab);
    w->tab = t;
    w->cap = cap;
    return 0;
}

/* The node that deep node n (at depth d) prints as. */
static int deep_rep(walk_state *w, uint32_t n, uint32_t d)
{
    if ((w->ntab + 1) * 2 > w->cap && grow_tab(w)) return -ENOMEM;
    deep_key k = {w->path[RD_PATH_ROOT], n + 1, w->ph1[d] - w->ph1[d - RD_PATH_LEAF] * w->pow1,
                  w->ph2[d] - w->ph2[d - RD_PATH_LEAF] * w->pow2};
    uint32_t mask = w->cap - 1, j = (uint32_t)(k.h1 ^ k.anc * B2 >> 32) & mask;
    for (; w->tab[j].rep; j = (j + 1) & mask) {
        const deep_key *e = &w->tab[j];
        if (e->anc == k.anc && e->h1 == k.h1 && e->h2 == k.h2) {
            w->p->rep[n] = e->rep - 1;
            return 0;
        }
    }
    w->tab[j] = k;
    w->ntab++;
    w->p->rep[n] = n;
    return 0;
}

/* Node n enters the path at depth d. */
static int visit(walk_state *w, uint32_t n, uint32_t d)
{
    uint64_t v = frame_value(w, n);
    w->path[d] = n;
    w->ph1[d] = w->ph1[d - 1] * B1 + v;
    w->ph2[d] = w->ph2[d - 1] * B2 + (v ^ 0x5bd1e995u);
    w->p->depth[n] = d;
    w->p->rep[n] = n;
    if (d <= RD_PATH_MAX) return 0;
    w->p->ndeep++;
    return deep_rep(w, n, d);
}

static int walk(walk_state *w)
{
    const rd_node *nd = w->m->node;
    uint32_t n = nd[0].first_child, d = 1;
    while (n) {
        if (visit(w, n, d)) return -ENOMEM;
        if (nd[n].first_child) {
            n = nd[n].first_child;
            d++;
            continue;
        }
        while (n && !nd[n].next_sibling) {
            n = nd[n].parent;
            d--;
        }
        n = n ? nd[n].next_sibling : 0;
    }
    return 0;
}

int rd_paths_init(rd_paths *p, const rd_model *m, int lines)
{
    size_t nn = (size_t)m->nnode + 1;
    walk_state w = {m,
                    p,
                    lines,
                    calloc(nn, sizeof *w.path),
                    calloc(nn, sizeof *w.ph1),
                    calloc(nn, sizeof *w.ph2),
                    1,
                    1,
                    NULL,
                    0,
                    0};
    p->rep = calloc(nn, sizeof *p->rep);
    p->depth = calloc(nn, sizeof *p->depth);
    p->ndeep = 0;
    for (int i = 0; i < RD_PATH_LEAF; i++) {
        w.pow1 *= B1;
        w.pow2 *= B2;
    }
    int e = w.path && w.ph1 && w.ph2 && p->rep && p->depth ? walk(&w) : -ENOMEM;
    free(w.path);
    free(w.ph1);
    free(w.ph2);
    free(w.tab);
    if (e) rd_paths_free(p);
    return e;
}

void rd_paths_free(rd_paths *p)
{
    free(p->rep);
    free(p->depth);
    p->rep = p->depth = NULL;
}

uint32_t rd_paths_get(const rd_paths *p, const rd_model *m, uint32_t n, uint32_t *fids,
                      uint32_t *nodes)
{
    uint32_t d = p->depth[n], k = d > RD_PATH_MAX ? RD_PATH_MAX : d, i = k;
    for (uint32_t c = n; c && i > 0; c = m->node[c].parent) {
        uint32_t at = p->depth[c];
        if (d > RD_PATH_MAX && at <= d - RD_PATH_LEAF && at > RD_PATH_ROOT) continue; /* cut */
        i--;
        fids[i] = m->node[c].fid;
        if (nodes) nodes[i] = c;
        if (d > RD_PATH_MAX && at == d - RD_PATH_LEAF + 1) {
            i--;
            fids[i] = RD_PATH_CUT;
            if (nodes) nodes[i] = 0;
        }
    }
    return k;
}
