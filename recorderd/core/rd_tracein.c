/* rd_tracein: trace-file input, plain or zstd (lt_file.h). */
#include "rd_tracein.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lt_file.h"
#include "rd_unzip.h"
#include "rd_util.h"

/* A session (a directory with a trace.ltr) in dir, one not named *.prev
 * if there is one, into buf. Returns 0, or -1 if there is none. */
static int some_session(const char *dir, char *buf, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    struct stat st;
    char f[4096];
    int found = -1, prev = 0, len = (int)strlen(dir);
    while (len > 1 && dir[len - 1] == '/') /* luatrace-out/ */
        len--;
    while (d && (found || prev) && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        int p = n > 5 && !strcmp(de->d_name + n - 5, ".prev");
        snprintf(f, sizeof f, "%s/%s/trace.ltr", dir, de->d_name);
        if (de->d_name[0] == '.' || (!found && p) || stat(f, &st) || !S_ISREG(st.st_mode))
            continue;
        snprintf(buf, cap, "%.*s/%s", len, dir, de->d_name);
        found = 0, prev = p;
    }
    if (d)
        closedir(d);
    return found;
}

/* Why a directory with no trace.ltr is not a trace, and what to give
 * instead: the mistakes are the parent of the sessions (luatrace-out) and
 * a session kept without its trace (--no-trace). */
static void say_no_trace(const char *dir, char *err, size_t cap)
{
    char buf[4096];
    struct stat st;
    snprintf(buf, sizeof buf, "%s/session.json", dir);
    if (stat(buf, &st) == 0)
        snprintf(err, cap, "a session with no trace.ltr (run with --no-trace, or see the error "
                 "in its session.json): nothing to render; trace it again without --no-trace");
    else if (!some_session(dir, buf, sizeof buf))
        snprintf(err, cap, "a directory of sessions, not a session: give one of them, e.g. "
                 "recorderd report %s", buf);
    else
        snprintf(err, cap, "not a session directory (no trace.ltr in it): give a session "
                 "directory (luatrace-out/NAME) or a trace file");
}

static FILE *open_trace(const char *path, char *err, size_t cap)
{
    struct stat st;
    char buf[4096];
    const char *dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? path : NULL;
    if (dir) {
        snprintf(buf, sizeof buf, "%s/trace.ltr", dir);
        path = buf;
    }
    /* a file named is read as it is (a pipe: <(zstdcat ...)); the one
     * found in a session directory must be a file */
    FILE *f = dir ? rd_fopen_regular(path) : fopen(path, "rb");
    if (!f && dir && errno == ENOENT)
        say_no_trace(dir, err, cap);
    else if (!f && errno == EINVAL)
        snprintf(err, cap, "cannot open %s: not a regular file", path);
    else if (!f)
        snprintf(err, cap, "cannot open %s: %s", path, strerror(errno));
    return f;
}

int rd_tracein_open(rd_tracein *r, const char *path, char *err, size_t cap)
{
    uint8_t hdr[LT_FILE_HDR_SIZE];
    memset(r, 0, sizeof *r);
    r->f = open_trace(path, err, cap);
    if (!r->f)
        return -ENOENT;
    size_t got = fread(hdr, 1, sizeof hdr, r->f);
    r->pos = got;
    int e = lt_file_check(hdr, got, &r->flags, err, cap);
    if (e && (got < 8 || memcmp(hdr, LT_FILE_MAGIC, 8))) /* not a trace at all: what is */
        snprintf(err, cap, "not a luatrace trace file (bad magic): give a session directory "
                 "(luatrace-out/NAME) or its trace.ltr");
    if (!e && (r->flags & LT_FILE_ZSTD))
        e = rd_unzip_start(&r->uz, r->f, r->pos, (r->flags & LT_FILE_SPLIT) != 0, err, cap);
    if (e)
        rd_tracein_close(r);
    return e;
}

int64_t rd_tracein_read(rd_tracein *r, uint8_t *dst, size_t n, char *err, size_t cap)
{
    if (r->uz)
        return rd_unzip_read(r->uz, dst, n, &r->pos, err, cap);
    size_t k = fread(dst, 1, n, r->f);
    r->pos += k;
    return (int64_t)k;
}

int rd_tracein_cut(const rd_tracein *r)
{
    return r->uz && rd_unzip_cut(r->uz);
}

int rd_tracein_compressed(const rd_tracein *r)
{
    return r->uz != NULL;
}

void rd_tracein_close(rd_tracein *r)
{
    rd_unzip_stop(r->uz); /* before the file it reads goes */
    if (r->f)
        fclose(r->f);
    memset(r, 0, sizeof *r);
}
