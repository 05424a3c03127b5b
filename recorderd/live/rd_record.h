/* rd_record: `recorderd record PID`: a sampled session of a process that
 * never loaded the collector, read from outside. Main thread only. */
#ifndef RD_RECORD_H
#define RD_RECORD_H

#include <sys/types.h>

#include "rd_session.h"

typedef struct rd_record_opts {
    pid_t pid;
    unsigned hz;          /* samples per second, 1..1000 */
    unsigned duration_ms; /* 0: until Ctrl-C, SIGTERM or the process's exit */
    int stop;             /* hold the process stopped for each read (exact, costly) */
    rd_session_opts so;   /* where the session goes; so.sample_hz = hz */
    /* Called on the loop once the session has started (the sampler runs),
     * with it and rd_record_start's ud: a caller may add windows (rd_tap). */
    void (*started)(rd_session *s, void *ud);
    /* The sampler waits for rd_record_go before its first read (a process
     * that asked to be sampled is held until the sampler runs: its own
     * wait is not its time). */
    int held;
    /* The process's lua_State, known (a hello that asks to be sampled says
     * it, and waits meanwhile): no stop to find it. NULL: found by a read */
    const void *state;
} rd_record_opts;

typedef struct rd_recording rd_recording;

/* Starts sampling o->pid on loop (o must outlive the recording): finds its
 * Lua state on a thread of libuv's pool (the process is stopped for that,
 * and the loop goes on), then starts the session (o->so) and the sampler
 * thread. on_end is called on the loop once it is over: the session done
 * (its reports written, or its live view called for the last time), or
 * sampling never began (rd_record_free says why). Returns 0 and the
 * recording in *out, or a negative errno (out of memory). */
int rd_record_start(const rd_record_opts *o, uv_loop_t *loop,
                    void (*on_end)(rd_recording *, void *), void *ud, rd_recording **out);

/* Any thread: a held sampler (o->held) begins. */
void rd_record_go(rd_recording *r);

/* Any thread: ends the sampling (the session then writes its reports). */
void rd_record_quit(rd_recording *r);

/* After on_end: joins and frees r. Returns 0, or a negative errno with a
 * one-line message in err: why sampling never began (-EPERM or -ESRCH:
 * rd_peek_stop_all's; -ENOEXEC: no Lua 5.1 state; -EINVAL: so.out
 * refused) or the refusal that ended it early. The process's exit is said
 * in err with 0. */
int rd_record_free(rd_recording *r, char *err, size_t cap);

/* Samples the process until the duration ends, a signal stops it or the
 * process exits, then writes the session's reports. Returns the exit
 * code. */
int rd_record(const rd_record_opts *o);

#endif
