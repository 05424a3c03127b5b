/* rd_tracefile: a session's trace.ltr, written as the ring is drained, its
 * body compressed with zstd (lt_file.h). The first write error ends it: the
 * file is cut back to its last flushed block, where it ends on a complete
 * record (so `recorderd report` replays what it holds), and never written
 * again, while the session goes on without it. Drainer thread only. */
#ifndef RD_TRACEFILE_H
#define RD_TRACEFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rd_tracefile {
    int fd;       /* -1: none, or given up */
    uint8_t *buf; /* whole records not yet compressed */
    size_t len, cap;
    void *cctx;     /* ZSTD_CCtx */
    uint8_t *blk, *scratch; /* a block (lt_split.h) on its way to zstd, its deltas */
    uint8_t *zbuf;  /* compressed output on its way to the file */
    size_t zcap;
    uint64_t written; /* bytes written to the file */
    uint64_t size;    /* bytes of the file up to its last flush: the header, whole blocks */
    uint64_t raw;     /* bytes of records those blocks decompress to */
    int err;          /* the error that ended it (negative errno), 0 if none */
    int dirfd;        /* its directory (not owned): removed from it by name */
    char path[PATH_MAX]; /* for messages */
} rd_tracefile;

/* Creates trace.ltr (0600) in the directory dirfd (dir: its path, for
 * messages); it must not exist. Writes its header. Returns 0 or a negative
 * errno (then t->err too; later writes do nothing). A file that could not
 * take even the header is removed. dirfd must outlive t. */
int rd_tracefile_open(rd_tracefile *t, int dirfd, const char *dir);

/* Before the first write: the records to come are a memory trace's
 * (--memory), compressed faster (ZSTD_LEVEL_MEMORY), the file a little
 * bigger. */
void rd_tracefile_memory(rd_tracefile *t);

/* Removes trace.ltr (closed or given up) from its directory. Returns 0 or
 * -errno. */
int rd_tracefile_remove(rd_tracefile *t);

/* Appends p[0..n), whole records: a flush may come after them, so a cut
 * file ends on a record. Returns 0, or the error that ended the file (this
 * call's or an earlier one's). */
int rd_tracefile_write(rd_tracefile *t, const uint8_t *p, size_t n);

/* Compresses what is buffered, ends the zstd frame and closes the file.
 * Returns 0 or t->err. */
int rd_tracefile_close(rd_tracefile *t);

#endif
