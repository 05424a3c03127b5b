/* rd_tracefile: trace.ltr, its records gathered in a buffer, split into
 * blocks (lt_split.h: the hot records' deltas apart) and compressed with
 * zstd's streaming API, each block flushed (ZSTD_e_flush), so every flush
 * ends on a whole record and the file up to it decodes on its own; the
 * frame ends at close. On a write error the file is
 * cut back to the last flush. stdio would not do: after a failed write it
 * keeps some of the buffer and may write it later, past a hole, if space
 * comes back; the file must stay a prefix of the stream to be replayable. */
#include "rd_tracefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "lt_file.h"
#include "lt_split.h"
#include "rd_outdir.h"

#define BUF_CAP LT_FILE_ZSTD_FLUSH
/* Level 3, zstd's default: on luacheck over Penlight, 1.15-1.69 bytes an
 * event over 8 runs, median 1.25 (every record carries a tick delta, whose
 * noise sets the share; level 1: 1.40-1.57 on the same records; levels
 * 7-12 gain 0.1 at a third of the speed or less), at ~70 MB/s of records
 * per CPU second, over three times what a fast traced program makes
 * (~20 MB/s), so the drainer keeps up. Its window (2 MiB) is under what
 * readers accept (LT_FILE_ZSTD_WINDOWLOG_MAX). */
#define ZSTD_LEVEL 3
/* A memory trace's (run --memory): its MEM records' address deltas are
 * mostly noise to zstd, which at level 3 took 0.52 s of CPU for the 45 MB
 * of records of bench/workloads/alloc.lua, more than decoding and applying
 * them, on the drainer's thread, while the program waited for room in the
 * ring; level 1 takes 0.17 s for a file 9% bigger (17.3 MB, 15.9; perf
 * samples of libzstd in recorderd run --memory, two runs each). */
#define ZSTD_LEVEL_MEMORY 1

/* Gives the file up after a failed write: cuts it back to its last flush. */
static int give_up(rd_tracefile *t, int e)
{
    /* if even the cut fails, a replay stops at the partial block */
    int cut = ftruncate(t->fd, (off_t)t->size);
    (void)cut;
    close(t->fd);
    if (t->size < LT_FILE_HDR_SIZE) /* not a trace: not even its header */
        rd_tracefile_remove(t);
    t->fd = -1;
    t->err = e;
    return e;
}

static void release(rd_tracefile *t)
{
    free(t->buf);
    free(t->zbuf);
    free(t->blk);
    free(t->scratch);
    t->blk = t->scratch = NULL;
    ZSTD_freeCCtx(t->cctx);
    t->buf = t->zbuf = NULL;
    t->cctx = NULL;
    t->len = 0;
}

/* Writes p[0..n) as it is. */
static int put(rd_tracefile *t, const uint8_t *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(t->fd, p + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return give_up(t, k < 0 ? -errno : -EIO);
        done += (size_t)k;
    }
    t->written += n;
    return 0;
}

/* Compresses p[0..n) and writes it with a flush (op ZSTD_e_flush) or the
 * frame's end (ZSTD_e_end): the file then ends on a block holding `raw`
 * bytes of whole records, the new safe length. */
static int compress(rd_tracefile *t, const uint8_t *p, size_t n, size_t raw, ZSTD_EndDirective op)
{
    ZSTD_inBuffer in = {p, n, 0};
    size_t left;
    do {
        ZSTD_outBuffer out = {t->zbuf, t->zcap, 0};
        left = ZSTD_compressStream2(t->cctx, &out, &in, op);
        if (ZSTD_isError(left)) /* only an allocation fails at these levels */
            return give_up(t, -ENOMEM);
        if (out.pos && put(t, t->zbuf, out.pos))
            return t->err;
    } while (left);
    t->size = t->written;
    t->raw += raw;
    return 0;
}

/* The whole records p[0..n), block by block. */
static int compress_records(rd_tracefile *t, const uint8_t *p, size_t n)
{
    size_t blen;
    for (size_t off = 0, took; off < n; off += took) {
        took = lt_split(p + off, n - off, t->blk, &blen, t->scratch);
        if (compress(t, t->blk, blen, took, ZSTD_e_flush))
            return t->err;
    }
    return 0;
}

static int flush(rd_tracefile *t)
{
    int e = t->len ? compress_records(t, t->buf, t->len) : 0;
    t->len = 0;
    return e;
}

static int zstd_setup(rd_tracefile *t)
{
    t->cctx = ZSTD_createCCtx();
    t->zcap = ZSTD_CStreamOutSize();
    t->zbuf = malloc(t->zcap);
    if (!t->cctx || !t->zbuf ||
        ZSTD_isError(ZSTD_CCtx_setParameter(t->cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(t->cctx, ZSTD_c_checksumFlag, 1)))
        return -ENOMEM;
    return 0;
}

int rd_tracefile_remove(rd_tracefile *t)
{
    return unlinkat(t->dirfd, "trace.ltr", 0) < 0 ? -errno : 0;
}

int rd_tracefile_open(rd_tracefile *t, int dirfd, const char *dir)
{
    uint8_t hdr[LT_FILE_HDR_SIZE];
    *t = (rd_tracefile){.fd = -1, .dirfd = dirfd};
    if (snprintf(t->path, sizeof t->path, "%s/trace.ltr", dir) >= (int)sizeof t->path)
        return t->err = -ENAMETOOLONG;
    t->buf = malloc(BUF_CAP);
    t->cap = BUF_CAP;
    t->blk = malloc(LT_SPLIT_HDR + LT_SPLIT_MAX);
    t->scratch = malloc(LT_SPLIT_MAX);
    if (!t->buf || !t->blk || !t->scratch || zstd_setup(t)) {
        release(t);
        return t->err = -ENOMEM;
    }
    t->fd = rd_out_create(dirfd, "trace.ltr");
    if (t->fd < 0) {
        release(t);
        return t->err = t->fd;
    }
    lt_file_header(hdr, LT_FILE_ZSTD | LT_FILE_SPLIT);
    if (put(t, hdr, sizeof hdr)) {
        release(t);
        return t->err;
    }
    t->size = t->written;
    return 0;
}

void rd_tracefile_memory(rd_tracefile *t)
{
    if (t->cctx && !t->raw && !t->len)
        ZSTD_CCtx_setParameter(t->cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL_MEMORY);
}

int rd_tracefile_write(rd_tracefile *t, const uint8_t *p, size_t n)
{
    if (t->fd < 0)
        return t->err;
    if (t->len + n > t->cap && flush(t))
        goto failed;
    if (n >= t->cap) { /* more than the buffer holds: compressed from p */
        if (compress_records(t, p, n))
            goto failed;
        return 0;
    }
    memcpy(t->buf + t->len, p, n);
    t->len += n;
    return 0;
failed:
    release(t);
    return t->err;
}

int rd_tracefile_close(rd_tracefile *t)
{
    if (t->fd < 0)
        return t->err;
    int e = flush(t);
    if (!e)
        e = compress(t, NULL, 0, 0, ZSTD_e_end);
    if (!e && close(t->fd) < 0)
        e = t->err = -errno;
    t->fd = -1;
    release(t);
    return e;
}
