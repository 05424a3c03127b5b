/* fuzz_file: libFuzzer target for the trace-file reader (`recorderd
 * report`): each input is a whole trace.ltr, header included, replayed with
 * rd_replay_path; then its body compressed with zstd behind a version 5
 * header, so the mutated records also go through the decompressor (the
 * inputs themselves, *_zstd.ltr seeds among them, reach its error paths). The file is a memfd made once per process and rewritten
 * for each input; rd_replay_path opens it as /proc/self/fd/N, so nothing is
 * left in /tmp, even after a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "lt_file.h"
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

/* data's body (past a header, whatever it says) as zstd behind a version 5
 * header; NULL if there is no body. */
static uint8_t *compressed(const uint8_t *data, size_t size, size_t *n)
{
    if (size <= LT_FILE_HDR_SIZE)
        return NULL;
    size_t body = size - LT_FILE_HDR_SIZE, cap = LT_FILE_HDR_SIZE + ZSTD_compressBound(body);
    uint8_t *out = malloc(cap);
    if (!out)
        return NULL;
    lt_file_header(out, LT_FILE_ZSTD);
    size_t k = ZSTD_compress(out + LT_FILE_HDR_SIZE, cap - LT_FILE_HDR_SIZE,
                             data + LT_FILE_HDR_SIZE, body, 1);
    if (ZSTD_isError(k))
        abort();
    *n = LT_FILE_HDR_SIZE + k;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    const char *path = trace_path(&fd);
    size_t n;
    replay(fd, path, data, size);
    uint8_t *z = compressed(data, size, &n);
    if (z)
        replay(fd, path, z, n);
    free(z);
    return 0;
}
