/* fuzz_file: libFuzzer target for the trace-file reader (`recorderd
 * report`): each input is a whole trace.ltr, header included, replayed with
 * rd_replay_path; then its body compressed with zstd, so the mutated
 * records also go through the decompressor (the inputs themselves, *_zstd.ltr
 * seeds among them, reach its error paths); then the body taken for split
 * blocks (lt_split.h: the merger's error paths), and split as the writer
 * splits records. The file is a memfd made once per process and rewritten
 * for each input; rd_replay_path opens it as /proc/self/fd/N, so nothing is
 * left in /tmp, even after a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "lt_file.h"
#include "lt_split.h"
#include "rd_replay.h"

static const char *trace_path(int *fd)
{
    static char path[64];
    static int mfd = -1;
    if (mfd < 0) {
        mfd = memfd_create("luatrace-fuzz-file", MFD_CLOEXEC);
        if (mfd < 0) {
            perror("fuzz_file: memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", mfd);
    }
    *fd = mfd;
    return path;
}

static void rewrite(int fd, const uint8_t *p, size_t n)
{
    if (ftruncate(fd, 0))
        abort();
    for (size_t off = 0; off < n;) {
        ssize_t k = pwrite(fd, p + off, n - off, (off_t)off);
        if (k <= 0)
            abort();
        off += (size_t)k;
    }
}

static void replay(int fd, const char *path, const uint8_t *p, size_t n)
{
    rd_model m;
    rd_stack s;
    char err[512];
    rewrite(fd, p, n);
    if (rd_model_init(&m))
        return;
    if (rd_stack_init(&s, &m)) {
        rd_model_free(&m);
        return;
    }
    rd_replay_path(path, &s, 0, err, sizeof err);
    rd_stack_free(&s);
    rd_model_free(&m);
}

/* body[0..n) as zstd behind a header of the current version with flags;
 * NULL if there is no body. */
static uint8_t *compressed(const uint8_t *body, size_t n, uint32_t flags, size_t *len)
{
    if (!n)
        return NULL;
    size_t cap = LT_FILE_HDR_SIZE + ZSTD_compressBound(n);
    uint8_t *out = malloc(cap);
    if (!out)
        return NULL;
    lt_file_header(out, flags);
    size_t k = ZSTD_compress(out + LT_FILE_HDR_SIZE, cap - LT_FILE_HDR_SIZE, body, n, 1);
    if (ZSTD_isError(k))
        abort();
    *len = LT_FILE_HDR_SIZE + k;
    return out;
}

/* body[0..n) split into blocks as the writer splits records (lt_split.h). */
static uint8_t *blocks(const uint8_t *body, size_t n, size_t *len)
{
    size_t nblk = n + 1; /* a block per byte at worst */
    uint8_t *out = malloc(n + nblk * LT_SPLIT_HDR), *scratch = malloc(LT_SPLIT_MAX);
    uint8_t *blk = malloc(LT_SPLIT_HDR + LT_SPLIT_MAX);
    if (!out || !scratch || !blk)
        abort();
    *len = 0;
    for (size_t off = 0, took, blen; off < n; off += took) {
        took = lt_split(body + off, n - off, blk, &blen, scratch);
        memcpy(out + *len, blk, blen);
        *len += blen;
    }
    free(scratch);
    free(blk);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    const char *path = trace_path(&fd);
    size_t n, body = size > LT_FILE_HDR_SIZE ? size - LT_FILE_HDR_SIZE : 0;
    const uint8_t *b = data + (size - body);
    replay(fd, path, data, size);
    uint8_t *z = compressed(b, body, LT_FILE_ZSTD, &n);
    if (z) /* the records through the decompressor */
        replay(fd, path, z, n);
    free(z);
    z = compressed(b, body, LT_FILE_ZSTD | LT_FILE_SPLIT, &n);
    if (z) /* the body taken for blocks: any header, any parts */
        replay(fd, path, z, n);
    free(z);
    size_t bn;
    uint8_t *bl = body ? blocks(b, body, &bn) : NULL;
    z = bl ? compressed(bl, bn, LT_FILE_ZSTD | LT_FILE_SPLIT, &n) : NULL;
    if (z) /* the records split as the writer splits them */
        replay(fd, path, z, n);
    free(z);
    free(bl);
    return 0;
}
