/* rd_unzip: a trace body's zstd frames (lt_file.h), decompressed ahead on
 * a thread of its own while the caller decodes what came before: the
 * decompression was a fifth of a replay's time. At most RD_UNZIP_AHEAD
 * chunks wait decompressed; the window is bounded as rd_tracein says. If
 * no thread can be started, the caller's thread decompresses each chunk
 * when it is asked for (the same bytes, the same errors). One reader per
 * rd_unzip; it owns the FILE it is given until rd_unzip_stop. */
#ifndef RD_UNZIP_H
#define RD_UNZIP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RD_UNZIP_CHUNK (256u << 10) /* bytes of records a chunk holds, at most */
#define RD_UNZIP_AHEAD 4            /* chunks decompressed ahead, at most */

typedef struct rd_unzip rd_unzip;

/* Starts reading f's zstd body (f is past the header; pos is the bytes of
 * the file read so far); split: of lt_split.h blocks, each merged back into
 * its records (a chunk each). Returns 0, or -ENOMEM with a message in err. */
int rd_unzip_start(rd_unzip **u, FILE *f, uint64_t pos, int split, char *err, size_t cap);

/* Up to n bytes of records into dst: how many, 0 at the end of the file,
 * or -EPROTO with a message in err when the stream is corrupt (the records
 * before it were returned by earlier calls). *pos: the bytes of the file
 * read by the time these records were decompressed. */
int64_t rd_unzip_read(rd_unzip *u, uint8_t *dst, size_t n, uint64_t *pos, char *err,
                      size_t cap);

/* After the end: 1 if the file was cut inside a zstd frame. */
int rd_unzip_cut(const rd_unzip *u);

/* Stops the thread (at any point) and frees u; NULL is a no-op. */
void rd_unzip_stop(rd_unzip *u);

#endif
