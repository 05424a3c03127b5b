/* rd_pprof: profile.pb.gz, the call tree as a gzipped pprof profile
 * (google/pprof's proto/profile.proto; what we write: doc/reports.md,
 * "pprof") for `go tool pprof`, Pyroscope, Parca,
 * speedscope. Runs on the thread that owns the model. */
#ifndef RD_PPROF_H
#define RD_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include "rd_model.h"
#include "rd_pb.h"

typedef struct rd_pprof_info {
    const char *cmd;    /* the traced command, or NULL */
    const char *srcdir; /* relative sources resolve against it; NULL: cwd */
    int64_t time_nanos; /* when tracing began, ns since the epoch; 0 unknown */
} rd_pprof_info;

/* Encodes m as an uncompressed Profile message into out (appended).
 * One sample per call-tree node and coroutine with time or line events:
 * its stack, leaf first; values time (ns) and lines (count); the label
 * coroutine=NAME. Returns 0 or -ENOMEM. */
int rd_pprof_encode(const rd_model *m, const rd_pprof_info *info, rd_pb *out);

/* The same, gzipped, to out. Returns 0, -ENOMEM or -EIO. */
int rd_pprof_write(const rd_model *m, const rd_pprof_info *info, FILE *out);

/* heap.pb.gz: the memory of a trace with MEM records (rd_mem.h), as a Go
 * heap profile: one sample per call-tree node with any, values
 * alloc_objects, alloc_space (bytes), inuse_objects, inuse_space (bytes:
 * live at the end: rd_mem_end), the last the default. Returns as above. */
int rd_pprof_encode_heap(const rd_model *m, const rd_pprof_info *info, rd_pb *out);
int rd_pprof_write_heap(const rd_model *m, const rd_pprof_info *info, FILE *out);

#endif
