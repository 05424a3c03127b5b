/* rd_flame: flamegraph.svg from the calling-context tree.
 *
 * Layout: a frame's width is its node's inclusive time over the whole
 * time; children sit side by side above their parent in node order (a
 * parent's index is always below its children's, so one forward pass
 * places every node). Each frame is a <g> with a <title> "label (N ms,
 * P%)", a <rect> and a <text> cut to the rect. The embedded script zooms:
 * a clicked frame's subtree is stretched to the full width, its ancestors
 * are drawn full width and dimmed, the rest hidden; clicking the root
 * ("all") or "Reset zoom" undoes it. "Search" highlights frames whose label
 * matches a regular expression. */
#include "rd_flame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rd_label.h"
#include "rd_path.h" /* RD_PATH_MAX: the depth drawn */
#include "rd_util.h" /* rd_utf8_seq, rd_xml_put */

#define IMG_W 1200.0 /* px */
#define PAD_X 10.0
#define FRAME_W (IMG_W - 2 * PAD_X)
#define FRAME_H 16
#define PAD_TOP 40
#define PAD_BOTTOM 10
#define CHAR_W 7.0 /* a 12 px sans-serif glyph, about */
#define MIN_W 0.1  /* narrower frames are left out */

/* What a frame's width weighs: the nodes' self time, or their bytes. */
typedef struct weight {
    const rd_model *m;
    int mem;     /* 0: time (ticks); RD_FLAME_ALLOC or RD_FLAME_LIVE: bytes */
    const char *p; /* the prefix of the graph's ids ("" for the time graph) */
} weight;

typedef struct fnode {
    uint64_t incl; /* ticks or bytes */
    double x, w;   /* px */
    double cur;    /* where the next child goes */
    uint32_t depth;
    int keep;
} fnode;

/* Code points in s, counting each bad byte as one. */
static size_t ncp(const char *s)
{
    size_t n = 0;
    for (int l; *s; s += l ? l : 1, n++)
        l = rd_utf8_seq(s);
    return n;
}

/* The label cut to what fits in w px ("ab.." ; nothing under 3 chars). */
static void put_fitted(FILE *out, const char *label, double w)
{
    size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
    if (ncp(label) <= fit) {
        rd_xml_put(out, label, SIZE_MAX);
    } else if (fit >= 3) {
        rd_xml_put(out, label, fit - 2);
        fputs("..", out);
    }
}

/* Inclusive time, position and depth of every node; returns the depth of
 * the deepest frame kept. The root's own time (outside any function) is
 * left out, as in the folded stacks. */
static uint64_t self_of(const weight *wt, uint32_t n)
{
    if (!wt->mem)
        return wt->m->node[n].self;
    const rd_memrow *r = rd_mem_row(&wt->m->mem, n);
    return wt->mem == RD_FLAME_LIVE ? r->live_b : r->alloc_b;
}

/* *cut: a frame wide enough was deeper than RD_PATH_MAX (a deep
 * recursion): not drawn, so that the graph stays a graph (500 000 levels
 * made a 119 MB file); its time is in the frames above it. */
static uint32_t layout(const weight *wt, fnode *f, int *cut)
{
    const rd_model *m = wt->m;
    uint32_t maxd = 0;
    for (uint32_t n = m->nnode; n-- > 1;) {
        f[n].incl += self_of(wt, n);
        f[m->node[n].parent].incl += f[n].incl;
    }
    f[0] = (fnode){f[0].incl, PAD_X, FRAME_W, PAD_X, 0, 1};
    for (uint32_t n = 1; n < m->nnode; n++) {
        fnode *p = &f[m->node[n].parent];
        double w = f[0].incl ? FRAME_W * (double)f[n].incl / (double)f[0].incl : 0.0;
        f[n].x = f[n].cur = p->cur;
        f[n].w = w;
        p->cur += w;
        f[n].depth = p->depth + 1;
        f[n].keep = p->keep && f[n].incl && w >= MIN_W;
        if (f[n].keep && f[n].depth > RD_PATH_MAX)
            f[n].keep = 0, *cut = 1;
        if (f[n].keep && f[n].depth > maxd) maxd = f[n].depth;
    }
    return maxd;
}

/* "hot" colours: red to yellow, chosen by a hash of the function name so
 * one function keeps its colour everywhere. */
static void colour(const char *name, char *buf, size_t cap)
{
    uint32_t h = 2166136261u;
    for (const char *c = name; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    snprintf(buf, cap, "rgb(%u,%u,%u)", 205 + h % 51, 60 + (h >> 8) % 170, (h >> 16) % 60);
}

static void write_frame(const weight *wt, const fnode *f, uint32_t n, uint32_t maxd, FILE *out)
{
    const rd_model *m = wt->m;
    const rd_func *fn = rd_model_func(m, m->node[n].fid);
    char label[RD_LABEL_MAX], fill[32];
    double total = (double)f[0].incl, ms = (double)f[n].incl * rd_model_ns_per_tick(m) / 1e6;
    if (n)
        rd_label_human(m, m->node[n].fid, 0, label, sizeof label);
    else
        snprintf(label, sizeof label, "all");
    if (n)
        colour(rd_model_string(m, fn->name_sid), fill, sizeof fill);
    else
        snprintf(fill, sizeof fill, "rgb(200,200,200)");
    double y = PAD_TOP + (double)(maxd - f[n].depth) * FRAME_H;
    fprintf(out, "<g class=\"f\" data-d=\"%u\"><title>", f[n].depth);
    rd_xml_put(out, label, SIZE_MAX);
    double pc = total > 0 ? 100.0 * (double)f[n].incl / total : 100.0;
    if (wt->mem) /* bytes exactly: the page's tests add them up */
        fprintf(out, " (%llu bytes, %.2f%%)</title>", (unsigned long long)f[n].incl, pc);
    else
        fprintf(out, ms < 1 ? " (%.6f ms, %.2f%%)</title>" : " (%.3f ms, %.2f%%)</title>", ms,
                pc);
    fprintf(out, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
            f[n].x, y, f[n].w, FRAME_H - 1, fill);
    fprintf(out, "<text x=\"%.2f\" y=\"%.0f\">", f[n].x + 3, y + FRAME_H - 4);
    put_fitted(out, label, f[n].w);
    fputs("</text></g>\n", out);
}

/* An SVG file needs its prolog and namespace; an <svg> inside an HTML page
 * gets both from the HTML parser. */
static void write_head(FILE *out, const char *title, uint32_t maxd, int inline_svg,
                       const char *p)
{
    int h = PAD_TOP + (int)(maxd + 1) * FRAME_H + PAD_BOTTOM;
    if (!inline_svg)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
    fprintf(out,
            "<svg id=\"%sfg\" version=\"1.1\"%s width=\"%.0f\" height=\"%d\" "
            "viewBox=\"0 0 %.0f %d\">\n",
            p, inline_svg ? "" : " xmlns=\"http://www.w3.org/2000/svg\"", IMG_W, h, IMG_W, h);
    fputs("<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
          ".f{cursor:pointer}.f:hover rect{stroke:#000;stroke-width:0.5}"
          ".f text{pointer-events:none}.ctl{cursor:pointer;fill:#336}"
          ".head{font-size:16px;text-anchor:middle}</style>\n",
          out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%d\" fill=\"#f8f8f0\"/>\n", IMG_W,
            h);
    fprintf(out, "<text id=\"%shead\" class=\"head\" x=\"%.0f\" y=\"20\">", p, IMG_W / 2);
    rd_xml_put(out, title ? title : "luatrace flame graph", SIZE_MAX);
    fprintf(out,
            "</text>\n<text id=\"%sunzoom\" class=\"ctl\" x=\"%.0f\" y=\"20\" "
            "visibility=\"hidden\">Reset zoom</text>\n"
            "<text id=\"%ssearch\" class=\"ctl\" x=\"%.0f\" y=\"20\" "
            "text-anchor=\"end\">Search</text>\n",
            p, PAD_X, p, IMG_W - PAD_X);
    fprintf(out, "<text id=\"%smatched\" x=\"%.0f\" y=\"%d\" text-anchor=\"end\"></text>\n",
            p, IMG_W - PAD_X, h - 1);
}

/* Zoom and search; X0, FW and CW are PAD_X, FRAME_W and CHAR_W. Frames
 * keep their laid-out x and width in ox/ow; a zoom recomputes every frame
 * from those. Labels are cut with CW as the markup's are, then, where a
 * browser measures the text wider than its frame (wide glyphs: CW is an
 * average), cut shorter by measuring (a binary search on the length); at
 * load for every frame, and again at each zoom. Runs when the document is
 * parsed (it comes last). */
static const char script_head[] = "<script type=\"text/ecmascript\"><![CDATA[\n"
                                  "(function () {\n"
                                  "  var P = '%s';\n"; /* the ids' prefix */

static const char script[] =
    "  var X0 = 10, FW = 1180, CW = 7, fr = [], root = null, matchRe = null;\n"
    "  function by(id) { return document.getElementById(P + id); }\n"
    "  function label(g) { var t = g.querySelector('title').textContent;\n"
    "    return t.substring(0, t.lastIndexOf(' (')); }\n"
    "  function fit(f, w) { var t = f.t, s = f.l, n = Math.floor((w - 6) / CW);\n"
    "    t.textContent = s.length <= n ? s : n >= 3 ? s.substring(0, n - 2) + '..' : '';\n"
    "    if (!t.textContent || !t.getComputedTextLength || t.getComputedTextLength() <= w - 6)\n"
    "      return;\n"
    "    var lo = 0, hi = (s.length <= n ? s.length : n - 2) - 1;\n"
    "    while (lo < hi) { var k = (lo + hi + 1) >> 1; t.textContent = s.substring(0, k) + '..';\n"
    "      if (t.getComputedTextLength() <= w - 6) lo = k; else hi = k - 1; }\n"
    "    t.textContent = lo ? s.substring(0, lo) + '..' : ''; }\n"
    "  function place(f, x, w, op) { f.r.setAttribute('x', x.toFixed(2));\n"
    "    f.r.setAttribute('width', w.toFixed(2)); f.t.setAttribute('x', (x + 3).toFixed(2));\n"
    "    f.g.style.display = ''; f.g.style.opacity = op; fit(f, w); }\n"
    "  function zoom(z) { var k = FW / z.ow, e = 0.005;\n"
    "    fr.forEach(function (f) {\n"
    "      if (f.d >= z.d && f.ox >= z.ox - e && f.ox + f.ow <= z.ox + z.ow + e)\n"
    "        place(f, X0 + (f.ox - z.ox) * k, f.ow * k, 1);\n"
    "      else if (f.d < z.d && f.ox <= z.ox + e && f.ox + f.ow >= z.ox + z.ow - e)\n"
    "        place(f, X0, FW, 0.6);\n"
    "      else f.g.style.display = 'none';\n"
    "    });\n"
    "    var u = by('unzoom');\n"
    "    u.setAttribute('visibility', z === root ? 'hidden' : 'visible'); }\n"
    "  function search() { var m = by('matched');\n"
    "    if (matchRe) { matchRe = null; m.textContent = '';\n"
    "      fr.forEach(function (f) { f.r.setAttribute('fill', f.c); }); return; }\n"
    "    var s = window.prompt('Search frames (regular expression)', ''); if (!s) return;\n"
    "    try { matchRe = new RegExp(s); } catch (err) { return; }\n"
    "    var hit = 0;\n"
    "    fr.forEach(function (f) { if (f.d && matchRe.test(f.l)) {\n"
    "      f.r.setAttribute('fill', 'rgb(220,0,220)'); hit++; } });\n"
    "    m.textContent = 'Matched: ' + hit + ' frames'; }\n"
    "  var gs = by('fg').querySelectorAll('g.f');\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var g = gs[i], r = g.querySelector('rect'), f = {g: g, r: r, t: g.querySelector('text'),\n"
    "      l: label(g), d: +g.getAttribute('data-d'), ox: +r.getAttribute('x'),\n"
    "      ow: +r.getAttribute('width'), c: r.getAttribute('fill')};\n"
    "    if (!f.d) root = f;\n"
    "    fr.push(f);\n"
    "    g.addEventListener('click', (function (f) { return function () { zoom(f); }; })(f));\n"
    "  }\n"
    "  fr.forEach(function (f) { fit(f, f.ow); });\n"
    "  by('unzoom').addEventListener('click', function () { zoom(root); });\n"
    "  by('search').addEventListener('click', search);\n"
    "})();\n"
    "]]></script>\n";

static int write_svg(const weight *wt, const char *title, int inline_svg, FILE *out)
{
    const rd_model *m = wt->m;
    fnode *f = calloc(m->nnode ? m->nnode : 1, sizeof *f);
    if (!f) return -ENOMEM;
    int cut = 0;
    uint32_t maxd = m->nnode ? layout(wt, f, &cut) : 0;
    char head[512];
    if (cut) /* the head says so */
        snprintf(head, sizeof head, "%.400s (frames deeper than %d not drawn)",
                 title ? title : "luatrace flame graph", RD_PATH_MAX);
    write_head(out, cut ? head : title, maxd, inline_svg, wt->p);
    for (uint32_t n = 0; n < m->nnode; n++)
        if (f[n].keep) write_frame(wt, f, n, maxd, out);
    fprintf(out, script_head, wt->p);
    fputs(script, out);
    fputs("</svg>\n", out);
    free(f);
    return ferror(out) ? -EIO : 0;
}

int rd_flame_write_svg(const rd_model *m, const char *title, FILE *out)
{
    return write_svg(&(weight){m, 0, ""}, title, 0, out);
}

int rd_flame_write_inline(const rd_model *m, const char *title, FILE *out)
{
    return write_svg(&(weight){m, 0, ""}, title, 1, out);
}

int rd_flame_write_mem(const rd_model *m, const char *title, int which, const char *prefix,
                       FILE *out)
{
    return write_svg(&(weight){m, which, prefix}, title, 1, out);
}
