/* rd_tracein: trace-file input, plain or zstd (lt_file.h). */
#include "rd_tracein.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lt_file.h"
#include "rd_unzip.h"

static FILE *open_trace(const char *path, char *err, size_t cap)
{
    struct stat st;
    char buf[4096];
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(buf, sizeof buf, "%s/trace.ltr", path);
        path = buf;
    }
    FILE *f = fopen(path, "rb");
    if (!f)
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
    if (!e && (r->flags & LT_FILE_ZSTD))
        e = rd_unzip_start(&r->uz, r->f, r->pos, err, cap);
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
