/* rd_model: interned strings and functions, clock, calling-context tree. */
#include "rd_model.h"
#include "rd_label.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RD_MAX_IDS (1u << 24) /* bound on sids/fids a peer may declare */
/* The collector hands out ids densely: a new id is at most the next one.
 * The slack tolerates nothing in particular; it only keeps a forged id
 * from making us allocate for 2^24 entries. */
#define RD_ID_SLACK 1024u

/* A label given: the function that holds it and its number, not its text,
 * which is made again when two hashes are equal. A FUNC record is 12
 * bytes and its label up to RD_LABEL_MAX: a copy of each would let a
 * trace of a few MB fill GBs (a helper's hunt: 2.4 MB, 1.59 GB). */
typedef struct rd_labent {
    uint64_t hash;
    uint32_t fid;   /* 0: free slot */
    uint32_t dup;   /* the number in the label */
    uint32_t count; /* the last number tried with this label as a base (1: none) */
} rd_labent;

static int id_ok(uint64_t id, uint32_t n)
{
    return id != 0 && id < RD_MAX_IDS && id <= (uint64_t)(n ? n : 1) + RD_ID_SLACK;
}

int rd_grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need < *cap)
        return 0;
    uint32_t n = *cap ? *cap : 64;
    while (n <= need)
        n *= 2;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q)
        return -ENOMEM;
    memset((char *)q + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
    *p = q;
    *cap = n;
    return 0;
}

int rd_model_init(rd_model *m)
{
    memset(m, 0, sizeof *m);
    m->capchild = 1024;
    m->child_ix = calloc(m->capchild, sizeof *m->child_ix);
    m->capline_ix = 1024;
    m->line_ix = calloc(m->capline_ix, sizeof *m->line_ix);
    m->childc = calloc(1u << RD_CHILDC_BITS, sizeof *m->childc);
    if (!m->child_ix || !m->line_ix || !m->childc ||
        rd_grow((void **)&m->node, &m->capnode, 1, sizeof *m->node) ||
        rd_grow((void **)&m->func, &m->capfunc, 1, sizeof *m->func)) {
        rd_model_free(m);
        return -ENOMEM;
    }
    m->nnode = 1; /* the root */
    m->keep_tracks = RD_TRACKS_KEPT;
    m->fold_min = RD_FOLD_MIN;
    m->nfunc = 1; /* fid 0: unknown */
    return 0;
}

void rd_model_free(rd_model *m)
{
    rd_mem_free(&m->mem);
    for (uint32_t i = 0; i < m->nstr; i++)
        free(m->str[i]);
    free(m->str);
    free(m->func);
    free(m->jl);
    free(m->nest);
    free(m->node);
    free(m->child_ix);
    free(m->childc);
    free(m->line);
    free(m->line_ix);
    for (uint32_t i = 0; i < m->caplcache; i++)
        free(m->lcache[i].ix);
    free(m->lcache);
    free(m->lab);
    free(m->tnode);
    free(m->tnode_ix);
    free(m->track);
    free(m->track_ix);
    free(m->agg_ix);
    free(m->dsrc);
    free(m->dsrc_ix);
    free(m->cwd);
    rd_label_names_free(m->label_names);
    memset(m, 0, sizeof *m);
}

uint64_t rd_model_bytes(const rd_model *m)
{
    return m->str_bytes + rd_mem_bytes(&m->mem) + (uint64_t)m->capstr * sizeof *m->str +
           (uint64_t)m->capfunc * sizeof *m->func + (uint64_t)m->caplab * sizeof *m->lab +
           (uint64_t)m->capjl * sizeof *m->jl +
           (uint64_t)m->capnode * sizeof *m->node +
           (uint64_t)m->capchild * sizeof *m->child_ix +
           (uint64_t)m->capline * sizeof *m->line + (uint64_t)m->capline_ix * sizeof(uint32_t) +
           (uint64_t)m->caplcache * sizeof *m->lcache + m->lcache_cells * sizeof(uint32_t) +
           (uint64_t)m->captnode * sizeof *m->tnode +
           (uint64_t)m->captnode_ix * sizeof *m->tnode_ix +
           (uint64_t)m->captrack * sizeof *m->track +
           (uint64_t)m->captrack_ix * sizeof *m->track_ix +
           (uint64_t)m->capagg_ix * sizeof *m->agg_ix;
}

int rd_model_add_str(rd_model *m, uint64_t sid, const char *s, uint32_t len)
{
    if (!id_ok(sid, m->nstr) || !s)
        return -EPROTO;
    if (rd_grow((void **)&m->str, &m->capstr, (uint32_t)sid, sizeof *m->str))
        return -ENOMEM;
    char *copy = malloc(len + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, s, len);
    copy[len] = 0;
    m->str_bytes += len + 1 - (m->str[sid] ? strlen(m->str[sid]) + 1 : 0);
    free(m->str[sid]);
    m->str[sid] = copy;
    if (sid >= m->nstr)
        m->nstr = (uint32_t)sid + 1;
    return 0;
}

/* {======================================================================
 * Labels that collide. The label is NAME@SRC:LINEDEFINED; the collector
 * gives a function its fid once, so two fids with one label are two
 * functions (two closures on one line with the same call-site name, C
 * functions of the same name). The second gets NAME#2, the third NAME#3,
 * in fid order, which is the order of first sight; a number whose label a
 * function holds already (one named "g#2" in the program) is passed over.
 * The table holds every label given, each with the last number tried from
 * it as a base. */

void rd_label_clean(char *s)
{
    for (; *s; s++)
        if (*s == ';')
            *s = ',';
        else if (*s == '\n' || *s == '\r')
            *s = ' ';
}

/* NAME@SRC:LINEDEFINED, NAME#dup if dup. */
static void dup_label(const rd_model *m, const rd_func *f, uint32_t dup, char *buf, size_t cap)
{
    char num[16] = "";
    if (dup)
        snprintf(num, sizeof num, "#%u", dup);
    if (f->what == LT_WHAT_C)
        snprintf(buf, cap, "%s%s@[C]", rd_model_string(m, f->name_sid), num);
    else
        snprintf(buf, cap, "%s%s@%s:%u", rd_model_string(m, f->name_sid), num,
                 rd_model_string(m, f->src_sid), f->linedefined);
    rd_label_clean(buf);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static int grow_labels(rd_model *m)
{
    uint32_t cap = m->caplab ? m->caplab * 2 : 256;
    rd_labent *t = calloc(cap, sizeof *t);
    if (!t)
        return -ENOMEM;
    for (uint32_t j = 0; j < m->caplab; j++) {
        if (!m->lab[j].fid)
            continue;
        uint32_t i = (uint32_t)m->lab[j].hash & (cap - 1);
        while (t[i].fid)
            i = (i + 1) & (cap - 1);
        t[i] = m->lab[j];
    }
    free(m->lab);
    m->lab = t;
    m->caplab = cap;
    return 0;
}

/* The slot of label (hash h): its entry, or the empty slot for it. */
static rd_labent *label_slot(const rd_model *m, const char *label, uint64_t h)
{
    char held[RD_LABEL_MAX];
    uint32_t mask = m->caplab - 1, i = (uint32_t)h & mask;
    for (; m->lab[i].fid; i = (i + 1) & mask) {
        if (m->lab[i].hash != h)
            continue;
        dup_label(m, &m->func[m->lab[i].fid], m->lab[i].dup, held, sizeof held);
        if (!strcmp(held, label))
            break;
    }
    return &m->lab[i];
}

/* Sets f->dup (f is function fid) from the functions defined before it. */
static int number_label(rd_model *m, rd_func *f, uint32_t fid)
{
    char label[RD_LABEL_MAX];
    if ((m->nlab + 1) * 2 > m->caplab && grow_labels(m))
        return -ENOMEM; /* one label is added below */
    dup_label(m, f, 0, label, sizeof label);
    uint64_t h = hash_str(label);
    rd_labent *base = label_slot(m, label, h), *e = base;
    uint32_t n = 0;
    if (base->fid) {
        for (n = base->count + 1;; n++) { /* count: the last number tried */
            dup_label(m, f, n, label, sizeof label);
            h = hash_str(label);
            if (!(e = label_slot(m, label, h))->fid)
                break;
        }
        base->count = n;
    }
    *e = (rd_labent){h, fid, n, 1};
    m->nlab++;
    f->dup = n;
    return 0;
}

void rd_model_add_dir(rd_model *m, uint64_t sid)
{
    m->cur_dir = sid < RD_MAX_IDS ? (uint32_t)sid : 0;
}

static uint32_t *dsrc_slot(const rd_model *m, uint32_t src, uint32_t dir)
{
    uint32_t mask = m->capdsrc_ix - 1, i = rd_model_hash2(src, dir) & mask;
    while (m->dsrc_ix[i] && (m->dsrc[m->dsrc_ix[i] - 1].src_sid != src ||
                             m->dsrc[m->dsrc_ix[i] - 1].dir_sid != dir))
        i = (i + 1) & mask;
    return &m->dsrc_ix[i];
}

static int grow_dsrc_ix(rd_model *m)
{
    uint32_t cap = m->capdsrc_ix ? m->capdsrc_ix * 2 : 64;
    uint32_t *ix = calloc(cap, sizeof *ix);
    if (!ix)
        return -ENOMEM;
    free(m->dsrc_ix);
    m->dsrc_ix = ix;
    m->capdsrc_ix = cap;
    for (uint32_t k = 0; k < m->ndsrc; k++)
        *dsrc_slot(m, m->dsrc[k].src_sid, m->dsrc[k].dir_sid) = k + 1;
    return 0;
}

/* f's rd_dsrc + 1 under the current DIR, or 0: a C function, a string
 * chunk, an absolute path, or the session's directory. */
static int func_dir(rd_model *m, rd_func *f)
{
    const char *src = f->src_sid < m->nstr ? m->str[f->src_sid] : NULL;
    if (!m->cur_dir || f->what == LT_WHAT_C || (f->flags & LT_FF_NOFILE) || !src ||
        src[0] == '/')
        return 0;
    if ((m->ndsrc + 1) * 2 > m->capdsrc_ix && grow_dsrc_ix(m))
        return -ENOMEM;
    uint32_t *k = dsrc_slot(m, f->src_sid, m->cur_dir);
    if (!*k) {
        if (rd_grow((void **)&m->dsrc, &m->capdsrc, m->ndsrc, sizeof *m->dsrc))
            return -ENOMEM;
        m->dsrc[m->ndsrc] = (rd_dsrc){f->src_sid, m->cur_dir};
        *k = ++m->ndsrc;
    }
    f->dsrc = *k;
    return 0;
}

int rd_model_add_func(rd_model *m, const lt_event *ev)
{
    uint64_t fid = ev->a[0];
    if (!id_ok(fid, m->nfunc) || ev->a[1] > LT_WHAT_MAIN || ev->a[2] >= RD_MAX_IDS ||
        ev->a[3] >= RD_MAX_IDS)
        return -EPROTO;
    if (rd_grow((void **)&m->func, &m->capfunc, (uint32_t)fid, sizeof *m->func))
        return -ENOMEM;
    rd_func *f = &m->func[fid];
    uint64_t calls = f->calls;
    uint32_t dup = f->dup;
    int again = f->known; /* a forged redefinition keeps its number */
    *f = (rd_func){(uint32_t)ev->a[3], (uint32_t)ev->a[2], (uint32_t)ev->a[4],
                   (uint32_t)ev->a[5], (uint8_t)ev->a[1], (uint8_t)ev->a[6], 1, dup, calls, 0, 0, 0, 0, 0};
    if (fid >= m->nfunc)
        m->nfunc = (uint32_t)fid + 1;
    if (func_dir(m, f))
        return -ENOMEM;
    return again ? 0 : number_label(m, f, (uint32_t)fid);
}

#define RD_MAX_LINE (1u << 24) /* lines beyond: a corrupt LINES record */

int rd_model_add_lines(rd_model *m, const lt_event *ev)
{
    uint64_t fid = ev->a[0], line = ev->a[1];
    rd_func *f = fid < m->nfunc ? &m->func[fid] : NULL;
    if (!f || !f->known || f->what == LT_WHAT_C || !ev->a[2] || line >= RD_MAX_LINE ||
        (f->what == LT_WHAT_LUA && (line + 63 < f->linedefined || line > f->lastlinedefined)))
        return 0;
    if (f->jl_n && (f->jl_first + f->jl_n != m->njl || line < m->jl[m->njl - 1].line + 64ull))
        return 0; /* out of order, or another function's came between */
    if (rd_grow((void **)&m->jl, &m->capjl, m->njl, sizeof *m->jl))
        return -ENOMEM;
    if (!f->jl_n)
        f->jl_first = m->njl;
    f->jl_n++;
    m->jl[m->njl++] = (rd_jlines){ev->a[2], (uint32_t)fid, (uint32_t)line};
    return 0;
}

int rd_model_add_nest(rd_model *m, const lt_event *ev)
{
    uint64_t fid = ev->a[0], line = ev->a[1], last = ev->a[2];
    const rd_func *f = fid < m->nfunc ? &m->func[fid] : NULL;
    if (!f || !f->known || f->what == LT_WHAT_C || !line || last < line || last >= RD_MAX_LINE ||
        m->nnest >= RD_MAX_NEST ||
        (f->what == LT_WHAT_LUA && (line < f->linedefined || last > f->lastlinedefined)))
        return 0;
    if (rd_grow((void **)&m->nest, &m->capnest, m->nnest, sizeof *m->nest))
        return -ENOMEM;
    m->nest[m->nnest++] = (rd_nest){(uint32_t)fid, (uint32_t)line, (uint32_t)last};
    return 0;
}

/* kind: LT_CLOCK_*; a trace with no clock stays one (every dt is 0). */
void rd_model_add_clock(rd_model *m, uint64_t ticks, uint64_t ns, uint64_t kind)
{
    uint64_t flags = kind & (LT_CLOCK_LINES_SAMPLED | LT_CLOCK_BIAS_AFTER | LT_CLOCK_LINE_INSTR);
    kind &= ~flags;
    m->line_instr |= (flags & LT_CLOCK_LINE_INSTR) != 0;
    if (kind == LT_CLOCK_CPU || kind == LT_CLOCK_WALL) {
        m->lines_sampled |= (flags & LT_CLOCK_LINES_SAMPLED) != 0;
        m->bias_after |= (flags & LT_CLOCK_BIAS_AFTER) != 0;
    }
    if (kind == LT_CLOCK_NONE)
        m->untimed = 1;
    if (kind == LT_CLOCK_CPU || kind == LT_CLOCK_WALL)
        m->tick_clock = (unsigned)kind; /* ticks and ns 0: ns a tick stays 1 */
    if (m->clk_pairs == 0) {
        m->clk_t0 = ticks;
        m->clk_n0 = ns;
    }
    m->clk_t1 = ticks;
    m->clk_n1 = ns;
    m->clk_tsc = kind == LT_CLOCK_TSC;
    m->clk_pairs++;
}

double rd_model_ns_per_tick(const rd_model *m)
{
    if (m->tick_clock) /* sampled time: TICK's ns x 16, BIAS's so too */
        return 1.0 / 16;
    if (!m->clk_tsc)
        return 1.0;
    if (m->clk_pairs >= 2 && m->clk_t1 > m->clk_t0 && m->clk_n1 > m->clk_n0)
        return (double)(m->clk_n1 - m->clk_n0) / (double)(m->clk_t1 - m->clk_t0);
    return 1.0 / 3.0; /* unknown rate: a guess, only for traces cut short */
}

int rd_model_lines_counted(const rd_model *m)
{
    return !m->sampled_hz && !m->lines_sampled;
}

const char *rd_model_time_name(const rd_model *m)
{
    /* "sampled": a sampled session (record, run --sample), no exact events */
    return m->sampled_hz ? "sampled" : m->tick_clock ? "sample" : m->untimed ? "none" : "exact";
}

int rd_model_few_samples(const rd_model *m)
{
    return m->tick_clock && m->ticks_samples < RD_FEW_SAMPLES;
}

/* Sampled time with BIAS (LuaJIT): the ms its debits took off the ticks
 * where the program was (its traced time is the rest), as "; N ms of them
 * ..." in buf; else "". */
static const char *debited(const rd_model *m, char *buf, size_t cap)
{
    double off = (double)m->ticks_ns / 1e6 - (double)m->ticks_total / 16e6;
    buf[0] = 0;
    if (m->has_bias && off >= 0.05)
        snprintf(buf, cap, "; %.1f ms of them taken off as the interpreter's cost of each hook, "
                           "estimated", off);
    return buf;
}

const char *rd_model_time_source(const rd_model *m, char *buf, size_t cap)
{
    char off[128];
    if (m->tick_clock)
        /* ms and samples, not the timer's ticks: a user asked what a tick
         * was, and how 679 of them came in 154 samples */
        snprintf(buf, cap, "sampled %s time (--time sample): %.1f ms where the program was, "
                 "in %llu samples%s; %s stacks and %s; %.1f ms more in the hooks, left out%s",
                 m->tick_clock == LT_CLOCK_WALL ? "wall-clock" : "CPU",
                 (double)m->ticks_ns / 1e6,
                 (unsigned long long)m->ticks_samples, debited(m, off, sizeof off),
                 m->dropped    ? "incomplete (events dropped):"
                 : m->rehooked ? "incomplete (the hook taken off by C code):"
                               : "exact",
                 m->lines_sampled ? "calls, lines by sample (--lines sample)" : "counts",
                 (double)m->ticks_hook_ns / 1e6,
                 rd_model_few_samples(m) ? "; " RD_FEW_SAMPLES_SAID : "");
    else if (m->untimed)
        snprintf(buf, cap, "none (a coverage run reads no clock)");
    else
        snprintf(buf, cap, "exact: each event's clock, the hooks' estimated cost taken off "
                 "(--time exact, or run counting every line: --lines exact, --memory, coverage)");
    return buf;
}

uint32_t rd_model_src_slot(const rd_model *m, uint32_t fid)
{
    const rd_func *fn = rd_model_func(m, fid);
    if (!fn->known || fn->what == LT_WHAT_C || fn->src_sid >= m->nstr)
        return UINT32_MAX;
    if (fn->dsrc && fn->dsrc <= m->ndsrc)
        return 2 * (m->nstr + fn->dsrc - 1);
    return 2 * fn->src_sid + !!(fn->flags & LT_FF_NOFILE);
}

const char *rd_model_slot_src(const rd_model *m, uint32_t slot)
{
    uint32_t k = slot >> 1;
    return rd_model_string(m, k < m->nstr ? k : k - m->nstr < m->ndsrc
                                                   ? m->dsrc[k - m->nstr].src_sid : 0);
}

const char *rd_model_slot_dir(const rd_model *m, uint32_t slot)
{
    uint32_t k = slot >> 1;
    if (k < m->nstr || k - m->nstr >= m->ndsrc)
        return NULL;
    uint32_t d = m->dsrc[k - m->nstr].dir_sid;
    return d < m->nstr && m->str[d] && m->str[d][0] == '/' ? m->str[d] : NULL;
}

const char *rd_model_string(const rd_model *m, uint32_t sid)
{
    return sid < m->nstr && m->str[sid] ? m->str[sid] : "?";
}

void rd_model_name(const rd_model *m, uint32_t fid, char *buf, size_t cap)
{
    const rd_func *f = rd_model_func(m, fid);
    if (!f->known)
        snprintf(buf, cap, "?");
    else if (f->dup)
        snprintf(buf, cap, "%s#%u", rd_model_string(m, f->name_sid), f->dup);
    else
        snprintf(buf, cap, "%s", rd_model_string(m, f->name_sid));
}

void rd_model_label(const rd_model *m, uint32_t fid, char *buf, size_t cap)
{
    const rd_func *f = rd_model_func(m, fid);
    char name[LT_STR_MAX + 16];
    rd_model_name(m, fid, name, sizeof name);
    if (!f->known)
        snprintf(buf, cap, "?@?");
    else if (f->what == LT_WHAT_C)
        snprintf(buf, cap, "%s@[C]", name);
    else
        snprintf(buf, cap, "%s@%s:%u", name, rd_model_string(m, f->src_sid), f->linedefined);
    rd_label_clean(buf);
}

/* Slot of (parent, fid) in the children's hash: its entry, or the empty
 * slot where it goes. */
static rd_childc *child_slot(const rd_model *m, uint32_t parent, uint32_t fid)
{
    uint32_t mask = m->capchild - 1, i = rd_model_hash2(parent, fid) & mask;
    rd_childc *c = m->child_ix;
    while (c[i].node && (c[i].parent != parent || c[i].fid != fid))
        i = (i + 1) & mask;
    return &c[i];
}

static int rehash_children(rd_model *m)
{
    rd_childc *old = m->child_ix;
    uint32_t oldcap = m->capchild;
    rd_childc *ix = calloc((size_t)oldcap * 2, sizeof *ix);
    if (!ix)
        return -ENOMEM;
    m->child_ix = ix;
    m->capchild = oldcap * 2;
    for (uint32_t j = 0; j < oldcap; j++)
        if (old[j].node)
            *child_slot(m, old[j].parent, old[j].fid) = old[j];
    free(old);
    return 0;
}

/* Room for one more node. Unlike rd_grow, the new part is not zeroed: a
 * node is written whole when created, and zeroing the doubled array
 * page-faulted memory no node used yet (a third of a big replay's faults). */
static int grow_nodes(rd_model *m)
{
    if (m->nnode < m->capnode)
        return 0;
    uint32_t cap = m->capnode * 2;
    rd_node *n = realloc(m->node, (size_t)cap * sizeof *n);
    if (!n)
        return -ENOMEM;
    m->node = n;
    m->capnode = cap;
    return 0;
}

/* rd_model_child past its caches. */
uint32_t rd_model_child_find(rd_model *m, uint32_t parent, uint32_t fid)
{
    rd_childc *c = child_slot(m, parent, fid);
    uint32_t k = c->node;
    if (!k) {
        if (grow_nodes(m))
            return 0;
        k = m->nnode++;
        m->node[k] = (rd_node){.parent = parent, .fid = fid};
        m->node[k].next_sibling = m->node[parent].first_child;
        m->node[parent].first_child = k;
        *c = (rd_childc){parent, fid, k};
    }
    m->node[parent].hot_fid = fid;
    m->node[parent].hot_child = k;
    m->childc[rd_model_childc_slot(parent, fid)] = (rd_childc){parent, fid, k};
    if (m->nnode * 2 > m->capchild)
        rehash_children(m);
    return k;
}

void rd_model_walk(rd_walker *w)
{
    const rd_node *nd = w->m->node;
    uint32_t n = nd[0].first_child;
    while (n) {
        w->enter(w, n);
        if (nd[n].first_child) {
            n = nd[n].first_child;
            continue;
        }
        for (;;) {
            w->leave(w, n);
            if (nd[n].next_sibling) {
                n = nd[n].next_sibling;
                break;
            }
            n = nd[n].parent;
            if (n == 0)
                break;
        }
    }
}

/* The lines' hash indexes the dense array m->line, whose slots never move:
 * a frame's or the line cache's slot stays valid. */
static int rehash_lines(rd_model *m)
{
    uint32_t cap = m->capline_ix * 2;
    uint32_t *ix = calloc(cap, sizeof *ix);
    if (!ix)
        return -ENOMEM;
    for (uint32_t k = 0; k < m->nline; k++) {
        uint32_t i = rd_model_hash2(m->line[k].fid, m->line[k].line) & (cap - 1);
        while (ix[i])
            i = (i + 1) & (cap - 1);
        ix[i] = k + 1;
    }
    free(m->line_ix);
    m->line_ix = ix;
    m->capline_ix = cap;
    return 0;
}

rd_line *rd_model_line(rd_model *m, uint32_t fid, uint32_t line)
{
    if (fid == 0)
        return NULL; /* unknown function: no per-line stats */
    if ((m->nline + 1) * 2 > m->capline_ix && rehash_lines(m))
        return NULL;
    uint32_t mask = m->capline_ix - 1, i = rd_model_hash2(fid, line) & mask;
    for (; m->line_ix[i]; i = (i + 1) & mask) {
        rd_line *l = &m->line[m->line_ix[i] - 1];
        if (l->fid == fid && l->line == line)
            return l;
    }
    if (rd_grow((void **)&m->line, &m->capline, m->nline, sizeof *m->line))
        return NULL;
    m->line[m->nline] = (rd_line){.fid = fid, .line = line};
    m->line_ix[i] = ++m->nline;
    return &m->line[m->nline - 1];
}

uint32_t rd_model_stacks(const rd_model *m)
{
    uint32_t n = 0;
    for (uint32_t i = 1; i < m->nnode; i++) {
        const rd_node *nd = &m->node[i];
        n += (nd->calls | nd->self | nd->lines | nd->first_child) != 0;
    }
    return n;
}

/* }====================================================================== */

/* {======================================================================
 * Line cache: per function, an array from line to slot. It starts at the
 * function's first line and grows by doubling; a function spanning more
 * than RD_LCACHE_SPAN lines, or lines before its start, are looked up in
 * the hash. All of it holds at most 8 cells per slot of the lines' hash
 * (+ a floor), so a forged trace cannot make it outgrow the line table. */

#define RD_LCACHE_SPAN (1u << 16)
#define RD_LCACHE_FLOOR (1u << 16)

/* Makes fid's cache reach line; 0, or -1 when it may not. */
static int lcache_reach(rd_model *m, uint32_t fid, uint32_t line)
{
    if (fid >= m->caplcache &&
        rd_grow((void **)&m->lcache, &m->caplcache, fid, sizeof *m->lcache))
        return -1;
    rd_lcache *c = &m->lcache[fid];
    if (!c->n) {
        uint32_t first = m->func[fid].known ? m->func[fid].linedefined : line;
        c->lo = first <= line ? first : line;
    }
    if (line < c->lo || line - c->lo >= RD_LCACHE_SPAN)
        return -1;
    uint32_t k = line - c->lo, n = c->n ? c->n : 16;
    if (k < c->n)
        return 0;
    while (n <= k)
        n *= 2;
    if (m->lcache_cells + (n - c->n) > 8ull * m->capline_ix + RD_LCACHE_FLOOR)
        return -1;
    uint32_t *ix = realloc(c->ix, (size_t)n * sizeof *ix);
    if (!ix)
        return -1;
    memset(ix + c->n, 0, (size_t)(n - c->n) * sizeof *ix);
    m->lcache_cells += n - c->n;
    c->ix = ix;
    c->n = n;
    return 0;
}

/* rd_model_line_slot past its cache: looks up, then remembers. */
uint32_t rd_model_line_find(rd_model *m, uint32_t fid, uint32_t line)
{
    rd_line *l = rd_model_line(m, fid, line);
    if (!l)
        return 0;
    uint32_t slot = (uint32_t)(l - m->line) + 1;
    if (fid < m->nfunc && !lcache_reach(m, fid, line))
        m->lcache[fid].ix[line - m->lcache[fid].lo] = slot;
    return slot;
}

/* }====================================================================== */
