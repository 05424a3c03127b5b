/* co_conn: finding recorderd and registering the ring with it. Runs at load
 * and exit only, never on the hook path (but for co_conn_gone, which the
 * full-ring wait calls now and then). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "co_state.h"
#include "lt_ctl.h"
#include "lt_trust.h"

#ifndef CO_RECORDERD_INSTALLED
#define CO_RECORDERD_INSTALLED "/usr/local/bin/recorderd"
#endif

/* recorderd next to this module in a build tree, else the installed one. */
static void find_recorderd(char *buf, size_t cap)
{
    const char *env = getenv("LUATRACE_RECORDERD");
    Dl_info info;
    if (env && *env) {
        snprintf(buf, cap, "%s", env);
        return;
    }
    if (dladdr((void *)find_recorderd, &info) && info.dli_fname) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = 0;
            snprintf(buf, cap, "%s/../recorderd/recorderd", dir);
            if (access(buf, X_OK) == 0)
                return;
        }
    }
    snprintf(buf, cap, "%s", access(CO_RECORDERD_INSTALLED, X_OK) == 0 ? CO_RECORDERD_INSTALLED
                                                                       : "recorderd");
}

/* exe can be run: a path, or a name found on PATH (as execlp looks). */
static int runnable(const char *exe)
{
    char path[PATH_MAX];
    const char *dirs = getenv("PATH");
    if (strchr(exe, '/'))
        return access(exe, X_OK) == 0;
    for (const char *d = dirs ? dirs : "/usr/bin:/bin"; d; d = strchr(d, ':') ? strchr(d, ':') + 1 : NULL) {
        size_t n = strcspn(d, ":");
        if (snprintf(path, sizeof path, "%.*s/%s", (int)n, n ? d : ".", exe) < (int)sizeof path &&
            access(path, X_OK) == 0)
            return 1;
    }
    return 0;
}

/* Starts a private recorder on one end of a socketpair. It is detached
 * (double fork, own session) so the program's own wait()s never see it. */
static int spawn_recorder(co_state *s)
{
    int sv[2];
    char exe[PATH_MAX];
    find_recorderd(exe, sizeof exe);
    if (!runnable(exe))
        return -ENOENT; /* said once, by the caller: not in a child too */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    pid_t child = fork();
    if (child == 0) {
        if (fork() == 0) {
            setsid();
            /* dup2 clears CLOEXEC on the copy; sv[1] already 3 (the
             * program started with a standard descriptor closed) is no
             * copy, and must lose it itself */
            if (sv[1] == 3)
                fcntl(3, F_SETFD, 0);
            else
                dup2(sv[1], 3);
            if (sv[1] < 3) /* not the recorder's stderr */
                close(sv[1]);
            /* Hold none of the program's files (a pipe kept open would
             * delay whoever waits for its end); keep stderr for messages. */
            int null = open("/dev/null", O_RDWR);
            if (null >= 0) {
                dup2(null, 0);
                dup2(null, 1);
            }
            close_range(4, ~0u, 0);
            const char *out = getenv("LUATRACE_OUT");
            execlp(exe, exe, "serve", "--fd", "3", "--out", out && *out ? out : "luatrace-out",
                   s->private_summary ? "--summary" : "--quiet", (char *)NULL);
            fprintf(stderr, "luatrace: cannot run %s: %s\n", exe, strerror(errno));
        }
        _exit(0);
    }
    close(sv[1]);
    if (child < 0) {
        close(sv[0]);
        return -errno;
    }
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ;
    s->wait_bye = 1;
    return sv[0];
}

static void read_cmdline(char *buf, size_t cap)
{
    buf[0] = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, cap - 1);
    char more;
    /* a command line longer than the message holds (a linter given a
     * directory's files) ends with "...": cut without a mark, the
     * session's command read as the whole of it */
    int cut = n == (ssize_t)cap - 1 && cap > 4 && read(fd, &more, 1) == 1;
    close(fd);
    n = n < 0 ? 0 : n;
    buf[n] = 0;
    for (ssize_t i = 0; i + 1 < n; i++)
        if (!buf[i])
            buf[i] = ' ';
    if (cut)
        memcpy(buf + n - 3, "...", 3);
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -EPIPE;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* LuaJIT calibrated for exact time (a listening process started without
 * LUATRACE_TIMING=sample) keeps it when asked for sampled time: sampled
 * time there needs the dispatch calibration's figures (co_calib.c), and
 * without them its event-dense code came out twice its share (a wrap
 * generator, tiny calls), where exact time with its own calibration
 * agrees with -joff. The CLOCK record says which the trace has. */
static int exact_fits(const co_state *s)
{
    const co_bias *b = co_calib_bias();
    return co_jit_is() && !s->no_clock && b->ok && !b->in16;
}

/* Waits up to 10 s for the ack. */
static int read_ack(int fd, lt_ctl_msg *m)
{
    char buf[LT_CTL_MSG_MAX];
    size_t have = 0;
    while (have < sizeof buf) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int r = poll(&pfd, 1, 10000);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -ETIMEDOUT;
        ssize_t k = read(fd, buf + have, sizeof buf - have);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -ECONNRESET;
        have += (size_t)k;
        long len = lt_ctl_scan((const uint8_t *)buf, have, sizeof buf);
        if (len < 0)
            return -EPROTO;
        if (len == 0)
            continue;
        msgpack_unpacked u;
        msgpack_unpacked_init(&u);
        size_t off = 0;
        int ok = msgpack_unpack_next(&u, buf, (size_t)len, &off) == MSGPACK_UNPACK_SUCCESS;
        int err = ok ? lt_ctl_parse(&u.data, m) : 0;
        msgpack_unpacked_destroy(&u);
        if (ok)
            return err ? err : m->type == LT_CTL_ACK ? 0 : -EPROTO;
    }
    return -EPROTO;
}

/* A process to be sampled from outside lets the recorderd it talks to
 * read it, where Yama allows only a process's ancestors (listen's
 * recorderd is not one): that process only, by its socket's credentials. */
static void let_peer_read(int fd)
{
    struct ucred cr;
    socklen_t n = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 && cr.pid > 0)
        prctl(PR_SET_PTRACER, (unsigned long)cr.pid, 0, 0, 0); /* no Yama: EINVAL, no matter */
}

static int hello(co_state *s, int fd, char *err, size_t cap)
{
    lt_ctl_msg m = {.type = LT_CTL_HELLO, .pid = (uint32_t)getpid(), .ring = s->ring.size,
                    .sample = s->sample_hz, .outside = s->outside,
                    .state = (uint64_t)(uintptr_t)s->outside_state,
                    .tid = (uint32_t)s->outside_tid};
    snprintf(m.shm, sizeof m.shm, "%s", s->shm);
    read_cmdline(m.cmd, sizeof m.cmd);
    if (s->outside)
        let_peer_read(fd);
    /* too long or gone: recorderd falls back to /proc */
    if (strlen(s->cwd0) < sizeof m.cwd)
        snprintf(m.cwd, sizeof m.cwd, "%s", s->cwd0);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    int e = lt_ctl_pack(&m, &sb);
    if (!e)
        e = send_all(fd, sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
    /* a daemon that refuses at once (out of file descriptors) may have
     * answered and closed before the hello went out: its answer says why */
    if (!e || e == -EPIPE) {
        int a = read_ack(fd, &m);
        e = e && a ? e : a;
    }
    if (e)
        snprintf(err, cap, "no answer from recorderd (%s)", strerror(-e));
    else if (!m.ok) {
        char text[4 * LT_CTL_TEXT_MAX];
        snprintf(err, cap, "recorderd refused the trace: %s",
                 lt_trust_printable(m.text, strlen(m.text), text, sizeof text));
    } else if (!strcmp(m.timing, "none")) { /* listen/attach --coverage */
        s->no_clock = 1;
        s->use_tsc = 0;
        s->sample_every = 1;
        s->tick_mode = 0;
    } else if ((!strcmp(m.timing, "cpu") || !strcmp(m.timing, "wall")) && !exact_fits(s)) {
        co_module_sampled_time(s, m.timing); /* listen --time sample, attach */
        if (m.lines_sampled) /* and lines by sample, as run's default: no line hook */
            co_module_lines_by_sample(s);
    }
    if (!e && m.ok && m.memory) /* listen --memory: co_module.c's memory_begin */
        s->mem = 1;
    return e ? e : m.ok ? 0 : -EPERM;
}

static void spawn_error(char *err, size_t cap, int e)
{
    char exe[PATH_MAX];
    find_recorderd(exe, sizeof exe);
    if (e == -ENOENT)
        snprintf(err, cap, "no recorderd to record the trace: none is listening, and %s cannot "
                 "be run (set LUATRACE_RECORDERD, or PATH)", exe);
    else
        snprintf(err, cap, "cannot start a recorder: %s", strerror(-e));
}

/* Every socket is checked (lt_trust.h) before the hello says anything of
 * this process; one that fails the check is refused, never replaced by a
 * private recorder. */
int co_conn_open(co_state *s, char *err, size_t cap)
{
    char path[PATH_MAX];
    const char *env = getenv("LUATRACE_SOCKET");
    int fd;
    if (s->sock_path[0]) { /* attach: recorderd waits there; never spawn */
        fd = lt_trust_connect(s->sock_path, err, cap);
    } else if (s->private_summary) {
        fd = spawn_recorder(s);
        if (fd < 0)
            spawn_error(err, cap, fd);
    } else if (env && *env) {
        fd = lt_trust_connect(env, err, cap);
    } else {
        lt_ctl_default_path(path, sizeof path);
        fd = lt_trust_connect(path, err, cap);
        const char *spawn = getenv("LUATRACE_SPAWN");
        int may_spawn = fd != -EPERM && !(spawn && !strcmp(spawn, "0"));
        if (fd < 0 && may_spawn)
            fd = spawn_recorder(s);
        if (fd < 0 && may_spawn)
            spawn_error(err, cap, fd);
        else if (fd < 0 && fd != -EPERM)
            snprintf(err, cap, "no recorderd is listening on %s (LUATRACE_SPAWN=0: not starting one)",
                     path);
    }
    fd = co_fd_above_std(fd);
    if (fd < 0)
        return fd;
    s->sock = fd;
    if (co_fd_id(fd, &s->sock_dev, &s->sock_ino))
        s->sock_dev = s->sock_ino = 0;
    int e = hello(s, fd, err, cap);
    if (e) {
        close(fd);
        s->sock = -1;
    }
    return e;
}

int co_fd_id(int fd, dev_t *dev, ino_t *ino)
{
    struct stat st;
    if (fstat(fd, &st))
        return -1;
    *dev = st.st_dev;
    *ino = st.st_ino;
    return 0;
}

int co_fd_above_std(int fd)
{
    if (fd < 0 || fd > 2)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int e = high < 0 ? -errno : high;
    close(fd);
    return e;
}

int co_fd_is(int fd, dev_t dev, ino_t ino)
{
    struct stat st;
    return fd >= 0 && !fstat(fd, &st) && st.st_dev == dev && st.st_ino == ino;
}

int co_conn_ours(const co_state *s)
{
    return co_fd_is(s->sock, s->sock_dev, s->sock_ino);
}

int co_conn_gone(co_state *s)
{
    if (!co_conn_ours(s)) /* the program closed it: gone */
        return 1;
    struct pollfd pfd = {s->sock, POLLIN, 0};
    /* the recorder never writes after the ack: readable means EOF */
    return poll(&pfd, 1, 0) > 0;
}

void co_conn_close(co_state *s)
{
    if (!co_conn_ours(s)) { /* else a file of the program's: not ours to close */
        s->sock = -1;
        return;
    }
    if (s->wait_bye && !s->lost) {
        fflush(stdout); /* the program's output before the recorder's summary */
        struct pollfd pfd = {s->sock, POLLIN, 0};
        while (poll(&pfd, 1, 60000) < 0 && errno == EINTR)
            ;
    }
    close(s->sock);
    s->sock = -1;
}
