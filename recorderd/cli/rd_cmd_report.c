/* rd_cmd_report: `recorderd report`. */
#include "rd_cmd_report.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_backend.h"
#include "rd_cli.h"
#include "rd_cov.h"
#include "rd_formats.h"
#include "rd_help.h"
#include "rd_label.h"
#include "rd_outdir.h"
#include "rd_replay.h"
#include "rd_sessfile.h"
#include "rd_srcperm.h"
#include "rd_util.h"
#include "lt_file.h"

typedef struct report_opts {
    const char *path, *format, *weight, *out;
    /* coverage: inputs (several with --merge) and file selection; each
     * array has room for every argument */
    const char **inputs, **include, **exclude, **untested;
    unsigned ninputs, ninclude, nexclude, nuntested;
    int merge, help;
    int list;      /* --format LIST: its reports in rows (bit i for rd_formats[i]), */
    uint32_t rows; /* its backends with --backend's */
} report_opts;

/* --include, --exclude, --include-untested: repeatable. Returns 1 if a is
 * one of them, -1 if its value is missing. */
static int cov_option(int argc, char **argv, int *i, report_opts *o)
{
    const char *a = argv[*i], *v;
    const char **list = !strcmp(a, "--include")            ? o->include
                        : !strcmp(a, "--exclude")          ? o->exclude
                        : !strcmp(a, "--include-untested") ? o->untested
                                                           : NULL;
    if (!list)
        return 0;
    if (!(v = rd_cli_optval(argc, argv, i)))
        return -1;
    unsigned *n = list == o->include ? &o->ninclude
                  : list == o->exclude ? &o->nexclude
                                       : &o->nuntested;
    list[(*n)++] = v;
    return 1;
}

/* One argument of report (its value taken too). Returns 0 or -1. */
static int report_arg(int argc, char **argv, int *i, report_opts *o)
{
    const char *a = argv[*i];
    const char **val = !strcmp(a, "--format") || !strcmp(a, "-f")   ? &o->format
                       : !strcmp(a, "--weight") || !strcmp(a, "-w") ? &o->weight
                       : rd_cli_is_out(a)                           ? &o->out
                                                                    : NULL;
    int k = cov_option(argc, argv, i, o);
    if (k)
        return k < 0 ? -1 : 0;
    if ((k = rd_cli_backend(argc, argv, i)))
        return k < 0 ? -1 : 0;
    if (val)
        return (*val = rd_cli_optval(argc, argv, i)) ? 0 : -1;
    if (rd_cli_is_help(a))
        return o->help = 1, -1;
    if (!strcmp(a, "--merge"))
        o->merge = 1;
    else if (a[0] != '-' && rd_cli_expanded_pattern("report", argv, *i))
        return -1;
    else if (a[0] != '-')
        o->inputs[o->ninputs++] = a;
    else
        return rd_cli_unknown("report", a), -1;
    return 0;
}

static int parse_report(int argc, char **argv, report_opts *o)
{
    const char **v = calloc(4 * ((size_t)argc + 1), sizeof *v);
    *o = (report_opts){NULL, NULL, NULL, NULL, v, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0};
    if (!v)
        return -1;
    o->include = v + argc + 1;
    o->exclude = v + 2 * (argc + 1);
    o->untested = v + 3 * (argc + 1);
    for (int i = 0; i < argc; i++)
        if (report_arg(argc, argv, &i, o))
            return -1;
    o->path = o->ninputs ? o->inputs[0] : NULL;
    o->format = o->format ? o->format : o->merge ? "lcov" : rd_cli_nbackends ? "none" : "profile";
    if (o->weight && strcmp(o->format, "folded")) /* it would be ignored: say so */
        return fprintf(stderr, "recorderd report: --weight weighs folded stacks only "
                               "(--format folded), not %s\n", o->format), -1;
    o->weight = o->weight ? o->weight : "time";
    if (!o->path)
        fprintf(stderr, "recorderd report: give a session directory or a trace file\n");
    else if (o->ninputs > 1 && !o->merge && rd_cli_format_split("report", o->format,
                                                                   o->inputs[1]))
        return -1; /* -f callgrind, html: html was read as a trace */
    else if (o->ninputs > 1 && !o->merge)
        fprintf(stderr, "recorderd report: several traces given: add --merge to merge them\n");
    return o->path && (o->ninputs == 1 || o->merge) ? 0 : -1;
}

static int weight_of(const char *w, enum rd_weight *out)
{
    if (!strcmp(w, "time"))
        *out = RD_W_TIME;
    else if (!strcmp(w, "lines"))
        *out = RD_W_LINES;
    else if (!strcmp(w, "calls"))
        *out = RD_W_CALLS;
    else if (!strcmp(w, "bytes"))
        *out = RD_W_BYTES;
    else if (!strcmp(w, "objects"))
        *out = RD_W_OBJECTS;
    else if (!strcmp(w, "live"))
        *out = RD_W_LIVE;
    else
        return -1;
    return 0;
}

/* What a report's writer needs: the format, and what it renders. */
typedef struct out_job {
    const rd_format *fmt;
    const rd_render *r;
} out_job;

static int out_fn(FILE *f, void *ud)
{
    const out_job *j = ud;
    return j->fmt->write(f, j->r) ? -EIO : 0;
}

/* The report to stdout. To a terminal it goes through a buffer and
 * rd_write_printable: the names in it are the traced program's, whose
 * control bytes would drive the terminal. */
static int write_stdout(const out_job *j)
{
    char *buf = NULL;
    size_t len = 0;
    int tty = isatty(STDOUT_FILENO);
    FILE *f = tty ? open_memstream(&buf, &len) : stdout;
    int e = f ? out_fn(f, (void *)j) : -ENOMEM;
    if (tty && f && (fclose(f) || (!e && rd_write_printable(stdout, buf, len))))
        e = -EIO;
    free(buf);
    if (fflush(stdout) || e) {
        fprintf(stderr, "recorderd report: write error\n");
        return 1;
    }
    return 0;
}

/* The report to -o FILE, whole (rd_outdir), or to stdout. */
static int write_out(const report_opts *o, const out_job *j)
{
    char err[PATH_MAX + 128];
    if (!o->out)
        return write_stdout(j);
    if (rd_out_write_path(o->out, out_fn, (void *)j, err, sizeof err)) {
        fprintf(stderr, "recorderd report: %s\n", rd_printable(err, err, sizeof err));
        return 1;
    }
    return 0;
}

/* A directory format (annotate) into -o DIR, made 0700 if absent. */
static int write_dir(const report_opts *o, const rd_format *fmt, const rd_render *r)
{
    char err[PATH_MAX + 128] = "";
    int fd = rd_out_open(o->out, 1, err, sizeof err);
    int e = fd < 0 ? fd : fmt->write_dir(r, fd, o->out, err, sizeof err);
    if (fd >= 0)
        close(fd);
    if (e)
        fprintf(stderr, "recorderd report: %s\n", rd_printable(err, err, sizeof err));
    return e ? 1 : 0;
}

/* A report of rd_formats from the replayed model m: to -o (a directory for
 * annotate) or stdout. */
static int write_report(const report_opts *o, rd_model *m)
{
    rd_sessfile_meta t;
    rd_render r;
    const rd_format *fmt = rd_format_find(o->format);
    rd_sessfile_render(o->path, m, &t, &r);
    rd_sessfile_sampling(o->path, m); /* the trace does not say it */
    rd_label_set_cwd(m, r.srcdir); /* out of memory: labels show whole paths */
    if (weight_of(o->weight, &r.weight)) {
        fprintf(stderr, "recorderd report: --weight is time, lines, calls, bytes, objects or "
                        "live\n");
        return 2;
    }
    if ((fmt->flags & RD_FMT_MEM) && !m->has_mem) {
        fprintf(stderr, "recorderd report: %s: the trace has no memory (run --memory)\n",
                fmt->name);
        return 1;
    }
    if (r.weight >= RD_W_BYTES && !m->has_mem)
        fprintf(stderr, "recorderd report: warning: the trace has no memory (run --memory): "
                        "every weight is 0\n");
    int by_time = (fmt->flags & RD_FMT_TIME) ||
                  (r.weight == RD_W_TIME && !strcmp(fmt->name, "folded"));
    if (m->untimed && by_time)
        fprintf(stderr, "recorderd report: warning: the trace has no time (a --coverage run): "
                        "every time is 0%s\n",
                fmt->flags & RD_FMT_TIME ? "" : "; --weight calls or lines");
    if (fmt->write_dir && o->out)
        return write_dir(o, fmt, &r);
    char cut[512] = "";
    r.cut = cut;
    r.cut_cap = sizeof cut;
    out_job j = {fmt, &r};
    int rc = write_out(o, &j);
    if (cut[0])
        fprintf(stderr, "recorderd report: %s\n", cut);
    return rc;
}

static int is_coverage(const char *format)
{
    const rd_format *f = rd_format_find(format);
    return f && (f->flags & RD_FMT_MERGE);
}

static int write_coverage(const report_opts *o, const rd_cov *c)
{
    char title[64];
    snprintf(title, sizeof title, "%u traces merged", o->ninputs);
    rd_render r = {.cov = c, .title = o->ninputs > 1 ? title : o->path};
    out_job j = {rd_format_find(o->format), &r};
    return write_out(o, &j);
}

/* Adds every input and --include-untested directory to c. Returns 0 or 1. */
static int add_coverage(const report_opts *o, rd_cov *c)
{
    char err[512];
    for (unsigned i = 0; i < o->ninputs; i++) {
        if (rd_sessfile_add_cov(c, o->inputs[i], err, sizeof err)) {
            fprintf(stderr, "recorderd report: %s: %s\n", o->inputs[i],
                    rd_printable(err, err, sizeof err));
            return 1;
        }
        if (err[0])
            fprintf(stderr, "recorderd report: warning: %s: %s\n", o->inputs[i], err);
    }
    for (unsigned i = 0; i < o->nuntested; i++)
        if (rd_cov_add_untested(c, o->untested[i], err, sizeof err)) {
            fprintf(stderr, "recorderd report: --include-untested: %s\n", err);
            return 1;
        }
    return 0;
}

/* Coverage of one trace, or of several whose counts add up (--merge). */
static int cmd_coverage(const report_opts *o)
{
    rd_cov c;
    rd_cov_opts co = {o->include, o->ninclude, o->exclude, o->nexclude};
    if (rd_cov_init(&c, &co)) {
        fprintf(stderr, "recorderd report: out of memory\n");
        return 1;
    }
    int rc = add_coverage(o, &c);
    if (!rc) {
        rd_cov_finish(&c);
        rc = write_coverage(o, &c);
    }
    rd_cov_free(&c);
    return rc;
}

/* Where backends write (and keep temporary files): -o DIR for --backend,
 * the directory of -o FILE for a --format that is a backend, else ".". */
static const char *out_dir(const report_opts *o, int streaming, char *buf, size_t cap)
{
    const char *slash = o->out ? strrchr(o->out, '/') : NULL;
    if (!o->out || (streaming && !slash))
        return ".";
    if (!streaming)
        return o->out;
    snprintf(buf, cap, "%.*s", slash == o->out ? 1 : (int)(slash - o->out), o->out);
    return buf;
}

/* The directory the backends write to, checked before the replay: -o DIR
 * of --backend is made as annotate's is; the directory of a backend
 * format's -o FILE must exist, as for any report. 0, or 1 after saying
 * why (a backend only said "cannot keep the timeline" at its end). */
static int backend_dir_ok(const report_opts *o, int streaming, const char *dir)
{
    char err[PATH_MAX + 128] = "";
    if (!rd_cli_nbackends || !o->out)
        return 0;
    int fd = rd_out_open(dir, !streaming, err, sizeof err);
    if (fd >= 0)
        return close(fd), 0;
    if (streaming)
        fprintf(stderr, "recorderd report: cannot write %s: %s\n", o->out, strerror(-fd));
    else
        fprintf(stderr, "recorderd report: %s\n", rd_printable(err, err, sizeof err));
    return 1;
}

/* Options that do not go with a report that is no coverage: exit status 2,
 * or 0 with *streaming set when the format is a backend (added to them). */
static int no_cov_options(const report_opts *o)
{
    char names[512];
    if (!o->merge && !o->ninclude && !o->nexclude && !o->nuntested)
        return 0;
    rd_format_names(names, sizeof names, ", ", RD_FMT_MERGE, RD_FMT_MERGE);
    fprintf(stderr, "recorderd report: --merge, --include, --exclude and --include-untested "
                    "are for one of %s\n", names);
    return 2;
}

static int check_view(const report_opts *o, int *streaming)
{
    char names[512];
    if (no_cov_options(o))
        return 2;
    *streaming = rd_backend_known(o->format); /* a format that is a backend */
    if (*streaming && rd_cli_nbackends) {
        fprintf(stderr, "recorderd report: --format %s takes no --backend\n", o->format);
        return 2;
    }
    if (*streaming)
        rd_cli_backends[rd_cli_nbackends++] = o->format;
    const rd_format *f = *streaming ? NULL : rd_format_find(o->format);
    if (!*streaming && !f) {
        fprintf(stderr, "recorderd report: unknown format %s (%s, or a backend: chrome, "
                        "speedscope-evented, lua:FILE.lua)\n",
                o->format, rd_format_names(names, sizeof names, ", ", 0, 0));
        return 2;
    }
    if (f && (f->flags & RD_FMT_BINARY) && !o->out && !rd_cli_nbackends &&
        isatty(STDOUT_FILENO)) { /* said before the replay, not shown as '?'s */
        fprintf(stderr, "recorderd report: %s is binary, not for a terminal: give -o FILE "
                        "(-o %s)\n", f->name, f->file);
        return 2;
    }
    return 0;
}

/* {====== --format LIST: several reports from one replay */

/* A --format that is a list (names joined with ',', or all): its rows in
 * o->rows, and -o the session directory if not given. -1 if it is one
 * report, else 0 or 2 after saying why not. */
static int format_list(report_opts *o)
{
    struct stat st;
    if ((!strchr(o->format, ',') && strcmp(o->format, "all")) || rd_backend_known(o->format))
        return -1; /* a lua:FILE backend may hold a ',' */
    if (no_cov_options(o))
        return 2;
    unsigned nb = rd_cli_nbackends;
    if (rd_cli_format_list("report", o->format, &o->rows))
        return 2;
    if (!o->rows && rd_cli_nbackends == nb)
        return fprintf(stderr, "recorderd report: --format %s names no format\n", o->format), 2;
    o->list = 1;
    if (!o->out && stat(o->path, &st) == 0 && S_ISDIR(st.st_mode))
        o->out = o->path; /* beside the session's own reports */
    if (!o->out)
        fprintf(stderr, "recorderd report: several reports go to a directory: give -o DIR\n");
    return o->out ? 0 : 2;
}

/* The coverage of m into c for the coverage reports of o->rows (r->cov
 * set), built once for them all. 0, or 1 after saying why not. */
static int rows_cov(const report_opts *o, const rd_model *m, rd_cov *c, rd_render *r)
{
    if (!(o->rows & rd_format_rows(RD_FMT_COV)) || !rd_model_lines_counted(m))
        return 0;
    if (rd_cov_add_model(c, m, r->srcdir)) {
        fprintf(stderr, "recorderd report: out of memory for the coverage\n");
        return 1;
    }
    c->truncated = r->truncated;
    rd_cov_finish(c);
    r->cov = c;
    return 0;
}

/* Every report of o->rows into -o DIR, then a line naming them. */
static int write_rows(const report_opts *o, rd_model *m)
{
    rd_sessfile_meta t;
    rd_render r;
    rd_cov cov;
    char err[PATH_MAX + 128] = "", done[512] = "";
    int e, failed = 0, dfd = rd_out_open(o->out, 1, err, sizeof err);
    if (dfd < 0)
        return fprintf(stderr, "recorderd report: %s\n", rd_printable(err, err, sizeof err)), 1;
    char cut[512] = "";
    rd_sessfile_render(o->path, m, &t, &r);
    rd_sessfile_sampling(o->path, m);
    rd_label_set_cwd(m, r.srcdir);
    r.cut = cut;
    r.cut_cap = sizeof cut;
    if (rd_cov_init(&cov, NULL))
        return close(dfd), fprintf(stderr, "recorderd report: out of memory\n"), 1;
    int rc = rows_cov(o, m, &cov, &r);
    for (unsigned i = 0; i < rd_nformats && !rc; i++) {
        const rd_format *f = &rd_formats[i];
        if (!(o->rows & 1u << i))
            continue;
        const char *why = rd_format_left_out(f, m);
        /* a trace without memory has none: no news, unless named */
        if (why && (!(f->flags & RD_FMT_MEM) || (rd_cli_formats_named() & 1u << i)))
            fprintf(stderr, "recorderd report: %s not written: %s\n", f->file, why);
        else if (why)
            continue;
        else if ((e = rd_format_write_at(f, &r, dfd, o->out, err, sizeof err))) {
            failed = 1;
            if (!f->write_dir) /* a file's error says no more than errno */
                snprintf(err, sizeof err, "%s/%s: %s", o->out, f->file, strerror(-e));
            fprintf(stderr, "recorderd report: %s\n", rd_printable(err, err, sizeof err));
        } else
            snprintf(done + strlen(done), sizeof done - strlen(done), "%s%s", done[0] ? ", " : "",
                     f->file);
    }
    close(dfd);
    rd_cov_free(&cov);
    if (done[0])
        fprintf(stderr, "recorderd report: wrote %s in %s\n", done, o->out);
    if (cut[0])
        fprintf(stderr, "recorderd report: %s\n", cut);
    return rc || failed;
}

/* }====== */

/* Replays the trace through st (and the backends attached to it), then
 * writes the report and lets the backends finish. */
static int replay_and_write(const report_opts *o, int streaming, rd_stack *st,
                            rd_backends *bk, const char *dir)
{
    char err[512] = "";
    int corrupt = rd_replay_path(o->path, st, 1, err, sizeof err);
    if (corrupt < 0) {
        fprintf(stderr, "recorderd report: %s: %s\n", o->path, rd_printable(err, err, sizeof err));
        return 1;
    }
    /* corrupt part way: the reports of what came before, and exit 1 */
    if (err[0])
        fprintf(stderr, "recorderd report: %s%s: %s%s\n", corrupt ? "" : "warning: ", o->path,
                rd_printable(err, err, sizeof err),
                corrupt ? "; the reports hold the records before it" : "");
    /* a backend format writes -o FILE; --backend outputs go to -o DIR */
    report_opts to_stdout = *o; /* with --backend, -o is their directory */
    to_stdout.out = NULL;
    int rc = streaming ? 0
             : o->list ? write_rows(o, st->m)
                       : write_report(rd_cli_nbackends ? &to_stdout : o, st->m);
    if (rd_backends_finish(bk, st->m, dir, streaming ? o->out : NULL, err, sizeof err)) {
        fprintf(stderr, "recorderd report: %s\n", rd_printable(err, err, sizeof err));
        rc = 1;
    }
    return rc || corrupt;
}

/* What the backends wrote, said as the formats' files are (a Lua
 * backend's are its own to say). */
static void say_backends(const report_opts *o, int streaming, const char *dir)
{
    for (unsigned i = 0; i < rd_cli_nbackends; i++) {
        const char *file = rd_backend_file(rd_cli_backends[i]);
        if (!file)
            continue;
        if (streaming && o->out)
            fprintf(stderr, "recorderd report: wrote %s\n", o->out);
        else if (!strcmp(dir, "."))
            fprintf(stderr, "recorderd report: wrote %s\n", file);
        else
            fprintf(stderr, "recorderd report: wrote %s in %s\n", file, dir);
    }
}

/* A report of one trace that is no coverage, with the backends. */
static int cmd_view(const report_opts *o, int streaming)
{
    rd_model m;
    rd_stack st;
    rd_backends bk;
    char err[512] = "", outdir[PATH_MAX];
    int rc = 1;
    if (rd_model_init(&m) || rd_stack_init(&st, &m)) {
        fprintf(stderr, "recorderd report: out of memory\n");
        return 1;
    }
    if (rd_backends_open(&bk, rd_cli_backends, rd_cli_nbackends, &m, err, sizeof err)) {
        fprintf(stderr, "recorderd report: %s\n", rd_printable(err, err, sizeof err));
        rc = 2;
        goto out;
    }
    rd_backend_info info = {o->path, NULL, 0, out_dir(o, streaming, outdir, sizeof outdir), -1};
    if (backend_dir_ok(o, streaming, info.dir))
        goto close;
    rd_backends_info(&bk, &info);
    rd_backends_attach(&bk, &st);
    rc = replay_and_write(o, streaming, &st, &bk, info.dir);
    if (!rc)
        say_backends(o, streaming, info.dir);
close:
    rd_backends_close(&bk);
out:
    rd_stack_free(&st);
    rd_model_free(&m);
    return rc;
}

/* A trace another user made is reported with the sources its maker could
 * read, no others (rd_srcperm.h): recorderd writes a trace as the traced
 * process's user, so the owner of the file is its maker. */
static void source_owners(const report_opts *o)
{
    char trace[PATH_MAX];
    struct stat st;
    for (unsigned i = 0; i < o->ninputs; i++) {
        if (stat(o->inputs[i], &st) < 0)
            continue;
        rd_src_owner_add(st.st_uid);
        snprintf(trace, sizeof trace, "%s/trace.ltr", o->inputs[i]); /* a session dir's */
        if (S_ISDIR(st.st_mode) && stat(trace, &st) == 0)
            rd_src_owner_add(st.st_uid);
    }
}

/* The directory above path into buf: its last component cut ("." for a
 * bare name); path/.. where that component is "." or "..". */
static void parent_of(const char *path, char *buf, size_t cap)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    const char *slash = memrchr(path, '/', n), *base = slash ? slash + 1 : path;
    size_t blen = n - (size_t)(base - path);
    if ((blen == 1 && base[0] == '.') || (blen == 2 && !strncmp(base, "..", 2)))
        snprintf(buf, cap, "%.*s/..", (int)n, path);
    else if (!slash)
        snprintf(buf, cap, ".");
    else
        snprintf(buf, cap, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* 1 if dir holds a regular file name (a session's session.json). */
static int has_file(const char *dir, const char *name)
{
    char f[PATH_MAX + 32];
    struct stat st;
    snprintf(f, sizeof f, "%s/%s", dir, name);
    return stat(f, &st) == 0 && S_ISREG(st.st_mode);
}

/* 1 if path is a regular file that begins as a trace does (a trace.ltr
 * copied or renamed): a pipe (<(zstdcat ...)) is not read here, its bytes
 * are the replay's. */
static int is_trace_file(const char *path, const struct stat *st)
{
    char magic[sizeof LT_FILE_MAGIC - 1];
    FILE *f = S_ISREG(st->st_mode) ? fopen(path, "rb") : NULL;
    int yes = f && fread(magic, 1, sizeof magic, f) == sizeof magic &&
              !memcmp(magic, LT_FILE_MAGIC, sizeof magic);
    if (f)
        fclose(f);
    return yes;
}

/* The session a path inside it names (session.json, profile.txt,
 * report.html, coverage.lcov, annotate/ and its files: anything of a
 * session directory but its trace), as a new string, or NULL when path is
 * a trace, a session, or in none. Report reads a session, not that file:
 * the user meant the session, whose reports it rebuilds. */
static char *session_of(const char *path)
{
    char dir[PATH_MAX], up[PATH_MAX];
    struct stat st;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (stat(path, &st) < 0 || !strcmp(base, "trace.ltr") || is_trace_file(path, &st))
        return NULL; /* a trace's own errors say what is wrong with it */
    if (S_ISDIR(st.st_mode) && (has_file(path, "trace.ltr") || has_file(path, "session.json")))
        return NULL;
    parent_of(path, dir, sizeof dir); /* out/app/profile.txt */
    if (has_file(dir, "session.json"))
        return strdup(dir);
    parent_of(dir, up, sizeof up); /* out/app/annotate/app.lua.txt */
    return has_file(up, "session.json") ? strdup(up) : NULL;
}

/* Each input that is a file of a session replaced by its session (kept in
 * made, to be freed), with a line saying so. */
static void inputs_to_sessions(report_opts *o, char **made)
{
    for (unsigned i = 0; i < o->ninputs; i++) {
        char *dir = session_of(o->inputs[i]);
        if (!dir)
            continue;
        fprintf(stderr, "recorderd report: %s is not a trace: reporting its session, %s\n",
                o->inputs[i], dir);
        made[i] = dir;
        o->inputs[i] = dir;
    }
    o->path = o->inputs[0];
}

int rd_cmd_report(int argc, char **argv)
{
    report_opts o;
    int streaming = 0, rc;
    char **made = calloc((size_t)argc + 1, sizeof *made); /* inputs_to_sessions' */
    if (!made)
        return fprintf(stderr, "recorderd report: out of memory\n"), 1;
    if (parse_report(argc, argv, &o)) {
        rc = o.help ? rd_help("report", stdout) : 2;
    } else {
        inputs_to_sessions(&o, made);
        source_owners(&o);
        if (is_coverage(o.format))
            rc = cmd_coverage(&o);
        else if ((rc = format_list(&o)) == 0) /* several reports, one replay */
            rc = cmd_view(&o, 0);
        else if (rc < 0 && !(rc = check_view(&o, &streaming)))
            rc = cmd_view(&o, streaming);
    }
    free(o.inputs); /* o.path points into argv, or made */
    for (int i = 0; i < argc; i++)
        free(made[i]);
    free(made);
    return rc;
}
