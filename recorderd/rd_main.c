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
#include "rd_cli.h"
#include "rd_client.h"
#include "rd_cmd_report.h"
#include "rd_formats.h"
#include "rd_run.h"
#include "rd_server.h"
#include "rd_util.h"

static void usage(FILE *f)
{
    char views[256], cov[128];
    rd_format_names(views, sizeof views, "|", RD_FMT_MERGE, 0);
    rd_format_names(cov, sizeof cov, "|", RD_FMT_MERGE, RD_FMT_MERGE);
    fprintf(f,
            "usage:\n"
            "  recorderd run [--out DIR] [--quiet] [--ring SIZE] [--mode wait|drop]\n"
            "                [--no-trace] [--backend SPEC]... -- CMD [ARGS...]\n"
            "  recorderd listen [--socket PATH] [--out DIR] [--no-trace] [--backend SPEC]...\n"
            "                                                  (also: recorderd --listen)\n"
            "  recorderd report SESSION_DIR|TRACE_FILE [--format %s]\n"
            "                   [--weight time|lines|calls] [-o FILE]\n"
            "  recorderd report SESSION_DIR|TRACE_FILE --format %s\n"
            "                   [--include PAT]... [--exclude PAT]... [--include-untested DIR]...\n"
            "                   [-o FILE]\n"
            "  recorderd report --merge SESSION... [--format %s] [-o FILE]\n"
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
            "(trace.speedscope.json), lua:FILE.lua (a user backend)\n",
            views, cov, cov);
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
        int b = rd_cli_backend(argc, argv, &i);
        if (!b)
            b = rd_cli_format("run", argc, argv, &i);
        if (b < 0)
            return 2;
        if (b)
            continue;
        const char **val = !strcmp(a, "--out")    ? &o.out
                           : !strcmp(a, "--ring") ? &o.ring
                           : !strcmp(a, "--mode") ? &o.mode
                                                  : NULL;
        if (val && !(*val = rd_cli_optval(argc, argv, &i)))
            return 2;
        if (val)
            continue;
        if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
            o.quiet = 1;
        else if (!strcmp(a, "--no-trace"))
            o.no_trace = 1;
        else if (rd_cli_is_help(a))
            return usage(stdout), 0;
        else if (a[0] != '-')
            break; /* the command, without "--" */
        else
            return rd_cli_unknown("run", a);
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
    o.backends = rd_cli_backends;
    o.nbackends = rd_cli_nbackends;
    o.formats = rd_cli_formats;
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
    rd_session_opts so = {.out = "luatrace-out", .backends = rd_cli_backends};
    lt_ctl_default_path(path, sizeof path);
    for (int i = 0; i < argc; i++) {
        const char *v;
        int b = rd_cli_backend(argc, argv, &i);
        if (!b)
            b = rd_cli_format("listen", argc, argv, &i);
        if (b < 0)
            return 2;
        so.nbackends = rd_cli_nbackends;
        so.formats = rd_cli_formats;
        if (b)
            continue;
        if (rd_cli_is_help(argv[i]))
            return usage(stdout), 0;
        if (!strcmp(argv[i], "--no-trace")) {
            so.no_trace = 1;
            continue;
        }
        if (strcmp(argv[i], "--socket") && strcmp(argv[i], "--out"))
            return rd_cli_unknown("listen", argv[i]);
        if (!(v = rd_cli_optval(argc, argv, &i)))
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
        if (rd_cli_is_help(argv[i]))
            return usage(stdout), 0;
        if (!strcmp(argv[i], "--json") && !stop)
            json = 1;
        else if (strcmp(argv[i], "--socket"))
            return rd_cli_unknown(stop ? "stop" : "status", argv[i]);
        else if ((v = rd_cli_optval(argc, argv, &i)))
            snprintf(path, sizeof path, "%s", v);
        else
            return 2;
    }
    return stop ? rd_client_stop(path) : rd_client_status(path, json);
}

static int cmd_serve(int argc, char **argv)
{
    rd_session_opts so = {.out = "luatrace-out", .backends = rd_cli_backends};
    int fd = -1;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int b = rd_cli_backend(argc, argv, &i);
        if (!b)
            b = rd_cli_format("serve", argc, argv, &i);
        if (b < 0)
            return 2;
        so.nbackends = rd_cli_nbackends;
        so.formats = rd_cli_formats;
        if (b)
            continue;
        if (!strcmp(argv[i], "--summary"))
            so.summary = 1;
        else if (!strcmp(argv[i], "--quiet"))
            so.summary = 0;
        else if (rd_cli_is_help(argv[i]))
            return usage(stdout), 0;
        else if (strcmp(argv[i], "--fd") && strcmp(argv[i], "--out"))
            return rd_cli_unknown("serve", argv[i]);
        else if (!(v = rd_cli_optval(argc, argv, &i)))
            return 2;
        else if (!strcmp(argv[i - 1], "--out"))
            so.out = v;
        else if ((fd = (int)rd_cli_whole(v, 0, INT_MAX)) < 0)
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

/* attach, dump, top: PID [options] */
static int cmd_attach(int argc, char **argv, const char *what)
{
    rd_attach_opts o = {.timeout_ms = 10000, .grace_ms = 5000};
    o.so = (rd_session_opts){.out = "luatrace-out", .backends = rd_cli_backends};
    int dump = !strcmp(what, "dump"), top = !strcmp(what, "top");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        long ms;
        int b = dump || top ? 0 : rd_cli_backend(argc, argv, &i);
        if (!b && !dump && !top)
            b = rd_cli_format(what, argc, argv, &i);
        if (b < 0)
            return 2;
        o.so.nbackends = rd_cli_nbackends;
        o.so.formats = rd_cli_formats;
        if (b)
            continue;
        if ((!strcmp(a, "--duration") || !strcmp(a, "-d")) && !dump) {
            if ((ms = rd_cli_seconds_ms(rd_cli_optval(argc, argv, &i))) <= 0)
                return fprintf(stderr, "recorderd %s: --duration takes seconds > 0\n", what), 2;
            o.duration_ms = (unsigned)ms;
        } else if (!strcmp(a, "--timeout")) {
            if ((ms = rd_cli_seconds_ms(rd_cli_optval(argc, argv, &i))) <= 0)
                return fprintf(stderr, "recorderd %s: --timeout takes seconds > 0\n", what), 2;
            o.timeout_ms = (unsigned)ms;
        } else if (!strcmp(a, "--out") && !dump && !top) {
            if (!(o.so.out = rd_cli_optval(argc, argv, &i)))
                return 2;
        } else if (a[0] != '-' && !o.pid) {
            if ((o.pid = (pid_t)rd_cli_whole(a, 1, INT_MAX)) < 0)
                return fprintf(stderr, "recorderd %s: %s is not a process id\n", what, a), 2;
        } else if (rd_cli_is_help(a)) {
            return usage(stdout), 0;
        } else {
            return rd_cli_unknown(what, a);
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
        return rd_cmd_report(argc - 2, argv + 2);
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
