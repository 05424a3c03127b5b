/* rd_formats: the registry of reports, and the adapters from one render
 * context to each writer's own arguments. */
#include "rd_formats.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rd_annotate.h"
#include "rd_callgrind.h"
#include "rd_flame.h"
#include "rd_html.h"
#include "rd_outdir.h"
#include "rd_pprof.h"
#include "rd_speedscope.h"
#include "rd_util.h"

static int write_profile(FILE *f, const rd_render *r)
{
    return rd_report_profile(r->m, r->header ? r->title : NULL, r->header ? r->cmd : NULL,
                             RD_PROFILE_ROWS, r->truncated, f);
}

static int write_folded(FILE *f, const rd_render *r)
{
    static const char *const what[] = {"time",          "line events",       "calls",
                                       "bytes allocated", "objects allocated", "live bytes"};
    double cut = 0;
    int e = rd_report_folded(r->m, r->weight, f, &cut);
    if (!e && cut > 0 && r->cut)
        snprintf(r->cut, r->cut_cap,
                 "stacks.folded stopped at its %llu MiB bound: %.1f%% of its %s is on its last "
                 "line '[...]', the stacks it had no room for; profile.pb.gz (--format pprof) "
                 "and callgrind.out hold every stack",
                 (unsigned long long)(rd_report_fold_max(r->m) >> 20), 100.0 * cut,
                 what[r->weight]);
    return e;
}

static int write_flame(FILE *f, const rd_render *r)
{
    return rd_flame_write_svg(r->m, r->title, f);
}

static int write_speedscope(FILE *f, const rd_render *r)
{
    return rd_speedscope_write(r->m, r->title, f);
}

static int write_callgrind(FILE *f, const rd_render *r)
{
    return rd_callgrind_write(r->m, r->cmd, r->srcdir, f);
}

static int write_pprof(FILE *f, const rd_render *r)
{
    rd_pprof_info info = {r->cmd, r->srcdir, r->start_ns};
    return rd_pprof_write(r->m, &info, f);
}

static int write_heap(FILE *f, const rd_render *r)
{
    rd_pprof_info info = {r->cmd, r->srcdir, r->start_ns};
    return rd_pprof_write_heap(r->m, &info, f);
}

static int write_annotate(FILE *f, const rd_render *r)
{
    return rd_report_annotate_stream(r->m, r->cov, r->srcdir, f);
}

static int annotate_dir(const rd_render *r, int dirfd, const char *dir, char *err, size_t cap)
{
    return rd_report_annotate(r->m, r->cov, r->srcdir, dirfd, dir, err, cap);
}

static int write_lcov(FILE *f, const rd_render *r)
{
    return rd_cov_write_lcov(r->cov, f);
}

static int write_luacov(FILE *f, const rd_render *r)
{
    return rd_cov_write_luacov(r->cov, f);
}

static int write_covtext(FILE *f, const rd_render *r)
{
    return rd_cov_write_text(r->cov, r->title, f);
}

static int write_cobertura(FILE *f, const rd_render *r)
{
    return rd_cov_write_cobertura(r->cov, "luatrace " RD_VERSION, rd_wall_ms(), f);
}

static int write_html(FILE *f, const rd_render *r)
{
    rd_html_info info = {r->title, r->cmd, r->srcdir, r->wall_ns, r->cov, r->truncated};
    return rd_html_write(r->m, &info, f);
}

static int write_none(FILE *f, const rd_render *r)
{
    return fprintf(f, "%llu events\n", (unsigned long long)r->m->events) < 0 ? -EIO : 0;
}

#define COV RD_FMT_COV
#define MERGE (RD_FMT_COV | RD_FMT_MERGE)
#define DEF RD_FMT_DEFAULT /* what a person opens; the others on demand */
#define TIME RD_FMT_TIME

const rd_format rd_formats[] = {
    {"profile", "profile.txt", DEF, "functions by self and total time (text)", write_profile, NULL},
    {"folded", "stacks.folded", RD_FMT_BYTIME, "folded stacks, for flamegraph.pl", write_folded,
     NULL},
    {"flamegraph", "flamegraph.svg", DEF | TIME, "interactive flame graph (SVG)", write_flame,
     NULL},
    {"speedscope", "profile.speedscope.json", TIME, "sampled profile for speedscope (JSON)",
     write_speedscope, NULL},
    {"callgrind", "callgrind.out", 0, "call graph for callgrind_annotate, KCachegrind",
     write_callgrind, NULL},
    {"pprof", "profile.pb.gz", RD_FMT_BINARY, "gzipped profile.proto for go tool pprof", write_pprof, NULL},
    {"heap", "heap.pb.gz", RD_FMT_BINARY | DEF | RD_FMT_MEM,
     "memory per stack as a Go heap profile (a trace with memory)", write_heap, NULL},
    {"annotate", "annotate/", 0, "every source line with its events and time", write_annotate,
     annotate_dir},
    {"lcov", "coverage.lcov", MERGE | DEF, "coverage as an LCOV tracefile (of a run counting every line)", write_lcov, NULL},
    {"luacov", "luacov.stats.out", MERGE, "coverage in luacov's stats format", write_luacov, NULL},
    {"coverage", "coverage.txt", MERGE, "coverage summary and listings (text)", write_covtext,
     NULL},
    {"cobertura", "coverage.xml", MERGE, "coverage as Cobertura XML, for CI", write_cobertura,
     NULL},
    /* report.html shows the session's coverage: from the same model */
    {"html", "report.html", COV | DEF, "one self-contained page: summary, flame graph, sources",
     write_html, NULL},
    {"none", NULL, RD_FMT_NOFILE, "the event count only", write_none, NULL},
};

const unsigned rd_nformats = sizeof rd_formats / sizeof rd_formats[0];
_Static_assert(sizeof rd_formats / sizeof rd_formats[0] <= RD_FORMATS_MAX, "RD_FORMATS_MAX");

uint32_t rd_format_rows(unsigned flags)
{
    uint32_t rows = 0;
    for (unsigned i = 0; i < rd_nformats; i++)
        if ((rd_formats[i].flags & flags) == flags)
            rows |= 1u << i;
    return rows;
}

const rd_format *rd_format_find(const char *name)
{
    for (unsigned i = 0; i < rd_nformats; i++)
        if (!strcmp(rd_formats[i].name, name)) return &rd_formats[i];
    return NULL;
}

char *rd_format_names(char *buf, size_t cap, const char *sep, unsigned mask, unsigned want)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < rd_nformats && n < cap; i++) {
        const rd_format *f = &rd_formats[i];
        if ((f->flags & mask) != want) continue;
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? sep : "", f->name);
    }
    return buf;
}

typedef struct format_job {
    const rd_format *f;
    const rd_render *r;
} format_job;

static int write_job(FILE *out, void *ud)
{
    const format_job *j = ud;
    return j->f->write(out, j->r);
}

int rd_format_write_at(const rd_format *f, const rd_render *r, int dfd, const char *dir, char *err,
                       size_t cap)
{
    format_job j = {f, r};
    if (!f->write_dir)
        return rd_out_write(dfd, f->file, write_job, &j);
    char sub[64], path[4200];
    snprintf(sub, sizeof sub, "%.*s", (int)strlen(f->file) - 1, f->file); /* "annotate/" */
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    int fd = rd_out_subdir(dfd, sub, 0);
    if (fd < 0)
        return snprintf(err, cap, "%s: %s", path, strerror(-fd)), fd;
    int e = f->write_dir(r, fd, path, err, cap);
    close(fd);
    return e;
}

const char *rd_format_left_out(const rd_format *f, const rd_model *m)
{
    if ((f->flags & RD_FMT_COV) && m->sampled_hz && strcmp(f->name, "html"))
        return "a sampled session has no coverage"; /* samples see some lines run */
    if ((f->flags & RD_FMT_COV) && m->lines_sampled && strcmp(f->name, "html"))
        return "lines by sample: no coverage (run --lines exact counts every line)";
    if ((f->flags & RD_FMT_MEM) && !m->has_mem)
        return "the trace has no memory (run --memory)";
    if ((f->flags & RD_FMT_TIME) && m->untimed)
        return "the trace has no time (a --coverage run)";
    if ((f->flags & RD_FMT_BYTIME) && m->untimed) /* its calls still fold */
        return "the trace has no time (a --coverage run): recorderd report SESSION -f folded "
               "--weight calls folds its calls";
    return NULL;
}
