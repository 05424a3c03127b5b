/* rd_report: profile.txt, folded stacks, lines by source (rd_annotate.c
 * and report.html annotate them). */
#include "rd_report.h"

#include "rd_label.h"
#include "rd_path.h"
#include "rd_util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- per-function totals ---- */

typedef struct totals {
    rd_walker w;
    rd_fstat *fs;
    uint64_t *incl;   /* inclusive ticks per node */
    uint32_t *active; /* frames of fid on the current path */
} totals;

static void tot_enter(rd_walker *w, uint32_t n)
{
    totals *t = (totals *)w;
    uint32_t fid = w->m->node[n].fid;
    if (t->active[fid]++ == 0)
        t->fs[fid].total += t->incl[n]; /* outermost frame of a recursion */
}

static void tot_leave(rd_walker *w, uint32_t n)
{
    totals *t = (totals *)w;
    t->active[w->m->node[n].fid]--;
}

rd_fstat *rd_report_fstats(const rd_model *m)
{
    rd_fstat *fs = calloc(m->nfunc + 1, sizeof *fs);
    uint64_t *incl = calloc(m->nnode, sizeof *incl);
    uint32_t *active = calloc(m->nfunc + 1, sizeof *active);
    if (!fs || !incl || !active) {
        free(fs);
        fs = NULL;
        goto out;
    }
    /* children always have larger indices than their parent */
    for (uint32_t n = m->nnode; n-- > 1;) {
        incl[n] += m->node[n].self;
        incl[m->node[n].parent] += incl[n];
        fs[m->node[n].fid].self += m->node[n].self;
    }
    for (uint32_t f = 0; f < m->nfunc; f++)
        fs[f].calls = m->func[f].calls;
    totals t = {{tot_enter, tot_leave, m}, fs, incl, active};
    rd_model_walk(&t.w);
out:
    free(incl);
    free(active);
    return fs;
}

/* ---- folded ---- */

typedef struct folder {
    rd_walker w;
    enum rd_weight weight;
    double ns_per_tick;
    FILE *out;
    char *path;
    size_t len, cap;
    size_t *marks; /* path length before each depth */
    uint32_t depth, capdepth;
    rd_paths paths;
    uint64_t *deep; /* per node standing for deep ones (rd_path.h): their weight */
    uint64_t written; /* bytes of lines */
    uint64_t max;      /* rd_report_fold_max */
    uint64_t left_out; /* weight of the lines past it */
    uint64_t all;      /* weight of every line, written or not */
    int err;
} folder;

static uint64_t weight_of(const folder *f, const rd_node *n)
{
    const rd_memrow *r = rd_mem_row(&f->w.m->mem, (uint32_t)(n - f->w.m->node));
    switch (f->weight) {
    case RD_W_LINES: return n->lines;
    case RD_W_CALLS: return n->calls;
    case RD_W_BYTES: return r->alloc_b;
    case RD_W_OBJECTS: return r->alloc_n;
    case RD_W_LIVE: return r->live_b;
    default: {
        double ns = (double)n->self * f->ns_per_tick + 0.5;
        return ns < 0x1p64 ? (uint64_t)ns : UINT64_MAX; /* a corrupt clock */
    }
    }
}

static int fold_push(folder *f, const char *label)
{
    size_t l = strlen(label);
    if (rd_grow((void **)&f->marks, &f->capdepth, f->depth, sizeof *f->marks))
        return -ENOMEM;
    if (f->len + l + 2 > f->cap) {
        size_t cap = (f->len + l + 2) * 2;
        char *p = realloc(f->path, cap);
        if (!p)
            return -ENOMEM;
        f->path = p;
        f->cap = cap;
    }
    f->marks[f->depth++] = f->len;
    if (f->len)
        f->path[f->len++] = ';';
    memcpy(f->path + f->len, label, l + 1);
    f->len += l;
    return 0;
}

/* The length of the longest run of whole frames of p[0..len) from its
 * start that is at most max bytes (0: none). */
static size_t frames_head(const char *p, size_t len, size_t max)
{
    for (size_t i = max < len ? max : len - 1; i > 0; i--)
        if (p[i] == ';')
            return i;
    return 0;
}

/* Where the longest run of whole frames at the end of p[0..len) that is
 * at most max bytes starts (len: none). */
static size_t frames_tail(const char *p, size_t len, size_t max)
{
    if (len <= max)
        return 0;
    for (size_t i = len - max; i < len; i++)
        if (p[i] == ';')
            return i + 1;
    return len;
}

/* Writes one line of stacks.folded, bounded (rd_report.h). */
static void fold_line(folder *f, const char *path, size_t len, uint64_t v)
{
    if (!v || f->err)
        return;
    f->all = f->all + v < v ? UINT64_MAX : f->all + v;
    if (f->written + len > f->max) {
        f->left_out = f->left_out + v < v ? UINT64_MAX : f->left_out + v;
        return;
    }
    size_t head = len, tail = len;
    if (len > RD_FOLD_LINE_MAX) {
        head = frames_head(path, len, RD_FOLD_LINE_MAX / 4);
        tail = frames_tail(path, len, RD_FOLD_LINE_MAX / 4 * 3 - 16);
    }
    int k = head == len ? fprintf(f->out, "%.*s %llu\n", (int)len, path, (unsigned long long)v)
                        : fprintf(f->out, "%.*s%s%s%s%.*s %llu\n", (int)head, path,
                                  head ? ";" : "", RD_PATH_CUT_LABEL, tail < len ? ";" : "",
                                  (int)(len - tail), path + tail, (unsigned long long)v);
    if (k < 0)
        f->err = -EIO;
    else
        f->written += (uint64_t)k;
}

static void fold_enter(rd_walker *w, uint32_t n)
{
    folder *f = (folder *)w;
    char label[RD_LABEL_MAX];
    rd_label_folded(w->m, w->m->node[n].fid, label, sizeof label);
    if (fold_push(f, label)) {
        f->err = -ENOMEM;
        return;
    }
    uint64_t v = weight_of(f, &w->m->node[n]);
    if (f->depth > RD_PATH_MAX)
        f->deep[f->paths.rep[n]] += v;
    else
        fold_line(f, f->path, f->len, v);
}

static void fold_leave(rd_walker *w, uint32_t n)
{
    folder *f = (folder *)w;
    (void)n;
    if (f->depth) {
        f->len = f->marks[--f->depth];
        f->path[f->len] = 0;
    }
}

/* The paths standing for deep nodes, after the others (in f->path, free
 * once the walk is over). */
static int fold_deep(folder *f)
{
    const rd_model *m = f->w.m;
    uint32_t *fids = malloc(RD_PATH_MAX * sizeof *fids);
    char label[RD_LABEL_MAX];
    for (uint32_t n = 1; fids && n < m->nnode && !f->err; n++) {
        if (!f->deep[n])
            continue;
        uint32_t k = rd_paths_get(&f->paths, m, n, fids, NULL);
        f->len = 0;
        f->depth = 0;
        for (uint32_t i = 0; i < k && !f->err; i++) {
            if (fids[i] == RD_PATH_CUT)
                snprintf(label, sizeof label, "%s", RD_PATH_CUT_LABEL);
            else
                rd_label_folded(m, fids[i], label, sizeof label);
            f->err = fold_push(f, label);
        }
        fold_line(f, f->path, f->len, f->deep[n]);
    }
    free(fids);
    if (!f->err && f->left_out &&
        fprintf(f->out, "%s %llu\n", RD_PATH_CUT_LABEL, (unsigned long long)f->left_out) < 0)
        f->err = -EIO;
    return fids ? f->err : -ENOMEM;
}

uint64_t rd_report_fold_max(const rd_model *m)
{
    return RD_FOLD_MAX + (uint64_t)RD_FOLD_PER_STACK * m->nnode;
}

int rd_report_folded(const rd_model *m, enum rd_weight w, FILE *out, double *cut)
{
    folder f = {{fold_enter, fold_leave, m}, w, rd_model_ns_per_tick(m), out, NULL, 0, 0,
                NULL, 0, 0, {0}, NULL, 0, rd_report_fold_max(m), 0, 0, 0};
    if (rd_paths_init(&f.paths, m, 0))
        return -ENOMEM;
    if (!(f.deep = calloc(m->nnode, sizeof *f.deep))) {
        rd_paths_free(&f.paths);
        return -ENOMEM;
    }
    rd_model_walk(&f.w);
    int e = f.err ? f.err : fold_deep(&f);
    free(f.path);
    free(f.marks);
    free(f.deep);
    rd_paths_free(&f.paths);
    if (cut)
        *cut = f.left_out && f.all ? (double)f.left_out / (double)f.all : 0;
    return e;
}

/* ---- profile.txt ---- */

typedef struct rank {
    const rd_fstat *fs;
    int by; /* BY_* */
} rank;

enum { BY_SELF, BY_TOTAL, BY_CALLS };

static uint64_t rank_value(const rank *r, uint32_t f)
{
    return r->by == BY_TOTAL ? r->fs[f].total : r->by == BY_CALLS ? r->fs[f].calls : r->fs[f].self;
}

static int cmp_fid(const void *a, const void *b, void *ctx)
{
    const rank *r = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t vx = rank_value(r, x), vy = rank_value(r, y);
    return vx < vy ? 1 : vx > vy ? -1 : x < y ? -1 : x > y;
}

static void plain_label(const rd_model *m, uint32_t fid, char *buf, size_t cap)
{
    rd_label_human(m, fid, 0, buf, cap);
    rd_printable(buf, buf, cap); /* the table is for people, often on a terminal */
}

/* The rows a table leaves out past `top`, as one row: how many, and
 * what they weigh together (calls, self), or at most (total: totals
 * overlap). k: ms per tick. */
static void rest_row(const rank *r, const uint32_t *ids, uint32_t n, unsigned top, double k,
                     double all, FILE *out)
{
    if (!top || n <= top)
        return;
    uint64_t calls = 0, self = 0;
    for (uint32_t i = top; i < n; i++)
        calls += r->fs[ids[i]].calls, self += r->fs[ids[i]].self;
    double most = (double)r->fs[ids[top]].total, pct = all > 0 ? 100.0 / all : 0.0;
    if (r->by == BY_CALLS)
        fprintf(out, "%10llu  (%u more functions together)\n", (unsigned long long)calls,
                n - top);
    else if (r->by == BY_SELF)
        fprintf(out, "%10llu %12.3f %6.2f %12s %6s %12s  (%u more functions together)\n",
                (unsigned long long)calls, (double)self * k, (double)self * pct, "", "", "",
                n - top);
    else
        fprintf(out, "%10s %12s %6s %12.3f %6.2f %12s  (%u more functions, each at most this)\n",
                "", "", "", most * k, most * pct, "", n - top);
}

static void table(const rd_model *m, const rd_fstat *fs, uint32_t *ids, uint32_t n,
                  unsigned top, int by_total, FILE *out)
{
    double k = rd_model_ns_per_tick(m) / 1e6, all = (double)m->ticks_total;
    rank r = {fs, by_total ? BY_TOTAL : BY_SELF};
    qsort_r(ids, n, sizeof *ids, cmp_fid, &r);
    fprintf(out, "\n%s\n", by_total ? "By total time (callees included, recursion once)"
                                     : "By self time");
    fprintf(out, "%10s %12s %6s %12s %6s %12s  %s\n", "calls", "self ms", "self%", "total ms",
            "total%", "self/call us", "function");
    for (uint32_t i = 0; i < n && (!top || i < top); i++) {
        const rd_fstat *f = &fs[ids[i]];
        char label[RD_LABEL_MAX];
        plain_label(m, ids[i], label, sizeof label);
        double per = f->calls ? (double)f->self * k * 1000.0 / (double)f->calls : 0.0;
        fprintf(out, "%10llu %12.3f %6.2f %12.3f %6.2f %12.3f  %s\n",
                (unsigned long long)f->calls, (double)f->self * k,
                all > 0 ? 100.0 * (double)f->self / all : 0.0, (double)f->total * k,
                all > 0 ? 100.0 * (double)f->total / all : 0.0, per, label);
    }
    rest_row(&r, ids, n, top, k, all, out);
}

/* A trace with no time (a coverage run): functions by calls. */
static void table_calls(const rd_model *m, const rd_fstat *fs, uint32_t *ids, uint32_t n,
                        unsigned top, FILE *out)
{
    rank r = {fs, BY_CALLS};
    qsort_r(ids, n, sizeof *ids, cmp_fid, &r);
    fprintf(out, "\nBy calls\n%10s  %s\n", "calls", "function");
    for (uint32_t i = 0; i < n && (!top || i < top); i++) {
        char label[RD_LABEL_MAX];
        plain_label(m, ids[i], label, sizeof label);
        fprintf(out, "%10llu  %s\n", (unsigned long long)fs[ids[i]].calls, label);
    }
    rest_row(&r, ids, n, top, 0.0, 0.0, out);
}

int rd_report_profile(const rd_model *m, const char *title, const char *cmd, unsigned top,
                      int cut_short, FILE *out)
{
    rd_fstat *fs = rd_report_fstats(m);
    uint32_t *ids = malloc((m->nfunc + 1) * sizeof *ids);
    if (!fs || !ids) {
        free(fs);
        free(ids);
        return -ENOMEM;
    }
    uint32_t n = 0;
    for (uint32_t f = 0; f < m->nfunc; f++)
        if (fs[f].calls || fs[f].self || fs[f].total)
            ids[n++] = f;
    double ms = (double)m->ticks_total * rd_model_ns_per_tick(m) / 1e6;
    char shown[4096];
    fprintf(out, "luatrace profile%s%s\n", title ? ": " : "",
            title ? rd_printable(title, shown, sizeof shown) : "");
    if (cmd)
        fprintf(out, "command: %s\n", rd_printable(cmd, shown, sizeof shown));
    if (cut_short)
        fprintf(out, "%s\n", RD_REPORT_CUT_SHORT);
    if (m->untimed)
        fprintf(out, "no time: a coverage run (LUATRACE_TIMING=none) read no clock; counts "
                     "only\nevents: %llu   functions: %u   stacks: %u\n",
                (unsigned long long)m->events, n, rd_model_stacks(m));
    else
        fprintf(out, "traced time: %.3f ms   events: %llu   functions: %u   stacks: %u\n", ms,
                (unsigned long long)m->events, n, rd_model_stacks(m));
    if (!m->sampled_hz) {
        char src[512];
        fprintf(out, "time: %s\n", rd_model_time_source(m, src, sizeof src));
    }
    if (m->sampled_jit)
        fprintf(out, "SAMPLED by LuaJIT's profiler at %u Hz (CPU time; the JIT on): each sample "
                     "counts the CPU time since the one before; calls count the entries the "
                     "samples saw, not the calls made\n", m->sampled_hz);
    else if (m->sampled_cpu)
        fprintf(out, "SAMPLED from outside at %u Hz (CPU time): each sample counts its Lua "
                     "thread's CPU time since the one before; calls count the entries the "
                     "samples saw, not the calls made\n", m->sampled_hz);
    else if (m->sampled_hz)
        fprintf(out, "SAMPLED from outside at %u Hz: times are samples of %.3f ms each; calls "
                     "count the entries the samples saw, not the calls made\n",
                m->sampled_hz, 1000.0 / m->sampled_hz);
    if (m->dropped)
        fprintf(out, "DROPPED EVENTS: %llu (a full ring in LUATRACE_MODE=drop, or the "
                     "collector out of memory): stacks were "
                     "resynchronised after each gap, times and counts are incomplete\n",
                (unsigned long long)m->dropped);
    if (m->rehooked)
        fprintf(out, "HOOK TAKEN OFF: %llu times C code removed the collector's hook from a "
                     "thread (luaposix's posix.signal does at each signal it handles); it was "
                     "put back at the next tick: calls and lines between are missing\n",
                (unsigned long long)m->rehooked);
    if (m->untimed) {
        table_calls(m, fs, ids, n, top, out);
    } else {
        table(m, fs, ids, n, top, 0, out);
        table(m, fs, ids, n, top, 1, out);
    }
    if (m->has_mem && rd_report_memory(m, top, out))
        fprintf(out, "\n(no memory table: out of memory)\n");
    free(fs);
    free(ids);
    return ferror(out) ? -EIO : 0;
}

/* ---- the summary ---- */

#define SUMMARY_TOP 10

/* path shown to the user: past "CWD/" when it is under our cwd. */
static const char *from_here(const char *path, char *cwd, size_t cap)
{
    size_t n = getcwd(cwd, cap) ? strlen(cwd) : 0;
    if (n > 1 && !strncmp(path, cwd, n) && path[n] == '/' && path[n + 1])
        return path + n + 1;
    return path;
}

/* The summary's first lines: time and events, the waits for a CPU, a
 * sampled session's rate (else its times and calls read as a trace's),
 * dropped events. */
static void summary_head(const rd_model *m, double k, double all, FILE *out)
{
    if (m->untimed)
        fprintf(out, "\nluatrace: no time (a coverage run)   events: %llu\n",
                (unsigned long long)m->events);
    else
        fprintf(out, "\nluatrace: traced time: %.3f ms   events: %llu\n", all * k,
                (unsigned long long)m->events);
    if (m->waited_ticks * k >= 1) /* a ms or more: the machine was busy */
        fprintf(out, "waited for a CPU: %.3f ms, left out of the traced time\n",
                (double)m->waited_ticks * k);
    if (m->sampled_hz)
        fprintf(out, "sampled %s at %u Hz: times are %s; calls count the entries the "
                     "samples saw\n",
                m->sampled_jit ? "by LuaJIT's profiler" : "from outside", m->sampled_hz,
                m->sampled_cpu && !m->sampled_jit ? "its Lua thread's CPU time" : "samples");
    if (m->dropped)
        fprintf(out, "DROPPED EVENTS: %llu: times and counts are incomplete\n",
                (unsigned long long)m->dropped);
    if (m->rehooked)
        fprintf(out, "HOOK TAKEN OFF %llu times by C code (luaposix's posix.signal?): calls "
                     "and lines until the next tick were not traced\n",
                (unsigned long long)m->rehooked);
}

int rd_report_summary(const rd_model *m, const char *dir, FILE *out)
{
    rd_fstat *fs = rd_report_fstats(m);
    uint32_t *ids = malloc((m->nfunc + 1) * sizeof *ids), n = 0;
    if (!fs || !ids) {
        free(fs);
        free(ids);
        return -ENOMEM;
    }
    for (uint32_t f = 0; f < m->nfunc; f++)
        if (m->untimed ? fs[f].calls : fs[f].self)
            ids[n++] = f;
    /* a traced run shorter than a tick has no self time anywhere, but its
     * calls are exact: they are listed, not an empty table under its
     * heading, as if nothing ran (a sampled session's calls are only
     * what its samples saw: none) */
    int by_calls = m->untimed || (!n && m->tick_clock && !m->sampled_hz);
    for (uint32_t f = 0; f < m->nfunc && by_calls && !m->untimed; f++)
        if (fs[f].calls)
            ids[n++] = f;
    rank r = {fs, by_calls ? BY_CALLS : BY_SELF};
    qsort_r(ids, n, sizeof *ids, cmp_fid, &r);
    double k = rd_model_ns_per_tick(m) / 1e6, all = (double)m->ticks_total;
    summary_head(m, k, all, out);
    if (by_calls)
        fprintf(out, "%10s  %s\n", "calls", m->untimed ? "function (top 10 by calls)"
                                                      : "function (top 10 by calls: no time)");
    else
        fprintf(out, "%12s %6s %10s  %s\n", "self ms", "self%", "calls",
                "function (top 10 by self time)");
    for (uint32_t i = 0; i < n && i < SUMMARY_TOP && by_calls; i++) {
        char label[RD_LABEL_MAX];
        plain_label(m, ids[i], label, sizeof label);
        fprintf(out, "%10llu  %s\n", (unsigned long long)fs[ids[i]].calls, label);
    }
    for (uint32_t i = 0; i < n && i < SUMMARY_TOP && !by_calls; i++) {
        char label[RD_LABEL_MAX];
        plain_label(m, ids[i], label, sizeof label);
        fprintf(out, "%12.3f %6.2f %10llu  %s\n", (double)fs[ids[i]].self * k,
                all > 0 ? 100.0 * (double)fs[ids[i]].self / all : 0.0,
                (unsigned long long)fs[ids[i]].calls, label);
    }
    if (!n && m->sampled_jit) /* else an empty table, as if nothing ran */
        fprintf(out, "no samples: the program ran less than a sample period (1/%u s of CPU "
                     "time)\n", m->sampled_hz);
    else if (!n && m->sampled_hz)
        fprintf(out, "no samples in Lua: the process ran no Lua code while it was read, or "
                     "less than a sample period (1/%u s)\n", m->sampled_hz);
    if (m->tick_clock) /* after the table, whose place the summary's readers know */
        fprintf(out, "time: sampled %s time, %sstacks and %s%s\n",
                m->tick_clock == LT_CLOCK_WALL ? "wall-clock" : "CPU",
                m->dropped || m->rehooked ? "" : "exact ", /* not after DROPPED EVENTS */
                m->lines_sampled ? "calls, lines by sample" : "counts",
                by_calls ? "; no tick landed where the program ran (it ran less than a "
                           "tick): use --time exact for its time"
                : rd_model_few_samples(m) ? "; " RD_FEW_SAMPLES_SAID
                                          : "");
    char page[PATH_MAX + 16], cwd[PATH_MAX];
    snprintf(page, sizeof page, "%s/report.html", dir);
    int there = !access(page, R_OK);
    char shown[PATH_MAX];
    fprintf(out, "%s %s%s\n", there ? "open:" : "reports:",
            rd_printable(from_here(there ? page : dir, cwd, sizeof cwd), shown, sizeof shown),
            there ? "" : "/");
    free(fs);
    free(ids);
    return ferror(out) ? -EIO : 0;
}

/* ---- lines by source ---- */

/* The group of line l, or UINT32_MAX for none. */
static uint32_t group_of_line(const rd_model *m, const rd_line *l, const uint32_t *group_of,
                              uint32_t ngroup)
{
    uint32_t slot = l->fid ? rd_model_src_slot(m, l->fid) : UINT32_MAX;
    if (slot == UINT32_MAX)
        return UINT32_MAX;
    uint32_t k = group_of ? group_of[slot] - 1 : slot; /* group_of 0: UINT32_MAX */
    return k < ngroup ? k : UINT32_MAX;
}

static int cmp_fline(const void *a, const void *b)
{
    const rd_fline *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Sums the hits and ticks of functions sharing a line (sorted v, n > 0);
 * returns the lines left. */
static uint32_t merge_flines(rd_fline *v, uint32_t n)
{
    uint32_t w = 1;
    for (uint32_t i = 1; i < n; i++) {
        if (v[w - 1].group == v[i].group && v[w - 1].line == v[i].line) {
            v[w - 1].hits += v[i].hits;
            v[w - 1].ticks += v[i].ticks;
            v[w - 1].bytes += v[i].bytes;
        } else {
            v[w++] = v[i];
        }
    }
    return w;
}

int rd_report_flines_init(rd_flines *fl, const rd_model *m, const uint32_t *group_of,
                          uint32_t ngroup)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->capline; i++)
        n += group_of_line(m, &m->line[i], group_of, ngroup) != UINT32_MAX;
    fl->ngroup = ngroup;
    fl->first = calloc((size_t)ngroup + 1, sizeof *fl->first);
    fl->line = malloc(((size_t)n + 1) * sizeof *fl->line);
    if (!fl->first || !fl->line) {
        rd_report_flines_close(fl);
        return -ENOMEM;
    }
    n = 0;
    for (uint32_t i = 0; i < m->capline; i++) {
        const rd_line *l = &m->line[i];
        uint32_t k = group_of_line(m, l, group_of, ngroup);
        if (k != UINT32_MAX)
            fl->line[n++] = (rd_fline){l->line, k, l->hits, l->ticks, rd_mem_line_bytes(&m->mem, i)};
    }
    if (n) {
        qsort(fl->line, n, sizeof *fl->line, cmp_fline);
        n = merge_flines(fl->line, n);
    }
    for (uint32_t i = 0; i < n; i++) /* count per group, then start per group */
        fl->first[fl->line[i].group + 1]++;
    for (uint32_t k = 0; k < ngroup; k++)
        fl->first[k + 1] += fl->first[k];
    return 0;
}

void rd_report_flines_close(rd_flines *fl)
{
    free(fl->line);
    free(fl->first);
    *fl = (rd_flines){NULL, NULL, 0};
}

const rd_fline *rd_report_flines_of(const rd_flines *fl, uint32_t k, uint32_t *n)
{
    *n = k < fl->ngroup ? fl->first[k + 1] - fl->first[k] : 0;
    return *n ? &fl->line[fl->first[k]] : NULL;
}
