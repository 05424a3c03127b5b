/* rd_client: one request, one reply, on the daemon's socket. */
#include "rd_client.h"

#include <errno.h>
#include <glob.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lt_ctl.h"
#include "lt_trust.h"
#include "rd_run.h"
#include "rd_util.h"

/* The state letter of the process at the other end of fd (its
 * /proc/PID/stat), its pid in *pid; 0 if not known. */
static char peer_state(int fd, pid_t *pid)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    char buf[512];
    *pid = 0;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.pid <= 0 ||
        !rd_proc_read(cr.pid, "stat", buf, sizeof buf))
        return 0;
    *pid = cr.pid;
    return rd_proc_state(buf);
}

/* Waits up to ms for fd to be readable, a second at a time: a daemon
 * stopped (SIGSTOP, a debugger) cannot answer, and is said so at once
 * rather than after the whole wait (a user waited 30 s for status).
 * 1: readable, 0: timed out, -ESRCH: the daemon is stopped (said; a
 * request of type t already sent waits in its socket). */
static int wait_answer(int fd, int ms, const char *path, enum lt_ctl_type t)
{
    for (int left = ms; ms < 0 || left > 0;) {
        int slice = ms < 0 || left > 1000 ? 1000 : left;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, slice);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return 0;
        pid_t pid;
        char st = peer_state(fd, &pid);
        if (st == 'T' || st == 't') {
            fprintf(stderr, "recorderd: the daemon on %s (pid %d) is stopped (SIGSTOP or a "
                            "debugger) and cannot answer: kill -CONT %d resumes it%s\n",
                    path, (int)pid, (int)pid,
                    t == LT_CTL_STOP ? ", and then it stops (the request waits for it)" : "");
            return -ESRCH;
        }
        left -= slice;
    }
    return 0;
}

/* Sends a bare request of type t and reads the reply until the daemon
 * closes: 30 s at most for the first bytes, then tail_ms (-1: no limit).
 * Returns the unpacked reply in r, or an error; quiet: no message when
 * nothing listens on path (a run's socket left by a killed run). */
static int request(const char *path, enum lt_ctl_type t, int tail_ms, msgpack_unpacked *r,
                   char **buf, int quiet)
{
    char why[1024];
    int fd = lt_trust_connect(path, why, sizeof why); /* nothing is sent to a stranger */
    if (fd == -EPERM)
        fprintf(stderr, "recorderd: %s\n", why);
    else if (fd < 0 && quiet)
        return fd;
    else if (fd < 0)
        fprintf(stderr, "recorderd: no daemon answers on %s: %s (start one with recorderd "
                        "listen &, or give its --socket)\n", path, strerror(-fd));
    if (fd < 0)
        return fd;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    lt_ctl_msg m = {.type = t};
    int e = lt_ctl_pack(&m, &sb);
    /* a daemon out of file descriptors answers and closes at once: the
     * request may find it gone, its answer (why) is read all the same */
    int sent = !e && send(fd, sb.data, sb.size, MSG_NOSIGNAL) == (ssize_t)sb.size;
    msgpack_sbuffer_destroy(&sb);
    size_t have = 0, cap = 1 << 16;
    *buf = malloc(cap);
    while (!e && *buf) {
        int w = wait_answer(fd, have ? tail_ms : 30000, path, t);
        if (w <= 0) {
            e = w < 0 ? w : -ETIMEDOUT;
            break;
        }
        if (have == cap && !(*buf = realloc(*buf, cap *= 2)))
            break;
        ssize_t k = read(fd, *buf + have, cap - have);
        if (k <= 0)
            break;
        have += (size_t)k;
    }
    close(fd);
    if (!e && !sent && !have)
        e = -EPIPE;
    size_t off = 0;
    long len = !e && *buf ? lt_ctl_scan((const uint8_t *)*buf, have, have + 1) : -1;
    if (!e && (len <= 0 || msgpack_unpack_next(r, *buf, (size_t)len, &off) !=
                               MSGPACK_UNPACK_SUCCESS))
        e = -EPROTO;
    if (e && e != -ENOENT && e != -ESRCH) /* -ESRCH: said (wait_answer) */
        fprintf(stderr, "recorderd: bad or no answer from %s: %s\n", path, strerror(-e));
    return e;
}

/* head: printed before the daemon's text, if it answers */
static int status(const char *path, int json, int quiet, const char *head)
{
    msgpack_unpacked r;
    msgpack_unpacked_init(&r);
    char *buf = NULL;
    int e = request(path, LT_CTL_STATUS, 30000, &r, &buf, quiet);
    uint32_t len = 0;
    const char *s = e ? NULL : lt_ctl_field(&r.data, json ? "json" : "text", &len);
    int shown = s != NULL;
    if (s && head)
        fputs(head, stdout);
    if (s) /* a daemon's text, with the traced programs' names in it */
        rd_write_printable(stdout, s, len);
    else if (!e && (s = lt_ctl_field(&r.data, "err", &len)) != NULL) {
        char why[4 * LT_CTL_TEXT_MAX + 1]; /* a refusal (out of file descriptors) */
        fprintf(stderr, "recorderd: the daemon refused: %s\n",
                lt_trust_printable(s, len < LT_CTL_TEXT_MAX ? len : LT_CTL_TEXT_MAX, why,
                                   sizeof why));
    } else if (!e)
        fprintf(stderr, "recorderd: the daemon's answer has no %s\n", json ? "json" : "text");
    msgpack_unpacked_destroy(&r);
    free(buf);
    return shown ? 0 : 1;
}

int rd_client_status(const char *path, int json)
{
    return status(path, json, 0, NULL);
}

int rd_client_status_all(const char *path)
{
    glob_t g;
    size_t runs = 0;
    if (glob(RD_RUN_DIR "*/sock", 0, NULL, &g))
        g.gl_pathc = 0; /* none (GLOB_NOMATCH), or none readable */
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct stat st;
        if (lstat(g.gl_pathv[i], &st) || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
            g.gl_pathv[i][0] = 0; /* another user's runs are not ours to list */
        else
            runs++;
    }
    /* no listen daemon but runs: their status, without "no daemon answers" */
    int rc = runs && access(path, F_OK) ? 1 : status(path, 0, 0, NULL), shown = !rc;
    for (size_t i = 0; i < g.gl_pathc; i++)
        if (g.gl_pathv[i][0])
            shown += !status(g.gl_pathv[i], 0, 1, shown ? "\nrecorderd run (a daemon of its own):\n"
                                                          : "recorderd run (a daemon of its own):\n");
    if (g.gl_pathc)
        globfree(&g);
    return shown ? 0 : status(path, 0, 0, NULL); /* runs all gone: path's message */
}

int rd_client_stop(const char *path)
{
    msgpack_unpacked r;
    msgpack_unpacked_init(&r);
    char *buf = NULL;
    /* the daemon holds the connection open until it exits, its reports written */
    int e = request(path, LT_CTL_STOP, -1, &r, &buf, 0);
    lt_ctl_msg m;
    int acked = !e && lt_ctl_parse(&r.data, &m) == 0 && m.type == LT_CTL_ACK;
    int ok = acked && m.ok;
    msgpack_unpacked_destroy(&r);
    free(buf);
    char why[4 * LT_CTL_TEXT_MAX + 1];
    if (ok)
        fprintf(stderr, "recorderd: stopped the daemon on %s\n", path);
    else if (acked) /* refused (out of file descriptors) */
        fprintf(stderr, "recorderd: the daemon refused: %s\n",
                lt_trust_printable(m.text, strlen(m.text), why, sizeof why));
    return ok ? 0 : 1;
}
