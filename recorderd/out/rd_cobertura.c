/* rd_cobertura: coverage as a Cobertura XML report (the coverage-04 DTD),
 * the format CI services (GitLab, Jenkins, Azure DevOps) read. A package
 * per directory, a class per source file, a method per function (its
 * lines: the executable lines from its first to its last; the main
 * chunk's: the whole file). Paths are relative to the program's working
 * directory (the first <source>), or, for files elsewhere, to a second
 * <source>, the deepest directory holding them. As in LCOV, only files
 * whose executable lines are known; no branches. */
#include "rd_cov.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rd_util.h" /* rd_xml_put */

static double rate(uint64_t hit, uint64_t n)
{
    return n ? (double)hit / (double)n : 1.0;
}

/* Length of the directory every file is under: a prefix of the first
 * path ending before a '/' (0: the root). */
static size_t common_root(const rd_cov_file *const *v, uint32_t n)
{
    const char *a = n ? v[0]->path : "/";
    size_t len = (size_t)(strrchr(a, '/') - a);
    for (uint32_t i = 1; i < n; i++) {
        const char *p = v[i]->path;
        size_t k = 0;
        while (k < len && a[k] == p[k])
            k++;
        if (k == len && p[k] == '/') continue;
        while (k > 0 && a[--k] != '/')
            ; /* the last whole directory before the difference */
        len = k;
    }
    return len;
}

static const char *relative(const rd_cov_file *f, size_t root)
{
    return f->path + root + 1;
}

static size_t dir_len(const char *rel)
{
    const char *slash = strrchr(rel, '/');
    return slash ? (size_t)(slash - rel) : 0;
}

/* By directory, then name: a directory's files are adjacent. */
static int cmp_rel(const void *a, const void *b, void *ctx)
{
    size_t root = *(const size_t *)ctx;
    const char *x = relative(*(const rd_cov_file *const *)a, root);
    const char *y = relative(*(const rd_cov_file *const *)b, root);
    size_t dx = dir_len(x), dy = dir_len(y);
    int c = strncmp(x, y, dx < dy ? dx : dy);
    return c ? c : dx != dy ? (dx < dy ? -1 : 1) : strcmp(x, y);
}

/* The lines of f (sorted, rd_cov_finish) from first to last, [*from, *to);
 * last 0: all of them (the main chunk's range). Found by bisection: a
 * file of many functions is not read once per function. */
static void range(const rd_cov_file *f, uint32_t first, uint32_t last, uint32_t *from, uint32_t *to)
{
    uint32_t lo = 0, hi = f->nln;
    if (!last) {
        *from = 0, *to = f->nln;
        return;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->ln[mid].line < first)
            lo = mid + 1;
        else
            hi = mid;
    }
    *from = *to = lo;
    while (*to < f->nln && f->ln[*to].line <= last)
        ++*to;
}

/* Hit and executable lines of f from first to last (range). */
static rd_cov_total range_total(const rd_cov_file *f, uint32_t first, uint32_t last)
{
    rd_cov_total t = {0, 0, 0, 0};
    uint32_t i, to;
    for (range(f, first, last, &i, &to); i < to; i++) {
        t.lines += f->ln[i].exec;
        t.hit += f->ln[i].exec && f->ln[i].hits;
    }
    return t;
}

/* The executable lines of f from first to last (range) as <lines>. */
static void put_lines(const rd_cov_file *f, uint32_t first, uint32_t last, FILE *out)
{
    uint32_t i, to;
    fputs("<lines>\n", out);
    for (range(f, first, last, &i, &to); i < to; i++)
        if (f->ln[i].exec)
            fprintf(out, "<line number=\"%u\" hits=\"%llu\" branch=\"false\"/>\n", f->ln[i].line,
                    (unsigned long long)f->ln[i].hits);
    fputs("</lines>\n", out);
}

static void put_class(const rd_cov_file *f, size_t root, FILE *out)
{
    const char *rel = relative(f, root), *slash = strrchr(rel, '/');
    rd_cov_total t = rd_cov_file_total(f);
    fputs("<class name=\"", out);
    rd_xml_put(out, slash ? slash + 1 : rel, SIZE_MAX);
    fputs("\" filename=\"", out);
    rd_xml_put(out, rel, SIZE_MAX);
    fprintf(out, "\" line-rate=\"%.4f\" branch-rate=\"0\" complexity=\"0\">\n<methods>\n",
            rate(t.hit, t.lines));
    for (uint32_t k = 0; k < f->nfn; k++) {
        const rd_cov_fn *fn = &f->fn[k];
        rd_cov_total mt = range_total(f, fn->line, fn->last);
        fputs("<method name=\"", out);
        rd_xml_put(out, fn->name ? fn->name : "?", SIZE_MAX);
        fprintf(out, "\" signature=\"\" line-rate=\"%.4f\" branch-rate=\"0\" complexity=\"0\">\n",
                rate(mt.hit, mt.lines));
        put_lines(f, fn->line, fn->last, out);
        fputs("</method>\n", out);
    }
    fputs("</methods>\n", out);
    put_lines(f, 0, 0, out);
    fputs("</class>\n", out);
}

/* Files v[from, to) share a directory: one package. */
static void put_package(const rd_cov_file *const *v, uint32_t from, uint32_t to, size_t root,
                        FILE *out)
{
    const char *rel = relative(v[from], root);
    size_t d = dir_len(rel);
    uint64_t lines = 0, hit = 0;
    for (uint32_t i = from; i < to; i++) {
        rd_cov_total t = rd_cov_file_total(v[i]);
        lines += t.lines;
        hit += t.hit;
    }
    fputs("<package name=\"", out);
    if (!d) fputc('.', out);
    for (size_t k = 0; k < d; k++) { /* a/b -> a.b, as Java packages read */
        char c[2] = {rel[k] == '/' ? '.' : rel[k], 0};
        rd_xml_put(out, c, 1);
    }
    fprintf(out, "\" line-rate=\"%.4f\" branch-rate=\"0\" complexity=\"0\">\n<classes>\n",
            rate(hit, lines));
    for (uint32_t i = from; i < to; i++)
        put_class(v[i], root, out);
    fputs("</classes>\n</package>\n", out);
}

/* The files of v[0, n) as packages, paths relative to v's root. */
static void put_packages(const rd_cov_file **v, uint32_t n, size_t root, FILE *out)
{
    qsort_r(v, n, sizeof *v, cmp_rel, &root);
    for (uint32_t i = 0, j; i < n; i = j) {
        size_t d = dir_len(relative(v[i], root));
        for (j = i + 1; j < n && dir_len(relative(v[j], root)) == d &&
                        !strncmp(relative(v[j], root), relative(v[i], root), d);
             j++)
            ;
        put_package(v, i, j, root, out);
    }
}

static void put_source(const char *path, size_t len, FILE *out)
{
    char *dir = len ? strndup(path, len) : NULL;
    fputs("<source>", out);
    rd_xml_put(out, dir ? dir : "/", SIZE_MAX);
    fputs("</source>\n", out);
    free(dir);
}

/* Moves the files under base (its length without a trailing '/') to the
 * front of v; returns how many. Under "/", every file. */
static uint32_t under_first(const rd_cov_file **v, uint32_t n, const char *base, size_t len)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!strncmp(v[i]->path, base, len) && v[i]->path[len] == '/') {
            const rd_cov_file *t = v[k];
            v[k++] = v[i];
            v[i] = t;
        }
    return k;
}

static void put_head(const rd_cov *c, const char *version, int64_t timestamp_ms, FILE *out)
{
    rd_cov_total t = rd_cov_total_of(c);
    char note[256];
    fprintf(out,
            "<?xml version=\"1.0\" ?>\n"
            "<!DOCTYPE coverage SYSTEM \"http://cobertura.sourceforge.net/xml/coverage-04.dtd\">\n");
    if (rd_cov_truncated_note(c, note, sizeof note)[0]) /* a comment: the DTD has no place */
        fprintf(out, "<!-- luatrace: %s -->\n", note);
    fprintf(out,
            "<coverage line-rate=\"%.4f\" branch-rate=\"0\" lines-covered=\"%llu\" "
            "lines-valid=\"%llu\" branches-covered=\"0\" branches-valid=\"0\" complexity=\"0\" "
            "version=\"",
            rate(t.hit, t.lines), (unsigned long long)t.hit, (unsigned long long)t.lines);
    rd_xml_put(out, version, SIZE_MAX);
    fprintf(out, "\" timestamp=\"%lld\">\n", (long long)timestamp_ms);
}

/* CI services (GitLab) match a class to the project by <source> and
 * filename: the working directory comes first, so the project's files
 * keep paths relative to it even when an installed module lies
 * elsewhere (a single common root would be "/"). */
int rd_cov_write_cobertura(const rd_cov *c, const char *version, int64_t timestamp_ms, FILE *out)
{
    const rd_cov_file **v = malloc((c->nf + 1) * sizeof *v);
    char cwd[PATH_MAX];
    const char *base = c->basedir ? c->basedir : getcwd(cwd, sizeof cwd) ? cwd : "/";
    size_t blen = strlen(base);
    uint32_t n = 0;
    if (!v) return -ENOMEM;
    for (uint32_t i = 0; i < c->nf; i++)
        if (c->f[i].exact && c->f[i].path && c->f[i].path[0] == '/') v[n++] = &c->f[i];
    while (blen && base[blen - 1] == '/')
        blen--;
    uint32_t k = under_first(v, n, base, blen);
    size_t other = common_root(v + k, n - k);
    put_head(c, version, timestamp_ms, out);
    fputs("<sources>\n", out);
    put_source(base, blen, out);
    if (k < n) put_source(v[k]->path, other, out);
    fputs("</sources>\n<packages>\n", out);
    put_packages(v, k, blen, out);
    put_packages(v + k, n - k, other, out);
    fputs("</packages>\n</coverage>\n", out);
    free(v);
    return ferror(out) ? -EIO : 0;
}
