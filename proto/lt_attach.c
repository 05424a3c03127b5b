/* lt_attach: marker files and paths of live attach (see lt_attach.h). */
#include "lt_attach.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* LT_ATTACH_DIR for uid into buf. */
static void lt_attach_dir(uid_t uid, char *buf, size_t cap)
{
    snprintf(buf, cap, "/tmp/luatrace-%u/attach", (unsigned)uid);
}

static int private_dir(const char *path, uid_t uid)
{
    struct stat st;
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return -errno;
    if (lstat(path, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077))
        return -EPERM; /* someone else's, or open to others: never use it */
    return 0;
}

int lt_user_dir(uid_t uid, char *buf, size_t cap)
{
    snprintf(buf, cap, "/tmp/luatrace-%u", (unsigned)uid);
    return private_dir(buf, uid);
}

int lt_attach_make_dir(uid_t uid)
{
    char dir[128], parent[128];
    lt_attach_dir(uid, dir, sizeof dir);
    int e = lt_user_dir(uid, parent, sizeof parent);
    return e ? e : private_dir(dir, uid);
}

void lt_attach_marker_path(uid_t uid, pid_t pid, char *buf, size_t cap)
{
    char dir[128];
    lt_attach_dir(uid, dir, sizeof dir);
    snprintf(buf, cap, "%s/%d", dir, (int)pid);
}

void lt_attach_socket_path(uid_t uid, pid_t pid, char *buf, size_t cap)
{
    char dir[128];
    lt_attach_dir(uid, dir, sizeof dir);
    snprintf(buf, cap, "%s/%d.sock", dir, (int)pid);
}

void lt_attach_ring_name(pid_t pid, char *buf, size_t cap)
{
    snprintf(buf, cap, "attach.%d", (int)pid);
}

unsigned long long lt_attach_start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    /* the command name (field 2) may hold spaces and ')': skip to the last */
    char *p = strrchr(buf, ')');
    unsigned long long start = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                            "%*d %*d %*d %llu", &start) != 1)
        return 0;
    return start;
}

int lt_attach_marker_write(const char *path, const lt_attach_marker *m)
{
    char tmp[256], text[128];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int n = snprintf(text, sizeof text, "luatrace-attach %d\npid %d\nstart %llu\nsignal %d\n",
                     LT_ATTACH_VERSION, (int)m->pid, m->start, m->signo);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    int ok = write(fd, text, (size_t)n) == n;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) < 0) {
        int e = ok ? -errno : -EIO;
        unlink(tmp);
        return e;
    }
    return 0;
}

int lt_attach_marker_read(const char *path, lt_attach_marker *m)
{
    char text[256];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return -EPROTO;
    text[n] = 0;
    int v, pid, signo;
    unsigned long long start;
    if (sscanf(text, "luatrace-attach %d\npid %d\nstart %llu\nsignal %d\n", &v, &pid, &start,
               &signo) != 4 ||
        v != LT_ATTACH_VERSION || pid <= 0 || signo <= 0 || signo > 64)
        return -EPROTO;
    *m = (lt_attach_marker){pid, start, signo};
    return 0;
}

/* PID.sock left by a recorderd killed while it attached (SIGKILL: it could
 * not remove it): its process is gone and nobody listens on it. A live
 * recorderd for a gone process ends at once: our connection costs it
 * nothing. Non-blocking: a full backlog is not a wait. */
static int stale_socket(const char *path, long pid)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH || strlen(path) >= sizeof a.sun_path)
        return 0;
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return 0;
    int refused = connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno == ECONNREFUSED;
    close(fd);
    return refused;
}

int lt_attach_sweep(uid_t uid)
{
    char dir[128], path[128 + sizeof ((struct dirent *)0)->d_name + 1];
    lt_attach_dir(uid, dir, sizeof dir);
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        lt_attach_marker m;
        if (pid <= 0 || (*end && strcmp(end, ".sock")))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (*end) { /* PID.sock */
            n += stale_socket(path, pid) && unlink(path) == 0;
            continue;
        }
        if (!lt_attach_marker_read(path, &m) && m.start != lt_attach_start_time((pid_t)pid))
            n += unlink(path) == 0;
    }
    closedir(d);
    return n;
}
