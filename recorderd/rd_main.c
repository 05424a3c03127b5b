/* recorderd: command line. run / listen / serve / report. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rd_client.h"
#include "rd_replay.h"
#include "rd_report.h"
#include "rd_run.h"
#include "rd_server.h"

#define RD_VERSION "0.1.0"

static void usage(FILE *f)
{
    fprintf(f,
            "usage:\n"
            "  recorderd run [--out DIR] [--quiet] [--ring SIZE] [--mode wait|drop] -- CMD [ARGS...]\n"
            "  recorderd listen [--socket PATH] [--out DIR]      (also: recorderd --listen)\n"
            "  recorderd report SESSION_DIR|TRACE_FILE [--format profile|annotate|folded|none]\n"
            "                   [--weight time|lines|calls] [-o FILE]\n"
            "  recorderd status [--socket PATH] [--json]\n"
            "  recorderd stop [--socket PATH]\n"
            "  recorderd serve --fd N [--out DIR] [--summary|--quiet]   (used by the collector)\n"
            "  recorderd --version | --help\n");
}

/* Returns the value of option argv[*i] (advancing), or NULL. */
static const char *optval(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "recorderd: %s needs a value\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

static int cmd_run(int argc, char **argv)
{
    rd_run_opts o = {.out = "luatrace-out"};
    int i = 0;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
            o.quiet = 1;
        else if (!strcmp(a, "--out") && (o.out = optval(argc, argv, &i)))
            ;
        else if (!strcmp(a, "--ring") && (o.ring = optval(argc, argv, &i)))
            ;
        else if (!strcmp(a, "--mode") && (o.mode = optval(argc, argv, &i)))
            ;
        else if (a[0] != '-')
            break; /* the command, without "--" */
        else
            return usage(stderr), 2;
    }
    if (i < argc && !strcmp(argv[i], "--"))
        i++;
    if (i >= argc) {
        fprintf(stderr, "recorderd run: no command given\n");
        return 2;
    }
    if (o.mode && strcmp(o.mode, "wait") && strcmp(o.mode, "drop")) {
        fprintf(stderr, "recorderd run: --mode is wait or drop\n");
        return 2;
    }
    return rd_run(&o, argv + i);
}

static void stop_when_idle(rd_server *srv)
{
    if (srv->stopping)
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
    rd_session_opts so = {"luatrace-out", 0};
    rd_server_default_path(path, sizeof path);
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "--socket") && (v = optval(argc, argv, &i)))
            snprintf(path, sizeof path, "%s", v);
        else if (!strcmp(argv[i], "--out") && (v = optval(argc, argv, &i)))
            so.out = v;
        else
            return usage(stderr), 2;
    }
    return serve(path, -1, &so, 0);
}

/* status and stop: [--socket PATH] [--json] */
static int cmd_client(int argc, char **argv, int stop)
{
    char path[PATH_MAX];
    int json = 0;
    rd_server_default_path(path, sizeof path);
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "--socket") && (v = optval(argc, argv, &i)))
            snprintf(path, sizeof path, "%s", v);
        else if (!strcmp(argv[i], "--json") && !stop)
            json = 1;
        else
            return usage(stderr), 2;
    }
    return stop ? rd_client_stop(path) : rd_client_status(path, json);
}

static int cmd_serve(int argc, char **argv)
{
    rd_session_opts so = {"luatrace-out", 0};
    int fd = -1;
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "--fd") && (v = optval(argc, argv, &i)))
            fd = atoi(v);
        else if (!strcmp(argv[i], "--out") && (v = optval(argc, argv, &i)))
            so.out = v;
        else if (!strcmp(argv[i], "--summary"))
            so.summary = 1;
        else if (!strcmp(argv[i], "--quiet"))
            so.summary = 0;
        else
            return usage(stderr), 2;
    }
    if (fd < 0)
        return usage(stderr), 2;
    return serve(NULL, fd, &so, 1);
}

typedef struct report_opts {
    const char *path, *format, *weight, *out;
} report_opts;

static int parse_report(int argc, char **argv, report_opts *o)
{
    *o = (report_opts){NULL, "profile", "time", NULL};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--format") || !strcmp(a, "-f")) {
            if (!(o->format = optval(argc, argv, &i)))
                return -1;
        } else if (!strcmp(a, "--weight") || !strcmp(a, "-w")) {
            if (!(o->weight = optval(argc, argv, &i)))
                return -1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!(o->out = optval(argc, argv, &i)))
                return -1;
        } else if (a[0] != '-' && !o->path) {
            o->path = a;
        } else {
            fprintf(stderr, "recorderd report: unknown argument %s\n", a);
            return -1;
        }
    }
    if (!o->path)
        fprintf(stderr, "recorderd report: give a session directory or a trace file\n");
    return o->path ? 0 : -1;
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

static int write_report(const report_opts *o, rd_model *m)
{
    enum rd_weight w;
    char err[512] = "";
    if (weight_of(o->weight, &w)) {
        fprintf(stderr, "recorderd report: --weight is time, lines or calls\n");
        return 2;
    }
    if (!strcmp(o->format, "annotate") && o->out) {
        if (rd_report_annotate(m, o->out, NULL, err, sizeof err)) {
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
    int e;
    if (!strcmp(o->format, "none"))
        e = fprintf(out, "%llu events\n", (unsigned long long)m->events) < 0;
    else if (!strcmp(o->format, "folded"))
        e = rd_report_folded(m, w, out);
    else if (!strcmp(o->format, "annotate"))
        e = rd_report_annotate_stream(m, NULL, out);
    else
        e = rd_report_profile(m, NULL, NULL, 0, out);
    if ((out != stdout && fclose(out)) || (out == stdout && fflush(out)) || e) {
        fprintf(stderr, "recorderd report: write error\n");
        return 1;
    }
    return 0;
}

static int cmd_report(int argc, char **argv)
{
    report_opts o;
    if (parse_report(argc, argv, &o))
        return 2;
    if (strcmp(o.format, "profile") && strcmp(o.format, "folded") && strcmp(o.format, "annotate") &&
        strcmp(o.format, "none")) {
        fprintf(stderr, "recorderd report: unknown format %s (profile, annotate, folded, none)\n",
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
    int e = rd_replay_path(o.path, &st, err, sizeof err);
    int rc = 1;
    if (e)
        fprintf(stderr, "recorderd report: %s: %s\n", o.path, err);
    else {
        if (err[0])
            fprintf(stderr, "recorderd report: warning: %s\n", err);
        rc = write_report(&o, &m);
    }
    rd_stack_free(&st);
    rd_model_free(&m);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr), 2;
    rd_session_guard_init();
    const char *c = argv[1];
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
