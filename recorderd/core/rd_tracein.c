/* rd_tracein: trace-file input, plain or zstd (lt_file.h). */
#include "rd_tracein.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "lt_file.h"

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

/* The decompressor: its window is bounded so that a header asking for a
 * huge one (garbage, or a hostile file) is refused instead of allocated. */
static int zstd_setup(rd_tracein *r, char *err, size_t cap)
{
    r->dctx = ZSTD_createDCtx();
    r->zcap = ZSTD_DStreamInSize();
    r->zbuf = malloc(r->zcap);
    if (!r->dctx || !r->zbuf ||
        ZSTD_isError(ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_windowLogMax,
                                            LT_FILE_ZSTD_WINDOWLOG_MAX))) {
        snprintf(err, cap, "out of memory");
        return -ENOMEM;
    }
    return 0;
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
        e = zstd_setup(r, err, cap);
    if (e)
        rd_tracein_close(r);
    return e;
}

/* Decompresses into dst until some output comes, the file ends or the
 * stream is found corrupt. */
static int64_t read_zstd(rd_tracein *r, uint8_t *dst, size_t n, char *err, size_t cap)
{
    ZSTD_outBuffer out = {dst, n, 0};
    for (;;) {
        if (r->zpos == r->zlen && !r->eof) {
            r->zlen = fread(r->zbuf, 1, r->zcap, r->f);
            r->zpos = 0;
            r->pos += r->zlen;
            r->eof = r->zlen == 0;
        }
        ZSTD_inBuffer in = {r->zbuf, r->zlen, r->zpos};
        size_t out0 = out.pos;
        size_t k = ZSTD_decompressStream(r->dctx, &out, &in);
        if (ZSTD_isError(k)) {
            snprintf(err, cap, "corrupt compressed trace before byte %llu of the file: %s",
                     (unsigned long long)(r->pos - (r->zlen - r->zpos)), ZSTD_getErrorName(k));
            return -EPROTO;
        }
        /* a call with nothing in or out (at the end) answers for a next
         * frame that never comes: not a cut */
        if (in.pos != r->zpos || out.pos != out0)
            r->last = k;
        r->zpos = in.pos;
        if (out.pos > 0 || (r->eof && r->zpos == r->zlen))
            return (int64_t)out.pos;
    }
}

int64_t rd_tracein_read(rd_tracein *r, uint8_t *dst, size_t n, char *err, size_t cap)
{
    if (r->dctx)
        return read_zstd(r, dst, n, err, cap);
    size_t k = fread(dst, 1, n, r->f);
    r->pos += k;
    return (int64_t)k;
}

int rd_tracein_cut(const rd_tracein *r)
{
    return r->dctx && r->last != 0;
}

int rd_tracein_compressed(const rd_tracein *r)
{
    return r->dctx != NULL;
}

void rd_tracein_close(rd_tracein *r)
{
    if (r->f)
        fclose(r->f);
    ZSTD_freeDCtx(r->dctx);
    free(r->zbuf);
    memset(r, 0, sizeof *r);
}
