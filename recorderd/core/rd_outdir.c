/* rd_outdir: output directories and files by descriptor (rd_outdir.h). */
#include "rd_outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_util.h"

/* path without its trailing slashes ("out/" would follow a symlink out). */
static int trimmed(const char *path, char *buf, size_t cap)
{
    if (snprintf(buf, cap, "%s", path) >= (int)cap)
        return -ENAMETOOLONG;
    for (size_t n = strlen(buf); n > 1 && buf[n - 1] == '/';)
        buf[--n] = 0;
    return buf[0] ? 0 : -ENOENT;
}

/* mkdir -p: the parents 0755 (as before: others may need to pass), the
 * last 0700. */
static int make_path(char *buf)
{
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int e = mkdir(buf, 0755) < 0 && errno != EEXIST ? -errno : 0;
        *p = '/';
        if (e)
            return e;
    }
    return mkdir(buf, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

/* The out-directory rule: a directory whose group or others may write must
 * be sticky (as /tmp), or another user could rename what we make in it and
 * put their own in its place. */
static int unsafe_mode(const struct stat *st)
{
    return (st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX);
}

/* The rule on an open directory (path: for the message). Returns 0 or
 * -EPERM with a message in err. */
static int rd_out_check(int dfd, const char *path, char *err, size_t cap)
{
    struct stat st;
    if (fstat(dfd, &st) < 0) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return -errno;
    }
    if (unsafe_mode(&st)) {
        snprintf(err, cap, "%s: other users can write to it and it is not sticky (mode %04o): "
                 "use a directory of your own, or chmod +t it", path,
                 (unsigned)(st.st_mode & 07777));
        return -EPERM;
    }
    return 0;
}

int rd_out_open(const char *path, int create, char *err, size_t cap)
{
    char buf[PATH_MAX];
    int e = trimmed(path, buf, sizeof buf);
    if (!e && create)
        e = make_path(buf);
    int fd = e ? e : open(buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        e = fd == e ? e : -errno;
        if (e == -ENOTDIR && lstat(buf, &st) == 0 && S_ISLNK(st.st_mode))
            e = -ELOOP; /* O_DIRECTORY says ENOTDIR of a symlink under O_NOFOLLOW */
        snprintf(err, cap, "%s: %s", path,
                 e == -ELOOP ? "a symlink: give the directory it points to" : strerror(-e));
        return e;
    }
    e = rd_out_check(fd, path, err, cap);
    if (e) {
        close(fd);
        return e;
    }
    return fd;
}

int rd_out_subdir(int dfd, const char *name, int excl)
{
    struct stat st;
    if (mkdirat(dfd, name, 0700) < 0 && (errno != EEXIST || excl))
        return -errno;
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    /* Between mkdirat and openat another user may have put a directory of
     * theirs in its place: it is not ours, and nothing goes into it. */
    int e = fstat(fd, &st) < 0                          ? -errno
            : st.st_uid != geteuid() || unsafe_mode(&st) ? -EPERM
                                                         : 0;
    if (e) {
        close(fd);
        return e;
    }
    return fd;
}

int rd_out_create(int dfd, const char *name)
{
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    return fd < 0 ? -errno : fd;
}

int rd_out_tmpfile(int dfd)
{
    int fd = openat(dfd, ".", O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd < 0 ? -errno : fd;
    /* a file system without O_TMPFILE: a named one, removed at once */
    char name[64];
    for (unsigned k = 0; k < 100; k++) {
        snprintf(name, sizeof name, ".luatrace-tmp.%d.%llu", (int)getpid(),
                 rd_now_ns() + k);
        fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            unlinkat(dfd, name, 0);
            return fd;
        }
        if (errno != EEXIST)
            break;
    }
    return -errno;
}

/* A new temporary file for name under dfd, its name in tmp. A name taken
 * (in a shared directory, by anyone) only moves on to the next. */
static int create_tmp(int dfd, const char *name, char *tmp, size_t cap)
{
    unsigned long long seed = rd_now_ns();
    for (unsigned k = 0; k < 100; k++) {
        snprintf(tmp, cap, ".%.200s.%d.%llx.tmp", name, (int)getpid(), seed + k);
        int fd = rd_out_create(dfd, tmp);
        if (fd != -EEXIST)
            return fd;
    }
    return -EEXIST;
}

/* A stream over a descriptor that keeps the errno of its first failed
 * write: stdio forgets it (a full buffer that fails is dropped, so a later
 * fflush succeeds and only ferror is left), and the writers say -EIO. */
typedef struct {
    int fd;
    int err; /* errno of the first failed write, 0 if none */
} out_stream;

static ssize_t stream_write(void *c, const char *buf, size_t n)
{
    out_stream *s = c;
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(s->fd, buf + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (!s->err)
                s->err = k < 0 ? errno : EIO;
            return done ? (ssize_t)done : -1;
        }
        done += (size_t)k;
    }
    return (ssize_t)done;
}

static int stream_close(void *c)
{
    return close(((out_stream *)c)->fd);
}

/* fd as a FILE that records in s why a write failed; fclose closes fd. */
static FILE *stream_open(int fd, out_stream *s)
{
    *s = (out_stream){fd, 0};
    return fopencookie(s, "w", (cookie_io_functions_t){NULL, stream_write, NULL, stream_close});
}

/* Flushes f. Returns 0, or the reason a write to it failed: the errno of
 * its first failed write (ENOSPC, EFBIG: the disk is full or the file too
 * large), EIO if none is known. */
static int stream_error(FILE *f, const out_stream *s)
{
    int e = fflush(f) || ferror(f) ? -EIO : 0;
    return e && s->err ? -s->err : e;
}

/* Writes the report fn into f (stream_open's, on s) and closes it: 0, or
 * the first reason it failed (the stream's errno over a writer's EIO). */
static int write_close(FILE *f, const out_stream *s, int (*fn)(FILE *, void *), void *ud)
{
    int e = fn(f, ud);
    int w = stream_error(f, s);
    if (w && (!e || e == -EIO)) /* writers say EIO; the stream knows why */
        e = w;
    errno = 0;
    if (fclose(f) && !e)
        e = errno ? -errno : -EIO;
    return e;
}

int rd_out_write(int dfd, const char *name, int (*fn)(FILE *, void *), void *ud)
{
    char tmp[300];
    int fd = create_tmp(dfd, name, tmp, sizeof tmp);
    if (fd < 0)
        return fd;
    out_stream s;
    FILE *f = stream_open(fd, &s);
    if (!f) {
        int e = -errno;
        close(fd);
        unlinkat(dfd, tmp, 0);
        return e;
    }
    int e = write_close(f, &s, fn, ud);
    if (!e && renameat(dfd, tmp, dfd, name) < 0)
        e = -errno;
    if (e)
        unlinkat(dfd, tmp, 0);
    return e;
}

/* Not a regular file: a device, a FIFO, a socket, or so through symlinks
 * (/dev/null, /dev/stdout, a shell's >(...)): ours or root's. */
static int is_stream(const struct stat *st)
{
    return !S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) &&
           (st->st_uid == geteuid() || st->st_uid == 0);
}

/* name under dfd, when it is a stream (is_stream), is written into as it
 * is: renaming a file over /dev/null would replace the device. Another
 * user's FIFO is no stream of ours: it is replaced like a file, as is
 * anything that becomes a regular file between the look and the open
 * (nothing was written to it: no O_TRUNC). Returns 1 if name is no
 * stream, else 0 or -errno. */
static int write_stream(int dfd, const char *name, int (*fn)(FILE *, void *), void *ud)
{
    struct stat st;
    if (fstatat(dfd, name, &st, 0) < 0 || !is_stream(&st))
        return 1;
    int fd = openat(dfd, name, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    out_stream s;
    FILE *f = fstat(fd, &st) == 0 && is_stream(&st) ? stream_open(fd, &s) : NULL;
    if (!f) {
        close(fd);
        return 1;
    }
    return write_close(f, &s, fn, ud);
}

/* The descriptor path names when it is one of this process's own, as a
 * shell's /dev/stdout, /dev/stderr and /dev/fd/N are (symlinks, at most a
 * few, to /proc/self/fd/N), else -1. Such a path is the descriptor the
 * user handed us, whatever it is open on: a regular file there (stdout
 * redirected to one) must be written into, not have its symlink renamed
 * over (as root that replaced /dev/stdout itself with a file). */
static int own_fd(const char *path)
{
    char buf[PATH_MAX], link[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (int hop = 0; hop < 4; hop++) {
        int n = -1, end = 0;
        if ((sscanf(buf, "/proc/self/fd/%d%n", &n, &end) == 1 ||
             sscanf(buf, "/dev/fd/%d%n", &n, &end) == 1) &&
            n >= 0 && !buf[end])
            return n;
        ssize_t k = readlink(buf, link, sizeof link - 1);
        if (k <= 0)
            return -1;
        link[k] = 0;
        snprintf(buf, sizeof buf, "%s", link);
    }
    return -1;
}

/* The report into descriptor n (own_fd), through a copy of it: 0 or -errno. */
static int write_fd(int n, int (*fn)(FILE *, void *), void *ud)
{
    int fd = fcntl(n, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
        return -errno;
    out_stream s;
    FILE *f = stream_open(fd, &s);
    if (!f) {
        int e = -errno;
        close(fd);
        return e;
    }
    return write_close(f, &s, fn, ud);
}

int rd_out_write_path(const char *path, int (*fn)(FILE *, void *), void *ud, char *err,
                      size_t cap)
{
    int own = own_fd(path);
    if (own >= 0) {
        int e = write_fd(own, fn, ud);
        if (e)
            snprintf(err, cap, "cannot write %s: %s", path, strerror(-e));
        return e;
    }
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    if (!*name) {
        snprintf(err, cap, "%s: a directory, not a file name", path);
        return -EISDIR;
    }
    /* the directory as named (a symlink to it too: the user chose it) */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        snprintf(err, cap, "cannot write %s: %s", path, strerror(errno));
        return -errno;
    }
    int e = rd_out_check(dfd, dir, err, cap);
    if (e) {
        close(dfd);
        return e;
    }
    e = write_stream(dfd, name, fn, ud);
    if (e == 1)
        e = rd_out_write(dfd, name, fn, ud);
    close(dfd);
    if (e)
        snprintf(err, cap, "cannot write %s: %s", path, strerror(-e));
    return e;
}
