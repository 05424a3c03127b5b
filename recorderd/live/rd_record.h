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
} rd_record_opts;

/* Samples the process until the duration ends, a signal stops it or the
 * process exits, then writes the session's reports. Returns the exit
 * code. */
int rd_record(const rd_record_opts *o);

#endif
