/* rd_speedscope: speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json) from the call tree,
 * and with a timeline (the speedscope-evented backend) one evented profile
 * per coroutine before it. A node's path is read by following parent
 * links, so the output is the sum of the paths' depths, each at most
 * RD_PATH_MAX (rd_path.h); frames are numbered in order of first use in
 * the tree (then every other function, when a timeline may use it, then
 * the cut of deep paths). */
#include "rd_speedscope.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rd_util.h"
#include "rd_path.h"
#include "rd_report.h"
#include "rd_timeline.h"

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
        rd_json_str(out, "?");
    } else if (f->what == LT_WHAT_C) {
        snprintf(buf, sizeof buf, "%s [C]", name);
        rd_json_str(out, buf);
    } else {
        rd_json_str(out, name);
        fputs(",\"file\":", out);
        rd_json_str(out, rd_model_string(m, f->src_sid));
        fprintf(out, ",\"line\":%u", f->linedefined);
    }
    fputc('}', out);
}

/* Numbers the functions used by the tree (frame[fid] = index + 1), then
 * if all the others, then if some path of p has it (or cut: samples were
 * left out) the cut of deep paths (frame[nfunc]), and writes them as
 * shared.frames. */
static void write_frames(const rd_model *m, const rd_paths *p, uint32_t *frame, int all,
                         int cut, FILE *out)
{
    uint32_t next = 0;
    fputs("\"shared\":{\"frames\":[", out);
    for (uint32_t n = 1; n < m->nnode + (all ? m->nfunc : 0); n++) {
        uint32_t fid = n < m->nnode ? m->node[n].fid : n - m->nnode;
        fid = fid < m->nfunc ? fid : 0;
        if (frame[fid]) continue;
        frame[fid] = ++next;
        fputs(next > 1 ? ",\n" : "\n", out);
        write_frame(m, fid, out);
    }
    if (p->ndeep || cut) {
        frame[m->nfunc] = ++next;
        fprintf(out, "%s{\"name\":\"%s\"}", next > 1 ? ",\n" : "\n", RD_PATH_CUT_LABEL);
    }
    fputs("]},\n", out);
}

/* Per node, the weight of the path it stands for (rd_path.h); 0 for a
 * deep node that another stands for. */
static uint64_t *path_weights(const rd_model *m, const rd_paths *p, double k)
{
    uint64_t *w = calloc(m->nnode, sizeof *w);
    for (uint32_t n = 1; w && n < m->nnode; n++)
        w[p->rep[n]] += weight(m, n, k);
    return w;
}

/* Leaves out the paths past RD_FOLD_MAX bytes of samples (as the folded
 * stacks are cut; each frame counted at its widest number): their weights
 * go to 0 in w, their sum is returned, for one sample of the cut frame. */
static uint64_t cap_samples(const rd_model *m, const rd_paths *p, uint64_t *w, uint32_t *fids)
{
    uint64_t bytes = 0, left = 0, width = 2;
    for (uint64_t k = m->nfunc + 1; k >= 10; k /= 10)
        width++;
    for (uint32_t n = 1; n < m->nnode; n++) {
        if (!w[n])
            continue;
        if (bytes <= RD_FOLD_MAX)
            bytes += 4 + width * rd_paths_get(p, m, n, fids, NULL);
        if (bytes > RD_FOLD_MAX) {
            left += w[n];
            w[n] = 0;
        }
    }
    return left;
}

/* samples: every path with a nonzero weight, as its frames; then, with
 * left, the cut frame alone. */
static void write_samples(const rd_model *m, const rd_paths *p, const uint64_t *w,
                          uint64_t left, const uint32_t *frame, uint32_t *fids, FILE *out)
{
    int first = 1;
    fputs("\"samples\":[", out);
    for (uint32_t n = 1; n < m->nnode; n++) {
        if (!w[n]) continue;
        uint32_t d = rd_paths_get(p, m, n, fids, NULL);
        fputs(first ? "\n[" : ",\n[", out);
        first = 0;
        for (uint32_t i = 0; i < d; i++) {
            uint32_t fid = fids[i] == RD_PATH_CUT ? m->nfunc : fids[i] < m->nfunc ? fids[i] : 0;
            fprintf(out, "%u%s", frame[fid] - 1, i + 1 < d ? "," : "]");
        }
    }
    if (left)
        fprintf(out, "%s[%u]", first ? "\n" : ",\n", frame[m->nfunc] - 1);
    fputs("],\n", out);
}

static uint64_t write_weights(const rd_model *m, const uint64_t *w, uint64_t left, FILE *out)
{
    uint64_t total = left;
    int first = 1;
    fputs("\"weights\":[", out);
    for (uint32_t n = 1; n < m->nnode; n++) {
        if (!w[n]) continue;
        fprintf(out, "%s%llu", first ? "" : ",", (unsigned long long)w[n]);
        first = 0;
        total += w[n];
    }
    if (left)
        fprintf(out, "%s%llu", first ? "" : ",", (unsigned long long)left);
    fputs("],\n", out);
    return total;
}

/* One sampled profile: the tree's paths weighted by their self time (w,
 * with left the weight of the paths left out). */
static void write_sampled(const rd_model *m, const rd_paths *p, const uint64_t *w,
                          uint64_t left, const uint32_t *frame, uint32_t *fids, const char *name,
                          FILE *out)
{
    fputs("{\"type\":\"sampled\",\"name\":", out);
    rd_json_str(out, name);
    fputs(",\"unit\":\"nanoseconds\",\"startValue\":0,\n", out);
    write_samples(m, p, w, left, frame, fids, out);
    uint64_t total = write_weights(m, w, left, out);
    fprintf(out, "\"endValue\":%llu}", (unsigned long long)total);
}

static void write_head(const char *name, FILE *out)
{
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
          "\"exporter\":\"luatrace recorderd\",\"name\":",
          out);
    rd_json_str(out, name);
    fputs(",\"activeProfileIndex\":0,\n", out);
}

int rd_speedscope_write(const rd_model *m, const char *name, FILE *out)
{
    rd_paths p;
    uint32_t *frame = calloc(m->nfunc + 1, sizeof *frame);
    uint32_t *fids = malloc(RD_PATH_MAX * sizeof *fids);
    if (!frame || !fids || rd_paths_init(&p, m, 0)) {
        free(frame);
        free(fids);
        return -ENOMEM;
    }
    uint64_t *w = path_weights(m, &p, rd_model_ns_per_tick(m));
    int e = w ? 0 : -ENOMEM;
    if (!e) {
        uint64_t left = cap_samples(m, &p, w, fids);
        name = name ? name : "luatrace";
        write_head(name, out);
        write_frames(m, &p, frame, 0, left != 0, out);
        fputs("\"profiles\":[", out);
        write_sampled(m, &p, w, left, frame, fids, name, out);
        fputs("]}\n", out);
    }
    free(w);
    free(fids);
    free(frame);
    rd_paths_free(&p);
    return e ? e : ferror(out) ? -EIO : 0;
}

/* {====================================================================
 * the speedscope-evented backend */

typedef struct evented {
    rd_backend b;
    rd_timeline tl;
} evented;

typedef struct ev_writer {
    FILE *out;
    const rd_model *m;
    rd_timeline *tl;
    const char *name;
    uint32_t *frame;
    double k;
    int first; /* no event written yet in this profile */
} ev_writer;

static int write_event(void *ud, const rd_tl_event *ev)
{
    ev_writer *w = ud;
    uint32_t fid = ev->fid < w->m->nfunc ? ev->fid : 0;
    fprintf(w->out, "%s{\"type\":\"%c\",\"frame\":%u,\"at\":%llu}", w->first ? "\n" : ",\n",
            ev->leave ? 'C' : 'O', w->frame[fid] - 1,
            (unsigned long long)rd_timeline_ns(w->k, ev->t));
    w->first = 0;
    return ferror(w->out) ? -EIO : 0;
}

/* One evented profile per track, all from 0 to the end of the trace. */
static int write_tracks(ev_writer *w)
{
    int e = 0;
    for (uint32_t k = 0; k < w->tl->ntr && !e; k++) {
        char tname[1024];
        rd_timeline_track_name(w->tl, w->m, k, tname, sizeof tname);
        fputs("{\"type\":\"evented\",\"name\":", w->out);
        rd_json_str(w->out, tname);
        fprintf(w->out, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%llu,\n"
                "\"events\":[", (unsigned long long)rd_timeline_ns(w->k, w->tl->t_last));
        w->first = 1;
        e = rd_timeline_each(w->tl, k, write_event, w);
        fputs("]},\n", w->out);
    }
    return e;
}

static int write_evented(FILE *out, void *ud)
{
    ev_writer *w = ud;
    char sname[512];
    rd_paths p;
    if (rd_paths_init(&p, w->m, 0))
        return -ENOMEM;
    w->out = out;
    write_head(w->name, out);
    write_frames(w->m, &p, w->frame, 1, 0, out);
    fputs("\"profiles\":[\n", out);
    int e = write_tracks(w);
    snprintf(sname, sizeof sname, "%s (all coroutines, sampled)", w->name);
    uint64_t *pw = e ? NULL : path_weights(w->m, &p, rd_model_ns_per_tick(w->m));
    uint32_t *fids = pw ? malloc(RD_PATH_MAX * sizeof *fids) : NULL;
    if (!e && !fids)
        e = -ENOMEM;
    if (!e) /* whole: the tracks before it are bounded by the timeline */
        write_sampled(w->m, &p, pw, 0, w->frame, fids, sname, out);
    free(pw);
    free(fids);
    fputs("]}\n", out);
    rd_paths_free(&p);
    return e ? e : ferror(out) ? -EIO : 0;
}

static int evented_finish(rd_backend *b, const rd_model *m, const char *dir, const char *file,
                          char *err, size_t cap)
{
    evented *v = (evented *)b;
    ev_writer w = {NULL, m, &v->tl, "luatrace", NULL, rd_model_ns_per_tick(m), 1};
    int e = rd_timeline_end(&v->tl, m->ticks_total);
    if (e) {
        snprintf(err, cap, "cannot keep the timeline: %s", strerror(-e));
        return e;
    }
    if (b->info && b->info->session)
        w.name = b->info->session;
    if (!(w.frame = calloc(m->nfunc + 1, sizeof *w.frame))) {
        snprintf(err, cap, "out of memory");
        return -ENOMEM;
    }
    e = rd_timeline_write(dir, b->info ? b->info->dirfd : -1, file, RD_SPEEDSCOPE_EVENTED_FILE,
                          write_evented, &w, err, cap);
    free(w.frame);
    return e;
}

static void evented_destroy(rd_backend *b)
{
    evented *v = (evented *)b;
    rd_timeline_free(&v->tl);
    free(v);
}

rd_backend *rd_speedscope_evented_create(const char *arg, const rd_model *m, char *err,
                                         size_t cap)
{
    (void)m;
    if (arg[0]) {
        snprintf(err, cap, "takes no argument");
        return NULL;
    }
    evented *v = calloc(1, sizeof *v);
    if (!v || rd_timeline_init(&v->tl, &v->b.info)) {
        free(v);
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    v->b.name = "speedscope-evented";
    v->b.ls = rd_timeline_listener(&v->tl);
    v->b.finish = evented_finish;
    v->b.destroy = evented_destroy;
    return &v->b;
}

/* }==================================================================== */
