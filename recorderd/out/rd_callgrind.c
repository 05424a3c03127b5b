/* rd_callgrind: callgrind.out from the call tree (rd_callgrind.h).
 *
 * Design. A callgrind function is a traced function (fid), aggregated over
 * every call-tree node of that fid; its name carries `file:linedefined` so
 * that KCachegrind, which keys functions by name and file, keeps apart two
 * functions of the same name. Self costs come per line from m->line; the
 * self time a function spent on no line (a Lua call before its first line,
 * or any C function) goes on its `linedefined` line (0 for C). Time with no
 * frame at all (the root node) is the pseudo function "(no frame)", so that
 * the summary is the whole traced time.
 *
 * A call edge is (caller fid, callee fid, call line), summed over the child
 * nodes that have it: calls, and the inclusive cost of each child's subtree
 * if the child is the outermost frame of its function on its path, else 0.
 * So recursion is counted once, as in profile.txt: the calls into a
 * function add up to its total there, which is how callgrind_annotate
 * (--inclusive=yes) gets inclusive costs (KCachegrind sums callers too,
 * leaving out recursive calls; not checked here: no display); a recursive call (a -> a, or b -> a under a)
 * shows its count at cost 0. callgrind itself gives every call its full
 * inclusive cost instead, which those tools then add up beyond 100%; the
 * price of ours is that under mutual recursion a function's self cost plus
 * its calls out can exceed its total. The call line is the caller's line
 * at the child node's first call: the call tree keys a node by (parent,
 * function), so calls from several lines of one frame to the same
 * function are reported at the first of them; a call from no known line
 * (every call under lines by sample, rd_model.h) is on the caller's
 * linedefined, as its self time on no line.
 *
 * Nanoseconds are rounded cumulatively over the self cost lines in output
 * order: each line gets round(sum so far) - (what was printed so far), so
 * the printed self costs add up exactly to round(total ticks * ns/tick),
 * the traced time of profile.txt. The summary is that sum.
 */
#include "rd_callgrind.h"
#include "rd_label.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct cg_edge {
    uint32_t caller, callee, line;
    uint64_t calls, ticks, lines; /* ticks, lines: inclusive */
} cg_edge;

typedef struct walk_state {
    uint32_t *active; /* fid -> its frames on the current path */
    uint8_t *nested;  /* per node: its function is on the path above it */
} walk_state;

typedef struct cg {
    const rd_model *m;
    const char *srcdir;
    FILE *out;
    double k;                 /* ns per tick */
    uint32_t root;            /* pseudo fid of the root node: m->nfunc */
    uint64_t *incl_t, *incl_l; /* per node */
    uint64_t *self_t, *self_l; /* per fid */
    uint32_t *fn_id, nfn;     /* fid -> compressed name id, 0 = unnamed */
    uint32_t *fl_id, nfl;     /* file key -> compressed file id */
    cg_edge *e;
    uint32_t ne;
    rd_line *ln; /* line stats sorted by (fid, line) */
    uint32_t nln;
    uint64_t tick_sum, ns_sum, lines_sum;
} cg;

static uint64_t to_ns(double ticks, double k)
{
    double ns = ticks * k + 0.5;
    return ns < 0x1p64 ? (uint64_t)ns : UINT64_MAX; /* a corrupt clock */
}

/* Names go on one line: a loadstring chunk name may hold newlines. */
static void put_clean(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 32 ? ' ' : *s, out);
}

/* ---- files and names ---- */

/* File key of a function: its source sid, or nstr for [C], nstr + 1 for
 * the unknown and the root. */
static uint32_t file_key(const cg *c, uint32_t fid)
{
    const rd_model *m = c->m;
    if (fid == c->root || !m->func[fid].known)
        return m->nstr + 1;
    if (m->func[fid].what == LT_WHAT_C)
        return m->nstr;
    return m->func[fid].src_sid < m->nstr ? m->func[fid].src_sid : m->nstr + 1;
}

static void put_path(const cg *c, uint32_t key)
{
    const char *src = rd_model_string(c->m, key);
    char joined[PATH_MAX + 1], real[PATH_MAX];
    if (src[0] != '/' && c->srcdir)
        snprintf(joined, sizeof joined, "%s/%s", c->srcdir, src);
    else
        snprintf(joined, sizeof joined, "%s", src);
    /* a chunk named "@" or "=" has an empty name: callgrind_annotate wants one */
    put_clean(c->out, !src[0] ? "(no name)" : realpath(joined, real) ? real : src);
}

/* `key=(N) name` at the first use of a file, `key=(N)` later. */
static void put_file(cg *c, const char *key, uint32_t fk)
{
    int first = !c->fl_id[fk];
    if (first)
        c->fl_id[fk] = ++c->nfl;
    fprintf(c->out, "%s=(%u)", key, c->fl_id[fk]);
    if (first) {
        fputc(' ', c->out);
        if (fk == c->m->nstr)
            fputs("[C]", c->out);
        else if (fk == c->m->nstr + 1)
            fputs("???", c->out);
        else
            put_path(c, fk);
    }
    fputc('\n', c->out);
}

static void put_fn(cg *c, const char *key, uint32_t fid)
{
    const rd_model *m = c->m;
    int first = !c->fn_id[fid];
    if (first)
        c->fn_id[fid] = ++c->nfn;
    fprintf(c->out, "%s=(%u)", key, c->fn_id[fid]);
    if (!first) {
        fputc('\n', c->out);
        return;
    }
    const rd_func *f = rd_model_func(m, fid == c->root ? 0 : fid);
    fputc(' ', c->out);
    if (fid == c->root) {
        fputs("(no frame)", c->out);
    } else if (!f->known) {
        fputs("? (unknown frame)", c->out);
    } else {
        char label[RD_LABEL_MAX];
        rd_label_human(m, fid, 0, label, sizeof label);
        put_clean(c->out, label);
    }
    fputc('\n', c->out);
}

/* ---- gathering ---- */

static int cmp_edge(const void *a, const void *b)
{
    const cg_edge *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    if (x->callee != y->callee)
        return x->callee < y->callee ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_rline(const void *a, const void *b)
{
    const rd_line *x = a, *y = b;
    if (x->fid != y->fid)
        return x->fid < y->fid ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Inclusive costs per node, self costs per fid. */
static void gather_costs(cg *c)
{
    const rd_model *m = c->m;
    for (uint32_t n = m->nnode; n-- > 0;) { /* children after their parent */
        const rd_node *nd = &m->node[n];
        uint32_t fid = n ? nd->fid : c->root;
        c->incl_t[n] += nd->self;
        c->incl_l[n] += nd->lines;
        c->self_t[fid] += nd->self;
        c->self_l[fid] += nd->lines;
        if (n) {
            c->incl_t[nd->parent] += c->incl_t[n];
            c->incl_l[nd->parent] += c->incl_l[n];
        }
    }
}

/* Marks the nodes whose function is already on their path: a call edge
 * into them costs nothing, the outermost frame's edge holds it all. */
typedef struct nester {
    rd_walker w;
    walk_state *s;
} nester;

static void nest_enter(rd_walker *w, uint32_t n)
{
    walk_state *s = ((nester *)w)->s;
    s->nested[n] = s->active[w->m->node[n].fid]++ > 0;
}

static void nest_leave(rd_walker *w, uint32_t n)
{
    ((nester *)w)->s->active[w->m->node[n].fid]--;
}

static void mark_nested(const rd_model *m, walk_state *s)
{
    nester k = {{nest_enter, nest_leave, m}, s};
    rd_model_walk(&k.w);
}

/* Call edges (caller fid, callee fid, call line), merged. */
static void gather_edges(cg *c, const walk_state *w)
{
    const rd_model *m = c->m;
    for (uint32_t n = 1; n < m->nnode; n++) {
        const rd_node *nd = &m->node[n];
        if (nd->parent)
            c->e[c->ne++] = (cg_edge){m->node[nd->parent].fid, nd->fid, nd->call_line,
                                      nd->calls, w->nested[n] ? 0 : c->incl_t[n],
                                      w->nested[n] ? 0 : c->incl_l[n]};
    }
    if (c->ne)
        qsort(c->e, c->ne, sizeof *c->e, cmp_edge);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < c->ne; i++) {
        cg_edge *p = kept ? &c->e[kept - 1] : NULL;
        if (p && !cmp_edge(p, &c->e[i])) {
            p->calls += c->e[i].calls;
            p->ticks += c->e[i].ticks;
            p->lines += c->e[i].lines;
        } else {
            c->e[kept++] = c->e[i];
        }
    }
    c->ne = kept;
}

static void gather_lines(cg *c)
{
    const rd_model *m = c->m;
    for (uint32_t i = 0; i < m->capline; i++)
        if (m->line[i].fid && m->line[i].fid < m->nfunc)
            c->ln[c->nln++] = m->line[i];
    if (c->nln)
        qsort(c->ln, c->nln, sizeof *c->ln, cmp_rline);
}

/* ---- writing ---- */

static void put_cost(cg *c, uint32_t line, uint64_t ticks, uint64_t lines)
{
    if (!ticks && !lines)
        return;
    c->tick_sum += ticks;
    uint64_t want = to_ns((double)c->tick_sum, c->k), ns = want - c->ns_sum;
    c->ns_sum = want;
    c->lines_sum += lines;
    fprintf(c->out, "%u %llu %llu\n", line, (unsigned long long)ns, (unsigned long long)lines);
}

/* Self costs of fid, line by line from *li on; what no line holds goes on
 * linedefined (0 for C and the root). */
static void put_self(cg *c, uint32_t fid, uint32_t *li)
{
    uint64_t t = 0, l = 0;
    uint32_t from = *li;
    for (; *li < c->nln && c->ln[*li].fid == fid; ++*li) {
        t += c->ln[*li].ticks;
        l += c->ln[*li].hits;
    }
    uint64_t rest_t = c->self_t[fid] > t ? c->self_t[fid] - t : 0;
    uint64_t rest_l = c->self_l[fid] > l ? c->self_l[fid] - l : 0;
    const rd_func *f = rd_model_func(c->m, fid == c->root ? 0 : fid);
    uint32_t rline = f->known && f->what != LT_WHAT_C ? f->linedefined : 0;
    int found = 0;
    for (uint32_t i = from; i < *li; i++)
        found |= c->ln[i].line == rline;
    if (!found)
        put_cost(c, rline, rest_t, rest_l);
    for (uint32_t i = from; i < *li; i++) {
        int here = c->ln[i].line == rline;
        put_cost(c, c->ln[i].line, c->ln[i].ticks + (here ? rest_t : 0),
                 c->ln[i].hits + (here ? rest_l : 0));
    }
}

/* A call from an unknown line (lines by sample, stripped code) is on the
 * caller's linedefined, as its self time on no line is. */
static void put_edge(cg *c, uint32_t fk, const cg_edge *e)
{
    uint32_t ck = file_key(c, e->callee);
    if (ck != fk)
        put_file(c, "cfl", ck);
    put_fn(c, "cfn", e->callee);
    const rd_func *f = rd_model_func(c->m, e->callee);
    const rd_func *from = rd_model_func(c->m, e->caller == c->root ? 0 : e->caller);
    uint32_t line = e->line ? e->line : from->known && from->what != LT_WHAT_C ? from->linedefined : 0;
    fprintf(c->out, "calls=%llu %u\n%u %llu %llu\n", (unsigned long long)e->calls,
            f->known && f->what != LT_WHAT_C ? f->linedefined : 0, line,
            (unsigned long long)to_ns((double)e->ticks, c->k), (unsigned long long)e->lines);
}

static void put_functions(cg *c)
{
    uint32_t li = 0, ei = 0, cur_fk = UINT32_MAX;
    for (uint32_t fid = 0; fid <= c->root; fid++) {
        while (li < c->nln && c->ln[li].fid < fid)
            li++;
        int has_edges = ei < c->ne && c->e[ei].caller == fid;
        if (!c->self_t[fid] && !c->self_l[fid] && !has_edges)
            continue;
        uint32_t fk = file_key(c, fid);
        if (fk != cur_fk)
            put_file(c, "fl", fk);
        cur_fk = fk;
        put_fn(c, "fn", fid);
        put_self(c, fid, &li);
        for (; ei < c->ne && c->e[ei].caller == fid; ei++)
            if (c->e[ei].calls || c->e[ei].ticks || c->e[ei].lines) /* not a tail call's stub */
                put_edge(c, fk, &c->e[ei]);
        fputc('\n', c->out);
    }
}

/* The time's kind, as kcachegrind shows it: sampled time of the CPU
 * clock is CPU time. */
static void put_header(const cg *c, const rd_model *m, const char *cmd, FILE *out)
{
    const char *kind = m->tick_clock == LT_CLOCK_CPU ? "CPU time (ns)" : "Wall time (ns)";
    fprintf(out, "# callgrind format\nversion: 1\ncreator: recorderd-0.1\n");
    if (cmd) {
        fputs("cmd: ", out);
        put_clean(out, cmd);
        fputc('\n', out);
    }
    fprintf(out,
            "positions: line\nevent: ns : %s\nevent: lines : Line events\n"
            "events: ns lines\nsummary: %llu %llu\n\n",
            kind, (unsigned long long)c->ns_sum, (unsigned long long)c->lines_sum);
}

static int alloc_cg(cg *c, walk_state *w, const rd_model *m)
{
    uint32_t nf = m->nfunc + 1, nn = m->nnode + 1;
    c->incl_t = calloc(nn, sizeof *c->incl_t);
    c->incl_l = calloc(nn, sizeof *c->incl_l);
    c->self_t = calloc(nf, sizeof *c->self_t);
    c->self_l = calloc(nf, sizeof *c->self_l);
    c->fn_id = calloc(nf, sizeof *c->fn_id);
    c->fl_id = calloc(m->nstr + 2, sizeof *c->fl_id);
    c->e = calloc(nn, sizeof *c->e);
    c->ln = calloc(m->nline + 1, sizeof *c->ln);
    w->active = calloc(nf, sizeof *w->active);
    w->nested = calloc(nn, sizeof *w->nested);
    return c->incl_t && c->incl_l && c->self_t && c->self_l && c->fn_id && c->fl_id && c->e &&
                   c->ln && w->active && w->nested
               ? 0
               : -ENOMEM;
}

static void free_cg(cg *c, walk_state *w)
{
    free(c->incl_t);
    free(c->incl_l);
    free(c->self_t);
    free(c->self_l);
    free(c->fn_id);
    free(c->fl_id);
    free(c->e);
    free(c->ln);
    free(w->active);
    free(w->nested);
}

int rd_callgrind_write(const rd_model *m, const char *cmd, const char *srcdir, FILE *out)
{
    cg c = {.m = m, .srcdir = srcdir, .k = rd_model_ns_per_tick(m), .root = m->nfunc};
    walk_state w = {0};
    char *body = NULL;
    size_t len = 0;
    int e = alloc_cg(&c, &w, m);
    if (!e && !(c.out = open_memstream(&body, &len)))
        e = -ENOMEM;
    if (!e) {
        gather_costs(&c);
        mark_nested(m, &w);
        gather_edges(&c, &w);
        gather_lines(&c);
        put_functions(&c);
        e = fclose(c.out) ? -ENOMEM : 0; /* the summary needs the body's sums */
    }
    if (!e) {
        put_header(&c, m, cmd, out);
        fwrite(body, 1, len, out);
        e = ferror(out) ? -EIO : 0;
    }
    free(body);
    free_cg(&c, &w);
    return e;
}
