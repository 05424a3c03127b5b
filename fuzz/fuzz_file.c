/* fuzz_file: libFuzzer target for the trace-file reader (`recorderd
 * report`): each input is a whole trace.ltr, header included, replayed with
 * rd_replay_path. The file is a memfd made once per process and rewritten
 * for each input; rd_replay_path opens it as /proc/self/fd/N, so nothing is
 * left in /tmp, even after a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    const char *path = trace_path(&fd);
    rd_model m;
    rd_stack s;
    char err[512];
    rewrite(fd, data, size);
    if (rd_model_init(&m))
        return 0;
    if (rd_stack_init(&s, &m)) {
        rd_model_free(&m);
        return 0;
    }
    rd_replay_path(path, &s, 0, err, sizeof err);
    rd_stack_free(&s);
    rd_model_free(&m);
    return 0;
}
