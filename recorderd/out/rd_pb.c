/* rd_pb: protocol buffers wire format (varint and length-delimited fields
 * only). A tag is (field << 3 | wire type); varints are little-endian
 * base-128, seven bits a byte, high bit set on all but the last. */
#include "rd_pb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int reserve(rd_pb *b, size_t more)
{
    if (b->err) return -1;
    if (b->n + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->err = -ENOMEM;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void rd_pb_raw_varint(rd_pb *b, uint64_t v)
{
    if (reserve(b, 10)) return;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        b->p[b->n++] = c | (v ? 0x80 : 0);
    } while (v);
}

void rd_pb_varint(rd_pb *b, uint32_t field, uint64_t v)
{
    rd_pb_raw_varint(b, (uint64_t)field << 3);
    rd_pb_raw_varint(b, v);
}

void rd_pb_append(rd_pb *b, const void *data, size_t len)
{
    if (len && !reserve(b, len)) {
        memcpy(b->p + b->n, data, len);
        b->n += len;
    }
}

void rd_pb_bytes(rd_pb *b, uint32_t field, const void *data, size_t len)
{
    rd_pb_raw_varint(b, (uint64_t)field << 3 | 2);
    rd_pb_raw_varint(b, len);
    rd_pb_append(b, data, len);
}

void rd_pb_reset(rd_pb *b)
{
    b->n = 0;
}

void rd_pb_free(rd_pb *b)
{
    free(b->p);
    *b = (rd_pb){0};
}
