/* rd_tracein: reads a trace file's records, whatever its body: versions 3
 * and 4 hold them as they are, version 5 as zstd frames (lt_file.h), which
 * are decompressed with a bounded window (rd_unzip, on a thread of its own),
 * so a garbage body costs an error message, not memory. Any thread, one
 * reader per struct. */
#ifndef RD_TRACEIN_H
#define RD_TRACEIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct rd_tracein {
    FILE *f;
    uint32_t flags;   /* the header's: LT_FILE_ZSTD or 0 */
    struct rd_unzip *uz; /* when compressed: decompressed ahead (rd_unzip.h) */
    uint64_t pos;     /* bytes of the file read, header included (when compressed: by the
                         time the records last returned were decompressed) */
} rd_tracein;

/* Opens path (or the trace.ltr of a session directory) and checks its
 * header. Returns 0, or a negative errno with a message in err: -ENOENT
 * (cannot open), -EPROTO (not a trace this build reads), -ENOMEM. */
int rd_tracein_open(rd_tracein *r, const char *path, char *err, size_t cap);

/* Reads up to n bytes of records into dst. Returns how many, 0 at the end
 * of the file, or -EPROTO with a message in err when the compressed body is
 * corrupt (the records before it were returned by earlier calls). */
int64_t rd_tracein_read(rd_tracein *r, uint8_t *dst, size_t n, char *err, size_t cap);

/* After the end: 1 if the file was cut inside a zstd frame (a trace whose
 * writer did not finish it), 0 otherwise. */
int rd_tracein_cut(const rd_tracein *r);

/* 1 when the body is compressed: offsets of records are then not offsets
 * in the file. */
int rd_tracein_compressed(const rd_tracein *r);

void rd_tracein_close(rd_tracein *r);

#endif
