/* rd_tracefile: a session's trace.ltr, written as the ring is drained. The
 * first write error ends it: the file is cut back to its last complete
 * record (so `recorderd report` replays what it holds) and never written
 * again, while the session goes on without it. Drainer thread only. */
#ifndef RD_TRACEFILE_H
#define RD_TRACEFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_event.h"

typedef struct rd_tracefile {
    int fd;       /* -1: none, or given up */
    uint8_t *buf; /* whole records not yet written */
    size_t len, cap;
    lt_dec dec;    /* the stream's decoder state at buf[0] */
    uint64_t size; /* bytes in the file: the header and whole records */
    int err;       /* the error that ended it (negative errno), 0 if none */
    int dirfd;     /* its directory (not owned): removed from it by name */
    char path[PATH_MAX]; /* for messages */
} rd_tracefile;

/* Creates trace.ltr (0600) in the directory dirfd (dir: its path, for
 * messages); it must not exist. Writes its header. Returns 0 or a negative
 * errno (then t->err too; later writes do nothing). A file that could not
 * take even the header is removed. dirfd must outlive t. */
int rd_tracefile_open(rd_tracefile *t, int dirfd, const char *dir);

/* Removes trace.ltr (closed or given up) from its directory. Returns 0 or
 * -errno. */
int rd_tracefile_remove(rd_tracefile *t);

/* Appends p[0..n), whole records; dec is the decoder's state before p[0].
 * Returns 0, or the error that ended the file (this call's or an earlier
 * one's). */
int rd_tracefile_write(rd_tracefile *t, const uint8_t *p, size_t n, const lt_dec *dec);

/* Writes what is buffered and closes the file. Returns 0 or t->err. */
int rd_tracefile_close(rd_tracefile *t);

#endif
