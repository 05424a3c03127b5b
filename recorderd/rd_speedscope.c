/* rd_speedscope: speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json) from the call tree.
 * A node's path is read by following parent links, so the output is the
 * sum of the paths' depths; frames are numbered in order of first use. */
#include "rd_speedscope.h"

#include <errno.h>
#include <stdlib.h>

#include "rd_flame.h" /* rd_utf8_seq */

/* A JSON string literal; bytes that are not valid UTF-8 become U+FFFD. */
static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (int l; *s; s += l ? l : 1) {
        unsigned char c = (unsigned char)*s;
        l = rd_utf8_seq(s);
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else if (!l)
            fputs("\\ufffd", out);
        else
            fwrite(s, 1, (size_t)l, out);
    }
    fputc('"', out);
}

/* Self time of node n in integer ns, rounded as rd_report_folded does. */
static uint64_t weight(const rd_model *m, uint32_t n, double k)
{
    double ns = (double)m->node[n].self * k + 0.5;
    return ns < 0x1p64 ? (uint64_t)ns : UINT64_MAX;
}

static void write_frame(const rd_model *m, uint32_t fid, FILE *out)
{
    const rd_func *f = rd_model_func(m, fid);
    char name[LT_STR_MAX + 16], buf[LT_STR_MAX + 32];
    rd_model_name(m, fid, name, sizeof name);
    fputs("{\"name\":", out);
    if (!f->known) {
        json_str(out, "?");
    } else if (f->what == LT_WHAT_C) {
        snprintf(buf, sizeof buf, "%s [C]", name);
        json_str(out, buf);
    } else {
        json_str(out, name);
        fputs(",\"file\":", out);
        json_str(out, rd_model_string(m, f->src_sid));
        fprintf(out, ",\"line\":%u", f->linedefined);
    }
    fputc('}', out);
}

/* Numbers the functions used by the tree (frame[fid] = index + 1) and
 * writes them as shared.frames. */
static void write_frames(const rd_model *m, uint32_t *frame, FILE *out)
{
    uint32_t next = 0;
    fputs("\"shared\":{\"frames\":[", out);
    for (uint32_t n = 1; n < m->nnode; n++) {
        uint32_t fid = m->node[n].fid < m->nfunc ? m->node[n].fid : 0;
        if (frame[fid]) continue;
        frame[fid] = ++next;
        fputs(next > 1 ? ",\n" : "\n", out);
        write_frame(m, fid, out);
    }
    fputs("]},\n", out);
}

/* samples: every node with a nonzero weight, as its path of frames. */
static void write_samples(const rd_model *m, const uint32_t *frame, uint32_t *path, double k,
                          FILE *out)
{
    int first = 1;
    fputs("\"samples\":[", out);
    for (uint32_t n = 1; n < m->nnode; n++) {
        if (!weight(m, n, k)) continue;
        uint32_t d = 0;
        for (uint32_t p = n; p; p = m->node[p].parent)
            path[d++] = frame[m->node[p].fid < m->nfunc ? m->node[p].fid : 0] - 1;
        fputs(first ? "\n[" : ",\n[", out);
        first = 0;
        while (d--)
            fprintf(out, "%u%s", path[d], d ? "," : "]");
    }
    fputs("],\n", out);
}

static uint64_t write_weights(const rd_model *m, double k, FILE *out)
{
    uint64_t total = 0;
    int first = 1;
    fputs("\"weights\":[", out);
    for (uint32_t n = 1; n < m->nnode; n++) {
        uint64_t w = weight(m, n, k);
        if (!w) continue;
        fprintf(out, "%s%llu", first ? "" : ",", (unsigned long long)w);
        first = 0;
        total += w;
    }
    fputs("],\n", out);
    return total;
}

int rd_speedscope_write(const rd_model *m, const char *name, FILE *out)
{
    uint32_t *frame = calloc(m->nfunc + 1, sizeof *frame);
    uint32_t *path = calloc(m->nnode + 1, sizeof *path); /* the deepest path */
    double k = rd_model_ns_per_tick(m);
    if (!frame || !path) {
        free(frame);
        free(path);
        return -ENOMEM;
    }
    name = name ? name : "luatrace";
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
          "\"exporter\":\"luatrace recorderd\",\"name\":",
          out);
    json_str(out, name);
    fputs(",\"activeProfileIndex\":0,\n", out);
    write_frames(m, frame, out);
    fputs("\"profiles\":[{\"type\":\"sampled\",\"name\":", out);
    json_str(out, name);
    fputs(",\"unit\":\"nanoseconds\",\"startValue\":0,\n", out);
    write_samples(m, frame, path, k, out);
    uint64_t total = write_weights(m, k, out);
    fprintf(out, "\"endValue\":%llu}]}\n", (unsigned long long)total);
    free(frame);
    free(path);
    return ferror(out) ? -EIO : 0;
}
