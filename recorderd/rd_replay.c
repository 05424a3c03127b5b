/* rd_replay: decode loop and trace-file reading. */
#include "rd_replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lt_file.h"

int64_t rd_replay_feed(rd_stack *s, const uint8_t *p, size_t n, char *err, size_t cap)
{
    size_t off = 0;
    lt_event ev;
    while (off < n) {
        int k = lt_event_decode(p + off, n - off, &ev);
        if (k == 0)
            break;
        if (k < 0) {
            snprintf(err, cap, "malformed record at byte %zu of this chunk (0x%02x)", off, p[off]);
            return -EPROTO;
        }
        if (rd_stack_event(s, &ev)) {
            snprintf(err, cap, "out of memory");
            return -ENOMEM;
        }
        off += (size_t)k;
    }
    return (int64_t)off;
}

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

int rd_replay_path(const char *path, rd_stack *s, char *err, size_t cap)
{
    FILE *f = open_trace(path, err, cap);
    if (!f)
        return -ENOENT;
    uint8_t hdr[LT_FILE_HDR_SIZE];
    size_t got = fread(hdr, 1, sizeof hdr, f);
    int e = lt_file_check(hdr, got, err, cap);
    size_t bufcap = 1u << 20, have = 0;
    uint8_t *buf = e ? NULL : malloc(bufcap);
    if (!e && !buf)
        e = -ENOMEM;
    while (!e) {
        size_t k = fread(buf + have, 1, bufcap - have, f);
        have += k;
        int64_t used = rd_replay_feed(s, buf, have, err, cap);
        if (used < 0) {
            e = (int)used;
            break;
        }
        memmove(buf, buf + used, have - (size_t)used);
        have -= (size_t)used;
        if (k == 0) {
            if (have)
                snprintf(err, cap, "trace ends inside a record (%zu bytes left): truncated", have);
            break;
        }
    }
    free(buf);
    fclose(f);
    rd_stack_finish(s);
    return e;
}
