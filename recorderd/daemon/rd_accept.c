/* rd_accept: the listening socket (rd_accept.h).
 *
 * libuv's accept, out of file descriptors (EMFILE), closes the pending
 * connections unanswered and tells nobody: a traced program then said "no
 * answer from recorderd (Broken pipe)" and the daemon's log and status
 * said nothing (7 of 12 programs under ulimit -n 20). Accepting here, a
 * spare descriptor is kept instead: out of descriptors, it is given up to
 * accept one connection, which gets a refusal saying why before it is
 * closed; each one is logged and counted in status. */
#include "rd_accept.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lt_ctl.h"

#define RD_ACCEPT_PAUSE_MS 100 /* no spare descriptor: try again after this */

static void refuse_nofd(rd_server *srv, int fd, int why)
{
    lt_ctl_msg m = {.type = LT_CTL_ACK, .ok = 0};
    snprintf(m.text, sizeof m.text,
             "recorderd is out of file descriptors (%s): raise its limit (ulimit -n)",
             strerror(why));
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    /* a fresh socket's buffer holds the few bytes: never blocks */
    if (!lt_ctl_pack(&m, &sb) && send(fd, sb.data, sb.size, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
        (void)0; /* the peer is gone already: it hears nothing either way */
    msgpack_sbuffer_destroy(&sb);
    close(fd);
    srv->nofd++;
    rd_server_note(srv, "a connection refused: recorderd is out of file descriptors (%s)",
                   strerror(why));
}

static void on_listen(uv_poll_t *h, int status, int events);

static void on_pause_end(uv_timer_t *t)
{
    rd_server *srv = t->data;
    if (srv->relistening) /* the new listener starts accepting itself */
        return;
    if (srv->reserve_fd < 0)
        srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    uv_poll_start(&srv->listener, UV_READABLE, on_listen);
}

/* Out of descriptors: one pending connection is refused with the spare
 * one. Returns 0 to go on accepting, -1 to stop for now. */
static int out_of_fds(rd_server *srv, int why)
{
    if (srv->reserve_fd < 0) { /* taken by another thread's open: wait */
        uv_poll_stop(&srv->listener);
        uv_timer_start(&srv->pause, on_pause_end, RD_ACCEPT_PAUSE_MS, 0);
        return -1;
    }
    close(srv->reserve_fd);
    int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0)
        refuse_nofd(srv, fd, why);
    srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? 0 : -1;
}

static void on_listen(uv_poll_t *h, int status, int events)
{
    rd_server *srv = h->data;
    (void)events;
    if (status < 0)
        return;
    for (int n = 0; n < 128; n++) { /* then the loop's other handles run */
        int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            rd_server_adopt(srv, fd);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if ((errno != EMFILE && errno != ENFILE) || out_of_fds(srv, errno))
            return; /* EAGAIN: none left */
    }
}

static int bind_socket(const char *path, char *err, size_t cap)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path); /* its length checked before */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        int e = -errno;
        snprintf(err, cap, "cannot listen on %s: %s", path, strerror(errno));
        return e;
    }
    mode_t old = umask(0177); /* 0600: the socket is its user's alone */
    int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 128) == 0;
    int e = ok ? 0 : -errno;
    umask(old);
    if (!ok) {
        snprintf(err, cap, "cannot listen on %s: %s", path, strerror(-e));
        close(fd);
        return e;
    }
    return fd;
}

int rd_accept_listen(rd_server *srv, const char *path, char *err, size_t cap)
{
    int fd = bind_socket(path, err, cap);
    if (fd < 0)
        return fd;
    srv->listen_fd = fd;
    srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    uv_timer_init(srv->loop, &srv->pause);
    srv->pause.data = srv;
    int e = uv_poll_init(srv->loop, &srv->listener, fd);
    if (!e) {
        srv->listener.data = srv;
        e = uv_poll_start(&srv->listener, UV_READABLE, on_listen);
        if (e)
            uv_close((uv_handle_t *)&srv->listener, NULL);
    }
    if (e) {
        snprintf(err, cap, "cannot listen on %s: %s", path, uv_strerror(e));
        uv_close((uv_handle_t *)&srv->pause, NULL);
        close(fd);
        if (srv->reserve_fd >= 0)
            close(srv->reserve_fd);
        unlink(path);
        return e;
    }
    return 0;
}

/* The old listener's handle is closed: it watches the new socket. */
static void on_listener_closed(uv_handle_t *h)
{
    rd_server *srv = h->data;
    srv->relistening = 0;
    if (!srv->listening) /* closed for good meanwhile: rd_accept_close */
        return;
    if (uv_poll_init(srv->loop, &srv->listener, srv->listen_fd) == 0) {
        srv->listener.data = srv;
        uv_poll_start(&srv->listener, UV_READABLE, on_listen);
    }
}

int rd_accept_rebind(rd_server *srv, const char *path, char *err, size_t cap)
{
    if (srv->relistening)
        return 0;
    int fd = bind_socket(path, err, cap);
    if (fd < 0)
        return fd;
    uv_timer_stop(&srv->pause);
    uv_poll_stop(&srv->listener);
    srv->relistening = 1;
    uv_close((uv_handle_t *)&srv->listener, on_listener_closed);
    close(srv->listen_fd); /* its pending connections are refused: they were unreachable */
    srv->listen_fd = fd;
    return 0;
}

void rd_accept_close(rd_server *srv)
{
    uv_poll_stop(&srv->listener);
    if (!srv->relistening) /* else closing already */
        uv_close((uv_handle_t *)&srv->listener, NULL);
    uv_close((uv_handle_t *)&srv->pause, NULL);
    close(srv->listen_fd);
    if (srv->reserve_fd >= 0)
        close(srv->reserve_fd);
    srv->reserve_fd = -1;
}
