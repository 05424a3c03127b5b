/* recorderd: command line. run, listen, serve, status, stop, attach, dump
 * and top; report is rd_cmd_report.c, every --help rd_help.c. */
#include <errno.h>
#include <fcntl.h>
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
#include "rd_cli.h"
#include "rd_client.h"
#include "rd_cmd_report.h"
#include "rd_formats.h"
#include "rd_guard.h"
#include "rd_heap.h"
#include "rd_help.h"
#include "rd_http.h"
#include "rd_http_auth.h"
#include "rd_http_pprof.h"
#include "rd_outdir.h"
#include "rd_outside.h"
#include "rd_record.h"
#include "rd_run.h"
#include "rd_server.h"
#include "rd_util.h"

/* run's and listen's --out when none is given: check_out names it so */
static const char g_default_out[] = "luatrace-out";

/* The directory of the session directories, made and writable, else 2
 * after saying why: before any program runs or connects, not at each
 * session's start (a daemon listened on, refusing every program). */
static int check_out(const char *cmd, const char *out, int default_out)
{
    char err[PATH_MAX + 128];
    int fd = rd_out_open(out, 1, err, sizeof err); /* opened again by the server */
    int e = fd < 0 ? fd : faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) < 0 ? -errno : 0;
    if (fd >= 0)
        close(fd);
    if (e == -EPERM || e == -ELOOP) /* the out-directory rule, said by rd_out_open */
        fprintf(stderr, "recorderd %s: --out %s\n", cmd, err);
    else if (e && default_out) /* no --out was given: "--out" named nothing typed */
        fprintf(stderr, "recorderd %s: cannot write the reports in ./%s (the default --out): "
                        "%s; give -o DIR\n", cmd, out, strerror(-e));
    else if (e)
        fprintf(stderr, "recorderd %s: --out %s: cannot create or write it: %s\n", cmd, out,
                strerror(-e));
    return e ? 2 : 0;
}

/* run's --ring, --mode and --out, checked before anything runs: a bad one
 * would otherwise leave the whole command to run untraced. */
static int check_run_opts(const rd_run_opts *o, int default_out)
{
    uint64_t size;
    if (o->ring && lt_ring_parse_size(o->ring, &size)) {
        fprintf(stderr, "recorderd run: --ring %s: a power of two from 64K to 1G, as "
                        "LUATRACE_RING\n", o->ring);
        return 2;
    }
    if (o->mode && strcmp(o->mode, "wait") && strcmp(o->mode, "drop")) {
        fprintf(stderr, "recorderd run: --mode is wait or drop\n");
        return 2;
    }
    return check_out("run", o->out, default_out);
}

/* run's --sample [HZ]: LuaJIT's profiler at HZ samples a second (1000 if
 * no number follows). 0, or 1 after saying why HZ is refused. */
static int sample_opt(int argc, char **argv, int *i, unsigned *hz)
{
    const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    *hz = 1000;
    int dashes = 0; /* a "--" after v: v was meant as HZ, not as the command */
    for (int k = *i + 2; k < argc && !dashes; k++)
        dashes = !strcmp(argv[k], "--");
    if (v && v[0] != '-' && (v[0] < '0' || v[0] > '9') && dashes)
        return fprintf(stderr, "recorderd run: --sample %s: HZ is samples per second, 1 to "
                               "1000\n", v), 1;
    if (!v || v[0] < '0' || v[0] > '9')
        return 0;
    long n = rd_cli_whole(v, 1, 1000);
    ++*i;
    if (n < 0)
        return fprintf(stderr, "recorderd run: --sample takes samples per second, 1 to 1000\n"), 1;
    *hz = (unsigned)n;
    return 0;
}

/* run's --lines exact|sample into *lines: 2 sample, 1 exact; 0, or 1
 * after saying why not. */
static int lines_opt(int argc, char **argv, int *i, int *lines)
{
    const char *v = rd_cli_optval(argc, argv, i);
    if (v && (!strcmp(v, "exact") || !strcmp(v, "sample"))) {
        *lines = !strcmp(v, "sample") ? 2 : 1;
        return 0;
    }
    if (v)
        fprintf(stderr, "recorderd run: --lines %s: exact or sample\n", v);
    return 1;
}

/* run's options into o, and so those of its sessions. Returns the index of
 * the command in argv plus 1 (argc + 1: none), or minus the exit status
 * (0: --help): the command may be argv[0] (run lua5.1 app.lua), so its index
 * alone could not be told from --help's 0. */
static int parse_run(int argc, char **argv, rd_run_opts *o, rd_session_opts *so)
{
    int i = 0;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        const char *a = argv[i];
        int b = rd_cli_session_opt("run", argc, argv, &i, so);
        const char **val = !strcmp(a, "--ring") ? &o->ring : !strcmp(a, "--mode") ? &o->mode : NULL;
        if (b < 0 || (val && !(*val = rd_cli_optval(argc, argv, &i))))
            return -2;
        if (b || val)
            continue;
        if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
            o->quiet = 1;
        else if (!strcmp(a, "--no-trace"))
            o->no_trace = 1;
        else if (!strcmp(a, "--lines") && lines_opt(argc, argv, &i, &o->lines_asked))
            return -2;
        else if (!strcmp(a, "--lines"))
            continue;
        else if (!strcmp(a, "--sample") && sample_opt(argc, argv, &i, &o->sample_hz))
            return -2;
        else if (!strcmp(a, "--sample"))
            continue;
        else if (rd_cli_is_help(a))
            return -rd_help("run", stdout);
        else if (a[0] != '-' && rd_cli_expanded_pattern("run", argv, i))
            return -2;
        else if (a[0] != '-')
            break; /* the command, without "--" */
        else
            return -rd_cli_unknown("run", a);
    }
    return (i < argc && !strcmp(argv[i], "--") ? i + 1 : i) + 1;
}

/* dir in buf (cap bytes) without its trailing '/'s, then, each time, its
 * last component cut: 1 while something is left. */
static int path_up(char *buf, size_t cap, const char *dir)
{
    if (dir)
        snprintf(buf, cap, "%s", dir);
    else if (strrchr(buf, '/'))
        *strrchr(buf, '/') = 0;
    else
        *buf = 0;
    for (size_t n = strlen(buf); n > 1 && buf[n - 1] == '/'; n--)
        buf[n - 1] = 0;
    return *buf != 0;
}

/* How many levels of --out dir are yet to be made (its parents too: -o
 * new/sub makes both). A command that made them and ends with nothing in
 * them (refused, a script that did not load) removes them again, rather
 * than leave empty directories behind: rmdir removes only an empty one. */
static int out_missing(const char *dir)
{
    char buf[PATH_MAX];
    struct stat st;
    int n = 0;
    for (int ok = path_up(buf, sizeof buf, dir); ok && lstat(buf, &st) < 0 && errno == ENOENT;
         ok = path_up(buf, sizeof buf, NULL))
        n++;
    return n;
}

/* The coverage rows -f named, but report.html, which shows time without
 * coverage too. */
static uint32_t cov_asked(const rd_session_opts *so)
{
    uint32_t cov = so->formats_asked & rd_format_rows(RD_FMT_COV) & ~rd_format_rows(RD_FMT_NOFILE);
    const rd_format *html = rd_format_find("html");
    if (html)
        cov &= ~(1u << (unsigned)(html - rd_formats));
    return cov;
}

/* run --sample with an option of a trace: a sampler has no coverage and no
 * time source of its own to choose. 0, or 2 after saying why. */
static int check_sample_opts(const rd_run_opts *o, const rd_session_opts *so)
{
    uint32_t cov = cov_asked(so), all = rd_format_rows(0) & ~rd_format_rows(RD_FMT_NOFILE);
    const char *why = !o->sample_hz  ? NULL
                      : so->coverage ? "--coverage: a sampler sees no coverage (run "
                                       "--coverage traces exactly, with no clock)"
                      : so->time_given ? "--time: a sampler has its own time (run's default "
                                         "times an exact trace by ticks)"
                      : cov && so->formats_asked != all ? "--format: a sampled session has no "
                                                          "coverage reports"
                      : so->cov.ninclude || so->cov.nexclude ? "--include, --exclude: they "
                                                               "filter coverage, which a "
                                                               "sampler has none of"
                                                             : NULL;
    if (why)
        fprintf(stderr, "recorderd run: --sample and %s\n", why);
    return why ? 2 : 0;
}

/* Whether what so asks for needs every line: coverage (--coverage, its
 * reports, --include, --exclude) or --memory. */
static int every_line(const rd_session_opts *so)
{
    return so->coverage || cov_asked(so) || so->cov.ninclude || so->cov.nexclude || so->memory;
}

/* run's time source and lines into so->sample_time and o->lines_sampled.
 * By default sampled time and lines by sample, the profile that agrees
 * with the plain run (doc/benchmarks.md); every line counted (exact time
 * unless --time sample) where --lines exact, --time exact, coverage
 * (--coverage, its reports, --include, --exclude), --memory or a backend
 * (-b, unless --time is given) asks for it. 0, or 2 after saying why not. */
static int pick_time(rd_run_opts *o, rd_session_opts *so)
{
    if (so->clock_given && !o->sample_hz) /* --clock asks for sampled time, as --time sample */
        so->time_given = so->sample_time = 1;
    int want = o->lines_asked;
    /* a streaming backend (a timeline, a user's) reads each event's time */
    int exact = want == 1 || (so->time_given && !so->sample_time) || every_line(so) ||
                (so->nbackends && !so->time_given);
    if (want == 2 && exact)
        return fprintf(stderr, "recorderd run: --lines sample: %s\n",
                       so->coverage ? "--coverage counts every line"
                       : so->memory ? "--memory traces every line"
                       : so->nbackends && !so->time_given ? "a backend reads each event's time "
                                                            "(--time exact)"
                       : so->time_given && !so->sample_time ? "needs --time sample (exact time "
                                                              "counts every line)"
                                    : "coverage reports need every line (--lines exact)"),
               2;
    if (o->sample_hz)
        return want ? (fprintf(stderr, "recorderd run: --sample and --lines: a sampler has "
                                       "its own lines\n"), 2) : 0;
    o->lines_sampled = !exact;
    if (!exact && !so->time_given)
        so->sample_time = 1;
    return 0;
}

/* listen and attach --time sample: lines by sample too, as run's default,
 * unless what is asked needs every line (as pick_time says for run).
 * attach (dflt): sampled time by default, as run, where nothing asks for
 * every line or each event's time (a backend). */
static void live_lines(rd_session_opts *so, int dflt)
{
    if (so->clock_given) /* --clock asks for sampled time, as --time sample */
        so->time_given = so->sample_time = 1;
    int every = every_line(so);
    if (dflt && !so->time_given && !every && !so->nbackends)
        so->sample_time = 1;
    so->lines_sampled = so->sample_time && !every;
}

/* The made levels of dir removed where empty (out_missing). */
static int unmake_out(const char *dir, int made, int rc)
{
    char buf[PATH_MAX];
    for (int ok = path_up(buf, sizeof buf, dir); ok && made-- > 0 && rmdir(buf) == 0;
         ok = path_up(buf, sizeof buf, NULL))
        ;
    return rc;
}

static int cmd_run(int argc, char **argv)
{
    rd_run_opts o = {0};
    rd_session_opts so = {.out = g_default_out};
    int i = parse_run(argc, argv, &o, &so) - 1;
    if (i < 0)
        return -(i + 1);
    if (i >= argc) {
        fprintf(stderr, "recorderd run: no command given: recorderd run [OPTIONS] [--] CMD "
                        "[ARGS...], e.g. recorderd run -- lua5.1 app.lua\n");
        return 2;
    }
    o.out = so.out;
    if (check_sample_opts(&o, &so) || rd_cli_session_check("run", &so) || pick_time(&o, &so))
        return 2;
    if (so.memory && o.sample_hz) /* a sampled LuaJIT writes from its profiler, no hook */
        return fprintf(stderr, "recorderd run: --memory (and -f heap, which needs it) traces "
                               "exactly: not with --sample\n"), 2;
    int made = out_missing(o.out), e = check_run_opts(&o, so.out == g_default_out);
    if (e)
        return unmake_out(o.out, made, e);
    o.backends = so.backends;
    o.nbackends = so.nbackends;
    o.formats = so.formats;
    o.coverage = so.coverage;
    o.cov = so.cov;
    o.sample_time = so.sample_time;
    o.memory = so.memory;
    o.wall = so.wall;
    o.outside = &rd_outside_sampler;
    return unmake_out(o.out, made, rd_run(&o, argv + i));
}

/* listen: idle after stop. serve --fd (once): idle as soon as its one
 * connection is gone, even if it never became a session (a refused hello):
 * a private recorder must not outlive its program. */
static void stop_when_idle(rd_server *srv)
{
    if (!srv->stopping && !srv->once)
        return;
    if (srv->ud) /* listen --http: its waiting profiles are given up */
        rd_http_pprof_close(srv->ud);
    rd_server_close(srv);
}

/* listen --http ADDR [--http-token-file FILE]: the pprof endpoint on the
 * daemon's loop. 0 or 1. */
static int serve_http(rd_server *srv, rd_http_pprof *hp, const char *spec, const char *token)
{
    char err[512];
    if (rd_http_pprof_start(hp, srv, spec, srv->hello_ms, token, err, sizeof err)) {
        fprintf(stderr, "recorderd listen: %s\n", rd_printable(err, err, sizeof err));
        return 1;
    }
    srv->ud = hp;
    fprintf(stderr, "recorderd: pprof endpoint on http://%s/debug/pprof/profile (%s)\n",
            hp->http.addr,
            !token ? "for this user only"
            : hp->http.loopback ? "for this user, and clients with the bearer token"
                                : "for clients with the bearer token, and this user on loopback");
    return 0;
}

static int serve(const char *path, int fd, rd_session_opts *so, int once, unsigned hello_ms,
                 const char *http, const char *token)
{
    rd_server srv;
    rd_http_pprof hp;
    char err[512];
    uv_loop_t *loop = uv_default_loop();
    rd_session_malloc_opts();
    if (rd_server_init(&srv, loop, so, err, sizeof err)) {
        fprintf(stderr, "recorderd: %s\n", err);
        return 1;
    }
    srv.once = once;
    srv.on_idle = stop_when_idle;
    srv.outside_ops = &rd_outside_sampler;
    srv.hello_ms = hello_ms;
    if (path && rd_server_listen(&srv, path, err, sizeof err)) {
        fprintf(stderr, "recorderd: %s\n", rd_printable(err, err, sizeof err));
        rd_server_close(&srv);
        uv_run(loop, UV_RUN_DEFAULT);
        return 1;
    }
    if (path) { /* listen: a daemon outlives what is removed under it */
        rd_server_watch_socket(&srv);
        srv.remake_out = 1;
    }
    if (http && serve_http(&srv, &hp, http, token)) {
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

/* --http's rule: an address others can reach needs a token, and a token
 * file must be one only we can read. 0, or 1 having said why. */
static int http_auth(const char *http, const char *token_file, char *token, size_t cap)
{
    char err[512];
    if (token_file && !http) {
        fprintf(stderr, "recorderd listen: --http-token-file is for --http ADDR\n");
        return 1;
    }
    if (http && !token_file && !rd_http_addr_loopback(http)) {
        fprintf(stderr, "recorderd listen: --http %s is not a loopback address: others can "
                        "connect to it, so give --http-token-file FILE (a secret its clients "
                        "send as 'Authorization: Bearer TOKEN'), or listen on 127.0.0.1\n",
                http);
        return 1;
    }
    if (token_file && rd_http_token_load(token_file, token, cap, err, sizeof err)) {
        fprintf(stderr, "recorderd listen: %s\n", rd_printable(err, err, sizeof err));
        return 1;
    }
    return 0;
}

static int cmd_listen(int argc, char **argv)
{
    char path[PATH_MAX];
    rd_session_opts so = {.out = g_default_out};
    long hello_s = RD_HELLO_MS / 1000;
    const char *http = NULL, *token_file = NULL;
    static char token[RD_HTTP_TOKEN_MAX]; /* the daemon's, for as long as it serves */
    lt_ctl_default_path(path, sizeof path);
    for (int i = 0; i < argc; i++) {
        const char *v;
        int b = rd_cli_session_opt("listen", argc, argv, &i, &so);
        if (b < 0)
            return 2;
        if (b)
            continue;
        if (rd_cli_is_help(argv[i]))
            return rd_help("listen", stdout);
        if (!strcmp(argv[i], "--no-trace"))
            so.no_trace = 1;
        else if (strcmp(argv[i], "--socket") && strcmp(argv[i], "--hello-timeout") &&
                 strcmp(argv[i], "--http") && strcmp(argv[i], "--http-token-file"))
            return rd_cli_unknown("listen", argv[i]);
        else if (!(v = rd_cli_optval(argc, argv, &i)))
            return 2;
        else if (!strcmp(argv[i - 1], "--http-token-file"))
            token_file = v;
        else if (!strcmp(argv[i - 1], "--http") && !rd_http_addr_ok(v)) {
            fprintf(stderr, "recorderd listen: --http %s: give PORT, IP:PORT or [IPv6]:PORT\n", v);
            return 2;
        } else if (!strcmp(argv[i - 1], "--http"))
            http = v;
        else if (!strcmp(argv[i - 1], "--socket"))
            snprintf(path, sizeof path, "%s", v);
        else if ((hello_s = rd_cli_whole(v, 1, 3600)) < 0) {
            fprintf(stderr, "recorderd listen: --hello-timeout %s: whole seconds, 1 to 3600\n", v);
            return 2;
        }
    }
    /* rings of programs killed before a recorder took them: a name never
     * used again (NAME.PID) is never reclaimed by a program otherwise */
    if (rd_cli_session_check("listen", &so) || http_auth(http, token_file, token, sizeof token))
        return 2;
    live_lines(&so, 0);
    lt_ring_sweep();
    int made = out_missing(so.out); /* a listen refused (another listens) leaves none */
    if (check_out("listen", so.out, so.out == g_default_out))
        return unmake_out(so.out, made, 2);
    int rc = serve(path, -1, &so, 0, (unsigned)hello_s * 1000, http, token_file ? token : NULL);
    return rc ? unmake_out(so.out, made, rc) : rc;
}

/* status and stop: [--socket PATH] [--json] */
static int cmd_client(int argc, char **argv, int stop)
{
    char path[PATH_MAX];
    int json = 0, given = 0;
    lt_ctl_default_path(path, sizeof path);
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (rd_cli_is_help(argv[i]))
            return rd_help(stop ? "stop" : "status", stdout);
        if (!strcmp(argv[i], "--json") && !stop)
            json = 1;
        else if (strcmp(argv[i], "--socket"))
            return rd_cli_unknown(stop ? "stop" : "status", argv[i]);
        else if ((v = rd_cli_optval(argc, argv, &i)))
            given = snprintf(path, sizeof path, "%s", v) >= 0;
        else
            return 2;
    }
    if (stop)
        return rd_client_stop(path);
    return json || given ? rd_client_status(path, json) : rd_client_status_all(path);
}

static int cmd_serve(int argc, char **argv)
{
    rd_session_opts so = {.out = "luatrace-out"};
    int fd = -1;
    for (int i = 0; i < argc; i++) {
        int b = rd_cli_session_opt("serve", argc, argv, &i, &so);
        if (b < 0)
            return 2;
        if (b)
            continue;
        if (!strcmp(argv[i], "--summary"))
            so.summary = 1;
        else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
            so.summary = 0;
        else if (rd_cli_is_help(argv[i]))
            return rd_help("serve", stdout);
        else if (strcmp(argv[i], "--fd"))
            return rd_cli_unknown("serve", argv[i]);
        else if ((fd = (int)rd_cli_whole(rd_cli_optval(argc, argv, &i), 0, INT_MAX)) < 0)
            return fprintf(stderr, "recorderd serve: --fd takes a file descriptor number\n"), 2;
    }
    if (fd < 0)
        return fprintf(stderr, "recorderd serve: give --fd N (see recorderd serve --help)\n"), 2;
    struct stat st; /* libuv aborts on a pipe of anything else */
    if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
        fprintf(stderr, "recorderd serve: fd %d is not a socket\n", fd);
        return 2;
    }
    return serve(NULL, fd, &so, 1, RD_HELLO_MS, NULL, NULL);
}

/* --duration or --timeout's value, in ms, into *ms. Returns 0 or 2. */
static int seconds_opt(const char *what, int argc, char **argv, int *i, unsigned *ms)
{
    const char *a = argv[*i];
    long v = rd_cli_seconds_ms(rd_cli_optval(argc, argv, i));
    if (v <= 0)
        return fprintf(stderr, "recorderd %s: %s takes seconds > 0\n", what, a), 2;
    *ms = (unsigned)v;
    return 0;
}

/* --rate HZ of top and record: samples per second, 1 to 1000. */
static int rate_opt(const char *what, int argc, char **argv, int *i, unsigned *hz)
{
    long v = rd_cli_whole(rd_cli_optval(argc, argv, i), 1, 1000);
    if (v < 0)
        return fprintf(stderr, "recorderd %s: --rate takes samples per second, 1 to 1000\n",
                       what), 2;
    *hz = (unsigned)v;
    return 0;
}

/* One argument of attach, dump or top (files: attach). Returns 0, or the
 * exit status (-1: --help, 0). */
static int attach_arg(const char *what, int files, int argc, char **argv, int *i,
                      rd_attach_opts *o)
{
    const char *a = argv[*i];
    int b = files ? rd_cli_session_opt(what, argc, argv, i, &o->so) : 0;
    if (b)
        return b < 0 ? 2 : 0;
    if ((!strcmp(a, "--duration") || !strcmp(a, "-d")) && strcmp(what, "dump"))
        return seconds_opt(what, argc, argv, i, &o->duration_ms);
    if (!strcmp(a, "--timeout"))
        return seconds_opt(what, argc, argv, i, &o->timeout_ms);
    if (files && (!strcmp(a, "--quiet") || !strcmp(a, "-q"))) /* as run and record */
        return o->so.summary = 0, 0;
    if (files && !strcmp(a, "--no-trace")) /* as run and listen */
        return o->so.no_trace = 1, 0;
    if (!strcmp(a, "--rate") && !strcmp(what, "top"))
        return rate_opt(what, argc, argv, i, &o->hz);
    if (!strcmp(a, "--stop") && !strcmp(what, "top"))
        return o->stop = 1, 0;
    if (rd_cli_is_help(a))
        return -1;
    if (a[0] == '-' || o->pid)
        return rd_cli_unknown(what, a);
    if ((o->pid = (pid_t)rd_cli_whole(a, 1, INT_MAX)) < 0)
        return fprintf(stderr, "recorderd %s: %s is not a process id\n", what, a), 2;
    return 0;
}

/* 0, or 1 after saying so when pid names a thread of another process (a
 * TID, as top -H shows): /proc answers for it, but its marker, its state
 * and everything recorderd loads belong to the process, and an attach
 * went as far as loading luatrace.so before it failed. */
static int not_a_process(const char *what, pid_t pid)
{
    char buf[2048];
    const char *t = rd_proc_read((int)pid, "status", buf, sizeof buf) ? strstr(buf, "\nTgid:")
                                                                     : NULL;
    long tgid = t ? strtol(t + 6, NULL, 10) : 0;
    if (tgid <= 0 || tgid == pid)
        return 0;
    fprintf(stderr, "recorderd %s: %d is a thread of process %ld, not a process: give %ld\n",
            what, (int)pid, tgid, tgid);
    return 1;
}

/* attach, dump, top: PID [options] */
static int cmd_attach(int argc, char **argv, const char *what)
{
    rd_attach_opts o = {.timeout_ms = 10000, .grace_ms = 5000, .hz = 100};
    int dump = !strcmp(what, "dump"), top = !strcmp(what, "top");
    o.so = (rd_session_opts){.out = "luatrace-out", .summary = !dump && !top};
    int timeout_given = 0;
    for (int i = 0; i < argc; i++) {
        timeout_given |= !strcmp(argv[i], "--timeout");
        int e = attach_arg(what, !dump && !top, argc, argv, &i, &o);
        if (e)
            return e < 0 ? rd_help(what, stdout) : e;
    }
    /* attach -d 30 of a server idle between requests: 30 s from now, its
     * first request waited for in them (not --timeout's 10 s) */
    if (!dump && !top && o.duration_ms && !timeout_given) {
        o.window = 1;
        o.timeout_ms = o.duration_ms;
    }
    if (!o.pid)
        return fprintf(stderr, "recorderd %s: give the process id\n", what), 2;
    if (!dump && !top && rd_cli_session_check(what, &o.so))
        return 2;
    if (not_a_process(what, o.pid))
        return 1;
    live_lines(&o.so, !dump);
    o.dump = dump;
    o.keys = top;
    o.so.no_files = dump || top;
    o.so.live = dump ? rd_attach_dump_view : top ? rd_attach_top_view : NULL;
    o.so.live_ms = 1000;
    int made = o.so.no_files ? 0 : out_missing(o.so.out);
    return unmake_out(o.so.out, made, rd_attach(&o));
}

/* One argument of heap (its value taken too). 0, an exit status, or -1
 * for --help. */
static int heap_arg(int argc, char **argv, int *i, rd_heap_opts *o)
{
    const char *a = argv[*i];
    unsigned ms = 0;
    long v;
    if (!strcmp(a, "--diff") || !strcmp(a, "--timeout")) {
        int e = seconds_opt("heap", argc, argv, i, &ms);
        *(!strcmp(a, "--diff") ? &o->diff_s : &o->timeout_s) = (ms + 999) / 1000;
        return e;
    }
    if (!strcmp(a, "--top")) {
        if ((v = rd_cli_whole(rd_cli_optval(argc, argv, i), 1, 64)) < 0)
            return fprintf(stderr, "recorderd heap: --top takes rows, 1 to 64\n"), 2;
        return o->top = (unsigned)v, 0;
    }
    if (!strcmp(a, "--max-objects")) {
        if ((v = rd_cli_whole(rd_cli_optval(argc, argv, i), 1000, 1L << 30)) < 0)
            return fprintf(stderr, "recorderd heap: --max-objects takes 1000 to 2^30\n"), 2;
        return o->max_objects = (unsigned long)v, 0;
    }
    if (!strcmp(a, "--stop"))
        return o->stop = 1, 0;
    if (rd_cli_is_help(a))
        return -1;
    if (a[0] == '-' || o->pid)
        return rd_cli_unknown("heap", a);
    if ((o->pid = (pid_t)rd_cli_whole(a, 1, INT_MAX)) < 0)
        return fprintf(stderr, "recorderd heap: %s is not a process id\n", a), 2;
    return 0;
}

/* heap: PID [options] */
static int cmd_heap(int argc, char **argv)
{
    rd_heap_opts o = {.timeout_s = 30, .max_objects = 4000000, .top = 10};
    for (int i = 0; i < argc; i++) {
        int e = heap_arg(argc, argv, &i, &o);
        if (e)
            return e < 0 ? rd_help("heap", stdout) : e;
    }
    if (!o.pid)
        return fprintf(stderr, "recorderd heap: give the process id\n"), 2;
    if (not_a_process("heap", o.pid))
        return 1;
    return rd_heap(&o, stdout);
}

/* One argument of record (its value taken too). 0, an exit status, or -1
 * for --help. */
static int record_arg(int argc, char **argv, int *i, rd_record_opts *o)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--duration") || !strcmp(a, "-d"))
        return seconds_opt("record", argc, argv, i, &o->duration_ms);
    if (!strcmp(a, "--rate"))
        return rate_opt("record", argc, argv, i, &o->hz);
    if (!strcmp(a, "--stop"))
        return o->stop = 1, 0;
    if (rd_cli_is_out(a))
        return (o->so.out = rd_cli_optval(argc, argv, i)) ? 0 : 2;
    if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
        return o->so.summary = 0, 0;
    if (rd_cli_is_help(a))
        return -1;
    if (a[0] == '-' || o->pid)
        return rd_cli_unknown("record", a);
    if ((o->pid = (pid_t)rd_cli_whole(a, 1, INT_MAX)) < 0)
        return fprintf(stderr, "recorderd record: %s is not a process id\n", a), 2;
    return 0;
}

/* record: PID [options] */
static int cmd_record(int argc, char **argv)
{
    rd_record_opts o = {.hz = 100};
    o.so = (rd_session_opts){.out = "luatrace-out", .summary = 1};
    for (int i = 0; i < argc; i++) {
        int e = record_arg(argc, argv, &i, &o);
        if (e)
            return e < 0 ? rd_help("record", stdout) : e;
    }
    if (!o.pid)
        return fprintf(stderr, "recorderd record: give the process id\n"), 2;
    if (not_a_process("record", o.pid))
        return 1;
    o.so.sample_hz = o.hz;
    int made = out_missing(o.so.out);
    return unmake_out(o.so.out, made, rd_record(&o));
}

/* A standard descriptor closed when recorderd starts (`recorderd run ...
 * >&-`) would be the number of the first file it opens: libuv aborts when
 * it closes such a one (uv__close asserts), and run's command would get
 * that file as its stdout. Each is held by /dev/null opened the other way
 * (a read of stdin or a write to stdout or stderr fails with EBADF, as on
 * the closed descriptor), which run's command inherits as it is. */
static void hold_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        int n = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (n > fd) { /* a lower one was taken meanwhile: cannot be */
            dup2(n, fd);
            close(n);
        }
    }
}

static int command(int argc, char **argv);

/* What a command printed reached stdout: a dump or a heap report saved to
 * a full disk (> /dev/full, ENOSPC) exited 0 with nothing saved. A pipe's
 * reader that had enough (| head) is its own business, not an error. */
static int stdout_written(int status)
{
    struct stat st;
    errno = 0;
    int flushed = fflush(stdout) != EOF, e = errno; /* an earlier write's errno is lost */
    if ((flushed && !ferror(stdout)) ||
        (fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))))
        return status;
    fprintf(stderr, "recorderd: cannot write the output on stdout%s%s\n", e ? ": " : "",
            e ? strerror(e) : "");
    return status ? status : 1;
}

int main(int argc, char **argv)
{
    hold_std_fds();
    if (argc < 2)
        return rd_help_usage(stderr), 2;
    int status = command(argc, argv);
    /* report says which of its outputs failed, stdout too */
    return strcmp(argv[1], "report") ? stdout_written(status) : status;
}

static int command(int argc, char **argv)
{
    rd_guard_init();
    const char *c = argv[1];
    rd_cli_set_command(!strcmp(c, "--listen") ? "listen" : c[0] == '-' ? "" : c);
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
        return rd_cmd_report(argc - 2, argv + 2);
    if (!strcmp(c, "attach") || !strcmp(c, "dump") || !strcmp(c, "top"))
        return cmd_attach(argc - 2, argv + 2, c);
    if (!strcmp(c, "record"))
        return cmd_record(argc - 2, argv + 2);
    if (!strcmp(c, "heap"))
        return cmd_heap(argc - 2, argv + 2);
    if (!strcmp(c, "env")) {
        if (argc > 2)
            return rd_cli_is_help(argv[2]) ? rd_help("env", stdout) : rd_cli_unknown("env", argv[2]);
        return rd_run_env();
    }
    /* -V, -v and version as other tools take them: a first try at the
     * version was told that options go after the command */
    if (!strcmp(c, "--version") || (argc == 2 && (!strcmp(c, "-V") || !strcmp(c, "-v") ||
                                                  !strcmp(c, "version")))) {
        printf("recorderd %s\n", RD_VERSION);
        return 0;
    }
    if (!strcmp(c, "--help") || !strcmp(c, "-h"))
        return rd_help_usage(stdout), 0;
    /* git's and go's habit: `recorderd help` was "did you mean heap?" */
    if (!strcmp(c, "help"))
        return argc > 2 ? rd_help(argv[2], stdout) : (rd_help_usage(stdout), 0);
    const char *meant = rd_help_closest(c); /* one line, not the whole usage */
    char shown[128];
    rd_printable(c, shown, sizeof shown);
    if (!meant && c[0] == '-') /* recorderd -o DIR run ... */
        fprintf(stderr, "recorderd: unknown command %s: options go after the command "
                        "(recorderd run -o DIR -- lua5.1 app.lua)\n", shown);
    else if (!meant && strstr(c, "lua")) /* recorderd lua5.1 app.lua */
        fprintf(stderr, "recorderd: unknown command %s: to trace it, recorderd run -- %s%s\n",
                shown, shown, argc > 2 ? " ..." : "");
    else
        fprintf(stderr, "recorderd: unknown command %s%s%s%s (recorderd --help lists them)\n",
                shown, meant ? ": did you mean " : "", meant ? meant : "", meant ? "?" : "");
    return 2;
}
