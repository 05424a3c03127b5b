/* rd_chrome: Chrome trace-event JSON from a timeline.
 *
 * The file is {"displayTimeUnit", "otherData", "traceEvents"}: metadata
 * first (process_name; per track thread_name and thread_sort_index), then
 * each track's B/E slices in time order. One pid (the traced process), one
 * tid per coroutine (rd_timeline's tracks, tid = track + 1). B/E rather
 * than X so that the file is written in order as it is read back: a parent
 * begins before its children even at equal times, which consumers that
 * sort by time alone keep (stable sorts). Every E repeats its B's name
 * and cat (speedscope's importer and DevTools' need them) and no event has args (they would split
 * speedscope's frames). A suspended coroutine's frames stay open: its track
 * shows coroutine.yield until it is resumed. ts is in microseconds with
 * three decimals: exact nanoseconds. */
#include "rd_chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rd_util.h" /* rd_json_str */
#include "rd_timeline.h"

typedef struct chrome {
    rd_backend b;
    rd_timeline tl;
} chrome;

/* What the writer needs while it reads the tracks back. */
typedef struct writer {
    FILE *out;
    const rd_model *m;
    rd_timeline *tl;
    const rd_backend_info *info;
    double k;    /* ns per tick */
    char **name; /* fid -> its label as a JSON string, made on first use */
    long pid;
    uint32_t tid;
    const char **cat; /* the cat of each open B of the track, to repeat on its E */
    uint32_t ncat, capcat;
} writer;

static const char *name_of(writer *w, uint32_t fid)
{
    if (fid >= w->m->nfunc)
        fid = 0;
    if (!w->name[fid]) {
        char label[RD_LABEL_MAX], *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        rd_model_label(w->m, fid, label, sizeof label);
        if (f) {
            rd_json_str(f, label);
            fclose(f);
        }
        w->name[fid] = buf ? buf : strdup("\"?\"");
    }
    return w->name[fid] ? w->name[fid] : "\"?\"";
}

static void put_ts(FILE *out, uint64_t ns)
{
    fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static const char *cat_of(const rd_func *fn, enum rd_how how)
{
    int c = fn->what == LT_WHAT_C;
    if (how == RD_TAIL)
        return c ? "c,tail" : "lua,tail";
    if (how == RD_SNAP)
        return c ? "c,snapshot" : "lua,snapshot";
    return c ? "c" : "lua";
}

/* DevTools' trace engine pairs an E with its B by name and cat. */
static const char *push_pop_cat(writer *w, const rd_tl_event *ev)
{
    if (ev->leave)
        return w->ncat ? w->cat[--w->ncat] : "lua";
    const char *cat = cat_of(rd_model_func(w->m, ev->fid), ev->how);
    if (!rd_grow((void **)&w->cat, &w->capcat, w->ncat, sizeof *w->cat))
        w->cat[w->ncat++] = cat;
    return cat;
}

static int write_event(void *ud, const rd_tl_event *ev)
{
    writer *w = ud;
    fprintf(w->out, ",\n{\"ph\":\"%c\",\"name\":%s,\"cat\":\"%s\"", ev->leave ? 'E' : 'B',
            name_of(w, ev->fid), push_pop_cat(w, ev));
    fprintf(w->out, ",\"pid\":%ld,\"tid\":%u,\"ts\":", w->pid, w->tid);
    put_ts(w->out, rd_timeline_ns(w->k, ev->t));
    fputc('}', w->out);
    return ferror(w->out) ? -EIO : 0;
}

static void write_meta(writer *w, const char *what, uint32_t tid, const char *key,
                       const char *val, unsigned num)
{
    fprintf(w->out, "%s{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%ld,\"tid\":%u,\"args\":{\"%s\":",
            tid ? ",\n" : "", what, w->pid, tid, key);
    if (val)
        rd_json_str(w->out, val);
    else
        fprintf(w->out, "%u", num);
    fputs("}}", w->out);
}

static void write_head(writer *w)
{
    const char *session = w->info && w->info->session ? w->info->session : "luatrace";
    const char *cmd = w->info ? w->info->command : NULL;
    char pname[1024];
    snprintf(pname, sizeof pname, "%s%s%s", session, cmd ? ": " : "", cmd ? cmd : "");
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"luatrace recorderd\","
          "\"session\":",
          w->out);
    rd_json_str(w->out, session);
    fputs(",\"command\":", w->out);
    rd_json_str(w->out, cmd ? cmd : "");
    fprintf(w->out, ",\"clock\":\"%s\",\"coroutines\":%u},\n\"traceEvents\":[\n",
            w->m->clk_tsc ? "tsc" : "monotonic", w->tl->ntr ? w->tl->ntr - 1 : 0);
    write_meta(w, "process_name", 0, "name", pname, 0);
    for (uint32_t k = 0; k < w->tl->ntr; k++) {
        char tname[1024];
        rd_timeline_track_name(w->tl, w->m, k, tname, sizeof tname);
        write_meta(w, "thread_name", k + 1, "name", tname, 0);
        write_meta(w, "thread_sort_index", k + 1, "sort_index", NULL, k + 1);
    }
}

static int write_json(FILE *out, void *ud)
{
    writer *w = ud;
    w->out = out;
    write_head(w);
    int e = 0;
    for (uint32_t k = 0; k < w->tl->ntr && !e; k++) {
        w->tid = k + 1;
        w->ncat = 0;
        e = rd_timeline_each(w->tl, k, write_event, w);
    }
    fputs("\n]}\n", out);
    return e ? e : ferror(out) ? -EIO : 0;
}

static int chrome_finish(rd_backend *b, const rd_model *m, const char *dir, const char *file,
                         char *err, size_t cap)
{
    chrome *c = (chrome *)b;
    writer w = {NULL, m, &c->tl, b->info, rd_model_ns_per_tick(m), NULL, 1, 0, NULL, 0, 0};
    int e = rd_timeline_end(&c->tl, m->ticks_total);
    if (e) {
        snprintf(err, cap, "cannot keep the timeline: %s", strerror(-e));
        return e;
    }
    w.pid = b->info && b->info->pid > 0 ? b->info->pid : 1;
    if (!(w.name = calloc(m->nfunc + 1, sizeof *w.name))) {
        snprintf(err, cap, "out of memory");
        return -ENOMEM;
    }
    e = rd_timeline_write(dir, b->info ? b->info->dirfd : -1, file, RD_CHROME_FILE, write_json, &w,
                          err, cap);
    for (uint32_t i = 0; i <= m->nfunc; i++)
        free(w.name[i]);
    free(w.name);
    free(w.cat);
    return e;
}

static void chrome_destroy(rd_backend *b)
{
    chrome *c = (chrome *)b;
    rd_timeline_free(&c->tl);
    free(c);
}

rd_backend *rd_chrome_create(const char *arg, const rd_model *m, char *err, size_t cap)
{
    (void)m;
    if (arg[0]) {
        snprintf(err, cap, "takes no argument");
        return NULL;
    }
    chrome *c = calloc(1, sizeof *c);
    if (!c || rd_timeline_init(&c->tl, &c->b.info)) {
        free(c);
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    c->b.name = "chrome";
    c->b.ls = rd_timeline_listener(&c->tl);
    c->b.finish = chrome_finish;
    c->b.destroy = chrome_destroy;
    return &c->b;
}
