/* rd_timeline: every call of a trace kept as one event list per track (a
 * coroutine), for the timeline backends (rd_chrome, speedscope evented).
 *
 * Design: a timeline listens to the rebuilt stacks. Each track packs its
 * enter/leave records (varints: frame, why, ticks since its previous
 * record) into a buffer; a full buffer becomes a block of an unlinked
 * temporary file, chained to the track's previous block. At the end the
 * open frames are closed at the end time and each track is read back on
 * its own, in time order, so that writers can convert ticks with the final
 * clock (CLOCK records refine it until the trace ends). Memory: per live
 * coroutine its open frames and a buffer (256 B growing to 16 KiB); per
 * coroutine ever seen, one rd_tl_track; never per event.
 *
 * A track is a coroutine's life: when its outermost frame returns or is
 * unwound the coroutine is dead, and a thread id seen again (Lua reuses
 * the address) starts a new track. Track 0 is the first thread seen (the
 * main thread when tracing starts there). One thread at a time. */
#ifndef RD_TIMELINE_H
#define RD_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rd_backend.h"

typedef struct rd_tl_track {
    uint64_t thread;    /* coroutine id */
    uint32_t first_fid; /* its outermost frame's function, for its name */
    uint32_t *open;     /* functions of the open frames, outermost first */
    uint32_t nopen, capopen;
    uint8_t *buf; /* records not yet in the file */
    uint32_t nbuf, capbuf;
    int64_t head, tail; /* file offsets of its first and last block; -1: none */
    uint64_t last_t;    /* ticks of its last record */
    uint8_t ended;      /* its outermost frame left: the coroutine is dead */
} rd_tl_track;

typedef struct rd_timeline {
    /* its backend's info (rd_backend.info), read when the temporary file is
     * made: it goes in info->dir, else $TMPDIR, else /tmp */
    const rd_backend_info *const *info;
    rd_tl_track *tr;
    uint32_t ntr, captr;
    uint32_t *ix; /* open addressing: live thread id -> track + 1 */
    uint32_t capix, nix;
    uint32_t cur; /* the last track used + 1: a cache */
    int fd;       /* the temporary file, -1 until the first block */
    int64_t fsize;
    int err;         /* the first error (-errno); records after it are lost */
    uint64_t t_last; /* the last time seen */
    uint64_t records;
} rd_timeline;

/* One record as read back. t is in ticks. */
typedef struct rd_tl_event {
    uint32_t fid;
    uint8_t leave;   /* 0: the frame entered, 1: it left */
    enum rd_how how; /* why */
    uint64_t t;
} rd_tl_event;

/* info: see rd_timeline.info (may be NULL). Returns 0 or -ENOMEM. */
int rd_timeline_init(rd_timeline *tl, const rd_backend_info *const *info);
void rd_timeline_free(rd_timeline *tl);

/* The listener that fills tl (ud = tl). */
rd_listener rd_timeline_listener(rd_timeline *tl);

/* Ends the trace at t_end (ticks; later than anything seen is fine): every
 * open frame leaves then (RD_STOP). Returns 0 or the first error. */
int rd_timeline_end(rd_timeline *tl, uint64_t t_end);

/* Calls fn for every record of track k in order, stopping at a nonzero
 * return, which it returns. After rd_timeline_end. */
int rd_timeline_each(rd_timeline *tl, uint32_t k, int (*fn)(void *ud, const rd_tl_event *ev),
                     void *ud);

/* {====================================================================
 * for the writers */

/* Ticks to integer nanoseconds with k ns per tick: monotonic, so frames
 * that nest in ticks nest in ns. */
uint64_t rd_timeline_ns(double k, uint64_t ticks);

/* The name of track k: "main" for track 0, else "coroutine K (LABEL)" with
 * the label of the function it started in. */
void rd_timeline_track_name(const rd_timeline *tl, const rd_model *m, uint32_t k, char *buf,
                            size_t cap);

/* Writes, whole (rd_outdir.h: a temporary file renamed), `file` if not
 * NULL, else name in the directory dirfd (dir: its path, for messages;
 * dirfd -1: dir is opened): fn(out, ud) writes the content. Returns 0 or
 * -errno with a message in err. */
int rd_timeline_write(const char *dir, int dirfd, const char *file, const char *name,
                      int (*fn)(FILE *, void *), void *ud, char *err, size_t cap);

/* }==================================================================== */

#endif
