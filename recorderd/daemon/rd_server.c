/* rd_server: accepting traced processes and running their sessions. */
#include "rd_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lt_ctl.h"
#include "lt_trust.h"
#include "rd_accept.h"
#include "rd_outdir.h"
#include "rd_status.h"
#include "rd_util.h"

typedef struct rd_conn {
    uv_pipe_t pipe;
    uv_timer_t hello_timer; /* closes a connection that says nothing */
    int nhandles;           /* of the two above still open */
    rd_server *srv;
    char msg[LT_CTL_MSG_MAX]; /* the first message, as it arrives */
    size_t nmsg;
    rd_session *sess;
    int closing;
    int closing_after_ack; /* a stop request: no more messages */
    int out_pending;       /* its process is being sampled from outside: no ack yet */
    int gone;              /* closed meanwhile: freed once the sampling begins or not */
    uint8_t *dump;         /* a dump message's records, as they arrive */
    size_t ndump, dump_len;
    uint32_t dump_flags;
    char buf[LT_CTL_MSG_MAX];
} rd_conn;

/* Stops tracing: sessions finish and their reports are written (a stop
 * request, SIGTERM, SIGINT). */

int rd_server_idle(const rd_server *srv)
{
    return !srv->sessions && !srv->conns && !srv->noutside;
}

static void maybe_idle(rd_server *srv)
{
    if (rd_server_idle(srv) && srv->on_idle)
        srv->on_idle(srv);
}

static void conn_free(uv_handle_t *h)
{
    rd_conn *c = h->data;
    rd_server *srv = c->srv;
    if (--c->nhandles)
        return;
    srv->conns--;
    for (unsigned i = 0; i < srv->noutside; i++)
        if (srv->outside_conn[i] == c) { /* its state closed, or its process ended */
            srv->outside_conn[i] = NULL;
            if (!c->out_pending)
                srv->outside_ops->quit(srv->outside[i]);
        }
    if (c->out_pending) { /* rd_server_outside_began frees it */
        c->gone = 1;
        return;
    }
    free(c->dump);
    free(c);
    maybe_idle(srv);
}

/* A connection closed while its session runs (its ack could not be sent:
 * the process died between its hello and the ack, and the write's EPIPE
 * came before the read's EOF, which the close then never delivers): the
 * session learns that its process is gone, as from that EOF, and forgets
 * the connection, which is freed now, not when its reports are written. */
static void conn_close(rd_conn *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    if (c->sess) {
        rd_session_conn_closed(c->sess);
        c->sess->owner = NULL;
        c->sess = NULL;
    }
    uv_close((uv_handle_t *)&c->hello_timer, conn_free);
    uv_close((uv_handle_t *)&c->pipe, conn_free);
}

typedef struct ack_req {
    uv_write_t w;
    msgpack_sbuffer sb;
    rd_conn *c;
    int close_after;
} ack_req;

static void ack_done(uv_write_t *w, int status)
{
    ack_req *a = (ack_req *)w;
    if (status < 0 || a->close_after)
        conn_close(a->c);
    msgpack_sbuffer_destroy(&a->sb);
    free(a);
}

/* Sends what fill() packs; the connection closes after it if close_after. */
static void send_reply(rd_conn *c, int close_after, int (*fill)(msgpack_sbuffer *, void *),
                       void *ud)
{
    ack_req *a = calloc(1, sizeof *a);
    if (!a) {
        conn_close(c);
        return;
    }
    msgpack_sbuffer_init(&a->sb);
    a->c = c;
    a->close_after = close_after;
    if (fill(&a->sb, ud)) {
        ack_done(&a->w, -1);
        return;
    }
    uv_buf_t b = uv_buf_init(a->sb.data, (unsigned)a->sb.size);
    if (uv_write(&a->w, (uv_stream_t *)&c->pipe, &b, 1, ack_done) < 0)
        ack_done(&a->w, -1);
}

static int fill_ack(msgpack_sbuffer *sb, void *ud)
{
    return lt_ctl_pack(ud, sb);
}

static void send_ack(rd_conn *c, int ok, const char *text)
{
    lt_ctl_msg m = {.type = LT_CTL_ACK, .ok = ok};
    snprintf(m.text, sizeof m.text, "%.*s", (int)sizeof m.text - 1, text);
    if (c->srv->opts.coverage) /* a coverage run: the collector reads no clock */
        snprintf(m.timing, sizeof m.timing, "none");
    else if (c->srv->opts.sample_time) { /* sampled time of that clock */
        snprintf(m.timing, sizeof m.timing, "%s", c->srv->opts.wall ? "wall" : "cpu");
        m.lines_sampled = c->srv->opts.lines_sampled;
    }
    m.memory = c->srv->opts.memory; /* listen --memory */
    send_reply(c, !ok, fill_ack, &m);
}

static int fill_status(msgpack_sbuffer *sb, void *ud)
{
    char *text = NULL, *json = NULL;
    size_t tl = 0, jl = 0;
    FILE *t = open_memstream(&text, &tl), *j = open_memstream(&json, &jl);
    if (t && j)
        rd_status_write(ud, t, j);
    if (t)
        fclose(t);
    if (j)
        fclose(j);
    int e = text && json ? lt_ctl_pack_status(text, json, sb) : -ENOMEM;
    free(text);
    free(json);
    return e;
}

static int peer_cred(rd_conn *c, struct ucred *cr)
{
    uv_os_fd_t fd;
    socklen_t len = sizeof *cr;
    if (uv_fileno((uv_handle_t *)&c->pipe, &fd) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &len) < 0)
        return -1;
    return 0;
}

void rd_server_note(rd_server *srv, const char *fmt, ...)
{
    char *slot = srv->errors[srv->nerrors++ % RD_SERVER_ERRORS];
    time_t now = time(NULL);
    struct tm tm;
    size_t n = strftime(slot, sizeof srv->errors[0], "%Y-%m-%d %H:%M:%S ",
                        localtime_r(&now, &tm));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(slot + n, sizeof srv->errors[0] - n, fmt, ap);
    va_end(ap);
    char shown[sizeof srv->errors[0]];
    fprintf(stderr, "recorderd: %s\n", rd_printable(slot + n, shown, sizeof shown));
}

/* out, opened once for every session: they are made under it. One that
 * cannot be made yet (a disk not mounted) is tried again at each hello, and
 * its sessions refused meanwhile; the daemon stays. */
static int open_out(rd_server *srv, char *err, size_t cap)
{
    struct stat st;
    if (srv->remake_out && srv->opts.out_fd >= 0 && fstat(srv->opts.out_fd, &st) == 0 &&
        st.st_nlink == 0) {
        /* removed while the daemon runs (rm -rf luatrace-out): made again,
         * checked as at the start, rather than every later process refused
         * for good; the sessions under way keep their own directory. Not
         * for attach, whose one session is refused (attach-badout) */
        close(srv->opts.out_fd);
        srv->opts.out_fd = -1;
    }
    if (srv->opts.no_files || srv->opts.out_fd >= 0)
        return 0;
    int fd = rd_out_open(srv->opts.out, 1, err, cap);
    srv->opts.out_fd = fd < 0 ? -1 : fd;
    return fd < 0 ? fd : 0;
}

/* {====== processes sampled from outside (rd_outside_ops) */

/* A hello asking to be sampled from outside: the ack waits until the
 * sampler runs (rd_server_outside_began), so the program starts under it. */
static void start_outside(rd_conn *c, const rd_outside_req *req)
{
    rd_server *srv = c->srv;
    if (!srv->outside_ops) {
        send_ack(c, 0, "this recorderd does not sample from outside (run --sample does)");
        return;
    }
    if (srv->noutside == srv->outside_cap) {
        unsigned cap = srv->outside_cap ? 2 * srv->outside_cap : 4;
        rd_outside **n = realloc(srv->outside, cap * sizeof *n);
        if (n)
            srv->outside = n;
        void **nc = n ? realloc(srv->outside_conn, cap * sizeof *nc) : NULL;
        if (!nc) {
            send_ack(c, 0, "out of memory");
            return;
        }
        srv->outside_conn = nc;
        srv->outside_cap = cap;
    }
    rd_outside *o = srv->outside_ops->start(srv, req, c);
    if (!o) {
        send_ack(c, 0, "out of memory");
        return;
    }
    srv->outside_conn[srv->noutside] = c;
    srv->outside[srv->noutside++] = o;
    srv->nstarted++;
    c->out_pending = 1;
}

int rd_server_outside_began(rd_server *srv, void *conn, int ok, const char *text)
{
    rd_conn *c = conn;
    int gone = c->gone;
    c->out_pending = 0;
    if (!ok)
        rd_server_note(srv, "sampling from outside refused: %s", text);
    if (gone) {
        free(c->dump);
        free(c);
        maybe_idle(srv);
    } else {
        send_ack(c, ok, text);
    }
    return gone;
}

void rd_server_outside_ended(rd_server *srv, rd_outside *o, const char *err)
{
    for (unsigned i = 0; i < srv->noutside; i++)
        if (srv->outside[i] == o) {
            srv->noutside--;
            srv->outside[i] = srv->outside[srv->noutside];
            srv->outside_conn[i] = srv->outside_conn[srv->noutside];
            break;
        }
    if (err[0])
        rd_server_note(srv, "%s", err);
    maybe_idle(srv);
}

/* }====== */

static void on_hello(rd_conn *c, const lt_ctl_msg *m)
{
    char err[256];
    struct ucred cr;
    if (c->srv->ndumps) { /* the dump was answered from the signal handler */
        send_ack(c, 0, "the dump was taken already");
        return;
    }
    if (c->srv->stopping) { /* its socket answers until the reports are written */
        send_ack(c, 0, "recorderd is stopping");
        return;
    }
    if (m->type != LT_CTL_HELLO || lt_ring_name_check(m->shm)) {
        send_ack(c, 0, "expected a hello with a valid ring name");
        return;
    }
    if (peer_cred(c, &cr) || cr.uid != getuid() || (uint32_t)cr.pid != m->pid ||
        (c->srv->only_pid && cr.pid != c->srv->only_pid)) {
        send_ack(c, 0, "peer is another user, or its pid does not match");
        return;
    }
    if (open_out(c->srv, err, sizeof err)) {
        char msg[sizeof err + 48];
        snprintf(msg, sizeof msg, "cannot create a session directory in %s", err);
        rd_server_note(c->srv, "pid %d refused: %s", (int)cr.pid, msg);
        c->srv->nrefused++;
        send_ack(c, 0, msg);
        return;
    }
    if (m->outside) {
        rd_outside_req req = {cr.pid, (pid_t)m->tid, m->sample, m->state};
        start_outside(c, &req);
        return;
    }
    c->sess = rd_session_start(&c->srv->opts, m->shm, cr.uid, cr.pid, m->cmd, m->cwd, m->sample,
                               &c->srv->wake, err, sizeof err);
    if (!c->sess) {
        /* out of descriptors here too (the ring, the session's files):
         * counted with the connections refused for it (rd_accept.c) */
        if (strstr(err, strerror(EMFILE)) || strstr(err, strerror(ENFILE)))
            c->srv->nofd++;
        rd_server_note(c->srv, "pid %d refused: %s", (int)cr.pid, err);
        c->srv->nrefused++;
        send_ack(c, 0, err);
        return;
    }
    c->sess->owner = c;
    c->sess->next = c->srv->sessions;
    c->srv->sessions = c->sess;
    c->srv->nstarted++;
    send_ack(c, 1, c->sess->name);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    rd_conn *c = h->data;
    (void)hint;
    *buf = uv_buf_init(c->buf, sizeof c->buf);
}

/* Records of a dump message: complete, it goes to on_dump. */
static void feed_dump(rd_conn *c, const char *p, size_t n)
{
    if (n > c->dump_len - c->ndump) {
        conn_close(c); /* more than announced */
        return;
    }
    memcpy(c->dump + c->ndump, p, n);
    c->ndump += n;
    if (c->ndump < c->dump_len)
        return;
    rd_server *srv = c->srv;
    if (!srv->ndumps++)
        srv->on_dump(srv, c->dump_flags, c->dump, c->ndump);
    conn_close(c);
}

/* A dump message from the attached process: its records follow. */
static void on_dump_head(rd_conn *c, const lt_ctl_msg *m)
{
    struct ucred cr;
    if (!c->srv->on_dump || c->srv->ndumps || c->srv->nstarted || c->srv->stopping ||
        peer_cred(c, &cr) ||
        cr.uid != getuid() || (uint32_t)cr.pid != m->pid || cr.pid != c->srv->only_pid ||
        !(c->dump = malloc(m->len ? m->len : 1))) {
        conn_close(c);
        return;
    }
    c->dump_len = m->len;
    c->dump_flags = m->flags;
    if (!m->len)
        feed_dump(c, NULL, 0);
}

/* `recorderd stop` waits for the end of its connection: a copy of it stays
 * open (never closed, not inherited) until this process exits, after every
 * report is written. If it cannot be copied, stop returns at the ack. */
static void hold_until_exit(rd_conn *c)
{
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *)&c->pipe, &fd) == 0 && fcntl(fd, F_DUPFD_CLOEXEC, 3) < 0)
        rd_server_note(c->srv, "stop: cannot keep its connection: %s", strerror(errno));
}

static void on_message(rd_conn *c, const lt_ctl_msg *m)
{
    if (m->type != LT_CTL_DUMP) /* a dump stays bound until its last record */
        uv_timer_stop(&c->hello_timer);
    if (m->type == LT_CTL_DUMP) {
        on_dump_head(c, m);
        return;
    }
    if (m->type == LT_CTL_STATUS) {
        send_reply(c, 1, fill_status, c->srv);
    } else if (m->type == LT_CTL_STOP) {
        lt_ctl_msg ack = {.type = LT_CTL_ACK, .ok = 1};
        c->closing_after_ack = 1;
        hold_until_exit(c);
        send_reply(c, 1, fill_ack, &ack);
        rd_server_stop(c->srv);
    } else {
        on_hello(c, m);
    }
}

/* The first message arrives in pieces; it is checked with lt_ctl_scan
 * before msgpack-c, which would allocate whatever a header declares. */
static void feed_hello(rd_conn *c, const char *p, size_t n)
{
    /* what does not fit is a dump's records, or too much for a message (the
     * scan then fails) */
    size_t take = n < sizeof c->msg - c->nmsg ? n : sizeof c->msg - c->nmsg;
    memcpy(c->msg + c->nmsg, p, take);
    c->nmsg += take;
    long k = lt_ctl_scan((const uint8_t *)c->msg, c->nmsg, sizeof c->msg);
    if (k < 0) {
        conn_close(c);
        return;
    }
    if (k == 0)
        return; /* wait for the rest */
    msgpack_unpacked r;
    msgpack_unpacked_init(&r);
    size_t off = 0;
    lt_ctl_msg m;
    if (msgpack_unpack_next(&r, c->msg, (size_t)k, &off) != MSGPACK_UNPACK_SUCCESS ||
        lt_ctl_parse(&r.data, &m)) {
        uv_timer_stop(&c->hello_timer); /* a whole message, answered */
        send_ack(c, 0, "malformed message");
    } else {
        on_message(c, &m);
    }
    msgpack_unpacked_destroy(&r);
    if (c->dump && !c->closing) { /* records may have come with the head */
        size_t rest = c->nmsg - (size_t)k;
        c->nmsg = (size_t)k;
        feed_dump(c, c->msg + k, rest);
        if (c->dump && !c->closing && n > take)
            feed_dump(c, p + take, n - take);
    }
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    rd_conn *c = st->data;
    if (n < 0) {
        uv_read_stop(st);
        if (c->sess)
            rd_session_conn_closed(c->sess); /* closed when its reports are done */
        else
            conn_close(c);
        return;
    }
    if (n > 0 && c->dump && !c->closing)
        feed_dump(c, buf->base, (size_t)n);
    else if (n > 0 && !c->sess && !c->closing && !c->closing_after_ack)
        feed_hello(c, buf->base, (size_t)n);
    /* after the hello a collector sends nothing; extra bytes are ignored */
}

/* Nothing, or not a whole first message, within hello_ms: a peer that
 * holds a connection (and a descriptor) open saying nothing is let go. */
static void on_hello_timeout(uv_timer_t *t)
{
    rd_conn *c = t->data;
    struct ucred cr;
    c->srv->nidle++;
    if (peer_cred(c, &cr))
        cr.pid = 0;
    rd_server_note(c->srv, "a connection (pid %d) closed: no %s within %u s", (int)cr.pid,
                   c->nmsg ? "whole message" : "message", c->srv->hello_ms / 1000);
    conn_close(c);
}

/* A connection on fd, which it owns from here (closed on failure). */
static rd_conn *conn_new(rd_server *srv, int fd)
{
    rd_conn *c = calloc(1, sizeof *c);
    if (!c || uv_pipe_init(srv->loop, &c->pipe, 0)) {
        free(c);
        close(fd);
        return NULL;
    }
    uv_timer_init(srv->loop, &c->hello_timer);
    c->srv = srv;
    c->pipe.data = c->hello_timer.data = c;
    c->nhandles = 2;
    srv->conns++;
    if (uv_pipe_open(&c->pipe, fd)) {
        close(fd);
        conn_close(c);
        return NULL;
    }
    uv_timer_start(&c->hello_timer, on_hello_timeout, srv->hello_ms, 0);
    return c;
}

/* A drainer finished: reap every session that is done. */
static void on_wake(uv_async_t *a)
{
    rd_server *srv = a->data;
    rd_session **pp = &srv->sessions;
    while (*pp) {
        rd_session *s = *pp;
        /* acquire: the reports and fields written by the drainer are visible */
        if (!atomic_load_explicit(&s->done, memory_order_acquire)) {
            pp = &s->next;
            continue;
        }
        *pp = s->next;
        rd_conn *c = s->owner;
        if (s->err[0])
            rd_server_note(srv, "session %s (pid %d): %s", s->name, (int)s->pid, s->err);
        rd_session_free(s);
        if (c) {
            c->sess = NULL;
            conn_close(c); /* tells a waiting collector its reports are written */
        }
        if (srv->once)
            rd_server_stop(srv);
    }
    maybe_idle(srv);
}

static void on_signal(uv_signal_t *h, int sig)
{
    rd_server *srv = h->data;
    if (sig == SIGINT && srv->ignore_sigint)
        return;
    if (srv->on_signal)
        srv->on_signal(srv, sig);
    else
        rd_server_stop(srv);
}

int rd_server_init(rd_server *srv, uv_loop_t *loop, const rd_session_opts *opts, char *err,
                   size_t cap)
{
    memset(srv, 0, sizeof *srv);
    srv->loop = loop;
    srv->opts = *opts;
    srv->hello_ms = RD_HELLO_MS;
    srv->listen_fd = srv->reserve_fd = -1;
    srv->opts.out_fd = -1;
    snprintf(err, cap, "cannot start the event loop");
    int e = open_out(srv, err, cap);
    if (e == -EPERM || e == -ELOOP) /* a directory it must never use */
        return e;
    e = uv_async_init(loop, &srv->wake, on_wake);
    if (!e)
        e = uv_signal_init(loop, &srv->sigint);
    if (!e)
        e = uv_signal_init(loop, &srv->sigterm);
    if (e && srv->opts.out_fd >= 0)
        close(srv->opts.out_fd);
    if (e)
        return e;
    srv->wake.data = srv->sigint.data = srv->sigterm.data = srv;
    uv_signal_start(&srv->sigint, on_signal, SIGINT);
    uv_signal_start(&srv->sigterm, on_signal, SIGTERM);
    uv_unref((uv_handle_t *)&srv->sigint);
    uv_unref((uv_handle_t *)&srv->sigterm);
    return 0;
}

/* Someone answers on path: a live daemon, not a stale file. */
static int socket_alive(const char *path)
{
    int fd = lt_ctl_connect(path);
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

/* The socket's directory is made 0700; an existing one must pass the
 * clients' own check (lt_trust_dir): another user who owns it or can write
 * in it could replace the socket with one of theirs. */
static int prepare_dir(const char *path, char *err, size_t cap)
{
    char dir[sizeof((struct sockaddr_un *)0)->sun_path];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
            int e = -errno;
            snprintf(err, cap, "cannot create %s: %s", dir, strerror(errno));
            return e;
        }
    }
    char why[512];
    int e = lt_trust_dir(path, geteuid(), why, sizeof why);
    if (e)
        snprintf(err, cap, "%s", why);
    return e;
}

int rd_server_listen(rd_server *srv, const char *path, char *err, size_t cap)
{
    if (strlen(path) >= sizeof srv->path) {
        snprintf(err, cap, "socket path too long (max %zu bytes): %s", sizeof srv->path - 1,
                 path);
        return -ENAMETOOLONG;
    }
    int e = prepare_dir(path, err, cap);
    if (e)
        return e;
    if (socket_alive(path)) {
        snprintf(err, cap, "a recorderd already listens on %s", path);
        return -EADDRINUSE;
    }
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) { /* a typo must not cost a file */
        snprintf(err, cap, "%s exists and is not a socket: give another --socket", path);
        return -EEXIST;
    }
    unlink(path); /* stale socket file */
    e = rd_accept_listen(srv, path, err, cap);
    if (e)
        return e;
    snprintf(srv->path, sizeof srv->path, "%s", path);
    srv->listening = 1;
    return 0;
}

int rd_server_adopt(rd_server *srv, int fd)
{
    rd_conn *c = conn_new(srv, fd);
    if (!c)
        return UV_ENOMEM;
    int e = uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
    if (e)
        conn_close(c);
    return e;
}

/* The socket's file removed while the daemon listens: made again (its
 * directory too, checked as at the start), once the file is gone, never
 * over a file someone put there. Nothing could reach the daemon without
 * it, not even stop: a daemon whose socket a cleaner of /tmp removed ran
 * on, unreachable, and every program ran untraced. */
static void on_watch(uv_timer_t *t)
{
    rd_server *srv = t->data;
    struct stat st;
    char err[512];
    if (!srv->listening || srv->stopping || srv->relistening || lstat(srv->path, &st) == 0 ||
        errno != ENOENT)
        return;
    int e = prepare_dir(srv->path, err, sizeof err);
    if (!e)
        e = rd_accept_rebind(srv, srv->path, err, sizeof err);
    if (e) {
        if (!srv->watch_said++)
            rd_server_note(srv, "the socket %s was removed and cannot be made again: %s",
                           srv->path, err);
        return;
    }
    srv->watch_said = 0;
    rd_server_note(srv, "the socket %s was removed: listening on it again", srv->path);
}

int rd_server_watch_socket(rd_server *srv)
{
    int e = uv_timer_init(srv->loop, &srv->watch);
    if (e)
        return e;
    srv->watch.data = srv;
    srv->watching = 1;
    uv_unref((uv_handle_t *)&srv->watch);
    return uv_timer_start(&srv->watch, on_watch, RD_SERVER_WATCH_MS, RD_SERVER_WATCH_MS);
}

/* The socket stays until rd_server_close: while the reports are written,
 * status answers, hellos are refused and a new daemon cannot take it. */
void rd_server_stop(rd_server *srv)
{
    srv->stopping = 1;
    for (rd_session *s = srv->sessions; s; s = s->next)
        rd_session_stop(s);
    for (unsigned i = 0; i < srv->noutside; i++)
        srv->outside_ops->quit(srv->outside[i]);
    maybe_idle(srv);
}

void rd_server_close(rd_server *srv)
{
    if (srv->watching) {
        srv->watching = 0;
        uv_close((uv_handle_t *)&srv->watch, NULL);
    }
    if (srv->listening) {
        srv->listening = 0;
        rd_accept_close(srv);
        unlink(srv->path);
    }
    uv_close((uv_handle_t *)&srv->wake, NULL);
    uv_close((uv_handle_t *)&srv->sigint, NULL);
    uv_close((uv_handle_t *)&srv->sigterm, NULL);
    if (srv->opts.out_fd >= 0) /* sessions keep their own directory open */
        close(srv->opts.out_fd);
    srv->opts.out_fd = -1;
    free(srv->outside);
    free(srv->outside_conn);
    srv->outside = NULL;
    srv->outside_conn = NULL;
}
