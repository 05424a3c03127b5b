/* rd_pb: a protocol buffers wire-format writer into a growing memory
 * buffer, just what rd_pprof needs: varint fields, length-delimited fields
 * (strings, nested messages, packed repeated varints). Any thread; one
 * buffer per writer. */
#ifndef RD_PB_H
#define RD_PB_H

#include <stddef.h>
#include <stdint.h>

typedef struct rd_pb {
    uint8_t *p;
    size_t n, cap;
    int err; /* -ENOMEM once an append failed; later appends do nothing */
} rd_pb;

/* Field `field` as a varint (wire type 0); 0 is written too (callers skip
 * defaults themselves). */
void rd_pb_varint(rd_pb *b, uint32_t field, uint64_t v);

/* Field `field` as len bytes (wire type 2): a string or a nested message
 * encoded beforehand in another rd_pb. */
void rd_pb_bytes(rd_pb *b, uint32_t field, const void *data, size_t len);

/* A bare varint, no tag: the elements of a packed repeated field. */
void rd_pb_raw_varint(rd_pb *b, uint64_t v);

/* len raw bytes: an already encoded run of fields. */
void rd_pb_append(rd_pb *b, const void *data, size_t len);

/* Empties b, keeping its memory. */
void rd_pb_reset(rd_pb *b);
void rd_pb_free(rd_pb *b);

#endif
