/* rd_util: UTF-8, JSON strings, clocks. */
#include "rd_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

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

void rd_xml_put(FILE *out, const char *s, size_t max)
{
    for (int l; *s && max; s += l ? l : 1, max--) {
        l = rd_utf8_seq(s);
        unsigned char c = (unsigned char)*s;
        if (c == '<')
            fputs("&lt;", out);
        else if (c == '>')
            fputs("&gt;", out);
        else if (c == '&')
            fputs("&amp;", out);
        else if (c == '"')
            fputs("&quot;", out);
        else if (c == '\'')
            fputs("&apos;", out);
        else if (!l)
            fputs("\xEF\xBF\xBD", out); /* U+FFFD, as in the JSON outputs */
        else if ((c < 0x20 && c != '\t') || c == 0x7f ||
                 (c == 0xC2 && (unsigned char)s[1] < 0xA0)) /* DEL, C1: not HTML text */
            fputc('?', out);
        else
            fwrite(s, 1, (size_t)l, out);
    }
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

size_t rd_proc_read(int pid, const char *name, char *buf, size_t cap)
{
    char path[128];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    return n;
}

int rd_proc_maps(int pid, const char *path)
{
    char maps[64];
    snprintf(maps, sizeof maps, "/proc/%d/maps", pid);
    FILE *f = fopen(maps, "re");
    if (!f)
        return 1;
    char *line = NULL;
    size_t cap = 0, n = strlen(path);
    int found = 0;
    while (!found && getline(&line, &cap, f) > 0) {
        /* the path is the last field: "... INODE    PATH[ (deleted)]\n" */
        const char *p = strstr(line, path);
        found = p && p > line && p[-1] == ' ' && (p[n] == '\n' || p[n] == ' ' || !p[n]);
    }
    int err = ferror(f);
    free(line);
    fclose(f);
    return found || err;
}

char rd_proc_state(const char *stat)
{
    const char *p = strrchr(stat, ')'); /* the command name may hold ')' */
    return p && p[1] == ' ' ? p[2] : 0;
}

FILE *rd_fopen_regular(const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return NULL;
    int e = fstat(fd, &st) < 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : 0;
    if (!e && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
        e = errno;
    FILE *f = e ? NULL : fdopen(fd, "rb");
    if (!f) {
        e = e ? e : errno;
        close(fd);
        errno = e;
    }
    return f;
}
