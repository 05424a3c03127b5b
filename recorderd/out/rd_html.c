/* rd_html: report.html (rd_html.h).
 *
 * Design. One page, sections in order: summary, flame graph, top
 * functions by self time, then sources: a coverage table per file and each
 * file's listing. A listing row is one source line with its line events
 * (hits), the time spent on the line itself and its coverage class (hit,
 * missed: executable but never run, or neither); the time and hits cells
 * are shaded by how hot the line is against the hottest line of the whole
 * page. Coverage comes from rd_cov (files by device and inode, executable
 * lines from the bytecode); time comes from the model's (function, line)
 * stats, matched to a coverage file by the resolved path of the
 * function's source (or, for chunks that are no file, by name). Every
 * string from the trace goes through rd_xml_put; the only script is the
 * flame graph's own, and the style sheet is inline.
 */
#include "rd_html.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "rd_flame.h"
#include "rd_label.h"
#include "rd_lines.h"
#include "rd_report.h"
#include "rd_util.h" /* rd_xml_put */

#define TOP_FUNCS 50

typedef struct html {
    const rd_model *m;
    const rd_html_info *info;
    const rd_cov *cov;
    FILE *out;
    double ms_per_tick;
    uint32_t *file_of_slot;       /* source slot -> cov file index + 1, 0 none */
    uint32_t *cov_ix, cov_mask;   /* hash: a cov file's path, or name if none -> index + 1 */
    uint64_t max_ticks, max_hits; /* hottest line of the page */
    uint64_t max_bytes;           /* a memory trace: the line allocating most */
} html;

static void esc(html *h, const char *s)
{
    rd_xml_put(h->out, s ? s : "", SIZE_MAX);
}

static const char style[] =
    "<style>\n"
    "body{font-family:sans-serif;margin:1em 2em;color:#222}\n"
    "h1{font-size:1.4em}h2{font-size:1.2em;margin-top:1.5em}\n"
    "table{border-collapse:collapse}td,th{padding:1px 8px;text-align:right}\n"
    "th{background:#eee}td.l,th.l{text-align:left}\n"
    "table.sum td{text-align:left}\n"
    ".flame{overflow-x:auto}\n"
    "table.src td{font-family:monospace;white-space:pre;padding:0 6px}\n"
    "table.src td.s{text-align:left}\n"
    "tr.hit td.n{border-left:4px solid #3a3}tr.miss td.n{border-left:4px solid #d33}\n"
    "tr.miss td.s{background:#fdd}tr.none td.n{border-left:4px solid transparent}\n"
    /* the memory flame graph's switch: a radio button shows its graph, no script */
    ".mlive{display:none}#mf-live:checked~.mlive{display:block}"
    "#mf-live:checked~.malloc{display:none}\n"
    ".note{color:#666}.warn{color:#b00;font-weight:bold}\n"
    "</style>\n";

/* ---- matching sources to coverage files ---- */

/* What a source is matched by: a file's resolved path, or the name of a
 * chunk that is no file or of a file not found (never equal to a path:
 * hashed apart; a "=m.lua" chunk and a gone m.lua told apart by chunk). */
static const char *cov_key(const rd_cov_file *f)
{
    return f->path ? f->path : f->name;
}

static uint32_t *cov_slot(const html *h, const char *key, int is_path, int chunk)
{
    uint32_t x = is_path ? 0x9E3779B9u : 2166136261u;
    for (const char *c = key; *c; c++)
        x = (x ^ (uint8_t)*c) * 16777619u;
    for (uint32_t i = x & h->cov_mask;; i = (i + 1) & h->cov_mask) {
        uint32_t k = h->cov_ix[i];
        const rd_cov_file *f = k ? &h->cov->f[k - 1] : NULL;
        if (!f || (!f->path == !is_path && (is_path || !f->chunk == !chunk) &&
                   !strcmp(cov_key(f), key)))
            return &h->cov_ix[i];
    }
}

/* The coverage files by key, the first of equal keys kept (as a search in
 * order found it): a lookup per source, not a pass over every file. */
static int index_cov(html *h)
{
    uint32_t cap = 64;
    while (cap < 2 * (uint64_t)h->cov->nf + 2)
        cap *= 2;
    if (!(h->cov_ix = calloc(cap, sizeof *h->cov_ix))) return -ENOMEM;
    h->cov_mask = cap - 1;
    for (uint32_t i = 0; i < h->cov->nf; i++) {
        const rd_cov_file *f = &h->cov->f[i];
        uint32_t *s = cov_slot(h, cov_key(f), f->path != NULL, f->chunk);
        if (!*s) *s = i + 1;
    }
    return 0;
}

/* The coverage file of a source slot (rd_model_src_slot): a file's by its
 * resolved path; a chunk that is no file by its name, whatever file has it. */
static uint32_t cov_file_of(const html *h, uint32_t slot)
{
    char joined[PATH_MAX + 1], real[PATH_MAX];
    const char *dir = rd_model_slot_dir(h->m, slot), *src = rd_model_slot_src(h->m, slot);
    if (!dir)
        dir = h->info->srcdir;
    int file = !RD_SLOT_NOFILE(slot);
    if (src[0] != '/' && dir)
        snprintf(joined, sizeof joined, "%s/%s", dir, src);
    else
        snprintf(joined, sizeof joined, "%s", src);
    int resolved = file && src[0] && realpath(joined, real);
    return *cov_slot(h, resolved ? real : src, resolved, !file);
}

static int map_sources(html *h)
{
    const rd_model *m = h->m;
    h->file_of_slot = calloc((size_t)RD_SLOTS(m) + 1, sizeof *h->file_of_slot);
    uint8_t *done = calloc((size_t)RD_SLOTS(m) + 1, 1);
    int e = h->file_of_slot && done ? index_cov(h) : -ENOMEM;
    for (uint32_t f = 1; !e && f < m->nfunc; f++) {
        uint32_t slot = rd_model_src_slot(m, f);
        if (slot == UINT32_MAX || done[slot])
            continue;
        done[slot] = 1;
        h->file_of_slot[slot] = cov_file_of(h, slot);
    }
    free(done);
    return e;
}

static void find_maxima(html *h)
{
    for (uint32_t j = 0; j < h->m->capline; j++)
        if (h->m->line[j].fid && h->m->line[j].ticks > h->max_ticks)
            h->max_ticks = h->m->line[j].ticks;
    for (uint32_t i = 0; i < h->cov->nf; i++)
        for (uint32_t j = 0; j < h->cov->f[i].nln; j++)
            if (h->cov->f[i].ln[j].hits > h->max_hits) h->max_hits = h->cov->f[i].ln[j].hits;
    for (uint32_t j = 0; j < h->m->capline; j++)
        if (h->m->line[j].fid && rd_mem_line_bytes(&h->m->mem, j) > h->max_bytes)
            h->max_bytes = rd_mem_line_bytes(&h->m->mem, j);
}

/* ---- summary, flame graph, top functions ---- */

static void summary_row(html *h, const char *key, const char *value)
{
    fprintf(h->out, "<tr><th class=\"l\">%s</th><td>", key);
    esc(h, value);
    fputs("</td></tr>\n", h->out);
}

static void put_summary(html *h, const rd_fstat *fs)
{
    const rd_model *m = h->m;
    char buf[512];
    uint32_t nf = 0, nc = 0, nmain = 0; /* run: all, C, main chunks */
    for (uint32_t f = 0; f < m->nfunc; f++) {
        int run = fs[f].calls || fs[f].self || fs[f].total;
        nf += run;
        nc += run && m->func[f].what == LT_WHAT_C;
        nmain += run && m->func[f].what == LT_WHAT_MAIN;
    }
    fputs("<h2 id=\"summary\">Summary</h2>\n<table class=\"sum\">\n", h->out);
    summary_row(h, "command", h->info->cmd ? h->info->cmd : "(not recorded in the trace)");
    if (m->untimed)
        snprintf(buf, sizeof buf, "none: a coverage run (--coverage) reads no clock; counts, "
                                  "stacks and lines only");
    else
        snprintf(buf, sizeof buf, "%.3f ms", (double)m->ticks_total * h->ms_per_tick);
    summary_row(h, "traced time", buf);
    if ((double)m->waited_ticks * h->ms_per_tick >= 1) { /* as the summary on stderr */
        snprintf(buf, sizeof buf, "%.3f ms, left out of the traced time (the machine was busy)",
                 (double)m->waited_ticks * h->ms_per_tick);
        summary_row(h, "waited for a CPU", buf);
    }
    if (!m->sampled_hz)
        summary_row(h, "time source", rd_model_time_source(m, buf, sizeof buf));
    if (m->sampled_hz) {
        snprintf(buf, sizeof buf, "%s at %u Hz: times are samples, calls the entries "
                                  "the samples saw, and a line is run if a sample saw it",
                 m->sampled_jit   ? "by LuaJIT's profiler, in CPU time"
                 : m->sampled_cpu ? "from outside, in CPU time"
                                  : "from outside",
                 m->sampled_hz);
        summary_row(h, "sampled", buf);
    }
    if (h->info->wall_ns) {
        snprintf(buf, sizeof buf, "%.3f ms", (double)h->info->wall_ns / 1e6);
        summary_row(h, "session wall time", buf);
    }
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)m->events);
    summary_row(h, "events", buf);
    /* the coverage row counts Lua functions only: say what this one counts */
    snprintf(buf, sizeof buf, "%u run: %u in Lua (%u main chunk%s), %u in C", nf, nf - nc, nmain,
             nmain == 1 ? "" : "s", nc);
    summary_row(h, "functions", buf);
    snprintf(buf, sizeof buf, "%u", rd_model_stacks(m));
    summary_row(h, "stacks", buf);
    rd_cov_total t = rd_cov_total_of(h->cov);
    snprintf(buf, sizeof buf, "%llu of %llu lines (%.2f%%), %llu of %llu functions",
             (unsigned long long)t.hit, (unsigned long long)t.lines,
             t.lines ? 100.0 * (double)t.hit / (double)t.lines : 0.0, (unsigned long long)t.fns_hit,
             (unsigned long long)t.fns);
    if (m->sampled_hz) /* a line no sample saw may have run a million times */
        snprintf(buf, sizeof buf, "none: samples see some of the lines run, not all "
                                  "(recorderd run traces every line)");
    else if (m->lines_sampled)
        snprintf(buf, sizeof buf, "none: lines by sample, calls exact (recorderd run "
                                  "--lines exact counts every line)");
    summary_row(h, "coverage", buf);
    char note[256];
    if (rd_cov_truncated_note(h->cov, note, sizeof note)[0]) summary_row(h, "INCOMPLETE", note);
    if (m->dropped) {
        snprintf(buf, sizeof buf, "%llu: times and counts are incomplete",
                 (unsigned long long)m->dropped);
        summary_row(h, "DROPPED EVENTS", buf);
    }
    if (m->rehooked) {
        snprintf(buf, sizeof buf, "%llu times by C code: calls and lines until the next tick "
                 "are missing", (unsigned long long)m->rehooked);
        summary_row(h, "HOOK TAKEN OFF", buf);
    }
    fputs("</table>\n", h->out);
}

static int put_flame(html *h)
{
    fputs("<h2 id=\"flame\">Flame graph</h2>\n<p class=\"note\">Click a frame to zoom, "
          "&quot;Search&quot; to highlight frames by regular expression.</p>\n"
          "<div class=\"flame\">\n",
          h->out);
    int e = rd_flame_write_inline(h->m, h->info->title, h->out);
    fputs("</div>\n", h->out);
    return e;
}

/* A memory trace: the flame graph by bytes allocated, and by bytes live at
 * the end, one shown at a time by a radio button (CSS: the page stays
 * without a script of its own). Each graph's ids have a prefix of its own. */
static int put_mem_flame(html *h)
{
    fputs("<h2 id=\"memflame\">Memory flame graph</h2>\n<p class=\"note\">Width: bytes "
          "allocated at a stack (its line's own and its callees'), or bytes of those still live "
          "when tracing stopped (the leak view). Click a frame to zoom.</p>\n"
          "<div class=\"flame\">\n<input type=\"radio\" name=\"mf\" id=\"mf-alloc\" checked>"
          "<label for=\"mf-alloc\">allocated</label>\n<input type=\"radio\" name=\"mf\" "
          "id=\"mf-live\"><label for=\"mf-live\">live at the end</label>\n"
          "<div class=\"malloc\">\n",
          h->out);
    int e = rd_flame_write_mem(h->m, "bytes allocated", RD_FLAME_ALLOC, "ma", h->out);
    fputs("</div>\n<div class=\"mlive\">\n", h->out);
    if (!e) e = rd_flame_write_mem(h->m, "bytes live at the end", RD_FLAME_LIVE, "ml", h->out);
    fputs("</div>\n</div>\n", h->out);
    return e;
}

static int cmp_self(const void *a, const void *b, void *ctx)
{
    const rd_fstat *fs = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return fs[x].self < fs[y].self ? 1 : fs[x].self > fs[y].self ? -1 : x < y ? -1 : x > y;
}

/* A trace with no time: by calls. */
static int cmp_calls(const void *a, const void *b, void *ctx)
{
    const rd_fstat *fs = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return fs[x].calls < fs[y].calls ? 1 : fs[x].calls > fs[y].calls ? -1 : x < y ? -1 : x > y;
}

/* A trace with no time (a coverage run) has no time columns in any table:
 * they held 0.000 on every row. */
static void put_func_row(html *h, const rd_fstat *f, uint32_t fid)
{
    const rd_model *m = h->m;
    double all = (double)m->ticks_total, k = h->ms_per_tick;
    if (m->untimed)
        fprintf(h->out, "<tr><td>%llu</td><td class=\"l\">", (unsigned long long)f->calls);
    else
        fprintf(h->out,
                "<tr><td>%llu</td><td>%.3f</td><td>%.2f</td><td>%.3f</td><td>%.2f</td>"
                "<td class=\"l\">",
                (unsigned long long)f->calls, (double)f->self * k,
                all > 0 ? 100.0 * (double)f->self / all : 0.0, (double)f->total * k,
                all > 0 ? 100.0 * (double)f->total / all : 0.0);
    char label[RD_LABEL_MAX];
    rd_label_human(m, fid, 0, label, sizeof label);
    esc(h, label);
    fputs("</td></tr>\n", h->out);
}

static int put_top(html *h, const rd_fstat *fs)
{
    const rd_model *m = h->m;
    uint32_t *ids = malloc(((size_t)m->nfunc + 1) * sizeof *ids), n = 0;
    if (!ids) return -ENOMEM;
    for (uint32_t f = 0; f < m->nfunc; f++)
        if (fs[f].calls || fs[f].self || fs[f].total) ids[n++] = f;
    qsort_r(ids, n, sizeof *ids, m->untimed ? cmp_calls : cmp_self, (void *)fs);
    fprintf(h->out, "<h2 id=\"top\">Top functions by %s</h2>\n<table class=\"top\">\n"
                    "<tr><th>calls</th>%s<th class=\"l\">function</th></tr>\n",
            m->untimed ? "calls (no time: a coverage run)" : "self time",
            m->untimed ? "" : "<th>self ms</th><th>self%</th><th>total ms</th><th>total%</th>");
    for (uint32_t i = 0; i < n && i < TOP_FUNCS; i++)
        put_func_row(h, &fs[ids[i]], ids[i]);
    fputs("</table>\n", h->out);
    if (n > TOP_FUNCS)
        fprintf(h->out, "<p class=\"note\">%u more functions: see profile.txt.</p>\n",
                n - TOP_FUNCS);
    free(ids);
    return 0;
}

/* ---- sources ---- */

static void put_file_row(html *h, uint32_t i, uint64_t ticks)
{
    const rd_cov_file *f = &h->cov->f[i];
    rd_cov_total t = rd_cov_file_total(f);
    fprintf(h->out, "<tr><td class=\"l\"><a href=\"#src-%u\">", i);
    esc(h, f->path ? rd_label_src(h->m, f->path) : f->name); /* as in the labels */
    fputs("</a></td>", h->out);
    if (!rd_model_lines_counted(h->m))
        fputs("<td colspan=\"3\" class=\"l note\">sampled: no coverage</td>", h->out);
    else if (f->exact)
        fprintf(h->out, "<td>%llu / %llu</td><td>%.2f</td><td>%llu / %llu</td>",
                (unsigned long long)t.hit, (unsigned long long)t.lines,
                t.lines ? 100.0 * (double)t.hit / (double)t.lines : 0.0,
                (unsigned long long)t.fns_hit, (unsigned long long)t.fns);
    else
        fputs("<td colspan=\"3\" class=\"l note\">executable lines unknown</td>", h->out);
    if (h->m->untimed)
        fputs("</tr>\n", h->out);
    else
        fprintf(h->out, "<td>%.3f</td></tr>\n", (double)ticks * h->ms_per_tick);
}

/* A cell shaded from white (cold) to orange-red (the hottest line). */
static void heat_cell(html *h, double frac, const char *text)
{
    if (frac > 0)
        fprintf(h->out, "<td style=\"background:hsl(%.0f,100%%,%.0f%%)\">%s</td>", 40 - 35 * frac,
                95 - 40 * frac, text);
    else
        fprintf(h->out, "<td>%s</td>", text);
}

static void put_src_row(html *h, uint32_t line, const rd_cov_line *cl, const rd_fline *tl,
                        const char *text)
{
    char hits[32] = "", ms[32] = "", bytes[32] = "";
    const char *cls = cl && cl->hits ? "hit" : cl && cl->exec ? "miss" : "none";
    if (!rd_model_lines_counted(h->m)) /* no sample on a line is no news about it */
        cls = "none";
    if (cl && (cl->hits || (cl->exec && rd_model_lines_counted(h->m))))
        snprintf(hits, sizeof hits, "%llu", (unsigned long long)cl->hits);
    if (tl) snprintf(ms, sizeof ms, "%.3f", (double)tl->ticks * h->ms_per_tick);
    fprintf(h->out, "<tr class=\"%s\"><td class=\"n\">%u</td>", cls, line);
    heat_cell(h, cl && h->max_hits ? (double)cl->hits / (double)h->max_hits : 0, hits);
    if (!h->m->untimed)
        heat_cell(h, tl && h->max_ticks ? (double)tl->ticks / (double)h->max_ticks : 0, ms);
    if (h->m->has_mem) {
        if (tl && tl->bytes) snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)tl->bytes);
        heat_cell(h, tl && h->max_bytes ? (double)tl->bytes / (double)h->max_bytes : 0, bytes);
    }
    fputs("<td class=\"s\">", h->out);
    esc(h, text);
    fputs("</td></tr>\n", h->out);
}

/* Rows of one listing: every source line if text is readable, else the
 * lines with data only. */
static void put_rows(html *h, const rd_cov_file *f, const rd_fline *tv, uint32_t nt, char *text,
                     size_t len)
{
    uint32_t ci = 0, ti = 0, line = 0;
    size_t at = 0, n;
    rd_lines_unnul(text, len);
    for (char *s; (s = (char *)rd_lines_next(text, len, &at, &n));) {
        s[n] = 0; /* a line break, or the text's NUL */
        line++;
        while (ci < f->nln && f->ln[ci].line < line)
            ci++;
        while (ti < nt && tv[ti].line < line)
            ti++;
        put_src_row(h, line, ci < f->nln && f->ln[ci].line == line ? &f->ln[ci] : NULL,
                    ti < nt && tv[ti].line == line ? &tv[ti] : NULL, s);
    }
    for (; ci < f->nln || ti < nt;) { /* no source, or lines past its end */
        uint32_t lc = ci < f->nln ? f->ln[ci].line : UINT32_MAX;
        uint32_t lt = ti < nt ? tv[ti].line : UINT32_MAX, l = lc < lt ? lc : lt;
        if (l > line) put_src_row(h, l, lc == l ? &f->ln[ci] : NULL, lt == l ? &tv[ti] : NULL, "");
        ci += lc == l;
        ti += lt == l;
    }
}

static void put_listing(html *h, uint32_t i, const rd_fline *tv, uint32_t nt)
{
    const rd_cov_file *f = &h->cov->f[i];
    char *text = NULL, err[256] = "";
    size_t len = 0;
    fprintf(h->out, "<h3 id=\"src-%u\">", i);
    esc(h, f->path ? rd_label_src(h->m, f->path) : f->name); /* as in the labels */
    fputs("</h3>\n", h->out);
    if (!f->path || rd_lines_read(f->path, &text, &len, err, sizeof err)) {
        fputs("<p class=\"note\">source not readable", h->out);
        if (f->note || err[0]) {
            fputs(": ", h->out);
            esc(h, f->note ? f->note : err);
        }
        fputs("; lines with data only</p>\n", h->out);
    }
    fprintf(h->out, "<table class=\"src\">\n<tr><th>line</th><th>hits</th>%s%s"
                    "<th class=\"l\">source</th></tr>\n",
            h->m->untimed ? "" : "<th>ms</th>", h->m->has_mem ? "<th>bytes</th>" : "");
    put_rows(h, f, tv, nt, text, len);
    fputs("</table>\n", h->out);
    free(text);
}

static void put_file_table(html *h, const rd_flines *fl)
{
    if (!rd_model_lines_counted(h->m))
        fputs("<h2 id=\"sources\">Sources</h2>\n<p class=\"note\">hits: the samples that "
              "saw the line; ms: time on the line itself. Lines by sample: no coverage, "
              "a line no sample saw may have run.</p>\n",
              h->out);
    else if (h->m->untimed)
        fputs("<h2 id=\"sources\">Sources and coverage</h2>\n<p class=\"note\">hits: line "
              "events; green: run, red: executable but never run.</p>\n",
              h->out);
    else
        fputs("<h2 id=\"sources\">Sources and coverage</h2>\n<p class=\"note\">hits: line "
              "events; ms: time on the line itself, not in the functions it calls (a C "
              "function's time is its own, a Lua function's on its own lines), so the lines "
              "add up to the Lua functions' self time, not to the traced time; green: run, "
              "red: executable but never run.</p>\n",
              h->out);
    if (h->m->has_mem)
        fputs("<p class=\"note\">bytes: allocated on the line itself (as its ms: what a "
              "function it calls allocates is that function's), so a Lua function's lines add "
              "up to its self allocated bytes in the memory table.</p>\n",
              h->out);
    char note[256];
    if (rd_cov_truncated_note(h->cov, note, sizeof note)[0]) {
        fputs("<p class=\"warn\">", h->out);
        esc(h, note);
        fputs("</p>\n", h->out);
    }
    fprintf(h->out, "<table class=\"files\">\n<tr><th class=\"l\">file</th><th>lines hit</th>"
                    "<th>%%</th><th>functions hit</th>%s</tr>\n",
            h->m->untimed ? "" : "<th>ms</th>");
    uint64_t chunk_ticks = 0;
    uint32_t chunks = 0;
    for (uint32_t i = 0; i < h->cov->nf; i++) {
        uint32_t nt;
        const rd_fline *tv = rd_report_flines_of(fl, i, &nt);
        uint64_t ticks = 0;
        for (uint32_t j = 0; j < nt; j++)
            ticks += tv[j].ticks;
        if (h->cov->f[i].chunk) { /* no source: one row for them all */
            chunks++;
            chunk_ticks += ticks;
        } else {
            put_file_row(h, i, ticks);
        }
    }
    char ms[48] = "";
    if (!h->m->untimed)
        snprintf(ms, sizeof ms, "<td>%.3f</td>", (double)chunk_ticks * h->ms_per_tick);
    if (chunks)
        fprintf(h->out, "<tr><td class=\"l\">%u chunk%s loaded from strings or named with "
                "&apos;=&apos;</td><td colspan=\"3\" class=\"l note\">no source: their hit lines "
                "are in coverage.txt</td>%s</tr>\n", chunks, chunks == 1 ? "" : "s", ms);
    fputs("</table>\n", h->out);
}

/* Time per line comes from the model's lines grouped by coverage file
 * once (every function of the file merged), not a pass over them per file. */
static int put_sources(html *h)
{
    rd_flines fl;
    if (rd_report_flines_init(&fl, h->m, h->file_of_slot, h->cov->nf)) return -ENOMEM;
    put_file_table(h, &fl);
    for (uint32_t i = 0; i < h->cov->nf; i++) {
        uint32_t nt;
        const rd_fline *tv = rd_report_flines_of(&fl, i, &nt);
        if (!h->cov->f[i].chunk) /* a program's loadstring chunks may be thousands */
            put_listing(h, i, tv, nt);
    }
    rd_report_flines_close(&fl);
    return 0;
}

/* ---- the page ---- */

/* A memory trace (run --memory): profile.txt's memory table, as text. */
static int put_memory(html *h)
{
    char *text = NULL;
    size_t len = 0;
    FILE *t = open_memstream(&text, &len);
    int e = t ? rd_report_memory(h->m, 50, t) : -ENOMEM;
    if (t && fclose(t))
        e = -ENOMEM;
    if (!e) {
        fputs("<h2 id=\"memory\">Memory</h2>\n<p class=\"note\">Bytes allocated, freed and "
              "still live when tracing stopped, by function (callees included); heap.pb.gz has "
              "them per stack (doc/memory.md).</p>\n<pre>",
              h->out);
        for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
            if ((nl = strchr(line, '\n'))) /* esc writes a line break as '?' */
                *nl = 0;
            esc(h, line);
            fputc('\n', h->out);
        }
        fputs("</pre>\n", h->out);
    }
    free(text);
    return e;
}

static int put_page(html *h)
{
    rd_fstat *fs = rd_report_fstats(h->m);
    if (!fs) return -ENOMEM;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
          "luatrace: ",
          h->out);
    esc(h, h->info->title ? h->info->title : "report");
    fprintf(h->out, "</title>\n%s</head>\n<body>\n<h1>luatrace report: ", style);
    esc(h, h->info->title ? h->info->title : "");
    fputs("</h1>\n", h->out);
    put_summary(h, fs);
    int e = h->m->untimed ? 0 : put_flame(h); /* no time, no flame graph */
    if (!e && h->m->has_mem) e = put_mem_flame(h);
    if (!e) e = put_top(h, fs);
    if (!e && h->m->has_mem) e = put_memory(h);
    if (!e) e = put_sources(h);
    fputs("</body>\n</html>\n", h->out);
    free(fs);
    return e;
}

int rd_html_write(const rd_model *m, const rd_html_info *info, FILE *out)
{
    html h = {.m = m, .info = info, .cov = info->cov, .out = out};
    rd_cov own = {0};
    int e = 0;
    h.ms_per_tick = rd_model_ns_per_tick(m) / 1e6;
    if (!h.cov) {
        e = rd_cov_init(&own, NULL);
        if (!e && !(e = rd_cov_add_model(&own, m, info->srcdir))) rd_cov_finish(&own);
        own.truncated = info->truncated != 0;
        h.cov = &own;
    }
    if (!e) e = map_sources(&h);
    if (!e) {
        find_maxima(&h);
        e = put_page(&h);
    }
    if (!info->cov && h.cov == &own) rd_cov_free(&own);
    free(h.file_of_slot);
    free(h.cov_ix);
    return e ? e : ferror(out) ? -EIO : 0;
}
