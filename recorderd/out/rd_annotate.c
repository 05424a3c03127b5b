/* rd_annotate: annotate/ and `report --format annotate`.
 *
 * Design. The lines of the model are grouped by coverage file
 * (rd_cov_files_of maps each source slot to the file rd_cov counted it
 * in), so the annotation of a file holds every name it was reached by,
 * exactly the counts of coverage.lcov; its time per line comes from the
 * same line records. */
#include "rd_annotate.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_lines.h"
#include "rd_outdir.h"
#include "rd_report.h"

/* What every writer needs: the coverage files (given, or made here) and
 * the model's lines grouped by them. */
typedef struct annot {
    const rd_model *m;
    const rd_cov *cov;
    const char *basedir; /* never NULL: ours when the caller gave none */
    char cwd[PATH_MAX];
    rd_cov own;
    rd_flines fl;
} annot;

static int annot_init(annot *a, const rd_model *m, const rd_cov *cov, const char *basedir)
{
    *a = (annot){.m = m, .cov = cov, .basedir = basedir};
    if (!basedir)
        a->basedir = getcwd(a->cwd, sizeof a->cwd) ? a->cwd : "/";
    basedir = a->basedir;
    int e = 0;
    if (!cov) {
        e = rd_cov_init(&a->own, NULL);
        if (!e && !(e = rd_cov_add_model(&a->own, m, basedir)))
            rd_cov_finish(&a->own);
        a->cov = &a->own;
    }
    uint32_t *files = e ? NULL : rd_cov_files_of(a->cov, m, basedir);
    if (!e && !files)
        e = -ENOMEM;
    if (!e)
        e = rd_report_flines_init(&a->fl, m, files, a->cov->nf);
    free(files);
    if (e && !cov)
        rd_cov_free(&a->own);
    return e;
}

static void annot_close(annot *a)
{
    rd_report_flines_close(&a->fl);
    if (a->cov == &a->own)
        rd_cov_free(&a->own);
}

/* A file that has an annotation: read from a file (found or not), not a
 * chunk from a string or named with '='. */
static int annotated(const annot *a, uint32_t i)
{
    return !a->cov->f[i].chunk;
}

static void annotate_row(FILE *out, const rd_fline *l, double k, unsigned line, const char *text)
{
    if (l)
        fprintf(out, "%10llu %12.3f %6u  %s\n", (unsigned long long)l->hits,
                (double)l->ticks * k, line, text);
    else
        fprintf(out, "%10s %12s %6u  %s\n", "", "", line, text);
}

/* The listing of coverage file i: every source line, then lines with
 * data past its end (all of them when the source cannot be read). */
static void annotate_one(const annot *a, uint32_t i, FILE *out)
{
    const rd_cov_file *f = &a->cov->f[i];
    const char *shown = f->path ? f->path : f->name;
    uint32_t n = 0, j = 0;
    const rd_fline *v = rd_report_flines_of(&a->fl, i, &n);
    double k = rd_model_ns_per_tick(a->m) / 1e6;
    char *text = NULL, err[PATH_MAX + 64];
    size_t len = 0, at = 0, ln;
    int read = f->path && !rd_lines_read(f->path, &text, &len, err, sizeof err);
    fprintf(out, "== %s   (hits: %s; ms: time on the line itself)\n", shown,
            rd_model_lines_counted(a->m) ? "line events" : "samples that saw the line");
    if (!read)
        fprintf(out, "   (source not readable: %s; lines with data only)\n",
                f->path ? err : f->note ? f->note : shown);
    fprintf(out, "%10s %12s %6s  %s\n", "hits", "ms", "line", "source");
    rd_lines_unnul(text, len);
    unsigned line = 0;
    for (char *s; (s = (char *)rd_lines_next(text, len, &at, &ln));) {
        s[ln] = 0;
        line++;
        while (j < n && v[j].line < line)
            j++;
        annotate_row(out, j < n && v[j].line == line ? &v[j] : NULL, k, line, s);
    }
    while (j < n && v[j].line <= line)
        j++;
    for (; j < n; j++) /* no source, or lines past its end */
        annotate_row(out, &v[j], k, v[j].line, "");
    free(text);
}

int rd_report_annotate_stream(const rd_model *m, const rd_cov *cov, const char *basedir,
                              FILE *out)
{
    annot a;
    uint32_t chunks = 0;
    if (annot_init(&a, m, cov, basedir))
        return -ENOMEM;
    for (uint32_t i = 0; i < a.cov->nf; i++)
        if (annotated(&a, i))
            annotate_one(&a, i, out);
        else
            chunks += a.cov->f[i].chunk;
    if (chunks)
        fprintf(out, "(%u chunk%s loaded from strings or named with '=' left out: no source;"
                     " coverage.txt lists their hit lines)\n", chunks, chunks == 1 ? "" : "s");
    annot_close(&a);
    return 0;
}

/* f's path relative to basedir when it is under it, else without its
 * leading '/'; a file not found: its name as traced. */
static const char *name_base(const rd_cov_file *f, const char *basedir)
{
    size_t n = strlen(basedir);
    while (n > 1 && basedir[n - 1] == '/')
        n--;
    if (!f->path)
        return f->name;
    if (n > 1 && !strncmp(f->path, basedir, n) && f->path[n] == '/')
        return f->path + n + 1;
    return f->path + (f->path[0] == '/');
}

/* The name of a file's annotation: its path relative to basedir when it
 * is under it, else its absolute path without the leading '/' (a file
 * not found: its name as traced), with '/', "..", spaces and control
 * bytes as '_' and a leading '.' as '_', then ".txt"; a long path keeps
 * its end after a hash of the whole. Into out (cap >= 256). */
static void rd_annotate_name(const rd_cov_file *f, const char *basedir, char *out, size_t cap)
{
    const char *src = name_base(f, basedir);
    size_t n = strlen(src);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)src[i]) * 1099511628211ull;
    const char *tail = n > 160 ? src + n - 160 : src;
    if (n > 160)
        snprintf(out, cap, "%08x_%s.txt", (unsigned)h, tail);
    else
        snprintf(out, cap, "%s.txt", n ? tail : "_");
    for (char *c = out; *c; c++)
        if (*c == '/' || *c == '\\' || *c == ' ' || (c[0] == '.' && c[1] == '.') || *c < 32)
            *c = '_';
    if (out[0] == '.') /* hidden by ls; "._NAME" is a resource fork on macOS */
        out[0] = '_';
}

/* The annotation file names given so far, hashed (open addressing): a
 * name is checked against all earlier ones in O(1), not one by one. */
typedef struct nameent {
    char *s;       /* NULL: empty slot */
    unsigned next; /* the next #K to try when s comes again: those below are taken */
} nameent;

typedef struct nameset {
    nameent *e;
    uint32_t n, cap; /* cap a power of two, over twice n */
} nameset;

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static nameent *name_slot(const nameset *u, const char *s)
{
    uint32_t mask = u->cap - 1, i = hash_name(s) & mask;
    while (u->e[i].s && strcmp(u->e[i].s, s))
        i = (i + 1) & mask;
    return &u->e[i];
}

static int name_grow(nameset *u)
{
    uint32_t cap = u->cap ? u->cap * 2 : 64;
    nameset g = {calloc(cap, sizeof *g.e), u->n, cap};
    if (!g.e)
        return -ENOMEM;
    for (uint32_t i = 0; i < u->cap; i++)
        if (u->e[i].s)
            *name_slot(&g, u->e[i].s) = u->e[i];
    free(u->e);
    *u = g;
    return 0;
}

static int name_add(nameset *u, const char *s)
{
    if ((u->n + 1) * 2 >= u->cap && name_grow(u))
        return -ENOMEM;
    nameent *e = name_slot(u, s);
    if (!(e->s = strdup(s)))
        return -ENOMEM;
    e->next = 2;
    u->n++;
    return 0;
}

static void name_free(nameset *u)
{
    for (uint32_t i = 0; i < u->cap; i++)
        free(u->e[i].s);
    free(u->e);
}

/* Makes flat ("NAME.txt") differ from the names in used ("a/b.lua" and
 * "a_b.lua" both flatten to a_b.lua.txt): the second becomes NAME#2.txt,
 * the third NAME#3.txt, in the order of the sources. Adds it to used.
 * The search for a free #K resumes where the last one for NAME stopped:
 * used only grows, so the #K it passed are still taken, and n sources of
 * one name cost O(n), not O(n^2). */
static int unique_name(nameset *used, char *flat, size_t cap)
{
    nameent *first = used->cap ? name_slot(used, flat) : NULL;
    if (first && first->s) {
        char base[256];
        snprintf(base, sizeof base, "%.*s", (int)(strlen(flat) - 4), flat); /* no ".txt" */
        unsigned k = first->next;
        do
            snprintf(flat, cap, "%.200s#%u.txt", base, k++);
        while (name_slot(used, flat)->s);
        first->next = k; /* before name_add: it may move the entries */
    }
    return name_add(used, flat);
}

typedef struct one {
    const annot *a;
    uint32_t i;
} one;

static int write_file(FILE *out, void *ud)
{
    const one *o = ud;
    annotate_one(o->a, o->i, out);
    return 0; /* rd_out_write asks the stream how it went */
}

static int write_one(const annot *a, uint32_t i, int dirfd, const char *dir, nameset *used,
                     char *err, size_t cap)
{
    char flat[256];
    one o = {a, i};
    rd_annotate_name(&a->cov->f[i], a->basedir, flat, sizeof flat);
    int e = unique_name(used, flat, sizeof flat);
    if (e)
        return e;
    e = rd_out_write(dirfd, flat, write_file, &o);
    if (e)
        snprintf(err, cap, "cannot write %s/%s: %s", dir, flat, strerror(-e));
    return e;
}

int rd_report_annotate(const rd_model *m, const rd_cov *cov, const char *basedir, int dirfd,
                       const char *dir, char *err, size_t cap)
{
    annot a;
    if (annot_init(&a, m, cov, basedir)) {
        snprintf(err, cap, "out of memory");
        return -ENOMEM;
    }
    nameset used = {NULL, 0, 0};
    int e = 0;
    for (uint32_t i = 0; !e && i < a.cov->nf; i++)
        if (annotated(&a, i)) /* a program may load thousands of chunks: none */
            e = write_one(&a, i, dirfd, dir, &used, err, cap);
    if (e == -ENOMEM)
        snprintf(err, cap, "out of memory");
    name_free(&used);
    annot_close(&a);
    return e;
}
