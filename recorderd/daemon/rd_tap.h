/* rd_tap: a window onto a served session, for the pprof endpoint: the
 * profile of what the session's trace said between rd_tap_add and
 * rd_tap_end, as profile.pb.gz encodes it. The session's model belongs to
 * its drainer thread, so the drainer takes the snapshot at the start and
 * encodes the difference at the end; the loop thread only adds, ends and
 * cancels taps, and hears of a finished one through its async handle. */
#ifndef RD_TAP_H
#define RD_TAP_H

#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include "rd_pb.h"
#include "rd_session.h"

enum { RD_TAP_NEW, RD_TAP_STARTED, RD_TAP_WANT_END, RD_TAP_DONE };

typedef struct rd_tap {
    rd_session *s;     /* NULL once the drainer let go of it */
    _Atomic int state; /* RD_TAP_*: loop -> drainer (WANT_END), drainer -> loop (DONE) */
    uv_async_t *wake;  /* sent when the tap is done */
    int64_t wall0;     /* the window's start, ns since the epoch */
    /* the ring's head when the window began and ended: its records are
     * before (after) the window however far behind the drainer is */
    uint64_t head0, head1;
    /* the drainer's snapshot at the start */
    uint64_t *self, *lines; /* per node, then per share (rd_tnode) */
    uint32_t nnode, ntnode;
    uint64_t events, dropped, folded;
    /* the result, once done: the profile, gzipped, or err (-errno) */
    rd_pb gz;
    int err;
    struct rd_tap *next;
} rd_tap;

/* Loop thread: starts t's window on s (t zeroed but for wake). */
void rd_tap_add(rd_session *s, rd_tap *t);

/* Loop thread: the window is over; the drainer encodes it and sends wake. */
void rd_tap_end(rd_tap *t);

/* Loop thread: t is given up (its client left); s lets go of it. The
 * caller frees it with rd_tap_free. */
void rd_tap_cancel(rd_tap *t);
void rd_tap_free(rd_tap *t);

/* Drainer thread: serves the taps of s; last (the trace ended): every tap
 * is finished with what it has and let go. */
void rd_tap_poll(rd_session *s, int last);

#endif
