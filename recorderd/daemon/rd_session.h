/* rd_session: one traced process. Owns its ring, its model and a drainer
 * thread that decodes the ring, writes trace.ltr as it goes and, when the
 * process is done (or gone), writes every report and session.json last.
 * The loop thread creates and reaps sessions; the drainer touches nothing
 * of the loop's but the two atomic flags and one uv_async_send. */
#ifndef RD_SESSION_H
#define RD_SESSION_H

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "lt_ring.h"
#include "rd_cov.h"
#include "rd_model.h"
#include "rd_stack.h"
#include "rd_tracefile.h"

struct rd_session;

typedef struct rd_session_opts {
    const char *out; /* parent dir of session dirs */
    int out_fd;      /* out, opened by rd_server_init (rd_outdir.h) */
    int summary;     /* print the summary on stderr at the end */
    const char *const *backends; /* streaming backend specs (rd_backend.h) */
    unsigned nbackends;
    int no_files; /* no session directory, trace or reports (dump, top) */
    int no_trace; /* reports only, no trace.ltr (--no-trace) */
    int coverage; /* --coverage: the ack asks the collector for no clock */
    int sample_time; /* --time sample: the ack asks for sampled time (rd_session_sampled) */
    int time_given;  /* --time was given (run's default is sampled time, lines by sample) */
    int lines_sampled; /* with sample_time: the ack asks for lines by sample too */
    uint32_t formats_asked; /* the rows --format named (formats adds the default ones) */
    int wall;        /* --clock wall: of CLOCK_MONOTONIC, not the thread's CPU time */
    int clock_given; /* --clock was given: sampled time's clock, so it asks for sampled time */
    int memory;      /* --memory: the ack asks for the allocator's calls (MEM records) */
    uint32_t formats; /* the reports to write, bit i for rd_formats[i]; 0: the default ones */
    unsigned sample_hz; /* a sampled session (record): its samples per second */
    int sample_cpu;     /* its samples weigh its Lua thread's CPU time (run --sample) */
    rd_cov_opts cov;    /* --include, --exclude: the coverage reports' sources */
    /* Called on the drainer thread about every live_ms while the session
     * runs, and once more (last = 1) when the trace ended. */
    void (*live)(struct rd_session *s, void *ud, int last);
    void *live_ud;
    unsigned live_ms;
} rd_session_opts;

typedef struct rd_session {
    char name[96];
    char dir[PATH_MAX]; /* for messages and status: files go through dirfd */
    char prev[PATH_MAX + 8]; /* dir.prev, the earlier run's directory it replaced, or "" */
    int dirfd; /* the session directory, locked (flock) while the session lives; -1 if none */
    char cmd[512];
    char cwd[PATH_MAX]; /* the program's working directory, from its hello */
    pid_t pid;
    lt_ring ring;
    rd_model m;
    rd_stack st;
    uv_thread_t thread;
    uv_async_t *wake;        /* loop's async handle, signalled when done */
    _Atomic int conn_closed; /* loop -> drainer: the process is gone */
    _Atomic int stopping;    /* loop -> drainer: the daemon stops, the process may run on */
    unsigned drain_pause_us; /* tests only: a drainer slower than its producer */
    _Atomic int done;        /* drainer -> loop: reports written */
    /* drainer -> loop, for `recorderd status` (relaxed: statistics) */
    _Atomic uint64_t stat_events, stat_fill, stat_drops; /* fill: unread bytes */
    _Atomic int stat_writing; /* the process is done, reports are being written */
    int summary;
    const rd_session_opts *opts; /* the server's, which outlive sessions */
    const char *const *backends;
    unsigned nbackends;
    int truncated;
    /* the summary's coverage line once coverage.lcov is written, or "" */
    char cov_said[160];
    int ring_lost; /* the mapping faulted: never touch the ring again */
    rd_tracefile trace;
    int trace_removed; /* the partial trace was deleted to make room for reports */
    /* While it runs, the session's problem (the first); once its reports are
     * written, session.json's error: what became of trace.ltr, that problem
     * and every file that could not be written. */
    char err[1024];
    uint64_t bytes, drops;
    uint64_t unpublished; /* of bytes: read past the ring's head after the process died */
    uint64_t ring_waited_ns; /* the program's waits for room in the ring (its count) */
    unsigned long long t0, t1;
    void *owner; /* the loop's connection, opaque here */
    struct rd_tap *taps;    /* windows asked by the pprof endpoint (rd_tap.h) */
    _Atomic unsigned ntaps; /* how many: the drainer looks at taps only if any */
    struct rd_session *next;
} rd_session;

/* Loop thread: creates the session directory under opts->out, opens the
 * ring of `shm` (owned by uid), unlinks its name and starts draining.
 * sample_hz: the peer samples itself at that rate (its hello says so;
 * LuaJIT's sampled mode), 0: opts->sample_hz says. Returns the session,
 * or NULL with a message in err. */
rd_session *rd_session_start(const rd_session_opts *opts, const char *shm, uid_t uid,
                             pid_t pid, const char *cmd, const char *cwd, unsigned sample_hz,
                             uv_async_t *wake, char *err, size_t cap);

/* Loop thread: the process's connection closed. */
void rd_session_conn_closed(rd_session *s);

/* Loop thread: the daemon stops. The session ends at what the ring holds
 * now, though its process may go on tracing into it. */
void rd_session_stop(rd_session *s);

/* Loop thread, after done: joins the drainer and frees everything. */
void rd_session_free(rd_session *s);
/* The allocator's options for a daemon that outlives its sessions (listen,
 * serve): what a session freed goes back to the system. Before any thread. */
void rd_session_malloc_opts(void);

#endif
