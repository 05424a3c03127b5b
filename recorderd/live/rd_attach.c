/* rd_attach: `recorderd attach|dump|top PID`: trace a running process
 * whose collector listens (proto/lt_attach.h has the rendezvous). One
 * libuv loop serves the one connection; the session's drainer does the
 * rest, as for any traced process. */
#include "rd_attach.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lt_attach.h"
#include "lt_ctl.h"
#include "lt_ring.h"
#include "rd_outdir.h"
#include "rd_guard.h"
#include "rd_inject.h"
#include "rd_peek.h"
#include "rd_sample.h"
#include "rd_label.h"
#include "rd_replay.h"
#include "rd_server.h"
#include "rd_util.h"

typedef struct attach_ctx {
    rd_server srv;
    const rd_attach_opts *o;
    lt_attach_marker mk;
    uv_timer_t wait_timer, stop_timer, grace_timer, nudge_timer, flush_timer;
    uint64_t flush_seen; /* top: the session's events at the last flush_timer */
    unsigned long long t_detach; /* when the detach word was set */
    unsigned nudge_at; /* ms after t_detach of the next DETACH signal */
    uv_signal_t sigint, sigterm, sighup;
    uv_tty_t tty;
    int have_tty;
    int detaching, closed, started, warned;
    int asked_now; /* dump: DUMP_NOW sent */
    int outside; /* dump: nobody answered, read it from outside instead */
    int interrupted; /* Ctrl-C, SIGTERM or SIGHUP came */
    int unsent; /* a request the kernel refused to queue (EAGAIN): sent again */
    int req;    /* the first request (TRACE or DUMP): sent again (on_wait) */
    int said_full;
    unsigned long long t_signal; /* when the first request was tried */
    unsigned long long t_sent; /* when the last request was queued */
    unsigned long long t_first; /* when the first one was queued (0: not yet) */
} attach_ctx;

static char proc_state(pid_t pid);

/* Whether pid has a handler on signal signo (/proc's SigCgt). A program
 * that set its dormant collector's signal back to the default (a daemon's
 * start resets every signal) or to its own handler would be ended by a
 * request (the default action of a real-time signal), or have its
 * handler run: no request is sent then. 1 where /proc does not say. */
static int catches(pid_t pid, int signo)
{
    char buf[4096];
    size_t n = rd_proc_read(pid, "status", buf, sizeof buf - 1);
    buf[n < sizeof buf ? n : sizeof buf - 1] = 0;
    const char *p = strstr(buf, "\nSigCgt:");
    if (!p || signo < 1 || signo > 64)
        return 1;
    return (int)(strtoull(p + 8, NULL, 16) >> (signo - 1) & 1);
}

/* sigqueue of request v to the process, if it still has a handler on the
 * signal (catches): 0, or -errno (-ENOTCONN: it has none). */
static int send_req(const attach_ctx *a, union sigval v)
{
    if (!catches(a->o->pid, a->mk.signo))
        return -ENOTCONN;
    return sigqueue(a->o->pid, a->mk.signo, v) ? -errno : 0;
}

/* The checks before anything is sent: the process exists, is ours, and
 * has a dormant collector (a marker matching its start time). */
static int check_target(pid_t pid, lt_attach_marker *mk, char *err, size_t cap)
{
    char proc[64], marker[256];
    struct stat st;
    snprintf(proc, sizeof proc, "/proc/%d", (int)pid);
    if (pid <= 0 || stat(proc, &st) < 0) {
        snprintf(err, cap, "no process %d", (int)pid);
        return -ESRCH;
    }
    char state = proc_state(pid);
    if (!state || state == 'Z' || state == 'X') { /* not reaped yet: not Lua any more */
        snprintf(err, cap, "process %d exited", (int)pid);
        return -ESRCH;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, cap, "process %d belongs to uid %u: attach only to your own processes",
                 (int)pid, (unsigned)st.st_uid);
        return -EPERM;
    }
    lt_attach_marker_path(geteuid(), pid, marker, sizeof marker);
    int e = lt_attach_marker_read(marker, mk);
    if (e || mk->pid != pid || mk->start != lt_attach_start_time(pid)) {
        snprintf(err, cap,
                 "process %d has no dormant luatrace collector (start it with "
                 "LUATRACE_ATTACH=1 lua5.1 -lluatrace ..., or call "
                 "require(\"luatrace\").listen() or luatrace_listen(L))",
                 (int)pid);
        return -ENOENT;
    }
    if (!catches(pid, mk->signo)) {
        snprintf(err, cap,
                 "process %d no longer handles signal %d, which its dormant collector listens "
                 "on (the program set it back to its default, or to a handler of its own): a "
                 "request would end it, or run its handler; nothing sent",
                 (int)pid, mk->signo);
        return -ENOTCONN;
    }
    return 0;
}

static rd_session *the_session(attach_ctx *a)
{
    return a->srv.sessions;
}

/* Sends request req: 0, or -errno. A real-time signal carrying a value is
 * refused (EAGAIN), not merged, while the pending signals of the process's
 * user fill RLIMIT_SIGPENDING (a signal flood at any process of that user,
 * or the process's own lower limit): the request is kept and on_wait
 * sends it again, where it was lost and the attach waited until
 * --timeout for a request never made. */
static int ask(attach_ctx *a, int req)
{
    union sigval v = {.sival_int = req};
    int e = send_req(a, v);
    if (!e) {
        a->unsent = 0;
        a->t_sent = rd_now_ns();
        if (!a->t_first)
            a->t_first = a->t_sent;
        return 0;
    }
    a->unsent = e == -EAGAIN ? req : 0;
    if (e == -EAGAIN && !a->said_full++)
        fprintf(stderr, "recorderd: process %d cannot be sent the request yet: its user's "
                        "queue of pending signals is full (RLIMIT_SIGPENDING, ulimit -i); "
                        "trying again...\n", (int)a->o->pid);
    return e;
}

static void close_all(attach_ctx *a)
{
    if (a->closed)
        return;
    a->closed = 1;
    uv_close((uv_handle_t *)&a->wait_timer, NULL);
    uv_close((uv_handle_t *)&a->stop_timer, NULL);
    uv_close((uv_handle_t *)&a->grace_timer, NULL);
    uv_close((uv_handle_t *)&a->nudge_timer, NULL);
    uv_close((uv_handle_t *)&a->flush_timer, NULL);
    uv_close((uv_handle_t *)&a->sigint, NULL);
    uv_close((uv_handle_t *)&a->sigterm, NULL);
    uv_close((uv_handle_t *)&a->sighup, NULL);
    if (a->have_tty) {
        uv_tty_reset_mode();
        uv_close((uv_handle_t *)&a->tty, NULL);
    }
    rd_server_close(&a->srv);
}

/* The session ends without the process's answer: its reports are
 * written and its connection closed (on_idle then ends the loop), where
 * closing the handles alone left the loop waiting on a process blocked
 * in C. */
static void on_grace(uv_timer_t *t)
{
    attach_ctx *a = t->data;
    fprintf(stderr, "recorderd: process %d has not run Lua since the detach request; "
                    "ending the session (the process detaches at its next Lua event)\n",
            (int)a->o->pid);
    rd_server_stop(&a->srv);
}

static int ask_detach(void *ud)
{
    rd_session *s = ud;
    atomic_store_explicit(&s->ring.hdr->control, LT_CONTROL_DETACH, memory_order_relaxed);
    return 0;
}

/* The trace has not ended since the control word was set: the collector
 * reads it on its slow path, which a program running few events (a server
 * waiting for requests) takes minutes later. The signal makes its next
 * event take it (an older collector ignores it). */
static void on_nudge(uv_timer_t *t)
{
    attach_ctx *a = t->data;
    union sigval v = {.sival_int = LT_ATTACH_DETACH};
    rd_session *s = the_session(a);
    if (!s || s->ring_lost || atomic_load(&s->stat_writing) || atomic_load(&s->done) ||
        atomic_load(&s->conn_closed)) {
        uv_timer_stop(t);
        return;
    }
    /* every 100 ms while the queue of pending signals is full (EAGAIN, as
     * ask() retries), else again at 0.5, 1.5 and 3 s: a sent one can be
     * lost (its slow_at write overwritten by a hook it interrupted, which
     * a loaded machine makes likelier) and the program kept its trace */
    unsigned long long since = (rd_now_ns() - a->t_detach) / 1000000ull;
    if (since + 50 < a->nudge_at)
        return;
    if (send_req(a, v) == 0)
        a->nudge_at = a->nudge_at < 500 ? 500 : a->nudge_at < 1500 ? 1500 : a->nudge_at < 3000 ? 3000 : ~0u;
}

/* top, every second: no record came since the last time, though the
 * program may have run (records are published once per LT_RING_BATCH
 * bytes, a minute's worth of a server waiting for requests, whose top
 * said "0 events" every second): the signal makes its next event publish
 * them. A busy program, whose records come, gets no signal. */
static void on_flush(uv_timer_t *t)
{
    attach_ctx *a = t->data;
    rd_session *s = the_session(a);
    if (!s || a->detaching || s->ring_lost || atomic_load(&s->stat_writing))
        return;
    uint64_t n = atomic_load_explicit(&s->stat_events, memory_order_relaxed);
    union sigval v = {.sival_int = LT_ATTACH_FLUSH};
    if (n == a->flush_seen)
        (void)send_req(a, v);
    a->flush_seen = n;
}

/* Ends the trace: the collector sees the control word at its next event. */
static void detach(attach_ctx *a)
{
    if (a->detaching)
        return;
    a->detaching = 1;
    rd_session *s = the_session(a);
    if (!s) { /* never answered: nothing to detach */
        close_all(a);
        return;
    }
    if (!s->ring_lost) {
        rd_guard_call(ask_detach, s); /* a ring shrunk: the session is cut already */
        a->t_detach = rd_now_ns();
        a->nudge_at = LT_ATTACH_DETACH_NUDGE_MS;
        uv_timer_start(&a->nudge_timer, on_nudge, LT_ATTACH_DETACH_NUDGE_MS,
                       LT_ATTACH_DETACH_NUDGE_MS);
    }
    uv_timer_start(&a->grace_timer, on_grace, a->o->grace_ms, 0);
}

/* The server's SIGTERM: attach's own handler detaches. */
static void server_signal(rd_server *srv, int sig)
{
    (void)srv;
    (void)sig;
}

static void on_stop_timer(uv_timer_t *t)
{
    detach(t->data);
}

static void on_signal(uv_signal_t *h, int sig)
{
    attach_ctx *a = h->data;
    (void)sig;
    a->interrupted = 1;
    if (a->detaching)
        close_all(a); /* a second Ctrl-C: do not wait */
    else
        detach(a);
}

/* The state letter of /proc/PID/stat ('R', 'S', 'T' stopped, 'Z' exited
 * but not reaped...), or 0 if the process is gone; 'R' if it exists but
 * /proc does not say (a /proc mounted with hidepid). */
static char proc_state(pid_t pid)
{
    char buf[512], st;
    rd_proc_read(pid, "stat", buf, sizeof buf);
    if ((st = rd_proc_state(buf)))
        return st;
    return kill(pid, 0) == 0 || errno == EPERM ? 'R' : 0;
}

/* Whether dump should read pid from outside (rd_peek_dump) as its
 * dormant collector did not answer DUMP_NOW: a Lua 5.4 (whose signal
 * handler reads nothing), or any Lua recorderd reads held stopped (which
 * runs no handler); dump waited until --timeout and failed, where the
 * same program without the collector is dumped. A 5.1 whose handler
 * could not check its layout still waits for a Lua event, as before. */
static int readable(pid_t pid, char state)
{
    char why[1024], v[8], lib[PATH_MAX];
    int v54 = rd_peek_release(pid, v, lib, sizeof lib) && !strcmp(v, "5.4");
    if (state == 'T' || state == 't')
        return v54 || !rd_peek_other_lua(pid, why, sizeof why);
    return v54;
}

/* The stop timer's ms once the process answered: the duration, or what is
 * left of its window (at least 1 ms: an answer in its last moment is
 * traced, briefly). */
static uint64_t window_left(const attach_ctx *a)
{
    uint64_t waited = (rd_now_ns() - a->t_signal) / 1000000ull;
    if (!a->o->window)
        return a->o->duration_ms;
    return waited < a->o->duration_ms ? a->o->duration_ms - waited : 1;
}

/* Until the process answers: say why nothing happens, give up at last. */
static void on_wait(uv_timer_t *t)
{
    attach_ctx *a = t->data;
    if (a->srv.nstarted) {
        if (!a->started && a->o->duration_ms)
            uv_timer_start(&a->stop_timer, on_stop_timer, window_left(a), 0);
        if (!a->started && a->o->keys)
            uv_timer_start(&a->flush_timer, on_flush, 1000, 1000);
        a->started = 1;
        uv_timer_stop(t);
        return;
    }
    unsigned long long waited = (rd_now_ns() - a->t_signal) / 1000000ull;
    if (a->unsent && !a->srv.conns)
        ask(a, a->unsent);
    /* from the first DUMP queued, not the last: a running process is asked
     * again every 100 ms (below), and one running Lua with no hook
     * called (a __gc finalizer, where Lua calls no hook) was never sent
     * DUMP_NOW, its dump waited until --timeout and failed */
    if (a->o->dump && !a->asked_now && !a->unsent && !a->srv.conns && a->t_first &&
        rd_now_ns() - a->t_first >= LT_ATTACH_DUMP_NOW_MS * 1000000ull) {
        a->asked_now = 1; /* no Lua event came: blocked in C? the handler answers */
        ask(a, LT_ATTACH_DUMP_NOW);
    }
    char state = a->srv.conns ? 'R' : proc_state(a->o->pid);
    /* Running, yet no answer: C code may have taken the request's hook off
     * before its first event (luaposix's posix.signal takes every hook off
     * at each signal it handles: a storm of them loses the request, and a
     * dormant collector has no tick to put it back). The handler sets it
     * again. Only while the process runs: a wait in C (nanosleep, poll)
     * would return EINTR. */
    if (state == 'R' && !a->unsent && !a->asked_now && !a->srv.conns && a->req &&
        rd_now_ns() - a->t_sent >= 100 * 1000000ull)
        ask(a, a->req);
    if (!state || state == 'Z' || state == 'X') {
        fprintf(stderr, "recorderd: process %d exited before it answered\n", (int)a->o->pid);
        a->detaching = 1;
        close_all(a);
        return;
    }
    if (a->o->dump && a->asked_now && !a->unsent && !a->srv.conns &&
        rd_now_ns() - a->t_sent >= LT_ATTACH_DUMP_NOW_MS * 1000000ull &&
        readable(a->o->pid, state)) {
        a->outside = 1; /* stopped, or a handler that cannot read its Lua (5.4) */
        a->detaching = 1;
        close_all(a);
        return;
    }
    if (!a->warned && !a->unsent && rd_now_ns() - a->t_sent >= 1000000000ull &&
        !a->srv.conns) { /* sent a second ago, and nobody answers */
        a->warned = 1;
        if (state == 'T' || state == 't')
            fprintf(stderr, "recorderd: process %d is stopped (SIGSTOP, or a debugger); "
                            "waiting for it to run Lua...\n", (int)a->o->pid);
        else
            fprintf(stderr, "recorderd: waiting for process %d to run Lua (it may be blocked "
                            "in C, running a coroutine that does not yield, running only "
                            "threads with the program's own debug hook, or running "
                            "LuaJIT-compiled code)...\n", (int)a->o->pid);
    }
    if (a->o->duration_ms && waited >= a->o->duration_ms &&
        ((a->o->keys && waited < a->o->timeout_ms) || a->o->window)) {
        /* top -d 3 is a view of 3 s: it waited out --timeout (10 s); attach
         * -d 30 of a server idle between requests watches for 30 s */
        fprintf(stderr, "recorderd: process %d ran no Lua in the %.1f s of --duration: nothing "
                        "to %s (it answers at its next Lua event)\n",
                (int)a->o->pid, a->o->duration_ms / 1000.0, a->o->keys ? "show" : "trace");
        a->detaching = 1;
        close_all(a);
        return;
    }
    if (waited >= a->o->timeout_ms) {
        /* a server idle between requests (blocked in epoll) answers at its
         * next one: say how to wait for it rather than leave 10 s the rule */
        fprintf(stderr, "recorderd: process %d did not answer within %u ms%s\n", (int)a->o->pid,
                a->o->timeout_ms,
                a->unsent ? " (the request could not be sent: its user's queue of pending "
                            "signals stayed full, RLIMIT_SIGPENDING)"
                : a->o->dump ? ""
                             : ": it ran no Lua meanwhile, and answers at its next Lua "
                               "event; --timeout SECONDS waits longer");
        a->detaching = 1;
        close_all(a);
    }
}

/* The stacks, read by the process's signal handler (DUMP_NOW). */
static void on_dump(rd_server *srv, uint32_t flags, const uint8_t *p, size_t n)
{
    attach_ctx *a = srv->ud;
    char cmd[LT_CTL_CMD_MAX], note[256];
    rd_peek_cmdline(a->o->pid, cmd, sizeof cmd);
    snprintf(note, sizeof note, "%s%s",
             flags & LT_DUMP_IN_C
                 ? "taken by the signal handler, as no Lua event answered: the process is "
                   "blocked in C, in the C function on top of the running thread"
                 : "taken by the signal handler while Lua was running: approximate",
             flags & LT_DUMP_TRUNCATED ? "; too many threads or frames, cut short" : "");
    rd_attach_print_records(stdout, a->o->pid, cmd, p, n, note);
    a->detaching = 1;
    close_all(a);
}

static void on_idle(rd_server *srv)
{
    attach_ctx *a = srv->ud;
    /* a hello refused (its session could not be made, the server said
     * why): the process stays dormant, waiting on would only time out */
    if (a->srv.nstarted || a->detaching || a->srv.nrefused)
        close_all(a);
}

static void on_key(uv_stream_t *h, ssize_t n, const uv_buf_t *buf)
{
    attach_ctx *a = h->data;
    for (ssize_t i = 0; i < n; i++)
        if (buf->base[i] == 'q' || buf->base[i] == 'Q' || buf->base[i] == 3)
            detach(a);
        else if (buf->base[i] == 't' || buf->base[i] == 's')
            rd_attach_top_sort(buf->base[i] == 't');
    free(buf->base);
}

static void key_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf)
{
    (void)h;
    buf->base = malloc(size);
    buf->len = buf->base ? size : 0;
}

static int start_handles(attach_ctx *a, uv_loop_t *loop)
{
    uv_timer_init(loop, &a->wait_timer);
    uv_timer_init(loop, &a->stop_timer);
    uv_timer_init(loop, &a->grace_timer);
    uv_timer_init(loop, &a->nudge_timer);
    uv_timer_init(loop, &a->flush_timer);
    uv_signal_init(loop, &a->sigint);
    uv_signal_init(loop, &a->sigterm);
    uv_signal_init(loop, &a->sighup);
    a->wait_timer.data = a->stop_timer.data = a->grace_timer.data = a->nudge_timer.data =
        a->flush_timer.data = a;
    a->sigint.data = a->sigterm.data = a->sighup.data = a;
    uv_signal_start(&a->sigint, on_signal, SIGINT);
    uv_signal_start(&a->sigterm, on_signal, SIGTERM);
    /* a lost terminal (ssh gone) ends it as SIGTERM does: it killed
     * recorderd with the session's reports unwritten (trace.ltr alone) and
     * the program tracing into a ring nobody read */
    uv_signal_start(&a->sighup, on_signal, SIGHUP);
    uv_timer_start(&a->wait_timer, on_wait, 20, 20);
    if (a->o->keys && isatty(0) && uv_tty_init(loop, &a->tty, 0, 1) == 0) {
        a->have_tty = 1;
        a->tty.data = a;
        uv_tty_set_mode(&a->tty, UV_TTY_MODE_RAW);
        uv_read_start((uv_stream_t *)&a->tty, key_alloc, on_key);
    }
    return 0;
}

/* The out directory, checked before anything is done to the process: a
 * session that cannot be written would leave it asked, or injected, for
 * nothing, and the attach waiting for a hello it refuses. */
static int out_ok(const rd_attach_opts *o, char *err, size_t cap)
{
    char why[400];
    if (o->so.no_files)
        return 0;
    int fd = rd_out_open(o->so.out, 1, why, sizeof why);
    if (fd < 0) {
        snprintf(err, cap, "cannot create a session directory in %s", why);
        return fd;
    }
    /* opened, but maybe not writable (a read-only mount, another's mode):
     * found now, not once luatrace.so is loaded into the process */
    int e = faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) ? -errno : 0;
    close(fd);
    if (e) {
        char shown[300];
        snprintf(err, cap, "cannot create a session directory in %s: %s",
                 rd_printable(o->so.out, shown, sizeof shown), strerror(-e));
    }
    return e;
}

/* A process with no dormant collector: load one (rd_inject), unless it is
 * mapped already (an earlier attach), then check again. */
static int inject(const rd_attach_opts *o, lt_attach_marker *mk, char *err, size_t cap)
{
    char where[512];
    int reused = 0, e = rd_inject(o->pid, &reused, err, cap);
    snprintf(where, sizeof where, "%s", err);
    if (!e && (e = check_target(o->pid, mk, err, cap)) == -ENOENT) {
        /* loaded, but no marker: it exited as it was loaded (its marker
         * removed at the exit, or never made) */
        for (int k = 0; k < 30 && !rd_peek_gone(o->pid); k++)
            usleep(10000);
        if (rd_peek_gone(o->pid))
            snprintf(err, cap, "process %d exited", (int)o->pid), e = -ESRCH;
    } else if (!e)
        fprintf(stderr, "recorderd: process %d had no dormant collector: %s (%s; it stays, "
                        "inert, after the detach)\n", (int)o->pid,
                reused ? "its luatrace.so, loaded before, listens again"
                       : "luatrace.so is loaded into it now", where);
    return e;
}

/* The ring of a trace the process runs for another recorder (run,
 * listen, its private serve), into name: a luatrace ring it maps that is
 * not its attach ring. 1 if any. Such a process answers no request until
 * that trace ends: attach loaded nothing ("its luatrace.so ... listens
 * again"), then said it waited for Lua to run (it was running) until
 * --timeout, and dump and top went the same way. */
static int traced_ring(pid_t pid, char *name, size_t cap)
{
    char path[64], line[4096], mine[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    lt_attach_ring_name(pid, mine, sizeof mine);
    FILE *f = fopen(path, "r");
    int found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f)) {
        const char *at = strstr(line, " /dev/shm" LT_RING_PREFIX);
        if (!at)
            continue;
        at += strlen(" /dev/shm" LT_RING_PREFIX);
        size_t n = strcspn(at, " \n");
        if (n && n < cap && !(n == strlen(mine) && !strncmp(at, mine, n))) {
            memcpy(name, at, n);
            name[n] = 0;
            found = 1;
        }
    }
    fclose(f);
    return found;
}

int rd_attach(const rd_attach_opts *o)
{
    attach_ctx a = {.o = o};
    char err[512], sock[108];
    lt_attach_sweep(geteuid()); /* killed processes' markers pile up otherwise */
    int e = check_target(o->pid, &a.mk, err, sizeof err);
    /* root reads another user's process from outside, as record and heap
     * do (and as their refusal advises: "or run recorderd as root"); its
     * collector, if any, serves that user's recorderd only */
    if (e == -EPERM && !geteuid() && (o->dump || o->keys))
        e = -ENOENT;
    /* its collector cannot be asked (no handler on its signal): dump and
     * top read it from outside, as a process that has none */
    if (e == -ENOTCONN && (o->dump || o->keys))
        e = -ENOENT;
    char tring[LT_RING_NAME_MAX + 1];
    if ((!e || e == -ENOENT) && traced_ring(o->pid, tring, sizeof tring)) {
        if (!o->dump && !o->keys) {
            fprintf(stderr, "recorderd: process %d is traced already, by the recorder of its "
                            "ring %s (recorderd run or listen): its session has every event; "
                            "attach works on a process whose collector is dormant\n",
                    (int)o->pid, rd_printable(tring, tring, sizeof tring));
            return 1;
        }
        e = -ENOENT; /* dump and top: read it from outside */
    }
    if (e == -ENOENT && o->dump) /* no collector: read it from outside */
        return rd_peek_dump(o->pid, stdout);
    if (e == -ENOENT && o->keys) {
        rd_sample_opts so = {.pid = o->pid, .hz = o->hz, .duration_ms = o->duration_ms,
                             .stop = o->stop};
        return rd_sample_top(&so);
    }
    /* Ctrl-C, SIGTERM and SIGHUP wait until our handlers take them (start_handles):
     * before, they killed recorderd mid-injection (ptrace) or without a
     * word, or the server's handlers swallowed them */
    sigset_t hold, was;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    sigaddset(&hold, SIGHUP);
    sigprocmask(SIG_BLOCK, &hold, &was);
    if ((!e || e == -ENOENT) && !o->dump && !o->keys)
        e = out_ok(o, err, sizeof err) ? -ENOTDIR : e;
    /* loaded once the socket is ours (below): two attaches at once each
     * loaded luatrace.so and said so, the second stopping the process and
     * calling into it again before it found the first one's socket */
    int load = e == -ENOENT && !o->dump && !o->keys;
    if (load)
        e = 0;
    if (e) {
        fprintf(stderr, "recorderd: %s\n", rd_printable(err, err, sizeof err));
        sigprocmask(SIG_SETMASK, &was, NULL);
        return 1;
    }
    uv_loop_t *loop = uv_default_loop();
    lt_attach_socket_path(geteuid(), o->pid, sock, sizeof sock);
    if (rd_server_init(&a.srv, loop, &o->so, err, sizeof err)) {
        fprintf(stderr, "recorderd: %s\n", rd_printable(err, err, sizeof err));
        sigprocmask(SIG_SETMASK, &was, NULL);
        return 1;
    }
    /* the check of a live socket, the removal of a stale one and the bind,
     * one attach at a time: two at once each found no listener (the
     * other's bound, not yet listening, or not yet bound), the later
     * removed the other's socket and bound its own, and both loaded
     * luatrace.so; the one whose socket was gone waited until --timeout */
    char dir[sizeof sock];
    snprintf(dir, sizeof dir, "%s", sock);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    int dfd = slash ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd >= 0)
        flock(dfd, LOCK_EX);
    e = rd_server_listen(&a.srv, sock, err, sizeof err);
    if (dfd >= 0)
        close(dfd); /* and its lock */
    if (e) {
        if (e == -EADDRINUSE) /* its socket is the one we would listen on */
            snprintf(err, sizeof err, "process %d is being traced or dumped by another "
                     "recorderd (attach, dump or top): try again once that ends", (int)o->pid);
        fprintf(stderr, "recorderd: %s\n", rd_printable(err, err, sizeof err));
        rd_server_close(&a.srv);
        uv_run(loop, UV_RUN_DEFAULT);
        sigprocmask(SIG_SETMASK, &was, NULL);
        return 1;
    }
    if (load && (e = inject(o, &a.mk, err, sizeof err))) {
        fprintf(stderr, "recorderd: %s\n", rd_printable(err, err, sizeof err));
        rd_server_close(&a.srv);
        uv_run(loop, UV_RUN_DEFAULT);
        unlink(sock);
        sigprocmask(SIG_SETMASK, &was, NULL);
        return 1;
    }
    a.srv.ud = &a;
    a.srv.only_pid = o->pid;
    a.srv.once = 1;
    a.srv.ignore_sigint = 1; /* ours: Ctrl-C detaches */
    a.srv.on_signal = server_signal; /* and so does SIGTERM (the server's stop would cut the session) */
    a.srv.on_idle = on_idle;
    if (o->dump)
        a.srv.on_dump = on_dump;
    start_handles(&a, loop);
    sigprocmask(SIG_SETMASK, &was, NULL); /* one held meanwhile goes to on_signal */
    a.t_signal = rd_now_ns();
    a.req = o->dump ? LT_ATTACH_DUMP : LT_ATTACH_TRACE;
    e = ask(&a, a.req);
    if (e && e != -EAGAIN && e != -ESRCH) { /* ESRCH: on_wait says it exited */
        if (e == -ENOTCONN) /* the program reset the signal since check_target */
            fprintf(stderr, "recorderd: process %d no longer handles signal %d, which its "
                            "dormant collector listens on: nothing sent\n",
                    (int)o->pid, a.mk.signo);
        else
            fprintf(stderr, "recorderd: cannot signal process %d: %s\n", (int)o->pid,
                    strerror(-e));
        a.detaching = 1;
        close_all(&a);
    }
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    unlink(sock);
    /* a ring the program made for this request and nobody mapped (it was
     * killed between its ring and our reading it, or served the request
     * after we went): no one else will ever remove its name */
    char ring[64];
    lt_attach_ring_name(o->pid, ring, sizeof ring);
    lt_ring_unlink(ring);
    if (a.outside) /* its hooks, set by the request, go at its next Lua event */
        return rd_peek_dump(o->pid, stdout);
    if (a.interrupted && !a.srv.nstarted && !a.srv.ndumps) /* it said nothing, exit 1 */
        fprintf(stderr, "recorderd: interrupted before process %d answered: nothing %s\n",
                (int)o->pid, o->dump ? "dumped" : "traced");
    return a.srv.nstarted || a.srv.ndumps ? 0 : 1;
}
