/* rd_util: mkdir -p, atomic report files, JSON strings. */
#include "rd_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int rd_mkdir_p(const char *dir)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return -ENAMETOOLONG;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* Flushes f. Returns 0, or the reason a write to it failed: the errno of
 * the flush, which retries what a failed write left in the buffer (ENOSPC,
 * EFBIG: the disk is full or the file too large), EIO if none is known. */
static int stream_error(FILE *f)
{
    errno = 0;
    if (fflush(f))
        return errno ? -errno : -EIO;
    return ferror(f) ? -EIO : 0;
}

int rd_write_atomic(const char *dir, const char *name, int (*fn)(FILE *, void *), void *ud)
{
    char tmp[PATH_MAX], dst[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/.%s.%d.tmp", dir, name, (int)getpid());
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = -errno;
        close(fd);
        unlink(tmp);
        return e;
    }
    int e = fn(f, ud);
    int w = stream_error(f);
    if (w && (!e || e == -EIO)) /* writers say EIO; the stream knows why */
        e = w;
    errno = 0;
    if (fclose(f) && !e)
        e = errno ? -errno : -EIO;
    if (!e && rename(tmp, dst) < 0)
        e = -errno;
    if (e)
        unlink(tmp);
    return e;
}

int rd_utf8_seq(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned c = u[0];
    int n = c < 0x80             ? 1
            : (c & 0xE0) == 0xC0 ? 2
            : (c & 0xF0) == 0xE0 ? 3
            : (c & 0xF8) == 0xF0 ? 4
                                 : 0;
    if (c == 0xC0 || c == 0xC1 || c > 0xF4) return 0;
    for (int i = 1; i < n; i++)
        if ((u[i] & 0xC0) != 0x80) return 0;
    if ((c == 0xE0 && u[1] < 0xA0) || (c == 0xED && u[1] >= 0xA0) || /* overlong, surrogate */
        (c == 0xF0 && u[1] < 0x90) || (c == 0xF4 && u[1] >= 0x90) ||
        (c == 0xEF && u[1] == 0xBF && u[2] >= 0xBE)) /* U+FFFE, U+FFFF */
        return 0;
    return n;
}

/* A byte a terminal takes for a command (C0 controls, ESC among them, and
 * DEL). The one test of what names and daemon texts may not carry. */
static int term_unsafe(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

const char *rd_printable(const char *s, char *buf, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 1 < cap; s++)
        buf[n++] = term_unsafe((unsigned char)*s) ? '?' : *s;
    buf[n] = 0;
    return buf;
}

int rd_write_printable(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        putc(c == '\n' || c == '\t' || !term_unsafe(c) ? c : '?', f);
    }
    return ferror(f) ? -EIO : 0;
}

void rd_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (int l; *s; s += l ? l : 1) {
        unsigned char c = (unsigned char)*s;
        l = rd_utf8_seq(s);
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else if (!l)
            fputs("\\ufffd", f);
        else
            fwrite(s, 1, (size_t)l, f);
    }
    fputc('"', f);
}

long long rd_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

unsigned long long rd_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}
