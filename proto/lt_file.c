/* lt_file: trace file header. */
#include "lt_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void lt_file_header(uint8_t *buf, uint32_t flags)
{
    memcpy(buf, LT_FILE_MAGIC, 8);
    put_le32(buf + 8, LT_FILE_VERSION);
    put_le32(buf + 12, flags);
}

int lt_file_check(const uint8_t *buf, size_t n, uint32_t *flags, char *err, size_t cap)
{
    *flags = 0;
    if (n < LT_FILE_HDR_SIZE || memcmp(buf, LT_FILE_MAGIC, 8) != 0) {
        snprintf(err, cap, "not a luatrace trace file (bad magic)");
        return -EPROTO;
    }
    uint32_t v = get_le32(buf + 8);
    if (v < LT_FILE_VERSION_MIN || v > LT_FILE_VERSION) {
        snprintf(err, cap, "trace file version %u, this build reads versions %u to %u", v,
                 LT_FILE_VERSION_MIN, LT_FILE_VERSION);
        return -EPROTO;
    }
    if (v < 5) /* reserved then, written 0: not looked at */
        return 0;
    *flags = get_le32(buf + 12);
    uint32_t known = v < 11 ? LT_FILE_ZSTD : LT_FILE_ZSTD | LT_FILE_SPLIT;
    if (*flags & ~known || (*flags & (LT_FILE_ZSTD | LT_FILE_SPLIT)) == LT_FILE_SPLIT) {
        snprintf(err, cap, "trace file version %u, flags 0x%x: this build knows 0x%x (zstd)%s "
                 "only", v, *flags, LT_FILE_ZSTD, v < 11 ? "" : " and 0x3 (zstd, split)");
        return -EPROTO;
    }
    return 0;
}
