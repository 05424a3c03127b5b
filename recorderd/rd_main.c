/* recorderd: command line. run / listen / serve / report. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lt_ctl.h"
#include "lt_ring.h"
#include "rd_attach.h"
#include "rd_backend.h"
#include "rd_callgrind.h"
#include "rd_client.h"
#include "rd_cov.h"
#include "rd_flame.h"
#include "rd_html.h"
#include "rd_label.h"
#include "rd_pprof.h"
#include "rd_luabk.h"
#include "rd_replay.h"
#include "rd_annotate.h"
#include "rd_report.h"
#include "rd_run.h"
#include "rd_server.h"
#include "rd_speedscope.h"
#include "rd_util.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage:\n"
            "  recorderd run [--out DIR] [--quiet] [--ring SIZE] [--mode wait|drop]\n"
            "                [--no-trace] [--backend SPEC]... -- CMD [ARGS...]\n"
            "  recorderd listen [--socket PATH] [--out DIR] [--no-trace] [--backend SPEC]...\n"
            "                                                  (also: recorderd --listen)\n"
            "  recorderd report SESSION_DIR|TRACE_FILE [--format profile|annotate|folded|"
            "callgrind|flamegraph|speedscope|pprof|html|none]\n"
            "                   [--weight time|lines|calls] [-o FILE]\n"
            "  recorderd report SESSION_DIR|TRACE_FILE --format lcov|luacov|coverage|cobertura\n"
            "                   [--include PAT]... [--exclude PAT]... [--include-untested DIR]...\n"
            "                   [-o FILE]\n"
            "  recorderd report --merge SESSION... [--format lcov|luacov|coverage|cobertura] [-o FILE]\n"
            "  recorderd report SESSION_DIR|TRACE_FILE --format chrome|speedscope-evented [-o FILE]\n"
            "  recorderd report SESSION_DIR|TRACE_FILE --backend SPEC... [-o DIR]\n"
            "  recorderd attach PID [--duration SECONDS] [--out DIR] [--timeout SECONDS]\n"
            "                   [--backend SPEC]...\n"
            "  recorderd dump PID [--timeout SECONDS]\n"
            "  recorderd top PID [--duration SECONDS] [--timeout SECONDS]\n"
            "  recorderd status [--socket PATH] [--json]\n"
            "  recorderd stop [--socket PATH]\n"
            "  recorderd serve --fd N [--out DIR] [--summary|--quiet]   (used by the collector)\n"
            "  recorderd --version | --help\n"
            "backends (SPEC): chrome (trace.chrome.json), speedscope-evented "
            "(trace.speedscope.json), lua:FILE.lua (a user backend)\n");
}

/* Returns the value of option argv[*i] (advancing), or NULL. "--" is no
 * value: `--out -- lua5.1 x.lua` lacks one, it does not name a directory. */
static const char *optval(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc || !strcmp(argv[*i + 1], "--")) {
        fprintf(stderr, "recorderd: %s needs a value\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

/* v as a whole decimal number from min to max, or -1 ("123abc" is none). */
static long whole_number(const char *v, long min, long max)
{
    char *end;
    errno = 0;
    long n = v && *v >= '0' && *v <= '9' ? strtol(v, &end, 10) : -1;
    return n >= 0 && !errno && !*end && n >= min && n <= max ? n : -1;
}

static int is_help(const char *a)
{
    return !strcmp(a, "--help") || !strcmp(a, "-h");
}

/* Exit status 2, naming what was not understood. */
static int unknown_option(const char *cmd, const char *a)
{
    fprintf(stderr, "recorderd %s: unknown option %s (see recorderd --help)\n", cmd, a);
    return 2;
}

/* --backend SPEC, repeatable (run, listen, serve, report). */
static const char *backend_specs[RD_MAX_BACKENDS];
static unsigned nbackend_specs;

/* 1 if argv[*i] was --backend (taken), 0 if not, -1 on a bad value. */
static int backend_option(int argc, char **argv, int *i)
{
    if (strcmp(argv[*i], "--backend") && strcmp(argv[*i], "-b"))
        return 0;
    const char *v = optval(argc, argv, i);
    if (!v)
        return -1;
    if (!rd_backend_known(v)) {
        fprintf(stderr, "recorderd: unknown backend %s (see recorderd --help)\n", v);
        return -1;
    }
    char err[1024];
    if (!strncmp(v, "lua:", 4) && rd_luabk_check(v + 4, err, sizeof err)) {
        fprintf(stderr, "recorderd: backend %s: %s\n", v, err); /* before any session runs it */
        return -1;
    }
    if (nbackend_specs == RD_MAX_BACKENDS) {
        fprintf(stderr, "recorderd: at most %d backends\n", RD_MAX_BACKENDS);
        return -1;
    }
    backend_specs[nbackend_specs++] = v;
    return 1;
}

/* run's --ring, --mode and --out, checked before anything runs: a bad one
 * would otherwise leave the whole command to run untraced. */
static int check_run_opts(const rd_run_opts *o)
{
    uint64_t size;
    struct stat st;
    if (o->ring && lt_ring_parse_size(o->ring, &size)) {
        fprintf(stderr, "recorderd run: --ring %s: a power of two from 64K to 1G, as "
                        "LUATRACE_RING\n", o->ring);
        return 2;
    }
    if (o->mode && strcmp(o->mode, "wait") && strcmp(o->mode, "drop")) {
        fprintf(stderr, "recorderd run: --mode is wait or drop\n");
        return 2;
    }
    int e = rd_mkdir_p(o->out);
    if (!e && stat(o->out, &st) < 0)
        e = -errno;
    if (!e && !S_ISDIR(st.st_mode))
        e = -ENOTDIR;
    if (!e && access(o->out, W_OK | X_OK) < 0)
        e = -errno;
    if (e) {
        fprintf(stderr, "recorderd run: --out %s: cannot create or write it: %s\n", o->out,
                strerror(-e));
        return 2;
    }
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    rd_run_opts o = {.out = "luatrace-out"};
    int i = 0;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        const char *a = argv[i];
        int b = backend_option(argc, argv, &i);
        if (b < 0)
            return 2;
        if (b)
            continue;
        const char **val = !strcmp(a, "--out")    ? &o.out
                           : !strcmp(a, "--ring") ? &o.ring
                           : !strcmp(a, "--mode") ? &o.mode
                                                  : NULL;
        if (val && !(*val = optval(argc, argv, &i)))
            return 2;
        if (val)
            continue;
        if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
            o.quiet = 1;
        else if (!strcmp(a, "--no-trace"))
            o.no_trace = 1;
        else if (is_help(a))
            return usage(stdout), 0;
        else if (a[0] != '-')
            break; /* the command, without "--" */
        else
            return unknown_option("run", a);
    }
    if (i < argc && !strcmp(argv[i], "--"))
        i++;
    if (i >= argc) {
        fprintf(stderr, "recorderd run: no command given\n");
        return 2;
    }
    int e = check_run_opts(&o);
    if (e)
        return e;
    o.backends = backend_specs;
    o.nbackends = nbackend_specs;
    return rd_run(&o, argv + i);
}

/* listen: idle after stop. serve --fd (once): idle as soon as its one
 * connection is gone, even if it never became a session (a refused hello):
 * a private recorder must not outlive its program. */
static void stop_when_idle(rd_server *srv)
{
    if (srv->stopping || srv->once)
        rd_server_close(srv);
}

static int serve(const char *path, int fd, rd_session_opts *so, int once)
{
    rd_server srv;
    char err[512];
    uv_loop_t *loop = uv_default_loop();
    if (rd_server_init(&srv, loop, so))
        return 1;
    srv.once = once;
    srv.on_idle = stop_when_idle;
    if (path && rd_server_listen(&srv, path, err, sizeof err)) {
        fprintf(stderr, "recorderd: %s\n", err);
        rd_server_close(&srv);
        uv_run(loop, UV_RUN_DEFAULT);
        return 1;
    }
    if (fd >= 0 && rd_server_adopt(&srv, fd)) {
        fprintf(stderr, "recorderd: cannot use fd %d\n", fd);
        return 1;
    }
    if (path)
        fprintf(stderr, "recorderd: listening on %s, reports in %s/\n", path, so->out);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    return 0;
}

static int cmd_listen(int argc, char **argv)
{
    char path[PATH_MAX];
    rd_session_opts so = {.out = "luatrace-out", .backends = backend_specs};
    lt_ctl_default_path(path, sizeof path);
    for (int i = 0; i < argc; i++) {
        const char *v;
        int b = backend_option(argc, argv, &i);
        if (b < 0)
            return 2;
        so.nbackends = nbackend_specs;
        if (b)
            continue;
        if (is_help(argv[i]))
            return usage(stdout), 0;
        if (!strcmp(argv[i], "--no-trace")) {
            so.no_trace = 1;
            continue;
        }
        if (strcmp(argv[i], "--socket") && strcmp(argv[i], "--out"))
            return unknown_option("listen", argv[i]);
        if (!(v = optval(argc, argv, &i)))
            return 2;
        if (!strcmp(argv[i - 1], "--socket"))
            snprintf(path, sizeof path, "%s", v);
        else
            so.out = v;
    }
    return serve(path, -1, &so, 0);
}

/* status and stop: [--socket PATH] [--json] */
static int cmd_client(int argc, char **argv, int stop)
{
    char path[PATH_MAX];
    int json = 0;
    lt_ctl_default_path(path, sizeof path);
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (is_help(argv[i]))
            return usage(stdout), 0;
        if (!strcmp(argv[i], "--json") && !stop)
            json = 1;
        else if (strcmp(argv[i], "--socket"))
            return unknown_option(stop ? "stop" : "status", argv[i]);
        else if ((v = optval(argc, argv, &i)))
            snprintf(path, sizeof path, "%s", v);
        else
            return 2;
    }
    return stop ? rd_client_stop(path) : rd_client_status(path, json);
}

static int cmd_serve(int argc, char **argv)
{
    rd_session_opts so = {.out = "luatrace-out", .backends = backend_specs};
    int fd = -1;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int b = backend_option(argc, argv, &i);
        if (b < 0)
            return 2;
        so.nbackends = nbackend_specs;
        if (b)
            continue;
        if (!strcmp(argv[i], "--summary"))
            so.summary = 1;
        else if (!strcmp(argv[i], "--quiet"))
            so.summary = 0;
        else if (is_help(argv[i]))
            return usage(stdout), 0;
        else if (strcmp(argv[i], "--fd") && strcmp(argv[i], "--out"))
            return unknown_option("serve", argv[i]);
        else if (!(v = optval(argc, argv, &i)))
            return 2;
        else if (!strcmp(argv[i - 1], "--out"))
            so.out = v;
        else if ((fd = (int)whole_number(v, 0, INT_MAX)) < 0)
            return fprintf(stderr, "recorderd serve: --fd takes a file descriptor number\n"), 2;
    }
    if (fd < 0)
        return usage(stderr), 2;
    struct stat st; /* libuv aborts on a pipe of anything else */
    if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
        fprintf(stderr, "recorderd serve: fd %d is not a socket\n", fd);
        return 2;
    }
    return serve(NULL, fd, &so, 1);
}

typedef struct report_opts {
    const char *path, *format, *weight, *out;
    /* coverage: inputs (several with --merge) and file selection; each
     * array has room for every argument */
    const char **inputs, **include, **exclude, **untested;
    unsigned ninputs, ninclude, nexclude, nuntested;
    int merge;
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
    if (!(v = optval(argc, argv, i)))
        return -1;
    unsigned *n = list == o->include ? &o->ninclude
                  : list == o->exclude ? &o->nexclude
                                       : &o->nuntested;
    list[(*n)++] = v;
    return 1;
}

static int parse_report(int argc, char **argv, report_opts *o)
{
    const char **v = calloc(4 * ((size_t)argc + 1), sizeof *v);
    *o = (report_opts){NULL, NULL, "time", NULL, v, NULL, NULL, NULL, 0, 0, 0, 0, 0};
    if (!v)
        return -1;
    o->include = v + argc + 1;
    o->exclude = v + 2 * (argc + 1);
    o->untested = v + 3 * (argc + 1);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int k = cov_option(argc, argv, &i, o);
        if (k < 0)
            return -1;
        if (k > 0 || (k = backend_option(argc, argv, &i)) > 0)
            continue;
        if (k < 0)
            return -1;
        if (!strcmp(a, "--merge")) {
            o->merge = 1;
        } else if (!strcmp(a, "--format") || !strcmp(a, "-f")) {
            if (!(o->format = optval(argc, argv, &i)))
                return -1;
        } else if (!strcmp(a, "--weight") || !strcmp(a, "-w")) {
            if (!(o->weight = optval(argc, argv, &i)))
                return -1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!(o->out = optval(argc, argv, &i)))
                return -1;
        } else if (a[0] != '-') {
            o->inputs[o->ninputs++] = a;
        } else {
            fprintf(stderr, "recorderd report: unknown argument %s\n", a);
            return -1;
        }
    }
    o->path = o->ninputs ? o->inputs[0] : NULL;
    o->format = o->format ? o->format : o->merge ? "lcov" : nbackend_specs ? "none" : "profile";
    if (!o->path)
        fprintf(stderr, "recorderd report: give a session directory or a trace file\n");
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
    else
        return -1;
    return 0;
}

/* The trace file of a session directory, or path itself. */
static void trace_file(const char *path, char *buf, size_t cap)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(buf, cap, "%s/trace.ltr", path);
    else
        snprintf(buf, cap, "%s", path);
}

/* A trace keeps no wall clock: its file was last written when tracing
 * ended, so the start is that time less the traced time (0: unknown). */
static int64_t trace_start_ns(const char *path, const rd_model *m)
{
    char file[PATH_MAX + 16];
    struct stat st;
    trace_file(path, file, sizeof file);
    if (stat(file, &st) < 0)
        return 0;
    int64_t end = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return end - (int64_t)((double)m->ticks_total * rd_model_ns_per_tick(m));
}

/* What a session directory's session.json says of the traced program:
 * relative sources resolve against its cwd (NULL: ours), and its command
 * (NULL: unknown, as for a trace file on its own). */
typedef struct trace_meta {
    const char *srcdir, *cmd;
    char cwd[PATH_MAX], command[4096];
} trace_meta;

static void read_meta(const char *path, trace_meta *t)
{
    int cwd = !rd_cov_session_str(path, "cwd", t->cwd, sizeof t->cwd) && t->cwd[0] == '/';
    t->srcdir = cwd ? t->cwd : NULL;
    t->cmd = rd_cov_session_str(path, "command", t->command, sizeof t->command) ? NULL
                                                                                  : t->command;
}

static int write_view(const report_opts *o, rd_model *m, enum rd_weight w, FILE *out)
{
    trace_meta t;
    read_meta(o->path, &t);
    rd_label_set_cwd(m, t.srcdir); /* out of memory: labels show whole paths */
    if (!strcmp(o->format, "none"))
        return fprintf(out, "%llu events\n", (unsigned long long)m->events) < 0;
    if (!strcmp(o->format, "folded"))
        return rd_report_folded(m, w, out);
    if (!strcmp(o->format, "annotate"))
        return rd_report_annotate_stream(m, NULL, t.srcdir, out);
    if (!strcmp(o->format, "flamegraph"))
        return rd_flame_write_svg(m, o->path, out);
    if (!strcmp(o->format, "speedscope"))
        return rd_speedscope_write(m, o->path, out);
    if (!strcmp(o->format, "callgrind"))
        return rd_callgrind_write(m, t.cmd, t.srcdir, out);
    if (!strcmp(o->format, "pprof")) {
        rd_pprof_info info = {NULL, t.srcdir, trace_start_ns(o->path, m)};
        return rd_pprof_write(m, &info, out);
    }
    if (!strcmp(o->format, "html")) {
        rd_html_info info = {o->path, t.cmd, t.srcdir, 0, NULL,
                             rd_cov_session_truncated(o->path) > 0};
        return rd_html_write(m, &info, out);
    }
    return rd_report_profile(m, NULL, NULL, 0, out);
}

static int write_report(const report_opts *o, rd_model *m)
{
    enum rd_weight w;
    char err[512] = "";
    if (weight_of(o->weight, &w)) {
        fprintf(stderr, "recorderd report: --weight is time, lines or calls\n");
        return 2;
    }
    if (!strcmp(o->format, "annotate") && o->out) {
        trace_meta t;
        read_meta(o->path, &t);
        if (rd_report_annotate(m, NULL, t.srcdir, o->out, err, sizeof err)) {
            fprintf(stderr, "recorderd report: %s\n", err);
            return 1;
        }
        return 0;
    }
    FILE *out = o->out ? fopen(o->out, "w") : stdout;
    if (!out) {
        fprintf(stderr, "recorderd report: cannot write %s: %s\n", o->out, strerror(errno));
        return 1;
    }
    int e = write_view(o, m, w, out);
    if ((out != stdout && fclose(out)) || (out == stdout && fflush(out)) || e) {
        fprintf(stderr, "recorderd report: write error\n");
        return 1;
    }
    return 0;
}

static int is_coverage(const char *format)
{
    return !strcmp(format, "lcov") || !strcmp(format, "luacov") || !strcmp(format, "coverage") ||
           !strcmp(format, "cobertura");
}

static int write_coverage(const report_opts *o, const rd_cov *c)
{
    char title[64];
    FILE *out = o->out ? fopen(o->out, "w") : stdout;
    if (!out) {
        fprintf(stderr, "recorderd report: cannot write %s: %s\n", o->out, strerror(errno));
        return 1;
    }
    snprintf(title, sizeof title, "%u traces merged", o->ninputs);
    int e = !strcmp(o->format, "lcov")        ? rd_cov_write_lcov(c, out)
            : !strcmp(o->format, "luacov")    ? rd_cov_write_luacov(c, out)
            : !strcmp(o->format, "cobertura") ? rd_cov_write_cobertura(c, "luatrace " RD_VERSION,
                                                                       rd_wall_ms(), out)
                                              : rd_cov_write_text(c, o->ninputs > 1 ? title
                                                                      : o->path, out);
    if ((out != stdout && fclose(out)) || (out == stdout && fflush(out)) || e) {
        fprintf(stderr, "recorderd report: write error\n");
        return 1;
    }
    return 0;
}

/* Coverage of one trace, or of several whose counts add up (--merge). */
static int cmd_coverage(const report_opts *o)
{
    rd_cov c;
    rd_cov_opts co = {o->include, o->ninclude, o->exclude, o->nexclude};
    char err[512];
    int rc = 0;
    if (rd_cov_init(&c, &co)) {
        fprintf(stderr, "recorderd report: out of memory\n");
        return 1;
    }
    for (unsigned i = 0; !rc && i < o->ninputs; i++) {
        if (rd_cov_add_trace(&c, o->inputs[i], err, sizeof err)) {
            fprintf(stderr, "recorderd report: %s: %s\n", o->inputs[i], err);
            rc = 1;
        } else if (err[0]) {
            fprintf(stderr, "recorderd report: warning: %s: %s\n", o->inputs[i], err);
        }
    }
    for (unsigned i = 0; !rc && i < o->nuntested; i++)
        if (rd_cov_add_untested(&c, o->untested[i], err, sizeof err)) {
            fprintf(stderr, "recorderd report: --include-untested: %s\n", err);
            rc = 1;
        }
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

static int cmd_report(int argc, char **argv)
{
    report_opts o;
    int rc = parse_report(argc, argv, &o) ? 2 : is_coverage(o.format) ? cmd_coverage(&o) : -1;
    free(o.inputs); /* o.path points into argv */
    if (rc >= 0)
        return rc;
    if (o.merge || o.ninclude || o.nexclude || o.nuntested) {
        fprintf(stderr, "recorderd report: --merge, --include, --exclude and --include-untested "
                        "are for lcov, luacov, coverage and cobertura\n");
        return 2;
    }
    int streaming = rd_backend_known(o.format); /* a format that is a backend */
    if (streaming && nbackend_specs) {
        fprintf(stderr, "recorderd report: --format %s takes no --backend\n", o.format);
        return 2;
    }
    if (streaming)
        backend_specs[nbackend_specs++] = o.format;
    if (!streaming && strcmp(o.format, "profile") && strcmp(o.format, "folded") &&
        strcmp(o.format, "annotate") && strcmp(o.format, "flamegraph") &&
        strcmp(o.format, "speedscope") && strcmp(o.format, "callgrind") &&
        strcmp(o.format, "pprof") && strcmp(o.format, "html") && strcmp(o.format, "none")) {
        fprintf(stderr,
                "recorderd report: unknown format %s (profile, annotate, folded, callgrind, "
                "flamegraph, speedscope, pprof, html, "
                "lcov, luacov, coverage, cobertura, none, or a backend: chrome, "
                "speedscope-evented)\n",
                o.format);
        return 2;
    }
    rd_model m;
    rd_stack st;
    char err[512] = "";
    if (rd_model_init(&m) || rd_stack_init(&st, &m)) {
        fprintf(stderr, "recorderd report: out of memory\n");
        return 1;
    }
    rd_backends bk;
    if (rd_backends_open(&bk, backend_specs, nbackend_specs, &m, err, sizeof err)) {
        fprintf(stderr, "recorderd report: %s\n", err);
        rd_stack_free(&st);
        rd_model_free(&m);
        return 2;
    }
    char outdir[PATH_MAX];
    rd_backend_info info = {o.path, NULL, 0, out_dir(&o, streaming, outdir, sizeof outdir)};
    rd_backends_info(&bk, &info);
    rd_backends_attach(&bk, &st);
    int e = rd_replay_path(o.path, &st, 1, err, sizeof err);
    rc = 1;
    if (e)
        fprintf(stderr, "recorderd report: %s: %s\n", o.path, err);
    else {
        if (err[0])
            fprintf(stderr, "recorderd report: warning: %s: %s\n", o.path, err);
        /* a backend format writes -o FILE; --backend outputs go to -o DIR */
        report_opts to_stdout = o; /* with --backend, -o is their directory */
        to_stdout.out = NULL;
        rc = streaming ? 0 : write_report(nbackend_specs ? &to_stdout : &o, &m);
        if (rd_backends_finish(&bk, &m, info.dir, streaming ? o.out : NULL, err, sizeof err)) {
            fprintf(stderr, "recorderd report: %s\n", err);
            rc = 1;
        }
    }
    rd_backends_close(&bk);
    rd_stack_free(&st);
    rd_model_free(&m);
    return rc;
}

/* Seconds (decimals allowed) as milliseconds; -1 if not a number. */
static long seconds_ms(const char *v)
{
    char *end;
    double d = v ? strtod(v, &end) : -1;
    return v && end != v && !*end && d >= 0 && d < 1e7 ? (long)(d * 1000 + 0.5) : -1;
}

/* attach, dump, top: PID [options] */
static int cmd_attach(int argc, char **argv, const char *what)
{
    rd_attach_opts o = {.timeout_ms = 10000, .grace_ms = 5000};
    o.so = (rd_session_opts){.out = "luatrace-out", .backends = backend_specs};
    int dump = !strcmp(what, "dump"), top = !strcmp(what, "top");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        long ms;
        int b = dump || top ? 0 : backend_option(argc, argv, &i);
        if (b < 0)
            return 2;
        o.so.nbackends = nbackend_specs;
        if (b)
            continue;
        if ((!strcmp(a, "--duration") || !strcmp(a, "-d")) && !dump) {
            if ((ms = seconds_ms(optval(argc, argv, &i))) <= 0)
                return fprintf(stderr, "recorderd %s: --duration takes seconds > 0\n", what), 2;
            o.duration_ms = (unsigned)ms;
        } else if (!strcmp(a, "--timeout")) {
            if ((ms = seconds_ms(optval(argc, argv, &i))) <= 0)
                return fprintf(stderr, "recorderd %s: --timeout takes seconds > 0\n", what), 2;
            o.timeout_ms = (unsigned)ms;
        } else if (!strcmp(a, "--out") && !dump && !top) {
            if (!(o.so.out = optval(argc, argv, &i)))
                return 2;
        } else if (a[0] != '-' && !o.pid) {
            if ((o.pid = (pid_t)whole_number(a, 1, INT_MAX)) < 0)
                return fprintf(stderr, "recorderd %s: %s is not a process id\n", what, a), 2;
        } else if (is_help(a)) {
            return usage(stdout), 0;
        } else {
            return unknown_option(what, a);
        }
    }
    if (!o.pid)
        return fprintf(stderr, "recorderd %s: give the process id\n", what), 2;
    o.dump = dump;
    o.keys = top;
    o.so.no_files = dump || top;
    o.so.live = dump ? rd_attach_dump_view : top ? rd_attach_top_view : NULL;
    o.so.live_ms = 1000;
    if (!dump && !top)
        o.so.summary = 1;
    return rd_attach(&o);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr), 2;
    rd_session_guard_init();
    const char *c = argv[1];
    /* A file over RLIMIT_FSIZE is an error to report (EFBIG), not a death;
     * so is a peer (a traced process, a client) that hangs up before a
     * reply of ours (EPIPE). report, status and stop keep SIGPIPE, so that
     * `report -o - | head` ends quietly. run's child gets both back:
     * uv_spawn resets every signal's disposition. */
    signal(SIGXFSZ, SIG_IGN);
    if (strcmp(c, "report") && strcmp(c, "status") && strcmp(c, "stop"))
        signal(SIGPIPE, SIG_IGN);
    if (!strcmp(c, "run"))
        return cmd_run(argc - 2, argv + 2);
    if (!strcmp(c, "listen") || !strcmp(c, "--listen"))
        return cmd_listen(argc - 2, argv + 2);
    if (!strcmp(c, "status"))
        return cmd_client(argc - 2, argv + 2, 0);
    if (!strcmp(c, "stop"))
        return cmd_client(argc - 2, argv + 2, 1);
    if (!strcmp(c, "serve"))
        return cmd_serve(argc - 2, argv + 2);
    if (!strcmp(c, "report"))
        return cmd_report(argc - 2, argv + 2);
    if (!strcmp(c, "attach") || !strcmp(c, "dump") || !strcmp(c, "top"))
        return cmd_attach(argc - 2, argv + 2, c);
    if (!strcmp(c, "--version")) {
        printf("recorderd %s\n", RD_VERSION);
        return 0;
    }
    if (!strcmp(c, "--help") || !strcmp(c, "-h"))
        return usage(stdout), 0;
    fprintf(stderr, "recorderd: unknown command %s\n", c);
    usage(stderr);
    return 2;
}
